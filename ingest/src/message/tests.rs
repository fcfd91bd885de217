//! Decoder tests against real Apollo data: every text fixture and its binary encoding decode to the same
//! message, with the values the text files state; JSON in both naming styles maps to the same message.
// Literals are copied digit for digit from the fixture texts, so that the test reads like the file.
#![allow(clippy::excessive_precision)]

use std::path::PathBuf;

use laws::frame::{gear, light_color, obstacle_type, turn_signal};
use serde_json::json;

use super::*;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/apollo")
}

/// Decodes `modules/<rel>.pb.txt` as text and `derived-bin/modules/<rel>.bin` as binary, asserts they
/// agree, and returns the message.
fn both(topic: &str, rel: &str) -> SimMessage {
    let root = fixtures();
    let text = std::fs::read_to_string(root.join(format!("lgsvl-apollo-5.0/modules/{rel}.pb.txt")))
        .unwrap_or_else(|e| panic!("{rel}: {e}"));
    let bin = std::fs::read(root.join(format!("derived-bin/modules/{rel}.bin"))).unwrap();
    let from_text = SimMessage::decode(topic, Payload::Text(&text)).unwrap();
    let from_bin = SimMessage::decode(topic, Payload::Binary(&bin)).unwrap();
    assert_eq!(from_text, from_bin, "{rel}: text and binary differ");
    from_bin
}

const LOC: &str = "/apollo/localization/pose";
const CHASSIS: &str = "/apollo/canbus/chassis";
const OBST: &str = "/apollo/perception/obstacles";
const TL: &str = "/apollo/perception/traffic_light";

#[test]
fn localization_fixtures_decode_to_stated_values() {
    let SimMessage::Localization(m) = both(LOC, "common/testdata/localization_pre") else {
        panic!("wrong variant")
    };
    assert_eq!(m.time_s, 1548201255.85); // measurement_time, not the header time
    assert_eq!(m.x_m, 587202.10519798519);
    assert_eq!(m.y_m, 4141420.7868995117);
    assert_eq!(m.z_m, -31.197345808148384);
    assert_eq!(m.heading_rad, Some(-0.39660175801844888));
    let speed = 1.4304187503960097_f64.hypot(-0.50054861209113288);
    assert!((m.speed_mps.unwrap() - speed).abs() < 1e-12);
    // Projection of (-0.18167, -0.03097) on heading -0.3966 rad, computed by hand:
    // -0.18167 * cos(h) + -0.03097 * sin(h) = -0.16757 + 0.01196 = -0.15561.
    assert!(
        (m.accel_mps2.unwrap() - (-0.155_61)).abs() < 1e-4,
        "{:?}",
        m.accel_mps2
    );

    // No measurement_time in this one: the header time is used.
    let SimMessage::Localization(m) = both(
        LOC,
        "control/testdata/relative_position_test/0_apollo_localization_pose",
    ) else {
        panic!("wrong variant")
    };
    assert_eq!(m.time_s, 1509646355.83);
    assert_eq!(m.heading_rad, Some(0.930828986547));

    let SimMessage::Localization(m) = both(
        LOC,
        "planning/testdata/sunnyvale_big_loop_test/1_localization",
    ) else {
        panic!("wrong variant")
    };
    assert_eq!(m.time_s, 1515787931.32102);
    assert_eq!(m.heading_rad, Some(-1.5881226813868095));
}

#[test]
fn chassis_fixtures_decode_to_stated_values() {
    let SimMessage::Chassis(c) = both(CHASSIS, "common/testdata/chassis_pre") else {
        panic!("wrong variant")
    };
    assert_eq!(c.time_s, Some(1548201255.8666761));
    assert_eq!(c.speed_mps, Some(f64::from(1.6138889_f32)));
    assert_eq!(c.gear, Some(gear::DRIVE));
    assert_eq!(c.throttle_pct, Some(15.178149));
    assert_eq!(c.brake_pct, Some(20.117495));
    assert_eq!(c.steering_pct, Some(-54.957447));
    assert_eq!(c.turn_signal, Some(turn_signal::NONE));
    assert_eq!(c.high_beam, Some(false));
    assert_eq!(c.horn, Some(false));
    assert_eq!(c.low_beam, None);

    let SimMessage::Chassis(c) = both(
        CHASSIS,
        "planning/testdata/sunnyvale_big_loop_test/1_chassis",
    ) else {
        panic!("wrong variant")
    };
    assert_eq!(c.turn_signal, Some(turn_signal::LEFT));
    assert_eq!(c.speed_mps, Some(f64::from(8.9833336_f32)));
    assert_eq!(c.time_s, Some(1515787931.3517847));

    let SimMessage::Chassis(c) = both(
        CHASSIS,
        "control/testdata/relative_position_test/0_apollo_canbus_chassis",
    ) else {
        panic!("wrong variant")
    };
    assert_eq!(c.speed_mps, Some(f64::from(10.1527776718_f32)));
}

