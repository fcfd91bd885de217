use laws::Frame;

use super::*;
use crate::rosbridge::Op;
use ingest::assemble::{Assembler, AssemblerConfig};
use ingest::message::{Payload, SimMessage};

fn scenario_frames(file: &str, seed: u64) -> Vec<Frame> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(file);
    let scenario =
        scenarios::Scenario::from_toml_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    scenarios::run(&scenario, seed)
}

fn decode(frame: &WsFrame) -> SimMessage {
    match frame {
        WsFrame::Text(text) => {
            let mut ops = Op::parse_frame(text);
            assert_eq!(ops.len(), 1);
            match ops.pop().unwrap().1.unwrap() {
                Op::Publish { topic, msg, .. } => {
                    SimMessage::decode(&topic, Payload::Json(&msg)).unwrap()
                }
                other => panic!("not a publish: {other:?}"),
            }
        }
        WsFrame::Binary(bytes) => SimMessage::decode_envelope(bytes).unwrap(),
    }
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(1.0)
}

/// Equal except for the last-ulp rounding of speeds that travel as velocity vectors.
fn assert_same(got: &Frame, want: &Frame) {
    let mut g = got.clone();
    assert!(
        close(g.speed_mps, want.speed_mps),
        "t={}: speed {} vs {}",
        want.t,
        g.speed_mps,
        want.speed_mps
    );
    assert!(close(g.accel_mps2, want.accel_mps2), "t={}: accel", want.t);
    g.speed_mps = want.speed_mps;
    g.accel_mps2 = want.accel_mps2;
    assert_eq!(g.obstacles.len(), want.obstacles.len());
    for (go, wo) in g.obstacles.iter_mut().zip(&want.obstacles) {
        assert!(
            close(go.speed_mps, wo.speed_mps),
            "t={}: obstacle {} speed",
            want.t,
            wo.id
        );
        go.speed_mps = wo.speed_mps;
    }
    assert_eq!(&g, want);
}

#[test]
fn frames_survive_encode_decode_assemble_in_both_encodings() {
    for (file, seed) in [
        ("left_turn.toml", 3),
        ("red_light_queue.toml", 1),
        ("crosswalk.toml", 2),
    ] {
        let frames = scenario_frames(file, seed);
        assert!(frames.len() > 20, "{file}");
        for encoding in [Encoding::Json, Encoding::Binary] {
            let mut asm = Assembler::new(AssemblerConfig::default());
            let mut out = Vec::new();
            for (k, frame) in frames.iter().enumerate() {
                let before = out.len();
                for ws in encode_frame(frame, encoding) {
                    asm.push(&decode(&ws), &mut out);
                }
                // Localization last closes the tick: exactly one frame per encoded frame, at once.
                assert_eq!(out.len(), before + 1, "{file} {encoding:?} frame {k}");
            }
            for (got, want) in out.iter().zip(&frames) {
                assert_same(got, want);
            }
            let stats = asm.stats();
            assert_eq!(
                (stats.n_out_of_order, stats.n_duplicate, stats.n_late),
                (0, 0, 0)
            );
        }
    }
}

#[test]
fn road_context_writes_none_ahead_as_null_and_lists_priorities() {
    let mut f = Frame {
        stopline_dist_m: 12.5,
        ..Frame::default()
    };
    f.obstacles.push(laws::Obstacle {
        id: 7,
        kind: 5,
        x: 1.0,
        y: 2.0,
        heading: 0.0,
        speed_mps: 3.0,
        length: 4.0,
        width: 2.0,
        priority: true,
    });
    let v = road_context(&f);
    assert_eq!(v["stopline_dist"], 12.5);
    assert!(v["junction_dist"].is_null());
    assert!(v["speed_limit"].is_null());
    assert_eq!(v["priority"], serde_json::json!([7]));
    let lights = traffic_lights(&f);
    assert!(lights.traffic_light.is_empty());
}
