//! `avguard learn --laws DIR --out MODEL LOG_OR_DIR...`: learn one DTMC per monitored property from logs.
//!
//! The laws are the `*.law` files of DIR in sorted name order (embedded in the model, which is then
//! self-contained). The properties come from `--properties FILE`, else `DIR/properties.toml` when it
//! exists, else one property per law (laws with more than 12 predicates are left out and named). Each log
//! is learned on its own (in parallel, rayon) into per-property counts; a log that cannot be read is
//! reported by name and skipped, and the command fails when no log was learned. The counts are merged
//! (exact: counting is addition), every property is built (smoothing, PAC, tables) and the model written.
//! The PAC summary per property is printed and stored in the model (`avguard info` shows it again).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use laws::{LawSource, SignalContext};
use monitor::estimate::LaplaceConfig;
use monitor::learning::merge_counts;
use monitor::pac::PacConfig;
use monitor::spec::{parse_properties_toml, PropertySpec};
use monitor::{BuildConfig, Counts, Domain, Model, Plan};
use rayon::prelude::*;

/// Arguments of `avguard learn`.
#[derive(clap::Args)]
pub struct Args {
    /// Folder of `*.law` files.
    #[arg(long)]
    pub laws: PathBuf,
    /// Model file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Properties file (default: `LAWS/properties.toml` when present, else one property per law).
    #[arg(long)]
    pub properties: Option<PathBuf>,
    /// Laplace pseudo-count added to each smoothed transition.
    #[arg(long, default_value_t = 1.0)]
    pub alpha: f64,
    /// Which valid transitions receive α: `local` (single-predicate changes and the end of the run, plus
    /// every observed transition) or `all-valid` (every valid transition, Algorithm 1 as written; up to
    /// 10 predicates). `all-valid` leaks risk into states never seen to violate; see monitor::av.
    #[arg(long, value_enum, default_value_t = Smoothing::Local)]
    pub smoothing: Smoothing,
    /// PAC error bound ε.
    #[arg(long, default_value_t = 0.05)]
    pub epsilon: f64,
    /// PAC confidence parameter δ (split over the learned states).
    #[arg(long, default_value_t = 0.05)]
    pub delta: f64,
    /// Horizons of the bounded risk tables, seconds, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,5")]
    pub horizons: Vec<f64>,
    /// Log files (`.h5`) or folders holding them.
    #[arg(required = true)]
    pub logs: Vec<PathBuf>,
}

fn plan(args: &Args, laws: Vec<LawSource>, config: BuildConfig) -> anyhow::Result<Plan> {
    let default_file = args.laws.join("properties.toml");
    let file = args
        .properties
        .clone()
        .or_else(|| default_file.is_file().then_some(default_file));
    match file {
        Some(path) => {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("{}: cannot read", path.display()))?;
            let specs: Vec<PropertySpec> =
                parse_properties_toml(&text).with_context(|| format!("{}", path.display()))?;
            Plan::from_specs(laws, &specs, config).with_context(|| format!("{}", path.display()))
        }
        None => {
            let (plan, skipped) = Plan::with_default_properties(laws, config)?;
            if !skipped.is_empty() {
                println!(
                    "left out (more than {} predicates): {}",
                    monitor::spec::MAX_PROPERTY_PREDICATES,
                    skipped.join(", ")
                );
            }
            Ok(plan)
        }
    }
}

/// Learns one log into per-property counts.
fn learn_file(plan: &Plan, path: &Path) -> anyhow::Result<Vec<Counts>> {
    let log = scenarios::log::read_log(path)?;
    let period = plan.config().frame_period_s;
    if (log.meta.frame_period_s - period).abs() > 1e-9 {
        bail!(
            "frame period {} s differs from the model's {period} s",
            log.meta.frame_period_s
        );
    }
    let mut learner = plan.learner(SignalContext::default())?;
    learner.observe_run(&log.frames)?;
    Ok(learner.into_counts())
}

/// `--smoothing` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Smoothing {
    /// Single-predicate changes, the end of the run, and observed transitions.
    Local,
    /// Every valid transition.
    AllValid,
}

/// Runs `avguard learn`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let laws = crate::lawdir::read_sources(&args.laws)?;
    let defaults = BuildConfig::default();
    let config = BuildConfig {
        laplace: LaplaceConfig { alpha: args.alpha },
        pac: PacConfig {
            epsilon: args.epsilon,
            delta: args.delta,
        },
        horizons_steps: BuildConfig::steps_from_seconds(&args.horizons, defaults.frame_period_s)?,
        smoothing: match args.smoothing {
            Smoothing::Local => monitor::av::SmoothingScope::Local,
            Smoothing::AllValid => monitor::av::SmoothingScope::AllValid,
        },
        ..defaults
    };
    // Law files are named by file name inside the model; the folder names them in errors.
    let plan =
        plan(&args, laws, config).with_context(|| format!("laws in {}", args.laws.display()))?;
    let logs = crate::batch::expand_logs(&args.logs)?;
    let bar = ProgressBar::new(logs.len() as u64).with_style(
        ProgressStyle::with_template("learning {bar:30} {pos}/{len} logs ({eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let results: Vec<(PathBuf, anyhow::Result<Vec<Counts>>)> = logs
        .par_iter()
        .map(|path| {
            let r = learn_file(&plan, path);
            bar.inc(1);
            (path.clone(), r)
        })
        .collect();
    bar.finish_and_clear();
    let mut counts = plan.empty_counts();
    let mut n_learned = 0usize;
    for (path, result) in results {
        match result {
            Ok(c) => {
                merge_counts(&mut counts, &c)?;
                n_learned += 1;
            }
            Err(e) => eprintln!("skipped {}: {e:#}", path.display()),
        }
    }
    if n_learned == 0 {
        bail!("no log could be learned ({} given)", logs.len());
    }
    let model = plan.build(counts)?;
    std::fs::write(&args.out, model.to_bytes())
        .with_context(|| format!("{}: cannot write", args.out.display()))?;
    println!(
        "learned {} properties from {n_learned} of {} logs -> {}",
        model.properties().len(),
        logs.len(),
        args.out.display()
    );
    print_summary(&model)
}

fn print_summary(model: &Model) -> anyhow::Result<()> {
    for p in model.properties() {
        let pac = p.pac();
        let domain = p.domain()?;
        println!(
            "{}: {} predicates, {} states, {} runs, {} transitions; PAC (epsilon {}, delta {}): {} / {} \
             states meet the bound ({} visited)",
            p.name(),
            p.predicates().len(),
            p.n_states(),
            p.counts().n_runs(),
            p.counts().n_transitions(),
            pac.config().epsilon,
            pac.config().delta,
            pac.met(),
            pac.total(),
            pac.visited()
        );
        for (s, n, required) in pac.worst(3) {
            if domain.is_valid_state(s) {
                println!(
                    "  worst: {n} of {} visits needed in [{}]",
                    required.ceil(),
                    domain.decode(s)
                );
            }
        }
    }
    Ok(())
}
