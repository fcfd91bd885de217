// Dense linear algebra over several parallel arrays reads best with index loops.
#![allow(clippy::needless_range_loop)]

use super::*;
use crate::table::RiskTable;
use proptest::prelude::*;

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
fn the_longest_horizon_solves_to_the_unbounded_risk_and_a_longer_one_is_refused() {
    use crate::table::MAX_HORIZON_STEPS;
    let (d, target) = ruin();
    let t = RiskTable::compute(&d, &target, &[1, MAX_HORIZON_STEPS]).unwrap();
    for s in 0..5u32 {
        let hand = 1.0 - f64::from(s) / 4.0;
        assert!((t.within(1, s).unwrap() - hand).abs() < 1e-14, "state {s}");
    }
    let err = RiskTable::compute(&d, &target, &[1, MAX_HORIZON_STEPS + 1]).unwrap_err();
    assert!(err.to_string().contains("100001 steps"), "{err}");
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

/// A random chain: `n` states, about `deg` successors each, 5 % absorbing targets and 5 % safe traps.
fn random_chain(n: usize, deg: usize, seed: u64) -> (Dtmc, Vec<bool>) {
    let c = super::random_chain::random_chain(n, deg, 20, seed);
    (
        Dtmc::try_new(n, c.row_ptr, c.cols, c.probs).unwrap(),
        c.target,
    )
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
    fn bounded_risk_is_the_plain_iteration_past_its_fixed_point(
        n in 2usize..40, deg in 1usize..4, seed in any::<u64>()
    ) {
        // The plain iteration, every product done, in row order: the solve's early stop at a fixed point
        // must not change a bit of any horizon's risks.
        let (d, target) = random_chain(n, deg, seed);
        let horizons = [1u32, 3, 50, 700, 3000];
        let w = bounded::within(&d, &target, &horizons);
        let mut x: Vec<f64> = target.iter().map(|&t| f64::from(u8::from(t))).collect();
        for k in 1..=3000u32 {
            x = (0..n)
                .map(|s| {
                    if target[s] {
                        return 1.0;
                    }
                    let (cols, probs) = d.row(s as u32);
                    cols.iter().zip(probs).fold(0.0, |acc, (&j, &p)| acc + p * x[j as usize])
                })
                .collect();
            if let Some(h) = horizons.iter().position(|&h| h == k) {
                prop_assert_eq!(&w[h], &x, "horizon {}", k);
            }
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// The one-pass decomposition agrees with the two textbook backward searches, its components are a
    /// partition of the non-target states in reverse topological order.
    #[test]
    fn decomposition_matches_backward_searches(n in 2usize..80, deg in 1usize..5, seed in any::<u64>()) {
        let (d, target) = random_chain(n, deg, seed);
        let dec = decompose::decompose(&d, &target);
        let no = graph::prob0(&d, &target);
        let yes = graph::prob1(&d, &target, &no);
        let classes = dec.state_classes(n);
        let mut comp_of = vec![usize::MAX; n];
        for c in 0..dec.len() {
            for &s in dec.component(c).0 {
                prop_assert_eq!(comp_of[s as usize], usize::MAX, "state in two components");
                comp_of[s as usize] = c;
            }
        }
        for s in 0..n {
            let expected = if target[s] {
                None
            } else if no[s] {
                Some(decompose::Class::No)
            } else if yes[s] {
                Some(decompose::Class::Yes)
            } else {
                Some(decompose::Class::Maybe)
            };
            prop_assert_eq!(classes[s], expected, "state {}", s);
            // Every edge between non-targets goes to the same or an earlier component.
            if !target[s] {
                for &j in d.row(s as u32).0 {
                    if !target[j as usize] {
                        prop_assert!(comp_of[j as usize] <= comp_of[s]);
                    }
                }
            }
        }
    }

    /// Expected steps agree with a dense solve of `y = x + A·y` on the states that reach unsafe.
    #[test]
    fn expected_steps_match_a_dense_solve(n in 2usize..50, deg in 1usize..4, seed in any::<u64>()) {
        let (d, target) = random_chain(n, deg, seed);
        let x = dense_reference(&d, &target);
        let e = expected_steps(&d, &target, &eventually(&d, &target));
        let sys: Vec<usize> = (0..n).filter(|&s| !target[s] && x[s] > 0.0).collect();
        let m = sys.len();
        let pos: Vec<Option<usize>> = (0..n).map(|s| sys.iter().position(|&t| t == s)).collect();
        let mut a = vec![vec![0.0; m + 1]; m];
        for (i, &s) in sys.iter().enumerate() {
            a[i][i] += 1.0;
            a[i][m] = x[s];
            let (cols, probs) = d.row(s as u32);
            for (&j, &p) in cols.iter().zip(probs) {
                if let Some(k) = pos[j as usize] {
                    a[i][k] -= p;
                }
            }
        }
        for c in 0..m {
            let p = (c..m).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs())).unwrap();
            a.swap(c, p);
            for r in 0..m {
                if r != c && a[r][c] != 0.0 {
                    let f = a[r][c] / a[c][c];
                    for k in c..=m {
                        a[r][k] -= f * a[c][k];
                    }
                }
            }
        }
        for (i, &s) in sys.iter().enumerate() {
            let hand = a[i][m] / a[i][i] / x[s];
            prop_assert!((e[s] - hand).abs() <= 1e-9 * hand.max(1.0), "state {}: {} vs {}", s, e[s], hand);
        }
        for s in 0..n {
            if target[s] {
                prop_assert_eq!(e[s], 0.0);
            } else if x[s] == 0.0 {
                prop_assert!(e[s].is_infinite());
            }
        }
    }
}

/// The blocked product equals the row-order CSR sum bit for bit, across several column blocks.
#[test]
fn blocked_product_is_the_csr_product() {
    let n = 3 * spmv::BLOCK_COLS + 17;
    let (d, _) = random_chain(n, 6, 11);
    let (row_ptr, cols, probs) = d.csr();
    let m = spmv::BlockedMatrix::from_row_major(n, || {
        (0..n).flat_map(move |s| {
            (row_ptr[s]..row_ptr[s + 1]).map(move |k| (s as u32, cols[k], probs[k]))
        })
    });
    assert_eq!(m.nnz(), d.n_transitions());
    let x: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64 / 999.0).collect();
    let mut y = vec![f64::NAN; n];
    m.mul(&x, &mut y);
    for s in 0..n {
        let csr: f64 = (row_ptr[s]..row_ptr[s + 1])
            .map(|k| probs[k] * x[cols[k] as usize])
            .sum();
        assert_eq!(y[s].to_bits(), csr.to_bits(), "row {s}");
    }
}

