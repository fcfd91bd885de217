//! `avguard evaluate`: the whole method judged on held-out runs, beside its comparators.
//!
//! The training logs are split (seeded) into learning and calibration runs; the learning runs give two
//! models, one with the declared predicates (`fixed`) and one with learned ones (`auto`), each with its
//! reactive comparator rule; each model is calibrated on the calibration runs (θ, with the full
//! confidence), its debounce chosen on the learning runs (disjoint from the calibration runs, so the
//! choice costs the bound nothing); then every test log is
//! scored once per model, with the RSS comparator and the law's reactive baseline measured on the same
//! runs. Nothing is tuned on the test runs.
//!
//! The best reactive rule stored in the auto model is one operating point (chosen for
//! `mean utility − false-alarm fraction`). A safety engineer working to a false-alarm budget would write
//! the rule for that budget, so for each of the criterion's budgets the best rule within it on the
//! learning runs ([`AutoPlan::build_with_budget_rules`]) is scored on the test runs too, and the auto curve is
//! compared with each at that rule's own test false-alarm rate.
//!
//! RSS with CARLA's parameters is one cautious operating point; for a collision property it is also tuned
//! to each budget on the learning runs (its response times shortened until it keeps within it,
//! [`rss_tuned`]) and scored on the test runs beside the curve, and the calibrated alarm is compared with
//! RSS tuned to the calibration's own target.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{bail, Context};
use laws::rss::RssParams;
use monitor::select::{AbstractionMode, AutoPlan, ReactiveRule, SearchConfig};
use monitor::{BuildConfig, Model, RiskMeasure, Session, SessionConfig};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rayon::prelude::*;

use crate::calibration::{calibrate_model, CalibrateOptions, PropertyCalibration};
use crate::report::{run_by_run_words, verdict};
use crate::rss_tuned;
use crate::score::{calibrated_rule, run_series};
use crate::time_ahead::{
    at_budgets, calibrated_is_earlier, calibration_check, dominance, first_alarm_score,
    score_run_calibrated, summarise, threshold_key, AlarmScore, BudgetPoint, Comparison,
    CurvePoint, Dominance, PairedRun, RunScore, RunSeries, Summary, FALSE_ALARM_BUDGETS_PCT,
};

/// Properties with fewer violating test runs are left out of [`Evaluation::dominated_pairs`] (issue #9's
/// targets count properties with at least this many).
pub const MIN_VIOLATING_FOR_PAIRS: usize = 5;

/// A verdict whose share of resamples is at least this is one the test runs support; at most
/// `1 − ROBUST_SHARE`, its opposite is; in between, the test runs cannot tell.
pub const ROBUST_SHARE: f64 = 0.8;

/// Options of an evaluation.
#[derive(Debug, Clone)]
pub struct EvaluateOptions {
    /// Smoothing, PAC, horizons.
    pub build: BuildConfig,
    /// The abstraction search.
    pub search: SearchConfig,
    /// The calibration.
    pub calibrate: CalibrateOptions,
    /// Share of the training logs set aside for calibration.
    pub calibration_fraction: f64,
    /// Seed of the split.
    pub seed: u64,
    /// Thresholds reported beside the calibrated one.
    pub thresholds: Vec<f64>,
    /// The RSS comparator's parameters.
    pub rss: RssParams,
}

/// The rules written for one false-alarm budget, scored on the test runs.
#[derive(Debug, Clone)]
pub struct BudgetRules {
    /// The budget on the learning runs, % of safe runs.
    pub budget_pct: f64,
    /// The auto model with each property's rule for this budget as its reactive rule (a property with
    /// no rule within the budget has none).
    pub model: Model,
    /// Every test run scored under that model: its `reactive_rule` is the budget's rule.
    pub runs: Vec<RunScore>,
}

/// One budget's rule for one property on the test runs, against the auto curve.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BudgetRuleResult {
    /// The budget on the learning runs, % of safe runs.
    pub budget_pct: f64,
    /// The rule.
    pub rule: ReactiveRule,
    /// Its alarms on the test runs.
    pub summary: Summary,
    /// The auto curve at the rule's test false-alarm rate.
    pub dominance: Dominance,
}

/// One model's results on the test runs.
#[derive(Debug, Clone)]
pub struct ModelResult {
    /// How its predicates were chosen.
    pub mode: AbstractionMode,
    /// The model (calibrated).
    pub model: Model,
    /// What calibration did per property.
    pub calibrations: Vec<PropertyCalibration>,
    /// Every test run scored for every property.
    pub runs: Vec<RunScore>,
}

