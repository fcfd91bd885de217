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

use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use super::data::{PropertyData, RunRecord, Toggles};

mod scorer;
mod segments;

pub use scorer::Scorer;
use scorer::Workspace;
pub use segments::Segments;

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
/// as [`greedy`] does.
pub fn greedy_from(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    start: &[usize],
) -> (Vec<Step>, Segments) {
    let (steps, segs, _) = greedy_refined(data, records, cfg, start, None);
    (steps, segs)
}

/// [`greedy_from`], where each step's best pool candidate may be replaced by the best of its finer
/// versions (`refine`) when one of those scores higher: the step's score is that of the better cut.
fn greedy_refined(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    start: &[usize],
    refine: Option<Refine<'_>>,
) -> Searched {
    let scorer = Scorer::new(data, records, cfg);
    let mut segs = Segments::initial(data);
    let mut chosen: Vec<usize> = Vec::new();
    let mut refined: Vec<Refined> = Vec::new();
    let mut score = scorer.score(&segs, None, 1, None);
    // The risks of the current set per fold: the parent of every set scored next (hierarchical only).
    let mut level = scorer.level(&segs, 1, None);
    let mut steps = vec![Step {
        candidate: None,
        score,
    }];
    let max_predicates = cfg.max_predicates.min(crate::spec::MAX_PROPERTY_PREDICATES);
    for c in taken_start(data, cfg, start) {
        let n_bits = chosen.len() as u32 + 1;
        segs = segs.with(data, &data.candidates[c], n_bits);
        chosen.push(c);
        score = scorer.score(&segs, None, n_bits + 1, level.as_ref());
        level = scorer.level(&segs, n_bits + 1, level.as_ref());
        steps.push(Step {
            candidate: Some(c),
            score,
        });
    }
    let usable: Vec<usize> = (0..data.candidates.len())
        .filter(|&c| !data.candidates[c].is_constant())
        .collect();
    // The better of two (score, index) pairs: the higher score, ties to the lower index.
    let better = |a: (f64, usize), b: (f64, usize)| {
        if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
            b
        } else {
            a
        }
    };
    while chosen.len() + 1 < max_predicates {
        let n_bits = chosen.len() as u32 + 1;
        // A candidate whose values on the training runs equal a chosen predicate's (a finer cut chosen
        // earlier that reads the same, or one between the same data values) adds no information: its
        // score could only differ by the smoothing of a larger state space, so it is not offered.
        let taken: Vec<&Toggles> = chosen
            .iter()
            .map(|&i| toggles_at(data, &refined, i))
            .collect();
        let duplicate = |t: &Toggles| taken.contains(&t);
        let mut singles: Vec<(f64, usize)> = usable
            .par_iter()
            .filter(|c| !chosen.contains(c) && !duplicate(&data.candidates[**c]))
            .map_init(Workspace::default, |ws, &c| {
                (
                    scorer.score_with(ws, &segs, Some(&data.candidates[c]), n_bits, level.as_ref()),
                    c,
                )
            })
            .collect();
        let Some((mut s, c)) = singles.iter().copied().reduce(better) else {
            break;
        };
        // The finer cuts of the chosen threshold, scored in its place.
        let mut finer: Option<(RefinedKind, Toggles)> = None;
        if let Some(refine) = refine {
            let alternatives = refine(c);
            let best_alt = alternatives
                .par_iter()
                .enumerate()
                .filter(|(_, t)| !t.is_constant() && !duplicate(t))
                .map_init(Workspace::default, |ws, (j, t)| {
                    (
                        scorer.score_with(ws, &segs, Some(t), n_bits, level.as_ref()),
                        j,
                    )
                })
                .reduce_with(better);
            if let Some((sa, j)) = best_alt.filter(|&(sa, _)| sa > s) {
                s = sa;
                finer = Some((RefinedKind::Cut(j), alternatives[j].clone()));
            }
        }
        let mut of = c;
        // Conjunctions of the step's best candidates with the chosen predicates and with each other, in
        // the single candidate's place.
        if cfg.conjunction_partners > 0 {
            singles.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let partners: Vec<usize> = singles
                .iter()
                .take(cfg.conjunction_partners)
                .map(|&(_, c)| c)
                .collect();
            // The left literal: a predicate chosen so far (not itself a conjunction), or one of the
            // partners before the right one (each pair once).
            let chosen_lefts: Vec<usize> = chosen
                .iter()
                .copied()
                .filter(|&i| {
                    !refined_at(data, &refined, i)
                        .is_some_and(|r| matches!(r.kind, RefinedKind::And { .. }))
                })
                .collect();
            let mut joined: Vec<(usize, RefinedKind, Toggles)> = Vec::new();
            for (j, &partner) in partners.iter().enumerate() {
                for &left in chosen_lefts.iter().chain(&partners[..j]) {
                    let left_of = refined_at(data, &refined, left).map(|r| r.of);
                    if left_of == Some(partner) || left == partner {
                        continue;
                    }
                    for (left_negated, negated) in
                        [(false, false), (false, true), (true, false), (true, true)]
                    {
                        let t = toggles_at(data, &refined, left).and(
                            &data.candidates[partner],
                            left_negated,
                            negated,
                        );
                        if !t.is_constant() && !duplicate(&t) {
                            let kind = RefinedKind::And {
                                left,
                                left_negated,
                                negated,
                            };
                            joined.push((partner, kind, t));
                        }
                    }
                }
            }
            let best_joined = joined
                .par_iter()
                .enumerate()
                .map_init(Workspace::default, |ws, (j, (_, _, t))| {
                    (
                        scorer.score_with(ws, &segs, Some(t), n_bits, level.as_ref()),
                        j,
                    )
                })
                .reduce_with(better);
            if let Some((sj, j)) = best_joined.filter(|&(sj, _)| sj > s + cfg.conjunction_margin) {
                s = sj;
                let (partner, kind, t) = joined.swap_remove(j);
                of = partner;
                finer = Some((kind, t));
            }
        }
        if s < score + cfg.min_gain {
            break;
        }
        let index = match finer {
            Some((kind, toggles)) => {
                segs = segs.with(data, &toggles, n_bits);
                refined.push(Refined { of, kind, toggles });
                data.candidates.len() + refined.len() - 1
            }
            None => {
                segs = segs.with(data, &data.candidates[c], n_bits);
                c
            }
        };
        chosen.push(index);
        score = s;
        level = scorer.level(&segs, n_bits + 1, level.as_ref());
        steps.push(Step {
            candidate: Some(index),
            score,
        });
    }
    (steps, segs, refined)
}

