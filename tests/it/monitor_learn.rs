//! `avguard learn` end to end: simulate runs, learn a model from them, read it back with `info --json`,
//! export it and have Storm re-check every state; learning is deterministic and merging counts learned
//! from two halves of the logs gives exactly the model learned from all of them.

use std::path::Path;

use crate::support::{avguard, ok, python_script, run_ok, run_refused, scratch, workspace_root};
use monitor::learning::merge_counts;
use monitor::select::forest::FOREST_WEIGHTS;
use monitor::select::search::{ALPHA_CHOICES, SHARE_WEIGHTS};
use monitor::{Model, PropertyModel};

pub(crate) fn simulate(scenario: &str, runs: u32, seed: u32, out: &Path) {
    run_ok(
        avguard()
            .current_dir(workspace_root())
            .args(["simulate", "--scenario"])
            .arg(workspace_root().join("scenarios").join(scenario))
            .args([
                "--runs",
                &runs.to_string(),
                "--seed",
                &seed.to_string(),
                "--out",
            ])
            .arg(out),
    );
}

/// `avguard learn` with the declared predicates.
fn learn(out: &Path, logs: &[&Path]) -> String {
    learn_with(out, logs, "fixed")
}

fn learn_with(out: &Path, logs: &[&Path], abstraction: &str) -> String {
    run_ok(
        avguard()
            .args(["learn", "--abstraction", abstraction, "--laws"])
            .arg(workspace_root().join("laws/specs"))
            .arg("--out")
            .arg(out)
            .args(logs),
    )
}

/// P(X ≥ k) for X ~ Binomial(n, p), summed term by term.
fn binomial_upper_tail(k: u64, n: u64, p: f64) -> f64 {
    let mut term = (1.0 - p).powi(n as i32); // P(X = 0)
    let mut below = 0.0;
    for i in 0..k {
        below += term;
        term *= (n - i) as f64 / (i + 1) as f64 * p / (1.0 - p);
    }
    (1.0 - below).max(0.0)
}

#[test]
fn the_binomial_tail_matches_hand_values() {
    // P(X ≥ 1) = 1 − 0.9^10; P(X ≥ 0) = 1; P(X ≥ 2) for n = 2 is p².
    assert!((binomial_upper_tail(1, 10, 0.1) - (1.0 - 0.9f64.powi(10))).abs() < 1e-12);
    assert!((binomial_upper_tail(0, 10, 0.1) - 1.0).abs() < 1e-12);
    assert!((binomial_upper_tail(2, 2, 0.3) - 0.09).abs() < 1e-12);
    // 143 runs at 10 %: 15 false alarms are unremarkable, 24 are not.
    assert!(binomial_upper_tail(15, 143, 0.1) > 0.3);
    assert!(binomial_upper_tail(24, 143, 0.1) < 0.01);
    assert!(binomial_upper_tail(23, 143, 0.1) >= 0.01);
}

/// `avguard score --model MODEL --out OUT LOGS` (which must succeed) and its `score.json`.
fn score_json(model: &Path, out: &Path, logs: &[&Path]) -> serde_json::Value {
    run_ok(
        avguard()
            .args(["score", "--model"])
            .arg(model)
            .arg("--out")
            .arg(out)
            .args(logs),
    );
    serde_json::from_slice(&std::fs::read(out.join("score.json")).unwrap()).unwrap()
}

