//! Greedy forward selection of a property's predicates, each step scored by k-fold cross-validation over
//! runs (see [`super::criterion`]).
//!
//! **One evaluation** (a predicate set S plus one candidate c) works on segments: every run's current
//! segmentation under S (maximal stretches of constant S-state) is merged with c's toggles, giving the
//! run's abstract trace under S ∪ {c} as `(first frame, state)` pairs. One pass over those counts, per
//! fold, self-loops (`length − 1` per segment) and transitions (one per segment boundary, plus the step
//! into `done` or the unsafe state). Per fold, the chain learned from the *other* folds is built exactly
//! as [`crate::estimate::build_dtmc`] builds it under [`crate::av::SmoothingScope::Observed`]: over the states
//! observed in training (a few hundred at most, however many predicates), with all unsafe states merged
//! into one absorbing state, solved by [`crate::reach::eventually`]; a held-out state never observed in
//! training gets the risk that smoothing gives it in the full model, `(2r + Σ x_v) / (2 + m)` over its m
//! observed one-predicate neighbours v (its row is α on itself and on each of those, and 2α on its
//! outcomes: 2αr on its unsafe neighbour and 2α(1 − r) on `done`, with r = ½ under flat smoothing). The
//! held-out runs are then scored segment by segment.
//!
//! **Hierarchical smoothing** ([`SearchConfig::hierarchical`]) takes r from the parent: the state of the
//! set without its last predicate, under the same fold's chain of that smaller set, itself smoothed
//! hierarchically (the unsafe predicate alone is flat). The greedy search keeps the current set's chains
//! per fold ([`Scorer::level`]) as it goes, so each candidate costs what it costs under flat smoothing;
//! a set scored on its own is built one predicate at a time ([`Scorer::score_toggles`]). The full model
//! computes the same parents from its counts projected onto the shorter predicate lists
//! ([`crate::property::SmoothingPrior::Hierarchical`]); a test checks that the two agree.
//!
//! The only difference from the model `avguard learn` then builds is the domain's validity rules, which
//! the search does not apply: observed transitions are physically possible, and smoothing here only
//! reaches observed states, so the two agree unless the rules reject an observed transition (counted in
//! [`crate::Counts::n_invalid`]); a test checks the agreement.
//!
//! Folds are drawn once per property, stratified (violating and safe runs are dealt out separately), from
//! a ChaCha8 stream seeded with the search seed: the result is a pure function of the data and the seed.
//! Candidates of one step are scored in parallel; the best (ties: the earlier in pool order) joins S when
//! it improves the score by at least [`SearchConfig::min_gain`].
//!
//! Greedy selection is myopic: from nothing it can settle on a set that scores below what the declared
//! predicates or the reactive rule's literals already score. [`greedy_multi`] therefore also starts from
//! given sets (taken whole, then extended greedily) and keeps the search whose final cross-validated score
//! is highest — a choice made on the training runs, like every step.
//!
//! The pool's thresholds sit at a few coarse quantiles of each signal, so the cut that separates
//! violations best usually falls between two of them. With a [`Refine`] each step, once its best candidate
//! is found, also scores that candidate's signal at a finer grid of cuts in its place and keeps the best
//! cut ([`Refined`]). Each start is then searched with refinement only: a better early step can lead the
//! myopic search to a lower final score, but measured on the residential runs the unrefined twin won 2
//! of 24 searches, each by less than 0.007, at the cost of every start searched twice.
//!
//! A start that the search from nothing already took as its first steps, in its order, would repeat
//! that search step for step, so it is not searched again.
//!
//! **Conjunctions** ([`SearchConfig::conjunction_partners`]). A state is the product of its predicates'
//! values, so every predicate splits every state: a cut that matters only in one corner of the state
//! space (a short time to collision *while not braking*) costs a bit that also splits all the others, and
//! their visits with it. With conjunctions each step, after its best single candidate (and that
//! candidate's finer cuts), also scores each of the step's best few single candidates joined with every
//! predicate chosen so far and with each other, `a ∧ b`, `a ∧ ¬b`, `¬a ∧ b` and `¬a ∧ ¬b`, as one
//! predicate: one bit that is set only in that corner. Joined with a chosen predicate it merges the
//! states that predicate's other side splits needlessly; joined with another candidate it adds the corner
//! without either half. It replaces the single candidate when it scores higher by
//! [`SearchConfig::conjunction_margin`] (the best of several hundred conjunctions on the same folds is
//! more optimistic than the best of the singles). A conjunction is never
//! joined again, so every predicate stays at most two readable literals
//! (`closestApproach.accTtc<=1.4 & jerk>0`).
//!
//! **Choosing among the searches.** Each search's final score is the best of the many its greedy steps
//! compared on the same folds, so it is optimistic, and the more so for a search whose steps happened to
//! fit those folds: the plain maximum over the searches picks that luck. [`greedy_multi`] therefore
//! compares its finalists on [`SearchConfig::finalist_repeats`] further fold assignments too (seeds after
//! the search's), each final set scored there as it stands, and keeps the highest mean of its own score
//! and those.
//!
//! **Choosing the smoothing.** With [`SearchConfig::choose_alpha`], [`greedy_multi_alphas`] runs all of
//! the above under the first Laplace α of [`ALPHA_CHOICES`], then, under each further α (and with
//! [`SearchConfig::choose_prior`] hierarchically under each of [`HIERARCHICAL_ALPHA_CHOICES`]), one search
//! from the start that won under the first, and keeps the smoothing whose search has the highest finalist
//! score (why: see that function).
//!
//! **The frame share.** With [`SearchConfig::share_weight`] above 0 every fold's risk mixes in its
//! states' frame share, counted on the training folds' frames ([`crate::share`]). The greedy search runs
//! at weight 0; [`choose_share_weight`] then compares the weights on its result.
//!
//! One search is `greedy`'s; `starts` runs it from several starts and under several smoothings and
//! compares the finalists; `scorer` scores one evaluation, on `segments`.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::sync::{Arc, OnceLock};

