//! Incremental sliding-window evaluation of a [`LawSet`] over a stream of [`Signals`].
//!
//! Semantics (discrete time, one position per frame at a fixed period): a law's body `phi` has a finite
//! horizon H frames; `phi(i)` is decided at frame `i + H`. At frame k the verdict "violated now" is true
//! iff `phi(k - H)` is false, i.e. the frame at which a violation becomes certain; nothing is reported
//! early, and obligations still open at the end of a log are never reported. "In window" is true iff a
//! violation became certain at some frame in `[k - W + 1, k]` (W = [`EvalConfig::window_frames`]).
//!
//! Cost: every distinct atom of the set is evaluated once per frame into a bitset; each law is a
//! `program::Program` of O(1)-per-step operators over those bits (state sub-formulas are truth tables,
//! the common `A -> F[0,b] B` is one fused operator); `guard`-based relevance skips laws whose context
//! cannot arise. `step` does not allocate.
//!
//! **Obligation memory.** Besides verdicts, a caller may register a law's obligation memory
//! ([`Evaluator::add_obligation`]): per frame, how long the oldest of its `A -> F[a,b] B` obligations has
//! been pending (arisen, deadline still ahead, not met), the clock variables Pro²Guard's abstraction lacks.

mod atoms;
mod gather;
mod guard;
mod obligation;
mod program;
mod state;

#[cfg(test)]
mod naive;
#[cfg(test)]
mod tests;

pub use gather::AtomGather;
pub use program::to_frames;

use atoms::AtomTable;
use obligation::ObligationTracker;
use program::{Compiler, Program};
use state::StateFn;

use crate::lang::formula::Formula;
use crate::lang::lawset::{Law, LawSet};
use crate::signals::{SignalContext, SignalSet, Signals};

/// Evaluation settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvalConfig {
    /// Frame period, s (interval bounds must be multiples of it).
    pub frame_period_s: f64,
    /// Length of the "violated within the window" predicate, frames (≥ 1).
    pub window_frames: usize,
    /// Skip laws whose context cannot arise (never changes a verdict; off only to measure or test).
    pub relevance: bool,
    /// Scenario constants (`Time`, weather) for callers that build [`Signals`] from frames.
    pub context: SignalContext,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            frame_period_s: 0.1,
            window_frames: 100,
            relevance: true,
            context: SignalContext::default(),
        }
    }
}

/// A law set cannot be evaluated with this configuration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// An interval bound is not a whole number of frames.
    #[error("law '{law}' (line {line}, column {col}): bound {bound_s} s is not a multiple of the frame period {period_s:?} s")]
    BoundNotMultiple {
        /// Law name.
        law: String,
        /// Line of the operator.
        line: usize,
        /// Column of the operator.
        col: usize,
        /// The offending bound, s.
        bound_s: f64,
        /// The frame period, s.
        period_s: f64,
    },
    /// An unbounded temporal operator inside a body (the parser rejects these; kept for formulas built in code).
    #[error(
        "law '{law}' (line {line}, column {col}): unbounded temporal operator inside the law body"
    )]
    Unbounded {
        /// Law name.
        law: String,
        /// Line of the operator.
        line: usize,
        /// Column of the operator.
        col: usize,
    },
    /// The laws' windows need more buffer memory than the limit (long intervals, deep nesting, or a very
    /// short frame period).
    #[error("law '{law}': the law set's window buffers would take {bytes} bytes, above the limit of {limit} bytes (bounds are at most one hour; shorten the intervals or use a longer frame period)")]
    TooLarge {
        /// The law whose compilation crossed the limit.
        law: String,
        /// Bytes the set would need up to and including this law's buffer.
        bytes: usize,
        /// The limit ([`crate::lang::limits::MAX_WINDOW_BYTES`]).
        limit: usize,
    },
    /// The configuration itself is invalid.
    #[error("invalid evaluation config: {0}")]
    Config(&'static str),
    /// [`Evaluator::add_state`] was given a formula with a temporal operator.
    #[error("'{0}' is not a state formula (it has a temporal operator)")]
    NotState(String),
    /// [`Evaluator::add_obligation`] was given a law without a future-time obligation.
    #[error(
        "law '{0}' has no future-time obligation (a top-level conjunct `A -> F[a,b] B` with state formulas \
         A and B and 0 <= a <= b), so it has no pending-obligation predicate"
    )]
    NoObligation(String),
}

