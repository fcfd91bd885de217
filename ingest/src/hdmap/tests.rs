use std::path::PathBuf;
use std::sync::Arc;

use laws::frame::{light_color, planned_turn};
use laws::signals::EGO_FRONT_M;
use laws::Frame;

use super::context::LightObservation;
use super::geometry::{Point, Polyline};
use super::index::LaneIndex;
use super::load::decode;
use super::tracker::{MapTracker, TrackerConfig};
use super::*;

fn map_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/apollo/lgsvl-apollo-5.0/modules/map/data")
        .join(name)
}

fn derived(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/apollo/derived-bin/modules/map/data")
        .join(name)
}

fn cube_town() -> Arc<HdMap> {
    Arc::new(HdMap::load(&map_dir("cube_town/base_map.bin"), DEFAULT_MAX_MAP_BYTES).unwrap())
}

#[test]
fn text_and_binary_maps_decode_to_the_same_message() {
    for name in [
        "cube_town/sim_map",
        "single_lane_road/sim_map",
        "straight_1_lane_pedestrian_crosswalk/sim_map",
    ] {
        let text = std::fs::read(map_dir(&format!("{name}.txt"))).unwrap();
        let bin = std::fs::read(derived(&format!("{name}.bin"))).unwrap();
        let from_text = decode(&text, MapFormat::Text).unwrap();
        let from_bin = decode(&bin, MapFormat::Binary).unwrap();
        assert!(!from_text.lane.is_empty(), "{name}");
        assert_eq!(from_text, from_bin, "{name}");
        // Loading by extension picks the right decoder.
        let a = HdMap::load(&map_dir(&format!("{name}.txt")), DEFAULT_MAX_MAP_BYTES).unwrap();
        let b = HdMap::load(&derived(&format!("{name}.bin")), DEFAULT_MAX_MAP_BYTES).unwrap();
        assert_eq!(a.lanes(), b.lanes(), "{name}");
    }
}

#[test]
fn real_maps_have_the_documented_contents() {
    let cube = cube_town();
    assert_eq!(cube.lanes().len(), 18);
    assert_eq!(cube.signal_ids().len(), 3);
    assert_eq!(cube.stop_sign_ids().len(), 3);
    assert_eq!(cube.junctions().len(), 2);
    let borregas =
        HdMap::load(&map_dir("borregas_ave/base_map.bin"), DEFAULT_MAX_MAP_BYTES).unwrap();
    assert_eq!(borregas.lanes().len(), 60);
    assert_eq!(borregas.signal_ids().len(), 15);
    assert_eq!(borregas.crosswalks().len(), 6);
    // J_0's polygon reaches 1.05 m into the approach lane before lane_0 (checked with shapely).
    let lane0 = cube.lane(cube.lane_by_id("lane_0").unwrap()).unwrap();
    let (_, a, b) = lane0.junction_span().unwrap();
    assert!((a + 1.053).abs() < 0.01, "{a}");
    assert!(b > 20.0 && b <= lane0.centre.length() + 3.0, "{b}");
    assert_eq!(lane0.turn, Turn::Left);
    assert_eq!(lane0.speed_limit_mps, 15.0);
}

#[test]
fn bad_files_are_named_errors() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("base_map.bin");
    std::fs::write(&garbage, [0xff_u8, 0xff, 0xff, 0x01, 0x02]).unwrap();
    let err = HdMap::load(&garbage, DEFAULT_MAX_MAP_BYTES)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("base_map.bin") && err.contains("apollo.hdmap.Map"),
        "{err}"
    );
    let text = dir.path().join("map.txt");
    std::fs::write(&text, "lane { id { id: \"a\" } no_such_field: 1 }").unwrap();
    let err = HdMap::load(&text, DEFAULT_MAX_MAP_BYTES)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("map.txt") && err.contains("no_such_field"),
        "{err}"
    );
    let empty = dir.path().join("empty.bin");
    std::fs::write(&empty, []).unwrap();
    let err = HdMap::load(&empty, DEFAULT_MAX_MAP_BYTES)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no lane"), "{err}");
    let err = HdMap::load(&map_dir("cube_town/base_map.bin"), 100)
        .unwrap_err()
        .to_string();
    assert!(err.contains("size limit"), "{err}");
    let missing = HdMap::load(&dir.path().join("nope.bin"), DEFAULT_MAX_MAP_BYTES).unwrap_err();
    assert!(missing.to_string().contains("nope.bin"));
}

