//! The curve of predicted runs, false alarms and lead over θ, and its points at the false-alarm budgets.

use serde::{Deserialize, Serialize};

use super::summary::percent;
use super::{median, RunScore};

/// One point of a property's prediction / false-alarm / lead curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// The threshold θ (alarm when risk ≥ θ).
    pub theta: f64,
    /// Violating runs warned of before their violation, %.
    pub predicted_pct: f64,
    /// Safe runs with an alarm, %.
    pub false_alarm_pct: f64,
    /// Median lead over the warned runs, s.
    pub median_lead_s: Option<f64>,
}

/// The curve at every distinct risk level the runs reach (θ ascending): each run's highest risk decides
/// whether it alarms at θ, and a violating run's envelope gives its lead.
pub fn curve(runs: &[&RunScore]) -> Vec<CurvePoint> {
    let mut levels: Vec<f64> = runs
        .iter()
        .flat_map(|r| std::iter::once(r.max_risk).chain(r.envelope.iter().map(|&(x, _)| x)))
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    let n_violating = runs.iter().filter(|r| r.violated).count();
    let n_safe = runs.len() - n_violating;
    levels
        .into_iter()
        .map(|theta| {
            let mut leads: Vec<f64> = runs
                .iter()
                .filter(|r| r.violated)
                .filter_map(|r| {
                    r.envelope
                        .iter()
                        .find(|&&(x, _)| x >= theta)
                        .map(|&(_, l)| l)
                })
                .collect();
            leads.sort_by(f64::total_cmp);
            let n_fa = runs
                .iter()
                .filter(|r| !r.violated && r.max_risk >= theta)
                .count();
            CurvePoint {
                theta,
                predicted_pct: percent(leads.len(), n_violating).unwrap_or(0.0),
                false_alarm_pct: percent(n_fa, n_safe).unwrap_or(0.0),
                median_lead_s: median(&leads),
            }
        })
        .collect()
}

/// The false-alarm budgets (% of safe runs) at which `score`'s reports and `evaluate` read the curve: the
/// abstraction search's criterion's budgets, so the operating points it optimises are the ones shown.
pub const FALSE_ALARM_BUDGETS_PCT: [f64; 4] = [5.0, 10.0, 20.0, 40.0];

/// The curve's best point within one false-alarm budget.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BudgetPoint {
    /// The budget, % of safe runs.
    pub budget_pct: f64,
    /// The best point with at most that many false alarms ([`best_within`]); `None` when no θ keeps
    /// false alarms that low.
    pub point: Option<CurvePoint>,
    /// The lowest and highest median lead at this budget, s, in 90 % of bootstrap resamples of the runs
    /// the curve was scored on, the point chosen again in each ([`super::lead_intervals`]); `None`
    /// without a point or where not computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_interval_s: Option<[f64; 2]>,
}

/// The curve's best point within each of [`FALSE_ALARM_BUDGETS_PCT`].
pub fn at_budgets(curve: &[CurvePoint]) -> Vec<BudgetPoint> {
    FALSE_ALARM_BUDGETS_PCT
        .iter()
        .map(|&budget_pct| BudgetPoint {
            budget_pct,
            point: best_within(curve, budget_pct),
            lead_interval_s: None,
        })
        .collect()
}

/// The budgets' lead intervals in one line, `median lead in 90 % of resamples of these runs: 0.3–0.6 /
/// ... s` (`–` where a budget has none); `None` when no budget has one.
pub fn lead_intervals_in_words(budgets: &[BudgetPoint]) -> Option<String> {
    if budgets.iter().all(|b| b.lead_interval_s.is_none()) {
        return None;
    }
    let cells: Vec<String> = budgets
        .iter()
        .map(|b| {
            b.lead_interval_s
                .map_or("–".to_owned(), |[lo, hi]| format!("{lo:.2}–{hi:.2}"))
        })
        .collect();
    Some(format!(
        "median lead in 90 % of resamples of these runs: {} s",
        cells.join(" / ")
    ))
}

/// The curve at the budgets in one line, `at ≤ 5 / 10 / 20 / 40 % false alarms: 98.3 / 100.0 / ... %
/// warned of, median lead 0.5 / 0.6 / ... s` (`–` where no θ keeps within a budget or none is warned of);
/// `None` when no budget has a point.
pub fn budgets_in_words(budgets: &[BudgetPoint]) -> Option<String> {
    if budgets.iter().all(|b| b.point.is_none()) {
        return None;
    }
    let join =
        |f: &dyn Fn(&BudgetPoint) -> String| budgets.iter().map(f).collect::<Vec<_>>().join(" / ");
    Some(format!(
        "at ≤ {} % false alarms: {} % warned of, median lead {} s",
        join(&|b| format!("{:.0}", b.budget_pct)),
        join(&|b| b
            .point
            .map_or("–".to_owned(), |p| format!("{:.1}", p.predicted_pct))),
        join(&|b| b
            .point
            .and_then(|p| p.median_lead_s)
            .map_or("–".to_owned(), |l| format!("{l:.2}"))),
    ))
}

/// The curve's best point with at most `false_alarm_pct` % false alarms: most violations warned of, then
/// the longest median lead; `None` when no θ keeps false alarms that low.
pub fn best_within(curve: &[CurvePoint], false_alarm_pct: f64) -> Option<CurvePoint> {
    curve
        .iter()
        .filter(|p| p.false_alarm_pct <= false_alarm_pct + 1e-9)
        .max_by(|a, b| {
            a.predicted_pct.total_cmp(&b.predicted_pct).then(
                a.median_lead_s
                    .unwrap_or(0.0)
                    .total_cmp(&b.median_lead_s.unwrap_or(0.0)),
            )
        })
        .copied()
}
