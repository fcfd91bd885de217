//! Cyber RT records as run logs: the glue between `ingest::record` (reading and assembling) and the HDF5
//! run-log format (`scenarios::log`), for `avguard import` and for `score` on `.record` files.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use ingest::assemble::{Assembler, AssemblerConfig};
use ingest::record::{self, ImportStats, Imported};
use scenarios::log::{LogWriter, RunLog, RunMeta};

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
    let (runs, _) = record::read_runs(&segments, &mut a)?;
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
        bail!(
            "{}: no frames (the record has no localization message)",
            path.display()
        );
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
    let mut writer: Option<(LogWriter, PathBuf, usize)> = None;
    let mut logs = Vec::new();
    let mut failure: Option<anyhow::Error> = None;
    let finish = |w: Option<(LogWriter, PathBuf, usize)>,
                  logs: &mut Vec<(PathBuf, usize)>|
     -> anyhow::Result<()> {
        if let Some((writer, file, n)) = w {
            writer
                .finish()
                .with_context(|| format!("{}: cannot finish", file.display()))?;
            logs.push((file, n));
        }
        Ok(())
    };
    let stats = record::import_recording(segments, &mut a, |step| {
        if failure.is_some() {
            return;
        }
        let result = (|| -> anyhow::Result<()> {
            match step {
                Imported::NewRun(_) => {
                    finish(writer.take(), &mut logs)?;
                    run += 1;
                }
                Imported::Frame(frame) => {
                    if writer.is_none() {
                        let meta = meta(path, run, config.period_s);
                        let file = out_dir.join(format!("{}.h5", meta.run_id));
                        let w = LogWriter::create(&file, &meta)
                            .with_context(|| format!("{}: cannot create", file.display()))?;
                        writer = Some((w, file, 0));
                    }
                    if let Some((w, file, n)) = &mut writer {
                        w.append(frame)
                            .with_context(|| format!("{}: cannot write", file.display()))?;
                        *n += 1;
                    }
                }
            }
            Ok(())
        })();
        if let Err(e) = result {
            failure = Some(e);
        }
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    finish(writer.take(), &mut logs)?;
    if logs.is_empty() {
        bail!(
            "{}: no frames (the record has no localization message)",
            path.display()
        );
    }
    Ok(Written { logs, stats })
}
