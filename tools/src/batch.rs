//! Batch plumbing shared by the commands that take `LOG_OR_DIR...`: finding the logs, choosing a shard,
//! checking a log's frame period against the model's, reading the logs in parallel.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use rayon::prelude::*;
use scenarios::log::RunLog;

/// Logs that could not be used, each with why.
pub type Failures = Vec<(PathBuf, String)>;

/// `; first: PATH: why` for the first of `errors`, if any (for "no log could be read" messages).
pub fn first_failure(errors: &Failures) -> String {
    errors
        .first()
        .map(|(path, e)| format!("; first: {}: {e}", path.display()))
        .unwrap_or_default()
}

/// Expands files and folders into the list of HDF5 logs they hold: a folder contributes every `*.h5` file
/// below it (recursively); a file is taken as given. The result is sorted and free of duplicates, so every
/// run of a command sees the logs in the same order.
pub fn expand_logs(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    expand(paths, false)
}

/// As [`expand_logs`], and a folder also contributes its Cyber records (`*.record`, `*.record.NNNNN`).
pub fn expand_logs_and_records(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    expand(paths, true)
}

fn expand(paths: &[PathBuf], records: bool) -> anyhow::Result<Vec<PathBuf>> {
    let mut logs = Vec::new();
    for path in paths {
        let meta =
            std::fs::metadata(path).with_context(|| format!("{}: cannot read", path.display()))?;
        if meta.is_dir() {
            collect(path, records, &mut logs)?;
        } else {
            logs.push(path.clone());
        }
    }
    logs.sort();
    logs.dedup();
    if records {
        // A recording split into segments is one input, named by its first segment.
        let (cyber, mut h5): (Vec<PathBuf>, Vec<PathBuf>) = logs
            .into_iter()
            .partition(|p| ingest::record::is_record_name(p));
        h5.extend(
            ingest::record::recordings(&cyber)
                .into_iter()
                .filter_map(|segments| segments.into_iter().next()),
        );
        h5.sort();
        logs = h5;
    }
    if logs.is_empty() {
        let what = if records {
            ".h5 logs or .record files"
        } else {
            ".h5 logs"
        };
        bail!("no {what} found in {}", display_list(paths));
    }
    Ok(logs)
}

fn collect(dir: &Path, records: bool, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("{}: cannot list folder", dir.display()))?;
    for entry in entries {
        let path = entry
            .with_context(|| format!("{}: cannot list folder", dir.display()))?
            .path();
        if path.is_dir() {
            collect(&path, records, out)?;
        } else if path.extension().is_some_and(|e| e == "h5")
            || (records && ingest::record::is_record_name(&path))
        {
            out.push(path);
        }
    }
    Ok(())
}

fn display_list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `--shard i/n`: this process handles the logs whose file name hashes to `i` modulo `n` (0-based).
///
/// The choice depends only on the file name, not on the other files given, so shards never overlap and
/// together cover every log even when each shard is started with a differently ordered list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u64,
    count: u64,
}

