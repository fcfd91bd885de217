// Dense linear algebra over several parallel arrays reads best with index loops.
#![allow(clippy::needless_range_loop)]

use super::*;
use crate::table::RiskTable;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Fair gambler's ruin on 0..=4: 0 is unsafe, 4 is a safe absorbing finish.
fn ruin() -> (Dtmc, Vec<bool>) {
    let d = Dtmc::try_new(
        5,
        vec![0, 1, 3, 5, 7, 8],
        vec![0, 0, 2, 1, 3, 2, 4, 4],
        vec![1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1.0],
    )
    .unwrap();
    (d, vec![true, false, false, false, false])
}

#[test]
fn gamblers_ruin_matches_closed_forms() {
    let (d, target) = ruin();
    let x = eventually(&d, &target);
    for (i, &xi) in x.iter().enumerate() {
        assert!((xi - (1.0 - i as f64 / 4.0)).abs() < 1e-14, "x[{i}] = {xi}");
    }
    // E[T | ruin from i] = i(2N − i)/3 for the fair walk with N = 4.
    let e = expected_steps(&d, &target, &x);
    for i in 1..4 {
        let hand = (i * (8 - i)) as f64 / 3.0;
        assert!((e[i] - hand).abs() < 1e-12, "E[{i}] = {}", e[i]);
    }
    assert_eq!(e[0], 0.0);
    assert!(e[4].is_infinite());
    // From 1: within 1 and 2 steps 1/2; within 3 steps also 1 -> 2 -> 1 -> 0, so 5/8.
    let w = bounded::within(&d, &target, &[0, 1, 2, 3]);
    assert_eq!([w[0][1], w[1][1], w[2][1], w[3][1]], [0.0, 0.5, 0.5, 0.625]);
    let ml = path::most_likely(&d, &target);
    assert_eq!(ml.path(3), vec![3, 2, 1, 0]);
    assert!((ml.prob[3] - 0.125).abs() < 1e-15);
    assert!(ml.path(4).is_empty());
}

#[test]
fn preprocessing_finds_probability_zero_and_one_states() {
    // 0 -> {1: .5, 2: .5}; 1 -> unsafe 3; 2 -> 2 (trap); 4 -> {3, 1} (reaches 3 surely).
    let d = Dtmc::try_new(
        5,
        vec![0, 2, 3, 4, 5, 7],
        vec![1, 2, 3, 2, 3, 1, 3],
        vec![0.5, 0.5, 1.0, 1.0, 1.0, 0.5, 0.5],
    )
    .unwrap();
    let target = [false, false, false, true, false];
    let no = graph::prob0(&d, &target);
    let yes = graph::prob1(&d, &target, &no);
    assert_eq!(no, vec![false, false, true, false, false]);
    assert_eq!(yes, vec![false, true, false, true, true]);
    assert_eq!(eventually(&d, &target), vec![0.5, 1.0, 0.0, 1.0, 1.0]);
}

/// A random chain: `n` states, about `deg` successors each, absorbing targets and traps sprinkled in.
fn random_chain(n: usize, deg: usize, seed: u64) -> (Dtmc, Vec<bool>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut row_ptr = vec![0];
    let (mut cols, mut probs) = (Vec::new(), Vec::new());
    let mut target = vec![false; n];
    for s in 0..n {
        let kind = rng.random_range(0..20);
        let mut succ: Vec<u32> = if kind == 0 {
            target[s] = true;
            vec![s as u32]
        } else if kind == 1 {
            vec![s as u32] // safe trap
        } else {
            (0..deg).map(|_| rng.random_range(0..n as u32)).collect()
        };
        succ.sort_unstable();
        succ.dedup();
        let w: Vec<f64> = succ.iter().map(|_| rng.random_range(0.05..1.0)).collect();
        let total: f64 = w.iter().sum();
        cols.extend(&succ);
        probs.extend(w.iter().map(|x| x / total));
        row_ptr.push(cols.len());
    }
    (Dtmc::try_new(n, row_ptr, cols, probs).unwrap(), target)
}

/// Independent reference: qualitative reachability by fixed point, then dense Gaussian elimination on the
/// full `(I − A)x = b` system of the states that can reach the target.
fn dense_reference(d: &Dtmc, target: &[bool]) -> Vec<f64> {
    let n = d.n_states();
    let mut can = target.to_vec();
    loop {
        let mut changed = false;
        for s in 0..n {
            if !can[s] && d.row(s as u32).0.iter().any(|&j| can[j as usize]) {
                can[s] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut a = vec![vec![0.0; n + 1]; n];
    for s in 0..n {
        a[s][s] = 1.0;
        if target[s] {
            a[s][n] = 1.0;
        } else if can[s] {
            let (cols, probs) = d.row(s as u32);
            for (&j, &p) in cols.iter().zip(probs) {
                a[s][j as usize] -= p;
            }
        }
    }
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))
            .unwrap();
        a.swap(c, p);
        for r in 0..n {
            if r != c && a[r][c] != 0.0 {
                let f = a[r][c] / a[c][c];
                for k in c..=n {
                    a[r][k] -= f * a[c][k];
                }
            }
        }
    }
    (0..n).map(|s| a[s][n] / a[s][s]).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn solver_matches_a_dense_direct_solve(n in 2usize..60, deg in 1usize..5, seed in any::<u64>()) {
        let (d, target) = random_chain(n, deg, seed);
        let x = eventually(&d, &target);
        let r = dense_reference(&d, &target);
        for s in 0..n {
            prop_assert!((x[s] - r[s]).abs() < 1e-12, "state {}: {} vs {}", s, x[s], r[s]);
        }
    }

    #[test]
    fn bounded_risk_grows_to_the_unbounded_one(n in 2usize..40, seed in any::<u64>()) {
        let (d, target) = random_chain(n, 3, seed);
        let t = RiskTable::compute(&d, &target, &[1, 2, 5, 400]).unwrap();
        for s in 0..n as u32 {
            let ev = t.eventually(s).unwrap();
            let w: Vec<f64> = (0..4).map(|h| t.within(h, s).unwrap()).collect();
            prop_assert!(w.windows(2).all(|p| p[0] <= p[1] + 1e-15) && w[3] <= ev + 1e-12);
        }
    }
}

#[test]
fn large_components_use_gauss_seidel_and_stay_exact() {
    // 600 states with 4 successors each form one big SCC (beyond the dense limit).
    let (d, target) = random_chain(600, 4, 7);
    let (order, starts) = scc::sccs(&d, &vec![true; 600]);
    let biggest = starts.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    assert!(
        biggest > solve::DENSE_MAX,
        "test chain too fragmented: {biggest}"
    );
    assert_eq!(order.len(), 600);
    let x = eventually(&d, &target);
    let r = dense_reference(&d, &target);
    let worst = (0..600).map(|s| (x[s] - r[s]).abs()).fold(0.0, f64::max);
    assert!(worst < 1e-12, "max error {worst}");
}
