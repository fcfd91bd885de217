//! The Python package (`python/`): build its wheel with maturin, install it into `target/venv`, and run its
//! tests with pytest inside private network and PID namespaces, where the Ray cluster test starts a
//! two-node cluster on loopback that can reach nothing else and dies with the namespace.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{run, target_dir, workspace_root};

/// Cargo profile of the wheel the tests install: `dev` reuses what `cargo test --workspace` just built
/// (the release profile would rebuild every dependency for minutes, and the tests need no speed).
pub const TEST_PROFILE: &str = "dev";

/// Builds the wheel in `profile` and installs it into the environment of `python`; returns the wheel.
pub fn build_and_install(python: &Path, profile: &str) -> Result<PathBuf, String> {
    let out = target_dir().join("wheels").join(profile);
    // One wheel per folder, so that the one to install is never ambiguous.
    let _ = std::fs::remove_dir_all(&out);
    let maturin = python.with_file_name("maturin");
    run(
        Command::new(&maturin)
            .arg("build")
            .arg("--manifest-path")
            .arg(workspace_root().join("python").join("Cargo.toml"))
            .args(["--profile", profile, "--out"])
            .arg(&out)
            .current_dir(workspace_root()),
        "maturin build",
    )?;
    let wheel = std::fs::read_dir(&out)
        .map_err(|e| format!("{}: {e}", out.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .ok_or_else(|| format!("maturin wrote no wheel into {}", out.display()))?;
    run(
        crate::python::pip_install(python)
            .args(["--no-deps", "--force-reinstall"])
            .arg(&wheel),
        "pip install (the avguard wheel)",
    )?;
    Ok(wheel)
}

/// Runs the package's tests (`python/tests`) against `avguard_bin`; see `in_private_namespaces`.
pub fn test(python: &Path, avguard_bin: &Path) -> Result<(), String> {
    run(
        in_private_namespaces(python, avguard_bin)
            .args(["-m", "pytest", "-p", "no:cacheprovider", "-v"])
            .arg(workspace_root().join("python").join("tests")),
        "pytest (python/tests, in private network and PID namespaces; needs root)",
    )
}

/// Runs the Ray scaling measurement (`python/bench/ray_scaling.py`) against `avguard_bin`.
pub fn bench_ray(python: &Path, avguard_bin: &Path) -> Result<(), String> {
    run(
        in_private_namespaces(python, avguard_bin).arg(
            workspace_root()
                .join("python")
                .join("bench")
                .join("ray_scaling.py"),
        ),
        "python/bench/ray_scaling.py (in private network and PID namespaces; needs root)",
    )
}

/// `python` in new network and PID namespaces: only loopback exists there (brought up first), and every
/// process started inside, a Ray cluster included, ends with it. Needs root (`unshare`). The package's
/// tests and benchmarks get the CLI to compare with in `AVGUARD_BIN`.
fn in_private_namespaces(python: &Path, avguard_bin: &Path) -> Command {
    let mut command = Command::new("unshare");
    command
        .args(["--net", "--pid", "--fork", "--mount-proc", "--"])
        .args(["sh", "-c", "ip link set lo up && exec \"$@\"", "sh"])
        .arg(python)
        .env("AVGUARD_BIN", avguard_bin)
        .env("AVGUARD_PRIVATE_NAMESPACES", "1")
        .current_dir(workspace_root().join("python"));
    command
}
