//! `avguard simulate`: write N seeded HDF5 run logs of a scenario file and report the outcomes.
//!
//! Run `i` uses seed `scenarios::run_seed(S, i)` and is written to `OUT/<scenario>_<i:04>.h5`; the same
//! seed gives byte-identical files. After writing, every run is evaluated against the law files (`--laws`,
//! default `laws/specs` when it exists) and the command prints, for the scenario's stressed laws, how many
//! runs violate each one and how many collide, so that a scenario's tuning can be checked at a glance.
//!
//! Runs are simulated, evaluated and written in parallel (rayon); each run depends only on its own seed,
//! so the files are byte-identical to a serial loop. Batches of 50 runs or more show a progress bar on
//! stderr.

use std::path::{Path, PathBuf};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use laws::{EvalConfig, Evaluator, LawSet, SignalStream};
use rayon::prelude::*;
use scenarios::log::{write_log, RunLog, RunMeta};
use scenarios::Scenario;

use crate::scenario_runs::{laws_dir_or_default, ScenarioRuns};

/// Arguments of `avguard simulate`.
#[derive(clap::Args)]
pub struct Args {
    /// The scenario and its runs.
    #[command(flatten)]
    pub sim: ScenarioRuns,
    /// Output directory (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Law directory for the outcome counts (default: `laws/specs` if present).
    #[arg(long)]
    pub laws: Option<PathBuf>,
}

/// Runs `avguard simulate`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let scenario = args.sim.scenario()?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let laws_dir = laws_dir_or_default(args.laws.as_deref());
    let mut tally = match &laws_dir {
        Some(dir) => Some(Tally::new(dir, &scenario)?),
        None => None,
    };
    let bar = progress_bar(args.sim.runs);
    // Every run has its own seed, so running them in parallel gives the same files as a serial loop; the
    // per-run outcomes are collected in run order.
    let outcomes: Vec<Outcome> = (0..args.sim.runs)
        .into_par_iter()
        .map(|i| {
            let outcome = simulate_one(&scenario, &args, i, tally.as_ref());
            bar.inc(1);
            outcome
        })
        .collect::<anyhow::Result<_>>()?;
    bar.finish_and_clear();
    let collisions = outcomes.iter().filter(|o| o.collision).count();
    if let Some(tally) = &mut tally {
        for o in &outcomes {
            tally.add(&o.violated);
        }
    }
    println!(
        "{}: {} runs written to {}; {collisions} with a collision",
        scenario.name(),
        args.sim.runs,
        args.out.display()
    );
    match tally {
        Some(tally) => tally.print(args.sim.runs),
        None => println!("  (no law directory: pass --laws DIR for per-law counts)"),
    }
    Ok(())
}

/// What one run produced, for the summary.
struct Outcome {
    collision: bool,
    /// Per law of the set: violated in this run (empty without a law set).
    violated: Vec<bool>,
}

/// Simulates run `i`, evaluates it and writes its log.
fn simulate_one(
    scenario: &Scenario,
    args: &Args,
    i: u64,
    tally: Option<&Tally>,
) -> anyhow::Result<Outcome> {
    let seed = args.sim.seed_of(i);
    let frames = scenarios::run(scenario, seed);
    let outcome = Outcome {
        collision: frames.iter().any(|f| f.collision),
        violated: tally.map_or_else(Vec::new, |t| t.violations(&frames)),
    };
    let log = RunLog {
        meta: RunMeta {
            scenario: scenario.name().to_owned(),
            run_id: format!("{}_{i:04}", scenario.name()),
            frame_period_s: scenario.frame_period_s(),
            seed: Some(seed),
        },
        frames,
    };
    let path = args.out.join(format!("{}_{i:04}.h5", scenario.name()));
    write_log(&path, &log).with_context(|| format!("writing {}", path.display()))?;
    Ok(outcome)
}

/// A progress bar on stderr for batches long enough to need one (hidden when stderr is not a terminal).
fn progress_bar(runs: u64) -> ProgressBar {
    if runs < 50 {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(runs), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} runs ({eta} left)")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message("simulating");
    bar
}

/// Counts of runs violating each stressed law.
struct Tally {
    laws: LawSet,
    cfg: EvalConfig,
    /// (law name, index in the set, runs violating); index `None` when the set lacks the law.
    counts: Vec<(String, Option<usize>, u64)>,
}

impl Tally {
    fn new(dir: &Path, scenario: &Scenario) -> anyhow::Result<Tally> {
        let laws = crate::lawdir::load(dir)?;
        let cfg = EvalConfig {
            frame_period_s: scenario.frame_period_s(),
            ..EvalConfig::default()
        };
        // Fail early on laws that cannot be evaluated at this frame period.
        Evaluator::new(&laws, &cfg).with_context(|| format!("laws in {}", dir.display()))?;
        let counts = scenario
            .stresses()
            .iter()
            .map(|name| (name.clone(), laws.index_of(name), 0))
            .collect();
        Ok(Tally { laws, cfg, counts })
    }

    /// Which laws of the set `frames` violate (all false when the evaluator cannot be built, which
    /// [`Tally::new`] has ruled out).
    fn violations(&self, frames: &[laws::Frame]) -> Vec<bool> {
        let mut violated = vec![false; self.laws.laws().len()];
        let Ok(mut eval) = Evaluator::new(&self.laws, &self.cfg) else {
            return violated;
        };
        let mut signals = SignalStream::new(self.cfg.context, eval.needed_signals());
        for frame in frames {
            let verdicts = eval.step(signals.next(frame));
            for (i, v) in violated.iter_mut().enumerate() {
                *v |= verdicts.violated_now(i);
            }
        }
        violated
    }

    fn add(&mut self, violated: &[bool]) {
        for (_, index, count) in &mut self.counts {
            if index.is_some_and(|i| violated.get(i).copied().unwrap_or(false)) {
                *count += 1;
            }
        }
    }

    fn print(&self, runs: u64) {
        for (name, index, count) in &self.counts {
            match index {
                Some(_) => println!(
                    "  {name}: {count} of {runs} runs violate it ({:.0} %)",
                    100.0 * *count as f64 / runs.max(1) as f64
                ),
                None => println!("  {name}: not in the law set"),
            }
        }
    }
}
