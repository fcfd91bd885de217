//! The AV domain: states are bit-strings of a property's predicates, plus one "run finished" state.
//!
//! With k predicates, state `s < 2^k` has bit i set when predicate i holds; state `2^k` is [`AvDomain::done`],
//! the safe end of a run. So k predicates bound the state space to `2^k + 1` ids (k ≤ [`MAX_PREDICATES`]);
//! the validity rules below remove the impossible ones. One predicate is the property's unsafe predicate
//! (e.g. `collision`, or a law's violation verdict); every state with that bit set is unsafe.
//!
//! **How runs end.** A learning trace stops at the first unsafe frame (unsafe states are absorbing, so
//! nothing after it is information about the chain), or, if the run never turns unsafe, it ends with a
//! transition into `done`. `done` is its own absorbing state rather than a self-loop on the last frame's
//! state, so that "the run ended here" does not masquerade as "this state persists forever".
//!
//! **Validity rules** (domain facts, each tested):
//! - an unsafe state is absorbing, and so is `done`; `done` is reachable from every non-terminal state
//!   (a run can end at any frame);
//! - the threshold atoms over one signal must be jointly satisfiable: `speed < 0.5` and `speed > 30` cannot
//!   both hold, `NPCAhead(5)` implies `NPCAhead(10)`, at most one `trafficLightAhead.color == c` holds;
//!   speeds and distances are never negative;
//! - speed cannot change faster than [`AvConfig::max_accel_mps2`] allows within one frame period (at 10 Hz
//!   and 10 m/s², 3.6 km/h per frame): `speed < 0.5` cannot be followed by `speed > 30`. Transitions *into*
//!   an unsafe state are exempt, because an impact changes speed abruptly;
//! - a traffic light cycles green → yellow → red → green: green cannot become red, yellow cannot become
//!   green, red cannot become yellow in one frame (changes to or from "no light"/unknown are free).
//!
//! **Smoothing support** ([`SmoothingScope`]). `Local` (the default): α goes to the valid transitions that
//! change at most one predicate, plus `done`; observed transitions are always kept. At 10 Hz the signals
//! behind the predicates move continuously, so consecutive frames rarely differ in more than one predicate;
//! this keeps every valid state reachable while each row has at most k + 2 smoothed entries. `AllValid`
//! is Algorithm 1 as written: α on every valid transition (only up to [`FULL_SMOOTHING_MAX_PREDICATES`]
//! predicates; beyond that dense smoothing would need `4^k` entries and `Local` is used).
//!
//! Why `Local` is the default: smoothing mass that lands on unsafe successors is a per-step leak, and a
//! run spends hundreds of 10 Hz steps in few states. With `AllValid`, about half of a state's valid
//! successors carry the unsafe bit, so the leak per run is roughly α·2^(k-1) / (number of training runs) —
//! enough to push P(eventually unsafe) towards 1 in states from which no violation was ever observed. With
//! `Local` only one successor (the unsafe bit flipped) receives α, and the leak is about α / runs.

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use crate::domain::Domain;
use crate::error::ModelError;
use crate::StateId;
use laws::frame::light_color;
use laws::{Cmp, Signal};

/// Most predicates a property may have (2^24 + 1 states).
pub const MAX_PREDICATES: usize = 24;

/// Up to this many predicates, smoothing covers every valid transition.
pub const FULL_SMOOTHING_MAX_PREDICATES: usize = 10;

/// Which valid transitions receive the Laplace α (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum SmoothingScope {
    /// Valid transitions that change at most one predicate, plus `done` (and every observed one).
    #[default]
    Local,
    /// Every valid transition (Algorithm 1 as written), up to [`FULL_SMOOTHING_MAX_PREDICATES`] predicates.
    AllValid,
    /// As `Local`, but a one-predicate change receives α only when it leads to a state observed in the
    /// training data (a source of some counted transition); the unsafe neighbour and `done` always do.
    /// An unobserved state's risk then depends on its observed neighbours only, not on a diffusion
    /// through the unobserved part of the cube, which is what lets the abstraction search
    /// ([`crate::select`]) solve only the observed states. The default of learned abstractions.
    Observed,
}

impl SmoothingScope {
    /// The scope's name as `avguard info` prints it (`local`, `all-valid`, `observed`).
    pub fn as_str(self) -> &'static str {
        match self {
            SmoothingScope::Local => "local",
            SmoothingScope::AllValid => "all-valid",
            SmoothingScope::Observed => "observed",
        }
    }
}

/// Physical limits used by the validity rules, and the smoothing scope.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AvConfig {
    /// Time between frames, s.
    pub frame_period_s: f64,
    /// Largest plausible longitudinal acceleration or deceleration magnitude, m/s² (about 1 g: beyond
    /// emergency braking on dry asphalt).
    pub max_accel_mps2: f64,
    /// Which valid transitions receive the Laplace α.
    pub smoothing: SmoothingScope,
}

impl Default for AvConfig {
    fn default() -> Self {
        AvConfig {
            frame_period_s: 0.1,
            max_accel_mps2: 10.0,
            smoothing: SmoothingScope::Local,
        }
    }
}

