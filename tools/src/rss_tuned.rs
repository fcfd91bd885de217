//! RSS with its response times tuned to each false-alarm budget: the fair form of the RSS comparator for
//! a collision property.
//!
//! RSS with CARLA's parameters is one operating point, and a cautious one: in the shipped scenarios it
//! alarms in about two thirds of the safe runs, so its warnings come early, and "earlier than RSS" at that
//! rate says little about a monitor calibrated for 10 %. A safety engineer held to a false-alarm budget
//! would shorten RSS's response times until it keeps within it. So for each budget, every response-time
//! scale of [`RESPONSE_SCALES`] (applied to the ego's, other vehicles' and pedestrians' response times
//! alike, [`RssParams::with_response_scale`]) is scored on the *learning* runs, and the scale with the
//! highest mean warning utility among those alarming in at most `floor(budget · safe runs)` of them is
//! kept — the objective the rules written for each budget are chosen by ([`Objective::WithinBudget`]),
//! ties to the longer response time. The chosen RSS is then scored on the test runs beside the curve,
//! which is compared with it at its own test false-alarm rate, as with every comparator. Nothing is tuned
//! on the test runs. `evaluate` tunes on its learning runs; the demo, which keeps its training runs in
//! memory only as records, on its calibration runs.
//!
//! [`Objective::WithinBudget`]: monitor::select::rule::Objective::WithinBudget

use laws::frame::Frame;
use laws::rss::RssParams;
use monitor::calibrate::RssTuning;
use monitor::select::criterion::utility;
use serde::Serialize;

use crate::time_ahead::{
    first_alarm_score, summarise_alarms, AlarmScore, Dominance, RunScore, RunSeries, Summary,
};

/// The response-time scales tried, from CARLA's (1) down to none (0): RSS's safe distances shrink with
/// them, and so do its alarms.
pub const RESPONSE_SCALES: [f64; 9] = [1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0];

/// The indices of `model`'s collision properties, the ones RSS is tuned for.
pub fn collision_properties(model: &monitor::Model) -> Vec<usize> {
    model
        .properties()
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_collision())
        .map(|(i, _)| i)
        .collect()
}

/// CARLA's RSS under each of [`RESPONSE_SCALES`] when `model` has a collision property, else none: the
/// variants whose alarms a calibration records for [`tune_to_target`].
pub fn model_variants(model: &monitor::Model) -> Vec<RssParams> {
    if collision_properties(model).is_empty() {
        Vec::new()
    } else {
        variants(&RssParams::CARLA)
    }
}

/// `base` under each of [`RESPONSE_SCALES`], in that order.
pub fn variants(base: &RssParams) -> Vec<RssParams> {
    RESPONSE_SCALES
        .iter()
        .map(|&s| base.with_response_scale(s))
        .collect()
}

/// The first frame each of `variants` finds dangerous, per variant.
pub fn first_dangerous(frames: &[Frame], variants: &[RssParams]) -> Vec<Option<usize>> {
    let mut first = vec![None; variants.len()];
    for (i, f) in frames.iter().enumerate() {
        let mut open = false;
        for (slot, p) in first.iter_mut().zip(variants) {
            if slot.is_none() {
                if p.dangerous(f) {
                    *slot = Some(i);
                } else {
                    open = true;
                }
            }
        }
        if !open {
            break;
        }
    }
    first
}

/// One run of a property as the tuning sees it: whether it violates, and each variant's alarm on it.
#[derive(Debug, Clone)]
pub struct TuningRun {
    /// The run violates the property.
    pub violated: bool,
    /// It is unsafe from its first frame, so no alarm can precede the violation.
    pub unsafe_from_start: bool,
    /// Per variant, its alarm (counted before the violation only).
    pub alarms: Vec<AlarmScore>,
}

impl TuningRun {
    /// The run's series for one property and the variants' first dangerous frames.
    pub fn of(series: &RunSeries, first: &[Option<usize>]) -> TuningRun {
        TuningRun {
            violated: series.unsafe_now.iter().any(|&u| u),
            unsafe_from_start: series.unsafe_now.first() == Some(&true),
            alarms: first
                .iter()
                .map(|&f| first_alarm_score(f, series))
                .collect(),
        }
    }
}

/// Variant `v`'s alarms over `runs`, summarised as [`crate::time_ahead::summarise`] does.
pub fn summary_of(runs: &[TuningRun], v: usize) -> Summary {
    summarise_alarms(
        runs.iter()
            .map(|r| (r.violated, r.unsafe_from_start, &r.alarms[v])),
    )
}

