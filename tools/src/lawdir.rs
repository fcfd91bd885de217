//! Reading a folder of law files (`--laws DIR`): every `*.law` file, in file-name order (INTERFACES §4).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use laws::{LawSet, LawSource};

/// Reads the `.law` files of `dir` in file-name order. Each source is named by its file name alone, so a
/// model's embedded law texts (and its bytes and hash) do not depend on where the folder lives.
pub fn read_sources(dir: &Path) -> anyhow::Result<Vec<LawSource>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list the law folder", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "law"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        bail!("{}: no .law files in this folder", dir.display());
    }
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("{}: cannot read", p.display()))?;
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok(LawSource { name, text })
        })
        .collect()
}

/// Reads and parses the laws of `dir`. A parse error names the file by its path (`DIR/name.law:line:col`).
pub fn load(dir: &Path) -> anyhow::Result<LawSet> {
    let sources = read_sources(dir)?;
    LawSet::parse(&sources).map_err(|mut e| {
        e.file = dir.join(&e.file).display().to_string();
        anyhow::Error::new(e)
    })
}

#[cfg(test)]
mod tests;
