//! Reading a folder of law files (`--laws DIR`): every `*.law` file, in file-name order (INTERFACES §4).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use laws::{LawSet, LawSource};

/// Reads the `.law` files of `dir` in file-name order. Each source is named by its file name (parse errors
/// read `name.law:line:col: ...`), which also keeps a model's embedded law texts independent of where the
/// folder lives.
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
            Ok(LawSource {
                name: p.display().to_string(),
                text,
            })
        })
        .collect()
}

/// Reads and parses the laws of `dir`.
pub fn load(dir: &Path) -> anyhow::Result<LawSet> {
    let sources = read_sources(dir)?;
    // The parse error already names file, line and column.
    LawSet::parse(&sources).map_err(|e| anyhow::anyhow!("{e}"))
}
