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
fn large_time_jump_resyncs_instead_of_flooding() {
    let (frames, stats) = run(&[loc(0.0, 1.0), loc(1000.0, 2.0), loc(1000.1, 3.0)]);
    assert_eq!(stats.n_resync, 1);
    assert!(frames.len() <= 4, "{}", frames.len());
    assert_eq!(frames.last().unwrap().t, 1000.1);
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
