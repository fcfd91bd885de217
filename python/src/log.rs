//! `read_log`: an HDF5 run log as columns, named like its datasets (INTERFACES §2).

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use scenarios::log::Column;

/// Reads the log at `path` (checked as `avguard inspect` checks it) and returns
/// `{"meta": {...}, "frames": {column: (dtype, list)}, "obstacles": {column: (dtype, list)}}`, each
/// column with the numpy dtype name of its dataset in the file.
#[pyfunction]
pub(crate) fn read_log(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    let (meta, frames, obstacles) = py
        .detach(|| {
            let log = scenarios::log::read_log(&path).map_err(anyhow::Error::from)?;
            anyhow::Ok((
                log.meta,
                scenarios::log::frame_columns(&log.frames),
                scenarios::log::obstacle_columns(&log.frames),
            ))
        })
        .map_err(crate::to_py)?;
    let meta_dict = PyDict::new(py);
    meta_dict.set_item("scenario", meta.scenario)?;
    meta_dict.set_item("run_id", meta.run_id)?;
    meta_dict.set_item("frame_period_s", meta.frame_period_s)?;
    meta_dict.set_item("seed", meta.seed)?;
    let out = PyDict::new(py);
    out.set_item("meta", meta_dict)?;
    out.set_item("frames", columns(py, frames)?)?;
    out.set_item("obstacles", columns(py, obstacles)?)?;
    Ok(out)
}

fn columns<'py>(
    py: Python<'py>,
    columns: Vec<(&'static str, Column)>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, column) in columns {
        match column {
            Column::F64(v) => dict.set_item(name, ("float64", v))?,
            Column::F32(v) => dict.set_item(name, ("float32", v))?,
            Column::I32(v) => dict.set_item(name, ("int32", v))?,
            // As a list of ints: pyo3 would turn a `Vec<u8>` into `bytes`.
            Column::U8(v) => {
                let v: Vec<u16> = v.into_iter().map(u16::from).collect();
                dict.set_item(name, ("uint8", v))?
            }
        }
    }
    Ok(dict)
}
