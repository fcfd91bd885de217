//! Cache-blocked sparse matrix-vector product, the inner loop of every large solve.
//!
//! Why: on a large chain (2^20 states, ~10 successors each) the vector `x` of a plain CSR product is 8 MiB
//! and every entry gathers `x[j]` from a random place in it, so the product is bound by cache misses
//! (~0.25 s per product measured on the development machine). Here the entries are grouped by column
//! block of [`BLOCK_COLS`] states (256 KiB of `x`, which stays in L2 while the block is processed) and,
//! within a block, kept in row order, so the output is written in a forward sweep that the hardware
//! prefetcher follows. The same product then takes about a third of the time.
//!
//! Within one row, entries are still added in increasing column order (blocks are column ranges visited in
//! order), so `y = A·x` is bit-for-bit the row-order CSR sum `Σ_j A(i,j)·x(j)`.

/// log2 of the number of columns per block: 2^15 states = 256 KiB of `f64`.
const BLOCK_SHIFT: u32 = 15;

/// Columns per block.
pub const BLOCK_COLS: usize = 1 << BLOCK_SHIFT;

/// A square sparse matrix stored as column-blocked coordinates (see module docs).
#[derive(Debug, Clone, Default)]
pub struct BlockedMatrix {
    /// Number of rows (and columns).
    n: usize,
    /// Row of each entry.
    rows: Vec<u32>,
    /// Column of each entry.
    cols: Vec<u32>,
    /// Value of each entry.
    vals: Vec<f64>,
}

impl BlockedMatrix {
    /// Builds the matrix from entries `(row, col, value)` given in row-major order (rows increasing, columns
    /// increasing within a row), as a CSR walk produces them. `entries` is called twice (count, then fill).
    ///
    /// # Panics
    /// If a row or column is `>= n` or `n` exceeds `u32` (caller bugs: indices come from a valid chain).
    pub fn from_row_major<I, F>(n: usize, entries: F) -> BlockedMatrix
    where
        F: Fn() -> I,
        I: Iterator<Item = (u32, u32, f64)>,
    {
        assert!(u32::try_from(n).is_ok(), "matrix too large for u32 indices");
        let n_blocks = n.div_ceil(BLOCK_COLS).max(1);
        let mut start = vec![0usize; n_blocks + 1];
        for (r, c, _) in entries() {
            assert!((r as usize) < n && (c as usize) < n, "entry out of range");
            start[(c >> BLOCK_SHIFT) as usize + 1] += 1;
        }
        for b in 0..n_blocks {
            start[b + 1] += start[b];
        }
        let nnz = start[n_blocks];
        let (mut rows, mut cols, mut vals) = (vec![0u32; nnz], vec![0u32; nnz], vec![0.0; nnz]);
        // `start` becomes the fill cursor of each block; a stable scatter keeps row order inside blocks.
        for (r, c, v) in entries() {
            let b = (c >> BLOCK_SHIFT) as usize;
            let k = start[b];
            rows[k] = r;
            cols[k] = c;
            vals[k] = v;
            start[b] += 1;
        }
        BlockedMatrix {
            n,
            rows,
            cols,
            vals,
        }
    }

    /// Number of rows.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.vals.len()
    }

    /// `y = A·x`.
    ///
    /// # Panics
    /// If `x` or `y` is shorter than [`BlockedMatrix::n`].
    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        let (x, y) = (&x[..self.n], &mut y[..self.n]);
        y.fill(0.0);
        for ((&r, &c), &v) in self.rows.iter().zip(&self.cols).zip(&self.vals) {
            y[r as usize] += v * x[c as usize];
        }
    }
}
