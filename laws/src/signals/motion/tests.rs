use super::*;
use crate::frame::{Frame, Obstacle};
use crate::signals::{Signal, SignalContext, SignalSet, Signals};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn required_deceleration_and_its_edge_cases() {
    assert!(close(required_decel_mps2(10.0, 20.0), 2.5));
    // Stopped, nothing ahead: no demand. Moving with the front on the line: cannot stop before it.
    assert_eq!(required_decel_mps2(0.1, 5.0), 0.0);
    assert_eq!(required_decel_mps2(10.0, f64::INFINITY), 0.0);
    assert_eq!(required_decel_mps2(10.0, 0.0), f64::INFINITY);
    assert_eq!(required_decel_mps2(0.0, 0.0), 0.0);
    assert!(close(time_to_reach_s(10.0, 30.0), 3.0));
    assert_eq!(time_to_reach_s(0.0, 30.0), f64::INFINITY);
    assert_eq!(time_to_reach_s(0.0, 0.0), 0.0);
    assert_eq!(time_to_reach_s(10.0, f64::INFINITY), f64::INFINITY);
}

#[test]
fn time_to_the_speed_limit_and_its_edge_cases() {
    // 10 m/s under a 15 m/s limit, gaining 2 m/s per second: 2.5 s.
    assert!(close(time_to_limit_s(10.0, 15.0, 2.0), 2.5));
    // At or above the limit: there already, whatever the acceleration.
    assert_eq!(time_to_limit_s(15.0, 15.0, -3.0), 0.0);
    assert_eq!(time_to_limit_s(20.0, 15.0, 1.0), 0.0);
    // Not speeding up: never.
    assert_eq!(time_to_limit_s(10.0, 15.0, 0.0), f64::INFINITY);
    assert_eq!(time_to_limit_s(10.0, 15.0, -1.0), f64::INFINITY);
    // No limit, or values that are not numbers: never, and never NaN.
    assert_eq!(time_to_limit_s(10.0, f64::INFINITY, 2.0), f64::INFINITY);
    assert_eq!(time_to_limit_s(f64::NAN, 15.0, 2.0), f64::INFINITY);
    assert_eq!(time_to_limit_s(10.0, f64::NAN, 2.0), f64::INFINITY);
    assert_eq!(time_to_limit_s(10.0, 15.0, f64::NAN), f64::INFINITY);
    assert_eq!(time_to_limit_s(10.0, 15.0, f64::INFINITY), f64::INFINITY);
}

#[test]
fn frame_signals_use_the_right_distances() {
    let all = |f: &Frame| Signals::from_frame(f, &SignalContext::default());
    let f = Frame {
        speed_mps: 12.0,
        stopline_dist_m: 18.0,
        stopsign_dist_m: 36.0,
        junction_dist_m: 24.0,
        ..Frame::default()
    };
    let s = all(&f);
    assert!(close(s.get(Signal::StoplineDecel), 4.0));
    assert!(close(s.get(Signal::StopSignDecel), 2.0));
    assert!(close(s.get(Signal::JunctionDecel), 3.0));
    assert!(close(s.get(Signal::JunctionTime), 2.0));
    // Inside the junction (distance 0): nothing to stop for, already there.
    let inside = all(&Frame {
        junction_dist_m: 0.0,
        ..f.clone()
    });
    assert_eq!(inside.get(Signal::JunctionDecel), 0.0);
    assert_eq!(inside.get(Signal::JunctionTime), 0.0);
    // On the stop line at speed.
    let on_line = all(&Frame {
        stopline_dist_m: 0.0,
        ..f.clone()
    });
    assert_eq!(on_line.get(Signal::StoplineDecel), f64::INFINITY);
    // No road user: every motion signal is +inf, and RSS is quiet.
    for sig in [
        Signal::ClosestApproach,
        Signal::ClosestApproachTime,
        Signal::ClosestApproachTtc,
        Signal::ClosestApproachAccTtc,
        Signal::PriorityConflict,
        Signal::PriorityConflictTime,
        Signal::PriorityConflictEgoTime,
        Signal::PriorityConflictGap,
    ] {
        assert_eq!(s.get(sig), f64::INFINITY, "{}", sig.name());
    }
    assert_eq!(s.get(Signal::RssDangerous), 0.0);
}

fn crossing_car(x: f64, y: f64, speed_mps: f64, priority: bool) -> Obstacle {
    Obstacle {
        priority,
        ..Obstacle::car(x, y, std::f64::consts::FRAC_PI_2, speed_mps)
    }
}

