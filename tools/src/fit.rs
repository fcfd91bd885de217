//! Learning a model from logs: the library side of `avguard learn`, also used by `avguard evaluate` and
//! the Python front door.
//!
//! The laws are the `*.law` files of a folder in sorted name order (embedded in the model, which is then
//! self-contained). The properties come from a properties file, else `DIR/properties.toml` when it exists,
//! else one property per law (laws with more than 12 predicates are left out and named). Every log is
//! recorded once, in parallel ([`monitor::select::AutoPlan::recorder`]); a log that cannot be read is
//! reported by name and skipped. Then each property's abstraction is chosen (`auto`) or kept (`fixed`),
//! its reactive comparator rule picked, and the model built ([`monitor::select`]).
//!
//! While reading, each run's first collision frame is kept as its contact profile, from which the fit
//! judges whether the logs' road users are reported late ([`laws::geometry::latency`]); `learn` and
//! `evaluate` say so when they clearly are.

use std::path::{Path, PathBuf};

use anyhow::Context;
use laws::geometry::latency::{self, ContactProfile, LatencyEstimate};
use laws::LawSource;
use monitor::select::data::RunRecord;
use monitor::select::{AbstractionMode, AutoPlan, PropertyReport, SearchConfig};
use monitor::spec::{parse_properties_toml, PropertySpec};
use monitor::{BuildConfig, Model, Plan, ResolvedProperty};
use serde::{Deserialize, Serialize};

/// Options of a fit.
#[derive(Debug, Clone)]
pub struct FitOptions {
    /// Smoothing, PAC, horizons.
    pub build: BuildConfig,
    /// How predicates are chosen.
    pub mode: AbstractionMode,
    /// The search's options (`auto`), also the folds of the fixed abstraction's score.
    pub search: SearchConfig,
    /// How late the logs report road users (`build.perception_latency_s` is set from it).
    pub latency: PerceptionLatency,
}

/// How late the logs report road users, as `learn --perception-latency` takes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PerceptionLatency {
    /// Estimated from the learning runs' collisions ([`laws::geometry::latency`]); road users are moved
    /// ahead only when the collisions clearly show them late ([`LatencyEstimate::road_users_late`]).
    Auto,
    /// This many seconds (0: as logged).
    Given(f64),
}

impl PerceptionLatency {
    /// The latency the logs are first recorded with, s: the one given, or 0 (as logged) under `Auto`.
    pub fn applied_s(self) -> f64 {
        match self {
            PerceptionLatency::Given(l) => l,
            PerceptionLatency::Auto => 0.0,
        }
    }

    /// The reading the logs are recorded again with: under `Auto`, `estimate` when the runs' collisions
    /// clearly show road users late; otherwise none.
    pub fn reading_to_apply(self, estimate: Option<LatencyEstimate>) -> Option<LatencyEstimate> {
        estimate.filter(|e| self == PerceptionLatency::Auto && e.road_users_late())
    }
}

impl std::str::FromStr for PerceptionLatency {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("auto") {
            return Ok(PerceptionLatency::Auto);
        }
        let max = monitor::MAX_PERCEPTION_LATENCY_S;
        match s.parse::<f64>() {
            Ok(l) if (0.0..=max).contains(&l) => Ok(PerceptionLatency::Given(l)),
            _ => Err(format!(
                "'{s}' is neither `auto` nor a latency between 0 and {max} s"
            )),
        }
    }
}

impl std::fmt::Display for PerceptionLatency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PerceptionLatency::Auto => f.write_str("auto"),
            PerceptionLatency::Given(l) => write!(f, "{l}"),
        }
    }
}

/// A learned model with what the search reported and the logs that failed.
#[derive(Debug)]
pub struct Fitted {
    /// The model.
    pub model: Model,
    /// Per property: selection trace and reactive rule.
    pub reports: Vec<PropertyReport>,
    /// Logs learned.
    pub n_learned: usize,
    /// Logs skipped, with why.
    pub errors: Vec<(PathBuf, String)>,
    /// Laws left out of the default properties for having too many predicates.
    pub left_out: Vec<String>,
    /// What the learned runs' collisions say about the road users' latency (`None` with too few).
    pub latency: Option<LatencyEstimate>,
}

/// The law texts of `laws_dir` and the resolved properties (see the module docs), plus the laws left out.
pub fn properties(
    laws_dir: &Path,
    properties_file: Option<&Path>,
    config: &BuildConfig,
) -> anyhow::Result<(Vec<LawSource>, Vec<ResolvedProperty>, Vec<String>)> {
    FitInputs::read(laws_dir, properties_file)?.properties(config)
}

