//! How far the curve's points at the false-alarm budgets would move on other runs like these: the median
//! lead at each budget over bootstrap resamples of the scored runs, the point chosen again in each.
//!
//! A median lead over a few dozen violating runs, read at a θ where one safe run is a percent or more of
//! the false alarms, moves by tenths of a second from one set of runs to the next (`docs/MEASUREMENTS.md`,
//! session 33: four test sets of 150 runs from one generator gave one residential model's ≤ 40 % lead as
//! 2.3, 2.4, 1.9 and 1.5 s). The interval says how much of a difference between two such figures these
//! runs can tell apart.

use super::dominance::{first_lead_above, floor_within};
use super::summary::percent;
use super::{
    at_budgets, median, resamples_for, BudgetPoint, CurvePoint, RunScore, FALSE_ALARM_BUDGETS_PCT,
    RESAMPLE_SEED,
};

/// The share of resamples a lead interval holds (from the 5th to the 95th percentile).
pub const LEAD_INTERVAL_SHARE: f64 = 0.9;

/// The curve's points at [`FALSE_ALARM_BUDGETS_PCT`] ([`at_budgets`]), each with the interval that holds
/// its median lead in [`LEAD_INTERVAL_SHARE`] of the bootstrap resamples of `runs` ([`lead_intervals`];
/// as many resamples as a dominance verdict draws). `curve` is the curve of the same runs.
pub fn budget_points(runs: &[&RunScore], curve: &[CurvePoint]) -> Vec<BudgetPoint> {
    let mut points = at_budgets(curve);
    let intervals = lead_intervals(
        runs,
        &FALSE_ALARM_BUDGETS_PCT,
        resamples_for(runs.len()),
        RESAMPLE_SEED,
    );
    for (p, interval) in points.iter_mut().zip(intervals) {
        if p.point.is_some() {
            p.lead_interval_s = interval;
        }
    }
    points
}

/// The lowest and highest median lead at each budget (% of safe runs) in the middle
/// [`LEAD_INTERVAL_SHARE`] of `resamples` bootstrap resamples of `runs`: the 5th and 95th percentiles.
/// Each resample draws as many violating and as many safe runs as there are, with replacement (so the
/// budget allows the same number of false alarms in each), and chooses its point as [`best_within`]
/// chooses it on the resample's own curve: the lowest θ that alarms in at most that many of its safe runs,
/// which warns of the most violations, each as early as any admissible θ. A resample in which no
/// violation is warned of counts a lead of 0 s. Seeded and deterministic; `None` for a budget without a
/// violating run or a resample.
///
/// [`best_within`]: super::best_within
pub fn lead_intervals(
    runs: &[&RunScore],
    budgets_pct: &[f64],
    resamples: usize,
    seed: u64,
) -> Vec<Option<[f64; 2]>> {
    use rand::{Rng, SeedableRng};
    use rayon::prelude::*;
    let violating: Vec<&RunScore> = runs.iter().copied().filter(|r| r.violated).collect();
    let safe: Vec<f64> = runs
        .iter()
        .filter(|r| !r.violated)
        .map(|r| r.max_risk)
        .collect();
    if violating.is_empty() || resamples == 0 {
        return vec![None; budgets_pct.len()];
    }
    let allowed = allowed_false_alarms(budgets_pct, safe.len());
    // Per resample, the median lead at each budget.
    let medians: Vec<Vec<f64>> = (0..resamples)
        .into_par_iter()
        .map_init(Vec::new, |picked, i| {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(i as u64);
            picked.clear();
            picked.extend(
                (0..violating.len()).map(|_| violating[rng.random_range(0..violating.len())]),
            );
            let drawn: Vec<f64> = (0..safe.len())
                .map(|_| safe[rng.random_range(0..safe.len())])
                .collect();
            median_leads_within(picked, &drawn, &allowed)
        })
        .collect();
    let tail = (1.0 - LEAD_INTERVAL_SHARE) / 2.0;
    let last = (resamples - 1) as f64;
    (0..budgets_pct.len())
        .map(|j| {
            let mut at: Vec<f64> = medians.iter().map(|m| m[j]).collect();
            at.sort_by(f64::total_cmp);
            let rank = |q: f64| at[((q * last).round() as usize).min(resamples - 1)];
            Some([rank(tail), rank(1.0 - tail)])
        })
        .collect()
}

/// Per budget (% of safe runs), the most of `n_safe` safe runs that may alarm within it: the largest count
/// whose share keeps within the budget as the curve counts shares.
pub(super) fn allowed_false_alarms(budgets_pct: &[f64], n_safe: usize) -> Vec<usize> {
    budgets_pct
        .iter()
        .map(|&b| {
            (0..=n_safe)
                .take_while(|&j| percent(j, n_safe).unwrap_or(0.0) <= b + 1e-9)
                .last()
                .unwrap_or(0)
        })
        .collect()
}

/// The median lead of the violating runs `violating` at the lowest θ that alarms in at most `k` of the
/// safe runs whose highest risks are `safe_max`, for each `k` of `allowed` (0 s where none is warned
/// of): the curve's point within each budget, found without building the curve.
pub(super) fn median_leads_within(
    violating: &[&RunScore],
    safe_max: &[f64],
    allowed: &[usize],
) -> Vec<f64> {
    let mut risks = Vec::with_capacity(safe_max.len());
    let mut leads = Vec::with_capacity(violating.len());
    allowed
        .iter()
        .map(|&k| {
            risks.clear();
            risks.extend_from_slice(safe_max);
            let floor = floor_within(&mut risks, k);
            leads.clear();
            leads.extend(
                violating
                    .iter()
                    .filter_map(|r| first_lead_above(&r.envelope, floor)),
            );
            leads.sort_by(f64::total_cmp);
            median(&leads).unwrap_or(0.0)
        })
        .collect()
}
