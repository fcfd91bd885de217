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
