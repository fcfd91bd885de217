//! Reading a model file (`--model MODEL`, written by `avguard learn`): one place for every command.

use std::path::Path;

use anyhow::Context;
use monitor::Model;

/// A model file's bytes (what `model_hash` is taken over) and the model they decode to.
pub struct ModelFile {
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// The decoded and validated model.
    pub model: Model,
}

/// Reads and decodes the model file at `path`.
///
/// # Errors
/// An unreadable file, or bytes that are not a valid model (the error names the path and the reason).
pub fn read(path: &Path) -> anyhow::Result<ModelFile> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    decode(bytes, path)
}

/// Decodes a model file's bytes that came from `path` (named in the error), read here or elsewhere.
///
/// # Errors
/// Bytes that are not a valid model.
pub fn decode(bytes: Vec<u8>, path: &Path) -> anyhow::Result<ModelFile> {
    let model = Model::from_bytes(&bytes)
        .with_context(|| format!("{}: not a usable model", path.display()))?;
    Ok(ModelFile { bytes, model })
}
