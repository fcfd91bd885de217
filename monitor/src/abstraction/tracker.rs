//! The runtime side: a [`Tracker`] steps the compiled encoders once per frame.

use laws::eval::{AtomGather, AtomIndex, StateHandle};
use laws::perception::Corrector;
use laws::signals::SignalSet;
use laws::ObligationHandle;
use laws::{Atom, Evaluator, Formula, Frame, SignalContext, SignalStream, Signals, Verdicts};

use crate::error::ModelError;
use crate::forest::ForestShare;
use crate::StateId;

use super::{Compiled, Encoded, Pred, UnsafeNow};

impl Compiled {
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
                road_users: Corrector::new(self.road_users),
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
    /// How the road users are read before the signals are computed (see
    /// [`crate::BuildConfig::road_users`]): the corrected frame is held here, its buffers reused from
    /// frame to frame.
    road_users: Corrector,
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
        let frame = self.road_users.view(frame);
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

    /// The frame last stepped as the signals read it, given the frame that was stepped: that frame itself
    /// when road users are read as logged, else its corrected copy (see
    /// [`crate::BuildConfig::road_users`]).
    pub fn seen<'a>(&'a self, frame: &'a Frame) -> &'a Frame {
        self.road_users.last_view(frame)
    }

    /// Forgets the run (a new one starts).
    pub fn reset(&mut self) {
        self.signals.reset();
        self.road_users.reset();
        self.evaluator.reset();
        self.out.fill(Encoded::default());
    }
}
