//! `avguard simulate` as a user runs it: determinism, outcome counts, and every shipped scenario file.

use std::path::PathBuf;

use tests::{avguard, workspace_root};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("avguard-it-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

fn simulate(scenario: &str, runs: u32, seed: u32, out: &PathBuf) -> String {
    let output = avguard()
        .current_dir(workspace_root())
        .args(["simulate", "--runs", &runs.to_string(), "--seed", &seed.to_string(), "--out"])
        .arg(out)
        .arg("--scenario")
        .arg(workspace_root().join("scenarios").join(scenario))
        .output()
        .expect("run avguard simulate");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn same_seed_gives_byte_identical_logs() {
    let (a, b, c) = (scratch("det-a"), scratch("det-b"), scratch("det-c"));
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
        assert!(fa == fb, "{name} differs between two runs with the same seed");
        assert!(fa != fc, "{name} is the same for different seeds");
    }
}

#[test]
fn simulate_reports_counts_with_both_outcomes() {
    let out = scratch("counts");
    let text = simulate("braking_leader.toml", 80, 3, &out);
    // "braking_leader: 80 runs written to ...; K with a collision"
    let k: u32 = text
        .split("; ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no collision count in {text}"));
    assert!(k > 0 && k < 80, "expected both outcomes, got {k} collisions of 80:\n{text}");
    assert!(text.contains("no_collision: "), "no per-law count:\n{text}");
}

#[test]
fn simulate_rejects_a_file_without_scenario_table() {
    let out = scratch("reject");
    let output = avguard()
        .args(["simulate", "--runs", "1", "--out"])
        .arg(&out)
        .arg("--scenario")
        .arg(workspace_root().join("scenarios/Cargo.toml"))
        .output()
        .expect("run avguard simulate");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[scenario]"), "{stderr}");
}
