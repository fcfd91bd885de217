//! HDF5 interop: logs written by avguard open in h5py and pandas; logs written by h5py are read by
//! avguard; malformed logs are rejected with an error naming the dataset.

use std::path::{Path, PathBuf};

use crate::support::{avguard, python_script, scratch, workspace_root};

/// Runs `tests/py/h5_interop.py MODE ARG`; fails naming the package when a Python package is missing.
fn python(mode: &str, arg: &Path) -> String {
    let out = python_script("h5_interop.py")
        .arg(mode)
        .arg(arg)
        .output()
        .expect("run the Python interop script");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "h5_interop.py {mode} failed (packages pinned in tests/py/requirements.txt): {stderr}"
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `h5_interop.py MODE DIR`'s JSON object: the case names with what the script says of each.
fn python_cases(mode: &str, dir: &Path) -> Vec<(String, serde_json::Value)> {
    let text = python(mode, dir);
    let cases: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("h5_interop.py {mode}: not a JSON object ({e}): {text}"));
    cases.into_iter().collect()
}

fn inspect_json(paths: &[PathBuf]) -> (bool, Vec<String>) {
    let out = avguard()
        .arg("inspect")
        .arg("--json")
        .args(paths)
        .output()
        .expect("run avguard inspect");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (
        out.status.success(),
        text.lines().map(str::to_owned).collect(),
    )
}

#[test]
fn avguard_logs_open_in_h5py_and_pandas() {
    let tmp = scratch();
    let dir = tmp.path();
    let scenario = workspace_root().join("scenarios/braking_leader.toml");
    let status = avguard()
        .args(["simulate", "--runs", "2", "--seed", "5", "--out"])
        .arg(dir)
        .arg("--scenario")
        .arg(&scenario)
        .status()
        .expect("run avguard simulate");
    assert!(status.success());
    let log = dir.join("braking_leader_0001.h5");
    let summary = python("check", &log);
    let (ok, lines) = inspect_json(std::slice::from_ref(&log));
    assert!(ok, "{lines:?}");
    let ours = &lines[0];
    // Frame count and collision flag agree between h5py/pandas and our reader.
    let frames = between(&summary, "\"frames\": ", ",");
    assert!(
        ours.contains(&format!("\"frames\":{frames},")),
        "{summary} vs {ours}"
    );
    let collision = between(&summary, "\"collision\": ", ",");
    assert!(
        ours.contains(&format!("\"collision\":{collision},")),
        "{summary} vs {ours}"
    );
    assert!(
        summary.contains("\"scenario\": \"braking_leader\""),
        "{summary}"
    );
}

#[test]
fn h5py_logs_are_read_by_avguard() {
    let tmp = scratch();
    let dir = tmp.path();
    let log = dir.join("from_h5py.h5");
    python("write", &log);
    let (ok, lines) = inspect_json(std::slice::from_ref(&log));
    assert!(ok, "{lines:?}");
    let line = &lines[0];
    for expected in [
        "\"ok\":true",
        "\"frames\":5,",
        "\"duration_s\":0.4,",
        "\"collision\":true,",
        "\"error\":null",
    ] {
        assert!(line.contains(expected), "missing {expected} in {line}");
    }
}

#[test]
fn malformed_logs_name_the_dataset() {
    let tmp = scratch();
    let dir = tmp.path();
    let pairs = python_cases("bad", dir);
    assert_eq!(pairs.len(), 14, "{pairs:?}");
    for (case, dataset) in pairs {
        let dataset = dataset.as_str().expect("a dataset name");
        let path = dir.join(format!("{case}.h5"));
        let (ok, lines) = inspect_json(std::slice::from_ref(&path));
        assert!(!ok, "{case} was accepted");
        let line = &lines[0];
        assert!(line.contains("\"ok\":false"), "{line}");
        assert!(
            line.contains(&format!("`{dataset}`")),
            "{case}: error does not name {dataset}: {line}"
        );
    }
}

/// `avguard laws signals` of `log`: every signal of every frame, as text.
fn signals_csv(log: &Path) -> String {
    let csv = log.with_extension("csv");
    let out = avguard()
        .args(["laws", "signals", "--out"])
        .arg(&csv)
        .arg(log)
        .output()
        .expect("run avguard laws signals");
    assert!(
        out.status.success(),
        "{}: {}",
        log.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&csv).expect("read the signal CSV")
}

/// Other writers store the same log in other ways: numeric widths and byte orders, numpy's booleans for
/// flags, compressed chunks, fixed-length (NUL- or space-padded) string attributes. Each variant must read
/// as the log it is: the same names and frames, and, where its values are exactly the base file's, the
/// same value of every signal on every frame.
#[test]
fn h5py_variants_of_a_log_read_as_the_same_log() {
    let tmp = scratch();
    let dir = tmp.path();
    let cases = python_cases("variants", dir);
    assert!(cases.len() >= 10, "{cases:?}");
    let base = signals_csv(&dir.join("base.h5"));
    for (case, exact) in cases {
        let path = dir.join(format!("{case}.h5"));
        let (ok, lines) = inspect_json(std::slice::from_ref(&path));
        let line = &lines[0];
        assert!(ok, "{case} was refused: {line}");
        for expected in [
            "\"frames\":5,",
            "\"collision\":true,",
            "\"first_collision_t\":0.4,",
            "\"scenario\":\"from_h5py\"",
            "\"run_id\":\"py-0\"",
        ] {
            assert!(
                line.contains(expected),
                "{case}: missing {expected} in {line}"
            );
        }
        if exact == serde_json::Value::Bool(true) {
            assert_eq!(signals_csv(&path), base, "{case}: other signal values");
        }
    }
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .map(|i| i + start.len())
        .expect("start marker");
    let len = text[from..].find(end).expect("end marker");
    &text[from..from + len]
}
