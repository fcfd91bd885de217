//! Growing a property's forest ([`crate::forest`]) from the search's data, and choosing its weight.
//!
//! **Frames.** [`FrameTable`] lays out every kept frame of every run (a violating run without its unsafe
//! frame, as the frame share counts them) with one bitset per candidate and the target bitset "a
//! violation follows within the horizon". The data the search keeps as toggles become bits here: a
//! tree asks about single frames, not segments.
//!
//! **Trees.** Each tree is grown best-first, CART-style: a leaf is split on the candidate whose split most
//! lowers the frame-weighted Gini impurity, `p·(n − p)/n` for `n` frames of which `p` are followed by a
//! violation, both children keeping at least [`MIN_LEAF_FRAMES`] frames, until the tree has
//! [`MAX_LEAVES`] leaves or no split lowers the impurity. A leaf's value is `(p + α/2)/(n + α)`, the chain's
//! smoothing. Each tree sees a seeded [`SUBSAMPLE`] of the runs (bagging, by run, never by frame), so the
//! forest's mean is steadier than any one tree; its size is `--forest`.
//!
//! **Weight.** [`choose_forest_weight`] scores the mix on the search's folds with the search's criterion
//! ([`super::criterion`]): per fold, a forest grown on the other folds' runs and the first chain's risks
//! learned without the fold ([`super::search::Scorer::fold_risks`]), each held-out frame's risk the mix
//! at each weight of [`FOREST_WEIGHTS`]. The highest mean score wins, ties to the lower weight, so a
//! property whose chain already warns as well keeps weight 0 and no forest.
//!
//! Offline, bagged trees mixed at weight ½ lengthened the ≤ 40 % lead on held-out residential runs of the
//! independent-intersection generator from 1.70 s to 2.1–2.2 s (docs/MEASUREMENTS.md, sessions 12 and 13).

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::criterion::{add_fold_utility, push_envelope, strict_budget_recall, BUDGETS};
use super::data::{PropertyData, RunRecord, Toggles};
pub use super::search::ForestKind;
use super::search::{Scorer, SearchConfig, Segments};
use crate::forest::{Node, Tree};

/// Most leaves per tree.
pub const MAX_LEAVES: usize = 16;
/// Fewest training frames per leaf.
pub const MIN_LEAF_FRAMES: u64 = 50;
/// Share of the runs each tree is grown on.
pub const SUBSAMPLE: f64 = 0.7;
/// The horizon, in seconds, of the violations the trees learn to foresee: the lead the product aims
/// for on the independent intersection (2 s), with a margin.
pub const HORIZON_S: f64 = 3.0;
/// The forest weights [`choose_forest_weight`] compares, no forest first (it wins ties).
pub const FOREST_WEIGHTS: [f64; 4] = [0.0, 0.25, 0.5, 0.75];

pub mod boost;

/// How a property's forest was chosen on the folds.
#[derive(Debug, Clone, PartialEq)]
pub struct ForestChoice {
    /// The kind of trees the scores are of: the kind kept ([`ForestKind::Bagged`] or
    /// [`ForestKind::Boosted`]).
    pub kind: ForestKind,
    /// The cross-validated score of each weight of [`FOREST_WEIGHTS`] for that kind; empty when no
    /// forest was grown.
    pub scores: Vec<f64>,
    /// Under [`ForestKind::Either`], the best score of the kind not kept.
    pub other_best: Option<f64>,
    /// Under [`ForestKind::Either`], whether the boosted forest scored higher but was not kept, because
    /// it warned of fewer held-out violations at the strictest budget ([`prefer_boosted`]).
    pub boosted_vetoed: bool,
    /// Under [`ForestKind::Both`], the boosted forest's score of each weight (`scores` are then the
    /// bagged forest's).
    pub boosted_scores: Vec<f64>,
}

impl Default for ForestChoice {
    /// No forest grown.
    fn default() -> Self {
        ForestChoice {
            kind: ForestKind::Bagged,
            scores: Vec::new(),
            other_best: None,
            boosted_vetoed: false,
            boosted_scores: Vec::new(),
        }
    }
}

/// The first best weight of [`FOREST_WEIGHTS`] by fold scores `scores` (one per weight), as
/// [`choose_forest_weight`] takes it; 0 without scores.
pub fn best_weight(scores: &[f64]) -> f64 {
    if scores.is_empty() {
        0.0
    } else {
        FOREST_WEIGHTS[first_best(scores)]
    }
}

