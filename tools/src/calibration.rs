//! Calibrating a model's alarm thresholds on logs: the library side of `avguard calibrate`, also used by
//! `avguard evaluate` and the Python front door.
//!
//! Every calibration log goes through a fresh `monitor::Session` (as `score` does); per property the
//! risk series before the first violation is handed to `monitor::calibrate::calibrate`, which picks θ so
//! that the one-sided Clopper–Pearson upper bound of the per-run false-alarm rate is at most the target.
//! The debounce is chosen on selection runs disjoint from the calibration runs (e.g. the training runs),
//! so the bound keeps its full confidence; without them, on the calibration runs with the confidence split
//! between the options. The calibration logs must not be the training logs: their risks would be
//! optimistic.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context};
use monitor::calibrate::{calibrate, CalibrateConfig, CalibrationRun};
use monitor::{Model, RiskMeasure, Session, SessionConfig};

use crate::rss_tuned;
use crate::score::run_series;
use crate::time_ahead::RunSeries;
use laws::rss::RssParams;

/// Options of a calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrateOptions {
    /// Target false-alarm rate (fraction of safe runs), in (0, 1).
    pub target_false_alarm: f64,
    /// Confidence of the bound.
    pub confidence: f64,
    /// Debounce lengths offered, frames (chosen among on the selection runs).
    pub debounce_frames: Vec<u32>,
    /// Calibrate P(unsafe within this many seconds) instead of P(eventually unsafe).
    pub horizon_s: Option<f64>,
    /// Bound the false-alarm rate within every scenario kind of the calibration runs (see
    /// `monitor::calibrate`, "Per group") instead of over all of them.
    pub per_scenario: bool,
    /// The false-alarm target of the threshold that a collision property's interventions use
    /// (`monitor::PropertyModel::enforcement`), calibrated without debounce on the same runs; `None`:
    /// interventions use the alarm's threshold.
    pub enforce_target_false_alarm: Option<f64>,
}

/// The default false-alarm target of a collision property's interventions: on the design runs (seed
/// 9000, the demo's model, 200 runs of each of eight scenario kinds) slowing down at the θ of a 20 %
/// target left 52 collisions against 155 at the alarm's θ (10 % target) and 90 at a 40 % target, with the
/// laws' violations unchanged (`docs/MEASUREMENTS.md`, session 21). Held out (seed 15000, eleven kinds):
/// 102 collisions against 171 at the alarm's θ and 291 without enforcement (session 23).
pub const DEFAULT_ENFORCE_TARGET: f64 = 0.2;

impl CalibrateOptions {
    /// Refuses options no calibration could use — a target or confidence outside (0, 1), no debounce
    /// length or one of zero frames, a horizon or intervention target out of range — before any log
    /// is read.
    ///
    /// # Errors
    /// The first such option, named.
    pub fn check(&self) -> anyhow::Result<()> {
        CalibrateConfig {
            target_false_alarm: self.target_false_alarm,
            confidence: self.confidence,
            debounce_frames: self.debounce_frames.clone(),
            horizon_steps: None,
            per_group: self.per_scenario,
        }
        .check()?;
        if let Some(h) = self.horizon_s {
            if !(h.is_finite() && h > 0.0) {
                bail!("horizon {h} s is not a positive number of seconds");
            }
        }
        if let Some(t) = self.enforce_target_false_alarm {
            if !(t > 0.0 && t < 1.0) {
                bail!("the interventions' false-alarm target {t} is outside (0, 1)");
            }
        }
        Ok(())
    }
}

impl Default for CalibrateOptions {
    /// 10 % false alarms with 95 % confidence over all runs, debounce 1, 2, 3 or 5 frames, P(eventually);
    /// a collision property's interventions at [`DEFAULT_ENFORCE_TARGET`].
    fn default() -> Self {
        CalibrateOptions {
            target_false_alarm: 0.1,
            confidence: 0.95,
            debounce_frames: vec![1, 2, 3, 5],
            horizon_s: None,
            per_scenario: false,
            enforce_target_false_alarm: Some(DEFAULT_ENFORCE_TARGET),
        }
    }
}

