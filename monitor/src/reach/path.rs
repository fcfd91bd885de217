//! The most likely path from each state to an unsafe state (for explanations).
//!
//! The probability of a path is the product of its transition probabilities, so the most likely path is a
//! shortest path under weights `−ln P(s,j) ≥ 0`. One multi-source Dijkstra from all unsafe states over the
//! reversed graph yields, for every state, the next state on its best path and that path's probability.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::dtmc::Dtmc;
use crate::StateId;

/// Marks "no path" in [`MostLikely::next`].
pub const NO_PATH: StateId = StateId::MAX;

/// Per state: next hop on its most likely path to unsafe, and the path's probability.
#[derive(Debug, Clone, PartialEq)]
pub struct MostLikely {
    /// Next state on the best path; [`NO_PATH`] for unsafe states and states that cannot reach unsafe.
    pub next: Vec<StateId>,
    /// Probability of the best path (1 for unsafe states, 0 when unreachable).
    pub prob: Vec<f64>,
}

#[derive(PartialEq)]
struct Item(f64, StateId);
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Item {
    fn cmp(&self, other: &Self) -> Ordering {
        // Min-heap on cost, ties broken by state id for determinism.
        other
            .0
            .total_cmp(&self.0)
            .then_with(|| other.1.cmp(&self.1))
    }
}

/// Runs the reversed multi-source Dijkstra.
pub fn most_likely(dtmc: &Dtmc, unsafe_states: &[bool]) -> MostLikely {
    let n = dtmc.n_states();
    let (ptr, preds, probs) = dtmc.transpose();
    let mut cost = vec![f64::INFINITY; n];
    let mut next = vec![NO_PATH; n];
    let mut heap = BinaryHeap::new();
    for s in 0..n {
        if unsafe_states[s] {
            cost[s] = 0.0;
            heap.push(Item(0.0, s as StateId));
        }
    }
    while let Some(Item(c, t)) = heap.pop() {
        let t = t as usize;
        if c > cost[t] {
            continue;
        }
        for k in ptr[t]..ptr[t + 1] {
            let p = preds[k] as usize;
            if unsafe_states[p] {
                continue;
            }
            let nc = c - probs[k].ln();
            if nc < cost[p] {
                cost[p] = nc;
                next[p] = t as StateId;
                heap.push(Item(nc, p as StateId));
            }
        }
    }
    let prob = cost.iter().map(|&c| (-c).exp()).collect();
    MostLikely { next, prob }
}

impl MostLikely {
    /// The path from `start` to unsafe (inclusive), empty when there is none.
    pub fn path(&self, start: StateId) -> Vec<StateId> {
        if self.prob.get(start as usize).is_none_or(|&p| p == 0.0) {
            return Vec::new();
        }
        path_from(&self.next, start)
    }
}

/// Follows next-hop pointers from `start` (at most `next.len()` hops, so a corrupt table cannot loop).
pub fn path_from(next: &[StateId], start: StateId) -> Vec<StateId> {
    let mut out = vec![start];
    let mut s = start;
    while let Some(&n) = next.get(s as usize) {
        if n == NO_PATH || out.len() > next.len() {
            break;
        }
        out.push(n);
        s = n;
    }
    out
}
