//! Session recording (`avguard bridge --record FILE.h5`): every assembled frame of a connection, streamed
//! into an HDF5 run log (INTERFACES §2) through `scenarios::log::LogWriter`.
//!
//! One run per file: the first run of connection 1 writes `FILE.h5` itself, the first run of connection
//! `k ≥ 2` writes `FILE_conn<k>.h5` next to it (a driver that opens one connection per run gets one log per
//! run). Later runs on one connection (see [`crate::run`]) write `FILE_<run id>.h5`: `FILE_conn<k>_run<i>.h5`,
//! or the client's `run_id` made file-name safe (a reused id overwrites its file).
//! The frames recorded are exactly the frames the decision step saw, so scoring the log in batch with a
//! fresh session reproduces the live risk series and alarm times.
//!
//! Durability: the writer pushes rows to the file every [`FLUSH_EVERY_FRAMES`] frames (and the library
//! every 1024), and the log is finished when the connection closes or the monitor shuts down. A failed
//! write is counted (`Metrics::n_record_errors`), reported once, and recording stops for that connection.

use std::path::{Path, PathBuf};

use laws::Frame;
use scenarios::log::{LogError, LogWriter, RunMeta};

use crate::run::RunName;

/// Frames between explicit flushes (5 s at 10 Hz).
pub const FLUSH_EVERY_FRAMES: usize = 50;

/// Where and how sessions are recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordConfig {
    /// `FILE.h5` as given on the command line.
    pub path: PathBuf,
    /// Frame period written to the log's attributes, s.
    pub frame_period_s: f64,
}

impl RecordConfig {
    /// The log file of connection `conn` (see the module docs).
    pub fn path_for(&self, conn: u64) -> PathBuf {
        if conn <= 1 {
            return self.path.clone();
        }
        let stem = self
            .path
            .file_stem()
            .map_or_else(|| "session".into(), |s| s.to_string_lossy().into_owned());
        let name = format!("{stem}_conn{conn}.h5");
        match self.path.parent() {
            Some(dir) => dir.join(name),
            None => PathBuf::from(name),
        }
    }
}

impl RecordConfig {
    /// The log file of run `run` of connection `conn` (see the module docs).
    pub fn path_for_run(&self, conn: u64, run: &RunName) -> PathBuf {
        if run.index <= 1 && !run.explicit {
            return self.path_for(conn);
        }
        let stem = self
            .path
            .file_stem()
            .map_or_else(|| "session".into(), |s| s.to_string_lossy().into_owned());
        let name = format!("{stem}_{}.h5", run.file_stem());
        match self.path.parent() {
            Some(dir) => dir.join(name),
            None => PathBuf::from(name),
        }
    }
}

/// One run's recording.
pub struct Recording {
    writer: LogWriter,
    path: PathBuf,
    since_flush: usize,
}

impl Recording {
    /// Creates the log file of the first run of connection `conn`.
    pub fn create(config: &RecordConfig, conn: u64) -> Result<Recording, LogError> {
        Recording::create_run(config, conn, &RunName::first(conn))
    }

    /// Creates the log file of run `run` of connection `conn`; its `run_id` attribute is the run's id.
    pub fn create_run(
        config: &RecordConfig,
        conn: u64,
        run: &RunName,
    ) -> Result<Recording, LogError> {
        let path = config.path_for_run(conn, run);
        let meta = RunMeta {
            scenario: "live".to_owned(),
            run_id: run.id.clone(),
            frame_period_s: config.frame_period_s,
            seed: None,
        };
        Ok(Recording {
            writer: LogWriter::create(&path, &meta)?,
            path,
            since_flush: 0,
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one frame, flushing every [`FLUSH_EVERY_FRAMES`].
    pub fn append(&mut self, frame: &Frame) -> Result<(), LogError> {
        self.writer.append(frame)?;
        self.since_flush += 1;
        if self.since_flush >= FLUSH_EVERY_FRAMES {
            self.since_flush = 0;
            self.writer.flush()?;
        }
        Ok(())
    }

    /// Flushes and closes the file.
    pub fn finish(self) -> Result<(), LogError> {
        self.writer.finish()
    }
}