use super::data::{PropertyData, RunRecord, Toggles};

mod greedy;
mod scorer;
mod segments;
mod starts;

use greedy::greedy_refined;
pub use scorer::Scorer;
use scorer::Workspace;
pub use segments::Segments;
pub use starts::{
    choose_share_weight, chosen_toggles, finalist_score, fresh_scorers, greedy_multi,
    greedy_multi_alphas, greedy_one, score_set, smoothing_choices, start_at, AlphaChoice,
    SHARE_WEIGHTS,
};

/// Options of the search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchConfig {
    /// Most predicates, the unsafe one included (at most [`crate::spec::MAX_PROPERTY_PREDICATES`]).
    pub max_predicates: usize,
    /// Number of cross-validation folds (≥ 2).
    pub folds: usize,
    /// Seed of the fold assignment.
    pub seed: u64,
    /// Laplace α of the chains (as in the final model).
    pub alpha: f64,
    /// Smallest score improvement for which a predicate is added.
    pub min_gain: f64,
    /// Further fold assignments the searches' finalists are compared on (0: their own scores only).
    pub finalist_repeats: usize,
    /// Whether [`greedy_multi_alphas`] searches under each of [`ALPHA_CHOICES`] and keeps the α whose
    /// result compares best, rather than searching under `alpha` alone.
    pub choose_alpha: bool,
    /// Hierarchical smoothing: each state's smoothing mass on its outcomes (the unsafe state and `done`)
    /// is split by the risk of its parent state, the state of the set without the last predicate, rather
    /// than evenly (see [`crate::estimate::build_dtmc_with_prior`]).
    pub hierarchical: bool,
    /// Whether [`greedy_multi_alphas`] also searches under hierarchical smoothing, at each α of
    /// [`HIERARCHICAL_ALPHA_CHOICES`] (or at `alpha` without `choose_alpha`), and keeps whichever
    /// smoothing compares best.
    pub choose_prior: bool,
    /// Chains per property: 1 learns one; more learn an ensemble, their risks averaged with the first's.
    /// The further chains are searched with the smoothing the first chain's search chose: with
    /// [`SearchConfig::forest_nested`] (and a forest) they are the searches run without each fold
    /// ([`super::nested::fold_searches`]), beyond those and otherwise searches on every run under other
    /// fold assignments ([`super::member_seed`]).
    pub chains: usize,
    /// Weight of the frame share in every chain's risk ([`crate::share`]): 0 is the chain's reachability
    /// alone. The search runs at 0; [`choose_share_weight`] then compares the weights.
    pub share_weight: f64,
    /// Whether the auto model's risk mixes in the frame share with the weight [`choose_share_weight`]
    /// chooses (else the chain's risk alone).
    pub choose_share: bool,
    /// Conjunctions: each step also scores its this-many best candidates joined with every predicate
    /// chosen so far and with each other (either literal possibly negated) as one predicate, in place of
    /// the step's best single candidate (0: single candidates only; see the module docs).
    pub conjunction_partners: usize,
    /// How much more than the step's best single candidate a conjunction must score to take the step. A
    /// step scores many more conjunctions than single candidates on the same folds, so the best of them is
    /// the more optimistic; the margin asks for a gain that is not only that.
    pub conjunction_margin: f64,
    /// Trees of the auto model's forest ([`crate::forest`]): above 0, a forest of this many trees is
    /// grown and mixed into the property's risk with the weight
    /// [`super::forest::choose_forest_weight`] chooses (none at weight 0); 0 grows none.
    pub forest_trees: usize,
    /// Whether the forest's weight is chosen against chains whose predicates were searched without the
    /// fold they are scored on ([`super::nested::fold_searches`]: one more search per fold, which also
    /// gives an ensemble its further chains), rather than against the first chain's predicates, chosen
    /// on every run.
    pub forest_nested: bool,
    /// How the forest's trees are grown: bagged, boosted, or whichever the folds prefer.
    pub forest_kind: ForestKind,
}

