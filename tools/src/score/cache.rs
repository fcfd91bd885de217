//! The per-log result cache: `OUT/runs/NAME.json` per scored log and `OUT/settings.json` for the run.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::{FileResult, Settings};

/// Creates `out` (and its cache folder) for a run with `settings`. A cache made under other settings is
/// cleared with `force` and is an error otherwise.
pub fn prepare_out(out: &Path, settings: &Settings, force: bool) -> anyhow::Result<()> {
    let runs = out.join("runs");
    std::fs::create_dir_all(&runs).with_context(|| format!("{}: cannot create", runs.display()))?;
    let settings_path = out.join("settings.json");
    if let Ok(text) = std::fs::read_to_string(&settings_path) {
        let previous: Option<Settings> = serde_json::from_str(&text).ok();
        if previous.as_ref() != Some(settings) {
            if !force {
                let other_format = previous
                    .map(|p| p.result_format)
                    .filter(|&f| f != settings.result_format);
                if let Some(format) = other_format {
                    bail!(
                        "{} holds scores in result format {format}, which this avguard (format {}) does \
                         not resume; use --force to score them again or choose another --out",
                        out.display(),
                        settings.result_format
                    );
                }
                bail!(
                    "{} holds scores made with another model or other options; use --force to replace them or \
                     choose another --out",
                    out.display()
                );
            }
            std::fs::remove_dir_all(&runs)
                .with_context(|| format!("{}: cannot clear", runs.display()))?;
            std::fs::create_dir_all(&runs)
                .with_context(|| format!("{}: cannot create", runs.display()))?;
        }
    }
    write_atomic(&settings_path, &serde_json::to_vec_pretty(settings)?)
}

fn entry(out: &Path, log: &Path) -> PathBuf {
    let name = log
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    out.join("runs").join(format!("{name}.json"))
}

/// Whether `log` already has a cached result in `out`.
pub fn cached(out: &Path, log: &Path) -> bool {
    entry(out, log).is_file()
}

/// Stores `result` as the cached result of `log`.
pub fn store(out: &Path, log: &Path, result: &FileResult) -> anyhow::Result<()> {
    write_atomic(&entry(out, log), &result_bytes(result)?)
}

/// A result as its cache entry holds it; scored elsewhere (a Ray worker), it travels in this form.
pub fn result_bytes(result: &FileResult) -> anyhow::Result<Vec<u8>> {
    Ok(serde_json::to_vec(result)?)
}

/// Stores a result made by [`result_bytes`] elsewhere, byte for byte, after checking that it is one.
pub fn store_bytes(out: &Path, log: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    serde_json::from_slice::<FileResult>(bytes)
        .with_context(|| format!("{}: not a scoring result", log.display()))?;
    write_atomic(&entry(out, log), bytes)
}

/// The cached result of `log`, if any.
pub fn load_cached(out: &Path, log: &Path) -> anyhow::Result<Option<FileResult>> {
    let path = entry(out, log);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).with_context(|| {
            format!(
                "{}: corrupt cache entry (rerun with --force)",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("{}: cannot read", path.display())),
    }
}

/// Every cached result in `out`, in file-name order.
pub fn load_all(out: &Path) -> anyhow::Result<Vec<FileResult>> {
    let runs = out.join("runs");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&runs)
        .with_context(|| format!("{}: not a score output folder", out.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let bytes =
                std::fs::read(p).with_context(|| format!("{}: cannot read", p.display()))?;
            serde_json::from_slice(&bytes)
                .with_context(|| format!("{}: corrupt cache entry", p.display()))
        })
        .collect()
}

/// Writes `bytes` to `path` through a temporary file and a rename, so that an interrupted run never
/// leaves a half-written file behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("{}: cannot write", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("{}: cannot write", path.display()))
}
