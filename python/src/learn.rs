//! Learning from Python, in the pieces a distributor needs: a [`LearnSetup`] (the law folder's texts and
//! `avguard learn`'s options, small enough to send to every worker), [`Counts`] of some logs (each log
//! recorded once, as `avguard learn` records it), merging counts, and building the model from them: the
//! same model file, byte for byte, as `avguard learn` on the union of the logs.
//!
//! Counts keep one record per log with its path, so merging is exact (a union) and sorts the logs as the
//! CLI does before the model is built.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context};
use clap::ValueEnum;
use monitor::select::data::RunRecord;
use monitor::select::AutoPlan;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use serde::{Deserialize, Serialize};
use tools::cmd::learn::{Abstraction, Args, Smoothing};
use tools::fit::{FitInputs, FitOptions};

use crate::model::Model;
use crate::progress::Progress;
use crate::to_py;

/// Failed logs as `(path, message)`.
type Errors = Vec<(PathBuf, String)>;

/// `avguard learn`'s options, with the CLI's names and defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct LearnOptions {
    alpha: f64,
    smoothing: String,
    epsilon: f64,
    delta: f64,
    horizons: Vec<f64>,
    abstraction: String,
    max_predicates: u32,
    folds: u32,
    seed: u64,
}

impl LearnOptions {
    /// The fit `avguard learn` would run with these options.
    fn fit_options(&self, inputs: &FitInputs) -> anyhow::Result<FitOptions> {
        anyhow::ensure!(
            (1..=12).contains(&self.max_predicates),
            "max_predicates {} is not in 1..=12",
            self.max_predicates
        );
        anyhow::ensure!(
            (2..=20).contains(&self.folds),
            "folds {} is not in 2..=20",
            self.folds
        );
        let args = Args {
            laws: inputs.laws_dir.clone(),
            out: PathBuf::new(),
            properties: None,
            alpha: self.alpha,
            smoothing: Smoothing::from_str(&self.smoothing, false)
                .map_err(|_| anyhow!("smoothing `{}` is not local or all-valid", self.smoothing))?,
            epsilon: self.epsilon,
            delta: self.delta,
            horizons: self.horizons.clone(),
            abstraction: Abstraction::from_str(&self.abstraction, false)
                .map_err(|_| anyhow!("abstraction `{}` is not fixed or auto", self.abstraction))?,
            max_predicates: self.max_predicates,
            folds: self.folds,
            seed: self.seed,
            logs: Vec::new(),
        };
        tools::cmd::learn::fit_options(&args)
    }
}

/// What travels to a worker: the files read once and the options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SetupSpec {
    inputs: FitInputs,
    options: LearnOptions,
}

/// A spec with the plan built from it.
struct Setup {
    spec: SetupSpec,
    fit: FitOptions,
    plan: AutoPlan,
    /// What every record of this plan looks like (`RunRecord::layout`) and how many properties it has.
    layout: (usize, usize),
    n_properties: usize,
}

impl Setup {
    fn new(spec: SetupSpec) -> anyhow::Result<Setup> {
        let fit = spec.options.fit_options(&spec.inputs)?;
        let (laws, properties, _left_out) = spec.inputs.properties(&fit.build)?;
        let n_properties = properties.len();
        let plan = AutoPlan::new(laws, properties, fit.build.clone())?;
        let layout = plan.recorder()?.layout();
        Ok(Setup {
            spec,
            fit,
            plan,
            layout,
            n_properties,
        })
    }

    fn from_bytes(bytes: &[u8]) -> anyhow::Result<Setup> {
        let spec: SetupSpec = postcard::from_bytes(bytes).context("not a learning set-up")?;
        Setup::new(spec)
    }
}

/// The law folder and `avguard learn`'s options, ready to record logs anywhere.
#[pyclass(frozen, module = "avguard._native")]
pub(crate) struct LearnSetup {
    setup: Arc<Setup>,
}

#[pymethods]
impl LearnSetup {
    /// Reads the law folder (and the properties file: `properties`, else `LAWS/properties.toml` when
    /// present) and checks the options, as `avguard learn --laws LAWS ...` does.
    #[new]
    #[pyo3(signature = (
        laws, properties=None, alpha=1.0, smoothing="local".to_owned(), epsilon=0.05, delta=0.05,
        horizons=vec![1.0, 2.0, 3.0, 5.0], abstraction="fixed".to_owned(), max_predicates=12, folds=5, seed=0
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        laws: PathBuf,
        properties: Option<PathBuf>,
        alpha: f64,
        smoothing: String,
        epsilon: f64,
        delta: f64,
        horizons: Vec<f64>,
        abstraction: String,
        max_predicates: u32,
        folds: u32,
        seed: u64,
    ) -> PyResult<LearnSetup> {
        let options = LearnOptions {
            alpha,
            smoothing,
            epsilon,
            delta,
            horizons,
            abstraction,
            max_predicates,
            folds,
            seed,
        };
        py.detach(|| {
            let inputs = FitInputs::read(&laws, properties.as_deref())?;
            Setup::new(SetupSpec { inputs, options })
        })
        .map(|setup| LearnSetup {
            setup: Arc::new(setup),
        })
        .map_err(to_py)
    }

    /// The set-up as bytes, for workers ([`LearnSetup::from_bytes`]).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = postcard::to_stdvec(&self.setup.spec).map_err(|e| to_py(e.into()))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A set-up from [`LearnSetup::to_bytes`].
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<LearnSetup> {
        py.detach(|| Setup::from_bytes(&data))
            .map(|setup| LearnSetup {
                setup: Arc::new(setup),
            })
            .map_err(to_py)
    }

    /// Records `paths` (logs, or folders searched for `*.h5`) in parallel; a log that cannot be read is
    /// kept as an error and the others are learned. `progress` is called with 1 after each log.
    #[pyo3(signature = (paths, progress=None))]
    fn learn(
        &self,
        py: Python<'_>,
        paths: Vec<PathBuf>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Counts> {
        let progress = Progress::new(progress);
        let setup = Arc::clone(&self.setup);
        py.detach(|| {
            let logs = tools::batch::expand_logs(&paths)?;
            let outcomes = tools::fit::record_each(&setup.plan, &logs, || progress.step())?;
            let mut counts = Counts {
                setup: Arc::clone(&setup),
                records: Vec::new(),
                errors: Vec::new(),
                n_logs: logs.len(),
            };
            for (path, outcome) in outcomes {
                match outcome {
                    Ok(record) => counts.records.push((path, record)),
                    Err(e) => counts.errors.push((path, format!("{e:#}"))),
                }
            }
            anyhow::Ok(counts)
        })
        .map_err(to_py)
    }
}

