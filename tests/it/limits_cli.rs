//! Input limits end to end (issue #11): a hostile file is a clean error naming the file and the limit, and
//! it fails only itself in a batch (`inspect`, `score`, `learn`); the good logs beside it keep their results.

use std::path::Path;
use std::process::Output;

use crate::support::{avguard, fixture, scratch, workspace_root};
use serde_json::Value;

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A copy of `good` whose last `/obstacles/offset` is 2^40: an allocation of ~100 TB if believed.
fn with_offset_2_pow_40(good: &Path, bad: &Path) {
    std::fs::copy(good, bad).unwrap();
    let file = hdf5::File::open_rw(bad).unwrap();
    let ds = file.dataset("obstacles/offset").unwrap();
    let n = ds.size();
    ds.write_slice(&[1u64 << 40], n - 1..n).unwrap();
}

#[test]
fn issue11_obstacle_offset_2_pow_40_fails_alone_in_inspect_score_and_learn() {
    let f = fixture();
    let dir = scratch();
    let mut logs: Vec<_> = std::fs::read_dir(&f.test_logs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    logs.sort();
    let good = dir.path().join("good.h5");
    std::fs::copy(&logs[0], &good).unwrap();
    let bad = dir.path().join("bad.h5");
    with_offset_2_pow_40(&logs[1], &bad);

    // inspect: one line per log, the bad one INVALID with the dataset and the limit; exit code non-zero.
    let out = avguard()
        .arg("inspect")
        .arg(&good)
        .arg(&bad)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("good.h5: ok, scenario"), "{stdout}");
    assert!(
        stdout.contains("bad.h5: INVALID: dataset `/obstacles/offset`, row"),
        "{stdout}"
    );
    assert!(stdout.contains("more than the limit of 1024"), "{stdout}");

    // score: the good log is scored, the bad one is listed as an error.
    let out_dir = dir.path().join("score");
    let out = avguard()
        .args(["score", "--model"])
        .arg(&f.model)
        .arg("--out")
        .arg(&out_dir)
        .arg(dir.path())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}{stderr}");
    assert!(stderr.contains("bad.h5"), "{stderr}");
    let score: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("score.json")).unwrap()).unwrap();
    let errors = score["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].to_string().contains("limit of 1024"),
        "{errors:?}"
    );
    let runs = score["runs"].as_array().unwrap();
    assert!(!runs.is_empty());
    assert!(runs
        .iter()
        .all(|r| r["run_id"] == runs[0]["run_id"] && !r.to_string().contains("bad.h5")));

    // learn: learns from the good log and names the skipped one.
    let model = dir.path().join("m.bin");
    let out = avguard()
        .args(["learn", "--laws"])
        .arg(workspace_root().join("laws/specs"))
        .arg("--out")
        .arg(&model)
        .arg(&good)
        .arg(&bad)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("from 1 of 2 logs"), "{stdout}");
    assert!(
        stderr.contains("skipped") && stderr.contains("bad.h5"),
        "{stderr}"
    );
}

#[test]
fn issue11_law_crashes_are_clean_errors_in_laws_eval() {
    let f = fixture();
    let log = std::fs::read_dir(&f.test_logs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let dir = scratch();
    for (name, law, want) in [
        (
            "big",
            "big = G((speed > 1) U[0,100000000] (speed < 0.5));".to_owned(),
            "big.law:1:25: interval bound 100000000 s exceeds the limit of 3600 s",
        ),
        (
            "deep",
            format!(
                "deep = {}hornOn{};",
                "(".repeat(100_000),
                ")".repeat(100_000)
            ),
            "deep.law:1:72: formula nested deeper than the limit of 64 levels",
        ),
        (
            "past",
            "past = F[-1,-0.5] (speed < 1000);".to_owned(),
            "past.law:1:10: interval [-1,-0.5] has a negative bound",
        ),
    ] {
        let laws = dir.path().join(name);
        std::fs::create_dir_all(&laws).unwrap();
        std::fs::write(laws.join(format!("{name}.law")), law).unwrap();
        let out = avguard()
            .args(["laws", "eval", "--laws"])
            .arg(&laws)
            .arg("--out")
            .arg(dir.path().join("out.csv"))
            .arg(&log)
            .output()
            .unwrap();
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {stdout}{stderr}");
        assert!(stderr.contains(want), "{name}: {stderr}");
    }
}
