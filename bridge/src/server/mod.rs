//! The accept loop: binds connections to the monitor, caps their number, and shuts everything down on
//! one cancellation tree.
//!
//! [`run`] takes the listener and the shutdown future as parameters (tests bind port 0 and cancel at
//! will). Each connection runs in its own task with a child [`CancellationToken`]; a panicking monitor
//! worker cancels the root token, so the whole bridge stops rather than half-working. After the accept loop
//! ends, every connection gets `shutdown_grace` to close with a reason, then the monitor threads are told to
//! quit and joined, and the prediction log (flushed per line) is closed.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

pub use crate::config::{BridgeConfig, Reloader};
use crate::connection::{self, ConnCtx};
use crate::metrics::MetricsSnapshot;
use crate::pipeline::{Metrics, ModelStore, Monitor, Sinks};
use crate::predlog::PredictionLog;
use crate::shutdown::ShutdownReason;

#[cfg(test)]
mod tests;

/// First wait after a failed accept.
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(5);

/// Connections over the limit answered with an HTTP 503 at once; more are dropped unanswered.
const REFUSALS_IN_FLIGHT: usize = 16;

/// How long a refused client has to send its request before the 503 goes out anyway.
const REFUSAL_READ_TIMEOUT: Duration = Duration::from_secs(2);