/// The index of the first highest of `scores` (0 when empty): ties keep the lower weight.
fn first_best(scores: &[f64]) -> usize {
    (0..scores.len()).fold(0, |b, i| if scores[i] > scores[b] { i } else { b })
}

/// Under [`ForestKind::Either`], whether the boosted forest is kept rather than the bagged one, from
/// each kind's fold scores and pooled strict-budget recalls per weight of [`FOREST_WEIGHTS`] (as
/// [`choose_forest_weight_with_recall`] gives them): when its best score is higher and, at the weight
/// that score is of, it warns of at least as many held-out violations at the strictest budget as the
/// bagged forest at its own weight. The score lets a few more misses be bought with earlier warnings of
/// the rest; on the priority road that trade cost boosted forests up to a quarter of the collisions at
/// ≤ 5 % false alarms on new runs (docs/MEASUREMENTS.md, session 34), so the misses get a veto.
pub fn prefer_boosted(bagged: (&[f64], &[f64]), boosted: (&[f64], &[f64])) -> bool {
    // The weight a kind's scores choose: the first best, as `choose_forest_weight` takes it.
    let (b, g) = (first_best(bagged.0), first_best(boosted.0));
    match (
        bagged.0.get(b),
        boosted.0.get(g),
        bagged.1.get(b),
        boosted.1.get(g),
    ) {
        (Some(sb), Some(sg), Some(rb), Some(rg)) => sg > sb && rg >= rb,
        _ => false,
    }
}

/// A forest as grown, its split predicates table candidates.
#[derive(Debug, Clone, PartialEq)]
pub enum Grown {
    /// Bagged trees (leaf shares).
    Bagged(Vec<Tree>),
    /// A boosted forest.
    Boosted(boost::Boosted),
}

impl Grown {
    /// Grows a forest of `kind` ([`ForestKind::Either`] and [`ForestKind::Both`] grow bagged) on the runs `runs`:
    /// `n_trees` bagged trees smoothed by `alpha`, or [`boost::BOOSTED_TREES`] boosted ones.
    pub fn grow(
        kind: ForestKind,
        table: &FrameTable,
        runs: &[usize],
        n_trees: usize,
        alpha: f64,
        seed: u64,
    ) -> Grown {
        match kind {
            ForestKind::Boosted => {
                Grown::Boosted(boost::grow_boosted(table, runs, boost::BOOSTED_TREES, seed))
            }
            ForestKind::Bagged | ForestKind::Either | ForestKind::Both => {
                Grown::Bagged(grow_forest(table, runs, n_trees, alpha, seed))
            }
        }
    }

    /// The forest's value at frame `i` of `table`.
    fn value(&self, table: &FrameTable, i: usize) -> f64 {
        match self {
            Grown::Bagged(trees) => forest_value(table, trees, i),
            Grown::Boosted(b) => b.value(table, i),
        }
    }
}

/// Every kept frame of one property's runs as bits.
#[derive(Debug, Clone)]
pub struct FrameTable {
    /// Per run (in `data.runs` order): its first frame's index in the table and its kept frames.
    runs: Vec<(usize, usize)>,
    n_frames: usize,
    words: usize,
    /// Per candidate: one bit per frame.
    cand: Vec<Vec<u64>>,
    /// One bit per frame: a violation follows within the horizon.
    target: Vec<u64>,
}

impl FrameTable {
    /// The kept frames of `data`'s runs, with the bits of `candidates` (toggles over the same runs) and
    /// the target "the run's violation is at most `horizon_steps` frames later".
    pub fn new(data: &PropertyData, candidates: &[&Toggles], horizon_steps: u32) -> FrameTable {
        let mut runs = Vec::with_capacity(data.runs.len());
        let mut n_frames = 0usize;
        for run in &data.runs {
            let kept = run.n as usize - usize::from(run.violated);
            runs.push((n_frames, kept));
            n_frames += kept;
        }
        let words = n_frames.div_ceil(64).max(1);
        let mut target = vec![0u64; words];
        for (run, &(start, kept)) in data.runs.iter().zip(&runs) {
            if run.violated {
                // Frame k is followed by the violation (frame n − 1) n − 1 − k frames later.
                let from = kept.saturating_sub(horizon_steps as usize);
                for k in from..kept {
                    set(&mut target, start + k);
                }
            }
        }
        let cand = {
            use rayon::prelude::*;
            candidates
                .par_iter()
                .map(|t| bits_of(t, &runs, words))
                .collect()
        };
        FrameTable {
            runs,
            n_frames,
            words,
            cand,
            target,
        }
    }

