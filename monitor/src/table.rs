//! The cached reachability table of one property: everything the runtime looks up, in flat arrays.
//!
//! Per state: P(F unsafe), P(F≤k unsafe) for each horizon, the expected number of steps to unsafe given it
//! is reached, and the next hop of the most likely path to unsafe. All lookups are O(1) array reads. In
//! memory the bounded risks are state-major (`within[s·H + h]`), so that a session reads one state's
//! horizons from one cache line; in model files they stay horizon-major (`within[h·n + s]`, the layout the
//! solver produces), so the format does not depend on this choice. Construction and deserialisation share [`RiskTable::try_new`], which
//! checks lengths, that probabilities lie in [0, 1], that bounded probabilities grow with the horizon and
//! never exceed the unbounded one, and that path pointers are in range.

use serde::{Deserialize, Serialize};

use crate::dtmc::Dtmc;
use crate::error::StructureError;
use crate::reach::{self, path::NO_PATH};
use crate::share::FrameShare;
use crate::StateId;

/// Slack allowed when checking `within ≤ eventually` and monotonicity (solver rounding).
const ORDER_TOLERANCE: f64 = 1e-9;

/// The longest bounded horizon a table is solved for, in steps (about 2.8 hours at 10 Hz, where a
/// warning horizon is seconds): each step of the solve is one product with the transition matrix, unless
/// the risks stop changing first.
pub const MAX_HORIZON_STEPS: u32 = 100_000;

/// Precomputed risk of every state.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "TableParts")]
pub struct RiskTable {
    /// Number of states.
    n_states: usize,
    /// Horizons in steps, strictly increasing.
    horizons_steps: Vec<u32>,
    /// P(F unsafe) per state.
    eventually: Vec<f64>,
    /// P(F≤k unsafe), state-major: `within[s·H + h]` for `H` horizons.
    within: Vec<f64>,
    /// E[steps to unsafe | unsafe reached]; infinite where unreachable.
    expected_steps: Vec<f64>,
    /// Next hop of the most likely path to unsafe, or `NO_PATH`.
    path_next: Vec<StateId>,
}

/// A table as model files carry it (bounded risks horizon-major).
#[derive(Deserialize)]
struct TableParts {
    n_states: usize,
    horizons_steps: Vec<u32>,
    eventually: Vec<f64>,
    within: Vec<f64>,
    expected_steps: Vec<f64>,
    path_next: Vec<StateId>,
}

impl TryFrom<TableParts> for RiskTable {
    type Error = StructureError;
    fn try_from(p: TableParts) -> Result<Self, Self::Error> {
        RiskTable::try_new(
            p.n_states,
            p.horizons_steps,
            p.eventually,
            p.within,
            p.expected_steps,
            p.path_next,
        )
    }
}

/// [`TableParts`] borrowed from a table for writing, field for field.
#[derive(Serialize)]
struct TablePartsRef<'a> {
    n_states: usize,
    horizons_steps: &'a [u32],
    eventually: &'a [f64],
    within: Vec<f64>,
    expected_steps: &'a [f64],
    path_next: &'a [StateId],
}

impl Serialize for RiskTable {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let h = self.horizons_steps.len();
        // Back to the file layout, horizon-major.
        let within = (0..h)
            .flat_map(|k| self.within.iter().skip(k).step_by(h.max(1)).copied())
            .collect();
        TablePartsRef {
            n_states: self.n_states,
            horizons_steps: &self.horizons_steps,
            eventually: &self.eventually,
            within,
            expected_steps: &self.expected_steps,
            path_next: &self.path_next,
        }
        .serialize(serializer)
    }
}

fn check_prob(what: &'static str, v: &[f64], n: usize) -> Result<(), StructureError> {
    match v
        .iter()
        .position(|p| !(0.0..=1.0 + ORDER_TOLERANCE).contains(p))
    {
        Some(i) => Err(StructureError::BadProbability {
            what,
            state: i % n.max(1),
            value: v[i],
        }),
        None => Ok(()),
    }
}

impl RiskTable {
    /// Assembles a table from its arrays (`within` horizon-major, `within[h·n + s]`), checking every
    /// invariant listed in the module docs.
    pub fn try_new(
        n_states: usize,
        horizons_steps: Vec<u32>,
        eventually: Vec<f64>,
        within: Vec<f64>,
        expected_steps: Vec<f64>,
        path_next: Vec<StateId>,
    ) -> Result<RiskTable, StructureError> {
        let n = n_states;
        for (what, expected, found) in [
            ("eventually", n, eventually.len()),
            ("within", n * horizons_steps.len(), within.len()),
            ("expected_steps", n, expected_steps.len()),
            ("path_next", n, path_next.len()),
        ] {
            if expected != found {
                return Err(StructureError::SizeMismatch {
                    what,
                    expected,
                    found,
                });
            }
        }
        if horizons_steps.windows(2).any(|w| w[0] >= w[1]) {
            return Err(StructureError::Invalid(
                "horizons must be strictly increasing".into(),
            ));
        }
        check_prob("eventually", &eventually, n)?;
        check_prob("within", &within, n)?;
        for s in 0..n {
            let mut prev = 0.0;
            for h in 0..horizons_steps.len() {
                let w = within[h * n + s];
                if w + ORDER_TOLERANCE < prev || w > eventually[s] + ORDER_TOLERANCE {
                    return Err(StructureError::Invalid(format!(
                        "state {s}: bounded risk {w} out of order (previous {prev}, unbounded {})",
                        eventually[s]
                    )));
                }
                prev = w;
            }
        }
        if let Some(s) = expected_steps.iter().position(|e| e.is_nan() || *e < 0.0) {
            return Err(StructureError::Invalid(format!(
                "state {s}: expected steps {} is not a non-negative number",
                expected_steps[s]
            )));
        }
        if let Some(&bad) = path_next.iter().find(|&&p| p != NO_PATH && p as usize >= n) {
            return Err(StructureError::OutOfRange {
                what: "path_next",
                index: u64::from(bad),
                bound: n as u64,
            });
        }
        let h = horizons_steps.len();
        let within = (0..n)
            .flat_map(|s| within.iter().skip(s).step_by(n.max(1)).take(h).copied())
            .collect();
        Ok(RiskTable {
            n_states,
            horizons_steps,
            eventually,
            within,
            expected_steps,
            path_next,
        })
    }

