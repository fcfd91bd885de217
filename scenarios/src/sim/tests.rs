use super::*;

fn scenario(name: &str) -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("{name}.toml"));
    Scenario::from_toml_str(&std::fs::read_to_string(path).expect("read")).expect("valid")
}

#[test]
fn runs_are_deterministic_per_seed() {
    let s = scenario("yellow_light");
    assert_eq!(run(&s, 5), run(&s, 5));
    assert_ne!(run(&s, 5), run(&s, 6));
}

#[test]
fn frames_are_consistent() {
    for name in [
        "yellow_light",
        "left_turn",
        "crosswalk",
        "stop_sign",
        "jammed_junction",
        "braking_leader",
        "priority_road",
    ] {
        let s = scenario(name);
        let (mut n_in_junction, mut has_junction) = (0, false);
        for seed in 0..5 {
            let frames = run(&s, seed);
            assert!(!frames.is_empty());
            assert!(frames.len() as f64 <= s.duration_s() / s.frame_period_s() + 1.5);
            for (k, f) in frames.iter().enumerate() {
                assert!((f.t - k as f64 * s.frame_period_s()).abs() < 1e-9);
                assert!(
                    f.speed_mps >= 0.0 && f.speed_mps < 25.0,
                    "{name}: speed {}",
                    f.speed_mps
                );
                assert!(
                    f.stopline_dist_m >= 0.0
                        && f.junction_dist_m >= 0.0
                        && f.crosswalk_dist_m >= 0.0
                );
                // Lane count 0 means the ego's reference point is inside the junction, so some part of it
                // is: the junction distance is 0 then (it is 0 also while only the front or rear is in).
                has_junction |= f.junction_dist_m.is_finite();
                if f.lane_number == 0 {
                    n_in_junction += 1;
                    assert_eq!(f.junction_dist_m, 0.0, "{name} seed {seed} frame {k}");
                } else {
                    assert!(f.lane_number > 0, "{name}: lane number {}", f.lane_number);
                }
            }
            // Integrated positions follow the speeds (trapezoid rule), within 1 cm per frame.
            for w in frames.windows(2) {
                let moved = (w[1].x - w[0].x).hypot(w[1].y - w[0].y);
                let expected = 0.5 * (w[0].speed_mps + w[1].speed_mps) * s.frame_period_s();
                assert!(
                    moved <= expected + 0.01,
                    "{name}: moved {moved} > {expected}"
                );
            }
        }
        assert!(
            n_in_junction > 0 || !has_junction,
            "{name}: the ego never entered the junction"
        );
    }
}

#[test]
fn speed_cap_brakes_with_bounded_deceleration() {
    let s = scenario("braking_leader");
    let mut sim = Simulation::new(&s, 1);
    let free = Command::default();
    let stop = Command {
        speed_cap_mps: Some(0.0),
    };
    let first = sim.step(&free).expect("frame");
    let mut last_v = first.speed_mps;
    let mut stopped_at = None;
    for k in 0..60 {
        let f = sim.step(&stop).expect("frame");
        if k > 0 {
            // v changes by at most 6 m/s² × 0.1 s, plus the frame's own driver braking (≤ 8 m/s²).
            assert!(last_v - f.speed_mps <= 0.8 + 1e-9);
        }
        last_v = f.speed_mps;
        if f.speed_mps == 0.0 && stopped_at.is_none() {
            stopped_at = Some(k);
        }
    }
    // From ~14 m/s at ≤ 6-8 m/s² the stop takes 2-3 s.
    let k = stopped_at.expect("the cap of 0 stops the car");
    assert!((15..=35).contains(&k), "stopped after {k} frames");
}

#[test]
fn runs_end_after_a_collision() {
    let s = scenario("braking_leader");
    let mut found = false;
    for seed in 0..60 {
        let frames = run(&s, seed);
        if let Some(k) = frames.iter().position(|f| f.collision) {
            assert!(
                frames.len() - k <= 12,
                "run continues {} frames after the collision",
                frames.len() - k
            );
            found = true;
        }
    }
    assert!(found, "no collision in 60 braking-leader runs");
}

/// The give-way junction: priority-road traffic from both sides carries `priority` until it has passed the
/// ego's lane; an attentive, patient driver never collides there; the shipped drivers sometimes do.
#[test]
fn priority_road_gives_way_unless_the_driver_lapses() {
    use std::f64::consts::FRAC_PI_2;
    let s = scenario("priority_road");
    let (mut from_right, mut from_left, mut n_collisions) = (0, 0, 0);
    for seed in 0..40 {
        let frames = run(&s, seed);
        n_collisions += usize::from(frames.iter().any(|f| f.collision));
        for f in &frames {
            for o in &f.obstacles {
                // Rear of a northbound car (heading π/2) / southbound car (3π/2) relative to the ego lane's
                // far edge plus the 0.5 m margin, in its direction of travel.
                let northbound = (o.heading - FRAC_PI_2).abs() < 1e-9;
                let southbound = (o.heading - 3.0 * FRAC_PI_2).abs() < 1e-9;
                assert!(northbound || southbound, "only cross traffic: {o:?}");
                let rear_y = o.y - o.length / 2.0 * if northbound { 1.0 } else { -1.0 };
                let past = if northbound {
                    rear_y > -1.75 + EGO_WIDTH_M / 2.0 + 0.5
                } else {
                    rear_y < -1.75 - EGO_WIDTH_M / 2.0 - 0.5
                };
                if past {
                    assert!(
                        !o.priority,
                        "seed {seed}: a car past the ego lane keeps priority"
                    );
                } else if f.junction_dist_m > 0.0 && f.junction_dist_m.is_finite() {
                    // Before the ego has entered, every car still to pass has right of way.
                    assert!(o.priority, "seed {seed} t {}: {o:?}", f.t);
                    from_right += usize::from(northbound);
                    from_left += usize::from(southbound);
                }
            }
        }
    }
    assert!(from_right > 0 && from_left > 0);
    assert!(
        (4..=20).contains(&n_collisions),
        "{n_collisions} of 40 runs collide (the file is tuned to 20-35 %)"
    );
    // The same traffic with a driver who never lapses, judges speeds right and wants 9 s gaps: no collision.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("priority_road.toml"),
    )
    .expect("read");
    let careful = text
        .lines()
        .map(|l| match l.split(" = ").next() {
            Some("lapses_per_min") => "lapses_per_min = 0.0",
            Some("critical_gap_s") => "critical_gap_s = 9.0",
            Some("speed_judgement_error") => "speed_judgement_error = 0.0",
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let careful = Scenario::from_toml_str(&careful).expect("valid");
    for seed in 0..40 {
        assert!(
            !run(&careful, seed).iter().any(|f| f.collision),
            "seed {seed}: a careful driver collided"
        );
    }
}