#[test]
fn polyline_projection_and_crossings_match_hand_computed_values() {
    let line = Polyline::new([
        Point::new(0.0, 0.0),
        Point::new(10.0, 0.0),
        Point::new(10.0, 10.0),
    ])
    .unwrap();
    assert_eq!(line.length(), 20.0);
    let p = line.project(Point::new(4.0, 1.5)).unwrap();
    assert!((p.s - 4.0).abs() < 1e-12 && (p.lateral - 1.5).abs() < 1e-12);
    let p = line.project(Point::new(11.0, 6.0)).unwrap();
    assert!((p.s - 16.0).abs() < 1e-12 && (p.lateral + 1.0).abs() < 1e-12);
    // Beyond the start: the first segment is extended.
    let p = line.project_on_segment(0, Point::new(-2.0, 0.0)).unwrap();
    assert!((p.s + 2.0).abs() < 1e-12);
    // A vertical stop line at x = 5 crosses at s = 5; one at x = -1 only crosses the extension.
    let stop = [Point::new(5.0, -2.0), Point::new(5.0, 2.0)];
    assert_eq!(line.crossings(&stop, 0.0), vec![5.0]);
    let before = [Point::new(-1.0, -2.0), Point::new(-1.0, 2.0)];
    assert!(line.crossings(&before, 0.0).is_empty());
    assert_eq!(line.crossings(&before, 3.0), vec![-1.0]);
    // A square straddling the corner: the line is inside from s = 8 to s = 12.
    let square = [
        Point::new(8.0, -1.0),
        Point::new(12.0, -1.0),
        Point::new(12.0, 2.0),
        Point::new(8.0, 2.0),
    ];
    let (a, b) = line.inside_interval(&square, 0.0).unwrap();
    assert!(
        (a - 8.0).abs() < 1e-12 && (b - 12.0).abs() < 1e-12,
        "{a} {b}"
    );
}

#[test]
fn index_finds_the_same_lanes_as_a_linear_scan() {
    for name in ["cube_town/base_map.bin", "borregas_ave/base_map.bin"] {
        let map = HdMap::load(&map_dir(name), DEFAULT_MAX_MAP_BYTES).unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for lane in map.lanes() {
            for k in 0..=10 {
                let s = lane.centre.length() * f64::from(k) / 10.0;
                let p = lane.centre.point_at(s) + Point::new(0.7, -0.4);
                map.index().candidates(map.lanes(), p, 5.0, &mut a);
                LaneIndex::candidates_linear(map.lanes(), p, 5.0, &mut b);
                a.sort_by_key(|c| c.lane);
                b.sort_by_key(|c| c.lane);
                assert_eq!(a, b, "{name} {} s={s}", lane.id);
            }
        }
    }
}

#[test]
fn every_lane_point_matches_its_own_lane_when_driven_along_it() {
    let map = cube_town();
    for (i, lane) in map.lanes().iter().enumerate() {
        let mut tracker = MapTracker::new(Arc::clone(&map), TrackerConfig::default());
        // Approach through a predecessor so that junction lanes sharing a start are told apart by the
        // path, as when driving.
        let before = lane.predecessors.first().copied();
        if let Some(pre) = before {
            let pl = map.lane(pre).unwrap();
            let s = pl.centre.length() - 5.0;
            let p = pl.centre.point_at(s);
            tracker.set_route([(pl.id.as_str(), 0), (lane.id.as_str(), 1)]);
            tracker.locate(p.x, p.y, pl.centre.heading_at(s)).unwrap();
        }
        let len = lane.centre.length();
        for k in 1..10 {
            let s = len * f64::from(k) / 10.0;
            let p = lane.centre.point_at(s);
            let m = tracker.locate(p.x, p.y, lane.centre.heading_at(s)).unwrap();
            assert_eq!(m.lane, i, "{} at s={s:.1}", lane.id);
            assert!((m.s - s).abs() < 1e-6);
        }
    }
}

