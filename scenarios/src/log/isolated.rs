//! Reading untrusted logs in a child process, so that no file can crash or hang the caller.
//!
//! Our reader checks everything it can before allocating, but HDF5 decodes the file's metadata in C
//! first, and a hostile or corrupt file can crash it there (libhdf5 1.10.8 segfaults in `H5A__close` on
//! some corrupt attribute messages; a current HDF5 still hangs and over-allocates on others: see
//! `tests/fuzz/known-libhdf5/`). [`read_log_isolated`] therefore hands the path to a child process that
//! runs [`read_log`] and sends the validated run back (`log::transfer`); a child that dies or takes
//! longer than [`READ_TIMEOUT`] fails that one file with a [`LogError::Reader`], and the caller goes on.
//! The child caps its address space by the size of the file it reads (`limit_memory`), so a file cannot
//! make the library allocate gigabytes either.
//!
//! The child is the calling program itself, started again with [`CHILD_ENV`] set: a binary opts in by
//! calling [`init`] first thing in `main`. Children are kept and reused (one per reading thread), so the
//! cost of starting one is paid once per thread, not per file; a child is replaced after any file it
//! failed on, so no library state left behind by a bad file reaches the next one. A crash is retried once
//! in a fresh child before the file is declared bad. A host whose children are not simply itself (the
//! Python module, whose children are the interpreter loading the extension) calls [`enable`] with its own
//! command and [`serve_if_child`] where that child starts. Without either (libraries, tests), or with
//! `AVGUARD_LOG_READER=in-process`, logs are read in the calling process.

use std::ffi::OsString;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use super::error::LogError;
use super::{read_log, transfer, RunLog};

/// Set in a child's environment: the process serves read requests on stdin/stdout instead of running.
pub const CHILD_ENV: &str = "AVGUARD_LOG_READER_CHILD";

/// `AVGUARD_LOG_READER=in-process` turns isolation off (trusted logs, a little faster).
pub const MODE_ENV: &str = "AVGUARD_LOG_READER";

/// Longest a child may take over one file, unless `AVGUARD_LOG_READ_TIMEOUT_S` says otherwise. Reading the
/// largest log the format allows (1,000,000 frames) takes a few seconds; a child still busy after this is
/// stuck in the library.
pub const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// `AVGUARD_LOG_READ_TIMEOUT_S=SECONDS` replaces [`READ_TIMEOUT`] (a positive number of seconds).
pub const TIMEOUT_ENV: &str = "AVGUARD_LOG_READ_TIMEOUT_S";

/// The process-wide reader [`init`] set up; unset: read in-process.
static READER: OnceLock<IsolatedReader> = OnceLock::new();

/// Call first thing in `main` of a program that reads logs from users. In a child started by
/// [`read_log_isolated`] it serves read requests and exits; otherwise it makes [`read_log_isolated`]
/// start children of this program (unless `AVGUARD_LOG_READER=in-process`).
pub fn init() {
    serve_if_child();
    if let Ok(program) = std::env::current_exe() {
        enable(program, Vec::new());
    }
}

/// In a process started as a reading child ([`CHILD_ENV`] set), serves read requests on stdin/stdout and
/// exits; anywhere else, returns at once. [`init`] calls it; a host that starts its children another way
/// (the Python module: the interpreter, loading the extension) calls it where the child starts.
pub fn serve_if_child() {
    if std::env::var_os(CHILD_ENV).is_some() {
        let code = serve_with(
            std::io::stdin().lock(),
            std::io::BufWriter::new(std::io::stdout().lock()),
            limit_memory,
        );
        std::process::exit(code);
    }
}

/// Makes [`read_log_isolated`] read in children started as `program args...` with [`CHILD_ENV`] set (they
/// must reach [`serve_if_child`]), unless `AVGUARD_LOG_READER=in-process`; the first call wins. [`init`]
/// is this with the running executable and no arguments.
pub fn enable(program: PathBuf, args: Vec<OsString>) {
    if std::env::var(MODE_ENV).as_deref() == Ok("in-process") {
        return;
    }
    let timeout = std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero())
        .unwrap_or(READ_TIMEOUT);
    let _ = READER.set(IsolatedReader::new(program, args, timeout));
}

/// Reads and validates the log at `path` like [`read_log`], in a child process when [`init`] enabled it.
///
/// # Errors
/// Every error of [`read_log`] (as [`LogError::Reported`] when it came from a child), and
/// [`LogError::Reader`] when the child crashed or ran out of time on this file.
pub fn read_log_isolated(path: &Path) -> Result<RunLog, LogError> {
    match READER.get() {
        Some(reader) => reader.read(path),
        None => read_log(path),
    }
}

/// Reads logs in child processes of one program, each child reused until a file fails in it.
#[derive(Debug)]
pub struct IsolatedReader {
    program: PathBuf,
    args: Vec<OsString>,
    timeout: Duration,
    /// Children waiting for work.
    idle: Mutex<Vec<Worker>>,
}

