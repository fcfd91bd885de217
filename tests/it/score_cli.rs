//! `avguard score` and `score merge` end to end: simulate, learn, score; outputs checked against
//! INTERFACES §5, against `avguard laws eval` (an independent path to the violation times), and across
//! sharding, resuming and bad inputs. The report is opened in headless Chromium.

use std::path::Path;
use std::process::Output;

use crate::support::{
    avguard, fixture, ok, run_by_run_counts, run_refused, scratch, workspace_root,
};
use serde_json::Value;

fn score(out: &Path, extra: &[&str], logs: &[&Path]) -> Output {
    let f = fixture();
    let mut cmd = avguard();
    cmd.args(["score", "--model"])
        .arg(&f.model)
        .args(["--thresholds", "0.3,0.5,0.7", "--out"])
        .arg(out);
    cmd.args(extra);
    for log in logs {
        cmd.arg(log);
    }
    cmd.output().unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// First violation time of `law` in `log` according to `avguard laws eval`.
fn violation_time_by_laws_eval(log: &Path, law: &str, scratch: &Path) -> Option<f64> {
    let csv = scratch.join("verdicts.csv");
    ok(avguard()
        .args(["laws", "eval", "--laws"])
        .arg(workspace_root().join("laws/specs"))
        .arg("--out")
        .arg(&csv)
        .arg(log)
        .output()
        .unwrap());
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == law).unwrap();
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|row| row[col] == "1")
        .map(|row| row[0].parse().unwrap())
}

