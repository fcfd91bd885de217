//! Whether the curve dominates a comparator — at the comparator's false-alarm rate, as many violations
//! warned of with a longer median lead — and the same run by run; each verdict with the share of
//! bootstrap resamples of the runs in which it holds, and the comparison with every comparator.

use serde::{Deserialize, Serialize};

use super::{
    best_within, comparator_alarm, curve, median, summarise, AlarmScore, BudgetPoint, CurvePoint,
    RunScore, Summary,
};

/// How the curve fares against one comparator, at the comparator's false-alarm rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dominance {
    /// The comparator's name.
    pub comparator: String,
    /// Its summary.
    pub comparator_summary: Summary,
    /// The curve's best point with at most the comparator's false-alarm rate (most violations warned,
    /// then longest lead); `None` when no θ keeps false alarms that low.
    pub ours: Option<CurvePoint>,
    /// At least as many violations warned of, with a longer median lead.
    pub dominates: bool,
    /// The share of bootstrap resamples of the runs in which the curve dominates (see
    /// [`dominance_shares`]); `None` without a violating run, or where not computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resampled_share: Option<f64>,
    /// The same point against the comparator run by run (see [`RunByRun`]); `None` where not computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_by_run: Option<RunByRun>,
    /// The share of the same resamples in which the curve is [`RunByRun::earlier_run_by_run`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_by_run_share: Option<f64>,
}

impl Dominance {
    /// The verdict with what only the runs themselves tell: the share of resamples in which it holds,
    /// the run-by-run comparison at the same point and its share. `runs` are the runs the curve and the
    /// comparator were scored on, each with the comparator's alarm.
    pub fn resampled(mut self, runs: &[PairedRun<'_>]) -> Dominance {
        let resamples = resamples_for(runs.len());
        let shares = dominance_shares(runs, resamples, RESAMPLE_SEED);
        self.resampled_share = shares.map(|s| s.0);
        self.run_by_run_share = shares.map(|s| s.1);
        let refs: Vec<&PairedRun<'_>> = runs.iter().collect();
        self.run_by_run = Some(run_by_run_in(&refs));
        self
    }
}

/// The curve against a comparator run by run, at the curve's lowest θ within the comparator's
/// false-alarm rate (no admissible θ warns of more runs or of any run earlier; [`Dominance::ours`] has
/// the same predicted share and median lead): of the violating runs the comparator warns of, how many
/// the curve warns of earlier, at the same frame, later, or not at all. [`Dominance::dominates`] compares the median lead over the runs
/// the curve warns of with the median over the runs the comparator warns of: when the comparator warns
/// of few runs early and the curve of many, those are different runs, and when both read the same
/// signal the 0.1 s frames make equal medians common. This compares the leads on the same runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunByRun {
    /// Violating runs the comparator warns of.
    pub theirs: usize,
    /// Violating runs the curve warns of.
    pub ours: usize,
    /// Of the comparator's: warned of earlier by the curve.
    pub earlier: usize,
    /// ... at the same frame.
    pub same: usize,
    /// ... later.
    pub later: usize,
    /// ... not at all.
    pub missed: usize,
}

impl RunByRun {
    /// The curve warns of at least as many violations, and of more of the comparator's runs earlier
    /// than later or not at all (when the comparator warns of none: of at least one).
    pub fn earlier_run_by_run(&self) -> bool {
        self.ours >= self.theirs
            && if self.theirs == 0 {
                self.ours > 0
            } else {
                self.earlier > self.later + self.missed
            }
    }
}

