//! The live path with a learned model, as a user runs it: `avguard bridge --record` serves the model,
//! `avguard drive` plays two runs through it, SIGTERM stops it (exit 0, logs flushed), and `avguard score`
//! on the recorded session must reproduce the live alarms and violation times exactly.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;
use tests::{avguard, fixture, workspace_root};

const THETA: &str = "0.5";

#[test]
fn recorded_live_session_rescores_to_the_same_alarms() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("predictions.jsonl");
    let record = dir.path().join("session.h5");
    let mut bridge = avguard()
        .args(["bridge", "--listen", "127.0.0.1:0", "--model"])
        .arg(&f.model)
        .args(["--threshold", THETA, "--mode", "slow-down", "--log"])
        .arg(&log)
        .arg("--record")
        .arg(&record)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The bridge names its address on its first stderr line.
    let mut stderr = BufReader::new(bridge.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("ws://"))
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_owned();
    // Keep draining stderr so that the bridge never blocks on a full pipe.
    let drain = std::thread::spawn(move || {
        let mut rest = String::new();
        for line in stderr.lines().map_while(Result::ok) {
            rest.push_str(&line);
            rest.push('\n');
        }
        rest
    });

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

    let term = Command::new("kill")
        .args(["-TERM", &bridge.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let status = bridge.wait().unwrap();
    let bridge_stderr = drain.join().unwrap();
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
