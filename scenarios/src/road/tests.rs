use super::*;
use crate::scenario::{JunctionSpec, RoadSpec};

fn spec(turn: TurnSpec) -> RoadSpec {
    RoadSpec {
        approach_m: 50.0,
        exit_m: 30.0,
        lanes: 1,
        speed_limit_kph: 36.0,
        limit_changes: vec![[60.0, 18.0]],
        junction: Some(JunctionSpec {
            size_m: 20.0,
            turn,
            control: ControlSpec::Light,
            stop_line_gap_m: 1.0,
            crosswalk: true,
            crosswalk_side: crate::scenario::CrosswalkSide::Entry,
        }),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn straight_route_hand_computed() {
    let road = Road::new(&spec(TurnSpec::Straight));
    let j = road.junction().expect("junction");
    // Entry at x = -10, route starts 50 m before it.
    assert!(close(j.entry_s, 50.0) && close(j.exit_s, 70.0) && close(road.end_s(), 100.0));
    assert_eq!(j.crosswalk_s, Some((46.0, 50.0)));
    assert_eq!(j.stop_line_s, Some(45.0));
    let p = road.pose(0.0);
    assert!(close(p.x, -60.0) && close(p.y, -1.75) && close(p.heading, 0.0));
    let p = road.pose(65.0);
    assert!(close(p.x, 5.0) && close(p.y, -1.75));
    assert!(close(road.limit_at(59.9), 10.0) && close(road.limit_at(60.0), 5.0));
}

#[test]
fn left_arc_ends_northbound_in_the_right_lane() {
    let road = Road::new(&spec(TurnSpec::Left));
    let j = road.junction().expect("junction");
    let r = 10.0 + 1.75;
    assert!(close(j.exit_s - j.entry_s, r * std::f64::consts::FRAC_PI_2));
    let end = road.pose(j.exit_s);
    assert!(
        close(end.x, 1.75) && close(end.y, 10.0) && close(end.heading, std::f64::consts::FRAC_PI_2)
    );
    assert!(close(road.pose(j.entry_s + 1.0).curvature, 1.0 / r));
    // 10 m further along the exit.
    let p = road.pose(j.exit_s + 10.0);
    assert!(close(p.x, 1.75) && close(p.y, 20.0));
}

#[test]
fn right_arc_ends_southbound() {
    let road = Road::new(&spec(TurnSpec::Right));
    let j = road.junction().expect("junction");
    let end = road.pose(j.exit_s);
    assert!(
        close(end.x, -1.75)
            && close(end.y, -10.0)
            && close(end.heading, -std::f64::consts::FRAC_PI_2)
    );
}

#[test]
fn projection_inverts_pose() {
    for turn in [TurnSpec::Straight, TurnSpec::Left, TurnSpec::Right] {
        let road = Road::new(&spec(turn));
        for i in 0..100 {
            let s = i as f64;
            let p = road.pose(s);
            // A point 0.5 m to the left of the route.
            let (x, y) = (p.x - 0.5 * p.heading.sin(), p.y + 0.5 * p.heading.cos());
            let (s2, lat) = road.project(x, y);
            assert!(
                (s2 - s).abs() < 1e-6 && (lat - 0.5).abs() < 1e-6,
                "{turn:?} s={s}: got {s2}, {lat}"
            );
        }
    }
}
