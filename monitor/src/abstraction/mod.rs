//! Frames → abstract states: the one encoding used by both batch learning and the runtime [`Session`].
//!
//! [`Compiled`] turns the model's law texts and each property's predicate texts into evaluable form: a
//! [`laws::Evaluator`] over only the laws the properties need (their own laws and the window predicates'
//! laws, re-parsed from their fully expanded formulas so unrelated laws cost nothing per frame), and per
//! property an encoder whose predicates are law-language atoms (evaluated on the frame's
//! [`laws::Signals`]) or window predicates `L.w` (the evaluator's "violated within the window" verdict).
//! A `Tracker` steps that once per frame: the run's [`laws::SignalStream`] once, the evaluator once, then each
//! encoder writes its state id. [`crate::Learner`] and [`crate::Session`] both own a `Tracker`, so the
//! state sequences they see for a run are equal by construction (and tested).
//!
//! The unsafe predicate (bit 0 of resolved properties) is `L.w` for a law verdict — at the first frame
//! where a violation of L becomes certain, "within the window" and "violated now" coincide — or an atom
//! (`collision` for no_collision). `unsafe_now` reports the per-frame fact: the law's `violated_now`, or
//! the atom's truth.
//!
//! Reading the predicate texts is `read`'s; the per-frame side, the tracker, is `tracker`'s.
//!
//! [`Session`]: crate::Session

use laws::perception::RoadUserCorrection;
use laws::{Atom, EvalConfig, Evaluator, Formula, LawSet, LawSource};

use crate::error::ModelError;
use crate::forest::ForestShare;
use crate::StateId;

mod read;
mod tracker;

use read::{property_error, reduced_laws, ReadProperty};

pub use read::{rule_literal, CONJUNCTION, MAX_CONJUNCTION_LITERALS};
pub(crate) use tracker::{ExtraHandles, Tracker};

#[cfg(test)]
mod tests;

/// Parses law texts as one set, in the given order.
///
/// # Errors
/// [`ModelError::Property`] carrying the parse error (file, line, column).
pub fn parse_laws(laws: &[LawSource]) -> Result<LawSet, ModelError> {
    LawSet::parse(laws).map_err(|e| ModelError::Property {
        property: "(law texts)".into(),
        reason: e.to_string(),
    })
}

/// What a property's predicates are, as stored in a model: the law and the predicate texts.
#[derive(Debug, Clone, Copy)]
pub struct PropertyDef<'a> {
    /// Property name (for errors).
    pub name: &'a str,
    /// The law whose violation is unsafe.
    pub law: &'a str,
    /// Predicate texts, bit i = predicate i.
    pub predicates: &'a [String],
    /// Index of the unsafe predicate.
    pub unsafe_bit: usize,
    /// The literals of the property's reactive comparator rule (law-language atoms; empty for none).
    pub reactive_rule: &'a [String],
    /// The forest mixed into the property's risk ([`crate::forest`]), whose split predicates are
    /// evaluated like the predicates; `None` for none.
    pub forest: Option<&'a ForestShare>,
}

impl<'a> PropertyDef<'a> {
    /// A resolved property's definition, without a reactive rule.
    pub fn of(p: &'a crate::spec::ResolvedProperty) -> PropertyDef<'a> {
        PropertyDef {
            name: &p.name,
            law: &p.law,
            predicates: &p.predicates,
            unsafe_bit: p.unsafe_bit,
            reactive_rule: &[],
            forest: None,
        }
    }
}

#[derive(Debug, Clone)]
enum Pred {
    /// A law-language atom on the frame's signals.
    Atom(Atom),
    /// `L.w` with L's index in the reduced law set.
    Window(usize),
    /// `L.pending` (`more_than_frames` None) or `L.pending > x`, with L's index in the reduced law set.
    Pending {
        law: usize,
        more_than_frames: Option<u64>,
    },
    /// A conjunction of literals (predicate, negated), none of them a conjunction.
    And(Vec<(Pred, bool)>),
}

/// How `unsafe_now` is computed.
#[derive(Debug, Clone)]
enum UnsafeNow {
    /// The law (index in the reduced set) is violated at this frame.
    Violated(usize),
    /// An atom holds.
    Atom(Atom),
}

/// One property's encoder.
#[derive(Debug, Clone)]
pub(crate) struct Encoder {
    preds: Vec<Pred>,
    unsafe_bit: usize,
    unsafe_now: UnsafeNow,
    /// The state antecedents of the property's law (the reactive baseline), empty when it has none.
    antecedents: Vec<Formula>,
    /// The reactive rule's literals (predicate, negated); empty for none.
    rule: Vec<(Pred, bool)>,
    /// The forest's split predicates and the forest; `None` for none.
    forest: Option<(Vec<Pred>, ForestShare)>,
}

/// The per-frame result of one encoder.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Encoded {
    pub state: StateId,
    pub unsafe_state: bool,
    pub unsafe_now: bool,
    pub baseline: bool,
    pub rule: bool,
    /// The forest's value at the frame (`None` without a forest).
    pub forest: Option<f64>,
}

/// The laws and encoders of a model, ready to step.
#[derive(Debug, Clone)]
pub struct Compiled {
    laws: LawSet,
    eval: EvalConfig,
    encoders: Vec<Encoder>,
    /// Given to every tracker (see [`crate::BuildConfig::road_users`]).
    road_users: RoadUserCorrection,
}

/// Collects the state antecedents of a law body: `A -> B` with A a state formula gives A; a conjunction
/// gives those of its parts. Other shapes (e.g. `G(~collision)`'s `collision == 0`) give none.
impl Compiled {
    /// Compiles `properties` against the law texts `laws`.
    ///
    /// # Errors
    /// [`ModelError::Property`] when a law text does not parse, a property's law or window law is not among
    /// them, or a predicate is neither an atom nor `L.w`; [`ModelError::Config`] for a bad frame period or
    /// window.
    pub fn new(
        laws: &[LawSource],
        properties: &[PropertyDef<'_>],
        frame_period_s: f64,
        window_frames: usize,
    ) -> Result<Compiled, ModelError> {
        let full = parse_laws(laws)?;
        let read = properties
            .iter()
            .map(|p| ReadProperty::read(p, &full).map_err(|reason| property_error(p, reason)))
            .collect::<Result<Vec<_>, _>>()?;
        let reduced = reduced_laws(&full, &read)?;
        let encoders = properties
            .iter()
            .zip(read)
            .map(|(p, r)| {
                r.encoder(&reduced, frame_period_s)
                    .map_err(|reason| property_error(p, reason))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let eval = EvalConfig {
            frame_period_s,
            window_frames,
            ..EvalConfig::default()
        };
        // Fail now rather than in every session.
        Evaluator::new(&reduced, &eval).map_err(|e| ModelError::Config(e.to_string()))?;
        Ok(Compiled {
            laws: reduced,
            eval,
            encoders,
            road_users: RoadUserCorrection::NONE,
        })
    }

    /// The same, its trackers reading every frame's road users as `correction` says before computing
    /// signals (see [`crate::BuildConfig::road_users`]).
    pub fn with_road_users(mut self, correction: RoadUserCorrection) -> Compiled {
        self.road_users = correction;
        self
    }

    /// How its trackers read every frame's road users (see [`crate::BuildConfig::road_users`]).
    pub fn road_users(&self) -> RoadUserCorrection {
        self.road_users
    }

    /// The laws actually evaluated (the properties' laws and window laws).
    pub fn laws(&self) -> &LawSet {
        &self.laws
    }
}
