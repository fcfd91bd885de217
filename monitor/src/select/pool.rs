//! The candidate pool of the abstraction search: which readable predicates a property may be built from.
//!
//! Per property the pool holds, in this order (duplicates removed, the unsafe predicate never):
//! 1. the predicates of its fixed abstraction — the law's own atoms, the `properties.toml` atoms and the
//!    related laws' atoms and window predicates `R.w` (see [`crate::spec`]);
//! 2. every flag signal (`PriorityNPCAhead`, `rssDangerous`, ...) except the outcome flags `collision` and
//!    `destination`, and the light colours `trafficLightAhead.color == c`;
//! 3. threshold atoms `signal<=c` on every numeric signal of the frame (speeds, accelerations, distances,
//!    times and the prediction signals), with `c` at fixed quantiles of the signal's finite values over the
//!    training frames, rounded to two significant digits so the atom reads as words (`speed<=42`,
//!    `PriorityConflict.time<=2.5`).
//!
//! Candidates that never change over the training runs carry no information and are dropped by the search.
//! Scenario constants (time of day, weather), identifiers (gear, turn signal, planned turn, lane count) and
//! the lane's limits are not thresholded: a threshold on them says which road or scenario a run is on,
//! not how it is going.

use laws::signals::SignalKind;
use laws::{Atom, Signal};

/// Quantile levels at which numeric signals are cut (tails included: danger is rare).
pub const QUANTILE_LEVELS: [f64; 6] = [0.02, 0.1, 0.25, 0.5, 0.75, 0.9];

/// One candidate predicate.
#[derive(Debug, Clone, PartialEq)]
pub enum Candidate {
    /// A law-language atom (canonical text).
    Atom(Atom),
    /// `L.w`: law L was violated within the window.
    Window(String),
    /// `L.pending` (`None`) or `L.pending>x` (`Some(x)`, seconds): an obligation of law L is pending.
    Pending(String, Option<f64>),
}

impl Candidate {
    /// The predicate text as stored in a model (`speed<=42`, `law52.w`).
    pub fn text(&self) -> String {
        match self {
            Candidate::Atom(a) => a.to_string(),
            Candidate::Window(law) => format!("{law}{}", crate::spec::WINDOW_SUFFIX),
            Candidate::Pending(law, more_than_s) => crate::spec::PendingPredicate {
                law,
                more_than_s: *more_than_s,
            }
            .canonical(),
        }
    }
}

/// How the pool uses a signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumericKind {
    /// A 0/1 flag: the bare flag is a candidate.
    Flag,
    /// A measured quantity: thresholds at quantiles are candidates.
    Continuous,
    /// Not used by the pool (outcomes, identifiers, scenario constants, lane limits).
    Other,
}

/// How the pool uses `sig` (see the module docs for why some signals are left out).
pub fn numeric_kind(sig: Signal) -> NumericKind {
    use Signal::*;
    match sig {
        Collision | Destination => NumericKind::Other,
        Gear | TurnSignal | Direction | LaneNumber | LightColor | SignalAhead | SpeedUpper
        | SpeedLower | Time | Rain | Fog | Snow | Visibility => NumericKind::Other,
        _ => match sig.kind() {
            SignalKind::Flag => NumericKind::Flag,
            SignalKind::Value | SignalKind::Distance => NumericKind::Continuous,
        },
    }
}

/// The generic atoms every property's pool holds (item 2 of the module docs).
pub fn generic_atoms() -> Vec<Atom> {
    let mut out = Vec::new();
    for &sig in Signal::ALL {
        if numeric_kind(sig) == NumericKind::Flag {
            if let Ok(a) = Atom::parse(sig.name()) {
                out.push(a.canonical().0);
            }
        }
    }
    for colour in 1..=3 {
        if let Ok(a) = Atom::parse(&format!("{} == {colour}", Signal::LightColor.name())) {
            out.push(a.canonical().0);
        }
    }
    out
}

/// The numeric signals that get threshold atoms (item 3 of the module docs).
pub fn threshold_signals() -> Vec<Signal> {
    Signal::ALL
        .iter()
        .copied()
        .filter(|&s| numeric_kind(s) == NumericKind::Continuous)
        .collect()
}

