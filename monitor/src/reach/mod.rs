//! Reachability of unsafe states in a [`crate::Dtmc`]: exact unbounded probabilities, bounded
//! (within k steps) probabilities, expected steps given that unsafe is reached, and most likely paths.
//!
//! The pipeline follows probabilistic model checkers: graph analysis first, then a linear solve on the
//! "maybe" states. The graph analysis ([`decompose`]) is one Tarjan pass that yields the strongly connected
//! components in reverse topological order together with the `prob0` (cannot reach unsafe) and `prob1`
//! (reaches it almost surely) classification; [`graph`] keeps the textbook backward searches as an
//! independent check. The solve ([`solve`]) then goes component by component, so each one is solved once
//! its successors are known: closed form, dense LU when small, Krylov plus certifying sweeps when
//! large, with cache-blocked products ([`spmv`]) on big chains.

pub mod bounded;
pub mod decompose;
pub mod graph;
pub mod path;
pub mod scc;
pub mod solve;
pub mod spmv;

#[cfg(test)]
mod random_chain;
#[cfg(test)]
mod tests;

use crate::dtmc::Dtmc;
use decompose::{Class, Decomposition};

/// Target accuracy of the iterative part of the solver (absolute, per state).
pub const SOLVE_TOLERANCE: f64 = 1e-13;

/// P(F unsafe) for every state.
///
/// # Panics
/// If `unsafe_states.len() != dtmc.n_states()` (a caller bug).
pub fn eventually(dtmc: &Dtmc, unsafe_states: &[bool]) -> Vec<f64> {
    let dec = decompose::decompose(dtmc, unsafe_states);
    eventually_with(dtmc, unsafe_states, &dec)
}

/// [`eventually`] with a decomposition already computed by [`decompose::decompose`] for the same target.
pub fn eventually_with(dtmc: &Dtmc, unsafe_states: &[bool], dec: &Decomposition) -> Vec<f64> {
    let mut x: Vec<f64> = unsafe_states
        .iter()
        .map(|&u| f64::from(u8::from(u)))
        .collect();
    for c in 0..dec.len() {
        if let (members, Class::Yes) = dec.component(c) {
            for &s in members {
                x[s as usize] = 1.0;
            }
        }
    }
    solve::solve_components(dtmc, dec, |c| c == Class::Maybe, None, &mut x);
    x
}

/// Expected number of steps to reach unsafe, given that it is reached: `E[T | F unsafe]`.
///
/// 0 for unsafe states, `f64::INFINITY` where unsafe is unreachable. With `y_s = E[T·1{reach}]`,
/// `y_s = x_s + Σ_j P(s,j)·y_j` on the states with `x_s > 0` that are not unsafe; the system is nonsingular
/// because every such state reaches unsafe with positive probability. The answer is `y_s / x_s`.
pub fn expected_steps(dtmc: &Dtmc, unsafe_states: &[bool], eventually: &[f64]) -> Vec<f64> {
    let dec = decompose::decompose(dtmc, unsafe_states);
    expected_steps_with(dtmc, unsafe_states, &dec, eventually)
}

/// [`expected_steps`] with a decomposition already computed for the same target.
pub fn expected_steps_with(
    dtmc: &Dtmc,
    unsafe_states: &[bool],
    dec: &Decomposition,
    eventually: &[f64],
) -> Vec<f64> {
    let n = dtmc.n_states();
    let mut y = vec![0.0; n];
    solve::solve_components(dtmc, dec, |c| c != Class::No, Some(eventually), &mut y);
    let mut out: Vec<f64> = (0..n).map(|s| y[s] / eventually[s]).collect();
    for c in 0..dec.len() {
        if let (members, Class::No) = dec.component(c) {
            for &s in members {
                out[s as usize] = f64::INFINITY;
            }
        }
    }
    for (o, &u) in out.iter_mut().zip(unsafe_states) {
        if u {
            *o = 0.0;
        }
    }
    out
}

/// Everything a risk table stores, from [`analyse`].
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// P(F unsafe) per state.
    pub eventually: Vec<f64>,
    /// P(F≤k unsafe) per requested horizon, `within[h][s]`.
    pub within: Vec<Vec<f64>>,
    /// E[steps to unsafe | unsafe reached] per state.
    pub expected_steps: Vec<f64>,
    /// Most likely path to unsafe from each state.
    pub most_likely: path::MostLikely,
}

/// All per-state quantities at once, sharing one graph decomposition between the unbounded and the
/// expected-steps solves (the separate functions each decompose again).
///
/// # Panics
/// If `unsafe_states.len() != dtmc.n_states()` (a caller bug).
pub fn analyse(dtmc: &Dtmc, unsafe_states: &[bool], horizons_steps: &[u32]) -> Analysis {
    let dec = decompose::decompose(dtmc, unsafe_states);
    let eventually = eventually_with(dtmc, unsafe_states, &dec);
    let expected_steps = expected_steps_with(dtmc, unsafe_states, &dec, &eventually);
    drop(dec);
    Analysis {
        within: bounded::within(dtmc, unsafe_states, horizons_steps),
        most_likely: path::most_likely(dtmc, unsafe_states),
        eventually,
        expected_steps,
    }
}
