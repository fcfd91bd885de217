//! Bounded reachability: P(F≤k unsafe) for several horizons by repeated sparse matrix-vector products.
//!
//! `x⁽⁰⁾ = [s unsafe]`, `x⁽ᵏ⁺¹⁾_s = 1` for unsafe s, else `Σ_j P(s,j)·x⁽ᵏ⁾_j`. One pass to the largest
//! horizon serves all of them: each requested k is copied out when reached. The products use the
//! cache-blocked layout of [`spmv`](super::spmv) (rows of unsafe states left out, their entries fixed to 1
//! after each product); the sums are the same as a row-order CSR walk, bit for bit. When a product
//! returns its input unchanged the iteration has reached its fixed point, and the longer horizons take it
//! without further products (the same values, since each product depends on its input alone).

use super::spmv::BlockedMatrix;
use crate::dtmc::Dtmc;

/// P(F≤k unsafe) for each `k` of `horizons_steps`; result `r[h][s]`.
///
/// # Panics
/// If `unsafe_states.len() != dtmc.n_states()` (a caller bug).
pub fn within(dtmc: &Dtmc, unsafe_states: &[bool], horizons_steps: &[u32]) -> Vec<Vec<f64>> {
    let n = dtmc.n_states();
    assert_eq!(unsafe_states.len(), n, "target mask size");
    let (row_ptr, cols, probs) = dtmc.csr();
    let max_k = horizons_steps.iter().copied().max().unwrap_or(0);
    let mut cur: Vec<f64> = unsafe_states
        .iter()
        .map(|&u| f64::from(u8::from(u)))
        .collect();
    let mut out = vec![Vec::new(); horizons_steps.len()];
    let matrix = if max_k > 0 {
        BlockedMatrix::from_row_major(n, || {
            (0..n).filter(|&s| !unsafe_states[s]).flat_map(move |s| {
                (row_ptr[s]..row_ptr[s + 1]).map(move |k| (s as u32, cols[k], probs[k]))
            })
        })
    } else {
        BlockedMatrix::default()
    };
    let mut next = vec![0.0; n];
    for k in 0..=max_k {
        for (h, &steps) in horizons_steps.iter().enumerate() {
            if steps == k {
                out[h] = cur.clone();
            }
        }
        if k == max_k {
            break;
        }
        matrix.mul(&cur, &mut next);
        for (v, &u) in next.iter_mut().zip(unsafe_states) {
            if u {
                *v = 1.0;
            }
        }
        if next == cur {
            // A fixed point: every later iterate is this one, bit for bit.
            for (h, &steps) in horizons_steps.iter().enumerate() {
                if steps > k {
                    out[h] = cur.clone();
                }
            }
            break;
        }
        std::mem::swap(&mut cur, &mut next);
    }
    out
}
