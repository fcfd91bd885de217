//! The reports safety engineers read: `report.md` (the paper's Table 2 and Table 3 layouts, plus false
//! alarms and the reactive baseline) and `report.html` (one self-contained page with inline SVG plots).
//!
//! A [`Report`] is built from scored runs ([`crate::time_ahead::RunScore`]), a few risk traces and, per
//! property, representative abstract states; `markdown` and `html` only render it.

mod html;
mod markdown;
mod plots;

use std::collections::BTreeMap;

use crate::time_ahead::{self, Comparison, Dominance, RunScore, Summary};

pub use html::render as render_html;
pub use markdown::render as render_markdown;

/// An abstract state shown in the Table 3 layout.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct StateRow {
    /// The state's predicates in words, e.g. "light yellow, stop line ≤ 2 m, moving".
    pub words: String,
    /// P(violation eventually) from this state.
    pub p_violation: f64,
    /// How often the training runs visited it.
    pub visits: u64,
}

/// One run's risk over time, for the "risk over time" plots.
#[derive(Debug, Clone)]
pub struct RiskTrace {
    /// The run's id.
    pub run_id: String,
    /// Frame times, s.
    pub t: Vec<f64>,
    /// Risk per frame.
    pub risk: Vec<f64>,
    /// Time of the first violation, s.
    pub violation_t: Option<f64>,
}

/// Everything the reports show about one property.
#[derive(Debug, Clone)]
pub struct PropertyReport {
    /// The property's name.
    pub name: String,
    /// Summary per threshold key, in threshold order.
    pub by_threshold: Vec<(String, f64, Summary)>,
    /// The reactive baseline's summary.
    pub baseline: Summary,
    /// Leads (s) of predicted runs per threshold key.
    pub leads: BTreeMap<String, Vec<f64>>,
    /// Prediction % and false-alarm % over a fine grid of θ: (θ, predicted %, false alarm %).
    pub tradeoff: Vec<(f64, f64, f64)>,
    /// Representative abstract states (Table 3 layout).
    pub states: Vec<StateRow>,
    /// A few runs' risk traces.
    pub traces: Vec<RiskTrace>,
    /// Rows after the baseline: the calibrated alarm, RSS, the reactive rule (label, summary).
    pub extra_rows: Vec<(String, Summary)>,
    /// The curve against each comparator.
    pub dominance: Vec<Dominance>,
    /// The curve's best point within each false-alarm budget (empty before [`Self::add_comparison`]).
    pub budgets: Vec<crate::time_ahead::BudgetPoint>,
    /// Lines shown under the property's rows (the calibration checked on these runs).
    pub notes: Vec<String>,
}

/// The whole report.
#[derive(Debug, Clone)]
pub struct Report {
    /// What was scored, in one line (model, number of logs, risk measure).
    pub subtitle: String,
    /// The risk measure in words ("P(eventually unsafe)" or "P(unsafe within 3 s)").
    pub risk_measure: String,
    /// One entry per property, sorted by name.
    pub properties: Vec<PropertyReport>,
}

impl PropertyReport {
    /// Builds a property's report from its scored runs. `thresholds` are the user's (key, θ) pairs.
    pub fn from_runs(
        name: &str,
        runs: &[&RunScore],
        thresholds: &[(String, f64)],
        states: Vec<StateRow>,
        traces: Vec<RiskTrace>,
    ) -> PropertyReport {
        let by_threshold = thresholds
            .iter()
            .map(|(key, theta)| {
                let cells = runs
                    .iter()
                    .filter_map(|r| r.alarms.get(key).map(|a| (*r, a)));
                (key.clone(), *theta, time_ahead::summarise(cells))
            })
            .collect();
        let baseline = time_ahead::summarise(runs.iter().map(|r| (*r, &r.baseline)));
        let leads = thresholds
            .iter()
            .map(|(key, _)| {
                let mut v: Vec<f64> = runs
                    .iter()
                    .filter_map(|r| r.alarms.get(key).and_then(|a| a.lead_s))
                    .collect();
                v.sort_by(f64::total_cmp);
                (key.clone(), v)
            })
            .collect();
        PropertyReport {
            name: name.to_owned(),
            by_threshold,
            baseline,
            leads,
            tradeoff: tradeoff_curve(runs),
            states,
            traces,
            extra_rows: Vec::new(),
            dominance: Vec::new(),
            budgets: Vec::new(),
            notes: from_start_note(&baseline).into_iter().collect(),
        }
    }