/// The files a fit reads besides the logs, read once so that they can travel (a Ray worker has no law
/// folder): the law texts and the properties file, if any.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitInputs {
    /// The law folder (named in errors).
    pub laws_dir: PathBuf,
    /// Each law file's name and text, in file-name order.
    pub laws: Vec<(String, String)>,
    /// The properties file's path and text: the one given, else `DIR/properties.toml` when it exists.
    pub properties: Option<(PathBuf, String)>,
}

impl FitInputs {
    /// Reads the law folder and the properties file.
    pub fn read(laws_dir: &Path, properties_file: Option<&Path>) -> anyhow::Result<FitInputs> {
        let laws = crate::lawdir::read_sources(laws_dir)?
            .into_iter()
            .map(|l| (l.name, l.text))
            .collect();
        let default_file = laws_dir.join("properties.toml");
        let file = properties_file
            .map(Path::to_path_buf)
            .or_else(|| default_file.is_file().then_some(default_file));
        let properties = match file {
            Some(path) => {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("{}: cannot read", path.display()))?;
                Some((path, text))
            }
            None => None,
        };
        Ok(FitInputs {
            laws_dir: laws_dir.to_path_buf(),
            laws,
            properties,
        })
    }

    /// The law sources and the resolved properties, plus the laws left out.
    pub fn properties(
        &self,
        config: &BuildConfig,
    ) -> anyhow::Result<(Vec<LawSource>, Vec<ResolvedProperty>, Vec<String>)> {
        let laws: Vec<LawSource> = self
            .laws
            .iter()
            .map(|(name, text)| LawSource {
                name: name.clone(),
                text: text.clone(),
            })
            .collect();
        let laws_dir = &self.laws_dir;
        match &self.properties {
            Some((path, text)) => {
                let specs: Vec<PropertySpec> =
                    parse_properties_toml(text).with_context(|| format!("{}", path.display()))?;
                // Law files are named by file name inside the model; the folder names them in errors.
                let plan =
                    Plan::from_specs(laws.clone(), &specs, config.clone()).with_context(|| {
                        format!("{} (laws in {})", path.display(), laws_dir.display())
                    })?;
                Ok((laws, plan.properties().to_vec(), Vec::new()))
            }
            None => {
                let (plan, skipped) = Plan::with_default_properties(laws.clone(), config.clone())
                    .with_context(|| format!("laws in {}", laws_dir.display()))?;
                Ok((laws, plan.properties().to_vec(), skipped))
            }
        }
    }
}

/// Where a fit's frame period came from.
#[derive(Debug, Clone, PartialEq)]
pub enum PeriodSource {
    /// Given (`--frame-period-s`).
    Given,
    /// The `frame_period_s` of this log, the first of the logs in path order that reads, and the median
    /// time between its frames (`None` for a log of one frame).
    Log(PathBuf, Option<f64>),
    /// No log could be read: the schema's default.
    Default,
}

/// The frame period a fit steps at: `given`, else the period of the first of `logs` (in path order, so
/// the order they are named in does not matter) that reads, else the schema's default of 0.1 s. Logs at
/// another period are then refused one by one, naming the option ([`crate::batch::check_log_period`]).
pub fn frame_period(given: Option<f64>, logs: &[PathBuf]) -> (f64, PeriodSource) {
    if let Some(p) = given {
        return (p, PeriodSource::Given);
    }
    let mut sorted: Vec<&PathBuf> = logs.iter().collect();
    sorted.sort();
    sorted
        .into_iter()
        .find_map(|path| {
            scenarios::log::read_log_isolated(path).ok().map(|log| {
                let spacing = median_spacing_s(&log.frames);
                (
                    log.meta.frame_period_s,
                    PeriodSource::Log(path.clone(), spacing),
                )
            })
        })
        .unwrap_or((BuildConfig::default().frame_period_s, PeriodSource::Default))
}

/// The median time between consecutive frames, s (`None` for fewer than two frames).
fn median_spacing_s(frames: &[laws::Frame]) -> Option<f64> {
    let mut dt: Vec<f64> = frames.windows(2).map(|w| w[1].t - w[0].t).collect();
    if dt.is_empty() {
        return None;
    }
    dt.sort_by(f64::total_cmp);
    Some(dt[dt.len() / 2])
}

