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
use clap::Parser;
use laws::geometry::latency::ContactProfile;
use monitor::select::data::RunRecord;
use monitor::select::AutoPlan;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use serde::{Deserialize, Serialize};
use tools::cmd::learn::Args;
use tools::fit::{FitInputs, FitOptions};

use crate::model::Model;
use crate::progress::Progress;
use crate::to_py;

/// Failed logs as `(path, message)`.
type Errors = Vec<(PathBuf, String)>;

/// `avguard learn`'s options as its flags (`("max_predicates", "8")` is `--max-predicates 8`): parsed by
/// the CLI's own parser, so the defaults, the checks and their messages are the CLI's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct LearnOptions {
    flags: Vec<(String, String)>,
}

/// `avguard learn`'s arguments, for parsing them outside the binary.
#[derive(clap::Parser)]
#[command(name = "avguard learn", no_binary_name = true)]
struct LearnCommand {
    #[command(flatten)]
    args: Args,
}

impl LearnOptions {
    /// The fit `avguard learn --laws DIR FLAGS...` would run.
    fn fit_options(&self, inputs: &FitInputs) -> anyhow::Result<FitOptions> {
        let mut argv: Vec<String> = vec![
            "--laws".into(),
            inputs.laws_dir.display().to_string(),
            "--out".into(),
            "unused".into(),
        ];
        for (name, value) in &self.flags {
            argv.push(format!("--{}", name.replace('_', "-")));
            argv.push(value.clone());
        }
        argv.push("unused.h5".into());
        let command = LearnCommand::try_parse_from(argv).map_err(crate::flag_error)?;
        // Without `frame_period_s` the set-up steps at the schema's default; `learn_counts` and
        // `ray.learn` pass the logs' own period (`frame_period`), as `avguard learn` reads it.
        let period = command
            .args
            .frame_period_s
            .unwrap_or(monitor::BuildConfig::default().frame_period_s);
        tools::cmd::learn::fit_options(&command.args, period)
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
    /// present) and checks `options` (`avguard learn`'s flags without dashes, values as text), as
    /// `avguard learn --laws LAWS ...` does.
    #[new]
    #[pyo3(signature = (laws, properties=None, options=Vec::new()))]
    fn new(
        py: Python<'_>,
        laws: PathBuf,
        properties: Option<PathBuf>,
        options: Vec<(String, String)>,
    ) -> PyResult<LearnSetup> {
        let options = LearnOptions { flags: options };
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
                    Ok((record, contact)) => counts.records.push((path, record, contact)),
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
    records: Vec<LearnedLog>,
    errors: Errors,
    n_logs: usize,
}

/// One log learned: its path, its record, and the contact profile of its first collision frame (what
/// `avguard learn` reads the road users' latency from, [`laws::geometry::latency`]).
type LearnedLog = (PathBuf, RunRecord, Option<ContactProfile>);

/// What [`Counts::to_bytes`] writes.
#[derive(Serialize, Deserialize)]
struct CountsData {
    spec: SetupSpec,
    records: Vec<LearnedLog>,
    errors: Errors,
    n_logs: usize,
}

impl Counts {
    /// The latency estimate that makes `avguard learn` record these logs again: only under
    /// `perception_latency="auto"`, and only when the collisions show the road users late.
    fn late_estimate(&self) -> Option<laws::geometry::latency::LatencyEstimate> {
        let estimate = laws::geometry::latency::estimate(&self.contacts());
        self.setup.fit.latency.reading_to_apply(estimate)
    }

    /// The contact profiles of the runs with a collision.
    fn contacts(&self) -> Vec<ContactProfile> {
        self.records.iter().filter_map(|(_, _, c)| *c).collect()
    }

    fn decode(bytes: &[u8]) -> anyhow::Result<Counts> {
        let data: CountsData = postcard::from_bytes(bytes).context("not avguard counts")?;
        let setup = Setup::new(data.spec)?;
        for (path, record, _) in &data.records {
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
            .map(|(p, _, _)| p.display().to_string())
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

    /// When these counts were recorded under `perception_latency="auto"` and their collisions show the
    /// road users reported late (as `avguard learn` reads them, [`laws::geometry::latency`]): the lag
    /// `avguard learn` would record the logs again with, and what it says then on stderr. Else `None`:
    /// the counts build as they are.
    #[getter]
    fn late(&self) -> Option<(f64, String)> {
        let e = self.late_estimate()?;
        tools::fit::latency_words(Some(&e), e.lag_s).map(|words| (e.lag_s, words))
    }

    /// When the collisions of these counts disagree with the logged positions in a way no latency
    /// explains (fewer than four in five first collision frames touch as logged, and no lag reads as
    /// late) and the road users are kept as logged: the note `avguard learn` prints. Else `None`.
    #[getter]
    fn contacts_note(&self) -> Option<String> {
        if self.setup.fit.latency.applied_s() > 0.0 {
            return None;
        }
        laws::geometry::latency::estimate(&self.contacts())
            .filter(|e| e.contacts_disagree())
            .map(|e| tools::fit::disagreeing_words(&e))
    }

    /// Builds the model `avguard learn` writes for these logs (smoothing, PAC, tables, and with
    /// `abstraction="auto"` the predicate search).
    fn build(&self, py: Python<'_>) -> PyResult<Model> {
        py.detach(|| {
            if self.records.is_empty() {
                return Err(tools::fit::nothing_learned(self.n_logs, &self.errors));
            }
            if let Some(e) = self.late_estimate() {
                // `avguard learn` records the logs again with the road users moved ahead; counts made
                // in one pass, wherever their logs were, cannot: say what to give instead
                // (`avguard.learn` and `avguard.ray.learn` do it).
                bail!(
                    "{}; `avguard learn` would learn them moved ahead, which records the logs again: \
                     learn these counts again with perception_latency={:.2} (`avguard.learn` and \
                     `avguard.ray.learn` do), or perception_latency=0 to keep them as logged",
                    tools::fit::late_words(&e),
                    e.lag_s
                );
            }
            let records: Vec<RunRecord> = self.records.iter().map(|(_, r, _)| r.clone()).collect();
            let (model, _reports) =
                self.setup
                    .plan
                    .build(&records, self.setup.fit.mode, &self.setup.fit.search)?;
            Ok(Model::from(model))
        })
        .map_err(to_py)
    }
}

/// The frame period `avguard learn` steps at when none is given: that of the first of `paths` (logs, in
/// path order) that reads, else the schema's default of 0.1 s.
#[pyfunction]
fn frame_period(py: Python<'_>, paths: Vec<PathBuf>) -> f64 {
    py.detach(|| tools::fit::frame_period(None, &paths).0)
}

/// Adds the learning classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(frame_period, m)?)?;
    m.add_class::<LearnSetup>()?;
    m.add_class::<Counts>()?;
    Ok(())
}
