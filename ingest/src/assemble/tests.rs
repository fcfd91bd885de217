//! Assembly tests: ticks follow message time, sample and hold, and every odd input is counted.

use serde_json::json;

use super::*;
use crate::message::Payload;

fn loc(t: f64, x: f64) -> SimMessage {
    let v = json!({"measurement_time": t, "pose": {"position": {"x": x, "y": 0.0},
        "heading": 0.0, "linear_velocity": {"x": 2.0, "y": 0.0, "z": 0.0}}});
    SimMessage::decode("/apollo/localization/pose", Payload::Json(&v)).unwrap()
}

fn chassis(t: f64, speed: f64) -> SimMessage {
    let v =
        json!({"header": {"timestamp_sec": t}, "speed_mps": speed, "gear_location": "GEAR_DRIVE"});
    SimMessage::decode("/apollo/canbus/chassis", Payload::Json(&v)).unwrap()
}

fn road(v: serde_json::Value) -> SimMessage {
    SimMessage::decode("/avguard/road_context", Payload::Json(&v)).unwrap()
}

fn run(msgs: &[SimMessage]) -> (Vec<Frame>, AssemblyStats) {
    let mut a = Assembler::new(AssemblerConfig::default());
    let mut out = Vec::new();
    for m in msgs {
        a.push(m, &mut out);
    }
    (out, a.stats())
}

#[test]
fn localization_closes_its_tick_and_values_are_held() {
    let (frames, stats) = run(&[
        road(json!({"stopline_dist": 30.0})),
        chassis(0.0, 5.0),
        loc(0.0, 1.0),
        loc(0.1, 2.0),
        chassis(0.2, 4.0),
        loc(0.2, 3.0),
    ]);
    let ts: Vec<f64> = frames.iter().map(|f| f.t).collect();
    assert_eq!(ts, vec![0.0, 0.1, 0.2]);
    assert_eq!(frames[0].x, 1.0);
    assert_eq!(frames[0].speed_mps, 5.0); // chassis speedometer preferred over the pose velocity
    assert_eq!(frames[1].speed_mps, 5.0); // held
    assert_eq!(frames[2].speed_mps, 4.0);
    assert_eq!(frames[2].stopline_dist_m, 30.0);
    assert_eq!(stats.n_frames, 3);
    assert_eq!(stats.n_applied, 6);
}

#[test]
fn missing_localization_ticks_are_filled_by_later_messages() {
    // Pose at 0.0, then only chassis until 0.35: ticks 0.1, 0.2, 0.3 are emitted with held values.
    let (frames, _) = run(&[loc(0.0, 1.0), chassis(0.15, 3.0), chassis(0.35, 6.0)]);
    let ts: Vec<f64> = frames.iter().map(|f| (f.t * 10.0).round() / 10.0).collect();
    assert_eq!(ts, vec![0.0, 0.1, 0.2, 0.3]);
    assert_eq!(frames[1].speed_mps, 2.0); // pose speed until the chassis reports
    assert_eq!(frames[2].speed_mps, 3.0);
    assert_eq!(frames[3].speed_mps, 3.0); // the 0.35 chassis belongs to the 0.4 tick
}

#[test]
fn duplicates_out_of_order_and_late_are_counted_not_fatal() {
    let (frames, stats) = run(&[
        loc(0.0, 1.0),
        loc(0.0, 9.0), // duplicate
        loc(0.1, 2.0),
        loc(0.05, 9.0),     // out of order
        chassis(0.02, 1.0), // late: tick 0.1 already emitted
        loc(0.2, 3.0),
    ]);
    assert_eq!(frames.len(), 3);
    assert_eq!(
        frames.iter().map(|f| f.x).collect::<Vec<_>>(),
        vec![1.0, 2.0, 3.0]
    );
    assert_eq!(stats.n_duplicate, 1);
    assert_eq!(stats.n_out_of_order, 1);
    assert_eq!(stats.n_late, 1);
    assert_eq!(frames[2].speed_mps, 1.0); // the late chassis is still held
}

