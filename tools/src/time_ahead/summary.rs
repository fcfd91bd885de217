//! The summary of one alarm rule over a property's runs, and the helpers every summary uses.

use serde::{Deserialize, Serialize};

use super::{AlarmScore, RunScore};

/// Summary of one alarm rule over a property's runs (a cell of `score.json`'s `summary`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Runs that violated the property.
    pub n_violating_runs: usize,
    /// Of those, the runs unsafe from their first frame, which no alarm can precede: `predicted_pct`
    /// is at most the share of the others.
    #[serde(default)]
    pub n_unsafe_from_start: usize,
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

/// A run's alarm under the comparator named `name` in a [`Comparison`](super::Comparison) (`baseline`, `rss`,
/// `reactive_rule`, `rss_tuned`); `None` where the run has none.
pub fn comparator_alarm<'a>(name: &str, run: &'a RunScore) -> Option<&'a AlarmScore> {
    match name {
        "baseline" => Some(&run.baseline),
        "rss" => run.rss.as_ref(),
        "reactive_rule" => run.reactive_rule.as_ref(),
        "rss_tuned" => run.rss_tuned.as_ref(),
        _ => None,
    }
}

/// The calibrated alarm's false-alarm claim (`target` at `confidence`) checked on a property's scored
/// runs; `None` when they were not scored with a calibrated alarm.
pub fn calibration_check(
    runs: &[&RunScore],
    target: f64,
    confidence: f64,
) -> Option<monitor::calibrate::CalibrationCheck> {
    let safe: Vec<&AlarmScore> = runs
        .iter()
        .filter(|r| !r.violated)
        .map(|r| r.calibrated.as_ref())
        .collect::<Option<_>>()?;
    let k = safe.iter().filter(|a| a.false_alarm).count();
    Some(monitor::calibrate::CalibrationCheck::new(
        k,
        safe.len(),
        target,
        confidence,
    ))
}

/// Summarises the alarm scores of a set of runs (all of one property).
pub fn summarise<'a>(scores: impl IntoIterator<Item = (&'a RunScore, &'a AlarmScore)>) -> Summary {
    summarise_alarms(
        scores
            .into_iter()
            .map(|(run, alarm)| (run.violated, run.unsafe_from_start, alarm)),
    )
}

/// [`summarise`] from each run's `(violated, unsafe from its first frame, alarm)`.
pub fn summarise_alarms<'a>(
    scores: impl IntoIterator<Item = (bool, bool, &'a AlarmScore)>,
) -> Summary {
    let mut n_violating = 0usize;
    let mut n_from_start = 0usize;
    let mut n_safe = 0usize;
    let mut n_false = 0usize;
    let mut leads = Vec::new();
    for (violated, unsafe_from_start, alarm) in scores {
        if violated {
            n_violating += 1;
            n_from_start += usize::from(unsafe_from_start);
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
        n_unsafe_from_start: n_from_start,
        predicted_pct: percent(leads.len(), n_violating),
        median_lead_s: median(&leads),
        max_lead_s: leads.last().copied(),
        n_safe_runs: n_safe,
        false_alarm_pct: percent(n_false, n_safe),
    }
}

/// `N violating` for the runs `all` summarises (any alarm of theirs: the counts of runs are the same),
/// with how many of them are unsafe from their first frame when any are: those no alarm can precede, so
/// no rule or threshold can predict them.
pub fn violating_words(all: &Summary) -> String {
    let n_violating = all.n_violating_runs;
    match all.n_unsafe_from_start {
        0 => format!("{n_violating} violating"),
        k => format!(
            "{n_violating} violating ({k} unsafe from their first frame, which no alarm can precede)"
        ),
    }
}

pub(super) fn percent(part: usize, whole: usize) -> Option<f64> {
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
