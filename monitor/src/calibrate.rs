//! Calibrated alarms: choosing a property's threshold θ (and a debounce) on calibration runs so that the
//! false-alarm rate on new runs stays below a target with a stated confidence.
//!
//! **Guarantee.** Let a run's *score* be the highest level its (debounced) risk reaches, and suppose the
//! calibration runs' safe runs and a new safe run are exchangeable. With θ placed just above the
//! (k+1)-th highest score among n safe calibration runs, the probability p that a new safe run alarms is
//! distributed as Beta(k+1, n−k) (a standard order-statistic fact), so P(p ≤ q) = confidence for q the
//! Beta(k+1, n−k) quantile at the confidence — exactly the one-sided Clopper–Pearson upper bound
//! [`clopper_pearson_upper`] for k false alarms in n runs. The calibration takes the largest k whose bound
//! is at most the target. θ sits halfway between that score and the next higher risk value observed, so
//! it does not sit on a table value.
//!
//! **Debounce.** With a debounce of m frames an alarm needs the risk at or above θ on m consecutive frames
//! (a run's score is then the highest level held for m frames). When several m are offered, one is
//! *chosen on selection runs* disjoint from the calibration runs (the training runs will do: their risks
//! are optimistic, which can bias the choice but cannot void the bound): on those, each m gets its θ by the rule above, and the m that warns of the most selection violations wins, then the
//! one with the longest median lead, then the smallest. θ is then placed on the calibration runs for that
//! one m with the full confidence. Since the choice never sees the calibration runs, the bound above holds
//! as stated for the m kept. Without selection runs the m are tried on the calibration runs themselves, each
//! with the confidence split Bonferroni-style (1 − (1 − confidence)/#m), which keeps the bound true at the
//! price of a higher θ; with a single m there is nothing to choose and the full confidence applies.
//!
//! **Per group.** The bound above is for new runs drawn like the calibration runs, that is with the same
//! mix of scenario kinds. When the mix may change in operation, [`CalibrateConfig::per_group`] bounds the
//! rate within each group of runs (each scenario kind with safe runs) instead: θ is placed as above on
//! every group's runs, with the confidence split between the G groups (1 − (1 − confidence)/G), and the
//! highest of those θ is kept, so that with the stated confidence every group's false-alarm rate, and so
//! that of any mix of them, is at most the target. The stored bound is the largest of the groups' bounds
//! at that θ (at the split confidence), and the counts are over all runs. It costs a higher θ, most where
//! one kind's safe runs reach higher risks than the others'.
//!
//! Calibration runs must be disjoint from the training runs (the risks of training runs are optimistic);
//! `avguard calibrate` takes them as separate logs and `avguard evaluate` splits them off.
//!
//! This module holds what is stored and checked (the calibration, the RSS tuning, the bounds and the
//! check on scored runs); choosing θ and the debounce is `choose`'s.

use serde::{Deserialize, Serialize};
use statrs::distribution::{Beta, ContinuousCDF};

mod choose;

pub use choose::{
    calibrate, first_alarm, select_debounce, CalibrateConfig, CalibrateError, CalibrationRun,
};

/// A property's calibrated alarm rule, as stored in the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Alarm when the risk is at least θ ...
    pub theta: f64,
    /// ... on this many consecutive frames (1 = no debounce).
    pub debounce_frames: u32,
    /// The risk calibrated: `None` for P(eventually unsafe), else P(unsafe within this many steps).
    pub horizon_steps: Option<u32>,
    /// The false-alarm rate aimed at (fraction of safe runs).
    pub target_false_alarm: f64,
    /// The confidence of the bound.
    pub confidence: f64,
    /// Safe calibration runs.
    pub n_safe_runs: usize,
    /// Of those, runs with an alarm at (θ, debounce).
    pub n_false_alarms: usize,
    /// One-sided Clopper–Pearson upper bound of the false-alarm rate at `confidence`.
    pub false_alarm_upper: f64,
    /// Violating calibration runs.
    pub n_violating_runs: usize,
    /// Of those, runs warned of before their violation.
    pub n_predicted: usize,
    /// Median lead over the warned runs, s.
    pub median_lead_s: Option<f64>,
}

impl Calibration {
    /// Checks the stored values.
    ///
    /// # Errors
    /// A message naming the malformed field.
    pub fn check(&self) -> Result<(), String> {
        if !(self.theta > 0.0 && self.theta <= 1.0) {
            return Err(format!("theta {} is outside (0, 1]", self.theta));
        }
        if self.debounce_frames == 0 {
            return Err("debounce must be at least one frame".into());
        }
        for (what, v) in [
            ("target", self.target_false_alarm),
            ("confidence", self.confidence),
            ("bound", self.false_alarm_upper),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("{what} {v} is outside [0, 1]"));
            }
        }
        if self.n_false_alarms > self.n_safe_runs || self.n_predicted > self.n_violating_runs {
            return Err("more alarms than runs".into());
        }
        Ok(())
    }
}

