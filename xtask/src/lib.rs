//! The part of avguard's automation that other crates share: where the workspace and its target folder are,
//! steps that say what they do and how long they took, Debian packages, and the project's Python.
//!
//! The `xtask` binary (`cargo xtask demo|test|setup|bench`, in `main.rs`) is built from these pieces. The
//! integration-test harness and the benchmarks use [`python::interpreter`] so that every Python run of the
//! project goes through the one virtual environment, `target/venv`, made by the same code whichever command
//! comes first.
//!
//! **Invariant:** nothing here installs into the system Python; Python packages go only into `target/venv`,
//! pinned in `tests/py/requirements.txt`.
//!
//! **Boundary:** this crate has no dependencies, so that it builds before anything else is installed.

#![warn(missing_docs)]

pub mod debian;
pub mod package;
pub mod python;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The project's root folder (the workspace root).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Cargo's target folder of the running program: the nearest folder above the running executable that
/// holds Cargo's `CACHEDIR.TAG` (so the xtask binary, a test binary in `target/debug/deps` and a benchmark
/// agree, wherever `CARGO_TARGET_DIR` put them), else `target/` in the workspace root.
pub fn target_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            exe.ancestors()
                .skip(1)
                .find(|dir| dir.join("CACHEDIR.TAG").is_file())
                .map(Path::to_path_buf)
        })
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// Runs one step of a longer command: prints a line when it starts and its elapsed time when it ends, so
/// that a slow step can be told from a hung one.
pub fn step<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    say(&format!("==> {what}"));
    let start = Instant::now();
    let result = f();
    let took = format_duration(start.elapsed());
    match &result {
        Ok(_) => say(&format!("<== {what}: done in {took}")),
        Err(_) => say(&format!("<== {what}: FAILED after {took}")),
    }
    result
}

/// Writes one line to the process's standard error directly, so that it shows even inside a test whose
/// output the test harness captures (`eprintln!` is captured; the file descriptor is not).
pub fn say(line: &str) {
    use std::io::Write as _;
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{line}");
}

/// `1m 05s` or `4.2 s`.
pub fn format_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        let whole = d.as_secs();
        format!("{}m {:02}s", whole / 60, whole % 60)
    }
}

/// Runs a command with its output shown as it comes; an error names `what` and the exit status.
pub fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|e| format!("{what}: cannot start {:?}: {e}", command.get_program()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})"))
    }
}

/// Whether a command runs and exits with success (its output is discarded).
pub fn succeeds(command: &mut Command) -> bool {
    command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