#[test]
fn traffic_light_fixtures_decode_to_stated_values() {
    let SimMessage::TrafficLights(l) = both(
        TL,
        "planning/testdata/sunnyvale_big_loop_test/300_traffic_light",
    ) else {
        panic!("wrong variant")
    };
    assert_eq!(
        (l.color, l.n_lights, l.id.as_deref()),
        (light_color::GREEN, 1, Some("2287"))
    );
    assert_eq!(l.time_s, Some(1510780361.78));
    let SimMessage::TrafficLights(l) =
        both(TL, "planning/testdata/sunnyvale_loop_test/8_traffic_light")
    else {
        panic!("wrong variant")
    };
    assert_eq!(
        (l.color, l.n_lights, l.id.as_deref()),
        (light_color::RED, 2, Some("1083"))
    );
}

#[test]
fn obstacle_fixtures_decode_to_stated_values() {
    let SimMessage::Obstacles(o) =
        both(OBST, "prediction/testdata/perception_vehicles_pedestrians")
    else {
        panic!("wrong variant")
    };
    assert_eq!(o.time_s, Some(1501183430.161906));
    let kinds: Vec<(i32, i32)> = o.obstacles.iter().map(|ob| (ob.id, ob.kind)).collect();
    let v = obstacle_type::VEHICLE;
    let p = obstacle_type::PEDESTRIAN;
    assert_eq!(
        kinds,
        vec![(0, v), (1, v), (2, v), (3, v), (101, p), (102, p)]
    );
    let first = &o.obstacles[0];
    assert_eq!(
        (first.x, first.y, first.heading),
        (-449.952, -161.917, -0.349)
    );
    assert_eq!((first.length, first.width), (4.0, 2.0));
    assert!((first.speed_mps - 18.794_f64.hypot(6.839)).abs() < 1e-12);
    assert_eq!(o.n_dropped, 0);

    for rel in [
        "prediction/testdata/single_perception_vehicle_onlane",
        "prediction/testdata/single_perception_cyclist_onlane",
        "prediction/testdata/multiple_perception_pedestrians",
        "prediction/testdata/frame_sequence/frame_1",
        "prediction/testdata/frame_sequence/frame_2",
        "prediction/testdata/frame_sequence/frame_3",
    ] {
        let SimMessage::Obstacles(o) = both(OBST, rel) else {
            panic!("wrong variant")
        };
        assert!(!o.obstacles.is_empty(), "{rel}");
    }
    let SimMessage::Obstacles(o) =
        both(OBST, "prediction/testdata/single_perception_cyclist_onlane")
    else {
        panic!("wrong variant")
    };
    assert_eq!(o.obstacles[0].kind, obstacle_type::BICYCLE);
    // Header time 0.0 in Apollo's test data means "no time".
    let SimMessage::Obstacles(o) = both(OBST, "prediction/testdata/frame_sequence/frame_1") else {
        panic!("wrong variant")
    };
    assert_eq!(o.time_s, None);
}

#[test]
fn json_accepts_camel_and_snake_case_and_enum_names_or_numbers() {
    let snake = json!({"header": {"timestamp_sec": 5.0}, "speed_mps": 3.5, "gear_location": "GEAR_REVERSE",
        "signal": {"turn_signal": 2}});
    let camel = json!({"header": {"timestampSec": 5.0}, "speedMps": 3.5, "gearLocation": 2,
        "signal": {"turnSignal": "TURN_RIGHT"}, "someFutureField": 1});
    let a = SimMessage::decode(CHASSIS, Payload::Json(&snake)).unwrap();
    let b = SimMessage::decode(CHASSIS, Payload::Json(&camel)).unwrap();
    assert_eq!(a, b);
    let SimMessage::Chassis(c) = a else { panic!() };
    assert_eq!(
        (c.gear, c.turn_signal, c.speed_mps),
        (Some(gear::REVERSE), Some(turn_signal::RIGHT), Some(3.5))
    );
    // Unreported floats stay unreported (Apollo's NaN default), not 0.
    assert_eq!(c.throttle_pct, None);
}

