//! `read_log`: an HDF5 run log as columns, named like its datasets (INTERFACES §2); `signals`: the law
//! signals of every frame of a log, as `avguard laws signals` writes them (INTERFACES §4.2);
//! `road_users`: how logs' road users step and turn, and how `avguard learn` would read them, as `avguard
//! inspect` says it.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use scenarios::log::Column;

/// Reads the log at `path` (checked as `avguard inspect` checks it; in a child process once
/// [`isolate_log_reads`] has run) and returns
/// `{"meta": {...}, "frames": {column: (dtype, list)}, "obstacles": {column: (dtype, list)}}`, each
/// column with the numpy dtype name of its dataset in the file.
#[pyfunction]
pub(crate) fn read_log(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    let (meta, frames, obstacles) = py
        .detach(|| {
            let log = scenarios::log::read_log_isolated(&path).map_err(anyhow::Error::from)?;
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

/// The signals of every frame of the log at `path` (read as [`read_log`] reads it):
/// `{"t": [...], signal name: [...], ...}`, signals in `laws::Signal::ALL` order, the values
/// [`laws::signals::signal_table`] computes (those `avguard laws signals` writes).
#[pyfunction]
pub(crate) fn signals(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    let (t, table) = py
        .detach(|| {
            let log = scenarios::log::read_log_isolated(&path).map_err(anyhow::Error::from)?;
            let t: Vec<f64> = log.frames.iter().map(|f| f.t).collect();
            let table = laws::signals::signal_table(&log.frames, laws::SignalContext::default());
            anyhow::Ok((t, table))
        })
        .map_err(crate::to_py)?;
    let out = PyDict::new(py);
    out.set_item("t", t)?;
    for (&sig, column) in laws::Signal::ALL.iter().zip(table) {
        out.set_item(sig.name(), column)?;
    }
    Ok(out)
}

/// One log's row of [`road_users`]: its path, its counts (steps, jumps, velocity pairs, velocity flips,
/// and whether its first collision frame touches a road user as logged) or why it could not be read.
type RoadUserRow = (
    String,
    Option<(u64, u64, u64, u64, Option<bool>)>,
    Option<String>,
);

/// The road users of `paths` (logs, or folders searched for `*.h5`), read in parallel as `avguard
/// inspect` reads them: a row per log ([`RoadUserRow`]), and the lines `inspect` prints after the logs
/// ([`tools::fit::road_user_summary`]; `None` when no log could be read).
#[pyfunction]
pub(crate) fn road_users(
    py: Python<'_>,
    paths: Vec<PathBuf>,
) -> PyResult<(Vec<RoadUserRow>, Option<String>)> {
    py.detach(|| {
        let logs = tools::batch::expand_logs(&paths)?;
        let read = tools::batch::map_logs_at(
            &logs,
            None,
            || (),
            |_, _, log| Ok(tools::fit::default_reading(&log.frames)),
            || (),
        );
        let mut together = laws::perception::RoadUserReading::default();
        let mut n_read = 0;
        let rows = read
            .into_iter()
            .map(|(path, r)| {
                let file = path.display().to_string();
                match r {
                    Ok(r) => {
                        together.add(&r);
                        n_read += 1;
                        let touches = r.contact.map(laws::geometry::latency::touches_as_logged);
                        let (steps, flips) = (r.steps, r.flips);
                        let counts = (steps.steps, steps.jumps, flips.pairs, flips.flips, touches);
                        (file, Some(counts), None)
                    }
                    Err(e) => (file, None, Some(format!("{e:#}"))),
                }
            })
            .collect();
        let summary = (n_read > 0).then(|| tools::fit::road_user_summary(&together, n_read));
        anyhow::Ok((rows, summary))
    })
    .map_err(crate::to_py)
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

/// Makes every log this process reads (here, in scoring, learning and `Model.risk`) be read in a child
/// process, as the CLI does: the interpreter `executable` loading the extension module file `module_file`
/// and serving read requests ([`scenarios::log::isolated`]). A file that crashes or hangs libhdf5 then
/// fails alone with an `AvguardError` instead of taking the Python process down. `avguard/__init__.py`
/// calls it on import; `AVGUARD_LOG_READER=in-process` leaves reading in this process.
#[pyfunction]
#[pyo3(name = "_isolate_log_reads")]
pub(crate) fn isolate_log_reads(executable: PathBuf, module_file: PathBuf) -> PyResult<()> {
    // The child loads only the extension (not the `avguard` package, which imports pandas), under its
    // own name, so that its module init reaches `serve_if_child`; the file's path is its argument.
    let script = "import importlib.util as u, sys\n\
                  s = u.spec_from_file_location('avguard._native', sys.argv[1])\n\
                  s.loader.exec_module(u.module_from_spec(s))\n\
                  sys.exit('avguard log reader: started without its environment')\n";
    scenarios::log::isolated::enable(
        executable,
        vec!["-c".into(), script.into(), module_file.into()],
    );
    Ok(())
}