/// What [`calibrate_logs`] did.
#[derive(Debug)]
pub struct CalibratedLogs {
    /// Per property, the calibration stored or why there is none.
    pub results: Vec<PropertyCalibration>,
    /// Per collision property with a violating calibration run, RSS tuned to the target on the
    /// calibration runs (also stored in the model, [`rss_tuned::tune_to_target`]).
    pub rss_tuned: Vec<rss_tuned::TunedRss>,
    /// Calibration runs read.
    pub n_runs: usize,
    /// Their scenario kinds, one per run.
    pub kinds: Vec<String>,
    /// Selection runs read (0: the debounce was chosen on the calibration runs, or not chosen).
    pub n_selection: usize,
    /// Logs that could not be read, with why (they are skipped).
    pub errors: crate::batch::Failures,
}

/// `avguard calibrate` on a model in memory (also the Python package's `Model.calibrate`): expands the
/// calibration logs and the selection logs (`select`, used only when several debounce lengths are
/// offered), refuses a log that is both, reads every log through a fresh session of `model`, and
/// calibrates every property (see [`calibrate_model`]). Unreadable logs are skipped and returned; none
/// readable is an error.
pub fn calibrate_logs(
    model: &mut Model,
    logs: &[PathBuf],
    select: &[PathBuf],
    opts: &CalibrateOptions,
) -> anyhow::Result<CalibratedLogs> {
    opts.check()?;
    let shared = Arc::new(model.clone());
    let measure = RiskMeasure::resolve(&shared, opts.horizon_s, false)?;
    let logs = crate::batch::expand_logs(logs)?;
    let select_logs = if select.is_empty() || opts.debounce_frames.len() < 2 {
        Vec::new()
    } else {
        crate::batch::expand_logs(select)?
    };
    disjoint(&select_logs, &logs)?;
    let variants = rss_tuned::model_variants(model);
    let LogSeries {
        series,
        first_dangerous,
        kinds,
        mut errors,
    } = series_of_logs(&shared, &measure, &logs, &variants, "calibrating")?;
    let selection = if select_logs.is_empty() {
        Vec::new()
    } else {
        let read = series_of_logs(
            &shared,
            &measure,
            &select_logs,
            &[],
            "choosing the debounce",
        )?;
        let (selection, select_errors) = (read.series, read.errors);
        errors.extend(select_errors);
        if selection.is_empty() {
            bail!(
                "no selection log could be read ({} given){}",
                select_logs.len(),
                crate::batch::first_failure(&errors)
            );
        }
        selection
    };
    if series.is_empty() {
        bail!(
            "no calibration log could be read ({} given){}",
            logs.len(),
            crate::batch::first_failure(&errors)
        );
    }
    let results = calibrate_model(model, &selection, &series, &kinds, opts)?;
    let rss_tuned = rss_tuned::tune_to_target(
        model,
        &variants,
        &series,
        &first_dangerous,
        opts.target_false_alarm,
        |_, _| true,
    )?;
    Ok(CalibratedLogs {
        results,
        rss_tuned,
        n_runs: series.len(),
        kinds,
        n_selection: selection.len(),
        errors,
    })
}

/// Fails when a log is both a selection and a calibration log: the bound would no longer hold.
pub fn disjoint(select_logs: &[PathBuf], logs: &[PathBuf]) -> anyhow::Result<()> {
    let canonical = |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
    let calibration: std::collections::HashSet<PathBuf> = logs.iter().map(canonical).collect();
    match select_logs.iter().find(|p| calibration.contains(&canonical(p))) {
        Some(p) => bail!(
            "{} is both a --select log and a calibration log; the debounce must be chosen on other runs",
            p.display()
        ),
        None => Ok(()),
    }
}