/// Work counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EvalStats {
    /// Frames stepped.
    pub n_frames: u64,
    /// (law, frame) pairs whose body was stepped.
    pub n_law_steps: u64,
    /// (law, frame) pairs skipped by the relevance check (work saved).
    pub n_law_skips: u64,
}

/// Per-law relevance state.
#[derive(Debug, Clone)]
struct Relevance {
    guard: Program,
    /// Consecutive frames, ending at the current one, on which the guard was false.
    n_false_run: i64,
    skipping: bool,
}

#[derive(Debug, Clone)]
struct LawState {
    body: Program,
    relevance: Option<Relevance>,
    /// Verdicts for positions before this are forced to "holds" (set when resuming after a skip).
    suppress_before: i64,
    last_violation: i64,
}

/// Per-law verdicts of one frame.
#[derive(Debug, Clone, Copy)]
pub struct Verdicts<'a> {
    violated: &'a [bool],
    in_window: &'a [bool],
    words: &'a [u64],
    states: &'a [StateFn],
    /// Per obligation tracker, the age in frames of the oldest pending obligation (−1: none).
    pending_ages: &'a [i64],
}

impl Verdicts<'_> {
    /// True when a violation of law `i` became certain at this frame.
    pub fn violated_now(&self, i: usize) -> bool {
        self.violated[i]
    }

    /// True when a violation of law `i` became certain within the window ending at this frame.
    pub fn in_window(&self, i: usize) -> bool {
        self.in_window[i]
    }

    /// The value at this frame of the state formula registered as `handle` by [`Evaluator::add_state`]
    /// (false for an unknown handle). It reads the atom bits the evaluator computed for this frame, so
    /// atoms shared with the laws or with other state formulas are evaluated once.
    #[inline]
    pub fn state(&self, handle: StateHandle) -> bool {
        self.states
            .get(handle.0)
            .is_some_and(|f| f.eval(self.words))
    }

    /// The value at this frame of the atom [`Evaluator::state_atom`] named (false for an unknown one):
    /// the same bit [`Verdicts::state`] reads for a single-atom formula, without looking the formula up.
    #[inline]
    pub fn atom(&self, atom: AtomIndex) -> bool {
        atoms::bit(self.words, atom.0)
    }

    /// The state bits `gather` was built for, at this frame: bit `b` is its atom's value (flipped when
    /// negated), as [`Verdicts::atom`] reads it.
    #[inline]
    pub fn gather(&self, gather: &AtomGather) -> u64 {
        gather.gather(self.words)
    }

    /// The age, in frames, of the oldest pending obligation of the law registered as `handle` by
    /// [`Evaluator::add_obligation`] (0 on the frame it arose), or `None` when none is pending (or for an
    /// unknown handle). An obligation of `A -> F[a,b] B` arises where A holds and is pending while its
    /// deadline is still ahead and B has not met it.
    #[inline]
    pub fn pending_frames(&self, handle: ObligationHandle) -> Option<u64> {
        self.pending_ages
            .get(handle.0 as usize)
            .and_then(|&age| u64::try_from(age).ok())
    }

    /// Number of laws.
    pub fn len(&self) -> usize {
        self.violated.len()
    }

    /// True when there are no laws.
    pub fn is_empty(&self) -> bool {
        self.violated.is_empty()
    }
}

/// A state formula registered with [`Evaluator::add_state`], read back with [`Verdicts::state`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StateHandle(usize);

/// An atom of the evaluator's table, as [`Evaluator::state_atom`] names it, read back with
/// [`Verdicts::atom`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AtomIndex(usize);

/// A law's obligation memory registered with [`Evaluator::add_obligation`], read back with
/// [`Verdicts::pending_frames`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ObligationHandle(u32);