/// What [`frame_period`] chose, in words for stderr (`None` when it was given).
pub fn period_words(period_s: f64, source: &PeriodSource) -> Option<String> {
    match source {
        PeriodSource::Given => None,
        PeriodSource::Log(path, spacing) => {
            let mut words = format!(
                "frame period {period_s:?} s, from {} (--frame-period-s sets another)",
                path.display()
            );
            // Laws count their time bounds in frames of this period: frames stamped at another spacing
            // would be read at the wrong speed.
            if let Some(dt) = spacing.filter(|dt| (dt - period_s).abs() > 0.2 * period_s) {
                words.push_str(&format!(
                    "; but its frames are {dt} s apart (median): is its frame_period_s attribute \
                     missing (0.1 s is then assumed) or wrong?"
                ));
            }
            Some(words)
        }
        PeriodSource::Default => Some(format!(
            "frame period {period_s:?} s, the schema's default: no log could be read"
        )),
    }
}

/// Logs recorded: the records, the logs that failed with why, and the contact profile of the first
/// collision frame of each recorded run that has one ([`laws::geometry::latency`]).
pub struct Recorded {
    /// One per log read, in the order given.
    pub records: Vec<RunRecord>,
    /// The logs that could not be recorded, with why.
    pub errors: crate::batch::Failures,
    /// One per recorded run with a collision.
    pub contacts: Vec<ContactProfile>,
}

impl Recorded {
    /// What the runs' collisions say about the road users' latency (`None` with too few collisions).
    pub fn latency(&self) -> Option<LatencyEstimate> {
        latency::estimate(&self.contacts)
    }
}

/// Records every log (in parallel); failures are returned by file.
pub fn record_logs(plan: &AutoPlan, logs: &[PathBuf], label: &str) -> anyhow::Result<Recorded> {
    let progress = crate::progress::bar(logs.len() as u64, label);
    let results = record_each(plan, logs, || progress.inc(1))?;
    progress.finish_and_clear();
    let mut recorded = Recorded {
        records: Vec::with_capacity(results.len()),
        errors: Vec::new(),
        contacts: Vec::new(),
    };
    for (path, r) in results {
        match r {
            Ok((rec, contact)) => {
                recorded.records.push(rec);
                recorded.contacts.extend(contact);
            }
            Err(e) => recorded.errors.push((path, format!("{e:#}"))),
        }
    }
    Ok(recorded)
}

/// Records every log (in parallel), each with its outcome — its record and the contact profile of its
/// run's first collision frame — in the order given; `on_done` after each.
pub fn record_each(
    plan: &AutoPlan,
    logs: &[PathBuf],
    on_done: impl Fn() + Sync,
) -> anyhow::Result<RecordedEach> {
    let recorder = plan.recorder()?;
    let period = plan.config().frame_period_s;
    Ok(crate::batch::map_logs(
        logs,
        Some(period),
        || recorder.clone(),
        |rec, log| {
            Ok((
                rec.record(&log.frames),
                latency::first_collision_profile(&log.frames),
            ))
        },
        on_done,
    ))
}

/// Each log's record and first-collision contact profile, or why it failed.
pub type RecordedEach = Vec<(PathBuf, anyhow::Result<(RunRecord, Option<ContactProfile>)>)>;

/// Records the learning runs of a fit: with road users as `latency` says — given, or under `Auto` moved
/// ahead by the estimate when the runs' collisions clearly show them late, which records the runs a
/// second time (only then). Returns the plan the records belong to (its config carries the latency
/// used), the records, and the estimate (made on the runs as logged; `None` with too few collisions).
///
/// # Errors
/// Properties that do not compile, or the recorder failing to start.
pub fn record_for_fit(
    laws: Vec<LawSource>,
    properties: Vec<ResolvedProperty>,
    build: &BuildConfig,
    latency: PerceptionLatency,
    logs: &[PathBuf],
    label: &str,
) -> anyhow::Result<(AutoPlan, Recorded, Option<LatencyEstimate>)> {
    let mut config = build.clone();
    config.perception_latency_s = latency.applied_s();
    let plan = AutoPlan::new(laws.clone(), properties.clone(), config.clone())?;
    let recorded = record_logs(&plan, logs, label)?;
    let estimate = recorded.latency();
    match latency.reading_to_apply(estimate) {
        Some(e) => {
            config.perception_latency_s = e.lag_s;
            let plan = AutoPlan::new(laws, properties, config)?;
            let again = record_logs(&plan, logs, label)?;
            Ok((plan, again, estimate))
        }
        None => Ok((plan, recorded, estimate)),
    }
}

