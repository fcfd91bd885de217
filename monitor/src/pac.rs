//! The PAC sample bound of the paper's Eq. 2 (after Sun et al.), per state, and its summary.
//!
//! For an (ε, δ)-PAC estimate of reachability over m learned states, each state p needs
//! `n_p ≥ (2/ε²)·ln(2/δ')·[1/4 − (d_p − 2ε/3)²]` outgoing observations, with `δ' = δ/m`.
//!
//! `d_p` is the distance from 1/2 of the observed transition frequency `n_pq/n_p` that is hardest to
//! estimate: the bound is needed for every successor q, and it is largest for the frequency closest to 1/2,
//! so we take the observed successor q minimising `|1/2 − n_pq/n_p|`. This reproduces the paper's worked
//! example (all frequencies ≤ 0.2, so d = 0.3: about 1087 required). When `d_p < 2ε/3` the squared term is
//! clamped to 0, i.e. the bound takes its largest value (the conservative reading). A state with no
//! observations needs the largest bound and does not meet it. Terminal states are not learned (their rows
//! are fixed) and are not part of m.

use serde::{Deserialize, Serialize};

use crate::counts::Counts;
use crate::domain::Domain;
use crate::error::{ModelError, StructureError};
use crate::StateId;

#[cfg(test)]
mod tests;

/// PAC parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PacConfig {
    /// Allowed error of a reachability probability, 0 < ε < 1.
    pub epsilon: f64,
    /// Allowed probability of exceeding ε, 0 < δ < 1 (split over the states: δ' = δ/m).
    pub delta: f64,
}

impl Default for PacConfig {
    fn default() -> Self {
        PacConfig {
            epsilon: 0.05,
            delta: 0.05,
        }
    }
}

impl PacConfig {
    fn check(&self) -> Result<(), ModelError> {
        let ok = |x: f64| x.is_finite() && x > 0.0 && x < 1.0;
        if ok(self.epsilon) && ok(self.delta) {
            Ok(())
        } else {
            Err(ModelError::Config(format!(
                "epsilon and delta must lie in (0, 1), got {} and {}",
                self.epsilon, self.delta
            )))
        }
    }
}

/// Right-hand side of Eq. 2: samples a state needs, given ε, δ' and `d` = |1/2 − hardest frequency|.
pub fn required_samples(epsilon: f64, delta_prime: f64, d: f64) -> f64 {
    let t = (d - 2.0 * epsilon / 3.0).max(0.0);
    2.0 / (epsilon * epsilon) * (2.0 / delta_prime).ln() * (0.25 - t * t)
}

