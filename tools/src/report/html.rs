//! `report.html`: one self-contained page (no scripts, no network) with, per property, the lead-time
//! distribution, the prediction/false-alarm trade-off over θ, and risk-over-time plots of selected runs.

use std::fmt::Write as _;

use super::{fmt_opt, plots, PropertyReport, Report};

/// Renders the HTML report.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>avguard time-ahead report</title><style>\
         body{font-family:sans-serif;max-width:1200px;margin:2em auto;color:#222}\
         table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}\
         td:first-child,th:first-child{text-align:left}.plots{display:flex;flex-wrap:wrap;gap:12px}\
         figure{margin:0}.err{color:#a00}</style></head><body>\n",
    );
    let _ = writeln!(
        out,
        "<h1>avguard time-ahead report</h1><p>{}</p>",
        escape(&report.subtitle)
    );
    let _ = writeln!(
        out,
        "<p>Risk is {}. A violating run is predicted at θ when risk ≥ θ strictly before its first \
         violation; a false alarm is an alarm in a run without a violation.</p>",
        escape(&report.risk_measure)
    );
    for property in &report.properties {
        section(&mut out, property);
    }
    out.push_str("</body></html>\n");
    out
}

fn section(out: &mut String, p: &PropertyReport) {
    let _ = writeln!(
        out,
        "<section class=\"property\" id=\"{0}\"><h2>{0}</h2>",
        escape(&p.name)
    );
    let _ = writeln!(
        out,
        "<table><tr><th>rule</th><th>violating runs</th><th>predicted</th><th>median lead (s)</th>\
         <th>max lead (s)</th><th>safe runs</th><th>false alarms</th></tr>"
    );
    let rows = p
        .by_threshold
        .iter()
        .map(|(key, _, s)| (format!("avguard θ={key}"), s))
        .chain(std::iter::once((
            "reactive baseline".to_owned(),
            &p.baseline,
        )))
        .chain(p.extra_rows.iter().map(|(label, s)| (label.clone(), s)));
    for (rule, s) in rows {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}%</td><td>{}</td><td>{}</td><td>{}</td><td>{}%</td></tr>",
            escape(&rule),
            s.n_violating_runs,
            fmt_opt(s.predicted_pct, 1),
            fmt_opt(s.median_lead_s, 2),
            fmt_opt(s.max_lead_s, 2),
            s.n_safe_runs,
            fmt_opt(s.false_alarm_pct, 1)
        );
    }
    out.push_str("</table>\n");
    for note in &p.notes {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(note));
    }
    table_section(
        out,
        (
            "The prediction curve at false-alarm budgets",
            &super::BUDGET_NOTE.replace('*', ""),
        ),
        &super::BUDGET_HEADER,
        p.budgets.iter().map(|b| super::budget_cells(b).to_vec()),
    );
    table_section(
        out,
        (
            "The prediction curve against the comparators",
            &super::DOMINANCE_NOTE.replace('*', ""),
        ),
        &super::DOMINANCE_HEADER,
        p.dominance
            .iter()
            .map(|d| super::dominance_cells(d).to_vec()),
    );
    out.push_str("<div class=\"plots\">\n");
    figure(out, "lead-histogram", plots::lead_histogram(p));
    figure(out, "tradeoff", plots::tradeoff(p));
    let theta = p
        .by_threshold
        .get(p.by_threshold.len() / 2)
        .map_or(0.5, |(_, t, _)| *t);
    for trace in &p.traces {
        figure(out, "risk-trace", plots::risk_trace(&p.name, trace, theta));
    }
    out.push_str("</div>\n");
    if !p.states.is_empty() {
        out.push_str("<h3>Representative abstract states</h3><table><tr><th>state</th><th>P(violation)</th><th>visits</th></tr>\n");
        for s in &p.states {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{:.2}%</td><td>{}</td></tr>",
                escape(&s.words),
                100.0 * s.p_violation,
                s.visits
            );
        }
        out.push_str("</table>\n");
    }
    out.push_str("</section>\n");
}

/// A titled table with a note, `header` and one row per entry of `rows`; nothing without rows.
fn table_section(
    out: &mut String,
    (title, note): (&str, &str),
    header: &[&str],
    rows: impl Iterator<Item = Vec<String>>,
) {
    let mut rows = rows.peekable();
    if rows.peek().is_none() {
        return;
    }
    let _ = writeln!(
        out,
        "<h3>{}</h3><p>{}</p><table><tr>{}</tr>",
        escape(title),
        escape(note),
        header
            .iter()
            .map(|h| format!("<th>{}</th>", escape(h)))
            .collect::<String>()
    );
    for row in rows {
        let cells: String = row
            .iter()
            .map(|c| format!("<td>{}</td>", escape(c)))
            .collect();
        let _ = writeln!(out, "<tr>{cells}</tr>");
    }
    out.push_str("</table>\n");
}

fn figure(out: &mut String, class: &str, svg: Result<String, String>) {
    match svg {
        Ok(svg) => {
            let _ = writeln!(out, "<figure class=\"plot {class}\">{svg}</figure>");
        }
        Err(e) => {
            let _ = writeln!(
                out,
                "<p class=\"err\">plot {class} could not be drawn: {}</p>",
                escape(&e)
            );
        }
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
