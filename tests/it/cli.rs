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