#[test]
fn score_json_follows_interfaces_and_agrees_with_laws_eval() {
    let f = fixture();
    let out = f.root.join("score-main");
    let done = ok(score(&out, &[], &[&f.test_logs]));
    let stderr = String::from_utf8_lossy(&done.stderr).into_owned();
    let score = read_json(&out.join("score.json"));
    let runs = score["runs"].as_array().unwrap();
    assert!(!runs.is_empty());
    let scratch = scratch();
    let mut n_checked = 0;
    for run in runs.iter().filter(|r| r["property"] == "law51_sub5") {
        for key in [
            "run_id",
            "scenario",
            "property",
            "violated",
            "violation_t",
            "alarms",
        ] {
            assert!(run.get(key).is_some(), "run lacks {key}: {run}");
        }
        let log = f
            .test_logs
            .join(format!("{}.h5", run["run_id"].as_str().unwrap()));
        let expected = violation_time_by_laws_eval(&log, "law51_sub5", scratch.path());
        assert_eq!(run["violation_t"].as_f64(), expected, "{}", run["run_id"]);
        assert_eq!(run["violated"].as_bool(), Some(expected.is_some()));
        for theta in ["0.3", "0.5", "0.7"] {
            let a = &run["alarms"][theta];
            match (expected, a["first_alarm_t"].as_f64()) {
                (Some(v), Some(first)) => {
                    assert!(
                        first < v,
                        "alarm at {first} is not before the violation at {v}"
                    );
                    assert!((a["lead_s"].as_f64().unwrap() - (v - first)).abs() < 1e-9);
                    assert_eq!(a["false_alarm"], false);
                }
                (Some(_), None) => assert!(a["lead_s"].is_null()),
                (None, first) => assert_eq!(a["false_alarm"].as_bool(), Some(first.is_some())),
            }
        }
        n_checked += 1;
    }
    assert_eq!(n_checked, 12, "one law51_sub5 row per log");
    // The summary recounted from the rows.
    for theta in ["0.3", "0.5", "0.7"] {
        let rows: Vec<&Value> = runs
            .iter()
            .filter(|r| r["property"] == "law51_sub5")
            .collect();
        let violating: Vec<&&Value> = rows.iter().filter(|r| r["violated"] == true).collect();
        let predicted = violating
            .iter()
            .filter(|r| !r["alarms"][theta]["lead_s"].is_null())
            .count();
        let safe = rows.len() - violating.len();
        let false_alarms = rows
            .iter()
            .filter(|r| r["alarms"][theta]["false_alarm"] == true)
            .count();
        let cell = &score["summary"]["law51_sub5"][theta];
        assert_eq!(
            cell["n_violating_runs"].as_u64(),
            Some(violating.len() as u64)
        );
        assert_eq!(cell["n_safe_runs"].as_u64(), Some(safe as u64));
        if !violating.is_empty() {
            let pct = 100.0 * predicted as f64 / violating.len() as f64;
            assert!((cell["predicted_pct"].as_f64().unwrap() - pct).abs() < 1e-9);
        }
        if safe > 0 {
            let pct = 100.0 * false_alarms as f64 / safe as f64;
            assert!((cell["false_alarm_pct"].as_f64().unwrap() - pct).abs() < 1e-9);
        }
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("Table 2 layout")
            && md.contains("Table 3 layout")
            && md.contains("reactive baseline")
    );
    // Every verdict on runs with a violation carries the share of resamples in which it holds, and the
    // report's dominance table prints it in its last column.
    let mut n_shares = 0;
    for (property, verdicts) in score["dominance"].as_object().unwrap() {
        let violated = runs
            .iter()
            .any(|r| r["property"] == *property && r["violated"] == true);
        for d in verdicts.as_array().unwrap() {
            let share = d["resampled_share"].as_f64();
            assert_eq!(share.is_some(), violated, "{property}: {d}");
            let Some(share) = share else { continue };
            assert!((0.0..=1.0).contains(&share), "{property}: {d}");
            // ... followed by the run-by-run counts, their verdict and its share.
            let [theirs, ours, earlier, same, later, missed] = run_by_run_counts(d);
            let by_run_share = d["run_by_run_share"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&by_run_share), "{property}: {d}");
            let row_end = format!(
                "| {} | {:.0}% | {} / {} / {} / {} | {} | {:.0}% |",
                if d["dominates"] == true { "yes" } else { "no" },
                100.0 * share,
                earlier,
                same,
                later,
                missed,
                if ours >= theirs
                    && if theirs == 0 {
                        ours > 0
                    } else {
                        earlier > later + missed
                    }
                {
                    "yes"
                } else {
                    "no"
                },
                100.0 * by_run_share
            );
            assert!(
                md.lines()
                    .any(|l| l.starts_with(&format!("| {property} |")) && l.ends_with(&row_end)),
                "{property}: no row ending '{row_end}' in\n{md}"
            );
            n_shares += 1;
        }
    }
    assert!(
        n_shares >= 1,
        "no verdict with a share: {}",
        score["dominance"]
    );
    // The curve at each false-alarm budget, recounted from the curve: within the budget, most violations
    // warned of, then the longest median lead; and the report's budget table prints it.
    let mut n_points = 0;
    for (property, curve) in score["curve"].as_object().unwrap() {
        let budgets = score["budgets"][property].as_array().unwrap();
        let pcts: Vec<f64> = budgets
            .iter()
            .map(|b| b["budget_pct"].as_f64().unwrap())
            .collect();
        assert_eq!(pcts, [5.0, 10.0, 20.0, 40.0], "{property}");
        for b in budgets {
            let budget = b["budget_pct"].as_f64().unwrap();
            let key = |p: &Value| {
                (
                    p["predicted_pct"].as_f64().unwrap(),
                    p["median_lead_s"].as_f64().unwrap_or(0.0),
                )
            };
            let best = curve
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["false_alarm_pct"].as_f64().unwrap() <= budget + 1e-9)
                .map(key)
                .fold(None, |m: Option<(f64, f64)>, k| match m {
                    Some(m) if (m.0, m.1) >= (k.0, k.1) => Some(m),
                    _ => Some(k),
                });
            let point = &b["point"];
            assert_eq!(point.is_null(), best.is_none(), "{property} {budget}: {b}");
            let Some(best) = best else { continue };
            assert_eq!(key(point), best, "{property} {budget}: {b}");
            assert!(point["false_alarm_pct"].as_f64().unwrap() <= budget + 1e-9);
            let row = format!(
                "| {property} | ≤ {budget:.0}% | {:.3} | {:.1}% | {:.1}% |",
                point["theta"].as_f64().unwrap(),
                point["predicted_pct"].as_f64().unwrap(),
                point["false_alarm_pct"].as_f64().unwrap()
            );
            assert!(
                md.lines().any(|l| l.starts_with(&row)),
                "no row '{row}' in\n{md}"
            );
            // The lead's interval over resamples of the runs: present where some violation is scored,
            // ordered, and printed as the row's last cell.
            let interval = &b["lead_interval_s"];
            let n_violating = score["baseline"][property]["n_violating_runs"]
                .as_u64()
                .unwrap();
            assert_eq!(
                interval.is_null(),
                n_violating == 0,
                "{property} {budget}: {b}"
            );
            if let Some([lo, hi]) = interval
                .as_array()
                .map(|a| [a[0].as_f64().unwrap(), a[1].as_f64().unwrap()])
            {
                assert!(0.0 <= lo && lo <= hi, "{property} {budget}: {b}");
                let cell = format!("| {lo:.2}–{hi:.2} |");
                assert!(
                    md.lines()
                        .any(|l| l.starts_with(&row) && l.ends_with(&cell)),
                    "no row '{row} … {cell}' in\n{md}"
                );
            }
            n_points += 1;
        }
    }
    assert!(md.contains("## The prediction curve at false-alarm budgets"));
    assert!(n_points >= 4, "{}", score["budgets"]);
    // stderr says the same in a line per violated property with a point.
    let mut n_lines = 0;
    for (property, budgets) in score["budgets"].as_object().unwrap() {
        let budgets = budgets.as_array().unwrap();
        let cell = |b: &Value, f: &dyn Fn(&Value) -> Option<String>| {
            f(&b["point"]).unwrap_or_else(|| "–".to_owned())
        };
        let join = |f: &dyn Fn(&Value) -> Option<String>| {
            budgets
                .iter()
                .map(|b| cell(b, f))
                .collect::<Vec<_>>()
                .join(" / ")
        };
        let runs = &score["baseline"][property];
        let n_violating = runs["n_violating_runs"].as_u64().unwrap();
        let line = format!(
            "{property} ({n_violating} violating, {} safe runs): at ≤ 5 / 10 / 20 / 40 % false alarms: {} % \
             warned of, median lead {} s",
            runs["n_safe_runs"].as_u64().unwrap(),
            join(&|p| p["predicted_pct"].as_f64().map(|x| format!("{x:.1}"))),
            join(&|p| p["median_lead_s"].as_f64().map(|x| format!("{x:.2}")))
        );
        let any_point = budgets.iter().any(|b| !b["point"].is_null());
        assert_eq!(
            stderr.lines().any(|l| l == line),
            any_point && n_violating > 0,
            "{property}: '{line}' in\n{stderr}"
        );
        // Under it, the leads' intervals over resamples of the runs.
        if any_point && n_violating > 0 {
            let cells: Vec<String> = budgets
                .iter()
                .map(|b| {
                    b["lead_interval_s"].as_array().map_or("–".to_owned(), |a| {
                        format!(
                            "{:.2}–{:.2}",
                            a[0].as_f64().unwrap(),
                            a[1].as_f64().unwrap()
                        )
                    })
                })
                .collect();
            let spread = format!(
                "  median lead in 90 % of resamples of these runs: {} s",
                cells.join(" / ")
            );
            let at = stderr.lines().position(|l| l == line).unwrap();
            assert_eq!(
                stderr.lines().nth(at + 1),
                Some(spread.as_str()),
                "{stderr}"
            );
        }
        n_lines += usize::from(any_point && n_violating > 0);
    }
    assert!(n_lines >= 1, "{stderr}");
}

