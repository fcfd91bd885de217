//! Incremental sliding-window evaluation of a [`LawSet`] over a stream of [`Signals`].
//!
//! Semantics (discrete time, one position per frame at a fixed period): a law's body is split into its
//! *parts*, its conjuncts ([`conjuncts`]: `a & b`, and `A -> (B & C)` as `(A -> B) & (A -> C)`, recursively),
//! conjuncts of equal horizon joined again. A part `phi` has a finite horizon H frames: `phi(i)` is
//! decided at frame `i + H`. At frame k the verdict "violated now" is true iff some part `phi` is false at
//! `k - H` (its own H), i.e. a frame at which a violation becomes certain. So a conjunct that is decided
//! sooner than the rest of the body is reported as soon as it is (`law51 = law51_sub3 & … & law51_sub7`
//! reports a violation of `law51_sub3`, horizon 0, on its frame, not 3 s later with `law51_sub4`'s
//! horizon, and a run that ends within those 3 s does not lose it); within a part nothing is reported
//! before its horizon, and obligations still open at the end of a log are never reported. "In window" is
//! true iff a violation became certain at some frame in `[k - W + 1, k]` (W =
//! [`EvalConfig::window_frames`]).
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
    #[error("law '{law}' ({file}, line {line}, column {col}): bound {bound_s} s is not a multiple of the frame period {period_s:?} s")]
    BoundNotMultiple {
        /// Law name.
        law: String,
        /// The file the law is defined in.
        file: String,
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
        "law '{law}' ({file}, line {line}, column {col}): unbounded temporal operator inside the law body"
    )]
    Unbounded {
        /// Law name.
        law: String,
        /// The file the law is defined in.
        file: String,
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

/// One part of a law's body (see the module's semantics), compiled.
#[derive(Debug, Clone)]
struct PartState {
    /// The part's formula (its conjuncts of one horizon, joined by `&`).
    formula: Formula,
    body: Program,
    relevance: Option<Relevance>,
    /// Verdicts for positions before this are forced to "holds" (set when resuming after a skip).
    suppress_before: i64,
}

impl PartState {
    /// Steps the part at frame `k` and says whether its value at `k - horizon` is decided false.
    #[inline]
    fn step(&mut self, k: i64, words: &[u64], stats: &mut EvalStats) -> bool {
        let mut skip = false;
        if let Some(rel) = &mut self.relevance {
            if rel.guard.step(k, words) {
                rel.n_false_run = 0;
                if rel.skipping {
                    rel.skipping = false;
                    self.suppress_before = k;
                }
            } else {
                rel.n_false_run += 1;
                if rel.n_false_run > self.body.horizon() {
                    rel.skipping = true;
                }
            }
            skip = rel.skipping;
        }
        if skip {
            stats.n_law_skips += 1;
            return false;
        }
        stats.n_law_steps += 1;
        let holds = self.body.step(k, words);
        let pos = k - self.body.horizon();
        pos >= 0 && pos >= self.suppress_before && !holds
    }

    fn reset(&mut self) {
        self.body.reset();
        self.suppress_before = 0;
        if let Some(rel) = &mut self.relevance {
            rel.guard.reset();
            rel.n_false_run = 0;
            rel.skipping = false;
        }
    }
}

#[derive(Debug, Clone)]
struct LawState {
    /// The body's parts, by increasing horizon.
    parts: Vec<PartState>,
    last_violation: i64,
}

/// The conjuncts of a law body, in order: `a & b` gives those of `a` then of `b`, and `A -> (B & C)`
/// those of `A -> B` then of `A -> C` (the same truth at every position); any other formula is one.
/// Copying the antecedents is bounded: when the conjuncts would hold more than
/// [`crate::lang::limits::MAX_NODES`] nodes (and more than the body), implications are kept whole and
/// only `&` is split.
pub fn conjuncts(body: &Formula) -> Vec<Formula> {
    /// Adds `f`'s conjuncts to `out`, spending `budget` nodes on them; `None` once it is spent.
    fn walk(
        f: &Formula,
        distribute: bool,
        budget: &mut usize,
        out: &mut Vec<Formula>,
    ) -> Option<()> {
        match f {
            Formula::And(a, b) => {
                walk(a, distribute, budget, out)?;
                walk(b, distribute, budget, out)
            }
            Formula::Implies(a, rhs) if distribute && matches!(**rhs, Formula::And(..)) => {
                let mut consequents = Vec::new();
                walk(rhs, distribute, budget, &mut consequents)?;
                for c in consequents {
                    walk(
                        &Formula::Implies(a.clone(), Box::new(c)),
                        distribute,
                        budget,
                        out,
                    )?;
                }
                Some(())
            }
            other => {
                *budget = budget.checked_sub(nodes(other))?;
                out.push(other.clone());
                Some(())
            }
        }
    }
    let allowed = nodes(body).max(crate::lang::limits::MAX_NODES);
    let mut out = Vec::new();
    if walk(body, true, &mut allowed.clone(), &mut out).is_some() {
        return out;
    }
    out.clear();
    walk(body, false, &mut usize::MAX.clone(), &mut out);
    out
}

/// The number of nodes of a formula.
fn nodes(f: &Formula) -> usize {
    1 + match f {
        Formula::Const(_) | Formula::Atom(_) => 0,
        Formula::Not(p) | Formula::Next(p) | Formula::Eventually(_, p) | Formula::Always(_, p) => {
            nodes(p)
        }
        Formula::And(a, b)
        | Formula::Or(a, b)
        | Formula::Implies(a, b)
        | Formula::Until(_, a, b) => nodes(a) + nodes(b),
    }
}

/// A law body's parts: its [`conjuncts`] grouped by horizon (by increasing horizon, each group's
/// conjuncts in their order joined by `&`), so that a law whose conjuncts share one horizon is one part,
/// compiled as before.
fn parts_of(law: &Law, period_s: f64) -> Result<Vec<Formula>, EvalError> {
    let body = law.body();
    let conjuncts = conjuncts(body);
    if conjuncts.len() == 1 {
        return Ok(conjuncts);
    }
    // Horizons from a compilation into scratch tables (nothing of it is kept).
    let mut scratch_atoms = AtomTable::default();
    let mut scratch_bytes = 0;
    let mut groups: Vec<(i64, Vec<Formula>)> = Vec::new();
    for c in conjuncts {
        let horizon = Compiler {
            period_s,
            atoms: &mut scratch_atoms,
            law: law.name(),
            file: law.file(),
            window_bytes: &mut scratch_bytes,
        }
        .compile(&c)?
        .horizon();
        match groups.iter_mut().find(|(h, _)| *h == horizon) {
            Some((_, members)) => members.push(c),
            None => groups.push((horizon, vec![c])),
        }
    }
    groups.sort_by_key(|(h, _)| *h);
    Ok(groups
        .into_iter()
        .map(|(_, members)| {
            members
                .into_iter()
                .reduce(|a, b| Formula::And(Box::new(a), Box::new(b)))
                .expect("a group has a member")
        })
        .collect())
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
            let mut parts = Vec::new();
            for formula in parts_of(law, cfg.frame_period_s)? {
                let mut compiler = Compiler {
                    period_s: cfg.frame_period_s,
                    atoms: &mut atoms,
                    law: law.name(),
                    file: law.file(),
                    window_bytes: &mut window_bytes,
                };
                let body = compiler.compile(&formula)?;
                let relevance = match guard::guard(&formula) {
                    Some(g) if cfg.relevance => Some(Relevance {
                        guard: compiler.compile(&g)?,
                        n_false_run: 0,
                        skipping: false,
                    }),
                    _ => None,
                };
                parts.push(PartState {
                    formula,
                    body,
                    relevance,
                    suppress_before: 0,
                });
            }
            states.push(LawState {
                parts,
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
            let mut violated = false;
            // Every part is stepped (its operators must see every frame), not only until one fails.
            for part in &mut law.parts {
                violated |= part.step(k, words, &mut self.stats);
            }
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
            file: law.file(),
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
            for part in &mut law.parts {
                part.reset();
            }
            law.last_violation = i64::MIN / 4;
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

    /// A law's longest horizon, frames: a violation at position i is reported at frame i + horizon at
    /// the latest (sooner when a part of shorter horizon is violated there; [`Evaluator::parts`]).
    pub fn horizon(&self, law: usize) -> Option<i64> {
        self.laws
            .get(law)
            .map(|l| l.parts.iter().map(|p| p.body.horizon()).max().unwrap_or(0))
    }

    /// A law's parts, by increasing horizon, each with its horizon in frames: the law is violated at frame
    /// k iff some part is false at position `k - horizon` (see the module's semantics).
    pub fn parts(&self, law: usize) -> Option<Vec<(&Formula, i64)>> {
        self.laws.get(law).map(|l| {
            l.parts
                .iter()
                .map(|p| (&p.formula, p.body.horizon()))
                .collect()
        })
    }

    /// Every distinct atom of the set, in the order the evaluator interned them.
    pub fn atoms(&self) -> &[crate::lang::atom::Atom] {
        self.atoms.atoms()
    }

    /// True when every part of law `law` has a relevance guard.
    pub fn has_guard(&self, law: usize) -> bool {
        self.laws
            .get(law)
            .is_some_and(|l| l.parts.iter().all(|p| p.relevance.is_some()))
    }
}
