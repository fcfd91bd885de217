//! Solving `x_s = b_s + Σ_j P(s,j)·x_j` component by component, in the order of a [`Decomposition`].
//!
//! Components come in reverse topological order, so every value a component depends on from outside is
//! final when it is solved. The caller seeds `x` with the known values (1 for targets and `prob1` states
//! in a reachability query, 0 elsewhere) and leaves the members of the components to solve at 0, so a
//! member's right-hand side is simply `b_s + Σ_j P(s,j)·x_j` over all its successors: members of its own
//! component still hold 0 and contribute nothing. Per component:
//! - one state: closed form `x = rhs / (1 − P(s,s))`;
//! - up to [`DENSE_MAX`] states: Gaussian elimination with partial pivoting on `(I − A)x = rhs`;
//! - larger: Jacobi-preconditioned BiCGSTAB on a cache-blocked local copy ([`BlockedMatrix`]) for speed,
//!   then Jacobi sweeps on the same copy to certify it. Plain "change below tolerance" is not an
//!   error bound for a slowly contracting iteration, so we estimate the contraction rate ρ from successive
//!   changes and stop only when `change·ρ/(1 − ρ)` (the geometric tail bound on the remaining error) is
//!   below [`SOLVE_TOLERANCE`], or when a sweep changes nothing beyond a few ulps.

use super::decompose::{Class, Decomposition};
use super::spmv::BlockedMatrix;
use super::SOLVE_TOLERANCE;
use crate::dtmc::Dtmc;

/// Largest component solved by dense elimination (n³/3 ≈ 6·10⁶ flops at this size).
pub const DENSE_MAX: usize = 256;

/// Iteration cap of the certifying sweeps on one component; reached only by pathological, nearly closed chains.
const MAX_SWEEPS: usize = 1_000_000;

/// Marks "not a member of the component being solved" in the local-index scratch array.
const NOT_MEMBER: u32 = u32::MAX;

/// Solves the components of `dec` whose class satisfies `solve`, in order, writing into `x`.
///
/// `x` must hold the final value of every state outside those components and 0 on their members; `b` is
/// the constant term (`None` for 0). Each solved component must be able to leave itself (true for the
/// `Maybe` components of a reachability query and for any component that reaches a target), so every
/// block `I − A` is nonsingular.
///
/// # Panics
/// If `x` (or `b`) is shorter than the number of states (a caller bug).
pub fn solve_components(
    dtmc: &Dtmc,
    dec: &Decomposition,
    solve: impl Fn(Class) -> bool,
    b: Option<&[f64]>,
    x: &mut [f64],
) {
    let n = dtmc.n_states();
    let (row_ptr, cols, probs) = dtmc.csr();
    let mut local = vec![NOT_MEMBER; n];
    let b_of = |s: usize| b.map_or(0.0, |b| b[s]);
    for c in 0..dec.len() {
        let (members, class) = dec.component(c);
        if !solve(class) {
            continue;
        }
        if let [s] = *members {
            let s = s as usize;
            let mut acc = b_of(s);
            let mut self_p = 0.0;
            for k in row_ptr[s]..row_ptr[s + 1] {
                let j = cols[k] as usize;
                if j == s {
                    self_p = probs[k];
                } else {
                    acc += probs[k] * x[j];
                }
            }
            x[s] = if self_p < 1.0 {
                acc / (1.0 - self_p)
            } else {
                0.0
            };
            continue;
        }
        for (i, &s) in members.iter().enumerate() {
            local[s as usize] = i as u32;
        }
        if members.len() <= DENSE_MAX {
            dense_solve(dtmc, members, &local, b, x);
        } else {
            solve_large(dtmc, members, &local, b, x);
        }
        for &s in members {
            local[s as usize] = NOT_MEMBER;
        }
    }
}

/// Dense elimination on a small component; `local` maps members to `0..m`, others to [`NOT_MEMBER`].
fn dense_solve(dtmc: &Dtmc, members: &[u32], local: &[u32], b: Option<&[f64]>, x: &mut [f64]) {
    let m = members.len();
    let (row_ptr, cols, probs) = dtmc.csr();
    let mut a = vec![0.0; m * m];
    let mut rhs = vec![0.0; m];
    for (i, &s) in members.iter().enumerate() {
        let s = s as usize;
        a[i * m + i] = 1.0;
        rhs[i] = b.map_or(0.0, |b| b[s]);
        for k in row_ptr[s]..row_ptr[s + 1] {
            let j = cols[k] as usize;
            match local[j] {
                NOT_MEMBER => rhs[i] += probs[k] * x[j],
                l => a[i * m + l as usize] -= probs[k],
            }
        }
    }
    let sol = eliminate(&mut a, &mut rhs, m);
    for (&s, &v) in members.iter().zip(&sol) {
        x[s as usize] = v;
    }
}