/// Everything an evaluation produced.
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// Logs learned from.
    pub n_learn: usize,
    /// Logs calibrated on.
    pub n_calibrate: usize,
    /// Logs tested on.
    pub n_test: usize,
    /// The thresholds, as (key, θ).
    pub thresholds: Vec<(String, f64)>,
    /// Fixed, then auto.
    pub models: Vec<ModelResult>,
    /// The rules written for each of [`FALSE_ALARM_BUDGETS_PCT`], beside the auto model.
    pub budget_rules: Vec<BudgetRules>,
    /// RSS tuned to each budget and to the calibration's target, per collision property of the auto
    /// model (see [`rss_tuned`]).
    pub rss_tuned: Vec<rss_tuned::Tuned>,
    /// Logs that could not be read.
    pub errors: crate::batch::Failures,
    /// Per model, each property's comparison (with its resampled shares), once computed.
    comparisons: OnceLock<Vec<BTreeMap<String, Comparison>>>,
    /// The auto model's comparisons with the budget rules, once computed.
    auto: OnceLock<BTreeMap<String, AutoComparison>>,
}

/// The auto model's curve for one property against every comparator — the baseline, RSS, the stored
/// rule, and the rules written for each budget — each verdict with the share of bootstrap resamples of
/// the test runs in which it dominates.
#[derive(Debug, Clone)]
pub struct AutoComparison {
    /// Against the comparators every score has.
    pub comparison: Comparison,
    /// Against the rules written for each budget.
    pub budget_rules: Vec<BudgetRuleResult>,
    /// Against RSS tuned to each budget and to the calibration's target (collision properties only).
    pub rss_tuned: Vec<rss_tuned::TunedResult>,
}

/// Comparator pairs over the properties with at least [`MIN_VIOLATING_FOR_PAIRS`] violating test runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct PairTally {
    /// Pairs the curve dominates on the test runs.
    pub dominated: usize,
    /// Pairs.
    pub pairs: usize,
    /// Pairs it dominates in at least [`ROBUST_SHARE`] of the resamples.
    pub dominated_in_most_resamples: usize,
    /// Pairs it dominates in at most `1 − ROBUST_SHARE` of them.
    pub dominated_in_few_resamples: usize,
    /// Pairs where the curve warns earlier run by run
    /// ([`crate::time_ahead::RunByRun::earlier_run_by_run`]).
    pub earlier_run_by_run: usize,
    /// ... in at least [`ROBUST_SHARE`] of the resamples.
    pub earlier_in_most_resamples: usize,
    /// ... in at most `1 − ROBUST_SHARE` of them.
    pub earlier_in_few_resamples: usize,
}

impl PairTally {
    fn add(&mut self, d: &Dominance) {
        // A share counts as support at least ROBUST_SHARE, as a supported loss at most 1 − that.
        let support = |share: Option<f64>| {
            share.map_or((0, 0), |x| {
                (
                    usize::from(x >= ROBUST_SHARE),
                    usize::from(x <= 1.0 - ROBUST_SHARE),
                )
            })
        };
        self.pairs += 1;
        self.dominated += usize::from(d.dominates);
        let (most, few) = support(d.resampled_share);
        self.dominated_in_most_resamples += most;
        self.dominated_in_few_resamples += few;
        self.earlier_run_by_run += usize::from(
            d.run_by_run
                .as_ref()
                .is_some_and(|r| r.earlier_run_by_run()),
        );
        let (most, few) = support(d.run_by_run_share);
        self.earlier_in_most_resamples += most;
        self.earlier_in_few_resamples += few;
    }

    /// Adds another tally's counts (the sums over seeds).
    fn sum(&mut self, t: &PairTally) {
        self.dominated += t.dominated;
        self.pairs += t.pairs;
        self.dominated_in_most_resamples += t.dominated_in_most_resamples;
        self.dominated_in_few_resamples += t.dominated_in_few_resamples;
        self.earlier_run_by_run += t.earlier_run_by_run;
        self.earlier_in_most_resamples += t.earlier_in_most_resamples;
        self.earlier_in_few_resamples += t.earlier_in_few_resamples;
    }
}

/// Splits `logs` into (learning, calibration) runs with a seeded shuffle.
pub fn split(logs: &[PathBuf], fraction: f64, seed: u64) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut shuffled = logs.to_vec();
    shuffled.sort();
    shuffled.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    let n_cal = ((shuffled.len() as f64 * fraction).round() as usize).min(shuffled.len());
    let learn = shuffled.split_off(n_cal);
    (learn, shuffled)
}

/// Per model, per log: what `map` made of the log's per-property series; then per log (run id,
/// scenario); then the failures.
type PerModel<T> = (Vec<Vec<T>>, Vec<(String, String)>, crate::batch::Failures);

