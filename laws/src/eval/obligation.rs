//! Obligation memory (Pro²Guard's clock variables): how long a law's future-time obligation has been
//! pending.
//!
//! A law body whose top-level conjuncts include `A -> F[a,b] B` (state formulas A and B, `0 ≤ a ≤ b`)
//! creates an obligation at every position i where A holds: B must hold somewhere in `[i+a, i+b]`. At frame
//! k the obligation of position i is **pending** when its deadline is still ahead (`i + b > k`) and it has
//! not been met (no B in `[i+a, k]`); it is decided — met, or violated at frame `i + b` — later. The law's
//! verdicts say nothing until then, which is why a monitor cannot see a law38-type violation coming from
//! them; the age `k − i` of the oldest pending obligation ("pending for more than x s") can.
//!
//! Per conjunct the tracker keeps the fused operator's state (a ring of A's bits over the last `b + 1`
//! positions and the latest position where B held, [`ImpliesEventually`]) and a scan pointer: the pending
//! positions at frame k are the A-positions after `L = max(k − b, last_B − a)`, and as L never decreases
//! the pointer only moves forward (past positions where A was false), so a step is amortised O(1) and does
//! not allocate. The tracker reads the same atom bits as the laws and is stepped every frame, whatever
//! relevance skipping does to the law's body.

use super::program::{Compiler, ImpliesEventually};
use super::EvalError;
use crate::lang::formula::Formula;

/// One `A -> F[lo,hi] B` conjunct.
#[derive(Debug, Clone)]
struct Conjunct {
    op: ImpliesEventually,
    /// No position before this can be pending (the scan pointer).
    scan: i64,
}

impl Conjunct {
    /// Steps to frame `k`; returns the oldest pending position, if any.
    #[inline]
    fn step(&mut self, k: i64, words: &[u64]) -> Option<i64> {
        let op = &mut self.op;
        op.record(k, words);
        // Pending: A-positions i with i > k − hi (deadline ahead) and i > last_b − lo (not met yet).
        let lower = (k - op.hi).max(op.last_b - op.lo) + 1;
        self.scan = self.scan.max(lower);
        while self.scan <= k && !op.a_ring.get(self.scan) {
            self.scan += 1;
        }
        (self.scan <= k).then_some(self.scan)
    }

    fn reset(&mut self) {
        self.op.reset();
        self.scan = 0;
    }
}

/// The obligation memory of one law: its top-level `A -> F[a,b] B` conjuncts.
#[derive(Debug, Clone)]
pub struct ObligationTracker {
    conjuncts: Vec<Conjunct>,
}

/// The top-level conjuncts of `body` (through `&`) in source order.
fn conjuncts<'f>(body: &'f Formula, out: &mut Vec<&'f Formula>) {
    match body {
        Formula::And(a, b) => {
            conjuncts(a, out);
            conjuncts(b, out);
        }
        other => out.push(other),
    }
}

impl ObligationTracker {
    /// The tracker of law `law`'s `body`, compiled by `compiler` (its frame period, atom table and window
    /// budget).
    ///
    /// # Errors
    /// [`EvalError::NoObligation`] when no top-level conjunct of `body` is `A -> F[a,b] B` with state
    /// formulas A, B and `0 ≤ a ≤ b`; the compiler's errors for a bound that is not a whole number of
    /// frames or a window over the budget.
    pub fn new(
        law: &str,
        body: &Formula,
        compiler: &mut Compiler<'_>,
    ) -> Result<ObligationTracker, EvalError> {
        let mut parts = Vec::new();
        conjuncts(body, &mut parts);
        let mut out = Vec::new();
        for part in parts {
            if let Some(op) = compiler.implies_eventually(part)? {
                out.push(Conjunct { op, scan: 0 });
            }
        }
        if out.is_empty() {
            return Err(EvalError::NoObligation(law.to_string()));
        }
        Ok(ObligationTracker { conjuncts: out })
    }

    /// Steps to frame `k`; returns the age in frames of the law's oldest pending obligation (`k − i`), or
    /// −1 when none is pending.
    #[inline]
    pub fn step(&mut self, k: i64, words: &[u64]) -> i64 {
        let mut oldest = i64::MAX;
        for c in &mut self.conjuncts {
            if let Some(i) = c.step(k, words) {
                oldest = oldest.min(i);
            }
        }
        if oldest == i64::MAX {
            -1
        } else {
            k - oldest
        }
    }

    /// Forgets the run.
    pub fn reset(&mut self) {
        for c in &mut self.conjuncts {
            c.reset();
        }
    }
}
