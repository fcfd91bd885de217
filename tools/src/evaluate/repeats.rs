//! The summary of evaluations repeated with several seeds.

use super::{Evaluation, PairTally, MIN_VIOLATING_FOR_PAIRS, ROBUST_SHARE};
use crate::time_ahead::{BudgetPoint, CurvePoint, FALSE_ALARM_BUDGETS_PCT};

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
