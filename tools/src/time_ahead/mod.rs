//! Time-ahead scoring of one run for one property, and the summary over runs (INTERFACES §5).
//!
//! Definitions, stated once here and used by `score`, the reports and the demo:
//! - A run *violates* the property when some frame is unsafe; `violation_t` is the first such frame's time.
//! - An *alarm* at threshold θ is a frame with risk ≥ θ. In a violating run only alarms strictly before the
//!   first violation count: the run is *predicted* at θ when there is one, and `lead_s` is `violation_t`
//!   minus the first alarm's time. In a safe run any alarm is a *false alarm*.
//! - The reactive baseline alarms on frames where the law's own antecedent holds (what a rule-based
//!   enforcer reacts to); it is scored with the same rules, so the two are comparable line by line.
//!
//! Everything here is pure: series in, numbers out. This module scores one run; `summary` summarises
//! one alarm rule over runs; `curve` is the curve over θ and its points at the false-alarm budgets;
//! `spread` how far those points' leads move over bootstrap resamples of the runs; `dominance` judges
//! the curve against a comparator, with the bootstrap shares of each verdict.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod curve;
mod dominance;
mod spread;
mod summary;

pub use curve::{
    at_budgets, best_within, budgets_in_words, curve, lead_intervals_in_words, BudgetPoint,
    CurvePoint, FALSE_ALARM_BUDGETS_PCT,
};
pub use dominance::{
    calibrated_is_earlier, dominance, dominance_shares, dominates_in, longer_lead, resamples_for,
    run_by_run_in, Comparison, Dominance, PairedRun, RunByRun, RESAMPLED_RUNS, RESAMPLES,
    RESAMPLE_SEED,
};
pub use spread::{budget_points, lead_intervals, LEAD_INTERVAL_SHARE};
pub use summary::{
    calibration_check, comparator_alarm, median, summarise, summarise_alarms, threshold_key,
    violating_words, Summary,
};

/// One run's per-frame series for one property, as produced by the monitor.
#[derive(Debug, Clone, Default)]
pub struct RunSeries {
    /// Frame times, s, strictly increasing.
    pub t: Vec<f64>,
    /// Risk per frame (P(eventually unsafe), or P(unsafe within the horizon)).
    pub risk: Vec<f64>,
    /// True on frames whose state is unsafe for the property.
    pub unsafe_now: Vec<bool>,
    /// True on frames where the reactive baseline would alarm.
    pub baseline_alarm: Vec<bool>,
    /// True on frames where RSS finds the ego in a dangerous situation (empty: not computed).
    pub rss_alarm: Vec<bool>,
    /// True on frames where the model's reactive rule holds (empty: the model has none).
    pub rule_alarm: Vec<bool>,
    /// True on frames where RSS tuned to the property's false-alarm target on the calibration runs finds
    /// the ego in a dangerous situation (empty: not computed, or the model stores no tuning for it).
    pub rss_tuned_alarm: Vec<bool>,
}

/// The outcome of one alarm rule (a threshold, or the baseline) on one run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AlarmScore {
    /// Time of the first counted alarm (before the violation in a violating run), s.
    pub first_alarm_t: Option<f64>,
    /// Seconds between the first counted alarm and the violation; only in predicted violating runs.
    pub lead_s: Option<f64>,
    /// True when the run has no violation and an alarm occurred.
    pub false_alarm: bool,
}

/// One run scored for one property (a row of `score.json`'s `runs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunScore {
    /// The log's run id.
    pub run_id: String,
    /// The scenario the run came from.
    pub scenario: String,
    /// The monitored property.
    pub property: String,
    /// True when the run reached an unsafe state.
    pub violated: bool,
    /// Time of the first unsafe frame, s.
    pub violation_t: Option<f64>,
    /// The run is unsafe from its first frame: no alarm can precede the violation, so no rule or
    /// threshold can predict it (an avguard extension of §5; absent when false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsafe_from_start: bool,
    /// Per threshold (keyed by its text, e.g. "0.3").
    pub alarms: BTreeMap<String, AlarmScore>,
    /// The reactive baseline (an avguard extension of §5).
    pub baseline: AlarmScore,
    /// Highest risk seen before the violation (or in the whole run when safe).
    pub max_risk: f64,
    /// RSS as a comparator (an avguard extension of §5; absent when not computed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss: Option<AlarmScore>,
    /// The model's best small reactive rule as a comparator (absent when the model has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reactive_rule: Option<AlarmScore>,
    /// RSS tuned to the property's false-alarm target on the calibration runs, as a comparator (absent
    /// when the model stores no tuning for the property, or RSS was not computed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_tuned: Option<AlarmScore>,
    /// The alarm at the property's calibrated θ and debounce (absent when the model is not calibrated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<AlarmScore>,
    /// For a violating run, where its running maximum risk rises before the violation: `(risk, lead s)`
    /// pairs, so its lead at any θ is the lead of the first pair with risk ≥ θ.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub envelope: Vec<(f64, f64)>,
}