/// How a forest's trees are grown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForestKind {
    /// Bagged: trees on seeded subsets of the runs, their leaf shares averaged.
    Bagged,
    /// Boosted ([`super::forest::boost`]): each tree fitted to what the trees before it left unexplained.
    Boosted,
    /// Both grown on the folds; the one whose best weight scores higher is kept (bagged on ties).
    Either,
    /// Both grown, each weight chosen on the folds, and both kept: a forest of both kinds whose risk is
    /// the mean of the risks with each forest alone ([`crate::forest`], "Both kinds").
    Both,
}

/// The Laplace α values a search chooses among ([`SearchConfig::choose_alpha`]): the paper's add-one
/// first, so that it wins ties, then two lighter pseudo-counts.
pub const ALPHA_CHOICES: [f64; 3] = [1.0, 0.3, 0.1];

/// The α values of hierarchical smoothing a search also tries with [`SearchConfig::choose_prior`]: under
/// it α is how strongly a state leans on its parent, and the lightest α of [`ALPHA_CHOICES`] barely
/// leans, so it is left out.
pub const HIERARCHICAL_ALPHA_CHOICES: [f64; 2] = [1.0, 0.3];

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            max_predicates: crate::spec::MAX_PROPERTY_PREDICATES,
            folds: 5,
            seed: 0,
            alpha: 1.0,
            min_gain: 0.002,
            finalist_repeats: 3,
            choose_alpha: false,
            hierarchical: false,
            choose_prior: false,
            chains: 1,
            share_weight: 0.0,
            choose_share: false,
            conjunction_partners: 0,
            conjunction_margin: 0.01,
            forest_trees: 0,
            forest_nested: false,
            forest_kind: ForestKind::Bagged,
        }
    }
}

/// Deals runs into `k` folds, violating and safe runs separately, in a seeded random order.
pub fn assign_folds(data: &PropertyData, k: usize, seed: u64) -> Vec<u8> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut fold = vec![0u8; data.runs.len()];
    for violated in [true, false] {
        let mut idx: Vec<usize> = (0..data.runs.len())
            .filter(|&i| data.runs[i].violated == violated)
            .collect();
        idx.shuffle(&mut rng);
        for (j, i) in idx.into_iter().enumerate() {
            fold[i] = (j % k) as u8;
        }
    }
    fold
}