    /// Adds the calibrated alarm and the comparators other than the baseline as rows, and the curve's
    /// dominance over each comparator.
    ///
    /// `rule` is the reactive rule's text, `rss_scale` the factor on CARLA's response times of RSS tuned
    /// to the calibration's target (`score`'s `rss_tuned` comparator).
    pub fn add_comparison(
        &mut self,
        c: Comparison,
        calibration: Option<(f64, u32)>,
        rule: Option<&str>,
        rss_scale: Option<f64>,
    ) {
        if let (Some(earlier), Some((theta, _))) =
            (c.calibrated_earlier_than("rss_tuned"), calibration)
        {
            self.notes.push(format!(
                "The calibrated alarm (θ={theta:.3}) {} RSS tuned to its false-alarm target on the calibration runs (earlier: as many violations warned of, no more false alarms and a longer median lead, on these runs).",
                if earlier { "warns earlier than" } else { "does not warn earlier than" }
            ));
        }
        if let Some(s) = c.calibrated {
            let label = match calibration {
                Some((theta, m)) if m > 1 => {
                    format!("avguard calibrated θ={theta:.3}, debounce {m} frames")
                }
                Some((theta, _)) => format!("avguard calibrated θ={theta:.3}"),
                None => "avguard calibrated θ".to_owned(),
            };
            self.extra_rows.push((label, s));
        }
        for (name, s) in &c.comparators {
            let label = match (name.as_str(), rss_scale) {
                ("rss_tuned", Some(scale)) => format!(
                    "{} (response times × {scale})",
                    comparator_label(name, rule)
                ),
                _ => comparator_label(name, rule),
            };
            if name != "baseline" {
                self.extra_rows.push((label, *s));
            }
        }
        self.budgets = c.budgets;
        self.dominance = c.dominance;
    }
}

/// What the budget tables of both reports say of themselves.
pub(crate) const BUDGET_NOTE: &str = "For each false-alarm budget, avguard's best threshold with at most \
    that share of these safe runs alarmed (most violations warned of, then the longest median lead): \
    how much it warns of, and how early, at the false-alarm rate you can afford. *Lead in 90 % of \
    resamples*: the median lead at that budget, the threshold chosen again, in the middle 90 % of \
    bootstrap resamples of these runs; other runs like these would give a lead about that far apart.";

/// The columns of a budget row ([`budget_cells`]).
pub(crate) const BUDGET_HEADER: [&str; 6] = [
    "false-alarm budget",
    "avguard θ",
    "predicted",
    "false alarms",
    "median lead (s)",
    "lead in 90% of resamples (s)",
];

/// One budget's point as the cells of [`BUDGET_HEADER`].
pub(crate) fn budget_cells(b: &crate::time_ahead::BudgetPoint) -> [String; 6] {
    let budget = format!("≤ {:.0}%", b.budget_pct);
    let spread = b
        .lead_interval_s
        .map_or_else(|| "–".to_owned(), |[lo, hi]| format!("{lo:.2}–{hi:.2}"));
    match b.point {
        None => [
            budget,
            "no θ this low".to_owned(),
            "–".to_owned(),
            "–".to_owned(),
            "–".to_owned(),
            spread,
        ],
        Some(p) => [
            budget,
            format!("{:.3}", p.theta),
            format!("{:.1}%", p.predicted_pct),
            format!("{:.1}%", p.false_alarm_pct),
            fmt_opt(p.median_lead_s, 2),
            spread,
        ],
    }
}

/// What the dominance tables of both reports say of themselves.
pub(crate) const DOMINANCE_NOTE: &str = "For each comparator, avguard's best threshold with at most the \
    comparator's false-alarm rate. *Dominates*: at least as many violations predicted, with a longer \
    median lead. *Resamples*: the share of bootstrap resamples of these runs (violating and safe runs \
    drawn again with replacement) in which it dominates; near 100 % or 0 % the runs decide the verdict, \
    near 50 % they cannot. *Run by run*: of the violations the comparator warns of, how many that threshold \
    warns of earlier / at the same frame / later / not at all; *earlier* when it warns of at least as many \
    violations and of more of the comparator's earlier than later or not at all, with its share of the \
    same resamples.";

