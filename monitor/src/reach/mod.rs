//! Reachability of unsafe states in a [`Dtmc`](crate::Dtmc): exact unbounded probabilities, bounded
//! (within k steps) probabilities, expected steps given that unsafe is reached, and most likely paths.
//!
//! The pipeline follows probabilistic model checkers: graph preprocessing first ([`graph`]: `prob0`, the
//! states that cannot reach unsafe, and `prob1`, those that reach it almost surely), then a linear solve
//! on the remaining "maybe" states ([`solve`]), done SCC by SCC in reverse topological order ([`scc`]) so
//! that each strongly connected component is solved once its successors are known — directly (dense LU)
//! when small, by Gauss-Seidel with a contraction-aware stopping rule when large.

pub mod bounded;
pub mod graph;
pub mod path;
pub mod scc;
pub mod solve;

#[cfg(test)]
mod tests;

use crate::dtmc::Dtmc;

/// Target accuracy of the iterative part of the solver (absolute, per state).
pub const SOLVE_TOLERANCE: f64 = 1e-13;

/// P(F unsafe) for every state.
///
/// # Panics
/// If `unsafe_states.len() != dtmc.n_states()` (a caller bug).
pub fn eventually(dtmc: &Dtmc, unsafe_states: &[bool]) -> Vec<f64> {
    assert_eq!(unsafe_states.len(), dtmc.n_states(), "target mask size");
    let n = dtmc.n_states();
    let no = graph::prob0(dtmc, unsafe_states);
    let yes = graph::prob1(dtmc, unsafe_states, &no);
    let maybe: Vec<bool> = (0..n).map(|s| !no[s] && !yes[s]).collect();
    let (row_ptr, cols, probs) = dtmc.csr();
    let mut b = vec![0.0; n];
    for s in 0..n {
        if maybe[s] {
            b[s] = (row_ptr[s]..row_ptr[s + 1])
                .filter(|&k| yes[cols[k] as usize])
                .map(|k| probs[k])
                .sum();
        }
    }
    let mut x = solve::solve_masked(dtmc, &maybe, &b);
    for s in 0..n {
        if yes[s] {
            x[s] = 1.0;
        } else if no[s] {
            x[s] = 0.0;
        }
    }
    x
}

/// Expected number of steps to reach unsafe, given that it is reached: `E[T | F unsafe]`.
///
/// 0 for unsafe states, `f64::INFINITY` where unsafe is unreachable. With `y_s = E[T·1{reach}]`,
/// `y_s = x_s + Σ_j P(s,j)·y_j` on the states with `x_s > 0` that are not unsafe; the system is nonsingular
/// because every such state reaches unsafe with positive probability. The answer is `y_s / x_s`.
pub fn expected_steps(dtmc: &Dtmc, unsafe_states: &[bool], eventually: &[f64]) -> Vec<f64> {
    let n = dtmc.n_states();
    let no = graph::prob0(dtmc, unsafe_states);
    let system: Vec<bool> = (0..n).map(|s| !no[s] && !unsafe_states[s]).collect();
    let b: Vec<f64> = (0..n)
        .map(|s| if system[s] { eventually[s] } else { 0.0 })
        .collect();
    let y = solve::solve_masked(dtmc, &system, &b);
    (0..n)
        .map(|s| {
            if unsafe_states[s] {
                0.0
            } else if no[s] {
                f64::INFINITY
            } else {
                y[s] / eventually[s]
            }
        })
        .collect()
}
