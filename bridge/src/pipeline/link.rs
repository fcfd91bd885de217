//! The monitor's handle on one connection: the outbound queue back to its task and the per-connection flags.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Instant;

use tokio::sync::mpsc;

use super::Input;
use crate::metrics::Metrics;
use crate::models::ModelSlot;

/// Topics the bridge publishes to its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutTopic {
    /// `/avguard/intervention`.
    Intervention,
    /// `/avguard/risk`.
    Risk,
    /// `/apollo/control` (Apollo `ControlCommand`, with `--control-command`).
    ControlCommand,
}

/// A message for one client.
#[derive(Debug)]
pub struct Outbound {
    /// Topic.
    pub topic: OutTopic,
    /// The `msg` object, serialized as JSON (for `ControlCommand`: the protobuf JSON mapping).
    pub msg_json: String,
    /// For `ControlCommand`: the binary envelope sent to clients that speak binary.
    pub binary: Option<Vec<u8>>,
    /// When the worker queued it (for the `outbound_wait` latency).
    pub queued: Instant,
}

/// Why an outbound message was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueError {
    /// The queue is full.
    Full,
    /// The connection task is gone.
    Closed,
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
    /// Inbound messages waiting for the worker (see [`ConnLink::push_input`] for the policy). Held for a
    /// push or a batch take only, never across an await; parking_lot's lock has no poisoning to handle.
    inbox: Mutex<Inbox>,
    /// Capacity of [`ConnLink::inbox`], messages.
    inbox_capacity: usize,
    /// Messages received from the client (decoded, queued for the monitor).
    pub n_received: AtomicU64,
    /// Received messages dropped because this connection's inbound queue was full.
    pub n_dropped: AtomicU64,
    /// Messages rejected with a `status` error (malformed, unknown topic, too large).
    pub n_rejected: AtomicU64,
}

/// Most control requests (`new_run`) of one connection waiting for its worker. They are never dropped to
/// make room; a further request is refused ([`ControlQueueFull`]) and answered with an error.
pub const CONTROL_CAPACITY: usize = 64;

/// A control request could not be queued: the connection already has [`CONTROL_CAPACITY`] of them waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "{waiting} control requests of this connection are already waiting for the monitor (the limit); \
     this one was not applied, send it again once they are"
)]
pub struct ControlQueueFull {
    /// Control requests waiting.
    pub waiting: usize,
}

/// A connection's inbound queue, and whether the connection is on its worker's ready queue.
#[derive(Default)]
struct Inbox {
    /// Messages and control requests, in the order the client sent them.
    items: VecDeque<Queued>,
    /// How many of `items` are control requests (the rest are messages).
    n_control: usize,
    /// True while the link is on the worker's ready queue or being drained: it is queued at most once.
    scheduled: bool,
}

impl std::fmt::Debug for Inbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbox")
            .field("len", &self.items.len())
            .field("n_control", &self.n_control)
            .field("scheduled", &self.scheduled)
            .finish()
    }
}

/// One queued input: what the client sent, when, and the model that was current when it was queued.
pub(crate) struct Queued {
    pub(crate) input: Input,
    pub(crate) at: Instant,
    /// The frames this input completes are decided by this model, even when a reload swaps the current
    /// one while the input waits: a reload takes effect between the client's messages, in order.
    pub(crate) model: Arc<ModelSlot>,
}

/// What [`ConnLink::push_input`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pushed {
    /// The inbox was idle: the caller must put the link on its worker's ready queue.
    pub(crate) schedule: bool,
    /// The oldest queued message was dropped to make room.
    pub(crate) dropped_oldest: bool,
}

impl ConnLink {
    /// A link and the receiving end for the connection task.
    ///
    /// Overflow policy of the outbound queue (capacity `capacity`): per-frame risk is telemetry and is
    /// dropped (newest first, counted in `n_risk_dropped`) when the queue is full; an intervention is
    /// control and must not be lost, so a full queue marks the client as too slow and the connection is
    /// closed with a reason.
    ///
    /// The inbound queue (capacity `inbox_capacity`) is this connection's alone, so a client that sends
    /// faster than the monitor steps loses only its own data: see `ConnLink::push_input`.
    pub fn new(
        id: u64,
        capacity: usize,
        inbox_capacity: usize,
    ) -> (Arc<ConnLink>, mpsc::Receiver<Outbound>) {
        let (out, rx) = mpsc::channel(capacity.max(1));
        let link = ConnLink {
            id,
            out,
            open: AtomicBool::new(true),
            wants_risk: AtomicBool::new(false),
            overflowed: AtomicBool::new(false),
            n_risk_dropped: AtomicU64::new(0),
            inbox: Mutex::new(Inbox::default()),
            inbox_capacity: inbox_capacity.max(1),
            n_received: AtomicU64::new(0),
            n_dropped: AtomicU64::new(0),
            n_rejected: AtomicU64::new(0),
        };
        (Arc::new(link), rx)
    }

