//! Progress for long calls: Python hands in any callable taking a step count (a tqdm bar's `update`, or
//! its own function); Rust calls it after each log from whichever thread finished it, holding the GIL
//! only for that call.

use pyo3::prelude::*;

/// An optional progress callback, safe to call from rayon threads.
pub(crate) struct Progress(Option<Py<PyAny>>);

impl Progress {
    pub(crate) fn new(callback: Option<Py<PyAny>>) -> Progress {
        Progress(callback)
    }

    /// Reports one more log done. A failing callback is reported by Python as unraisable and otherwise
    /// ignored: a broken progress bar must not fail the scoring.
    pub(crate) fn step(&self) {
        if let Some(callback) = &self.0 {
            Python::attach(|py| {
                if let Err(e) = callback.call1(py, (1,)) {
                    e.write_unraisable(py, None);
                }
            });
        }
    }
}