/// What happened to one property.
#[derive(Debug, Clone)]
pub struct PropertyCalibration {
    /// The property.
    pub name: String,
    /// The stored calibration, or why there is none.
    pub result: Result<monitor::calibrate::Calibration, String>,
    /// For a collision property calibrated with an enforcement target, the threshold its interventions
    /// use, or why there is none (they then use the alarm's); `None` otherwise.
    pub enforcement: Option<Result<monitor::calibrate::Calibration, String>>,
    /// The property's safe calibration runs per scenario kind (kinds with at least one, by name): the
    /// groups of a per-scenario calibration.
    pub safe_runs_by_kind: Vec<(String, usize)>,
}

impl PropertyCalibration {
    /// The few-runs notes of the calibration ([`monitor::calibrate::few_runs_note`], at the confidence θ
    /// was placed at): one for the pooled runs, or, calibrated `per_scenario` over two kinds or more, one
    /// per kind whose safe runs are too few at the confidence split between the kinds, each beginning
    /// with the kind. `n_debounce_options` lengths were offered, chosen on selection runs when
    /// `chosen_on_selection`. No note for a property not calibrated.
    pub fn few_runs_notes(
        &self,
        n_debounce_options: usize,
        chosen_on_selection: bool,
        per_scenario: bool,
    ) -> Vec<String> {
        use monitor::calibrate::{few_runs_note, placement_confidence, split_confidence};
        let Ok(c) = &self.result else {
            return Vec::new();
        };
        let placed = placement_confidence(c.confidence, n_debounce_options, chosen_on_selection);
        let kinds = &self.safe_runs_by_kind;
        if !per_scenario || kinds.len() < 2 {
            return few_runs_note(c.n_safe_runs, c.target_false_alarm, placed)
                .into_iter()
                .collect();
        }
        let each = split_confidence(placed, kinds.len());
        kinds
            .iter()
            .filter_map(|(kind, n)| {
                let note = few_runs_note(*n, c.target_false_alarm, each)?;
                Some(format!("scenario kind `{kind}`: {note}"))
            })
            .collect()
    }
}

/// Runs read from logs for a calibration ([`series_of_logs`]).
pub struct LogSeries {
    /// Per run, one series per property.
    pub series: Vec<Vec<RunSeries>>,
    /// Per run, the first frame each RSS variant asked for finds dangerous.
    pub first_dangerous: Vec<Vec<Option<usize>>>,
    /// Per run, its scenario kind.
    pub kinds: Vec<String>,
    /// Logs that could not be read, with why.
    pub errors: crate::batch::Failures,
}

/// Every log's per-property series, the first frame each of `rss_variants` finds dangerous in it, and its
/// scenario kind (logs that cannot be read are returned by name).
pub fn series_of_logs(
    model: &Arc<Model>,
    measure: &RiskMeasure,
    logs: &[PathBuf],
    rss_variants: &[RssParams],
    label: &str,
) -> anyhow::Result<LogSeries> {
    let session =
        Session::new(model, &SessionConfig::default()).context("cannot start a session")?;
    let period = model.frame_period_s();
    let progress = crate::progress::bar(logs.len() as u64, label);
    let results = crate::batch::map_logs(
        logs,
        Some(period),
        || session.clone(),
        |session, log| {
            Ok((
                run_series(&log.frames, session, measure, None),
                rss_tuned::first_dangerous(&log.frames, rss_variants),
                log.meta.scenario,
            ))
        },
        || progress.inc(1),
    );
    progress.finish_and_clear();
    let mut out = LogSeries {
        series: Vec::new(),
        first_dangerous: Vec::new(),
        kinds: Vec::new(),
        errors: Vec::new(),
    };
    for (path, r) in results {
        match r {
            Ok((s, first, kind)) => {
                out.series.push(s);
                out.first_dangerous.push(first);
                out.kinds.push(kind);
            }
            Err(e) => {
                let why = crate::batch::reason(&path, &e);
                out.errors.push((path, why));
            }
        }
    }
    Ok(out)
}