/// What `learn` and `evaluate` say about the road users' latency: when the runs' collisions clearly show
/// them late ([`LatencyEstimate::road_users_late`]), that and how the model reads them (moved ahead by
/// `applied_s`, or as logged); when a latency was given without such a showing, that it was applied; when
/// the collisions disagree with the logged positions in a way no latency explains
/// ([`LatencyEstimate::contacts_disagree`]), that; otherwise nothing.
pub fn latency_words(estimate: Option<&LatencyEstimate>, applied_s: f64) -> Option<String> {
    let Some(e) = estimate.filter(|e| e.road_users_late()) else {
        if applied_s > 0.0 {
            return Some(format!(
                "every road user moved {applied_s} s ahead before its signals (--perception-latency)"
            ));
        }
        return estimate
            .filter(|e| e.contacts_disagree())
            .map(disagreeing_words);
    };
    let how = if applied_s > 0.0 {
        format!(
            "learning with every road user moved {applied_s:.2} s ahead before its signals, as the \
             model will read every frame (--perception-latency 0 keeps them as logged)"
        )
    } else {
        "learning with them as logged (--perception-latency auto moves them ahead)".to_string()
    };
    Some(format!("{}; {how}", late_words(e)))
}

/// What the collisions say when they disagree with the logged positions and no latency explains it
/// ([`LatencyEstimate::contacts_disagree`]).
pub fn disagreeing_words(e: &LatencyEstimate) -> String {
    format!(
        "note: at the first collision frame of {} runs the ego touches a road user in only {} as logged, \
         and in at most {} with the road users moved ahead by any lag up to {} s: no latency alone \
         explains them. The logs' collision test may have a margin, their positions may be noisy or \
         their road users missed, or their footprints or reference points differ from this tool's (the \
         ego {} × {} m with `x`, `y` at its rear-axle centre, {} m behind the front bumper; a road user's \
         `x`, `y` at its centre), on which every distance signal rests. Road users are kept as logged \
         (--perception-latency S moves them ahead by a latency you know)",
        e.runs,
        e.contact_as_logged,
        e.contact_at_lag,
        laws::geometry::latency::MAX_LAG_S,
        laws::frame::EGO_LENGTH_M,
        laws::frame::EGO_WIDTH_M,
        laws::frame::EGO_FRONT_M,
    )
}

/// What the collisions say of late road users, in words: the lag read and the contacts behind it.
pub fn late_words(e: &LatencyEstimate) -> String {
    format!(
        "road users seem to be reported late, by about {:.2} s: at the first collision frame of {} \
         runs the ego touches a road user in {} as logged, and in {} with every road user moved {:.2} s \
         ahead along its heading",
        e.lag_s, e.runs, e.contact_as_logged, e.contact_at_lag, e.lag_s
    )
}

/// [`AutoPlan::build_with_budget_rules`] with a bar of the properties learned (the search can take
/// minutes).
///
/// # Errors
/// As [`AutoPlan::build_with_budget_rules`].
pub fn build_with_progress(
    plan: &AutoPlan,
    records: &[RunRecord],
    mode: monitor::select::AbstractionMode,
    search: &monitor::select::SearchConfig,
    budgets: &[f64],
) -> anyhow::Result<(monitor::Model, Vec<monitor::select::PropertyReport>)> {
    let progress = crate::progress::bar(plan.properties().len() as u64, "learning");
    let built = plan.build_observed(records, mode, search, budgets, &|_, _| progress.inc(1));
    progress.finish_and_clear();
    Ok(built?)
}

/// The error of a fit that learned no log: how many were given and why each failed.
pub fn nothing_learned(n_given: usize, errors: &[(PathBuf, String)]) -> anyhow::Error {
    let why: Vec<String> = errors
        .iter()
        .map(|(p, e)| format!("{}: {e}", p.display()))
        .collect();
    anyhow::anyhow!(
        "no log could be learned ({n_given} given): {}",
        why.join("; ")
    )
}

