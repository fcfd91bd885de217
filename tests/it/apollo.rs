//! Real Apollo data end to end (issue #13): `avguard import` and `avguard score` on the real Cyber record,
//! checked against an independent decode (Python: the container read by hand, the messages with Apollo 11's
//! compiled protos from `apollo-modules`); HD-map road fields from a roslibpy drive through the bridge,
//! checked against shapely; runs on one connection against `avguard score`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::{
    avguard, fixture, ok, python, python_script, run_refused, scratch, workspace_root,
    RunningBridge,
};
use serde_json::Value;

/// The real Apollo sample data committed under `tests/fixtures/apollo/` (see its README for provenance).
fn apollo_fixtures() -> PathBuf {
    workspace_root().join("tests/fixtures/apollo")
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
/// The example record cut into `n` segments `DIR/split/drive.record.0000K` by the independent Python
/// splitter; returns the `split` folder.
fn split_example(dir: &Path, n: usize) -> PathBuf {
    let split = dir.join("split");
    std::fs::create_dir_all(&split).unwrap();
    ok(python_script("cyber_record_split.py")
        .arg(example_record())
        .arg(split.join("drive"))
        .arg(n.to_string())
        .output()
        .unwrap());
    split
}

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

/// `avguard score` of `input` with the fixture model into `out`: score.json's runs, by run and property.
fn scored_runs(input: &Path, out: &Path) -> Vec<Value> {
    ok(avguard()
        .args(["score", "--model"])
        .arg(&fixture().model)
        .arg("--out")
        .arg(out)
        .arg(input)
        .output()
        .unwrap());
    let score: Value =
        serde_json::from_slice(&std::fs::read(out.join("score.json")).unwrap()).unwrap();
    let mut runs = score["runs"].as_array().unwrap().clone();
    runs.sort_by_key(|r| (r["run_id"].to_string(), r["property"].to_string()));
    runs
}

/// A recording split into segments (cut by an independent script, as `cyber_recorder` splits a long
/// recording) is one recording to `import` and `score`: whichever segment is named, the frames and the
/// scores are the unsplit record's. Read on its own, each segment would be a run of one frame.
#[test]
fn a_recording_split_into_segments_is_imported_and_scored_as_the_whole() {
    let dir = scratch();
    let split = split_example(dir.path(), 3);
    let whole_dir = dir.path().join("whole");
    ok(avguard()
        .args(["import", "--out"])
        .arg(&whole_dir)
        .arg(example_record())
        .output()
        .unwrap());
    let whole = scenarios::log::read_log(&whole_dir.join("example.record.00000.h5")).unwrap();
    assert_eq!(whole.frames.len(), 2);
    for given in ["drive.record.00000", "drive.record.00002"] {
        let out = dir.path().join(format!("from_{given}"));
        let run = ok(avguard()
            .args(["import", "--out"])
            .arg(&out)
            .arg(split.join(given))
            .output()
            .unwrap());
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains("a recording of 3 segments"), "{stderr}");
        let mut files: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files, ["drive.record.00000.h5"], "{given}");
        let log = scenarios::log::read_log(&out.join("drive.record.00000.h5")).unwrap();
        assert_eq!(log.frames, whole.frames, "{given}");
        assert_eq!(log.meta.run_id, "drive.record.00000");
    }
    let mut from_split = scored_runs(&split, &dir.path().join("score_split"));
    let mut from_whole = scored_runs(&example_record(), &dir.path().join("score_whole"));
    assert!(!from_split.is_empty());
    assert!(from_split
        .iter()
        .all(|r| r["run_id"] == "drive.record.00000"));
    for r in from_split.iter_mut().chain(from_whole.iter_mut()) {
        r.as_object_mut().unwrap().remove("run_id");
    }
    assert_eq!(from_split, from_whole);
}

