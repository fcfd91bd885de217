//! The most likely path from each state to an unsafe state (for explanations).
//!
//! The probability of a path is the product of its transition probabilities, so the most likely path is a
//! shortest path under weights `−ln P(s,j) ≥ 0`. One multi-source Dijkstra from all unsafe states over the
//! reversed graph yields, for every state, the next state on its best path and that path's probability.

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

/// Marks "not in the heap" in [`IndexedHeap::pos`].
const ABSENT: u32 = u32::MAX;

/// A 4-ary min-heap of `(cost, state)` with decrease-key, so each state occupies at most one slot.
///
/// Why not `BinaryHeap` with lazy deletion: on a 2^20-state chain with ~10 predecessors per state the lazy
/// heap holds several million stale entries and every sift touches cold memory; the indexed heap stays at
/// most one entry per state, and a wider node halves the depth. Ties break by state id (determinism).
struct IndexedHeap {
    items: Vec<(f64, u32)>,
    pos: Vec<u32>,
}

impl IndexedHeap {
    fn new(n: usize) -> IndexedHeap {
        IndexedHeap {
            items: Vec::new(),
            pos: vec![ABSENT; n],
        }
    }

    fn less(a: (f64, u32), b: (f64, u32)) -> bool {
        a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).is_lt()
    }

    fn place(&mut self, i: usize, item: (f64, u32)) {
        self.items[i] = item;
        self.pos[item.1 as usize] = i as u32;
    }

    fn sift_up(&mut self, mut i: usize, item: (f64, u32)) {
        while i > 0 {
            let parent = (i - 1) / 4;
            if !Self::less(item, self.items[parent]) {
                break;
            }
            let moved = self.items[parent];
            self.place(i, moved);
            i = parent;
        }
        self.place(i, item);
    }

    /// Inserts `state` or lowers its cost (callers only ever lower it).
    fn push_or_decrease(&mut self, cost: f64, state: u32) {
        let i = match self.pos[state as usize] {
            ABSENT => {
                self.items.push((cost, state));
                self.items.len() - 1
            }
            p => p as usize,
        };
        self.sift_up(i, (cost, state));
    }

    fn pop(&mut self) -> Option<(f64, u32)> {
        let top = *self.items.first()?;
        self.pos[top.1 as usize] = ABSENT;
        let Some(last) = self.items.pop() else {
            return Some(top);
        };
        if self.items.is_empty() {
            return Some(top);
        }
        // Sift `last` down from the root.
        let len = self.items.len();
        let mut i = 0;
        loop {
            let first = 4 * i + 1;
            if first >= len {
                break;
            }
            let mut best = first;
            for c in first + 1..(first + 4).min(len) {
                if Self::less(self.items[c], self.items[best]) {
                    best = c;
                }
            }
            if !Self::less(self.items[best], last) {
                break;
            }
            let moved = self.items[best];
            self.place(i, moved);
            i = best;
        }
        self.place(i, last);
        Some(top)
    }
}

/// Runs the reversed multi-source Dijkstra.
pub fn most_likely(dtmc: &Dtmc, unsafe_states: &[bool]) -> MostLikely {
    let n = dtmc.n_states();
    let (ptr, preds, probs) = dtmc.transpose();
    let mut cost = vec![f64::INFINITY; n];
    let mut next = vec![NO_PATH; n];
    let mut done = vec![false; n];
    let mut heap = IndexedHeap::new(n);
    for s in 0..n {
        if unsafe_states[s] {
            cost[s] = 0.0;
            heap.push_or_decrease(0.0, s as StateId);
        }
    }
    while let Some((c, t)) = heap.pop() {
        let t = t as usize;
        done[t] = true;
        for k in ptr[t]..ptr[t + 1] {
            let p = preds[k] as usize;
            if unsafe_states[p] || done[p] {
                continue;
            }
            let nc = c - probs[k].ln();
            if nc < cost[p] {
                cost[p] = nc;
                next[p] = t as StateId;
                heap.push_or_decrease(nc, p as StateId);
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
