//! The monitor stage: plain threads fed by bounded crossbeam queues, one state per simulator connection.
//!
//! Each worker thread owns the [`ConnState`]s (assembler → decision session → enforcer) of the connections
//! sharded to it (`conn id % n_workers`) and runs frame assembly, the decision step and enforcement. It
//! hands results back to the connection through the connection's bounded outbound queue ([`ConnLink`]).
//!
//! Termination protocol: a `Quit` marker on each worker's control queue, plus a shared `quit` flag, plus a
//! guard whose `Drop` trips the flag, sends `Quit` to every worker and cancels the server's token if its
//! thread is panicking — so one panicking stage brings the whole bridge down cleanly instead of leaving a
//! half-alive pipeline.
//!
//! The model lives in an `ArcSwap`: [`ModelStore::swap`] replaces it without stopping; each connection
//! notices the new generation on its next frame and starts a fresh session (window state restarts).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{select, Receiver, Sender, TrySendError};
use laws::Frame;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::assemble::{Assembler, AssemblerConfig};
use crate::decide::Decide;
use crate::enforce::{EnforceConfig, Enforcer, Event};
use crate::message::SimMessage;
pub use crate::models::{ModelSlot, ModelStore};
use crate::predlog::PredictionLog;

/// Topics the bridge publishes to its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutTopic {
    /// `/avguard/intervention`.
    Intervention,
    /// `/avguard/risk`.
    Risk,
}

/// A message for one client: a topic and its JSON `msg`.
#[derive(Debug)]
pub struct Outbound {
    /// Topic.
    pub topic: OutTopic,
    /// The `msg` object, serialized.
    pub msg_json: String,
}

/// The monitor's handle on one connection.
#[derive(Debug)]
pub struct ConnLink {
    /// Connection id.
    pub id: u64,
    /// Outbound queue to the connection task (bounded; see [`ConnLink::new`]).
    out: mpsc::Sender<Outbound>,
    /// False once the connection has gone: late data for it is ignored.
    pub open: AtomicBool,
    /// The client subscribed to `/avguard/risk` (per-frame risk is only serialized then).
    pub wants_risk: AtomicBool,
    /// Set when an intervention could not be queued: the connection closes as a slow client.
    pub overflowed: AtomicBool,
    /// Risk messages dropped because the outbound queue was full.
    pub n_risk_dropped: AtomicU64,
}

impl ConnLink {
    /// A link and the receiving end for the connection task.
    ///
    /// Overflow policy of the outbound queue (capacity `capacity`): per-frame risk is telemetry and is
    /// dropped (newest first, counted in `n_risk_dropped`) when the queue is full; an intervention is
    /// control and must not be lost, so a full queue marks the client as too slow and the connection is
    /// closed with a reason.
    pub fn new(id: u64, capacity: usize) -> (Arc<ConnLink>, mpsc::Receiver<Outbound>) {
        let (out, rx) = mpsc::channel(capacity.max(1));
        let link = ConnLink {
            id,
            out,
            open: AtomicBool::new(true),
            wants_risk: AtomicBool::new(false),
            overflowed: AtomicBool::new(false),
            n_risk_dropped: AtomicU64::new(0),
        };
        (Arc::new(link), rx)
    }
}

/// Monitor input, data plane.
struct DataItem {
    link: Arc<ConnLink>,
    msg: SimMessage,
}

/// Monitor input, control plane.
enum Control {
    /// The connection closed: drop its state.
    Close(u64),
    /// Stop the worker.
    Quit,
}

/// Monitor settings.
#[derive(Debug, Clone, Copy)]
pub struct MonitorConfig {
    /// Worker threads.
    pub n_workers: usize,
    /// Capacity of each worker's data queue (messages).
    pub data_capacity: usize,
    /// Frame assembly.
    pub assembler: AssemblerConfig,
    /// Enforcement.
    pub enforce: EnforceConfig,
}