/// One step of a search: the predicate added and the score after adding it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Index of the candidate (`None` for the start: the unsafe predicate alone): a pool index below
    /// `data.candidates.len()`, else the refined candidate `index − data.candidates.len()` of the search's
    /// [`Refined`] list.
    pub candidate: Option<usize>,
    /// Cross-validated score with it.
    pub score: f64,
}

/// Finer versions of a pool candidate for [`greedy_multi`]: for a threshold atom `signal<=c`, the toggles
/// of the same signal cut at other points, in a fixed order (empty for any other candidate).
pub type Refine<'r> = &'r (dyn Fn(usize) -> Arc<[Toggles]> + Sync);

/// A pool candidate's finer cuts, when it is a threshold atom: its signal's column and the cuts.
pub type Fine<'f> = &'f (dyn Fn(usize) -> Option<(usize, &'f [f64])> + Sync);

/// The toggles of each pool candidate's finer cuts over the runs of one [`PropertyData`], read from the
/// runs the first time a search asks for them (a [`Refine`] through [`RefineCache::get`]).
pub struct RefineCache<'a, 'f> {
    data: &'a PropertyData,
    records: &'a [RunRecord],
    fine: Fine<'f>,
    cells: Vec<OnceLock<Arc<[Toggles]>>>,
}

impl<'a, 'f> RefineCache<'a, 'f> {
    /// The cache of `data`'s pool candidates, whose cuts `fine` gives.
    pub fn new(data: &'a PropertyData, records: &'a [RunRecord], fine: Fine<'f>) -> Self {
        RefineCache {
            data,
            records,
            fine,
            cells: (0..data.candidates.len())
                .map(|_| OnceLock::new())
                .collect(),
        }
    }

    /// The toggles of candidate `c`'s finer cuts, in `fine`'s order (none for a candidate without).
    pub fn get(&self, c: usize) -> Arc<[Toggles]> {
        let read = || -> Arc<[Toggles]> {
            (self.fine)(c)
                .map(|(i, cs)| self.data.toggles_of_cuts(self.records, i, cs).into())
                .unwrap_or_default()
        };
        self.cells
            .get(c)
            .map_or_else(read, |cell| Arc::clone(cell.get_or_init(read)))
    }
}

/// A candidate a search built from the pool's and chose: a finer cut of a pool threshold, or a
/// conjunction, with its toggles.
#[derive(Debug, Clone)]
pub struct Refined {
    /// The pool candidate it refines or joins.
    pub of: usize,
    /// How it is built from `of`.
    pub kind: RefinedKind,
    /// Its toggles.
    pub toggles: Toggles,
}

/// How a [`Refined`] candidate is built from its pool candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefinedKind {
    /// The same signal at another cut: which alternative (index into what [`Refine`] returned for it).
    Cut(usize),
    /// `left ∧ of`, one predicate: `left` is a step's candidate index (a pool index — a chosen predicate
    /// or another of the step's best candidates — or a refined candidate's index from the pool's end, never
    /// itself a conjunction), each literal possibly negated.
    And {
        /// The other literal: a chosen predicate, or another of the step's best candidates.
        left: usize,
        /// Whether it is negated.
        left_negated: bool,
        /// Whether the pool candidate is negated.
        negated: bool,
    },
}

/// What one search gives: its steps (the first is the start), its final segmentation, and the refined
/// candidates its steps use.
pub type Searched = (Vec<Step>, Segments, Vec<Refined>);

/// Greedy forward selection over `data.candidates`; returns the steps taken (the first is the start) and
/// the final segmentation.
pub fn greedy(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
) -> (Vec<Step>, Segments) {
    greedy_from(data, records, cfg, &[])
}

/// Greedy forward selection that first takes the candidates `start` (pool indices, in order; constant
/// ones and repeats skipped), each recorded as a step with its score whatever it is, and then continues
/// as [`greedy`](greedy()) does.
pub fn greedy_from(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    start: &[usize],
) -> (Vec<Step>, Segments) {
    let (steps, segs, _) = greedy_refined(data, records, cfg, start, None);
    (steps, segs)
}
