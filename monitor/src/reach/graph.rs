//! Graph preprocessing: the states with probability exactly 0 or exactly 1 of reaching a target set.
//!
//! Both are backward searches over the transposed graph, so they cost O(states + transitions) and remove
//! the bulk of a typical chain before any arithmetic, and make the remaining linear system nonsingular.

use crate::dtmc::Dtmc;

/// States that cannot reach any target (P(F target) = 0).
pub fn prob0(dtmc: &Dtmc, target: &[bool]) -> Vec<bool> {
    let (ptr, preds, _) = dtmc.transpose();
    let n = dtmc.n_states();
    let mut reach = target.to_vec();
    let mut stack: Vec<usize> = (0..n).filter(|&s| target[s]).collect();
    while let Some(t) = stack.pop() {
        for &p in &preds[ptr[t]..ptr[t + 1]] {
            let p = p as usize;
            if !reach[p] {
                reach[p] = true;
                stack.push(p);
            }
        }
    }
    reach.iter().map(|&r| !r).collect()
}

/// States that reach a target almost surely (P(F target) = 1), given `prob0`.
///
/// A state has probability below 1 exactly when it can reach a `prob0` state along a path that avoids the
/// targets; everything else has probability 1.
pub fn prob1(dtmc: &Dtmc, target: &[bool], prob0: &[bool]) -> Vec<bool> {
    let (ptr, preds, _) = dtmc.transpose();
    let n = dtmc.n_states();
    let mut below_one = prob0.to_vec();
    let mut stack: Vec<usize> = (0..n).filter(|&s| prob0[s]).collect();
    while let Some(t) = stack.pop() {
        for &p in &preds[ptr[t]..ptr[t + 1]] {
            let p = p as usize;
            if !below_one[p] && !target[p] {
                below_one[p] = true;
                stack.push(p);
            }
        }
    }
    below_one.iter().map(|&b| !b).collect()
}
