//! `Model`: a model file written by `avguard learn`, loaded once and kept with its bytes (scoring records
//! their hash, and Ray ships them to workers).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use monitor::{RiskMeasure, Session, SessionConfig};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::to_py;

/// A learned model.
#[pyclass(frozen, module = "avguard._native")]
pub(crate) struct Model {
    bytes: Vec<u8>,
    model: Arc<monitor::Model>,
}

impl From<monitor::Model> for Model {
    fn from(model: monitor::Model) -> Model {
        Model {
            bytes: model.to_bytes(),
            model: Arc::new(model),
        }
    }
}

impl From<tools::modelfile::ModelFile> for Model {
    fn from(file: tools::modelfile::ModelFile) -> Model {
        Model {
            bytes: file.bytes,
            model: Arc::new(file.model),
        }
    }
}

#[pymethods]
impl Model {
    /// Reads a model file (the CLI's messages when it cannot be read or is not a model).
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Model> {
        py.detach(|| tools::modelfile::read(&path))
            .map(Model::from)
            .map_err(to_py)
    }

    /// A model from the bytes of a model file.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<Model> {
        py.detach(|| tools::modelfile::decode(data, Path::new("<model bytes>")))
            .map(Model::from)
            .map_err(to_py)
    }

    /// Writes the model file, byte for byte what `avguard learn` writes for the same model.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| tools::modelfile::write_bytes(&path, &self.bytes))
            .map_err(to_py)
    }

    /// The model file's bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.bytes)
    }

    /// Pickling (Ray ships models to workers): rebuilt from the file bytes.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let rebuild = py.get_type::<Model>().getattr("from_bytes")?;
        (rebuild, (PyBytes::new(py, &self.bytes),)).into_pyobject(py)
    }

    /// The monitored properties, in the model's order.
    #[getter]
    fn properties(&self) -> Vec<String> {
        self.model
            .properties()
            .iter()
            .map(|p| p.name().to_owned())
            .collect()
    }

    /// `avguard calibrate` on this model (see `tools::calibration::calibrate_logs`): the calibrated model,
    /// the logs skipped with why, and the properties left uncalibrated with why.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    #[pyo3(signature = (logs, target_false_alarms, confidence, debounce, select, horizon, per_scenario, enforce_target_false_alarms))]
    fn calibrate(
        &self,
        py: Python<'_>,
        logs: Vec<PathBuf>,
        target_false_alarms: f64,
        confidence: f64,
        debounce: Vec<u32>,
        select: Vec<PathBuf>,
        horizon: Option<f64>,
        per_scenario: bool,
        enforce_target_false_alarms: Option<f64>,
    ) -> PyResult<(Model, Vec<(String, String)>, Vec<(String, String)>)> {
        let opts = tools::calibration::CalibrateOptions {
            target_false_alarm: target_false_alarms,
            confidence,
            debounce_frames: debounce,
            horizon_s: horizon,
            per_scenario,
            enforce_target_false_alarm: enforce_target_false_alarms,
        };
        let mut model = (*self.model).clone();
        let done = py
            .detach(|| tools::calibration::calibrate_logs(&mut model, &logs, &select, &opts))
            .map_err(to_py)?;
        let skipped = done
            .errors
            .into_iter()
            .map(|(path, e)| (path.display().to_string(), e))
            .collect();
        let uncalibrated = done
            .results
            .into_iter()
            .filter_map(|r| r.result.err().map(|e| (r.name, e)))
            .collect();
        Ok((Model::from(model), skipped, uncalibrated))
    }

    /// What `avguard info --json` prints, as JSON text.
    fn info_json(&self) -> String {
        tools::cmd::info::json(&self.model)
    }

    /// Per-frame risk of every property over the log at `path`, as the bridge would send it live:
    /// `{"t": [...], PROPERTY: [...], ...}`.
    #[pyo3(signature = (path, horizon=None, conservative=false))]
    fn risk<'py>(
        &self,
        py: Python<'py>,
        path: PathBuf,
        horizon: Option<f64>,
        conservative: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (t, risks) = py
            .detach(|| risk_series(&self.model, &path, horizon, conservative))
            .map_err(to_py)?;
        let out = PyDict::new(py);
        out.set_item("t", t)?;
        for (p, series) in self.model.properties().iter().zip(risks) {
            out.set_item(p.name(), series)?;
        }
        Ok(out)
    }
}

/// Frame times and, per property, the risk at each frame (the series `avguard score` scores).
fn risk_series(
    model: &Arc<monitor::Model>,
    path: &Path,
    horizon: Option<f64>,
    conservative: bool,
) -> anyhow::Result<(Vec<f64>, Vec<Vec<f64>>)> {
    let measure = RiskMeasure::resolve(model, horizon, conservative)?;
    let log = scenarios::log::read_log_isolated(path)?;
    if !model.properties().is_empty() {
        tools::batch::check_log_period(log.meta.frame_period_s, model.frame_period_s())?;
    }
    let mut session =
        Session::new(model, &SessionConfig::default()).context("cannot start a monitor session")?;
    let series = tools::score::run_series(&log.frames, &mut session, &measure, None);
    let t = log.frames.iter().map(|f| f.t).collect();
    Ok((t, series.into_iter().map(|s| s.risk).collect()))
}