#[test]
fn sharded_scores_merge_into_the_unsharded_result() {
    let f = fixture();
    let whole = f.root.join("score-whole");
    ok(score(&whole, &[], &[&f.test_logs]));
    let (a, b, merged) = (
        f.root.join("shard-a"),
        f.root.join("shard-b"),
        f.root.join("merged"),
    );
    ok(score(&a, &["--shard", "0/2"], &[&f.test_logs]));
    ok(score(&b, &["--shard", "1/2"], &[&f.test_logs]));
    let n_a = read_json(&a.join("score.json"))["runs"]
        .as_array()
        .unwrap()
        .len();
    let n_b = read_json(&b.join("score.json"))["runs"]
        .as_array()
        .unwrap()
        .len();
    assert!(n_a > 0 && n_b > 0, "both shards got logs ({n_a}, {n_b})");
    ok(avguard()
        .args(["score", "merge", "--out"])
        .arg(&merged)
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap());
    for file in ["score.json", "report.md", "report.html"] {
        assert_eq!(
            std::fs::read(whole.join(file)).unwrap(),
            std::fs::read(merged.join(file)).unwrap(),
            "{file} differs between the unsharded and the merged run"
        );
    }
    // A shard holding shard b's settings.json as `edit` leaves it is refused by `score merge`, with
    // stderr naming each of `needles`.
    let refused_shard = |name: &str, edit: &dyn Fn(&mut Value), needles: &[&str]| {
        let shard = f.root.join(name);
        std::fs::create_dir_all(&shard).unwrap();
        let mut settings = read_json(&b.join("settings.json"));
        edit(&mut settings);
        std::fs::write(shard.join("settings.json"), settings.to_string()).unwrap();
        run_refused(
            avguard()
                .args(["score", "merge", "--out"])
                .arg(f.root.join(format!("merged-{name}")))
                .arg(&shard),
            needles,
        );
    };
    // A calibration at a confidence that is not a probability is refused with a message naming the
    // shard (the Beta quantile behind the calibration check would panic).
    refused_shard(
        "shard-hostile",
        &|s| s["calibration_targets"] = serde_json::json!({"law51_sub5": [0.1, 5.0]}),
        &["shard-hostile", "is not a fraction"],
    );
    // A shard written before the results' format was recorded lacks what these runs report (which
    // violations are unsafe from their first frame): refused, not merged into an undercount.
    assert_eq!(read_json(&b.join("settings.json"))["result_format"], 1);
    refused_shard(
        "shard-older",
        &|s| {
            s.as_object_mut().unwrap().remove("result_format");
        },
        &["shard-older", "result format 0", "format 1"],
    );
}

