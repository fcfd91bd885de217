use super::*;
use crate::frame::{Frame, Obstacle};

const EGO: RssDynamics = RssParams::CARLA.ego;
const OTHER: RssDynamics = RssParams::CARLA.other_vehicle;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn longitudinal_distances_are_the_hand_computed_ones() {
    // Ego (ρ 1 s) at 10 m/s accelerates 3.5 m/s² for 1 s: 11.75 m, reaching 13.5 m/s; braking at 4 m/s²
    // takes 13.5² / 8 = 22.78125 m more.
    assert!(close(stopping_distance_m(10.0, &EGO, 4.0), 34.53125));
    // Behind a car at 10 m/s that can brake at 8 m/s² (6.25 m): 28.28125 m.
    assert!(close(same_direction_m(10.0, 10.0, &EGO, &OTHER), 28.28125));
    // Never negative: a slow follower behind a fast leader needs no distance.
    assert_eq!(same_direction_m(2.0, 30.0, &EGO, &OTHER), 0.0);
    // Oncoming at 10 m/s each: ego brakes at b_min,correct 3 (11.75 + 182.25 / 6 = 42.125 m); the other
    // (ρ 2 s: 27 m, reaching 17 m/s) at b_min 4 (289 / 8 = 36.125 m).
    assert!(close(
        opposite_direction_m(10.0, 10.0, &EGO, &OTHER),
        105.25
    ));
    // The speed during the response is capped at the maximum speed on acceleration.
    let capped = RssDynamics {
        max_speed_on_accel_mps: 11.0,
        ..EGO
    };
    // 10 → 11 m/s in 2/7 s (2.999… m), then 11 m/s for the rest of the second, then 121 / 8.
    let t1 = 1.0 / 3.5;
    let want = 10.0 * t1 + 0.5 * 3.5 * t1 * t1 + 11.0 * (1.0 - t1) + 121.0 / 8.0;
    assert!(close(stopping_distance_m(10.0, &capped, 4.0), want));
}

#[test]
fn lateral_distance_is_the_hand_computed_one() {
    // Both still: the other (ρ 2 s) drifts 0.2·2²/2 = 0.4 m then brakes 0.4²/1.6 = 0.1 m; the ego (ρ 1 s)
    // 0.1 + 0.04/1.6 = 0.125 m; plus μ = 0.1 m.
    assert!(close(lateral_m(0.0, 0.0, &OTHER, &EGO), 0.725));
    // Moving apart fast enough needs only the margin.
    assert!(close(lateral_m(-3.0, -3.0, &OTHER, &EGO), 0.1));
    // Towards each other at 0.5 m/s: other u_ρ 0.9 → 1.4 + 0.50625; ego u_ρ 0.7 → 0.6 + 0.30625.
    assert!(close(
        lateral_m(0.5, 0.5, &OTHER, &EGO),
        0.1 + 1.90625 + 0.90625
    ));
}

#[test]
fn time_to_cover_follows_the_phases() {
    // Accelerate 1 s (11.75 m, 13.5 m/s) then brake at 4: 20 m is reached at 1 + (13.5 − √116.25) / 4.
    let t = time_to_cover_s(10.0, 20.0, &EGO, 3.5, -4.0);
    assert!(close(t, 1.0 + (13.5 - 116.25f64.sqrt()) / 4.0), "{t}");
    // 50 m is out of reach: it stops after 11.75 + 22.78 m.
    assert_eq!(time_to_cover_s(10.0, 50.0, &EGO, 3.5, -4.0), f64::INFINITY);
    // Braking at 8 from 10 m/s: 5 m after (10 − √20) / 8 s.
    let t = time_to_cover_s(10.0, 5.0, &EGO, -8.0, -8.0);
    assert!(close(t, (10.0 - 20f64.sqrt()) / 8.0), "{t}");
    // Constant speed; already there; stopped for good.
    assert!(close(time_to_cover_s(10.0, 25.0, &EGO, 0.0, 0.0), 2.5));
    assert_eq!(time_to_cover_s(10.0, 0.0, &EGO, 3.5, -4.0), 0.0);
    assert_eq!(time_to_cover_s(0.0, 1.0, &EGO, 0.0, -4.0), f64::INFINITY);
}

fn car(x: f64, y: f64, heading: f64, speed_mps: f64) -> Obstacle {
    Obstacle::car(x, y, heading, speed_mps)
}

fn ego_at(speed_mps: f64) -> Frame {
    Frame {
        speed_mps,
        ..Frame::default()
    }
}

