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
        Command::new(python)
            .args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
            ])
            .args(["--no-deps", "--force-reinstall"])
            .arg(&wheel),
        "pip install (the avguard wheel)",
    )?;
    Ok(wheel)
}

/// Runs the package's tests (`python/tests`) against `avguard_bin` in new network and PID namespaces:
/// only loopback exists there (brought up first), and every process started inside, the Ray cluster
/// included, ends when pytest does. Needs root (`unshare`).
pub fn test(python: &Path, avguard_bin: &Path) -> Result<(), String> {
    run(
        Command::new("unshare")
            .args(["--net", "--pid", "--fork", "--mount-proc", "--"])
            .args(["sh", "-c", "ip link set lo up && exec \"$@\"", "sh"])
            .arg(python)
            .args(["-m", "pytest", "-p", "no:cacheprovider", "-v"])
            .arg(workspace_root().join("python").join("tests"))
            .env("AVGUARD_BIN", avguard_bin)
            .env("AVGUARD_PRIVATE_NAMESPACES", "1")
            .current_dir(workspace_root().join("python")),
        "pytest (python/tests, in private network and PID namespaces; needs root)",
    )
}
