use rand::{Rng, SeedableRng};

use super::*;
use crate::select::data::Source;
use crate::select::forest::shared_chains;
use crate::select::search::{assign_folds, Refined};

/// One run of 40–120 frames at 0.1 s with 6 bits: bit `planted` (0 or 3) is set in the last 2 s of a
/// violating run and the other of bits 0 and 3 never; bits 1, 2, 4 and 5 change at random. About a
/// third of the runs violate at their last frame. With `len` and `violated` given, a run of that length
/// and outcome.
fn run(rng: &mut rand_chacha::ChaCha8Rng, planted: usize, fixed: Option<(u32, bool)>) -> RunRecord {
    let (len, violated) =
        fixed.unwrap_or_else(|| (rng.random_range(40..120u32), rng.random_bool(0.35)));
    let mut slow = [false; 6];
    let bits = (0..len)
        .map(|k| {
            for s in &mut slow {
                if rng.random_bool(0.05) {
                    *s = !*s;
                }
            }
            slow[0] = planted == 0 && violated && len - 1 - k <= 20;
            slow[3] = planted == 3 && violated && len - 1 - k <= 20;
            slow.iter()
                .enumerate()
                .map(|(i, &s)| u64::from(s) << i)
                .sum::<u64>()
        })
        .collect();
    let t = (0..len).map(|k| f64::from(k) * 0.1).collect();
    RunRecord::from_bits(t, bits, violated.then_some(len - 1))
}

fn runs(n: usize, seed: u64) -> Vec<RunRecord> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| run(&mut rng, 0, None)).collect()
}

fn data_of(recs: &[RunRecord]) -> PropertyData {
    let sources: Vec<Source> = (0..6).map(Source::Bit).collect();
    PropertyData::new(recs, 0, &sources)
}

fn no_cuts(_: usize) -> Option<(usize, &'static [f64])> {
    None
}

fn config() -> SearchConfig {
    SearchConfig {
        max_predicates: 4,
        finalist_repeats: 1,
        ..SearchConfig::default()
    }
}

/// Fold 0's chain reads its runs with predicates searched, and a chain learned, on the other folds'
/// runs alone: redrawing every bit of fold 0's runs (same lengths and outcomes, so the same folds, but
/// their early sign in bit 3 instead of bit 0) leaves its risks exactly as they were, while the other
/// folds' chains, which learn from those runs, change, and so does a search on every run.
#[test]
fn a_fold_s_chain_owes_nothing_to_the_fold_s_runs() {
    let recs = runs(200, 3);
    let cfg = config();
    let data = data_of(&recs);
    let chains = fold_searches(&data, &recs, &cfg, (&[], None), &no_cuts);
    assert_eq!(chains.len(), cfg.folds);
    let folds = assign_folds(&data, cfg.folds, cfg.seed);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(99);
    let mut redrawn = recs.clone();
    for (r, p) in data.runs.iter().enumerate() {
        if folds[r] == 0 {
            redrawn[p.record] = run(&mut rng, 3, Some((p.n, p.violated)));
        }
    }
    let other = data_of(&redrawn);
    assert_eq!(assign_folds(&other, cfg.folds, cfg.seed), folds);
    let again = fold_searches(&other, &redrawn, &cfg, (&[], None), &no_cuts);
    assert_eq!(again[0].chain.1, chains[0].chain.1);
    for f in 1..cfg.folds {
        assert_ne!(
            again[f].chain.1, chains[f].chain.1,
            "fold {f} learns from fold 0's runs"
        );
    }
    // The search on every run does see fold 0: on the redrawn runs it chooses differently.
    let every = |d: &PropertyData, r: &[RunRecord]| {
        search::greedy_multi_alphas(d, r, &cfg, &[], None)
            .steps
            .iter()
            .map(|s| s.candidate)
            .collect::<Vec<_>>()
    };
    assert_ne!(every(&data, &recs), every(&other, &redrawn));
}

/// With no predicate to choose (the unsafe predicate alone), every fold's chain is the unsafe
/// predicate's chain learned without the fold: what the unnested weight choice reads.
#[test]
fn without_a_predicate_to_choose_the_fold_chains_are_the_unsafe_predicate_s() {
    let recs = runs(120, 4);
    let cfg = SearchConfig {
        max_predicates: 1,
        ..config()
    };
    let data = data_of(&recs);
    let chains = fold_searches(&data, &recs, &cfg, (&[], None), &no_cuts);
    let alone = Scorer::new(&data, &recs, &cfg).fold_risks(&[]);
    let want = shared_chains(&alone);
    assert_eq!(chains.len(), want.len());
    for (f, (got, (_, want))) in chains.iter().map(|s| &s.chain.1).zip(&want).enumerate() {
        assert_eq!(got.as_slice(), *want, "fold {f}");
    }
}

