//! Bounded reachability: P(F≤k unsafe) for several horizons by repeated sparse matrix-vector products.
//!
//! `x⁽⁰⁾ = [s unsafe]`, `x⁽ᵏ⁺¹⁾_s = 1` for unsafe s, else `Σ_j P(s,j)·x⁽ᵏ⁾_j`. One pass to the largest
//! horizon serves all of them: each requested k is copied out when reached.

use crate::dtmc::Dtmc;

/// P(F≤k unsafe) for each `k` of `horizons_steps`; result `r[h][s]`.
pub fn within(dtmc: &Dtmc, unsafe_states: &[bool], horizons_steps: &[u32]) -> Vec<Vec<f64>> {
    let n = dtmc.n_states();
    let (row_ptr, cols, probs) = dtmc.csr();
    let max_k = horizons_steps.iter().copied().max().unwrap_or(0);
    let mut cur: Vec<f64> = unsafe_states
        .iter()
        .map(|&u| f64::from(u8::from(u)))
        .collect();
    let mut next = vec![0.0; n];
    let mut out = vec![Vec::new(); horizons_steps.len()];
    for k in 0..=max_k {
        for (h, &steps) in horizons_steps.iter().enumerate() {
            if steps == k {
                out[h] = cur.clone();
            }
        }
        if k == max_k {
            break;
        }
        for s in 0..n {
            next[s] = if unsafe_states[s] {
                1.0
            } else {
                (row_ptr[s]..row_ptr[s + 1])
                    .map(|e| probs[e] * cur[cols[e] as usize])
                    .sum()
            };
        }
        std::mem::swap(&mut cur, &mut next);
    }
    out
}
