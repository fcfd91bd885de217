//! `--map FILE`: loading an Apollo HD map for `bridge`, `import` and `score` (one place, one message).

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use ingest::hdmap::tracker::TrackerConfig;
use ingest::hdmap::{HdMap, DEFAULT_MAX_MAP_BYTES};

/// A loaded map with the lane-matching settings every command uses.
pub type LoadedMap = (Arc<HdMap>, TrackerConfig);

/// Loads `path` when given (text for `*.txt`, binary otherwise), reporting what was skipped on stderr.
pub fn load(path: Option<&Path>) -> anyhow::Result<Option<LoadedMap>> {
    path.map(|path| load_file(path).map(|(map, _)| map))
        .transpose()
}

/// Loads the map at `path` like [`load`]; also returns the file's bytes (read once, size-bounded).
pub fn load_file(path: &Path) -> anyhow::Result<(LoadedMap, Vec<u8>)> {
    let bytes = HdMap::read_file(path, DEFAULT_MAX_MAP_BYTES).context("cannot load the HD map")?;
    let map = HdMap::from_file_bytes(path, &bytes).context("cannot load the HD map")?;
    if !map.warnings().is_empty() {
        eprintln!(
            "avguard: {}: {} map elements skipped (first: {})",
            path.display(),
            map.warnings().len(),
            map.warnings().first().map_or("", String::as_str)
        );
    }
    Ok(((Arc::new(map), TrackerConfig::default()), bytes))
}
