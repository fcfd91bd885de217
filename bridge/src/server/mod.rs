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

use tokio::net::TcpListener;
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
    let log = match &config.log_path {
        Some(path) => Some(Arc::new(
            PredictionLog::create_with(path, config.fsync).map_err(|source| BridgeError::Log {
                path: path.clone(),
                source,
            })?,
        )),
        None => None,
    };
    let root = CancellationToken::new();
    let metrics = Arc::new(Metrics::default());
    let sinks = Sinks {
        log,
        record: config.record.clone(),
    };
    let monitor = Monitor::start(
        config.monitor.clone(),
        Arc::clone(&models),
        sinks,
        Arc::clone(&metrics),
        root.clone(),
    )
    .map_err(BridgeError::Threads)?;
    let ctx = Arc::new(ConnCtx {
        monitor: monitor.handle(),
        models,
        config: config.clone(),
    });
    // Caps simultaneous connections; a permit travels with each connection task.
    let permits = Arc::new(Semaphore::new(config.max_connections.max(1)));
    let mut tasks = JoinSet::new();
    let mut report = RunReport::default();
    let mut next_id: u64 = 0;
    // The periodic metrics line (a long period stands in for "never" when none is configured).
    let period = config
        .metrics_interval
        .unwrap_or(Duration::from_secs(365 * 24 * 3600));
    let mut metrics_tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    metrics_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(shutdown);
    // After a failed accept the loop waits before accepting again, doubling the wait up to a second:
    // errors such as running out of file descriptors (EMFILE) persist, and retrying at once would spin.
    let mut backoff = ACCEPT_BACKOFF_MIN;
    let mut resume_at: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            _ = metrics_tick.tick() => ctx.monitor.snapshot().log(),
            () = root.cancelled() => break,
            () = tokio::time::sleep_until(resume_at.unwrap_or_else(tokio::time::Instant::now)), if resume_at.is_some() => {
                resume_at = None;
            }
            accepted = listener.accept(), if resume_at.is_none() => {
                let (stream, peer): (_, SocketAddr) = match accepted {
                    Ok(a) => {
                        backoff = ACCEPT_BACKOFF_MIN;
                        a
                    }
                    Err(err) => {
                        // Accept errors do not stop the server: it backs off and tries again.
                        report.n_accept_errors += 1;
                        tracing::warn!(%err, backoff_ms = backoff.as_millis() as u64, "accept failed; backing off");
                        resume_at = Some(tokio::time::Instant::now() + backoff);
                        backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
                        continue;
                    }
                };
                // Interventions are small and latency-critical: no Nagle delay.
                if let Err(err) = stream.set_nodelay(true) {
                    tracing::debug!(%peer, %err, "cannot set TCP_NODELAY");
                }
                let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
                    report.n_refused += 1;
                    tracing::warn!(%peer, "connection refused: limit reached");
                    continue;
                };
                next_id += 1;
                let token = root.child_token();
                let ctx = Arc::clone(&ctx);
                let id = next_id;
                tasks.spawn(async move {
                    let reason = connection::serve(stream, id, ctx, token).await;
                    drop(permit);
                    reason
                });
            }
            Some(done) = tasks.join_next(), if !tasks.is_empty() => {
                if let Ok(reason) = done {
                    report.connection_reasons.push(reason);
                }
            }
        }
    }
    root.cancel();
    let grace = tokio::time::sleep(config.shutdown_grace);
    tokio::pin!(grace);
    loop {
        tokio::select! {
            done = tasks.join_next() => match done {
                Some(Ok(reason)) => report.connection_reasons.push(reason),
                Some(Err(_)) => {}
                None => break,
            },
            () = &mut grace => {
                report.n_aborted = tasks.len();
                tasks.shutdown().await;
                break;
            }
        }
    }
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
    Ok(report)
}
