//! `avguard demo`: the end-to-end demonstration (see `crate::demo`). No arguments needed.

use std::path::PathBuf;

/// The repository's law and scenario folders, found relative to this crate's sources (the demo is run
/// from a checkout: `cargo xtask demo`).
const LAWS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../laws/specs");
const SCENARIOS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios");

/// Most runs per scenario of each of `--train-runs`, `--test-runs` and `--calibration-runs`: the demo holds
/// a stage's runs in memory (100,000 training runs of a minute are about 30 GB of frames), so a larger count
/// is refused before any work.
pub const MAX_RUNS: u64 = 100_000;

/// Arguments of `avguard demo`.
#[derive(clap::Args)]
pub struct Args {
    /// Scenario kinds (file names in the scenarios folder, without `.toml`).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "red_light_queue,yellow_light,left_turn"
    )]
    scenarios: Vec<String>,
    /// Training runs per scenario (at most 100,000).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=MAX_RUNS))]
    train_runs: u64,
    /// Held-out runs per scenario (each is driven twice: enforcement off and on; at most 100,000).
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u64).range(1..=MAX_RUNS))]
    test_runs: u64,
    /// Calibration runs per scenario (disjoint from the training and held-out runs; at most 100,000).
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(0..=MAX_RUNS))]
    calibration_runs: u64,
    /// How the model's predicates are chosen (see `avguard learn --abstraction`).
    #[arg(long, value_enum, default_value_t = crate::cmd::learn::Abstraction::Auto)]
    abstraction: crate::cmd::learn::Abstraction,
    /// Target false-alarm rate of the calibration, as a fraction (`0.1`) or a percentage (`10%`).
    #[arg(long, default_value = "0.1", value_parser = super::values::rate)]
    target_false_alarms: f64,
    /// Base seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Thresholds θ reported.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0.3,0.5,0.7",
        value_parser = super::values::threshold
    )]
    thresholds: Vec<f64>,
    /// Threshold at which the bridge intervenes for every property (default: each property's calibrated
    /// θ and debounce, and 0.5 for a property without one, as `avguard bridge` without `--threshold`).
    #[arg(long)]
    enforce_threshold: Option<f64>,
    /// Folder of `.law` files and `properties.toml`.
    #[arg(long, default_value = LAWS_DIR)]
    laws: PathBuf,
    /// Folder of scenario files.
    #[arg(long, default_value = SCENARIOS_DIR)]
    scenario_dir: PathBuf,
    /// Where the model, prediction log and reports are written (default: a folder in the temp dir).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Runs `avguard demo`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(theta) = args.enforce_threshold {
        anyhow::ensure!(
            (0.0..=1.0).contains(&theta),
            "--enforce-threshold must be in [0, 1]"
        );
    }
    let cfg = crate::demo::DemoConfig {
        laws_dir: args.laws,
        scenario_files: args
            .scenarios
            .iter()
            .map(|s| args.scenario_dir.join(format!("{s}.toml")))
            .collect(),
        train_runs: args.train_runs,
        test_runs: args.test_runs,
        calibration_runs: args.calibration_runs,
        abstraction: args.abstraction.into(),
        target_false_alarms: args.target_false_alarms,
        seed: args.seed,
        thresholds: args.thresholds,
        enforce_threshold: args.enforce_threshold,
        out: args
            .out
            .unwrap_or_else(|| std::env::temp_dir().join("avguard-demo")),
    };
    crate::demo::run(&cfg).map(|_| ())
}
