//! The monitor stage: plain threads fed by bounded crossbeam queues, one state per simulator connection.
//!
//! Each worker thread (`worker.rs`) owns the per-connection states (assembler → decision session → enforcer) of the connections
//! sharded to it (`conn id % n_workers`) and runs frame assembly, the decision step and enforcement. It
//! hands results back to the connection through the connection's bounded outbound queue ([`ConnLink`]).
//!
//! Termination protocol: a `Quit` marker on each worker's lifecycle queue, plus a shared `quit` flag, plus a
//! guard whose `Drop` trips the flag, sends `Quit` to every worker and cancels the server's token if its
//! thread is panicking — so one panicking stage brings the whole bridge down cleanly instead of leaving a
//! half-alive pipeline.
//!
//! The model lives in an `ArcSwap`: [`ModelStore::swap`] replaces it without stopping; each connection
//! notices the new generation on its next frame and starts a fresh session (window state restarts).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, TrySendError};
use tokio_util::sync::CancellationToken;

use crate::enforce::EnforceConfig;
pub use crate::metrics::Metrics;
pub use crate::models::{ModelSlot, ModelStore};
use crate::predlog::PredictionLog;
use crate::record::RecordConfig;
use ingest::assemble::AssemblerConfig;
use ingest::hdmap::tracker::TrackerConfig;
use ingest::hdmap::HdMap;
use ingest::message::SimMessage;

mod link;
#[cfg(test)]
mod tests;
mod worker;

/// Capacity of each worker's ready queue (connections): one entry per connection with waiting input.
const READY_CAPACITY: usize = 1 << 16;

pub use link::{ConnLink, ControlQueueFull, OutTopic, Outbound, QueueError, CONTROL_CAPACITY};

/// What a connection hands to its monitor state, in order.
pub(crate) enum Input {
    /// A decoded message.
    Message(SimMessage),
    /// The client asked for a new run (`/avguard/control` `{"op": "new_run"}`), with its id if given. A
    /// control request: never dropped (see `ConnLink::push_input`).
    NewRun(Option<String>),
}

/// Monitor input, data plane: a connection with inbound messages waiting in its own queue
/// ([`ConnLink::push_input`]). Each connection is on its worker's ready queue at most once.
pub(crate) type DataItem = Arc<ConnLink>;

/// Monitor input, lifecycle plane: a connection ended, or the worker must stop.
pub(crate) enum Lifecycle {
    /// The connection closed: drop its state.
    Close(u64),
    /// Stop the worker.
    Quit,
}

/// Monitor settings.
#[derive(Debug, Clone)]
pub struct MonitorConfig {
    /// Worker threads.
    pub n_workers: usize,
    /// Capacity of each connection's inbound queue (messages); see `ConnLink::push_input`.
    pub data_capacity: usize,
    /// Frame assembly.
    pub assembler: AssemblerConfig,
    /// The HD map road fields come from (`--map`), with the lane-matching settings; `None`: from
    /// `/avguard/road_context` only.
    pub map: Option<(Arc<HdMap>, TrackerConfig)>,
    /// Enforcement.
    pub enforce: EnforceConfig,
    /// Also send an Apollo `ControlCommand` with each `slow_down`/`stop` intervention.
    pub control_command: bool,
}

impl Default for MonitorConfig {
    /// Two workers, 4096 queued messages per connection, the default frame assembly and enforcement, no
    /// map, no Apollo `ControlCommand`.
    fn default() -> Self {
        MonitorConfig {
            n_workers: 2,
            data_capacity: 4096,
            assembler: AssemblerConfig::default(),
            map: None,
            enforce: EnforceConfig::default(),
            control_command: false,
        }
    }
}

/// Where the monitor writes besides the clients.
#[derive(Debug, Clone, Default)]
pub struct Sinks {
    /// The prediction log (JSON lines).
    pub log: Option<Arc<PredictionLog>>,
    /// Session recording (HDF5, one file per connection).
    pub record: Option<RecordConfig>,
}

/// The running monitor stage.
pub struct Monitor {
    data: Vec<(Sender<DataItem>, Receiver<DataItem>)>,
    models: Arc<ModelStore>,
    lifecycle: Vec<Sender<Lifecycle>>,
    quit: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    metrics: Arc<Metrics>,
}

impl Monitor {
    /// Starts the worker threads. `cancel` is cancelled if a worker panics.
    pub fn start(
        config: MonitorConfig,
        models: Arc<ModelStore>,
        sinks: Sinks,
        metrics: Arc<Metrics>,
        cancel: CancellationToken,
    ) -> std::io::Result<Monitor> {
        let n = config.n_workers.max(1);
        let quit = Arc::new(AtomicBool::new(false));
        let mut data = Vec::with_capacity(n);
        let mut lifecycle = Vec::with_capacity(n);
        let mut lifecycle_rx = Vec::with_capacity(n);
        for _ in 0..n {
            // Data plane, in two levels. Each connection has its own bounded inbound queue, lossy for
            // messages (drop the oldest of that connection, counted) and strict for its control requests
            // in the same order (never dropped; a full control quota refuses the request with an error):
            // `ConnLink::push_input`. The worker's ready queue
            // holds connections with something to do, each at most once, and the worker takes a few
            // messages from each in turn (round robin). Its capacity is far above any connection limit,
            // so it does not fill; if it ever did, the message is dropped and counted like an overflow.
            data.push(crossbeam_channel::bounded(READY_CAPACITY));
            // Lifecycle plane: bounded and strict. Close/Quit are rare; a full queue means the worker is
            // stuck, and the sender then trips the quit flag.
            let (tx, rx) = crossbeam_channel::bounded(1024);
            lifecycle.push(tx);
            lifecycle_rx.push(rx);
        }
        let mut threads = Vec::with_capacity(n);
        for (i, lifecycle_rx) in lifecycle_rx.into_iter().enumerate() {
            let Some((data_tx, data_rx)) = data.get(i) else {
                continue;
            };
            let worker = worker::Worker {
                ready: data_tx.clone(),
                data: data_rx.clone(),
                lifecycle: lifecycle_rx,
                sinks: sinks.clone(),
                metrics: Arc::clone(&metrics),
                config: config.clone(),
            };
            let guard = PanicGuard {
                quit: Arc::clone(&quit),
                lifecycle: lifecycle.clone(),
                cancel: cancel.clone(),
            };
            threads.push(
                std::thread::Builder::new()
                    .name(format!("avguard-monitor-{i}"))
                    .spawn(move || {
                        let _guard = guard;
                        worker.run();
                    })?,
            );
        }
        Ok(Monitor {
            data,
            models,
            lifecycle,
            quit,
            threads,
            metrics,
        })
    }

