//! Brake-check tests: the futures' kinematics by hand, the verdict on hand-built conflicts (a turn across
//! oncoming traffic under way, a crossing ahead, a close follower), and the sampled clearance against the
//! exact closest approach of `laws::geometry::cpa` and the exact first contact of
//! `laws::geometry::contact`.

use laws::geometry::contact::Accelerating;
use laws::geometry::cpa::closest_approach;
use laws::Obstacle;
use proptest::prelude::*;

use super::*;

fn futures(own_accel_mps2: f64) -> Futures {
    Futures {
        curvature: 0.0,
        own_accel_mps2,
        decel_mps2: 3.0,
        horizon_s: 3.0,
    }
}

/// The ego at the origin heading +x (map frame = ego frame) at `speed`.
fn ego(speed_mps: f64, obstacles: Vec<Obstacle>) -> Frame {
    Frame {
        t: 10.0,
        speed_mps,
        speed_limit_mps: 20.0,
        obstacles,
        ..Frame::default()
    }
}

/// A car (4.5 × 1.8 m) centred at `(x, y)`, heading `heading`, at `speed`.
fn car(id: i32, x: f64, y: f64, heading: f64, speed_mps: f64) -> Obstacle {
    Obstacle {
        id,
        kind: laws::frame::obstacle_type::VEHICLE,
        x,
        y,
        heading,
        speed_mps,
        length: 4.5,
        width: 1.8,
        priority: false,
    }
}

#[test]
fn speed_profiles_by_hand() {
    // (v0, accel, v_max) → distances after 1, 2 and 3 s.
    let cases = [
        // Braking from 10 m/s at 5 m/s²: 10 − 2.5 = 7.5 m after 1 s, standing after 2 s at 10 m.
        ((10.0, -5.0, 10.0), [7.5, 10.0, 10.0]),
        // From 5 m/s at 2 m/s² up to 9 m/s (reached at 2 s, 14 m), then cruising: 14 + 9 = 23 m.
        ((5.0, 2.0, 9.0), [6.0, 14.0, 23.0]),
        // Already at the cap: constant speed.
        ((9.0, 2.0, 9.0), [9.0, 18.0, 27.0]),
    ];
    for ((v0, accel, v_max), want) in cases {
        let p = Profile { v0, accel, v_max };
        assert_eq!([1.0, 2.0, 3.0].map(|t| p.distance(t)), want, "{p:?}");
    }
}

#[test]
fn the_footprint_follows_the_arc() {
    let c = ego_rect().cx;
    let straight = ego_at(7.0, 0.0);
    assert_eq!(
        (straight.cx, straight.cy, straight.cos),
        (7.0 + c, 0.0, 1.0)
    );
    // A quarter circle of radius 10 m to the left ends at (10, 10) heading +y.
    let k = 0.1;
    let quarter = ego_at(std::f64::consts::FRAC_PI_2 / k, k);
    assert!((quarter.cx - 10.0).abs() < 1e-9, "{quarter:?}");
    assert!((quarter.cy - (10.0 + c)).abs() < 1e-9, "{quarter:?}");
    assert!(quarter.cos.abs() < 1e-12 && (quarter.sin - 1.0).abs() < 1e-12);
    // A tiny curvature agrees with the arc's series to first order (the series branch): the reference
    // point at (s, k s² / 2), turned by k s, so the centre c ahead of it is k s c further left.
    let (s, k) = (5.0, 1e-8);
    let near = ego_at(s, k);
    assert!((near.cx - (s + c)).abs() < 1e-9, "{near:?}");
    assert!(
        (near.cy - (0.5 * k * s * s + k * s * c)).abs() < 1e-15,
        "{near:?}"
    );
}

