//! The rule search against brute force: every conjunction of one or two literals evaluated frame by
//! frame, straight from the recorded bits, on small random pools.

use rand::{Rng, SeedableRng};

use super::*;
use crate::select::criterion::utility;
use crate::select::data::{PropertyData, RunRecord, Source};

/// A random pool of `n_candidates` bit candidates over random runs: candidate values are sticky random
/// walks with a per-candidate density, frame steps vary (so leads straddle the utility's cap), runs may
/// be one frame long or violate at their first frame, and one candidate may be constant.
fn random_case(seed: u64) -> (Vec<RunRecord>, usize) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let n_candidates = rng.random_range(2..=6usize);
    let density: Vec<f64> = (0..n_candidates)
        .map(|_| rng.random_range(0.05..0.95))
        .collect();
    let constant = rng
        .random_bool(0.2)
        .then(|| rng.random_range(0..n_candidates));
    let n_runs = rng.random_range(6..40);
    let records = (0..n_runs)
        .map(|_| {
            let n = rng.random_range(1..25usize);
            let mut t = Vec::with_capacity(n);
            let mut now: f64 = rng.random_range(0.0..3.0);
            let mut word = 0u64;
            let mut bits = Vec::with_capacity(n);
            for k in 0..n {
                t.push(now);
                now += rng.random_range(0.1..1.5);
                for (c, &d) in density.iter().enumerate() {
                    if k == 0 || rng.random_bool(0.3) {
                        let v = rng.random_bool(d) && constant != Some(c);
                        word = (word & !(1 << c)) | u64::from(v) << c;
                    }
                }
                bits.push(word);
            }
            let first_unsafe = rng.random_bool(0.4).then(|| rng.random_range(0..n) as u32);
            RunRecord::of_bits(t, bits, first_unsafe)
        })
        .collect();
    (records, n_candidates)
}

/// The brute-force choice: (criterion, literals, predicted, false alarms), maximising the criterion, ties
/// to the shorter rule and then to the earlier literals in the order `(c, plain), (c, negated)` over the
/// non-constant candidates.
fn brute_force(
    records: &[RunRecord],
    n_candidates: usize,
    objective: Objective,
) -> Option<(f64, Vec<Literal>, usize, usize)> {
    // Runs as the search sees them: cut after their first unsafe frame.
    let runs: Vec<(usize, usize, bool)> = records
        .iter()
        .enumerate()
        .map(|(i, r)| match r.first_unsafe[0] {
            Some(f) => (i, f as usize + 1, true),
            None => (i, r.len(), false),
        })
        .collect();
    let value = |r: usize, c: usize, k: usize| records[r].value(Source::Bit(c), k);
    let constant = |c: usize| {
        let first = value(runs[0].0, c, 0);
        runs.iter()
            .all(|&(r, n, _)| (0..n).all(|k| value(r, c, k) == first))
    };
    let literals: Vec<Literal> = (0..n_candidates)
        .filter(|&c| !constant(c))
        .flat_map(|c| [(c, false), (c, true)])
        .collect();
    let mut rules: Vec<(usize, usize, usize)> = (0..literals.len()).map(|i| (1, i, i)).collect();
    for i in 0..literals.len() {
        for j in i + 1..literals.len() {
            if literals[i].0 != literals[j].0 {
                rules.push((2, i, j));
            }
        }
    }
    let n_violating = runs.iter().filter(|r| r.2).count();
    let n_safe = runs.len() - n_violating;
    if n_violating == 0 {
        return None;
    }
    // (criterion, (length, first literal, second literal), predicted, false alarms)
    type Scored = (f64, (usize, usize, usize), usize, usize);
    let mut best: Option<Scored> = None;
    for &(len, i, j) in &rules {
        let holds = |r: usize, k: usize| {
            [literals[i], literals[j]][..len]
                .iter()
                .all(|&(c, negated)| value(r, c, k) != negated)
        };
        let (mut u, mut n_pred, mut n_fa) = (0.0, 0, 0);
        for &(r, n, violated) in &runs {
            // Alarms count only strictly before the violation.
            let horizon = if violated { n - 1 } else { n };
            let first = (0..horizon).find(|&k| holds(r, k));
            match (first, violated) {
                (Some(a), true) => {
                    n_pred += 1;
                    u += utility(Some(records[r].t[n - 1] - records[r].t[a]));
                }
                (Some(_), false) => n_fa += 1,
                (None, _) => {}
            }
        }
        let fa = if n_safe > 0 {
            n_fa as f64 / n_safe as f64
        } else {
            0.0
        };
        let score = match objective {
            Objective::Youden => u / n_violating as f64 - fa,
            // Within the budget when at most floor(share · safe runs) safe runs alarm.
            Objective::WithinBudget(share) if n_fa as f64 <= share * n_safe as f64 + 1e-9 => {
                u / n_violating as f64
            }
            Objective::WithinBudget(_) => continue,
        };
        let key = (len, i, j);
        let better = match &best {
            None => true,
            Some((s, k, _, _)) => score > *s || (score == *s && key < *k),
        };
        if better {
            best = Some((score, key, n_pred, n_fa));
        }
    }
    best.map(|(score, (len, i, j), p, fa)| {
        let lits = if len == 1 {
            vec![literals[i]]
        } else {
            vec![literals[i], literals[j]]
        };
        (score, lits, p, fa)
    })
}

