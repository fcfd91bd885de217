use rand::{Rng, SeedableRng};

use super::*;
use crate::select::data::Source;

/// `n` runs of 40–120 frames at 0.1 s with 5 candidate bits: bit 0 marks the last 2 s before the end
/// of a violating run (and, rarely, a frame of a safe run), bit 1 is noise, bits 2–4 change at random;
/// about a third of the runs violate at their last frame.
fn runs(n: usize, seed: u64) -> Vec<RunRecord> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let len = rng.random_range(40..120u32);
            let violated = rng.random_bool(0.35);
            let mut slow = [false; 3];
            let bits = (0..len)
                .map(|k| {
                    let late = len - 1 - k <= 20;
                    let b0 = if violated {
                        late
                    } else {
                        rng.random_bool(0.0005)
                    };
                    let b1 = rng.random_bool(0.5);
                    for s in &mut slow {
                        if rng.random_bool(0.05) {
                            *s = !*s;
                        }
                    }
                    u64::from(b0)
                        | u64::from(b1) << 1
                        | slow
                            .iter()
                            .enumerate()
                            .map(|(i, &s)| u64::from(s) << (i + 2))
                            .sum::<u64>()
                })
                .collect();
            let t = (0..len).map(|k| f64::from(k) * 0.1).collect();
            RunRecord::from_bits(t, bits, violated.then_some(len - 1))
        })
        .collect()
}

fn all_of(data: &PropertyData) -> Vec<&Toggles> {
    data.candidates.iter().collect()
}

fn data_of(recs: &[RunRecord]) -> PropertyData {
    let sources: Vec<Source> = (0..5).map(Source::Bit).collect();
    PropertyData::new(recs, 0, &sources)
}

/// Per kept frame (run by run): the candidates' values and the target, read from the records directly.
fn frames_of(recs: &[RunRecord], data: &PropertyData, h: u32) -> Vec<(Vec<bool>, bool)> {
    let mut out = Vec::new();
    for run in &data.runs {
        let rec = &recs[run.record];
        let kept = run.n - u32::from(run.violated);
        for k in 0..kept {
            let values = (0..5)
                .map(|c| rec.value(Source::Bit(c), k as usize))
                .collect();
            out.push((values, run.violated && run.n - 1 - k <= h));
        }
    }
    out
}

/// The node of the leaf a frame whose candidates are `values` reaches in `tree`, walked directly.
fn leaf_of(tree: &Tree, values: &[bool]) -> usize {
    let mut at = 0usize;
    while let Node::Split { predicate, yes, no } = tree.nodes[at] {
        at = if values[predicate as usize] { yes } else { no } as usize;
    }
    at
}

#[test]
fn the_frame_table_holds_every_kept_frame_as_the_records_do() {
    let recs = runs(60, 1);
    let data = data_of(&recs);
    let table = FrameTable::new(&data, &all_of(&data), 20);
    let frames = frames_of(&recs, &data, 20);
    assert_eq!(table.n_frames(), frames.len());
    for (i, (values, target)) in frames.iter().enumerate() {
        for (c, &v) in values.iter().enumerate() {
            assert_eq!(table.bit(c, i), v, "frame {i} candidate {c}");
        }
        assert_eq!(
            table.target[i / 64] >> (i % 64) & 1 == 1,
            *target,
            "frame {i}"
        );
    }
}

