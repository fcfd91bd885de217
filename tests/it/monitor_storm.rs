//! The monitor's model file through the CLI: `avguard info` and `avguard export`, and Storm (stormpy)
//! recomputing every state's P(F unsafe) from the exported PRISM files.

use crate::support::{avguard, ok, python_script, scratch};
use laws::LawSource;
use monitor::{BuildConfig, Counts, Domain, Model, PropertyModel, StateId};

/// A property over 7 AV predicates learned from 300 pseudo-random runs that only take valid steps.
fn learned_model() -> Model {
    let preds: Vec<String> = [
        "collision",
        "speed < 0.5",
        "speed > 30",
        "trafficLightAhead.color == green",
        "trafficLightAhead.color == red",
        "NPCAhead(5)",
        "NPCAhead(15)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let cfg = BuildConfig::default();
    let d = PropertyModel::domain_for(&preds, 0, &cfg).unwrap();
    let mut counts = Counts::new(d.n_states());
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut rand = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for _ in 0..300 {
        let mut trace: Vec<StateId> = vec![0b100_0000];
        for _ in 0..80 {
            let s = *trace.last().unwrap();
            if d.is_terminal(s) {
                break;
            }
            // Flip one predicate (collisions rarely), keep the step if it is valid.
            let bit = rand(7) as u32;
            if bit == 0 && rand(10) != 0 {
                continue;
            }
            let next = s ^ (1 << bit);
            if d.can_reach(s, next) {
                trace.push(next);
            }
        }
        if !d.is_terminal(*trace.last().unwrap()) {
            trace.push(d.done());
        }
        counts.observe_trace(&d, &trace).unwrap();
    }
    let p = PropertyModel::build("no_collision", preds, 0, counts, &cfg).unwrap();
    let laws = vec![LawSource {
        name: "no_collision.law".into(),
        text: "no_collision = G(collision == 0);".into(),
    }];
    Model::try_new(laws, vec![p]).unwrap()
}

#[test]
fn storm_matches_the_cached_table_on_every_state() {
    let tmp = scratch();
    let dir = tmp.path();
    let model_path = dir.join("model.avg");
    std::fs::write(&model_path, learned_model().to_bytes()).unwrap();

    let out = ok(avguard()
        .arg("info")
        .arg("--json")
        .arg(&model_path)
        .output()
        .unwrap());
    let info = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "\"properties\":[{\"name\":\"no_collision\"",
        "\"predicates\":[\"collision\",\"speed < 0.5\"",
        "\"states\":129",
        "\"pac\":{\"met\":",
        "\"epsilon\":0.05",
    ] {
        assert!(info.contains(needle), "info lacks {needle}: {info}");
    }

    let export = dir.join("export");
    ok(avguard()
        .args(["export", "--model"])
        .arg(&model_path)
        .args(["--property", "no_collision", "--out"])
        .arg(&export)
        .output()
        .unwrap());
    let tra = std::fs::read_to_string(export.join("no_collision.tra")).unwrap();
    assert!(tra.starts_with("129 "), "{}", &tra[..20]);

    let out = python_script("monitor_storm_check.py")
        .arg(&export)
        .args(["no_collision", "1e-9"])
        .output()
        .expect("run the Storm interop script");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "Storm disagrees or could not run:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("states=129"), "{stdout}");
}

#[test]
fn info_and_export_reject_foreign_files_and_unknown_properties() {
    let tmp = scratch();
    let dir = tmp.path();
    let junk = dir.join("junk.avg");
    std::fs::write(&junk, b"definitely not a model").unwrap();
    let out = avguard().arg("info").arg(&junk).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not an avguard model file"), "{err}");

    let model_path = dir.join("model.avg");
    std::fs::write(&model_path, learned_model().to_bytes()).unwrap();
    let out = avguard()
        .args(["export", "--model"])
        .arg(&model_path)
        .args(["--property", "law99", "--out"])
        .arg(dir.join("x"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no property \"law99\"") && err.contains("no_collision"),
        "{err}"
    );
}

/// `export` writes each file whole under its name or not at all: nothing else is left in `--out`, and
/// a file that cannot take its place (a folder of its name in the way) fails naming it, leaving no
/// temporary file behind.
#[test]
fn export_leaves_whole_files_only() {
    let tmp = scratch();
    let dir = tmp.path();
    let model_path = dir.join("model.avg");
    std::fs::write(&model_path, learned_model().to_bytes()).unwrap();
    let export = |out: &std::path::Path| {
        avguard()
            .args(["export", "--model"])
            .arg(&model_path)
            .args(["--property", "no_collision", "--out"])
            .arg(out)
            .output()
            .unwrap()
    };
    let good = dir.join("good");
    ok(export(&good));
    let mut names: Vec<String> = std::fs::read_dir(&good)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "no_collision.lab",
            "no_collision.table.csv",
            "no_collision.tra"
        ]
    );
    let blocked = dir.join("blocked");
    std::fs::create_dir_all(blocked.join("no_collision.tra")).unwrap();
    let out = export(&blocked);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot write") && err.contains("no_collision.tra"),
        "{err}"
    );
    let left: Vec<String> = std::fs::read_dir(&blocked)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["no_collision.tra"], "{left:?}");
}
