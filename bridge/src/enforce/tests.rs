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
            enforcement: None,
            collision: false,
        }],
        seen: None,
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
            Event::AlarmEnd(i) | Event::AlarmUpdate(i) => (k, i.action),
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
    let run_with = |use_calibrated: bool, enforcement: Option<(f64, u32)>| {
        let mut e = Enforcer::new(EnforceConfig {
            threshold: 0.5,
            use_calibrated,
            ..Default::default()
        });
        let mut starts = Vec::new();
        for (k, r) in risks.iter().enumerate() {
            let mut d = prop(*r, false);
            d.properties[0].calibrated = Some((0.3, 2));
            d.properties[0].enforcement = enforcement;
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
    let run = |use_calibrated| run_with(use_calibrated, None);
    // θ = 0.3 held for 2 frames: the one-frame 0.35 at frame 0 is ignored, frames 2-3 start an episode.
    assert_eq!(run(true), vec![(3, 0.3)]);
    // Without the flag the command-line θ = 0.5 rules and nothing reaches it.
    assert!(run(false).is_empty());
    // An interventions' own threshold (a collision property's) wins over the alarm's: at θ = 0.2 without
    // debounce frame 0 starts; at θ = 0.36 held for 2 frames, frame 4. The command-line θ still rules
    // both.
    assert_eq!(run_with(true, Some((0.2, 1))), vec![(0, 0.2)]);
    assert_eq!(run_with(true, Some((0.36, 2))), vec![(4, 0.36)]);
    assert!(run_with(false, Some((0.2, 1))).is_empty());
}

/// The ego at the origin heading +x at 5 m/s, accelerating at `accel`; with `crossing`, a car crosses from
/// the left at 10 m/s through the ego's nose (the brake check's own test: braking stops the ego in its
/// path, keeping on clears it).
fn turning(t: f64, accel_mps2: f64, crossing: bool) -> Frame {
    let car = laws::Obstacle {
        id: 7,
        kind: laws::frame::obstacle_type::VEHICLE,
        x: 2.0,
        y: 15.0,
        heading: -std::f64::consts::FRAC_PI_2,
        speed_mps: 10.0,
        length: 4.5,
        width: 1.8,
        priority: true,
    };
    Frame {
        t,
        speed_mps: 5.0,
        accel_mps2,
        speed_limit_mps: 20.0,
        junction_dist_m: 30.0,
        obstacles: if crossing { vec![car] } else { Vec::new() },
        ..Frame::default()
    }
}

fn events_of(e: &mut Enforcer, frame: &Frame, risk: f64) -> Vec<(&'static str, Action)> {
    let mut ev = Vec::new();
    e.step(frame, &prop(risk, false), &mut ev);
    ev.into_iter()
        .filter_map(|ev| match ev {
            Event::AlarmStart(i) => Some(("start", i.action)),
            Event::AlarmUpdate(i) => Some(("update", i.action)),
            Event::AlarmEnd(i) => Some(("end", i.action)),
            Event::Violation { .. } => None,
        })
        .collect()
}

#[test]
fn braking_into_a_road_users_path_becomes_an_alert() {
    for action in [Action::SlowDown, Action::Stop] {
        let mut e = Enforcer::new(EnforceConfig {
            action,
            ..Default::default()
        });
        let mut ev = Vec::new();
        e.step(&turning(0.0, 1.0, true), &prop(0.9, false), &mut ev);
        let Some(Event::AlarmStart(i)) = ev.first() else {
            panic!("no alarm: {ev:?}")
        };
        assert_eq!(i.action, Action::Alert);
        assert_eq!(i.target_speed_mps, None);
        assert!(
            i.explanation
                .contains("brake check: braking would come 0.0 m from road user 7 in "),
            "{}",
            i.explanation
        );
        assert!(i
            .explanation
            .ends_with("so no slow-down: the vehicle's own controller stays in charge"));
        // Turned off, the same frame gets the configured action.
        let mut off = Enforcer::new(EnforceConfig {
            action,
            brake_check_s: 0.0,
            ..Default::default()
        });
        assert_eq!(
            events_of(&mut off, &turning(0.0, 1.0, true), 0.9),
            vec![("start", action)]
        );
        // Alert mode has nothing to check.
        let mut alert = Enforcer::new(EnforceConfig {
            action: Action::Alert,
            ..Default::default()
        });
        assert_eq!(
            events_of(&mut alert, &turning(0.0, 1.0, true), 0.9),
            vec![("start", Action::Alert)]
        );
    }
}

/// A model that reads road users otherwise than as they arrive (moved ahead by a latency, smoothed) hands
/// the frame as it read it to the enforcer, and the brake check rolls the road users out from there: its
/// verdict on a frame equals the verdict on that frame as given, and differs from the verdict on the frame
/// as it arrived.
#[test]
fn the_brake_check_rolls_out_road_users_where_the_model_sees_them() {
    let explain = |frame: &Frame, seen: Option<Frame>| {
        let mut e = Enforcer::new(EnforceConfig::default());
        let mut ev = Vec::new();
        let decision = Decision {
            seen,
            ..prop(0.9, false)
        };
        e.step(frame, &decision, &mut ev);
        match ev.first() {
            Some(Event::AlarmStart(i)) => (i.action, i.explanation.clone()),
            other => panic!("no alarm: {other:?}"),
        }
    };
    // The crossing car 0.4 s further up its path than in `turning`: 4 m, at 10 m/s.
    let mut arrived = turning(0.0, 1.0, true);
    arrived.obstacles[0].y += 4.0;
    let mut moved = arrived.clone();
    moved.advance_road_users(0.4);
    assert!((moved.obstacles[0].y - 15.0).abs() < 1e-9);
    let late = explain(&arrived, Some(moved.clone()));
    assert_eq!(late, explain(&moved, None));
    assert_eq!(late.0, Action::Alert, "{}", late.1);
    assert_ne!(late, explain(&arrived, None));
}

#[test]
fn an_episode_is_revised_when_the_brake_check_turns() {
    let mut e = Enforcer::new(EnforceConfig::default());
    // Nobody near: brake. The vehicle was accelerating at +1 m/s² before it.
    assert_eq!(
        events_of(&mut e, &turning(0.0, 1.0, false), 0.9),
        vec![("start", Action::SlowDown)]
    );
    // Braking now (our slow-down): the car appears. "Keeping on" is the vehicle's own +1 m/s², not the
    // braking we asked for, so the check holds off; the episode is revised to an alert, once.
    assert_eq!(
        events_of(&mut e, &turning(0.1, -3.0, true), 0.9),
        vec![("update", Action::Alert)]
    );
    assert!(events_of(&mut e, &turning(0.2, 1.0, true), 0.9).is_empty());
    // The car is gone: braking is safe again.
    assert_eq!(
        events_of(&mut e, &turning(0.3, 1.0, false), 0.9),
        vec![("update", Action::SlowDown)]
    );
    // The episode ends as before.
    assert_eq!(
        events_of(&mut e, &turning(0.4, 1.0, false), 0.1),
        vec![("end", Action::Clear)]
    );
}

#[test]
fn every_episode_of_the_vehicle_gets_the_same_verdict() {
    // Two properties; a holds off braking from frame 0 on. At frame 1 the crossing car is 5 m to the side,
    // so both futures touch it: a vehicle that holds off goes on holding off, and b, starting then, is
    // told the same (not to brake, which alone would stop the vehicle in the car's path).
    let two = |a: f64, b: f64| Decision {
        properties: ["a", "b"]
            .iter()
            .zip([a, b])
            .map(|(name, risk)| PropertyRisk {
                name: (*name).into(),
                risk,
                ..prop(risk, false).properties[0].clone()
            })
            .collect(),
        seen: None,
    };
    let mut e = Enforcer::new(EnforceConfig::default());
    let mut ev = Vec::new();
    e.step(&turning(0.0, 1.0, true), &two(0.9, 0.1), &mut ev);
    let mut close = turning(0.1, 1.0, true);
    close.obstacles[0].y = 5.0;
    let c = brake_check::check(
        &close,
        &brake_check::Futures {
            curvature: 0.0,
            own_accel_mps2: 1.0,
            decel_mps2: 3.0,
            horizon_s: 3.0,
        },
    );
    assert!(c.hold_off(true) && !c.hold_off(false), "{c:?}");
    e.step(&close, &two(0.9, 0.9), &mut ev);
    let sent: Vec<(String, Action)> = ev
        .iter()
        .filter_map(|ev| match ev {
            Event::AlarmStart(i) | Event::AlarmUpdate(i) => Some((i.property.clone(), i.action)),
            _ => None,
        })
        .collect();
    assert_eq!(
        sent,
        vec![("a".into(), Action::Alert), ("b".into(), Action::Alert)]
    );
}

#[test]
fn a_collision_episode_lasts_at_least_the_hold() {
    // Risk 0.9 at t = 0, then 0.1 (below θ − hysteresis) from t = 0.1 on.
    let ends = |collision: bool, hold: f64| {
        let mut e = Enforcer::new(EnforceConfig {
            collision_hold_s: hold,
            ..Default::default()
        });
        let mut end = None;
        for k in 0..20 {
            let mut d = prop(if k == 0 { 0.9 } else { 0.1 }, false);
            d.properties[0].collision = collision;
            let mut ev = Vec::new();
            e.step(&frame(k as f64 * 0.1), &d, &mut ev);
            if ev.iter().any(|ev| matches!(ev, Event::AlarmEnd(_))) {
                end = Some(k);
            }
        }
        end
    };
    // A collision property's slow-down holds for 1 s (frames 0–9), a law's ends at once.
    assert_eq!(ends(true, 1.0), Some(10));
    assert_eq!(ends(false, 1.0), Some(1));
    assert_eq!(ends(true, 0.0), Some(1));
}
