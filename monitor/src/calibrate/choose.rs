//! Choosing θ and the debounce on calibration runs (see the parent module's guarantee), and the first
//! alarm a calibrated rule raises on a run.

use super::{clopper_pearson_upper, max_false_alarms, safe_runs_for_any, Calibration};

/// What calibration needs of one run: its risk per frame before any violation, the frame times, whether
/// (and when) it violated, and its group.
#[derive(Debug, Clone, Copy)]
pub struct CalibrationRun<'a> {
    /// The run's group (its scenario kind): with [`CalibrateConfig::per_group`] the bound holds within
    /// every group.
    pub group: &'a str,
    /// Frame times, s.
    pub t: &'a [f64],
    /// Risk per frame; for a violating run only the frames before the violation count.
    pub risk: &'a [f64],
    /// The first violating frame, if any.
    pub violation: Option<usize>,
}

/// Options of [`calibrate`].
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrateConfig {
    /// Target false-alarm rate, in (0, 1).
    pub target_false_alarm: f64,
    /// Confidence of the bound, in (0, 1).
    pub confidence: f64,
    /// Debounce lengths offered, frames (each ≥ 1); with more than one, [`calibrate`] chooses among them
    /// on its selection runs (or, without any, Bonferroni-style on the calibration runs).
    pub debounce_frames: Vec<u32>,
    /// The risk measure's horizon, recorded in the result.
    pub horizon_steps: Option<u32>,
    /// Bound the false-alarm rate within every group of runs (scenario kind) instead of over all runs
    /// (see the module docs, "Per group").
    pub per_group: bool,
}

impl CalibrateConfig {
    /// Checks the options [`calibrate`] checks before it looks at a run, so that a caller can refuse
    /// them before reading any.
    ///
    /// # Errors
    /// A target outside (0, 1), a confidence outside 0.5–0.999999, or no debounce
    /// length or one of zero frames.
    pub fn check(&self) -> Result<(), CalibrateError> {
        let target = self.target_false_alarm;
        if !(target > 0.0 && target < 1.0) {
            return Err(CalibrateError::Config(format!(
                "target false-alarm rate {target} is outside (0, 1)"
            )));
        }
        if !(MIN_CONFIDENCE..=MAX_CONFIDENCE).contains(&self.confidence) {
            return Err(CalibrateError::Config(format!(
                "confidence {} is outside {MIN_CONFIDENCE}–{MAX_CONFIDENCE} (a bound below even odds \
                 says nothing, and the Beta quantiles fail far below that)",
                self.confidence
            )));
        }
        if self.debounce_frames.is_empty() || self.debounce_frames.contains(&0) {
            return Err(CalibrateError::Config(
                "debounce lengths must be at least one frame".into(),
            ));
        }
        Ok(())
    }
}

/// The least confidence a calibration's bound may be placed at.
pub const MIN_CONFIDENCE: f64 = 0.5;

/// The most confidence a calibration's bound may be placed at.
pub const MAX_CONFIDENCE: f64 = 0.999_999;

/// Why no calibration exists.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrateError {
    /// An option is out of range.
    #[error("{0}")]
    Config(String),
    /// Too few safe runs for the target at this confidence.
    #[error(
        "{n_safe} safe calibration runs cannot show a false-alarm rate below {} with {} \
         confidence even with no false alarm (at least {needed} are needed)",
        super::percent_words(*.target),
        super::percent_words(*.confidence)
    )]
    TooFewSafeRuns {
        /// Safe runs given.
        n_safe: usize,
        /// Runs needed with zero false alarms.
        needed: usize,
        /// The target.
        target: f64,
        /// The confidence that was required (split between debounce options or groups when they are).
        confidence: f64,
    },
}

/// The highest level the risk holds for `m` consecutive frames, and the first frame where `theta` is
/// held for `m` frames.
fn debounced(risk: &[f64], m: usize) -> impl Fn(f64) -> Option<usize> + '_ {
    move |theta| {
        let mut streak = 0;
        for (i, &r) in risk.iter().enumerate() {
            streak = if r >= theta { streak + 1 } else { 0 };
            if streak >= m {
                return Some(i);
            }
        }
        None
    }
}

fn debounced_max(risk: &[f64], m: usize) -> f64 {
    if risk.len() < m || m == 0 {
        return f64::NEG_INFINITY;
    }
    risk.windows(m)
        .map(|w| w.iter().copied().fold(f64::INFINITY, f64::min))
        .fold(f64::NEG_INFINITY, f64::max)
}

