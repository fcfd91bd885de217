//! `avguard demo`: the whole method on one machine, in about a minute.
//!
//! 1. Simulate training runs of a few scenario kinds and learn one model (in memory, in parallel).
//! 2. Serve it with the live bridge on a free loopback port.
//! 3. Drive held-out runs through the bridge over websockets twice: enforcement off (the simulator ignores
//!    interventions) and on (it slows down as told).
//! 4. Print prediction %, median lead and false-alarm % per θ from the live risks, next to the reactive
//!    baseline, and the violation and collision rates with and without enforcement (an AV version of the
//!    paper's Table 1). Also check that the live risks equal a batch re-run of the same frames.

mod live;
mod summary;
pub(crate) mod train;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use scenarios::Scenario;

pub use summary::Summary;

/// What the demo runs.
#[derive(Debug, Clone)]
pub struct DemoConfig {
    /// Folder of `.law` files and `properties.toml`.
    pub laws_dir: PathBuf,
    /// The scenario files.
    pub scenario_files: Vec<PathBuf>,
    /// Training runs per scenario.
    pub train_runs: u64,
    /// Held-out runs per scenario (each driven twice).
    pub test_runs: u64,
    /// Calibration runs per scenario (disjoint from training and held-out runs).
    pub calibration_runs: u64,
    /// How the model's predicates are chosen.
    pub abstraction: monitor::select::AbstractionMode,
    /// The calibration's target false-alarm rate.
    pub target_false_alarms: f64,
    /// Base seed; training and held-out runs use disjoint seeds derived from it.
    pub seed: u64,
    /// Thresholds reported.
    pub thresholds: Vec<f64>,
    /// Threshold the bridge enforces for every property; `None`: each property's calibrated θ and
    /// debounce ([`UNCALIBRATED_THRESHOLD`] for a property without one).
    pub enforce_threshold: Option<f64>,
    /// Where the model, the prediction log and the reports go.
    pub out: PathBuf,
}

/// θ enforced for a property without a calibration when no threshold is given.
pub const UNCALIBRATED_THRESHOLD: f64 = 0.5;

/// How enforcement was set, in words (for the printout).
fn enforcement_words(threshold: Option<f64>) -> String {
    match threshold {
        Some(theta) => format!("θ = {theta}"),
        None => {
            format!(
                "each property's calibrated θ, a collision's its interventions' (θ = \
                 {UNCALIBRATED_THRESHOLD} if not calibrated)"
            )
        }
    }
}