/// `avguard export` of `property` into `export`, then Storm recomputes P(F unsafe) of every state of each
/// of the exported `chains` (file stems) and must agree with our tables.
fn export_and_check_with_storm(model: &Path, property: &str, export: &Path, chains: &[&str]) {
    run_ok(
        avguard()
            .args(["export", "--model"])
            .arg(model)
            .args(["--property", property, "--out"])
            .arg(export),
    );
    for chain in chains {
        let out = python_script("monitor_storm_check.py")
            .arg(export)
            .args([chain, "1e-9"])
            .output()
            .expect("the project's Python must run the Storm interop test");
        assert!(
            out.status.success(),
            "Storm disagrees on {chain} or could not run:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn load(path: &Path) -> Model {
    tools::modelfile::read(path).unwrap().model
}

#[test]
fn learn_info_export_and_storm_on_a_learned_model() {
    let tmp = scratch();
    let dir = tmp.path();
    let (a, b) = (dir.join("a"), dir.join("b"));
    simulate("braking_leader.toml", 4, 1, &a);
    simulate("yellow_light.toml", 4, 2, &b);
    let model_path = dir.join("m.avg");
    let summary = learn(&model_path, &[&a, &b]);
    assert!(
        summary.contains("learned 7 properties from 8 of 8 logs"),
        "{summary}"
    );
    assert!(
        summary.contains("no_collision: 11 predicates, 2049 states, 8 runs"),
        "{summary}"
    );
    assert!(summary.contains("states meet the bound"), "{summary}");

    let info = run_ok(avguard().args(["info", "--json"]).arg(&model_path));
    assert_eq!(info.matches("\"name\":").count(), 7, "{info}");
    for needle in [
        "{\"properties\":[{\"name\":\"law38_sub2_2\"",
        "{\"name\":\"no_collision\",\"predicates\":[\"collision==1\",\"PriorityNPCAhead==1\"",
        "\"states\":2049",
        "\"epsilon\":0.05,\"delta\":0.05",
    ] {
        assert!(info.contains(needle), "info lacks {needle}: {info}");
    }
    // The stored PAC summary is the one printed at learning time.
    let model = load(&model_path);
    let pac = model.property("no_collision").unwrap().pac();
    assert!(summary.contains(&format!(
        "{} / {} states meet the bound",
        pac.met(),
        pac.total()
    )));

    // Storm recomputes P(F unsafe) of every state of two learned properties from the export.
    let export = dir.join("export");
    for property in ["no_collision", "law51_sub5"] {
        export_and_check_with_storm(&model_path, property, &export, &[property]);
    }

    // A bad file is named and skipped; nothing learnable is an error.
    let junk = dir.join("junk.h5");
    std::fs::write(&junk, b"not hdf5").unwrap();
    let out = avguard()
        .args(["learn", "--laws"])
        .arg(workspace_root().join("laws/specs"))
        .arg("--out")
        .arg(dir.join("j.avg"))
        .arg(&junk)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("junk.h5") && err.contains("no log could be learned"),
        "{err}"
    );
}

#[test]
fn learning_is_deterministic_and_merging_halves_equals_learning_all() {
    let tmp = scratch();
    let dir = tmp.path();
    let (a, b) = (dir.join("a"), dir.join("b"));
    simulate("braking_leader.toml", 3, 7, &a);
    simulate("red_light_queue.toml", 3, 8, &b);
    let (all, all_again, half_a, half_b) = (
        dir.join("all.avg"),
        dir.join("all2.avg"),
        dir.join("a.avg"),
        dir.join("b.avg"),
    );
    learn(&all, &[&a, &b]);
    learn(&all_again, &[&b, &a]);
    assert_eq!(
        std::fs::read(&all).unwrap(),
        std::fs::read(&all_again).unwrap()
    );
    learn(&half_a, &[&a]);
    learn(&half_b, &[&b]);
    let (all, ma, mb) = (load(&all), load(&half_a), load(&half_b));
    for (i, p) in all.properties().iter().enumerate() {
        let mut counts = vec![ma.properties()[i].counts().clone()];
        merge_counts(&mut counts, &[mb.properties()[i].counts().clone()]).unwrap();
        assert_eq!(&counts[0], p.counts(), "{}", p.name());
        let rebuilt = PropertyModel::build_for_law(
            p.name(),
            p.law(),
            p.predicates().to_vec(),
            p.unsafe_bit(),
            counts.pop().unwrap(),
            p.config(),
        )
        .unwrap()
        // The selection record and the reactive rule are learned from the runs, not the counts.
        .with_selection(p.selection().unwrap().clone())
        .with_reactive_rule(p.reactive_rule().cloned());
        assert_eq!(&rebuilt, p, "{}", p.name());
    }
}

/// A learned abstraction: its choice is stored and shown, its chain agrees with Storm, and a calibration on
/// runs disjoint from training keeps false alarms on fresh runs (new seeds) below the target.
#[test]
fn learned_abstraction_calibration_and_the_bound_on_fresh_runs() {
    let tmp = scratch();
    let dir = tmp.path();
    let (train, cal, fresh) = (dir.join("train"), dir.join("cal"), dir.join("fresh"));
    simulate("red_light_queue.toml", 60, 1, &train);
    simulate("red_light_queue.toml", 150, 2, &cal);
    simulate("red_light_queue.toml", 150, 3, &fresh);
    let model_path = dir.join("auto.avg");
    let summary = learn_with(&model_path, &[&train], "auto");
    assert!(summary.contains("abstraction auto"), "{summary}");
    let info = run_ok(avguard().args(["info", "--json"]).arg(&model_path));
    assert!(info.contains("\"selection\":{\"mode\":\"auto\""), "{info}");
    // `--alpha auto`, the default: a searched property is smoothed with one of the choices, and a
    // property the search left fixed (never violated in training) with 1.
    let json: serde_json::Value = serde_json::from_str(&info).unwrap();
    for p in json["properties"].as_array().unwrap() {
        let alpha = p["smoothing"]["alpha"].as_f64().unwrap();
        // `--frame-share auto`, the default: a searched property mixes in one of the weights, the same
        // in every chain; a fixed one none.
        let share = p["frame_share_weight"].as_f64().unwrap();
        match p["selection"]["mode"].as_str() {
            Some("auto") => {
                assert!(ALPHA_CHOICES.contains(&alpha), "{p}");
                assert!(SHARE_WEIGHTS.contains(&share), "{p}");
                for m in p["members"].as_array().unwrap() {
                    assert_eq!(m["frame_share_weight"].as_f64(), Some(share), "{p}");
                    assert!(m["forest"].is_null(), "a member has no forest: {p}");
                }
                // `--forest 8`, the default: a forest of 8 trees with a weight above 0, or none; the
                // printout gives every weight's fold score, the best of which is the stored weight.
                let stored = p["forest"]["weight"].as_f64().unwrap_or(0.0);
                let name = p["name"].as_str().unwrap();
                let line = summary
                    .lines()
                    .find(|l| l.starts_with(&format!("{name}: forest weight ")))
                    .unwrap_or_else(|| panic!("no forest line for {name}: {summary}"));
                let printed: f64 = line.split(' ').nth(3).unwrap().parse().unwrap();
                assert_eq!(printed, stored, "{line}");
                let scores: Vec<f64> = line
                    .split(": ")
                    .nth(2)
                    .unwrap()
                    .split(';')
                    .next()
                    .unwrap()
                    .split(" / ")
                    .map(|x| x.parse().unwrap())
                    .collect();
                assert_eq!(scores.len(), FOREST_WEIGHTS.len(), "{line}");
                let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                // Rounding keeps order, so the stored weight's printed score is the printed best.
                let at = FOREST_WEIGHTS.iter().position(|&w| w == stored).unwrap();
                assert_eq!(scores[at], best, "{line}");
                if !p["forest"].is_null() {
                    let w = p["forest"]["weight"].as_f64().unwrap();
                    assert!(w > 0.0 && FOREST_WEIGHTS.contains(&w), "{p}");
                    assert_eq!(p["forest"]["trees"].as_u64(), Some(8), "{p}");
                    assert_eq!(p["forest"]["horizon_steps"].as_u64(), Some(30), "{p}");
                    assert!(
                        !p["forest"]["predicates"].as_array().unwrap().is_empty(),
                        "{p}"
                    );
                }
            }
            _ => {
                assert_eq!(alpha, 1.0, "{p}");
                assert_eq!(share, 0.0, "{p}");
                assert!(p["forest"].is_null(), "{p}");
                let name = p["name"].as_str().unwrap();
                assert!(
                    !summary.contains(&format!("{name}: forest weight")),
                    "{summary}"
                );
            }
        }
    }
    let bad = avguard()
        .args(["learn", "--alpha", "nope", "--laws"])
        .arg(workspace_root().join("laws/specs"))
        .arg("--out")
        .arg(dir.join("bad.avg"))
        .arg(&train)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("'nope' is neither `auto` nor"), "{err}");
    // `--frame-share off --forest 0`: no property mixes in a share or a forest, and the search chose the
    // same predicates (both are chosen after it).
    let off_path = dir.join("off.avg");
    let off_summary = run_ok(
        avguard()
            .args(["learn", "--frame-share", "off", "--forest", "0", "--laws"])
            .arg(workspace_root().join("laws/specs"))
            .arg("--out")
            .arg(&off_path)
            .arg(&train),
    );
    assert!(!off_summary.contains("forest weight"), "{off_summary}");
    let off: serde_json::Value =
        serde_json::from_str(&run_ok(avguard().args(["info", "--json"]).arg(&off_path))).unwrap();
    for (a, b) in json["properties"]
        .as_array()
        .unwrap()
        .iter()
        .zip(off["properties"].as_array().unwrap())
    {
        assert_eq!(b["frame_share_weight"].as_f64(), Some(0.0), "{b}");
        assert!(b["forest"].is_null(), "{b}");
        assert_eq!(a["predicates"], b["predicates"], "{a} / {b}");
    }
    // `--conjunctions 8`: some step joins two literals into one predicate, which the model keeps as words
    // and a session reads back (`calibrate` steps every calibration run through it). A small search (four
    // predicates, one α, one chain, the forest's weight chosen directly) keeps this debug-build learning
    // short.
    let joined_path = dir.join("joined.avg");
    run_ok(
        avguard()
            .args([
                "learn",
                "--conjunctions",
                "8",
                "--max-predicates",
                "4",
                "--alpha",
                "1",
            ])
            .args(["--ensemble", "1", "--forest-choice", "direct", "--laws"])
            .arg(workspace_root().join("laws/specs"))
            .arg("--out")
            .arg(&joined_path)
            .arg(&train),
    );
    let joined = load(&joined_path);
    let conjunctions: Vec<&String> = joined
        .properties()
        .iter()
        .flat_map(|p| p.predicates())
        .filter(|t| t.contains(" & "))
        .collect();
    assert!(!conjunctions.is_empty(), "no conjunction chosen");
    assert!(
        conjunctions.iter().all(|t| t.split(" & ").count() == 2),
        "{conjunctions:?}"
    );
    let joined_cal = run_ok(
        avguard()
            .args(["calibrate", "--model"])
            .arg(&joined_path)
            .args(["--target-false-alarms", "10%", "--out"])
            .arg(dir.join("joined_cal.avg"))
            .arg(&cal),
    );
    assert!(joined_cal.contains("θ ="), "{joined_cal}");
    let model = load(&model_path);
    let p = model.property("law51_sub5").unwrap();
    let sel = p.selection().unwrap();
    assert!(sel.steps.len() >= 2 && p.predicates().len() == sel.steps.len());
    assert!(p.reactive_rule().is_some());

    // Storm recomputes P(F unsafe) of every state of each of the learned chains (`--ensemble 3`, the
    // default).
    assert_eq!(p.members().len(), 2);
    export_and_check_with_storm(
        &model_path,
        "law51_sub5",
        &dir.join("export"),
        &["law51_sub5", "law51_sub5.chain2", "law51_sub5.chain3"],
    );

    // The debounce is chosen on the training runs, θ bounded on the calibration runs; a log may not be both.
    let overlap = avguard()
        .args(["calibrate", "--model"])
        .arg(&model_path)
        .args(["--target-false-alarms", "10%", "--select"])
        .arg(&cal)
        .arg(&cal)
        .output()
        .unwrap();
    assert!(!overlap.status.success());
    assert!(String::from_utf8_lossy(&overlap.stderr).contains("both a --select log"));
    // Options no calibration can use are refused before a log is read, and the model is not rewritten.
    let before = std::fs::read(&model_path).unwrap();
    for (bad, says) in [
        (
            &["--confidence", "1"][..],
            "confidence 1 is outside 0.5–0.999999",
        ),
        // Far below even odds the Beta quantile panicked inside statrs (session 41).
        (
            &["--confidence", "1e-200"][..],
            "confidence 0.0000000000", // the start of its f64 display, then the range
        ),
        (
            &["--debounce", "2,0"][..],
            "debounce lengths must be at least one frame",
        ),
        (
            &["--horizon=-3"][..],
            "horizon -3 s is not a positive number",
        ),
    ] {
        let out = avguard()
            .args(["calibrate", "--model"])
            .arg(&model_path)
            .args(["--target-false-alarms", "10%"])
            .args(bad)
            .arg(dir.join("no-such-log.h5"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(says),
            "{bad:?}: {stderr}"
        );
        assert_eq!(std::fs::read(&model_path).unwrap(), before, "{bad:?}");
    }
    let calibrated = run_ok(
        avguard()
            .args(["calibrate", "--model"])
            .arg(&model_path)
            .args(["--target-false-alarms", "10%", "--select"])
            .arg(&train)
            .arg(&cal),
    );
    assert!(calibrated.contains("law51_sub5: θ ="), "{calibrated}");
    assert!(
        calibrated.contains("debounce chosen on 60 other runs"),
        "{calibrated}"
    );
    let model = load(&model_path);
    let c = model
        .property("law51_sub5")
        .unwrap()
        .calibration()
        .unwrap()
        .clone();
    assert!(c.false_alarm_upper <= 0.1, "{c:?}");
    // The collision property's interventions get their own threshold, at the 20 % target without
    // debounce on the same calibration runs: the θ `calibrate --debounce 1 --target-false-alarms 20%`
    // stores as that property's alarm. No other property gets one.
    assert!(
        calibrated.contains("no_collision interventions: θ = "),
        "{calibrated}"
    );
    for p in model.properties() {
        assert_eq!(
            p.enforcement().is_some(),
            p.name() == "no_collision",
            "{}",
            p.name()
        );
    }
    let e = model
        .property("no_collision")
        .unwrap()
        .enforcement()
        .unwrap()
        .clone();
    assert_eq!((e.debounce_frames, e.target_false_alarm), (1, 0.2), "{e:?}");
    assert!(e.false_alarm_upper <= 0.2, "{e:?}");
    let twenty = dir.join("twenty.avg");
    run_ok(
        avguard()
            .args(["calibrate", "--model"])
            .arg(&model_path)
            .args(["--target-false-alarms", "20%", "--debounce", "1", "--out"])
            .arg(&twenty)
            .arg(&cal),
    );
    let alarm = load(&twenty)
        .property("no_collision")
        .unwrap()
        .calibration()
        .unwrap()
        .clone();
    assert_eq!(alarm, e);
    let info = run_ok(avguard().arg("info").arg(&model_path));
    assert!(
        info.contains(&format!("interventions (bridge): θ = {:.4}", e.theta)),
        "{info}"
    );
    // `none` drops it: interventions then start at the alarm's threshold.
    let plain = dir.join("plain.avg");
    run_ok(
        avguard()
            .args(["calibrate", "--model"])
            .arg(&model_path)
            .args(["--target-false-alarms", "10%"])
            .args(["--enforce-target-false-alarms", "none", "--out"])
            .arg(&plain)
            .arg(&cal),
    );
    assert!(load(&plain)
        .properties()
        .iter()
        .all(|p| p.enforcement().is_none()));

    // Fresh runs: the calibrated alarm's false-alarm rate stays below the target. The bound is a statement
    // about the rate, and ~140 fresh runs scatter around it (±2.5 points at 10 %), so the fresh false alarms
    // must not be evidence of a rate above the target: a one-sided binomial test at 1 % (with 143 safe runs
    // it fails from 24 false alarms, 16.8 %; a θ set without the bound, alarming on a quarter, fails it).
    let scored = dir.join("scored");
    avguard()
        .args(["score", "--model"])
        .arg(&model_path)
        .arg("--out")
        .arg(&scored)
        .arg(&fresh)
        .status()
        .unwrap();
    let score: serde_json::Value =
        serde_json::from_slice(&std::fs::read(scored.join("score.json")).unwrap()).unwrap();
    let mut n_checked = 0;
    for (property, cal) in score["calibrated"].as_object().unwrap() {
        let s = &cal["summary"];
        let n_safe = s["n_safe_runs"].as_u64().unwrap();
        if n_safe < 30 {
            continue;
        }
        let fa = s["false_alarm_pct"].as_f64().unwrap();
        let n_false_alarms = (fa / 100.0 * n_safe as f64).round() as u64;
        let p_value = binomial_upper_tail(n_false_alarms, n_safe, 0.1);
        assert!(
            p_value >= 0.01,
            "{property}: {fa} % false alarms on fresh runs (P = {p_value:.4} at a 10 % rate): {s}"
        );
        // score.json's own check of the calibration on these runs counts the same runs, and fails exactly
        // when the binomial test at 1 − confidence (5 %) rejects a rate at the target.
        let check = &cal["check"];
        assert_eq!(check["n_safe_runs"].as_u64(), Some(n_safe), "{check}");
        assert_eq!(
            check["n_false_alarms"].as_u64(),
            Some(n_false_alarms),
            "{check}"
        );
        assert_eq!(check["target_false_alarm"].as_f64(), Some(0.1), "{check}");
        assert_eq!(check["holds"].as_bool(), Some(p_value >= 0.05), "{check}");
        n_checked += 1;
    }
    assert!(n_checked >= 2, "{}", score["calibrated"]);
}

/// `calibrate --per-scenario` bounds the false-alarm rate within each scenario kind of the calibration
/// logs: at the stored θ every kind's false alarms, as `score` counts them, meet the target at the
/// confidence split between the two kinds (checked with the binomial tail), and θ is at least the pooled
/// calibration's.
#[test]
fn a_per_scenario_calibration_bounds_each_kind() {
    let tmp = scratch();
    let dir = tmp.path();
    let (train_a, train_b, cal_a, cal_b) = (
        dir.join("train_a"),
        dir.join("train_b"),
        dir.join("cal_a"),
        dir.join("cal_b"),
    );
    simulate("red_light_queue.toml", 40, 1, &train_a);
    simulate("yellow_light.toml", 40, 2, &train_b);
    simulate("red_light_queue.toml", 80, 3, &cal_a);
    simulate("yellow_light.toml", 80, 4, &cal_b);
    let model = dir.join("m.avg");
    learn(&model, &[&train_a, &train_b]);
    // `calibrate` at a 10 % target into `out`, with the options `extra`, on the calibration logs `logs`.
    let calibrate_on = |out: &Path, extra: &[&str], logs: &[&Path]| {
        run_ok(
            avguard()
                .args(["calibrate", "--model"])
                .arg(&model)
                .args(["--target-false-alarms", "10%", "--out"])
                .arg(out)
                .args(extra)
                .args(logs),
        )
    };
    let calibrate = |out: &Path, extra: &[&str]| {
        calibrate_on(
            out,
            &[&["--debounce", "1"], extra].concat(),
            &[&cal_a, &cal_b],
        )
    };
    let (pooled, per_kind) = (dir.join("pooled.avg"), dir.join("per_kind.avg"));
    calibrate(&pooled, &[]);
    // Fewer than 116 safe runs let through less than half the 10 % target as alarms: `calibrate` says
    // so under the property rather than leaving a high θ unexplained.
    let few = calibrate_on(&dir.join("few.avg"), &["--debounce", "1"], &[&cal_a]);
    assert!(
        few.contains("safe calibration runs: the 95 % bound at 10 % lets at most")
            && few.contains("116 safe runs would allow half the target (calibrate on more runs)"),
        "{few}"
    );
    // With the default debounce lengths tried on the calibration runs themselves, θ sits under the
    // confidence split between them: the note names that bound, and selection runs as a remedy.
    let split = calibrate_on(&dir.join("split.avg"), &[], &[&cal_a]);
    assert!(
        split.contains("safe calibration runs: the 98.75 % bound at 10 % lets at most")
            && split.contains(
                "180 safe runs would allow half the target (calibrate on more runs, or choose the \
                 debounce on --select runs)"
            ),
        "{split}"
    );
    let printed = calibrate(&per_kind, &["--per-scenario"]);
    assert!(
        printed.contains("within each of 2 scenario kinds (red_light_queue, yellow_light"),
        "{printed}"
    );
    // Each kind's θ sits under the 95 % split two ways; with 80 runs a kind its safe runs are too few
    // for half the target there, and the note says so per kind, at that bound.
    assert!(
        printed.contains(": scenario kind `red_light_queue`: only ")
            && printed.contains("safe calibration runs: the 97.5 % bound at 10 % lets at most"),
        "{printed}"
    );
    let score = score_json(&per_kind, &dir.join("scored"), &[&cal_a, &cal_b]);
    let (pooled, per_kind) = (load(&pooled), load(&per_kind));
    let mut n_checked = 0;
    for p in per_kind.properties() {
        let Some(c) = p.calibration() else {
            continue;
        };
        let before = pooled.property(p.name()).and_then(|q| q.calibration());
        assert!(before.is_none_or(|b| c.theta >= b.theta), "{}", p.name());
        for kind in ["red_light_queue", "yellow_light"] {
            let safe: Vec<&serde_json::Value> = score["runs"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["property"] == p.name() && r["scenario"] == kind)
                .filter(|r| r["violated"] == false)
                .collect();
            let n = safe.len() as u64;
            let k = safe
                .iter()
                .filter(|r| r["calibrated"]["false_alarm"] == true)
                .count() as u64;
            // The one-sided bound at 1 − 0.05/2 meets 10 %: P(X ≤ k | n, 10 %) ≤ 0.025.
            let at_most_k = 1.0 - binomial_upper_tail(k + 1, n, 0.1);
            assert!(at_most_k <= 0.025, "{} {kind}: {k} of {n}", p.name());
        }
        n_checked += 1;
    }
    assert!(n_checked >= 2, "{printed}");
}

/// `runs` red_light_queue runs of seed 3 at 20 Hz (`frame_period_s = 0.05`) in `dir/fast`.
pub(crate) fn simulate_at_20_hz(dir: &Path, runs: u32) -> std::path::PathBuf {
    let text =
        std::fs::read_to_string(workspace_root().join("scenarios/red_light_queue.toml")).unwrap();
    let text = text.replacen("[scenario]\n", "[scenario]\nframe_period_s = 0.05\n", 1);
    assert!(text.contains("frame_period_s = 0.05"));
    let scenario = dir.join("fast.toml");
    std::fs::write(&scenario, text).unwrap();
    let fast = dir.join("fast");
    run_ok(
        avguard()
            .args(["simulate", "--scenario"])
            .arg(&scenario)
            .args(["--runs", &runs.to_string(), "--seed", "3", "--out"])
            .arg(&fast),
    );
    fast
}

/// A model of the declared predicates stepping at 0.05 s, learned from `logs` into `out`.
pub(crate) fn learn_at_20_hz(out: &Path, logs: &Path) {
    run_ok(
        avguard()
            .args([
                "learn",
                "--abstraction",
                "fixed",
                "--frame-period-s",
                "0.05",
                "--laws",
            ])
            .arg(workspace_root().join("laws/specs"))
            .arg("--out")
            .arg(out)
            .arg(logs),
    );
}

/// Logs at another frame rate (20 Hz here): `learn` refuses them when told another period, with a message
/// naming the option, and learns from them at 0.05 s when told nothing (the first log's period, said on
/// stderr) or `--frame-period-s 0.05` (the model steps at 0.05 s: its horizons are counted in 0.05 s
/// steps); given 20 Hz and 10 Hz logs it steps at the first's (in path order) and skips the others with
/// the reason. `score` reads them with that model and refuses 10 Hz logs (as `evaluate` refuses 10 Hz test
/// logs when it learns at 20 Hz), and the bridge assembles frames at the model's period unless told
/// another, which it refuses.
#[test]
fn logs_at_another_frame_rate_learn_score_and_bridge_at_that_rate() {
    let tmp = scratch();
    let dir = tmp.path();
    let fast = simulate_at_20_hz(dir, 12);
    let model = dir.join("fast.avg");
    let learn = |out: &Path, extra: &[&str], logs: &[&Path]| {
        let mut cmd = avguard();
        cmd.args(["learn", "--abstraction", "fixed"])
            .args(extra)
            .arg("--laws")
            .arg(workspace_root().join("laws/specs"))
            .arg("--out")
            .arg(out)
            .args(logs);
        cmd
    };
    run_refused(
        &mut learn(&model, &["--frame-period-s", "0.1"], &[&fast]),
        &[
            "frame period 0.05 s differs from the model's 0.1 s",
            "--frame-period-s 0.05",
        ],
    );
    // Told nothing, `learn` steps at the logs' period and says where it took it from.
    let out = ok(learn(&model, &[], &[&fast]).output().unwrap());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("frame period 0.05 s, from ") && stderr.contains("_0000.h5"),
        "{stderr}"
    );
    let inferred = std::fs::read(&model).unwrap();
    learn_at_20_hz(&model, &fast);
    assert_eq!(
        inferred,
        std::fs::read(&model).unwrap(),
        "the period read from the logs learns the model --frame-period-s 0.05 learns"
    );
    let m = load(&model);
    assert_eq!(m.frame_period_s(), 0.05);
    let info = run_ok(avguard().args(["info", "--json"]).arg(&model));
    let info: serde_json::Value = serde_json::from_str(&info).unwrap();
    assert_eq!(info["frame_period_s"], 0.05);
    let text = run_ok(avguard().arg("info").arg(&model));
    assert!(text.contains("frame period: 0.05 s"), "{text}");
    // 1, 2, 3 and 5 s are 20, 40, 60 and 100 steps of 0.05 s.
    let p = m.property("law51_sub5").unwrap();
    assert_eq!(p.config().horizons_steps, vec![20, 40, 60, 100]);
    let score = score_json(&model, &dir.join("scored"), &[&fast]);
    assert!(!score["runs"].as_array().unwrap().is_empty());
    assert!(
        score["errors"].as_array().unwrap().is_empty(),
        "{}",
        score["errors"]
    );
    // 10 Hz logs are refused by the 20 Hz model, each with the reason.
    let slow = dir.join("slow");
    simulate("red_light_queue.toml", 2, 3, &slow);
    // Mixed rates, told nothing: the first log in path order ("fast/..." before "slow/...") sets the
    // period, whichever is named first, and the others are skipped with the reason.
    let mixed = dir.join("mixed.avg");
    let out = ok(learn(&mixed, &[], &[&slow, &fast]).output().unwrap());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("frame period 0.05 s, from "), "{stderr}");
    assert_eq!(
        stderr
            .matches("frame period 0.1 s differs from the model's 0.05 s")
            .count(),
        2,
        "{stderr}"
    );
    assert_eq!(load(&mixed).frame_period_s(), 0.05);
    run_refused(
        avguard()
            .args(["score", "--model"])
            .arg(&model)
            .arg("--out")
            .arg(dir.join("scored-slow"))
            .arg(&slow),
        &["frame period 0.1 s differs from the model's 0.05 s"],
    );
    // So does `evaluate` for test logs at another rate than it learns at.
    run_refused(
        avguard()
            .args([
                "evaluate",
                "--frame-period-s",
                "0.05",
                "--max-predicates",
                "3",
                "--laws",
            ])
            .arg(workspace_root().join("laws/specs"))
            .arg("--train")
            .arg(&fast)
            .arg("--test")
            .arg(&slow),
        &[
            "no test log could be read (2 given)",
            "frame period 0.1 s differs from the model's 0.05 s",
        ],
    );
    // The bridge refuses to assemble frames at another period than the model steps at.
    run_refused(
        avguard()
            .args(["bridge", "--listen", "127.0.0.1:0", "--mode", "alert"])
            .args(["--frame-period-s", "0.1", "--model"])
            .arg(&model)
            .arg("--log")
            .arg(dir.join("bridge.jsonl")),
        &["the model steps every 0.05 s, but frames are assembled every 0.1 s"],
    );
}

