//! `avguard._native`: the extension module under the Python package `avguard` (a second front door beside
//! the `tools` CLI). Everything here calls the same Rust code as the CLI; the Python half
//! (`python/py/avguard/`) only turns the results into pandas DataFrames and adds Ray.
//!
//! A tour:
//! - `log::read_log` reads an HDF5 run log into columns named like its datasets, `log::signals` its law
//!   signals frame by frame, `log::road_users` how logs' road users step and turn (as `avguard inspect`);
//! - [`model::Model`] holds a model file (load, save, `info --json`, per-frame risk);
//! - [`score::Scorer`] scores single logs (what a Ray worker runs); [`score::ScoreJob`] is a whole
//!   `avguard score` run (prepare, store results made elsewhere, write `score.json` and the reports);
//! - [`learn::LearnSetup`] records logs into [`learn::Counts`], which merge exactly and build the model
//!   `avguard learn` writes;
//! - `evaluate::evaluate` runs the held-out evaluation `avguard evaluate` runs, with its options.
//!
//! **Invariant:** long calls release the GIL (`Python::detach`); failures raise `avguard.AvguardError`
//! carrying the CLI's message (the `anyhow` chain printed with `{:#}`, as `avguard: ...` prints it).

// The tour above links the crate's private modules: this crate is only the extension module's source.
#![allow(rustdoc::private_intra_doc_links)]

use pyo3::prelude::*;

mod evaluate;
mod learn;
mod log;
mod model;
mod progress;
mod score;

pyo3::create_exception!(
    avguard,
    AvguardError,
    pyo3::exceptions::PyException,
    "An avguard operation failed; the message is the one the avguard CLI prints."
);

/// The CLI's message for `error` as a Python exception.
pub(crate) fn to_py(error: anyhow::Error) -> PyErr {
    AvguardError::new_err(format!("{error:#}"))
}

/// A command-line parse error (of flags built from Python options) as the one line the CLI prints for it,
/// without clap's `error: ` prefix and usage.
pub(crate) fn flag_error(error: clap::Error) -> anyhow::Error {
    let text = error.render().to_string();
    let first = text.lines().next().unwrap_or_default();
    anyhow::anyhow!("{}", first.trim_start_matches("error: "))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // A log-reading child (see `log::isolate_log_reads`) serves here and exits.
    scenarios::log::isolated::serve_if_child();
    m.add("AvguardError", m.py().get_type::<AvguardError>())?;
    // The CLI's default, so that `Model.calibrate`'s cannot drift from it.
    m.add(
        "DEFAULT_ENFORCE_TARGET",
        tools::calibration::DEFAULT_ENFORCE_TARGET,
    )?;
    m.add_function(wrap_pyfunction!(log::read_log, m)?)?;
    m.add_function(wrap_pyfunction!(log::signals, m)?)?;
    m.add_function(wrap_pyfunction!(log::road_users, m)?)?;
    m.add_function(wrap_pyfunction!(log::isolate_log_reads, m)?)?;
    m.add_class::<model::Model>()?;
    m.add_class::<score::Scorer>()?;
    m.add_class::<score::ScoreJob>()?;
    m.add_function(wrap_pyfunction!(score::expand_logs, m)?)?;
    learn::register(m)?;
    m.add_function(wrap_pyfunction!(evaluate::evaluate, m)?)?;
    Ok(())
}
