//! Estimating the DTMC from counts: validity-aware Laplace smoothing and row normalisation (Algorithm 1, lines 12–28).
//!
//! For every non-terminal valid state `i`, each successor `j` in the domain's smoothing support (by default
//! every `j` with `can_reach(i, j)`) and each observed successor gets weight `C[i][j] + α`; the row is then
//! normalised. Terminal states (unsafe, or "run finished") get a self-loop of probability 1: they are
//! absorbing by definition, whatever the data say. Invalid states get a self-loop too; no valid state can
//! reach them, so they never influence a probability.
//!
//! **Hierarchical smoothing** ([`build_dtmc_with_prior`]): smoothing puts α on each *outcome* of a row —
//! each terminal successor in the support, the unsafe ones and `done` — which, alone, says "violation or
//! safe finish, evenly". Given an outcome prior r(i) (the risk of i's parent state in a coarser
//! abstraction), the same total mass on the outcomes is split r(i) : 1 − r(i) between the unsafe ones and
//! the safe ones instead, so a state seen a few times is pulled towards what the coarser state it refines
//! says, not towards ½; one seen often is not moved. Flat smoothing is the prior ½ everywhere.
//!
//! A valid non-terminal state whose weights sum to zero (only possible with α = 0 and no observations) has
//! no estimate at all. It gets a self-loop and is reported as a *deadlock* state (PRISM's label), so a
//! reader can see that its risk of 0 is an artefact of missing data rather than a measurement.

use serde::{Deserialize, Serialize};

use crate::counts::Counts;
use crate::domain::Domain;
use crate::dtmc::Dtmc;
use crate::error::ModelError;
use crate::StateId;

#[cfg(test)]
mod tests;

/// Laplace smoothing options.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LaplaceConfig {
    /// Laplace pseudo-count added to every valid transition (α ≥ 0; the paper's default is 1).
    pub alpha: f64,
}

impl Default for LaplaceConfig {
    fn default() -> Self {
        LaplaceConfig { alpha: 1.0 }
    }
}

/// A learned chain plus the states it could not estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Learned {
    /// The row-stochastic matrix.
    pub dtmc: Dtmc,
    /// Valid non-terminal states with no data and no smoothing mass (self-looped; see module docs).
    pub deadlocks: Vec<StateId>,
}

/// Builds the DTMC from `counts` over `domain` (validity-aware Laplace smoothing).
///
/// # Errors
/// α negative or not finite; counts taken over a different number of states.
pub fn build_dtmc<D: Domain + ?Sized>(
    domain: &D,
    counts: &Counts,
    cfg: &LaplaceConfig,
) -> Result<Learned, ModelError> {
    build_dtmc_with_prior(domain, counts, cfg, None)
}

/// [`build_dtmc`] with each row's smoothing mass on its outcomes split by `prior` (per state, in
/// `[0, 1]`; see the module docs); `None` is flat smoothing.
///
/// # Errors
/// As [`build_dtmc`]; a prior of the wrong length or with a value outside `[0, 1]`.
pub fn build_dtmc_with_prior<D: Domain + ?Sized>(
    domain: &D,
    counts: &Counts,
    cfg: &LaplaceConfig,
    prior: Option<&[f64]>,
) -> Result<Learned, ModelError> {
    if let Some(p) = prior {
        if p.len() != domain.n_states() {
            return Err(ModelError::Config(format!(
                "outcome prior covers {} states but the domain has {}",
                p.len(),
                domain.n_states()
            )));
        }
        if let Some(bad) = p.iter().find(|r| !(0.0..=1.0).contains(*r)) {
            return Err(ModelError::Config(format!(
                "outcome prior {bad} is not a probability"
            )));
        }
    }
    if !(cfg.alpha.is_finite() && cfg.alpha >= 0.0) {
        return Err(ModelError::Config(format!(
            "alpha must be finite and >= 0, got {}",
            cfg.alpha
        )));
    }
    let n = domain.n_states();
    if counts.n_states() != n {
        return Err(ModelError::Config(format!(
            "counts cover {} states but the domain has {n}",
            counts.n_states()
        )));
    }
    let (count_ptr, count_entries) = counts.rows();
    let observed_only = domain.smoothing_observed_only();
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0usize);
    let mut cols: Vec<StateId> = Vec::new();
    let mut probs: Vec<f64> = Vec::new();
    let mut deadlocks = Vec::new();
    let mut support = Vec::new();
    let mut row: Vec<(StateId, f64)> = Vec::new();
    for s in 0..n as StateId {
        row.clear();
        if domain.is_valid_state(s) && !domain.is_terminal(s) {
            if cfg.alpha > 0.0 {
                domain.smoothing_support(s, &mut support);
                let kept = |j: StateId| {
                    !observed_only
                        || j == s
                        || domain.is_terminal(j)
                        || count_ptr[j as usize] < count_ptr[j as usize + 1]
                };
                let start = row.len();
                row.extend(
                    support
                        .iter()
                        .filter(|&&j| kept(j))
                        .map(|&j| (j, cfg.alpha)),
                );
                if let Some(p) = prior {
                    split_outcomes(domain, &mut row[start..], cfg.alpha, p[s as usize]);
                }
            }
            let observed = &count_entries[count_ptr[s as usize]..count_ptr[s as usize + 1]];
            row.extend(observed.iter().map(|&(j, c)| (j, c as f64)));
            row.sort_unstable_by_key(|&(j, _)| j);
            // Merge duplicates (a successor both in the support and observed): C[i][j] + α.
            row.dedup_by(|later, kept| {
                if later.0 == kept.0 {
                    kept.1 += later.1;
                    true
                } else {
                    false
                }
            });
            row.retain(|&(_, w)| w > 0.0);
        }
        let total: f64 = row.iter().map(|&(_, w)| w).sum();
        if total > 0.0 {
            for &(j, w) in &row {
                cols.push(j);
                probs.push(w / total);
            }
        } else {
            if domain.is_valid_state(s) && !domain.is_terminal(s) {
                deadlocks.push(s);
            }
            cols.push(s);
            probs.push(1.0);
        }
        row_ptr.push(cols.len());
    }
    let dtmc = Dtmc::try_new(n, row_ptr, cols, probs)?;
    Ok(Learned { dtmc, deadlocks })
}

/// Splits the smoothing mass `alpha` × (number of terminal entries) of `row` (a row's support, each at
/// `alpha`) between its unsafe entries (share `r`) and its safe terminal ones (`1 − r`), evenly within
/// each; a row lacking either kind keeps flat smoothing.
fn split_outcomes<D: Domain + ?Sized>(domain: &D, row: &mut [(StateId, f64)], alpha: f64, r: f64) {
    let n_unsafe = row.iter().filter(|&&(j, _)| domain.is_unsafe(j)).count();
    let n_terminal = row.iter().filter(|&&(j, _)| domain.is_terminal(j)).count();
    let n_safe = n_terminal - n_unsafe;
    if n_unsafe == 0 || n_safe == 0 {
        return;
    }
    let mass = alpha * n_terminal as f64;
    for (j, w) in row.iter_mut() {
        if domain.is_unsafe(*j) {
            *w = mass * r / n_unsafe as f64;
        } else if domain.is_terminal(*j) {
            *w = mass * (1.0 - r) / n_safe as f64;
        }
    }
}
