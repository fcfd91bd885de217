//! The fuzz smoke step of `cargo xtask test`: every libFuzzer target of `tests/fuzz/` runs for a few
//! seconds (at most [`SMOKE_SECONDS`] in all) from its committed seeds, so a parser change that crashes on
//! the first mutations fails the tests, not a later campaign.
//!
//! Built without `cargo-fuzz` (a fresh machine would first spend minutes installing it): plain `cargo
//! +nightly build` of the fuzz crate with the flags cargo-fuzz passes for libFuzzer's coverage
//! instrumentation (`--cfg fuzzing`, the `sancov-module` pass; no sanitizer, as `cargo fuzz build
//! --sanitizer none`), for the host target so that build scripts and proc macros stay uninstrumented. All
//! targets build in one invocation into one target folder, `target/fuzz-smoke/`, which the next run reuses,
//! at `opt-level` 1 without debug info (the cost is the fuzz crate's whole dependency tree built once more,
//! instrumented; a smoke does not need a campaign's speed).
//!
//! `cargo xtask test` starts that build in the background at the lowest CPU priority ([`start_build`]) as
//! it begins, so that it uses what the other steps leave idle; the smoke step then waits for it.
//!
//! A crash fails the step, with one exception: on `log_image`, a fault inside libhdf5 (a signal with no
//! Rust panic, abort message or stack overflow before it, a runaway allocation, a hang) is the known family
//! (`tests/fuzz/known-libhdf5/`) that `avguard` contains by reading untrusted logs in a child process
//! (`scenarios::log::isolated`); it is counted and reported, and the target goes on for its remaining time.
//! Every run is also bounded from outside: one still going [`RUN_GRACE_SECONDS`] after its time is killed
//! (on `log_image` counted with libhdf5's faults, elsewhere a failure), so a deadlocked target cannot stall CI.
//! `AVGUARD_SKIP_FUZZ_SMOKE=1` skips the step.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use xtask::{say, target_dir, workspace_root};

use crate::fuzz::FUZZ_DIR;

/// How long a fuzz target may run past its `-max_total_time` before the smoke kills it (libFuzzer stops
/// within a second or two of it; one stuck for longer is deadlocked).
const RUN_GRACE_SECONDS: u64 = 20;

/// Fuzzing time of the whole smoke, split evenly between the targets.
pub const SMOKE_SECONDS: u64 = 60;

/// The libFuzzer coverage flags of `cargo fuzz build --sanitizer none` (cargo-fuzz 0.13), plus the fuzz
/// profile's checks.
const RUSTFLAGS: &[&str] = &[
    "--cfg",
    "fuzzing",
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=4",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
    "-Cllvm-args=-sanitizer-coverage-trace-compares",
    "-Cdebug-assertions",
    "-Coverflow-checks",
];

/// One target's smoke outcome.
struct Smoke {
    target: String,
    n_execs: u64,
    n_libhdf5_faults: u64,
}

/// The smoke's build running in the background ([`start_build`]).
pub struct Build {
    child: std::process::Child,
    log: PathBuf,
    host: String,
}

fn skipped() -> bool {
    std::env::var_os("AVGUARD_SKIP_FUZZ_SMOKE").is_some_and(|v| v == "1")
}

/// Starts building the targets in the background, at the lowest CPU priority, its output going to
/// `target/fuzz-smoke/build.log`. `None` when the smoke is skipped or the build cannot start ([`run`] then
/// builds in the foreground and says why it cannot).
pub fn start_build() -> Option<Build> {
    if skipped() {
        return None;
    }
    let host = nightly_host().ok()?;
    let dir = target_dir().join("fuzz-smoke");
    std::fs::create_dir_all(&dir).ok()?;
    let log = dir.join("build.log");
    let out = std::fs::File::create(&log).ok()?;
    let err = out.try_clone().ok()?;
    let child = build_command(&host, &dir, true)
        .stdout(out)
        .stderr(err)
        .spawn()
        .ok()?;
    Some(Build { child, log, host })
}