/// Every leaf's value is the smoothed share of the training frames that reach it, recounted frame by
/// frame; leaves keep their minimum size; the root split is the best by a direct Gini computation.
#[test]
fn a_tree_s_leaves_are_the_shares_of_the_frames_that_reach_them() {
    let recs = runs(300, 2);
    let data = data_of(&recs);
    let table = FrameTable::new(&data, &all_of(&data), 20);
    let frames = frames_of(&recs, &data, 20);
    let all: Vec<usize> = (0..data.runs.len()).collect();
    let alpha = 0.3;
    let tree = grow_tree(&table, table.mask_of(all), alpha);
    let n_leaves = tree
        .nodes
        .iter()
        .filter(|n| matches!(n, Node::Leaf(_)))
        .count();
    assert!((2..=MAX_LEAVES).contains(&n_leaves), "{n_leaves}");
    // Recount: which leaf each frame reaches (by walking), and its frames and positives.
    let mut counts = vec![(0u64, 0u64); tree.nodes.len()];
    for (values, target) in &frames {
        let l = leaf_of(&tree, values);
        counts[l].0 += 1;
        counts[l].1 += u64::from(*target);
    }
    for (i, node) in tree.nodes.iter().enumerate() {
        if let Node::Leaf(v) = *node {
            let (n, p) = counts[i];
            assert!(n >= MIN_LEAF_FRAMES, "leaf {i}: {n} frames");
            let want = (p as f64 + alpha / 2.0) / (n as f64 + alpha);
            assert!((v - want).abs() < 1e-12, "leaf {i}: {v} vs {want}");
        }
    }
    // The root split by the textbook Gini decrease, n·G = n − Σ_class n_c²/n, over the frames.
    let gini = |sel: &[&(Vec<bool>, bool)]| {
        let n = sel.len() as f64;
        let p = sel.iter().filter(|f| f.1).count() as f64;
        if n == 0.0 {
            0.0
        } else {
            n - (p * p + (n - p) * (n - p)) / n
        }
    };
    let everything: Vec<&(Vec<bool>, bool)> = frames.iter().collect();
    let best = (0..5)
        .map(|c| {
            let (yes, no): (Vec<_>, Vec<_>) = everything.iter().partition(|f| f.0[c]);
            (c, gini(&everything) - gini(&yes) - gini(&no))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    assert_eq!(best.0, 0, "the planted candidate is the best split");
    assert!(
        matches!(tree.nodes[0], Node::Split { predicate: 0, .. }),
        "{:?}",
        tree.nodes[0]
    );
}

#[test]
fn a_forest_is_seeded_and_bagged_by_run() {
    let recs = runs(200, 3);
    let data = data_of(&recs);
    let table = FrameTable::new(&data, &all_of(&data), 20);
    let all: Vec<usize> = (0..data.runs.len()).collect();
    let a = grow_forest(&table, &all, 6, 1.0, 7);
    assert_eq!(a.len(), 6);
    assert_eq!(a, grow_forest(&table, &all, 6, 1.0, 7));
    // The trees saw different runs, so they differ (in some leaf value at least).
    assert!(a.iter().any(|t| *t != a[0]));
    // A tree grown on the runs of its subsample alone: with one tree and a subsample of every run
    // but none, the same as a tree on the runs it picked.
    let one = grow_forest(&table, &[4], 1, 1.0, 7);
    assert_eq!(one[0], grow_tree(&table, table.mask_of([4]), 1.0));
}

/// The weight is the one whose fold score is highest: a planted short-horizon sign that the chain (the
/// unsafe predicate alone, one risk for every frame) cannot see makes the forest win; a table without
/// varying candidates (single-leaf trees, a constant added to every risk) keeps weight 0.
#[test]
fn the_forest_weight_goes_to_a_sign_the_chain_does_not_see_and_only_then() {
    let recs = runs(300, 4);
    let data = data_of(&recs);
    let cfg = SearchConfig::default();
    let table = FrameTable::new(&data, &all_of(&data), 20);
    let alone = Scorer::new(&data, &recs, &cfg).fold_risks(&[]);
    let chains = shared_chains(&alone);
    let (w, scores) = choose_forest_weight(
        &data,
        &recs,
        &cfg,
        &chains,
        &table,
        (ForestKind::Bagged, 4),
        1.0,
    );
    assert_eq!(scores.len(), FOREST_WEIGHTS.len());
    assert!(w > 0.0, "{scores:?}");
    assert!(
        scores[0] < 0.1,
        "the chain alone warns of nothing: {scores:?}"
    );
    // Warned of about 2 s ahead at every budget: u ≈ 1/2 + 1/2 · 2/5.
    let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert!(best > 0.6, "{scores:?}");
    let flat = FrameTable::new(&data, &[], 20);
    let (w, scores) = choose_forest_weight(
        &data,
        &recs,
        &cfg,
        &chains,
        &flat,
        (ForestKind::Bagged, 4),
        1.0,
    );
    assert_eq!(w, 0.0, "{scores:?}");
}

/// At weight 0 the frame-by-frame fold score is the search's own cross-validated score of the chosen
/// predicates, which the scorer computes on segments of constant state: two computations of one number.
#[test]
fn at_weight_0_the_fold_score_is_the_search_s_score() {
    let recs = runs(300, 5);
    let data = data_of(&recs);
    let table = FrameTable::new(&data, &all_of(&data), 20);
    for (chosen, share_weight) in [(vec![0usize], 0.0), (vec![0, 2], 0.0), (vec![3, 0], 0.5)] {
        let cfg = SearchConfig {
            share_weight,
            ..SearchConfig::default()
        };
        let toggles: Vec<&Toggles> = chosen.iter().map(|&c| &data.candidates[c]).collect();
        let first = Scorer::new(&data, &recs, &cfg).fold_risks(&toggles);
        let chains = shared_chains(&first);
        let (_, scores) = choose_forest_weight(
            &data,
            &recs,
            &cfg,
            &chains,
            &table,
            (ForestKind::Bagged, 2),
            1.0,
        );
        let search = Scorer::new(&data, &recs, &cfg).score_toggles(&toggles).0;
        assert!(search > 0.0, "{chosen:?}: the score is not vacuous");
        assert!(
            (scores[0] - search).abs() < 1e-12,
            "{chosen:?} at share weight {share_weight}: {} vs {search}",
            scores[0]
        );
    }
}

/// The textbook logistic loss of probabilities `q` against the frames' targets.
fn log_loss(frames: &[(Vec<bool>, bool)], q: impl Fn(usize) -> f64) -> f64 {
    frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let q = q(i).clamp(1e-15, 1.0 - 1e-15);
            if f.1 {
                -q.ln()
            } else {
                -(1.0 - q).ln()
            }
        })
        .sum::<f64>()
        / frames.len() as f64
}

