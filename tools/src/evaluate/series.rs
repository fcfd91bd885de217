//! Every log's per-property series under every model, each log read once and in parallel.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use laws::rss::RssParams;
use monitor::{Model, RiskMeasure, Session, SessionConfig};

use crate::rss_tuned;
use crate::score::run_series;
use crate::time_ahead::RunSeries;

/// Per model, per log: what `map` made of the log's per-property series; then per log (run id,
/// scenario); then the failures.
pub(super) type PerModel<T> = (Vec<Vec<T>>, Vec<(String, String)>, crate::batch::Failures);

/// Every log's per-property series under every model, reading each log once.
pub(super) fn series_per_model(
    models: &[Arc<Model>],
    logs: &[PathBuf],
    rss: Option<&RssParams>,
    label: &str,
) -> anyhow::Result<PerModel<Vec<RunSeries>>> {
    map_per_model(models, logs, rss, &[], label, &|_, series, _, _| series)
}

/// Every log's per-property series under every model, reading each log once, each passed to
/// `map(model index, series, (run id, scenario), first frame each of rss_variants finds dangerous)` as
/// soon as it is made, so that only what `map` keeps stays in memory.
pub(super) fn map_per_model<T, F>(
    models: &[Arc<Model>],
    logs: &[PathBuf],
    rss: Option<&RssParams>,
    rss_variants: &[RssParams],
    label: &str,
    map: &F,
) -> anyhow::Result<PerModel<T>>
where
    T: Send,
    F: Fn(usize, Vec<RunSeries>, (&str, &str), &[Option<usize>]) -> T + Sync,
{
    let sessions = models
        .iter()
        .map(|m| Session::new(m, &SessionConfig::default()))
        .collect::<Result<Vec<_>, _>>()
        .context("cannot start a session")?;
    let measure = RiskMeasure::Eventually;
    // The models step at one period (the evaluation's); a log at another is refused, as `score` does.
    let period = models.first().map(|m| m.frame_period_s());
    let progress = crate::progress::bar(logs.len() as u64, label);
    let results = crate::batch::map_logs(
        logs,
        period,
        || sessions.clone(),
        |sessions, log| {
            let id = (log.meta.run_id.as_str(), log.meta.scenario.as_str());
            let first = rss_tuned::first_dangerous(&log.frames, rss_variants);
            let per_model: Vec<T> = sessions
                .iter_mut()
                .enumerate()
                .map(|(m, s)| map(m, run_series(&log.frames, s, &measure, rss), id, &first))
                .collect();
            Ok((per_model, (log.meta.run_id, log.meta.scenario)))
        },
        || progress.inc(1),
    );
    progress.finish_and_clear();
    let mut per_model: Vec<Vec<T>> = (0..models.len()).map(|_| Vec::new()).collect();
    let mut ids = Vec::new();
    let mut errors = Vec::new();
    for (path, r) in results {
        match r {
            Ok((series, id)) => {
                for (m, s) in per_model.iter_mut().zip(series) {
                    m.push(s);
                }
                ids.push(id);
            }
            Err(e) => {
                let why = crate::batch::reason(&path, &e);
                errors.push((path, why));
            }
        }
    }
    Ok((per_model, ids, errors))
}
