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

/// The largest model file read, bytes. Models of twelve predicates a property, sixteen chains and a
/// hundred trees stay within a few megabytes; the cap keeps a wrong path (`/dev/zero`, a video) from
/// filling memory before the format check could refuse it.
pub const MAX_MODEL_BYTES: u64 = 256 << 20;

/// The bytes of the model file at `path`, at most [`MAX_MODEL_BYTES`] of them.
///
/// # Errors
/// An unreadable file, or one larger than the cap (devices included: reading stops there).
pub fn read_bytes(path: &Path) -> anyhow::Result<Vec<u8>> {
    use std::io::Read;
    let file =
        std::fs::File::open(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_MODEL_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    anyhow::ensure!(
        bytes.len() as u64 <= MAX_MODEL_BYTES,
        "{}: not a usable model: larger than the limit of {} MiB for a model file",
        path.display(),
        MAX_MODEL_BYTES >> 20
    );
    Ok(bytes)
}

/// Reads and decodes the model file at `path`.
///
/// # Errors
/// An unreadable file, or bytes that are not a valid model (the error names the path and the reason).
pub fn read(path: &Path) -> anyhow::Result<ModelFile> {
    decode(read_bytes(path)?, path)
}

/// Writes `model` to `path` whole or not at all ([`crate::whole_file`]), so a full disk, a file-size limit or a crash mid-write leaves the
/// model that was there (`calibrate` rewrites its own input) instead of a truncated one.
///
/// # Errors
/// The folder cannot take the file, or the write or the rename fails (the error names `path`).
pub fn write(path: &Path, model: &Model) -> anyhow::Result<()> {
    write_bytes(path, &model.to_bytes())
}

/// Whether a model can be written at `path`, checked before the work that makes it: not a folder, and
/// its folder takes a new file (a temporary one, removed at once).
///
/// # Errors
/// The reason it cannot, naming `path`.
pub fn check_writable(path: &Path) -> anyhow::Result<()> {
    anyhow::ensure!(
        !path.is_dir(),
        "{}: cannot write the model: it is a folder",
        path.display()
    );
    crate::whole_file::folder_takes_files(path, ".avguard-model-")
        .with_context(|| format!("{}: cannot write the model there", path.display()))
}

/// [`write()`] for bytes already encoded.
///
/// # Errors
/// As [`write()`].
pub fn write_bytes(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    crate::whole_file::write_whole(path, ".avguard-model-", |mut file| file.write_all(bytes))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A file over the cap is refused without reading it whole, a device that never ends included.
    #[test]
    fn files_over_the_cap_are_refused_by_size() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.bin");
        // Sparse: one byte over the cap costs no disk.
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_MODEL_BYTES + 1)
            .unwrap();
        for path in [big.as_path(), Path::new("/dev/zero")] {
            let err = format!("{:#}", read(path).err().expect("refused"));
            assert!(
                err.contains("larger than the limit of 256 MiB"),
                "{}: {err}",
                path.display()
            );
        }
    }

    /// A model is written whole over the old one, with nothing left beside it.
    #[test]
    fn a_model_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.bin");
        std::fs::write(&path, b"old contents").unwrap();
        write_bytes(&path, b"new contents").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new contents");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["m.bin"]);
        assert!(check_writable(&path).is_ok());
        let said = format!("{:#}", check_writable(dir.path()).unwrap_err());
        assert!(said.contains("it is a folder"), "{said}");
        let said = format!(
            "{:#}",
            check_writable(&dir.path().join("no/such/m.bin")).unwrap_err()
        );
        assert!(said.contains("cannot write the model there"), "{said}");
        // A folder in the way: refused naming the path, and no temporary file is left.
        let err = format!("{:#}", write_bytes(dir.path(), b"x").unwrap_err());
        assert!(err.contains("cannot write"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