/// A recording holding two drives (the example record, then the same drive 100 s later, written by an
/// independent script) is two runs: `import` writes two logs, and `score` on the recording gives exactly
/// what `score` gives on those logs.
#[test]
fn a_recording_of_two_runs_scores_as_the_logs_import_writes() {
    let dir = scratch();
    let twice = dir.path().join("twice.record");
    ok(python_script("cyber_record_twice.py")
        .arg(example_record())
        .arg(&twice)
        .arg("100")
        .output()
        .unwrap());
    let logs = dir.path().join("logs");
    ok(avguard()
        .args(["import", "--out"])
        .arg(&logs)
        .arg(&twice)
        .output()
        .unwrap());
    let first = scenarios::log::read_log(&logs.join("twice.record.h5")).unwrap();
    let second = scenarios::log::read_log(&logs.join("twice.record_run2.h5")).unwrap();
    assert_eq!(second.meta.run_id, "twice.record_run2");
    assert_eq!(first.frames.len(), second.frames.len());
    for (a, b) in first.frames.iter().zip(&second.frames) {
        assert!((b.t - a.t - 100.0).abs() < 1e-6 && a.x == b.x && a.speed_mps == b.speed_mps);
    }
    let from_record = scored_runs(&twice, &dir.path().join("score_record"));
    let from_logs = scored_runs(&logs, &dir.path().join("score_logs"));
    let n_properties = from_logs.len() / 2;
    assert!(n_properties >= 1 && from_logs.len() == 2 * n_properties);
    assert_eq!(from_record, from_logs);
}

const THETA: &str = "0.5";

/// The scenario: six recorded runs replayed one after another over one stock roslibpy connection,
/// each on its own clock 1,000 s apart (through the documented client example). Every run's live first
/// alarm per property equals the first alarm `avguard score` finds in that run's log, and the bridge's
/// per-run recordings equal the logs.
#[test]
fn runs_replayed_on_one_connection_give_the_alarms_of_score() {
    let f = fixture();
    let dir = scratch();
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&f.test_logs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    logs.sort();
    logs.truncate(6);
    let pred = dir.path().join("pred.jsonl");
    let record = dir.path().join("live.h5");
    let bridge = RunningBridge::start(|c| {
        c.arg("--model")
            .arg(&f.model)
            .args(["--threshold", THETA, "--log"])
            .arg(&pred)
            .arg("--record")
            .arg(&record)
    });
    let port = bridge.port().to_string();
    let client = ok(python()
        .arg(workspace_root().join("bridge/examples/roslibpy_client.py"))
        .args(["--port", &port, "--offset-s", "1000"])
        .args(&logs)
        .output()
        .unwrap());
    let printed = String::from_utf8_lossy(&client.stdout);
    assert_eq!(printed.lines().count(), logs.len(), "{printed}");
    let (status, stderr) = bridge.stop();
    assert!(status.success(), "{stderr}");

    // Live: first alarm per (run, property), in the run's own time.
    let run_ids: Vec<String> = (1..=logs.len())
        .map(|k| {
            if k == 1 {
                "conn1".to_owned()
            } else {
                format!("conn1_run{k}")
            }
        })
        .collect();
    let mut live: BTreeMap<(usize, String), f64> = BTreeMap::new();
    for line in std::fs::read_to_string(&pred).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["event"] != "alarm_start" {
            continue;
        }
        let k = run_ids.iter().position(|r| v["run"] == r.as_str()).unwrap();
        let t = v["t"].as_f64().unwrap() - 1000.0 * k as f64;
        live.entry((k, v["property"].as_str().unwrap().to_owned()))
            .or_insert(t);
    }
    assert!(!live.is_empty(), "no live alarm at all");

    let out = dir.path().join("score");
    ok(avguard()
        .args(["score", "--model"])
        .arg(&f.model)
        .args(["--thresholds", THETA, "--out"])
        .arg(&out)
        .args(&logs)
        .output()
        .unwrap());
    let scored: Value =
        serde_json::from_slice(&std::fs::read(out.join("score.json")).unwrap()).unwrap();
    let mut n_alarms = 0;
    for (k, log) in logs.iter().enumerate() {
        let original = scenarios::log::read_log(log).unwrap();
        // The recording of run k holds the same frames (times shifted by the run's offset).
        let rec_path = if k == 0 {
            record.clone()
        } else {
            dir.path().join(format!("live_conn1_run{}.h5", k + 1))
        };
        let recorded = scenarios::log::read_log(&rec_path).unwrap();
        assert_eq!(recorded.frames.len(), original.frames.len(), "run {k}");
        for (a, b) in recorded.frames.iter().zip(&original.frames) {
            assert!((a.t - 1000.0 * k as f64 - b.t).abs() < 1e-6);
            assert_eq!((a.x, a.y, a.heading), (b.x, b.y, b.heading));
            assert!((a.speed_mps - b.speed_mps).abs() < 1e-9);
            assert_eq!(a.stopline_dist_m, b.stopline_dist_m);
            assert_eq!(a.light_color, b.light_color);
            assert_eq!(a.obstacles.len(), b.obstacles.len());
        }
        let run_id = &original.meta.run_id;
        for run in scored["runs"].as_array().unwrap() {
            if run["run_id"] != run_id.as_str() {
                continue;
            }
            let property = run["property"].as_str().unwrap().to_owned();
            let batch = run["alarms"][THETA]["first_alarm_t"].as_f64();
            let violation = run["violation_t"].as_f64();
            let live_alarm = live.get(&(k, property.clone())).copied();
            match (batch, violation) {
                (Some(a), _) => {
                    let l =
                        live_alarm.unwrap_or_else(|| panic!("run {k} {property}: no live alarm"));
                    assert!(
                        (l - a).abs() < 1e-6,
                        "run {k} {property}: live {l} vs score {a}"
                    );
                    n_alarms += 1;
                }
                // `score` reports only alarms before the violation.
                (None, Some(v)) => assert!(
                    live_alarm.is_none_or(|l| l >= v - 1e-6),
                    "run {k} {property}: live alarm {live_alarm:?} before the violation at {v}"
                ),
                (None, None) => assert_eq!(live_alarm, None, "run {k} {property}"),
            }
        }
    }
    assert!(n_alarms >= 2, "only {n_alarms} alarms compared");
}

