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