/// Every log's per-property series under every model, reading each log once.
fn series_per_model(
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
fn map_per_model<T, F>(
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
    type PerLog<T> = anyhow::Result<(Vec<T>, (String, String))>;
    let results: Vec<(PathBuf, PerLog<T>)> = logs
        .par_iter()
        .map_init(
            || sessions.clone(),
            |sessions, path| {
                let r = scenarios::log::read_log_isolated(path)
                    .map_err(anyhow::Error::from)
                    .and_then(|log| {
                        if let Some(period) = period {
                            crate::batch::check_log_period(log.meta.frame_period_s, period)?;
                        }
                        let id = (log.meta.run_id.as_str(), log.meta.scenario.as_str());
                        let first = rss_tuned::first_dangerous(&log.frames, rss_variants);
                        let per_model = sessions
                            .iter_mut()
                            .enumerate()
                            .map(|(m, s)| {
                                map(m, run_series(&log.frames, s, &measure, rss), id, &first)
                            })
                            .collect();
                        Ok((per_model, (log.meta.run_id, log.meta.scenario)))
                    });
                progress.inc(1);
                (path.clone(), r)
            },
        )
        .collect();
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
            Err(e) => errors.push((path, format!("{e:#}"))),
        }
    }
    Ok((per_model, ids, errors))
}

/// The budgets RSS is tuned to, %: [`FALSE_ALARM_BUDGETS_PCT`] and the calibration's target, ascending.
fn rss_budgets_pct(target_false_alarm: f64) -> Vec<f64> {
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
fn tune_rss(
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
fn read_learning_runs(
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
    let plan = AutoPlan::new(laws, props, opts.build.clone())?;
    let (records, mut errors) = crate::fit::record_logs(&plan, &learn_logs, "reading training")?;
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
        thresholds,
        models: results,
        budget_rules,
        rss_tuned,
        errors,
        comparisons: OnceLock::new(),
        auto: OnceLock::new(),
    })
}

/// What one evaluation of a repeated run keeps for the summary: its seed, its pair tallies and its
/// curve at the budgets.
#[derive(Debug, Clone)]
pub struct SeedSummary {
    /// The evaluation's seed (split and search).
    pub seed: u64,
    /// [`Evaluation::dominated_pairs`].
    pub pairs: (PairTally, PairTally),
    /// [`Evaluation::budget_points`].
    pub points: Vec<(String, Vec<BudgetPoint>)>,
    /// [`Evaluation::rss_tuned_pairs`].
    pub rss_tuned: PairTally,
    /// Of the collision properties with a calibrated alarm and RSS at the calibration's target, those
    /// whose calibrated alarm is earlier ([`Evaluation::calibrated_against_rss`]), and how many there are.
    pub calibrated_vs_rss: (usize, usize),
}

impl SeedSummary {
    /// The summary of `eval`, made with `seed`.
    pub fn of(seed: u64, eval: &Evaluation) -> SeedSummary {
        SeedSummary {
            seed,
            pairs: eval.dominated_pairs(),
            points: eval.budget_points(),
            rss_tuned: eval.rss_tuned_pairs(),
            calibrated_vs_rss: eval
                .property_names()
                .iter()
                .filter_map(|name| eval.calibrated_against_rss(name))
                .filter(|(_, rss, _)| rss.summary.is_some())
                .fold((0, 0), |(e, n), (_, _, earlier)| {
                    (e + usize::from(earlier), n + 1)
                }),
        }
    }
}