/// The columns of a dominance row ([`dominance_cells`]).
pub(crate) const DOMINANCE_HEADER: [&str; 13] = [
    "comparator",
    "its predicted",
    "its lead (s)",
    "its false alarms",
    "avguard θ",
    "predicted",
    "lead (s)",
    "false alarms",
    "dominates",
    "resamples",
    "run by run (earlier / same / later / missed)",
    "earlier run by run",
    "resamples (run by run)",
];

/// One verdict as the cells of [`DOMINANCE_HEADER`].
pub(crate) fn dominance_cells(d: &crate::time_ahead::Dominance) -> [String; 13] {
    let s = &d.comparator_summary;
    let dash = || "–".to_owned();
    let (theta, pred, lead, fa) = d.ours.map_or_else(
        || (dash(), dash(), dash(), dash()),
        |o| {
            (
                format!("{:.3}", o.theta),
                format!("{:.1}%", o.predicted_pct),
                fmt_opt(o.median_lead_s, 2),
                format!("{:.1}%", o.false_alarm_pct),
            )
        },
    );
    [
        comparator_label(&d.comparator, None),
        format!("{}%", fmt_opt(s.predicted_pct, 1)),
        fmt_opt(s.median_lead_s, 2),
        format!("{}%", fmt_opt(s.false_alarm_pct, 1)),
        theta,
        pred,
        lead,
        fa,
        if d.dominates { "yes" } else { "no" }.to_owned(),
        d.resampled_share
            .map_or_else(dash, |x| format!("{:.0}%", 100.0 * x)),
        d.run_by_run.map_or_else(dash, |r| {
            format!("{} / {} / {} / {}", r.earlier, r.same, r.later, r.missed)
        }),
        d.run_by_run.map_or_else(dash, |r| {
            if r.earlier_run_by_run() { "yes" } else { "no" }.to_owned()
        }),
        d.run_by_run_share
            .map_or_else(dash, |x| format!("{:.0}%", 100.0 * x)),
    ]
}

/// A note when some violating runs are unsafe from their first frame (counted in `all`, a summary over
/// every run): no alarm can precede those, so they bound every row's predicted share.
fn from_start_note(all: &Summary) -> Option<String> {
    let (n_violating, k) = (all.n_violating_runs, all.n_unsafe_from_start);
    (k > 0).then(|| {
        format!(
            "{k} of the {n_violating} violating runs are unsafe from their first frame: no alarm can \
             precede those, so no row can predict more than {:.1}% of the violations.",
            100.0 * (n_violating - k) as f64 / n_violating as f64
        )
    })
}

/// A verdict in words with its share of resamples when known: `yes` (in S% of resamples), or `no`
/// (`holds` in S% of resamples).
fn verdict_words(holds: bool, yes: &str, no: &str, share: Option<f64>) -> String {
    match share {
        Some(x) if holds => format!("{yes} (in {:.0}% of resamples)", 100.0 * x),
        Some(x) => format!("{no} ({yes} in {:.0}% of resamples)", 100.0 * x),
        None if holds => yes.to_owned(),
        None => no.to_owned(),
    }
}

/// A dominance verdict in words, with the share of resamples in which the curve dominates when known.
pub fn verdict(d: &crate::time_ahead::Dominance) -> String {
    verdict_words(
        d.dominates,
        "dominates",
        "does not dominate",
        d.resampled_share,
    )
}

/// The run-by-run comparison behind a verdict in words, with its share of resamples when known;
/// `None` where it was not computed.
pub fn run_by_run_words(d: &crate::time_ahead::Dominance) -> Option<String> {
    let r = d.run_by_run?;
    let words = verdict_words(
        r.earlier_run_by_run(),
        "earlier",
        "not earlier",
        d.run_by_run_share,
    );
    if r.theirs == 0 {
        return Some(format!(
            "run by run: the comparator warns of no violation, the curve of {} — {words}",
            r.ours
        ));
    }
    Some(format!(
        "run by run: of the comparator's {} warned violations, the curve warns of {} earlier, {} at the \
         same frame, {} later and {} not at all ({} warned of in all) — {words}",
        r.theirs, r.earlier, r.same, r.later, r.missed, r.ours
    ))
}

