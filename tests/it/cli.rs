//! The `avguard` binary as a user runs it.

use std::collections::BTreeSet;

use crate::support::{avguard, workspace_root};

/// The command names of `--help`'s "Commands:" section: the first word of each entry line (continuation
/// lines of a long description are indented further).
fn help_commands(help: &str) -> BTreeSet<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|&name| name != "help")
        .map(str::to_owned)
        .collect()
}

/// The commands of the CLI contract, INTERFACES §1: the word after `avguard` in each table row.
fn documented_commands() -> BTreeSet<String> {
    let interfaces = std::fs::read_to_string(workspace_root().join("docs/INTERFACES.md"))
        .expect("read docs/INTERFACES.md");
    interfaces
        .lines()
        .filter_map(|l| l.strip_prefix("| `avguard "))
        .filter_map(|rest| rest.split([' ', '`']).next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn help_lists_every_command() {
    let out = avguard()
        .arg("--help")
        .output()
        .expect("run avguard --help");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let listed = help_commands(&text);
    let documented = documented_commands();
    assert!(
        documented.len() >= 10,
        "INTERFACES §1 names only {documented:?}"
    );
    assert_eq!(
        listed, documented,
        "--help and INTERFACES §1 disagree on the commands:\n{text}"
    );
}

#[test]
fn help_commands_come_from_the_commands_section_only() {
    // A command named only in a description (here `simulate` inside `demo`'s) does not count.
    let help = "About simulate and learn.\n\nUsage: avguard <COMMAND>\n\nCommands:\n  demo   Simulate, \
                learn and drive\n         and score\n  help   Print this message\n\nOptions:\n  -h, --help\n";
    assert_eq!(help_commands(help), BTreeSet::from(["demo".to_owned()]));
}

/// A pipe whose reading end is already closed: the write end of a child's stdin, after the child (`true`)
/// has exited. Every write into it fails with EPIPE at once, so the test does not race a reader.
fn closed_pipe() -> std::process::Stdio {
    let mut reader = std::process::Command::new("true")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("run true");
    let writer = reader.stdin.take().expect("piped stdin");
    assert!(reader.wait().expect("wait for true").success());
    writer.into()
}

#[test]
fn output_into_a_closed_pipe_is_success() {
    // `avguard info MODEL | head -1` and the like: a broken pipe ends the command quietly with success
    // (before the fix `info` panicked: "failed printing to stdout: Broken pipe").
    let f = crate::support::fixture();
    let logs: Vec<_> = std::fs::read_dir(&f.test_logs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let mut cases: Vec<(&str, Vec<std::ffi::OsString>)> = vec![
        ("info", vec!["info".into(), f.model.clone().into()]),
        (
            "info --json",
            vec!["info".into(), "--json".into(), f.model.clone().into()],
        ),
        ("--help", vec!["--help".into()]),
    ];
    let mut inspect = vec!["inspect".into()];
    inspect.extend(logs.iter().map(|p| p.clone().into_os_string()));
    cases.push(("inspect", inspect));
    for (what, args) in cases {
        let out = avguard()
            .args(&args)
            .stdout(closed_pipe())
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap_or_else(|e| panic!("run avguard {what}: {e}"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.is_empty(),
            "avguard {what} into a closed pipe: {} with stderr:\n{stderr}",
            out.status
        );
    }
}

#[test]
fn inspect_takes_folders_and_a_folder_is_not_read_as_a_log() {
    let f = crate::support::fixture();
    let mut logs: Vec<_> = std::fs::read_dir(&f.test_logs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "h5"))
        .collect();
    logs.sort();
    assert!(logs.len() >= 2);
    // A folder gives every log below it, in path order: the same lines as naming the files.
    let by_folder = avguard()
        .args(["inspect", "--json"])
        .arg(&f.test_logs)
        .output()
        .unwrap();
    let by_files = avguard()
        .args(["inspect", "--json"])
        .args(&logs)
        .output()
        .unwrap();
    assert!(by_folder.status.success(), "{by_folder:?}");
    assert_eq!(by_folder.stdout, by_files.stdout);
    assert_eq!(
        String::from_utf8_lossy(&by_folder.stdout).lines().count(),
        logs.len()
    );
    // A command that reads one log names a folder once, plainly (libhdf5 said "file read failed ...
    // errno = 21" with a buffer address).
    let out = avguard()
        .args(["laws", "signals", "--out"])
        .arg(f.test_logs.join("signals.csv"))
        .arg(&f.test_logs)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let name = f.test_logs.display().to_string();
    assert_eq!(
        err.trim(),
        format!("avguard: {name}: a folder, not a log file"),
        "{err}"
    );
}
