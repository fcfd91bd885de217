//! Counters, queue gauges and latency histograms of the live path, shared by the connections, the monitor
//! workers and the server's periodic report line.
//!
//! Everything is a relaxed atomic: the numbers are telemetry, read while the bridge runs, and never used to
//! make decisions. Latencies go into a [`LatencyHistogram`] (log-linear buckets, 8 per power of two, so a
//! quantile is exact to within 12.5 %), which needs no lock and no allocation on the hot path.
//!
//! Stages measured (per message or per frame):
//! - `decode`: websocket frame received → decoded [`ingest::message::SimMessage`] (in the connection task);
//! - `queue_wait`: message queued for the monitor → picked up by its worker (the data-plane queue);
//! - `step`: one frame's decision step plus enforcement inside the worker;
//! - `outbound_wait`: intervention/risk queued by the worker → written to the socket by the connection.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

#[cfg(test)]
mod tests;

/// Sub-buckets per power of two.
const SUB_BITS: u32 = 3;
const SUB: usize = 1 << SUB_BITS;
/// Buckets: values below `SUB` get one bucket each, then `SUB` per power of two up to 2^64.
const N_BUCKETS: usize = SUB + (64 - SUB_BITS as usize) * SUB;

/// A lock-free histogram of durations in nanoseconds.
#[derive(Debug)]
pub struct LatencyHistogram {
    buckets: Box<[AtomicU64]>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            buckets: (0..N_BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

/// Bucket index of `ns`: exact below `SUB`, then `SUB` linear sub-buckets per power of two.
fn bucket_of(ns: u64) -> usize {
    if ns < SUB as u64 {
        return ns as usize;
    }
    let msb = 63 - ns.leading_zeros(); // ≥ SUB_BITS
    let sub = (ns >> (msb - SUB_BITS)) as usize & (SUB - 1);
    SUB + (msb - SUB_BITS) as usize * SUB + sub
}

/// Smallest value that falls into bucket `i`.
fn bucket_floor(i: usize) -> u64 {
    if i < SUB {
        return i as u64;
    }
    let octave = (i - SUB) / SUB;
    let sub = ((i - SUB) % SUB) as u64;
    let msb = octave as u32 + SUB_BITS;
    (1u64 << msb) | (sub << (msb - SUB_BITS))
}

impl LatencyHistogram {
    /// Records one duration.
    pub fn record(&self, d: Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.record_ns(ns);
    }

    /// Records one duration given in nanoseconds.
    pub fn record_ns(&self, ns: u64) {
        if let Some(b) = self.buckets.get(bucket_of(ns)) {
            b.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Count and quantiles so far.
    pub fn summary(&self) -> LatencySummary {
        let counts: Vec<u64> = self
            .buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        let count: u64 = counts.iter().sum();
        let quantile = |q: f64| -> u64 {
            if count == 0 {
                return 0;
            }
            // Rank of the q-quantile, 1-based, at least 1.
            let rank = ((q * count as f64).ceil() as u64).clamp(1, count);
            let mut seen = 0;
            for (i, c) in counts.iter().enumerate() {
                seen += c;
                if seen >= rank {
                    return bucket_floor(i);
                }
            }
            bucket_floor(N_BUCKETS - 1)
        };
        LatencySummary {
            count,
            p50_ns: quantile(0.5),
            p99_ns: quantile(0.99),
            max_ns: counts.iter().rposition(|c| *c > 0).map_or(0, bucket_floor),
        }
    }
}

/// A histogram's count and quantiles (each the lower edge of its bucket, within 12.5 % below the truth).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LatencySummary {
    /// Durations recorded.
    pub count: u64,
    /// Median, ns.
    pub p50_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// Largest, ns.
    pub max_ns: u64,
}

/// Counters, gauges and histograms shared by the monitor and the server.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Data-plane messages dropped because a worker's queue was full.
    pub n_data_dropped: AtomicU64,
    /// Frames assembled and stepped.
    pub n_frames: AtomicU64,
    /// Interventions (and clears) queued for clients.
    pub n_interventions: AtomicU64,
    /// Apollo `ControlCommand`s queued for clients (`--control-command`).
    pub n_control_commands: AtomicU64,
    /// Messages rejected by the decoder.
    pub n_decode_errors: AtomicU64,
    /// Prediction-log writes that failed.
    pub n_log_errors: AtomicU64,
    /// Session-recording writes that failed.
    pub n_record_errors: AtomicU64,
    /// Risk messages dropped because a client's outbound queue was full.
    pub n_risk_dropped: AtomicU64,
    /// Runs started on a connection after its first (time boundaries and `new_run` requests).
    pub n_runs: AtomicU64,
    /// Largest outbound-queue length seen when the worker queued something (messages).
    pub outbound_high_water: AtomicU64,
    /// Frame received → message decoded.
    pub decode: LatencyHistogram,
    /// Queued for the monitor → picked up by a worker.
    pub queue_wait: LatencyHistogram,
    /// Decision step + enforcement, per frame.
    pub step: LatencyHistogram,
    /// Queued for the client → written to its socket.
    pub outbound_wait: LatencyHistogram,
}

/// A point-in-time copy of [`Metrics`] plus the data-queue lengths, for reports and the periodic log line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricsSnapshot {
    /// See [`Metrics::n_data_dropped`].
    pub n_data_dropped: u64,
    /// See [`Metrics::n_frames`].
    pub n_frames: u64,
    /// See [`Metrics::n_interventions`].
    pub n_interventions: u64,
    /// See [`Metrics::n_control_commands`].
    pub n_control_commands: u64,
    /// See [`Metrics::n_decode_errors`].
    pub n_decode_errors: u64,
    /// See [`Metrics::n_log_errors`].
    pub n_log_errors: u64,
    /// See [`Metrics::n_record_errors`].
    pub n_record_errors: u64,
    /// See [`Metrics::n_risk_dropped`].
    pub n_risk_dropped: u64,
    /// See [`Metrics::n_runs`].
    pub n_runs: u64,
    /// See [`Metrics::outbound_high_water`].
    pub outbound_high_water: u64,
    /// Current length of each worker's data queue.
    pub data_queue_lens: Vec<usize>,
    /// See [`Metrics::decode`].
    pub decode: LatencySummary,
    /// See [`Metrics::queue_wait`].
    pub queue_wait: LatencySummary,
    /// See [`Metrics::step`].
    pub step: LatencySummary,
    /// See [`Metrics::outbound_wait`].
    pub outbound_wait: LatencySummary,
}

impl Metrics {
    /// Copies every counter; `data_queue_lens` comes from the monitor handle.
    pub fn snapshot(&self, data_queue_lens: Vec<usize>) -> MetricsSnapshot {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        MetricsSnapshot {
            n_data_dropped: get(&self.n_data_dropped),
            n_frames: get(&self.n_frames),
            n_interventions: get(&self.n_interventions),
            n_control_commands: get(&self.n_control_commands),
            n_decode_errors: get(&self.n_decode_errors),
            n_log_errors: get(&self.n_log_errors),
            n_record_errors: get(&self.n_record_errors),
            n_risk_dropped: get(&self.n_risk_dropped),
            n_runs: get(&self.n_runs),
            outbound_high_water: get(&self.outbound_high_water),
            data_queue_lens,
            decode: self.decode.summary(),
            queue_wait: self.queue_wait.summary(),
            step: self.step.summary(),
            outbound_wait: self.outbound_wait.summary(),
        }
    }
}

impl MetricsSnapshot {
    /// Emits the snapshot as one `tracing` info line (the server does this periodically and at exit).
    pub fn log(&self) {
        tracing::info!(
            frames = self.n_frames,
            interventions = self.n_interventions,
            control_commands = self.n_control_commands,
            decode_errors = self.n_decode_errors,
            data_dropped = self.n_data_dropped,
            risk_dropped = self.n_risk_dropped,
            log_errors = self.n_log_errors,
            record_errors = self.n_record_errors,
            runs = self.n_runs,
            data_queue_lens = ?self.data_queue_lens,
            outbound_high_water = self.outbound_high_water,
            decode_p50_ns = self.decode.p50_ns,
            decode_p99_ns = self.decode.p99_ns,
            queue_wait_p50_ns = self.queue_wait.p50_ns,
            queue_wait_p99_ns = self.queue_wait.p99_ns,
            step_p50_ns = self.step.p50_ns,
            step_p99_ns = self.step.p99_ns,
            outbound_wait_p50_ns = self.outbound_wait.p50_ns,
            outbound_wait_p99_ns = self.outbound_wait.p99_ns,
            "bridge metrics"
        );
    }
}
