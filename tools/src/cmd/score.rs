//! `avguard score`: batch time-ahead scoring of logs against a model (INTERFACES §5), and
//! `avguard score merge` to combine shards.
//!
//! Each log is run through the same `monitor::Session` as the live bridge. Per log the result is cached in
//! `OUT/runs/NAME.json`, so a rerun skips logs already scored (unless `--force`), `--shard i/n` runs can
//! share nothing but a folder layout, and `score merge` rebuilds `score.json` and the reports from the
//! union of shard caches exactly as an unsharded run would.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use rayon::prelude::*;

use crate::batch::{expand_logs_and_records, Shard};
use crate::score::{
    cached, load_cached, merge, prepare_out, score_file, store, write_outputs, FileResult, Settings,
};

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
        value_name = "θ,..."
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
    /// Logs or Cyber records (`*.record`, `*.record.NNNNN`), or folders searched for both.
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
    for &theta in &args.thresholds {
        if !(theta > 0.0 && theta <= 1.0) {
            bail!("threshold {theta} is outside (0, 1]");
        }
    }
    let crate::modelfile::ModelFile {
        bytes: model_bytes,
        model,
    } = crate::modelfile::read(&model_path)?;
    let model = std::sync::Arc::new(model);
    let measure = monitor::RiskMeasure::resolve(&model, args.horizon, args.conservative)?;
    let rss = args.rss.params()?;
    let mut settings = Settings::new(
        &model_bytes,
        &args.thresholds,
        args.horizon,
        args.conservative,
    );
    settings.rss = args.rss.describe();
    for (p, property) in model.properties().iter().enumerate() {
        if let Some(rule) = property.reactive_rule() {
            settings
                .rules
                .insert(property.name().to_owned(), rule.text());
        }
        if let Some(c) = crate::score::calibrated_rule(&model, p, &measure) {
            settings.calibrated.insert(property.name().to_owned(), c);
        }
    }
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
    let map = crate::mapfile::load(args.map.as_deref())?;
    if let Some(path) = &args.map {
        let bytes =
            std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
        settings = settings.with_map(&bytes);
    }
    let mut logs = expand_logs_and_records(&args.logs)?;
    if let Some(shard) = args.shard {
        logs.retain(|p| shard.contains(p));
    }
    check_unique_names(&logs)?;
    prepare_out(&out, &settings, args.force)?;

    let todo: Vec<&PathBuf> = logs
        .iter()
        .filter(|p| args.force || !cached(&out, p))
        .collect();
    let n_cached = logs.len() - todo.len();
    if n_cached > 0 {
        eprintln!(
            "{n_cached} of {} logs already scored in {} (use --force to redo)",
            logs.len(),
            out.display()
        );
    }
    let progress = crate::progress::bar(todo.len() as u64, "scoring");
    let thresholds = settings.threshold_pairs();
    let errors: Vec<(String, String)> = todo
        .par_iter()
        .filter_map(|path| {
            let result = score_file(
                path,
                &model,
                &measure,
                &thresholds,
                map.as_ref(),
                Some(&rss),
            )
            .and_then(|r| store(&out, path, &r));
            progress.inc(1);
            result.err().map(|e| (display_name(path), format!("{e:#}")))
        })
        .collect();
    progress.finish_and_clear();
    let mut errors = errors;
    errors.sort();
    for (file, error) in &errors {
        eprintln!("avguard: {file}: {error}");
    }
    let results: Vec<FileResult> = logs
        .iter()
        .filter_map(|p| load_cached(&out, p).transpose())
        .collect::<anyhow::Result<_>>()?;
    write_outputs(
        &out,
        &settings,
        &results,
        &errors,
        Some(&model),
        args.plot_runs,
    )?;
    eprintln!(
        "scored {} logs ({} from cache) into {}",
        results.len(),
        n_cached,
        out.join("score.json").display()
    );
    if !errors.is_empty() {
        bail!(
            "{} of {} logs could not be scored (listed above and in score.json)",
            errors.len(),
            logs.len()
        );
    }
    Ok(())
}

fn display_name(path: &Path) -> String {
    path.display().to_string()
}

/// Cached results are keyed by file name, so two logs with the same name cannot be scored together.
fn check_unique_names(logs: &[PathBuf]) -> anyhow::Result<()> {
    let mut names: Vec<(&std::ffi::OsStr, &PathBuf)> = logs
        .iter()
        .filter_map(|p| p.file_name().map(|n| (n, p)))
        .collect();
    names.sort();
    for pair in names.windows(2) {
        if pair[0].0 == pair[1].0 {
            bail!(
                "two logs share the file name {}: {} and {}",
                pair[0].0.to_string_lossy(),
                pair[0].1.display(),
                pair[1].1.display()
            );
        }
    }
    Ok(())
}