/// Drives lane_17 → lane_0 (left turn at the signalled junction J_0) and checks the fields against the
/// map's own numbers: the stop line of signal_0 crosses lane_0's centre line 0.18 m before its start.
#[test]
fn approach_to_a_signal_gives_stop_line_junction_and_light_by_id() {
    let map = cube_town();
    let mut tracker = MapTracker::new(Arc::clone(&map), TrackerConfig::default());
    tracker.set_route([("lane_17", 0), ("lane_0", 1), ("lane_12", 2)]);
    let l17 = map.lane(map.lane_by_id("lane_17").unwrap()).unwrap();
    let len = l17.centre.length();
    let lane0 = map.lane(map.lane_by_id("lane_0").unwrap()).unwrap();
    let stop = lane0
        .features
        .iter()
        .find(|f| matches!(f.kind, FeatureKind::SignalStop(_)))
        .unwrap();
    assert!((stop.start_s + 0.1789).abs() < 0.01, "{}", stop.start_s);
    let s = len - 30.0;
    let p = l17.centre.point_at(s);
    let mut frame = Frame {
        x: p.x,
        y: p.y,
        heading: l17.centre.heading_at(s),
        ..Frame::default()
    };
    tracker.set_lights([
        LightObservation {
            id: "signal_1".into(),
            color: light_color::GREEN,
            blink: false,
        },
        LightObservation {
            id: "signal_0".into(),
            color: light_color::RED,
            blink: true,
        },
    ]);
    tracker.fill(&mut frame);
    let expected_line = 30.0 + stop.start_s - EGO_FRONT_M;
    assert!(
        (frame.stopline_dist_m - expected_line).abs() < 0.05,
        "{}",
        frame.stopline_dist_m
    );
    let (_, entry, _) = lane0.junction_span().unwrap();
    assert!((frame.junction_dist_m - (30.0 + entry - EGO_FRONT_M)).abs() < 0.05);
    // The stop sign of J_1 lies beyond lane_0 (24.0 m) and lane_12 (85.7 m).
    let l12 = map.lane(map.lane_by_id("lane_12").unwrap()).unwrap();
    let sign = 30.0 - EGO_FRONT_M + lane0.centre.length() + l12.centre.length();
    assert!(
        (frame.stopsign_dist_m - sign).abs() < 1.0,
        "{}",
        frame.stopsign_dist_m
    );
    assert!(frame.signal_ahead);
    assert_eq!(frame.light_color, light_color::RED);
    assert!(frame.light_blink);
    assert_eq!(frame.planned_turn, planned_turn::LEFT);
    assert_eq!(frame.lane_number, 1);
    assert_eq!(frame.speed_limit_mps, 15.0);
    // Another signal's colour does not leak in.
    tracker.set_lights([LightObservation {
        id: "signal_1".into(),
        color: light_color::GREEN,
        blink: false,
    }]);
    tracker.fill(&mut frame);
    assert_eq!(frame.light_color, 0);
    // Inside the junction: distance 0, lane number 0, the light still governs.
    let mid = lane0.centre.point_at(10.0);
    frame.x = mid.x;
    frame.y = mid.y;
    frame.heading = lane0.centre.heading_at(10.0);
    tracker.fill(&mut frame);
    assert_eq!(frame.junction_dist_m, 0.0);
    assert_eq!(frame.lane_number, 0);
    assert!(frame.signal_ahead);
    // The next stop line is the stop sign of J_1, beyond lane_12.
    assert!(frame.stopline_dist_m > 80.0 && frame.stopline_dist_m < 120.0);
    assert_eq!(frame.stopline_dist_m, frame.stopsign_dist_m);
    // Off the map: nothing ahead.
    frame.x += 500.0;
    tracker.fill(&mut frame);
    assert_eq!(frame.junction_dist_m, f64::INFINITY);
    assert!(!frame.signal_ahead);
}

fn centroid(polygon: &[Point]) -> Point {
    polygon.iter().fold(Point::zeros(), |a, p| a + p) / polygon.len() as f64
}

