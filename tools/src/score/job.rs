//! A scoring run in the phases a distributor needs: [`Job::prepare`] (check the request, read the model,
//! find the logs, ready the output folder), [`Scorer::score`] per log (anywhere: a rayon thread here, a
//! Ray worker elsewhere), [`Job::store`] of each result, and [`Job::finish`], which writes `score.json` and
//! the reports from the cache exactly as `avguard score` does. The CLI and the Python package both go
//! through here, so their outputs are the same bytes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::bail;
use laws::rss::RssParams;
use monitor::{Model, RiskMeasure};
use rayon::prelude::*;

use super::{FileResult, Settings};
use crate::batch::{expand_logs_and_records, Shard};
use crate::mapfile::LoadedMap;
use crate::modelfile::ModelFile;
use crate::rss_options::RssOptions;

/// What `avguard score` is asked to do.
#[derive(Debug, Clone)]
pub struct JobSpec {
    /// The model file.
    pub model_path: PathBuf,
    /// Alarm thresholds θ, each in (0, 1].
    pub thresholds: Vec<f64>,
    /// Score P(unsafe within this many seconds) instead of P(eventually unsafe).
    pub horizon_s: Option<f64>,
    /// Compare θ with the PAC upper bound.
    pub conservative: bool,
    /// The RSS comparator's parameters.
    pub rss: RssOptions,
    /// The output folder.
    pub out: PathBuf,
    /// Score logs again although the output folder holds their results.
    pub force: bool,
    /// Only this share of the logs.
    pub shard: Option<Shard>,
    /// Logs (HDF5 or Cyber records), or folders searched for them.
    pub logs: Vec<PathBuf>,
    /// Apollo HD map for the road fields of `.record` inputs.
    pub map: Option<PathBuf>,
}

/// Scores single logs against one model; all a worker needs (no output folder). Cheap to clone.
#[derive(Debug, Clone)]
pub struct Scorer {
    model: Arc<Model>,
    measure: RiskMeasure,
    thresholds: Vec<(String, f64)>,
    settings: Settings,
    rss: RssParams,
    map: Option<LoadedMap>,
}

impl Scorer {
    /// A scorer for the model whose file holds `model_bytes`; `source` names that file in errors.
    pub fn new(
        model_bytes: Vec<u8>,
        source: &Path,
        thresholds: &[f64],
        horizon_s: Option<f64>,
        conservative: bool,
        rss: &RssOptions,
    ) -> anyhow::Result<Scorer> {
        check_thresholds(thresholds)?;
        let ModelFile { bytes, model } = crate::modelfile::decode(model_bytes, source)?;
        let model = Arc::new(model);
        let measure = RiskMeasure::resolve(&model, horizon_s, conservative)?;
        let rss_params = rss.params()?;
        let mut settings = Settings::new(&bytes, thresholds, horizon_s, conservative);
        settings.rss = rss.describe();
        settings.frame_share = model.mixes_frame_share();
        settings.forest = model.mixes_forest();
        for (p, property) in model.properties().iter().enumerate() {
            if let Some(rule) = property.reactive_rule() {
                settings
                    .rules
                    .insert(property.name().to_owned(), rule.text());
            }
            if let Some(t) = property.rss_tuning() {
                settings
                    .rss_tuned
                    .insert(property.name().to_owned(), t.response_scale);
            }
            if let Some(c) = monitor::calibrate::calibration_for_measure(&model, p, &measure) {
                let name = property.name().to_owned();
                settings
                    .calibrated
                    .insert(name.clone(), (c.theta, c.debounce_frames));
                settings
                    .calibration_targets
                    .insert(name, (c.target_false_alarm, c.confidence));
            }
        }
        let thresholds = settings.threshold_pairs();
        Ok(Scorer {
            model,
            measure,
            thresholds,
            settings,
            rss: rss_params,
            map: None,
        })
    }

    /// A scorer for the model file at `path`.
    pub fn load(
        path: &Path,
        thresholds: &[f64],
        horizon_s: Option<f64>,
        conservative: bool,
        rss: &RssOptions,
    ) -> anyhow::Result<Scorer> {
        let bytes = crate::modelfile::read_bytes(path)?;
        Scorer::new(bytes, path, thresholds, horizon_s, conservative, rss)
    }

    /// Reads `.record` inputs with the road fields of the HD map at `path` (recorded in the settings).
    pub fn with_map(mut self, path: Option<&Path>) -> anyhow::Result<Scorer> {
        if let Some(path) = path {
            let (map, bytes) = crate::mapfile::load_file(path)?;
            self.map = Some(map);
            self.settings = self.settings.with_map(&bytes);
        } else {
            self.map = None;
        }
        Ok(self)
    }

    /// Scores one log.
    pub fn score(&self, log: &Path) -> anyhow::Result<FileResult> {
        super::score_file(
            log,
            &self.model,
            &self.measure,
            &self.thresholds,
            self.map.as_ref(),
            Some(&self.rss),
        )
    }

    /// The model.
    pub fn model(&self) -> &Arc<Model> {
        &self.model
    }

    /// The risk measure scored.
    pub fn measure(&self) -> &RiskMeasure {
        &self.measure
    }

    /// The settings recorded in `score.json`.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }
}

/// A prepared scoring run: the scorer, the logs and which of them still need scoring.
#[derive(Debug)]
pub struct Job {
    scorer: Scorer,
    out: PathBuf,
    logs: Vec<PathBuf>,
    todo: Vec<PathBuf>,
}