/// Scores one run: `thresholds` pairs each θ's key text with its value.
pub fn score_run(
    run_id: &str,
    scenario: &str,
    property: &str,
    series: &RunSeries,
    thresholds: &[(String, f64)],
) -> RunScore {
    score_run_calibrated(run_id, scenario, property, series, thresholds, None)
}

/// [`score_run`] plus the alarm at a calibrated `(θ, debounce frames)`.
pub fn score_run_calibrated(
    run_id: &str,
    scenario: &str,
    property: &str,
    series: &RunSeries,
    thresholds: &[(String, f64)],
    calibrated: Option<(f64, u32)>,
) -> RunScore {
    let n = series.t.len();
    let violation_idx = series.unsafe_now.iter().position(|&u| u);
    let horizon = violation_idx.unwrap_or(n);
    let violation_t = violation_idx.map(|i| series.t[i]);
    let mut alarms = BTreeMap::new();
    for (key, theta) in thresholds {
        let first = series.risk[..horizon].iter().position(|&r| r >= *theta);
        alarms.insert(key.clone(), alarm_score(first, series, violation_t));
    }
    let first_baseline = series.baseline_alarm[..horizon].iter().position(|&a| a);
    let max_risk = series.risk[..horizon].iter().copied().fold(0.0, f64::max);
    let reactive = |alarms: &[bool]| {
        (alarms.len() == n).then(|| {
            let first = alarms[..horizon].iter().position(|&a| a);
            alarm_score(first, series, violation_t)
        })
    };
    let calibrated = calibrated.map(|(theta, debounce)| {
        let first = monitor::calibrate::first_alarm(&series.risk[..horizon], theta, debounce);
        alarm_score(first, series, violation_t)
    });
    let mut envelope: Vec<(f64, f64)> = Vec::new();
    if let Some(v) = violation_t {
        for (i, &r) in series.risk[..horizon].iter().enumerate() {
            if envelope.last().is_none_or(|&(m, _)| r > m) {
                envelope.push((r, v - series.t[i]));
            }
        }
    }
    RunScore {
        run_id: run_id.to_owned(),
        scenario: scenario.to_owned(),
        property: property.to_owned(),
        violated: violation_t.is_some(),
        violation_t,
        unsafe_from_start: violation_idx == Some(0),
        alarms,
        baseline: alarm_score(first_baseline, series, violation_t),
        max_risk,
        rss: reactive(&series.rss_alarm),
        reactive_rule: reactive(&series.rule_alarm),
        rss_tuned: reactive(&series.rss_tuned_alarm),
        calibrated,
        envelope,
    }
}

/// The alarm of a comparator whose first alarm frame in the whole run is `first` (an index into
/// `series`): it counts only before the run's first unsafe frame, as every alarm here does.
pub fn first_alarm_score(first: Option<usize>, series: &RunSeries) -> AlarmScore {
    let violation_idx = series.unsafe_now.iter().position(|&u| u);
    let horizon = violation_idx.unwrap_or(series.t.len());
    alarm_score(
        first.filter(|&i| i < horizon),
        series,
        violation_idx.map(|i| series.t[i]),
    )
}

fn alarm_score(
    first_idx: Option<usize>,
    series: &RunSeries,
    violation_t: Option<f64>,
) -> AlarmScore {
    let first_alarm_t = first_idx.map(|i| series.t[i]);
    match violation_t {
        Some(v) => AlarmScore {
            first_alarm_t,
            lead_s: first_alarm_t.map(|a| v - a),
            false_alarm: false,
        },
        None => AlarmScore {
            first_alarm_t,
            lead_s: None,
            false_alarm: first_alarm_t.is_some(),
        },
    }
}

#[cfg(test)]
mod tests;