#[test]
fn large_time_jump_starts_a_new_run_instead_of_flooding() {
    let (frames, stats) = run(&[loc(0.0, 1.0), loc(1000.0, 2.0), loc(1000.1, 3.0)]);
    assert_eq!(stats.n_resync, 1);
    assert_eq!(
        frames.iter().map(|f| f.t).collect::<Vec<_>>(),
        vec![0.0, 1000.0, 1000.1]
    );
}

/// Settings that would make assembly unbounded are refused by `check`, naming them, and held in range by
/// `new`: a period of 1e-300 s once filled a one-second gap with ticks for ever.
#[test]
fn periods_and_gaps_out_of_range_are_refused_and_held_in_range() {
    let with = |period_s: f64, max_gap_s: f64| AssemblerConfig {
        period_s,
        max_gap_s,
        ..AssemblerConfig::default()
    };
    assert_eq!(AssemblerConfig::default().check(), Ok(()));
    assert_eq!(with(MIN_PERIOD_S, MAX_GAP_S).check(), Ok(()));
    for (config, says) in [
        (with(1e-300, 5.0), "frame period of 1e-300 s"),
        (with(0.0009, 5.0), "frame period of 0.0009 s"),
        (with(f64::NAN, 5.0), "frame period of NaN s"),
        (with(11.0, 20.0), "frame period of 11.0 s"),
        (with(0.1, 0.05), "gap limit of 0.05 s"),
        (with(0.1, 1e300), "gap limit of 1e300 s"),
        (
            AssemblerConfig {
                max_backstep_s: -1.0,
                ..AssemblerConfig::default()
            },
            "backstep limit of -1.0 s",
        ),
    ] {
        let err = config.check().unwrap_err();
        assert!(err.contains(says), "{config:?}: {err}");
    }
    // Held in range: a 1 s gap at the shortest period is 1,000 ticks, not 10^300.
    let mut a = Assembler::new(with(1e-300, 1e300));
    let mut out = Vec::new();
    a.push(&loc(0.0, 1.0), &mut out);
    a.push(&loc(1.0, 2.0), &mut out);
    assert_eq!(out.len(), 1001, "ticks at 0, 1 ms, ..., 1 s");
    assert!(out.windows(2).all(|w| w[1].t > w[0].t));
    // A gap above the largest filled starts a new run instead.
    a.push(&loc(1.0 + MAX_GAP_S + 1.0, 3.0), &mut out);
    assert_eq!(a.stats().n_resync, 1);
}

#[test]
fn run_boundaries_forget_the_old_run() {
    let mut a = Assembler::new(AssemblerConfig::default());
    let mut out = Vec::new();
    let mut boundaries = Vec::new();
    let msgs = [
        road(json!({"stopline_dist": 30.0, "stamp": 10.0})),
        chassis(10.0, 5.0),
        loc(10.0, 1.0),
        loc(10.1, 2.0),
        // Reset: the simulator starts again at t = 0 (the chassis comes first).
        chassis(0.0, 1.0),
        loc(0.0, 7.0),
        loc(0.1, 8.0),
        // A small step back is only an out-of-order message.
        loc(-0.5, 9.0),
        // A new scenario on a later clock.
        loc(500.0, 10.0),
    ];
    let mut runs = vec![Vec::new()];
    for m in &msgs {
        out.clear();
        if let Some(b) = a.push(m, &mut out) {
            boundaries.push(b);
            runs.push(Vec::new());
        }
        runs.last_mut().unwrap().append(&mut out);
    }
    assert_eq!(boundaries.len(), 2, "{boundaries:?}");
    assert!(
        matches!(boundaries[0], RunBoundary::TimeBackwards { from_s, to_s } if from_s == 10.1 && to_s == 0.0)
    );
    assert!(matches!(boundaries[1], RunBoundary::TimeJump { to_s, .. } if to_s == 500.0));
    let xs: Vec<Vec<f64>> = runs
        .iter()
        .map(|r| r.iter().map(|f| f.x).collect())
        .collect();
    assert_eq!(xs, vec![vec![1.0, 2.0], vec![7.0, 8.0], vec![10.0]]);
    // The second run does not hold the first run's road context or chassis speed.
    assert_eq!(runs[0][0].stopline_dist_m, 30.0);
    assert_eq!(runs[1][0].stopline_dist_m, f64::INFINITY);
    assert_eq!(runs[1][0].speed_mps, 1.0);
    assert_eq!(runs[2][0].speed_mps, 2.0);
    assert_eq!(a.stats().n_out_of_order, 1);
}

