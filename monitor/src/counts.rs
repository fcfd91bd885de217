//! Transition counts: the source of truth of a learned model.
//!
//! Algorithm 1 of the paper counts consecutive-state pairs over all abstract traces, keeping only valid
//! transitions. [`Counts`] holds those integer counts sparsely; the matrix is derived from them (see
//! [`crate::estimate`]). Because counting is addition, learning from two sets of runs separately and calling
//! [`Counts::merge`] gives exactly the counts — hence exactly the model — learned from all runs at once.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::domain::Domain;
use crate::error::StructureError;
use crate::StateId;

#[cfg(test)]
mod tests;

/// Sparse transition counts over states `0..n_states`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "CountsParts", into = "CountsParts")]
pub struct Counts {
    /// Number of states of the domain the counts were taken in.
    n_states: usize,
    /// `(from << 32) | to` → number of observed valid transitions `from -> to`.
    pairs: HashMap<u64, u64>,
    /// Observed transitions that the domain declared invalid, and so did not count (a data-quality figure).
    n_invalid: u64,
    /// Number of runs observed.
    n_runs: u64,
    /// First state of each observed run → number of runs starting there (PRISM's `init` label).
    starts: HashMap<StateId, u64>,
}

/// Wire form of [`Counts`]: triplets sorted by `(from, to)`, so the encoding is deterministic.
#[derive(Serialize, Deserialize)]
struct CountsParts {
    n_states: usize,
    triplets: Vec<(StateId, StateId, u64)>,
    n_invalid: u64,
    n_runs: u64,
    starts: Vec<(StateId, u64)>,
}

impl TryFrom<CountsParts> for Counts {
    type Error = StructureError;
    fn try_from(p: CountsParts) -> Result<Self, Self::Error> {
        let mut pairs = HashMap::with_capacity(p.triplets.len());
        for (from, to, n) in p.triplets {
            for s in [from, to] {
                if s as usize >= p.n_states {
                    return Err(StructureError::OutOfRange {
                        what: "counts",
                        index: u64::from(s),
                        bound: p.n_states as u64,
                    });
                }
            }
            if n == 0 {
                return Err(StructureError::Invalid(format!(
                    "zero count stored for {from} -> {to}"
                )));
            }
            if pairs.insert(key(from, to), n).is_some() {
                return Err(StructureError::Invalid(format!(
                    "duplicate count for {from} -> {to}"
                )));
            }
        }
        if let Some(&(bad, _)) = p.starts.iter().find(|(s, _)| *s as usize >= p.n_states) {
            return Err(StructureError::OutOfRange {
                what: "run starts",
                index: u64::from(bad),
                bound: p.n_states as u64,
            });
        }
        Ok(Counts {
            n_states: p.n_states,
            pairs,
            n_invalid: p.n_invalid,
            n_runs: p.n_runs,
            starts: p.starts.into_iter().collect(),
        })
    }
}

impl From<Counts> for CountsParts {
    fn from(c: Counts) -> Self {
        CountsParts {
            n_states: c.n_states,
            triplets: c.triplets(),
            n_invalid: c.n_invalid,
            n_runs: c.n_runs,
            starts: c.initial_states(),
        }
    }
}

fn key(from: StateId, to: StateId) -> u64 {
    (u64::from(from) << 32) | u64::from(to)
}

impl Counts {
    /// Empty counts over `n_states` states.
    pub fn new(n_states: usize) -> Counts {
        Counts {
            n_states,
            pairs: HashMap::new(),
            n_invalid: 0,
            n_runs: 0,
            starts: HashMap::new(),
        }
    }

    /// Counts the transitions of one abstract trace (Algorithm 1, lines 4–11).
    ///
    /// Pairs the domain rejects (`can_reach` false, or an invalid state) are not counted but tallied in
    /// [`Counts::n_invalid`]. A trace of length 1 contributes no transitions but still counts as a run.
    ///
    /// # Errors
    /// A state id outside the domain — the trace was encoded against a different state space.
    pub fn observe_trace<D: Domain + ?Sized>(
        &mut self,
        domain: &D,
        trace: &[StateId],
    ) -> Result<(), StructureError> {
        if domain.n_states() != self.n_states {
            return Err(StructureError::SizeMismatch {
                what: "domain states",
                expected: self.n_states,
                found: domain.n_states(),
            });
        }
        if let Some(&bad) = trace.iter().find(|&&s| s as usize >= self.n_states) {
            return Err(StructureError::OutOfRange {
                what: "trace",
                index: u64::from(bad),
                bound: self.n_states as u64,
            });
        }
        for w in trace.windows(2) {
            let (from, to) = (w[0], w[1]);
            if domain.is_valid_state(from)
                && domain.is_valid_state(to)
                && domain.can_reach(from, to)
            {
                *self.pairs.entry(key(from, to)).or_insert(0) += 1;
            } else {
                self.n_invalid += 1;
            }
        }
        if let Some(&first) = trace.first() {
            *self.starts.entry(first).or_insert(0) += 1;
        }
        self.n_runs += 1;
        Ok(())
    }

