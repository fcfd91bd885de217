//! Nothing lost on a kill (issue #11, point 5): `avguard bridge --log --record` killed with SIGKILL in the
//! middle of a run. Every intervention the client received has its line in the prediction log (lines are
//! written before the intervention is sent); finished runs are complete files; the run in progress reads as
//! a log up to its last flush, and the next bridge with the same `--record` recovers it.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::support::{fixture, scratch, RunningBridge};

type Ws = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>;

fn send(ws: &mut Ws, v: Value) {
    ws.send(tungstenite::Message::text(v.to_string())).unwrap();
}

/// Sends one pose and reads until its risk reply; returns the interventions that came before it.
fn step(ws: &mut Ws, t: f64) -> Vec<Value> {
    send(
        ws,
        json!({"op": "publish", "topic": "/apollo/localization/pose",
            "msg": {"measurementTime": t, "pose": {"position": {"x": t, "y": 0.0}, "heading": 0.0}}}),
    );
    let mut interventions = Vec::new();
    loop {
        let tungstenite::Message::Text(text) = ws.read().unwrap() else {
            continue;
        };
        let v: Value = serde_json::from_str(text.as_str()).unwrap();
        match v["topic"].as_str() {
            Some("/avguard/risk") => return interventions,
            Some("/avguard/intervention") => interventions.push(v["msg"].clone()),
            _ => panic!("unexpected reply {v}"),
        }
    }
}

fn kill_mid_run(fsync: bool) {
    let dir = scratch();
    let log = dir.path().join("pred.jsonl");
    let record = dir.path().join("rec.h5");
    let bridge = RunningBridge::start(|c| {
        c.arg("--model")
            .arg(&fixture().model)
            .args(["--threshold", "0"])
            .arg("--log")
            .arg(&log)
            .arg("--record")
            .arg(&record);
        if fsync {
            c.arg("--fsync");
        }
        c
    });
    let (mut ws, _) = tungstenite::connect(bridge.url.as_str()).unwrap();
    for topic in ["/avguard/intervention", "/avguard/risk"] {
        send(&mut ws, json!({"op": "subscribe", "topic": topic}));
    }
    // Three short runs (one intervention each at θ = 0), then a long one killed in the middle.
    let mut received = Vec::new();
    let mut t = 0.0;
    for run in 0..4 {
        if run > 0 {
            send(
                &mut ws,
                json!({"op": "publish", "topic": "/avguard/control", "msg": {"op": "new_run"}}),
            );
        }
        let n = if run < 3 { 5 } else { 120 };
        for _ in 0..n {
            t += 0.1;
            received.extend(step(&mut ws, t));
        }
    }
    bridge.signal("KILL");
    drop(bridge);
    assert!(received.len() >= 4, "{received:?}");

    // The prediction log: complete lines only, and one per intervention received.
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("torn line {l:?}: {e}")))
        .collect();
    let logged: BTreeSet<String> = lines
        .iter()
        .filter(|l| l["event"] == "intervention")
        .map(|l| format!("{} {}", l["t"], l["property"]))
        .collect();
    for i in &received {
        let key = format!("{} {}", i["stamp"], i["property"]);
        assert!(
            logged.contains(&key),
            "intervention {i} missing from the log"
        );
    }

    // Finished runs are complete files; the killed run reads up to its last flush (every 50 frames).
    let mut finished = 0;
    let mut partial = None;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".h5") {
            assert_eq!(
                scenarios::log::read_log(&path).unwrap().frames.len(),
                5,
                "{name}"
            );
            finished += 1;
        } else if name.ends_with(".h5.partial") {
            partial = Some(path);
        }
    }
    assert_eq!(finished, 3);
    let partial = partial.expect("the killed run's .partial file");
    let n_flushed = scenarios::log::read_log(&partial).unwrap().frames.len();
    assert!((100..=120).contains(&n_flushed), "{n_flushed} frames");

    // The next bridge with the same --record recovers it, and says so.
    let again = RunningBridge::start(|c| {
        c.arg("--model")
            .arg(&fixture().model)
            .arg("--record")
            .arg(&record)
    });
    let (_, stderr) = again.stop();
    let line = stderr
        .lines()
        .find(|l| l.contains("recovered a crashed recording"))
        .unwrap_or_else(|| panic!("no recovery reported:\n{stderr}"));
    assert!(line.contains(&format!("{n_flushed} frames")), "{line}");
    assert!(!partial.exists());
    let recovered = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".recovered.h5"))
        .unwrap();
    assert_eq!(
        scenarios::log::read_log(&recovered).unwrap().frames.len(),
        n_flushed
    );
}

#[test]
fn sigkill_loses_no_sent_intervention_and_recordings_read_up_to_their_last_flush() {
    kill_mid_run(false);
}

#[test]
fn sigkill_with_fsync_loses_nothing_either() {
    kill_mid_run(true);
}