/// The table printed after evaluations repeated with several seeds: each seed's pair tallies and their
/// sums, then per property the auto curve at each budget, as means over the seeds where it had a point.
pub fn render_repeats(seeds: &[SeedSummary]) -> String {
    let mut out = format!(
        "\nacross {} seeds: comparator pairs the auto curve dominates (properties with at least \
         {MIN_VIOLATING_FOR_PAIRS} violating test runs), and those dominated in at least {:.0}% and at \
         most {:.0}% of the resamples\n  {:<6} {:>28} {:>28}\n",
        seeds.len(),
        100.0 * ROBUST_SHARE,
        100.0 * (1.0 - ROBUST_SHARE),
        "seed",
        "baseline, RSS, stored rule",
        "rules for each budget"
    );
    let mut sums = (PairTally::default(), PairTally::default());
    for s in seeds {
        sums.0.sum(&s.pairs.0);
        sums.1.sum(&s.pairs.1);
    }
    // One row per seed and the sums, each cell "N of P (W / L)" with N what `count` picks of a tally.
    let rows = |out: &mut String, count: fn(&PairTally) -> [usize; 3]| {
        let cell = |t: &PairTally| {
            let [n, most, few] = count(t);
            format!("{n} of {} ({most} / {few})", t.pairs)
        };
        let seed_rows = seeds.iter().map(|s| (s.seed.to_string(), &s.pairs));
        for (label, (stored, budget)) in seed_rows.chain([("sum".to_owned(), &sums)]) {
            out.push_str(&format!(
                "  {label:<6} {:>28} {:>28}\n",
                cell(stored),
                cell(budget)
            ));
        }
    };
    rows(&mut out, |t| {
        [
            t.dominated,
            t.dominated_in_most_resamples,
            t.dominated_in_few_resamples,
        ]
    });
    out.push_str(&format!(
        "run by run: pairs where the curve warns of more of the comparator's violations earlier than later \
         or not at all (see the per-pair lines), and those so in at least {:.0}% and at most {:.0}% of the \
         resamples\n",
        100.0 * ROBUST_SHARE,
        100.0 * (1.0 - ROBUST_SHARE),
    ));
    rows(&mut out, |t| {
        [
            t.earlier_run_by_run,
            t.earlier_in_most_resamples,
            t.earlier_in_few_resamples,
        ]
    });
    let mut tuned = PairTally::default();
    let (mut earlier, mut compared) = (0, 0);
    for s in seeds {
        tuned.sum(&s.rss_tuned);
        earlier += s.calibrated_vs_rss.0;
        compared += s.calibrated_vs_rss.1;
    }
    if tuned.pairs > 0 || compared > 0 {
        out.push_str(&format!(
            "against RSS tuned to each false-alarm budget (collision properties), over the seeds: {} of {} \
             dominated ({} / {}), {} earlier run by run; the calibrated alarm earlier than RSS at the \
             calibration's target in {earlier} of {compared}\n",
            tuned.dominated,
            tuned.pairs,
            tuned.dominated_in_most_resamples,
            tuned.dominated_in_few_resamples,
            tuned.earlier_run_by_run,
        ));
    }
    let mut names: Vec<&str> = seeds
        .iter()
        .flat_map(|s| s.points.iter().map(|(n, _)| n.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return out;
    }
    out.push_str(
        "auto's curve at each false-alarm budget, mean over the seeds with a point there (predicted % / \
         false alarms % / median lead s)\n",
    );
    for name in names {
        let mut line = format!("  {name:<16}");
        for (j, budget) in FALSE_ALARM_BUDGETS_PCT.iter().enumerate() {
            let found: Vec<CurvePoint> = seeds
                .iter()
                .filter_map(|s| s.points.iter().find(|(n, _)| n == name))
                .filter_map(|(_, p)| p.get(j).and_then(|b| b.point))
                .collect();
            let mean = |f: &dyn Fn(&CurvePoint) -> Option<f64>| {
                let v: Vec<f64> = found.iter().filter_map(f).collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            };
            line.push_str(&format!(
                "  ≤{budget:.0}%: {} / {} / {} ({})",
                mean(&|p| Some(p.predicted_pct))
                    .map_or_else(|| "–".to_owned(), |x| format!("{x:.1}")),
                mean(&|p| Some(p.false_alarm_pct))
                    .map_or_else(|| "–".to_owned(), |x| format!("{x:.1}")),
                mean(&|p| p.median_lead_s).map_or_else(|| "–".to_owned(), |x| format!("{x:.2}")),
                found.len()
            ));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{v:.1}%"))
}

fn secs(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{v:.1} s"))
}

/// One point of the curve in words, or why there is none.
fn curve_point(point: Option<CurvePoint>) -> String {
    point.map_or_else(
        || "no θ keeps false alarms that low".to_owned(),
        |o| {
            format!(
                "θ={:.3}: {:.1}% predicted, {:.1}% false alarms, lead {}",
                o.theta,
                o.predicted_pct,
                o.false_alarm_pct,
                secs(o.median_lead_s)
            )
        },
    )
}

fn row(label: &str, s: &Summary) -> String {
    format!(
        "  {label:<58} {:>9} {:>12} {:>11}",
        pct(s.predicted_pct),
        pct(s.false_alarm_pct),
        secs(s.median_lead_s)
    )
}

impl Evaluation {
    /// The property names, in model order.
    pub fn property_names(&self) -> Vec<String> {
        self.models
            .first()
            .map(|m| {
                m.model
                    .properties()
                    .iter()
                    .map(|p| p.name().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// One property's runs under model `m`.
    pub fn runs_of<'a>(&'a self, m: usize, property: &str) -> Vec<&'a RunScore> {
        self.models
            .get(m)
            .map(|r| r.runs.iter().filter(|s| s.property == property).collect())
            .unwrap_or_default()
    }

    /// Per budget with a rule for `property`: the rule on the test runs against `curve`, the auto model's
    /// curve for that property (the copies that carry the rules share its risks, so they share its curve).
    pub fn budget_rule_comparisons(
        &self,
        property: &str,
        curve: &[CurvePoint],
    ) -> Vec<BudgetRuleResult> {
        self.budget_rules
            .iter()
            .filter_map(|b| {
                let rule = b.model.property(property)?.reactive_rule()?.clone();
                let runs: Vec<&RunScore> =
                    b.runs.iter().filter(|r| r.property == property).collect();
                let summary = summarise(
                    runs.iter()
                        .filter_map(|r| r.reactive_rule.as_ref().map(|a| (*r, a))),
                );
                // The copy carrying the rule has the auto model's risks, so its runs give the curve's side.
                let paired: Vec<PairedRun<'_>> = runs
                    .iter()
                    .filter_map(|r| PairedRun::of(r, |r| r.reactive_rule.as_ref()))
                    .collect();
                let dominance = dominance("reactive_rule", &summary, curve).resampled(&paired);
                Some(BudgetRuleResult {
                    budget_pct: b.budget_pct,
                    rule,
                    dominance,
                    summary,
                })
            })
            .collect()
    }

    /// RSS tuned to each budget for `property` (a collision property; none otherwise) on the test runs
    /// against `curve`, the auto model's curve for it.
    pub fn rss_tuned_comparisons(
        &self,
        property: &str,
        curve: &[CurvePoint],
    ) -> Vec<rss_tuned::TunedResult> {
        self.rss_tuned
            .iter()
            .filter(|t| t.property == property)
            .map(|t| {
                let scale = t.variant.map(|v| rss_tuned::RESPONSE_SCALES[v]);
                let tested = t.variant.map(|_| {
                    let summary =
                        summarise(t.runs.iter().filter_map(|r| r.rss.as_ref().map(|a| (r, a))));
                    let paired: Vec<PairedRun<'_>> = t
                        .runs
                        .iter()
                        .filter_map(|r| PairedRun::of(r, |r| r.rss.as_ref()))
                        .collect();
                    let dominance = dominance("rss_tuned", &summary, curve).resampled(&paired);
                    (summary, dominance)
                });
                rss_tuned::TunedResult {
                    budget_pct: t.budget_pct,
                    response_scale: scale,
                    within_budget: t.within_budget,
                    ego_response_s: t.ego_response_s,
                    learning: t.learning,
                    summary: tested.as_ref().map(|(s, _)| *s),
                    dominance: tested.map(|(_, d)| d),
                }
            })
            .collect()
    }

    /// The auto model's comparisons of the properties with at least [`MIN_VIOLATING_FOR_PAIRS`] violating
    /// test runs: those the tallies count.
    fn counted_comparisons(&self) -> impl Iterator<Item = (&String, &AutoComparison)> {
        self.auto_comparisons().iter().filter(|(_, a)| {
            a.comparison
                .comparators
                .first()
                .is_some_and(|(_, s)| s.n_violating_runs >= MIN_VIOLATING_FOR_PAIRS)
        })
    }

    /// Pairs of the auto curve against RSS tuned to each of [`FALSE_ALARM_BUDGETS_PCT`] (not the
    /// calibration's target unless it is one of them), over the properties with at least
    /// [`MIN_VIOLATING_FOR_PAIRS`] violating test runs.
    pub fn rss_tuned_pairs(&self) -> PairTally {
        let mut tally = PairTally::default();
        for (_, a) in self.counted_comparisons() {
            for t in &a.rss_tuned {
                let listed = FALSE_ALARM_BUDGETS_PCT
                    .iter()
                    .any(|b| (b - t.budget_pct).abs() < 1e-9);
                if let (true, true, Some(d)) = (listed, t.within_budget, &t.dominance) {
                    tally.add(d);
                }
            }
        }
        tally
    }

    /// The calibrated alarm of the auto model for `property` against RSS tuned to the calibration's
    /// target, both on the test runs: (calibrated, RSS's result, whether the calibrated alarm is earlier);
    /// `None` without a calibration or a tuned RSS.
    pub fn calibrated_against_rss(
        &self,
        property: &str,
    ) -> Option<(Summary, rss_tuned::TunedResult, bool)> {
        let m = self
            .models
            .iter()
            .position(|m| m.mode == AbstractionMode::Auto)?;
        let cal = self.models[m].model.property(property)?.calibration()?;
        let calibrated = self.comparison(m, property)?.calibrated?;
        let a = self.auto_comparisons().get(property)?;
        let tuned = a
            .rss_tuned
            .iter()
            .find(|t| (t.budget_pct - 100.0 * cal.target_false_alarm).abs() < 1e-9)?
            .clone();
        let earlier = tuned
            .summary
            .as_ref()
            .is_some_and(|s| calibrated_is_earlier(&calibrated, s));
        Some((calibrated, tuned, earlier))
    }

    /// Model `m`'s comparison of `property` on the test runs, computed once for every model and
    /// property: the printed tables and `evaluate.json` read the same one, resamples included.
    pub fn comparison(&self, m: usize, property: &str) -> Option<&Comparison> {
        self.comparisons
            .get_or_init(|| {
                let names = self.property_names();
                (0..self.models.len())
                    .map(|m| {
                        names
                            .iter()
                            .map(|name| (name.clone(), Comparison::of(&self.runs_of(m, name))))
                            .collect()
                    })
                    .collect()
            })
            .get(m)?
            .get(property)
    }

    /// The auto model's comparison per property with a violating test run, with the rules written for
    /// each budget, computed once.
    pub fn auto_comparisons(&self) -> &BTreeMap<String, AutoComparison> {
        self.auto.get_or_init(|| {
            let Some(m) = self
                .models
                .iter()
                .position(|m| m.mode == AbstractionMode::Auto)
            else {
                return BTreeMap::new();
            };
            self.property_names()
                .into_iter()
                .filter_map(|name| {
                    let comparison = self.comparison(m, &name)?.clone();
                    if comparison
                        .comparators
                        .first()
                        .is_none_or(|(_, s)| s.n_violating_runs == 0)
                    {
                        return None;
                    }
                    let budget_rules = self.budget_rule_comparisons(&name, &comparison.curve);
                    let rss_tuned = self.rss_tuned_comparisons(&name, &comparison.curve);
                    Some((
                        name,
                        AutoComparison {
                            comparison,
                            budget_rules,
                            rss_tuned,
                        },
                    ))
                })
                .collect()
        })
    }

    /// Comparator pairs of the auto curve over the properties with at least
    /// [`MIN_VIOLATING_FOR_PAIRS`] violating test runs: for the comparators every score has (baseline,
    /// RSS, the stored rule), then for the rules written for each budget.
    pub fn dominated_pairs(&self) -> (PairTally, PairTally) {
        let (mut stored, mut budget) = (PairTally::default(), PairTally::default());
        for (_, a) in self.counted_comparisons() {
            for d in &a.comparison.dominance {
                stored.add(d);
            }
            for b in &a.budget_rules {
                budget.add(&b.dominance);
            }
        }
        (stored, budget)
    }

    /// The auto curve's best point at each of the printed false-alarm budgets (5, 10, 20 and 40 %), per
    /// property with at least [`MIN_VIOLATING_FOR_PAIRS`] violating test runs.
    pub fn budget_points(&self) -> Vec<(String, Vec<BudgetPoint>)> {
        self.counted_comparisons()
            .map(|(name, a)| (name.clone(), at_budgets(&a.comparison.curve)))
            .collect()
    }

    /// The printed tables: one per property with a violation among the test runs.
    pub fn render(&self) -> String {
        let mut out = format!(
            "held-out evaluation: learned on {} runs, calibrated on {}, tested on {} (no test run was used \
             to learn, select, calibrate or choose a rule)\n",
            self.n_learn, self.n_calibrate, self.n_test
        );
        for name in self.property_names() {
            let base_runs = self.runs_of(0, &name);
            let all = crate::time_ahead::summarise(base_runs.iter().map(|r| (*r, &r.baseline)));
            let n_viol = all.n_violating_runs;
            if n_viol == 0 {
                out.push_str(&format!(
                    "\n{name}: no violation among the {} test runs\n",
                    base_runs.len()
                ));
                continue;
            }
            out.push_str(&format!(
                "\n{name} — test runs: {}, {} safe\n  {:<58} {:>9} {:>12} {:>11}\n",
                crate::time_ahead::violating_words(&all),
                base_runs.len() - n_viol,
                "alarm",
                "predicted",
                "false alarms",
                "median lead"
            ));
            let mut auto_model = None;
            for (m, result) in self.models.iter().enumerate() {
                let runs = self.runs_of(m, &name);
                let mode = result.mode.as_str();
                for (key, _) in &self.thresholds {
                    let s = summarise(
                        runs.iter()
                            .filter_map(|r| r.alarms.get(key).map(|a| (*r, a))),
                    );
                    out.push_str(&row(&format!("avguard {mode} θ={key}"), &s));
                    out.push('\n');
                }
                let Some(c) = self.comparison(m, &name) else {
                    continue;
                };
                if let (Some(s), Some(cal)) = (
                    &c.calibrated,
                    result.model.property(&name).and_then(|p| p.calibration()),
                ) {
                    let label = format!(
                        "avguard {mode} calibrated θ={:.3}{} (target {:.0}%)",
                        cal.theta,
                        if cal.debounce_frames > 1 {
                            format!(", debounce {}", cal.debounce_frames)
                        } else {
                            String::new()
                        },
                        100.0 * cal.target_false_alarm
                    );
                    out.push_str(&row(&label, s));
                    out.push('\n');
                    let check = calibration_check(&runs, cal.target_false_alarm, cal.confidence);
                    if let Some(check) = check.filter(|c| !c.holds) {
                        out.push_str(&format!("    {}\n", check.describe()));
                    }
                } else if let Some(Err(why)) = result
                    .calibrations
                    .iter()
                    .find(|c| c.name == name)
                    .map(|c| &c.result)
                {
                    out.push_str(&format!("  avguard {mode} not calibrated: {why}\n"));
                }
                if result.mode == AbstractionMode::Auto {
                    auto_model = Some(result);
                }
            }
            let (Some(auto), Some(a)) = (auto_model, self.auto_comparisons().get(&name)) else {
                continue;
            };
            let c = &a.comparison;
            let rule = auto
                .model
                .property(&name)
                .and_then(|p| p.reactive_rule())
                .map(|r| r.text());
            for (cname, s) in &c.comparators {
                let label = crate::report::comparator_label(cname, rule.as_deref());
                out.push_str(&row(&label, s));
                out.push('\n');
            }
            let budget_rules = &a.budget_rules;
            for b in budget_rules {
                let label = format!(
                    "rule for ≤ {:.0}% false alarms: {}",
                    b.budget_pct,
                    b.rule.text()
                );
                out.push_str(&row(&label, &b.summary));
                out.push('\n');
            }
            for t in &a.rss_tuned {
                match (&t.summary, t.response_scale) {
                    (Some(s), Some(scale)) if t.within_budget => {
                        let label = format!(
                            "RSS tuned to ≤ {:.0}% (response times × {scale}, ego {:.2} s)",
                            t.budget_pct,
                            t.ego_response_s.unwrap_or(0.0)
                        );
                        out.push_str(&row(&label, s));
                        out.push('\n');
                    }
                    (Some(s), Some(scale)) => {
                        out.push_str(&format!(
                            "  RSS tuned to ≤ {:.0}%: no response time keeps within it on the learning runs; \
                             the fewest false alarms there, {}, at × {scale}:\n",
                            t.budget_pct,
                            pct(t.learning.false_alarm_pct)
                        ));
                        let label = format!(
                            "RSS as near ≤ {:.0}% as it comes (ego {:.2} s)",
                            t.budget_pct,
                            t.ego_response_s.unwrap_or(0.0)
                        );
                        out.push_str(&row(&label, s));
                        out.push('\n');
                    }
                    _ => out.push_str(&format!(
                        "  RSS tuned to ≤ {:.0}%: no response time keeps within it on the learning runs \
                         (the fewest false alarms there: {})\n",
                        t.budget_pct,
                        pct(t.learning.false_alarm_pct)
                    )),
                }
            }
            out.push_str("  auto's curve at false-alarm budgets (best θ with at most that share of safe runs alarmed):\n");
            for b in at_budgets(&c.curve) {
                let point = curve_point(b.point);
                out.push_str(&format!(
                    "    ≤ {:>2.0}% false alarms  {point}\n",
                    b.budget_pct
                ));
            }
            out.push_str("  auto's curve at each comparator's false-alarm rate:\n");
            for d in &c.dominance {
                let ours = curve_point(d.ours);
                out.push_str(&format!(
                    "    vs {:<10} {ours} — {}\n",
                    d.comparator,
                    verdict(d)
                ));
                if let Some(words) = run_by_run_words(d) {
                    out.push_str(&format!("      {words}\n"));
                }
            }
            for b in budget_rules {
                let ours = curve_point(b.dominance.ours);
                out.push_str(&format!(
                    "    vs rule ≤{:>2.0}%  {ours} — {}\n",
                    b.budget_pct,
                    verdict(&b.dominance)
                ));
                if let Some(words) = run_by_run_words(&b.dominance) {
                    out.push_str(&format!("      {words}\n"));
                }
            }
            for t in &a.rss_tuned {
                let Some(d) = &t.dominance else {
                    continue;
                };
                out.push_str(&format!(
                    "    vs RSS {}{:>2.0}%   {} — {}\n",
                    if t.within_budget { "≤" } else { "~" },
                    t.budget_pct,
                    curve_point(d.ours),
                    verdict(d)
                ));
                if let Some(words) = run_by_run_words(d) {
                    out.push_str(&format!("      {words}\n"));
                }
            }
            if let Some((cal, tuned, earlier)) = self.calibrated_against_rss(&name) {
                if let Some(rss) = &tuned.summary {
                    out.push_str(&format!(
                        "  calibrated θ against RSS {} the same {:.0}% target: {} / {} / {} against \
                         {} / {} / {} — {}\n",
                        if tuned.within_budget {
                            "tuned to"
                        } else {
                            "as near as it comes to"
                        },
                        tuned.budget_pct,
                        pct(cal.predicted_pct),
                        pct(cal.false_alarm_pct),
                        secs(cal.median_lead_s),
                        pct(rss.predicted_pct),
                        pct(rss.false_alarm_pct),
                        secs(rss.median_lead_s),
                        if earlier {
                            "earlier, with as many warned of and no more false alarms"
                        } else {
                            "not earlier"
                        }
                    ));
                }
            }
        }
        let (stored, budget) = self.dominated_pairs();
        out.push_str(&format!(
            "\ncomparator pairs the auto curve dominates (properties with at least \
             {MIN_VIOLATING_FOR_PAIRS} violating test runs): {} of {} against the baseline, RSS and the \
             stored rule; {} of {} against the rules written for each false-alarm budget\n\
             dominated in at least {:.0}% of the bootstrap resamples of the test runs: {} of {} and {} of {}; \
             in at most {:.0}%: {} of {} and {} of {} (the rest are within these runs' noise)\n\
             warned of earlier run by run: {} of {} and {} of {} (in at least {:.0}% of the resamples: {} and \
             {}; in at most {:.0}%: {} and {})\n",
            stored.dominated,
            stored.pairs,
            budget.dominated,
            budget.pairs,
            100.0 * ROBUST_SHARE,
            stored.dominated_in_most_resamples,
            stored.pairs,
            budget.dominated_in_most_resamples,
            budget.pairs,
            100.0 * (1.0 - ROBUST_SHARE),
            stored.dominated_in_few_resamples,
            stored.pairs,
            budget.dominated_in_few_resamples,
            budget.pairs,
            stored.earlier_run_by_run,
            stored.pairs,
            budget.earlier_run_by_run,
            budget.pairs,
            100.0 * ROBUST_SHARE,
            stored.earlier_in_most_resamples,
            budget.earlier_in_most_resamples,
            100.0 * (1.0 - ROBUST_SHARE),
            stored.earlier_in_few_resamples,
            budget.earlier_in_few_resamples,
        ));
        let tuned = self.rss_tuned_pairs();
        if tuned.pairs > 0 {
            out.push_str(&format!(
                "against RSS tuned to each false-alarm budget (collision properties): {} of {} dominated \
                 ({} in at least {:.0}% of the resamples, {} in at most {:.0}%); warned of earlier run by run: \
                 {} of {}\n",
                tuned.dominated,
                tuned.pairs,
                tuned.dominated_in_most_resamples,
                100.0 * ROBUST_SHARE,
                tuned.dominated_in_few_resamples,
                100.0 * (1.0 - ROBUST_SHARE),
                tuned.earlier_run_by_run,
                tuned.pairs,
            ));
        }
        out
    }

    /// Writes `evaluate.json` (every run of every model, the summaries, curves and dominance) and the two
    /// models into `out`.
    pub fn write(&self, out: &Path) -> anyhow::Result<()> {
        std::fs::create_dir_all(out)
            .with_context(|| format!("{}: cannot create", out.display()))?;
        let mut models = Vec::new();
        for (m, result) in self.models.iter().enumerate() {
            let path = out.join(format!("model_{}.bin", result.mode.as_str()));
            std::fs::write(&path, result.model.to_bytes())
                .with_context(|| format!("{}: cannot write", path.display()))?;
            let mut properties = serde_json::Map::new();
            for name in self.property_names() {
                let runs = self.runs_of(m, &name);
                let auto = (result.mode == AbstractionMode::Auto)
                    .then(|| self.auto_comparisons().get(&name))
                    .flatten();
                let c = self
                    .comparison(m, &name)
                    .cloned()
                    .unwrap_or_else(|| Comparison::of(&runs));
                let by_theta: serde_json::Map<String, serde_json::Value> = self
                    .thresholds
                    .iter()
                    .map(|(key, _)| {
                        let s = summarise(
                            runs.iter()
                                .filter_map(|r| r.alarms.get(key).map(|a| (*r, a))),
                        );
                        (key.clone(), serde_json::json!(s))
                    })
                    .collect();
                let p = result.model.property(&name);
                let budget_rules = auto.map_or_else(Vec::new, |a| a.budget_rules.clone());
                let rss_tuned = auto.map_or_else(Vec::new, |a| a.rss_tuned.clone());
                let calibrated_against_rss = auto
                    .and_then(|_| self.calibrated_against_rss(&name))
                    .map(|(calibrated, rss, earlier)| {
                        serde_json::json!({
                            "calibrated": calibrated,
                            "rss_tuned": rss,
                            "earlier": earlier,
                        })
                    });
                properties.insert(
                    name.clone(),
                    serde_json::json!({
                        "predicates": p.map(|p| p.predicates().to_vec()),
                        "smoothing": p.map(|p| serde_json::json!({
                            "alpha": p.config().laplace.alpha,
                            "scope": p.config().smoothing.as_str(),
                            "prior": p.config().prior.as_str(),
                        })),
                        "selection": p.and_then(|p| p.selection()),
                        "reactive_rule": p.and_then(|p| p.reactive_rule()),
                        "calibration": p.and_then(|p| p.calibration()),
                        "calibration_check": p
                            .and_then(|p| p.calibration())
                            .and_then(|cal| calibration_check(&runs, cal.target_false_alarm, cal.confidence)),
                        "summary": by_theta,
                        "comparison": c,
                        "budget_rules": budget_rules,
                        "rss_tuned": rss_tuned,
                        "calibrated_against_rss_tuned": calibrated_against_rss,
                    }),
                );
            }
            models.push(serde_json::json!({
                "mode": result.mode.as_str(),
                "model": path.file_name().map(|n| n.to_string_lossy().into_owned()),
                "properties": properties,
                "runs": result.runs,
            }));
        }
        let (stored, budget) = self.dominated_pairs();
        let json = serde_json::json!({
            "dominated_pairs": {
                "min_violating_runs": MIN_VIOLATING_FOR_PAIRS,
                "robust_share": ROBUST_SHARE,
                "comparators": stored,
                "budget_rules": budget,
                "rss_tuned": self.rss_tuned_pairs(),
            },
            "n_learn": self.n_learn,
            "n_calibrate": self.n_calibrate,
            "n_test": self.n_test,
            "models": models,
            "errors": self.errors.iter().map(|(p, e)| serde_json::json!({"file": p.display().to_string(), "error": e})).collect::<Vec<_>>(),
        });
        let path = out.join("evaluate.json");
        std::fs::write(&path, serde_json::to_vec_pretty(&json)?)
            .with_context(|| format!("{}: cannot write", path.display()))
    }
}