#[test]
fn rerun_skips_scored_logs_and_a_bad_log_fails_alone() {
    let f = fixture();
    let out = f.root.join("score-resume");
    ok(score(&out, &[], &[&f.test_logs]));
    let first = std::fs::read(out.join("score.json")).unwrap();
    let again = ok(score(&out, &[], &[&f.test_logs]));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("12 of 12 logs already scored"), "{stderr}");
    assert_eq!(first, std::fs::read(out.join("score.json")).unwrap());

    // A cache an older avguard wrote (no result format in its settings) is not resumed: its runs lack
    // what this version reports. With --force the logs are scored again, to the same result.
    let older = f.root.join("score-older");
    ok(score(&older, &[], &[&f.test_logs]));
    let mut settings = read_json(&older.join("settings.json"));
    settings.as_object_mut().unwrap().remove("result_format");
    std::fs::write(older.join("settings.json"), settings.to_string()).unwrap();
    let refused = score(&older, &[], &[&f.test_logs]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("result format 0") && stderr.contains("--force"),
        "{stderr}"
    );
    let forced = ok(score(&older, &["--force"], &[&f.test_logs]));
    let stderr = String::from_utf8_lossy(&forced.stderr);
    assert!(!stderr.contains("already scored"), "{stderr}");
    assert_eq!(first, std::fs::read(older.join("score.json")).unwrap());

    let bad_dir = f.root.join("with-bad");
    std::fs::create_dir_all(&bad_dir).unwrap();
    std::fs::write(bad_dir.join("broken.h5"), b"not an hdf5 file").unwrap();
    let out2 = f.root.join("score-bad");
    let result = score(&out2, &[], &[&f.test_logs, &bad_dir]);
    assert!(
        !result.status.success(),
        "a bad log makes the exit code non-zero"
    );
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("broken.h5"), "{stderr}");
    let score = read_json(&out2.join("score.json"));
    assert_eq!(score["errors"].as_array().unwrap().len(), 1);
    assert_eq!(
        score["runs"].as_array().unwrap().len(),
        read_json(&out.join("score.json"))["runs"]
            .as_array()
            .unwrap()
            .len(),
        "every good log is still scored"
    );
}

#[test]
fn score_refuses_a_horizon_the_model_has_no_table_for() {
    let f = fixture();
    let out = score(
        &f.root.join("score-h"),
        &["--horizon", "4"],
        &[&f.test_logs],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no 4 s table") && stderr.lines().count() == 1,
        "{stderr}"
    );
    // The horizons it has, in seconds as written (30 steps of 0.1 s are 3 s, not 3.0000000000000004).
    assert!(stderr.contains("(it has: 1, 2, 3, 5 s)"), "{stderr}");
    let out = score(
        &f.root.join("score-h-huge"),
        &["--horizon", "1e300"],
        &[&f.test_logs],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("no 1e300 s table"),
        "{stderr}"
    );
    ok(score(
        &f.root.join("score-h2"),
        &["--horizon", "2"],
        &[&f.test_logs],
    ));
}

#[test]
fn report_html_shows_its_plots_in_a_browser() {
    let f = fixture();
    let out = f.root.join("score-browser");
    ok(score(&out, &[], &[&f.test_logs]));
    let chromium = crate::support::chromium();
    let profile = scratch();
    let dom = ok(std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", out.join("report.html").display()))
        .output()
        .unwrap());
    let dom = String::from_utf8_lossy(&dom.stdout);
    let n_properties = dom.matches("<section class=\"property\"").count();
    assert!(
        n_properties >= 1,
        "no property section in the rendered page"
    );
    // Each property has a lead-time histogram and a trade-off curve, each an <svg> with drawn paths.
    assert!(
        dom.matches("class=\"plot lead-histogram\"><svg").count() >= n_properties,
        "{dom:.2000}"
    );
    assert!(dom.matches("class=\"plot tradeoff\"><svg").count() >= n_properties);
    assert!(
        dom.contains("<polyline") || dom.contains("<path"),
        "the plots have no lines"
    );
}
