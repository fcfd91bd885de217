//! `score.json` (INTERFACES §5), `report.md` and `report.html` from a set of per-log results; and
//! `score merge`, which does the same from the union of shard folders.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use monitor::{Model, Session, SessionConfig};
use serde_json::{json, Value};

use super::cache::{load_all, write_atomic};
use super::{FileResult, Settings};
use crate::report::{self, PropertyReport, Report, RiskTrace, StateRow};
use crate::time_ahead::{calibration_check, summarise, Comparison, RunScore};
use monitor::calibrate::CalibrationCheck;

/// Table 3 rows kept per property: the most visited states, then the riskiest visited ones.
const N_COMMON_STATES: usize = 6;
const N_RISKY_STATES: usize = 3;

/// Writes `score.json`, the reports, and (when the model is at hand) `states.json` into `out`. Returns
/// each calibrated property's [`CalibrationCheck`] on these runs.
pub fn write_outputs(
    out: &Path,
    settings: &Settings,
    results: &[FileResult],
    errors: &[(String, String)],
    model: Option<&Arc<Model>>,
    plot_runs: usize,
) -> anyhow::Result<Written> {
    let states = states_table(out, model)?;
    let mut runs: Vec<&RunScore> = results.iter().flat_map(|r| &r.scores).collect();
    runs.sort_by(|a, b| {
        (&a.run_id, &a.property, &a.scenario).cmp(&(&b.run_id, &b.property, &b.scenario))
    });
    let mut by_property: BTreeMap<&str, Vec<&RunScore>> = BTreeMap::new();
    for run in &runs {
        by_property
            .entry(run.property.as_str())
            .or_default()
            .push(run);
    }
    let thresholds = settings.threshold_pairs();
    let mut sections = Sections::default();
    let mut comparisons: BTreeMap<&str, Comparison> = BTreeMap::new();
    let checks: BTreeMap<&str, CalibrationCheck> = by_property
        .iter()
        .filter_map(|(property, prop_runs)| {
            let &(target, confidence) = settings.calibration_targets.get(*property)?;
            Some((*property, calibration_check(prop_runs, target, confidence)?))
        })
        .collect();
    for (property, prop_runs) in &by_property {
        let c = Comparison::of(prop_runs);
        sections.add(
            property,
            prop_runs,
            &c,
            settings,
            &thresholds,
            checks.get(property),
        )?;
        comparisons.insert(property, c);
    }
    let score = sections.into_score_json(&runs, errors, settings);
    write_atomic(
        &out.join("score.json"),
        serde_json::to_string_pretty(&score)?.as_bytes(),
    )?;

    let properties = by_property
        .iter()
        .map(|(name, prop_runs)| {
            let traces = plotted_traces(results, name, prop_runs, &thresholds, plot_runs);
            let rows = states.get(*name).cloned().unwrap_or_default();
            let mut report = PropertyReport::from_runs(name, prop_runs, &thresholds, rows, traces);
            if let Some(c) = comparisons.remove(name) {
                let calibration = settings.calibrated.get(*name).copied();
                let rule = settings.rules.get(*name).map(String::as_str);
                let rss_scale = settings.rss_tuned.get(*name).copied();
                report.add_comparison(c, calibration, rule, rss_scale);
            }
            if let Some(check) = checks.get(name) {
                report.notes.push(check.describe());
            }
            report
        })
        .collect();
    let report = Report {
        subtitle: format!(
            "{} logs, {} properties, model {}, thresholds {}.",
            results.len(),
            by_property.len(),
            settings.model_hash,
            thresholds
                .iter()
                .map(|(k, _)| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        risk_measure: settings.risk_measure_words(),
        properties,
    };
    write_atomic(
        &out.join("report.md"),
        report::render_markdown(&report).as_bytes(),
    )?;
    write_atomic(
        &out.join("report.html"),
        report::render_html(&report).as_bytes(),
    )?;
    let budgets = report
        .properties
        .iter()
        .map(|p| {
            let runs = (p.baseline.n_violating_runs, p.baseline.n_safe_runs);
            (p.name.clone(), runs, p.budgets.clone())
        })
        .collect();
    Ok(Written {
        calibration_checks: checks
            .into_iter()
            .map(|(name, check)| (name.to_owned(), check))
            .collect(),
        budgets,
    })
}

/// What [`write_outputs`] found beside the files it wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// Per calibrated property, its calibration checked on these runs.
    pub calibration_checks: Vec<(String, CalibrationCheck)>,
    /// Per property, its violating and safe runs and the curve at the false-alarm budgets (as
    /// `score.json`'s `budgets`).
    pub budgets: Vec<(String, (usize, usize), Vec<crate::time_ahead::BudgetPoint>)>,
}

/// The representative states per property: computed and written to `states.json` when the model is at
/// hand, else read back from a `states.json` a scoring run left (empty when there is none).
fn states_table(
    out: &Path,
    model: Option<&Arc<Model>>,
) -> anyhow::Result<BTreeMap<String, Vec<StateRow>>> {
    let states_path = out.join("states.json");
    if let Some(model) = model {
        let states = representative_states(model)?;
        write_atomic(&states_path, &serde_json::to_vec_pretty(&states)?)?;
    }
    match std::fs::read(&states_path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .with_context(|| format!("{}: corrupt", states_path.display())),
        Err(_) => Ok(BTreeMap::new()),
    }
}

/// The per-property sections of `score.json` (INTERFACES §5), each keyed by property name.
#[derive(Default)]
struct Sections {
    summary: serde_json::Map<String, Value>,
    baseline: serde_json::Map<String, Value>,
    comparators: serde_json::Map<String, Value>,
    calibrated: serde_json::Map<String, Value>,
    curve: serde_json::Map<String, Value>,
    budgets: serde_json::Map<String, Value>,
    dominance: serde_json::Map<String, Value>,
}

impl Sections {
    /// Adds one property's entries: the summary per threshold, the reactive baseline, the comparators
    /// (with the learned rule's text), the calibrated alarm, the warning curve and its dominance.
    fn add(
        &mut self,
        property: &str,
        prop_runs: &[&RunScore],
        c: &Comparison,
        settings: &Settings,
        thresholds: &[(String, f64)],
        check: Option<&CalibrationCheck>,
    ) -> anyhow::Result<()> {
        let rule_text = settings.rules.get(property).cloned();
        let mut cmp = serde_json::Map::new();
        for (name, s) in &c.comparators {
            let mut v = serde_json::to_value(s)?;
            if let (Some(obj), "reactive_rule", Some(text)) =
                (v.as_object_mut(), name.as_str(), &rule_text)
            {
                obj.insert("rule".into(), json!(text));
            }
            if let (Some(obj), "rss_tuned", Some(scale)) = (
                v.as_object_mut(),
                name.as_str(),
                settings.rss_tuned.get(property),
            ) {
                obj.insert("response_scale".into(), json!(scale));
            }
            cmp.insert(name.clone(), v);
        }
        self.comparators
            .insert(property.to_owned(), Value::Object(cmp));
        if let Some(s) = &c.calibrated {
            let cal = settings.calibrated.get(property);
            self.calibrated.insert(
                property.to_owned(),
                json!({
                    "theta": cal.map(|c| c.0),
                    "debounce_frames": cal.map(|c| c.1),
                    "summary": s,
                    "check": check,
                    "earlier_than_rss_tuned": c.calibrated_earlier_than("rss_tuned"),
                }),
            );
        }
        self.curve
            .insert(property.to_owned(), serde_json::to_value(&c.curve)?);
        self.budgets
            .insert(property.to_owned(), serde_json::to_value(&c.budgets)?);
        self.dominance
            .insert(property.to_owned(), serde_json::to_value(&c.dominance)?);
        let mut cells = serde_json::Map::new();
        for (key, _) in thresholds {
            let s = summarise(
                prop_runs
                    .iter()
                    .filter_map(|r| r.alarms.get(key).map(|a| (*r, a))),
            );
            cells.insert(key.clone(), serde_json::to_value(s)?);
        }
        self.summary
            .insert(property.to_owned(), Value::Object(cells));
        let b = summarise(prop_runs.iter().map(|r| (*r, &r.baseline)));
        self.baseline
            .insert(property.to_owned(), serde_json::to_value(b)?);
        Ok(())
    }

    /// The whole `score.json` document.
    fn into_score_json(
        self,
        runs: &[&RunScore],
        errors: &[(String, String)],
        settings: &Settings,
    ) -> Value {
        let errors: Vec<Value> = errors
            .iter()
            .map(|(file, error)| json!({"file": file, "error": error}))
            .collect();
        json!({
            "runs": runs,
            "summary": self.summary,
            "baseline": self.baseline,
            "comparators": self.comparators,
            "calibrated": self.calibrated,
            "curve": self.curve,
            "budgets": self.budgets,
            "dominance": self.dominance,
            "errors": errors,
            "settings": settings,
        })
    }
}

/// The risk traces a property's report plots: up to `plot_runs` runs picked at the middle threshold,
/// each with the series its log's result recorded.
fn plotted_traces(
    results: &[FileResult],
    property: &str,
    prop_runs: &[&RunScore],
    thresholds: &[(String, f64)],
    plot_runs: usize,
) -> Vec<RiskTrace> {
    let key = thresholds
        .get(thresholds.len() / 2)
        .map(|(k, _)| k.as_str())
        .unwrap_or_default();
    report::pick_traces(prop_runs, key, plot_runs, |run| {
        let record = results
            .iter()
            .filter(|f| f.scores.iter().any(|s| std::ptr::eq(s, run)))
            .flat_map(|f| &f.traces)
            .find(|t| t.property == property && (t.run_id.is_empty() || t.run_id == run.run_id))?;
        Some(RiskTrace {
            run_id: run.run_id.clone(),
            t: record.t.clone(),
            risk: record.risk.clone(),
            violation_t: run.violation_t,
        })
    })
}

/// Table 3 rows per property: the most visited states and the riskiest visited ones, in words.
fn representative_states(model: &Arc<Model>) -> anyhow::Result<BTreeMap<String, Vec<StateRow>>> {
    let session =
        Session::new(model, &SessionConfig::default()).context("cannot start a monitor session")?;
    let mut all = BTreeMap::new();
    for (p, property) in model.properties().iter().enumerate() {
        let pac = property.pac();
        let table = property.risk_table();
        let mut visited: Vec<(u32, u64, f64)> = (0..property.n_states() as u32)
            .filter_map(|s| {
                let (n, _) = pac.state(s)?;
                (n > 0).then(|| (s, n, table.eventually(s).unwrap_or(0.0)))
            })
            .collect();
        visited.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut chosen: Vec<(u32, u64, f64)> =
            visited.iter().take(N_COMMON_STATES).copied().collect();
        let mut risky = visited.clone();
        risky.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
        let extra: Vec<(u32, u64, f64)> = risky
            .into_iter()
            .filter(|s| !chosen.iter().any(|c| c.0 == s.0))
            .take(N_RISKY_STATES)
            .collect();
        chosen.extend(extra);
        chosen.sort_by(|a, b| a.2.total_cmp(&b.2).then(a.0.cmp(&b.0)));
        let rows = chosen
            .into_iter()
            .map(|(s, visits, p_violation)| StateRow {
                words: session.decode(p, s).unwrap_or_else(|| format!("state {s}")),
                p_violation,
                visits,
            })
            .collect();
        all.insert(property.name().to_owned(), rows);
    }
    Ok(all)
}

/// `avguard score merge`: the union of shard folders, written as one.
pub fn merge(shards: &[PathBuf], out: &Path, plot_runs: usize) -> anyhow::Result<()> {
    let mut settings: Option<Settings> = None;
    let mut results: Vec<FileResult> = Vec::new();
    let mut errors: Vec<(String, String)> = Vec::new();
    let mut states: Option<Vec<u8>> = None;
    for shard in shards {
        let text = std::fs::read_to_string(shard.join("settings.json")).with_context(|| {
            format!(
                "{}: not a score output folder (no settings.json)",
                shard.display()
            )
        })?;
        let s: Settings = serde_json::from_str(&text)
            .with_context(|| format!("{}: corrupt settings.json", shard.display()))?;
        if s.result_format != super::RESULT_FORMAT {
            bail!(
                "{}: scored in result format {}, which this avguard (format {}) does not merge; score \
                 it again",
                shard.display(),
                s.result_format,
                super::RESULT_FORMAT
            );
        }
        for (property, &(target, confidence)) in &s.calibration_targets {
            if !((0.0..=1.0).contains(&target) && (0.0..=1.0).contains(&confidence)) {
                bail!(
                    "{}: corrupt settings.json: {property}'s calibration target {target} or confidence \
                     {confidence} is not a fraction",
                    shard.display()
                );
            }
        }
        match &settings {
            None => settings = Some(s),
            Some(first) if *first != s => {
                bail!(
                    "{} was scored with another model or other options than {}",
                    shard.display(),
                    shards[0].display()
                )
            }
            Some(_) => {}
        }
        results.extend(load_all(shard)?);
        let score: Value = std::fs::read(shard.join("score.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null);
        if let Some(list) = score.get("errors").and_then(Value::as_array) {
            for e in list {
                let field = |k: &str| {
                    e.get(k)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                errors.push((field("file"), field("error")));
            }
        }
        if states.is_none() {
            states = std::fs::read(shard.join("states.json")).ok();
        }
    }
    let Some(settings) = settings else {
        bail!("no shard folders given")
    };
    results.sort_by(|a, b| a.file.cmp(&b.file));
    if let Some(pair) = results.windows(2).find(|w| w[0].file == w[1].file) {
        bail!("log {} was scored by more than one shard", pair[0].file);
    }
    errors.sort();
    std::fs::create_dir_all(out.join("runs"))
        .with_context(|| format!("{}: cannot create", out.display()))?;
    write_atomic(
        &out.join("settings.json"),
        &serde_json::to_vec_pretty(&settings)?,
    )?;
    if let Some(bytes) = states {
        write_atomic(&out.join("states.json"), &bytes)?;
    }
    for r in &results {
        write_atomic(
            &out.join("runs").join(format!("{}.json", r.file)),
            &serde_json::to_vec(r)?,
        )?;
    }
    write_outputs(out, &settings, &results, &errors, None, plot_runs)?;
    eprintln!(
        "merged {} logs from {} shards into {}",
        results.len(),
        shards.len(),
        out.join("score.json").display()
    );
    Ok(())
}
