//! Debian packages the project needs from the system: HDF5 (the `hdf5` crate links it), Python with its
//! `venv` module, and Chromium for the report check. Each is installed with `apt-get` only when missing,
//! with apt's own output shown.

use std::path::PathBuf;
use std::process::Command;

use crate::{run, succeeds};

/// Installs `libhdf5-dev` and `pkg-config` unless pkg-config already finds HDF5.
pub fn ensure_hdf5() -> Result<(), String> {
    if succeeds(Command::new("pkg-config").args(["--exists", "hdf5"])) {
        crate::say("    HDF5: found by pkg-config");
        return Ok(());
    }
    crate::say("    installing libhdf5-dev and pkg-config (the hdf5 crate links the system HDF5)");
    install(&["libhdf5-dev", "pkg-config"])
}

/// Installs Debian's `chromium` unless a Chromium is already at one of [`chromium`]'s places.
pub fn ensure_chromium() -> Result<(), String> {
    if let Some(path) = chromium() {
        crate::say(&format!("    Chromium: {}", path.display()));
        return Ok(());
    }
    crate::say("    installing chromium (the report test opens report.html in a headless browser)");
    install(&["chromium"])
}

/// Debian's Chromium, where its package puts it.
pub fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// `apt-get update` then `apt-get install`, as root; otherwise an error naming the command to run.
pub fn install(packages: &[&str]) -> Result<(), String> {
    if !is_root() {
        return Err(format!(
            "missing system packages; run as root or install them yourself: apt-get install -y {}",
            packages.join(" ")
        ));
    }
    run(
        Command::new("apt-get")
            .arg("update")
            .env("DEBIAN_FRONTEND", "noninteractive"),
        "apt-get update",
    )?;
    run(
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive"),
        "apt-get install",
    )
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}
