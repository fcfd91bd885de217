//! `cargo xtask fuzz [SECONDS] [TARGET...]`: the libFuzzer campaigns of `tests/fuzz/` (issue #11).
//!
//! Every target (or the ones named) runs in turn for SECONDS (default 60) at the lowest CPU priority
//! (`nice -n 19`, one job: the machine is shared), starting from its committed seeds plus the fixture folders
//! of `tests/fuzz/extra_seeds.txt`, and growing `tests/fuzz/corpus/TARGET/` (not committed). The summary
//! prints each target's executions and whether it found a crash; a crash input stays in
//! `tests/fuzz/artifacts/TARGET/` and fails the command. On `log_image`, a fault inside libhdf5 (see
//! [`is_libhdf5_fault`]) is the known family `avguard` contains by reading untrusted logs in a child
//! process (`tests/fuzz/known-libhdf5/`): the campaign runs in libFuzzer's fork mode and goes on past
//! such faults, so that it fuzzes our reader beyond the library's first one; each input it saved is read
//! again alone afterwards, and only one that is not the library's fails the command.
//!
//! Needs the nightly toolchain (libFuzzer's instrumentation) and `cargo-fuzz`, which is installed with
//! `cargo install` when missing.

use std::path::PathBuf;
use std::process::Command;

use xtask::{say, step, succeeds, workspace_root};

/// The fuzz crate's folder, relative to the workspace root.
pub const FUZZ_DIR: &str = "tests/fuzz";

/// Largest input libFuzzer generates, bytes: enough for every seed that matters (HDF5 images and records
/// are truncated to it, which the readers must handle too) while keeping executions fast.
pub const MAX_LEN: &str = "65536";

/// One target's outcome.
struct Outcome {
    target: String,
    n_execs: Option<u64>,
    crashed: bool,
    /// Contained faults of libhdf5 (`log_image` only), each input kept in the artifacts folder.
    n_libhdf5_faults: u32,
}

/// Runs the campaigns; `args` are `[SECONDS] [TARGET...]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let (seconds, mut targets) = match args.split_first() {
        Some((first, rest)) if first.parse::<u64>().is_ok() => (first.clone(), rest.to_vec()),
        _ => ("60".to_owned(), args.to_vec()),
    };
    step("nightly toolchain and cargo-fuzz", ensure_cargo_fuzz)?;
    if targets.is_empty() {
        targets = list_targets()?;
    }
    step("cargo fuzz build (release, address sanitizer)", || {
        xtask::run(
            nice(cargo_fuzz().args(["build", "--fuzz-dir", FUZZ_DIR, "-O"])),
            "cargo fuzz build",
        )
    })?;
    let mut outcomes = Vec::new();
    for target in &targets {
        let outcome = step(&format!("fuzz {target} for {seconds} s"), || {
            Ok(campaign(target, &seconds))
        })?;
        outcomes.push(outcome);
    }
    say("fuzz summary (target: executions, result):");
    for o in &outcomes {
        let execs = o.n_execs.map_or("?".to_owned(), |n| n.to_string());
        let result = if o.crashed { "CRASH" } else { "ok" };
        let contained = match o.n_libhdf5_faults {
            0 => String::new(),
            n => format!(
                " ({n} fault{} inside libhdf5, contained by the isolated reader; inputs in \
                 {FUZZ_DIR}/artifacts/{})",
                if n == 1 { "" } else { "s" },
                o.target
            ),
        };
        say(&format!(
            "  {}: {execs} executions, {result}{contained}",
            o.target
        ));
    }
    let crashed: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.crashed)
        .map(|o| o.target.as_str())
        .collect();
    if crashed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "crashes in {} (inputs in {FUZZ_DIR}/artifacts/)",
            crashed.join(", ")
        ))
    }
}

/// `cargo +nightly fuzz`.
fn cargo_fuzz() -> Command {
    let mut c = Command::new("cargo");
    c.args(["+nightly", "fuzz"]).current_dir(workspace_root());
    c
}

/// Runs `command` at the lowest CPU priority when `nice` exists.
fn nice(command: &mut Command) -> &mut Command {
    if succeeds(Command::new("nice").args(["-n", "19", "true"])) {
        let program = command.get_program().to_owned();
        let args: Vec<_> = command.get_args().map(ToOwned::to_owned).collect();
        let mut wrapped = Command::new("nice");
        wrapped.args(["-n", "19"]).arg(program).args(args);
        wrapped.current_dir(workspace_root());
        *command = wrapped;
    }
    command
}

