//! The live path with a learned model, as a user runs it: `avguard bridge --record` serves the model,
//! `avguard drive` plays two runs through it, SIGTERM stops it (exit 0, logs flushed), and `avguard score`
//! on the recorded session must reproduce the live alarms and violation times exactly.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::{avguard, fixture, python_script, scratch, workspace_root, RunningBridge};

const THETA: &str = "0.5";

#[test]
fn recorded_live_session_rescores_to_the_same_alarms() {
    let f = fixture();
    let dir = scratch();
    let log = dir.path().join("predictions.jsonl");
    let record = dir.path().join("session.h5");
    let bridge = RunningBridge::start(|c| {
        c.arg("--model")
            .arg(&f.model)
            .args(["--threshold", THETA, "--mode", "slow-down", "--log"])
            .arg(&log)
            .arg("--record")
            .arg(&record)
    });
    let url = bridge.url.clone();

    let drive = avguard()
        .args(["drive", "--connect", &url, "--scenario"])
        .arg(workspace_root().join("scenarios/red_light_queue.toml"))
        .args(["--runs", "2", "--seed", "41"])
        .output()
        .unwrap();
    assert!(
        drive.status.success(),
        "drive failed: {}",
        String::from_utf8_lossy(&drive.stderr)
    );

    let (status, bridge_stderr) = bridge.stop();
    assert!(status.success(), "bridge exit {status}: {bridge_stderr}");

    // Live events per (connection, property): first alarm start and first violation.
    let mut live_alarm: BTreeMap<(u64, String), f64> = BTreeMap::new();
    let mut live_violation: BTreeMap<(u64, String), f64> = BTreeMap::new();
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let key = (
            v["conn"].as_u64().unwrap(),
            v["property"].as_str().unwrap().to_owned(),
        );
        let t = v["t"].as_f64().unwrap();
        let slot = match v["event"].as_str().unwrap() {
            "alarm_start" => &mut live_alarm,
            "violation" => &mut live_violation,
            _ => continue,
        };
        slot.entry(key).or_insert(t);
    }
    assert!(
        !live_alarm.is_empty(),
        "the live session raised no alarm at all"
    );

    let recordings = [
        (1u64, record.clone()),
        (2, dir.path().join("session_conn2.h5")),
    ];
    let out = dir.path().join("score");
    let mut score = avguard();
    score
        .args(["score", "--model"])
        .arg(&f.model)
        .args(["--thresholds", THETA, "--out"])
        .arg(&out);
    for (_, path) in &recordings {
        assert!(path.exists(), "{} was not recorded", path.display());
        score.arg(path);
    }
    let scored = score.output().unwrap();
    assert!(
        scored.status.success(),
        "{}",
        String::from_utf8_lossy(&scored.stderr)
    );
    let runs: Value =
        serde_json::from_slice(&std::fs::read(out.join("score.json")).unwrap()).unwrap();
    let mut n_compared = 0;
    for run in runs["runs"].as_array().unwrap() {
        // The recorder names each connection's run `conn<k>`.
        let run_id = run["run_id"].as_str().unwrap();
        let conn: u64 = run_id
            .strip_prefix("conn")
            .and_then(|k| k.parse().ok())
            .unwrap_or_else(|| panic!("unexpected run id {run_id}"));
        let key = (conn, run["property"].as_str().unwrap().to_owned());
        let violation = run["violation_t"].as_f64();
        assert_eq!(
            violation,
            live_violation.get(&key).copied(),
            "violation time of {key:?}"
        );
        let alarm = run["alarms"][THETA]["first_alarm_t"].as_f64();
        let live = live_alarm.get(&key).copied();
        match (alarm, violation) {
            (Some(a), _) => assert_eq!(Some(a), live, "first alarm of {key:?}"),
            (None, Some(v)) => assert!(
                live.is_none_or(|l| l >= v),
                "{key:?}: live alarm {live:?} before {v}"
            ),
            (None, None) => assert_eq!(
                live, None,
                "{key:?}: live alarm in a run the batch saw none"
            ),
        }
        n_compared += 1;
    }
    assert!(n_compared >= 2, "compared {n_compared} property runs");
}

/// Reads text frames until a rosbridge `status` op arrives (bounded: the bridge answers every control
/// message with one).
fn next_status(
    ws: &mut tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>,
) -> Value {
    for _ in 0..100 {
        let msg = ws.read().expect("read from the bridge");
        if let tungstenite::Message::Text(text) = msg {
            let v: Value = serde_json::from_str(text.as_str()).unwrap();
            if v["op"] == "status" {
                return v;
            }
        }
    }
    panic!("no status reply in 100 messages");
}