/// RSS as a collision property's comparator, tuned on the calibration runs to the alarm's false-alarm
/// target: every response time of CARLA's RSS parameters (the ego's, other vehicles', pedestrians')
/// multiplied by `response_scale`. The model keeps it so that `score` and its reports can set the
/// calibrated alarm beside an RSS held to the same budget; the monitor itself never alarms on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RssTuning {
    /// The factor on CARLA's response times, in [0, 1] (0: no response time at all).
    pub response_scale: f64,
    /// The false-alarm target it was tuned to (fraction of safe runs).
    pub target_false_alarm: f64,
    /// Whether it keeps within the target on the calibration runs; when no scale does, it is the scale
    /// with the fewest false alarms there.
    pub within_target: bool,
    /// Safe calibration runs.
    pub n_safe_runs: usize,
    /// Of those, runs RSS alarms in at this scale.
    pub n_false_alarms: usize,
    /// Violating calibration runs.
    pub n_violating_runs: usize,
    /// Of those, runs RSS warns of before their violation.
    pub n_predicted: usize,
    /// Median lead over the warned runs, s.
    pub median_lead_s: Option<f64>,
}

impl RssTuning {
    /// Checks the stored values.
    ///
    /// # Errors
    /// A message naming the malformed field.
    pub fn check(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.response_scale) {
            return Err(format!(
                "response scale {} is outside [0, 1]",
                self.response_scale
            ));
        }
        if !(self.target_false_alarm > 0.0 && self.target_false_alarm < 1.0) {
            return Err(format!(
                "target {} is outside (0, 1)",
                self.target_false_alarm
            ));
        }
        if self.n_false_alarms > self.n_safe_runs || self.n_predicted > self.n_violating_runs {
            return Err("more alarms than runs".into());
        }
        if self
            .median_lead_s
            .is_some_and(|l| !(l.is_finite() && l >= 0.0))
        {
            return Err("median lead is not a finite non-negative number".into());
        }
        Ok(())
    }
}

/// The one-sided Clopper–Pearson upper confidence bound of a rate from `k` events in `n` trials: the
/// Beta(k+1, n−k) quantile at `confidence`; 1 when `k ≥ n`, `n = 0` or `confidence` is not in [0, 1].
pub fn clopper_pearson_upper(k: usize, n: usize, confidence: f64) -> f64 {
    if n == 0 || k >= n || !(0.0..=1.0).contains(&confidence) {
        return 1.0;
    }
    match Beta::new((k + 1) as f64, (n - k) as f64) {
        Ok(beta) => beta.inverse_cdf(confidence),
        // Shape parameters are positive finite by construction.
        Err(_) => 1.0,
    }
}

/// The most false alarms `k` among `n` safe calibration runs whose one-sided Clopper–Pearson bound at
/// `confidence` is at most `target` (the bound grows with `k`); `None` when not even `k = 0` meets it.
pub fn max_false_alarms(n: usize, target: f64, confidence: f64) -> Option<usize> {
    (0..n)
        .take_while(|&k| clopper_pearson_upper(k, n, confidence) <= target)
        .last()
}

/// The fewest safe calibration runs that allow a calibration at all: with no false alarm among `n` the
/// bound is `1 − (1 − confidence)^(1/n)` (the Beta(1, n) quantile in closed form), at most `target` from
/// `n = ⌈ln(1 − confidence) / ln(1 − target)⌉` on (settled against that bound, computed without
/// cancellation, for floating-point rounding). For a `target` or `confidence` outside (0, 1), 1; for a
/// target beyond 10¹² runs, the estimate, saturated.
pub fn safe_runs_for_any(target: f64, confidence: f64) -> usize {
    if !(target > 0.0 && target < 1.0 && confidence > 0.0 && confidence < 1.0) {
        return 1;
    }
    let log_miss = (-confidence).ln_1p();
    let estimate = (log_miss / (-target).ln_1p()).ceil().max(1.0);
    if estimate > 1e12 {
        return estimate.min(usize::MAX as f64) as usize;
    }
    let bound = |n: usize| -(log_miss / n as f64).exp_m1();
    let mut n = estimate as usize;
    for _ in 0..4 {
        if n > 1 && bound(n - 1) <= target {
            n -= 1;
        } else if bound(n) > target {
            n += 1;
        } else {
            break;
        }
    }
    n
}