/// Learns a model from `logs` (see the module docs).
///
/// # Errors
/// Unreadable laws or properties, or no log that could be learned.
pub fn fit(
    laws_dir: &Path,
    properties_file: Option<&Path>,
    logs: &[PathBuf],
    opts: &FitOptions,
) -> anyhow::Result<Fitted> {
    let (laws, props, left_out) = properties(laws_dir, properties_file, &opts.build)?;
    let (plan, recorded, latency) =
        record_for_fit(laws, props, &opts.build, opts.latency, logs, "reading")?;
    if recorded.records.is_empty() {
        return Err(nothing_learned(logs.len(), &recorded.errors));
    }
    let (model, reports) =
        build_with_progress(&plan, &recorded.records, opts.mode, &opts.search, &[])?;
    Ok(Fitted {
        model,
        reports,
        n_learned: recorded.records.len(),
        latency,
        errors: recorded.errors,
        left_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use scenarios::log::{write_log, RunLog, RunMeta};

    #[test]
    fn the_latency_words_name_a_reading_a_given_latency_and_contacts_that_disagree() {
        let reading = |as_logged, at_lag, lag_s| LatencyEstimate {
            lag_s,
            runs: 20,
            contact_as_logged: as_logged,
            contact_at_lag: at_lag,
        };
        // Late: the reading and how the model reads them.
        let late = reading(4, 19, 0.2);
        let words = latency_words(Some(&late), 0.2).unwrap();
        assert!(
            words.starts_with("road users seem to be reported late, by about 0.20 s"),
            "{words}"
        );
        assert!(
            words.contains("learning with every road user moved 0.20 s ahead"),
            "{words}"
        );
        // Timely, every collision touching as logged: nothing to say.
        assert_eq!(latency_words(Some(&reading(20, 20, 0.0)), 0.0), None);
        assert_eq!(latency_words(None, 0.0), None);
        // A given latency is said whatever the reading.
        let given = latency_words(Some(&reading(20, 20, 0.0)), 0.3).unwrap();
        assert!(
            given.starts_with("every road user moved 0.3 s ahead"),
            "{given}"
        );
        // 12 of 20 touching as logged, at most 15 at any lag: not a latency, and said so.
        let odd = latency_words(Some(&reading(12, 15, 0.1)), 0.0).unwrap();
        assert!(
            odd.contains(
                "of 20 runs the ego touches a road user in only 12 as logged, and in at most 15"
            ),
            "{odd}"
        );
        assert!(
            odd.contains("4.7 × 2.06 m") && odd.contains("3.6986 m behind the front"),
            "{odd}"
        );
        // 16 of 20 is four in five: quiet.
        assert_eq!(latency_words(Some(&reading(16, 18, 0.1)), 0.0), None);
    }

    fn log_at(path: &Path, frame_period_s: f64) {
        log_at_spacing(path, frame_period_s, frame_period_s);
    }

    /// A log of three frames `spacing_s` apart whose attribute says `frame_period_s`.
    fn log_at_spacing(path: &Path, frame_period_s: f64, spacing_s: f64) {
        let frames = (0..3)
            .map(|k| laws::Frame {
                t: f64::from(k) * spacing_s,
                ..laws::Frame::default()
            })
            .collect();
        let meta = RunMeta {
            scenario: "s".into(),
            run_id: "r".into(),
            frame_period_s,
            seed: None,
        };
        write_log(path, &RunLog { meta, frames }).unwrap();
    }

    /// The period is the one given, else that of the first log in path order that reads (an unreadable
    /// one is passed over), whatever order the logs are named in, else the schema's default.
    #[test]
    fn frame_period_is_given_or_the_first_readable_logs() {
        let dir = tempfile::tempdir().unwrap();
        let (bad, a, b) = (
            dir.path().join("0.h5"),
            dir.path().join("a.h5"),
            dir.path().join("b.h5"),
        );
        std::fs::write(&bad, b"not a log").unwrap();
        log_at(&a, 0.2);
        log_at(&b, 0.05);
        for logs in [
            vec![b.clone(), a.clone(), bad.clone()],
            vec![bad.clone(), a.clone(), b.clone()],
        ] {
            let (period, source) = frame_period(None, &logs);
            assert_eq!(period, 0.2);
            let PeriodSource::Log(path, Some(spacing)) = source else {
                panic!("{source:?}")
            };
            assert_eq!(path, a);
            assert!((spacing - 0.2).abs() < 1e-12, "{spacing}");
            assert_eq!(frame_period(Some(0.05), &logs), (0.05, PeriodSource::Given));
        }
        assert_eq!(frame_period(None, std::slice::from_ref(&b)).0, 0.05);
        assert_eq!(
            frame_period(None, std::slice::from_ref(&bad)),
            (0.1, PeriodSource::Default)
        );
        assert_eq!(frame_period(None, &[]), (0.1, PeriodSource::Default));
        let words = period_words(0.2, &PeriodSource::Log(a.clone(), Some(0.2))).unwrap();
        assert!(words.contains("0.2 s") && words.contains("a.h5"), "{words}");
        assert!(!words.contains("apart"), "{words}");
        // Frames stamped 0.05 s apart in a log whose attribute says 0.1 s.
        let stamped = dir.path().join("stamped.h5");
        log_at_spacing(&stamped, 0.1, 0.05);
        let (period, source) = frame_period(None, std::slice::from_ref(&stamped));
        let words = period_words(period, &source).unwrap();
        assert!(
            words.contains("frame period 0.1 s") && words.contains("0.05 s apart (median)"),
            "{words}"
        );
        assert!(period_words(0.05, &PeriodSource::Given).is_none());
    }
}