/// `learn --ensemble 2`: each searched property keeps a second chain, its predicates searched without one
/// fold of the first chain's; `info` lists it, `export` writes it as `NAME.chain2.*` and Storm re-checks that chain too;
/// `calibrate` and `score` use the ensemble's risk.
#[test]
fn an_ensemble_through_info_export_storm_calibrate_and_score() {
    let tmp = scratch();
    let dir = tmp.path();
    let (train, cal) = (dir.join("train"), dir.join("cal"));
    simulate("red_light_queue.toml", 40, 1, &train);
    simulate("red_light_queue.toml", 40, 2, &cal);
    let model_path = dir.join("ens.avg");
    run_ok(
        avguard()
            .args([
                "learn",
                "--ensemble",
                "2",
                "--max-predicates",
                "6",
                "--laws",
            ])
            .arg(workspace_root().join("laws/specs"))
            .arg("--out")
            .arg(&model_path)
            .arg(&train),
    );
    let model = load(&model_path);
    let p = model.property("law51_sub5").unwrap();
    assert_eq!(p.members().len(), 1);
    let member = &p.members()[0];
    assert_eq!(
        member.predicates()[0],
        p.predicates()[0],
        "same unsafe predicate"
    );
    // With the defaults (`--forest-choice nested`) the second chain is the search the forest's choice ran
    // without fold 0: its predicates were chosen on the other folds' runs, its counts learned on all.
    let (first_sel, member_sel) = (p.selection().unwrap(), member.selection().unwrap());
    assert_eq!(member_sel.seed, first_sel.seed, "the first chain's folds");
    assert!(
        member_sel.n_runs < first_sel.n_runs && member_sel.n_runs * 2 > first_sel.n_runs,
        "searched without one fold: {} of {} runs",
        member_sel.n_runs,
        first_sel.n_runs
    );
    assert_eq!(member.counts().n_runs(), p.counts().n_runs());
    // A property never violated in training keeps its declared predicates, once.
    for q in model.properties() {
        if q.selection().is_some_and(|s| s.n_violating == 0) {
            assert!(q.members().is_empty(), "{}", q.name());
        }
    }
    let info = run_ok(avguard().args(["info", "--json"]).arg(&model_path));
    let json: serde_json::Value = serde_json::from_str(&info).unwrap();
    let law51 = json["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == "law51_sub5")
        .unwrap();
    assert_eq!(law51["members"].as_array().unwrap().len(), 1, "{law51}");
    assert_eq!(
        law51["members"][0]["predicates"].as_array().unwrap().len(),
        member.predicates().len()
    );
    let text = run_ok(avguard().arg("info").arg(&model_path));
    assert!(
        text.contains("ensemble: the risk is the mean of 2 chains"),
        "{text}"
    );
    let searched_on = format!(
        "searched on {} of {} runs",
        member_sel.n_runs, first_sel.n_runs
    );
    assert!(text.contains(&searched_on), "{text}");

    export_and_check_with_storm(
        &model_path,
        "law51_sub5",
        &dir.join("export"),
        &["law51_sub5", "law51_sub5.chain2"],
    );

    let calibrated = run_ok(
        avguard()
            .args(["calibrate", "--model"])
            .arg(&model_path)
            .args(["--target-false-alarms", "20%", "--select"])
            .arg(&train)
            .arg(&cal),
    );
    assert!(calibrated.contains("law51_sub5"), "{calibrated}");
    let score = score_json(&model_path, &dir.join("scored"), &[&cal]);
    assert!(
        score["calibrated"]["law51_sub5"]["theta"].is_number(),
        "{}",
        score["calibrated"]
    );
}

/// `calibrate` tunes RSS to a collision property's false-alarm target on the calibration runs and stores
/// it; `info` shows it and `score` reports it as a comparator. Checked against a recount from the
/// calibration logs' frames (the first colliding frame; RSS at every response-time scale before it), and
/// on the test runs against `score --rss-ego-response-s/--rss-other-response-s` with the same response
/// times, a second path through the scorer.
#[test]
fn calibrate_tunes_rss_to_the_target_and_score_reports_it() {
    let tmp = scratch();
    let dir = tmp.path();
    let (train, cal, test) = (dir.join("train"), dir.join("cal"), dir.join("test"));
    // left_turn has collisions and no pedestrians, whose response time `score` cannot set.
    simulate("left_turn.toml", 60, 21, &train);
    simulate("left_turn.toml", 100, 22, &cal);
    simulate("left_turn.toml", 60, 23, &test);
    let model_path = dir.join("m.avg");
    learn(&model_path, &[&train]);
    let target = 0.2;
    let printed = run_ok(
        avguard()
            .args(["calibrate", "--model"])
            .arg(&model_path)
            .args(["--target-false-alarms", "20%"])
            .arg(&cal),
    );
    let model = load(&model_path);
    for p in model.properties() {
        assert_eq!(
            p.rss_tuning().is_some(),
            p.name() == "no_collision",
            "{}",
            p.name()
        );
    }
    let t = model
        .property("no_collision")
        .unwrap()
        .rss_tuning()
        .unwrap()
        .clone();
    assert_eq!(t.target_false_alarm, target);

    // The recount: per scale, false alarms on the safe runs and each violating run's lead.
    let scales = [1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0];
    let mut logs: Vec<_> = std::fs::read_dir(&cal)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "h5"))
        .collect();
    logs.sort();
    let (mut n_safe, mut n_viol) = (0usize, 0usize);
    let mut false_alarms = [0usize; 9];
    let mut leads: Vec<Vec<f64>> = vec![Vec::new(); 9];
    let mut utility = [0.0f64; 9];
    for log in &logs {
        let frames = scenarios::log::read_log(log).unwrap().frames;
        let violation = frames.iter().position(|f| f.collision);
        match violation {
            Some(_) => n_viol += 1,
            None => n_safe += 1,
        }
        for (k, &s) in scales.iter().enumerate() {
            let rss = laws::rss::RssParams::CARLA.with_response_scale(s);
            let alarm = frames[..violation.unwrap_or(frames.len())]
                .iter()
                .position(|f| rss.dangerous(f));
            match (violation, alarm) {
                (Some(v), Some(a)) => {
                    let lead = frames[v].t - frames[a].t;
                    leads[k].push(lead);
                    utility[k] += monitor::select::criterion::utility(Some(lead));
                }
                (Some(_), None) => utility[k] += monitor::select::criterion::utility(None),
                (None, Some(_)) => false_alarms[k] += 1,
                (None, None) => {}
            }
        }
    }
    assert!(
        n_viol > 0 && n_safe > 0,
        "{n_viol} collisions, {n_safe} safe"
    );
    let k = scales
        .iter()
        .position(|&s| s == t.response_scale)
        .unwrap_or_else(|| panic!("scale {} not offered", t.response_scale));
    assert_eq!((t.n_safe_runs, t.n_violating_runs), (n_safe, n_viol));
    assert_eq!(t.n_false_alarms, false_alarms[k]);
    assert_eq!(t.n_predicted, leads[k].len());
    leads[k].sort_by(f64::total_cmp);
    let median = match leads[k].len() {
        0 => None,
        n if n % 2 == 1 => Some(leads[k][n / 2]),
        n => Some(0.5 * (leads[k][n / 2 - 1] + leads[k][n / 2])),
    };
    assert_eq!(
        t.median_lead_s.map(|m| (m * 1e9).round()),
        median.map(|m| (m * 1e9).round())
    );
    // The choice: the best mean utility within floor(target · safe runs) false alarms, ties to the longer
    // response time; without any within, the fewest false alarms.
    let allowed = (target * n_safe as f64 + 1e-9).floor() as usize;
    let within: Vec<usize> = (0..9).filter(|&j| false_alarms[j] <= allowed).collect();
    assert_eq!(t.within_target, !within.is_empty(), "{false_alarms:?}");
    if t.within_target {
        for &j in &within {
            assert!(
                utility[j] < utility[k] || (utility[j] == utility[k] && j >= k),
                "scale {} beats {}: {utility:?}",
                scales[j],
                scales[k]
            );
        }
    } else {
        assert_eq!(false_alarms[k], *false_alarms.iter().min().unwrap());
    }
    assert!(
        printed.contains("no_collision comparator: ")
            && printed.contains(&format!("× {}", t.response_scale)),
        "{printed}"
    );
    let info = run_ok(avguard().arg("info").arg(&model_path));
    assert!(
        info.contains(&format!(
            "comparator RSS (score): CARLA's response times × {}",
            t.response_scale
        )),
        "{info}"
    );
    let info_json: serde_json::Value =
        serde_json::from_str(&run_ok(avguard().args(["info", "--json"]).arg(&model_path))).unwrap();
    let stored = info_json["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "no_collision")
        .unwrap();
    assert_eq!(
        stored["rss_tuning"]["response_scale"].as_f64(),
        Some(t.response_scale)
    );

    // `score` on the test runs reports it beside RSS with CARLA's parameters; its figures are those of
    // `score` with RSS set to the same response times.
    let scored = score_json(&model_path, &dir.join("scored"), &[&test]);
    for (name, c) in scored["comparators"].as_object().unwrap() {
        assert_eq!(
            c.get("rss_tuned").is_some(),
            name == "no_collision",
            "{name}: {c}"
        );
    }
    let tuned = &scored["comparators"]["no_collision"]["rss_tuned"];
    assert_eq!(tuned["response_scale"].as_f64(), Some(t.response_scale));
    let by_options = dir.join("by_options");
    run_ok(
        avguard()
            .args(["score", "--model"])
            .arg(&model_path)
            .arg("--out")
            .arg(&by_options)
            .args(["--rss-ego-response-s", &t.response_scale.to_string()])
            .args([
                "--rss-other-response-s",
                &(2.0 * t.response_scale).to_string(),
            ])
            .arg(&test),
    );
    let by_options: serde_json::Value =
        serde_json::from_slice(&std::fs::read(by_options.join("score.json")).unwrap()).unwrap();
    let rss = &by_options["comparators"]["no_collision"]["rss"];
    for key in [
        "predicted_pct",
        "false_alarm_pct",
        "median_lead_s",
        "n_safe_runs",
        "n_violating_runs",
    ] {
        assert_eq!(tuned[key], rss[key], "{key}: {tuned} against {rss}");
    }
    // The verdict beside the calibrated alarm is the rule applied to the two summaries.
    let cal_entry = &scored["calibrated"]["no_collision"];
    let ours = &cal_entry["summary"];
    let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(0.0);
    let longer = match (
        ours["median_lead_s"].as_f64(),
        tuned["median_lead_s"].as_f64(),
    ) {
        (Some(a), Some(b)) => a > b,
        (Some(_), None) => true,
        (None, _) => false,
    };
    let earlier = f(ours, "predicted_pct") >= f(tuned, "predicted_pct")
        && f(ours, "false_alarm_pct") <= f(tuned, "false_alarm_pct")
        && longer;
    assert_eq!(cal_entry["earlier_than_rss_tuned"], earlier, "{cal_entry}");
    let report = std::fs::read_to_string(dir.join("scored/report.md")).unwrap();
    assert!(
        report.contains(&format!(
            "RSS tuned on the calibration runs (response times × {})",
            t.response_scale
        )),
        "{report}"
    );
    let verdict = if earlier {
        ") warns earlier than RSS tuned"
    } else {
        ") does not warn earlier than RSS tuned"
    };
    assert!(report.contains(verdict), "{report}");
    // Calibrated again without a collision among the runs, the stale tuning is dropped.
    let safe_cal = dir.join("safe_cal");
    simulate("red_light_queue.toml", 40, 24, &safe_cal);
    let again = dir.join("again.avg");
    run_ok(
        avguard()
            .args(["calibrate", "--model"])
            .arg(&model_path)
            .args(["--target-false-alarms", "20%", "--out"])
            .arg(&again)
            .arg(&safe_cal),
    );
    let collided = std::fs::read_dir(&safe_cal).unwrap().any(|e| {
        let p = e.unwrap().path();
        p.extension().is_some_and(|x| x == "h5")
            && scenarios::log::read_log(&p)
                .unwrap()
                .frames
                .iter()
                .any(|f| f.collision)
    });
    assert_eq!(
        load(&again)
            .property("no_collision")
            .unwrap()
            .rss_tuning()
            .is_some(),
        collided
    );
}

