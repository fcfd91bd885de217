//! Scoring from Python: [`Scorer`] scores single logs (in this process, or on a Ray worker) and
//! [`ScoreJob`] is one whole `avguard score` run, whose results may be made elsewhere.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rayon::prelude::*;

use tools::rss_options::RssOptions;

use crate::progress::Progress;
use crate::to_py;

/// Failed logs as `(name, message)`, the way `score.json` lists them.
type Errors = Vec<(String, String)>;

/// The logs that `paths` (files, or folders) stand for, sorted, as the CLI expands `LOG_OR_DIR...`:
/// with `records`, folders are searched for HDF5 logs and Cyber records (`avguard score`), else for
/// HDF5 logs only (`avguard learn`).
#[pyfunction]
#[pyo3(signature = (paths, records=true))]
pub(crate) fn expand_logs(paths: Vec<PathBuf>, records: bool) -> PyResult<Vec<PathBuf>> {
    if records {
        tools::batch::expand_logs_and_records(&paths).map_err(to_py)
    } else {
        tools::batch::expand_logs(&paths).map_err(to_py)
    }
}

/// Scores single logs against one model with fixed thresholds and risk measure.
#[pyclass(frozen, module = "avguard._native")]
pub(crate) struct Scorer {
    inner: tools::score::Scorer,
}

#[pymethods]
impl Scorer {
    /// A scorer for the model file's bytes; `source` names the model in error messages, `map` is the
    /// HD map for `.record` inputs (`--map`).
    #[new]
    #[pyo3(signature = (model_bytes, thresholds, horizon=None, conservative=false, source=None, map=None))]
    fn new(
        py: Python<'_>,
        model_bytes: Vec<u8>,
        thresholds: Vec<f64>,
        horizon: Option<f64>,
        conservative: bool,
        source: Option<PathBuf>,
        map: Option<PathBuf>,
    ) -> PyResult<Scorer> {
        let source = source.unwrap_or_else(|| PathBuf::from("<model bytes>"));
        let inner = py
            .detach(|| {
                tools::score::Scorer::new(
                    model_bytes,
                    &source,
                    &thresholds,
                    horizon,
                    conservative,
                    &RssOptions::default(),
                )?
                .with_map(map.as_deref())
            })
            .map_err(to_py)?;
        Ok(Scorer { inner })
    }

    /// One log's result in the form of a score cache entry (JSON bytes); raises on a bad log.
    fn score<'py>(&self, py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py
            .detach(|| tools::score::result_bytes(&self.inner.score(&path)?))
            .map_err(to_py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Scores `paths` in parallel on this machine. Returns one JSON text per log (`None` where it failed)
    /// and the failures; `progress` is called with 1 after each log.
    #[pyo3(signature = (paths, progress=None))]
    fn score_all(
        &self,
        py: Python<'_>,
        paths: Vec<PathBuf>,
        progress: Option<Py<PyAny>>,
    ) -> (Vec<Option<String>>, Errors) {
        let progress = Progress::new(progress);
        py.detach(|| {
            let outcomes: Vec<Result<String, (String, String)>> = paths
                .par_iter()
                .map(|path| {
                    let outcome = self
                        .inner
                        .score(path)
                        .and_then(|r| Ok(String::from_utf8(tools::score::result_bytes(&r)?)?))
                        .map_err(|e| {
                            (
                                tools::score::error_name(path),
                                tools::batch::reason(path, &e),
                            )
                        });
                    progress.step();
                    outcome
                })
                .collect();
            let mut results = Vec::with_capacity(outcomes.len());
            let mut errors = Vec::new();
            for outcome in outcomes {
                match outcome {
                    Ok(json) => results.push(Some(json)),
                    Err(e) => {
                        results.push(None);
                        errors.push(e);
                    }
                }
            }
            errors.sort();
            (results, errors)
        })
    }

    /// The settings `score.json` records (model hash, thresholds, horizon, conservative) as JSON.
    fn settings_json(&self) -> PyResult<String> {
        serde_json::to_string(self.inner.settings()).map_err(|e| to_py(e.into()))
    }
}

/// One `avguard score` run: the output folder is ready and the logs to score are known.
#[pyclass(frozen, module = "avguard._native")]
pub(crate) struct ScoreJob {
    job: tools::score::Job,
}

#[pymethods]
impl ScoreJob {
    /// Prepares a run as `avguard score --model MODEL --out OUT [--force] [--map MAP] LOGS...` does.
    #[new]
    #[pyo3(signature = (model_path, out, logs, thresholds, horizon=None, conservative=false, force=false, map=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        model_path: PathBuf,
        out: PathBuf,
        logs: Vec<PathBuf>,
        thresholds: Vec<f64>,
        horizon: Option<f64>,
        conservative: bool,
        force: bool,
        map: Option<PathBuf>,
    ) -> PyResult<ScoreJob> {
        let spec = tools::score::JobSpec {
            model_path,
            thresholds,
            horizon_s: horizon,
            conservative,
            rss: RssOptions::default(),
            out,
            force,
            shard: None,
            logs,
            map,
        };
        let job = py
            .detach(|| tools::score::Job::prepare(&spec))
            .map_err(to_py)?;
        Ok(ScoreJob { job })
    }

    /// Every log of the run, sorted.
    #[getter]
    fn logs(&self) -> Vec<PathBuf> {
        self.job.logs().to_vec()
    }

    /// The logs still to score (the others have results in the output folder).
    #[getter]
    fn todo(&self) -> Vec<PathBuf> {
        self.job.todo().to_vec()
    }

    /// How many logs already had results.
    #[getter]
    fn n_cached(&self) -> usize {
        self.job.n_cached()
    }

    /// Stores a result made by `Scorer.score` (possibly on another machine) for `path`.
    fn store(&self, py: Python<'_>, path: PathBuf, result: Vec<u8>) -> PyResult<()> {
        py.detach(|| self.job.store_bytes(&path, &result))
            .map_err(to_py)
    }

    /// Scores and stores the remaining logs here, in parallel; returns the failures.
    #[pyo3(signature = (progress=None))]
    fn score_here(&self, py: Python<'_>, progress: Option<Py<PyAny>>) -> Errors {
        let progress = Progress::new(progress);
        py.detach(|| self.job.score_here(|| progress.step()))
    }

    /// Writes `score.json`, `report.md`, `report.html` and `states.json`. Returns every log's result as
    /// JSON, the failures, and, when some log failed, the message with which the CLI fails.
    #[pyo3(signature = (errors, plot_runs=3))]
    fn finish(
        &self,
        py: Python<'_>,
        errors: Errors,
        plot_runs: usize,
    ) -> PyResult<(Vec<String>, Errors, Option<String>)> {
        py.detach(|| {
            let finished = self.job.finish(errors, plot_runs)?;
            let results = finished
                .results
                .iter()
                .map(|r| Ok(String::from_utf8(tools::score::result_bytes(r)?)?))
                .collect::<anyhow::Result<Vec<String>>>()?;
            let failure = finished.check().err().map(|e| format!("{e:#}"));
            Ok((results, finished.errors, failure))
        })
        .map_err(to_py)
    }
}