    /// Number of frames.
    pub fn n_frames(&self) -> usize {
        self.n_frames
    }

    /// The value of candidate `c` (its index among the table's candidates) at frame `i`.
    fn bit(&self, c: usize, i: usize) -> bool {
        self.cand[c][i / 64] >> (i % 64) & 1 == 1
    }

    /// The frames of the runs `runs` (indices in `data.runs` order) as a mask.
    fn mask_of(&self, runs: impl IntoIterator<Item = usize>) -> Vec<u64> {
        let mut mask = vec![0u64; self.words];
        for r in runs {
            let (start, kept) = self.runs[r];
            for i in start..start + kept {
                set(&mut mask, i);
            }
        }
        mask
    }
}

fn set(bits: &mut [u64], i: usize) {
    bits[i / 64] |= 1 << (i % 64);
}

/// A candidate's toggles as one bit per kept frame.
fn bits_of(t: &Toggles, runs: &[(usize, usize)], words: usize) -> Vec<u64> {
    let mut bits = vec![0u64; words];
    for (r, &(start, kept)) in runs.iter().enumerate() {
        let (init, toggles) = t.run(r);
        let mut value = init;
        let mut from = 0usize;
        for k in toggles
            .iter()
            .map(|&k| k as usize)
            .chain(std::iter::once(kept))
        {
            let to = k.min(kept);
            if value {
                for i in start + from..start + to {
                    set(&mut bits, i);
                }
            }
            if to == kept {
                break;
            }
            value = !value;
            from = to;
        }
    }
    bits
}

/// Frame-weighted Gini impurity (halved): `p·(n − p)/n`, 0 for no frame.
fn impurity(n: u64, p: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        p as f64 * (n - p) as f64 / n as f64
    }
}

/// The frames of `mask` and how many of them are followed by a violation.
fn count(table: &FrameTable, mask: &[u64]) -> (u64, u64) {
    mask.iter()
        .zip(&table.target)
        .fold((0, 0), |(n, p), (&a, &t)| {
            (
                n + u64::from(a.count_ones()),
                p + u64::from((a & t).count_ones()),
            )
        })
}

/// The best split of the frames `mask` (`n` of them, `p` followed by a violation): its Gini gain and
/// candidate.
fn best_split(table: &FrameTable, mask: &[u64], n: u64, p: u64) -> Option<(f64, usize)> {
    let live: Vec<usize> = (0..mask.len()).filter(|&w| mask[w] != 0).collect();
    let positive: Vec<u64> = live.iter().map(|&w| mask[w] & table.target[w]).collect();
    let parent = impurity(n, p);
    let mut best: Option<(f64, usize)> = None;
    for (c, bits) in table.cand.iter().enumerate() {
        let (mut n1, mut p1) = (0u64, 0u64);
        for (j, &w) in live.iter().enumerate() {
            n1 += u64::from((mask[w] & bits[w]).count_ones());
            p1 += u64::from((positive[j] & bits[w]).count_ones());
        }
        let (n0, p0) = (n - n1, p - p1);
        if n1 < MIN_LEAF_FRAMES || n0 < MIN_LEAF_FRAMES {
            continue;
        }
        let gain = parent - impurity(n1, p1) - impurity(n0, p0);
        if gain > 1e-12 && best.is_none_or(|b| gain > b.0) {
            best = Some((gain, c));
        }
    }
    best
}

/// Grows one tree on the frames `mask`; split predicates are the table's candidate indices. `alpha`
/// smooths the leaves.
pub fn grow_tree(table: &FrameTable, mask: Vec<u64>, alpha: f64) -> Tree {
    grow_best_first(
        table,
        mask,
        |m| {
            let (n, p) = count(table, m);
            (p as f64 + alpha / 2.0) / (n as f64 + alpha)
        },
        |m| {
            let (n, p) = count(table, m);
            best_split(table, m, n, p)
        },
    )
}

/// A leaf being grown: its node, frames and best split (gain, candidate).
struct Growing {
    node: usize,
    mask: Vec<u64>,
    best: Option<(f64, usize)>,
}

