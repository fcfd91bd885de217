use super::*;

#[test]
fn reproduces_the_papers_worked_example() {
    // m = 10, ε = 0.05, δ = 0.01 -> δ' = 0.001; hardest frequency 0.2 -> d = 0.3.
    let r = required_samples(0.05, 0.01 / 10.0, 0.3);
    // Hand computation: 800 · ln 2000 · (0.25 − (0.3 − 0.0333…)²) = 800 · 7.6009 · 0.17889 ≈ 1087.8.
    let hand = 800.0 * 2000f64.ln() * (0.25 - (0.3f64 - 0.1 / 3.0).powi(2));
    assert!((r - hand).abs() < 1e-9);
    assert!((r - 1087.8).abs() < 0.5, "{r}");
    assert!(400.0 < r, "n_p = 400 does not meet the bound");
}

/// Ten learned states; the last (10) is terminal. All transitions valid.
struct Ten;
impl Domain for Ten {
    fn n_states(&self) -> usize {
        11
    }
    fn is_valid_state(&self, _: StateId) -> bool {
        true
    }
    fn can_reach(&self, _: StateId, _: StateId) -> bool {
        true
    }
    fn is_unsafe(&self, s: StateId) -> bool {
        s == 10
    }
    fn is_terminal(&self, s: StateId) -> bool {
        s == 10
    }
    fn decode(&self, s: StateId) -> String {
        format!("s{s}")
    }
}

#[test]
fn summary_counts_met_states_and_ranks_the_worst() {
    let mut c = Counts::new(11);
    // State 0: 400 transitions spread 80 each over 5 successors (frequencies 0.2) -> needs ~1087.
    for q in 1..=5 {
        for _ in 0..80 {
            c.observe_trace(&Ten, &[0, q]).unwrap();
        }
    }
    // State 1: 5000 transitions to 2 -> frequency 1, d = 0.5: needs 800·ln(2000)·(0.25 − 0.4667²) ≈ 197.
    for _ in 0..5000 {
        c.observe_trace(&Ten, &[1, 2]).unwrap();
    }
    let cfg = PacConfig {
        epsilon: 0.05,
        delta: 0.01,
    };
    let s = PacSummary::compute(&Ten, &c, cfg).unwrap();
    assert_eq!(s.total(), 10);
    assert_eq!(s.visited(), 2);
    assert_eq!(s.met(), 1);
    assert!(s.state_met(1) && !s.state_met(0) && !s.state_met(10));
    let (n0, req0) = s.state(0).unwrap();
    assert_eq!(n0, 400);
    assert!((req0 - 1087.8).abs() < 0.5);
    assert_eq!(s.worst(3), vec![(0, 400, req0)]);
    assert_eq!(s.state(10), None);
    // Achieved ε: state 1's data meet a tighter ε than 0.05, state 0's only a looser one.
    assert!(s.epsilon_of(1) < 0.05 && s.epsilon_of(0) > 0.05 && s.epsilon_of(0) < 1.0);
    let (n, d) = (400, 0.3);
    let e = achieved_epsilon(n, 0.001, d);
    assert!((required_samples(e, 0.001, d) - 400.0).abs() < 1e-6);
}

#[test]
fn rejects_parameters_outside_the_unit_interval() {
    let c = Counts::new(11);
    for (epsilon, delta) in [(0.0, 0.1), (0.1, 1.0), (f64::NAN, 0.1)] {
        assert!(PacSummary::compute(&Ten, &c, PacConfig { epsilon, delta }).is_err());
    }
}
