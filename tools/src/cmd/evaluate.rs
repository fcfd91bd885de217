//! `avguard evaluate --laws DIR --train LOGS --test LOGS`: learn (fixed and auto), calibrate on a split of
//! the training runs, score the test runs, and print one table per property beside the reactive baseline,
//! RSS and the best reactive rule (see [`crate::evaluate`]).

use std::path::PathBuf;

use anyhow::Context;
use monitor::{BuildConfig, LaplaceConfig};

use crate::calibration::CalibrateOptions;
use crate::cmd::learn::SearchArgs;
use crate::evaluate::{evaluate, render_repeats, EvaluateOptions, Evaluation, SeedSummary};

/// Arguments of `avguard evaluate`.
#[derive(clap::Args)]
pub struct Args {
    /// Folder of `*.law` files (and `properties.toml`).
    #[arg(long)]
    laws: PathBuf,
    /// Properties file (default: `LAWS/properties.toml` when present, else one property per law).
    #[arg(long)]
    properties: Option<PathBuf>,
    /// Training logs or folders (split into learning and calibration runs).
    #[arg(long, required = true, num_args = 1..)]
    train: Vec<PathBuf>,
    /// Test logs or folders (never used to learn or calibrate).
    #[arg(long, required = true, num_args = 1..)]
    test: Vec<PathBuf>,
    /// Share of the training logs used for calibration.
    #[arg(long, default_value_t = 0.3)]
    calibration_fraction: f64,
    /// Target false-alarm rate of the calibration, as a fraction (`0.1`) or a percentage (`10%`).
    #[arg(long, default_value = "0.1", value_parser = super::values::rate)]
    target_false_alarms: f64,
    #[command(flatten)]
    debounce: super::values::Debounce,
    /// Thresholds reported beside the calibrated one.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0.3,0.5,0.7",
        value_parser = super::values::threshold
    )]
    thresholds: Vec<f64>,
    /// Seed of the split and of the search's folds.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Evaluate this many times, with seeds SEED, SEED + 1, ...: each evaluation is printed (and written
    /// to `OUT/seed-K` with `--out`), then a table of the pairs dominated under each seed and their sums,
    /// and the auto curve at each false-alarm budget as means over the seeds.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeats: u32,
    /// Time between the logs' frames, s (as `learn`; default: the period of the first training log, in
    /// path order, that reads).
    #[arg(long)]
    frame_period_s: Option<f64>,
    /// Calibrate within every scenario kind of the calibration runs (as `calibrate --per-scenario`).
    #[arg(long)]
    per_scenario: bool,
    /// The auto model's search (as `learn`).
    #[command(flatten)]
    search: SearchArgs,
    /// RSS comparator parameters.
    #[command(flatten)]
    rss: crate::rss_options::RssOptions,
    /// Also write evaluate.json and both models into this folder.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The logs an evaluation reads and the frame period it steps at, read from its arguments once.
struct Inputs {
    /// The training logs (files, folders expanded).
    train: Vec<PathBuf>,
    /// The test logs.
    test: Vec<PathBuf>,
    /// `--frame-period-s`, or the first training log's, as `learn` chooses it.
    frame_period_s: f64,
    /// Where that period came from, in words (`None` when given).
    period_words: Option<String>,
}

/// Checks what can be checked of `args` before any log is read, then lists the logs and reads the
/// frame period.
///
/// # Errors
/// A calibration fraction outside (0, 1); a training or test path that does not exist.
fn inputs(args: &Args) -> anyhow::Result<Inputs> {
    anyhow::ensure!(
        args.calibration_fraction > 0.0 && args.calibration_fraction < 1.0,
        "--calibration-fraction must be in (0, 1)"
    );
    let train = crate::batch::expand_logs(&args.train)?;
    let test = crate::batch::expand_logs(&args.test)?;
    let (frame_period_s, source) = crate::fit::frame_period(args.frame_period_s, &train);
    Ok(Inputs {
        period_words: crate::fit::period_words(frame_period_s, &source),
        train,
        test,
        frame_period_s,
    })
}

/// Runs `avguard evaluate`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let inputs = inputs(&args)?;
    if let Some(words) = &inputs.period_words {
        eprintln!("{words}");
    }
    let mut summaries = Vec::new();
    for seed in (0..u64::from(args.repeats)).map(|k| args.seed.wrapping_add(k)) {
        if args.repeats > 1 {
            crate::outln!("\n== seed {seed} ==")?;
        }
        let out = args.out.as_ref().map(|o| {
            if args.repeats > 1 {
                o.join(format!("seed-{seed}"))
            } else {
                o.clone()
            }
        });
        let eval = evaluate_seed(&args, &inputs, seed)?;
        for (path, e) in &eval.errors {
            eprintln!("skipped {}: {e}", path.display());
        }
        crate::out!("{}", eval.render())?;
        if let Some(out) = out {
            write(&eval, &out)?;
            crate::outln!("\nevaluate.json and both models are in {}", out.display())?;
        }
        summaries.push(SeedSummary::of(seed, &eval));
    }
    if args.repeats > 1 {
        crate::out!("{}", render_repeats(&summaries))?;
    }
    Ok(())
}

/// One evaluation as `avguard evaluate ARGS` runs it, for a caller that is not the command line (the
/// Python package): `--seed`'s, written to `--out` when given; nothing printed but progress.
///
/// # Errors
/// As the command's; `--repeats` above 1 (call once per seed).
pub fn evaluate_one(args: &Args) -> anyhow::Result<Evaluation> {
    anyhow::ensure!(
        args.repeats == 1,
        "--repeats {} is the command line's: evaluate once per seed instead",
        args.repeats
    );
    let eval = evaluate_seed(args, &inputs(args)?, args.seed)?;
    if let Some(out) = &args.out {
        write(&eval, out)?;
    }
    Ok(eval)
}

/// `eval` written to `out`, the error naming the folder.
fn write(eval: &Evaluation, out: &std::path::Path) -> anyhow::Result<()> {
    eval.write(out)
        .with_context(|| format!("{}: cannot write the evaluation", out.display()))
}

/// One evaluation of `inputs` with `seed` (split and search).
fn evaluate_seed(args: &Args, inputs: &Inputs, seed: u64) -> anyhow::Result<Evaluation> {
    let opts = EvaluateOptions {
        build: BuildConfig {
            laplace: LaplaceConfig {
                alpha: args.search.alpha.value(),
            },
            ..BuildConfig::at_frame_period(inputs.frame_period_s).context("--frame-period-s")?
        },
        search: args.search.config(seed),
        road_users: args.search.road_users()?,
        calibrate: CalibrateOptions {
            target_false_alarm: args.target_false_alarms,
            debounce_frames: args.debounce.frames.clone(),
            per_scenario: args.per_scenario,
            ..CalibrateOptions::default()
        },
        calibration_fraction: args.calibration_fraction,
        seed,
        thresholds: args.thresholds.clone(),
        rss: args.rss.params()?,
    };
    evaluate(
        &args.laws,
        args.properties.as_deref(),
        &inputs.train,
        &inputs.test,
        &opts,
    )
}