/// Grows one tree best-first on the frames `mask`, the bagged and the boosted trees alike: the open leaf
/// whose best split gains most (the first on ties) is split, until the tree has [`MAX_LEAVES`] leaves or
/// no leaf has a split. `leaf` gives the value of a leaf's frames, `best_split` their best split's gain and
/// candidate (table index), or none.
pub(super) fn grow_best_first(
    table: &FrameTable,
    mask: Vec<u64>,
    leaf: impl Fn(&[u64]) -> f64,
    best_split: impl Fn(&[u64]) -> Option<(f64, usize)>,
) -> Tree {
    let mut nodes = vec![Node::Leaf(leaf(&mask))];
    let mut open = vec![Growing {
        node: 0,
        best: best_split(&mask),
        mask,
    }];
    let mut leaves = 1;
    while leaves < MAX_LEAVES {
        let Some(at) = (0..open.len())
            .filter(|&i| open[i].best.is_some())
            .max_by(|&a, &b| {
                let (ga, gb) = (
                    open[a].best.map_or(0.0, |x| x.0),
                    open[b].best.map_or(0.0, |x| x.0),
                );
                ga.total_cmp(&gb).then(b.cmp(&a))
            })
        else {
            break;
        };
        let grown = open.swap_remove(at);
        let Some((_, c)) = grown.best else {
            break;
        };
        let (yes, no) = (nodes.len(), nodes.len() + 1);
        nodes[grown.node] = Node::Split {
            predicate: c as u32,
            yes: yes as u32,
            no: no as u32,
        };
        for (node, holds) in [(yes, true), (no, false)] {
            let m: Vec<u64> = grown
                .mask
                .iter()
                .zip(&table.cand[c])
                .map(|(&m, &b)| if holds { m & b } else { m & !b })
                .collect();
            nodes.push(Node::Leaf(leaf(&m)));
            open.push(Growing {
                node,
                best: best_split(&m),
                mask: m,
            });
        }
        leaves += 1;
    }
    Tree { nodes }
}

/// Grows `n_trees` trees, each on a seeded [`SUBSAMPLE`] of the runs `runs` (indices in `data.runs`
/// order), in parallel; deterministic for a seed.
pub fn grow_forest(
    table: &FrameTable,
    runs: &[usize],
    n_trees: usize,
    alpha: f64,
    seed: u64,
) -> Vec<Tree> {
    use rayon::prelude::*;
    (0..n_trees)
        .into_par_iter()
        .map(|j| {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
                seed.wrapping_add((j as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03)),
            );
            let mut pick = runs.to_vec();
            pick.shuffle(&mut rng);
            let keep =
                ((SUBSAMPLE * pick.len() as f64).round() as usize).clamp(1, pick.len().max(1));
            pick.truncate(keep);
            grow_tree(table, table.mask_of(pick), alpha)
        })
        .collect()
}

/// `trees` as a forest stores them: split predicates renumbered in first-use order (tree by tree, node by
/// node), each named by `text` of its table candidate. Returns the texts and the trees.
pub fn renumbered(trees: Vec<Tree>, text: impl Fn(usize) -> String) -> (Vec<String>, Vec<Tree>) {
    let mut used: Vec<usize> = Vec::new();
    let trees = trees
        .into_iter()
        .map(|t| Tree {
            nodes: t
                .nodes
                .into_iter()
                .map(|n| match n {
                    Node::Split { predicate, yes, no } => {
                        let c = predicate as usize;
                        let i = used.iter().position(|&u| u == c).unwrap_or_else(|| {
                            used.push(c);
                            used.len() - 1
                        });
                        Node::Split {
                            predicate: i as u32,
                            yes,
                            no,
                        }
                    }
                    leaf => leaf,
                })
                .collect(),
        })
        .collect();
    (used.into_iter().map(text).collect(), trees)
}

/// A held-out frame in [`choose_forest_weight`]: the fold chain's risk, the fold forest's value, and the
/// time to the run's end (its violation, for a violating run).
struct HeldFrame {
    chain: f64,
    forest: f64,
    lead: f64,
}

/// The mean leaf value of `trees` at frame `i` of `table`.
fn forest_value(table: &FrameTable, trees: &[Tree], i: usize) -> f64 {
    let sum: f64 = trees.iter().map(|t| t.value(|c| table.bit(c, i))).sum();
    sum / trees.len().max(1) as f64
}

/// One weight's held-out runs of every fold: the safe runs' highest risks and the violating runs'
/// envelopes.
#[derive(Clone, Default)]
struct Pooled {
    safe_max: Vec<f64>,
    envelopes: Vec<Vec<(f64, f64)>>,
}

