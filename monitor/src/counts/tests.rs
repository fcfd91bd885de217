use super::*;

/// Four states, all transitions valid except leaving state 3 (absorbing) for another state.
struct Toy;
impl Domain for Toy {
    fn n_states(&self) -> usize {
        4
    }
    fn is_valid_state(&self, _: StateId) -> bool {
        true
    }
    fn can_reach(&self, from: StateId, to: StateId) -> bool {
        from != 3 || to == 3
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

#[test]
fn counts_valid_pairs_and_tallies_invalid_ones() {
    let mut c = Counts::new(4);
    c.observe_trace(&Toy, &[0, 1, 1, 3, 2]).unwrap();
    assert_eq!(c.get(0, 1), 1);
    assert_eq!(c.get(1, 1), 1);
    assert_eq!(c.get(1, 3), 1);
    assert_eq!(c.get(3, 2), 0);
    assert_eq!(c.n_invalid(), 1);
    assert_eq!(c.n_transitions(), 3);
    assert_eq!(c.n_runs(), 1);
    assert!(c.observe_trace(&Toy, &[0, 9]).is_err());
}

#[test]
fn merging_separately_learned_counts_equals_learning_all_at_once() {
    let runs: Vec<Vec<StateId>> = vec![
        vec![0, 1, 2, 3],
        vec![0, 0, 1],
        vec![2, 2, 1, 0, 3],
        vec![1],
    ];
    let mut all = Counts::new(4);
    for r in &runs {
        all.observe_trace(&Toy, r).unwrap();
    }
    let (mut a, mut b) = (Counts::new(4), Counts::new(4));
    for r in &runs[..2] {
        a.observe_trace(&Toy, r).unwrap();
    }
    for r in &runs[2..] {
        b.observe_trace(&Toy, r).unwrap();
    }
    a.merge(&b).unwrap();
    assert_eq!(a, all);
    assert!(a.merge(&Counts::new(5)).is_err());
}

#[test]
fn serialised_counts_round_trip_and_reject_out_of_range_states() {
    let mut c = Counts::new(4);
    c.observe_trace(&Toy, &[0, 1, 2, 3]).unwrap();
    let bytes = postcard::to_stdvec(&c).unwrap();
    assert_eq!(postcard::from_bytes::<Counts>(&bytes).unwrap(), c);
    let parts = CountsParts {
        n_states: 4,
        triplets: vec![(0, 7, 1)],
        n_invalid: 0,
        n_runs: 1,
        starts: vec![],
    };
    let bad = postcard::to_stdvec(&parts).unwrap();
    assert!(postcard::from_bytes::<Counts>(&bad).is_err());
}