/// The "done when": a roslibpy drive along cube_town's lanes towards each signal's stop line,
/// without any /avguard/road_context message, through `avguard bridge --map --record`; the recorded road
/// fields equal an independent computation (Python: Apollo's compiled protos + shapely) within 0.5 m, and
/// `light_color` is the colour of the governing signal's id, not of the other lights.
#[test]
fn map_drive_records_the_road_fields_of_an_independent_computation() {
    let f = fixture();
    let dir = scratch();
    let record = dir.path().join("drive.h5");
    let bridge = RunningBridge::start(|c| {
        c.arg("--model")
            .arg(&f.model)
            .arg("--map")
            .arg(cube_town())
            .arg("--record")
            .arg(&record)
    });
    let port = bridge.port().to_string();
    let out = ok(python_script("apollo_map_drive.py")
        .arg(&port)
        .arg(cube_town())
        .output()
        .unwrap());
    let (status, stderr) = bridge.stop();
    assert!(status.success(), "{stderr}");
    let expected: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = expected.as_object().unwrap();
    // Three signals, each governing two junction lanes.
    assert_eq!(runs.len(), 6, "{:?}", runs.keys().collect::<Vec<_>>());
    let (mut n_line, mut n_junction) = (0, 0);
    for (run_id, rows) in runs {
        let log = scenarios::log::read_log(&dir.path().join(format!("drive_{run_id}.h5")))
            .unwrap_or_else(|e| panic!("{run_id}: {e}"));
        assert_eq!(log.meta.run_id, *run_id);
        let rows = rows.as_array().unwrap();
        assert_eq!(log.frames.len(), rows.len(), "{run_id}");
        for (frame, row) in log.frames.iter().zip(rows) {
            let t = row["t"].as_f64().unwrap();
            assert!((frame.t - t).abs() < 1e-6);
            if let Some(d) = row["stopline"].as_f64() {
                assert!(
                    (frame.stopline_dist_m - d).abs() <= 0.5,
                    "{run_id} t={t}: stop line {} vs {d}",
                    frame.stopline_dist_m
                );
                n_line += 1;
            }
            let j = row["junction"].as_f64().unwrap();
            assert!(
                (frame.junction_dist_m - j).abs() <= 0.5,
                "{run_id} t={t}: junction {} vs {j}",
                frame.junction_dist_m
            );
            // cube_town's roads have one lane each way; none inside a junction.
            let inside = row["in_junction"].as_bool().unwrap();
            assert_eq!(
                frame.lane_number,
                i32::from(!inside),
                "{run_id} t={t}: lanes"
            );
            n_junction += 1;
            assert!(frame.signal_ahead, "{run_id} t={t}");
            assert_eq!(
                i64::from(frame.light_color),
                row["light"].as_i64().unwrap(),
                "{run_id} t={t}: light"
            );
            assert_eq!(frame.speed_limit_mps, 15.0);
        }
    }
    assert!(n_line > 200 && n_junction > 300, "{n_line} {n_junction}");
}

