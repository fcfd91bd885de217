//! Shared helpers for avguard's integration tests (the tests themselves are in `it/`).

use std::path::PathBuf;
use std::process::Command;

/// The `avguard` binary built by the same `cargo test --workspace` run.
///
/// Test binaries live in `target/<profile>/deps/`; the `avguard` binary sits one level up. Cargo does not
/// build another package's binary for these tests, so `cargo xtask test` builds it before `cargo test`.
pub fn avguard_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("test binary lives in target/<profile>/deps");
    let bin = profile_dir.join(format!("avguard{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} is missing: build it first (`cargo build -p tools --bin avguard`), or run `cargo xtask test`",
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

/// A `Command` for the project's Python interpreter, `target/venv/bin/python`, with the packages pinned in
/// `tests/py/requirements.txt`. Every Python run of the tests goes through here.
///
/// When the environment does not exist yet (a fresh clone's plain `cargo test --workspace`), the first call
/// makes it through the same code as `cargo xtask setup`, printing each step and pip's output; the other
/// tests wait for it. When that fails (no network, not root for a missing `python3-venv`), every test that
/// needs Python fails with the reason and the command to run: a test never passes without its Python check.
pub fn python() -> Command {
    static INTERPRETER: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    match INTERPRETER.get_or_init(xtask::python::interpreter) {
        Ok(python) => Command::new(python),
        Err(message) => panic!("{message}"),
    }
}

/// The real Apollo sample data committed under `tests/fixtures/apollo/` (see its README for provenance).
pub fn apollo_fixtures() -> PathBuf {
    workspace_root().join("tests/fixtures/apollo")
}

/// Simulated red-light logs and a model learned from them, made once per test binary and shared.
pub struct Fixture {
    _dir: tempfile::TempDir,
    /// The folder holding everything below (tests may add their own outputs in it).
    pub root: PathBuf,
    /// The model learned from 40 training runs (`avguard learn --laws laws/specs`).
    pub model: PathBuf,
    /// 12 held-out logs.
    pub test_logs: PathBuf,
}

/// The shared [`Fixture`], made on first use with the `avguard` binary itself.
pub fn fixture() -> &'static Fixture {
    static FIXTURE: std::sync::OnceLock<Fixture> = std::sync::OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().to_path_buf();
        let scenario = workspace_root().join("scenarios/red_light_queue.toml");
        for (runs, seed, out) in [("40", "1", "train"), ("12", "77", "test")] {
            let out_dir = root.join(out);
            let status = avguard()
                .args(["simulate", "--scenario"])
                .arg(&scenario)
                .args(["--runs", runs, "--seed", seed, "--out"])
                .arg(&out_dir)
                .status()
                .expect("run avguard simulate");
            assert!(status.success(), "avguard simulate failed");
        }
        let model = root.join("model.bin");
        let status = avguard()
            .args(["learn", "--laws"])
            .arg(workspace_root().join("laws/specs"))
            .arg("--out")
            .arg(&model)
            .arg(root.join("train"))
            .status()
            .expect("run avguard learn");
        assert!(status.success(), "avguard learn failed");
        Fixture {
            test_logs: root.join("test"),
            model,
            root,
            _dir: dir,
        }
    })
}

/// An `avguard bridge` process started for a test, with its stderr lines and its `ws://` address.
pub struct BridgeProcess {
    /// The process (killed when dropped).
    pub child: std::process::Child,
    /// `ws://127.0.0.1:PORT/`, from its "listening on" line.
    pub url: String,
    lines: std::sync::mpsc::Receiver<String>,
}

impl BridgeProcess {
    /// Starts `avguard bridge --listen 127.0.0.1:0` plus `args` (with `envs` set) and waits until it
    /// listens. Panics with its output if it exits or stays silent for 20 s.
    pub fn start(args: &[&std::ffi::OsStr], envs: &[(&str, &str)]) -> BridgeProcess {
        let mut cmd = avguard();
        cmd.args(["bridge", "--listen", "127.0.0.1:0"])
            .args(args)
            .env("AVGUARD_LOG", "info")
            .stderr(std::process::Stdio::piped());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn avguard bridge");
        let stderr = std::io::BufReader::new(child.stderr.take().expect("piped stderr"));
        let (tx, lines) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in stderr.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut bridge = BridgeProcess {
            child,
            url: String::new(),
            lines,
        };
        let first = bridge.wait_for("listening on");
        bridge.url = first
            .split_whitespace()
            .find(|w| w.starts_with("ws://"))
            .expect("a ws:// address in the listening line")
            .to_owned();
        bridge
    }

    /// The next stderr line containing `needle` (panics after 20 s, printing what it saw).
    pub fn wait_for(&self, needle: &str) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(line) => seen.push(line),
                Err(_) => panic!(
                    "the bridge never logged {needle:?}; it said:\n{}",
                    seen.join("\n")
                ),
            }
        }
    }
}

impl Drop for BridgeProcess {
    fn drop(&mut self) {
        // Best effort: a test that already stopped the bridge leaves nothing to kill.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