/// What some logs contribute to a model: one record per log learned, and the logs that failed.
#[pyclass(frozen, module = "avguard._native")]
pub(crate) struct Counts {
    setup: Arc<Setup>,
    records: Vec<(PathBuf, RunRecord)>,
    errors: Errors,
    n_logs: usize,
}

/// What [`Counts::to_bytes`] writes.
#[derive(Serialize, Deserialize)]
struct CountsData {
    spec: SetupSpec,
    records: Vec<(PathBuf, RunRecord)>,
    errors: Errors,
    n_logs: usize,
}

impl Counts {
    fn decode(bytes: &[u8]) -> anyhow::Result<Counts> {
        let data: CountsData = postcard::from_bytes(bytes).context("not avguard counts")?;
        let setup = Setup::new(data.spec)?;
        for (path, record) in &data.records {
            if record.layout() != setup.layout || record.first_unsafe.len() > setup.n_properties {
                bail!(
                    "{}: its record does not fit the laws and options of these counts",
                    path.display()
                );
            }
        }
        Ok(Counts {
            setup: Arc::new(setup),
            records: data.records,
            errors: data.errors,
            n_logs: data.n_logs,
        })
    }
}

#[pymethods]
impl Counts {
    /// Logs given.
    #[getter]
    fn n_logs(&self) -> usize {
        self.n_logs
    }

    /// The logs learned, in the order the model learns them.
    #[getter]
    fn logs(&self) -> Vec<String> {
        self.records
            .iter()
            .map(|(p, _)| p.display().to_string())
            .collect()
    }

    /// The logs that could not be learned, with why (the CLI prints them as `skipped LOG: ...`).
    #[getter]
    fn errors(&self) -> Vec<(String, String)> {
        self.errors
            .iter()
            .map(|(p, e)| (p.display().to_string(), e.clone()))
            .collect()
    }

    /// The counts as bytes (for pickling, and so Ray can return them from workers).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let data = CountsData {
            spec: self.setup.spec.clone(),
            records: self.records.clone(),
            errors: self.errors.clone(),
            n_logs: self.n_logs,
        };
        let bytes = py
            .detach(|| postcard::to_stdvec(&data))
            .map_err(|e| to_py(e.into()))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Counts from [`Counts::to_bytes`], checked against their laws and options.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<Counts> {
        py.detach(|| Counts::decode(&data)).map_err(to_py)
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let rebuild = py.get_type::<Counts>().getattr("from_bytes")?;
        (rebuild, (self.to_bytes(py)?,)).into_pyobject(py)
    }

    /// The union of `counts` (learned with the same laws and options, from different logs), plus
    /// `errors` for logs that failed elsewhere (a Ray task that died). Exact: nothing is summed twice.
    #[staticmethod]
    #[pyo3(signature = (counts, errors=Vec::new()))]
    fn merge(counts: Vec<PyRef<'_, Counts>>, errors: Errors) -> PyResult<Counts> {
        let Some(first) = counts.first() else {
            return Err(to_py(anyhow!("no counts to merge")));
        };
        let setup = Arc::clone(&first.setup);
        let mut merged = Counts {
            setup: Arc::clone(&setup),
            records: Vec::new(),
            errors: Vec::new(),
            n_logs: errors.len(),
        };
        merged.errors.extend(errors);
        for c in &counts {
            if c.setup.spec != setup.spec {
                return Err(to_py(anyhow!(
                    "counts learned with different laws or options cannot be merged"
                )));
            }
            merged.records.extend(c.records.iter().cloned());
            merged.errors.extend(c.errors.iter().cloned());
            merged.n_logs += c.n_logs;
        }
        // The CLI learns its logs in sorted order; a log may be counted once.
        merged.records.sort_by(|a, b| a.0.cmp(&b.0));
        merged.errors.sort();
        if let Some(pair) = merged.records.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(to_py(anyhow!(
                "{} is in more than one of the counts",
                pair[0].0.display()
            )));
        }
        Ok(merged)
    }

    /// Builds the model `avguard learn` writes for these logs (smoothing, PAC, tables, and with
    /// `abstraction="auto"` the predicate search).
    fn build(&self, py: Python<'_>) -> PyResult<Model> {
        py.detach(|| {
            if self.records.is_empty() {
                return Err(tools::fit::nothing_learned(self.n_logs, &self.errors));
            }
            let records: Vec<RunRecord> = self.records.iter().map(|(_, r)| r.clone()).collect();
            let (model, _reports) =
                self.setup
                    .plan
                    .build(&records, self.setup.fit.mode, &self.setup.fit.search)?;
            Ok(Model::from(model))
        })
        .map_err(to_py)
    }
}

/// Adds the learning classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LearnSetup>()?;
    m.add_class::<Counts>()?;
    Ok(())
}