/// A rate as a percentage in words: at most two decimals from 1 % up, else up to four significant
/// digits, trailing zeros dropped (`10 %`, `12.5 %`, `98.75 %`, `0.5 %`, `0.0001 %`). Two decimals, so
/// that a confidence split between four options reads as the 98.75 % it is.
pub fn percent_words(rate: f64) -> String {
    let pct = 100.0 * rate;
    if !pct.is_finite() {
        return format!("{pct} %");
    }
    let decimals = if pct.abs() >= 1.0 || pct == 0.0 {
        2
    } else {
        (3 - pct.abs().log10().floor() as i32).clamp(1, 12) as usize
    };
    let text = format!("{pct:.decimals$}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} %")
}

/// Most safe calibration runs [`safe_runs_for_share`] considers.
const MAX_CALIBRATION_RUNS: usize = 100_000;

/// The fewest safe calibration runs `n` with which the bound lets through a share of at least `share`
/// of the target as alarms: `max_false_alarms(n) / n ≥ share × target` (`share = 0`: the fewest runs
/// that allow a calibration at all). Below it θ must sit above nearly every safe run's risk, and a low
/// θ's recall is out of reach whatever the model. `None` beyond 100,000 runs (`share` near 1).
pub fn safe_runs_for_share(target: f64, confidence: f64, share: f64) -> Option<usize> {
    // The most alarms allowed never falls as n grows (each k's bound falls with n), so it is carried
    // from one n to the next: about one bound per n. The allowed share itself is not monotone in n
    // (k steps by one), hence the scan rather than a bisection.
    let mut allowed: Option<usize> = None;
    for n in 1..=MAX_CALIBRATION_RUNS {
        loop {
            let next = allowed.map_or(0, |k| k + 1);
            if next < n && clopper_pearson_upper(next, n, confidence) <= target {
                allowed = Some(next);
            } else {
                break;
            }
        }
        if allowed.is_some_and(|k| k as f64 >= share * target * n as f64) {
            return Some(n);
        }
    }
    None
}

/// The confidence at which [`calibrate`] places θ: the full `confidence` when one debounce length is
/// offered or the length is chosen on selection runs (`chosen_on_selection`), else split between the
/// `n_debounce_options` lengths tried on the calibration runs themselves (1 − (1 − confidence)/#m, see
/// the module docs). What [`few_runs_note`] must be given to speak of the bound θ was placed under.
pub fn placement_confidence(
    confidence: f64,
    n_debounce_options: usize,
    chosen_on_selection: bool,
) -> f64 {
    if chosen_on_selection {
        confidence
    } else {
        split_confidence(confidence, n_debounce_options)
    }
}

/// `confidence` split Bonferroni-style between `ways` choices, 1 − (1 − confidence)/ways: between the
/// debounce lengths tried on the calibration runs, and between the groups each bounded on their own
/// ([`CalibrateConfig::per_group`]); `confidence` itself for fewer than two (nothing to choose, or the
/// runs pooled).
pub fn split_confidence(confidence: f64, ways: usize) -> f64 {
    if ways <= 1 {
        confidence
    } else {
        1.0 - (1.0 - confidence) / ways as f64
    }
}

/// When `n` safe calibration runs are fewer than the fewest that let through half the target as alarms
/// ([`safe_runs_for_share`]), a sentence saying so and how many safe runs would: the calibrated θ is then
/// high because the runs are few, not because the model is unsure. `confidence` is the one θ was placed
/// at ([`placement_confidence`]).
///
/// Beyond that count the allowed share still dips below half now and then (the allowed alarms step by
/// one while half the target grows with `n`: 116 safe runs allow 6 at 10 %, 122 allow 6 too, under
/// 6.1); such a dip is the bound's granularity, not too few runs, and gets no note.
pub fn few_runs_note(n: usize, target: f64, confidence: f64) -> Option<String> {
    let k = max_false_alarms(n, target, confidence)?;
    if k as f64 >= 0.5 * target * n as f64 {
        // Half the target allowed at n: the fewest runs that allow it are at most n.
        return None;
    }
    let needed = safe_runs_for_share(target, confidence, 0.5)?;
    if n >= needed {
        return None;
    }
    Some(format!(
        "only {n} safe calibration runs: the {} bound at {} lets at most {k} of them alarm ({:.1} %), \
         so θ sits high and warns of fewer violations; {needed} safe runs would allow half the target",
        percent_words(confidence),
        percent_words(target),
        100.0 * k as f64 / n as f64
    ))
}

/// The one-sided Clopper–Pearson lower confidence bound of a rate from `k` events in `n` trials: the
/// Beta(k, n−k+1) quantile at `1 − confidence`; 0 when `k = 0`, `n = 0` or `confidence` is not in [0, 1].
pub fn clopper_pearson_lower(k: usize, n: usize, confidence: f64) -> f64 {
    if n == 0 || k == 0 || !(0.0..=1.0).contains(&confidence) {
        return 0.0;
    }
    let k = k.min(n);
    match Beta::new(k as f64, (n - k + 1) as f64) {
        Ok(beta) => beta.inverse_cdf(1.0 - confidence),
        // Shape parameters are positive finite by construction.
        Err(_) => 0.0,
    }
}

