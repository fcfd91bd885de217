use std::collections::BTreeMap;

use super::*;
use crate::time_ahead::{AlarmScore, RunScore};

fn run(violated: bool, max_risk: f64, lead: Option<f64>) -> RunScore {
    let alarm = AlarmScore {
        first_alarm_t: lead.map(|l| 10.0 - l),
        lead_s: lead,
        false_alarm: !violated && max_risk >= 0.5,
    };
    RunScore {
        run_id: format!("run-{max_risk}"),
        scenario: "s".into(),
        property: "law".into(),
        violated,
        violation_t: violated.then_some(10.0),
        unsafe_from_start: false,
        alarms: BTreeMap::from([("0.5".to_owned(), alarm)]),
        baseline: AlarmScore {
            first_alarm_t: None,
            lead_s: None,
            false_alarm: false,
        },
        max_risk,
        rss: None,
        reactive_rule: None,
        rss_tuned: None,
        calibrated: None,
        envelope: Vec::new(),
    }
}

fn sample() -> Report {
    let runs = [
        run(true, 0.9, Some(4.0)),
        run(true, 0.2, None),
        run(false, 0.6, None),
        run(false, 0.1, None),
    ];
    let refs: Vec<&RunScore> = runs.iter().collect();
    let trace = RiskTrace {
        run_id: "run-0.9".into(),
        t: vec![0.0, 5.0, 6.0, 10.0],
        risk: vec![0.1, 0.4, 0.9, 1.0],
        violation_t: Some(10.0),
    };
    let states = vec![StateRow {
        words: "light yellow & moving".into(),
        p_violation: 0.4715,
        visits: 12,
    }];
    let p = PropertyReport::from_runs("law", &refs, &[("0.5".into(), 0.5)], states, vec![trace]);
    Report {
        subtitle: "test".into(),
        risk_measure: "P(eventually unsafe)".into(),
        properties: vec![p],
    }
}

#[test]
fn tradeoff_curve_matches_a_hand_count() {
    let runs = [
        run(true, 0.9, Some(4.0)),
        run(true, 0.2, None),
        run(false, 0.6, None),
        run(false, 0.1, None),
    ];
    let refs: Vec<&RunScore> = runs.iter().collect();
    let curve = tradeoff_curve(&refs);
    assert_eq!(curve.len(), 101);
    // θ = 0.15: both violating runs (0.9, 0.2) predicted, one safe run (0.6) alarms.
    let (theta, predicted, false_alarms) = curve[15];
    assert!((theta - 0.15).abs() < 1e-12);
    assert_eq!((predicted, false_alarms), (100.0, 50.0));
    // θ = 0.7: only the 0.9 run.
    assert_eq!((curve[70].1, curve[70].2), (50.0, 0.0));
    // θ = 1.0: nothing.
    assert_eq!((curve[100].1, curve[100].2), (0.0, 0.0));
}

#[test]
fn markdown_has_table2_baseline_and_table3() {
    let md = render_markdown(&sample());
    assert!(md.contains("Table 2 layout"), "{md}");
    // 1 of 2 violating runs predicted, median lead 4.00, 1 of 2 safe runs false-alarmed.
    assert!(
        md.contains("| law | 2 | 2 | 4.00 | 4.00 | 50.0% | 50.0% |"),
        "{md}"
    );
    assert!(md.contains("reactive baseline | 0.0% |"), "{md}");
    assert!(
        md.contains("| light yellow & moving | 47.15% | 12 |"),
        "{md}"
    );
}

/// A property's notes (the calibration checked on the scored runs) are shown under the tables.
#[test]
fn notes_are_shown_in_both_reports() {
    let mut report = sample();
    report.properties[0]
        .notes
        .push("calibration does not hold on these runs: 9 of 10 <safe> runs".into());
    let md = render_markdown(&report);
    assert!(
        md.contains("- law: calibration does not hold on these runs: 9 of 10 <safe> runs"),
        "{md}"
    );
    let html = render_html(&report);
    assert!(
        html.contains("<p class=\"note\">calibration does not hold on these runs: 9 of 10 &lt;safe&gt; runs</p>"),
        "{html}"
    );
    assert!(!render_markdown(&sample()).contains("- law:"));
}

#[test]
fn html_is_self_contained_with_three_plots() {
    let html = render_html(&sample());
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(
        html.matches("<svg").count(),
        3,
        "lead histogram, trade-off and one risk trace"
    );
    assert!(!html.contains("<script"), "no scripts");
    let without_svg_namespace = html.replace("http://www.w3.org/2000/svg", "");
    assert!(
        !without_svg_namespace.contains("http"),
        "no network references"
    );
    assert!(html.contains("light yellow &amp; moving"));
}