#[test]
fn curvature_from_the_yaw_rate() {
    let prev = |t: f64, heading: f64| Some(PreviousPose { t, heading });
    let frame = |heading: f64, speed_mps: f64| Frame {
        t: 1.0,
        heading,
        speed_mps,
        ..Frame::default()
    };
    // 0.1 rad in 0.1 s at 5 m/s: 1 rad/s / 5 m/s = 0.2 1/m.
    let k = curvature(&frame(0.1, 5.0), prev(0.9, 0.0));
    assert!((k - 0.2).abs() < 1e-9, "{k}");
    // Across ±π the heading change is the short way round: −0.1 rad → −0.2 1/m.
    let k = curvature(&frame(3.1, 5.0), prev(0.9, -3.083_185_307_179_586));
    assert!((k + 0.2).abs() < 1e-6, "{k}");
    // Too tight: clamped; crawling, no previous frame, frames far apart, time going back: 0.
    assert_eq!(curvature(&frame(1.0, 2.0), prev(0.9, 0.0)), MAX_CURVATURE);
    assert_eq!(curvature(&frame(0.1, 0.5), prev(0.9, 0.0)), 0.0);
    assert_eq!(curvature(&frame(0.1, 5.0), None), 0.0);
    assert_eq!(curvature(&frame(0.1, 5.0), prev(0.0, 0.0)), 0.0);
    assert_eq!(curvature(&frame(0.1, 5.0), prev(1.1, 0.0)), 0.0);
    assert_eq!(curvature(&frame(f64::NAN, 5.0), prev(0.9, 0.0)), 0.0);
}

/// The check for the ego at 5 m/s (+1 m/s²) and car `id` crossing from the left at 10 m/s, 15 m to the
/// side, along the line `x` m ahead of the rear axle.
fn crossing(id: i32, x: f64) -> BrakeCheck {
    let f = ego(
        5.0,
        vec![car(id, x, 15.0, -std::f64::consts::FRAC_PI_2, 10.0)],
    );
    check(&f, &futures(1.0))
}

#[test]
fn a_turn_under_way_keeps_on_rather_than_stopping_in_the_lane() {
    // The ego's nose is in a lane that a car crosses from the left (heading −y) at 10 m/s; its centre line
    // is 2 m ahead of the rear axle and the car is 15 m away: it sweeps over the ego's footprint from
    // about 1.1 s on. Braking from 5 m/s stops the ego within 4.2 m, still in the lane; keeping on at
    // +1 m/s² takes the rear bumper past the lane's far side (2 + 0.9 + 1 m) before the car arrives.
    let c = crossing(7, 2.0);
    assert_eq!(c.braking.clearance_m, 0.0, "{c:?}");
    assert_eq!(c.braking.obstacle_id, Some(7));
    assert!(c.keeping_on.clearance_m >= CLEAR_M, "{c:?}");
    assert!(c.hold_off(false) && c.hold_off(true));
    let words = c.describe();
    assert!(
        words.starts_with("braking would come 0.0 m from road user 7 in "),
        "{words}"
    );
}

#[test]
fn a_crossing_ahead_is_met_by_braking() {
    // The same car crossing 15 m ahead: braking stops the ego after 4.2 m, keeping on drives into it.
    let c = crossing(3, 15.0);
    assert!(c.braking.clearance_m >= CLEAR_M, "{c:?}");
    assert_eq!(c.keeping_on.clearance_m, 0.0, "{c:?}");
    assert!(!c.hold_off(false) && !c.hold_off(true));
}

#[test]
fn a_close_follower_is_not_braked_into() {
    // A car 2.6 m behind the rear bumper at 12 m/s against the ego's 10 m/s (+1 m/s²): keeping on, the
    // gap shrinks by 2 t − t²/2, most at t = 2 s (by 2 m, to 0.6 m, a sample); braking at 3 m/s², it
    // closes within the horizon.
    let rear = laws::geometry::EGO_REAR_M;
    let f = ego(10.0, vec![car(9, rear - 2.6 - 2.25, 0.0, 0.0, 12.0)]);
    let c = check(&f, &futures(1.0));
    assert_eq!(c.braking.clearance_m, 0.0, "{c:?}");
    assert!((c.keeping_on.clearance_m - 0.6).abs() < 1e-9, "{c:?}");
    assert!((c.keeping_on.at_s.unwrap() - 2.0).abs() < 1e-9, "{c:?}");
    assert!(c.hold_off(false));
}

#[test]
fn nobody_near_means_braking() {
    let far = car(1, 2_000.0, 0.0, std::f64::consts::PI, 30.0);
    for f in [ego(8.0, vec![]), ego(8.0, vec![far])] {
        let c = check(&f, &futures(0.5));
        assert_eq!(c.braking.clearance_m, f64::INFINITY);
        assert_eq!(c.keeping_on.clearance_m, f64::INFINITY);
        assert!(!c.hold_off(false) && !c.hold_off(true));
        assert!(c.describe().contains("at least 1 m from every road user"));
    }
    // Rubbish in the frame is read as nothing (no panic, no road user).
    let mut f = ego(f64::NAN, vec![car(2, f64::NAN, 0.0, 0.0, 5.0)]);
    f.accel_mps2 = f64::INFINITY;
    let c = check(
        &f,
        &Futures {
            horizon_s: f64::INFINITY,
            ..futures(f64::NAN)
        },
    );
    assert_eq!(c.braking.clearance_m, f64::INFINITY);
}