/// Evaluates every law of a set, one frame at a time.
#[derive(Debug, Clone)]
pub struct Evaluator {
    atoms: AtomTable,
    /// Caller-registered state formulas over the same atom table.
    states: Vec<StateFn>,
    /// Caller-registered obligation memories over the same atom table, and their current ages.
    obligations: Vec<ObligationTracker>,
    pending_ages: Vec<i64>,
    /// Frame period, s (for the bounds of obligations added later).
    period_s: f64,
    /// Window-buffer bytes compiled so far, laws and obligation memories (bounded like a law set's).
    window_bytes: usize,
    laws: Vec<LawState>,
    violated: Vec<bool>,
    in_window: Vec<bool>,
    window_frames: i64,
    /// Index of the next frame.
    k: i64,
    stats: EvalStats,
}

impl Evaluator {
    /// Compiles every law of `laws` for the period and window of `cfg`.
    pub fn new(laws: &LawSet, cfg: &EvalConfig) -> Result<Evaluator, EvalError> {
        if !(cfg.frame_period_s.is_finite() && cfg.frame_period_s > 0.0) {
            return Err(EvalError::Config("frame_period_s must be positive"));
        }
        if cfg.window_frames == 0 {
            return Err(EvalError::Config("window_frames must be at least 1"));
        }
        let mut atoms = AtomTable::default();
        let mut states = Vec::with_capacity(laws.laws().len());
        let mut window_bytes = 0;
        for law in laws.laws() {
            let mut compiler = Compiler {
                period_s: cfg.frame_period_s,
                atoms: &mut atoms,
                law: law.name(),
                window_bytes: &mut window_bytes,
            };
            let body = compiler.compile(law.body())?;
            let relevance = match guard::guard(law.body()) {
                Some(g) if cfg.relevance => Some(Relevance {
                    guard: compiler.compile(&g)?,
                    n_false_run: 0,
                    skipping: false,
                }),
                _ => None,
            };
            states.push(LawState {
                body,
                relevance,
                suppress_before: 0,
                last_violation: i64::MIN / 4,
            });
        }
        let n = states.len();
        Ok(Evaluator {
            atoms,
            states: Vec::new(),
            obligations: Vec::new(),
            pending_ages: Vec::new(),
            period_s: cfg.frame_period_s,
            window_bytes,
            laws: states,
            violated: vec![false; n],
            in_window: vec![false; n],
            window_frames: i64::try_from(cfg.window_frames)
                .unwrap_or(i64::MAX / 4)
                .min(i64::MAX / 4),
            k: 0,
            stats: EvalStats::default(),
        })
    }