    /// Queues one inbound message or control request, behind everything this connection queued before.
    ///
    /// Overflow policy, two planes in one ordered queue:
    /// - messages are bounded (`inbox_capacity`) and lossy, per connection: when this connection already
    ///   has that many waiting, its oldest waiting *message* is dropped and counted (`n_dropped`; a stale
    ///   pose is worth less than a fresh one), so a flooding client cannot push out another connection's
    ///   frames or road context;
    /// - control requests ([`Input::NewRun`]) are strict: never dropped, they keep their place among the
    ///   messages (a dropped message is always a message, so a run boundary stays between the same
    ///   surviving messages), and at most [`CONTROL_CAPACITY`] wait; a further one is refused here, and
    ///   the caller answers the client with the error, so nothing is lost silently.
    ///
    /// The queue thus holds at most `inbox_capacity + CONTROL_CAPACITY` items.
    pub(crate) fn push_input(
        &self,
        input: Input,
        model: Arc<ModelSlot>,
    ) -> Result<Pushed, ControlQueueFull> {
        let mut inbox = self.inbox.lock();
        let is_control = matches!(input, Input::NewRun(_));
        let mut dropped_oldest = false;
        if is_control {
            if inbox.n_control >= CONTROL_CAPACITY {
                return Err(ControlQueueFull {
                    waiting: inbox.n_control,
                });
            }
            inbox.n_control += 1;
        } else if inbox.items.len() - inbox.n_control >= self.inbox_capacity {
            // At least one message is waiting (the capacity is ≥ 1), behind at most `n_control` requests.
            if let Some(oldest) = inbox
                .items
                .iter()
                .position(|q| matches!(q.input, Input::Message(_)))
            {
                inbox.items.remove(oldest);
                dropped_oldest = true;
                self.n_dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.n_received.fetch_add(1, Ordering::Relaxed);
        inbox.items.push_back(Queued {
            input,
            at: Instant::now(),
            model,
        });
        let schedule = !inbox.scheduled;
        inbox.scheduled = true;
        Ok(Pushed {
            schedule,
            dropped_oldest,
        })
    }

    /// Takes up to `max` queued messages, oldest first, into `out`. Returns true when more are left (the
    /// worker then puts the link back on its ready queue, behind the other connections); when none are,
    /// the link is no longer scheduled and the next [`ConnLink::push_input`] schedules it again.
    pub(crate) fn take_inputs(&self, max: usize, out: &mut Vec<Queued>) -> bool {
        let mut inbox = self.inbox.lock();
        let n = inbox.items.len().min(max);
        let before = out.len();
        out.extend(inbox.items.drain(..n));
        let n_control = out
            .get(before..)
            .unwrap_or_default()
            .iter()
            .filter(|q| matches!(q.input, Input::NewRun(_)))
            .count();
        inbox.n_control -= n_control;
        let more = !inbox.items.is_empty();
        inbox.scheduled = more;
        more
    }

    /// Messages and control requests waiting in this connection's inbound queue.
    pub fn inbox_len(&self) -> usize {
        self.inbox.lock().items.len()
    }

    /// Queues `msg` without waiting and records the queue's length in `metrics.outbound_high_water`.
    pub fn try_send(
        &self,
        topic: OutTopic,
        msg_json: String,
        binary: Option<Vec<u8>>,
        metrics: &Metrics,
    ) -> Result<(), QueueError> {
        let item = Outbound {
            topic,
            msg_json,
            binary,
            queued: Instant::now(),
        };
        match self.out.try_reserve() {
            Ok(slot) => {
                // Measured while the slot is held, so the length counts this message: the connection
                // task may take it the moment it is sent.
                let len = self.out.max_capacity() - self.out.capacity();
                metrics
                    .outbound_high_water
                    .fetch_max(len as u64, Ordering::Relaxed);
                slot.send(item);
                Ok(())
            }
            Err(mpsc::error::TrySendError::Full(())) => Err(QueueError::Full),
            Err(mpsc::error::TrySendError::Closed(())) => Err(QueueError::Closed),
        }
    }
}