/// [`Scorer::fold_risks`] as the fold chains [`choose_forest_weight`] reads: one segmentation, each
/// fold's risks.
pub fn shared_chains((segs, risks): &(Segments, Vec<Vec<f64>>)) -> Vec<(&Segments, &[f64])> {
    risks.iter().map(|r| (segs, r.as_slice())).collect()
}

/// The forest weight, among [`FOREST_WEIGHTS`], whose mix scores best on the folds of `cfg`, with each
/// weight's score (see the module docs). `chains` holds, per fold of `cfg`, the chain whose risks the
/// mix reads for the fold's held-out runs: its predicates' segmentation over every run of `data` and the
/// risk of every state learned without the fold ([`Scorer::fold_risks`] of the first chain's
/// predicates, or [`super::nested::fold_searches`]). `table` holds the frames of `data`'s runs, `n_trees`
/// is the forest's size, `alpha` the leaves' smoothing.
pub fn choose_forest_weight(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    chains: &[(&Segments, &[f64])],
    table: &FrameTable,
    trees: (ForestKind, usize),
    alpha: f64,
) -> (f64, Vec<f64>) {
    let (w, scores, _) =
        choose_forest_weight_with_recall(data, records, cfg, chains, table, trees, alpha);
    (w, scores)
}

/// [`choose_forest_weight`], and each weight's recall at the strictest budget over the folds' held-out
/// runs pooled ([`strict_budget_recall`]: one level placed on every fold's safe runs at once, so that
/// the budget allows more than a fold's few alarms).
pub fn choose_forest_weight_with_recall(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    chains: &[(&Segments, &[f64])],
    table: &FrameTable,
    (kind, n_trees): (ForestKind, usize),
    alpha: f64,
) -> (f64, Vec<f64>, Vec<f64>) {
    let scorer = Scorer::new(data, records, cfg);
    let folds = scorer.folds();
    let mut totals = vec![0.0; FOREST_WEIGHTS.len()];
    let mut n_violating = 0usize;
    let mut pooled = vec![Pooled::default(); FOREST_WEIGHTS.len()];
    for (f, &(segs, risks)) in chains.iter().enumerate() {
        let train: Vec<usize> = (0..data.runs.len())
            .filter(|&r| folds[r] as usize != f)
            .collect();
        let grown = Grown::grow(
            kind,
            table,
            &train,
            n_trees,
            alpha,
            cfg.seed.wrapping_add(f as u64),
        );
        // Per held-out run: whether it violates, and its kept frames.
        let held: Vec<(bool, Vec<HeldFrame>)> = (0..data.runs.len())
            .filter(|&r| folds[r] as usize == f)
            .map(|r| {
                let run = data.runs[r];
                let (start, kept) = table.runs[r];
                let states = segs.frame_states(r, run.n);
                let t = &records[run.record].t;
                let t_viol = t[run.n as usize - 1];
                let frames = (0..kept)
                    .map(|i| HeldFrame {
                        chain: risks.get(states[i] as usize).copied().unwrap_or(1.0),
                        forest: grown.value(table, start + i),
                        lead: t_viol - t[i],
                    })
                    .collect();
                (run.violated, frames)
            })
            .collect();
        n_violating += held.iter().filter(|h| h.0).count();
        for ((total, &w), pool) in totals.iter_mut().zip(&FOREST_WEIGHTS).zip(&mut pooled) {
            let mix = |x: &HeldFrame| (1.0 - w) * x.chain + w * x.forest;
            let mut safe_max: Vec<f64> = held
                .iter()
                .filter(|h| !h.0)
                .map(|h| h.1.iter().map(mix).fold(f64::NEG_INFINITY, f64::max))
                .collect();
            let envelopes: Vec<Vec<(f64, f64)>> = held
                .iter()
                .filter(|h| h.0)
                .map(|h| {
                    let mut env = Vec::new();
                    for x in &h.1 {
                        push_envelope(&mut env, mix(x), x.lead);
                    }
                    env
                })
                .collect();
            add_fold_utility(total, &mut safe_max, &envelopes);
            pool.safe_max.extend(safe_max);
            pool.envelopes.extend(envelopes);
        }
    }
    let recalls: Vec<f64> = pooled
        .iter_mut()
        .map(|p| strict_budget_recall(&mut p.safe_max, &p.envelopes))
        .collect();
    let denom = (n_violating * BUDGETS.len()).max(1) as f64;
    let scores: Vec<f64> = totals.iter().map(|t| t / denom).collect();
    (FOREST_WEIGHTS[first_best(&scores)], scores, recalls)
}

#[cfg(test)]
mod tests;
