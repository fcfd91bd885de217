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
//! learning runs ([`monitor::select::AutoPlan::build_with_budget_rules`]) is scored on the test runs
//! too, and the auto curve is compared with each at that rule's own test false-alarm rate.
//!
//! RSS with CARLA's parameters is one cautious operating point; for a collision property it is also tuned
//! to each budget on the learning runs (its response times shortened until it keeps within it,
//! [`rss_tuned`]) and scored on the test runs beside the curve, and the calibrated alarm is compared with
//! RSS tuned to the calibration's own target.
//!
//! Where each part lives: `run` is the pipeline (the split, learning, calibrating, scoring the test
//! runs); `series` each log's series under every model; `learning` what the learning runs give once the models are learned (the series the debounce
//! is chosen on, and the RSS tuning); `compare` the curve against every comparator and the pair tallies;
//! `render` and `write` the printed tables and `evaluate.json`; `repeats` the summary over seeds.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use laws::rss::RssParams;
use monitor::select::{AbstractionMode, ReactiveRule, SearchConfig};
use monitor::{BuildConfig, Model};

use crate::calibration::{CalibrateOptions, PropertyCalibration};
use crate::rss_tuned;
use crate::time_ahead::{Comparison, Dominance, RunScore, Summary};

mod compare;
mod learning;
mod render;
mod repeats;
mod run;
mod series;
mod write;

pub use repeats::{render_repeats, SeedSummary};
pub use run::{evaluate, split};

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
    /// How the logs' road users are read (see `learn --perception-latency` and
    /// `--road-user-smoothing`).
    pub road_users: crate::fit::RoadUserOptions,
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
    /// Calibrated within each scenario kind (`--per-scenario`): the calibrations' counts are then over
    /// all kinds, not the groups the bound was placed on.
    pub per_scenario: bool,
    /// The thresholds, as (key, θ).
    pub thresholds: Vec<(String, f64)>,
    /// Fixed, then auto.
    pub models: Vec<ModelResult>,
    /// The rules written for each of [`crate::time_ahead::FALSE_ALARM_BUDGETS_PCT`], beside the auto model.
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