/// The candidates of `start` a search takes before its greedy steps, in order: those in the pool that
/// vary, each once, as many as the predicate limit leaves room for.
fn taken_start(data: &PropertyData, cfg: &SearchConfig, start: &[usize]) -> Vec<usize> {
    let max_predicates = cfg.max_predicates.min(crate::spec::MAX_PROPERTY_PREDICATES);
    let mut taken: Vec<usize> = Vec::new();
    for &c in start {
        let usable = data.candidates.get(c).is_some_and(|t| !t.is_constant());
        if usable && !taken.contains(&c) && taken.len() + 1 < max_predicates {
            taken.push(c);
        }
    }
    taken
}

/// [`greedy`] from nothing and [`greedy_from`] each of `starts`, every step's threshold refined by
/// `refine` when given: the search whose final set has the highest [`finalist_score`] (ties: the earlier
/// one), with the refined candidates it chose. A start is skipped when it takes nothing, repeats an
/// earlier start, or is what the search from nothing took first (it would repeat that search).
pub fn greedy_multi(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    starts: &[&[usize]],
    refine: Option<Refine<'_>>,
) -> Searched {
    greedy_multi_scored(data, records, cfg, starts, refine).0
}

/// What [`greedy_multi_alphas`] found: the smoothing searched under, and that search's result.
#[derive(Debug, Clone)]
pub struct AlphaChoice {
    /// The Laplace α.
    pub alpha: f64,
    /// Whether smoothing was hierarchical.
    pub hierarchical: bool,
    /// Its [`finalist_score`].
    pub score: f64,
    /// The steps (the first is the start).
    pub steps: Vec<Step>,
    /// The final segmentation.
    pub segs: Segments,
    /// The refined candidates the steps use.
    pub refined: Vec<Refined>,
    /// Where the search began: `None` from nothing, `Some(i)` from the `i`-th of the starts given.
    pub start: Option<usize>,
}

/// The smoothings (α, hierarchical) [`greedy_multi_alphas`] searches under for `cfg`, in order of
/// preference on ties.
pub fn smoothing_choices(cfg: &SearchConfig) -> Vec<(f64, bool)> {
    let alphas: &[f64] = if cfg.choose_alpha {
        &ALPHA_CHOICES
    } else {
        std::slice::from_ref(&cfg.alpha)
    };
    let mut out: Vec<(f64, bool)> = alphas.iter().map(|&a| (a, cfg.hierarchical)).collect();
    if cfg.choose_prior && !cfg.hierarchical {
        let hierarchical: &[f64] = if cfg.choose_alpha {
            &HIERARCHICAL_ALPHA_CHOICES
        } else {
            std::slice::from_ref(&cfg.alpha)
        };
        out.extend(hierarchical.iter().map(|&a| (a, true)));
    }
    out
}