/// One boosted tree on every run, recomputed frame by frame from the records: the base is the frames'
/// smoothed log-odds, every leaf the Newton step `ν · Σ r / (Σ p(1 − p) + λ)` of the frames that reach
/// it, every leaf at least the minimum size, and the root split the best by a direct least-squares
/// computation (the residual sum of squares it leaves, over the frames).
#[test]
fn a_boosted_tree_s_leaves_are_newton_steps_on_the_frames_that_reach_them() {
    use crate::forest::logistic;
    let recs = runs(300, 8);
    let data = data_of(&recs);
    let table = FrameTable::new(&data, &all_of(&data), 20);
    let frames = frames_of(&recs, &data, 20);
    let all: Vec<usize> = (0..data.runs.len()).collect();
    let b = boost::boost_with(&table, &all, 1, 1.0, 3);
    let n = frames.len() as f64;
    let p = frames.iter().filter(|f| f.1).count() as f64;
    assert!((b.base - ((p + 0.5) / (n - p + 0.5)).ln()).abs() < 1e-12);
    let q0 = logistic(b.base);
    let tree = &b.trees[0];
    let mut sums = vec![(0u64, 0.0f64, 0.0f64); tree.nodes.len()];
    for (values, target) in &frames {
        let s = &mut sums[leaf_of(tree, values)];
        s.0 += 1;
        s.1 += f64::from(u8::from(*target)) - q0;
        s.2 += q0 * (1.0 - q0);
    }
    let mut leaves = 0;
    for (i, node) in tree.nodes.iter().enumerate() {
        if let Node::Leaf(v) = *node {
            leaves += 1;
            let (m, g, h) = sums[i];
            assert!(m >= MIN_LEAF_FRAMES, "leaf {i}: {m} frames");
            let want = boost::LEARNING_RATE * g / (h + boost::LAMBDA);
            assert!((v - want).abs() < 1e-9, "leaf {i}: {v} vs {want}");
        }
    }
    assert!((2..=MAX_LEAVES).contains(&leaves), "{leaves}");
    // The root split leaves the least residual sum of squares about each side's mean.
    let sse = |sel: &[&(Vec<bool>, bool)]| {
        let r: Vec<f64> = sel.iter().map(|f| f64::from(u8::from(f.1)) - q0).collect();
        let mean = r.iter().sum::<f64>() / r.len().max(1) as f64;
        r.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>()
    };
    let everything: Vec<&(Vec<bool>, bool)> = frames.iter().collect();
    let best = (0..5)
        .map(|c| {
            let (yes, no): (Vec<_>, Vec<_>) = everything.iter().partition(|f| f.0[c]);
            (c, sse(&yes) + sse(&no))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    assert!(
        matches!(tree.nodes[0], Node::Split { predicate, .. } if predicate as usize == best.0),
        "{:?} vs {best:?}",
        tree.nodes[0]
    );
}

/// Boosting on subsets of the runs: seeded, each tree lowering the training frames' logistic loss
/// overall, and on runs it never saw ranking the frames followed by a violation above the others
/// better than chance by far (the planted sign marks them).
#[test]
fn a_boosted_forest_is_seeded_lowers_its_loss_and_ranks_held_out_frames() {
    let recs = runs(300, 9);
    let data = data_of(&recs);
    let table = FrameTable::new(&data, &all_of(&data), 20);
    let frames = frames_of(&recs, &data, 20);
    let train: Vec<usize> = (0..200).collect();
    let a = boost::grow_boosted(&table, &train, 40, 11);
    assert_eq!(a.trees.len(), 40);
    assert_eq!(a, boost::grow_boosted(&table, &train, 40, 11));
    assert_ne!(a, boost::grow_boosted(&table, &train, 40, 12));
    // Training frames: the frames of the first 200 runs, which come first in the table.
    let n_train = table.runs[199].0 + table.runs[199].1;
    let prefix = |k: usize| boost::Boosted {
        base: a.base,
        trees: a.trees[..k].to_vec(),
    };
    let loss = |k: usize| log_loss(&frames[..n_train], |i| prefix(k).value(&table, i));
    let (l0, l10, l40) = (loss(0), loss(10), loss(40));
    assert!(l10 < l0 && l40 < l10, "{l0} {l10} {l40}");
    // Held out: the share of (positive, negative) frame pairs ranked right (the AUC), counted directly.
    let held: Vec<(f64, bool)> = (n_train..frames.len())
        .map(|i| (a.value(&table, i), frames[i].1))
        .collect();
    let (pos, neg): (Vec<&(f64, bool)>, Vec<_>) = held.iter().partition(|x| x.1);
    let mut right = 0.0;
    for p in &pos {
        for q in &neg {
            right += if p.0 > q.0 {
                1.0
            } else if p.0 == q.0 {
                0.5
            } else {
                0.0
            };
        }
    }
    let auc = right / (pos.len() * neg.len()) as f64;
    assert!(auc > 0.95, "{auc}");
}

/// The boosted forest is kept only when its best fold score is higher and, at that score's weight, its
/// pooled strict-budget recall is no lower than the bagged forest's at its own best weight.
#[test]
fn a_boosted_forest_is_preferred_only_without_losing_strict_budget_recall() {
    let bagged_scores = [0.60, 0.62, 0.61, 0.59];
    let bagged_recalls = [0.95, 0.97, 0.99, 0.90];
    let bagged = (&bagged_scores[..], &bagged_recalls[..]);
    // Boosted's best is weight ¾ (0.65 > 0.62); bagged's is ¼, recall 0.97.
    let scores = [0.60, 0.63, 0.64, 0.65];
    assert!(prefer_boosted(bagged, (&scores, &[0.95, 0.9, 0.9, 0.97])));
    assert!(prefer_boosted(bagged, (&scores, &[0.95, 0.9, 0.9, 0.98])));
    // One run fewer at ≤ 5 % at its chosen weight: vetoed, whatever its other weights recall.
    assert!(!prefer_boosted(bagged, (&scores, &[1.0, 1.0, 1.0, 0.96])));
    // A best score no higher than bagged's keeps bagged.
    assert!(!prefer_boosted(
        bagged,
        (&[0.60, 0.62, 0.61, 0.59], &[1.0, 1.0, 1.0, 1.0])
    ));
    // Ties in the scores take the first weight, as the weight's choice does: ½ here, recall 0.96.
    assert!(!prefer_boosted(
        bagged,
        (&[0.60, 0.63, 0.66, 0.66], &[0.95, 1.0, 0.96, 1.0])
    ));
    assert!(!prefer_boosted(bagged, (&[], &[])));
}

/// The weight and scores `choose_forest_weight` gives are those of `choose_forest_weight_with_recall`,
/// whose pooled recalls are shares, and at weight 0 (the chain alone, the same for every kind) equal for
/// both kinds of trees.
#[test]
fn the_pooled_recalls_come_with_the_same_choice() {
    let recs = runs(300, 4);
    let data = data_of(&recs);
    let cfg = SearchConfig::default();
    let table = FrameTable::new(&data, &all_of(&data), 20);
    let alone = Scorer::new(&data, &recs, &cfg).fold_risks(&[]);
    let chains = shared_chains(&alone);
    let (w, scores) = choose_forest_weight(
        &data,
        &recs,
        &cfg,
        &chains,
        &table,
        (ForestKind::Bagged, 4),
        1.0,
    );
    let (w2, scores2, recalls) = choose_forest_weight_with_recall(
        &data,
        &recs,
        &cfg,
        &chains,
        &table,
        (ForestKind::Bagged, 4),
        1.0,
    );
    assert_eq!((w, &scores), (w2, &scores2));
    assert_eq!(recalls.len(), FOREST_WEIGHTS.len());
    assert!(
        recalls.iter().all(|r| (0.0..=1.0).contains(r)),
        "{recalls:?}"
    );
    let (_, _, boosted) = choose_forest_weight_with_recall(
        &data,
        &recs,
        &cfg,
        &chains,
        &table,
        (ForestKind::Boosted, 4),
        1.0,
    );
    assert_eq!(recalls[0], boosted[0]);
    // The planted sign warns of the violations the chain alone cannot rank.
    assert!(recalls[2] > recalls[0], "{recalls:?}");
}