fn vehicle(id: i32, p: Point, heading: f64, speed_mps: f64) -> laws::Obstacle {
    laws::Obstacle {
        id,
        kind: laws::frame::obstacle_type::VEHICLE,
        x: p.x,
        y: p.y,
        heading,
        speed_mps,
        length: 4.5,
        width: 2.0,
        priority: false,
    }
}

/// The ego `before` metres before the end of `lane`, following `route`.
fn ego_before(map: &Arc<HdMap>, lane: &str, before: f64, route: &[&str]) -> (MapTracker, Frame) {
    let mut tracker = MapTracker::new(Arc::clone(map), TrackerConfig::default());
    tracker.set_route(route.iter().enumerate().map(|(i, id)| (*id, i)));
    let l = map.lane(map.lane_by_id(lane).unwrap()).unwrap();
    let s = l.centre.length() - before;
    let p = l.centre.point_at(s);
    let frame = Frame {
        x: p.x,
        y: p.y,
        heading: l.centre.heading_at(s),
        ..Frame::default()
    };
    (tracker, frame)
}

#[test]
fn oncoming_traffic_has_priority_over_a_left_turn_only() {
    let map = cube_town();
    let j0 = &map.junctions()[map.junctions().iter().position(|j| j.id == "J_0").unwrap()];
    let c = centroid(&j0.polygon);
    assert!(super::geometry::point_in_polygon(c, &j0.polygon));
    let (mut left, mut frame) = ego_before(&map, "lane_17", 15.0, &["lane_17", "lane_0"]);
    let h = frame.heading;
    frame.obstacles = vec![
        vehicle(1, c, h + std::f64::consts::PI, 5.0), // oncoming, moving
        vehicle(2, c, h, 5.0),                        // same direction
        vehicle(3, c, h + std::f64::consts::PI, 0.0), // oncoming, stopped
    ];
    left.fill(&mut frame);
    assert_eq!(frame.planned_turn, planned_turn::LEFT);
    let prio: Vec<bool> = frame.obstacles.iter().map(|o| o.priority).collect();
    assert_eq!(prio, vec![true, false, false]);
    // Going straight through the same signalled junction: nobody has priority.
    let (mut straight, mut frame2) = ego_before(&map, "lane_17", 15.0, &["lane_17", "lane_4"]);
    frame2.obstacles = frame.obstacles.clone();
    straight.fill(&mut frame2);
    assert_eq!(frame2.planned_turn, planned_turn::STRAIGHT);
    assert!(frame2.obstacles.iter().all(|o| !o.priority));
}

#[test]
fn vehicles_crossing_a_stop_sign_junction_have_priority_and_stopped_ones_make_a_jam() {
    let map = cube_town();
    let j1 = &map.junctions()[map.junctions().iter().position(|j| j.id == "J_1").unwrap()];
    let c = centroid(&j1.polygon);
    let (mut t, mut frame) = ego_before(&map, "lane_12", 15.0, &["lane_12", "lane_10"]);
    assert!(frame.obstacles.is_empty());
    frame.obstacles = vec![vehicle(1, c, 0.3, 4.0), vehicle(2, c, 0.3, 0.0)];
    t.fill(&mut frame);
    assert!(frame.stopsign_dist_m < 15.0 && !frame.signal_ahead);
    let prio: Vec<bool> = frame.obstacles.iter().map(|o| o.priority).collect();
    assert_eq!(prio, vec![true, false]);
    assert!(!frame.traffic_jam, "one stopped vehicle is no jam");
    // Three vehicles below 1 m/s inside the junction: a jam; two: none.
    let stopped = |id, dx: f64| vehicle(id, c + Point::new(dx, 0.0), 0.0, 0.5);
    frame.obstacles = vec![stopped(1, -1.5), stopped(2, 0.0), stopped(3, 1.5)];
    t.fill(&mut frame);
    assert!(frame.traffic_jam);
    frame.obstacles.pop();
    t.fill(&mut frame);
    assert!(!frame.traffic_jam);
}