/// `learn --forest-kind`: under `either` each forest line names the kind kept and the other's best fold
/// score, and `info --json` says the same kind; under `boosted` every stored forest is boosted, of 100
/// trees from a base log-odds; under `both` each line gives both kinds' weights, which `info` reads back
/// as the forest's; the models score logs.
#[test]
fn boosted_forests_through_learn_info_and_score() {
    let tmp = scratch();
    let dir = tmp.path();
    let train = dir.join("train");
    simulate("priority_road_residential.toml", 60, 1, &train);
    let learn_kind = |kind: &str, out: &Path| {
        run_ok(
            avguard()
                .args(["learn", "--ensemble", "1", "--max-predicates", "4"])
                .args(["--forest-kind", kind, "--laws"])
                .arg(workspace_root().join("laws/specs"))
                .arg("--out")
                .arg(out)
                .arg(&train),
        )
    };
    let info_of = |model: &Path| -> serde_json::Value {
        serde_json::from_str(&run_ok(avguard().args(["info", "--json"]).arg(model))).unwrap()
    };
    let forest_line = |summary: &'_ str, name: &str| -> Option<String> {
        summary
            .lines()
            .find(|l| l.starts_with(&format!("{name}: forest weight ")))
            .map(str::to_string)
    };
    let either = dir.join("either.avg");
    let summary = learn_kind("either", &either);
    let json = info_of(&either);
    let mut lines = 0;
    for p in json["properties"].as_array().unwrap() {
        let name = p["name"].as_str().unwrap();
        let Some(line) = forest_line(&summary, name) else {
            continue;
        };
        lines += 1;
        let boosted = line.contains("; boosted trees, bagged trees' best ");
        assert!(
            boosted || line.contains("; bagged trees, boosted trees' best "),
            "{line}"
        );
        if !p["forest"].is_null() {
            let kind = if boosted { "boosted" } else { "bagged" };
            assert_eq!(p["forest"]["kind"].as_str(), Some(kind), "{line}\n{p}");
            assert_eq!(p["forest"]["boost_base"].is_f64(), boosted, "{p}");
        }
    }
    assert!(lines > 0, "{summary}");
    let boosted = dir.join("boosted.avg");
    let summary = learn_kind("boosted", &boosted);
    let json = info_of(&boosted);
    let mut forests = 0;
    for p in json["properties"].as_array().unwrap() {
        if p["forest"].is_null() {
            continue;
        }
        forests += 1;
        assert_eq!(p["forest"]["kind"].as_str(), Some("boosted"), "{p}");
        assert_eq!(p["forest"]["trees"].as_u64(), Some(100), "{p}");
        let base = p["forest"]["boost_base"].as_f64().unwrap();
        assert!(
            base < 0.0,
            "violations follow within 3 s in fewer than half the frames: {p}"
        );
        let name = p["name"].as_str().unwrap();
        assert!(
            summary.contains(&format!("{name}: forest weight "))
                && summary
                    .lines()
                    .any(|l| l.starts_with(name) && l.ends_with("; boosted trees)")),
            "{summary}"
        );
    }
    assert!(forests > 0, "no property kept a boosted forest: {summary}");
    let text = run_ok(avguard().args(["info"]).arg(&boosted));
    assert!(text.contains("100 boosted trees over "), "{text}");
    // Every property of every run scored, through the boosted forests.
    let scored = score_json(&boosted, &dir.join("score"), &[&train]);
    let n_properties = json["properties"].as_array().unwrap().len();
    assert_eq!(scored["runs"].as_array().unwrap().len(), 60 * n_properties);
    // Both kinds: each forest line gives each kind's weight; the stored forest's weight is their mean
    // and its bagged share the bagged weight's part of their sum, as `info --json` reads it.
    let both = dir.join("both.avg");
    let summary = learn_kind("both", &both);
    let json = info_of(&both);
    let mut mixed = 0;
    for p in json["properties"].as_array().unwrap() {
        let name = p["name"].as_str().unwrap();
        let Some(line) = forest_line(&summary, name) else {
            continue;
        };
        let weight_after = |what: &str| -> f64 {
            let rest = &line[line.find(what).unwrap_or_else(|| panic!("{line}")) + what.len()..];
            rest[..rest.find(',').unwrap()].parse().unwrap()
        };
        let (wb, wg) = (
            weight_after("(bagged trees at weight "),
            weight_after("; boosted trees at weight "),
        );
        let f = &p["forest"];
        if wb + wg == 0.0 {
            assert!(f.is_null(), "{line}\n{p}");
            continue;
        }
        assert_eq!(f["weight"].as_f64(), Some((wb + wg) / 2.0), "{line}\n{p}");
        let kind = match (wb > 0.0, wg > 0.0) {
            (true, true) => "both",
            (true, false) => "bagged",
            _ => "boosted",
        };
        assert_eq!(f["kind"].as_str(), Some(kind), "{line}\n{p}");
        if kind == "both" {
            mixed += 1;
            assert_eq!(f["bagged_trees"].as_u64(), Some(8), "{p}");
            assert_eq!(f["trees"].as_u64(), Some(108), "{p}");
            let share = f["bagged_share"].as_f64().unwrap();
            assert!((share - wb / (wb + wg)).abs() < 1e-12, "{line}\n{p}");
        }
    }
    assert!(mixed > 0, "no property kept both kinds: {summary}");
    let text = run_ok(avguard().args(["info"]).arg(&both));
    assert!(text.contains("trees, 8 bagged and 100 boosted,"), "{text}");
    let scored = score_json(&both, &dir.join("score_both"), &[&train]);
    assert_eq!(scored["runs"].as_array().unwrap().len(), 60 * n_properties);
}

