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
//! While reading, each run's road-user steps, velocity flips and first collision frame are kept
//! ([`RunReading`]), from which the fit judges whether the logs' road users jump against their speeds, so
//! that they are to be smoothed, whether their velocities are noisy, so that those are smoothed too
//! ([`laws::perception`]), and whether they are reported late ([`laws::geometry::latency`]);
//! `learn` and `evaluate` say so when they clearly are, and record the logs again read so.

use std::path::{Path, PathBuf};

use anyhow::Context;
use laws::geometry::latency::{self, LatencyEstimate};
use laws::perception::{
    RoadUserCorrection, RoadUserReading, RunReading, TrackSteps, VelocityFlips, SMOOTHING_S,
};
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
    /// How the logs' road users are read (`build.road_users` is set from it).
    pub road_users: RoadUserOptions,
}

/// How the logs' road users are read, as `learn --perception-latency`, `--road-user-smoothing` and
/// `--road-user-velocities` take it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoadUserOptions {
    /// How late the logs report road users.
    pub latency: PerceptionLatency,
    /// Over how long road users are smoothed.
    pub smoothing: RoadUserSmoothing,
    /// Whether road users' velocities are smoothed with their positions.
    pub velocities: RoadUserVelocities,
}

impl RoadUserOptions {
    /// `learn`'s defaults: the latency, the smoothing and the velocities all `auto`, read from the logs.
    pub const AUTO: RoadUserOptions = RoadUserOptions {
        latency: PerceptionLatency::Auto,
        smoothing: RoadUserSmoothing::Auto,
        velocities: RoadUserVelocities::Auto,
    };

    /// The options, or why they contradict each other (velocities smoothed without a window).
    pub fn new(
        latency: PerceptionLatency,
        smoothing: RoadUserSmoothing,
        velocities: RoadUserVelocities,
    ) -> Result<RoadUserOptions, String> {
        if velocities == RoadUserVelocities::Smoothed && smoothing == RoadUserSmoothing::Given(0.0)
        {
            return Err("road-user velocities cannot be smoothed without a smoothing window: \
                        --road-user-velocities smoothed needs --road-user-smoothing auto or above 0"
                .to_string());
        }
        Ok(RoadUserOptions {
            latency,
            smoothing,
            velocities,
        })
    }

    /// The correction the logs are first recorded with: what is given, and none for what is `Auto`.
    pub fn first(self) -> RoadUserCorrection {
        let smoothing_s = self.smoothing.given_s().unwrap_or(0.0);
        RoadUserCorrection {
            smoothing_s,
            latency_s: self.latency.applied_s(),
            smooth_velocities: self.velocities == RoadUserVelocities::Smoothed && smoothing_s > 0.0,
        }
    }

    /// The window the runs' smoothed contact profiles are read at ([`RunReading::of`]): the one given,
    /// or [`SMOOTHING_S`] under `Auto`.
    pub fn reading_window_s(self) -> f64 {
        self.smoothing.given_s().unwrap_or(SMOOTHING_S)
    }

    /// What the runs' reading decides: under `Auto`, velocities smoothed when they are noisy
    /// ([`VelocityFlips::noisy`]); smoothing over [`SMOOTHING_S`] when the road users jump against their
    /// speeds ([`TrackSteps::jumpy`]) or their velocities are smoothed; and the latency read off the
    /// collisions (of the frames as smoothed when they are) when they clearly show road users late.
    pub fn decide(self, reading: &RoadUserReading) -> RoadUserDecision {
        let velocities = match self.velocities {
            RoadUserVelocities::Auto => reading.flips.noisy(),
            RoadUserVelocities::Smoothed => true,
            RoadUserVelocities::AsLogged => false,
        };
        let smoothing_s = match self.smoothing {
            RoadUserSmoothing::Given(s) => s,
            RoadUserSmoothing::Auto if reading.steps.jumpy() || velocities => SMOOTHING_S,
            RoadUserSmoothing::Auto => 0.0,
        };
        let mut correction = RoadUserCorrection {
            smoothing_s,
            latency_s: 0.0,
            smooth_velocities: velocities && smoothing_s > 0.0,
        };
        let estimate = latency::estimate(reading.contacts_as(&correction));
        correction.latency_s = self
            .latency
            .reading_to_apply(estimate)
            .map_or(self.latency.applied_s(), |e| e.lag_s);
        RoadUserDecision {
            correction,
            latency: estimate,
            steps: reading.steps,
            flips: reading.flips,
        }
    }
}

