use super::*;

/// Four states; state 3 is unsafe and absorbing; state 2 may not go to state 0 (an invalid transition).
struct Toy;
impl Domain for Toy {
    fn n_states(&self) -> usize {
        4
    }
    fn is_valid_state(&self, _: StateId) -> bool {
        true
    }
    fn can_reach(&self, from: StateId, to: StateId) -> bool {
        (from != 3 || to == 3) && !(from == 2 && to == 0)
    }
    fn is_unsafe(&self, s: StateId) -> bool {
        s == 3
    }
    fn is_terminal(&self, s: StateId) -> bool {
        s == 3
    }
    fn decode(&self, s: StateId) -> String {
        format!("s{s}")
    }
}

fn counts(traces: &[&[StateId]]) -> Counts {
    let mut c = Counts::new(4);
    for t in traces {
        c.observe_trace(&Toy, t).unwrap();
    }
    c
}

#[test]
fn smoothing_adds_alpha_to_valid_transitions_only() {
    // 0->0 once, 0->1 twice; 1->3 once.
    let c = counts(&[&[0, 0, 1], &[0, 1, 3]]);
    let l = build_dtmc(&Toy, &c, &LaplaceConfig { alpha: 1.0 }).unwrap();
    let d = &l.dtmc;
    // Row 0: weights 1+1, 2+1, 0+1, 0+1 over 7.
    assert!((d.prob(0, 0) - 2.0 / 7.0).abs() < 1e-15);
    assert!((d.prob(0, 1) - 3.0 / 7.0).abs() < 1e-15);
    assert!((d.prob(0, 2) - 1.0 / 7.0).abs() < 1e-15);
    assert!((d.prob(0, 3) - 1.0 / 7.0).abs() < 1e-15);
    // Row 2: unobserved; α spread over its three valid successors, none to the invalid 2 -> 0.
    assert_eq!(d.prob(2, 0), 0.0);
    assert!((d.prob(2, 1) - 1.0 / 3.0).abs() < 1e-15);
    // Unsafe state 3 is absorbing regardless of data.
    assert_eq!(d.row(3), (&[3u32][..], &[1.0][..]));
    assert!(l.deadlocks.is_empty());
}

#[test]
fn without_smoothing_unobserved_states_become_reported_deadlocks() {
    let c = counts(&[&[0, 1, 3]]);
    let l = build_dtmc(&Toy, &c, &LaplaceConfig { alpha: 0.0 }).unwrap();
    assert_eq!(l.deadlocks, vec![2]);
    assert_eq!(l.dtmc.prob(2, 2), 1.0);
    assert_eq!(l.dtmc.prob(0, 1), 1.0);
}

#[test]
fn rejects_bad_alpha_and_mismatched_counts() {
    let c = counts(&[&[0, 1]]);
    assert!(build_dtmc(&Toy, &c, &LaplaceConfig { alpha: -1.0 }).is_err());
    assert!(build_dtmc(&Toy, &c, &LaplaceConfig { alpha: f64::NAN }).is_err());
    assert!(build_dtmc(&Toy, &Counts::new(5), &LaplaceConfig::default()).is_err());
}

/// Five states: 0–2 ordinary, 3 unsafe, 4 the safe finish; every transition out of 0–2 is valid.
struct WithFinish;
impl Domain for WithFinish {
    fn n_states(&self) -> usize {
        5
    }
    fn is_valid_state(&self, _: StateId) -> bool {
        true
    }
    fn can_reach(&self, from: StateId, to: StateId) -> bool {
        from < 3 || to == from
    }
    fn is_unsafe(&self, s: StateId) -> bool {
        s == 3
    }
    fn is_terminal(&self, s: StateId) -> bool {
        s >= 3
    }
    fn decode(&self, s: StateId) -> String {
        format!("s{s}")
    }
}

/// The outcome prior moves the smoothing mass on the two outcomes (2α in all) to 2α·r on the unsafe
/// state and 2α·(1 − r) on the finish, leaving the other entries and the counts alone; r = ½ is flat
/// smoothing exactly.
#[test]
fn an_outcome_prior_splits_the_smoothing_mass_between_violation_and_finish() {
    let mut c = Counts::new(5);
    // 0 -> 0, 0 -> 1, 1 -> 3 (violation); 0 -> 4 (finish).
    c.observe_trace(&WithFinish, &[0, 0, 1, 3]).unwrap();
    c.observe_trace(&WithFinish, &[0, 4]).unwrap();
    let cfg = LaplaceConfig { alpha: 0.5 };
    let prior = [0.9, 0.2, 0.5, 0.0, 0.0];
    let l = build_dtmc_with_prior(&WithFinish, &c, &cfg, Some(&prior)).unwrap();
    let d = &l.dtmc;
    // Row 0: counts 0->0 1, 0->1 1, 0->4 1; α = 0.5 on 0, 1, 2; outcomes 2α = 1 split 0.9 : 0.1.
    // Weights: s0 1.5, s1 1.5, s2 0.5, unsafe 0.9, finish 1 + 0.1 = 1.1; total 5.5.
    for (j, w) in [(0, 1.5), (1, 1.5), (2, 0.5), (3, 0.9), (4, 1.1)] {
        assert!((d.prob(0, j) - w / 5.5).abs() < 1e-15, "0 -> {j}");
    }
    // Row 1: counts 1->3 1; outcomes split 0.2 : 0.8. Weights 0.5 ×3, unsafe 1.2, finish 0.8; total 3.5.
    for (j, w) in [(0, 0.5), (1, 0.5), (2, 0.5), (3, 1.2), (4, 0.8)] {
        assert!((d.prob(1, j) - w / 3.5).abs() < 1e-15, "1 -> {j}");
    }
    // A prior of ½ everywhere is flat smoothing, to the bit.
    let half = [0.5; 5];
    let flat = build_dtmc(&WithFinish, &c, &cfg).unwrap();
    assert_eq!(
        build_dtmc_with_prior(&WithFinish, &c, &cfg, Some(&half)).unwrap(),
        flat
    );
    // A certain prior drops the other outcome from the row (no zero entries).
    let sure = [1.0; 5];
    let l = build_dtmc_with_prior(&WithFinish, &c, &cfg, Some(&sure)).unwrap();
    assert_eq!(l.dtmc.prob(2, 4), 0.0);
    assert!((l.dtmc.prob(2, 3) - 1.0 / 2.5).abs() < 1e-15);
    assert!(!l.dtmc.row(2).0.contains(&4));
}

#[test]
fn rejects_a_malformed_outcome_prior() {
    let c = Counts::new(5);
    let cfg = LaplaceConfig::default();
    for bad in [&[0.5; 4][..], &[0.5, 0.5, 1.5, 0.5, 0.5], &[f64::NAN; 5]] {
        let e = build_dtmc_with_prior(&WithFinish, &c, &cfg, Some(bad)).unwrap_err();
        assert!(e.to_string().contains("prior"), "{e}");
    }
}