    /// Adds `other`'s counts to these.
    ///
    /// # Errors
    /// The two were counted over state spaces of different sizes.
    pub fn merge(&mut self, other: &Counts) -> Result<(), StructureError> {
        if other.n_states != self.n_states {
            return Err(StructureError::SizeMismatch {
                what: "merged counts",
                expected: self.n_states,
                found: other.n_states,
            });
        }
        for (&k, &n) in &other.pairs {
            *self.pairs.entry(k).or_insert(0) += n;
        }
        for (&s, &n) in &other.starts {
            *self.starts.entry(s).or_insert(0) += n;
        }
        self.n_invalid += other.n_invalid;
        self.n_runs += other.n_runs;
        Ok(())
    }

    /// The counts over a coarser state space `0..n_states`: every state mapped by `map`, counts that map
    /// to one pair added up, a transition whose two ends map to one state becoming that state's
    /// self-loop. The run and invalid-transition tallies carry over.
    ///
    /// # Errors
    /// `map` leaves `0..n_states`.
    pub fn project(
        &self,
        n_states: usize,
        map: impl Fn(StateId) -> StateId,
    ) -> Result<Counts, StructureError> {
        let mapped = |s: StateId| {
            let m = map(s);
            if (m as usize) < n_states {
                Ok(m)
            } else {
                Err(StructureError::OutOfRange {
                    what: "projected counts",
                    index: u64::from(m),
                    bound: n_states as u64,
                })
            }
        };
        let mut pairs: HashMap<u64, u64> = HashMap::with_capacity(self.pairs.len());
        for (&k, &n) in &self.pairs {
            let (from, to) = ((k >> 32) as StateId, k as StateId);
            *pairs.entry(key(mapped(from)?, mapped(to)?)).or_insert(0) += n;
        }
        let mut starts: HashMap<StateId, u64> = HashMap::with_capacity(self.starts.len());
        for (&s, &n) in &self.starts {
            *starts.entry(mapped(s)?).or_insert(0) += n;
        }
        Ok(Counts {
            n_states,
            pairs,
            n_invalid: self.n_invalid,
            n_runs: self.n_runs,
            starts,
        })
    }

    /// Number of states.
    pub fn n_states(&self) -> usize {
        self.n_states
    }

    /// Count of `from -> to`.
    pub fn get(&self, from: StateId, to: StateId) -> u64 {
        self.pairs.get(&key(from, to)).copied().unwrap_or(0)
    }

    /// Observed transitions rejected as invalid.
    pub fn n_invalid(&self) -> u64 {
        self.n_invalid
    }

    /// Runs observed.
    pub fn n_runs(&self) -> u64 {
        self.n_runs
    }

    /// The states runs started in, with how many runs started there, sorted by state.
    pub fn initial_states(&self) -> Vec<(StateId, u64)> {
        let mut v: Vec<_> = self.starts.iter().map(|(&s, &n)| (s, n)).collect();
        v.sort_unstable();
        v
    }

    /// Total counted transitions.
    pub fn n_transitions(&self) -> u64 {
        self.pairs.values().sum()
    }

    /// All non-zero counts as `(from, to, n)`, sorted by `(from, to)`.
    pub fn triplets(&self) -> Vec<(StateId, StateId, u64)> {
        let mut v: Vec<_> = self
            .pairs
            .iter()
            .map(|(&k, &n)| ((k >> 32) as StateId, (k & 0xFFFF_FFFF) as StateId, n))
            .collect();
        v.sort_unstable();
        v
    }

    /// Per-state outgoing rows `(row_ptr, (to, n))` in CSR form, rows sorted by successor.
    pub fn rows(&self) -> (Vec<usize>, Vec<(StateId, u64)>) {
        let triplets = self.triplets();
        let mut row_ptr = vec![0usize; self.n_states + 1];
        for &(from, _, _) in &triplets {
            row_ptr[from as usize + 1] += 1;
        }
        for i in 0..self.n_states {
            row_ptr[i + 1] += row_ptr[i];
        }
        let entries = triplets.into_iter().map(|(_, to, n)| (to, n)).collect();
        (row_ptr, entries)
    }
}
