//! Searches from several starts and under several smoothings, the finalists compared on fresh fold
//! assignments, and the frame share's weight chosen on the result.

use crate::select::data::{PropertyData, RunRecord, Toggles};

use super::greedy::{greedy_refined, taken_start, toggles_at};
use super::{
    Refine, Refined, Scorer, SearchConfig, Searched, Segments, Step, ALPHA_CHOICES,
    HIERARCHICAL_ALPHA_CHOICES,
};

/// [`greedy`](super::greedy()) from nothing and [`greedy_from`](super::greedy_from) each of `starts`,
/// every step's threshold refined by `refine` when given: the search whose final set has the highest
/// [`finalist_score`] (ties: the earlier one), with the refined candidates it chose. A start is skipped
/// when it takes nothing, repeats an earlier start, or is what the search from nothing took first (it
/// would repeat that search).
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
/// searches of [`crate::select::nested::fold_searches`] run from the start it chose. `index` is recorded as its
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