/// Builds the targets (or waits for the background build) and runs the smoke.
pub fn run(background: Option<Build>) -> Result<(), String> {
    if skipped() {
        say("fuzz smoke skipped (AVGUARD_SKIP_FUZZ_SMOKE=1)");
        return Ok(());
    }
    let dir = target_dir().join("fuzz-smoke");
    let waited = Instant::now();
    let host = match background {
        Some(mut build) => {
            let status = build
                .child
                .wait()
                .map_err(|e| format!("fuzz smoke: waiting for the build: {e}"))?;
            if !status.success() {
                let text = std::fs::read_to_string(&build.log).unwrap_or_default();
                for line in text.lines().rev().take(30).collect::<Vec<_>>().iter().rev() {
                    say(&format!("    {line}"));
                }
                return Err(format!(
                    "cargo build (fuzz targets) failed ({status}; {})",
                    build.log.display()
                ));
            }
            say(&format!(
                "fuzz smoke: waited {} for the background build of the targets",
                xtask::format_duration(waited.elapsed())
            ));
            build.host
        }
        None => {
            let host = nightly_host()?;
            xtask::run(
                &mut build_command(&host, &dir, false),
                "cargo build (fuzz targets)",
            )?;
            say(&format!(
                "fuzz smoke: targets built in {}",
                xtask::format_duration(waited.elapsed())
            ));
            host
        }
    };
    let targets = targets()?;
    let per_target = (SMOKE_SECONDS / targets.len().max(1) as u64).max(1);
    let bin_dir = dir.join(&host).join("release");
    let mut outcomes = Vec::new();
    for target in &targets {
        outcomes.push(smoke(&bin_dir, &dir, target, per_target)?);
    }
    for o in &outcomes {
        let faults = if o.n_libhdf5_faults > 0 {
            format!(
                ", {} faults inside libhdf5 (crash, hang or runaway allocation: contained by the \
                 isolated reader)",
                o.n_libhdf5_faults
            )
        } else {
            String::new()
        };
        say(&format!(
            "  {}: {} executions, ok{faults}",
            o.target, o.n_execs
        ));
    }
    Ok(())
}

/// The host triple of the nightly toolchain.
fn nightly_host() -> Result<String, String> {
    let out = Command::new("rustc")
        .args(["+nightly", "-vV"])
        .output()
        .map_err(|e| format!("cannot run rustc +nightly: {e}"))?;
    if !out.status.success() {
        return Err(
            "the nightly toolchain is missing (libFuzzer needs it): rustup toolchain install nightly"
                .into(),
        );
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| "rustc +nightly -vV names no host".to_owned())
}

/// `cargo +nightly build` of every target into `dir`, behind `nice -n 19` when `low_priority` (and `nice`
/// exists).
fn build_command(host: &str, dir: &Path, low_priority: bool) -> Command {
    let root = workspace_root();
    let nice = low_priority && xtask::succeeds(Command::new("nice").args(["-n", "19", "true"]));
    let mut command = if nice {
        let mut c = Command::new("nice");
        c.args(["-n", "19", "cargo"]);
        c
    } else {
        Command::new("cargo")
    };
    command
        .args([
            "+nightly",
            "build",
            "--release",
            "--bins",
            "--manifest-path",
        ])
        .arg(root.join(FUZZ_DIR).join("Cargo.toml"))
        .args(["--target", host, "--target-dir"])
        .arg(dir)
        .args([
            "--config",
            "profile.release.opt-level=1",
            "--config",
            "profile.release.debug=0",
        ])
        .env("RUSTFLAGS", RUSTFLAGS.join(" "))
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .current_dir(&root);
    command
}