    /// Solves everything for `dtmc` with target set `unsafe_states`.
    ///
    /// # Errors
    /// Mask of the wrong length, horizons not strictly increasing, or a horizon above
    /// [`MAX_HORIZON_STEPS`].
    pub fn compute(
        dtmc: &Dtmc,
        unsafe_states: &[bool],
        horizons_steps: &[u32],
    ) -> Result<RiskTable, StructureError> {
        let n = dtmc.n_states();
        if unsafe_states.len() != n {
            return Err(StructureError::SizeMismatch {
                what: "unsafe mask",
                expected: n,
                found: unsafe_states.len(),
            });
        }
        if let Some(&h) = horizons_steps.iter().find(|&&h| h > MAX_HORIZON_STEPS) {
            return Err(StructureError::Invalid(format!(
                "horizon of {h} steps is above the longest solved, {MAX_HORIZON_STEPS}"
            )));
        }
        // One graph decomposition shared by the unbounded and expected-steps solves.
        let analysis = reach::analyse(dtmc, unsafe_states, horizons_steps);
        let eventually = analysis.eventually;
        let within: Vec<f64> = analysis.within.into_iter().flatten().collect();
        let expected_steps = analysis.expected_steps;
        let path_next = analysis.most_likely.next;
        // Clamp solver rounding into [0, 1] before validation.
        let clamp =
            |v: Vec<f64>| -> Vec<f64> { v.into_iter().map(|p| p.clamp(0.0, 1.0)).collect() };
        RiskTable::try_new(
            n,
            horizons_steps.to_vec(),
            clamp(eventually),
            clamp(within),
            expected_steps,
            path_next,
        )
    }

    /// The table whose risks are `(1 − w) · this table's + w · share` in every state the share covers
    /// (`w` = [`FrameShare::weight`]), bounded risks likewise per horizon; expected steps and paths stay
    /// this table's. See [`crate::share`].
    ///
    /// # Errors
    /// A share over another number of states or other horizons.
    pub fn blended(&self, share: &FrameShare) -> Result<RiskTable, StructureError> {
        let n = self.n_states;
        if share.n_states() != n {
            return Err(StructureError::SizeMismatch {
                what: "frame share",
                expected: n,
                found: share.n_states(),
            });
        }
        if share.horizons_steps() != self.horizons_steps.as_slice() {
            return Err(StructureError::Invalid(
                "frame share horizons differ from the table's".into(),
            ));
        }
        let w = share.weight();
        let mix = |p: f64, x: Option<f64>| x.map_or(p, |x| ((1.0 - w) * p + w * x).clamp(0.0, 1.0));
        let eventually = (0..n)
            .map(|s| mix(self.eventually[s], share.eventually(s as StateId)))
            .collect();
        let h = self.horizons_steps.len();
        // Horizon-major, as `try_new` takes it.
        let within = (0..h)
            .flat_map(|k| (0..n).map(move |s| (k, s)))
            .map(|(k, s)| mix(self.within[s * h + k], share.within(k, s as StateId)))
            .collect();
        RiskTable::try_new(
            n,
            self.horizons_steps.clone(),
            eventually,
            within,
            self.expected_steps.clone(),
            self.path_next.clone(),
        )
    }

    /// Number of states.
    pub fn n_states(&self) -> usize {
        self.n_states
    }

    /// Horizons in steps.
    pub fn horizons_steps(&self) -> &[u32] {
        &self.horizons_steps
    }

    /// P(F unsafe) of every state.
    pub fn eventually_all(&self) -> &[f64] {
        &self.eventually
    }

    /// P(F unsafe) of `state`; `None` when out of range.
    #[inline]
    pub fn eventually(&self, state: StateId) -> Option<f64> {
        self.eventually.get(state as usize).copied()
    }

    /// P(F≤k unsafe) of `state` for the `h`-th horizon; `None` when either is out of range.
    #[inline]
    pub fn within(&self, h: usize, state: StateId) -> Option<f64> {
        if h >= self.horizons_steps.len() {
            return None;
        }
        self.within_row(state)?.get(h).copied()
    }

    /// P(F≤k unsafe) of `state` for every horizon, in horizon order; `None` when out of range.
    #[inline]
    pub fn within_row(&self, state: StateId) -> Option<&[f64]> {
        if state as usize >= self.n_states {
            return None;
        }
        let h = self.horizons_steps.len();
        let start = (state as usize).checked_mul(h)?;
        self.within.get(start..start.checked_add(h)?)
    }

    /// Expected steps to unsafe given it is reached (infinite when unreachable).
    pub fn expected_steps(&self, state: StateId) -> Option<f64> {
        self.expected_steps.get(state as usize).copied()
    }

    /// The most likely path from `state` to unsafe, inclusive; just `[state]` for unsafe states and empty
    /// when unsafe is unreachable.
    pub fn most_likely_path(&self, state: StateId) -> Vec<StateId> {
        match self.eventually(state) {
            Some(p) if p > 0.0 => reach::path::path_from(&self.path_next, state),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests;
