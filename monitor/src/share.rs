//! The frame share of a state: of the training frames spent in it, the share that belong to runs that went
//! on to violate (and, per horizon, to violate within it). It is the direct, Monte Carlo estimate of the
//! risk the chain's reachability estimates through its transitions.
//!
//! **Why a second estimate.** A chain's P(F unsafe) is exact for the chain, and the chain is right when the
//! abstraction is Markov: when what happens next depends on the abstract state alone. An abstraction of a
//! dozen predicates hides causes that persist through a run — which kind of scenario it is, a driver who
//! is not paying attention, a leader that will brake — and then the chain mixes the futures of runs that
//! share a state but not those causes, and pulls the risk of the states of violating runs towards that
//! of safe runs. The frame share assumes nothing about the transitions, so it keeps that persistence, but
//! it rests on fewer data (one state's frames rather than every path through it) and is noisier. This is
//! the trade that temporal-difference and Monte Carlo estimates of a value make in reinforcement learning;
//! the property's risk is their mix, `(1 − w) · P_chain + w · share`, with the weight `w` chosen per
//! property by the abstraction search's cross-validated score on the training runs
//! ([`crate::select::search::choose_share_weight`]), so that `w = 0` — the chain alone — is kept wherever
//! mixing does not warn better there.
//!
//! The share is smoothed like the chain: `(frames in violating runs + α/2) / (frames + α)` with the chain's
//! Laplace α. States never visited in training have no share, and their risk is the chain's alone.

use serde::{Deserialize, Serialize};

use crate::error::StructureError;
use crate::StateId;

/// Largest number of states a share may cover (the largest property: 2^12 + 1 states).
const MAX_STATES: usize = (1 << crate::spec::MAX_PROPERTY_PREDICATES) + 1;

/// Per state, the smoothed share of training frames in runs that went on to violate, and the weight it
/// has in the property's risk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ShareParts")]
pub struct FrameShare {
    weight: f64,
    horizons_steps: Vec<u32>,
    /// Per state: the share, `None` for a state never visited in training.
    eventually: Vec<Option<f64>>,
    /// Per visited state, state-major: the share of its frames whose run violates within each horizon
    /// (`within[s·H + h]`; `None` where `eventually` is).
    within: Vec<Option<f64>>,
}

/// A share as model files carry it.
#[derive(Deserialize)]
struct ShareParts {
    weight: f64,
    horizons_steps: Vec<u32>,
    eventually: Vec<Option<f64>>,
    within: Vec<Option<f64>>,
}

impl TryFrom<ShareParts> for FrameShare {
    type Error = StructureError;
    fn try_from(p: ShareParts) -> Result<Self, Self::Error> {
        FrameShare::try_new(p.weight, p.horizons_steps, p.eventually, p.within)
    }
}

