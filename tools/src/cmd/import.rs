//! `avguard import`: Apollo Cyber RT records → HDF5 run logs (INTERFACES §1, §2).
//!
//! Each record is read section by section and its messages are assembled into frames by the same code as
//! the live bridge (`ingest`), so a record imported here and the same messages replayed through
//! `avguard bridge --record` give the same frames. A bad record fails that record, not the batch.

use std::path::PathBuf;

use anyhow::{bail, Context};
use ingest::assemble::AssemblerConfig;
use rayon::prelude::*;

/// Arguments of `avguard import`.
#[derive(clap::Args)]
pub struct Args {
    /// Output folder for the HDF5 logs (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Apollo HD map: road fields from each frame's pose (without it: nothing ahead, as a map-less source).
    #[arg(long, value_name = "FILE")]
    map: Option<PathBuf>,
    /// Frame period, s.
    #[arg(long, default_value_t = 0.1, value_name = "SECONDS")]
    frame_period_s: f64,
    /// A forward jump in message time larger than this starts a new run (a new log), s.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    gap_limit: f64,
    /// Cyber record files (`*.record`, `*.record.NNNNN`). The segments of a split recording
    /// (`NAME.record.00000`, `NAME.record.00001`, … beside each other) are imported as one recording,
    /// whichever of them is given.
    #[arg(value_name = "RECORD", required = true)]
    records: Vec<PathBuf>,
}

/// Runs `avguard import`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let config = AssemblerConfig {
        period_s: args.frame_period_s,
        max_gap_s: args.gap_limit,
        ..AssemblerConfig::default()
    };
    config
        .check()
        .map_err(|e| anyhow::anyhow!("--frame-period-s / --gap-limit: {e}"))?;
    let map = crate::mapfile::load(args.map.as_deref())?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("{}: cannot create", args.out.display()))?;
    // A recording split into segments is imported once, as one (named by its first segment).
    let recordings = ingest::record::recordings(&args.records);
    let progress = crate::progress::bar(recordings.len() as u64, "importing");
    let results: Vec<_> = recordings
        .par_iter()
        .map(|segments| {
            let r = crate::records::import_record(segments, &args.out, config, map.as_ref());
            progress.inc(1);
            (segments, r)
        })
        .collect();
    progress.finish_and_clear();
    let mut failed = 0;
    for (segments, result) in results {
        let (Some(path), Some(last)) = (segments.first(), segments.last()) else {
            continue;
        };
        match result {
            Ok(w) => {
                let s = &w.stats;
                if segments.len() > 1 {
                    eprintln!(
                        "{}: a recording of {} segments (to {})",
                        path.display(),
                        segments.len(),
                        last.display()
                    );
                }
                for (file, n) in &w.logs {
                    eprintln!("{} → {} ({n} frames)", path.display(), file.display());
                }
                eprintln!(
                    "  {} messages: {} decoded, {} on other channels, {} of another type, {} undecodable{}",
                    s.n_messages,
                    s.n_decoded,
                    s.n_other_channels,
                    s.n_type_mismatch,
                    s.n_decode_errors,
                    s.first_decode_error
                        .as_deref()
                        .map(|e| format!(" (first: {e})"))
                        .unwrap_or_default()
                );
            }
            Err(err) => {
                failed += 1;
                eprintln!("avguard: {err:#}");
            }
        }
    }
    if failed > 0 {
        bail!(
            "{failed} of {} recordings could not be imported (listed above)",
            recordings.len()
        );
    }
    Ok(())
}