/// Why a child gave no answer.
enum Failure {
    /// It died (a crash inside the library) or broke the protocol.
    Died(String),
    /// It was stopped after the time limit.
    TimedOut,
    /// It could not be started (not the file's fault: reported, not retried).
    Spawn(String),
}

impl IsolatedReader {
    /// A reader whose children run `program args...` with [`CHILD_ENV`] set; such a process must call
    /// [`init`] (or [`serve`]) before anything else. A file taking longer than `timeout` fails.
    pub fn new(program: PathBuf, args: Vec<OsString>, timeout: Duration) -> IsolatedReader {
        IsolatedReader {
            program,
            args,
            timeout,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Reads and validates the log at `path` in a child (see the module docs).
    ///
    /// # Errors
    /// As [`read_log_isolated`].
    pub fn read(&self, path: &Path) -> Result<RunLog, LogError> {
        let label = path.display().to_string();
        // The protocol carries UTF-8 paths; any other (rare on Linux) is read here.
        let Some(text) = path.to_str() else {
            return read_log(path);
        };
        let mut last = String::new();
        // A crash is retried once in a fresh child: whether libhdf5 crashes can depend on its heap.
        for fresh in [false, true] {
            let worker = if fresh { None } else { self.take_idle() };
            let mut worker = match worker.map_or_else(|| self.spawn(), Ok) {
                Ok(w) => w,
                Err(problem) => return Err(reader_error(&label, problem)),
            };
            match worker.request(text, self.timeout) {
                Ok(Ok(run)) => {
                    self.put_idle(worker);
                    return Ok(run);
                }
                // A file that failed may have left the library in a bad state: the child is replaced.
                Ok(Err(reported)) => return Err(LogError::Reported(reported)),
                Err(Failure::Died(problem)) => last = problem,
                Err(Failure::TimedOut) => {
                    return Err(reader_error(
                        &label,
                        format!(
                            "reading took longer than {} s and was stopped (the file is corrupt or \
                             not an avguard log)",
                            self.timeout.as_secs_f64()
                        ),
                    ))
                }
                Err(Failure::Spawn(problem)) => return Err(reader_error(&label, problem)),
            }
        }
        Err(reader_error(
            &label,
            format!("the HDF5 library crashed reading it ({last}): the file is corrupt or not an avguard log"),
        ))
    }

    fn take_idle(&self) -> Option<Worker> {
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
    }

    fn put_idle(&self, worker: Worker) {
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(worker);
    }

    fn spawn(&self) -> Result<Worker, String> {
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .env(CHILD_ENV, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start the log reader process {}: {e} ({MODE_ENV}=in-process reads logs \
                     without one)",
                    self.program.display()
                )
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err("the log reader process has no pipes".to_owned());
        };
        Ok(Worker {
            child: Arc::new(Mutex::new(child)),
            stdin,
            stdout: BufReader::new(stdout),
        })
    }
}

fn reader_error(path: &str, problem: String) -> LogError {
    LogError::Reader {
        path: path.to_owned(),
        problem,
    }
}

/// One child and its pipes.
#[derive(Debug)]
struct Worker {
    /// Shared with the watchdog of a request, which kills it at the deadline.
    child: Arc<Mutex<Child>>,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Worker {
    /// Sends one path and waits for the answer: the run, or the reader's error message.
    fn request(
        &mut self,
        path: &str,
        timeout: Duration,
    ) -> Result<Result<RunLog, String>, Failure> {
        let (done, deadline) = std::sync::mpsc::channel::<()>();
        let child = Arc::clone(&self.child);
        let watchdog = std::thread::Builder::new()
            .name("avguard-log-reader-watchdog".to_owned())
            .spawn(move || {
                let expired = matches!(
                    deadline.recv_timeout(timeout),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                );
                if expired {
                    // Not reaped before the watchdog is joined, so the pid is still this child's.
                    let _ = child.lock().unwrap_or_else(PoisonError::into_inner).kill();
                }
                expired
            })
            .map_err(|e| Failure::Spawn(format!("cannot start a watchdog thread: {e}")))?;
        let answer = self.exchange(path);
        let _ = done.send(());
        let timed_out = watchdog.join().unwrap_or(false);
        match answer {
            Ok(answer) => Ok(answer),
            Err(_) if timed_out => Err(Failure::TimedOut),
            Err(problem) => Err(Failure::Died(self.death(problem))),
        }
    }

    fn exchange(&mut self, path: &str) -> Result<Result<RunLog, String>, String> {
        let bytes = path.as_bytes();
        let len = u32::try_from(bytes.len()).map_err(|_| "path too long".to_owned())?;
        let sent = self
            .stdin
            .write_all(&len.to_le_bytes())
            .and_then(|()| self.stdin.write_all(bytes))
            .and_then(|()| self.stdin.flush());
        sent.map_err(|e| format!("cannot send the request: {e}"))?;
        let mut head = [0u8; 9];
        self.stdout
            .read_exact(&mut head)
            .map_err(|e| format!("no answer: {e}"))?;
        let [tag, len @ ..] = head;
        let len = u64::from_le_bytes(len);
        let mut payload = Vec::new();
        (&mut self.stdout)
            .take(len)
            .read_to_end(&mut payload)
            .map_err(|e| format!("answer cut short: {e}"))?;
        if payload.len() as u64 != len {
            return Err(format!(
                "answer cut short: {} of {len} bytes",
                payload.len()
            ));
        }
        match tag {
            0 => transfer::decode(&payload)
                .map(Ok)
                .map_err(|e| format!("garbled answer: {e}")),
            1 => Ok(Err(String::from_utf8_lossy(&payload).into_owned())),
            other => Err(format!("garbled answer: tag {other}")),
        }
    }

    /// How the child ended, for an error message; `problem` is what the pipe said.
    fn death(&mut self, problem: String) -> String {
        let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        // Its end of the pipe is closed or garbled: make sure it is gone, then ask how it went.
        let status = match child.try_wait() {
            Ok(Some(status)) => Some(status),
            _ => {
                let _ = child.kill();
                child.wait().ok()
            }
        };
        match status {
            Some(status) => describe(status),
            None => problem,
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Idle children exit at the end of their input; a child still reading is stopped. Either way it is
        // reaped here, so no zombie is left behind.
        let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        if !matches!(child.try_wait(), Ok(Some(_))) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// "killed by signal 11 (SIGSEGV)" or "exit status 3".
fn describe(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                4 => " (SIGILL)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                _ => "",
            };
            return format!("reader process killed by signal {signal}{name}");
        }
    }
    format!("reader process ended with {status}")
}

/// Memory a child may map besides what a file's size allows ([`limit_memory`]): the program, libhdf5, and
/// the reader's fixed costs, with a wide margin (an idle child maps under 50 MB).
const MEMORY_BASE: u64 = 1 << 30;

/// Memory a child may map per byte of the file it reads: twice the largest decompression ratio the reader
/// accepts for a dataset (1032, deflate's best), so a valid log always fits.
const MEMORY_PER_FILE_BYTE: u64 = 2048;

/// Before each file, caps this process's address space (the soft `RLIMIT_AS`) to [`MEMORY_BASE`] plus
/// [`MEMORY_PER_FILE_BYTE`] per byte of the file: a file cannot make libhdf5 allocate gigabytes (a 23 kB
/// fuzzed log asked for 3 GB of a string attribute), the allocation fails inside the child instead.
fn limit_memory(path: &Path) {
    #[cfg(unix)]
    {
        let file_bytes = std::fs::metadata(path).map_or(0, |m| m.len());
        let cap = MEMORY_BASE.saturating_add(file_bytes.saturating_mul(MEMORY_PER_FILE_BYTE));
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: both calls only read or write the `rlimit` value passed by pointer, which lives on
        // this stack frame for the whole call. Only the soft limit changes, never above the hard one, so the
        // next file may raise it again.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_AS, &mut limit) == 0 {
                limit.rlim_cur = cap.min(limit.rlim_max);
                libc::setrlimit(libc::RLIMIT_AS, &limit);
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// The child's side: answers read requests from `input` on `output` until `input` ends. Returns the
/// process exit code: 0 at the end of input, 2 when the parent went away mid-request.
pub fn serve(input: impl Read, output: impl Write) -> i32 {
    serve_with(input, output, |_| {})
}

/// [`serve`], calling `before_read` with each path before reading it.
fn serve_with(
    mut input: impl Read,
    mut output: impl Write,
    mut before_read: impl FnMut(&Path),
) -> i32 {
    loop {
        let mut len = [0u8; 4];
        match input.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return 0,
            Err(_) => return 2,
        }
        let mut path = vec![0u8; u32::from_le_bytes(len) as usize];
        if input.read_exact(&mut path).is_err() {
            return 2;
        }
        let path = PathBuf::from(String::from_utf8_lossy(&path).into_owned());
        before_read(&path);
        let result = std::panic::catch_unwind(|| read_log(&path));
        let (tag, payload) = match result {
            Ok(Ok(run)) => (0u8, transfer::encode(&run)),
            Ok(Err(err)) => (1, err.to_string().into_bytes()),
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                (1, format!("the log reader panicked: {what}").into_bytes())
            }
        };
        let written = output
            .write_all(&[tag])
            .and_then(|()| output.write_all(&(payload.len() as u64).to_le_bytes()))
            .and_then(|()| output.write_all(&payload))
            .and_then(|()| output.flush());
        if written.is_err() {
            return 2;
        }
    }
}

#[cfg(test)]
mod tests;
