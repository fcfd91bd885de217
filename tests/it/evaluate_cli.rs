//! `avguard evaluate` end to end: learn, calibrate and test on disjoint simulated runs; the printed curve at
//! each false-alarm budget is recomputed from the curve it writes to `evaluate.json`, and each budget's
//! reactive rule is checked against its budget, its printed row and its dominance verdict.

use crate::monitor_learn::simulate;
use crate::support::{avguard, run_by_run_counts, run_ok, scratch, workspace_root};

/// `avguard evaluate` with the shipped laws and its defaults on these training and test runs.
fn evaluate(train: &std::path::Path, test: &std::path::Path) -> std::process::Command {
    let mut cmd = avguard();
    cmd.args(["evaluate", "--laws"])
        .arg(workspace_root().join("laws/specs"))
        .arg("--train")
        .arg(train)
        .arg("--test")
        .arg(test);
    cmd
}

#[test]
fn evaluate_prints_the_curve_at_each_budget_and_writes_what_it_printed() {
    let tmp = scratch();
    let dir = tmp.path();
    let (train, test, out) = (dir.join("train"), dir.join("test"), dir.join("ev"));
    simulate("red_light_queue.toml", 80, 5, &train);
    simulate("red_light_queue.toml", 40, 6, &test);
    let printed = run_ok(
        evaluate(&train, &test)
            .args(["--max-predicates", "5", "--folds", "3", "--alpha", "0.25"])
            .args(["--prior", "hierarchical"])
            .arg("--out")
            .arg(&out),
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("evaluate.json")).unwrap()).unwrap();
    assert_eq!(json["n_test"], 40, "{printed}");
    assert_eq!(
        json["n_learn"].as_u64().unwrap() + json["n_calibrate"].as_u64().unwrap(),
        80
    );
    // Both models were built with the α given, and a searched property of the auto model with the
    // prior given (`info` reads them back from the files); the fixed abstraction is always flat.
    let mut n_hierarchical = 0;
    for file in ["model_fixed.bin", "model_auto.bin"] {
        let info = run_ok(avguard().args(["info", "--json"]).arg(out.join(file)));
        let info: serde_json::Value = serde_json::from_str(&info).unwrap();
        for p in info["properties"].as_array().unwrap() {
            assert_eq!(p["smoothing"]["alpha"], 0.25, "{file}: {p}");
            let prior = match p["selection"]["mode"].as_str() {
                Some("auto") => "hierarchical",
                _ => "flat",
            };
            assert_eq!(p["smoothing"]["prior"], prior, "{file}: {p}");
            n_hierarchical += usize::from(prior == "hierarchical");
            // evaluate.json says the same of each property.
            let model = usize::from(file == "model_auto.bin");
            let name = p["name"].as_str().unwrap();
            assert_eq!(
                json["models"][model]["properties"][name]["smoothing"], p["smoothing"],
                "{file}: {name}"
            );
        }
    }
    assert!(n_hierarchical >= 1);
    let models = json["models"].as_array().unwrap();
    assert_eq!(models[0]["mode"], "fixed");
    assert_eq!(models[1]["mode"], "auto");
    let mut n_checked = 0;
    let mut n_searched = 0;
    let mut n_budget_rules = 0;
    for (name, p) in models[1]["properties"].as_object().unwrap() {
        // The search's options reach it (a property never violated in training keeps its declared
        // predicates).
        assert_eq!(p["selection"]["folds"], 3, "{name}");
        if p["selection"]["mode"] == "auto" {
            assert!(
                p["predicates"].as_array().unwrap().len() <= 5,
                "{name}: {p}"
            );
            n_searched += 1;
        }
        // The calibration checked on the test runs: the calibrated alarm's false alarms, and a printed
        // warning exactly when they contradict the target.
        if let Some(check) = p["calibration_check"].as_object() {
            let summary = &p["comparison"]["calibrated"];
            assert_eq!(check["n_safe_runs"], summary["n_safe_runs"], "{name}");
            let n_safe = check["n_safe_runs"].as_f64().unwrap();
            let fa = check["n_false_alarms"].as_f64().unwrap();
            if n_safe > 0.0 {
                let pct = summary["false_alarm_pct"].as_f64().unwrap();
                assert!((100.0 * fa / n_safe - pct).abs() < 1e-9, "{name}");
            }
            let holds = check["holds"].as_bool().unwrap();
            let warned = printed
                .split(&format!("\n{name} — test runs: "))
                .nth(1)
                .is_some_and(|s| {
                    let auto = s.split("avguard auto calibrated").nth(1).unwrap_or("");
                    auto.lines()
                        .nth(1)
                        .is_some_and(|l| l.contains("calibration does not hold"))
                });
            assert_eq!(warned, !holds, "{name}:\n{printed}");
        }
        let comparison = &p["comparison"];
        let n_violating = comparison["comparators"][0][1]["n_violating_runs"]
            .as_u64()
            .unwrap();
        if n_violating == 0 {
            continue;
        }
        let section = printed
            .split(&format!("\n{name} — test runs: "))
            .nth(1)
            .and_then(|s| s.split("\n\n").next())
            .unwrap_or_else(|| panic!("no table for {name}:\n{printed}"));
        let curve = comparison["curve"].as_array().unwrap();
        for budget in [5.0, 10.0, 20.0, 40.0] {
            // The best point within the budget: most warned, then the longest median lead.
            let best = curve
                .iter()
                .filter(|c| c["false_alarm_pct"].as_f64().unwrap() <= budget + 1e-9)
                .max_by(|a, b| {
                    let key = |c: &serde_json::Value| {
                        (
                            c["predicted_pct"].as_f64().unwrap(),
                            c["median_lead_s"].as_f64().unwrap_or(0.0),
                        )
                    };
                    key(a).partial_cmp(&key(b)).unwrap()
                });
            let text = match best {
                None => "no θ keeps false alarms that low".to_owned(),
                Some(c) => format!(
                    "θ={:.3}: {:.1}% predicted, {:.1}% false alarms, lead {}",
                    c["theta"].as_f64().unwrap(),
                    c["predicted_pct"].as_f64().unwrap(),
                    c["false_alarm_pct"].as_f64().unwrap(),
                    c["median_lead_s"]
                        .as_f64()
                        .map_or_else(|| "–".to_owned(), |l| format!("{l:.1} s"))
                ),
            };
            let line = format!("≤ {budget:>2.0}% false alarms  {text}");
            assert!(section.contains(&line), "{name}: no '{line}' in\n{section}");
        }
        // The rules written for each budget: within it on the learning runs, printed with their test
        // figures, and compared with the curve at their own test false-alarm rate.
        for b in p["budget_rules"].as_array().unwrap() {
            let budget = b["budget_pct"].as_f64().unwrap();
            let rule = &b["rule"];
            let (n_fa, n_safe) = (
                rule["n_false_alarms"].as_f64().unwrap(),
                rule["n_safe"].as_f64().unwrap(),
            );
            assert!(
                n_fa <= (budget / 100.0 * n_safe + 1e-9).floor(),
                "{name}: {b}"
            );
            assert_eq!(
                rule["n_safe"].as_u64().unwrap() + rule["n_violating"].as_u64().unwrap(),
                json["n_learn"].as_u64().unwrap(),
                "{name}: {b}"
            );
            let summary = &b["summary"];
            let pct = |v: &serde_json::Value| {
                v.as_f64()
                    .map_or_else(|| "–".to_owned(), |x| format!("{x:.1}%"))
            };
            let text = rule["literals"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap())
                .collect::<Vec<_>>()
                .join(" & ");
            let row = section
                .lines()
                .find(|l| l.contains(&format!("rule for ≤ {budget:.0}% false alarms: {text} ")))
                .unwrap_or_else(|| panic!("{name}: no row for {b} in\n{section}"));
            let cells: Vec<&str> = row.split_whitespace().collect();
            let fa_pct = pct(&summary["false_alarm_pct"]);
            let predicted = pct(&summary["predicted_pct"]);
            assert!(
                cells
                    .windows(2)
                    .any(|w| w == [predicted.as_str(), fa_pct.as_str()]),
                "{name}: {row} against {summary}"
            );
            let d = &b["dominance"];
            if let Some(ours) = d["ours"].as_object() {
                assert!(
                    ours["false_alarm_pct"].as_f64().unwrap()
                        <= summary["false_alarm_pct"].as_f64().unwrap() + 1e-9,
                    "{name}: {d}"
                );
                let longer = match (
                    ours["median_lead_s"].as_f64(),
                    summary["median_lead_s"].as_f64(),
                ) {
                    (Some(a), Some(b)) => a > b,
                    (Some(_), None) => true,
                    (None, _) => false,
                };
                let more = ours["predicted_pct"].as_f64().unwrap()
                    >= summary["predicted_pct"].as_f64().unwrap_or(0.0);
                assert_eq!(
                    d["dominates"].as_bool().unwrap(),
                    more && longer,
                    "{name}: {d}"
                );
            }
            n_budget_rules += 1;
        }
        n_checked += 1;
    }
    // The closing tally: every verdict line of the properties with enough violating runs, recounted,
    // with the share of resamples each line gives: [dominated, pairs, in ≥ 80 %, in ≤ 20 %].
    // Then the run-by-run line under each verdict: [earlier, in ≥ 80 %, in ≤ 20 %].
    let (mut stored, mut budget) = ([0u64; 4], [0u64; 4]);
    let (mut stored_by_run, mut budget_by_run) = ([0u64; 3], [0u64; 3]);
    let mut n_shares = 0;
    for section in printed.split("\n\n") {
        let Some((_, rest)) = section.split_once(" — test runs: ") else {
            continue;
        };
        let n_violating: u64 = rest.split_whitespace().next().unwrap().parse().unwrap();
        let lines: Vec<&str> = section.lines().collect();
        for (i, line) in lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with("    vs "))
        {
            // "... — WORD (in S% of resamples)" or "... — not WORD (WORD in S% of resamples)".
            let word_and_share = |line: &str, positive: &str| -> (String, f64) {
                let (_, verdict) = line
                    .rsplit_once(" — ")
                    .unwrap_or_else(|| panic!("no verdict in '{line}'"));
                let (word, share) = verdict
                    .strip_suffix("% of resamples)")
                    .and_then(|v| v.split_once(" ("))
                    .unwrap_or_else(|| panic!("no share of resamples in '{line}'"));
                let share = share
                    .trim_start_matches(&format!("{positive} in "))
                    .trim_start_matches("in ")
                    .parse()
                    .unwrap_or_else(|e| panic!("'{line}': {e}"));
                (word.to_owned(), share)
            };
            let by_run = lines.get(i + 1).copied().unwrap_or_default();
            let by_run = by_run
                .strip_prefix("      run by run: ")
                .unwrap_or_else(|| panic!("no run-by-run line after '{line}'"));
            let (by_run_word, by_run_share) = word_and_share(by_run, "earlier");
            let (word, share) = word_and_share(line, "dominates");
            assert!((0.0..=100.0).contains(&share), "{line}");
            n_shares += 1;
            if n_violating < 5 {
                continue;
            }
            let tally = if line.starts_with("    vs rule ≤") {
                &mut budget
            } else {
                &mut stored
            };
            tally[0] += u64::from(word == "dominates");
            tally[1] += 1;
            tally[2] += u64::from(share >= 80.0);
            tally[3] += u64::from(share <= 20.0);
            let tally = if line.starts_with("    vs rule ≤") {
                &mut budget_by_run
            } else {
                &mut stored_by_run
            };
            tally[0] += u64::from(by_run_word == "earlier");
            tally[1] += u64::from(by_run_share >= 80.0);
            tally[2] += u64::from(by_run_share <= 20.0);
        }
    }
    assert!(n_shares >= 1, "{printed}");
    let by_run_line = format!(
        "warned of earlier run by run: {} of {} and {} of {} (in at least 80% of the resamples: {} and {}; \
         in at most 20%: {} and {})",
        stored_by_run[0],
        stored[1],
        budget_by_run[0],
        budget[1],
        stored_by_run[1],
        budget_by_run[1],
        stored_by_run[2],
        budget_by_run[2]
    );
    assert!(
        printed.contains(&by_run_line),
        "no '{by_run_line}' in\n{printed}"
    );
    let pairs = &json["dominated_pairs"];
    assert_eq!(pairs["min_violating_runs"], 5);
    let keys = [
        "dominated",
        "pairs",
        "dominated_in_most_resamples",
        "dominated_in_few_resamples",
        "earlier_run_by_run",
        "earlier_in_most_resamples",
        "earlier_in_few_resamples",
    ];
    for (key, tally, by_run) in [
        ("comparators", stored, stored_by_run),
        ("budget_rules", budget, budget_by_run),
    ] {
        for (field, n) in keys.iter().zip(tally.into_iter().chain(by_run)) {
            assert_eq!(pairs[key][field], n, "{key}.{field}: {pairs}");
        }
    }
    let tally_line = format!(
        "{} of {} against the baseline, RSS and the stored rule; {} of {} against the rules written for \
         each false-alarm budget\ndominated in at least 80% of the bootstrap resamples of the test runs: {} of {} \
         and {} of {}; in at most 20%: {} of {} and {} of {}",
        stored[0],
        stored[1],
        budget[0],
        budget[1],
        stored[2],
        stored[1],
        budget[2],
        budget[1],
        stored[3],
        stored[1],
        budget[3],
        budget[1]
    );
    assert!(
        printed.contains(&tally_line),
        "no '{tally_line}' in\n{printed}"
    );
    // The shares in evaluate.json: every verdict on test runs with a violation carries its own, under
    // either model.
    for m in json["models"].as_array().unwrap() {
        for (name, p) in m["properties"].as_object().unwrap() {
            for d in p["comparison"]["dominance"].as_array().unwrap() {
                let share = d["resampled_share"].as_f64();
                let violated = p["comparison"]["comparators"][0][1]["n_violating_runs"]
                    .as_u64()
                    .unwrap()
                    > 0;
                assert_eq!(share.is_some(), violated, "{name}: {d}");
                assert!(
                    share.is_none_or(|s| (0.0..=1.0).contains(&s)),
                    "{name}: {d}"
                );
                // The run-by-run counts: the comparator's warned violations split four ways, and both
                // sides' counts are the ones their summaries give in percent.
                let [theirs, ours, ..] = run_by_run_counts(d);
                let n_violating = d["comparator_summary"]["n_violating_runs"]
                    .as_f64()
                    .unwrap();
                let warned = |pct: &serde_json::Value| {
                    pct.as_f64()
                        .map_or(0, |p| (p * n_violating / 100.0).round() as u64)
                };
                assert_eq!(
                    theirs,
                    warned(&d["comparator_summary"]["predicted_pct"]),
                    "{name}: {d}"
                );
                assert_eq!(ours, warned(&d["ours"]["predicted_pct"]), "{name}: {d}");
                assert_eq!(
                    d["run_by_run_share"].as_f64().is_some(),
                    violated,
                    "{name}: {d}"
                );
            }
        }
    }
    assert!(n_checked >= 1, "{printed}");
    assert!(n_budget_rules >= 1, "{printed}");
    assert!(n_searched >= 1, "{printed}");
}

