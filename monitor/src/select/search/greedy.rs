//! One greedy search: from a start, the best candidate (or its best finer cut) each step, until no
//! candidate raises the cross-validated score enough.

use rayon::prelude::*;

use crate::select::data::{PropertyData, RunRecord, Toggles};

use super::{
    Refine, Refined, RefinedKind, Scorer, SearchConfig, Searched, Segments, Step, Workspace,
};

/// [`greedy_from`](super::greedy_from), where each step's best pool candidate may be replaced by the
/// best of its finer versions (`refine`) when one of those scores higher: the step's score is that of
/// the better cut.
pub(super) fn greedy_refined(
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
pub(super) fn taken_start(data: &PropertyData, cfg: &SearchConfig, start: &[usize]) -> Vec<usize> {
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

/// The refined candidate a [`Step::candidate`] index names (`None` for a pool candidate).
pub(super) fn refined_at<'r>(
    data: &PropertyData,
    refined: &'r [Refined],
    i: usize,
) -> Option<&'r Refined> {
    i.checked_sub(data.candidates.len())
        .and_then(|r| refined.get(r))
}

/// The toggles of a [`Step::candidate`] index: a pool candidate's, or a refined one's.
pub(super) fn toggles_at<'t>(
    data: &'t PropertyData,
    refined: &'t [Refined],
    i: usize,
) -> &'t Toggles {
    match i.checked_sub(data.candidates.len()) {
        Some(r) => &refined[r].toggles,
        None => &data.candidates[i],
    }
}