#[test]
fn following_too_close_is_dangerous() {
    let p = RssParams::CARLA;
    let f = ego_at(10.0);
    // A car at 10 m/s whose rear is 20 m ahead of the ego's front: 20 < 28.28 m.
    let near = car(EGO_FRONT_M + 20.0 + 2.0, 0.0, 0.0, 10.0);
    let v = p.check(&f, &near);
    assert_eq!(v.situation, RssSituation::SameDirection);
    assert!(close(v.lon_distance_m, 20.0) && close(v.lon_safe_distance_m, 28.28125));
    assert!(v.dangerous && v.lat_distance_m == 0.0);
    let far = car(EGO_FRONT_M + 30.0 + 2.0, 0.0, 0.0, 10.0);
    assert!(!p.check(&f, &far).dangerous);
    // A car behind at 10 m/s with the ego at 10 m/s: it (ρ 2 s) needs 27 + 17²/8 − 6.25 = 56.875 m.
    let behind = car(EGO_REAR_M - 40.0 - 2.0, 0.0, 0.0, 10.0);
    let v = p.check(&f, &behind);
    assert!(
        close(v.lon_distance_m, 40.0) && close(v.lon_safe_distance_m, 56.875),
        "{v:?}"
    );
    assert!(v.dangerous);
    // A car standing 4 m ahead of a still ego: the ego may creep 1.75 + 3.5²/8 = 3.28 m within its
    // response: safe at 4 m, dangerous at 3 m (RSS flags close queueing). The still car does not
    // accelerate (CARLA's special case), which matters when the ego is the leader.
    let v = p.check(&ego_at(0.0), &car(EGO_FRONT_M + 4.0 + 2.0, 0.0, 0.0, 0.0));
    assert!(close(v.lon_safe_distance_m, 1.75 + 12.25 / 8.0) && !v.dangerous);
    assert!(
        p.check(&ego_at(0.0), &car(EGO_FRONT_M + 3.0 + 2.0, 0.0, 0.0, 0.0))
            .dangerous
    );
    let v = p.check(&ego_at(0.0), &car(EGO_REAR_M - 1.0 - 2.0, 0.0, 0.0, 0.0));
    assert_eq!(v.lon_safe_distance_m, 0.0);
}

#[test]
fn side_by_side_is_decided_by_the_lateral_distance() {
    let p = RssParams::CARLA;
    let f = ego_at(10.0);
    // Beside the ego (longitudinal overlap), 3.5 m to the left: lateral gap 1.47 m > 0.725 m.
    let v = p.check(&f, &car(1.35, 3.5, 0.0, 10.0));
    assert!(close(v.lat_distance_m, 1.47) && close(v.lat_safe_distance_m, 0.725));
    assert!(v.lon_distance_m == 0.0 && !v.dangerous);
    // 2.6 m to the left: gap 0.57 m, dangerous; same on the right.
    assert!(p.check(&f, &car(1.35, 2.6, 0.0, 10.0)).dangerous);
    assert!(p.check(&f, &car(1.35, -2.6, 0.0, 10.0)).dangerous);
    // Oncoming in its own lane 3.5 m to the left: longitudinally unsafe (105 m), laterally safe.
    let v = p.check(&f, &car(60.0, 3.5, std::f64::consts::PI, 10.0));
    assert_eq!(v.situation, RssSituation::OppositeDirection);
    assert!(close(v.lon_safe_distance_m, 105.25) && !v.dangerous);
    // The same car in the ego's lane is dangerous.
    assert!(
        p.check(&f, &car(60.0, 0.0, std::f64::consts::PI, 10.0))
            .dangerous
    );
}