fn pre_violation<'a>(run: &CalibrationRun<'a>) -> &'a [f64] {
    let end = run.violation.unwrap_or(run.risk.len()).min(run.risk.len());
    &run.risk[..end]
}

/// Chooses θ and the debounce (see the module docs): the debounce on `selection` runs when several are
/// offered and `selection` is not empty, θ on `runs` (the calibration runs, disjoint from `selection`).
///
/// # Errors
/// Bad options, or too few safe runs for the target (among `runs`, or among `selection` when it
/// decides).
pub fn calibrate(
    selection: &[CalibrationRun<'_>],
    runs: &[CalibrationRun<'_>],
    cfg: &CalibrateConfig,
) -> Result<Calibration, CalibrateError> {
    cfg.check()?;
    match (cfg.debounce_frames.as_slice(), selection.is_empty()) {
        (&[m], _) => at_debounce(runs, m, cfg.confidence, cfg),
        (options, false) => {
            let m = select_debounce(selection, options, cfg)?;
            at_debounce(runs, m, cfg.confidence, cfg)
        }
        (options, true) => {
            let per_option = super::split_confidence(cfg.confidence, options.len());
            best_of(
                options
                    .iter()
                    .map(|&m| at_debounce(runs, m, per_option, cfg)),
            )
        }
    }
}

/// The debounce that [`calibrate`] keeps when it chooses on `selection`: each option calibrated there
/// with the full confidence, the best by `best_of`.
///
/// # Errors
/// Too few safe selection runs for the target (said to be about the selection runs).
pub fn select_debounce(
    selection: &[CalibrationRun<'_>],
    options: &[u32],
    cfg: &CalibrateConfig,
) -> Result<u32, CalibrateError> {
    let chosen = best_of(
        options
            .iter()
            .map(|&m| at_debounce(selection, m, cfg.confidence, cfg)),
    )
    .map_err(|e| {
        CalibrateError::Config(format!("choosing the debounce on the selection runs: {e}"))
    })?;
    Ok(chosen.debounce_frames)
}

/// The calibration that warns of the most violations, then with the longest median lead, then with the
/// smallest debounce; the first error if none succeeds.
fn best_of(
    candidates: impl Iterator<Item = Result<Calibration, CalibrateError>>,
) -> Result<Calibration, CalibrateError> {
    let mut best: Option<Calibration> = None;
    let mut first_error = None;
    for candidate in candidates {
        let cal = match candidate {
            Ok(c) => c,
            Err(e) => {
                first_error.get_or_insert(e);
                continue;
            }
        };
        let better = match &best {
            None => true,
            Some(b) => {
                let key = |c: &Calibration| {
                    (
                        c.n_predicted,
                        c.median_lead_s.unwrap_or(0.0),
                        -i64::from(c.debounce_frames),
                    )
                };
                key(&cal) > key(b)
            }
        };
        if better {
            best = Some(cal);
        }
    }
    best.ok_or_else(|| {
        first_error.unwrap_or_else(|| CalibrateError::Config("no debounce length given".into()))
    })
}

/// θ for debounce `m` on `runs` and its stored bound: pooled, or per group (see the module docs).
fn at_debounce(
    runs: &[CalibrationRun<'_>],
    m: u32,
    confidence: f64,
    cfg: &CalibrateConfig,
) -> Result<Calibration, CalibrateError> {
    let mut groups: Vec<&str> = runs
        .iter()
        .filter(|r| r.violation.is_none())
        .map(|r| r.group)
        .collect();
    groups.sort_unstable();
    groups.dedup();
    if !cfg.per_group || groups.len() < 2 {
        let theta = threshold(runs, m, confidence, cfg)?;
        let (k, n) = false_alarms(runs, m, theta);
        return Ok(at_theta(
            runs,
            m,
            theta,
            clopper_pearson_upper(k, n, cfg.confidence),
            cfg,
        ));
    }
    let split = super::split_confidence(confidence, groups.len());
    let stored = super::split_confidence(cfg.confidence, groups.len());
    let per_group: Vec<(&str, Vec<CalibrationRun<'_>>)> = groups
        .iter()
        .map(|&g| (g, runs.iter().filter(|r| r.group == g).copied().collect()))
        .collect();
    let mut theta = f64::MIN_POSITIVE;
    for (g, group_runs) in &per_group {
        let t = threshold(group_runs, m, split, cfg)
            .map_err(|e| CalibrateError::Config(format!("scenario kind `{g}`: {e}")))?;
        theta = theta.max(t);
    }
    let bound = per_group
        .iter()
        .map(|(_, group_runs)| {
            let (k, n) = false_alarms(group_runs, m, theta);
            clopper_pearson_upper(k, n, stored)
        })
        .fold(0.0, f64::max);
    Ok(at_theta(runs, m, theta, bound, cfg))
}

/// θ for debounce `m` on `runs`: above the (k+1)-th highest safe score, k the largest count whose bound at
/// `confidence` meets the target.
fn threshold(
    runs: &[CalibrationRun<'_>],
    m: u32,
    confidence: f64,
    cfg: &CalibrateConfig,
) -> Result<f64, CalibrateError> {
    let target = cfg.target_false_alarm;
    let n = runs.iter().filter(|r| r.violation.is_none()).count();
    let Some(k_max) = max_false_alarms(n, target, confidence) else {
        let needed = safe_runs_for_any(target, confidence);
        return Err(CalibrateError::TooFewSafeRuns {
            n_safe: n,
            needed,
            target,
            confidence,
        });
    };
    // Every risk value seen, to place θ between two of them.
    let mut levels: Vec<f64> = runs
        .iter()
        .flat_map(|r| pre_violation(r).iter().copied())
        .filter(|v| v.is_finite())
        .collect();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    let mut scores = safe_scores(runs, m);
    scores.sort_by(|a, b| b.total_cmp(a));
    let tau = scores.get(k_max).copied().unwrap_or(f64::NEG_INFINITY);
    let next = levels.iter().copied().find(|&v| v > tau);
    let theta = match next {
        Some(v) if tau.is_finite() => 0.5 * (tau + v),
        Some(v) => v,
        None => 0.5 * (tau.max(0.0) + 1.0),
    };
    Ok(theta.clamp(f64::MIN_POSITIVE, 1.0))
}

/// The safe runs' scores: the highest level each one's risk holds for `m` frames.
fn safe_scores(runs: &[CalibrationRun<'_>], m: u32) -> Vec<f64> {
    runs.iter()
        .filter(|r| r.violation.is_none())
        .map(|r| debounced_max(pre_violation(r), m as usize))
        .collect()
}

/// (false alarms, safe runs) of `runs` at (θ, debounce `m`).
fn false_alarms(runs: &[CalibrationRun<'_>], m: u32, theta: f64) -> (usize, usize) {
    let scores = safe_scores(runs, m);
    (scores.iter().filter(|&&s| s >= theta).count(), scores.len())
}

/// The calibration (θ, debounce `m`) with its counts on `runs` and the stored bound `bound`.
fn at_theta(
    runs: &[CalibrationRun<'_>],
    m: u32,
    theta: f64,
    bound: f64,
    cfg: &CalibrateConfig,
) -> Calibration {
    let (n_false_alarms, n) = false_alarms(runs, m, theta);
    let violating: Vec<&CalibrationRun<'_>> =
        runs.iter().filter(|r| r.violation.is_some()).collect();
    let mut leads: Vec<f64> = violating
        .iter()
        .filter_map(|r| {
            let risk = pre_violation(r);
            let alarm = debounced(risk, m as usize)(theta)?;
            let v = r.violation?;
            Some(r.t.get(v)? - r.t.get(alarm)?)
        })
        .collect();
    leads.sort_by(f64::total_cmp);
    let median = match leads.len() {
        0 => None,
        l if l % 2 == 1 => Some(leads[l / 2]),
        l => Some(0.5 * (leads[l / 2 - 1] + leads[l / 2])),
    };
    Calibration {
        theta,
        debounce_frames: m,
        horizon_steps: cfg.horizon_steps,
        target_false_alarm: cfg.target_false_alarm,
        confidence: cfg.confidence,
        n_safe_runs: n,
        n_false_alarms,
        false_alarm_upper: bound,
        n_violating_runs: violating.len(),
        n_predicted: leads.len(),
        median_lead_s: median,
    }
}

/// The first frame of `risk` at which an alarm under (θ, debounce) fires.
pub fn first_alarm(risk: &[f64], theta: f64, debounce_frames: u32) -> Option<usize> {
    debounced(risk, debounce_frames.max(1) as usize)(theta)
}