/// Runs the demo and prints its summary.
pub fn run(cfg: &DemoConfig) -> anyhow::Result<Summary> {
    let started = Instant::now();
    std::fs::create_dir_all(&cfg.out)
        .with_context(|| format!("{}: cannot create", cfg.out.display()))?;
    let scenarios = cfg
        .scenario_files
        .iter()
        .map(|path| crate::scenario_runs::read_scenario(path))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let names: Vec<&str> = scenarios.iter().map(Scenario::name).collect();
    crate::outln!(
        "avguard demo: scenarios {}; {} training, {} calibration and {} held-out runs each; enforcement at {}",
        names.join(", "),
        cfg.train_runs,
        cfg.calibration_runs,
        cfg.test_runs,
        enforcement_words(cfg.enforce_threshold)
    )?;

    crate::outln!(
        "[1/4] simulating training and calibration runs, learning the model ({} abstraction), calibrating ...",
        cfg.abstraction.as_str()
    )?;
    let mut model = train::learn(
        &cfg.laws_dir,
        &scenarios,
        cfg.train_runs,
        cfg.seed.wrapping_mul(1000),
        cfg.abstraction,
    )?;
    let calibrate_options = crate::calibration::CalibrateOptions {
        target_false_alarm: cfg.target_false_alarms,
        ..crate::calibration::CalibrateOptions::default()
    };
    let (calibrations, tuned_rss) = train::calibrate(
        &mut model,
        &scenarios,
        cfg.calibration_runs,
        cfg.seed.wrapping_mul(1000).wrapping_add(250),
        &calibrate_options,
    )?;
    let model_path = cfg.out.join("model.bin");
    crate::modelfile::write(&model_path, &model)?;
    for (p, cal) in model.properties().iter().zip(&calibrations) {
        crate::outln!(
            "      {}: {} predicates ({}), {} states, PAC bound met by {} of {} states",
            p.name(),
            p.predicates().len(),
            p.selection().map_or("fixed", |s| s.mode.as_str()),
            p.n_states(),
            p.pac().met(),
            p.pac().total()
        )?;
        crate::outln!("        predicates: {}", p.predicates().join(", "))?;
        for (k, m) in p.members().iter().enumerate() {
            crate::outln!(
                "        chain {} (other folds): {}",
                k + 2,
                m.predicates().join(", ")
            )?;
        }
        if let Some(f) = p.forest() {
            crate::outln!(
                "        forest: {} trees over {} split predicates, mixed in at weight {}",
                f.trees().len(),
                f.predicates().len(),
                f.weight()
            )?;
        }
        match &cal.result {
            Ok(c) => {
                crate::outln!(
                    "        calibrated on {} runs: θ = {:.3}{}, false alarms {}/{} (95 % upper bound {:.1} % ≤ target {:.0} %)",
                    c.n_safe_runs + c.n_violating_runs,
                    c.theta,
                    if c.debounce_frames > 1 {
                        format!(", debounce {} frames", c.debounce_frames)
                    } else {
                        String::new()
                    },
                    c.n_false_alarms,
                    c.n_safe_runs,
                    100.0 * c.false_alarm_upper,
                    100.0 * c.target_false_alarm
                )?;
                // The demo pools its kinds' runs and tries the debounce lengths on the calibration runs
                // themselves (no selection runs).
                let n_options = calibrate_options.debounce_frames.len();
                for note in cal.few_runs_notes(n_options, false, calibrate_options.per_scenario) {
                    crate::outln!("        {note} (more --calibration-runs give more)")?;
                }
            }
            Err(e) => crate::outln!("        not calibrated: {e}")?,
        }
        match &cal.enforcement {
            Some(Ok(c)) => crate::outln!(
                "        interventions at θ = {:.3}: false alarms {}/{} (95 % upper bound {:.1} % ≤ target {:.0} %)",
                c.theta,
                c.n_false_alarms,
                c.n_safe_runs,
                100.0 * c.false_alarm_upper,
                100.0 * c.target_false_alarm
            )?,
            Some(Err(e)) => crate::outln!("        interventions at the alarm's θ: {e}")?,
            None => {}
        }
        if let Some(t) = tuned_rss.iter().find(|t| t.property == p.name()) {
            crate::outln!(
                "        RSS tuned on the same runs: response times × {} of CARLA's, false alarms {} ({} the {:.0} % target)",
                t.scale,
                t.calibration.false_alarm_pct.map_or_else(|| "–".to_owned(), |f| format!("{f:.1} %")),
                if t.within_target { "within" } else { "no response time keeps within" },
                100.0 * t.target
            )?;
        }
    }

    let log_path = cfg.out.join("predictions.jsonl");
    let bridge = live::LiveBridge::start(model.clone(), cfg.enforce_threshold, &log_path)?;
    crate::outln!(
        "[2/4] bridge listening on {} (prediction log {})",
        bridge.url(),
        log_path.display()
    )?;
    let test_base = cfg.seed.wrapping_mul(1000).wrapping_add(500);
    let jobs: Vec<(usize, u64)> = (0..scenarios.len())
        .flat_map(|s| {
            (0..cfg.test_runs).map(move |i| (s, scenarios::run_seed(test_base + s as u64, i)))
        })
        .collect();
    crate::outln!(
        "[3/4] driving {} held-out runs through the bridge, enforcement off ...",
        jobs.len()
    )?;
    let off = bridge.drive(&jobs, &scenarios, false, "no enforcement")?;
    crate::outln!("[4/4] driving them again, obeying slow-down interventions ...")?;
    let on = bridge.drive(&jobs, &scenarios, true, "enforcement")?;
    let report = bridge.stop()?;

    let laws = crate::lawdir::load(&cfg.laws_dir)?;
    let summary = Summary::compute(
        &model,
        &laws,
        &scenarios,
        summary::Drives {
            off: &off,
            on: &on,
            n_interventions: report.n_interventions,
        },
        &cfg.thresholds,
        &tuned_rss,
    )?;
    summary.print(&enforcement_words(cfg.enforce_threshold))?;
    summary.write_reports(&cfg.out, &off, &model)?;
    crate::outln!(
        "\nmodel, prediction log and report.md/report.html are in {}; finished in {:.1} s",
        cfg.out.display(),
        started.elapsed().as_secs_f64()
    )?;
    Ok(summary)
}