/// How a fit reads its logs' road users, and why.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RoadUserDecision {
    /// The correction the model applies.
    pub correction: RoadUserCorrection,
    /// What the runs' collisions say about the latency, read on the frames as smoothed when they are
    /// (`None` with too few collisions).
    pub latency: Option<LatencyEstimate>,
    /// How the runs' road users step against their speeds.
    pub steps: TrackSteps,
    /// How the runs' road users' velocities turn from frame to frame.
    pub flips: VelocityFlips,
}

impl RoadUserDecision {
    /// What `learn` and `evaluate` say on stderr about it: the smoothing ([`smoothing_words`]; not when
    /// the window is there for noisy velocities alone), the velocities ([`velocity_words`]), then the
    /// latency ([`latency_words`]); nothing for timely ground-truth logs read as logged.
    pub fn words(&self) -> Vec<String> {
        // A window applied for noisy velocities alone is named by the velocities' line.
        let for_velocities = self.correction.smooth_velocities && self.flips.noisy();
        smoothing_words(&self.steps, self.correction.smoothing_s)
            .filter(|_| self.steps.jumpy() || !for_velocities)
            .into_iter()
            .chain(velocity_words(&self.flips, &self.correction))
            .chain(latency_words(
                self.latency.as_ref(),
                self.correction.latency_s,
                self.correction.smoothing_s > 0.0,
            ))
            .collect()
    }
}

/// Over how long the logs' road users are smoothed, as `learn --road-user-smoothing` takes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RoadUserSmoothing {
    /// Over [`SMOOTHING_S`] when the learning runs' road users jump against their speeds
    /// ([`TrackSteps::jumpy`]) or their velocities are smoothed ([`RoadUserVelocities`]), else not at
    /// all.
    Auto,
    /// Over this many seconds (0: not at all).
    Given(f64),
}

impl RoadUserSmoothing {
    /// The window given, `None` under `Auto`.
    pub fn given_s(self) -> Option<f64> {
        match self {
            RoadUserSmoothing::Given(s) => Some(s),
            RoadUserSmoothing::Auto => None,
        }
    }
}

impl std::str::FromStr for RoadUserSmoothing {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let max = laws::perception::MAX_SMOOTHING_S;
        parse_auto_or(
            s,
            |w| (0.0..=max).contains(&w),
            &format!("a window between 0 and {max} s"),
        )
        .map(|w| w.map_or(RoadUserSmoothing::Auto, RoadUserSmoothing::Given))
    }
}

impl std::fmt::Display for RoadUserSmoothing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write_auto_or(f, self.given_s())
    }
}

/// Whether road users' velocities are smoothed with their positions, as `learn --road-user-velocities`
/// takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RoadUserVelocities {
    /// Smoothed when the learning runs' velocities are noisy ([`VelocityFlips::noisy`]).
    Auto,
    /// Smoothed (over the smoothing window, [`SMOOTHING_S`] under `--road-user-smoothing auto`).
    Smoothed,
    /// As logged.
    AsLogged,
}

/// `auto` (`None`) or a number that `valid` accepts, for the options that take either; the error names
/// `what` the number must be.
pub fn parse_auto_or(
    s: &str,
    valid: impl Fn(f64) -> bool,
    what: &str,
) -> Result<Option<f64>, String> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(None);
    }
    match s.parse::<f64>() {
        Ok(v) if valid(v) => Ok(Some(v)),
        _ => Err(format!("'{s}' is neither `auto` nor {what}")),
    }
}

/// Writes `auto` for `None`, else the number, as [`parse_auto_or`] reads them back.
pub fn write_auto_or(f: &mut std::fmt::Formatter<'_>, value: Option<f64>) -> std::fmt::Result {
    match value {
        None => f.write_str("auto"),
        Some(v) => write!(f, "{v}"),
    }
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
        let max = monitor::MAX_PERCEPTION_LATENCY_S;
        parse_auto_or(
            s,
            |l| (0.0..=max).contains(&l),
            &format!("a latency between 0 and {max} s"),
        )
        .map(|l| l.map_or(PerceptionLatency::Auto, PerceptionLatency::Given))
    }
}

