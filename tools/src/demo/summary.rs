//! The demo's numbers: prediction per θ from the live risks (with the reactive baseline beside it), the
//! effect of enforcement, and the live-versus-batch agreement check.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use bridge::drive::DriveReport;
use laws::LawSet;
use monitor::{Model, Session, SessionConfig};
use scenarios::Scenario;

use super::train::TunedRss;
use crate::report::{self, PropertyReport, Report, RiskTrace};
use crate::time_ahead::{
    calibrated_is_earlier, dominance, first_alarm_score, score_run_calibrated, summarise,
    threshold_key, Comparison, Dominance, PairedRun, RunScore, RunSeries, Summary as Cell,
};

/// One scenario's outcome with and without enforcement.
#[derive(Debug, Clone)]
pub struct EffectRow {
    /// Scenario name.
    pub scenario: String,
    /// Runs driven in each pass.
    pub runs: usize,
    /// Runs violating a monitored law (other than no_collision) that the scenario stresses, without / with.
    pub violating: (usize, usize),
    /// Runs with a collision, without / with.
    pub colliding: (usize, usize),
}

/// Everything the demo reports.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Per property: its name and the scored enforcement-off runs of the scenarios that stress it.
    pub properties: Vec<(String, Vec<RunScore>)>,
    /// Thresholds, as (key, θ).
    pub thresholds: Vec<(String, f64)>,
    /// Per scenario.
    pub effect: Vec<EffectRow>,
    /// Risk values compared between the live bridge and a batch re-run of the same frames.
    pub n_risks_compared: usize,
    /// How many of those differ.
    pub n_risks_differing: usize,
    /// Interventions the bridge sent over both passes.
    pub n_interventions: u64,
    /// Per calibrated property: (θ, debounce frames).
    pub calibrated: Vec<(String, (f64, u32))>,
    /// Per property with one: its reactive rule as text.
    pub rules: Vec<(String, String)>,
    /// What the risk is, in words.
    pub risk_words: String,
    /// Per collision property with RSS tuned to its target on the calibration runs: the tuning, and the
    /// property's runs (as in `properties`) with `rss` that RSS's alarm.
    pub tuned_rss: Vec<(TunedRss, Vec<RunScore>)>,
}

/// The held-out runs driven through the bridge: `(scenario index, report)` with enforcement off and on,
/// and the interventions the bridge sent over both passes.
#[derive(Debug, Clone, Copy)]
pub struct Drives<'a> {
    /// Interventions ignored.
    pub off: &'a [(usize, DriveReport)],
    /// Interventions obeyed.
    pub on: &'a [(usize, DriveReport)],
    /// Interventions sent.
    pub n_interventions: u64,
}

