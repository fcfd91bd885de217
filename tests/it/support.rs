//! Shared helpers of the integration tests: the binary under test, the Python interpreter of the interop
//! checks, and the shared learned-model fixture.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `avguard` binary of this very build: these tests belong to the `tools` package, so cargo builds the
/// binary from the current sources before it runs them, and passes its path.
pub fn avguard_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_avguard"))
}

/// A `Command` for the `avguard` binary.
pub fn avguard() -> Command {
    Command::new(avguard_bin())
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

/// Debian's Chromium, for the report check. When it is not installed yet (a fresh machine's plain `cargo
/// test --workspace`), the first call installs it through the same code as `cargo xtask setup` (apt-get,
/// as root), printing apt's output; when that fails, the test fails with the reason and the command to
/// run, as the Python tests do.
pub fn chromium() -> PathBuf {
    static BROWSER: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    let found = BROWSER.get_or_init(|| {
        xtask::debian::ensure_chromium()?;
        xtask::debian::chromium()
            .ok_or_else(|| "apt-get installed chromium, but it is not in /usr/bin".to_string())
    });
    match found {
        Ok(path) => path.clone(),
        Err(message) => {
            panic!("no Chromium for the report check: {message} (or run `cargo xtask setup`)")
        }
    }
}

/// A Python interop script of `tests/py/`, ready for its arguments.
pub fn python_script(name: &str) -> Command {
    let mut cmd = python();
    cmd.arg(workspace_root().join("tests/py").join(name));
    cmd
}

/// The run-by-run counts of a verdict in `score.json` or `evaluate.json` (`run_by_run`), as `[theirs,
/// ours, earlier, same, later, missed]`, after checking that the comparator's warned violations split
/// into the four.
pub fn run_by_run_counts(verdict: &serde_json::Value) -> [u64; 6] {
    let r = &verdict["run_by_run"];
    let counts = ["theirs", "ours", "earlier", "same", "later", "missed"].map(|k| {
        r[k].as_u64()
            .unwrap_or_else(|| panic!("no run_by_run.{k} in {verdict}"))
    });
    let [theirs, _, earlier, same, later, missed] = counts;
    assert_eq!(earlier + same + later + missed, theirs, "{verdict}");
    counts
}

/// Asserts that a finished command succeeded (showing both of its streams otherwise); returns its output.
pub fn ok(out: Output) -> Output {
    succeeded("the command", out)
}

/// Runs `cmd`, fails the test (naming the command) when it exits non-zero, and returns its stdout.
pub fn run_ok(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let out = succeeded(&format!("{cmd:?}"), out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `cmd` and fails the test unless it exits with 1 (an error, not a crash) and its stderr holds
/// every one of `needles`; returns the stderr.
pub fn run_refused(cmd: &mut Command, needles: &[&str]) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{cmd:?}: {stderr}");
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "{cmd:?}: no '{needle}' in {stderr}"
        );
    }
    stderr
}

fn succeeded(what: &str, out: Output) -> Output {
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A scratch folder, removed when the guard drops (also when the test fails).
pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("avguard-it-")
        .tempdir()
        .expect("create a scratch folder")
}

/// The project's root folder (the workspace root).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tools package sits in the workspace root")
        .to_path_buf()
}

/// Simulated red-light logs and a model learned from them, made once per test binary and shared.
pub struct Fixture {
    /// The folder holding everything below (tests may add their own outputs in it).
    pub root: PathBuf,
    /// The model learned from 40 training runs (`avguard learn --laws laws/specs`).
    pub model: PathBuf,
    /// 12 held-out logs.
    pub test_logs: PathBuf,
}

/// The shared [`Fixture`], made on first use with the `avguard` binary itself.
///
/// A static is never dropped, so the fixture does not live in a temporary folder (that would leave one
/// behind per test run): it lives in cargo's per-target scratch folder as `it-fixture-PID`, and each run
/// first removes the folders of earlier test processes that have ended.
pub fn fixture() -> &'static Fixture {
    static FIXTURE: std::sync::OnceLock<Fixture> = std::sync::OnceLock::new();
    FIXTURE.get_or_init(|| {
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        remove_ended_fixtures(&base);
        let root = base.join(format!("it-fixture-{}", std::process::id()));
        if root.exists() {
            std::fs::remove_dir_all(&root).expect("remove a stale fixture folder");
        }
        std::fs::create_dir_all(&root).expect("create the fixture folder");
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
        }
    })
}

/// Removes `base/it-fixture-PID` folders whose test process is no longer running.
fn remove_ended_fixtures(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name.to_str().and_then(|n| n.strip_prefix("it-fixture-"));
        if pid.is_some_and(|pid| !Path::new("/proc").join(pid).exists()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A running `avguard bridge` on a free loopback port, its stderr read line by line in the background.
/// Dropping it kills the process, so a failing test leaves no bridge behind.
pub struct RunningBridge {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
    /// Every stderr line read so far.
    log: Vec<String>,
    /// `ws://127.0.0.1:PORT/`, from the bridge's "listening on" line.
    pub url: String,
}

impl RunningBridge {
    /// Starts `avguard bridge --listen 127.0.0.1:0` with the arguments `args` adds (info logging) and waits
    /// until it listens.
    pub fn start(args: impl FnOnce(&mut Command) -> &mut Command) -> RunningBridge {
        let mut cmd = avguard();
        cmd.args(["bridge", "--listen", "127.0.0.1:0"])
            .env("AVGUARD_LOG", "info");
        args(&mut cmd);
        RunningBridge::spawn(cmd)
    }

    /// Starts a prepared command that runs `avguard bridge` on a free port (e.g. under a shell that sets
    /// resource limits and `exec`s it) and waits until it listens.
    pub fn spawn(mut cmd: Command) -> RunningBridge {
        let mut child = cmd
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start avguard bridge");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, lines) = std::sync::mpsc::channel();
        // Keeps draining stderr so that the bridge never blocks on a full pipe.
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut bridge = RunningBridge {
            child,
            lines,
            log: Vec::new(),
            url: String::new(),
        };
        let listening = bridge.wait_for("listening on");
        bridge.url = listening
            .split_whitespace()
            .find(|w| w.starts_with("ws://"))
            .unwrap_or_else(|| panic!("no address in {listening:?}"))
            .to_owned();
        bridge
    }

    /// The port the bridge listens on.
    pub fn port(&self) -> u16 {
        let addr: std::net::SocketAddr = self
            .url
            .trim_start_matches("ws://")
            .trim_end_matches('/')
            .parse()
            .unwrap_or_else(|e| panic!("bad address in {}: {e}", self.url));
        addr.port()
    }

    /// The process id (for signals).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits (at most 20 s) for a stderr line containing `needle` and returns it.
    pub fn wait_for(&mut self, needle: &str) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.log.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "the bridge never logged {needle:?}; its stderr:\n{}",
                    self.log.join("\n")
                ),
            }
        }
    }

    /// Sends a signal (`"HUP"`, `"TERM"`, ...) to the bridge.
    pub fn signal(&self, name: &str) {
        let sent = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.pid().to_string())
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -{name} failed");
    }

    /// Stops the bridge with SIGTERM; returns its exit status and whole stderr.
    pub fn stop(mut self) -> (std::process::ExitStatus, String) {
        self.signal("TERM");
        let status = self.child.wait().expect("wait for the bridge");
        // The reader thread ends with the pipe; take what it has left.
        while let Ok(line) = self.lines.recv() {
            self.log.push(line);
        }
        (status, self.log.join("\n"))
    }
}

impl Drop for RunningBridge {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
