//! The first chain as the search would have chosen it without each fold: for choosing a forest's weight
//! on folds the chain's predicates never saw.
//!
//! [`super::forest::choose_forest_weight`] compares the chain alone with the chain mixed with a forest,
//! each scored on the search's folds by a model learned without the fold. The forest is grown without
//! the fold; but the chain's predicates were chosen by the search to score best on those very folds, so
//! its fold score is flattered by the choice and the comparison leans to the chain. Here, for each fold,
//! the search runs again on the other folds' runs alone — its rule start found again on them, its
//! smoothing and folds as the search's — and the fold's held-out runs are read by the chain of the
//! predicates it chose there, learned without the fold. Nothing the fold's runs say reaches the
//! predicates, so chain and forest are compared on equal terms (nested cross-validation). It costs one
//! search per fold.
//!
//! The same searches give an ensemble its further chains ([`FoldSearch`]): each fold's predicates,
//! chosen on the runs outside the fold, make a chain learned on every run. Members that differ by the
//! runs their predicates were chosen on (a subsample each, as in bagging) rather than only by the folds
//! that scored them, at no further search.

use super::data::{PropertyData, RunRecord, Toggles};
use super::rule;
use super::search::{self, AlphaChoice, Fine, RefinedKind, Scorer, SearchConfig, Segments};

/// One fold's chain: its predicates' segmentation over every run, and the risk of each state learned
/// without the fold.
pub type FoldChain = (Segments, Vec<f64>);

/// One fold's search: what it chose on the runs outside the fold, and the fold's chain.
#[derive(Debug, Clone)]
pub struct FoldSearch {
    /// The fold's chain.
    pub chain: FoldChain,
    /// The search on the other folds' runs: its steps and the refined candidates they use (indices as
    /// for a search on every run: the pool's, then the refined ones from the pool's end).
    pub found: AlphaChoice,
    /// The runs it searched (indices into the data's runs, in order).
    pub runs: Vec<usize>,
}

/// Per fold of `cfg` (in fold order), the search on the other folds' runs, the runs it searched, and its
/// chain: the segmentation over every run of `data` of the predicates it chose and the risk of every state
/// under their chain learned without the fold. `cfg` is the search's configuration under the smoothing and
/// frame-share weight it chose, and `start` where its winner began (its [`AlphaChoice::start`] among
/// [`super::search_starts`]): both are kept, not chosen again, so each fold runs one search. `fixed` is
/// the declared predicates (a start), `fine` the pool's finer cuts.
pub fn fold_searches(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    (fixed, start): (&[usize], Option<usize>),
    fine: Fine<'_>,
) -> Vec<FoldSearch> {
    let inner = SearchConfig {
        choose_alpha: false,
        choose_prior: false,
        choose_share: false,
        share_weight: 0.0,
        chains: 1,
        forest_trees: 0,
        ..*cfg
    };
    // The folds of the search's own scorer.
    let k = cfg.folds.max(2);
    let folds = search::assign_folds(data, k, cfg.seed);
    let pool: Vec<usize> = (0..data.candidates.len()).collect();
    (0..k)
        .map(|f| {
            let keep: Vec<usize> = (0..data.runs.len())
                .filter(|&r| folds[r] as usize != f)
                .collect();
            let sub = data.subset(&keep);
            // The rule start is found again on these runs, when the winner began there.
            let rule_literals = match start {
                Some(super::RULE_START) => {
                    super::rule_start(rule::best_rule(&sub, records, &pool).as_ref())
                }
                _ => Vec::new(),
            };
            let begin = search::start_at(&super::search_starts(&rule_literals, fixed), start);
            let cache = search::RefineCache::new(&sub, records, fine);
            let refine = |c: usize| cache.get(c);
            let found = search::greedy_one(&sub, records, &inner, (begin, start), Some(&refine));
            let share_weight = if cfg.choose_share {
                let chosen = search::chosen_toggles(&sub, &found.steps, &found.refined);
                search::choose_share_weight(&sub, records, &inner, &chosen).0
            } else {
                cfg.share_weight
            };
            let toggles: Vec<Toggles> = found
                .steps
                .iter()
                .filter_map(|s| s.candidate)
                .filter_map(|c| over_every_run(data, records, &found, fine, c))
                .collect();
            let refs: Vec<&Toggles> = toggles.iter().collect();
            let chain_cfg = SearchConfig {
                share_weight,
                ..*cfg
            };
            FoldSearch {
                chain: Scorer::new(data, records, &chain_cfg).fold_risks_without(&refs, f),
                found,
                runs: keep,
            }
        })
        .collect()
}

/// The fold chains of `searches` as [`super::forest::choose_forest_weight`] reads them.
pub fn views(searches: &[FoldSearch]) -> Vec<(&Segments, &[f64])> {
    searches
        .iter()
        .map(|s| (&s.chain.0, s.chain.1.as_slice()))
        .collect()
}

/// The toggles over every run of `data` of the candidate a search on a subset of its runs chose as
/// `c` (a pool index, or a refined candidate of `found` from the pool's end); `None` only for an index
/// the search did not make.
fn over_every_run(
    data: &PropertyData,
    records: &[RunRecord],
    found: &AlphaChoice,
    fine: Fine<'_>,
    c: usize,
) -> Option<Toggles> {
    let Some(r) = c.checked_sub(data.candidates.len()) else {
        return data.candidates.get(c).cloned();
    };
    let refined = found.refined.get(r)?;
    match refined.kind {
        RefinedKind::Cut(alternative) => {
            let (i, cs) = fine(refined.of)?;
            let cut = cs.get(alternative..=alternative)?;
            data.toggles_of_cuts(records, i, cut).pop()
        }
        RefinedKind::And {
            left,
            left_negated,
            negated,
        } => {
            let left = over_every_run(data, records, found, fine, left)?;
            Some(left.and(data.candidates.get(refined.of)?, left_negated, negated))
        }
    }
}

#[cfg(test)]
mod tests;