/// Property `p`'s calibration view of the runs `r` of `series` for which `keep(r)` holds, each in the
/// group of its scenario kind `kinds[r]` (none when `kinds` is shorter).
fn runs_of<'a>(
    series: &'a [Vec<RunSeries>],
    kinds: &'a [String],
    p: usize,
    keep: impl Fn(usize) -> bool,
) -> Vec<CalibrationRun<'a>> {
    series
        .iter()
        .enumerate()
        .filter(|&(r, _)| keep(r))
        .filter_map(|(r, per_property)| {
            let group = kinds.get(r).map_or("", String::as_str);
            Some((group, per_property.get(p)?))
        })
        .map(|(group, s)| CalibrationRun {
            group,
            t: &s.t,
            risk: &s.risk,
            violation: s.unsafe_now.iter().position(|&u| u),
        })
        .collect()
}

/// Calibrates every property of `model` on the runs `series` (one entry per run, one series per
/// property; `kinds`: each run's scenario kind, the groups of `opts.per_scenario`), the debounce chosen
/// on the runs `selection` (disjoint from `series`; empty: on `series` with the confidence split, see
/// `monitor::calibrate`), and stores the results in the model. Properties that cannot be calibrated (too
/// few safe runs) keep no calibration and say why.
pub fn calibrate_model(
    model: &mut Model,
    selection: &[Vec<RunSeries>],
    series: &[Vec<RunSeries>],
    kinds: &[String],
    opts: &CalibrateOptions,
) -> anyhow::Result<Vec<PropertyCalibration>> {
    calibrate_model_on(model, selection, series, kinds, opts, |_, _| true)
}