/// `calibrate` rewrites its model in place; a write that fails part-way (here a file-size limit below
/// the model's size) leaves the model as it was, not truncated (session 41: it had left the only copy
/// cut at the limit).
#[test]
fn a_calibration_whose_write_fails_leaves_the_model_whole() {
    let fx = crate::support::fixture();
    let dir = crate::support::scratch();
    let model = dir.path().join("model.bin");
    std::fs::copy(&fx.model, &model).unwrap();
    let before = std::fs::read(&model).unwrap();
    // bash's `ulimit -f` counts 1,024-byte blocks; half the model's size.
    let blocks = (before.len() / 2048).max(1);
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -f {blocks}; exec \"$0\" calibrate --model \"$1\" --target-false-alarms 10% \"$2\""
        ))
        .arg(crate::support::avguard_bin())
        .arg(&model)
        .arg(&fx.test_logs)
        .output()
        .unwrap();
    // Killed by SIGXFSZ (25) at the limit, or told the write failed: the write, not the calibration.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        std::os::unix::process::ExitStatusExt::signal(&out.status) == Some(25)
            || stderr.contains("cannot write"),
        "{:?}: {stderr}",
        out.status
    );
    assert_eq!(std::fs::read(&model).unwrap(), before, "the model changed");
    crate::support::run_ok(crate::support::avguard().arg("info").arg(&model));
}