/// The targets: the files of `tests/fuzz/fuzz_targets/`.
fn targets() -> Result<Vec<String>, String> {
    let dir = workspace_root().join(FUZZ_DIR).join("fuzz_targets");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let path = e.path();
            (path.extension()? == "rs").then(|| path.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    names.sort();
    Ok(names)
}

/// Runs one target for `seconds` from its seeds (and the extra seed folders), in a fresh corpus folder.
fn smoke(bin_dir: &Path, dir: &Path, target: &str, seconds: u64) -> Result<Smoke, String> {
    let corpus = dir.join("corpus").join(target);
    let artifacts = dir.join("artifacts").join(target);
    let _ = std::fs::remove_dir_all(&corpus);
    std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
    std::fs::create_dir_all(&artifacts).map_err(|e| format!("{}: {e}", artifacts.display()))?;
    let seeds = crate::fuzz::seed_dirs(target);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut outcome = Smoke {
        target: target.to_owned(),
        n_execs: 0,
        n_libhdf5_faults: 0,
    };
    loop {
        let left = deadline.saturating_duration_since(Instant::now()).as_secs();
        if left == 0 {
            return Ok(outcome);
        }
        let mut prefix = artifacts.clone().into_os_string();
        prefix.push("/");
        // libFuzzer's own watchdog ends a slow input, but a process that deadlocks (a libhdf5 fault
        // inside libFuzzer's handlers has been seen to: asleep on a futex, no CPU) would stall CI until its
        // hard limit. So the run is bounded here too: killed a grace period after its time is up.
        let out_path = dir.join(format!("{target}.out"));
        let mut command = Command::new(bin_dir.join(target));
        command
            .arg(&corpus)
            .args(&seeds)
            .arg(format!("-max_total_time={left}"))
            .arg(format!("-max_len={}", crate::fuzz::MAX_LEN))
            .args(["-rss_limit_mb=2048", "-print_final_stats=1"])
            // libhdf5's hangs (see `crate::fuzz::is_libhdf5_fault`) would eat log_image's few seconds.
            .arg(if target == "log_image" {
                "-timeout=2"
            } else {
                "-timeout=10"
            })
            .arg({
                let mut a = std::ffi::OsString::from("-artifact_prefix=");
                a.push(&prefix);
                a
            });
        let limit = Duration::from_secs(left + RUN_GRACE_SECONDS);
        let status = run_bounded(&mut command, &out_path, limit)
            .map_err(|e| format!("cannot start the {target} fuzz target: {e}"))?;
        let text =
            String::from_utf8_lossy(&std::fs::read(&out_path).unwrap_or_default()).into_owned();
        let Some(status) = status else {
            if target == "log_image" {
                say(&format!(
                    "    {target}: a run still going {RUN_GRACE_SECONDS} s after its time was killed \
                     (counted with libhdf5's faults)"
                ));
                outcome.n_execs += crate::fuzz::executions(&text).unwrap_or(0);
                outcome.n_libhdf5_faults += 1;
                continue;
            }
            return Err(format!(
                "fuzz smoke: {target} was still running {RUN_GRACE_SECONDS} s after its time and was killed \
                 (output in {})",
                out_path.display()
            ));
        };
        outcome.n_execs += crate::fuzz::executions(&text).unwrap_or(0);
        if status.success() {
            return Ok(outcome);
        }
        if target == "log_image" && crate::fuzz::is_libhdf5_fault(&text) {
            outcome.n_libhdf5_faults += 1;
            continue;
        }
        for line in text.lines().rev().take(40).collect::<Vec<_>>().iter().rev() {
            say(&format!("    {line}"));
        }
        return Err(format!(
            "fuzz smoke: {target} crashed (input in {})",
            artifacts.display()
        ));
    }
}

/// Runs `command` with its stdout and stderr written to `out_path`; its exit status, or `None` when it was
/// still running after `limit` and was killed.
fn run_bounded(
    command: &mut Command,
    out_path: &Path,
    limit: Duration,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    let out = std::fs::File::create(out_path)?;
    let err = out.try_clone()?;
    let mut child = command.stdout(out).stderr(err).spawn()?;
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait()? {
            Some(status) => return Ok(Some(status)),
            None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(None);
            }
        }
    }
}

#[cfg(test)]
mod tests;