/// `base` (the risk measure in words), with the frame share and the forest said too when the model
/// mixes them in (`share`, `forest`): the reports then read the mix, not the chains' probability alone.
pub fn risk_words(base: &str, share: bool, forest: bool) -> String {
    match (share, forest) {
        (false, false) => base.to_owned(),
        (true, false) => {
            format!("{base}, mixed with the frame share where the model has one (avguard info)")
        }
        (false, true) => format!(
            "{base}, mixed with the forest's short-horizon share where the model has one (avguard info)"
        ),
        (true, true) => format!(
            "{base}, mixed with the frame share and the forest's short-horizon share where the model has them (avguard info)"
        ),
    }
}

/// How a comparator is named in the reports.
pub fn comparator_label(name: &str, rule: Option<&str>) -> String {
    match (name, rule) {
        ("baseline", _) => "reactive baseline (law antecedent)".to_owned(),
        ("rss", _) => "RSS (CARLA defaults)".to_owned(),
        ("rss_tuned", _) => "RSS tuned on the calibration runs".to_owned(),
        ("reactive_rule", Some(text)) => format!("best reactive rule: {text}"),
        ("reactive_rule", None) => "best reactive rule".to_owned(),
        (other, _) => other.to_owned(),
    }
}

/// Prediction % and false-alarm % for θ = 0.00, 0.01, ..., 1.00, from each run's highest pre-violation
/// risk: a violating run is predicted at θ iff that maximum is ≥ θ, a safe run false-alarms iff it is.
pub fn tradeoff_curve(runs: &[&RunScore]) -> Vec<(f64, f64, f64)> {
    let violating: Vec<f64> = runs
        .iter()
        .filter(|r| r.violated)
        .map(|r| r.max_risk)
        .collect();
    let safe: Vec<f64> = runs
        .iter()
        .filter(|r| !r.violated)
        .map(|r| r.max_risk)
        .collect();
    let pct = |xs: &[f64], theta: f64| {
        if xs.is_empty() {
            0.0
        } else {
            100.0 * xs.iter().filter(|&&m| m >= theta).count() as f64 / xs.len() as f64
        }
    };
    (0..=100)
        .map(|i| {
            let theta = f64::from(i) / 100.0;
            (theta, pct(&violating, theta), pct(&safe, theta))
        })
        .collect()
}

/// Chooses up to `n` runs to plot at threshold `key`: violating runs predicted earliest first, then
/// violations that were missed, then false alarms — round-robin, so a reader sees a success, a miss and a
/// false alarm when they exist. `trace` looks up a run's risk trace.
pub fn pick_traces<'a>(
    runs: &[&'a RunScore],
    key: &str,
    n: usize,
    trace: impl Fn(&'a RunScore) -> Option<RiskTrace>,
) -> Vec<RiskTrace> {
    let lead = |r: &RunScore| r.alarms.get(key).and_then(|a| a.lead_s);
    let mut predicted: Vec<&'a RunScore> =
        runs.iter().copied().filter(|r| lead(r).is_some()).collect();
    predicted.sort_by(|a, b| lead(b).unwrap_or(0.0).total_cmp(&lead(a).unwrap_or(0.0)));
    let missed = runs
        .iter()
        .copied()
        .filter(|r| r.violated && lead(r).is_none())
        .collect();
    let false_alarms = runs
        .iter()
        .copied()
        .filter(|r| r.alarms.get(key).is_some_and(|a| a.false_alarm))
        .collect();
    let mut queues: Vec<std::collections::VecDeque<&'a RunScore>> =
        vec![predicted.into(), missed, false_alarms];
    let mut chosen = Vec::new();
    while chosen.len() < n && queues.iter().any(|q| !q.is_empty()) {
        for q in &mut queues {
            if chosen.len() < n {
                if let Some(run) = q.pop_front() {
                    chosen.push(run);
                }
            }
        }
    }
    chosen.into_iter().filter_map(trace).collect()
}

/// Formats an optional number with `digits` decimals, or "–" when absent.
fn fmt_opt(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "–".to_owned(), |v| format!("{v:.digits$}"))
}

#[cfg(test)]
mod tests;