/// What a finished run wrote.
#[derive(Debug)]
pub struct Finished {
    /// Every log's result (scored now or earlier), in log order.
    pub results: Vec<FileResult>,
    /// Logs that failed: display name and message, sorted.
    pub errors: Vec<(String, String)>,
    /// Logs of the run.
    pub n_logs: usize,
    /// Per calibrated property, its calibration checked on these runs.
    pub calibration_checks: Vec<(String, monitor::calibrate::CalibrationCheck)>,
    /// Per property, its violating and safe runs and the curve at the false-alarm budgets.
    pub budgets: Vec<(String, (usize, usize), Vec<crate::time_ahead::BudgetPoint>)>,
}

impl Finished {
    /// The run as one result: an error naming how many logs failed when any did (each is listed in
    /// `score.json`).
    pub fn check(&self) -> anyhow::Result<()> {
        if self.errors.is_empty() {
            return Ok(());
        }
        bail!(
            "{} of {} logs could not be scored (listed above and in score.json)",
            self.errors.len(),
            self.n_logs
        )
    }
}

impl Job {
    /// Checks the request, reads the model, finds the logs and readies the output folder.
    pub fn prepare(spec: &JobSpec) -> anyhow::Result<Job> {
        let scorer = Scorer::load(
            &spec.model_path,
            &spec.thresholds,
            spec.horizon_s,
            spec.conservative,
            &spec.rss,
        )?
        .with_map(spec.map.as_deref())?;
        let mut logs = expand_logs_and_records(&spec.logs)?;
        if let Some(shard) = spec.shard {
            logs.retain(|p| shard.contains(p));
        }
        check_unique_names(&logs)?;
        super::prepare_out(&spec.out, scorer.settings(), spec.force)?;
        let todo = logs
            .iter()
            .filter(|p| spec.force || !super::cached(&spec.out, p))
            .cloned()
            .collect();
        Ok(Job {
            scorer,
            out: spec.out.clone(),
            logs,
            todo,
        })
    }

    /// The scorer.
    pub fn scorer(&self) -> &Scorer {
        &self.scorer
    }

    /// Every log of the run, sorted.
    pub fn logs(&self) -> &[PathBuf] {
        &self.logs
    }

    /// The logs that still need scoring.
    pub fn todo(&self) -> &[PathBuf] {
        &self.todo
    }

    /// Logs whose results are already in the output folder.
    pub fn n_cached(&self) -> usize {
        self.logs.len() - self.todo.len()
    }

    /// Caches one log's result in the output folder.
    pub fn store(&self, log: &Path, result: &FileResult) -> anyhow::Result<()> {
        super::store(&self.out, log, result)
    }

    /// Caches one log's result scored elsewhere, as [`super::result_bytes`] made it.
    pub fn store_bytes(&self, log: &Path, bytes: &[u8]) -> anyhow::Result<()> {
        super::store_bytes(&self.out, log, bytes)
    }

    /// Scores and stores every log still to do on this machine (rayon), calling `on_done` after each.
    /// Returns the failures, as [`Job::finish`] takes them.
    pub fn score_here(&self, on_done: impl Fn() + Sync) -> Vec<(String, String)> {
        let mut errors: Vec<(String, String)> = self
            .todo
            .par_iter()
            .filter_map(|path| {
                let result = self.scorer.score(path).and_then(|r| self.store(path, &r));
                on_done();
                result
                    .err()
                    .map(|e| (error_name(path), crate::batch::reason(path, &e)))
            })
            .collect();
        errors.sort();
        errors
    }

    /// Writes `score.json`, `report.md`, `report.html` and `states.json` from every cached result.
    /// `errors` are the logs that failed ([`Job::score_here`], or a distributor's equivalent).
    pub fn finish(
        &self,
        mut errors: Vec<(String, String)>,
        plot_runs: usize,
    ) -> anyhow::Result<Finished> {
        errors.sort();
        let results: Vec<FileResult> = self
            .logs
            .iter()
            .filter_map(|p| super::load_cached(&self.out, p).transpose())
            .collect::<anyhow::Result<_>>()?;
        let written = super::write_outputs(
            &self.out,
            self.scorer.settings(),
            &results,
            &errors,
            Some(self.scorer.model()),
            plot_runs,
        )?;
        Ok(Finished {
            results,
            errors,
            n_logs: self.logs.len(),
            calibration_checks: written.calibration_checks,
            budgets: written.budgets,
        })
    }
}

fn check_thresholds(thresholds: &[f64]) -> anyhow::Result<()> {
    for &theta in thresholds {
        if !(theta > 0.0 && theta <= 1.0) {
            bail!("threshold {theta} is outside (0, 1]");
        }
    }
    Ok(())
}

/// How a failed log is named in messages and `score.json`.
pub fn error_name(path: &Path) -> String {
    path.display().to_string()
}

/// Cached results are keyed by file name, so two logs with the same name cannot be scored together.
fn check_unique_names(logs: &[PathBuf]) -> anyhow::Result<()> {
    let mut names: Vec<(&std::ffi::OsStr, &PathBuf)> = logs
        .iter()
        .filter_map(|p| p.file_name().map(|n| (n, p)))
        .collect();
    names.sort();
    for pair in names.windows(2) {
        if pair[0].0 == pair[1].0 {
            bail!(
                "two logs share the file name {}: {} and {}",
                pair[0].0.to_string_lossy(),
                pair[0].1.display(),
                pair[1].1.display()
            );
        }
    }
    Ok(())
}
