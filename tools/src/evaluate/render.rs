//! The printed tables.

use monitor::select::AbstractionMode;

use super::{Evaluation, MIN_VIOLATING_FOR_PAIRS, ROBUST_SHARE};
use crate::report::{run_by_run_words, verdict};
use crate::time_ahead::{calibration_check, summarise, CurvePoint, Summary};

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{v:.1}%"))
}

fn secs(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{v:.1} s"))
}

/// One point of the curve in words, or why there is none.
fn curve_point(point: Option<CurvePoint>) -> String {
    point.map_or_else(
        || "no θ keeps false alarms that low".to_owned(),
        |o| {
            format!(
                "θ={:.3}: {:.1}% predicted, {:.1}% false alarms, lead {}",
                o.theta,
                o.predicted_pct,
                o.false_alarm_pct,
                secs(o.median_lead_s)
            )
        },
    )
}

fn row(label: &str, s: &Summary) -> String {
    format!(
        "  {label:<58} {:>9} {:>12} {:>11}",
        pct(s.predicted_pct),
        pct(s.false_alarm_pct),
        secs(s.median_lead_s)
    )
}

impl Evaluation {
    /// The printed tables: one per property with a violation among the test runs.
    pub fn render(&self) -> String {
        let mut out = format!(
            "held-out evaluation: learned on {} runs, calibrated on {}, tested on {} (no test run was used \
             to learn, select, calibrate or choose a rule)\n",
            self.n_learn, self.n_calibrate, self.n_test
        );
        for name in self.property_names() {
            let base_runs = self.runs_of(0, &name);
            let all = crate::time_ahead::summarise(base_runs.iter().map(|r| (*r, &r.baseline)));
            let n_viol = all.n_violating_runs;
            if n_viol == 0 {
                out.push_str(&format!(
                    "\n{name}: no violation among the {} test runs\n",
                    base_runs.len()
                ));
                continue;
            }
            out.push_str(&format!(
                "\n{name} — test runs: {}, {} safe\n  {:<58} {:>9} {:>12} {:>11}\n",
                crate::time_ahead::violating_words(&all),
                base_runs.len() - n_viol,
                "alarm",
                "predicted",
                "false alarms",
                "median lead"
            ));
            let mut auto_model = None;
            for (m, result) in self.models.iter().enumerate() {
                let runs = self.runs_of(m, &name);
                let mode = result.mode.as_str();
                for (key, _) in &self.thresholds {
                    let s = summarise(
                        runs.iter()
                            .filter_map(|r| r.alarms.get(key).map(|a| (*r, a))),
                    );
                    out.push_str(&row(&format!("avguard {mode} θ={key}"), &s));
                    out.push('\n');
                }
                let Some(c) = self.comparison(m, &name) else {
                    continue;
                };
                if let (Some(s), Some(cal)) = (
                    &c.calibrated,
                    result.model.property(&name).and_then(|p| p.calibration()),
                ) {
                    let label = format!(
                        "avguard {mode} calibrated θ={:.3}{} (target {:.0}%)",
                        cal.theta,
                        if cal.debounce_frames > 1 {
                            format!(", debounce {}", cal.debounce_frames)
                        } else {
                            String::new()
                        },
                        100.0 * cal.target_false_alarm
                    );
                    out.push_str(&row(&label, s));
                    out.push('\n');
                    // `evaluate` chooses the debounce on the learning runs, so θ was placed at the
                    // full confidence (a single length has nothing to choose: the same).
                    let notes = result
                        .calibrations
                        .iter()
                        .find(|c| c.name == name)
                        .map(|c| c.few_runs_notes(1, true, self.per_scenario))
                        .unwrap_or_default();
                    for note in notes {
                        out.push_str(&format!(
                            "    {note} (a larger --calibration-fraction gives more)\n"
                        ));
                    }
                    let check = calibration_check(&runs, cal.target_false_alarm, cal.confidence);
                    if let Some(check) = check.filter(|c| !c.holds) {
                        out.push_str(&format!("    {}\n", check.describe()));
                    }
                } else if let Some(Err(why)) = result
                    .calibrations
                    .iter()
                    .find(|c| c.name == name)
                    .map(|c| &c.result)
                {
                    out.push_str(&format!("  avguard {mode} not calibrated: {why}\n"));
                }
                if result.mode == AbstractionMode::Auto {
                    auto_model = Some(result);
                }
            }
            let (Some(auto), Some(a)) = (auto_model, self.auto_comparisons().get(&name)) else {
                continue;
            };
            let c = &a.comparison;
            let rule = auto
                .model
                .property(&name)
                .and_then(|p| p.reactive_rule())
                .map(|r| r.text());
            for (cname, s) in &c.comparators {
                let label = crate::report::comparator_label(cname, rule.as_deref());
                out.push_str(&row(&label, s));
                out.push('\n');
            }
            let budget_rules = &a.budget_rules;
            for b in budget_rules {
                let label = format!(
                    "rule for ≤ {:.0}% false alarms: {}",
                    b.budget_pct,
                    b.rule.text()
                );
                out.push_str(&row(&label, &b.summary));
                out.push('\n');
            }
            for t in &a.rss_tuned {
                match (&t.summary, t.response_scale) {
                    (Some(s), Some(scale)) if t.within_budget => {
                        let label = format!(
                            "RSS tuned to ≤ {:.0}% (response times × {scale}, ego {:.2} s)",
                            t.budget_pct,
                            t.ego_response_s.unwrap_or(0.0)
                        );
                        out.push_str(&row(&label, s));
                        out.push('\n');
                    }
                    (Some(s), Some(scale)) => {
                        out.push_str(&format!(
                            "  RSS tuned to ≤ {:.0}%: no response time keeps within it on the learning runs; \
                             the fewest false alarms there, {}, at × {scale}:\n",
                            t.budget_pct,
                            pct(t.learning.false_alarm_pct)
                        ));
                        let label = format!(
                            "RSS as near ≤ {:.0}% as it comes (ego {:.2} s)",
                            t.budget_pct,
                            t.ego_response_s.unwrap_or(0.0)
                        );
                        out.push_str(&row(&label, s));
                        out.push('\n');
                    }
                    _ => out.push_str(&format!(
                        "  RSS tuned to ≤ {:.0}%: no response time keeps within it on the learning runs \
                         (the fewest false alarms there: {})\n",
                        t.budget_pct,
                        pct(t.learning.false_alarm_pct)
                    )),
                }
            }
            out.push_str("  auto's curve at false-alarm budgets (best θ with at most that share of safe runs alarmed):\n");
            for b in &c.budgets {
                let point = curve_point(b.point);
                let spread = b.lead_interval_s.map_or_else(String::new, |[lo, hi]| {
                    format!(" ({lo:.1}–{hi:.1} s in 90% of resamples)")
                });
                out.push_str(&format!(
                    "    ≤ {:>2.0}% false alarms  {point}{spread}\n",
                    b.budget_pct
                ));
            }
            out.push_str("  auto's curve at each comparator's false-alarm rate:\n");
            for d in &c.dominance {
                let ours = curve_point(d.ours);
                out.push_str(&format!(
                    "    vs {:<10} {ours} — {}\n",
                    d.comparator,
                    verdict(d)
                ));
                if let Some(words) = run_by_run_words(d) {
                    out.push_str(&format!("      {words}\n"));
                }
            }
            for b in budget_rules {
                let ours = curve_point(b.dominance.ours);
                out.push_str(&format!(
                    "    vs rule ≤{:>2.0}%  {ours} — {}\n",
                    b.budget_pct,
                    verdict(&b.dominance)
                ));
                if let Some(words) = run_by_run_words(&b.dominance) {
                    out.push_str(&format!("      {words}\n"));
                }
            }
            for t in &a.rss_tuned {
                let Some(d) = &t.dominance else {
                    continue;
                };
                out.push_str(&format!(
                    "    vs RSS {}{:>2.0}%   {} — {}\n",
                    if t.within_budget { "≤" } else { "~" },
                    t.budget_pct,
                    curve_point(d.ours),
                    verdict(d)
                ));
                if let Some(words) = run_by_run_words(d) {
                    out.push_str(&format!("      {words}\n"));
                }
            }
            if let Some((cal, tuned, earlier)) = self.calibrated_against_rss(&name) {
                if let Some(rss) = &tuned.summary {
                    out.push_str(&format!(
                        "  calibrated θ against RSS {} the same {:.0}% target: {} / {} / {} against \
                         {} / {} / {} — {}\n",
                        if tuned.within_budget {
                            "tuned to"
                        } else {
                            "as near as it comes to"
                        },
                        tuned.budget_pct,
                        pct(cal.predicted_pct),
                        pct(cal.false_alarm_pct),
                        secs(cal.median_lead_s),
                        pct(rss.predicted_pct),
                        pct(rss.false_alarm_pct),
                        secs(rss.median_lead_s),
                        if earlier {
                            "earlier, with as many warned of and no more false alarms"
                        } else {
                            "not earlier"
                        }
                    ));
                }
            }
        }
        let (stored, budget) = self.dominated_pairs();
        out.push_str(&format!(
            "\ncomparator pairs the auto curve dominates (properties with at least \
             {MIN_VIOLATING_FOR_PAIRS} violating test runs): {} of {} against the baseline, RSS and the \
             stored rule; {} of {} against the rules written for each false-alarm budget\n\
             dominated in at least {:.0}% of the bootstrap resamples of the test runs: {} of {} and {} of {}; \
             in at most {:.0}%: {} of {} and {} of {} (the rest are within these runs' noise)\n\
             warned of earlier run by run: {} of {} and {} of {} (in at least {:.0}% of the resamples: {} and \
             {}; in at most {:.0}%: {} and {})\n",
            stored.dominated,
            stored.pairs,
            budget.dominated,
            budget.pairs,
            100.0 * ROBUST_SHARE,
            stored.dominated_in_most_resamples,
            stored.pairs,
            budget.dominated_in_most_resamples,
            budget.pairs,
            100.0 * (1.0 - ROBUST_SHARE),
            stored.dominated_in_few_resamples,
            stored.pairs,
            budget.dominated_in_few_resamples,
            budget.pairs,
            stored.earlier_run_by_run,
            stored.pairs,
            budget.earlier_run_by_run,
            budget.pairs,
            100.0 * ROBUST_SHARE,
            stored.earlier_in_most_resamples,
            budget.earlier_in_most_resamples,
            100.0 * (1.0 - ROBUST_SHARE),
            stored.earlier_in_few_resamples,
            budget.earlier_in_few_resamples,
        ));
        let tuned = self.rss_tuned_pairs();
        if tuned.pairs > 0 {
            out.push_str(&format!(
                "against RSS tuned to each false-alarm budget (collision properties): {} of {} dominated \
                 ({} in at least {:.0}% of the resamples, {} in at most {:.0}%); warned of earlier run by run: \
                 {} of {}\n",
                tuned.dominated,
                tuned.pairs,
                tuned.dominated_in_most_resamples,
                100.0 * ROBUST_SHARE,
                tuned.dominated_in_few_resamples,
                100.0 * (1.0 - ROBUST_SHARE),
                tuned.earlier_run_by_run,
                tuned.pairs,
            ));
        }
        out
    }
}
