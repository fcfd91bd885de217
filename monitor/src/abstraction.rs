//! Frames → abstract states: the one encoding used by both batch learning and the runtime [`Session`].
//!
//! [`Compiled`] turns the model's law texts and each property's predicate texts into evaluable form: a
//! [`laws::Evaluator`] over only the laws the properties need (their own laws and the window predicates'
//! laws, re-parsed from their fully expanded formulas so unrelated laws cost nothing per frame), and per
//! property an encoder whose predicates are law-language atoms (evaluated on the frame's
//! [`laws::Signals`]) or window predicates `L.w` (the evaluator's "violated within the window" verdict).
//! A `Tracker` steps that once per frame: the run's [`SignalStream`] once, the evaluator once, then each
//! encoder writes its state id. [`crate::Learner`] and [`crate::Session`] both own a `Tracker`, so the
//! state sequences they see for a run are equal by construction (and tested).
//!
//! The unsafe predicate (bit 0 of resolved properties) is `L.w` for a law verdict — at the first frame
//! where a violation of L becomes certain, "within the window" and "violated now" coincide — or an atom
//! (`collision` for no_collision). `unsafe_now` reports the per-frame fact: the law's `violated_now`, or
//! the atom's truth.
//!
//! [`Session`]: crate::Session

use laws::eval::{AtomGather, AtomIndex, StateHandle};
use laws::signals::SignalSet;
use laws::ObligationHandle;
use laws::{
    Atom, EvalConfig, Evaluator, Formula, Frame, LawSet, LawSource, SignalContext, SignalStream,
    Signals, Verdicts,
};

use crate::error::ModelError;
use crate::forest::ForestShare;
use crate::spec::{PendingPredicate, WINDOW_SUFFIX};
use crate::StateId;

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
}

/// Collects the state antecedents of a law body: `A -> B` with A a state formula gives A; a conjunction
/// gives those of its parts. Other shapes (e.g. `G(~collision)`'s `collision == 0`) give none.
fn antecedents(body: &Formula, out: &mut Vec<Formula>) {
    match body {
        Formula::Implies(a, _) if a.is_state() => out.push((**a).clone()),
        Formula::And(a, b) => {
            antecedents(a, out);
            antecedents(b, out);
        }
        _ => {}
    }
}

fn property_error(p: &PropertyDef<'_>, reason: String) -> ModelError {
    ModelError::Property {
        property: p.name.to_string(),
        reason,
    }
}