impl FrameShare {
    /// Assembles a share from its arrays, checking: a weight in [0, 1]; at most 2^12 + 1 states; one
    /// entry per state and horizon; shares in [0, 1] that grow with the horizon and never exceed the
    /// unbounded one; bounded shares exactly where the unbounded one is present.
    ///
    /// # Errors
    /// [`StructureError`] naming the first violated condition.
    pub fn try_new(
        weight: f64,
        horizons_steps: Vec<u32>,
        eventually: Vec<Option<f64>>,
        within: Vec<Option<f64>>,
    ) -> Result<FrameShare, StructureError> {
        if !(0.0..=1.0).contains(&weight) {
            return Err(StructureError::Invalid(format!(
                "frame share weight {weight} is not in [0, 1]"
            )));
        }
        let n = eventually.len();
        if n > MAX_STATES {
            return Err(StructureError::Invalid(format!(
                "frame share over {n} states (at most {MAX_STATES})"
            )));
        }
        let h = horizons_steps.len();
        if within.len() != n * h {
            return Err(StructureError::SizeMismatch {
                what: "frame share within",
                expected: n * h,
                found: within.len(),
            });
        }
        let bad = |what: &'static str, state: usize, value: f64| StructureError::BadProbability {
            what,
            state,
            value,
        };
        for (s, e) in eventually.iter().enumerate() {
            let row = &within[s * h..(s + 1) * h];
            match e {
                None => {
                    if row.iter().any(Option::is_some) {
                        return Err(StructureError::Invalid(format!(
                            "frame share: state {s} has bounded shares but no unbounded one"
                        )));
                    }
                }
                Some(e) => {
                    if !(0.0..=1.0).contains(e) {
                        return Err(bad("frame share", s, *e));
                    }
                    let mut prev = 0.0;
                    for w in row {
                        let Some(w) = *w else {
                            return Err(StructureError::Invalid(format!(
                                "frame share: state {s} lacks a bounded share"
                            )));
                        };
                        if !(prev..=*e).contains(&w) {
                            return Err(bad("frame share within", s, w));
                        }
                        prev = w;
                    }
                }
            }
        }
        Ok(FrameShare {
            weight,
            horizons_steps,
            eventually,
            within,
        })
    }

    /// Counts the frames of `traces` over `n_states` states: each trace is a run's abstract states frame
    /// by frame, up to and including its first unsafe frame when `violated` (that frame is not counted:
    /// the share is of frames before the violation) and its last frame otherwise. `alpha` smooths like the
    /// chain's Laplace α; `horizons_steps` are the bounded horizons.
    ///
    /// # Errors
    /// A state out of range, or a result that fails [`FrameShare::try_new`] (a weight outside [0, 1]).
    pub fn from_traces<'t>(
        weight: f64,
        n_states: usize,
        horizons_steps: &[u32],
        alpha: f64,
        traces: impl IntoIterator<Item = (&'t [StateId], bool)>,
    ) -> Result<FrameShare, StructureError> {
        let h = horizons_steps.len();
        let mut frames = vec![0u64; n_states];
        let mut violating = vec![0u64; n_states];
        let mut within = vec![0u64; n_states * h];
        for (trace, violated) in traces {
            let kept = if violated {
                &trace[..trace.len().saturating_sub(1)]
            } else {
                trace
            };
            for (i, &s) in kept.iter().enumerate() {
                let s = s as usize;
                if s >= n_states {
                    return Err(StructureError::OutOfRange {
                        what: "frame share state",
                        index: s as u64,
                        bound: n_states as u64,
                    });
                }
                frames[s] += 1;
                if violated {
                    violating[s] += 1;
                    // Steps from this frame to the violating one.
                    let steps = (kept.len() - i) as u64;
                    for (k, &hk) in horizons_steps.iter().enumerate() {
                        if steps <= u64::from(hk) {
                            within[s * h + k] += 1;
                        }
                    }
                }
            }
        }
        let share = |pos: u64, tot: u64| (pos as f64 + alpha / 2.0) / (tot as f64 + alpha);
        let eventually: Vec<Option<f64>> = (0..n_states)
            .map(|s| (frames[s] > 0).then(|| share(violating[s], frames[s])))
            .collect();
        // State-major: entry i is state i / h (the range is empty without horizons).
        let within = (0..n_states * h)
            .map(|i| {
                let tot = frames[i / h];
                (tot > 0).then(|| share(within[i], tot))
            })
            .collect();
        FrameShare::try_new(weight, horizons_steps.to_vec(), eventually, within)
    }

    /// The weight `w` of the share in the risk `(1 − w) · P_chain + w · share`.
    pub fn weight(&self) -> f64 {
        self.weight
    }

    /// The horizons (steps) of the bounded shares.
    pub fn horizons_steps(&self) -> &[u32] {
        &self.horizons_steps
    }

    /// Number of states covered.
    pub fn n_states(&self) -> usize {
        self.eventually.len()
    }

    /// The share of `state` (`None` if never visited in training, or out of range).
    pub fn eventually(&self, state: StateId) -> Option<f64> {
        self.eventually.get(state as usize).copied().flatten()
    }

    /// The bounded share of `state` at horizon index `h`.
    pub fn within(&self, h: usize, state: StateId) -> Option<f64> {
        let n_h = self.horizons_steps.len();
        if h >= n_h {
            return None;
        }
        self.within.get(state as usize * n_h + h).copied().flatten()
    }
}

#[cfg(test)]
mod tests;
