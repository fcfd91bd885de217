//! Shared helpers for avguard's integration tests (the tests themselves are in `it/`).

use std::path::PathBuf;
use std::process::Command;

/// The `avguard` binary built by the same `cargo test --workspace` run.
///
/// Test binaries live in `target/<profile>/deps/`; the `avguard` binary sits one level up. Cargo builds
/// every binary of the workspace before it runs the tests of a `--workspace` invocation.
pub fn avguard_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("test binary lives in target/<profile>/deps");
    let bin = profile_dir.join(format!("avguard{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} is missing: run the tests with `cargo test --workspace` so that the binary is built",
        bin.display()
    );
    bin
}

/// A `Command` for the `avguard` binary.
pub fn avguard() -> Command {
    Command::new(avguard_bin())
}

/// The project's root folder (the workspace root).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace root")
        .to_path_buf()
}

/// The `shared/` folder beside the project checkout (fixtures, specs), if present.
pub fn shared_dir() -> PathBuf {
    workspace_root()
        .parent()
        .expect("the workspace has a parent folder")
        .join("shared")
}
