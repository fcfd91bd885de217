//! Growing a boosted forest ([`crate::forest`], "Boosted trees") on a [`FrameTable`].
//!
//! **Why boosting.** A bagged forest averages trees that each answer the same question on a subset of
//! the runs, so its value takes few distinct levels and ranks the frames of one leaf alike. Boosting
//! grows each tree on what the trees before it left unexplained, so later trees separate frames the
//! earlier ones lumped together: the forest's value is a sum over many cuts, as a safety engineer's
//! score over several cues would be, rather than a vote of a few.
//!
//! **How.** Gradient boosting of the logistic loss (Friedman's TreeBoost): the forest starts from the
//! training frames' log-odds of "a violation follows within the horizon", smoothed by half a frame
//! each way. Each step fits a regression tree to the residuals `y − p` (target bit minus the current
//! probability) of the frames of a seeded [`SUBSAMPLE`] of the runs (by run, never by frame), split by
//! the least-squares gain `G₁²/n₁ + G₀²/n₀ − G²/n` (`G` a node's residual sum over its `n` frames),
//! best-first up to [`MAX_LEAVES`](super::MAX_LEAVES) leaves of at least [`MIN_LEAF_FRAMES`] frames,
//! through the loop the bagged trees are grown by (`grow_best_first`). Each leaf then takes one
//! Newton step, `ν · G / (H + λ)` with `H = Σ p(1 − p)`, learning rate [`LEARNING_RATE`] and ridge
//! [`LAMBDA`], clamped to ±[`MAX_BOOST_LEAF`].

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::{count, grow_best_first, FrameTable, MIN_LEAF_FRAMES, SUBSAMPLE};
use crate::forest::{logistic, Tree, MAX_BOOST_BASE, MAX_BOOST_LEAF};

/// Trees of a boosted forest.
pub const BOOSTED_TREES: usize = 100;
/// The learning rate ν: the share of each tree's Newton step the forest takes.
pub const LEARNING_RATE: f64 = 0.1;
/// The ridge λ added to a leaf's hessian sum, so that a leaf of near-certain frames takes a bounded
/// step.
pub const LAMBDA: f64 = 1.0;

/// A boosted forest as grown: base log-odds and trees (split predicates are table candidates).
#[derive(Debug, Clone, PartialEq)]
pub struct Boosted {
    /// The training frames' smoothed log-odds.
    pub base: f64,
    /// The trees, their leaves log-odds steps.
    pub trees: Vec<Tree>,
}

impl Boosted {
    /// The forest's value at frame `i` of `table`: `σ(base + Σ leaf)`.
    pub fn value(&self, table: &FrameTable, i: usize) -> f64 {
        logistic(self.base + self.sum(table, i))
    }

    fn sum(&self, table: &FrameTable, i: usize) -> f64 {
        self.trees
            .iter()
            .map(|t| t.value(|c| table.bit(c, i)))
            .sum()
    }
}

/// The frame indices of `mask`.
fn frames(mask: &[u64]) -> impl Iterator<Item = usize> + '_ {
    mask.iter().enumerate().flat_map(|(w, &word)| {
        let mut bits = word;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                w * 64 + i
            })
        })
    })
}

/// Grows `n_trees` boosted trees on the frames of the runs `runs` (indices in `data.runs` order);
/// deterministic for a seed.
pub fn grow_boosted(table: &FrameTable, runs: &[usize], n_trees: usize, seed: u64) -> Boosted {
    boost_with(table, runs, n_trees, SUBSAMPLE, seed)
}

/// [`grow_boosted`], each tree on the frames of a seeded share `subsample` of the runs.
pub(super) fn boost_with(
    table: &FrameTable,
    runs: &[usize],
    n_trees: usize,
    subsample: f64,
    seed: u64,
) -> Boosted {
    let train = table.mask_of(runs.iter().copied());
    let (n, p) = count(table, &train);
    let base = ((p as f64 + 0.5) / ((n - p) as f64 + 0.5))
        .ln()
        .clamp(-MAX_BOOST_BASE, MAX_BOOST_BASE);
    let mut score = vec![base; table.n_frames()];
    let mut residual = vec![0.0; table.n_frames()];
    let mut hessian = vec![0.0; table.n_frames()];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut trees = Vec::with_capacity(n_trees);
    for _ in 0..n_trees {
        for i in frames(&train) {
            let q = logistic(score[i]);
            let y = if table.target[i / 64] >> (i % 64) & 1 == 1 {
                1.0
            } else {
                0.0
            };
            residual[i] = y - q;
            hessian[i] = q * (1.0 - q);
        }
        let mut pick = runs.to_vec();
        pick.shuffle(&mut rng);
        let keep = ((subsample * pick.len() as f64).round() as usize).clamp(1, pick.len().max(1));
        pick.truncate(keep);
        let tree = grow_regression_tree(table, table.mask_of(pick), &residual, &hessian);
        for i in frames(&train) {
            score[i] += tree.value(|c| table.bit(c, i));
        }
        trees.push(tree);
    }
    Boosted { base, trees }
}

/// The best least-squares split of the frames `mask` (`n` of them, residual sum `g`).
fn best_split(
    table: &FrameTable,
    mask: &[u64],
    residual: &[f64],
    n: u64,
    g: f64,
) -> Option<(f64, usize)> {
    use rayon::prelude::*;
    let live: Vec<usize> = (0..mask.len()).filter(|&w| mask[w] != 0).collect();
    let parent = g * g / n.max(1) as f64;
    let sums: Vec<(u64, f64)> = table
        .cand
        .par_iter()
        .map(|bits| {
            let (mut n1, mut g1) = (0u64, 0.0);
            for &w in &live {
                let mut b = mask[w] & bits[w];
                n1 += u64::from(b.count_ones());
                while b != 0 {
                    g1 += residual[w * 64 + b.trailing_zeros() as usize];
                    b &= b - 1;
                }
            }
            (n1, g1)
        })
        .collect();
    let mut best: Option<(f64, usize)> = None;
    for (c, &(n1, g1)) in sums.iter().enumerate() {
        let n0 = n - n1;
        if n1 < MIN_LEAF_FRAMES || n0 < MIN_LEAF_FRAMES {
            continue;
        }
        let g0 = g - g1;
        let gain = g1 * g1 / n1 as f64 + g0 * g0 / n0 as f64 - parent;
        if gain > 1e-12 && best.is_none_or(|b| gain > b.0) {
            best = Some((gain, c));
        }
    }
    best
}

/// One regression tree on the frames `mask`, fitted to `residual`, each leaf the clamped Newton step.
fn grow_regression_tree(
    table: &FrameTable,
    mask: Vec<u64>,
    residual: &[f64],
    hessian: &[f64],
) -> Tree {
    let sums = |m: &[u64]| -> (u64, f64, f64) {
        frames(m).fold((0, 0.0, 0.0), |(n, g, h), i| {
            (n + 1, g + residual[i], h + hessian[i])
        })
    };
    grow_best_first(
        table,
        mask,
        |m| {
            let (_, g, h) = sums(m);
            (LEARNING_RATE * g / (h + LAMBDA)).clamp(-MAX_BOOST_LEAF, MAX_BOOST_LEAF)
        },
        |m| {
            let (n, g, _) = sums(m);
            best_split(table, m, residual, n, g)
        },
    )
}
