//! Solving `x_s = b_s + Σ_{j in mask} P(s,j)·x_j` for the states of a mask, block by block.
//!
//! Components are visited in reverse topological order, so every value a component depends on from outside
//! is final when it is solved. Per component:
//! - one state: closed form `x = (b + Σ_outside P·x) / (1 − P(s,s))`;
//! - up to [`DENSE_MAX`] states: Gaussian elimination with partial pivoting on `(I − A)x = rhs`;
//! - larger: Jacobi-preconditioned BiCGSTAB for speed, then Gauss-Seidel sweeps to certify it. Plain "change below tolerance" is not an error bound for a slowly contracting
//!   iteration, so we estimate the contraction rate ρ from successive changes and stop only when
//!   `change·ρ/(1 − ρ)` (the geometric tail bound on the remaining error) is below [`SOLVE_TOLERANCE`].

use super::scc::sccs;
use super::SOLVE_TOLERANCE;
use crate::dtmc::Dtmc;

/// Largest component solved by dense elimination (n³/3 ≈ 6·10⁶ flops at this size).
pub const DENSE_MAX: usize = 256;

/// Iteration cap of Gauss-Seidel on one component; reached only by pathological, nearly closed chains.
const MAX_SWEEPS: usize = 1_000_000;

/// Solves the masked system; entries outside the mask are returned as 0.
///
/// The system must be nonsingular: every masked state must be able to leave the mask (which graph
/// preprocessing guarantees for reachability systems).
pub fn solve_masked(dtmc: &Dtmc, mask: &[bool], b: &[f64]) -> Vec<f64> {
    let n = dtmc.n_states();
    let (row_ptr, cols, probs) = dtmc.csr();
    let (order, starts) = sccs(dtmc, mask);
    let mut x = vec![0.0; n];
    let mut comp_of = vec![u32::MAX; n];
    for c in 0..starts.len() - 1 {
        for &s in &order[starts[c]..starts[c + 1]] {
            comp_of[s as usize] = c as u32;
        }
    }
    let mut local = vec![u32::MAX; n];
    for c in 0..starts.len() - 1 {
        let members = &order[starts[c]..starts[c + 1]];
        let c32 = c as u32;
        // Right-hand side of each member: b plus the already-final values outside the component.
        let mut rhs: Vec<f64> = Vec::with_capacity(members.len());
        for &s in members {
            let s = s as usize;
            let mut acc = b[s];
            for k in row_ptr[s]..row_ptr[s + 1] {
                let j = cols[k] as usize;
                if mask[j] && comp_of[j] != c32 {
                    acc += probs[k] * x[j];
                }
            }
            rhs.push(acc);
        }
        if members.len() == 1 {
            let s = members[0] as usize;
            let self_p = dtmc.prob(s as u32, s as u32);
            x[s] = if self_p < 1.0 {
                rhs[0] / (1.0 - self_p)
            } else {
                0.0
            };
        } else if members.len() <= DENSE_MAX {
            for (i, &s) in members.iter().enumerate() {
                local[s as usize] = i as u32;
            }
            let sol = dense_solve(dtmc, members, &local, c32, &comp_of, rhs);
            for (i, &s) in members.iter().enumerate() {
                x[s as usize] = sol[i];
            }
        } else {
            gauss_seidel(dtmc, members, c32, &comp_of, &rhs, &mut x);
        }
    }
    x
}

fn dense_solve(
    dtmc: &Dtmc,
    members: &[u32],
    local: &[u32],
    comp: u32,
    comp_of: &[u32],
    mut rhs: Vec<f64>,
) -> Vec<f64> {
    let m = members.len();
    let (row_ptr, cols, probs) = dtmc.csr();
    let mut a = vec![0.0; m * m];
    for (i, &s) in members.iter().enumerate() {
        let s = s as usize;
        a[i * m + i] = 1.0;
        for k in row_ptr[s]..row_ptr[s + 1] {
            let j = cols[k] as usize;
            if comp_of[j] == comp {
                a[i * m + local[j] as usize] -= probs[k];
            }
        }
    }
    for col in 0..m {
        let pivot = (col..m)
            .max_by(|&p, &q| a[p * m + col].abs().total_cmp(&a[q * m + col].abs()))
            .unwrap_or(col);
        if pivot != col {
            for k in 0..m {
                a.swap(col * m + k, pivot * m + k);
            }
            rhs.swap(col, pivot);
        }
        let d = a[col * m + col];
        if d == 0.0 {
            continue; // Singular only for a closed component, which the callers exclude.
        }
        for r in col + 1..m {
            let f = a[r * m + col] / d;
            if f != 0.0 {
                for k in col..m {
                    a[r * m + k] -= f * a[col * m + k];
                }
                rhs[r] -= f * rhs[col];
            }
        }
    }
    let mut sol = vec![0.0; m];
    for r in (0..m).rev() {
        let mut acc = rhs[r];
        for k in r + 1..m {
            acc -= a[r * m + k] * sol[k];
        }
        let d = a[r * m + r];
        sol[r] = if d == 0.0 { 0.0 } else { acc / d };
    }
    sol
}