/// Whether a signal's values are never negative: distances, speeds, light colours, times and required
/// decelerations are not; accelerations, jerk and closing speeds can be, and so can any signal not known
/// here (a compound term, a future signal), which is the safe side: no state is declared impossible.
fn never_negative(signal: &str) -> bool {
    use laws::signals::SignalKind;
    let Some(sig) = Signal::from_name(signal) else {
        return false;
    };
    match sig {
        Signal::Acc | Signal::Jerk | Signal::NpcAheadClosing => false,
        Signal::Speed
        | Signal::NpcAheadSpeed
        | Signal::NearestNpcSpeed
        | Signal::NpcOppositeSpeed
        | Signal::LightColor
        | Signal::Brake => true,
        _ => matches!(sig.kind(), SignalKind::Distance | SignalKind::Flag),
    }
}

/// One cell of a signal's value line cut at its thresholds: a threshold point or an open interval.
#[derive(Debug, Clone, Copy)]
struct Cell {
    /// A value inside the cell, used to evaluate the atoms.
    rep: f64,
    /// Closure of the cell.
    lo: f64,
    hi: f64,
}

/// The threshold atoms over one signal.
#[derive(Debug, Clone)]
struct SignalGroup {
    signal: String,
    atoms: Vec<(usize, Cmp, f64)>,
    cells: Vec<Cell>,
}

impl SignalGroup {
    fn new(signal: String, atoms: Vec<(usize, Cmp, f64)>) -> SignalGroup {
        let mut ts: Vec<f64> = atoms.iter().map(|a| a.2).collect();
        ts.sort_by(f64::total_cmp);
        ts.dedup();
        let nonneg = never_negative(&signal);
        let mut cells = Vec::new();
        let first = ts[0];
        cells.push(Cell {
            rep: if nonneg { first / 2.0 } else { first - 1.0 },
            lo: if nonneg { 0.0 } else { f64::NEG_INFINITY },
            hi: first,
        });
        for (i, &t) in ts.iter().enumerate() {
            cells.push(Cell {
                rep: t,
                lo: t,
                hi: t,
            });
            let next = ts.get(i + 1).copied();
            cells.push(Cell {
                rep: next.map_or(t + 1.0, |n| (t + n) / 2.0),
                lo: t,
                hi: next.unwrap_or(f64::INFINITY),
            });
        }
        // Values below zero are impossible for speeds, distances and colours.
        cells.retain(|c| !nonneg || c.rep >= 0.0);
        SignalGroup {
            signal,
            atoms,
            cells,
        }
    }

    /// The cells consistent with the atom values of `state`.
    fn feasible(&self, state: StateId) -> impl Iterator<Item = &Cell> + '_ {
        self.cells.iter().filter(move |c| {
            self.atoms
                .iter()
                .all(|&(bit, cmp, v)| cmp.apply(c.rep, v) == (state >> bit & 1 == 1))
        })
    }
}

/// The abstraction of one monitored property: its predicates and the AV validity rules over them.
#[derive(Debug, Clone)]
pub struct AvDomain {
    predicates: Vec<String>,
    unsafe_bit: usize,
    groups: Vec<SignalGroup>,
    max_speed_step_kmh: f64,
    smoothing: SmoothingScope,
}

impl AvDomain {
    /// Builds the domain of predicates `predicates` whose `unsafe_bit`-th is the unsafe predicate.
    ///
    /// # Errors
    /// More than [`MAX_PREDICATES`] predicates, an unsafe index out of range, or an invalid config.
    pub fn new(
        predicates: Vec<String>,
        unsafe_bit: usize,
        cfg: AvConfig,
    ) -> Result<AvDomain, ModelError> {
        let k = predicates.len();
        if k == 0 || k > MAX_PREDICATES || unsafe_bit >= k {
            return Err(ModelError::Config(format!(
                "need 1..={MAX_PREDICATES} predicates with the unsafe one among them; got {k}, unsafe index {unsafe_bit}"
            )));
        }
        if !(cfg.frame_period_s > 0.0 && cfg.max_accel_mps2 > 0.0) {
            return Err(ModelError::Config(
                "frame period and acceleration limit must be positive".into(),
            ));
        }
        let mut by_signal: BTreeMap<String, Vec<(usize, Cmp, f64)>> = BTreeMap::new();
        for (bit, text) in predicates.iter().enumerate() {
            // A predicate that compares one signal with a constant takes part in that signal's rules; any
            // other (window predicates, compound atoms) in none.
            if let Some((signal, cmp, value)) = laws::Atom::parse(text)
                .ok()
                .and_then(|a| a.signal_vs_const())
            {
                by_signal
                    .entry(signal.name().to_owned())
                    .or_default()
                    .push((bit, cmp, value));
            }
        }
        let groups = by_signal
            .into_iter()
            .map(|(s, a)| SignalGroup::new(s, a))
            .collect();
        Ok(AvDomain {
            predicates,
            unsafe_bit,
            groups,
            max_speed_step_kmh: cfg.max_accel_mps2 * cfg.frame_period_s * 3.6,
            smoothing: cfg.smoothing,
        })
    }