/// Counters shared by the monitor and the server.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Data-plane messages dropped because a worker's queue was full.
    pub n_data_dropped: AtomicU64,
    /// Frames assembled and stepped.
    pub n_frames: AtomicU64,
    /// Interventions (and clears) queued for clients.
    pub n_interventions: AtomicU64,
    /// Messages rejected by the decoder.
    pub n_decode_errors: AtomicU64,
    /// Prediction-log writes that failed.
    pub n_log_errors: AtomicU64,
}

/// The running monitor stage.
pub struct Monitor {
    data: Vec<(Sender<DataItem>, Receiver<DataItem>)>,
    control: Vec<Sender<Control>>,
    quit: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    metrics: Arc<Metrics>,
}

impl Monitor {
    /// Starts the worker threads. `cancel` is cancelled if a worker panics.
    pub fn start(
        config: MonitorConfig,
        models: Arc<ModelStore>,
        log: Option<Arc<PredictionLog>>,
        metrics: Arc<Metrics>,
        cancel: CancellationToken,
    ) -> std::io::Result<Monitor> {
        let n = config.n_workers.max(1);
        let quit = Arc::new(AtomicBool::new(false));
        let mut data = Vec::with_capacity(n);
        let mut control = Vec::with_capacity(n);
        let mut control_rx = Vec::with_capacity(n);
        for _ in 0..n {
            // Data plane: bounded and lossy. When full, the sender drops the oldest queued message and
            // counts it (`Metrics::n_data_dropped`): a stale pose is worth less than a fresh one.
            data.push(crossbeam_channel::bounded(config.data_capacity.max(1)));
            // Control plane: bounded and strict. Close/Quit are rare; a full queue means the worker is
            // stuck, and the sender then trips the quit flag.
            let (tx, rx) = crossbeam_channel::bounded(1024);
            control.push(tx);
            control_rx.push(rx);
        }
        let mut threads = Vec::with_capacity(n);
        for (i, ctrl_rx) in control_rx.into_iter().enumerate() {
            let Some((_, data_rx)) = data.get(i) else {
                continue;
            };
            let worker = Worker {
                data: data_rx.clone(),
                control: ctrl_rx,
                models: Arc::clone(&models),
                log: log.clone(),
                metrics: Arc::clone(&metrics),
                config,
                conns: HashMap::new(),
            };
            let guard = PanicGuard {
                quit: Arc::clone(&quit),
                control: control.clone(),
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
            control,
            quit,
            threads,
            metrics,
        })
    }

    /// A cheap handle for connection tasks.
    pub fn handle(&self) -> MonitorHandle {
        MonitorHandle {
            data: self.data.clone(),
            control: self.control.clone(),
            quit: Arc::clone(&self.quit),
            metrics: Arc::clone(&self.metrics),
        }
    }