#[test]
fn intersections_follow_the_stop_or_time_separation_rule() {
    let p = RssParams::CARLA;
    let f = ego_at(10.0);
    let north = std::f64::consts::FRAC_PI_2;
    // A priority car 20 m ahead, 10 m to the right, crossing north at 10 m/s. The ego needs 34.53 m to stop
    // but the area is 15.30 m away; the car reaches the area in 0.628 s and the ego in 1.274 s, and
    // neither can be sure to leave (both stop inside when braking at 8 m/s²): dangerous.
    let mut cross = car(20.0, -10.0, north, 10.0);
    cross.priority = true;
    let v = p.check(&f, &cross);
    assert_eq!(v.situation, RssSituation::Intersection);
    assert!(
        close(v.lon_distance_m, 20.0 - 1.0 - EGO_FRONT_M) && close(v.lon_safe_distance_m, 34.53125)
    );
    assert!(v.dangerous);
    // 45 m ahead the ego can still stop before the area.
    assert!(!p.check(&f, &Obstacle { x: 45.0, ..cross }).dangerous);
    // Without priority the car must be able to stop: 6.97 m to the area is less than its 63.125 m, so
    // still dangerous; 80 m away it can stop.
    assert!(
        p.check(
            &f,
            &Obstacle {
                priority: false,
                ..cross
            }
        )
        .dangerous
    );
    assert!(
        !p.check(
            &f,
            &Obstacle {
                priority: false,
                y: -90.0,
                ..cross
            }
        )
        .dangerous
    );
    // A slow priority car far down the cross road cannot reach the area before a fast ego has left it:
    // time separation. Ego 15 m/s leaves 22.0 m away braking at 8: it stops after 14.06 m inside, so
    // no. A car moving away from the area (passed) is not relevant.
    let passed = car(20.0, 10.0, north, 10.0);
    assert_eq!(p.check(&f, &passed).situation, RssSituation::NotRelevant);
    assert!(!p.check(&f, &passed).dangerous);
    // `dangerous` is "some road user is dangerous".
    let frame = Frame {
        obstacles: vec![passed, cross],
        ..f.clone()
    };
    assert!(p.dangerous(&frame));
    assert!(!p.dangerous(&Frame {
        obstacles: vec![passed],
        ..f
    }));
}

#[test]
fn time_separation_makes_a_crossing_safe() {
    let p = RssParams::CARLA;
    // The ego at 15 m/s is already in the area (x from 2 to 4; its front at 3.70); a priority car 62 m down
    // the cross road at 3 m/s. Neither can stop before the area, but the ego leaves it (5.0014 m, even
    // braking at 8 m/s²) before the car could arrive: accelerating 3.5 m/s² for its 2 s response (13 m, to
    // 10 m/s) and then braking at 4 m/s² (12.5 m) it stops 25.5 m on, short of the 58.97 m to the area.
    let north = std::f64::consts::FRAC_PI_2;
    let mut slow = car(3.0, -62.0, north, 3.0);
    slow.priority = true;
    let v = p.check(&ego_at(15.0), &slow);
    assert_eq!(v.situation, RssSituation::Intersection);
    assert!(!v.dangerous);
    assert!(time_to_cover_s(15.0, 4.0 - EGO_REAR_M, &EGO, -8.0, -8.0) < 0.4);
    // 20 m down the cross road the car can arrive (17.97 m < 25.5 m): 13 m within its 2 s response, then
    // 4.97 m braking from 10 m/s, about 0.53 s more. The ego is out after 0.36 s: still separated.
    assert!(
        !p.check(&ego_at(15.0), &Obstacle { y: -20.0, ..slow })
            .dangerous
    );
    // A still ego inside the area never leaves: any priority car that can arrive makes it dangerous.
    assert!(
        p.check(&ego_at(0.0), &Obstacle { y: -20.0, ..slow })
            .dangerous
    );
}

#[test]
fn a_shorter_response_time_shrinks_the_safe_distance_by_hand() {
    let half = RssParams::CARLA.with_response_scale(0.5);
    assert!(close(half.ego.response_time_s, 0.5));
    assert!(close(half.other_vehicle.response_time_s, 1.0));
    assert!(close(half.pedestrian.response_time_s, 0.25));
    // Only the response times change.
    assert!(close(half.ego.brake_min_lon_mps2, 4.0) && close(half.standstill_mps, 0.01));
    assert_eq!(RssParams::CARLA.with_response_scale(1.0), RssParams::CARLA);
    let f = ego_at(10.0);
    // Ego (ρ 0.5 s) at 10 m/s: 5 + 0.4375 = 5.4375 m, reaching 11.75 m/s, then 11.75² / 8 = 17.2578125 m;
    // behind a car at 10 m/s braking at 8 (6.25 m): 16.4453125 m.
    let lead = car(EGO_FRONT_M + 20.0 + 2.0, 0.0, 0.0, 10.0);
    let v = half.check(&f, &lead);
    assert!(close(v.lon_safe_distance_m, 16.4453125), "{v:?}");
    // 20 m ahead: dangerous under CARLA's ρ (28.28 m), safe at half of it.
    assert!(!v.dangerous && RssParams::CARLA.check(&f, &lead).dangerous);
    // No response time at all: braking distances alone, 100 / 8 − 6.25 = 6.25 m.
    let none = RssParams::CARLA.with_response_scale(0.0);
    assert!(close(none.check(&f, &lead).lon_safe_distance_m, 6.25));
}

#[test]
#[should_panic(expected = "not a finite non-negative number")]
fn a_negative_response_scale_is_refused() {
    let _ = RssParams::CARLA.with_response_scale(-0.5);
}