/// [`calibrate_model`] with property number `p` calibrated only on the runs `r` for which `include(r, p)`
/// holds: the population its false-alarm rate is promised for (e.g. the runs of the scenario kinds that
/// exercise the property, when it is judged on those). `include` is asked about the runs of `selection`
/// too, by their index in `selection`.
pub fn calibrate_model_on(
    model: &mut Model,
    selection: &[Vec<RunSeries>],
    series: &[Vec<RunSeries>],
    kinds: &[String],
    opts: &CalibrateOptions,
    include: impl Fn(usize, usize) -> bool,
) -> anyhow::Result<Vec<PropertyCalibration>> {
    opts.check()?;
    let names: Vec<String> = model
        .properties()
        .iter()
        .map(|p| p.name().to_owned())
        .collect();
    let mut out = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let horizon_steps = match opts.horizon_s {
            None => None,
            Some(h) => {
                let m = Arc::new(model.clone());
                let measure = RiskMeasure::resolve(&m, Some(h), false)?;
                match measure {
                    RiskMeasure::Within(idx) => idx
                        .get(i)
                        .and_then(|&k| model.properties()[i].table().horizons_steps().get(k))
                        .copied(),
                    _ => None,
                }
            }
        };
        let (selection_runs, runs) = (
            runs_of(selection, &[], i, |r| include(r, i)),
            runs_of(series, kinds, i, |r| include(r, i)),
        );
        let cfg = CalibrateConfig {
            target_false_alarm: opts.target_false_alarm,
            confidence: opts.confidence,
            debounce_frames: opts.debounce_frames.clone(),
            horizon_steps,
            per_group: opts.per_scenario,
        };
        let result = match calibrate(&selection_runs, &runs, &cfg) {
            Ok(c) => {
                model.set_calibration(name, c.clone())?;
                Ok(c)
            }
            Err(e) => Err(e.to_string()),
        };
        // A collision property's interventions: the same runs, their own target, no debounce (a slow-down
        // a frame late costs lead). Any earlier enforcement threshold is replaced, or dropped when none.
        let enforcement = match opts.enforce_target_false_alarm {
            Some(target) if model.properties()[i].is_collision() => {
                let cfg = CalibrateConfig {
                    target_false_alarm: target,
                    debounce_frames: vec![1],
                    ..cfg
                };
                let e = calibrate(&[], &runs, &cfg).map_err(|e| e.to_string());
                model.set_enforcement(name, e.as_ref().ok().cloned())?;
                Some(e)
            }
            _ => {
                if model.properties()[i].enforcement().is_some() {
                    model.set_enforcement(name, None)?;
                }
                None
            }
        };
        let mut by_kind = std::collections::BTreeMap::<&str, usize>::new();
        for r in runs.iter().filter(|r| r.violation.is_none()) {
            *by_kind.entry(r.group).or_default() += 1;
        }
        out.push(PropertyCalibration {
            name: name.clone(),
            result,
            enforcement,
            safe_runs_by_kind: by_kind
                .into_iter()
                .map(|(k, n)| (k.to_owned(), n))
                .collect(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::PropertyCalibration;
    use monitor::calibrate::Calibration;

    fn calibrated(n_safe_runs: usize, by_kind: &[(&str, usize)]) -> PropertyCalibration {
        PropertyCalibration {
            name: "p".into(),
            result: Ok(Calibration {
                theta: 0.5,
                debounce_frames: 1,
                horizon_steps: None,
                target_false_alarm: 0.1,
                confidence: 0.95,
                n_safe_runs,
                n_false_alarms: 0,
                false_alarm_upper: 0.05,
                n_violating_runs: 0,
                n_predicted: 0,
                median_lead_s: None,
            }),
            enforcement: None,
            safe_runs_by_kind: by_kind.iter().map(|&(k, n)| (k.to_owned(), n)).collect(),
        }
    }

    #[test]
    fn per_scenario_notes_speak_of_each_kind_at_the_split_confidence() {
        let c = calibrated(150, &[("a", 100), ("b", 50)]);
        // Pooled at the full 95 %: 150 safe runs allow half of 10 % (P(X ≤ 8 | 150, 0.1) = 0.031 ≤ 0.05,
        // 8 ≥ 7.5), so no note.
        assert!(c.few_runs_notes(1, true, false).is_empty());
        // Per kind the 95 % is split two ways, 97.5 % each. By hand, P(X ≤ k | n, 10 %) ≤ 0.025:
        // n = 100: P(X ≤ 4) = 0.0237, P(X ≤ 5) = 0.0576, so 4 (4 %, under half the target);
        // n = 50: P(X ≤ 0) = 0.0052, P(X ≤ 1) = 0.0338, so 0.
        let notes = c.few_runs_notes(1, true, true);
        assert_eq!(notes.len(), 2, "{notes:?}");
        for (note, (kind, n, k, pct)) in notes
            .iter()
            .zip([("a", 100, 4, "4.0"), ("b", 50, 0, "0.0")])
        {
            let want = format!(
                "scenario kind `{kind}`: only {n} safe calibration runs: the 97.5 % bound at 10 % lets \
                 at most {k} of them alarm ({pct} %)"
            );
            assert!(note.starts_with(&want), "{note}");
        }
        // Four debounce lengths tried on the calibration runs split it further: 1 − 0.0125 / 2.
        let split = c.few_runs_notes(4, false, true);
        assert!(split[0].contains("the 99.38 % bound"), "{}", split[0]);
        // One kind only: the runs are pooled, and so is the note.
        let one = calibrated(60, &[("a", 60)]);
        let notes = one.few_runs_notes(1, true, true);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("only 60 safe calibration runs: the 95 % bound"),
            "{}",
            notes[0]
        );
        // Not calibrated: nothing to say.
        let none = PropertyCalibration {
            result: Err("too few".into()),
            ..one
        };
        assert!(none.few_runs_notes(1, true, true).is_empty());
    }
}