/// `--repeats 2` evaluates with seeds 0 and 1: each is printed and written as a single evaluation with
/// that seed would be, and the closing table lists each seed's pair tallies (those of its own
/// `evaluate.json`) and their sums.
#[test]
fn repeated_evaluations_print_each_seed_and_sum_their_pairs() {
    let tmp = scratch();
    let dir = tmp.path();
    let (train, test, out) = (dir.join("train"), dir.join("test"), dir.join("ev"));
    simulate("priority_road.toml", 90, 5, &train);
    simulate("priority_road.toml", 50, 6, &test);
    let evaluate = |extra: &[&str]| {
        run_ok(
            evaluate(&train, &test)
                .args(["--max-predicates", "4", "--folds", "3", "--alpha", "1"])
                // A target the few calibration runs can show, so that the calibrated alarm is
                // compared with RSS at it.
                .args(["--target-false-alarms", "0.3"])
                .args(extra),
        )
    };
    let out_arg = out.to_str().unwrap();
    let printed = evaluate(&["--repeats", "2", "--out", out_arg]);
    // Seed 1's section is what a single evaluation with seed 1 prints.
    let (before, seed1) = printed.split_once("\n== seed 1 ==\n").unwrap();
    assert!(before.contains("== seed 0 =="), "{printed}");
    let (seed1, table) = seed1.split_once("\nacross 2 seeds:").unwrap();
    let alone = evaluate(&["--seed", "1"]);
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("evaluate.json and both models are in"))
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_owned()
    };
    assert_eq!(strip(seed1), strip(&alone));
    // Each seed's row holds its own evaluate.json's tallies; the last row sums them.
    let mut sums = [0u64; 8];
    // RSS tuned to each budget: its pairs and the calibrated alarm's comparisons, summed over the seeds.
    let (mut tuned, mut tuned_dominated, mut earlier, mut compared) = (0, 0, 0, 0);
    for seed in 0..2 {
        let json: serde_json::Value = serde_json::from_slice(
            &std::fs::read(out.join(format!("seed-{seed}/evaluate.json"))).unwrap(),
        )
        .unwrap();
        let p = &json["dominated_pairs"];
        tuned += p["rss_tuned"]["pairs"].as_u64().unwrap();
        tuned_dominated += p["rss_tuned"]["dominated"].as_u64().unwrap();
        for (_, prop) in json["models"][1]["properties"].as_object().unwrap() {
            let vs = &prop["calibrated_against_rss_tuned"];
            if !vs.is_null() && !vs["rss_tuned"]["summary"].is_null() {
                compared += 1;
                earlier += u64::from(vs["earlier"] == true);
            }
        }
        let mut cells = Vec::new();
        for (i, key) in ["comparators", "budget_rules"].iter().enumerate() {
            let n = |f: &str| p[key][f].as_u64().unwrap();
            let values = [
                n("dominated"),
                n("pairs"),
                n("dominated_in_most_resamples"),
                n("dominated_in_few_resamples"),
            ];
            for (j, v) in values.iter().enumerate() {
                sums[4 * i + j] += v;
            }
            cells.push(format!(
                "{} of {} ({} / {})",
                values[0], values[1], values[2], values[3]
            ));
        }
        let row = table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&seed.to_string()))
            .unwrap_or_else(|| panic!("no row for seed {seed} in\n{table}"));
        for c in &cells {
            assert!(row.contains(c.as_str()), "'{c}' not in '{row}'");
        }
    }
    assert!(sums[1] > 0 && sums[5] > 0, "no pair to count: {table}");
    let sum_row = table
        .lines()
        .find(|l| l.trim_start().starts_with("sum"))
        .unwrap();
    let want = format!("{} of {} ({} / {})", sums[0], sums[1], sums[2], sums[3]);
    assert!(sum_row.contains(&want), "'{want}' not in '{sum_row}'");
    let want = format!("{} of {} ({} / {})", sums[4], sums[5], sums[6], sums[7]);
    assert!(sum_row.contains(&want), "'{want}' not in '{sum_row}'");
    // The priority road's collisions make no_collision a tuned property, calibrated on each seed.
    assert!(compared >= 1, "{printed}");
    let want = format!(
        "against RSS tuned to each false-alarm budget (collision properties), over the seeds: \
         {tuned_dominated} of {tuned} dominated"
    );
    assert!(table.contains(&want), "'{want}' not in\n{table}");
    let want = format!(
        "the calibrated alarm earlier than RSS at the calibration's target in {earlier} of {compared}"
    );
    assert!(table.contains(&want), "'{want}' not in\n{table}");
}

