//! The runtime: one [`Session`] per simulator run or connection turns frames into per-property risk.
//!
//! `Session::step` computes the frame's signals once, steps the model's laws once, encodes every property's
//! abstract state and reads its risks from the cached tables (O(1) array reads). It does not allocate:
//! the [`StepOutcome`] it returns a reference to is preallocated and overwritten.
//!
//! **Absorption.** Unsafe states are absorbing in the learned chain, so once a property's abstract state
//! is unsafe at some frame the session keeps reporting that unsafe state with risk 1 (every horizon) for
//! the rest of the run, whatever later frames look like; [`PropertyOutcome::absorbed`] says so.
//! [`PropertyOutcome::unsafe_now`] stays the per-frame fact (the law's `violated_now`, or the unsafe atom),
//! so a second violation later in the run is still visible. [`Session::reset`] starts a new run.
//!
//! **Reactive baseline.** [`PropertyOutcome::baseline_alarm`] is true when the antecedent of the property's
//! law holds at this frame (for a body `A -> ...` with state formula A, or a conjunction of such
//! implications: any antecedent). A law without one (e.g. `G(collision == 0)`) never raises it.

use std::sync::Arc;

use laws::{Frame, SignalContext};

use crate::abstraction::Tracker;
use crate::av::AvDomain;
use crate::error::ModelError;
use crate::model::Model;
use crate::StateId;

#[cfg(test)]
mod tests;

/// Per-session options.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SessionConfig {
    /// Scenario constants (`Time`, weather) the laws read.
    pub context: SignalContext,
}

/// One property's verdict at one frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PropertyOutcome {
    /// The abstract state (its bits: predicate i holds iff bit i is set); for an ensemble, the state of
    /// the property's own chain.
    pub state: StateId,
    /// The unsafe predicate holds at this frame (the law's violation became certain now, or the unsafe
    /// atom such as `collision` holds).
    pub unsafe_now: bool,
    /// The run has been in an unsafe state at or before this frame (state and risks are frozen there).
    pub absorbed: bool,
    /// P(F unsafe) from this state; for an ensemble ([`crate::property::PropertyModel::members`]) the
    /// mean over its chains, each read at its own state (this and the other risks alike); with a forest
    /// ([`crate::forest`]), that mixed with the forest's value at this frame (this and `risk_within`).
    pub risk_eventually: f64,
    /// P(F≤k unsafe) for each of the model's horizons ([`Session::horizons_steps`]).
    pub risk_within: Vec<f64>,
    /// Conservative risk `min(1, P(F unsafe) + ε_s)` with ε_s the PAC error of the state's data.
    pub risk_upper: f64,
    /// The reactive baseline alarm: the antecedent of the property's law holds now.
    pub baseline_alarm: bool,
    /// The property's learned reactive rule holds now (false when the model has none).
    pub rule_alarm: bool,
}

impl PropertyOutcome {
    /// Whether predicate `i` holds in this state.
    pub fn bit(&self, i: usize) -> bool {
        i < 32 && self.state >> i & 1 == 1
    }

    /// P(F≤k unsafe) for the `h`-th horizon.
    pub fn risk_within(&self, h: usize) -> Option<f64> {
        self.risk_within.get(h).copied()
    }
}

/// Every property's verdict at one frame, in the model's property order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepOutcome {
    /// Index of the frame in the run (0-based).
    pub frame_index: u64,
    /// One entry per property.
    pub properties: Vec<PropertyOutcome>,
}

/// The most likely path from a state to unsafe, for explanations.
#[derive(Debug, Clone, PartialEq)]
pub struct LikelyPath {
    /// The states, from the start state to the first unsafe one.
    pub states: Vec<StateId>,
    /// Each state in words.
    pub words: Vec<String>,
    /// The product of the transition probabilities along it.
    pub probability: f64,
}

/// A per-run monitor over a shared model.
#[derive(Debug, Clone)]
pub struct Session {
    model: Arc<Model>,
    tracker: Tracker,
    domains: Vec<AvDomain>,
    /// Per property: the tracker's encoders of its ensemble members (after one per property).
    member_slots: Vec<std::ops::Range<usize>>,
    outcome: StepOutcome,
    n_frames: u64,
}

impl Session {
    /// A session with empty law windows.
    ///
    /// # Errors
    /// The model's laws or predicates do not compile (never for a model that passed validation).
    pub fn new(model: &Arc<Model>, cfg: &SessionConfig) -> Result<Session, ModelError> {
        let tracker = model.compile()?.tracker(cfg.context)?;
        let domains = model
            .properties()
            .iter()
            .map(|p| p.domain())
            .collect::<Result<Vec<_>, _>>()?;
        let properties = model
            .properties()
            .iter()
            .map(|p| PropertyOutcome {
                risk_within: vec![0.0; p.table().horizons_steps().len()],
                ..PropertyOutcome::default()
            })
            .collect();
        let mut next = model.properties().len();
        let member_slots = model
            .properties()
            .iter()
            .map(|p| {
                let slot = next..next + p.members().len();
                next = slot.end;
                slot
            })
            .collect();
        Ok(Session {
            model: Arc::clone(model),
            tracker,
            domains,
            member_slots,
            outcome: StepOutcome {
                frame_index: 0,
                properties,
            },
            n_frames: 0,
        })
    }