impl std::fmt::Display for PerceptionLatency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PerceptionLatency::Auto => write_auto_or(f, None),
            PerceptionLatency::Given(l) => write_auto_or(f, Some(*l)),
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
    /// How the learned runs' road users are read, and why.
    pub road_users: RoadUserDecision,
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

/// Logs recorded: the records, the logs that failed with why, and what the recorded runs say about
/// their road users ([`laws::perception`]).
pub struct Recorded {
    /// One per log read, in the order given.
    pub records: Vec<RunRecord>,
    /// The logs that could not be recorded, with why.
    pub errors: crate::batch::Failures,
    /// The recorded runs' reading together.
    pub reading: RoadUserReading,
}

/// Records every log (in parallel), reading each one's road users with its contact profiles smoothed
/// over `window_s` ([`RunReading::of`]); failures are returned by file.
pub fn record_logs(
    plan: &AutoPlan,
    logs: &[PathBuf],
    window_s: f64,
    label: &str,
) -> anyhow::Result<Recorded> {
    let progress = crate::progress::bar(logs.len() as u64, label);
    let results = record_each(plan, logs, window_s, || progress.inc(1))?;
    progress.finish_and_clear();
    let mut recorded = Recorded {
        records: Vec::with_capacity(results.len()),
        errors: Vec::new(),
        reading: RoadUserReading::default(),
    };
    for (path, r) in results {
        match r {
            Ok((rec, reading)) => {
                recorded.records.push(rec);
                recorded.reading.add(&reading);
            }
            Err(e) => {
                let why = crate::batch::reason(&path, &e);
                recorded.errors.push((path, why));
            }
        }
    }
    Ok(recorded)
}

/// Records every log (in parallel), each with its outcome — its record and its road users' reading, the
/// contact profiles smoothed over `window_s` — in the order given; `on_done` after each.
pub fn record_each(
    plan: &AutoPlan,
    logs: &[PathBuf],
    window_s: f64,
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
                RunReading::of(&log.frames, window_s),
            ))
        },
        on_done,
    ))
}

/// Each log's record and road-user reading, or why it failed.
pub type RecordedEach = Vec<(PathBuf, anyhow::Result<(RunRecord, RunReading)>)>;

/// Records the learning runs of a fit with road users as `road_users` says: what is given, and what is
/// `Auto` as the runs' reading decides ([`RoadUserOptions::decide`]), which records the runs a second
/// time (only when the decision differs from the first recording's). Returns the plan the records belong
/// to (its config carries the correction used), the records, and the decision.
///
/// # Errors
/// Properties that do not compile, or the recorder failing to start.
pub fn record_for_fit(
    laws: Vec<LawSource>,
    properties: Vec<ResolvedProperty>,
    build: &BuildConfig,
    road_users: RoadUserOptions,
    logs: &[PathBuf],
    label: &str,
) -> anyhow::Result<(AutoPlan, Recorded, RoadUserDecision)> {
    let mut config = build.clone();
    config.road_users = road_users.first();
    let plan = AutoPlan::new(laws.clone(), properties.clone(), config.clone())?;
    let window_s = road_users.reading_window_s();
    let recorded = record_logs(&plan, logs, window_s, label)?;
    let decision = road_users.decide(&recorded.reading);
    if decision.correction == config.road_users {
        return Ok((plan, recorded, decision));
    }
    config.road_users = decision.correction;
    let plan = AutoPlan::new(laws, properties, config)?;
    let again = record_logs(&plan, logs, window_s, label)?;
    Ok((plan, again, decision))
}

/// What `learn` and `evaluate` say about the road users' steps: when they jump against their speeds
/// ([`TrackSteps::jumpy`]), that and how the model reads them (smoothed over `applied_s`, or as
/// logged); when a smoothing was given without such a showing, that it was applied; otherwise nothing.
pub fn smoothing_words(steps: &TrackSteps, applied_s: f64) -> Option<String> {
    if !steps.jumpy() {
        return (applied_s > 0.0).then(|| {
            format!(
                "every road user smoothed over its reports of the last {applied_s} s before its \
                 signals (--road-user-smoothing)"
            )
        });
    }
    let how = if applied_s > 0.0 {
        format!(
            "learning with each road user smoothed over its reports of the last {applied_s} s, as the \
             model will read every frame (--road-user-smoothing 0 keeps them as logged)"
        )
    } else {
        "learning with them as logged (--road-user-smoothing auto smooths them)".to_string()
    };
    Some(format!(
        "road users seem to be reported at varying ages or with noisy positions: {} of {} steps from \
         one frame to the next ({:.0} %) are off their speed by more than half; {how}",
        steps.jumps,
        steps.steps,
        100.0 * steps.share()
    ))
}