/// Per variant of `runs`: (false alarms on the safe runs, mean utility over the violating runs); `None`
/// when no run violates.
fn tallies(runs: &[TuningRun]) -> Option<Vec<(usize, f64)>> {
    let n_variants = runs.first().map_or(0, |r| r.alarms.len());
    let n_viol = runs.iter().filter(|r| r.violated).count();
    (n_viol > 0).then(|| {
        (0..n_variants)
            .map(|v| {
                let n_false = runs
                    .iter()
                    .filter(|r| !r.violated && r.alarms[v].false_alarm)
                    .count();
                let u = runs
                    .iter()
                    .filter(|r| r.violated)
                    .map(|r| utility(r.alarms[v].lead_s))
                    .sum::<f64>()
                    / n_viol as f64;
                (n_false, u)
            })
            .collect()
    })
}

/// The variant chosen for a false-alarm `budget` (a fraction) on the learning `runs`: the highest mean
/// utility among the variants alarming in at most `floor(budget · n_safe)` safe runs, ties to the lower
/// index (the longer response time); `None` when none keeps within the budget or no run violates.
pub fn choose(runs: &[TuningRun], budget: f64) -> Option<usize> {
    let n_safe = runs.iter().filter(|r| !r.violated).count();
    let allowed = (budget * n_safe as f64 + 1e-9).floor() as usize;
    let mut best: Option<(f64, usize)> = None;
    for (v, (n_false, u)) in tallies(runs)?.into_iter().enumerate() {
        if n_false <= allowed && best.is_none_or(|(b, _)| u > b) {
            best = Some((u, v));
        }
    }
    best.map(|(_, v)| v)
}

/// The variant with the fewest false alarms on the learning `runs` (ties: the highest mean utility, then
/// the lower index): as near a budget RSS can come when no variant keeps within it. `None` when no run
/// violates.
pub fn fewest_false_alarms(runs: &[TuningRun]) -> Option<usize> {
    let mut best: Option<(usize, f64, usize)> = None;
    for (v, (n_false, u)) in tallies(runs)?.into_iter().enumerate() {
        if best.is_none_or(|(f, b, _)| n_false < f || (n_false == f && u > b)) {
            best = Some((n_false, u, v));
        }
    }
    best.map(|(_, _, v)| v)
}

/// The variant RSS is tuned to for a false-alarm `target` on `runs`, and whether it keeps within it:
/// [`choose`], or where no variant keeps within the target, [`fewest_false_alarms`] (then `false`). `None`
/// when no run violates.
pub fn tune(runs: &[TuningRun], target: f64) -> Option<(usize, bool)> {
    match choose(runs, target) {
        Some(v) => Some((v, true)),
        None => fewest_false_alarms(runs).map(|v| (v, false)),
    }
}

/// RSS tuned on calibration runs to a collision property's false-alarm target ([`tune_to_target`]):
/// `calibrate` stores it in the model for `score`'s reports, the demo shows the calibrated alarm beside
/// it.
#[derive(Debug, Clone)]
pub struct TunedRss {
    /// The property.
    pub property: String,
    /// The target, a fraction of safe runs.
    pub target: f64,
    /// RSS with the chosen response times.
    pub params: RssParams,
    /// The response-time scale (of CARLA's).
    pub scale: f64,
    /// It keeps within the target on the calibration runs (false: RSS's fewest false alarms there).
    pub within_target: bool,
    /// On the calibration runs.
    pub calibration: Summary,
}

impl TunedRss {
    /// As the model stores it, with the counts of the calibration `runs` it was tuned on.
    fn stored(&self, runs: &[TuningRun], v: usize) -> RssTuning {
        let (mut n_safe, mut n_false, mut n_viol, mut n_pred) = (0, 0, 0, 0);
        for r in runs {
            let a = &r.alarms[v];
            if r.violated {
                n_viol += 1;
                n_pred += usize::from(a.lead_s.is_some());
            } else {
                n_safe += 1;
                n_false += usize::from(a.false_alarm);
            }
        }
        RssTuning {
            response_scale: self.scale,
            target_false_alarm: self.target,
            within_target: self.within_target,
            n_safe_runs: n_safe,
            n_false_alarms: n_false,
            n_violating_runs: n_viol,
            n_predicted: n_pred,
            median_lead_s: self.calibration.median_lead_s,
        }
    }
}

