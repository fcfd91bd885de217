//! `avguard drive`: the scenario generator as a simulator client of a running bridge.
//!
//! Run `i` uses seed `scenarios::run_seed(S, i)` (the same seeds as `avguard simulate`) and its own
//! connection. Each run is driven in lock-step (see `bridge::drive`): one frame published, its risk reply
//! awaited, interventions applied as speed caps. Per run the command prints the frames, interventions,
//! collisions and the laws violated (evaluated on the frames the run produced), then a summary.

use std::path::PathBuf;
use std::time::Duration;

use crate::scenario_runs::{laws_dir_or_default, ScenarioRuns};
use anyhow::Context;
use bridge::drive::{DriveConfig, Encoding};

/// Arguments of `avguard drive`.
#[derive(clap::Args)]
pub struct Args {
    /// The bridge, e.g. `ws://127.0.0.1:9090` (add `?token=...` if the bridge requires one).
    #[arg(long, default_value = "ws://127.0.0.1:9090")]
    pub connect: String,
    /// The scenario and its runs.
    #[command(flatten)]
    pub sim: ScenarioRuns,
    /// Publish binary protobuf envelopes instead of rosbridge JSON.
    #[arg(long)]
    pub binary: bool,
    /// Do not apply interventions (open loop; the bridge still predicts).
    #[arg(long)]
    pub ignore_interventions: bool,
    /// Law directory for the violation counts (default: `laws/specs` if present).
    #[arg(long)]
    pub laws: Option<PathBuf>,
    /// Longest wait for the bridge's reply to one frame, seconds.
    #[arg(long, default_value_t = 10.0)]
    pub reply_timeout_s: f64,
}

/// Runs `avguard drive`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let scenario = args.sim.scenario()?;
    let laws_dir = laws_dir_or_default(args.laws.as_deref());
    let laws = laws_dir.as_deref().map(crate::lawdir::load).transpose()?;
    anyhow::ensure!(
        args.reply_timeout_s > 0.0 && args.reply_timeout_s <= 86_400.0,
        "--reply-timeout-s must be a positive number of seconds, at most a day"
    );
    let config = DriveConfig {
        url: args.connect.clone(),
        encoding: if args.binary {
            Encoding::Binary
        } else {
            Encoding::Json
        },
        obey: !args.ignore_interventions,
        reply_timeout: Duration::from_secs_f64(args.reply_timeout_s),
    };
    let seeds: Vec<u64> = (0..args.sim.runs).map(|i| args.sim.seed_of(i)).collect();
    let mut collisions = 0u64;
    let mut violating: Vec<(String, u64)> = Vec::new();
    let mut law_error = None;
    // The runs go on when standard output is closed; the error ends the command after them.
    let mut out_error = None;
    bridge::blocking::drive_runs(&config, &scenario, &seeds, |i, report| {
        collisions += u64::from(report.collision);
        let violations = match &laws {
            Some(laws) => match report.violations(laws, scenario.frame_period_s()) {
                Ok(v) => v,
                Err(err) => {
                    law_error.get_or_insert(err);
                    Vec::new()
                }
            },
            None => Vec::new(),
        };
        for (name, _) in &violations {
            match violating.iter_mut().find(|(n, _)| n == name) {
                Some((_, count)) => *count += 1,
                None => violating.push((name.clone(), 1)),
            }
        }
        let listed: Vec<String> = violations
            .iter()
            .map(|(name, t)| format!("{name}@{t:.1}s"))
            .collect();
        if let Err(err) = crate::outln!(
            "run {i} (seed {}): {} frames, {} interventions, collision: {}, violations: [{}]",
            report.seed,
            report.frames.len(),
            report.interventions.len(),
            if report.collision { "yes" } else { "no" },
            listed.join(", ")
        ) {
            out_error.get_or_insert(err);
        }
    })
    .with_context(|| format!("driving {} through {}", scenario.name(), args.connect))?;
    if let Some(err) = law_error {
        return Err(err).context("evaluating the laws");
    }
    if let Some(err) = out_error {
        return Err(err.into());
    }
    crate::outln!(
        "{}: {} runs, {collisions} with a collision",
        scenario.name(),
        args.sim.runs
    )?;
    match &laws {
        Some(_) => {
            for (name, count) in &violating {
                crate::outln!("  {name}: violated in {count} of {} runs", args.sim.runs)?;
            }
        }
        None => crate::outln!("  (no law directory: pass --laws DIR for violation counts)")?,
    }
    Ok(())
}
