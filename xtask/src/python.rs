//! The project's Python: one virtual environment, `target/venv`, with the packages pinned in
//! `tests/py/requirements.txt`.
//!
//! Debian's own `python3` refuses system-wide `pip install` (PEP 668), and a user's other Pythons are none of
//! our business, so every Python run of the project (interop tests, benchmarks' baselines, the Python package
//! and its Ray cluster) uses [`interpreter`]. It makes the environment on first use, from Debian's
//! `/usr/bin/python3` (installing `python3` and `python3-venv` with apt when they are missing), and installs the
//! requirements again whenever the requirements file changes. Several processes may ask at once (test
//! binaries run by one `cargo test`): a lock file in the target folder lets one of them do the work while the
//! others wait.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{debian, run, say, succeeds, target_dir, workspace_root};

/// The requirements file, relative to the workspace root: every Python package, pinned.
pub const REQUIREMENTS: &str = "tests/py/requirements.txt";

/// A copy of the requirements the environment was last completed with; written only after pip succeeded.
const STAMP: &str = "avguard-requirements.txt";

/// The virtual environment's folder, `target/venv`.
pub fn venv_dir() -> PathBuf {
    target_dir().join("venv")
}

/// The virtual environment's interpreter, after making sure the environment exists and holds the pinned
/// packages. Quiet when it is ready; otherwise each step says what it does, with pip's and apt's output.
///
/// The error says what failed and names `cargo xtask setup`, which does the same work on its own.
pub fn interpreter() -> Result<PathBuf, String> {
    ensure(&venv_dir()).map_err(|e| {
        format!(
            "the project's Python environment {} is not ready: {e} (`cargo xtask setup` makes it)",
            venv_dir().display()
        )
    })
}

fn ensure(dir: &Path) -> Result<PathBuf, String> {
    let python = dir.join("bin").join("python");
    let requirements_path = workspace_root().join(REQUIREMENTS);
    let requirements = std::fs::read_to_string(&requirements_path)
        .map_err(|e| format!("{}: {e}", requirements_path.display()))?;
    let is_ready = || {
        python.exists() && std::fs::read_to_string(dir.join(STAMP)).is_ok_and(|s| s == requirements)
    };
    if is_ready() {
        return Ok(python);
    }

    let parent = dir.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    let lock_path = parent.join("venv.lock");
    let lock = File::create(&lock_path).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    if lock.try_lock().is_err() {
        say(&format!(
            "    waiting for another process that is setting up {}",
            dir.display()
        ));
        lock.lock()
            .map_err(|e| format!("{}: cannot lock: {e}", lock_path.display()))?;
    }
    if is_ready() {
        return Ok(python);
    }
    if !python.exists() {
        crate::step(
            &format!("creating the Python environment {}", dir.display()),
            || create(dir),
        )?;
    }
    crate::step(
        &format!(
            "installing the Python packages pinned in {REQUIREMENTS} into {}",
            dir.display()
        ),
        || {
            run(
                pip_install(&python).arg("-r").arg(&requirements_path),
                "pip install",
            )
        },
    )?;
    std::fs::write(dir.join(STAMP), &requirements)
        .map_err(|e| format!("{}: {e}", dir.join(STAMP).display()))?;
    Ok(python)
}

/// `PYTHON -m pip install`, without questions or pip's own upgrade notice, output shown.
pub fn pip_install(python: &Path) -> Command {
    let mut command = Command::new(python);
    command.args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
    ]);
    command
}

/// `python3 -m venv DIR`, from Debian's interpreter; installs `python3-venv` (and `python3`) when missing.
fn create(dir: &Path) -> Result<(), String> {
    let base = base_interpreter().or_else(|| {
        debian::install(&["python3", "python3-venv"]).ok()?;
        base_interpreter()
    });
    let Some(base) = base else {
        return Err("no python3 found, and it could not be installed with apt-get".into());
    };
    let make = || {
        run(
            Command::new(&base).args(["-m", "venv"]).arg(dir),
            &format!("{} -m venv", base.display()),
        )
    };
    if make().is_ok() {
        return Ok(());
    }
    // Debian ships the venv module's pip wheel separately, in python3-venv.
    let _ = std::fs::remove_dir_all(dir);
    say("    installing python3-venv (Debian's python3 needs it to make a virtual environment)");
    debian::install(&["python3-venv"])?;
    make()
}

/// Debian's own `python3` when there is one, else the first `python3` on `PATH`.
fn base_interpreter() -> Option<PathBuf> {
    let debian = PathBuf::from("/usr/bin/python3");
    if debian.exists() {
        return Some(debian);
    }
    let on_path = PathBuf::from("python3");
    succeeds(Command::new(&on_path).arg("--version")).then_some(on_path)
}