#[test]
fn the_rule_search_agrees_with_brute_force_on_random_pools() {
    let (mut n_pairs, mut n_singles, mut n_none) = (0, 0, 0);
    for seed in 0..300 {
        let (records, n_candidates) = random_case(seed);
        let sources: Vec<Source> = (0..n_candidates).map(Source::Bit).collect();
        let data = PropertyData::new(&records, 0, &sources);
        let allowed: Vec<usize> = (0..n_candidates).collect();
        let objective = [
            Objective::Youden,
            Objective::WithinBudget(0.0),
            Objective::WithinBudget(0.2),
            Objective::WithinBudget(0.4),
        ][seed as usize % 4];
        let got = best_rule_for(&data, &records, &allowed, objective);
        let want = brute_force(&records, n_candidates, objective);
        match (got, want) {
            (None, None) => n_none += 1,
            (Some(got), Some((score, literals, n_predicted, n_false_alarms))) => {
                assert!(
                    (got.score - score).abs() < 1e-12,
                    "seed {seed}: search {} vs brute force {score}",
                    got.score
                );
                assert_eq!(got.literals, literals, "seed {seed}");
                assert_eq!(
                    (got.n_predicted, got.n_false_alarms),
                    (n_predicted, n_false_alarms),
                    "seed {seed}"
                );
                let n_violating = records
                    .iter()
                    .filter(|r| r.first_unsafe[0].is_some())
                    .count();
                assert_eq!(
                    (got.n_violating, got.n_safe),
                    (n_violating, records.len() - n_violating),
                    "seed {seed}"
                );
                if literals.len() == 2 {
                    n_pairs += 1;
                } else {
                    n_singles += 1;
                }
            }
            (got, want) => panic!("seed {seed}: search {got:?}, brute force {want:?}"),
        }
    }
    // The cases exercise both rule lengths (and so the pruned pair search), and budgets no rule meets.
    assert!(
        n_pairs >= 20 && n_singles >= 20 && n_none >= 5,
        "{n_pairs} pairs, {n_singles} singles, {n_none} none"
    );
}

/// A hand-computed case: two violating runs and two safe ones, frame step 1 s.
#[test]
fn a_hand_computed_rule_choice() {
    // Bits: candidate 0 is an early sign of both violations but also fires in one safe run; candidate 1
    // fires late in violating runs only.
    let rec = |bits: &[u64], unsafe_at: Option<u32>| {
        RunRecord::of_bits(
            (0..bits.len()).map(|k| k as f64).collect(),
            bits.to_vec(),
            unsafe_at,
        )
    };
    let records = vec![
        rec(&[0b00, 0b01, 0b01, 0b11, 0b11], Some(4)),
        rec(&[0b01, 0b01, 0b11, 0b00], Some(3)),
        rec(&[0b00, 0b01, 0b00], None),
        rec(&[0b00, 0b00, 0b00], None),
    ];
    let data = PropertyData::new(&records, 0, &[Source::Bit(0), Source::Bit(1)]);
    let choice = best_rule(&data, &records, &[0, 1]).unwrap();
    // Candidate 0 alone: leads 3 s and 3 s, utility 0.5 + 0.5·3/5 = 0.8 each, one false alarm of two:
    // 0.8 − 0.5 = 0.3. Candidate 1 alone: leads 1 s and 1 s, utility 0.6, no false alarm: 0.6.
    // 0 & 1: the same frames as candidate 1: 0.6, but longer. Negations fire in safe runs.
    assert_eq!(choice.literals, vec![(1, false)]);
    assert!((choice.score - 0.6).abs() < 1e-12, "{}", choice.score);
    assert_eq!((choice.n_predicted, choice.n_false_alarms), (2, 0));
    // Written for a budget of half the safe runs, candidate 0 (utility 0.8, one false alarm of two) is
    // allowed and warns earlier; under a quarter (floor(0.25 · 2) = 0 false alarms) it is not.
    let within = |share| best_rule_for(&data, &records, &[0, 1], Objective::WithinBudget(share));
    let half = within(0.5).unwrap();
    assert_eq!(half.literals, vec![(0, false)]);
    assert!((half.score - 0.8).abs() < 1e-12, "{}", half.score);
    assert_eq!((half.n_predicted, half.n_false_alarms), (2, 1));
    assert_eq!(within(0.25).unwrap().literals, vec![(1, false)]);
}

/// No rule keeps within a budget that every warning literal exceeds.
#[test]
fn no_rule_is_chosen_when_none_keeps_within_the_budget() {
    // The one candidate and its negation both hold somewhere in the one safe run, so every rule alarms
    // there: a budget of half a run allows no false alarm, a budget of the whole run allows it.
    let records = vec![
        RunRecord::of_bits(vec![0.0, 1.0, 2.0], vec![0b0, 0b1, 0b1], Some(2)),
        RunRecord::of_bits(vec![0.0, 1.0, 2.0], vec![0b0, 0b1, 0b0], None),
    ];
    let data = PropertyData::new(&records, 0, &[Source::Bit(0)]);
    assert!(best_rule_for(&data, &records, &[0], Objective::WithinBudget(0.5)).is_none());
    assert!(best_rule_for(&data, &records, &[0], Objective::WithinBudget(1.0)).is_some());
}