/// One run's road-user reading as `learn` reads it with its defaults ([`RoadUserOptions::AUTO`]): what
/// `avguard inspect` and Python's `avguard.road_users` count per log.
pub fn default_reading(frames: &[laws::Frame]) -> RunReading {
    RunReading::of(frames, RoadUserOptions::AUTO.reading_window_s())
}

/// What `avguard inspect` prints after the logs (and Python's `avguard.road_users` returns): what the
/// road users of the `n_read` logs read say together ([`reading_words`]), and how `avguard learn` would
/// read them with its defaults — its own lines ([`RoadUserDecision::words`]), each indented by two
/// spaces, or "as logged".
pub fn road_user_summary(reading: &RoadUserReading, n_read: usize) -> String {
    let said = RoadUserOptions::AUTO.decide(reading).words();
    let logs = if n_read == 1 { "log" } else { "logs" };
    let head = format!(
        "road users of the {n_read} {logs} read: {}",
        reading_words(reading)
    );
    if said.is_empty() {
        format!("{head}\n`avguard learn` would read them as logged")
    } else {
        format!(
            "{head}\n`avguard learn` would say of them (its defaults):\n  {}",
            said.join("\n  ")
        )
    }
}

/// What a set of runs' road-user reading counts, in words (`avguard inspect`): the road users' steps
/// from one frame to the next and how many are off their speed by more than half ([`TrackSteps`]), their
/// pairs of steps and how many turn an acceleration around ([`VelocityFlips`]), and the runs' first
/// collision frames and how many show the ego touching a road user as logged
/// ([`laws::geometry::latency`]).
pub fn reading_words(reading: &RoadUserReading) -> String {
    let touching = reading
        .contacts
        .iter()
        .filter(|&&p| latency::touches_as_logged(p))
        .count();
    let collisions = match reading.contacts.len() {
        0 => "no collision".to_string(),
        1 => format!("1 run with a collision, {touching} of them"),
        n => format!("{n} runs with a collision, {touching} of them"),
    };
    let contact = if reading.contacts.is_empty() {
        String::new()
    } else {
        " with the ego touching a road user as logged at the first collision frame".to_string()
    };
    format!(
        "{} steps of a road user from one frame to the next compared with its speed, {} ({:.1} %) off \
         it by more than half; {} pairs of a road user's consecutive steps, {} ({:.1} %) turning an \
         acceleration of at least {} m/s² around; {collisions}{contact}",
        reading.steps.steps,
        reading.steps.jumps,
        100.0 * reading.steps.share(),
        reading.flips.pairs,
        reading.flips.flips,
        100.0 * reading.flips.share(),
        laws::perception::FLIP_MIN_ACCEL_MPS2,
    )
}

/// What `learn` and `evaluate` say about the road users' velocities: when they are noisy
/// ([`VelocityFlips::noisy`]), that and how the model reads them (smoothed with the positions, or as
/// logged); when they are smoothed without such a showing, that; otherwise nothing.
pub fn velocity_words(flips: &VelocityFlips, applied: &RoadUserCorrection) -> Option<String> {
    let smoothed = applied.smooth_velocities && applied.smoothing_s > 0.0;
    if !flips.noisy() {
        return smoothed.then(|| {
            format!(
                "every road user's velocity smoothed over its reports of the last {} s with its \
                 position (--road-user-velocities)",
                applied.smoothing_s
            )
        });
    }
    let how = if smoothed {
        format!(
            "learning with each road user's velocity smoothed over its reports of the last {} s, as \
             the model will read every frame (--road-user-velocities as-logged keeps them as logged)",
            applied.smoothing_s
        )
    } else {
        "learning with them as logged (--road-user-velocities auto smooths them)".to_string()
    };
    Some(format!(
        "road users' velocities seem noisy: in {} of {} pairs of steps from one frame to the next \
         ({:.0} %) a road user's velocity turns an acceleration of at least {} m/s² around; {how}",
        flips.flips,
        flips.pairs,
        100.0 * flips.share(),
        laws::perception::FLIP_MIN_ACCEL_MPS2
    ))
}