/// The smallest ε for which `n_p` samples meet Eq. 2 (1 if none meets it). Eq. 2's right-hand side is
/// non-increasing in ε (its derivative has the sign of `d(d − 2ε/3) − 1/4 ≤ 0`), so bisection is exact.
pub fn achieved_epsilon(n_p: u64, delta_prime: f64, d: f64) -> f64 {
    let n = n_p as f64;
    if required_samples(1.0, delta_prime, d) > n {
        return 1.0;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if mid > 0.0 && required_samples(mid, delta_prime, d) <= n {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Per-state PAC figures and their summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "PacParts")]
pub struct PacSummary {
    /// The parameters the bound was computed with.
    config: PacConfig,
    /// m: number of learned (valid, non-terminal) states.
    m: usize,
    /// Per state (all ids): observed outgoing transitions n_p.
    n_p: Vec<u64>,
    /// Per state: required n_p (0 for states outside the m learned ones).
    required: Vec<f64>,
    /// Per state: the ε this state's data achieve at δ' (0 for unlearned states, 1 when hopeless).
    epsilon_achieved: Vec<f64>,
    /// Per state: whether it is one of the m learned states.
    learned: Vec<bool>,
}

#[derive(Deserialize)]
struct PacParts {
    config: PacConfig,
    m: usize,
    n_p: Vec<u64>,
    required: Vec<f64>,
    epsilon_achieved: Vec<f64>,
    learned: Vec<bool>,
}

impl TryFrom<PacParts> for PacSummary {
    type Error = StructureError;
    fn try_from(p: PacParts) -> Result<Self, Self::Error> {
        let n = p.n_p.len();
        for (what, len) in [
            ("pac.required", p.required.len()),
            ("pac.epsilon_achieved", p.epsilon_achieved.len()),
            ("pac.learned", p.learned.len()),
        ] {
            if len != n {
                return Err(StructureError::SizeMismatch {
                    what,
                    expected: n,
                    found: len,
                });
            }
        }
        if p.learned.iter().filter(|&&l| l).count() != p.m {
            return Err(StructureError::Invalid(
                "pac.m differs from the number of learned states".into(),
            ));
        }
        if let Some(s) = p
            .epsilon_achieved
            .iter()
            .position(|e| !(0.0..=1.0).contains(e))
        {
            return Err(StructureError::BadProbability {
                what: "pac.epsilon_achieved",
                state: s,
                value: p.epsilon_achieved[s],
            });
        }
        Ok(PacSummary {
            config: p.config,
            m: p.m,
            n_p: p.n_p,
            required: p.required,
            epsilon_achieved: p.epsilon_achieved,
            learned: p.learned,
        })
    }
}

impl PacSummary {
    /// Evaluates Eq. 2 for every learned state of `domain` from `counts`.
    ///
    /// # Errors
    /// ε or δ outside (0, 1); counts over a different number of states.
    pub fn compute<D: Domain + ?Sized>(
        domain: &D,
        counts: &Counts,
        config: PacConfig,
    ) -> Result<PacSummary, ModelError> {
        config.check()?;
        let n = domain.n_states();
        if counts.n_states() != n {
            return Err(ModelError::Config(
                "PAC: counts and domain differ in size".into(),
            ));
        }
        let learned: Vec<bool> = (0..n as StateId)
            .map(|s| domain.is_valid_state(s) && !domain.is_terminal(s))
            .collect();
        let m = learned.iter().filter(|&&l| l).count();
        let delta_prime = config.delta / m.max(1) as f64;
        let (ptr, entries) = counts.rows();
        let mut n_p = vec![0u64; n];
        let mut required = vec![0.0; n];
        let mut epsilon_achieved = vec![0.0; n];
        for s in 0..n {
            if !learned[s] {
                continue;
            }
            let row = &entries[ptr[s]..ptr[s + 1]];
            let total: u64 = row.iter().map(|&(_, c)| c).sum();
            let d = row
                .iter()
                .map(|&(_, c)| (0.5 - c as f64 / total as f64).abs())
                .fold(0.5f64, f64::min);
            n_p[s] = total;
            required[s] = required_samples(
                config.epsilon,
                delta_prime,
                if total == 0 { 0.0 } else { d },
            );
            epsilon_achieved[s] = if total == 0 {
                1.0
            } else {
                achieved_epsilon(total, delta_prime, d)
            };
        }
        Ok(PacSummary {
            config,
            m,
            n_p,
            required,
            epsilon_achieved,
            learned,
        })
    }

    /// The parameters used.
    pub fn config(&self) -> PacConfig {
        self.config
    }

    /// m, the number of learned states (the "total" of the summary).
    pub fn total(&self) -> usize {
        self.m
    }

    /// Learned states whose n_p meets the bound.
    pub fn met(&self) -> usize {
        (0..self.n_p.len())
            .filter(|&s| self.state_met(s as StateId))
            .count()
    }

    /// Learned states with at least one observation.
    pub fn visited(&self) -> usize {
        (0..self.n_p.len())
            .filter(|&s| self.learned[s] && self.n_p[s] > 0)
            .count()
    }

    /// Whether `state` is learned and meets the bound.
    pub fn state_met(&self, state: StateId) -> bool {
        let s = state as usize;
        self.learned.get(s).copied().unwrap_or(false)
            && self.n_p[s] > 0
            && self.n_p[s] as f64 >= self.required[s]
    }

    /// `(n_p, required)` of a state; `None` for terminal or invalid states or ids out of range.
    pub fn state(&self, state: StateId) -> Option<(u64, f64)> {
        let s = state as usize;
        (*self.learned.get(s)?).then(|| (self.n_p[s], self.required[s]))
    }

    /// The ε the state's own data achieve (used for the conservative bound p + ε); 0 for terminal states.
    pub fn epsilon_of(&self, state: StateId) -> f64 {
        self.epsilon_achieved
            .get(state as usize)
            .copied()
            .unwrap_or(1.0)
    }

    /// Number of state ids covered.
    pub fn n_states(&self) -> usize {
        self.n_p.len()
    }

    /// The `k` visited learned states furthest from meeting the bound (smallest n_p / required), as
    /// `(state, n_p, required)`.
    pub fn worst(&self, k: usize) -> Vec<(StateId, u64, f64)> {
        let mut v: Vec<_> = (0..self.n_p.len())
            .filter(|&s| self.learned[s] && self.n_p[s] > 0 && !self.state_met(s as StateId))
            .map(|s| (s as StateId, self.n_p[s], self.required[s]))
            .collect();
        v.sort_by(|a, b| (a.1 as f64 / a.2).total_cmp(&(b.1 as f64 / b.2)));
        v.truncate(k);
        v
    }
}
