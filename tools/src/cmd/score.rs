//! `avguard score`: batch time-ahead scoring of logs against a model (INTERFACES §5), and
//! `avguard score merge` to combine shards.
//!
//! Each log is run through the same `monitor::Session` as the live bridge. Per log the result is cached in
//! `OUT/runs/NAME.json`, so a rerun skips logs already scored (unless `--force`), `--shard i/n` runs can
//! share nothing but a folder layout, and `score merge` rebuilds `score.json` and the reports from the
//! union of shard caches exactly as an unsharded run would.

use std::path::PathBuf;

use crate::batch::Shard;
use crate::score::{merge, Job, JobSpec};

/// Arguments of `avguard score`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<ScoreCommand>,
    /// The model learned by `avguard learn`.
    #[arg(long, value_name = "MODEL", required = true)]
    model: Option<PathBuf>,
    /// Alarm thresholds θ (comma-separated, each in (0, 1]).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0.3,0.5,0.7",
        value_name = "θ,...",
        value_parser = super::values::threshold
    )]
    thresholds: Vec<f64>,
    /// Score with P(unsafe within SECONDS) instead of P(eventually unsafe); the model must have a table
    /// for this horizon (`avguard info` lists them).
    #[arg(long, value_name = "SECONDS")]
    horizon: Option<f64>,
    /// Compare θ with the PAC upper bound p + ε of each state instead of p.
    #[arg(long)]
    conservative: bool,
    /// Output folder for score.json, report.md, report.html and the per-log cache.
    #[arg(long, value_name = "DIR", required = true)]
    out: Option<PathBuf>,
    /// Score logs again even when OUT already holds their results.
    #[arg(long)]
    force: bool,
    /// Score only the deterministic share `i/n` of the logs (0-based i); combine with `score merge`.
    #[arg(long, value_name = "i/n")]
    shard: Option<Shard>,
    /// Runs per property whose risk over time is plotted in report.html.
    #[arg(long, default_value_t = 3, value_name = "N")]
    plot_runs: usize,
    /// RSS comparator parameters.
    #[command(flatten)]
    rss: crate::rss_options::RssOptions,
    /// Apollo HD map for the road fields of `.record` inputs (HDF5 logs already hold theirs).
    #[arg(long, value_name = "FILE")]
    map: Option<PathBuf>,
    /// Logs or Cyber records (`*.record`, `*.record.NNNNN`), or folders searched for both. The segments
    /// of a split recording (`NAME.record.00000`, `NAME.record.00001`, …) are scored as one run, named by
    /// its first segment, whichever of them is given.
    #[arg(value_name = "LOG_OR_DIR", required = true)]
    logs: Vec<PathBuf>,
}

#[derive(clap::Subcommand)]
enum ScoreCommand {
    /// Combine the output folders of `--shard` runs into one score.json and reports.
    Merge(MergeArgs),
}

#[derive(clap::Args)]
struct MergeArgs {
    /// The merged output folder.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Runs per property whose risk over time is plotted in report.html.
    #[arg(long, default_value_t = 3, value_name = "N")]
    plot_runs: usize,
    /// The shards' output folders.
    #[arg(value_name = "SHARD_DIR", required = true)]
    shards: Vec<PathBuf>,
}

/// Runs `avguard score`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(ScoreCommand::Merge(shards)) = args.command {
        return merge(&shards.shards, &shards.out, shards.plot_runs);
    }
    let (Some(model_path), Some(out)) = (args.model, args.out) else {
        unreachable!("clap requires --model and --out unless a subcommand is given")
    };
    let job = Job::prepare(&JobSpec {
        model_path,
        thresholds: args.thresholds,
        horizon_s: args.horizon,
        conservative: args.conservative,
        rss: args.rss,
        out: out.clone(),
        force: args.force,
        shard: args.shard,
        logs: args.logs,
        map: args.map,
    })?;
    let settings = job.scorer().settings();
    let calibrated: Vec<String> = settings
        .calibrated
        .iter()
        .map(|(name, (theta, m))| {
            format!(
                "{name} θ={theta:.3}{}",
                if *m > 1 {
                    format!(" (debounce {m})")
                } else {
                    String::new()
                }
            )
        })
        .collect();
    if !calibrated.is_empty() {
        eprintln!(
            "calibrated alarms (reported as \"calibrated\", beside θ = {}): {}",
            settings
                .thresholds
                .iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            calibrated.join(", ")
        );
    }
    if job.n_cached() > 0 {
        eprintln!(
            "{} of {} logs already scored in {} (use --force to redo)",
            job.n_cached(),
            job.logs().len(),
            out.display()
        );
    }
    let progress = crate::progress::bar(job.todo().len() as u64, "scoring");
    let errors = job.score_here(|| progress.inc(1));
    progress.finish_and_clear();
    for (file, error) in &errors {
        eprintln!("avguard: {file}: {error}");
    }
    let finished = job.finish(errors, args.plot_runs)?;
    for (property, check) in &finished.calibration_checks {
        if !check.holds {
            eprintln!("avguard: {property}: {}", check.describe());
        }
    }
    // The curve at the false-alarm budgets, for the properties these runs violate.
    for (property, (n_violating, n_safe), budgets) in &finished.budgets {
        if *n_violating == 0 {
            continue;
        }
        if let Some(line) = crate::time_ahead::budgets_in_words(budgets) {
            eprintln!("{property} ({n_violating} violating, {n_safe} safe runs): {line}");
            if let Some(spread) = crate::time_ahead::lead_intervals_in_words(budgets) {
                eprintln!("  {spread}");
            }
        }
    }
    eprintln!(
        "scored {} logs ({} from cache) into {}",
        finished.results.len(),
        job.n_cached(),
        out.join("score.json").display()
    );
    finished.check()
}