/// `x` rounded to two significant digits, as a number whose shortest text is that rounding.
pub fn readable(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x + 0.0;
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (1 - magnitude).max(0) as usize;
    let scale = 10f64.powi(magnitude - 1);
    let rounded = (x / scale).round() * scale;
    // `+ 0.0` folds a rounded −0 into 0, so no atom reads `acc<=-0`.
    format!("{rounded:.decimals$}").parse().unwrap_or(rounded) + 0.0
}

/// The finite values of a sample, ascending.
fn sorted_finite(mut values: Vec<f64>) -> Vec<f64> {
    values.retain(|v| v.is_finite());
    values.sort_by(f64::total_cmp);
    values
}

/// The value at quantile `q` of a non-empty ascending sample (the nearest rank).
fn at_quantile(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    sorted[((q * (n - 1) as f64).round() as usize).min(n - 1)]
}

/// The readable values at `levels` of an ascending sample: deduplicated, ascending (none when empty).
fn readable_levels(sorted: &[f64], levels: &[f64]) -> Vec<f64> {
    if sorted.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<f64> = levels
        .iter()
        .map(|&q| readable(at_quantile(sorted, q)))
        .collect();
    out.sort_by(f64::total_cmp);
    out.dedup();
    out
}

/// The readable threshold constants of one signal from a sample of its values (non-finite ones ignored):
/// [`QUANTILE_LEVELS`] quantiles, rounded, deduplicated, ascending.
pub fn thresholds(values: Vec<f64>) -> Vec<f64> {
    readable_levels(&sorted_finite(values), &QUANTILE_LEVELS)
}

/// Steps of the finer quantile grid a chosen threshold's cut is refined on (levels 1/50 … 49/50).
pub const FINE_STEPS: usize = 50;

/// The readable cut points of the finer grid from a sample of a signal's values (non-finite ones ignored),
/// less those in `coarse` (the pool's own cuts of the signal): ascending, deduplicated. A cut within a
/// thousandth of the signal's scale (the larger magnitude of its extreme grid levels) of zero reads as 0:
/// `jerk<=0`, not `jerk<=-0.00000013`.
pub fn fine_thresholds(values: Vec<f64>, coarse: &[f64]) -> Vec<f64> {
    fine_levels(&sorted_finite(values), coarse)
}

/// [`fine_thresholds`] of an ascending sample of finite values.
fn fine_levels(sorted: &[f64], coarse: &[f64]) -> Vec<f64> {
    if sorted.is_empty() {
        return Vec::new();
    }
    let step = 1.0 / FINE_STEPS as f64;
    let scale = at_quantile(sorted, step)
        .abs()
        .max(at_quantile(sorted, 1.0 - step).abs());
    let mut out: Vec<f64> = (1..FINE_STEPS)
        .map(|j| {
            let x = at_quantile(sorted, j as f64 * step);
            if x.abs() < 1e-3 * scale {
                0.0
            } else {
                readable(x)
            }
        })
        .filter(|c| !coarse.contains(c))
        .collect();
    out.sort_by(f64::total_cmp);
    out.dedup();
    out
}

/// A signal's [`thresholds`] and its [`fine_thresholds`] (less those), from one sort of the sample.
pub fn signal_cuts(values: Vec<f64>) -> (Vec<f64>, Vec<f64>) {
    let sorted = sorted_finite(values);
    let coarse = readable_levels(&sorted, &QUANTILE_LEVELS);
    let fine = fine_levels(&sorted, &coarse);
    (coarse, fine)
}

/// Quantile levels at which obligation ages are cut ("pending for more than x s").
pub const PENDING_LEVELS: [f64; 3] = [0.25, 0.5, 0.75];

/// The readable cut points (seconds) of obligation ages from a sample of pending ages (seconds).
pub fn pending_cuts(ages: Vec<f64>) -> Vec<f64> {
    readable_levels(&sorted_finite(ages), &PENDING_LEVELS)
}

/// The threshold atom `signal<=c`.
pub fn threshold_atom(signal: Signal, c: f64) -> Option<Atom> {
    Atom::parse(&format!("{} <= {c}", signal.name()))
        .ok()
        .map(|a| a.canonical().0)
}
