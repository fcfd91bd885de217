//! `avguard simulate` as a user runs it: determinism, outcome counts, and every shipped scenario file.

use std::path::{Path, PathBuf};

use crate::support::{avguard, scratch, workspace_root};

fn simulate(scenario: &str, runs: u32, seed: u32, out: &Path) -> String {
    let output = avguard()
        .current_dir(workspace_root())
        .args([
            "simulate",
            "--runs",
            &runs.to_string(),
            "--seed",
            &seed.to_string(),
            "--out",
        ])
        .arg(out)
        .arg("--scenario")
        .arg(workspace_root().join("scenarios").join(scenario))
        .output()
        .expect("run avguard simulate");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn same_seed_gives_byte_identical_logs() {
    let tmp = scratch();
    let (a, b, c) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("c"),
    );
    simulate("yellow_light.toml", 3, 11, &a);
    simulate("yellow_light.toml", 3, 11, &b);
    simulate("yellow_light.toml", 3, 12, &c);
    for i in 0..3 {
        let name = format!("yellow_light_{i:04}.h5");
        let (fa, fb, fc) = (
            std::fs::read(a.join(&name)).expect("log a"),
            std::fs::read(b.join(&name)).expect("log b"),
            std::fs::read(c.join(&name)).expect("log c"),
        );
        assert!(
            fa == fb,
            "{name} differs between two runs with the same seed"
        );
        assert!(fa != fc, "{name} is the same for different seeds");
    }
}

/// Every shipped scenario file, with 40 runs each: for every stressed law (and the collision count) both
/// outcomes occur, so each file really exercises what it declares.
#[test]
fn every_scenario_shows_both_outcomes_of_each_stressed_law() {
    const RUNS: u32 = 40;
    let mut files: Vec<PathBuf> = std::fs::read_dir(workspace_root().join("scenarios"))
        .expect("list scenarios/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && !p.ends_with("Cargo.toml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 8,
        "expected the 8 shipped scenarios, found {files:?}"
    );
    let mut failures = Vec::new();
    for file in &files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .expect("file name");
        let out = scratch();
        let text = simulate(name, RUNS, 1, out.path());
        // "  law53: K of 40 runs violate it (P %)" per stressed law.
        let counts: Vec<(&str, u32)> = text
            .lines()
            .filter_map(|l| {
                let (law, rest) = l.trim().split_once(": ")?;
                let k = rest
                    .strip_suffix(")")?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()?;
                Some((law, k))
            })
            .collect();
        if counts.is_empty() {
            failures.push(format!("{name}: no per-law counts in\n{text}"));
        }
        for (law, k) in counts {
            if k == 0 || k == RUNS {
                failures.push(format!("{name}: {law} violated in {k} of {RUNS} runs"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn simulate_rejects_a_file_without_scenario_table() {
    let out = scratch();
    let output = avguard()
        .args(["simulate", "--runs", "1", "--out"])
        .arg(out.path())
        .arg("--scenario")
        .arg(workspace_root().join("scenarios/Cargo.toml"))
        .output()
        .expect("run avguard simulate");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[scenario]"), "{stderr}");
}

/// Runs `cmd` with its stderr captured; kills it and fails the test when it runs longer than `secs`.
fn stderr_within(cmd: &mut std::process::Command, secs: u64) -> (Option<i32>, String) {
    use std::io::Read;
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run avguard");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still ran after {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut stderr).expect("stderr");
    }
    (status.code(), stderr)
}

fn simulate_file(scenario: &Path, out: &Path) -> std::process::Command {
    let mut cmd = avguard();
    cmd.args(["simulate", "--runs", "1", "--out"])
        .arg(out)
        .arg("--scenario")
        .arg(scenario);
    cmd
}

#[test]
fn simulate_refuses_a_scenario_field_out_of_its_domain_naming_the_file_and_field() {
    // Was: a frame period of 1e-11 s aborted on a 772 GB allocation, and a billion pedestrians grew
    // memory without bound.
    let tmp = scratch();
    let base = std::fs::read_to_string(workspace_root().join("scenarios/crosswalk.toml"))
        .expect("crosswalk.toml");
    for (from, to, field) in [
        (
            "[scenario]\n",
            "[scenario]\nframe_period_s = 1e-11\n",
            "scenario.frame_period_s",
        ),
        (
            "[pedestrians]\ncount = [1, 2]",
            "[pedestrians]\ncount = 1e9",
            "pedestrians.count",
        ),
        (
            "[pedestrians]\ncount = [1, 2]",
            "[pedestrians]\ncount = -5.0",
            "pedestrians.count",
        ),
    ] {
        assert!(base.contains(from), "{from:?}");
        let file = tmp.path().join("bad.toml");
        std::fs::write(&file, base.replacen(from, to, 1)).expect("write");
        let out = tmp.path().join("out");
        let (code, stderr) = stderr_within(&mut simulate_file(&file, &out), 30);
        assert_eq!(code, Some(1), "{to}: {stderr}");
        assert!(
            stderr.contains("bad.toml") && stderr.contains(field),
            "{to}: {stderr}"
        );
        assert!(!out.exists(), "{to}: wrote {}", out.display());
    }
}

#[test]
fn simulate_refuses_a_scenario_file_above_1_mib_and_stops_reading_a_device_there() {
    // Was: a 10 MB file was read whole, and /dev/zero was read until 9.4 GB.
    let tmp = scratch();
    let big = tmp.path().join("big.toml");
    let mut text = std::fs::read_to_string(workspace_root().join("scenarios/speeding.toml"))
        .expect("speeding.toml");
    text += &format!("# {}\n", "x".repeat(1 << 20));
    std::fs::write(&big, text).expect("write");
    for file in [big.as_path(), Path::new("/dev/zero")] {
        let (code, stderr) = stderr_within(&mut simulate_file(file, &tmp.path().join("out")), 30);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!("{}: ", file.display()))
                && stderr.contains("a scenario file of more than 1048576 bytes is refused"),
            "{stderr}"
        );
    }
}

#[test]
fn simulate_refuses_more_runs_than_its_maximum_by_name() {
    // Was: `--runs 1e12` was accepted and filled the disk.
    let tmp = scratch();
    let out = tmp.path().join("out");
    let (code, stderr) = stderr_within(
        avguard()
            .args(["simulate", "--runs", "1000001", "--out"])
            .arg(&out)
            .arg("--scenario")
            .arg(workspace_root().join("scenarios/speeding.toml")),
        30,
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--runs") && stderr.contains("0..=1000000"),
        "{stderr}"
    );
    assert!(!out.exists());
}