fn ensure_cargo_fuzz() -> Result<(), String> {
    if !succeeds(Command::new("cargo").args(["+nightly", "--version"])) {
        return Err(
            "the nightly toolchain is missing (libFuzzer needs it): rustup toolchain install nightly"
                .into(),
        );
    }
    if succeeds(cargo_fuzz().arg("--version")) {
        return Ok(());
    }
    xtask::run(
        Command::new("cargo").args(["install", "cargo-fuzz", "--locked"]),
        "cargo install cargo-fuzz",
    )
}

fn list_targets() -> Result<Vec<String>, String> {
    let out = cargo_fuzz()
        .args(["list", "--fuzz-dir", FUZZ_DIR])
        .output()
        .map_err(|e| format!("cargo fuzz list: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo fuzz list failed ({})", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}

/// `(target, folder)` pairs from `tests/fuzz/extra_seeds.txt`, folders made absolute.
pub fn extra_seeds() -> Vec<(String, PathBuf)> {
    let root = workspace_root();
    let text =
        std::fs::read_to_string(root.join(FUZZ_DIR).join("extra_seeds.txt")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .map(|(t, d)| (t.to_owned(), root.join(d.trim())))
        .collect()
}

/// The seed folders of `target` that exist: its own `tests/fuzz/seeds/TARGET/` and its folders in
/// `extra_seeds.txt`. libFuzzer stops at a corpus folder that does not exist, and `hd_map` has only
/// extra seeds.
pub fn seed_dirs(target: &str) -> Vec<PathBuf> {
    std::iter::once(workspace_root().join(FUZZ_DIR).join("seeds").join(target))
        .chain(
            extra_seeds()
                .into_iter()
                .filter(|(t, _)| t == target)
                .map(|(_, d)| d),
        )
        .filter(|d| d.is_dir())
        .collect()
}

/// One campaign; its libFuzzer output is shown as it runs and scanned for the execution count.
///
/// `log_image` runs in libFuzzer's fork mode with crashes, timeouts and out-of-memories ignored, so that a
/// fault inside libhdf5 does not end the campaign (some of them depend on a file read before, so even the
/// initial reading of a grown corpus can meet one), and without leak detection (libhdf5 leaks on its error
/// paths; the reading child is replaced after a bad file). Each input it saved is then read again alone:
/// one that ends in a libhdf5 fault, or reads cleanly alone, is counted as contained; anything else (a
/// Rust panic, a sanitizer report in our code) is a crash.
fn campaign(target: &str, seconds: &str) -> Outcome {
    let fuzz = workspace_root().join(FUZZ_DIR);
    let corpus = fuzz.join("corpus").join(target);
    let artifacts = fuzz.join("artifacts").join(target);
    let _ = std::fs::create_dir_all(&corpus);
    let isolated_library = target == "log_image";
    let before = list_files(&artifacts);
    let mut cmd = cargo_fuzz();
    cmd.args(["run", "--fuzz-dir", FUZZ_DIR, "-O", target])
        .arg(&corpus)
        .args(seed_dirs(target))
        .args([
            "--",
            &format!("-max_total_time={seconds}"),
            &format!("-max_len={MAX_LEN}"),
            "-rss_limit_mb=2048",
            "-timeout=10",
            "-print_final_stats=1",
        ]);
    if isolated_library {
        cmd.args([
            "-fork=1",
            "-ignore_crashes=1",
            "-ignore_timeouts=1",
            "-ignore_ooms=1",
            "-detect_leaks=0",
        ]);
    }
    let out = nice(&mut cmd).output();
    let (text, success) = match out {
        Ok(o) => (output_text(&o), o.status.success()),
        Err(e) => (format!("cannot start cargo fuzz: {e}"), false),
    };
    let mut outcome = Outcome {
        target: target.to_owned(),
        n_execs: executions(&text).or_else(|| fork_executions(&text)),
        crashed: !success,
        n_libhdf5_faults: 0,
    };
    if isolated_library {
        let saved: Vec<PathBuf> = list_files(&artifacts)
            .into_iter()
            .filter(|p| !before.contains(p))
            .collect();
        let ours: Vec<&PathBuf> = saved
            .iter()
            .filter(|p| !contained_alone(target, p))
            .collect();
        outcome.n_libhdf5_faults = u32::try_from(saved.len() - ours.len()).unwrap_or(u32::MAX);
        for p in &ours {
            say(&format!(
                "    {target}: not a libhdf5 fault: {}",
                p.display()
            ));
        }
        // In fork mode the run fails whenever an input was saved; what counts is whether any is ours.
        outcome.crashed = !ours.is_empty() || (!success && saved.is_empty());
    }
    if outcome.crashed || !isolated_library {
        let tail: Vec<&str> = text.lines().rev().take(12).collect();
        for line in tail.iter().rev() {
            say(&format!("    {line}"));
        }
    }
    outcome
}

/// The files of `dir` (none when it does not exist).
fn list_files(dir: &std::path::Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default()
}

/// Reads the saved input `path` alone with the target: true when it reads cleanly (its fault needed a
/// file read before it, inside libhdf5's state) or ends in a libhdf5 fault.
fn contained_alone(target: &str, path: &std::path::Path) -> bool {
    let mut cmd = cargo_fuzz();
    cmd.args(["run", "--fuzz-dir", FUZZ_DIR, "-O", target])
        .arg(path)
        .args(["--", "-timeout=10", "-rss_limit_mb=2048", "-detect_leaks=0"]);
    match cmd.output() {
        Ok(o) if o.status.success() => true,
        Ok(o) => is_libhdf5_fault(&output_text(&o)),
        Err(_) => false,
    }
}

/// A finished command's stdout, then its stderr, as text (libFuzzer reports on stderr).
fn output_text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Whether the first frame of an AddressSanitizer report that is not the C library's or the sanitizer's own
/// (a `memcpy` libhdf5 called, say) is in libhdf5.
fn faulting_frame_is_libhdf5(text: &str) -> bool {
    let Some(report) = text.split("ERROR: AddressSanitizer:").nth(1) else {
        return false;
    };
    report
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('#'))
        .find(|l| {
            !(l.contains("sysdeps")
                || l.contains("sanitizer_common")
                || l.contains("/asan/")
                || l.contains("libc.so"))
        })
        .is_some_and(|l| l.contains("libhdf5"))
}

/// The last `#N: cov: …` status line of a fork-mode campaign: N executions in all.
fn fork_executions(text: &str) -> Option<u64> {
    text.lines().rev().find_map(|l| {
        let (n, rest) = l.strip_prefix('#')?.split_once(':')?;
        rest.trim_start()
            .starts_with("cov:")
            .then(|| n.parse().ok())?
    })
}

/// A fault of libhdf5 rather than ours: a deadly signal that Rust code did not raise (no panic, abort
/// message or stack overflow before it), an AddressSanitizer report whose faulting frame is in libhdf5, an
/// out-of-memory, or a timeout. Every such input of the `log_image` campaigns examined
/// (`tests/fuzz/known-libhdf5/`) had libhdf5 frames on top (`H5A__close`, `H5A__compact_build_table`,
/// `H5HG_read`) or a smashed stack: our reader allocates only within a bound of the file's size and has no
/// loop that the file's contents can keep going.
pub fn is_libhdf5_fault(text: &str) -> bool {
    let ours = text.contains("panicked at")
        || text.contains("has overflowed its stack")
        || text.contains("memory allocation of");
    let signal = text.contains("libFuzzer: deadly signal") && !ours;
    let sanitizer = (text
        .lines()
        .any(|l| l.starts_with("SUMMARY: AddressSanitizer:") && l.contains("libhdf5"))
        || faulting_frame_is_libhdf5(text))
        && !ours;
    signal
        || sanitizer
        || text.contains("libFuzzer: out-of-memory")
        || text.contains("libFuzzer: timeout")
}

/// The `stat::number_of_executed_units: N` line of libFuzzer's final statistics.
pub fn executions(text: &str) -> Option<u64> {
    text.lines()
        .rev()
        .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::seed_dirs;

    /// Only folders that exist are passed to libFuzzer, which stops at one that does not: `hd_map`
    /// has no folder of its own under `tests/fuzz/seeds/`, only the maps of `extra_seeds.txt`.
    #[test]
    fn seed_dirs_are_the_folders_that_exist() {
        let maps = seed_dirs("hd_map");
        assert!(maps.iter().all(|d| d.is_dir()), "{maps:?}");
        assert!(
            maps.iter()
                .any(|d| d.ends_with("tests/fixtures/apollo/lgsvl-apollo-5.0/modules/map/data")),
            "{maps:?}"
        );
        assert!(
            !maps.iter().any(|d| d.ends_with("seeds/hd_map")),
            "{maps:?}"
        );
        let laws = seed_dirs("law_text");
        assert_eq!(laws.len(), 1, "{laws:?}");
        assert!(laws[0].ends_with("tests/fuzz/seeds/law_text"));
        assert!(seed_dirs("no_such_target").is_empty());
    }
}