/// What `learn` and `evaluate` say about the road users' latency: when the runs' collisions clearly show
/// them late ([`LatencyEstimate::road_users_late`]), that and how the model reads them (moved ahead by
/// `applied_s`, or as logged); when a latency was given without such a showing, that it was applied; when
/// the collisions disagree with the logged positions in a way no latency explains
/// ([`LatencyEstimate::contacts_disagree`]), that; otherwise nothing. `smoothed`: the estimate was read
/// on the frames as smoothed ([`laws::perception`]), and the words say so.
pub fn latency_words(
    estimate: Option<&LatencyEstimate>,
    applied_s: f64,
    smoothed: bool,
) -> Option<String> {
    let Some(e) = estimate.filter(|e| e.road_users_late()) else {
        if applied_s > 0.0 {
            return Some(format!(
                "every road user moved {applied_s} s ahead before its signals (--perception-latency)"
            ));
        }
        return estimate
            .filter(|e| e.contacts_disagree())
            .map(|e| disagreeing_words(e, smoothed));
    };
    let how = if applied_s > 0.0 {
        format!(
            "learning with every road user moved {applied_s:.2} s ahead before its signals, as the \
             model will read every frame (--perception-latency 0 keeps them as logged)"
        )
    } else {
        "learning with them as logged (--perception-latency auto moves them ahead)".to_string()
    };
    Some(format!("{}; {how}", late_words(e, smoothed)))
}

/// What the collisions say when they disagree with the logged positions and no latency explains it
/// ([`LatencyEstimate::contacts_disagree`]); `smoothed` as for [`latency_words`].
pub fn disagreeing_words(e: &LatencyEstimate, smoothed: bool) -> String {
    format!(
        "note: at the first collision frame of {} runs the ego touches a road user in only {} {}, \
         and in at most {} with the road users moved ahead by any lag up to {} s: no latency alone \
         explains them. The logs' collision test may have a margin, their positions may be noisy or \
         their road users missed, or their footprints or reference points differ from this tool's (the \
         ego {} × {} m with `x`, `y` at its rear-axle centre, {} m behind the front bumper; a road user's \
         `x`, `y` at its centre), on which every distance signal rests. Road users are kept as logged \
         (--perception-latency S moves them ahead by a latency you know)",
        e.runs,
        e.contact_as_logged,
        read_words(smoothed),
        e.contact_at_lag,
        laws::geometry::latency::MAX_LAG_S,
        laws::frame::EGO_LENGTH_M,
        laws::frame::EGO_WIDTH_M,
        laws::frame::EGO_FRONT_M,
    )
}

/// What the collisions say of late road users, in words: the lag read and the contacts behind it;
/// `smoothed` as for [`latency_words`].
pub fn late_words(e: &LatencyEstimate, smoothed: bool) -> String {
    format!(
        "road users seem to be reported late, by about {:.2} s: at the first collision frame of {} \
         runs the ego touches a road user in {} {}, and in {} with every road user moved {:.2} s \
         ahead along its heading",
        e.lag_s,
        e.runs,
        e.contact_as_logged,
        read_words(smoothed),
        e.contact_at_lag,
        e.lag_s
    )
}