#[test]
fn priority_conflict_is_the_hand_computed_one() {
    // Ego east at 10 m/s; a priority car 20 m ahead, 10 m to the right, north at 10 m/s. Ego in the
    // area over [15.3014, 22.0014] m = [1.53014, 2.20014] s; the car over [6.97, 13.03] m = [0.697,
    // 1.303] s: it will have left 0.22714 s before the ego arrives.
    let f = Frame {
        speed_mps: 10.0,
        obstacles: vec![crossing_car(20.0, -10.0, 10.0, true)],
        ..Frame::default()
    };
    let m = MotionSignals::from_frame_needed(
        &f,
        MotionNeeds {
            cpa: true,
            contact_accelerating: false,
            priority_conflict: true,
        },
    );
    assert!(close(m.conflict_m, 6.97), "{m:?}");
    assert!(close(m.conflict_time_s, 0.697), "{m:?}");
    assert!(close(m.conflict_ego_time_s, 1.53014), "{m:?}");
    assert!(close(m.conflict_gap_s, 1.53014 - 1.303), "{m:?}");
    // 20 m to the right it arrives while the ego is in the area: gap 0. It is also the CPA: they touch.
    let f = Frame {
        obstacles: vec![crossing_car(20.0, -20.0, 10.0, true)],
        ..f
    };
    let m = MotionSignals::from_frame_needed(
        &f,
        MotionNeeds {
            cpa: true,
            contact_accelerating: false,
            priority_conflict: true,
        },
    );
    assert_eq!(m.conflict_gap_s, 0.0);
    assert_eq!(m.cpa_m, 0.0);
    assert!(
        close(m.cpa_ttc_s, 1.697) && m.cpa_ttc_s == m.cpa_time_s,
        "{m:?}"
    );
}

#[test]
fn priority_conflict_picks_the_most_critical_and_ignores_the_rest() {
    let ego = |speed_mps: f64, obstacles: Vec<Obstacle>| Frame {
        speed_mps,
        obstacles,
        ..Frame::default()
    };
    let needs = MotionNeeds {
        cpa: false,
        contact_accelerating: false,
        priority_conflict: true,
    };
    // Without the priority flag, or driving parallel, or past the area: nothing.
    for o in [
        crossing_car(20.0, -20.0, 10.0, false),
        Obstacle {
            heading: 0.0,
            ..crossing_car(20.0, -3.5, 10.0, true)
        },
        crossing_car(20.0, 10.0, 10.0, true),
    ] {
        let m = MotionSignals::from_frame_needed(&ego(10.0, vec![o]), needs);
        assert_eq!(m, MotionSignals::NONE, "{o:?}");
    }
    // Two priority cars: the one arriving with the ego (gap 0) wins over the nearer one (gap 0.227 s).
    let m = MotionSignals::from_frame_needed(
        &ego(
            10.0,
            vec![
                crossing_car(20.0, -10.0, 10.0, true),
                crossing_car(20.0, -20.0, 10.0, true),
            ],
        ),
        needs,
    );
    assert_eq!(m.conflict_gap_s, 0.0);
    assert!(close(m.conflict_m, 16.97));
    // A stopped ego before the area never arrives: gap +inf, but the approaching car is still reported.
    let m = MotionSignals::from_frame_needed(
        &ego(0.0, vec![crossing_car(20.0, -20.0, 10.0, true)]),
        needs,
    );
    assert_eq!(m.conflict_gap_s, f64::INFINITY);
    assert_eq!(m.conflict_ego_time_s, f64::INFINITY);
    assert!(close(m.conflict_time_s, 1.697));
    // A stopped ego *inside* the area never leaves it: any arriving car overlaps.
    let m = MotionSignals::from_frame_needed(
        &ego(0.0, vec![crossing_car(2.0, -20.0, 10.0, true)]),
        needs,
    );
    assert_eq!(m.conflict_gap_s, 0.0);
    assert_eq!(m.conflict_ego_time_s, 0.0);
}