/// [`greedy_multi`] under `cfg`'s smoothing, or, with [`SearchConfig::choose_alpha`] or
/// [`SearchConfig::choose_prior`], under each of [`smoothing_choices`], keeping the one whose result has
/// the highest [`finalist_score`] (ties: the earlier). Only the first smoothing searches from every
/// start; each further one searches once, from the start the first one's winner grew from (measured on
/// the held-out sets: as good, in a quarter less time than every start under every smoothing).
///
/// **Why α is chosen.** α is the pseudo-count that smoothing adds to every row of the chain. With a dozen
/// predicates most states are visited a handful of times, and add-one then pulls their risk towards what
/// their neighbours and `done` say as strongly as their own visits do: a state that led to a violation in
/// each of its three visits ranks below a state that safe runs pass through. A lighter α lets few visits
/// speak, and also lets chance speak; which is better depends on how much data each state has, so it is
/// decided like a predicate is, by the cross-validated criterion on the training runs (the finalist score
/// already compares searches on further fold assignments). Hierarchical smoothing changes what the pull
/// is towards (the coarser state's risk rather than ½), and whether that helps depends on the data in the
/// same way, so it is chosen the same way.
pub fn greedy_multi_alphas(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    starts: &[&[usize]],
    refine: Option<Refine<'_>>,
) -> AlphaChoice {
    let under = |(alpha, hierarchical): (f64, bool)| SearchConfig {
        alpha,
        hierarchical,
        ..*cfg
    };
    let search = |choice: (f64, bool)| {
        let cfg = under(choice);
        let ((steps, segs, refined), score, start) =
            greedy_multi_scored(data, records, &cfg, starts, refine);
        AlphaChoice {
            alpha: cfg.alpha,
            hierarchical: cfg.hierarchical,
            score,
            steps,
            segs,
            refined,
            start,
        }
    };
    // Under a further smoothing, the search from the start the first smoothing's winner grew from,
    // compared by the same finalist score.
    let again = |choice: (f64, bool), start: Option<usize>| {
        let cfg = under(choice);
        let mut found = greedy_one(
            data,
            records,
            &cfg,
            (start_at(starts, start), start),
            refine,
        );
        let fresh = fresh_scorers(data, records, &cfg);
        let toggles = chosen_toggles(data, &found.steps, &found.refined);
        found.score = finalist_score(&found.steps, &found.segs, &toggles, &fresh);
        found
    };
    let mut choices = smoothing_choices(cfg).into_iter();
    let first = choices.next().unwrap_or((cfg.alpha, cfg.hierarchical));
    let mut best = search(first);
    let start = best.start;
    for choice in choices {
        let next = again(choice, start);
        if next.score > best.score {
            best = next;
        }
    }
    best
}

/// [`greedy_multi`] with the winner's [`finalist_score`] and the start it grew from (as
/// [`AlphaChoice::start`]).
fn greedy_multi_scored(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    starts: &[&[usize]],
    refine: Option<Refine<'_>>,
) -> (Searched, f64, Option<usize>) {
    let fresh = fresh_scorers(data, records, cfg);
    let final_score =
        |r: &Searched| finalist_score(&r.0, &r.1, &chosen_toggles(data, &r.0, &r.2), &fresh);
    let mut best = greedy_refined(data, records, cfg, &[], refine);
    let mut best_score = final_score(&best);
    let mut best_start = None;
    // What the search from nothing took first: a start that equals a prefix of it adds nothing.
    let first_taken: Vec<usize> = best.0.iter().filter_map(|s| s.candidate).collect();
    let mut tried: Vec<Vec<usize>> = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        let taken = taken_start(data, cfg, start);
        if first_taken.starts_with(&taken) || tried.contains(&taken) {
            continue;
        }
        let next = greedy_refined(data, records, cfg, &taken, refine);
        tried.push(taken);
        let score = final_score(&next);
        if score > best_score {
            (best, best_score, best_start) = (next, score, Some(i));
        }
    }
    (best, best_score, best_start)
}

/// The predicates of the start an [`AlphaChoice::start`] names among `starts` (none: from nothing).
pub fn start_at<'a>(starts: &[&'a [usize]], index: Option<usize>) -> &'a [usize] {
    index.and_then(|i| starts.get(i).copied()).unwrap_or(&[])
}

/// One search from `start` (empty: from nothing) under `cfg`'s smoothing, every step's threshold refined
/// by `refine` when given: what [`greedy_multi_alphas`] runs under each further smoothing, and the fold
/// searches of [`super::nested::fold_searches`] run from the start it chose. `index` is recorded as its
/// [`AlphaChoice::start`]; its score is its own final cross-validated score, not compared on further
/// fold assignments (the caller scores it so where it compares).
pub fn greedy_one(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    (start, index): (&[usize], Option<usize>),
    refine: Option<Refine<'_>>,
) -> AlphaChoice {
    let (steps, segs, refined) = greedy_refined(data, records, cfg, start, refine);
    AlphaChoice {
        alpha: cfg.alpha,
        hierarchical: cfg.hierarchical,
        score: steps.last().map_or(f64::NEG_INFINITY, |s| s.score),
        steps,
        segs,
        refined,
        start: index,
    }
}

