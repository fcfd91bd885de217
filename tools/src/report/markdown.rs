//! `report.md`: Table 2 (lead and prediction % per θ) with false alarms, the reactive baseline, and Table 3
//! (representative abstract states with their P(violation)).

use std::fmt::Write as _;

use super::{fmt_opt, Report};

/// Renders the Markdown report.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# avguard time-ahead report\n\n{}\n", report.subtitle);
    let _ = writeln!(
        out,
        "Risk is {}. A violating run is *predicted* at θ when risk ≥ θ strictly before its first violation; \
         the lead is the violation time minus the first alarm. A *false alarm* is an alarm in a run without \
         a violation of that property. The *reactive baseline* alarms when the law's own antecedent holds, \
         as a rule-based enforcer would.\n",
        report.risk_measure
    );
    table2(&mut out, report);
    baseline_table(&mut out, report);
    budget_table(&mut out, report);
    dominance_table(&mut out, report);
    for property in &report.properties {
        table3(&mut out, property);
    }
    out
}

fn table2(out: &mut String, report: &Report) {
    let Some(first) = report.properties.first() else {
        let _ = writeln!(out, "No property was scored.");
        return;
    };
    let keys: Vec<&str> = first
        .by_threshold
        .iter()
        .map(|(k, _, _)| k.as_str())
        .collect();
    let _ = writeln!(out, "## Time ahead and prediction (Table 2 layout)\n");
    let mut header = String::from("| property | violating runs | safe runs |");
    let mut rule = String::from("|---|---:|---:|");
    for k in &keys {
        let _ = write!(header, " median lead θ={k} (s) | max lead θ={k} (s) |");
        rule.push_str("---:|---:|");
    }
    for k in &keys {
        let _ = write!(header, " predicted θ={k} | false alarms θ={k} |");
        rule.push_str("---:|---:|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
    for p in &report.properties {
        let first_summary = p.by_threshold.first().map(|(_, _, s)| *s);
        let (n_violating, n_safe) =
            first_summary.map_or((0, 0), |s| (s.n_violating_runs, s.n_safe_runs));
        let mut row = format!("| {} | {n_violating} | {n_safe} |", p.name);
        for (_, _, s) in &p.by_threshold {
            let _ = write!(
                row,
                " {} | {} |",
                fmt_opt(s.median_lead_s, 2),
                fmt_opt(s.max_lead_s, 2)
            );
        }
        for (_, _, s) in &p.by_threshold {
            let _ = write!(
                row,
                " {}% | {}% |",
                fmt_opt(s.predicted_pct, 1),
                fmt_opt(s.false_alarm_pct, 1)
            );
        }
        let _ = writeln!(out, "{row}");
    }
    let _ = writeln!(out);
}

fn baseline_table(out: &mut String, report: &Report) {
    let _ = writeln!(out, "## Prediction versus the reactive baseline\n");
    let _ = writeln!(
        out,
        "| property | rule | predicted | median lead (s) | max lead (s) | false alarms |\n|---|---|---:|---:|---:|---:|"
    );
    for p in &report.properties {
        for (key, _, s) in &p.by_threshold {
            let _ = writeln!(
                out,
                "| {} | avguard θ={key} | {}% | {} | {} | {}% |",
                p.name,
                fmt_opt(s.predicted_pct, 1),
                fmt_opt(s.median_lead_s, 2),
                fmt_opt(s.max_lead_s, 2),
                fmt_opt(s.false_alarm_pct, 1)
            );
        }
        let b = &p.baseline;
        let _ = writeln!(
            out,
            "| {} | reactive baseline | {}% | {} | {} | {}% |",
            p.name,
            fmt_opt(b.predicted_pct, 1),
            fmt_opt(b.median_lead_s, 2),
            fmt_opt(b.max_lead_s, 2),
            fmt_opt(b.false_alarm_pct, 1)
        );
        for (label, s) in &p.extra_rows {
            let _ = writeln!(
                out,
                "| {} | {label} | {}% | {} | {} | {}% |",
                p.name,
                fmt_opt(s.predicted_pct, 1),
                fmt_opt(s.median_lead_s, 2),
                fmt_opt(s.max_lead_s, 2),
                fmt_opt(s.false_alarm_pct, 1)
            );
        }
    }
    let _ = writeln!(out);
    let mut any_note = false;
    for p in &report.properties {
        for note in &p.notes {
            let _ = writeln!(out, "- {}: {note}", p.name);
            any_note = true;
        }
    }
    if any_note {
        let _ = writeln!(out);
    }
}

fn budget_table(out: &mut String, report: &Report) {
    let align = format!(
        "|---|---|{}",
        "---:|".repeat(super::BUDGET_HEADER.len() - 1)
    );
    property_table(
        out,
        report,
        (
            "The prediction curve at false-alarm budgets",
            super::BUDGET_NOTE,
        ),
        (&super::BUDGET_HEADER, &align),
        |p| &p.budgets,
        |b| super::budget_cells(b).join(" | "),
    );
}

fn dominance_table(out: &mut String, report: &Report) {
    let align = format!(
        "|---|---|{}---|---:|",
        "---:|".repeat(super::DOMINANCE_HEADER.len() - 3)
    );
    property_table(
        out,
        report,
        (
            "The prediction curve against the comparators",
            super::DOMINANCE_NOTE,
        ),
        (&super::DOMINANCE_HEADER, &align),
        |p| &p.dominance,
        |d| super::dominance_cells(d).join(" | "),
    );
}

/// A section of one table over every property's `items`, a row each (`cells`: the cells after the
/// property's name, joined); nothing when no property has any. `header` is the column names after
/// "property" and the alignment row.
fn property_table<T>(
    out: &mut String,
    report: &Report,
    (title, note): (&str, &str),
    (header, align): (&[&str], &str),
    items: impl Fn(&super::PropertyReport) -> &[T],
    cells: impl Fn(&T) -> String,
) {
    if report.properties.iter().all(|p| items(p).is_empty()) {
        return;
    }
    let _ = writeln!(out, "## {title}\n\n{note}\n");
    let _ = writeln!(out, "| property | {} |\n{align}", header.join(" | "));
    for p in &report.properties {
        for item in items(p) {
            let _ = writeln!(out, "| {} | {} |", p.name, cells(item));
        }
    }
    let _ = writeln!(out);
}

fn table3(out: &mut String, p: &super::PropertyReport) {
    if p.states.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "## Representative abstract states of `{}` (Table 3 layout)\n",
        p.name
    );
    let _ = writeln!(
        out,
        "| state | P(violation) | visits in training |\n|---|---:|---:|"
    );
    for s in &p.states {
        let _ = writeln!(
            out,
            "| {} | {:.2}% | {} |",
            s.words,
            100.0 * s.p_violation,
            s.visits
        );
    }
    let _ = writeln!(out);
}
