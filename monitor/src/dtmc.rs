//! The learned discrete-time Markov chain as a compressed sparse row (CSR) matrix.
//!
//! A [`Dtmc`] is row-stochastic by construction: every row is non-empty (absorbing states carry an explicit
//! self-loop, so there are no deadlocks), column indices within a row are strictly increasing and in range,
//! every probability lies in (0, 1] and each row sums to 1 within [`ROW_SUM_TOLERANCE`]. The fields are
//! private; [`Dtmc::try_new`] is the only way in, and deserialisation goes through the same check.

use serde::{Deserialize, Serialize};

use crate::error::StructureError;
use crate::StateId;

#[cfg(test)]
mod tests;

/// How far a row sum may stray from 1 (rounding of normalised counts stays far below this).
pub const ROW_SUM_TOLERANCE: f64 = 1e-9;

/// A row-stochastic sparse transition matrix over states `0..n_states`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "DtmcParts")]
pub struct Dtmc {
    /// Number of states; rows and columns are `0..n_states`.
    n_states: usize,
    /// `row_ptr[s]..row_ptr[s + 1]` are the entries of row `s`; length `n_states + 1`.
    row_ptr: Vec<usize>,
    /// Successor state of each entry.
    cols: Vec<StateId>,
    /// Transition probability of each entry.
    probs: Vec<f64>,
}

/// The unchecked shape of a [`Dtmc`], as it comes off the wire.
#[derive(Deserialize)]
struct DtmcParts {
    n_states: usize,
    row_ptr: Vec<usize>,
    cols: Vec<StateId>,
    probs: Vec<f64>,
}

impl TryFrom<DtmcParts> for Dtmc {
    type Error = StructureError;
    fn try_from(p: DtmcParts) -> Result<Self, Self::Error> {
        Dtmc::try_new(p.n_states, p.row_ptr, p.cols, p.probs)
    }
}

impl Dtmc {
    /// Builds a chain from CSR arrays, checking every invariant listed in the module docs.
    pub fn try_new(
        n_states: usize,
        row_ptr: Vec<usize>,
        cols: Vec<StateId>,
        probs: Vec<f64>,
    ) -> Result<Dtmc, StructureError> {
        if n_states > StateId::MAX as usize {
            return Err(StructureError::Invalid(format!(
                "{n_states} states exceed the u32 state-id range"
            )));
        }
        if row_ptr.len() != n_states + 1 {
            return Err(StructureError::SizeMismatch {
                what: "row_ptr",
                expected: n_states + 1,
                found: row_ptr.len(),
            });
        }
        if cols.len() != probs.len() {
            return Err(StructureError::SizeMismatch {
                what: "probs",
                expected: cols.len(),
                found: probs.len(),
            });
        }
        if row_ptr.first() != Some(&0) || row_ptr.last() != Some(&cols.len()) {
            return Err(StructureError::Invalid(
                "row_ptr must start at 0 and end at the number of entries".into(),
            ));
        }
        for row in 0..n_states {
            let (start, end) = (row_ptr[row], row_ptr[row + 1]);
            if end > cols.len() {
                return Err(StructureError::OutOfRange {
                    what: "row_ptr",
                    index: end as u64,
                    bound: cols.len() as u64 + 1,
                });
            }
            if end <= start {
                // Decreasing pointers are unsorted; equal pointers are an empty row (a deadlock).
                return Err(if end < start {
                    StructureError::Unsorted {
                        what: "row_ptr",
                        row,
                    }
                } else {
                    StructureError::Invalid(format!("row {row} is empty (deadlock state)"))
                });
            }
            let mut sum = 0.0;
            let mut prev: Option<StateId> = None;
            for k in start..end {
                let col = cols[k];
                if col as usize >= n_states {
                    return Err(StructureError::OutOfRange {
                        what: "cols",
                        index: u64::from(col),
                        bound: n_states as u64,
                    });
                }
                if prev.is_some_and(|p| p >= col) {
                    return Err(StructureError::Unsorted { what: "cols", row });
                }
                prev = Some(col);
                let p = probs[k];
                if !(p.is_finite() && p > 0.0 && p <= 1.0) {
                    return Err(StructureError::BadProbability {
                        what: "probs",
                        state: row,
                        value: p,
                    });
                }
                sum += p;
            }
            if (sum - 1.0).abs() > ROW_SUM_TOLERANCE {
                return Err(StructureError::RowSum { row, sum });
            }
        }
        Ok(Dtmc {
            n_states,
            row_ptr,
            cols,
            probs,
        })
    }

    /// Number of states.
    pub fn n_states(&self) -> usize {
        self.n_states
    }

    /// Number of non-zero transitions.
    pub fn n_transitions(&self) -> usize {
        self.cols.len()
    }

    /// The successors of `state` and their probabilities, in increasing successor order.
    ///
    /// # Panics
    /// If `state >= n_states()` (a caller bug: state ids come from this chain's own state space).
    pub fn row(&self, state: StateId) -> (&[StateId], &[f64]) {
        let s = state as usize;
        let range = self.row_ptr[s]..self.row_ptr[s + 1];
        (&self.cols[range.clone()], &self.probs[range])
    }

    /// The probability of the transition `from -> to` (0 when absent).
    pub fn prob(&self, from: StateId, to: StateId) -> f64 {
        let (cols, probs) = self.row(from);
        cols.binary_search(&to).map_or(0.0, |k| probs[k])
    }

    /// The raw CSR arrays `(row_ptr, cols, probs)`, for solvers that walk the whole matrix.
    pub fn csr(&self) -> (&[usize], &[StateId], &[f64]) {
        (&self.row_ptr, &self.cols, &self.probs)
    }

    /// Builds the transposed matrix in CSR form: `(ptr, preds, probs)` where `ptr[t]..ptr[t + 1]` index the
    /// predecessors `s` of `t` with `probs` holding `P(s, t)`.
    pub fn transpose(&self) -> (Vec<usize>, Vec<StateId>, Vec<f64>) {
        let n = self.n_states;
        let mut counts = vec![0usize; n + 1];
        for &c in &self.cols {
            counts[c as usize + 1] += 1;
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut preds = vec![0 as StateId; self.cols.len()];
        let mut probs = vec![0.0; self.cols.len()];
        for s in 0..n {
            for k in self.row_ptr[s]..self.row_ptr[s + 1] {
                let c = self.cols[k] as usize;
                preds[fill[c]] = s as StateId;
                probs[fill[c]] = self.probs[k];
                fill[c] += 1;
            }
        }
        (counts, preds, probs)
    }
}