/// Gaussian elimination with partial pivoting on the row-major `m × m` matrix `a` and right-hand side
/// `rhs` (both overwritten), then back substitution; returns the solution.
///
/// Compiled once per vector width and chosen at run time by CPU feature (`multiversion`). The row
/// updates are independent multiplications and subtractions per element, which Rust never fuses into one
/// rounding, and the back substitution's sums stay in order, so every version rounds as the baseline
/// does: the solution is the same to the bit on every x86-64 machine, only faster with wider vectors.
#[multiversion::multiversion(targets("x86_64+avx512f+avx2+avx", "x86_64+avx2+avx"))]
fn eliminate(a: &mut [f64], rhs: &mut [f64], m: usize) -> Vec<f64> {
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
        // Rows below the pivot row, each updated from it: slices, so that the loop vectorises.
        let (upper, lower) = a.split_at_mut((col + 1) * m);
        let pivot_row = &upper[col * m + col..col * m + m];
        for (row, r) in lower.chunks_exact_mut(m).zip(col + 1..) {
            // Most entries are zero: skip them before dividing (the division would give 0 and skip too).
            if row[col] == 0.0 {
                continue;
            }
            let f = row[col] / d;
            if f != 0.0 {
                for (x, p) in row[col..].iter_mut().zip(pivot_row) {
                    *x -= f * p;
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
    /// Off-diagonal entries `p_ij` (i ≠ j, both members), cache-blocked.
    off: BlockedMatrix,
    /// `1 − P(i, i)`, the diagonal of `I − A`.
    diag: Vec<f64>,
}

impl Block {
    /// Builds the block and its right-hand side `b_s + Σ_{j outside} P(s,j)·x_j` in one pass over the
    /// members' rows (one random access per entry: `local[j]`).
    fn new(
        dtmc: &Dtmc,
        members: &[u32],
        local: &[u32],
        b: Option<&[f64]>,
        x: &[f64],
    ) -> (Block, Vec<f64>) {
        let (row_ptr, cols, probs) = dtmc.csr();
        let m = members.len();
        let mut diag = vec![1.0; m];
        let mut rhs = vec![0.0; m];
        // Row-major local entries first (sequential appends), then the blocked copy from them.
        let mut e_rows: Vec<u32> = Vec::new();
        let mut e_cols: Vec<u32> = Vec::new();
        let mut e_vals: Vec<f64> = Vec::new();
        for (i, &s) in members.iter().enumerate() {
            let s = s as usize;
            let mut acc = b.map_or(0.0, |b| b[s]);
            for k in row_ptr[s]..row_ptr[s + 1] {
                let j = cols[k] as usize;
                if j == s {
                    diag[i] = 1.0 - probs[k];
                } else {
                    match local[j] {
                        NOT_MEMBER => acc += probs[k] * x[j],
                        l => {
                            e_rows.push(i as u32);
                            e_cols.push(l);
                            e_vals.push(probs[k]);
                        }
                    }
                }
            }
            rhs[i] = acc;
        }
        let off = BlockedMatrix::from_row_major(m, || {
            e_rows
                .iter()
                .zip(&e_cols)
                .zip(&e_vals)
                .map(|((&r, &c), &v)| (r, c, v))
        });
        (Block { off, diag }, rhs)
    }

    /// `out = (I − A) y`.
    fn apply(&self, y: &[f64], out: &mut [f64]) {
        self.off.mul(y, out);
        for ((o, &d), &yi) in out.iter_mut().zip(&self.diag).zip(y) {
            *o = d * yi - *o;
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Jacobi-preconditioned BiCGSTAB on `(I − A)x = rhs`. Krylov methods converge in a few dozen products
/// where Gauss-Seidel needs thousands of sweeps on slowly mixing chains (long self-loops, rare exits).
/// Returns the iterate; the caller polishes it with Jacobi sweeps, whose stopping rule certifies accuracy.
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

/// Solves one large component: BiCGSTAB, then Jacobi sweeps `x ← D⁻¹(rhs + A_off·x)` with the blocked
/// product to certify the result (see the module docs for the stopping rule). After a converged Krylov
/// solve one sweep normally suffices; if BiCGSTAB broke down the sweeps carry the whole solve.
fn solve_large(dtmc: &Dtmc, members: &[u32], local: &[u32], b: Option<&[f64]>, x: &mut [f64]) {
    let (block, rhs) = Block::new(dtmc, members, local, b, x);
    let mut xl = bicgstab(&block, &rhs);
    let mut t = vec![0.0; xl.len()];
    let mut prev_change = f64::INFINITY;
    for _ in 0..MAX_SWEEPS {
        block.off.mul(&xl, &mut t);
        let mut change = 0.0f64;
        let mut size = 0.0f64;
        for (((xi, &ti), &ri), &d) in xl.iter_mut().zip(&t).zip(&rhs).zip(&block.diag) {
            let new = (ri + ti) / d;
            change = change.max((new - *xi).abs());
            size = size.max(new.abs());
            *xi = new;
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
    for (&s, &v) in members.iter().zip(&xl) {
        x[s as usize] = v;
    }
}
