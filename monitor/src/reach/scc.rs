//! Strongly connected components of the sub-graph induced by a state mask (iterative Tarjan).
//!
//! Components come out in reverse topological order: a component is emitted only after every component it
//! can reach, which is the order in which a reachability system can be solved block by block.

use crate::dtmc::Dtmc;

const UNVISITED: u32 = u32::MAX;

/// SCCs of `dtmc` restricted to states with `mask[s]`, as `(order, starts)`: component `c` is
/// `order[starts[c]..starts[c + 1]]`. Components are in reverse topological order.
pub fn sccs(dtmc: &Dtmc, mask: &[bool]) -> (Vec<u32>, Vec<usize>) {
    let n = dtmc.n_states();
    let (row_ptr, cols, _) = dtmc.csr();
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut starts = vec![0usize];
    // Explicit DFS stack of (state, next edge position).
    let mut call: Vec<(u32, usize)> = Vec::new();
    let mut next_index = 0u32;
    for root in 0..n {
        if !mask[root] || index[root] != UNVISITED {
            continue;
        }
        call.push((root as u32, row_ptr[root]));
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root as u32);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut edge)) = call.last_mut() {
            let v = v as usize;
            if *edge < row_ptr[v + 1] {
                let w = cols[*edge] as usize;
                *edge += 1;
                if !mask[w] {
                    continue;
                }
                if index[w] == UNVISITED {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w as u32);
                    on_stack[w] = true;
                    call.push((w as u32, row_ptr[w]));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(parent, _)) = call.last() {
                    let parent = parent as usize;
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    while let Some(w) = stack.pop() {
                        on_stack[w as usize] = false;
                        order.push(w);
                        if w as usize == v {
                            break;
                        }
                    }
                    starts.push(order.len());
                }
            }
        }
    }
    (order, starts)
}
