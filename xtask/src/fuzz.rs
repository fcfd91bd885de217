//! `cargo xtask fuzz [SECONDS] [TARGET...]`: the libFuzzer campaigns of `tests/fuzz/` (issue #11).
//!
//! Every target (or the ones named) runs in turn for SECONDS (default 60) at the lowest CPU priority
//! (`nice -n 19`, one job: the machine is shared), starting from its committed seeds plus the fixture folders
//! of `tests/fuzz/extra_seeds.txt`, and growing `tests/fuzz/corpus/TARGET/` (not committed). The summary
//! prints each target's executions and whether it found a crash; a crash input stays in
//! `tests/fuzz/artifacts/TARGET/` and fails the command.
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
        say(&format!("  {}: {execs} executions, {result}", o.target));
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
fn campaign(target: &str, seconds: &str) -> Outcome {
    let fuzz = workspace_root().join(FUZZ_DIR);
    let corpus = fuzz.join("corpus").join(target);
    let _ = std::fs::create_dir_all(&corpus);
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
    let out = nice(&mut cmd).output();
    let (text, success) = match out {
        Ok(o) => (
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
            o.status.success(),
        ),
        Err(e) => (format!("cannot start cargo fuzz: {e}"), false),
    };
    let tail: Vec<&str> = text.lines().rev().take(12).collect();
    for line in tail.iter().rev() {
        say(&format!("    {line}"));
    }
    Outcome {
        target: target.to_owned(),
        n_execs: executions(&text),
        crashed: !success,
    }
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
