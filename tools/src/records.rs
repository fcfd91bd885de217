//! Cyber RT records as run logs: the glue between `ingest::record` (reading and assembling) and the HDF5
//! run-log format (`scenarios::log`), for `avguard import` and for `score` on `.record` files.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use ingest::assemble::{Assembler, AssemblerConfig};
use ingest::record::{self, ImportStats, Imported};
use scenarios::log::{PartialLog, RunLog, RunMeta};

use crate::mapfile::LoadedMap;

pub use ingest::record::is_record_name;

/// The assembler a record is read with: the live bridge's, with the map when given.
pub fn assembler(config: AssemblerConfig, map: Option<&LoadedMap>) -> Assembler {
    match map {
        Some((map, tracker)) => Assembler::with_map(config, map.clone(), *tracker),
        None => Assembler::new(config),
    }
}

fn meta(path: &Path, run: usize, frame_period_s: f64) -> RunMeta {
    let name = path
        .file_name()
        .map_or_else(|| "record".to_owned(), |n| n.to_string_lossy().into_owned());
    RunMeta {
        scenario: "record".to_owned(),
        run_id: if run <= 1 {
            name
        } else {
            format!("{name}_run{run}")
        },
        frame_period_s,
        seed: None,
    }
}

/// Reads the recording that the record file `path` is part of (all its segments, see
/// `ingest::record::recording_segments`) as run logs, for scoring: one per run (message time jumps or
/// goes back), named as `import` names their files (the first segment's file name, `_run<k>` for run k
/// ≥ 2). A recording without a frame is an error.
pub fn read_record_logs(
    path: &Path,
    config: AssemblerConfig,
    map: Option<&LoadedMap>,
) -> anyhow::Result<Vec<RunLog>> {
    let segments = record::recording_segments(path);
    let path = segments.first().map_or(path, PathBuf::as_path);
    let mut a = assembler(config, map);
    let (runs, stats) = record::read_runs(&segments, &mut a)?;
    let logs: Vec<RunLog> = runs
        .into_iter()
        .enumerate()
        .filter(|(_, frames)| !frames.is_empty())
        .map(|(k, frames)| RunLog {
            meta: meta(path, k + 1, config.period_s),
            frames,
        })
        .collect();
    if logs.is_empty() {
        bail!("{}: {}", path.display(), no_frames(&stats));
    }
    Ok(logs)
}

/// What one import wrote.
#[derive(Debug)]
pub struct Written {
    /// The logs, one per run, with their frame counts.
    pub logs: Vec<(PathBuf, usize)>,
    /// The reader's counters.
    pub stats: ImportStats,
}

/// A log being imported: written under a temporary name beside its own (`NAME.h5.partial`, the log
/// writer's [`scenarios::log::PartialLog`]), renamed to `NAME.h5` once complete, so that a recording that
/// fails part-way leaves no log under a final name (dropping it removes the temporary file).
struct ImportedLog {
    log: PartialLog,
    n_frames: usize,
}

impl ImportedLog {
    fn create(out_dir: &Path, meta: &RunMeta) -> anyhow::Result<ImportedLog> {
        let file = out_dir.join(format!("{}.h5", meta.run_id));
        let log = PartialLog::create(&file, meta).with_context(|| {
            format!(
                "{}: cannot create",
                scenarios::log::partial_path(&file).display()
            )
        })?;
        Ok(ImportedLog { log, n_frames: 0 })
    }

    fn append(&mut self, frame: &laws::Frame) -> anyhow::Result<()> {
        self.log
            .append(frame)
            .with_context(|| format!("{}: cannot write", self.log.path().display()))?;
        self.n_frames += 1;
        Ok(())
    }

    /// Completes the log under its own name; the log and its frame count.
    fn finish(self) -> anyhow::Result<(PathBuf, usize)> {
        let file = self.log.path().to_owned();
        self.log
            .finish()
            .with_context(|| format!("{}: cannot finish", file.display()))?;
        Ok((file, self.n_frames))
    }
}

/// Imports the recording whose segments are `segments` (in order, see `ingest::record::recordings`) into
/// `out_dir`: a log per run named by its run id (`NAME.h5` for the first run, `NAME_run<k>.h5` for later
/// runs, NAME being the first segment's file name), streaming frames into each log as they are assembled.
pub fn import_record(
    segments: &[PathBuf],
    out_dir: &Path,
    config: AssemblerConfig,
    map: Option<&LoadedMap>,
) -> anyhow::Result<Written> {
    let Some(path) = segments.first() else {
        bail!("no record to import");
    };
    let mut a = assembler(config, map);
    let mut run = 1_usize;
    let mut writer: Option<ImportedLog> = None;
    let mut logs = Vec::new();
    let mut failure: Option<anyhow::Error> = None;
    let read = record::import_recording(segments, &mut a, |step| {
        if failure.is_some() {
            return;
        }
        let result = (|| -> anyhow::Result<()> {
            match step {
                Imported::NewRun(_) => {
                    if let Some(w) = writer.take() {
                        logs.push(w.finish()?);
                    }
                    run += 1;
                }
                Imported::Frame(frame) => {
                    if writer.is_none() {
                        writer = Some(ImportedLog::create(
                            out_dir,
                            &meta(path, run, config.period_s),
                        )?);
                    }
                    if let Some(w) = &mut writer {
                        w.append(frame)?;
                    }
                }
            }
            Ok(())
        })();
        if let Err(e) = result {
            failure = Some(e);
        }
    })
    .map_err(anyhow::Error::from);
    let stats = match (read, failure) {
        (Ok(stats), None) => stats,
        (Err(e), _) | (Ok(_), Some(e)) => {
            // Dropping the unfinished log removes its temporary file.
            drop(writer.take());
            return Err(e);
        }
    };
    if let Some(w) = writer.take() {
        logs.push(w.finish()?);
    }
    if logs.is_empty() {
        bail!("{}: {}", path.display(), no_frames(&stats));
    }
    Ok(Written { logs, stats })
}

/// Why a recording gave no frame, from its reader's counters: frames start at localization messages, so
/// either it has none, or none that decoded or had the expected type.
fn no_frames(stats: &record::ImportStats) -> String {
    let mut why = format!(
        "no frames (no localization message was assembled; of its {} messages {} decoded",
        stats.n_messages, stats.n_decoded
    );
    if stats.n_decode_errors > 0 {
        why += &format!(", {} did not decode", stats.n_decode_errors);
        if let Some(first) = &stats.first_decode_error {
            why += &format!(" (the first: {first})");
        }
    }
    if stats.n_type_mismatch > 0 {
        why += &format!(
            ", {} were of another type than their channel's",
            stats.n_type_mismatch
        );
    }
    why + ")"
}