/// A strongly connected block with local indices: `x_i = rhs_i + Σ p_ij x_j` over its members.
struct Block {
    ptr: Vec<usize>,
    cols: Vec<u32>,
    probs: Vec<f64>,
    /// `1 − P(i, i)`, the diagonal of `I − A`.
    diag: Vec<f64>,
}

impl Block {
    fn new(dtmc: &Dtmc, members: &[u32], comp: u32, comp_of: &[u32], local: &mut [u32]) -> Block {
        let (row_ptr, cols, probs) = dtmc.csr();
        for (i, &s) in members.iter().enumerate() {
            local[s as usize] = i as u32;
        }
        let mut b = Block {
            ptr: vec![0],
            cols: Vec::new(),
            probs: Vec::new(),
            diag: Vec::with_capacity(members.len()),
        };
        for &s in members {
            let s = s as usize;
            let mut self_p = 0.0;
            for k in row_ptr[s]..row_ptr[s + 1] {
                let j = cols[k] as usize;
                if j == s {
                    self_p = probs[k];
                } else if comp_of[j] == comp {
                    b.cols.push(local[j]);
                    b.probs.push(probs[k]);
                }
            }
            b.diag.push(1.0 - self_p);
            b.ptr.push(b.cols.len());
        }
        b
    }

    /// `out = (I − A) y`.
    fn apply(&self, y: &[f64], out: &mut [f64]) {
        for i in 0..self.diag.len() {
            let off: f64 = (self.ptr[i]..self.ptr[i + 1])
                .map(|k| self.probs[k] * y[self.cols[k] as usize])
                .sum();
            out[i] = self.diag[i] * y[i] - off;
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Jacobi-preconditioned BiCGSTAB on `(I − A)x = rhs`. Krylov methods converge in a few dozen products
/// where Gauss-Seidel needs thousands of sweeps on slowly mixing chains (long self-loops, rare exits).
/// Returns the iterate; the caller polishes it with Gauss-Seidel, whose stopping rule certifies accuracy.
fn bicgstab(block: &Block, rhs: &[f64]) -> Vec<f64> {
    let m = rhs.len();
    let mut x = vec![0.0; m];
    let mut r = rhs.to_vec();
    let r_hat = r.clone();
    let (mut rho, mut alpha, mut omega) = (1.0f64, 1.0f64, 1.0f64);
    let (mut v, mut p) = (vec![0.0; m], vec![0.0; m]);
    let (mut y, mut z, mut t) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
    let mut s = vec![0.0; m];
    let scale = rhs
        .iter()
        .fold(0.0f64, |a, &b| a.max(b.abs()))
        .max(f64::MIN_POSITIVE);
    for _ in 0..(m.min(10_000)) {
        let rho_new = dot(&r_hat, &r);
        if rho_new == 0.0 || omega == 0.0 {
            break;
        }
        let beta = (rho_new / rho) * (alpha / omega);
        rho = rho_new;
        for i in 0..m {
            p[i] = r[i] + beta * (p[i] - omega * v[i]);
            y[i] = p[i] / block.diag[i];
        }
        block.apply(&y, &mut v);
        let denom = dot(&r_hat, &v);
        if denom == 0.0 {
            break;
        }
        alpha = rho / denom;
        for i in 0..m {
            s[i] = r[i] - alpha * v[i];
            z[i] = s[i] / block.diag[i];
        }
        block.apply(&z, &mut t);
        let tt = dot(&t, &t);
        omega = if tt > 0.0 { dot(&t, &s) / tt } else { 0.0 };
        let mut res = 0.0f64;
        for i in 0..m {
            x[i] += alpha * y[i] + omega * z[i];
            r[i] = s[i] - omega * t[i];
            res = res.max(r[i].abs());
        }
        if !res.is_finite() {
            return vec![0.0; m];
        }
        if res <= 1e-16 * scale {
            break;
        }
    }
    x
}

fn gauss_seidel(
    dtmc: &Dtmc,
    members: &[u32],
    comp: u32,
    comp_of: &[u32],
    rhs: &[f64],
    x: &mut [f64],
) {
    let mut local = vec![0u32; dtmc.n_states()];
    let block = Block::new(dtmc, members, comp, comp_of, &mut local);
    let mut xl = bicgstab(&block, rhs);
    let mut prev_change = f64::INFINITY;
    for _ in 0..MAX_SWEEPS {
        let mut change = 0.0f64;
        let mut size = 0.0f64;
        for i in 0..xl.len() {
            let off: f64 = (block.ptr[i]..block.ptr[i + 1])
                .map(|k| block.probs[k] * xl[block.cols[k] as usize])
                .sum();
            let new = (rhs[i] + off) / block.diag[i];
            change = change.max((new - xl[i]).abs());
            size = size.max(new.abs());
            xl[i] = new;
        }
        // Below a few ulps of the solution's size no sweep can improve it further.
        if change <= 4.0 * f64::EPSILON * size.max(1.0) {
            break;
        }
        // The rate estimate needs two sweeps; before that, keep going.
        let first = prev_change.is_infinite();
        let rho = (change / prev_change).min(0.999_999);
        prev_change = change;
        if !first && change * rho / (1.0 - rho) < SOLVE_TOLERANCE {
            break;
        }
    }
    for (i, &s) in members.iter().enumerate() {
        x[s as usize] = xl[i];
    }
}
