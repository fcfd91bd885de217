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
/// Two pivot steps share one pass over the rows below them: a row takes the first step's update and then
/// the second's in the same sweep, so the trailing matrix is read and written half as often as step by
/// step. Each entry still receives the same subtractions in the same order as in elimination one step at
/// a time ([`eliminate_stepwise`], kept as the tests' reference): the second step's pivot is chosen on its
/// column after the first step's update, which is applied to that column and to the right-hand side
/// before the shared pass, so the solution is the same to the bit.
///
/// Compiled once per vector width and chosen at run time by CPU feature (`multiversion`). The row
/// updates are independent multiplications and subtractions per element, which Rust never fuses into one
/// rounding, and the back substitution's sums stay in order, so every version rounds as the baseline
/// does: the solution is the same to the bit on every x86-64 machine, only faster with wider vectors.
#[multiversion::multiversion(targets("x86_64+avx512f+avx2+avx", "x86_64+avx2+avx"))]
fn eliminate(a: &mut [f64], rhs: &mut [f64], m: usize) -> Vec<f64> {
    // The first step's multiplier of each row below its pivot (0: the row is not updated).
    let mut first = vec![0.0; m];
    let mut col = 0;
    while col < m {
        pivot(a, rhs, m, col);
        let d = a[col * m + col];
        let next = col + 1;
        if next == m || d == 0.0 {
            // The last column, or a zero pivot: one step alone.
            step(a, rhs, m, col);
            col = next;
            continue;
        }
        // The first step's multipliers, and its update of the next column and of the right-hand side:
        // what the second step's pivot is chosen on and what its right-hand side reads.
        for r in next..m {
            let x = a[r * m + col];
            let f = if x == 0.0 { 0.0 } else { x / d };
            first[r] = f;
            if f != 0.0 {
                a[r * m + next] -= f * a[col * m + next];
                rhs[r] -= f * rhs[col];
            }
        }
        // The rows' multipliers move with them.
        first.swap(next, pivot(a, rhs, m, next));
        let (upper, lower) = a.split_at_mut(next * m);
        let row_1 = &upper[col * m + next + 1..col * m + m];
        let (pivot_row, below) = lower.split_at_mut(m);
        // The second pivot row takes the first step's update of its remaining columns.
        let f = first[next];
        if f != 0.0 {
            for (x, p) in pivot_row[next + 1..].iter_mut().zip(row_1) {
                *x -= f * p;
            }
        }
        let d2 = pivot_row[next];
        let row_2 = &pivot_row[next + 1..];
        for (row, r) in below.chunks_exact_mut(m).zip(next + 1..) {
            let f1 = first[r];
            let x = row[next];
            let f2 = if d2 == 0.0 || x == 0.0 { 0.0 } else { x / d2 };
            let rest = &mut row[next + 1..];
            match (f1 != 0.0, f2 != 0.0) {
                (true, true) => {
                    for ((x, p), q) in rest.iter_mut().zip(row_1).zip(row_2) {
                        *x = (*x - f1 * p) - f2 * q;
                    }
                }
                (true, false) => {
                    for (x, p) in rest.iter_mut().zip(row_1) {
                        *x -= f1 * p;
                    }
                }
                (false, true) => {
                    for (x, q) in rest.iter_mut().zip(row_2) {
                        *x -= f2 * q;
                    }
                }
                (false, false) => {}
            }
            if f2 != 0.0 {
                rhs[r] -= f2 * rhs[next];
            }
        }
        col = next + 1;
    }
    back_substitute(a, rhs, m)
}

