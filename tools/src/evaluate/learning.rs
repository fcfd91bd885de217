//! What the learning runs give after the models are learned: the debounce choice's series and the RSS
//! tuning.

use std::path::PathBuf;
use std::sync::Arc;

use laws::rss::RssParams;
use monitor::Model;

use super::series::map_per_model;
use super::EvaluateOptions;
use crate::rss_tuned;
use crate::time_ahead::{RunSeries, FALSE_ALARM_BUDGETS_PCT};

/// The budgets RSS is tuned to, %: [`FALSE_ALARM_BUDGETS_PCT`] and the calibration's target, ascending.
pub(super) fn rss_budgets_pct(target_false_alarm: f64) -> Vec<f64> {
    let mut budgets = FALSE_ALARM_BUDGETS_PCT.to_vec();
    let target = 100.0 * target_false_alarm;
    if !budgets.iter().any(|b| (b - target).abs() < 1e-9) {
        budgets.push(target);
        budgets.sort_by(f64::total_cmp);
    }
    budgets
}

/// Per collision property of the auto model (`collision`, indices) and budget, the RSS variant (of
/// `variants`) the learning runs choose (see [`rss_tuned`]); `per_log[r][k]` is learning run `r` as the
/// tuning sees collision property `k`. The test runs are filled in later.
pub(super) fn tune_rss(
    auto: &Model,
    collision: &[usize],
    variants: &[RssParams],
    per_log: &[Vec<rss_tuned::TuningRun>],
    opts: &EvaluateOptions,
) -> Vec<rss_tuned::Tuned> {
    let mut tuned = Vec::new();
    for (k, &p) in collision.iter().enumerate() {
        let runs: Vec<rss_tuned::TuningRun> = per_log.iter().map(|l| l[k].clone()).collect();
        let fewest = rss_tuned::fewest_false_alarms(&runs);
        let target_pct = 100.0 * opts.calibrate.target_false_alarm;
        for budget_pct in rss_budgets_pct(opts.calibrate.target_false_alarm) {
            let chosen = rss_tuned::choose(&runs, budget_pct / 100.0);
            // The calibrated alarm is compared with RSS as near its target as RSS comes.
            let variant = chosen.or(fewest.filter(|_| (budget_pct - target_pct).abs() < 1e-9));
            let shown = variant.or(fewest).unwrap_or(0);
            tuned.push(rss_tuned::Tuned {
                property: auto.properties()[p].name().to_owned(),
                budget_pct,
                variant,
                within_budget: chosen.is_some(),
                ego_response_s: variant.map(|v| variants[v].ego.response_time_s),
                learning: rss_tuned::summary_of(&runs, shown),
                runs: Vec::new(),
            });
        }
    }
    tuned
}

/// What one reading of the learning logs gives after the models are learned: per model, each run's
/// series (to choose the debounce on; empty when `with_series` is false), and per run how the tuning of
/// RSS sees each of `collision`, the auto model's (index `auto_index`) collision properties, under each
/// of `variants`.
type LearningRead = (Vec<Vec<Vec<RunSeries>>>, Vec<Vec<rss_tuned::TuningRun>>);

/// Reads the learning logs once for both uses of [`LearningRead`], or not at all when neither is wanted;
/// without the series only the auto model steps.
pub(super) fn read_learning_runs(
    shared: &[Arc<Model>],
    auto_index: usize,
    learn_logs: &[PathBuf],
    with_series: bool,
    collision: &[usize],
    variants: &[RssParams],
) -> anyhow::Result<LearningRead> {
    let models: Vec<Arc<Model>> = if with_series {
        shared.to_vec()
    } else if collision.is_empty() {
        return Ok((vec![Vec::new(); shared.len()], Vec::new()));
    } else {
        vec![Arc::clone(&shared[auto_index])]
    };
    let auto_at = if with_series { auto_index } else { 0 };
    let label = match (with_series, collision.is_empty()) {
        (true, true) => "choosing the debounce",
        (true, false) => "choosing the debounce, tuning RSS",
        (false, _) => "tuning RSS's response times",
    };
    let per_run = |m: usize, series: Vec<RunSeries>, _: (&str, &str), first: &[Option<usize>]| {
        let tuning = (m == auto_at).then(|| {
            collision
                .iter()
                .map(|&p| rss_tuned::TuningRun::of(&series[p], first))
                .collect::<Vec<_>>()
        });
        (with_series.then_some(series), tuning)
    };
    // A log that fails here failed when the runs were recorded, and is reported there.
    let (per_model, _, _) = map_per_model(&models, learn_logs, None, variants, label, &per_run)?;
    let mut series = vec![Vec::new(); shared.len()];
    let mut tuning = Vec::new();
    for (m, runs) in per_model.into_iter().enumerate() {
        for (s, t) in runs {
            if let Some(s) = s {
                series[m].push(s);
            }
            if let Some(t) = t {
                tuning.push(t);
            }
        }
    }
    Ok((series, tuning))
}