/// Answers a connection over the limit with `HTTP/1.1 503 Service Unavailable` naming the limit, after
/// reading its request (at most 8 KiB, at most [`REFUSAL_READ_TIMEOUT`]): a socket closed with unread
/// data is reset, and the client would see the reset instead of the answer.
async fn refuse_with_503(mut stream: TcpStream, limit: usize) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut request = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    let _ = tokio::time::timeout(REFUSAL_READ_TIMEOUT, async {
        while request.len() < 8192 && !request.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => request.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    let body =
        format!("avguard bridge: the connection limit of {limit} is reached; try again later\n");
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n\
         Content-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(REFUSAL_READ_TIMEOUT, async {
        let _ = stream.write_all(answer.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
}
/// Longest wait after repeated failed accepts.
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// What happened during a run.
#[derive(Debug, Default)]
pub struct RunReport {
    /// How each connection ended.
    pub connection_reasons: Vec<ShutdownReason>,
    /// Connections refused because the limit was reached.
    pub n_refused: u64,
    /// Failed accepts (each followed by a back-off).
    pub n_accept_errors: u64,
    /// Monitor workers that panicked.
    pub n_worker_panics: usize,
    /// Data-plane drops.
    pub n_data_dropped: u64,
    /// Frames stepped.
    pub n_frames: u64,
    /// Interventions queued.
    pub n_interventions: u64,
    /// Rejected messages.
    pub n_decode_errors: u64,
    /// Connection tasks that did not finish within the grace period (aborted).
    pub n_aborted: usize,
    /// Every counter, queue length and stage latency at exit.
    pub metrics: MetricsSnapshot,
}

/// Errors that stop the bridge before it serves.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BridgeError {
    /// The prediction log could not be created.
    #[error("cannot create prediction log {path}: {source}")]
    Log {
        /// Path.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The monitor threads could not be started.
    #[error("cannot start monitor threads: {0}")]
    Threads(std::io::Error),
}

/// Serves `listener` until `shutdown` completes (or a monitor worker dies).
pub async fn run(
    listener: TcpListener,
    config: BridgeConfig,
    models: Arc<ModelStore>,
    shutdown: impl Future<Output = ()>,
) -> Result<RunReport, BridgeError> {
    let root = CancellationToken::new();
    let (monitor, ctx) = start_monitor(&config, models, &root)?;
    let mut conns = Connections::new(config.max_connections);
    let mut report = RunReport::default();
    let mut metrics_tick = metrics_ticker(config.metrics_interval);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            _ = metrics_tick.tick() => ctx.monitor.snapshot().log(),
            () = root.cancelled() => break,
            () = conns.backoff_elapsed(), if conns.backing_off() => conns.resume(),
            accepted = listener.accept(), if !conns.backing_off() => {
                conns.admit(accepted, &ctx, &root, &mut report);
            }
            Some(done) = conns.tasks.join_next(), if !conns.tasks.is_empty() => {
                if let Ok(reason) = done {
                    report.connection_reasons.push(reason);
                }
            }
        }
    }
    root.cancel();
    conns.drain(config.shutdown_grace, &mut report).await;
    stop_monitor(monitor, &mut report).await;
    Ok(report)
}

/// Opens the prediction log and starts the monitor threads; returns them with what every connection
/// task shares.
fn start_monitor(
    config: &BridgeConfig,
    models: Arc<ModelStore>,
    root: &CancellationToken,
) -> Result<(Monitor, Arc<ConnCtx>), BridgeError> {
    let log = match &config.log_path {
        Some(path) => Some(Arc::new(
            PredictionLog::create_with(path, config.fsync).map_err(|source| BridgeError::Log {
                path: path.clone(),
                source,
            })?,
        )),
        None => None,
    };
    let sinks = Sinks {
        log,
        record: config.record.clone(),
    };
    let monitor = Monitor::start(
        config.monitor.clone(),
        Arc::clone(&models),
        sinks,
        Arc::new(Metrics::default()),
        root.clone(),
    )
    .map_err(BridgeError::Threads)?;
    let ctx = Arc::new(ConnCtx {
        monitor: monitor.handle(),
        models,
        config: config.clone(),
    });
    Ok((monitor, ctx))
}

/// The periodic metrics line (a long period stands in for "never" when none is configured).
fn metrics_ticker(every: Option<Duration>) -> tokio::time::Interval {
    let period = every.unwrap_or(Duration::from_secs(365 * 24 * 3600));
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick
}

/// Tells the monitor threads to quit, joins them, and fills the report's counters.
async fn stop_monitor(monitor: Monitor, report: &mut RunReport) {
    let handle = monitor.handle();
    report.n_worker_panics = tokio::task::spawn_blocking(move || monitor.shutdown())
        .await
        .unwrap_or(1);
    report.metrics = handle.snapshot();
    report.metrics.log();
    report.n_data_dropped = report.metrics.n_data_dropped;
    report.n_frames = report.metrics.n_frames;
    report.n_interventions = report.metrics.n_interventions;
    report.n_decode_errors = report.metrics.n_decode_errors;
}

/// The accepted connections: the cap on their number, their tasks, and the back-off after a failed
/// accept.
struct Connections {
    /// Refusals being answered with an HTTP 503 ([`refuse_with_503`]).
    refusals: Arc<Semaphore>,
    /// The connection limit, for the refusal's text.
    limit: usize,
    /// Caps simultaneous connections; a permit travels with each connection task.
    permits: Arc<Semaphore>,
    /// One task per connection, each ending with its reason.
    tasks: JoinSet<ShutdownReason>,
    next_id: u64,
    /// After a failed accept the loop waits before accepting again, doubling the wait up to a second:
    /// errors such as running out of file descriptors (EMFILE) persist, and retrying at once would spin.
    backoff: Duration,
    /// When accepting resumes, while backing off.
    resume_at: Option<tokio::time::Instant>,
}

impl Connections {
    fn new(max_connections: usize) -> Connections {
        Connections {
            permits: Arc::new(Semaphore::new(max_connections.max(1))),
            refusals: Arc::new(Semaphore::new(REFUSALS_IN_FLIGHT)),
            limit: max_connections.max(1),
            tasks: JoinSet::new(),
            next_id: 0,
            backoff: ACCEPT_BACKOFF_MIN,
            resume_at: None,
        }
    }

    fn backing_off(&self) -> bool {
        self.resume_at.is_some()
    }

    /// Completes when the back-off is over (at once when there is none).
    fn backoff_elapsed(&self) -> tokio::time::Sleep {
        tokio::time::sleep_until(self.resume_at.unwrap_or_else(tokio::time::Instant::now))
    }

    fn resume(&mut self) {
        self.resume_at = None;
    }

    /// Starts a task for an accepted connection, or refuses it at the limit, or backs off after an
    /// accept error (which does not stop the server).
    fn admit(
        &mut self,
        accepted: std::io::Result<(TcpStream, SocketAddr)>,
        ctx: &Arc<ConnCtx>,
        root: &CancellationToken,
        report: &mut RunReport,
    ) {
        let (stream, peer) = match accepted {
            Ok(a) => {
                self.backoff = ACCEPT_BACKOFF_MIN;
                a
            }
            Err(err) => {
                report.n_accept_errors += 1;
                tracing::warn!(%err, backoff_ms = self.backoff.as_millis() as u64, "accept failed; backing off");
                self.resume_at = Some(tokio::time::Instant::now() + self.backoff);
                self.backoff = (self.backoff * 2).min(ACCEPT_BACKOFF_MAX);
                return;
            }
        };
        // Interventions are small and latency-critical: no Nagle delay.
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!(%peer, %err, "cannot set TCP_NODELAY");
        }
        let Ok(permit) = Arc::clone(&self.permits).try_acquire_owned() else {
            report.n_refused += 1;
            tracing::warn!(%peer, "connection refused: limit reached");
            // Answered with an HTTP 503 that says why, while few refusals are in flight; beyond that the
            // socket is dropped (a flood of refused connections must not cost more than the refusal).
            if let Ok(answering) = Arc::clone(&self.refusals).try_acquire_owned() {
                let limit = self.limit;
                tokio::spawn(async move {
                    refuse_with_503(stream, limit).await;
                    drop(answering);
                });
            }
            return;
        };
        self.next_id += 1;
        let (id, ctx, token) = (self.next_id, Arc::clone(ctx), root.child_token());
        self.tasks.spawn(async move {
            let reason = connection::serve(stream, id, ctx, token).await;
            drop(permit);
            reason
        });
    }

    /// After the root token is cancelled: waits up to `grace` for every connection to close with its
    /// reason, then aborts the rest.
    async fn drain(&mut self, grace: Duration, report: &mut RunReport) {
        let grace = tokio::time::sleep(grace);
        tokio::pin!(grace);
        loop {
            tokio::select! {
                done = self.tasks.join_next() => match done {
                    Some(Ok(reason)) => report.connection_reasons.push(reason),
                    Some(Err(_)) => {}
                    None => break,
                },
                () = &mut grace => {
                    report.n_aborted = self.tasks.len();
                    self.tasks.shutdown().await;
                    break;
                }
            }
        }
    }
}