#[test]
fn a_pedestrian_on_a_crosswalk_ahead_has_priority() {
    let map = Arc::new(
        HdMap::load(&map_dir("borregas_ave/base_map.bin"), DEFAULT_MAX_MAP_BYTES).unwrap(),
    );
    // A lane with a crosswalk well into it, so the ego can stand on the same lane before it.
    let (lane_i, cw, start) = map
        .lanes()
        .iter()
        .enumerate()
        .find_map(|(i, l)| {
            l.features.iter().find_map(|f| match f.kind {
                FeatureKind::Crosswalk(c) if f.start_s > 15.0 => Some((i, c, f.start_s)),
                _ => None,
            })
        })
        .unwrap();
    let lane = map.lane(lane_i).unwrap();
    let mut tracker = MapTracker::new(Arc::clone(&map), TrackerConfig::default());
    let s = start - 12.0;
    let p = lane.centre.point_at(s);
    let polygon = &map.crosswalks()[cw].polygon;
    let on_it = centroid(polygon);
    assert!(super::geometry::point_in_polygon(on_it, polygon));
    let walker = |id, at: Point| laws::Obstacle {
        kind: laws::frame::obstacle_type::PEDESTRIAN,
        ..vehicle(id, at, 0.0, 1.0)
    };
    let mut frame = Frame {
        x: p.x,
        y: p.y,
        heading: lane.centre.heading_at(s),
        obstacles: vec![walker(1, on_it), walker(2, on_it + Point::new(40.0, 40.0))],
        ..Frame::default()
    };
    tracker.fill(&mut frame);
    assert!(
        (frame.crosswalk_dist_m - (12.0 - EGO_FRONT_M)).abs() < 0.01,
        "{}",
        frame.crosswalk_dist_m
    );
    let prio: Vec<bool> = frame.obstacles.iter().map(|o| o.priority).collect();
    assert_eq!(prio, vec![true, false]);
}

/// The ego at rest (or moving) with its reference point at `s` on `lane`.
fn ego_at(map: &HdMap, lane: &str, s: f64, speed_mps: f64, t: f64) -> Frame {
    let l = map.lane(map.lane_by_id(lane).unwrap()).unwrap();
    let p = l.centre.point_at(s);
    Frame {
        t,
        x: p.x,
        y: p.y,
        heading: l.centre.heading_at(s),
        speed_mps,
        ..Frame::default()
    }
}

/// A lane's stop-sign line: (along it, the point, the lane's heading there).
fn stop_sign_line(map: &HdMap, lane: LaneIdx) -> Option<(f64, Point, f64)> {
    let l = map.lane(lane)?;
    let s = l
        .features
        .iter()
        .find(|f| matches!(f.kind, FeatureKind::StopSign(_)))?
        .start_s;
    Some((s, l.centre.point_at(s), l.centre.heading_at(s)))
}

/// A vehicle (id 7) with its front `gap` metres before the stop-sign line of `lane`, facing along it.
fn vehicle_at_line(map: &HdMap, lane: LaneIdx, gap: f64, speed_mps: f64) -> laws::Obstacle {
    let (_, at, h) = stop_sign_line(map, lane).unwrap();
    let centre = at - Point::new(h.cos(), h.sin()) * (gap + 4.5 / 2.0);
    vehicle(7, centre, h, speed_mps)
}

