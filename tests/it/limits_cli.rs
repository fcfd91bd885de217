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

/// Issue #11: HDF5 files that crash Debian's libhdf5 1.10.8 (`tests/fuzz/known-libhdf5/`: a segfault in
/// `H5A__close` after another file was read, deterministic in one process, or in `H5HG_read`) or make it
/// loop forever (a global-heap read of a string attribute) or allocate 3 GB for a 23 kB file are read in a
/// child process
/// with a memory cap: each fails alone with an error naming it, in `inspect` and `score`, and the good log
/// beside them keeps its result.
#[test]
fn issue11_libhdf5_crash_inputs_fail_alone_in_inspect_and_score() {
    let f = fixture();
    let dir = scratch();
    let good_src = std::fs::read_dir(&f.test_logs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let logs = dir.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let good = logs.join("0-good.h5");
    std::fs::copy(&good_src, &good).unwrap();
    let known = workspace_root().join("tests/fuzz/known-libhdf5");
    let mut bad = Vec::new();
    for entry in std::fs::read_dir(&known).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "h5") {
            let copy = logs.join(path.file_name().unwrap());
            std::fs::copy(&path, &copy).unwrap();
            bad.push(copy);
        }
    }
    bad.sort();
    assert_eq!(bad.len(), 7, "{bad:?}");
    let hangs = |p: &std::path::PathBuf| p.to_string_lossy().contains("hangs");

    // inspect: the crash needs a file read before the bad one (the good log, then the bad ones in order).
    // The file that hangs the library is stopped after 2 s instead of the default 60 s.
    let out = avguard()
        .env("AVGUARD_LOG_READ_TIMEOUT_S", "2")
        .arg("inspect")
        .arg("--json")
        .arg(&good)
        .args(&bad)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("7 of 8 logs are invalid"), "{stderr}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 8, "{stdout}");
    assert_eq!(lines[0]["ok"], true, "{stdout}");
    for (line, path) in lines[1..].iter().zip(&bad) {
        assert_eq!(line["ok"], false, "{line}");
        assert_eq!(line["file"], path.display().to_string(), "{line}");
        let error = line["error"].as_str().unwrap();
        if hangs(path) {
            assert!(
                error.contains("reading took longer than 2 s and was stopped"),
                "{line}"
            );
        } else if path.to_string_lossy().contains("allocates-3gb") {
            // In one process libhdf5 takes 3 GB before failing; the child's memory cap stops it.
            assert!(error.contains("memory allocation failed"), "{line}");
        } else {
            assert!(!error.is_empty(), "{line}");
        }
    }

    // score: the good log is scored, every bad one is listed as an error; the exit code says some failed.
    let out_dir = dir.path().join("score");
    let out = avguard()
        .env("AVGUARD_LOG_READ_TIMEOUT_S", "2")
        .args(["score", "--model"])
        .arg(&f.model)
        .arg("--out")
        .arg(&out_dir)
        .arg(&logs)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let score: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("score.json")).unwrap()).unwrap();
    let errors = score["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 7, "{errors:?}");
    for path in &bad {
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(
            errors.iter().any(|e| e.to_string().contains(name)),
            "{name} not in {errors:?}"
        );
    }
    let runs = score["runs"].as_array().unwrap();
    assert!(!runs.is_empty());
    assert!(runs.iter().all(|r| r["run_id"] == runs[0]["run_id"]));
}

/// A string attribute whose bytes are not UTF-8 (found by the fuzz smoke on `log_image`): the hdf5 crate
/// hands such text over unchecked, and formatting it in an error message panicked. It is now an ordinary
/// invalid log, in the child reader and in-process alike.
#[test]
fn a_string_attribute_that_is_not_utf8_is_an_invalid_log() {
    let path =
        workspace_root().join("tests/fuzz/regressions/log_image/format-attribute-not-utf8.h5");
    for mode in ["child", "in-process"] {
        let out = avguard()
            .env("AVGUARD_LOG_READER", mode)
            .arg("inspect")
            .arg(&path)
            .output()
            .unwrap();
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{mode}: {stdout}{stderr}");
        assert!(
            stdout.contains("attribute `format`: not valid UTF-8"),
            "{mode}: {stdout}{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{mode}: {stderr}");
    }
}

/// Root attributes whose name's character set is outside HDF5's (found by the `log_image` campaign under
/// AddressSanitizer): listing the attributes through the `hdf5` crate turned that byte into a Rust enum it
/// cannot hold and formatted it, reading past the enum's name table. The reader now asks for each
/// attribute by name; both files are ordinary invalid logs, in the child reader and in-process alike. (The
/// out-of-bounds read itself shows only under the sanitizer: `cargo xtask fuzz log_image` replays these
/// files first.)
#[test]
fn attributes_with_an_out_of_range_name_encoding_are_read_by_name() {
    let dir = workspace_root().join("tests/fuzz/regressions/log_image");
    for (file, want) in [
        (
            "attribute-cset-out-of-range-1.h5",
            "attribute `format`: missing",
        ),
        (
            "attribute-cset-out-of-range-2.h5",
            "missing dataset `/frames/t`",
        ),
    ] {
        for mode in ["child", "in-process"] {
            let out = avguard()
                .env("AVGUARD_LOG_READER", mode)
                .arg("inspect")
                .arg(dir.join(file))
                .output()
                .unwrap();
            let (stdout, stderr) = text(&out);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{file} {mode}: {stdout}{stderr}"
            );
            assert!(stdout.contains(want), "{file} {mode}: {stdout}{stderr}");
            assert!(!stderr.contains("panicked"), "{file} {mode}: {stderr}");
        }
    }
}