/// Scorers on `cfg.finalist_repeats` fold assignments other than the search's (seeds `seed + 1001`, ...).
pub fn fresh_scorers<'a>(
    data: &'a PropertyData,
    records: &'a [RunRecord],
    cfg: &SearchConfig,
) -> Vec<Scorer<'a>> {
    (1..=cfg.finalist_repeats as u64)
        .map(|i| {
            let seed = cfg.seed.wrapping_add(1000 + i);
            Scorer::new(data, records, &SearchConfig { seed, ..*cfg })
        })
        .collect()
}

/// The toggles of the predicates `steps` chose, in bit order (a refined candidate's from `refined`).
pub fn chosen_toggles<'t>(
    data: &'t PropertyData,
    steps: &[Step],
    refined: &'t [Refined],
) -> Vec<&'t Toggles> {
    steps
        .iter()
        .filter_map(|s| s.candidate)
        .map(|i| toggles_at(data, refined, i))
        .collect()
}

/// The refined candidate a [`Step::candidate`] index names (`None` for a pool candidate).
fn refined_at<'r>(data: &PropertyData, refined: &'r [Refined], i: usize) -> Option<&'r Refined> {
    i.checked_sub(data.candidates.len())
        .and_then(|r| refined.get(r))
}

/// The toggles of a [`Step::candidate`] index: a pool candidate's, or a refined one's.
fn toggles_at<'t>(data: &'t PropertyData, refined: &'t [Refined], i: usize) -> &'t Toggles {
    match i.checked_sub(data.candidates.len()) {
        Some(r) => &refined[r].toggles,
        None => &data.candidates[i],
    }
}

/// A search's result as [`greedy_multi`] compares it: the mean of its final score (`steps`' last) and the
/// score of its final set (segmentation `segs`, predicates `toggles`) under each of the `fresh` scorers.
pub fn finalist_score(
    steps: &[Step],
    segs: &Segments,
    toggles: &[&Toggles],
    fresh: &[Scorer<'_>],
) -> f64 {
    let own = steps.last().map_or(f64::NEG_INFINITY, |s| s.score);
    let n_bits = steps.len() as u32;
    let others: f64 = fresh
        .iter()
        .map(|s| {
            if s.is_hierarchical() {
                // The set's levels under that scorer's folds, one predicate at a time.
                s.score_toggles(toggles).0
            } else {
                s.score(segs, None, n_bits, None)
            }
        })
        .sum();
    (own + others) / (1 + fresh.len()) as f64
}

/// The score of a given predicate set (pool indices, in bit order after the unsafe predicate) and its
/// segmentation: how the fixed abstraction fares under the same criterion.
pub fn score_set(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    set: &[usize],
) -> (f64, Segments) {
    let toggles: Vec<&Toggles> = set.iter().map(|&c| &data.candidates[c]).collect();
    Scorer::new(data, records, cfg).score_toggles(&toggles)
}

/// The frame-share weights [`choose_share_weight`] compares, the chain alone first (it wins ties).
pub const SHARE_WEIGHTS: [f64; 4] = [0.0, 0.25, 0.5, 0.75];

/// How much of the frame share a property's risk mixes in ([`crate::share`]): the predicates `toggles`
/// (the search's result, in bit order) are scored under each of [`SHARE_WEIGHTS`] on the search's folds
/// and on its [`fresh_scorers`]' further fold assignments, and the weight with the highest mean wins
/// (ties: the lower weight). Returns it with every weight's mean score. The predicates were chosen with
/// the chain's risk alone; only the mix is chosen here, on the training runs like every choice of the
/// search.
pub fn choose_share_weight(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    toggles: &[&Toggles],
) -> (f64, Vec<f64>) {
    let mut best = (f64::NEG_INFINITY, 0.0);
    let mut scores = Vec::with_capacity(SHARE_WEIGHTS.len());
    for &w in &SHARE_WEIGHTS {
        let c = SearchConfig {
            share_weight: w,
            ..*cfg
        };
        let own = Scorer::new(data, records, &c).score_toggles(toggles).0;
        let fresh = fresh_scorers(data, records, &c);
        let others: f64 = fresh.iter().map(|f| f.score_toggles(toggles).0).sum();
        let mean = (own + others) / (1 + fresh.len()) as f64;
        scores.push(mean);
        if mean > best.0 {
            best = (mean, w);
        }
    }
    (best.1, scores)
}
