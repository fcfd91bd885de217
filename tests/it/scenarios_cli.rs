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