/// The solution of the upper-triangular system that elimination leaves in `a` and `rhs`.
fn back_substitute(a: &[f64], rhs: &[f64], m: usize) -> Vec<f64> {
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

/// Partial pivoting at column `col`: swaps into row `col` the row at or below it whose entry in that
/// column is largest in magnitude (the last of equals); returns the row it came from.
#[inline(always)]
fn pivot(a: &mut [f64], rhs: &mut [f64], m: usize, col: usize) -> usize {
    let pivot = (col..m)
        .max_by(|&p, &q| a[p * m + col].abs().total_cmp(&a[q * m + col].abs()))
        .unwrap_or(col);
    if pivot != col {
        for k in 0..m {
            a.swap(col * m + k, pivot * m + k);
        }
        rhs.swap(col, pivot);
    }
    pivot
}

/// One elimination step at column `col`, its pivot in place: every row below with a nonzero entry there
/// takes the pivot row's multiple (inlined, so that the loop vectorises in each version of
/// [`eliminate`]). A zero pivot (singular only for a closed component, which the callers exclude) does
/// nothing.
#[inline(always)]
fn step(a: &mut [f64], rhs: &mut [f64], m: usize, col: usize) {
    let d = a[col * m + col];
    if d == 0.0 {
        return;
    }
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

/// [`eliminate`] one pivot step at a time: the reference its shared passes must equal to the bit.
#[cfg(test)]
fn eliminate_stepwise(a: &mut [f64], rhs: &mut [f64], m: usize) -> Vec<f64> {
    for col in 0..m {
        pivot(a, rhs, m, col);
        step(a, rhs, m, col);
    }
    back_substitute(a, rhs, m)
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};

    /// `I − A` for a random sub-stochastic `A` of `m` states with about `fill` of its entries nonzero,
    /// as a component's block is; with `wild`, arbitrary entries instead (pivots of every size, zero
    /// columns), so that every branch of the shared passes is taken.
    fn block(m: usize, fill: f64, wild: bool, seed: u64) -> (Vec<f64>, Vec<f64>) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut a = vec![0.0; m * m];
        let mut rhs = vec![0.0; m];
        for i in 0..m {
            let row: Vec<f64> = (0..m)
                .map(|_| {
                    if rng.random::<f64>() < fill {
                        // Some entries repeat, so that pivot candidates tie.
                        if rng.random::<f64>() < 0.2 {
                            0.25
                        } else {
                            rng.random::<f64>()
                        }
                    } else {
                        0.0
                    }
                })
                .collect();
            let sum: f64 = row.iter().sum::<f64>() + rng.random::<f64>();
            for (j, &p) in row.iter().enumerate() {
                a[i * m + j] = if wild {
                    p * if rng.random::<bool>() { -3.0 } else { 1.0 }
                } else {
                    f64::from(u8::from(i == j)) - p / sum
                };
            }
            rhs[i] = rng.random::<f64>() * f64::from(u8::from(rng.random::<f64>() < 0.5));
        }
        (a, rhs)
    }

    proptest! {
        /// Two steps in one pass round as one step at a time: every bit of the solution, and of the
        /// eliminated matrix's upper triangle and right-hand side.
        #[test]
        fn shared_passes_round_as_single_steps(
            m in 1usize..48,
            fill in 0.0f64..1.0,
            wild in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let (a, rhs) = block(m, fill, wild, seed);
            let (mut a1, mut r1) = (a.clone(), rhs.clone());
            let (mut a2, mut r2) = (a, rhs);
            let x1 = eliminate(&mut a1, &mut r1, m);
            let x2 = eliminate_stepwise(&mut a2, &mut r2, m);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&x1), bits(&x2));
            prop_assert_eq!(bits(&r1), bits(&r2));
            for r in 0..m {
                prop_assert_eq!(bits(&a1[r * m + r..(r + 1) * m]), bits(&a2[r * m + r..(r + 1) * m]));
            }
        }
    }

    /// At the largest dense size, and against the residual: the solution solves the system.
    #[test]
    fn the_largest_blocks_round_as_single_steps_and_solve_the_system() {
        for (seed, fill) in [(1, 0.02), (2, 0.2), (3, 1.0)] {
            let m = DENSE_MAX;
            let (a, rhs) = block(m, fill, false, seed);
            let (mut a1, mut r1) = (a.clone(), rhs.clone());
            let (mut a2, mut r2) = (a.clone(), rhs.clone());
            let x1 = eliminate(&mut a1, &mut r1, m);
            let x2 = eliminate_stepwise(&mut a2, &mut r2, m);
            assert!(x1.iter().zip(&x2).all(|(p, q)| p.to_bits() == q.to_bits()));
            for i in 0..m {
                let ax: f64 = (0..m).map(|j| a[i * m + j] * x1[j]).sum();
                assert!(
                    (ax - rhs[i]).abs() < 1e-9,
                    "row {i}: {ax} against {}",
                    rhs[i]
                );
            }
        }
    }
}
