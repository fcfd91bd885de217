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
//! Everything here is pure: series in, numbers out.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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
    /// Per threshold (keyed by its text, e.g. "0.3").
    pub alarms: BTreeMap<String, AlarmScore>,
    /// The reactive baseline (an avguard extension of §5).
    pub baseline: AlarmScore,
    /// Highest risk seen before the violation (or in the whole run when safe).
    pub max_risk: f64,
}

/// Scores one run: `thresholds` pairs each θ's key text with its value.
pub fn score_run(
    run_id: &str,
    scenario: &str,
    property: &str,
    series: &RunSeries,
    thresholds: &[(String, f64)],
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
    RunScore {
        run_id: run_id.to_owned(),
        scenario: scenario.to_owned(),
        property: property.to_owned(),
        violated: violation_t.is_some(),
        violation_t,
        alarms,
        baseline: alarm_score(first_baseline, series, violation_t),
        max_risk,
    }
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

/// Summary of one alarm rule over a property's runs (a cell of `score.json`'s `summary`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Runs that violated the property.
    pub n_violating_runs: usize,
    /// Percentage of violating runs predicted (alarm strictly before the violation); null without any.
    pub predicted_pct: Option<f64>,
    /// Median lead over predicted runs, s.
    pub median_lead_s: Option<f64>,
    /// Largest lead over predicted runs, s.
    pub max_lead_s: Option<f64>,
    /// Runs that did not violate the property.
    pub n_safe_runs: usize,
    /// Percentage of safe runs with an alarm; null without any safe run.
    pub false_alarm_pct: Option<f64>,
}

/// Summarises the alarm scores of a set of runs (all of one property).
pub fn summarise<'a>(scores: impl IntoIterator<Item = (&'a RunScore, &'a AlarmScore)>) -> Summary {
    let mut n_violating = 0usize;
    let mut n_safe = 0usize;
    let mut n_false = 0usize;
    let mut leads = Vec::new();
    for (run, alarm) in scores {
        if run.violated {
            n_violating += 1;
            if let Some(lead) = alarm.lead_s {
                leads.push(lead);
            }
        } else {
            n_safe += 1;
            n_false += usize::from(alarm.false_alarm);
        }
    }
    leads.sort_by(f64::total_cmp);
    Summary {
        n_violating_runs: n_violating,
        predicted_pct: percent(leads.len(), n_violating),
        median_lead_s: median(&leads),
        max_lead_s: leads.last().copied(),
        n_safe_runs: n_safe,
        false_alarm_pct: percent(n_false, n_safe),
    }
}

fn percent(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| 100.0 * part as f64 / whole as f64)
}

/// Median of sorted values (mean of the two middle ones for an even count).
pub fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some(0.5 * (sorted[n / 2 - 1] + sorted[n / 2])),
    }
}

/// The key text of a threshold in `score.json` (shortest text that reads back as the same number).
pub fn threshold_key(theta: f64) -> String {
    format!("{theta}")
}

#[cfg(test)]
mod tests;