#[test]
fn the_verdict_has_hysteresis() {
    let at = |clearance_m: f64| Outlook {
        clearance_m,
        at_s: Some(1.0),
        obstacle_id: Some(1),
    };
    let verdict = |brake: f64, keep: f64| BrakeCheck {
        braking: at(brake),
        keeping_on: at(keep),
    };
    // Both touch: brake (lower speed at contact).
    assert!(!verdict(0.0, 0.0).hold_off(false));
    // Braking touches, keeping on misses by a little: a contact against a near miss, hold off.
    assert!(verdict(0.0, 0.01).hold_off(false));
    // Both come close without touching and keeping on is only slightly better: a braking vehicle goes
    // on braking, one holding off goes on so.
    assert!(!verdict(0.2, 0.25).hold_off(false));
    assert!(verdict(0.2, 0.25).hold_off(true));
    // Clearly better: hold off.
    assert!(verdict(0.0, 0.2).hold_off(false));
    // Braking keeps its clearance: brake, whatever keeping on does.
    assert!(!verdict(0.6, 5.0).hold_off(false));
    assert!(!verdict(0.6, 5.0).hold_off(true));
    // Both touch once the vehicle has gone on: it is not stopped in the conflict area.
    assert!(verdict(0.0, 0.0).hold_off(true));
    // Keeping on comes closer than braking: brake again.
    assert!(!verdict(0.2, 0.1).hold_off(true));
}

proptest! {
    /// With no curvature and no acceleration, "keeping on" is motion at constant velocity, whose exact
    /// closest approach `cpa::closest_approach` gives: the sampled clearance is never below it, and above
    /// it by at most what the footprints move apart in half a sample step. And braking samples a contact
    /// only where `contact::Accelerating` finds one.
    #[test]
    fn sampled_futures_agree_with_the_exact_geometry(
        v in 0.0f64..20.0,
        x in -40.0f64..40.0,
        y in -40.0f64..40.0,
        heading in -3.2f64..3.2,
        speed in 0.0f64..25.0,
    ) {
        let f = ego(v, vec![car(1, x, y, heading, speed)]);
        let c = check(&f, &futures(0.0));
        let m = EgoFrame::of(&f).mover(&f.obstacles[0]);
        let exact = closest_approach(&ego_rect(), &m.rect, (m.v_lon_mps - v, m.v_lat_mps), 3.0);
        let rel = (m.v_lon_mps - v).hypot(m.v_lat_mps);
        if c.keeping_on.clearance_m < EXACT_BELOW_M {
            prop_assert!(c.keeping_on.clearance_m >= exact.dist_m - 1e-9, "{c:?} {exact:?}");
            prop_assert!(
                c.keeping_on.clearance_m <= exact.dist_m + rel * STEP_S / 2.0 + 1e-9,
                "{c:?} {exact:?}"
            );
        } else {
            // Every sample is at least that far: the exact approach misses it by at most half a step.
            prop_assert!(exact.dist_m >= EXACT_BELOW_M - rel * STEP_S / 2.0 - 1e-9, "{c:?} {exact:?}");
        }
        let contact = Accelerating {
            speed_mps: v,
            accel_mps2: -3.0,
            other_mps: (m.v_lon_mps, m.v_lat_mps),
            horizon_s: 3.0,
        }
        .first_contact(&ego_rect(), &m.rect);
        if c.braking.clearance_m == 0.0 {
            prop_assert!(contact.is_some(), "{c:?}");
        }
        if contact.is_some() {
            // Between two samples the footprints move apart by at most their relative speed times half
            // a step, so a sample shows at most that much of gap near a contact.
            let rel_max = v + speed;
            let near = rel_max * STEP_S / 2.0 + 1e-9;
            prop_assert!(c.braking.clearance_m.min(EXACT_BELOW_M) <= near, "{c:?}");
        }
    }
}