/// A component spanning several column blocks: the solution satisfies its equations to 1e-13.
#[test]
fn multi_block_component_solves_to_tolerance() {
    let n = 2 * spmv::BLOCK_COLS + 1000;
    let (d, target) = random_chain(n, 5, 5);
    let dec = decompose::decompose(&d, &target);
    let biggest = (0..dec.len())
        .map(|c| dec.component(c).0.len())
        .max()
        .unwrap();
    assert!(
        biggest > spmv::BLOCK_COLS,
        "chain too fragmented: {biggest}"
    );
    let x = eventually(&d, &target);
    let classes = dec.state_classes(n);
    let mut worst = 0.0f64;
    for s in 0..n {
        if classes[s] == Some(decompose::Class::Maybe) {
            let (cols, probs) = d.row(s as u32);
            let v: f64 = cols
                .iter()
                .zip(probs)
                .map(|(&j, &p)| p * x[j as usize])
                .sum();
            worst = worst.max((v - x[s]).abs());
        }
    }
    assert!(worst < 1e-13, "max residual {worst}");
}

#[test]
fn analyse_equals_the_separate_functions() {
    let (d, target) = random_chain(500, 3, 21);
    let a = analyse(&d, &target, &[1, 5, 30]);
    let x = eventually(&d, &target);
    assert_eq!(a.eventually, x);
    assert_eq!(a.within, bounded::within(&d, &target, &[1, 5, 30]));
    let e = expected_steps(&d, &target, &x);
    assert!(a.expected_steps.iter().zip(&e).all(|(p, q)| p == q));
    assert_eq!(a.most_likely, path::most_likely(&d, &target));
}
