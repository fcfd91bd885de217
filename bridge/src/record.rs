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
//! Durability: a run is written to `NAME.h5.partial` and renamed to `NAME.h5` when it is finished (the
//! connection closes, a new run starts, or the monitor shuts down), so a file with the final name is always
//! complete. The writer pushes rows and metadata to the file every [`FLUSH_EVERY_FRAMES`] frames, so after a
//! crash (even SIGKILL) the `.partial` file reads as a log up to its last flush; the next bridge started
//! with the same `--record` finds it ([`recover`]) and renames it to `NAME.recovered.h5`, or reports it as
//! unreadable. With `fsync` each flush is also forced to the disk (power loss), at the cost measured by
//! `cargo bench -p bridge --bench soak -- --fsync`. A failed write is counted (`Metrics::n_record_errors`),
//! reported once, and recording stops for that connection.

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
    /// Force every flush (and the finished file) to the disk with fsync (`--fsync`).
    pub fsync: bool,
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
    /// The final name; the file is written as [`partial_path`] of it until finished.
    path: PathBuf,
    since_flush: usize,
    fsync: bool,
}

/// Where a run is written until it is finished: `NAME.h5.partial` (the name every log writer uses).
pub use scenarios::log::partial_path;

/// What [`recover`] found.
#[derive(Debug)]
pub enum Recovered {
    /// A crashed run that reads as a log: renamed to `path`, with its frames.
    Readable {
        /// The new name (`NAME.recovered.h5`).
        path: PathBuf,
        /// Frames it holds (those flushed before the crash).
        n_frames: usize,
    },
    /// A crashed run that does not read (nothing was flushed, or the crash hit a flush): left in place.
    Unreadable {
        /// The `.partial` file.
        path: PathBuf,
        /// Why it does not read.
        reason: String,
    },
}

/// Finds the recordings a crashed bridge left unfinished next to `config.path` (`*.h5.partial` files of
/// the same name stem) and recovers each: a readable one is renamed to `NAME.recovered.h5`, an unreadable
/// one is reported and kept.
pub fn recover(config: &RecordConfig) -> Vec<Recovered> {
    let dir = match config.path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let stem = config
        .path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut partials: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(stem.as_str()) && n.ends_with(".h5.partial"))
        })
        .collect();
    partials.sort();
    partials
        .into_iter()
        .map(
            |partial| match scenarios::log::read_log_isolated(&partial) {
                Ok(log) => {
                    let name = partial.to_string_lossy();
                    let base = name.trim_end_matches(".h5.partial");
                    let target = PathBuf::from(format!("{base}.recovered.h5"));
                    match std::fs::rename(&partial, &target) {
                        Ok(()) => Recovered::Readable {
                            path: target,
                            n_frames: log.frames.len(),
                        },
                        Err(e) => Recovered::Unreadable {
                            path: partial,
                            reason: format!("readable, but cannot be renamed: {e}"),
                        },
                    }
                }
                Err(e) => Recovered::Unreadable {
                    path: partial,
                    reason: e.to_string(),
                },
            },
        )
        .collect()
}

/// fsyncs a file (any descriptor of it flushes the file's pages).
fn sync_file(path: &Path) -> Result<(), LogError> {
    std::fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|error| LogError::Io {
            path: path.display().to_string(),
            error,
        })
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
            writer: LogWriter::create(&partial_path(&path), &meta)?,
            path,
            since_flush: 0,
            fsync: config.fsync,
        })
    }

    /// The file's final name (it is written as `NAME.partial` until finished).
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
            if self.fsync {
                sync_file(&partial_path(&self.path))?;
            }
        }
        Ok(())
    }

    /// Flushes and closes the file and gives it its final name (atomically replacing an older file of
    /// that name).
    pub fn finish(self) -> Result<(), LogError> {
        self.writer.finish()?;
        let partial = partial_path(&self.path);
        if self.fsync {
            sync_file(&partial)?;
        }
        std::fs::rename(&partial, &self.path).map_err(|error| LogError::Io {
            path: partial.display().to_string(),
            error,
        })?;
        if self.fsync {
            // The rename is durable once the directory is.
            if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                sync_file(dir)?;
            }
        }
        Ok(())
    }
}
