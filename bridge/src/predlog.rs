//! The prediction log: one JSON line per alarm start, alarm end, violation and intervention.
//!
//! Each line is written and flushed on its own (events are rare: a few per run), so a crash, SIGTERM or
//! SIGKILL loses no completed line; an intervention's line is written before the intervention is queued for
//! the client, so every intervention a client received is in the log. With `fsync` (`--fsync`) each line is
//! also forced to the disk, which survives a power loss. The lines carry the connection id, frame time, property, probability and θ, so
//! seconds-ahead figures (violation time − first alarm time) can be computed afterwards. Each line also
//! names its run (`run`, see [`crate::run`]): several runs on one connection are told apart by it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use parking_lot::Mutex;
use serde_json::json;

use crate::enforce::{Event, Intervention};

/// A shared JSON-lines writer. A plain (parking_lot) mutex is enough: writes are rare and short, never
/// across an await.
#[derive(Debug)]
pub struct PredictionLog {
    out: Mutex<BufWriter<File>>,
    fsync: bool,
}

impl PredictionLog {
    /// Creates (truncates) the log file.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        PredictionLog::create_with(path, false)
    }

    /// Creates (truncates) the log file; with `fsync`, every line is forced to the disk.
    pub fn create_with(path: &Path, fsync: bool) -> std::io::Result<Self> {
        Ok(PredictionLog {
            out: Mutex::new(BufWriter::new(File::create(path)?)),
            fsync,
        })
    }

    /// Writes one event of run `run` of connection `conn` as a line and flushes it.
    pub fn write(&self, conn: u64, run: &str, event: &Event) -> std::io::Result<()> {
        let line = match event {
            Event::AlarmStart(i) => line("alarm_start", conn, run, i),
            Event::AlarmEnd(i) => line("alarm_end", conn, run, i),
            Event::AlarmUpdate(i) => line("alarm_update", conn, run, i),
            Event::Violation { t, property } => {
                json!({"event": "violation", "conn": conn, "run": run, "t": t, "property": property})
            }
        };
        self.write_value(&line)
    }

    /// Writes an `intervention` line when one left for the simulator.
    pub fn write_intervention(
        &self,
        conn: u64,
        run: &str,
        i: &Intervention,
    ) -> std::io::Result<()> {
        self.write_value(&line("intervention", conn, run, i))
    }

    fn write_value(&self, value: &serde_json::Value) -> std::io::Result<()> {
        let mut out = self.out.lock();
        serde_json::to_writer(&mut *out, value)?;
        out.write_all(b"\n")?;
        out.flush()?;
        if self.fsync {
            out.get_ref().sync_data()?;
        }
        Ok(())
    }
}

fn line(kind: &str, conn: u64, run: &str, i: &Intervention) -> serde_json::Value {
    json!({"event": kind, "conn": conn, "run": run, "t": i.stamp, "property": i.property,
        "probability": i.probability, "threshold": i.threshold, "horizon_s": i.horizon_s,
        "action": i.action, "target_speed_mps": i.target_speed_mps, "state": i.state})
}