/// A recording whose second segment is damaged fails, and leaves no log behind: before, its first run's
/// log stayed in the output folder under its final name, with 0 frames.
#[test]
fn a_recording_that_fails_part_way_leaves_no_log() {
    let dir = scratch();
    let split = split_example(dir.path(), 2);
    // The second segment cut 30 bytes short: its last chunk body is truncated.
    let second = split.join("drive.record.00001");
    let bytes = std::fs::read(&second).unwrap();
    std::fs::write(&second, &bytes[..bytes.len() - 30]).unwrap();
    let out = dir.path().join("out");
    let stderr = run_refused(
        avguard()
            .args(["import", "--out"])
            .arg(&out)
            .arg(split.join("drive.record.00000")),
        &[
            "drive.record.00001: chunk body section at offset",
            "truncated",
        ],
    );
    let left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "{left:?} left behind: {stderr}");
}

/// A recording without a localization message that decodes gives no frame; the error says how many of
/// its messages decoded and why the others did not, instead of only that there is none.
#[test]
fn a_recording_without_poses_says_what_its_messages_were() {
    let dir = scratch();
    let record = dir.path().join("no_pose.record");
    // The example record's messages without the localization channel, rewritten by the Python reader.
    let script = "import sys\n\
        sys.path.insert(0, sys.argv[1])\n\
        from cyber_record_proto import record_parts, write_record\n\
        header, channels, messages = record_parts(sys.argv[2])\n\
        kept = [m for m in messages if m.channel_name != '/apollo/localization/pose']\n\
        assert len(kept) < len(messages)\n\
        write_record(sys.argv[3], header, channels, kept)\n";
    ok(crate::support::python()
        .arg("-c")
        .arg(script)
        .arg(workspace_root().join("tests/py"))
        .arg(example_record())
        .arg(&record)
        .output()
        .unwrap());
    let stderr = run_refused(
        avguard()
            .args(["import", "--out"])
            .arg(dir.path().join("out"))
            .arg(&record),
        &["no_pose.record: no frames (no localization message was assembled; of its"],
    );
    assert!(stderr.contains(" decoded"), "{stderr}");
}

/// An error names its cause once: the reader's I/O error is in its message, not also in the chain
/// anyhow prints after it (session 41: `Is a directory (os error 21)` twice).
#[test]
fn a_record_that_cannot_be_read_says_why_once() {
    let dir = scratch();
    let folder = dir.path().join("not_a_record");
    std::fs::create_dir(&folder).unwrap();
    let stderr = run_refused(
        avguard()
            .args(["import", "--out"])
            .arg(dir.path().join("out"))
            .arg(&folder),
        &["not_a_record: cannot read: "],
    );
    let line = stderr
        .lines()
        .find(|l| l.contains("cannot read"))
        .expect("the reason");
    assert_eq!(line.matches("(os error").count(), 1, "{line}");
}