    /// Consumes the next frame's signals and returns every law's verdicts at this frame.
    pub fn step(&mut self, s: &Signals) -> Verdicts<'_> {
        let k = self.k;
        self.atoms.eval_all(s);
        let words = self.atoms.words();
        // Zipped rather than indexed: the three vectors have one entry per law, and iterating them together
        // leaves no bounds check in the loop.
        for ((law, violated_out), in_window_out) in self
            .laws
            .iter_mut()
            .zip(self.violated.iter_mut())
            .zip(self.in_window.iter_mut())
        {
            let mut skip = false;
            if let Some(rel) = &mut law.relevance {
                if rel.guard.step(k, words) {
                    rel.n_false_run = 0;
                    if rel.skipping {
                        rel.skipping = false;
                        law.suppress_before = k;
                    }
                } else {
                    rel.n_false_run += 1;
                    if rel.n_false_run > law.body.horizon() {
                        rel.skipping = true;
                    }
                }
                skip = rel.skipping;
            }
            let violated = if skip {
                self.stats.n_law_skips += 1;
                false
            } else {
                self.stats.n_law_steps += 1;
                let holds = law.body.step(k, words);
                let pos = k - law.body.horizon();
                pos >= 0 && pos >= law.suppress_before && !holds
            };
            if violated {
                law.last_violation = k;
            }
            *violated_out = violated;
            *in_window_out = law.last_violation > k - self.window_frames;
        }
        for (tracker, age) in self
            .obligations
            .iter_mut()
            .zip(self.pending_ages.iter_mut())
        {
            *age = tracker.step(k, words);
        }
        self.k += 1;
        self.stats.n_frames += 1;
        Verdicts {
            violated: &self.violated,
            in_window: &self.in_window,
            words: self.atoms.words(),
            states: &self.states,
            pending_ages: &self.pending_ages,
        }
    }

    /// Registers the obligation memory of `law` (see [`Verdicts::pending_frames`]): its top-level
    /// `A -> F[a,b] B` conjuncts are tracked each frame, over the evaluator's atom table, in amortised O(1).
    /// The law need not be one of the evaluated set.
    ///
    /// # Errors
    /// [`EvalError::NoObligation`] when the law has no such conjunct; [`EvalError::BoundNotMultiple`] when
    /// a bound is not a whole number of frames; [`EvalError::TooLarge`] when its window would take the
    /// evaluator over its memory budget.
    pub fn add_obligation(&mut self, law: &Law) -> Result<ObligationHandle, EvalError> {
        let handle = u32::try_from(self.obligations.len())
            .map_err(|_| EvalError::Config("too many obligation memories"))?;
        let mut compiler = Compiler {
            period_s: self.period_s,
            atoms: &mut self.atoms,
            law: law.name(),
            window_bytes: &mut self.window_bytes,
        };
        let tracker = ObligationTracker::new(law.name(), law.body(), &mut compiler)?;
        self.obligations.push(tracker);
        self.pending_ages.push(-1);
        Ok(ObligationHandle(handle))
    }

    /// Registers a state formula (e.g. a monitor predicate or a law's antecedent) to be read each frame
    /// with [`Verdicts::state`]. Its atoms join the evaluator's atom table, which evaluates every distinct
    /// atom once per frame, and the formula is compiled to a truth table over their bits.
    ///
    /// # Errors
    /// [`EvalError::NotState`] when `f` has a temporal operator.
    pub fn add_state(&mut self, f: &Formula) -> Result<StateHandle, EvalError> {
        let compiled =
            StateFn::new(f, &mut self.atoms).ok_or_else(|| EvalError::NotState(f.to_string()))?;
        self.states.push(compiled);
        Ok(StateHandle(self.states.len() - 1))
    }

    /// When the state formula registered as `handle` is a single atom (possibly negated), that atom's
    /// index for [`Verdicts::atom`] and whether it is negated: a caller reading many such formulas per
    /// frame can read the atom bits directly. `None` for any other formula or an unknown handle.
    pub fn state_atom(&self, handle: StateHandle) -> Option<(AtomIndex, bool)> {
        match self.states.get(handle.0)? {
            StateFn::Bit { atom, negated } => Some((AtomIndex(*atom), *negated)),
            _ => None,
        }
    }

    /// Every signal some atom of the evaluator (laws and registered state formulas) reads: pass it to
    /// [`Signals::from_frame_needed`] to skip computing the others.
    pub fn needed_signals(&self) -> SignalSet {
        let mut set = SignalSet::EMPTY;
        for atom in self.atoms.atoms() {
            set.extend(atom.signals());
        }
        set
    }

    /// Forgets every frame seen (a new run starts); the work counters are kept.
    pub fn reset(&mut self) {
        self.k = 0;
        for law in &mut self.laws {
            law.body.reset();
            law.suppress_before = 0;
            law.last_violation = i64::MIN / 4;
            if let Some(rel) = &mut law.relevance {
                rel.guard.reset();
                rel.n_false_run = 0;
                rel.skipping = false;
            }
        }
        self.violated.fill(false);
        self.in_window.fill(false);
        for tracker in &mut self.obligations {
            tracker.reset();
        }
        self.pending_ages.fill(-1);
    }

    /// Work counters since construction.
    pub fn stats(&self) -> EvalStats {
        self.stats
    }

    /// Each law's horizon, frames (its verdict for position i is given at frame i + horizon).
    pub fn horizon(&self, law: usize) -> Option<i64> {
        self.laws.get(law).map(|l| l.body.horizon())
    }

    /// Every distinct atom of the set, in the order the evaluator interned them.
    pub fn atoms(&self) -> &[crate::lang::atom::Atom] {
        self.atoms.atoms()
    }

    /// True when law `law` has a relevance guard.
    pub fn has_guard(&self, law: usize) -> bool {
        self.laws.get(law).is_some_and(|l| l.relevance.is_some())
    }
}
