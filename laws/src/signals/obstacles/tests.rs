use super::*;
use crate::frame::{obstacle_type, Frame, Obstacle};

fn car(x: f64, y: f64, heading: f64, speed_mps: f64) -> Obstacle {
    Obstacle::car(x, y, heading, speed_mps)
}

fn frame(obstacles: Vec<Obstacle>) -> Frame {
    Frame {
        speed_mps: 5.0,
        obstacles,
        ..Frame::default()
    }
}

#[test]
fn car_ahead_gap_is_bumper_to_bumper() {
    // Centre 20 m ahead of the rear axle, 4 m long: rear bumper at 18 m; ego front at 3.6986 m.
    let o = ObstacleSignals::from_frame(&frame(vec![car(20.0, 0.5, 0.0, 2.0)]));
    assert!((o.npc_ahead_m - (18.0 - EGO_FRONT_M)).abs() < 1e-9);
    assert_eq!(o.npc_ahead_speed_mps, 2.0);
    assert!((o.npc_ahead_closing_mps - 3.0).abs() < 1e-9);
    assert!((o.npc_ahead_ttc_s - (18.0 - EGO_FRONT_M) / 3.0).abs() < 1e-9);
    assert!((o.nearest_npc_m - (18.0 - EGO_FRONT_M)).abs() < 1e-9);
    assert_eq!(o.npc_opposite_m, f64::INFINITY);
}

#[test]
fn rotated_ego_frame_and_corridor() {
    // Ego heading north; a car 10 m north is ahead, a car 10 m east is beside (not ahead).
    let mut f = frame(vec![
        car(0.0, 10.0, std::f64::consts::FRAC_PI_2, 0.0),
        car(10.0, 0.0, 0.0, 0.0),
    ]);
    f.heading = std::f64::consts::FRAC_PI_2;
    let o = ObstacleSignals::from_frame(&f);
    assert!((o.npc_ahead_m - (8.0 - EGO_FRONT_M)).abs() < 1e-9);
    // Lateral offset 2.9 m > 1.75 + 1: outside the corridor.
    let o = ObstacleSignals::from_frame(&frame(vec![car(20.0, 2.9, 0.0, 0.0)]));
    assert_eq!(o.npc_ahead_m, f64::INFINITY);
}

#[test]
fn oncoming_priority_and_pedestrians() {
    let mut oncoming = car(20.0, 3.0, std::f64::consts::PI, 8.0);
    oncoming.priority = true;
    let o = ObstacleSignals::from_frame(&frame(vec![oncoming]));
    assert!(o.npc_opposite_m < 30.0 && o.npc_opposite_speed_mps == 8.0);
    assert!(o.priority_npc_ahead);
    let ped = Obstacle {
        kind: obstacle_type::PEDESTRIAN,
        length: 0.5,
        width: 0.5,
        priority: true,
        ..car(12.0, 1.0, 0.0, 1.0)
    };
    assert!(ObstacleSignals::from_frame(&frame(vec![ped])).priority_peds_ahead);
    let far = Obstacle { x: 20.0, ..ped };
    assert!(!ObstacleSignals::from_frame(&frame(vec![far])).priority_peds_ahead);
    // A car overlapping the ego has gap 0.
    let o = ObstacleSignals::from_frame(&frame(vec![car(1.0, 0.0, 0.3, 0.0)]));
    assert_eq!(o.nearest_npc_m, 0.0);
}

#[test]
fn rectangle_gap_matches_hand_computed_corner_cases() {
    let ego_corner = (EGO_FRONT_M, EGO_WIDTH_M / 2.0);
    let dist = |p: (f64, f64)| ((p.0 - ego_corner.0).powi(2) + (p.1 - ego_corner.1).powi(2)).sqrt();
    // Axis-aligned 2 m square centred at (11, 6): nearest corner (10, 5).
    let square = Rect {
        cx: 11.0,
        cy: 6.0,
        cos: 1.0,
        sin: 0.0,
        half_len: 1.0,
        half_wid: 1.0,
    };
    assert!((gap_m(&ego_rect(), &square) - dist((10.0, 5.0))).abs() < 1e-9);
    // The same square turned 45° about (10 + √2, 5 + √2): its corners lie at ±√2 along the axes; the
    // nearest to the ego's front-left corner is (10, 5 + √2) (checked against (10 + √2, 5) by hand).
    let r2 = std::f64::consts::SQRT_2;
    let h = std::f64::consts::FRAC_PI_4;
    let diamond = Rect {
        cx: 10.0 + r2,
        cy: 5.0 + r2,
        cos: h.cos(),
        sin: h.sin(),
        half_len: 1.0,
        half_wid: 1.0,
    };
    assert!((gap_m(&ego_rect(), &diamond) - dist((10.0, 5.0 + r2))).abs() < 1e-9);
    assert!(dist((10.0, 5.0 + r2)) < dist((10.0 + r2, 5.0)));
}

// The lower-bound shortcut in `from_frame` must not change any gap-derived signal: compare with the
// exact gap computed for every obstacle.
proptest::proptest! {
    #[test]
    fn gap_shortcut_changes_nothing(
        obs in proptest::collection::vec(
            (-60.0..60.0f64, -40.0..40.0f64, -3.2..3.2f64, 0usize..3, proptest::bool::ANY),
            0..8,
        ),
        heading in -3.2..3.2f64,
    ) {
        let obstacles: Vec<Obstacle> = obs
            .iter()
            .map(|&(x, y, h, kind, priority)| Obstacle {
                kind: [obstacle_type::VEHICLE, obstacle_type::PEDESTRIAN, obstacle_type::BICYCLE][kind],
                priority,
                ..car(x, y, h, 3.0)
            })
            .collect();
        let f = Frame { heading, ..frame(obstacles) };
        let got = ObstacleSignals::from_frame(&f);
        let (c, s) = (f.heading.cos(), f.heading.sin());
        let (mut nearest, mut peds, mut prio_npc) = (f64::INFINITY, false, false);
        for o in &f.obstacles {
            let (dx, dy) = (o.x - f.x, o.y - f.y);
            let (lon, lat) = (dx * c + dy * s, -dx * s + dy * c);
            let rel = wrap_rad(o.heading - f.heading);
            let rect = Rect { cx: lon, cy: lat, cos: rel.cos(), sin: rel.sin(), half_len: o.length / 2.0, half_wid: o.width / 2.0 };
            let gap = gap_m(&ego_rect(), &rect);
            let wedge = in_wedge(lon, lat);
            if is_vehicle(o) {
                nearest = nearest.min(gap);
                prio_npc |= wedge && o.priority && gap <= PRIORITY_NPC_RANGE_M;
            } else if wedge && ((o.priority && gap <= PRIORITY_PED_RANGE_M) || gap <= CLOSE_RANGE_M) {
                peds = true;
            }
        }
        proptest::prop_assert_eq!(got.nearest_npc_m, nearest);
        proptest::prop_assert_eq!(got.priority_peds_ahead, peds);
        proptest::prop_assert_eq!(got.priority_npc_ahead, prio_npc || got.npc_ahead_m <= CLOSE_RANGE_M);
    }
}