/// A calibration's false-alarm claim checked on new runs whose outcomes are known (`avguard score` and
/// `avguard evaluate` on labelled logs).
///
/// The claim is "a new safe run alarms with probability at most the target" (at the calibration's
/// confidence). `k` false alarms in `n` new safe runs contradict it when even the one-sided
/// Clopper–Pearson *lower* bound of their rate, at the same confidence, is above the target: then the
/// runs are very unlikely to come from the population calibrated on (typically: other scenario kinds, or
/// another simulator), and θ should be calibrated again on runs like them. A check that holds proves
/// nothing more than that these runs do not contradict the claim.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CalibrationCheck {
    /// Safe runs checked.
    pub n_safe_runs: usize,
    /// Of those, runs with an alarm at the calibrated θ and debounce.
    pub n_false_alarms: usize,
    /// One-sided Clopper–Pearson lower bound of their false-alarm rate at `confidence`.
    pub false_alarm_lower: f64,
    /// The calibration's target.
    pub target_false_alarm: f64,
    /// The calibration's confidence.
    pub confidence: f64,
    /// False when the lower bound exceeds the target: these runs contradict the calibration.
    pub holds: bool,
}

impl CalibrationCheck {
    /// The check of `k` false alarms among `n` safe runs against a `target` claimed at `confidence`.
    pub fn new(k: usize, n: usize, target: f64, confidence: f64) -> CalibrationCheck {
        let lower = clopper_pearson_lower(k, n, confidence);
        CalibrationCheck {
            n_safe_runs: n,
            n_false_alarms: k.min(n),
            false_alarm_lower: lower,
            target_false_alarm: target,
            confidence,
            holds: lower <= target,
        }
    }

    /// One line for a report: what was seen and, when the check fails, what to do.
    pub fn describe(&self) -> String {
        let seen = format!(
            "{} of {} safe runs alarmed at the calibrated θ ({:.0} % confidence lower bound {:.1} %, target {:.0} %)",
            self.n_false_alarms,
            self.n_safe_runs,
            100.0 * self.confidence,
            100.0 * self.false_alarm_lower,
            100.0 * self.target_false_alarm
        );
        if self.holds {
            format!("calibration consistent with these runs: {seen}")
        } else {
            format!(
                "calibration does not hold on these runs: {seen}; either they differ from the \
                 calibration runs (other scenario kinds or another simulator?) or this calibration is \
                 one of the {:.0} % the bound misses by chance (its calibration runs alarmed less \
                 often than runs like them do): calibrate again, on more runs like these (`avguard \
                 calibrate`; `--per-scenario` bounds each scenario kind, for any mix of them)",
                100.0 * (1.0 - self.confidence)
            )
        }
    }
}

/// Property `p`'s calibrated `(θ, debounce frames)` when it was calibrated for the risk `measure` reads
/// (P(eventually), or the same horizon); `None` otherwise.
pub fn for_measure(
    model: &crate::Model,
    p: usize,
    measure: &crate::RiskMeasure,
) -> Option<(f64, u32)> {
    calibration_for_measure(model, p, measure).map(|c| (c.theta, c.debounce_frames))
}

/// Property `p`'s calibration when it was made for `measure` (see [`for_measure`]).
pub fn calibration_for_measure<'m>(
    model: &'m crate::Model,
    p: usize,
    measure: &crate::RiskMeasure,
) -> Option<&'m Calibration> {
    let property = model.properties().get(p)?;
    made_for(property, p, property.calibration()?, measure)
}

/// Property `p`'s intervention `(θ, debounce frames)` ([`crate::PropertyModel::enforcement`]) when it
/// was calibrated for the risk `measure` reads; `None` otherwise (interventions then use
/// [`for_measure`]'s).
pub fn enforcement_for_measure(
    model: &crate::Model,
    p: usize,
    measure: &crate::RiskMeasure,
) -> Option<(f64, u32)> {
    let property = model.properties().get(p)?;
    made_for(property, p, property.enforcement()?, measure).map(|c| (c.theta, c.debounce_frames))
}

/// `c` (a calibration of `property`, number `p` of its model) when it was made for `measure`.
fn made_for<'m>(
    property: &crate::PropertyModel,
    p: usize,
    c: &'m Calibration,
    measure: &crate::RiskMeasure,
) -> Option<&'m Calibration> {
    let same = match (measure, c.horizon_steps) {
        (crate::RiskMeasure::Eventually, None) => true,
        (crate::RiskMeasure::Within(idx), Some(h)) => {
            idx.get(p)
                .and_then(|&i| property.table().horizons_steps().get(i))
                == Some(&h)
        }
        _ => false,
    };
    same.then_some(c)
}

#[cfg(test)]
mod tests;
