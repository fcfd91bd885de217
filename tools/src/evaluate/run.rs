//! The evaluation's pipeline: the split, learning both models, calibrating them, scoring the test runs.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{bail, Context};
use monitor::select::{AbstractionMode, ReactiveRule};
use monitor::{Model, RiskMeasure};
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::learning::{read_learning_runs, tune_rss};
use super::series::{map_per_model, series_per_model};
use super::{BudgetRules, EvaluateOptions, Evaluation, ModelResult};
use crate::calibration::calibrate_model;
use crate::rss_tuned;
use crate::score::calibrated_rule;
use crate::time_ahead::{
    first_alarm_score, score_run_calibrated, threshold_key, AlarmScore, RunScore, RunSeries,
    FALSE_ALARM_BUDGETS_PCT,
};

/// Splits `logs` into (learning, calibration) runs with a seeded shuffle.
pub fn split(logs: &[PathBuf], fraction: f64, seed: u64) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut shuffled = logs.to_vec();
    shuffled.sort();
    shuffled.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    let n_cal = ((shuffled.len() as f64 * fraction).round() as usize).min(shuffled.len());
    let learn = shuffled.split_off(n_cal);
    (learn, shuffled)
}

/// Runs an evaluation (see the module docs).
///
/// # Errors
/// Unreadable laws or properties, no learnable training log, no readable test log.
pub fn evaluate(
    laws_dir: &Path,
    properties_file: Option<&Path>,
    train: &[PathBuf],
    test: &[PathBuf],
    opts: &EvaluateOptions,
) -> anyhow::Result<Evaluation> {
    opts.calibrate.check()?;
    let (learn_logs, cal_logs) = split(train, opts.calibration_fraction, opts.seed);
    if learn_logs.is_empty() {
        bail!("no training log left to learn from after the calibration split");
    }
    let (laws, props, _) = crate::fit::properties(laws_dir, properties_file, &opts.build)?;
    let (plan, recorded, road_users) = crate::fit::record_for_fit(
        laws,
        props,
        &opts.build,
        opts.road_users,
        &learn_logs,
        "reading training",
    )?;
    for words in road_users.words() {
        eprintln!("{words}");
    }
    let (records, mut errors) = (recorded.records, recorded.errors);
    if records.is_empty() {
        bail!("no training log could be read ({} given)", learn_logs.len());
    }
    // The rules written for each budget come with the fixed build: they depend on the pool alone.
    let budgets: Vec<f64> = FALSE_ALARM_BUDGETS_PCT.iter().map(|b| b / 100.0).collect();
    let (fixed, reports) = crate::fit::build_with_progress(
        &plan,
        &records,
        AbstractionMode::Fixed,
        &opts.search,
        &budgets,
    )?;
    let rules_by_budget: Vec<Vec<Option<ReactiveRule>>> =
        reports.into_iter().map(|r| r.budget_rules).collect();
    let (auto, _) =
        crate::fit::build_with_progress(&plan, &records, AbstractionMode::Auto, &opts.search, &[])?;
    let mut models = vec![
        (AbstractionMode::Fixed, fixed),
        (AbstractionMode::Auto, auto),
    ];
    drop(records);
    let shared: Vec<Arc<Model>> = models.iter().map(|(_, m)| Arc::new(m.clone())).collect();
    let (cal_series, cal_ids, cal_errors) =
        series_per_model(&shared, &cal_logs, None, "calibrating")?;
    let cal_kinds: Vec<String> = cal_ids.into_iter().map(|(_, kind)| kind).collect();
    errors.extend(cal_errors);
    let auto_index = models
        .iter()
        .position(|(mode, _)| *mode == AbstractionMode::Auto)
        .context("no auto model")?;
    // One more reading of the learning runs: the debounce is chosen on them (with a single option there
    // is nothing to choose), and RSS is tuned on them for a collision property.
    let collision = rss_tuned::collision_properties(&models[auto_index].1);
    let rss_variants = if collision.is_empty() {
        Vec::new()
    } else {
        rss_tuned::variants(&opts.rss)
    };
    let (selection_series, tuning_runs) = read_learning_runs(
        &shared,
        auto_index,
        &learn_logs,
        opts.calibrate.debounce_frames.len() > 1,
        &collision,
        &rss_variants,
    )?;
    let mut calibrations = Vec::new();
    for (((_, model), series), selection) in
        models.iter_mut().zip(&cal_series).zip(&selection_series)
    {
        calibrations.push(calibrate_model(
            model,
            selection,
            series,
            &cal_kinds,
            &opts.calibrate,
        )?);
    }
    let mut rss_tuned = tune_rss(
        &models[auto_index].1,
        &collision,
        &rss_variants,
        &tuning_runs,
        opts,
    );
    let mut shared: Vec<Arc<Model>> = models.iter().map(|(_, m)| Arc::new(m.clone())).collect();
    // The budget rules ride along as copies of the calibrated auto model (same risk, another rule), so
    // every test log is still read once.
    let auto = models
        .iter()
        .find(|(mode, _)| *mode == AbstractionMode::Auto)
        .map(|(_, m)| m)
        .context("no auto model")?;
    let property_index = |name: &str| auto.properties().iter().position(|p| p.name() == name);
    for j in 0..budgets.len() {
        let copy = auto
            .with_reactive_rules(|p| {
                property_index(p.name())
                    .and_then(|i| rules_by_budget.get(i))
                    .and_then(|rules| rules[j].clone())
            })
            .context("cannot apply a budget's reactive rule")?;
        shared.push(Arc::new(copy));
    }
    let thresholds: Vec<(String, f64)> = opts
        .thresholds
        .iter()
        .map(|&t| (threshold_key(t), t))
        .collect();
    // Each test log is scored as soon as it is read: its series are not kept. Under the auto model, each
    // collision property's runs also get every tuned RSS variant's alarm.
    let score_log = |m: usize,
                     series: Vec<RunSeries>,
                     (run_id, scenario): (&str, &str),
                     first: &[Option<usize>]| {
        let variant_alarms: Vec<Vec<AlarmScore>> = if m == auto_index {
            collision
                .iter()
                .map(|&p| {
                    first
                        .iter()
                        .map(|&f| first_alarm_score(f, &series[p]))
                        .collect()
                })
                .collect()
        } else {
            Vec::new()
        };
        let model = &shared[m];
        let runs = model
            .properties()
            .iter()
            .zip(&series)
            .enumerate()
            .map(|(p, (property, s))| {
                score_run_calibrated(
                    run_id,
                    scenario,
                    property.name(),
                    s,
                    &thresholds,
                    calibrated_rule(model, p, &RiskMeasure::Eventually),
                )
            })
            .collect::<Vec<RunScore>>();
        (runs, variant_alarms)
    };
    let (mut test_scores, ids, test_errors) = map_per_model(
        &shared,
        test,
        Some(&opts.rss),
        &rss_variants,
        "testing",
        &score_log,
    )?;
    if ids.is_empty() {
        bail!(
            "no test log could be read ({} given){}",
            test.len(),
            crate::batch::first_failure(&test_errors)
        );
    }
    errors.extend(test_errors);
    for t in &mut rss_tuned {
        let (Some(v), Some(k)) = (
            t.variant,
            collision
                .iter()
                .position(|&p| models[auto_index].1.properties()[p].name() == t.property),
        ) else {
            continue;
        };
        let p = collision[k];
        t.runs = test_scores[auto_index]
            .iter()
            .map(|(runs, variants)| {
                let mut r = runs[p].clone();
                r.rss = Some(variants[k][v]);
                r
            })
            .collect();
    }
    let budget_scores = test_scores.split_off(models.len());
    let budget_rules = budgets
        .iter()
        .zip(budget_scores)
        .zip(&shared[models.len()..])
        .map(|((b, scores), arc)| BudgetRules {
            budget_pct: 100.0 * b,
            model: (**arc).clone(),
            runs: scores.into_iter().flat_map(|(runs, _)| runs).collect(),
        })
        .collect();
    let results = models
        .into_iter()
        .zip(calibrations)
        .zip(test_scores)
        .map(|(((mode, model), calibrations), scores)| {
            let runs = scores.into_iter().flat_map(|(runs, _)| runs).collect();
            ModelResult {
                mode,
                model,
                calibrations,
                runs,
            }
        })
        .collect();
    Ok(Evaluation {
        n_learn: learn_logs.len(),
        n_calibrate: cal_logs.len(),
        n_test: ids.len(),
        per_scenario: opts.calibrate.per_scenario,
        thresholds,
        models: results,
        budget_rules,
        rss_tuned,
        errors,
        comparisons: OnceLock::new(),
        auto: OnceLock::new(),
    })
}