    /// The predicate texts, bit 0 first.
    pub fn predicates(&self) -> &[String] {
        &self.predicates
    }

    /// Index of the unsafe predicate.
    pub fn unsafe_bit(&self) -> usize {
        self.unsafe_bit
    }

    /// The "run finished safely" state, `2^k`.
    pub fn done(&self) -> StateId {
        1 << self.predicates.len()
    }

    /// Encodes predicate values (bit i = `values[i]`) into a state (the paper's `encode`).
    ///
    /// # Panics
    /// If `values.len()` differs from the number of predicates (a caller bug).
    pub fn encode(&self, values: &[bool]) -> StateId {
        assert_eq!(
            values.len(),
            self.predicates.len(),
            "one value per predicate"
        );
        values
            .iter()
            .enumerate()
            .fold(0, |s, (i, &v)| s | (StateId::from(v) << i))
    }

    /// The predicate values of a bit-string state; `None` for `done` and ids out of range.
    pub fn bits(&self, state: StateId) -> Option<Vec<bool>> {
        (state < self.done()).then(|| {
            (0..self.predicates.len())
                .map(|i| state >> i & 1 == 1)
                .collect()
        })
    }

    /// The state as a bit string, predicate 0 first (`done` for the finish state).
    pub fn bit_string(&self, state: StateId) -> String {
        match self.bits(state) {
            Some(b) => b.iter().map(|&v| if v { '1' } else { '0' }).collect(),
            None => "done".to_string(),
        }
    }

    fn group(&self, signal: &str) -> Option<&SignalGroup> {
        self.groups.iter().find(|g| g.signal == signal)
    }

    fn speed_ok(&self, from: StateId, to: StateId) -> bool {
        let Some(g) = self.group(Signal::Speed.name()) else {
            return true;
        };
        g.feasible(from).any(|a| {
            g.feasible(to)
                .any(|b| (b.lo - a.hi).max(a.lo - b.hi).max(0.0) <= self.max_speed_step_kmh)
        })
    }

    fn light_ok(&self, from: StateId, to: StateId) -> bool {
        let Some(g) = self.group(Signal::LightColor.name()) else {
            return true;
        };
        let colours = |s: StateId| -> Vec<i32> {
            (light_color::NONE..=light_color::BLACK)
                .filter(|&c| {
                    g.atoms
                        .iter()
                        .all(|&(bit, cmp, v)| cmp.apply(f64::from(c), v) == (s >> bit & 1 == 1))
                })
                .collect()
        };
        let (a, b) = (colours(from), colours(to));
        a.iter()
            .any(|&x| b.iter().any(|&y| light_step_possible(x, y)))
    }
}

/// Whether a light can go from colour `a` to colour `b` in one frame (colours as in
/// [`laws::frame::light_color`]): green never turns red without yellow, yellow never turns green, red never
/// turns yellow; unknown/none and black are unconstrained.
pub fn light_step_possible(a: i32, b: i32) -> bool {
    use light_color::{GREEN, RED, YELLOW};
    !matches!((a, b), (GREEN, RED) | (YELLOW, GREEN) | (RED, YELLOW))
}

impl Domain for AvDomain {
    fn n_states(&self) -> usize {
        self.done() as usize + 1
    }

    fn is_valid_state(&self, state: StateId) -> bool {
        if state == self.done() {
            return true;
        }
        state < self.done()
            && self
                .groups
                .iter()
                .all(|g| g.feasible(state).next().is_some())
    }

    fn can_reach(&self, from: StateId, to: StateId) -> bool {
        if !self.is_valid_state(from) || !self.is_valid_state(to) {
            return false;
        }
        if self.is_terminal(from) {
            return from == to;
        }
        if to == self.done() {
            return true;
        }
        (self.is_unsafe(to) || self.speed_ok(from, to)) && self.light_ok(from, to)
    }

    fn is_unsafe(&self, state: StateId) -> bool {
        state < self.done() && state >> self.unsafe_bit & 1 == 1
    }

    fn is_terminal(&self, state: StateId) -> bool {
        state == self.done() || self.is_unsafe(state)
    }

    fn smoothing_support(&self, from: StateId, out: &mut Vec<StateId>) {
        out.clear();
        if self.smoothing == SmoothingScope::AllValid
            && self.predicates.len() <= FULL_SMOOTHING_MAX_PREDICATES
        {
            out.extend((0..self.n_states() as StateId).filter(|&to| self.can_reach(from, to)));
            return;
        }
        let candidates = std::iter::once(from)
            .chain((0..self.predicates.len()).map(|i| from ^ (1 << i)))
            .chain(std::iter::once(self.done()));
        out.extend(candidates.filter(|&to| self.can_reach(from, to)));
        out.sort_unstable();
    }

    fn smoothing_observed_only(&self) -> bool {
        self.smoothing == SmoothingScope::Observed
    }

    fn decode(&self, state: StateId) -> String {
        match self.bits(state) {
            None => "run finished (safe)".to_string(),
            Some(bits) => self
                .predicates
                .iter()
                .zip(bits)
                .map(|(p, v)| if v { p.clone() } else { format!("not {p}") })
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}