#[test]
fn cpa_takes_the_smallest_gap_then_the_earliest() {
    let car = |x: f64, y: f64, heading: f64, speed_mps: f64| Obstacle {
        heading,
        ..crossing_car(x, y, speed_mps, false)
    };
    let needs = MotionNeeds {
        cpa: true,
        contact_accelerating: false,
        priority_conflict: false,
    };
    // A still car 45 m ahead in the lane (touched at (43 − 3.6986) / 10 s) and one 40 m ahead, 3.5 m to
    // the left (passed at its lateral gap 3.5 − 1 − 1.03 from (38 − 3.6986) / 10 s): the touch wins.
    let f = Frame {
        speed_mps: 10.0,
        obstacles: vec![car(40.0, 3.5, 0.0, 0.0), car(45.0, 0.0, 0.0, 0.0)],
        ..Frame::default()
    };
    let m = MotionSignals::from_frame_needed(&f, needs);
    assert_eq!(m.cpa_m, 0.0);
    assert!(
        close(m.cpa_time_s, 3.93014) && m.cpa_ttc_s == m.cpa_time_s,
        "{m:?}"
    );
    // Without the one in the lane: the lateral gap, first reached at 3.43014 s; no collision.
    let f = Frame {
        obstacles: vec![car(40.0, 3.5, 0.0, 0.0)],
        ..f
    };
    let m = MotionSignals::from_frame_needed(&f, needs);
    assert!(
        close(m.cpa_m, 1.47) && close(m.cpa_time_s, 3.43014),
        "{m:?}"
    );
    assert_eq!(m.cpa_ttc_s, f64::INFINITY);
    // Not needed: not computed.
    let none = Signals::from_frame_needed(
        &f,
        &SignalContext::default(),
        [Signal::Speed].into_iter().collect::<SignalSet>(),
    );
    assert_eq!(none.get(Signal::ClosestApproach), f64::INFINITY);
}

#[test]
fn time_to_collision_at_the_current_acceleration_sees_a_pull_out() {
    // Ego crawling away from a give-way line at 0.1 m/s, accelerating at 2 m/s²; a priority car 20 m to
    // the right heading north at 10 m/s, its centre line 10 m ahead of the ego's reference point.
    let f = Frame {
        speed_mps: 0.1,
        accel_mps2: 2.0,
        obstacles: vec![crossing_car(10.0, -20.0, 10.0, true)],
        ..Frame::default()
    };
    let s = Signals::from_frame(&f, &SignalContext::default());
    // At constant speed the ego never gets there in time; at constant acceleration it does.
    assert_eq!(s.get(Signal::ClosestApproachTtc), f64::INFINITY);
    let acc_ttc = s.get(Signal::ClosestApproachAccTtc);
    let ego = crate::geometry::ego_rect();
    let car = crate::geometry::EgoFrame::of(&f).mover(&f.obstacles[0]);
    let expected = crate::geometry::contact::Accelerating {
        speed_mps: 0.1,
        accel_mps2: 2.0,
        other_mps: (car.v_lon_mps, car.v_lat_mps),
        horizon_s: CPA_HORIZON_S,
    }
    .first_contact(&ego, &car.rect);
    assert_eq!(Some(acc_ttc), expected);
    // By hand: the car (4 m × 2 m) covers x ∈ [9, 11] m and the ego's strip |y| ≤ 1.03 m while
    // t ∈ [1.697, 2.303] s; the ego's front (3.6986 m) reaches x = 9 m when 0.1 t + t² = 5.3014, inside
    // that window.
    let by_hand = (-0.1 + (0.01f64 + 4.0 * 5.3014).sqrt()) / 2.0;
    assert!(close(acc_ttc, by_hand), "{acc_ttc} against {by_hand}");
    // Braking hard instead, it stays short of the car's path: no contact.
    let braking = Signals::from_frame(
        &Frame {
            accel_mps2: -3.0,
            ..f.clone()
        },
        &SignalContext::default(),
    );
    assert_eq!(braking.get(Signal::ClosestApproachAccTtc), f64::INFINITY);
}

#[test]
fn time_to_collision_at_the_current_acceleration_survives_absurd_inputs() {
    // Non-finite or absurd values (which the readers refuse, but a library caller may pass) give a time in
    // [0, 5] s or +inf, never a panic or NaN.
    for (speed_mps, accel_mps2, x, y, v) in [
        (f64::NAN, 1.0, 10.0, 0.0, 0.0),
        (10.0, f64::INFINITY, 10.0, 0.0, 0.0),
        (10.0, -1e300, 10.0, 0.0, 0.0),
        (1e300, 1e300, 10.0, 0.0, 0.0),
        (10.0, 1.0, f64::INFINITY, 0.0, 0.0),
        (10.0, 1.0, f64::NAN, f64::NAN, f64::NAN),
        (10.0, 1.0, 1e300, -1e300, 1e300),
    ] {
        let f = Frame {
            speed_mps,
            accel_mps2,
            obstacles: vec![Obstacle::car(x, y, 1.0, v)],
            ..Frame::default()
        };
        let t =
            Signals::from_frame(&f, &SignalContext::default()).get(Signal::ClosestApproachAccTtc);
        assert!(
            t == f64::INFINITY || (0.0..=CPA_HORIZON_S).contains(&t),
            "{t} for {f:?}"
        );
    }
}