impl Shard {
    /// Whether this shard handles `path`.
    pub fn contains(&self, path: &Path) -> bool {
        let name = path
            .file_name()
            .map(|n| n.as_encoded_bytes())
            .unwrap_or_default();
        fnv1a(name) % self.count == self.index
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Shard, String> {
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}` is not of the form i/n"))?;
        let index: u64 = i
            .trim()
            .parse()
            .map_err(|_| format!("shard index `{i}` is not a whole number"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("shard count `{n}` is not a whole number"))?;
        if count == 0 || index >= count {
            return Err(format!("shard {index}/{count}: need 0 <= i < n"));
        }
        Ok(Shard { index, count })
    }
}

/// 64-bit FNV-1a: a stable hash (unlike `std`'s, which may change between Rust releases).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Whether two frame periods (s) are the same one (their stored values may differ in the last bits).
pub fn same_frame_period(a_s: f64, b_s: f64) -> bool {
    (a_s - b_s).abs() <= 1e-9
}

/// Refuses a log whose frames do not come every `model_period_s` seconds, the step of the model that
/// learns from or reads it, naming the option that learns a model at the log's rate.
///
/// # Errors
/// The two periods when they differ.
pub fn check_log_period(log_period_s: f64, model_period_s: f64) -> anyhow::Result<()> {
    anyhow::ensure!(
        same_frame_period(log_period_s, model_period_s),
        "frame period {log_period_s:?} s differs from the model's {model_period_s:?} s (a model for logs at \
         this rate is learned with --frame-period-s {log_period_s:?})"
    );
    Ok(())
}

/// The message of `error`, a failure on the file `path`, for a line that names `path` itself: without a
/// leading `path: `. Errors about a file as a whole (it cannot be opened, the HDF5 library crashed on it, a
/// damaged record section) name it, errors about its content (a dataset, an attribute) do not; every
/// command names the file once, before this.
pub fn reason(path: &Path, error: &dyn std::fmt::Display) -> String {
    let text = format!("{error:#}");
    let prefix = format!("{}: ", path.display());
    match text.strip_prefix(&prefix) {
        Some(rest) => rest.to_owned(),
        None => text,
    }
}

/// Reads every log in parallel, each as every command reads logs (`read_log_isolated`), refuses one whose
/// frame period is not `period_s` (when given), and hands the others to `f` with a per-thread state made
/// by `init`; `on_done` is called after each log. The results are in the order of `logs`.
pub fn map_logs<S: Send, T: Send>(
    logs: &[PathBuf],
    period_s: Option<f64>,
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, RunLog) -> anyhow::Result<T> + Sync,
    on_done: impl Fn() + Sync,
) -> Vec<(PathBuf, anyhow::Result<T>)> {
    map_logs_at(logs, period_s, init, |state, _, log| f(state, log), on_done)
}

/// [`map_logs`], with `f` also given the path the log was read from.
pub fn map_logs_at<S: Send, T: Send>(
    logs: &[PathBuf],
    period_s: Option<f64>,
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, &Path, RunLog) -> anyhow::Result<T> + Sync,
    on_done: impl Fn() + Sync,
) -> Vec<(PathBuf, anyhow::Result<T>)> {
    logs.par_iter()
        .map_init(init, |state, path| {
            let r = scenarios::log::read_log_isolated(path)
                .map_err(anyhow::Error::from)
                .and_then(|log| {
                    if let Some(period) = period_s {
                        check_log_period(log.meta.frame_period_s, period)?;
                    }
                    f(state, path, log)
                });
            on_done();
            (path.clone(), r)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_files() {
        let names: Vec<PathBuf> = (0..200)
            .map(|i| PathBuf::from(format!("logs/run_{i:04}.h5")))
            .collect();
        let shards: Vec<Shard> = (0..3).map(|i| format!("{i}/3").parse().unwrap()).collect();
        for name in &names {
            assert_eq!(
                shards.iter().filter(|s| s.contains(name)).count(),
                1,
                "{}",
                name.display()
            );
        }
        // Roughly balanced: each shard gets some.
        for s in &shards {
            let n = names.iter().filter(|p| s.contains(p)).count();
            assert!(n > 40, "shard {s:?} got only {n} of 200");
        }
    }

    #[test]
    fn shard_depends_only_on_the_file_name() {
        let s: Shard = "1/4".parse().unwrap();
        assert_eq!(
            s.contains(Path::new("a/x.h5")),
            s.contains(Path::new("b/c/x.h5"))
        );
    }

    #[test]
    fn bad_shard_texts_are_rejected() {
        for bad in ["3/3", "1", "a/2", "0/0", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn fnv1a_known_values() {
        // Reference values of the 64-bit FNV-1a hash.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn expand_finds_h5_files_recursively_and_sorted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        for f in ["b.h5", "a.h5", "sub/c.h5", "notes.txt"] {
            std::fs::write(dir.path().join(f), b"").unwrap();
        }
        let logs = expand_logs(&[dir.path().to_path_buf(), dir.path().join("a.h5")]).unwrap();
        let names: Vec<_> = logs
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().to_owned())
            .collect();
        assert_eq!(
            names,
            [PathBuf::from("a.h5"), "b.h5".into(), "sub/c.h5".into()]
        );
        assert!(expand_logs(&[dir.path().join("missing")]).is_err());
    }
}
