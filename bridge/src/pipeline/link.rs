//! The monitor's handle on one connection: the outbound queue back to its task and the per-connection flags.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;

use crate::metrics::Metrics;

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
