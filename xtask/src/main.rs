//! Project automation for avguard, in Rust rather than shell scripts.
//!
//! `cargo xtask demo` and `cargo xtask test` are the README's two set-up commands for a fresh machine
//! (Debian, root, nothing installed beyond the Rust toolchain). Each first installs what it needs and says
//! so: Debian's `libhdf5-dev` (the `hdf5` crate links the system library), and for the tests the project's
//! Python environment `target/venv` (the interop tests' packages, pinned) and Chromium for the report check.
//! Every step prints a line when it starts and its elapsed time when it ends; the tools it runs (cargo, apt,
//! pip) show their own progress.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use xtask::{debian, package, python, run, step, target_dir, workspace_root};

mod fuzz;
mod fuzz_smoke;

const USAGE: &str = "\
usage: cargo xtask <command> [args...]

commands:
  demo [ARGS...]  install what the demo needs, build avguard (release), run `avguard demo ARGS...`
                  (`cargo xtask demo -- --help` lists the demo's options, e.g. --out DIR)
  test            install what the tests need, then run cargo fmt --check, clippy, cargo doc, the whole test suite
                  and a fuzz smoke (every libFuzzer target for a few seconds, 60 s in all; nightly
                  toolchain; AVGUARD_SKIP_FUZZ_SMOKE=1 skips it)
  setup           only install what the demo and the tests need (Debian packages, target/venv)
  pytest          only the Python package's steps of `test`: build the wheel, install it, run pytest
  bench-ray       Ray scaling: logs/s of avguard.ray.score with 1 and 2 worker nodes beside `avguard score`
                  (release builds of the CLI and the wheel; leaves the release wheel in target/venv)
  bench           run every benchmark (release; takes several minutes)
  fuzz-smoke      only the fuzz smoke step of `test`
  fuzz [SECONDS] [TARGET...]
                  run each libFuzzer target (tests/fuzz/README.md) for SECONDS (default 60), one at a
                  time at low priority; prints executions per target (needs the nightly toolchain)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::FAILURE;
    };
    let start = std::time::Instant::now();
    let result = match command.as_str() {
        "demo" => demo(rest),
        "test" => test(),
        "setup" => setup(&mut Steps::new(3)),
        "bench" => bench(),
        "pytest" => {
            let mut steps = Steps::new(3);
            steps
                .run(
                    "cargo build --bin avguard (the CLI the Python tests compare with)",
                    || {
                        run(
                            cargo().args(["build", "--package", "tools", "--bin", "avguard"]),
                            "cargo build",
                        )
                    },
                )
                .and_then(|()| python_package(&mut steps))
        }
        "fuzz" => fuzz::run(rest),
        // The same path as in `test`: the build in the background (its output in target/fuzz-smoke/build.log).
        "fuzz-smoke" => fuzz_smoke::run(fuzz_smoke::start_build()),
        "bench-ray" => bench_ray(),
        "-h" | "--help" | "help" => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    };
    let took = xtask::format_duration(start.elapsed());
    match result {
        Ok(()) => {
            xtask::say(&format!("xtask {command}: done in {took}"));
            ExitCode::SUCCESS
        }
        Err(message) => {
            xtask::say(&format!("xtask {command}: {message} (after {took})"));
            ExitCode::FAILURE
        }
    }
}

/// Numbers the steps of one command: `[2/6] ...`.
struct Steps {
    done: usize,
    total: usize,
}

impl Steps {
    fn new(total: usize) -> Self {
        Steps { done: 0, total }
    }

    fn run<T>(&mut self, what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
        self.done += 1;
        step(&format!("[{}/{}] {what}", self.done, self.total), f)
    }
}

/// Debian packages, the Python environment and Chromium: the first three steps of `test` and `setup`.
fn setup(steps: &mut Steps) -> Result<(), String> {
    steps.run("Debian packages: HDF5", debian::ensure_hdf5)?;
    setup_rest(steps)
}

/// The steps of [`setup`] after HDF5.
fn setup_rest(steps: &mut Steps) -> Result<(), String> {
    steps.run(
        "Debian packages: Chromium (report check)",
        debian::ensure_chromium,
    )?;
    steps.run(
        &format!("Python environment target/venv ({})", python::REQUIREMENTS),
        python::interpreter,
    )?;
    Ok(())
}