#[test]
fn bad_inputs_are_typed_errors() {
    let err = |topic: &str, v: serde_json::Value| {
        SimMessage::decode(topic, Payload::Json(&v)).unwrap_err()
    };
    assert!(matches!(
        err("/nope", json!({})),
        DecodeError::UnknownTopic(_)
    ));
    assert!(matches!(
        err(CHASSIS, json!({"speed_mps": "fast"})),
        DecodeError::Mapping { .. }
    ));
    // A JSON value that does not map names its field.
    let said = err(CHASSIS, json!({"speed_mps": "fast"})).to_string();
    assert!(said.contains("field `speed_mps`"), "{said}");
    let said = err(
        OBST,
        json!({"perception_obstacle": [{"id": 1}, {"id": 99_999_999_999_999_i64}]}),
    )
    .to_string();
    assert!(said.contains("field `perception_obstacle[1].id`"), "{said}");
    let said = err(LOC, json!({"header": {"timestampSec": {"a": 1}}})).to_string();
    assert!(said.contains("field `header.timestampSec`"), "{said}");
    assert!(matches!(
        err(LOC, json!({"measurement_time": 1.0})),
        DecodeError::Missing { .. }
    ));
    assert!(matches!(
        err(
            LOC,
            json!({"measurement_time": 1.0, "pose": {"position": {"x": "NaN", "y": 1.0}}})
        ),
        DecodeError::NonFinite { .. }
    ));
    assert!(matches!(
        SimMessage::decode_envelope(&[0xff, 0xff, 0xff]).unwrap_err(),
        DecodeError::Envelope(_)
    ));
    let empty = SimMessage::decode_envelope(&[]).unwrap_err().to_string();
    assert!(
        empty.contains("names no channel") && empty.contains("0 payload bytes"),
        "{empty}"
    );
    let crowd: Vec<_> = (0..=laws::frame::MAX_OBSTACLES)
        .map(|i| json!({"id": i, "position": {"x": 1.0, "y": 2.0}}))
        .collect();
    let too_many = err(OBST, json!({"perception_obstacle": crowd}));
    assert_eq!(
        too_many.to_string(),
        "/apollo/perception/obstacles: 1025 entries in perception_obstacle, more than the limit of 1024"
    );
    let ids: Vec<_> = (0..=laws::frame::MAX_OBSTACLES).collect();
    let too_many = err("/avguard/road_context", json!({"priority": ids}));
    assert!(too_many
        .to_string()
        .contains("more than the limit of 1024 obstacles"));
    let garbage = crate::wire::Envelope {
        channel: CHASSIS.into(),
        payload: vec![0x0a, 0xff],
    };
    let bytes = prost::Message::encode_to_vec(&garbage);
    assert!(matches!(
        SimMessage::decode_envelope(&bytes).unwrap_err(),
        DecodeError::Protobuf { .. }
    ));
}

#[test]
fn envelope_round_trip_matches_direct_decode() {
    let bin = std::fs::read(fixtures().join("derived-bin/modules/common/testdata/chassis_pre.bin"))
        .unwrap();
    let env = crate::wire::Envelope {
        channel: CHASSIS.into(),
        payload: bin.clone(),
    };
    let via_env = SimMessage::decode_envelope(&prost::Message::encode_to_vec(&env)).unwrap();
    assert_eq!(
        via_env,
        SimMessage::decode(CHASSIS, Payload::Binary(&bin)).unwrap()
    );
}

#[test]
fn road_context_fields_and_errors() {
    let v = json!({"stopline_dist": 12.5, "junction_dist": null, "speed_limit": 13.9, "lane_number": 2,
        "signal_ahead": 1, "light_color": 1, "priority": {"7": true}, "stamp": 3.0});
    let SimMessage::RoadContext(r) =
        SimMessage::decode("/avguard/road_context", Payload::Json(&v)).unwrap()
    else {
        panic!()
    };
    assert_eq!(r.stopline_dist_m, Some(12.5));
    assert_eq!(r.junction_dist_m, Some(f64::INFINITY));
    assert_eq!(r.signal_ahead, Some(true));
    assert_eq!(r.priority.unwrap().get(&7), Some(&true));
    assert_eq!(r.time_s, Some(3.0));
    let bad = json!({"stopline_dist": -1});
    assert!(SimMessage::decode("/avguard/road_context", Payload::Json(&bad)).is_err());
    assert!(SimMessage::decode("/avguard/road_context", Payload::Json(&json!([1]))).is_err());
}