#[test]
fn at_an_all_way_stop_the_vehicle_that_stopped_first_has_priority() {
    let map = cube_town();
    let j1 = map.junctions().iter().position(|j| j.id == "J_1").unwrap();
    // The ego comes along lane_12 and crosses J_1 on lane_10, whose start carries the stop-sign line.
    let approach = map.lane(map.lane_by_id("lane_12").unwrap()).unwrap();
    let through = map.lane_by_id("lane_10").unwrap();
    let (line_s, _, ego_heading) = stop_sign_line(&map, through).expect("lane_10's stop sign");
    let ego_line = approach.centre.length() + line_s;
    // Another approach: a junction lane of J_1 with a stop-sign line, coming from another direction.
    let other = (0..map.lanes().len())
        .find(|&i| {
            map.lane(i)
                .unwrap()
                .junction_span()
                .is_some_and(|(j, _, _)| j == j1)
                && stop_sign_line(&map, i).is_some_and(|(_, _, h)| {
                    super::geometry::angle_diff(h, ego_heading).abs() > 1.0
                })
        })
        .expect("a second stop-sign approach to J_1");
    let route = ["lane_12", "lane_10"];
    let tracker = || {
        let mut t = MapTracker::new(Arc::clone(&map), TrackerConfig::default());
        t.set_route(route.iter().enumerate().map(|(i, id)| (*id, i)));
        t
    };
    // The ego's front 1 m before its line, at rest; 12 m before it, moving.
    let ego_waiting = |t: f64| ego_at(&map, "lane_12", ego_line - 1.0 - EGO_FRONT_M, 0.0, t);
    let ego_coming = |t: f64| ego_at(&map, "lane_12", ego_line - 12.0 - EGO_FRONT_M, 5.0, t);
    let priority = |tracker: &mut MapTracker, mut frame: Frame, ob: laws::Obstacle| {
        frame.obstacles = vec![ob];
        tracker.fill(&mut frame);
        assert!(
            !frame.signal_ahead && frame.stopsign_dist_m < 15.0,
            "{frame:?}"
        );
        frame.obstacles[0].priority
    };
    let waiting = vehicle_at_line(&map, other, 1.0, 0.0);

    // It stopped first: right of way while the ego comes and while the ego waits.
    let mut t = tracker();
    assert!(priority(&mut t, ego_coming(0.0), waiting));
    assert!(priority(&mut t, ego_waiting(1.0), waiting));
    assert!(priority(&mut t, ego_waiting(2.0), waiting));

    // The ego stopped first: the vehicle, still rolling towards its line then, has none once it stops.
    let mut t = tracker();
    assert!(!priority(
        &mut t,
        ego_waiting(0.0),
        vehicle_at_line(&map, other, 6.0, 3.0)
    ));
    assert!(!priority(&mut t, ego_waiting(1.0), waiting));
    assert!(!priority(&mut t, ego_waiting(2.0), waiting));

    // At rest far before its line, or at the line facing the other way: not arrived.
    let mut t = tracker();
    assert!(!priority(
        &mut t,
        ego_coming(0.0),
        vehicle_at_line(&map, other, 10.0, 0.0)
    ));
    let mut backwards = waiting;
    backwards.heading += std::f64::consts::PI;
    let mut t = tracker();
    assert!(!priority(&mut t, ego_coming(0.0), backwards));

    // A vehicle that left the frame is forgotten: back at rest far from its line, it has none.
    let mut t = tracker();
    assert!(priority(&mut t, ego_coming(0.0), waiting));
    let mut frame = ego_waiting(1.0);
    t.fill(&mut frame);
    assert!(!priority(
        &mut t,
        ego_waiting(2.0),
        vehicle_at_line(&map, other, 10.0, 0.0)
    ));
}

/// A lane's speed limit that is not a positive number is read as no limit and said among the map's
/// warnings (0, how some maps leave it out, silently); positive limits are kept as given.
#[test]
fn lanes_with_unusable_speed_limits_are_named() {
    let bytes = std::fs::read(map_dir("cube_town/base_map.bin")).unwrap();
    let mut map = decode(&bytes, MapFormat::Binary).unwrap();
    assert!(map.lane.len() >= 4);
    for (lane, limit) in map.lane.iter_mut().zip([f64::NAN, -5.0, 0.0, 12.5]) {
        lane.speed_limit = Some(limit);
    }
    let ids: Vec<String> = map.lane[..4]
        .iter()
        .map(|l| l.id.as_ref().and_then(|i| i.id.clone()).unwrap_or_default())
        .collect();
    let built = HdMap::from_proto(&map);
    let said: Vec<&String> = built
        .warnings()
        .iter()
        .filter(|w| w.contains("speed limit"))
        .collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said[0].contains(&format!("{:?}", ids[0])) && said[0].contains("NaN"),
        "{said:?}"
    );
    assert!(
        said[1].contains("-5 m/s is not a positive number"),
        "{said:?}"
    );
    let limit = |id: &str| {
        built
            .lanes()
            .iter()
            .find(|l| l.id == id)
            .map(|l| l.speed_limit_mps)
            .unwrap()
    };
    assert_eq!(limit(&ids[0]), f64::INFINITY);
    assert_eq!(limit(&ids[1]), f64::INFINITY);
    assert_eq!(limit(&ids[2]), f64::INFINITY);
    assert_eq!(limit(&ids[3]), 12.5);
}