/// A candidate a search on some runs built — a finer cut of a threshold, or a conjunction with a
/// negated literal — read over every run is what reading it frame by frame gives, and on the searched
/// runs what the search built.
#[test]
fn a_refined_candidate_reads_over_every_run_as_the_frames_say() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let recs: Vec<RunRecord> = (0..40)
        .map(|_| {
            let len = rng.random_range(5..40u32);
            let bits = (0..len).map(|_| u64::from(rng.random_bool(0.5))).collect();
            let signal = (0..len).map(|_| rng.random_range(-3.0..3.0)).collect();
            let t = (0..len).map(|k| f64::from(k) * 0.1).collect();
            let first = rng.random_bool(0.4).then(|| len - 1);
            RunRecord::from_bits_and_signal(t, bits, signal, first)
        })
        .collect();
    let sources = [Source::Bit(0), Source::AtMost(0, 0.0)];
    let data = PropertyData::new(&recs, 0, &sources);
    let cuts = [-1.0, 0.5, 1.5];
    let fine = |c: usize| (c == 1).then_some((0, &cuts[..]));
    let keep: Vec<usize> = (0..data.runs.len()).filter(|r| r % 3 != 0).collect();
    let sub = data.subset(&keep);
    let mut found = search::greedy_multi_alphas(&sub, &recs, &config(), &[], None);
    let cut = sub.toggles_of_cuts(&recs, 0, &cuts).swap_remove(1);
    let n = data.candidates.len();
    found.refined = vec![
        Refined {
            of: 1,
            kind: RefinedKind::Cut(1),
            toggles: cut.clone(),
        },
        Refined {
            of: 0,
            kind: RefinedKind::And {
                left: n,
                left_negated: true,
                negated: false,
            },
            toggles: cut.and(&sub.candidates[0], true, false),
        },
    ];
    let read_cut = data.toggles_of(&recs, Source::AtMost(0, 0.5));
    let read_and = read_cut.and(&data.toggles_of(&recs, Source::Bit(0)), true, false);
    for (i, want) in [(n, read_cut), (n + 1, read_and)] {
        let got = over_every_run(&data, &recs, &found, &fine, i).unwrap();
        assert_eq!(got, want, "refined {}", i - n);
        assert_eq!(got.subset(&keep), found.refined[i - n].toggles);
    }
    assert_eq!(
        over_every_run(&data, &recs, &found, &fine, 1).as_ref(),
        Some(&data.candidates[1])
    );
    assert_eq!(over_every_run(&data, &recs, &found, &fine, n + 2), None);
}

/// With a single violating run, the folds whose other runs lack it have nothing to search for; every
/// fold still gets a chain of finite risks.
#[test]
fn a_fold_without_a_violation_still_gets_a_chain() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
    let recs: Vec<RunRecord> = (0..12)
        .map(|i| run(&mut rng, 0, Some((60, i == 0))))
        .collect();
    let cfg = config();
    let data = data_of(&recs);
    let chains = fold_searches(&data, &recs, &cfg, (&[1], Some(1)), &no_cuts);
    assert_eq!(chains.len(), cfg.folds);
    for (f, risks) in chains.iter().map(|s| &s.chain.1).enumerate() {
        assert!(!risks.is_empty(), "fold {f}");
        assert!(risks.iter().all(|r| r.is_finite()), "fold {f}: {risks:?}");
    }
}

/// Each fold runs one search, from where the search on every run began: from the declared predicates
/// when it began there (they are its first steps, although the search from nothing would not take
/// them), from nothing otherwise; each is what that search on the fold's other runs gives.
#[test]
fn each_fold_searches_once_from_the_winning_start() {
    let recs = runs(150, 6);
    let cfg = config();
    let data = data_of(&recs);
    // Two bits that change at random: the search from nothing prefers the planted bit 0.
    let declared = [4usize, 5];
    for start in [None, Some(1)] {
        let searches = fold_searches(&data, &recs, &cfg, (&declared, start), &no_cuts);
        assert_eq!(searches.len(), cfg.folds);
        for (f, s) in searches.iter().enumerate() {
            let sub = data.subset(&s.runs);
            let begin: &[usize] = if start.is_some() { &declared } else { &[] };
            let (steps, _) = search::greedy_from(&sub, &recs, &cfg, begin);
            assert_eq!(s.found.steps, steps, "fold {f}, start {start:?}");
            assert_eq!(s.found.start, start);
            let first: Vec<Option<usize>> =
                steps.iter().skip(1).take(2).map(|s| s.candidate).collect();
            let from_declared = first == [Some(4), Some(5)];
            assert_eq!(from_declared, start.is_some(), "fold {f}: {steps:?}");
        }
    }
}
