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
use laws::perception::{RoadUserReading, RunReading, TrackSteps, VelocityFlips};
use monitor::select::data::RunRecord;
use monitor::select::AutoPlan;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use serde::{Deserialize, Serialize};
use tools::cmd::learn::Args;
use tools::fit::{FitInputs, FitOptions, RoadUserDecision};

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
            let window_s = setup.fit.road_users.reading_window_s();
            let outcomes =
                tools::fit::record_each(&setup.plan, &logs, window_s, || progress.step())?;
            let mut counts = Counts {
                setup: Arc::clone(&setup),
                records: Vec::new(),
                errors: Vec::new(),
                n_logs: logs.len(),
            };
            for (path, outcome) in outcomes {
                match outcome {
                    Ok((record, reading)) => {
                        counts
                            .records
                            .push((path, record, StoredReading::from(&reading)))
                    }
                    Err(e) => {
                        let why = tools::batch::reason(&path, &e);
                        counts.errors.push((path, why));
                    }
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

/// One log learned: its path, its record, and its road users' reading (what `avguard learn` decides
/// how to read them from, [`laws::perception`]).
type LearnedLog = (PathBuf, RunRecord, StoredReading);

/// A [`RunReading`] as counts store it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct StoredReading {
    steps: u64,
    jumps: u64,
    pairs: u64,
    flips: u64,
    contact: Option<ContactProfile>,
    contact_smoothed: Option<ContactProfile>,
    contact_smoothed_velocities: Option<ContactProfile>,
}

impl From<&RunReading> for StoredReading {
    fn from(r: &RunReading) -> StoredReading {
        StoredReading {
            steps: r.steps.steps,
            jumps: r.steps.jumps,
            pairs: r.flips.pairs,
            flips: r.flips.flips,
            contact: r.contact,
            contact_smoothed: r.contact_smoothed,
            contact_smoothed_velocities: r.contact_smoothed_velocities,
        }
    }
}

impl From<&StoredReading> for RunReading {
    fn from(r: &StoredReading) -> RunReading {
        RunReading {
            steps: TrackSteps {
                steps: r.steps,
                jumps: r.jumps,
            },
            flips: VelocityFlips {
                pairs: r.pairs,
                flips: r.flips,
            },
            contact: r.contact,
            contact_smoothed: r.contact_smoothed,
            contact_smoothed_velocities: r.contact_smoothed_velocities,
        }
    }
}

/// What [`Counts::to_bytes`] writes.
#[derive(Serialize, Deserialize)]
struct CountsData {
    spec: SetupSpec,
    records: Vec<LearnedLog>,
    errors: Errors,
    n_logs: usize,
}

impl Counts {
    /// How `avguard learn` reads these logs' road users, decided on their reading
    /// ([`tools::fit::RoadUserOptions::decide`]).
    fn decision(&self) -> RoadUserDecision {
        let mut reading = RoadUserReading::default();
        for (_, _, r) in &self.records {
            reading.add(&RunReading::from(r));
        }
        self.setup.fit.road_users.decide(&reading)
    }

    /// The decision when `avguard learn` would record these logs again, read otherwise than these
    /// counts were (under `auto`, road users that jump or read as late); `None` when the counts build as
    /// they are.
    fn again_decision(&self) -> Option<RoadUserDecision> {
        let d = self.decision();
        (d.correction != self.setup.fit.build.road_users).then_some(d)
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

    /// When `avguard learn` would record these logs again with their road users read otherwise (under
    /// `auto`: smoothed, because they jump against their speeds, or moved ahead, because their
    /// collisions show them late; [`laws::perception`]): the options it would record them with, as
    /// `{"road_user_smoothing": "0.7", "road_user_velocities": "as-logged", "perception_latency": "0.41"}`,
    /// and what it says then on stderr
    /// (one line per correction). Else `None`: the counts build as they are.
    #[getter]
    fn again(&self) -> Option<(Vec<(String, String)>, String)> {
        let d = self.again_decision()?;
        let options = vec![
            (
                "road_user_smoothing".to_string(),
                format!("{:?}", d.correction.smoothing_s),
            ),
            (
                "road_user_velocities".to_string(),
                if d.correction.smooth_velocities {
                    "smoothed"
                } else {
                    "as-logged"
                }
                .to_string(),
            ),
            (
                "perception_latency".to_string(),
                format!("{:?}", d.correction.latency_s),
            ),
        ];
        Some((options, d.words().join("\n")))
    }

    /// When `avguard learn` would record these logs again with the road users moved ahead by a latency
    /// read off their collisions: that lag, and what it says of the latency on stderr. Else `None`.
    #[getter]
    fn late(&self) -> Option<(f64, String)> {
        let d = self.again_decision()?;
        let lag = d.correction.latency_s;
        let e = d
            .latency
            .filter(|e| e.road_users_late() && e.lag_s == lag)?;
        tools::fit::latency_words(Some(&e), lag, d.correction.smoothing_s > 0.0)
            .map(|words| (lag, words))
    }

    /// When the collisions of these counts disagree with the logged positions in a way no latency
    /// explains (fewer than four in five first collision frames touch as logged, and no lag reads as
    /// late) and the road users are kept as logged: the note `avguard learn` prints. Else `None`.
    #[getter]
    fn contacts_note(&self) -> Option<String> {
        let d = self.decision();
        if d.correction.latency_s > 0.0 {
            return None;
        }
        d.latency
            .filter(|e| e.contacts_disagree())
            .map(|e| tools::fit::disagreeing_words(&e, d.correction.smoothing_s > 0.0))
    }

    /// Builds the model `avguard learn` writes for these logs (smoothing, PAC, tables, and with
    /// `abstraction="auto"` the predicate search).
    fn build(&self, py: Python<'_>) -> PyResult<Model> {
        py.detach(|| {
            if self.records.is_empty() {
                return Err(tools::fit::nothing_learned(self.n_logs, &self.errors));
            }
            if let Some(d) = self.again_decision() {
                // `avguard learn` records the logs again with the road users read otherwise; counts
                // made in one pass, wherever their logs were, cannot: say what to give instead
                // (`avguard.learn` and `avguard.ray.learn` do it).
                bail!(
                    "{}; `avguard learn` would learn them read so, which records the logs again: \
                     learn these counts again with road_user_smoothing={:?}, \
                     road_user_velocities=\"{}\" and perception_latency={:.2} (`avguard.learn` and \
                     `avguard.ray.learn` do), or 0 to keep them as logged",
                    d.words().join("; "),
                    d.correction.smoothing_s,
                    if d.correction.smooth_velocities {
                        "smoothed"
                    } else {
                        "as-logged"
                    },
                    d.correction.latency_s
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