/// How the frames a latency estimate was read on stood: as logged, or smoothed (not moved).
fn read_words(smoothed: bool) -> &'static str {
    if smoothed {
        "as smoothed"
    } else {
        "as logged"
    }
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
    let (plan, recorded, road_users) =
        record_for_fit(laws, props, &opts.build, opts.road_users, logs, "reading")?;
    if recorded.records.is_empty() {
        return Err(nothing_learned(logs.len(), &recorded.errors));
    }
    let (model, reports) =
        build_with_progress(&plan, &recorded.records, opts.mode, &opts.search, &[])?;
    Ok(Fitted {
        model,
        reports,
        n_learned: recorded.records.len(),
        road_users,
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
        let words = latency_words(Some(&late), 0.2, false).unwrap();
        assert!(
            words.starts_with("road users seem to be reported late, by about 0.20 s"),
            "{words}"
        );
        assert!(
            words.contains("learning with every road user moved 0.20 s ahead"),
            "{words}"
        );
        // Timely, every collision touching as logged: nothing to say.
        assert_eq!(latency_words(Some(&reading(20, 20, 0.0)), 0.0, false), None);
        assert_eq!(latency_words(None, 0.0, false), None);
        // A given latency is said whatever the reading.
        let given = latency_words(Some(&reading(20, 20, 0.0)), 0.3, false).unwrap();
        assert!(
            given.starts_with("every road user moved 0.3 s ahead"),
            "{given}"
        );
        // 12 of 20 touching as logged, at most 15 at any lag: not a latency, and said so.
        let odd = latency_words(Some(&reading(12, 15, 0.1)), 0.0, false).unwrap();
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
        assert_eq!(latency_words(Some(&reading(16, 18, 0.1)), 0.0, false), None);
    }

    /// A reading of 20 collision runs: `steps` steps of which `jumps` jump, 1000 pairs of steps of
    /// which `flips` flip; as logged 4 runs touch and from a lag of 0.3 s all do, smoothed 6 touch and
    /// from 0.2 s all do, velocities smoothed too 8 touch and from 0.1 s all do.
    fn reading_with(steps: u64, jumps: u64, flips: u64) -> RoadUserReading {
        let from = |k: usize| (k..=60).fold(0, |p, k| p | 1 << k);
        let profiles = |lag: usize, touching: usize| {
            let mut p = vec![from(lag); 20 - touching];
            p.extend(vec![1 | from(lag); touching]);
            p
        };
        RoadUserReading {
            steps: TrackSteps { steps, jumps },
            flips: VelocityFlips { pairs: 1000, flips },
            contacts: profiles(30, 4),
            contacts_smoothed: profiles(20, 6),
            contacts_smoothed_velocities: profiles(10, 8),
        }
    }

    fn reading_of(steps: u64, jumps: u64) -> RoadUserReading {
        reading_with(steps, jumps, 0)
    }

    #[test]
    fn the_reading_words_count_steps_pairs_and_collisions_touching_as_logged() {
        // 4 of `reading_with`'s 20 collision runs touch as logged (bit 0).
        let words = reading_words(&reading_with(1000, 5, 16));
        assert_eq!(
            words,
            "1000 steps of a road user from one frame to the next compared with its speed, 5 (0.5 %) \
             off it by more than half; 1000 pairs of a road user's consecutive steps, 16 (1.6 %) \
             turning an acceleration of at least 2 m/s² around; 20 runs with a collision, 4 of them \
             with the ego touching a road user as logged at the first collision frame"
        );
        // One collision, and none: said so; nothing compared reads 0 %.
        let mut one = RoadUserReading {
            contacts: vec![0b10],
            ..RoadUserReading::default()
        };
        assert!(
            reading_words(&one).ends_with(
                "0 (0.0 %) turning an acceleration of at least 2 m/s² around; 1 run with a \
                 collision, 0 of them with the ego touching a road user as logged at the first \
                 collision frame"
            ),
            "{}",
            reading_words(&one)
        );
        one.contacts.clear();
        assert!(reading_words(&one).ends_with("around; no collision"));
    }

    #[test]
    fn noisy_velocities_are_smoothed_with_the_positions_and_the_latency_read_so() {
        // Noisy velocities, steady steps: smoothed over SMOOTHING_S, velocities too, the latency read on
        // the profiles smoothed so (0.1 s).
        let d = RoadUserOptions::AUTO.decide(&reading_with(1000, 0, 100));
        assert_eq!(d.correction.smoothing_s, SMOOTHING_S);
        assert!(d.correction.smooth_velocities);
        assert!((d.correction.latency_s - 0.1).abs() < 1e-12, "{d:?}");
        assert_eq!(d.latency.map(|e| e.contact_as_logged), Some(8));
        // One flip fewer than one in ten: not noisy, nothing smoothed.
        let d = RoadUserOptions::AUTO.decide(&reading_with(1000, 0, 99));
        assert_eq!(d.correction.smoothing_s, 0.0);
        assert!(!d.correction.smooth_velocities);
        // Jumpy and noisy: both; jumpy alone: positions alone.
        let d = RoadUserOptions::AUTO.decide(&reading_with(1000, 500, 500));
        assert!(d.correction.smooth_velocities && d.correction.smoothing_s == SMOOTHING_S);
        let d = RoadUserOptions::AUTO.decide(&reading_with(1000, 500, 0));
        assert!(!d.correction.smooth_velocities && d.correction.smoothing_s == SMOOTHING_S);
        assert!((d.correction.latency_s - 0.2).abs() < 1e-12, "{d:?}");
        // Given: as logged whatever the flips; smoothed whatever them, over the window given.
        let as_logged = RoadUserOptions {
            velocities: RoadUserVelocities::AsLogged,
            ..RoadUserOptions::AUTO
        };
        let d = as_logged.decide(&reading_with(1000, 0, 900));
        assert_eq!(d.correction.smoothing_s, 0.0);
        assert!(!d.correction.smooth_velocities);
        let words = d.words();
        assert!(
            words[0].contains("learning with them as logged (--road-user-velocities auto"),
            "{words:?}"
        );
        let smoothed = RoadUserOptions::new(
            PerceptionLatency::Given(0.0),
            RoadUserSmoothing::Given(0.4),
            RoadUserVelocities::Smoothed,
        )
        .unwrap();
        assert!(smoothed.first().smooth_velocities);
        assert_eq!(
            smoothed.decide(&reading_with(1000, 0, 0)).correction,
            smoothed.first()
        );
        // Smoothed velocities with no window are refused by name.
        let err = RoadUserOptions::new(
            PerceptionLatency::Auto,
            RoadUserSmoothing::Given(0.0),
            RoadUserVelocities::Smoothed,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "road-user velocities cannot be smoothed without a smoothing window: \
             --road-user-velocities smoothed needs --road-user-smoothing auto or above 0"
        );
        // Under auto smoothing, asked-for velocities start as logged and are smoothed once decided.
        let asked = RoadUserOptions {
            velocities: RoadUserVelocities::Smoothed,
            ..RoadUserOptions::AUTO
        };
        assert_eq!(asked.first(), RoadUserCorrection::NONE);
        assert!(
            asked
                .decide(&reading_with(1000, 0, 0))
                .correction
                .smooth_velocities
        );
    }

    #[test]
    fn the_velocity_words_name_the_flips_and_how_the_model_reads_them() {
        let noisy = VelocityFlips {
            pairs: 1000,
            flips: 650,
        };
        let applied = RoadUserCorrection {
            smoothing_s: 0.7,
            latency_s: 0.0,
            smooth_velocities: true,
        };
        let words = velocity_words(&noisy, &applied).unwrap();
        assert!(
            words.starts_with(
                "road users' velocities seem noisy: in 650 of 1000 pairs of steps from one frame to \
                 the next (65 %) a road user's velocity turns an acceleration of at least 2 m/s² around"
            ),
            "{words}"
        );
        assert!(
            words.contains("smoothed over its reports of the last 0.7 s"),
            "{words}"
        );
        let quiet = VelocityFlips {
            pairs: 1000,
            flips: 3,
        };
        assert_eq!(velocity_words(&quiet, &RoadUserCorrection::NONE), None);
        let given = velocity_words(&quiet, &applied).unwrap();
        assert!(
            given.starts_with("every road user's velocity smoothed"),
            "{given}"
        );
        // The decision's words: the smoothing (no jumps: none), the velocities, then the latency.
        let words = RoadUserOptions::AUTO
            .decide(&reading_with(1000, 0, 650))
            .words();
        assert_eq!(words.len(), 2, "{words:?}");
        assert!(words[0].contains("velocities seem noisy"), "{words:?}");
        assert!(
            words[1].contains("in 8 as smoothed, and in 20"),
            "{words:?}"
        );
    }

    #[test]
    fn the_road_users_are_smoothed_when_they_jump_and_the_latency_read_as_they_are_read() {
        let auto = RoadUserOptions::AUTO;
        assert_eq!(auto.first(), RoadUserCorrection::NONE);
        assert_eq!(auto.reading_window_s(), SMOOTHING_S);
        // Jumpy: smoothed over SMOOTHING_S, the latency read on the smoothed profiles (0.2 s).
        let d = auto.decide(&reading_of(1000, 500));
        assert_eq!(d.correction.smoothing_s, SMOOTHING_S);
        assert!((d.correction.latency_s - 0.2).abs() < 1e-12, "{d:?}");
        assert_eq!(d.latency.map(|e| e.contact_as_logged), Some(6));
        // Steady: not smoothed, the latency read on the profiles as logged (0.3 s).
        let d = auto.decide(&reading_of(1000, 99));
        assert_eq!(d.correction.smoothing_s, 0.0);
        assert!((d.correction.latency_s - 0.3).abs() < 1e-12, "{d:?}");
        assert_eq!(d.latency.map(|e| e.contact_as_logged), Some(4));
        // Given values are kept whatever the reading; a given window is the reading's window.
        let given = RoadUserOptions {
            latency: PerceptionLatency::Given(0.1),
            smoothing: RoadUserSmoothing::Given(0.4),
            velocities: RoadUserVelocities::Auto,
        };
        assert_eq!(
            given.first(),
            RoadUserCorrection {
                smoothing_s: 0.4,
                latency_s: 0.1,
                smooth_velocities: false,
            }
        );
        assert_eq!(given.reading_window_s(), 0.4);
        assert_eq!(given.decide(&reading_of(10, 0)).correction, given.first());
        let off = RoadUserOptions {
            smoothing: RoadUserSmoothing::Given(0.0),
            ..auto
        };
        let d = off.decide(&reading_of(1000, 900));
        assert_eq!(d.correction.smoothing_s, 0.0);
        assert!((d.correction.latency_s - 0.3).abs() < 1e-12, "{d:?}");
        // Too few collisions: no latency read.
        let mut few = reading_of(1000, 500);
        few.contacts_smoothed.truncate(5);
        assert_eq!(auto.decide(&few).correction.latency_s, 0.0);
    }

    #[test]
    fn the_smoothing_words_name_the_jumps_and_how_the_model_reads_them() {
        let jumpy = TrackSteps {
            steps: 1000,
            jumps: 750,
        };
        let words = smoothing_words(&jumpy, 0.7).unwrap();
        assert!(
            words.starts_with(
                "road users seem to be reported at varying ages or with noisy positions: 750 of 1000 \
                 steps from one frame to the next (75 %)"
            ),
            "{words}"
        );
        assert!(
            words.contains("smoothed over its reports of the last 0.7 s"),
            "{words}"
        );
        let kept = smoothing_words(&jumpy, 0.0).unwrap();
        assert!(kept.contains("learning with them as logged"), "{kept}");
        let steady = TrackSteps {
            steps: 1000,
            jumps: 3,
        };
        assert_eq!(smoothing_words(&steady, 0.0), None);
        let given = smoothing_words(&steady, 0.5).unwrap();
        assert!(given.starts_with("every road user smoothed"), "{given}");
        // The decision's words: the smoothing, then the latency read on the frames as smoothed.
        let auto = RoadUserOptions::AUTO;
        let words = auto.decide(&reading_of(1000, 500)).words();
        assert_eq!(words.len(), 2, "{words:?}");
        assert!(words[0].contains("varying ages"), "{words:?}");
        assert!(
            words[1].contains("in 6 as smoothed, and in 20"),
            "{words:?}"
        );
        let words = auto.decide(&reading_of(1000, 0)).words();
        assert_eq!(words.len(), 1, "{words:?}");
        assert!(words[0].contains("in 4 as logged, and in 20"), "{words:?}");
    }

    #[test]
    fn auto_or_a_number_is_parsed_once_for_every_option() {
        assert_eq!("auto".parse(), Ok(RoadUserSmoothing::Auto));
        assert_eq!("AUTO".parse(), Ok(PerceptionLatency::Auto));
        assert_eq!("0.7".parse(), Ok(RoadUserSmoothing::Given(0.7)));
        assert_eq!("0".parse(), Ok(PerceptionLatency::Given(0.0)));
        let err = "2.5".parse::<RoadUserSmoothing>().unwrap_err();
        assert_eq!(
            err,
            "'2.5' is neither `auto` nor a window between 0 and 2 s"
        );
        let err = "x".parse::<PerceptionLatency>().unwrap_err();
        assert_eq!(err, "'x' is neither `auto` nor a latency between 0 and 1 s");
        assert!("NaN".parse::<RoadUserSmoothing>().is_err());
        for s in ["auto", "0.35", "2"] {
            assert_eq!(s.parse::<RoadUserSmoothing>().unwrap().to_string(), s);
        }
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