/// RSS tuned to each false-alarm budget (a collision property only): the response-time scale chosen on
/// the learning runs keeps within its budget there, its figures on the test runs are those `avguard
/// score` gives RSS with the same response times (an independent path: `score`'s own RSS comparator),
/// the printed rows and verdicts say the same, and the tally counts the pairs within a budget.
#[test]
fn evaluate_tunes_rss_to_each_budget_on_the_learning_runs() {
    let tmp = scratch();
    let dir = tmp.path();
    let (train, test, out) = (dir.join("train"), dir.join("test"), dir.join("ev"));
    // Neither scenario has pedestrians, whose response time `score` cannot set.
    for kind in ["left_turn.toml", "red_light_queue.toml"] {
        simulate(kind, 80, 5, &train);
        simulate(kind, 40, 6, &test);
    }
    let printed = run_ok(
        evaluate(&train, &test)
            .args(["--max-predicates", "5", "--folds", "3", "--alpha", "1"])
            .arg("--out")
            .arg(&out),
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("evaluate.json")).unwrap()).unwrap();
    let auto = &json["models"][1]["properties"];
    // Only the collision property is tuned.
    for (name, p) in auto.as_object().unwrap() {
        let n = p["rss_tuned"].as_array().map_or(0, Vec::len);
        assert_eq!(n > 0, name == "no_collision", "{name}: {}", p["rss_tuned"]);
    }
    let p = &auto["no_collision"];
    let tuned = p["rss_tuned"].as_array().unwrap();
    let budgets: Vec<f64> = tuned
        .iter()
        .map(|t| t["budget_pct"].as_f64().unwrap())
        .collect();
    assert_eq!(budgets, [5.0, 10.0, 20.0, 40.0]);
    let section = printed
        .split("\nno_collision — test runs: ")
        .nth(1)
        .and_then(|s| s.split("\n\n").next())
        .unwrap_or_else(|| panic!("no table for no_collision:\n{printed}"));
    let scales = [1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0];
    let (mut n_within, mut n_scored, mut n_dominated) = (0, 0, 0);
    for t in tuned {
        let budget = t["budget_pct"].as_f64().unwrap();
        let within = t["within_budget"].as_bool().unwrap();
        let learning_fa = t["learning"]["false_alarm_pct"].as_f64().unwrap();
        let Some(scale) = t["response_scale"].as_f64() else {
            // No choice: none keeps within the budget, and nothing was scored.
            assert!(!within && learning_fa > budget, "{t}");
            assert!(t["summary"].is_null() && t["dominance"].is_null(), "{t}");
            let line = format!("RSS tuned to ≤ {budget:.0}%: no response time keeps within it");
            assert!(section.contains(&line), "no '{line}' in\n{section}");
            continue;
        };
        assert!(scales.contains(&scale), "{t}");
        assert!((t["ego_response_s"].as_f64().unwrap() - scale).abs() < 1e-12);
        if within {
            n_within += 1;
            assert!(learning_fa <= budget + 1e-9, "{t}");
            let line = format!("RSS tuned to ≤ {budget:.0}% (response times × {scale}, ego");
            assert!(section.contains(&line), "no '{line}' in\n{section}");
            n_dominated += usize::from(t["dominance"]["dominates"] == true);
        } else {
            // Above the budget: shown only for the calibration's target, as near as RSS comes.
            assert_eq!(budget, 10.0, "{t}");
            assert!(learning_fa > budget, "{t}");
            assert!(
                section.contains("RSS as near ≤ 10% as it comes"),
                "{section}"
            );
        }
        // The same RSS scored by `avguard score` on the same test runs with the auto model.
        let scored = dir.join(format!("score-{budget}"));
        run_ok(
            avguard()
                .args(["score", "--model"])
                .arg(out.join("model_auto.bin"))
                .arg("--out")
                .arg(&scored)
                .args(["--rss-ego-response-s", &scale.to_string()])
                .args(["--rss-other-response-s", &(2.0 * scale).to_string()])
                .arg(&test),
        );
        let score: serde_json::Value =
            serde_json::from_slice(&std::fs::read(scored.join("score.json")).unwrap()).unwrap();
        let rss = &score["comparators"]["no_collision"]["rss"];
        for key in [
            "predicted_pct",
            "false_alarm_pct",
            "median_lead_s",
            "n_safe_runs",
        ] {
            assert_eq!(t["summary"][key], rss[key], "{key}: {t} against {rss}");
        }
        assert_eq!(t["dominance"]["comparator_summary"], t["summary"], "{t}");
        n_scored += 1;
    }
    assert!(n_within >= 1 && n_scored >= 2, "{printed}");
    // Only the pairs within a budget are tallied.
    let n_violating = p["comparison"]["comparators"][0][1]["n_violating_runs"]
        .as_u64()
        .unwrap();
    let tally = &json["dominated_pairs"]["rss_tuned"];
    let counted = if n_violating >= 5 { n_within } else { 0 };
    assert_eq!(tally["pairs"], counted, "{tally}");
    if n_violating >= 5 {
        assert_eq!(tally["dominated"], n_dominated, "{tally}");
    }
    // With a single debounce length there is nothing to choose on the learning runs, which are then
    // read for the tuning alone (under the auto model only): the tuning is the same, and every
    // calibration keeps that length. An option no calibration can use is refused before learning.
    let one = dir.join("ev-debounce-1");
    run_ok(
        evaluate(&train, &test)
            .args(["--max-predicates", "5", "--folds", "3", "--alpha", "1"])
            .args(["--debounce", "1", "--out"])
            .arg(&one),
    );
    let single: serde_json::Value =
        serde_json::from_slice(&std::fs::read(one.join("evaluate.json")).unwrap()).unwrap();
    assert_eq!(
        single["models"][1]["properties"]["no_collision"]["rss_tuned"],
        p["rss_tuned"]
    );
    let mut n_calibrated = 0;
    for model in single["models"].as_array().unwrap() {
        for (name, q) in model["properties"].as_object().unwrap() {
            if let Some(m) = q["calibration"]["debounce_frames"].as_u64() {
                assert_eq!(m, 1, "{name}: {}", q["calibration"]);
                n_calibrated += 1;
            }
        }
    }
    assert!(n_calibrated > 0, "{single}");
    let out = evaluate(&train, &test)
        .args(["--debounce", "0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("debounce lengths must be at least one frame"),
        "{err}"
    );
    // The calibrated alarm against RSS at the calibration's target: the verdict is the rule applied to
    // the two summaries written beside it.
    let vs = &p["calibrated_against_rss_tuned"];
    let (ours, theirs) = (&vs["calibrated"], &vs["rss_tuned"]["summary"]);
    let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(0.0);
    let longer = match (
        ours["median_lead_s"].as_f64(),
        theirs["median_lead_s"].as_f64(),
    ) {
        (Some(a), Some(b)) => a > b,
        (Some(_), None) => true,
        (None, _) => false,
    };
    let earlier = f(ours, "predicted_pct") >= f(theirs, "predicted_pct")
        && f(ours, "false_alarm_pct") <= f(theirs, "false_alarm_pct")
        && longer;
    assert_eq!(vs["earlier"], earlier, "{vs}");
    assert_eq!(ours, &p["comparison"]["calibrated"], "{vs}");
    let words = if earlier {
        "— earlier"
    } else {
        "— not earlier"
    };
    let line = section
        .lines()
        .find(|l| l.contains("calibrated θ against RSS"))
        .unwrap_or_else(|| panic!("no calibrated line in\n{section}"));
    assert!(line.contains(words), "{line}");
}