    /// A cheap handle for connection tasks.
    pub fn handle(&self) -> MonitorHandle {
        MonitorHandle {
            data: self.data.clone(),
            models: Arc::clone(&self.models),
            lifecycle: self.lifecycle.clone(),
            quit: Arc::clone(&self.quit),
            metrics: Arc::clone(&self.metrics),
        }
    }

    /// Sends `Quit` to every worker and joins them. Returns the number of workers that panicked.
    pub fn shutdown(self) -> usize {
        self.quit.store(true, Ordering::SeqCst);
        for c in &self.lifecycle {
            // A full or closed lifecycle queue means the worker is gone or will see the flag.
            let _ = c.try_send(Lifecycle::Quit);
        }
        self.threads
            .into_iter()
            .map(|t| t.join())
            .filter(Result::is_err)
            .count()
    }
}

/// What connection tasks use to reach the monitor.
#[derive(Clone)]
pub struct MonitorHandle {
    data: Vec<(Sender<DataItem>, Receiver<DataItem>)>,
    /// Read as each input is queued: its frames are decided by the model current then.
    models: Arc<ModelStore>,
    lifecycle: Vec<Sender<Lifecycle>>,
    quit: Arc<AtomicBool>,
    metrics: Arc<Metrics>,
}

impl MonitorHandle {
    /// The shared counters.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// True once the monitor is stopping or a worker died.
    pub fn is_quitting(&self) -> bool {
        self.quit.load(Ordering::SeqCst)
    }

    /// Current length of each worker's data queue.
    pub fn data_queue_lens(&self) -> Vec<usize> {
        self.data.iter().map(|(tx, _)| tx.len()).collect()
    }

    /// A snapshot of the counters, histograms and queue lengths.
    pub fn snapshot(&self) -> crate::metrics::MetricsSnapshot {
        self.metrics.snapshot(self.data_queue_lens())
    }

    /// Queues a decoded message (lossy: see the data-plane policy in [`Monitor::start`]).
    pub fn send(&self, link: &Arc<ConnLink>, msg: SimMessage) {
        // Only control requests can be refused.
        let _ = self.send_input(link, Input::Message(msg));
    }

    /// Queues the start of a new run after the messages already queued, in order. Strict: it is never
    /// dropped, even when the connection's messages overflow.
    ///
    /// # Errors
    /// [`CONTROL_CAPACITY`] control requests of this connection are already waiting; nothing was queued.
    pub fn new_run(
        &self,
        link: &Arc<ConnLink>,
        run_id: Option<String>,
    ) -> Result<(), ControlQueueFull> {
        self.send_input(link, Input::NewRun(run_id))
    }

    fn send_input(&self, link: &Arc<ConnLink>, msg: Input) -> Result<(), ControlQueueFull> {
        let Some((tx, _)) = shard(&self.data, link.id) else {
            // No worker at all: `Monitor::start` makes at least one.
            return Ok(());
        };
        let pushed = link.push_input(msg, self.models.current())?;
        if pushed.dropped_oldest {
            self.metrics.n_data_dropped.fetch_add(1, Ordering::Relaxed);
        }
        if pushed.schedule {
            if let Err(TrySendError::Full(_)) = tx.try_send(Arc::clone(link)) {
                // Unreachable below READY_CAPACITY connections per worker; the link stays marked as
                // scheduled, so its messages wait until the connection closes: count them as dropped.
                self.metrics.n_data_dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// Queues every message of `msgs`, in order, leaving it empty (same policy as [`MonitorHandle::send`]).
    pub fn send_all(&self, link: &Arc<ConnLink>, msgs: &mut Vec<SimMessage>) {
        for msg in msgs.drain(..) {
            self.send(link, msg);
        }
    }

    /// Tells the worker that the connection is gone.
    pub fn close(&self, link: &ConnLink) {
        link.open.store(false, Ordering::SeqCst);
        if let Some(tx) = shard(&self.lifecycle, link.id) {
            if let Err(TrySendError::Full(_)) = tx.try_send(Lifecycle::Close(link.id)) {
                self.quit.store(true, Ordering::SeqCst);
            }
        }
    }
}

fn shard<T>(v: &[T], id: u64) -> Option<&T> {
    let n = u64::try_from(v.len()).ok()?.max(1);
    v.get(usize::try_from(id % n).ok()?)
}

/// Trips the termination protocol if the worker thread unwinds.
struct PanicGuard {
    quit: Arc<AtomicBool>,
    lifecycle: Vec<Sender<Lifecycle>>,
    cancel: CancellationToken,
}

impl Drop for PanicGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.quit.store(true, Ordering::SeqCst);
            for c in &self.lifecycle {
                let _ = c.try_send(Lifecycle::Quit);
            }
            self.cancel.cancel();
        }
    }
}
