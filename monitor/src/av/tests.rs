use super::*;
use crate::av::SmoothingScope;

const PREDS: [&str; 8] = [
    "collision",
    "speed < 0.5",
    "speed > 30",
    "trafficLightAhead.color == green",
    "trafficLightAhead.color == yellow",
    "trafficLightAhead.color == red",
    "NPCAhead(5)",
    "NPCAhead(10)",
];

fn domain() -> AvDomain {
    AvDomain::new(
        PREDS.iter().map(|s| s.to_string()).collect(),
        0,
        AvConfig::default(),
    )
    .unwrap()
}

/// The state where exactly the named predicates hold.
fn st(d: &AvDomain, on: &[&str]) -> StateId {
    let values: Vec<bool> = PREDS.iter().map(|p| on.contains(p)).collect();
    d.encode(&values)
}

#[test]
fn k_predicates_give_two_to_the_k_plus_one_states() {
    let d = domain();
    assert_eq!(d.n_states(), 257);
    assert_eq!(d.done(), 256);
    let s = st(&d, &["speed < 0.5", "NPCAhead(10)"]);
    assert_eq!(s, 0b1000_0010);
    assert_eq!(d.bit_string(s), "01000001");
    assert!(d.decode(s).contains("not collision, speed < 0.5"));
    assert_eq!(d.bit_string(d.done()), "done");
    assert!(AvDomain::new(vec!["x".into(); 25], 0, AvConfig::default()).is_err());
    assert!(AvDomain::new(vec!["x".into()], 1, AvConfig::default()).is_err());
}

#[test]
fn collision_states_are_unsafe_and_absorbing() {
    let d = domain();
    let crash = st(&d, &["collision", "speed > 30"]);
    let calm = st(&d, &[]);
    assert!(d.is_unsafe(crash) && d.is_terminal(crash));
    assert!(d.can_reach(crash, crash));
    assert!(!d.can_reach(crash, calm));
    assert!(!d.can_reach(crash, d.done()));
    assert!(d.can_reach(calm, crash));
    assert_eq!(
        d.filter().len(),
        d.get_state_space().iter().filter(|&&s| s & 1 == 1).count()
    );
}

#[test]
fn done_is_absorbing_and_reachable_from_every_live_state() {
    let d = domain();
    for s in d.get_state_space() {
        if !d.is_terminal(s) {
            assert!(d.can_reach(s, d.done()), "{}", d.bit_string(s));
        }
    }
    assert!(!d.can_reach(d.done(), st(&d, &[])));
    assert!(d.can_reach(d.done(), d.done()));
}

#[test]
fn speed_cannot_jump_from_standstill_to_above_thirty_in_one_frame() {
    let d = domain();
    let stopped = st(&d, &["speed < 0.5"]);
    let cruising = st(&d, &[]); // 0.5 <= speed <= 30
    let fast = st(&d, &["speed > 30"]);
    assert!(!d.can_reach(stopped, fast));
    assert!(!d.can_reach(fast, stopped));
    assert!(d.can_reach(stopped, cruising) && d.can_reach(cruising, fast));
    // An impact may stop the car at once: transitions into unsafe states are exempt.
    assert!(d.can_reach(fast, st(&d, &["collision", "speed < 0.5"])));
    // With a slow frame rate (1 Hz) the same jump is plausible at 10 m/s².
    let slow = AvDomain::new(
        PREDS.iter().map(|s| s.to_string()).collect(),
        0,
        AvConfig {
            frame_period_s: 1.0,
            ..AvConfig::default()
        },
    )
    .unwrap();
    assert!(slow.can_reach(stopped, fast));
}

#[test]
fn contradictory_predicates_make_invalid_states() {
    let d = domain();
    assert!(!d.is_valid_state(st(&d, &["speed < 0.5", "speed > 30"])));
    assert!(!d.is_valid_state(st(
        &d,
        &[
            "trafficLightAhead.color == green",
            "trafficLightAhead.color == red"
        ]
    )));
    // NPCAhead(5) (within 5 m) implies NPCAhead(10).
    assert!(!d.is_valid_state(st(&d, &["NPCAhead(5)"])));
    assert!(d.is_valid_state(st(&d, &["NPCAhead(5)", "NPCAhead(10)"])));
    // 2 speed states x 1 impossible, etc.: 256 bit-strings shrink well below.
    let valid = d.get_state_space().len();
    // speed: 3 of 4 combos; colour: 4 of 8; distance: 3 of 4; collision: 2 -> 72 bit-strings + done.
    assert_eq!(valid, 3 * 4 * 3 * 2 + 1);
}

#[test]
fn the_light_cycles_green_yellow_red_green() {
    let d = domain();
    let g = st(&d, &["trafficLightAhead.color == green"]);
    let y = st(&d, &["trafficLightAhead.color == yellow"]);
    let r = st(&d, &["trafficLightAhead.color == red"]);
    let none = st(&d, &[]);
    assert!(d.can_reach(g, y) && d.can_reach(y, r) && d.can_reach(r, g));
    assert!(!d.can_reach(g, r) && !d.can_reach(y, g) && !d.can_reach(r, y));
    assert!(d.can_reach(none, r) && d.can_reach(r, none));
    use laws::frame::light_color::{GREEN, NONE, RED};
    assert!(light_step_possible(NONE, RED) && !light_step_possible(GREEN, RED));
}

#[test]
fn large_abstractions_smooth_over_single_predicate_changes() {
    let preds: Vec<String> = (0..12).map(|i| format!("p{i}")).collect();
    let d = AvDomain::new(preds, 0, AvConfig::default()).unwrap();
    let mut out = Vec::new();
    d.smoothing_support(0b10, &mut out);
    // Itself, 12 single flips, done.
    assert_eq!(out.len(), 14);
    assert!(out.contains(&d.done()) && out.contains(&0b11) && out.contains(&0b10));
}

#[test]
fn smoothing_scope_local_versus_all_valid_on_a_small_abstraction() {
    let preds: Vec<String> = (0..4).map(|i| format!("p{i}")).collect();
    let local = AvDomain::new(preds.clone(), 0, AvConfig::default()).unwrap();
    let mut out = Vec::new();
    local.smoothing_support(0b0110, &mut out);
    // Local: itself, 4 single flips, done — and exactly one unsafe successor (bit 0 flipped).
    assert_eq!(out.len(), 6);
    assert_eq!(
        out.iter()
            .filter(|&&s| s != local.done() && s & 1 == 1)
            .count(),
        1
    );
    let all = AvDomain::new(
        preds,
        0,
        AvConfig {
            smoothing: SmoothingScope::AllValid,
            ..AvConfig::default()
        },
    )
    .unwrap();
    all.smoothing_support(0b0110, &mut out);
    // All valid: every one of the 16 bit-strings plus done; half of the bit-strings are unsafe.
    assert_eq!(out.len(), 17);
    assert_eq!(
        out.iter()
            .filter(|&&s| s != all.done() && s & 1 == 1)
            .count(),
        8
    );
}
