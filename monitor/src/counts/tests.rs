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

/// Projecting onto a coarser space adds up the counts that map to one pair; a transition between two
/// states that map to one becomes a self-loop; run starts and tallies carry over.
#[test]
fn projected_counts_add_up_and_merge_transitions_within_a_coarse_state() {
    let mut c = Counts::new(4);
    c.observe_trace(&Toy, &[0, 1, 1, 2, 3]).unwrap();
    c.observe_trace(&Toy, &[1, 0, 2]).unwrap();
    // 0 and 1 map to 0; 2 to 1; 3 to 2.
    let p = c.project(3, |s| [0, 0, 1, 2][s as usize]).unwrap();
    assert_eq!(p.n_states(), 3);
    // 0->1, 1->1, 1->0 become self-loops of 0; 1->2 and 0->2 become 0->1; 2->3 becomes 1->2.
    assert_eq!(p.get(0, 0), 3);
    assert_eq!(p.get(0, 1), 2);
    assert_eq!(p.get(1, 2), 1);
    assert_eq!(p.n_transitions(), c.n_transitions());
    assert_eq!(p.n_runs(), 2);
    assert_eq!(p.initial_states(), vec![(0, 2)]);
    assert!(c.project(2, |s| s).is_err());
}
