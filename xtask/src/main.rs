//! Project automation for avguard, in Rust rather than shell scripts.
//!
//! `cargo xtask demo` and `cargo xtask test` are the README's two set-up commands for a fresh machine
//! (Debian, root, nothing installed beyond the Rust toolchain). Each first installs what it needs and says
//! so: Debian's `libhdf5-dev` (the `hdf5` crate links the system library), and for the tests the Python
//! packages of the interop tests (h5py, rtamt, stormpy, roslibpy) and Chromium for the report check.
//!
//! This crate has no dependencies so that it builds before anything else is installed.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "\
usage: cargo xtask <command> [args...]

commands:
  demo [ARGS...]  install what the demo needs, then run `avguard demo ARGS...` (release build)
  test            install what the tests need, then run cargo fmt --check, clippy and the whole test suite
  setup           only install what the demo and the tests need
  bench           run every benchmark (release; takes several minutes)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::FAILURE;
    };
    let result = match command.as_str() {
        "demo" => demo(rest),
        "test" => test(),
        "setup" => ensure_hdf5().and_then(|()| ensure_test_tools()),
        "bench" => ensure_hdf5()
            .and_then(|()| ensure_test_tools())
            .and_then(|()| run(cargo().args(["bench", "--workspace"]), "cargo bench")),
        "-h" | "--help" | "help" => {
            print!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

fn demo(args: &[String]) -> Result<(), String> {
    ensure_hdf5()?;
    run(
        cargo()
            .args([
                "run",
                "--release",
                "--quiet",
                "--package",
                "tools",
                "--bin",
                "avguard",
                "--",
                "demo",
            ])
            .args(args),
        "avguard demo",
    )
}

fn test() -> Result<(), String> {
    ensure_hdf5()?;
    ensure_test_tools()?;
    timed("cargo fmt --check", || {
        run(
            cargo().args(["fmt", "--all", "--", "--check"]),
            "cargo fmt --check",
        )
    })?;
    timed("cargo clippy (warnings are errors)", || {
        run(
            cargo().args([
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ]),
            "cargo clippy",
        )
    })?;
    // The integration tests (tests/) run the `avguard` binary; `cargo test` builds a package's binaries
    // only for that package's own integration tests, so build it first.
    timed(
        "cargo build --bin avguard (used by the integration tests)",
        || {
            run(
                cargo().args(["build", "--package", "tools", "--bin", "avguard"]),
                "cargo build",
            )
        },
    )?;
    timed("cargo test --workspace", || {
        run(cargo().args(["test", "--workspace"]), "cargo test")
    })
}

/// Runs one step of a command, saying what it is and how long it took.
fn timed(what: &str, f: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    step(what);
    let start = std::time::Instant::now();
    let result = f();
    eprintln!("    ({what}: {:.0} s)", start.elapsed().as_secs_f64());
    result
}

/// The `hdf5` crate links Debian's HDF5 through pkg-config.
fn ensure_hdf5() -> Result<(), String> {
    if succeeds(Command::new("pkg-config").args(["--exists", "hdf5"])) {
        return Ok(());
    }
    step(
        "installing libhdf5-dev and pkg-config from Debian (the hdf5 crate links the system HDF5)",
    );
    apt_install(&["libhdf5-dev", "pkg-config"])
}

/// Python packages of the interop tests and Chromium for the report test.
fn ensure_test_tools() -> Result<(), String> {
    if !succeeds(Command::new("python3").arg("--version")) {
        step("installing python3 and pip from Debian (interop tests)");
        apt_install(&["python3", "python3-pip"])?;
    }
    let requirements = requirement_files()?;
    if !requirements.is_empty() {
        step("installing the Python packages of the interop tests (pip, already-present ones are kept)");
        let mut pip = Command::new("python3");
        pip.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--root-user-action=ignore",
        ]);
        for file in &requirements {
            pip.arg("-r").arg(file);
        }
        run(&mut pip, "pip install")?;
    }
    if find_chromium().is_none() {
        step("installing chromium from Debian (the report test opens report.html in a headless browser)");
        apt_install(&["chromium"])?;
    }
    Ok(())
}

fn find_chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn requirement_files() -> Result<Vec<PathBuf>, String> {
    let dir = workspace_root().join("tests").join("py");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("requirements") && n.ends_with(".txt"))
        })
        .collect();
    files.sort();
    Ok(files)
}

fn apt_install(packages: &[&str]) -> Result<(), String> {
    if !is_root() {
        return Err(format!(
            "missing system packages; run as root or install them yourself: apt-get install -y {}",
            packages.join(" ")
        ));
    }
    run(
        Command::new("apt-get")
            .args(["update", "-qq"])
            .env("DEBIAN_FRONTEND", "noninteractive"),
        "apt-get update",
    )?;
    run(
        Command::new("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends"])
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

fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(workspace_root());
    command
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn step(what: &str) {
    eprintln!("==> {what}");
}

fn succeeds(command: &mut Command) -> bool {
    command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|e| format!("{what}: cannot start: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})"))
    }
}