    /// [`Session::step`], and the frame as the model read it: `frame` itself when the model reads road
    /// users as logged, else its copy with the road users smoothed and moved ahead
    /// ([`crate::BuildConfig::road_users`]). For checks that must see the road users where the model does
    /// (RSS in `score`, the bridge's brake check).
    pub fn step_seen<'a>(&'a mut self, frame: &'a Frame) -> (&'a StepOutcome, &'a Frame) {
        self.step(frame);
        (&self.outcome, self.tracker.seen(frame))
    }

    /// Consumes the next frame of the run. Does not allocate.
    pub fn step(&mut self, frame: &Frame) -> &StepOutcome {
        let encoded = self.tracker.step(frame);
        self.outcome.frame_index = self.n_frames;
        self.n_frames += 1;
        for (((enc, out), p), slot) in encoded
            .iter()
            .zip(self.outcome.properties.iter_mut())
            .zip(self.model.properties())
            .zip(&self.member_slots)
        {
            out.unsafe_now = enc.unsafe_now;
            out.baseline_alarm = enc.baseline;
            out.rule_alarm = enc.rule;
            if out.absorbed {
                continue;
            }
            out.state = enc.state;
            if enc.unsafe_state {
                out.absorbed = true;
                out.risk_eventually = 1.0;
                out.risk_upper = 1.0;
                out.risk_within.fill(1.0);
                continue;
            }
            // A k-bit encoder's state is < 2^k < n_states, so these lookups are in range; 1.0 would be the
            // safe side if they were not. An ensemble's chains share the unsafe predicate, so they are
            // absorbed together; each is read at its own state and the risks averaged.
            // The sums are kept in registers and the horizons' row copied for the first chain: adding
            // into the outcome chain after chain made every step wait on its own stores.
            let (mut eventually, mut upper) = (0.0, 0.0);
            let member_states = encoded.get(slot.clone()).unwrap_or_default();
            let states = std::iter::once(enc.state).chain(member_states.iter().map(|e| e.state));
            for (k, (chain, state)) in p.chains().zip(states).enumerate() {
                let table = chain.risk_table();
                eventually += table.eventually(state).unwrap_or(1.0);
                upper += chain.risk_upper_bound(state).unwrap_or(1.0);
                // One state's horizons are adjacent in memory (one cache line for a few horizons).
                let row = table
                    .within_row(state)
                    .filter(|row| row.len() == out.risk_within.len());
                match (k, row) {
                    (0, Some(row)) => out.risk_within.copy_from_slice(row),
                    (0, None) => out.risk_within.fill(1.0),
                    (_, Some(row)) => {
                        for (r, w) in out.risk_within.iter_mut().zip(row) {
                            *r += w;
                        }
                    }
                    (_, None) => out.risk_within.iter_mut().for_each(|r| *r += 1.0),
                }
            }
            let n = (1 + p.members().len()) as f64;
            out.risk_eventually = eventually / n;
            out.risk_upper = upper / n;
            if n != 1.0 {
                for r in &mut out.risk_within {
                    *r /= n;
                }
            }
            // The forest's short-horizon share, mixed into every measure but the PAC bound (which is of
            // the chains' P(F unsafe)).
            if let (Some(forest), Some(value)) = (p.forest(), enc.forest) {
                out.risk_eventually = forest.mix(out.risk_eventually, value);
                for r in &mut out.risk_within {
                    *r = forest.mix(*r, value);
                }
            }
        }
        &self.outcome
    }

    /// Forgets the run: empty law windows, nothing absorbed, frame index 0.
    pub fn reset(&mut self) {
        self.tracker.reset();
        self.n_frames = 0;
        for out in &mut self.outcome.properties {
            let mut within = std::mem::take(&mut out.risk_within);
            within.fill(0.0);
            *out = PropertyOutcome {
                risk_within: within,
                ..PropertyOutcome::default()
            };
        }
        self.outcome.frame_index = 0;
    }

    /// The last outcome (all zero before the first frame).
    pub fn outcome(&self) -> &StepOutcome {
        &self.outcome
    }

    /// The model.
    pub fn model(&self) -> &Arc<Model> {
        &self.model
    }

    /// The horizons of property `p`'s bounded risks, in steps (`None` for an unknown property).
    pub fn horizons_steps(&self, p: usize) -> Option<&[u32]> {
        self.model
            .properties()
            .get(p)
            .map(|m| m.table().horizons_steps())
    }

    /// Property `p`'s state in words (`None` for an unknown property).
    pub fn decode(&self, p: usize, state: StateId) -> Option<String> {
        use crate::domain::Domain;
        self.domains.get(p).map(|d| d.decode(state))
    }

    /// Property `p`'s state as a bit string, predicate 0 first.
    pub fn bit_string(&self, p: usize, state: StateId) -> Option<String> {
        self.domains.get(p).map(|d| d.bit_string(state))
    }

    /// Expected steps to unsafe from `state` given that it is reached (infinite when unreachable).
    pub fn expected_steps(&self, p: usize, state: StateId) -> Option<f64> {
        self.model
            .properties()
            .get(p)?
            .table()
            .expected_steps(state)
    }

    /// The most likely path from `state` to unsafe, in words with its probability; `None` when unsafe is
    /// unreachable from `state` (or the property is unknown). Allocates: for explanations, not per frame.
    pub fn most_likely_path(&self, p: usize, state: StateId) -> Option<LikelyPath> {
        use crate::domain::Domain;
        let model = self.model.properties().get(p)?;
        let domain = self.domains.get(p)?;
        let states = model.table().most_likely_path(state);
        if states.is_empty() {
            return None;
        }
        let probability = states
            .windows(2)
            .map(|w| model.dtmc().prob(w[0], w[1]))
            .product();
        Some(LikelyPath {
            words: states.iter().map(|&s| domain.decode(s)).collect(),
            states,
            probability,
        })
    }
}
