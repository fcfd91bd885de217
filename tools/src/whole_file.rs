//! Files written whole or not at all: into a temporary file beside their place, renamed over it once
//! written and flushed to disk, so a full disk, a file-size limit or a crash mid-write leaves what was
//! there (or nothing) under the name, never a truncated file. Model files (`modelfile`) and `export`'s
//! PRISM files are written so.

use std::fs::File;
use std::path::Path;

use anyhow::Context;
use tempfile::NamedTempFile;

/// The folder `path` is written in (`.` for a bare file name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A new temporary file `PREFIX*.partial` in the folder of `path`.
fn temporary_beside(path: &Path, prefix: &str) -> std::io::Result<NamedTempFile> {
    tempfile::Builder::new()
        .prefix(prefix)
        .suffix(".partial")
        .tempfile_in(folder_of(path))
}

/// Whether the folder of `path` takes a new file (a temporary one named `PREFIX*.partial`, removed at
/// once).
///
/// # Errors
/// The I/O error of creating it.
pub fn folder_takes_files(path: &Path, prefix: &str) -> std::io::Result<()> {
    temporary_beside(path, prefix).map(drop)
}

/// Writes `path` whole or not at all: `fill` writes the contents into a temporary file `PREFIX*.partial`
/// beside it, which is flushed to disk and renamed over `path`; on any failure the temporary file is
/// removed and `path` is left as it was.
///
/// # Errors
/// The folder cannot take the file, or `fill`, the flush or the rename fails (the error names `path`).
pub fn write_whole(
    path: &Path,
    prefix: &str,
    fill: impl FnOnce(File) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let cannot = || format!("{}: cannot write", path.display());
    let tmp = temporary_beside(path, prefix).with_context(cannot)?;
    fill(tmp.reopen().with_context(cannot)?).with_context(cannot)?;
    tmp.as_file().sync_all().with_context(cannot)?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(cannot)?;
    Ok(())
}
