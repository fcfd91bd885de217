//! One depth-first pass that does all the graph work of a reachability query: the SCCs of the non-target
//! states in reverse topological order, and for each SCC whether it can reach a target (else: `prob0`) and
//! whether it can reach a `prob0` state without passing a target (else: `prob1`).
//!
//! Why one pass: the textbook pipeline (transpose, backward search for prob0, another for prob1, then
//! Tarjan on the remaining states) walks a 2^20-state chain four times with random memory access, and the
//! transposes alone cost as much as the solve. Every state of an SCC is mutually reachable with every
//! other, so all of them share both answers, and Tarjan emits a component only after every component it
//! can reach; so both answers follow from the successors' answers at the moment a component is emitted.
//! The SCCs of the "maybe" states (and of the "reach target with positive probability" states used by
//! the expected-steps system) are exactly the components of this decomposition with the matching class,
//! since a class is constant on a component.
//!
//! Memory per state: one `u32` (DFS index, replaced by the component's class flags once it is emitted),
//! one `u32` low-link, one byte of flags; plus the explicit DFS stack. Targets are never entered.

use crate::dtmc::Dtmc;

/// Class of a non-target state with respect to reaching the target set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Cannot reach a target: probability 0.
    No,
    /// Reaches a target almost surely: probability 1.
    Yes,
    /// Reaches a target with probability strictly between 0 and 1.
    Maybe,
}

/// Flag: the state can reach a target.
const REACH_T: u8 = 1;
/// Flag: the state can reach a `prob0` state along a path without targets.
const REACH_NO: u8 = 2;
/// `index` value of a state never visited.
const UNVISITED: u32 = u32::MAX;
/// `index` values from `DONE` up encode "emitted, with flags `index - DONE`" (flags use 2 bits).
const DONE: u32 = u32::MAX - 4;

/// Components larger than this are stored with their members in increasing state order.
const SORT_MIN: usize = 256;

/// The result of [`decompose`].
#[derive(Debug, Clone)]
pub struct Decomposition {
    /// Members of component `c` are `order[starts[c]..starts[c + 1]]`; targets belong to none.
    order: Vec<u32>,
    /// Component boundaries, length `components + 1`.
    starts: Vec<usize>,
    /// Class of each component.
    class: Vec<Class>,
}

impl Decomposition {
    /// Number of components.
    pub fn len(&self) -> usize {
        self.class.len()
    }

    /// Whether there are no components (every state is a target).
    pub fn is_empty(&self) -> bool {
        self.class.is_empty()
    }

    /// Members and class of component `c`; components are in reverse topological order.
    pub fn component(&self, c: usize) -> (&[u32], Class) {
        (
            &self.order[self.starts[c]..self.starts[c + 1]],
            self.class[c],
        )
    }

    /// Per-state class (`None` for targets).
    pub fn state_classes(&self, n_states: usize) -> Vec<Option<Class>> {
        let mut out = vec![None; n_states];
        for c in 0..self.len() {
            let (members, class) = self.component(c);
            for &s in members {
                out[s as usize] = Some(class);
            }
        }
        out
    }
}

fn class_of(flags: u8) -> Class {
    if flags & REACH_T == 0 {
        Class::No
    } else if flags & REACH_NO == 0 {
        Class::Yes
    } else {
        Class::Maybe
    }
}

/// Decomposes `dtmc` with respect to the target set (see module docs).
///
/// # Panics
/// If `target.len() != dtmc.n_states()` (a caller bug).
pub fn decompose(dtmc: &Dtmc, target: &[bool]) -> Decomposition {
    let n = dtmc.n_states();
    assert_eq!(target.len(), n, "target mask size");
    let (row_ptr, cols, _) = dtmc.csr();
    // A target is "emitted" up front with flags {reaches target, cannot reach prob0 through itself}.
    let mut index: Vec<u32> = target
        .iter()
        .map(|&t| {
            if t {
                DONE + u32::from(REACH_T)
            } else {
                UNVISITED
            }
        })
        .collect();
    let mut low = vec![0u32; n];
    let mut flags = vec![0u8; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut call: Vec<(u32, usize)> = Vec::new();
    let mut out = Decomposition {
        order: Vec::with_capacity(n),
        starts: vec![0],
        class: Vec::new(),
    };
    let mut next_index = 0u32;
    for root in 0..n {
        if index[root] != UNVISITED {
            continue;
        }
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root as u32);
        call.push((root as u32, row_ptr[root]));
        while let Some(&mut (v, ref mut edge)) = call.last_mut() {
            let v = v as usize;
            if *edge < row_ptr[v + 1] {
                let w = cols[*edge] as usize;
                *edge += 1;
                let iw = index[w];
                if iw == UNVISITED {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w as u32);
                    call.push((w as u32, row_ptr[w]));
                } else if iw >= DONE {
                    // An emitted component (or a target): its answers are final.
                    flags[v] |= (iw - DONE) as u8;
                } else {
                    // On the stack: same component as v (Tarjan's invariant).
                    low[v] = low[v].min(iw);
                }
                continue;
            }
            call.pop();
            if low[v] == index[v] {
                // v is a root: pop its component, OR the members' flags, classify, and mark them emitted.
                let begin = stack.iter().rposition(|&w| w as usize == v).unwrap_or(0);
                let mut f = 0u8;
                for &w in &stack[begin..] {
                    f |= flags[w as usize];
                }
                let class = class_of(f);
                if class == Class::No {
                    f |= REACH_NO;
                }
                for &w in &stack[begin..] {
                    index[w as usize] = DONE + u32::from(f);
                }
                let first = out.order.len();
                out.order.extend_from_slice(&stack[begin..]);
                if stack.len() - begin > SORT_MIN {
                    // Large components are swept row by row: state order makes those reads sequential.
                    out.order[first..].sort_unstable();
                }
                out.starts.push(out.order.len());
                out.class.push(class);
                stack.truncate(begin);
            }
            if let Some(&(parent, _)) = call.last() {
                let (p, iv) = (parent as usize, index[v]);
                if iv >= DONE {
                    flags[p] |= (iv - DONE) as u8;
                } else {
                    low[p] = low[p].min(low[v]);
                }
            }
        }
    }
    out
}
