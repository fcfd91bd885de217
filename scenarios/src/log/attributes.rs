//! Copying a log's root attributes into another log: a copy of a log (`avguard perturb`) keeps the
//! attributes of its input that the writer does not set itself (`writer`, a comment, a tool's settings).

use std::ffi::{c_char, CString};
use std::path::Path;

use hdf5::{Attribute, Datatype, File};
use hdf5_sys::h5::{H5_index_t, H5_iter_order_t};
use hdf5_sys::h5p::H5P_DEFAULT;

use super::error::LogError;

/// Longest attribute name copied, bytes.
const MAX_NAME: usize = 4096;

/// Copies every root attribute of the log `from` that the log `to` lacks, with its type, shape and
/// value; the attributes `to` already has (those the writer sets) are kept as they are.
///
/// `from` is a log already read and validated ([`super::read_log_isolated`]); a file that fails here
/// fails with the attribute named.
pub fn copy_root_attributes(from: &Path, to: &Path) -> Result<(), LogError> {
    let from_label = from.display().to_string();
    let to_label = to.display().to_string();
    let src = File::with_options()
        .with_fapl(|p| p.file_locking(false))
        .open(from)
        .map_err(LogError::hdf5(from_label.clone()))?;
    let file_bytes = std::fs::metadata(from)
        .map_err(|error| LogError::Io {
            path: from_label.clone(),
            error,
        })?
        .len();
    let dst = File::append(to).map_err(LogError::hdf5(to_label.clone()))?;
    let n_attrs = src
        .loc_info()
        .map_err(LogError::hdf5(from_label.clone()))?
        .num_attrs;
    for idx in 0..n_attrs {
        let name = attr_name(&src, idx).map_err(LogError::hdf5(from_label.clone()))?;
        if exists(&dst, &name).map_err(LogError::hdf5(to_label.clone()))? {
            continue;
        }
        copy_attr(&src, &dst, &name, file_bytes)
            .map_err(LogError::hdf5(format!("{from_label}: attribute `{name}`")))?;
    }
    Ok(())
}

/// The name of the root attribute `idx` (in name order), read as bytes: the `hdf5` crate's listing would
/// convert each name's character set into a Rust enum, undefined behaviour for a corrupt value.
fn attr_name(file: &File, idx: usize) -> hdf5::Result<String> {
    let mut buf = vec![0u8; MAX_NAME + 1];
    // SAFETY: `file.id()` is a live file identifier, "." a NUL-terminated string, and `buf` holds
    // `buf.len()` writable bytes, which the call fills with at most that many, NUL included; under the
    // crate's global lock, as its own calls are.
    let len = hdf5::sync::sync(|| unsafe {
        hdf5::h5check(hdf5_sys::h5a::H5Aget_name_by_idx(
            file.id(),
            c".".as_ptr(),
            H5_index_t::H5_INDEX_NAME,
            H5_iter_order_t::H5_ITER_INC,
            idx as u64,
            buf.as_mut_ptr().cast::<c_char>(),
            buf.len(),
            H5P_DEFAULT,
        ))
    })?;
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if len > MAX_NAME {
        return Err(format!("an attribute name of {len} bytes (at most {MAX_NAME})").into());
    }
    buf.truncate(len);
    String::from_utf8(buf).map_err(|e| format!("an attribute name is not UTF-8 ({e})").into())
}

fn exists(file: &File, name: &str) -> hdf5::Result<bool> {
    let c_name = CString::new(name).map_err(|e| e.to_string())?;
    // SAFETY: a live file identifier and a NUL-terminated name, under the crate's global lock.
    let found = hdf5::sync::sync(|| unsafe {
        hdf5::h5check(hdf5_sys::h5a::H5Aexists(file.id(), c_name.as_ptr()))
    })?;
    Ok(found > 0)
}

/// Copies the attribute `name` of `src` to `dst`: created with its stored type and shape, its value read
/// and written in the matching native type (variable-length strings and sequences as HDF5 lays them out
/// in memory, then released).
fn copy_attr(src: &File, dst: &File, name: &str, file_bytes: u64) -> hdf5::Result<()> {
    let attr = src.attr(name)?;
    let stored = attr.dtype()?;
    let space = attr.space()?;
    let c_name = CString::new(name).map_err(|e| e.to_string())?;
    // SAFETY: every identifier passed is live (owned by a handle that outlives the call), `c_name` is
    // NUL-terminated, and `buf` holds `n_points × element` bytes, the size of `n_points` values of
    // `native`, which `H5Aread` fills and `H5Awrite` reads. Variable-length values point into memory
    // HDF5 allocated, released once by `H5Dvlen_reclaim` after the write. `from_id` takes over the one
    // reference each `H5T`/`H5A` call returned. All under the crate's global lock.
    hdf5::sync::sync(|| unsafe {
        use hdf5_sys::h5t::{H5T_class_t, H5T_direction_t};
        let native: Datatype = hdf5::from_id(hdf5::h5check(hdf5_sys::h5t::H5Tget_native_type(
            stored.id(),
            H5T_direction_t::H5T_DIR_DEFAULT,
        ))?)?;
        let n_points = hdf5::h5check(hdf5_sys::h5s::H5Sget_simple_extent_npoints(space.id()))?;
        let element = hdf5_sys::h5t::H5Tget_size(native.id());
        let bytes = u64::try_from(n_points)
            .unwrap_or(u64::MAX)
            .saturating_mul(element as u64);
        // An attribute lives in the file (a variable-length element is a pointer or a length and a
        // pointer): more than a small multiple of the file is a corrupt header.
        if bytes > file_bytes.saturating_mul(4).max(1 << 20) {
            return Err(format!("declares {bytes} bytes, more than its file can hold").into());
        }
        let mut buf = vec![0u8; bytes as usize];
        hdf5::h5check(hdf5_sys::h5a::H5Aread(
            attr.id(),
            native.id(),
            buf.as_mut_ptr().cast(),
        ))?;
        let variable = hdf5_sys::h5t::H5Tdetect_class(native.id(), H5T_class_t::H5T_VLEN) > 0
            || hdf5_sys::h5t::H5Tdetect_class(native.id(), H5T_class_t::H5T_STRING) > 0
                && hdf5_sys::h5t::H5Tis_variable_str(native.id()) > 0;
        let copy = hdf5::h5check(hdf5_sys::h5a::H5Acreate2(
            dst.id(),
            c_name.as_ptr(),
            stored.id(),
            space.id(),
            H5P_DEFAULT,
            H5P_DEFAULT,
        ))
        .and_then(|id| hdf5::from_id::<Attribute>(id))
        .and_then(|copy| {
            hdf5::h5check(hdf5_sys::h5a::H5Awrite(
                copy.id(),
                native.id(),
                buf.as_ptr().cast(),
            ))
        });
        if variable {
            #[allow(deprecated)]
            hdf5_sys::h5d::H5Dvlen_reclaim(
                native.id(),
                space.id(),
                H5P_DEFAULT,
                buf.as_mut_ptr().cast(),
            );
        }
        copy.map(|_| ())
    })
}