#[test]
fn light_from_context_rules_over_detection_and_priority_is_merged() {
    let tl =
        json!({"header": {"timestamp_sec": 0.0}, "traffic_light": [{"color": "GREEN", "id": "1"}]});
    let tl = SimMessage::decode("/apollo/perception/traffic_light", Payload::Json(&tl)).unwrap();
    let obs = json!({"header": {"timestamp_sec": 0.05}, "perception_obstacle": [
        {"id": 7, "position": {"x": 1.0, "y": 2.0, "z": 0.0}, "type": "PEDESTRIAN"},
        {"id": 8, "position": {"x": 1.0, "y": 2.0, "z": 0.0}, "type": "VEHICLE"}]});
    let obs = SimMessage::decode("/apollo/perception/obstacles", Payload::Json(&obs)).unwrap();
    let (frames, _) = run(&[
        tl.clone(),
        loc(0.0, 0.0),
        road(json!({"light_color": 1, "priority": [7]})),
        obs,
        loc(0.1, 0.0),
    ]);
    assert_eq!(frames[0].light_color, 3); // detection only
    assert_eq!(frames[1].light_color, 1); // context rules
    assert_eq!(
        frames[1]
            .obstacles
            .iter()
            .map(|o| (o.id, o.priority))
            .collect::<Vec<_>>(),
        vec![(7, true), (8, false)]
    );
}

#[test]
fn map_fills_road_fields_and_road_context_overrides_them() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/apollo/lgsvl-apollo-5.0/modules/map/data/cube_town/base_map.bin");
    let map = std::sync::Arc::new(
        crate::hdmap::HdMap::load(&dir, crate::hdmap::DEFAULT_MAX_MAP_BYTES).unwrap(),
    );
    let lane = map.lane(map.lane_by_id("lane_17").unwrap()).unwrap();
    let s = lane.centre.length() - 20.0;
    let p = lane.centre.point_at(s);
    let heading = lane.centre.heading_at(s);
    let pose = |t: f64| {
        let v = json!({"measurement_time": t, "pose": {"position": {"x": p.x, "y": p.y},
            "heading": heading}});
        SimMessage::decode("/apollo/localization/pose", Payload::Json(&v)).unwrap()
    };
    let tl = json!({"header": {"timestamp_sec": 0.0}, "traffic_light": [
        {"color": "GREEN", "id": "signal_2"}, {"color": "YELLOW", "id": "signal_0"}]});
    let tl = SimMessage::decode("/apollo/perception/traffic_light", Payload::Json(&tl)).unwrap();
    let mut a = Assembler::with_map(
        AssemblerConfig::default(),
        map.clone(),
        crate::hdmap::tracker::TrackerConfig::default(),
    );
    let mut out = Vec::new();
    a.push(&tl, &mut out);
    a.push(&pose(0.0), &mut out);
    a.push(&road(json!({"stamp": 0.05, "speed_limit": 5.0})), &mut out);
    a.push(&pose(0.1), &mut out);
    assert_eq!(out.len(), 2);
    let lane4 = map.lane(map.lane_by_id("lane_4").unwrap()).unwrap();
    let (_, start, _) = lane4.junction_span().unwrap();
    let entry = 20.0 + start - laws::signals::EGO_FRONT_M;
    assert!(
        (out[0].junction_dist_m - entry).abs() < 0.01,
        "{}",
        out[0].junction_dist_m
    );
    // Least turn from lane_17 is straight through lane_4 (signal_0): the detection's first light is
    // signal_2, but signal_0 governs.
    assert_eq!(out[0].light_color, laws::frame::light_color::YELLOW);
    assert!(out[0].signal_ahead);
    assert_eq!(out[0].speed_limit_mps, 15.0);
    assert_eq!(out[1].speed_limit_mps, 5.0); // the road context overrides the map
    assert!((out[1].junction_dist_m - entry).abs() < 0.01);
}