impl Summary {
    /// Scores the enforcement-off runs with their live risks and compares the two passes.
    pub fn compute(
        model: &Model,
        laws: &LawSet,
        scenarios: &[Scenario],
        drives: Drives<'_>,
        thresholds: &[f64],
        tuned_rss: &[TunedRss],
    ) -> anyhow::Result<Summary> {
        let Drives {
            off,
            on,
            n_interventions,
        } = drives;
        let risk_words = crate::report::risk_words(
            "P(eventually violated)",
            model.mixes_frame_share(),
            model.mixes_forest(),
        );
        let thresholds: Vec<(String, f64)> =
            thresholds.iter().map(|&t| (threshold_key(t), t)).collect();
        let model = Arc::new(model.clone());
        let rss = laws::rss::RssParams::CARLA;
        let period_s = model.frame_period_s();
        let mut properties: Vec<(String, Vec<RunScore>)> = model
            .properties()
            .iter()
            .map(|p| (p.name().to_owned(), Vec::new()))
            .collect();
        let (mut n_compared, mut n_differing) = (0, 0);
        // Per property, the RSS tuned to it (if any) and its runs.
        let mut tuned: Vec<Option<(TunedRss, Vec<RunScore>)>> = model
            .properties()
            .iter()
            .map(|p| {
                tuned_rss
                    .iter()
                    .find(|t| t.property == p.name())
                    .map(|t| (t.clone(), Vec::new()))
            })
            .collect();
        for (s, run) in off {
            let scenario = &scenarios[*s];
            // The same frames through a fresh batch session: the unsafe and baseline flags, and the check
            // that the live bridge computed exactly the same risks.
            let mut session = Session::new(&model, &SessionConfig::default())?;
            let n = run.frames.len();
            let mut series: Vec<RunSeries> = vec![RunSeries::default(); model.properties().len()];
            for (k, frame) in run.frames.iter().enumerate() {
                let outcome = session.step(frame);
                for ((p, po), sr) in model
                    .properties()
                    .iter()
                    .zip(&outcome.properties)
                    .zip(&mut series)
                {
                    let live = run.risk.get(k).and_then(|r| r.risk.get(p.name())).copied();
                    n_compared += 1;
                    if live != Some(po.risk_eventually) {
                        n_differing += 1;
                    }
                    sr.t.push(frame.t);
                    sr.risk.push(live.unwrap_or(f64::NAN));
                    sr.unsafe_now.push(po.unsafe_now);
                    sr.baseline_alarm.push(po.baseline_alarm);
                    if p.reactive_rule().is_some() {
                        sr.rule_alarm.push(po.rule_alarm);
                    }
                    sr.rss_alarm.push(rss.dangerous(frame));
                }
            }
            debug_assert!(series.iter().all(|sr| sr.t.len() == n));
            let run_id = format!("{}-{}", scenario.name(), run.seed);
            for (i, ((p, sr), (_, scores))) in model
                .properties()
                .iter()
                .zip(&series)
                .zip(&mut properties)
                .enumerate()
            {
                if scenario.stresses().iter().any(|law| law == p.law()) {
                    let scored = score_run_calibrated(
                        &run_id,
                        scenario.name(),
                        p.name(),
                        sr,
                        &thresholds,
                        crate::score::calibrated_rule(&model, i, &monitor::RiskMeasure::Eventually),
                    );
                    if let Some((t, runs)) = &mut tuned[i] {
                        let first = run.frames.iter().position(|f| t.params.dangerous(f));
                        let mut r = scored.clone();
                        r.rss = Some(first_alarm_score(first, sr));
                        runs.push(r);
                    }
                    scores.push(scored);
                }
            }
        }
        let effect = scenarios
            .iter()
            .enumerate()
            .map(|(s, scenario)| -> anyhow::Result<EffectRow> {
                let count =
                    |runs: &[(usize, DriveReport)]| -> anyhow::Result<(usize, usize, usize)> {
                        let mut n = 0;
                        let mut violating = 0;
                        let mut colliding = 0;
                        for (_, run) in runs.iter().filter(|(i, _)| *i == s) {
                            n += 1;
                            colliding += usize::from(run.collision);
                            let violated = run.violations(laws, period_s)?;
                            violating += usize::from(violated.iter().any(|(law, _)| {
                                law != "no_collision"
                                    && scenario.stresses().iter().any(|s| s == law)
                                    && model.properties().iter().any(|p| p.law() == law)
                            }));
                        }
                        Ok((n, violating, colliding))
                    };
                let (n, v_off, c_off) = count(off)?;
                let (_, v_on, c_on) = count(on)?;
                Ok(EffectRow {
                    scenario: scenario.name().to_owned(),
                    runs: n,
                    violating: (v_off, v_on),
                    colliding: (c_off, c_on),
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Summary {
            risk_words,
            tuned_rss: tuned.into_iter().flatten().collect(),
            properties,
            thresholds,
            effect,
            n_risks_compared: n_compared,
            n_risks_differing: n_differing,
            n_interventions,
            calibrated: model
                .properties()
                .iter()
                .filter_map(|p| {
                    let c = p.calibration()?;
                    Some((p.name().to_owned(), (c.theta, c.debounce_frames)))
                })
                .collect(),
            rules: model
                .properties()
                .iter()
                .filter_map(|p| Some((p.name().to_owned(), p.reactive_rule()?.text())))
                .collect(),
        })
    }

    /// Prints the two tables and the agreement check.
    pub fn print(&self, enforcement: &str) -> std::io::Result<()> {
        crate::outln!(
            "\nPrediction with enforcement off (risk = {}, as sent live by the bridge)",
            self.risk_words
        )?;
        let mut header = format!("{:<16} {:>5} {:>5} |", "property", "viol.", "safe");
        for (key, _) in &self.thresholds {
            header.push_str(&format!(" θ={key:<4} pred  lead  FA  |"));
        }
        header.push_str(" baseline pred  lead  FA");
        crate::outln!("{header}")?;
        for (name, runs) in &self.properties {
            let refs: Vec<&RunScore> = runs.iter().collect();
            let n_viol = refs.iter().filter(|r| r.violated).count();
            let mut line = format!("{:<16} {:>5} {:>5} |", name, n_viol, refs.len() - n_viol);
            for (key, _) in &self.thresholds {
                let s = summarise(
                    refs.iter()
                        .filter_map(|r| r.alarms.get(key).map(|a| (*r, a))),
                );
                line.push_str(&format!(
                    "       {:>4} {:>5} {:>4} |",
                    pct(s.predicted_pct),
                    secs(s.median_lead_s),
                    pct(s.false_alarm_pct)
                ));
            }
            let b = summarise(refs.iter().map(|r| (*r, &r.baseline)));
            line.push_str(&format!(
                "          {:>4} {:>5} {:>4}",
                pct(b.predicted_pct),
                secs(b.median_lead_s),
                pct(b.false_alarm_pct)
            ));
            crate::outln!("{line}")?;
        }
        self.print_comparators()?;
        crate::outln!("(pred = % of violating runs alarmed strictly before the violation; lead = median seconds ahead;")?;
        crate::outln!(
            " FA = % of safe runs with an alarm; baseline = alarm when the law's antecedent holds)"
        )?;
        crate::outln!("\nEffect of enforcement (slow-down at {enforcement}; AV version of the paper's Table 1)")?;
        crate::outln!(
            "{:<18} {:>5} | {:>22} | {:>22}",
            "scenario",
            "runs",
            "monitored law violations off → on",
            "collisions off → on"
        )?;
        for row in &self.effect {
            crate::outln!(
                "{:<18} {:>5} | {:>9} → {:<10} | {:>9} → {:<10}",
                row.scenario,
                row.runs,
                frac(row.violating.0, row.runs),
                frac(row.violating.1, row.runs),
                frac(row.colliding.0, row.runs),
                frac(row.colliding.1, row.runs)
            )?;
        }
        crate::outln!("interventions sent by the bridge: {}", self.n_interventions)?;
        crate::outln!(
            "live vs batch: {} risk values compared, {} differ",
            self.n_risks_compared,
            self.n_risks_differing
        )?;
        Ok(())
    }

    /// Writes report.md and report.html for the enforcement-off runs.
    pub fn write_reports(
        &self,
        out: &Path,
        off: &[(usize, DriveReport)],
        model: &Model,
    ) -> anyhow::Result<()> {
        let key = self
            .thresholds
            .get(self.thresholds.len() / 2)
            .map(|(k, _)| k.clone())
            .unwrap_or_default();
        let properties = self
            .properties
            .iter()
            .map(|(name, runs)| {
                let refs: Vec<&RunScore> = runs.iter().collect();
                let traces = report::pick_traces(&refs, &key, 3, |run| {
                    let (_, drive) = off
                        .iter()
                        .find(|(_, d)| run.run_id.ends_with(&format!("-{}", d.seed)))?;
                    Some(RiskTrace {
                        run_id: run.run_id.clone(),
                        t: drive.frames.iter().map(|f| f.t).collect(),
                        risk: drive
                            .risk
                            .iter()
                            .map(|r| r.risk.get(name).copied().unwrap_or(f64::NAN))
                            .collect(),
                        violation_t: run.violation_t,
                    })
                });
                PropertyReport::from_runs(name, &refs, &self.thresholds, Vec::new(), traces)
            })
            .collect();
        let report = Report {
            subtitle: format!(
                "avguard demo: held-out runs driven through the live bridge with enforcement off; {} properties.",
                model.properties().len()
            ),
            risk_measure: self.risk_words.clone(),
            properties,
        };
        let md = out.join("report.md");
        std::fs::write(&md, report::render_markdown(&report))
            .with_context(|| format!("{}: cannot write", md.display()))?;
        let html = out.join("report.html");
        std::fs::write(&html, report::render_html(&report))
            .with_context(|| format!("{}: cannot write", html.display()))
    }
}

impl Summary {
    /// The calibrated alarm and the comparators per property, and the curve at each comparator's
    /// false-alarm rate.
    fn print_comparators(&self) -> std::io::Result<()> {
        crate::outln!(
            "\nCalibrated alarm and comparators on the same held-out runs (enforcement off)"
        )?;
        let row = |label: &str, s: &Cell| {
            crate::outln!(
                "  {label:<60} {:>5} {:>6} {:>5}",
                pct(s.predicted_pct),
                secs(s.median_lead_s),
                pct(s.false_alarm_pct)
            )
        };
        for (name, runs) in &self.properties {
            let refs: Vec<&RunScore> = runs.iter().collect();
            let all = crate::time_ahead::summarise(runs.iter().map(|r| (r, &r.baseline)));
            crate::outln!(
                "{name} ({}, {} safe runs)              pred   lead    FA",
                crate::time_ahead::violating_words(&all),
                refs.len() - all.n_violating_runs
            )?;
            let c = Comparison::of(&refs);
            let cal = self
                .calibrated
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, c)| *c);
            if let (Some(s), Some((theta, m))) = (&c.calibrated, cal) {
                let debounce = if m > 1 {
                    format!(", debounce {m} frames")
                } else {
                    String::new()
                };
                row(&format!("avguard calibrated θ={theta:.3}{debounce}"), s)?;
            }
            let rule = self
                .rules
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, r)| r.as_str());
            for (cname, s) in &c.comparators {
                row(&crate::report::comparator_label(cname, rule), s)?;
            }
            for d in &c.dominance {
                let ours = ours_words(d);
                crate::outln!(
                    "    curve at {}'s false-alarm rate: {ours} — {}",
                    d.comparator,
                    crate::report::verdict(d)
                )?;
                if let Some(words) = crate::report::run_by_run_words(d) {
                    crate::outln!("      {words}")?;
                }
            }
            if let Some((t, runs)) = self.tuned_rss.iter().find(|(t, _)| &t.property == name) {
                self.print_tuned_rss(t, runs, &c, &row)?;
            }
        }
        Ok(())
    }

    /// RSS tuned on the calibration runs to `t`'s target, on the held-out `runs`: its row, the curve at
    /// its false-alarm rate, and the calibrated alarm against it.
    fn print_tuned_rss(
        &self,
        t: &TunedRss,
        runs: &[RunScore],
        c: &Comparison,
        row: &dyn Fn(&str, &Cell) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let s = summarise(runs.iter().filter_map(|r| r.rss.as_ref().map(|a| (r, a))));
        let label = if t.within_target {
            format!(
                "RSS tuned to ≤ {:.0}% FA on the calibration runs (ego {:.2} s)",
                100.0 * t.target,
                t.params.ego.response_time_s
            )
        } else {
            format!(
                "RSS with its fewest FA on the calibration runs (ego {:.2} s)",
                t.params.ego.response_time_s
            )
        };
        row(&label, &s)?;
        if !t.within_target {
            crate::outln!(
                "    (response times × {}: no response time keeps RSS within {:.0}% there; the fewest: {})",
                t.scale,
                100.0 * t.target,
                pct(t.calibration.false_alarm_pct)
            )?;
        }
        let paired: Vec<PairedRun<'_>> = runs
            .iter()
            .filter_map(|r| PairedRun::of(r, |r| r.rss.as_ref()))
            .collect();
        let d = dominance("rss_tuned", &s, &c.curve).resampled(&paired);
        let ours = ours_words(&d);
        crate::outln!(
            "    curve at tuned RSS's false-alarm rate: {ours} — {}",
            crate::report::verdict(&d)
        )?;
        if let Some(cal) = &c.calibrated {
            crate::outln!(
                "    calibrated alarm ({} predicted, lead {}, {} FA) against it: {}",
                pct(cal.predicted_pct),
                secs(cal.median_lead_s),
                pct(cal.false_alarm_pct),
                if calibrated_is_earlier(cal, &s) {
                    "earlier, with as many warned of and no more false alarms"
                } else {
                    "not earlier"
                }
            )?;
        }
        Ok(())
    }
}

/// The curve's point at a comparator's false-alarm rate, in words.
fn ours_words(d: &Dominance) -> String {
    d.ours.map_or_else(
        || "no θ keeps false alarms that low".to_owned(),
        |o| {
            format!(
                "θ={:.3}: {} predicted, lead {}, {} FA",
                o.theta,
                pct(Some(o.predicted_pct)),
                secs(o.median_lead_s),
                pct(Some(o.false_alarm_pct))
            )
        },
    )
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{v:.0}%"))
}

fn secs(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{v:.1}"))
}

fn frac(n: usize, of: usize) -> String {
    if of == 0 {
        "–".into()
    } else {
        format!("{n} ({:.0}%)", 100.0 * n as f64 / of as f64)
    }
}