/// Whether median lead `ours` is strictly longer than `theirs` (any lead is longer than none). Leads
/// within a microsecond of each other are equal: medians taken over different runs differ in their last
/// bits when the frame times do not sit exactly on a decimal grid (17.5 − 16.9 is 0.6000000000000014 s,
/// 8.3 − 7.7 is 0.5999999999999996 s), which must not decide a verdict.
pub fn longer_lead(ours: Option<f64>, theirs: Option<f64>) -> bool {
    match (ours, theirs) {
        (Some(a), Some(b)) => a > b + LEAD_TIE_S,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// Compares `curve` with a comparator's `summary` (see [`Dominance`]).
pub fn dominance(comparator: &str, summary: &Summary, curve: &[CurvePoint]) -> Dominance {
    let ours = best_within(curve, summary.false_alarm_pct.unwrap_or(0.0));
    let dominates = ours.is_some_and(|p| {
        let theirs_pred = summary.predicted_pct.unwrap_or(0.0);
        p.predicted_pct >= theirs_pred && longer_lead(p.median_lead_s, summary.median_lead_s)
    });
    Dominance {
        comparator: comparator.to_owned(),
        comparator_summary: *summary,
        ours,
        dominates,
        resampled_share: None,
        run_by_run: None,
        run_by_run_share: None,
    }
}

/// Whether the calibrated alarm warns earlier than a comparator (RSS tuned to the calibration's target,
/// in `score`, `evaluate` and the demo): at least as many violations warned of, no more false alarms,
/// and a longer median lead, all on the same runs.
pub fn calibrated_is_earlier(calibrated: &Summary, other: &Summary) -> bool {
    let pred = |s: &Summary| s.predicted_pct.unwrap_or(0.0);
    let fa = |s: &Summary| s.false_alarm_pct.unwrap_or(0.0);
    pred(calibrated) >= pred(other)
        && fa(calibrated) <= fa(other)
        && longer_lead(calibrated.median_lead_s, other.median_lead_s)
}

/// One run as a dominance verdict sees it: the curve's side (the run's highest risk and, when it
/// violates, its envelope) and one comparator's alarm on it.
#[derive(Debug, Clone, Copy)]
pub struct PairedRun<'a> {
    /// The run violates the property.
    pub violated: bool,
    /// [`RunScore::max_risk`].
    pub max_risk: f64,
    /// [`RunScore::envelope`].
    pub envelope: &'a [(f64, f64)],
    /// The comparator's alarm.
    pub comparator: AlarmScore,
}

impl<'a> PairedRun<'a> {
    /// `run` against the comparator alarm `pick` gives (`None` where it gives none).
    pub fn of(run: &'a RunScore, pick: impl Fn(&RunScore) -> Option<&AlarmScore>) -> Option<Self> {
        pick(run).map(|&comparator| PairedRun {
            violated: run.violated,
            max_risk: run.max_risk,
            envelope: &run.envelope,
            comparator,
        })
    }
}

/// Bootstrap resamples per comparator pair ([`Comparison::of`], `evaluate`'s budget rules) up to
/// [`RESAMPLED_RUNS`] runs (see [`resamples_for`]).
pub const RESAMPLES: usize = 1000;

/// Above this many runs, fewer resamples are drawn, so that a pair costs at most `RESAMPLES ×
/// RESAMPLED_RUNS` draws.
pub const RESAMPLED_RUNS: usize = 10_000;

/// The resamples drawn for a pair over `n_runs` runs: [`RESAMPLES`], or for more than [`RESAMPLED_RUNS`]
/// runs as many as keep the draws to `RESAMPLES × RESAMPLED_RUNS`, and at least 100. On so many runs
/// the share varies little from resample to resample, and a batch of 100,000 logs still costs about a
/// second per pair.
pub fn resamples_for(n_runs: usize) -> usize {
    if n_runs <= RESAMPLED_RUNS {
        RESAMPLES
    } else {
        (RESAMPLES * RESAMPLED_RUNS / n_runs).max(100)
    }
}

/// Seed of those resamples: the same runs give the same shares.
pub const RESAMPLE_SEED: u64 = 0;

/// How often the curve dominates the comparator when the runs are drawn again: the share of `resamples`
/// bootstrap resamples of `runs` in which [`dominance`] (with the curve and the comparator's summary of
/// that resample) says it dominates, and, from the same resamples, the share in which it is
/// [`RunByRun::earlier_run_by_run`]. Each resample draws as many violating runs and as many safe runs as
/// there are, with replacement, so that both counts stay fixed. A share near 1 or 0 is a verdict these
/// runs support; one near ½ is within their noise. Seeded and deterministic; `None` without a violating
/// run or a resample.
pub fn dominance_shares(runs: &[PairedRun<'_>], resamples: usize, seed: u64) -> Option<(f64, f64)> {
    use rand::{Rng, SeedableRng};
    use rayon::prelude::*;
    let violating: Vec<&PairedRun<'_>> = runs.iter().filter(|r| r.violated).collect();
    let safe: Vec<&PairedRun<'_>> = runs.iter().filter(|r| !r.violated).collect();
    if violating.is_empty() || resamples == 0 {
        return None;
    }
    let (wins, earlier) = (0..resamples)
        .into_par_iter()
        .map_init(
            || (Vec::new(), Scratch::default()),
            |(sample, scratch), i| {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                rng.set_stream(i as u64);
                sample.clear();
                for group in [&violating, &safe] {
                    sample
                        .extend((0..group.len()).map(|_| group[rng.random_range(0..group.len())]));
                }
                let (dominates, by_run) = scratch.verdicts(sample);
                (
                    usize::from(dominates),
                    usize::from(by_run.earlier_run_by_run()),
                )
            },
        )
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let n = resamples as f64;
    Some((wins as f64 / n, earlier as f64 / n))
}

/// [`dominance`]'s verdict on a set of runs (repeats allowed), without building the curve. The curve's
/// best point within the comparator's false-alarm rate — k of the safe runs — is its lowest admissible θ:
/// lowering θ never warns of fewer runs, nor later. Any level above the (k + 1)-th highest safe risk
/// keeps to k, and no level lies between that risk and the lowest such level, so a violating run is
/// warned of exactly when its envelope rises above that risk, and its lead is the first such point's.
/// The tests check it against [`curve`] and [`dominance`].
pub fn dominates_in(runs: &[&PairedRun<'_>]) -> bool {
    Scratch::default().verdicts(runs).0
}

/// The run-by-run comparison ([`RunByRun`]) on a set of runs (repeats allowed), at the same point as
/// [`dominates_in`].
pub fn run_by_run_in(runs: &[&PairedRun<'_>]) -> RunByRun {
    Scratch::default().verdicts(runs).1
}

/// The buffers of [`dominates_in`], kept from one resample to the next.
#[derive(Default)]
struct Scratch {
    theirs: Vec<f64>,
    ours: Vec<f64>,
    safe_max: Vec<f64>,
}

impl Scratch {
    /// The literal verdict and the run-by-run comparison at the curve's point within the comparator's
    /// false-alarm rate.
    fn verdicts(&mut self, runs: &[&PairedRun<'_>]) -> (bool, RunByRun) {
        let Scratch {
            theirs,
            ours,
            safe_max,
        } = self;
        theirs.clear();
        ours.clear();
        safe_max.clear();
        let mut k = 0usize;
        for r in runs {
            if !r.violated {
                safe_max.push(r.max_risk);
                k += usize::from(r.comparator.false_alarm);
            }
        }
        let floor = floor_within(safe_max, k);
        let mut by_run = RunByRun::default();
        for r in runs.iter().filter(|r| r.violated) {
            let mine = first_lead_above(r.envelope, floor);
            ours.extend(mine);
            theirs.extend(r.comparator.lead_s);
            by_run.ours += usize::from(mine.is_some());
            if let Some(t) = r.comparator.lead_s {
                by_run.theirs += 1;
                match mine {
                    None => by_run.missed += 1,
                    Some(m) if m > t + LEAD_TIE_S => by_run.earlier += 1,
                    Some(m) if m < t - LEAD_TIE_S => by_run.later += 1,
                    Some(_) => by_run.same += 1,
                }
            }
        }
        if ours.is_empty() {
            return (false, by_run);
        }
        ours.sort_by(f64::total_cmp);
        theirs.sort_by(f64::total_cmp);
        let longer = longer_lead(median(ours), median(theirs));
        (ours.len() >= theirs.len() && longer, by_run)
    }
}

/// The risk the curve's lowest θ that alarms at most `k` of the safe runs must rise above, given those
/// runs' highest risks `safe_max` (reordered): the (k + 1)-th highest of them, or 0 when `k` allows them
/// all. Levels are the positive risks the runs reach; any level above this one keeps to `k`, and none lies
/// between it and the lowest such level.
pub(super) fn floor_within(safe_max: &mut [f64], k: usize) -> f64 {
    if k < safe_max.len() {
        let (_, kth, _) = safe_max.select_nth_unstable_by(k, |a, b| b.total_cmp(a));
        kth.max(0.0)
    } else {
        0.0
    }
}

/// A violating run's lead at the lowest level above `floor`: its envelope's first point above it (the
/// envelope's risks rise strictly, so found by bisection); `None` when its risk never rises that high.
pub(super) fn first_lead_above(envelope: &[(f64, f64)], floor: f64) -> Option<f64> {
    envelope
        .get(envelope.partition_point(|&(x, _)| x <= floor))
        .filter(|(x, _)| x.is_finite())
        .map(|&(_, lead)| lead)
}

/// Leads closer than this are equal, s. On one run two leads are the violation's time minus a frame's, so
/// equal frames give equal leads and distinct frames differ by a frame period (at least a millisecond for
/// any source the tools read at a set period). Across runs a lead that should read 0.6 s carries the
/// rounding of its two frame times: about 1e-15 s for times from 0, up to about 2.4e-7 s for Unix times
/// such as an Apollo record's (f64's spacing near 1.7e9). A microsecond is above both and far below a
/// frame.
pub(super) const LEAD_TIE_S: f64 = 1e-6;

/// A property's runs against every comparator: the reactive baseline, RSS and the reactive rule where
/// scored, the calibrated alarm, the curve, and the curve's dominance over each comparator with the share
/// of resamples of the runs in which it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// `(name, summary)` per comparator present: `baseline`, `rss`, `reactive_rule`, `rss_tuned`.
    pub comparators: Vec<(String, Summary)>,
    /// The calibrated alarm's summary, when the runs were scored with one.
    pub calibrated: Option<Summary>,
    /// The prediction / false-alarm / lead curve.
    pub curve: Vec<CurvePoint>,
    /// The curve's points at the false-alarm budgets, each with its lead's interval over resamples of
    /// the runs ([`super::budget_points`]).
    #[serde(default)]
    pub budgets: Vec<BudgetPoint>,
    /// The curve against each comparator.
    pub dominance: Vec<Dominance>,
}

impl Comparison {
    /// Compares one property's runs.
    pub fn of<'a>(runs: &[&'a RunScore]) -> Comparison {
        let mut comparators = vec![(
            "baseline".to_owned(),
            summarise(runs.iter().map(|r| (*r, &r.baseline))),
        )];
        for name in ["rss", "reactive_rule", "rss_tuned"] {
            let pick = |r: &'a RunScore| comparator_alarm(name, r);
            if runs.iter().any(|r| pick(r).is_some()) {
                let s = summarise(runs.iter().filter_map(|r| pick(r).map(|a| (*r, a))));
                comparators.push((name.to_owned(), s));
            }
        }
        let calibrated = runs.iter().any(|r| r.calibrated.is_some()).then(|| {
            summarise(
                runs.iter()
                    .filter_map(|r| r.calibrated.as_ref().map(|a| (*r, a))),
            )
        });
        let curve = curve(runs);
        let dominance = comparators
            .iter()
            .map(|(name, s)| {
                let paired: Vec<PairedRun<'_>> = runs
                    .iter()
                    .filter_map(|r| PairedRun::of(r, |r| comparator_alarm(name, r)))
                    .collect();
                dominance(name, s, &curve).resampled(&paired)
            })
            .collect();
        let budgets = super::budget_points(runs, &curve);
        Comparison {
            comparators,
            calibrated,
            curve,
            budgets,
            dominance,
        }
    }

    /// Whether the calibrated alarm warns earlier than the comparator `name` on these runs (as many
    /// violations warned of, no more false alarms, a longer median lead; see
    /// [`calibrated_is_earlier`]); `None` without either.
    pub fn calibrated_earlier_than(&self, name: &str) -> Option<bool> {
        let calibrated = self.calibrated.as_ref()?;
        let (_, other) = self.comparators.iter().find(|(n, _)| n == name)?;
        Some(calibrated_is_earlier(calibrated, other))
    }
}