fn demo(args: &[String]) -> Result<(), String> {
    let mut steps = Steps::new(3);
    steps.run("Debian packages: HDF5", debian::ensure_hdf5)?;
    let avguard = build_release_avguard(&mut steps)?;
    let args = args.strip_prefix(&["--".to_string()]).unwrap_or(args);
    steps.run("avguard demo", || {
        run(
            Command::new(&avguard)
                .arg("demo")
                .args(args)
                .current_dir(workspace_root()),
            "avguard demo",
        )
    })
}

fn test() -> Result<(), String> {
    let mut steps = Steps::new(11);
    steps.run("Debian packages: HDF5", debian::ensure_hdf5)?;
    // The fuzz smoke's build (minutes when cold; it needs the HDF5 headers) runs beside the next steps at
    // the lowest priority: the downloads of the set-up leave the CPU idle.
    let fuzz_build = fuzz_smoke::start_build();
    setup_rest(&mut steps)?;
    steps.run("cargo fmt --check", || {
        run(
            cargo().args(["fmt", "--all", "--", "--check"]),
            "cargo fmt --check",
        )
    })?;
    steps.run("cargo clippy (warnings are errors)", || {
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
    steps.run("cargo doc (broken or private doc links are errors)", || {
        run(
            cargo()
                .args(["doc", "--workspace", "--no-deps"])
                .env("RUSTDOCFLAGS", "-D warnings"),
            "cargo doc",
        )
    })?;
    // Built apart so that the build and the test run are timed apart. `cargo test` builds `avguard` too
    // (the integration tests run it; the Python tests compare the package with it), with the features
    // the whole workspace's tests unify. A `cargo build --package tools` resolves other features and
    // compiled most dependencies a second time: CI took 19 min 45 s with it, 17 min 21 s without.
    steps.run(
        "cargo test --workspace --no-run (the tests, and the avguard binary they and the Python tests use)",
        || {
            run(
                cargo().args(["test", "--workspace", "--no-run"]),
                "cargo test --no-run",
            )
        },
    )?;
    steps.run("cargo test --workspace", || {
        run(cargo().args(["test", "--workspace"]), "cargo test")
    })?;
    steps.run(
        &format!(
            "fuzz smoke: every libFuzzer target, {} s in all (tests/fuzz)",
            fuzz_smoke::SMOKE_SECONDS
        ),
        || fuzz_smoke::run(fuzz_build),
    )?;
    python_package(&mut steps)
}

/// Builds the Python package's wheel, installs it into target/venv and runs its tests: two steps.
fn python_package(steps: &mut Steps) -> Result<(), String> {
    let python = python::interpreter()?;
    steps.run(
        &format!(
            "Python package: maturin build ({} profile), pip install into target/venv",
            package::TEST_PROFILE
        ),
        || package::build_and_install(&python, package::TEST_PROFILE),
    )?;
    let avguard = avguard_binary("debug");
    steps.run(
        "Python tests: pytest python/tests (two-node Ray cluster in a private network namespace)",
        || package::test(&python, &avguard),
    )
}

fn bench_ray() -> Result<(), String> {
    let mut steps = Steps::new(4);
    steps.run("Debian packages: HDF5", debian::ensure_hdf5)?;
    let avguard = build_release_avguard(&mut steps)?;
    let python = python::interpreter()?;
    steps.run(
        "Python package: maturin build (release profile), pip install into target/venv",
        || package::build_and_install(&python, "release"),
    )?;
    steps.run("Ray scaling (python/bench/ray_scaling.py)", || {
        package::bench_ray(&python, &avguard)
    })
}

fn bench() -> Result<(), String> {
    let mut steps = Steps::new(4);
    setup(&mut steps)?;
    steps.run("cargo bench --workspace", || {
        run(cargo().args(["bench", "--workspace"]), "cargo bench")
    })
}

/// Builds the release `avguard` as one step; returns its path.
fn build_release_avguard(steps: &mut Steps) -> Result<PathBuf, String> {
    steps.run("cargo build --release --bin avguard", || {
        run(
            cargo().args([
                "build",
                "--release",
                "--package",
                "tools",
                "--bin",
                "avguard",
            ]),
            "cargo build",
        )
    })?;
    Ok(avguard_binary("release"))
}

/// The `avguard` binary cargo builds with `profile_dir` (`debug` or `release`).
fn avguard_binary(profile_dir: &str) -> PathBuf {
    target_dir()
        .join(profile_dir)
        .join(format!("avguard{}", std::env::consts::EXE_SUFFIX))
}

fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(workspace_root());
    command
}