#[test]
fn model_reloads_on_control_message_and_sighup_and_survives_a_bad_file() {
    let f = fixture();
    let dir = scratch();
    let model = dir.path().join("model.bin");
    std::fs::copy(&f.model, &model).unwrap();
    let mut bridge =
        RunningBridge::start(|c| c.args(["--threshold", "0.5", "--model"]).arg(&model));
    let url = bridge.url.clone();
    let (mut ws, _) = tungstenite::connect(url.as_str()).unwrap();
    let reload =
        json_text(r#"{"op":"publish","topic":"/avguard/control","msg":{"command":"reload"}}"#);

    ws.send(reload.clone()).unwrap();
    let ok = next_status(&mut ws);
    assert_eq!(ok["level"], "info", "{ok}");
    assert!(ok["msg"].as_str().unwrap().contains("generation 1"), "{ok}");

    // A corrupt model file: the reload is refused with a reason and the current model stays.
    std::fs::write(&model, b"not a model").unwrap();
    ws.send(reload.clone()).unwrap();
    let refused = next_status(&mut ws);
    assert_eq!(refused["level"], "error", "{refused}");
    assert!(
        refused["msg"].as_str().unwrap().contains("reload failed"),
        "{refused}"
    );

    // A model stepping every 0.05 s while the bridge assembles frames every 0.1 s: refused as well.
    let fast = crate::monitor_learn::simulate_at_20_hz(dir.path(), 3);
    crate::monitor_learn::learn_at_20_hz(&model, &fast);
    ws.send(reload.clone()).unwrap();
    let refused = next_status(&mut ws);
    assert_eq!(refused["level"], "error", "{refused}");
    assert!(
        refused["msg"]
            .as_str()
            .unwrap()
            .contains("the model steps every 0.05 s, but frames are assembled every 0.1 s"),
        "{refused}"
    );

    // The same connection goes on, and SIGHUP reloads the repaired file.
    std::fs::copy(&f.model, &model).unwrap();
    ws.send(reload).unwrap();
    let again = next_status(&mut ws);
    assert!(
        again["msg"].as_str().unwrap().contains("generation 2"),
        "{again}"
    );
    bridge.signal("HUP");
    let line = bridge.wait_for("SIGHUP");
    assert!(line.contains("model reloaded"), "{line}");

    ws.close(None).unwrap();
    let (status, stderr) = bridge.stop();
    assert!(status.success(), "bridge exit {status}: {stderr}");
}

/// The stock Python rosbridge client `roslibpy`, unmodified, looks around with its rosapi calls, publishes
/// Apollo JSON to `avguard bridge` and receives the intervention (θ = 0: the first frame alarms). Fails
/// naming the package when roslibpy is not installed.
#[test]
fn roslibpy_client_publishes_and_receives_interventions() {
    let f = fixture();
    let bridge = RunningBridge::start(|c| {
        c.arg("--model")
            .arg(&f.model)
            .args(["--threshold", "0", "--mode", "stop"])
    });
    let out = python_script("bridge_roslibpy.py")
        .arg(bridge.port().to_string())
        .output()
        .expect("run the roslibpy script");
    assert!(
        out.status.success(),
        "roslibpy script failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let msg: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(msg["action"], "stop", "{msg}");
    let model = tools::modelfile::read(&f.model).unwrap().model;
    let property = msg["property"].as_str().unwrap_or_default();
    assert!(model.property(property).is_some(), "{msg}");
    // The script's poses are stamped 100.0 to 100.3 s.
    let stamp = msg["stamp"].as_f64().unwrap_or(f64::NAN);
    assert!((100.0..=100.3 + 1e-9).contains(&stamp), "{msg}");
    // Looking around first: roslibpy's rosapi calls are answered from the topics the bridge serves, and a
    // service it does not provide fails at once (roslibpy raises) instead of timing out.
    let looked = &msg["rosapi"];
    let topics: Vec<&str> = looked["topics"]
        .as_array()
        .unwrap_or_else(|| panic!("{looked}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for t in [
        "/apollo/localization/pose",
        "/avguard/road_context",
        "/avguard/intervention",
        "/avguard/risk",
    ] {
        assert!(topics.contains(&t), "{t} not in {topics:?}");
    }
    assert_eq!(looked["chassis_type"], "apollo.canbus.Chassis", "{looked}");
    assert_eq!(looked["risk_topics"], serde_json::json!(["/avguard/risk"]));
    assert_eq!(looked["nodes"], serde_json::json!([bridge::rosapi::NODE]));
    let get_param = looked["get_param"].as_str().unwrap_or_default();
    assert!(
        get_param.starts_with("failed: ") && get_param.contains("not provided"),
        "{looked}"
    );
    let (status, stderr) = bridge.stop();
    assert!(status.success(), "bridge exit {status}: {stderr}");
}

fn json_text(text: &str) -> tungstenite::Message {
    tungstenite::Message::text(text)
}
