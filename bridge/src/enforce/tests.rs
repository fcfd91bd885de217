//! Enforcement tests: one intervention per episode, hysteresis, target speeds checked by hand.

use super::*;

fn prop(risk: f64, violated: bool) -> Decision {
    Decision {
        properties: vec![PropertyRisk {
            name: "red_light".into(),
            state_bits: "101".into(),
            state_words: "red, near stop line, fast".into(),
            risk,
            violated,
            likely_path: vec!["101".into(), "111".into(), "unsafe".into()],
            expected_time_s: Some(1.5),
            calibrated: None,
        }],
    }
}

fn frame(t: f64) -> Frame {
    Frame {
        t,
        speed_mps: 12.0,
        stopline_dist_m: 20.0,
        ..Frame::default()
    }
}

#[test]
fn one_intervention_per_episode_with_hysteresis() {
    let mut e = Enforcer::new(EnforceConfig {
        threshold: 0.5,
        hysteresis: 0.1,
        ..Default::default()
    });
    let risks = [0.2, 0.55, 0.45, 0.6, 0.41, 0.39, 0.52, 0.2];
    let mut log = Vec::new();
    for (k, r) in risks.iter().enumerate() {
        let mut ev = Vec::new();
        e.step(&frame(k as f64 * 0.1), &prop(*r, false), &mut ev);
        log.extend(ev.into_iter().map(|ev| match ev {
            Event::AlarmStart(i) => (k, i.action),
            Event::AlarmEnd(i) => (k, i.action),
            Event::Violation { .. } => (k, Action::Alert),
        }));
    }
    // Start at 0.55; 0.45 and 0.6 and 0.41 stay in the episode (clear only below 0.4); end at 0.39.
    assert_eq!(
        log,
        vec![
            (1, Action::SlowDown),
            (5, Action::Clear),
            (6, Action::SlowDown),
            (7, Action::Clear)
        ]
    );
}

#[test]
fn violation_logged_once_and_explanation_has_path_and_time() {
    let mut e = Enforcer::new(EnforceConfig::default());
    let mut ev = Vec::new();
    e.step(&frame(0.0), &prop(0.9, true), &mut ev);
    e.step(&frame(0.1), &prop(0.9, true), &mut ev);
    let n_viol = ev
        .iter()
        .filter(|e| matches!(e, Event::Violation { .. }))
        .count();
    assert_eq!(n_viol, 1);
    let Some(Event::AlarmStart(i)) = ev.iter().find(|e| matches!(e, Event::AlarmStart(_))) else {
        panic!("no alarm")
    };
    assert!(
        i.explanation.contains("101 -> 111 -> unsafe"),
        "{}",
        i.explanation
    );
    assert!(
        i.explanation.contains("expected in 1.5 s"),
        "{}",
        i.explanation
    );
    assert!(i.explanation.contains("0.900 >= 0.5"), "{}", i.explanation);
    let json = serde_json::to_value(i).unwrap();
    assert_eq!(json["action"], "slow_down");
    assert_eq!(json["horizon_s"], serde_json::Value::Null);
    assert_eq!(json["state"], "101");
}

#[test]
fn target_speed_lets_the_car_stop_before_the_line() {
    let cfg = EnforceConfig {
        decel_mps2: 3.0,
        stop_margin_m: 2.0,
        ..Default::default()
    };
    // 20 m to the line, 2 m margin: sqrt(2 * 3 * 18) = sqrt(108) = 10.392 m/s.
    let v = target_speed_mps(&frame(0.0), &cfg);
    assert!((v - 10.392_304_845).abs() < 1e-6, "{v}");
    // A speed limit below that wins.
    let f = Frame {
        speed_limit_mps: 8.0,
        ..frame(0.0)
    };
    assert_eq!(target_speed_mps(&f, &cfg), 8.0);
    // Already slower than both: keep the current speed.
    let f = Frame {
        speed_mps: 5.0,
        ..frame(0.0)
    };
    assert_eq!(target_speed_mps(&f, &cfg), 5.0);
    // Inside the margin: stop.
    let f = Frame {
        stopline_dist_m: 1.0,
        ..frame(0.0)
    };
    assert_eq!(target_speed_mps(&f, &cfg), 0.0);
    // Open road: halve.
    let f = Frame {
        stopline_dist_m: f64::INFINITY,
        ..frame(0.0)
    };
    assert_eq!(target_speed_mps(&f, &cfg), 6.0);
}

#[test]
fn calibrated_threshold_and_debounce_apply_only_when_asked() {
    let risks = [0.35, 0.2, 0.35, 0.36, 0.37, 0.1];
    let run = |use_calibrated: bool| {
        let mut e = Enforcer::new(EnforceConfig {
            threshold: 0.5,
            use_calibrated,
            ..Default::default()
        });
        let mut starts = Vec::new();
        for (k, r) in risks.iter().enumerate() {
            let mut d = prop(*r, false);
            d.properties[0].calibrated = Some((0.3, 2));
            let mut ev = Vec::new();
            e.step(&frame(k as f64 * 0.1), &d, &mut ev);
            for event in ev {
                if let Event::AlarmStart(i) = event {
                    starts.push((k, i.threshold));
                }
            }
        }
        starts
    };
    // θ = 0.3 held for 2 frames: the one-frame 0.35 at frame 0 is ignored, frames 2-3 start an episode.
    assert_eq!(run(true), vec![(3, 0.3)]);
    // Without the flag the command-line θ = 0.5 rules and nothing reaches it.
    assert!(run(false).is_empty());
}
