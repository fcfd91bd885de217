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

/// The false-alarm budgets (% of safe runs) at which `score`'s reports and `evaluate` read the curve: the
/// abstraction search's criterion's budgets, so the operating points it optimises are the ones shown.
pub const FALSE_ALARM_BUDGETS_PCT: [f64; 4] = [5.0, 10.0, 20.0, 40.0];

/// The curve's best point within one false-alarm budget.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BudgetPoint {
    /// The budget, % of safe runs.
    pub budget_pct: f64,
    /// The best point with at most that many false alarms ([`best_within`]); `None` when no θ keeps
    /// false alarms that low.
    pub point: Option<CurvePoint>,
}

/// The curve's best point within each of [`FALSE_ALARM_BUDGETS_PCT`].
pub fn at_budgets(curve: &[CurvePoint]) -> Vec<BudgetPoint> {
    FALSE_ALARM_BUDGETS_PCT
        .iter()
        .map(|&budget_pct| BudgetPoint {
            budget_pct,
            point: best_within(curve, budget_pct),
        })
        .collect()
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

/// Whether median lead `ours` is strictly longer than `theirs` (any lead is longer than none).
pub fn longer_lead(ours: Option<f64>, theirs: Option<f64>) -> bool {
    match (ours, theirs) {
        (Some(a), Some(b)) => a > b,
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
        // Levels are the positive risks the runs reach.
        let floor = if k < safe_max.len() {
            let (_, kth, _) = safe_max.select_nth_unstable_by(k, |a, b| b.total_cmp(a));
            kth.max(0.0)
        } else {
            0.0
        };
        // An envelope's risks rise strictly, so its first point above the floor is found by bisection.
        let mut by_run = RunByRun::default();
        for r in runs.iter().filter(|r| r.violated) {
            let env = r.envelope;
            let mine = env
                .get(env.partition_point(|&(x, _)| x <= floor))
                .filter(|(x, _)| x.is_finite())
                .map(|&(_, lead)| lead);
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
        let longer = match (median(ours), median(theirs)) {
            (Some(a), Some(b)) => a > b,
            (Some(_), None) => true,
            (None, _) => false,
        };
        (ours.len() >= theirs.len() && longer, by_run)
    }
}

/// Leads closer than this are the same frame's (both are the violation's time minus a frame's time).
const LEAD_TIE_S: f64 = 1e-9;

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
        Comparison {
            comparators,
            calibrated,
            curve,
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

/// A run's alarm under the comparator named `name` in a [`Comparison`] (`baseline`, `rss`,
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