    /// Sends `Quit` to every worker and joins them. Returns the number of workers that panicked.
    pub fn shutdown(self) -> usize {
        self.quit.store(true, Ordering::SeqCst);
        for c in &self.control {
            // A full or closed control queue means the worker is gone or will see the flag.
            let _ = c.try_send(Control::Quit);
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
    control: Vec<Sender<Control>>,
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

    /// Queues a decoded message (lossy: see the data-plane policy in [`Monitor::start`]).
    pub fn send(&self, link: &Arc<ConnLink>, msg: SimMessage) {
        let Some((tx, rx)) = shard(&self.data, link.id) else {
            return;
        };
        let mut item = DataItem {
            link: Arc::clone(link),
            msg,
        };
        for _ in 0..4 {
            match tx.try_send(item) {
                Ok(()) => return,
                Err(TrySendError::Full(back)) => {
                    item = back;
                    if rx.try_recv().is_ok() {
                        self.metrics.n_data_dropped.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Err(TrySendError::Disconnected(_)) => return,
            }
        }
        self.metrics.n_data_dropped.fetch_add(1, Ordering::Relaxed);
    }

    /// Tells the worker that the connection is gone.
    pub fn close(&self, link: &ConnLink) {
        link.open.store(false, Ordering::SeqCst);
        if let Some(tx) = shard(&self.control, link.id) {
            if let Err(TrySendError::Full(_)) = tx.try_send(Control::Close(link.id)) {
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
    control: Vec<Sender<Control>>,
    cancel: CancellationToken,
}

impl Drop for PanicGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.quit.store(true, Ordering::SeqCst);
            for c in &self.control {
                let _ = c.try_send(Control::Quit);
            }
            self.cancel.cancel();
        }
    }
}

/// Per-connection monitor state.
struct ConnState {
    link: Arc<ConnLink>,
    assembler: Assembler,
    session: Box<dyn Decide>,
    generation: u64,
    enforcer: Enforcer,
}

struct Worker {
    data: Receiver<DataItem>,
    control: Receiver<Control>,
    models: Arc<ModelStore>,
    log: Option<Arc<PredictionLog>>,
    metrics: Arc<Metrics>,
    config: MonitorConfig,
    conns: HashMap<u64, ConnState>,
}

impl Worker {
    fn run(mut self) {
        let mut frames = Vec::new();
        let mut events = Vec::new();
        loop {
            select! {
                recv(self.control) -> c => match c {
                    Ok(Control::Close(id)) => { self.conns.remove(&id); }
                    Ok(Control::Quit) | Err(_) => return,
                },
                recv(self.data) -> d => match d {
                    Ok(item) => self.handle(item, &mut frames, &mut events),
                    Err(_) => return,
                },
            }
        }
    }

    fn handle(&mut self, item: DataItem, frames: &mut Vec<Frame>, events: &mut Vec<Event>) {
        if !item.link.open.load(Ordering::SeqCst) {
            return;
        }
        let id = item.link.id;
        let config = self.config;
        let models = &self.models;
        let state = self.conns.entry(id).or_insert_with(|| {
            let slot = models.current();
            ConnState {
                link: Arc::clone(&item.link),
                assembler: Assembler::new(config.assembler),
                session: slot.factory.session(),
                generation: slot.generation,
                enforcer: Enforcer::new(config.enforce),
            }
        });
        frames.clear();
        state.assembler.push(&item.msg, frames);
        for frame in frames.iter() {
            let slot = self.models.current();
            if slot.generation != state.generation {
                state.session = slot.factory.session();
                state.generation = slot.generation;
            }
            let decision = state.session.step(frame);
            self.metrics.n_frames.fetch_add(1, Ordering::Relaxed);
            events.clear();
            state.enforcer.step(frame, &decision, events);
            if state.link.wants_risk.load(Ordering::Relaxed) {
                let risk: serde_json::Map<String, serde_json::Value> = decision
                    .properties
                    .iter()
                    .map(|p| (p.name.clone(), serde_json::json!(p.risk)))
                    .collect();
                let msg = serde_json::json!({"stamp": frame.t, "risk": risk}).to_string();
                if state
                    .link
                    .out
                    .try_send(Outbound {
                        topic: OutTopic::Risk,
                        msg_json: msg,
                    })
                    .is_err()
                {
                    state.link.n_risk_dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
            for event in events.iter() {
                if let Some(log) = &self.log {
                    if log.write(id, event).is_err() {
                        self.metrics.n_log_errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
                let intervention = match event {
                    Event::AlarmStart(i) | Event::AlarmEnd(i) => i,
                    Event::Violation { .. } => continue,
                };
                let Ok(msg_json) = serde_json::to_string(intervention) else {
                    continue;
                };
                let sent = state.link.out.try_send(Outbound {
                    topic: OutTopic::Intervention,
                    msg_json,
                });
                match sent {
                    Ok(()) => {
                        self.metrics.n_interventions.fetch_add(1, Ordering::Relaxed);
                        if let Some(log) = &self.log {
                            if log.write_intervention(id, intervention).is_err() {
                                self.metrics.n_log_errors.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    Err(mpsc::error::TrySendError::Full(_)) => {
                        state.link.overflowed.store(true, Ordering::SeqCst);
                    }
                    Err(mpsc::error::TrySendError::Closed(_)) => {}
                }
            }
        }
    }
}