/// Both reports show the curve against the comparators with the same cells, the share of resamples
/// included. Here the baseline warns of nothing and never alarms, and in every resample the curve warns
/// of the one violation above the highest safe risk drawn (4 or 6 s ahead): it dominates in all of them.
#[test]
fn both_reports_show_the_verdicts_with_their_share_of_resamples() {
    let mut warned = run(true, 0.9, Some(4.0));
    warned.envelope = vec![(0.2, 6.0), (0.9, 4.0)];
    let runs = [warned, run(false, 0.6, None), run(false, 0.1, None)];
    let refs: Vec<&RunScore> = runs.iter().collect();
    let c = crate::time_ahead::Comparison::of(&refs);
    let d = c.dominance[0].clone();
    assert_eq!(d.comparator, "baseline");
    assert!(d.dominates, "{d:?}");
    assert_eq!(d.resampled_share, Some(1.0));
    let mut report = sample();
    report.properties[0].add_comparison(c, None, None, None);
    let cells = dominance_cells(&d);
    assert_eq!(cells[8], "yes");
    assert_eq!(cells[9], "100%");
    // The baseline warns of no violation, so the run-by-run counts are empty and the one warning wins.
    assert_eq!(cells[10], "0 / 0 / 0 / 0");
    assert_eq!(cells[11], "yes");
    assert_eq!(cells[12], "100%");
    let md = render_markdown(&report);
    assert!(
        md.contains(&format!("| law | {} |", cells.join(" | "))),
        "{md}"
    );
    let html = render_html(&report);
    let row: String = cells.iter().map(|c| format!("<td>{c}</td>")).collect();
    assert!(html.contains(&format!("<tr>{row}</tr>")), "{html}");
    assert!(html.contains("<th>resamples</th>"), "{html}");
}

/// The run-by-run line under a verdict: the four counts and the verdict with its share, and a shorter
/// line when the comparator warns of nothing; nothing where it was not computed.
#[test]
fn the_run_by_run_line_gives_the_counts_and_the_verdict() {
    use crate::time_ahead::RunByRun;
    let mut d = crate::time_ahead::dominance("rss", &crate::time_ahead::summarise([]), &[]);
    assert_eq!(run_by_run_words(&d), None);
    d.run_by_run = Some(RunByRun {
        theirs: 5,
        ours: 6,
        earlier: 3,
        same: 1,
        later: 1,
        missed: 0,
    });
    d.run_by_run_share = Some(0.834);
    assert_eq!(
        run_by_run_words(&d).unwrap(),
        "run by run: of the comparator's 5 warned violations, the curve warns of 3 earlier, 1 at the \
         same frame, 1 later and 0 not at all (6 warned of in all) — earlier (in 83% of resamples)"
    );
    d.run_by_run = Some(RunByRun {
        theirs: 5,
        ours: 5,
        earlier: 2,
        same: 1,
        later: 1,
        missed: 1,
    });
    d.run_by_run_share = Some(0.1);
    assert!(
        run_by_run_words(&d)
            .unwrap()
            .ends_with("— not earlier (earlier in 10% of resamples)"),
        "{d:?}"
    );
    d.run_by_run = Some(RunByRun {
        ours: 2,
        ..RunByRun::default()
    });
    d.run_by_run_share = None;
    assert_eq!(
        run_by_run_words(&d).unwrap(),
        "run by run: the comparator warns of no violation, the curve of 2 — earlier"
    );
}

/// Violating runs unsafe from their first frame are said under the tables, with the predicted share
/// they leave at most; without any, no such note.
#[test]
fn runs_unsafe_from_the_start_bound_the_predicted_share_in_a_note() {
    assert!(sample().properties[0].notes.is_empty());
    let mut runs = [
        run(true, 0.9, Some(4.0)),
        run(true, 0.2, None),
        run(true, 0.0, None),
        run(false, 0.1, None),
    ];
    runs[2].unsafe_from_start = true;
    let refs: Vec<&RunScore> = runs.iter().collect();
    let p = PropertyReport::from_runs("law", &refs, &[("0.5".into(), 0.5)], Vec::new(), Vec::new());
    assert_eq!(
        p.notes,
        vec![
            "1 of the 3 violating runs are unsafe from their first frame: no alarm can precede \
             those, so no row can predict more than 66.7% of the violations."
                .to_owned()
        ]
    );
    let summary = &p.by_threshold[0].2;
    assert_eq!(
        (summary.n_violating_runs, summary.n_unsafe_from_start),
        (3, 1)
    );
}