/// Tunes RSS to the false-alarm `target` for every collision property of `model` on calibration runs
/// and stores it in the model ([`monitor::PropertyModel::rss_tuning`]; a property without a violating
/// run among them keeps none). `variants` are [`model_variants`] of the model, `series[r]` run `r`'s
/// per-property series and `first[r]` the first frame each of `variants` finds dangerous in it; property
/// `p` is tuned on the runs `r` for which `include(r, p)` holds.
///
/// # Errors
/// `variants` that are not one per [`RESPONSE_SCALES`] while the model has a collision property, or the
/// model refusing the tuning, which a collision property never does.
pub fn tune_to_target(
    model: &mut monitor::Model,
    variants: &[RssParams],
    series: &[Vec<RunSeries>],
    first: &[Vec<Option<usize>>],
    target: f64,
    include: impl Fn(usize, usize) -> bool,
) -> anyhow::Result<Vec<TunedRss>> {
    let collision = collision_properties(model);
    anyhow::ensure!(
        collision.is_empty() || variants.len() == RESPONSE_SCALES.len(),
        "RSS is tuned over {} response-time scales, but {} variants were recorded",
        RESPONSE_SCALES.len(),
        variants.len()
    );
    let mut tuned = Vec::new();
    for p in collision {
        let runs: Vec<TuningRun> = (0..series.len().min(first.len()))
            .filter(|&r| include(r, p))
            .filter_map(|r| Some(TuningRun::of(series[r].get(p)?, &first[r])))
            .collect();
        let name = model.properties()[p].name().to_owned();
        let Some((v, within_target)) = tune(&runs, target) else {
            model.set_rss_tuning(&name, None)?;
            continue;
        };
        let t = TunedRss {
            property: name.clone(),
            target,
            params: variants[v],
            scale: RESPONSE_SCALES[v],
            within_target,
            calibration: summary_of(&runs, v),
        };
        model.set_rss_tuning(&name, Some(t.stored(&runs, v)))?;
        tuned.push(t);
    }
    Ok(tuned)
}

/// RSS tuned to one budget for one property: the choice on the learning runs and the test runs it is
/// scored on.
#[derive(Debug, Clone)]
pub struct Tuned {
    /// The property.
    pub property: String,
    /// The budget, % of the learning runs' safe runs.
    pub budget_pct: f64,
    /// The index into [`RESPONSE_SCALES`] chosen; when no scale keeps within the budget, for the
    /// calibration's target the one with the fewest false alarms ([`fewest_false_alarms`]), else `None`.
    pub variant: Option<usize>,
    /// The variant keeps within the budget on the learning runs.
    pub within_budget: bool,
    /// The ego's response time under the chosen variant, s.
    pub ego_response_s: Option<f64>,
    /// The chosen variant on the learning runs; without one, the one with the fewest false alarms there.
    pub learning: Summary,
    /// The auto model's test runs of the property with `rss` set to the chosen variant's alarm (empty
    /// without a choice).
    pub runs: Vec<RunScore>,
}

/// One budget's tuned RSS on the test runs against the auto curve (`evaluate.json`:
/// `rss_tuned`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TunedResult {
    /// The budget on the learning runs, % of safe runs.
    pub budget_pct: f64,
    /// The response-time scale chosen (`null`: none keeps within the budget on the learning runs).
    pub response_scale: Option<f64>,
    /// Whether it keeps within the budget on the learning runs (false: RSS's fewest false alarms there,
    /// shown for the calibration's target only).
    pub within_budget: bool,
    /// The ego's response time under it, s.
    pub ego_response_s: Option<f64>,
    /// On the learning runs (without a choice: the variant with the fewest false alarms there).
    pub learning: Summary,
    /// On the test runs; `None` without a choice.
    pub summary: Option<Summary>,
    /// The auto curve at its test false-alarm rate; `None` without a choice.
    pub dominance: Option<Dominance>,
}

/// The series of a run as [`TuningRun::of`] reads it (for tests: a violation at `unsafe_at`).
#[cfg(test)]
fn series(n: usize, unsafe_at: Option<usize>) -> RunSeries {
    RunSeries {
        t: (0..n).map(|i| i as f64 * 0.1).collect(),
        risk: vec![0.0; n],
        unsafe_now: (0..n).map(|i| unsafe_at.is_some_and(|u| i >= u)).collect(),
        ..RunSeries::default()
    }
}

#[cfg(test)]
mod tests;