/// A predicate text, read once against the model's full law set.
enum PredText<'t> {
    /// `L.w` of a law of the set.
    Window(&'t str),
    /// An obligation predicate of a law of the set (`L.pending`, `L.pending > x`).
    Pending(PendingPredicate<'t>),
    /// A law-language atom.
    Atom(Atom),
    /// A conjunction of literals (predicate, negated): [`CONJUNCTION`]-separated, each as a reactive
    /// rule's literal is written ([`rule_literal`]).
    And(Vec<(PredText<'t>, bool)>),
}

/// What separates the literals of a conjunction predicate (`closestApproach.accTtc<=1.4 & jerk>0`).
pub const CONJUNCTION: &str = " & ";

/// Most literals of one conjunction predicate.
pub const MAX_CONJUNCTION_LITERALS: usize = 4;

impl<'t> PredText<'t> {
    fn read(text: &'t str, full: &LawSet) -> Result<PredText<'t>, String> {
        if text.contains(CONJUNCTION.trim()) {
            let literals: Vec<&str> = text.split(CONJUNCTION.trim()).collect();
            if literals.len() > MAX_CONJUNCTION_LITERALS {
                return Err(format!(
                    "predicate '{text}': a conjunction of {} literals (at most {MAX_CONJUNCTION_LITERALS})",
                    literals.len()
                ));
            }
            return PredText::read_literals(literals, full)
                .map(PredText::And)
                .map_err(|e| format!("in conjunction '{text}': {e}"));
        }
        PredText::read_literal(text, full)
    }

    /// Literals as a reactive rule or a conjunction writes them ([`rule_literal`]), none a conjunction.
    fn read_literals(
        texts: impl IntoIterator<Item = &'t str>,
        full: &LawSet,
    ) -> Result<Vec<(PredText<'t>, bool)>, String> {
        texts
            .into_iter()
            .map(|t| {
                let (text, negated) = rule_literal(t);
                PredText::read_literal(text, full).map(|p| (p, negated))
            })
            .collect()
    }

    /// Literals over the reduced law set.
    fn resolve_literals(
        literals: &[(PredText<'t>, bool)],
        reduced: &LawSet,
        frame_period_s: f64,
    ) -> Result<Vec<(Pred, bool)>, String> {
        literals
            .iter()
            .map(|(p, negated)| p.resolve(reduced, frame_period_s).map(|p| (p, *negated)))
            .collect()
    }

    /// A predicate that is not a conjunction.
    fn read_literal(text: &'t str, full: &LawSet) -> Result<PredText<'t>, String> {
        if text.is_empty() {
            return Err("an empty predicate".into());
        }
        if let Some(law) = text.strip_suffix(WINDOW_SUFFIX) {
            if full.index_of(law).is_some() {
                return Ok(PredText::Window(law));
            }
        }
        if let Some(pending) = PendingPredicate::parse(text) {
            let pending = pending?;
            pending.check(full)?;
            return Ok(PredText::Pending(pending));
        }
        Atom::parse(text)
            .map(PredText::Atom)
            .map_err(|e| format!("predicate '{text}': {e}"))
    }

    /// The laws the predicate reads a verdict or an obligation of.
    fn laws(&self, out: &mut Vec<&'t str>) {
        match self {
            PredText::Window(law) => out.push(law),
            PredText::Pending(p) => out.push(p.law),
            PredText::Atom(_) => {}
            PredText::And(literals) => literals.iter().for_each(|(p, _)| p.laws(out)),
        }
    }

    /// The predicate over the reduced law set.
    fn resolve(&self, reduced: &LawSet, frame_period_s: f64) -> Result<Pred, String> {
        let index = |law: &str| {
            reduced
                .index_of(law)
                .ok_or_else(|| format!("law '{law}' lost while re-parsing"))
        };
        Ok(match self {
            PredText::Window(law) => Pred::Window(index(law)?),
            PredText::Pending(p) => Pred::Pending {
                law: index(p.law)?,
                more_than_frames: p.more_than_frames(frame_period_s),
            },
            PredText::Atom(a) => Pred::Atom(a.clone()),
            PredText::And(literals) => Pred::And(PredText::resolve_literals(
                literals,
                reduced,
                frame_period_s,
            )?),
        })
    }
}

/// One property's texts, read and checked against the full law set.
struct ReadProperty<'t> {
    law: &'t str,
    preds: Vec<PredText<'t>>,
    unsafe_bit: usize,
    /// The reactive rule's literals and whether each is negated.
    rule: Vec<(PredText<'t>, bool)>,
    /// The forest's split predicates, and the forest.
    forest: Option<(Vec<PredText<'t>>, &'t ForestShare)>,
}

impl<'t> ReadProperty<'t> {
    fn read(p: &PropertyDef<'t>, full: &LawSet) -> Result<ReadProperty<'t>, String> {
        if full.index_of(p.law).is_none() {
            return Err(format!("unknown law '{}'", p.law));
        }
        if p.unsafe_bit >= p.predicates.len() {
            return Err(format!("unsafe bit {} out of range", p.unsafe_bit));
        }
        let preds = p
            .predicates
            .iter()
            .map(|t| PredText::read(t, full))
            .collect::<Result<Vec<_>, _>>()?;
        let rule = PredText::read_literals(p.reactive_rule.iter().map(String::as_str), full)?;
        let forest = p
            .forest
            .map(|f| {
                f.predicates()
                    .iter()
                    .map(|t| PredText::read(t, full).map_err(|e| format!("forest split: {e}")))
                    .collect::<Result<Vec<_>, _>>()
                    .map(|preds| (preds, f))
            })
            .transpose()?;
        Ok(ReadProperty {
            law: p.law,
            preds,
            unsafe_bit: p.unsafe_bit,
            rule,
            forest,
        })
    }

    /// The laws the property needs: its own, then those its predicates and rule read.
    fn laws(&self) -> Vec<&'t str> {
        let mut out = vec![self.law];
        let forest = self.forest.iter().flat_map(|(preds, _)| preds);
        for p in self
            .preds
            .iter()
            .chain(self.rule.iter().map(|(p, _)| p))
            .chain(forest)
        {
            p.laws(&mut out);
        }
        out
    }

    /// The property's encoder over the reduced law set.
    fn encoder(&self, reduced: &LawSet, frame_period_s: f64) -> Result<Encoder, String> {
        let preds = self
            .preds
            .iter()
            .map(|p| p.resolve(reduced, frame_period_s))
            .collect::<Result<Vec<_>, _>>()?;
        let law_index = reduced
            .index_of(self.law)
            .ok_or_else(|| format!("law '{}' lost while re-parsing", self.law))?;
        let unsafe_now = match &preds[self.unsafe_bit] {
            Pred::Window(i) => UnsafeNow::Violated(*i),
            Pred::Atom(a) => UnsafeNow::Atom(a.clone()),
            Pred::Pending { .. } | Pred::And(_) => return Err(
                "the unsafe predicate must be `L.w` or an atom, not an obligation or a conjunction"
                    .into(),
            ),
        };
        let mut ante = Vec::new();
        antecedents(reduced.laws()[law_index].body(), &mut ante);
        let rule = PredText::resolve_literals(&self.rule, reduced, frame_period_s)?;
        let forest = self
            .forest
            .as_ref()
            .map(|(preds, f)| {
                preds
                    .iter()
                    .map(|p| p.resolve(reduced, frame_period_s))
                    .collect::<Result<Vec<_>, _>>()
                    .map(|preds| (preds, (*f).clone()))
            })
            .transpose()?;
        Ok(Encoder {
            preds,
            unsafe_bit: self.unsafe_bit,
            unsafe_now,
            antecedents: ante,
            rule,
            forest,
        })
    }
}

/// The laws the properties need, in first-use order, re-parsed as one self-contained set: each law's
/// formula has earlier laws inlined and prints as parseable text, so unrelated laws cost nothing per frame.
fn reduced_laws(full: &LawSet, properties: &[ReadProperty<'_>]) -> Result<LawSet, ModelError> {
    let mut needed: Vec<&str> = Vec::new();
    for law in properties.iter().flat_map(ReadProperty::laws) {
        if !needed.contains(&law) {
            needed.push(law);
        }
    }
    let reduced_text: String = needed
        .iter()
        .filter_map(|n| full.index_of(n).map(|i| &full.laws()[i]))
        .map(|l| format!("{} = {};\n", l.name(), l.formula()))
        .collect();
    LawSet::parse(&[LawSource {
        name: "(model laws)".into(),
        text: reduced_text,
    }])
    .map_err(|e| ModelError::Property {
        property: "(law texts)".into(),
        reason: format!("re-parsing the needed laws failed: {e}"),
    })
}

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
        })
    }

    /// The laws actually evaluated (the properties' laws and window laws).
    pub fn laws(&self) -> &LawSet {
        &self.laws
    }

    /// A fresh tracker (empty law windows) reading scenario constants from `context`.
    ///
    /// Every atom predicate, unsafe atom and baseline antecedent is registered with the tracker's
    /// evaluator as a state formula, so each distinct atom (shared between laws and properties) is
    /// evaluated once per frame, and the frame's signals are computed only where some atom reads them.
    pub(crate) fn tracker(&self, context: SignalContext) -> Result<Tracker, ModelError> {
        self.tracker_with(context, &[], &[], SignalSet::EMPTY)
            .map(|(tracker, _)| tracker)
    }

    /// A tracker that also evaluates `extra` atoms each frame (read back through the returned handles in
    /// [`Tracker::step_with`]), tracks the obligations of the laws named in `obligations` (`None` for a
    /// law that is not compiled or has no obligation), and computes the signals of `extra_signals`
    /// whether or not an atom reads them: what the abstraction search ([`crate::select`]) records of each
    /// training frame.
    pub(crate) fn tracker_with(
        &self,
        context: SignalContext,
        extra: &[Atom],
        obligations: &[String],
        extra_signals: SignalSet,
    ) -> Result<(Tracker, ExtraHandles), ModelError> {
        let config = |e: laws::EvalError| ModelError::Config(e.to_string());
        let mut evaluator = Evaluator::new(&self.laws, &self.eval).map_err(config)?;
        let atoms = extra
            .iter()
            .map(|a| evaluator.add_state(&Formula::Atom(a.clone())))
            .collect::<Result<Vec<_>, _>>()
            .map_err(config)?;
        let obligations = obligations
            .iter()
            .map(|name| {
                let law = self.laws.index_of(name).map(|i| &self.laws.laws()[i])?;
                evaluator.add_obligation(law).ok()
            })
            .collect();
        let handles = ExtraHandles { atoms, obligations };
        let mut encoders = Vec::with_capacity(self.encoders.len());
        for enc in &self.encoders {
            let atom = |ev: &mut Evaluator, a: &Atom| ev.add_state(&Formula::Atom(a.clone()));
            let compile = |ev: &mut Evaluator, p: &Pred| match p {
                Pred::Atom(a) => atom(ev, a).map(RtPred::State),
                Pred::Window(i) => Ok(RtPred::Window(*i)),
                Pred::Pending {
                    law,
                    more_than_frames,
                } => {
                    let law = self.laws.laws().get(*law).ok_or(laws::EvalError::Config(
                        "obligation predicate on a law outside the model",
                    ))?;
                    ev.add_obligation(law).map(|handle| RtPred::Pending {
                        handle,
                        min_age: more_than_frames.map_or(0, |m| {
                            u32::try_from(m.saturating_add(1)).unwrap_or(u32::MAX)
                        }),
                    })
                }
                Pred::And(_) => Err(laws::EvalError::Config(
                    "a conjunction where a single predicate is expected",
                )),
            };
            let compile_literals = |ev: &mut Evaluator, literals: &[(Pred, bool)]| {
                literals
                    .iter()
                    .map(|(q, negated)| compile(ev, q).map(|rt| RtPred::direct(ev, rt, *negated)))
                    .collect::<Result<Vec<_>, _>>()
            };
            // Most predicates are one atom: those bits are read straight from the atom table.
            let (mut atoms, mut rest, mut conjunctions) = (Vec::new(), Vec::new(), Vec::new());
            for (bit, p) in enc.preds.iter().enumerate() {
                let bit = u32::try_from(bit).map_err(|_| {
                    ModelError::Config("more predicates than a state has bits".into())
                })?;
                if let Pred::And(literals) = p {
                    let literals = compile_literals(&mut evaluator, literals).map_err(config)?;
                    conjunctions.push((literals.into_boxed_slice(), bit));
                    continue;
                }
                let pred = compile(&mut evaluator, p).map_err(config)?;
                match pred {
                    RtPred::State(h) => match evaluator.state_atom(h) {
                        Some((atom, negated)) => atoms.push((atom, negated, bit)),
                        None => rest.push((pred, bit)),
                    },
                    _ => rest.push((pred, bit)),
                }
            }
            let rule = compile_literals(&mut evaluator, &enc.rule).map_err(config)?;
            let forest = enc
                .forest
                .as_ref()
                .map(|(preds, share)| {
                    RtForest::compile(&mut evaluator, preds, share, compile_literals)
                })
                .transpose()
                .map_err(config)?;
            let unsafe_now = match &enc.unsafe_now {
                UnsafeNow::Violated(i) => RtUnsafe::Violated(*i),
                UnsafeNow::Atom(a) => RtUnsafe::State(atom(&mut evaluator, a).map_err(config)?),
            };
            // "Any antecedent holds" is one state formula: their disjunction.
            let baseline = enc
                .antecedents
                .iter()
                .cloned()
                .reduce(|a, b| Formula::Or(Box::new(a), Box::new(b)))
                .map(|f| evaluator.add_state(&f))
                .transpose()
                .map_err(config)?;
            encoders.push(RtEncoder {
                atoms: AtomGather::new(&atoms),
                rest,
                conjunctions,
                unsafe_bit: enc.unsafe_bit,
                unsafe_now,
                baseline,
                rule,
                forest,
            });
        }
        Ok((
            Tracker {
                signals: SignalStream::new(
                    context,
                    evaluator.needed_signals().union(extra_signals),
                ),
                evaluator,
                out: vec![Encoded::default(); encoders.len()],
                encoders,
            },
            handles,
        ))
    }
}

/// What [`Compiled::tracker_with`] registered beyond the properties' own predicates.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExtraHandles {
    /// One per extra atom.
    pub atoms: Vec<StateHandle>,
    /// One per named law: its obligation memory, when it has one.
    pub obligations: Vec<Option<ObligationHandle>>,
}

/// A predicate as the tracker reads it.
#[derive(Debug, Clone, Copy)]
enum RtPred {
    /// An atom registered with the evaluator.
    State(StateHandle),
    /// An atom's bit in the evaluator's atom table (a state formula that is one atom, read directly).
    Atom(AtomIndex),
    /// `L.w` with L's index in the reduced law set.
    Window(usize),
    /// An obligation registered with the evaluator, pending for at least `min_age` frames (0 for
    /// `L.pending`, m + 1 for more than m frames; u32 keeps the enum two words).
    Pending {
        handle: ObligationHandle,
        min_age: u32,
    },
}

impl RtPred {
    /// A literal `(rt, negated)` as it is cheapest to read: a state formula that is one atom becomes that
    /// atom's bit, its negation folded into the literal's.
    fn direct(evaluator: &Evaluator, rt: RtPred, negated: bool) -> (RtPred, bool) {
        match rt {
            RtPred::State(h) => match evaluator.state_atom(h) {
                Some((atom, flipped)) => (RtPred::Atom(atom), negated != flipped),
                None => (rt, negated),
            },
            _ => (rt, negated),
        }
    }

    /// The predicate's value at the frame of `verdicts`.
    #[inline]
    fn holds(self, verdicts: &Verdicts<'_>) -> bool {
        match self {
            RtPred::State(h) => verdicts.state(h),
            RtPred::Atom(a) => verdicts.atom(a),
            RtPred::Window(i) => verdicts.in_window(i),
            RtPred::Pending { handle, min_age } => verdicts
                .pending_frames(handle)
                .is_some_and(|age| age >= u64::from(min_age)),
        }
    }

    /// Whether every literal (predicate, negated) holds at the frame of `verdicts`.
    #[inline]
    fn all(literals: &[(RtPred, bool)], verdicts: &Verdicts<'_>) -> bool {
        literals
            .iter()
            .all(|&(lit, negated)| lit.holds(verdicts) != negated)
    }
}

/// A reactive-rule literal's predicate text and whether it is negated (`not P`; atoms are negated by
/// their comparison instead, `speed>30`).
pub fn rule_literal(text: &str) -> (&str, bool) {
    match text.trim().strip_prefix("not ") {
        Some(rest) => (rest.trim(), true),
        None => (text.trim(), false),
    }
}

/// How the tracker reads `unsafe_now`.
#[derive(Debug, Clone, Copy)]
enum RtUnsafe {
    Violated(usize),
    State(StateHandle),
}

/// A conjunction's literals as the tracker reads them: (predicate, negated).
type Literals = Box<[(RtPred, bool)]>;

/// A forest as the tracker reads it: each frame, its splits' values are computed into a bitset first
/// (the splits that are one atom copied from the atom table in runs, the others one by one), and then
/// its trees are walked over those bits, rather than each node on a tree's path asking for its split.
#[derive(Debug, Clone)]
struct RtForest {
    /// Per 64 splits, the ones among them that are one atom: bit `i % 64` of word `i / 64` is split `i`.
    gathers: Vec<AtomGather>,
    /// The other splits (a literal that is not one atom, or a conjunction's literals), with their index.
    rest: Vec<(Literals, u32)>,
    /// The frame's split values.
    words: Vec<u64>,
    share: ForestShare,
    /// The split values the trees were last walked for, and the value (`None` before the first walk):
    /// split values mostly stay the same from one frame to the next (thresholds on signals that change
    /// smoothly), so most frames skip the walk.
    last: (Vec<u64>, Option<f64>),
}

impl RtForest {
    fn compile(
        evaluator: &mut Evaluator,
        preds: &[Pred],
        share: &ForestShare,
        compile_literals: impl Fn(
            &mut Evaluator,
            &[(Pred, bool)],
        ) -> Result<Vec<(RtPred, bool)>, laws::EvalError>,
    ) -> Result<RtForest, laws::EvalError> {
        let n_words = preds.len().div_ceil(64);
        let mut atoms: Vec<Vec<(AtomIndex, bool, u32)>> = vec![Vec::new(); n_words];
        let mut rest = Vec::new();
        for (i, p) in preds.iter().enumerate() {
            // Fewer than `MAX_PREDICATES` splits, so the index fits.
            let i = i as u32;
            // A split is a conjunction's literals, or one predicate as a literal that holds.
            let literals = match p {
                Pred::And(literals) => compile_literals(evaluator, literals)?,
                p => compile_literals(evaluator, &[(p.clone(), false)])?,
            };
            if let [(RtPred::Atom(a), negated)] = literals[..] {
                atoms[(i / 64) as usize].push((a, negated, i % 64));
            } else {
                rest.push((literals.into_boxed_slice(), i));
            }
        }
        Ok(RtForest {
            gathers: atoms.iter().map(|a| AtomGather::new(a)).collect(),
            rest,
            words: vec![0; n_words],
            share: share.clone(),
            last: (vec![0; n_words], None),
        })
    }

    /// The forest's value at the frame of `verdicts`.
    #[inline]
    fn value(&mut self, verdicts: &Verdicts<'_>) -> f64 {
        for (word, gather) in self.words.iter_mut().zip(&self.gathers) {
            *word = verdicts.gather(gather);
        }
        for (literals, i) in self.rest.iter() {
            if let Some(word) = self.words.get_mut((i / 64) as usize) {
                *word |= u64::from(RtPred::all(literals, verdicts)) << (i % 64);
            }
        }
        let (last_words, last_value) = &mut self.last;
        if let Some(value) = *last_value {
            if *last_words == self.words {
                return value;
            }
        }
        let words = &self.words;
        let value = self
            .share
            .value(|i| words.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1));
        last_words.copy_from_slice(words);
        *last_value = Some(value);
        value
    }
}

/// One property's encoder, compiled against a tracker's evaluator.
#[derive(Debug, Clone)]
struct RtEncoder {
    /// The predicates that are one atom, gathered into their bits of the state.
    atoms: AtomGather,
    /// The other single predicates, with their bits.
    rest: Vec<(RtPred, u32)>,
    /// The conjunctions' literals, with their bits.
    conjunctions: Vec<(Literals, u32)>,
    unsafe_bit: usize,
    unsafe_now: RtUnsafe,
    /// The disjunction of the law's antecedents; `None` when it has none (no baseline alarm).
    baseline: Option<StateHandle>,
    /// The reactive rule's literals (predicate, negated); empty when the property has none.
    rule: Vec<(RtPred, bool)>,
    /// The forest; `None` for none.
    forest: Option<RtForest>,
}

/// Steps the laws and encoders over one run's frames.
#[derive(Debug, Clone)]
pub(crate) struct Tracker {
    /// The run's signals: only those some atom reads are computed, and `jerk`, `acc.mean1s` and
    /// `speedLimit.time` read earlier frames.
    signals: SignalStream,
    evaluator: Evaluator,
    encoders: Vec<RtEncoder>,
    out: Vec<Encoded>,
}

impl Tracker {
    /// Consumes one frame; returns every property's encoding. Does not allocate.
    pub fn step(&mut self, frame: &Frame) -> &[Encoded] {
        self.step_with(frame, |_, _, _| ());
        &self.out
    }

    /// Consumes one frame and hands its signals, the laws' verdicts and every property's encoding to
    /// `inspect` (for callers that read more of the frame than the properties' states).
    pub fn step_with<R>(
        &mut self,
        frame: &Frame,
        inspect: impl FnOnce(&Signals, &Verdicts<'_>, &[Encoded]) -> R,
    ) -> R {
        let signals = self.signals.next(frame);
        let verdicts = self.evaluator.step(signals);
        for (enc, out) in self.encoders.iter_mut().zip(self.out.iter_mut()) {
            // State bits are below 32 (a state is a `StateId`), so the gathered bits fit.
            let mut state = verdicts.gather(&enc.atoms) as StateId;
            for &(pred, bit) in &enc.rest {
                state |= StateId::from(pred.holds(&verdicts)) << bit;
            }
            for (literals, bit) in &enc.conjunctions {
                state |= StateId::from(RtPred::all(literals, &verdicts)) << bit;
            }
            let unsafe_now = match enc.unsafe_now {
                RtUnsafe::Violated(i) => verdicts.violated_now(i),
                RtUnsafe::State(h) => verdicts.state(h),
            };
            let baseline = enc.baseline.is_some_and(|h| verdicts.state(h));
            let rule = !enc.rule.is_empty() && RtPred::all(&enc.rule, &verdicts);
            let forest = enc.forest.as_mut().map(|f| f.value(&verdicts));
            *out = Encoded {
                state,
                unsafe_state: state >> enc.unsafe_bit & 1 == 1,
                unsafe_now,
                baseline,
                rule,
                forest,
            };
        }
        inspect(signals, &verdicts, &self.out)
    }

    /// Forgets the run (a new one starts).
    pub fn reset(&mut self) {
        self.signals.reset();
        self.evaluator.reset();
        self.out.fill(Encoded::default());
    }
}
