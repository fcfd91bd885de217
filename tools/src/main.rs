//! `avguard`: predicts traffic-law violations and collisions before they happen, and intervenes.
//!
//! This binary is glue: argument parsing and file handling live here, the work lives in the library crates.
//! Each command is one module under `cmd/` with an `Args` (clap) and a `run` function; this file only
//! dispatches. Errors are `anyhow` chains printed on one line; the exit code is non-zero on failure.

use std::process::ExitCode;

use tools::cmd;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "avguard", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate training runs, learn a model, drive held-out runs through the live bridge with and without
    /// interventions, and print a time-ahead summary.
    Demo(cmd::demo::Args),
    /// Write N seeded HDF5 run logs of a scenario file.
    Simulate(cmd::simulate::Args),
    /// Validate logs and summarise each one.
    Inspect(cmd::inspect::Args),
    /// Write copies of logs made harder to read (perception range, misses, no right-of-way marks, no map,
    /// noisy poses), to check how a model holds up on another source's logs.
    Perturb(cmd::perturb::Args),
    /// Evaluate traffic laws over logs.
    #[command(subcommand)]
    Laws(cmd::laws::Command),
    /// Learn one DTMC per monitored property from logs and compute its reachability tables.
    Learn(cmd::learn::Args),
    /// Choose each property's alarm threshold on calibration runs so that false alarms stay below a
    /// target with 95 % confidence, and store it in the model.
    Calibrate(cmd::calibrate::Args),
    /// Learn (fixed and learned abstractions), calibrate on a split of the training runs, score held-out
    /// test runs, and print each property beside the reactive baseline, RSS and the best reactive rule.
    Evaluate(cmd::evaluate::Args),
    /// List a model's properties, predicates, state counts and PAC summary.
    Info(cmd::info::Args),
    /// Write a property's DTMC in PRISM explicit format plus our cached table.
    Export(cmd::export::Args),
    /// Import Apollo Cyber RT records as HDF5 run logs (frames assembled as the live bridge does).
    Import(cmd::import::Args),
    /// Batch-score logs against a model and write score.json and the reports.
    Score(cmd::score::Args),
    /// Run the live websocket bridge next to a simulator.
    Bridge(cmd::bridge::Args),
    /// Drive scenario runs through a running bridge, as a simulator client that obeys interventions.
    Drive(cmd::drive::Args),
}

fn main() -> ExitCode {
    // First: in a child started to read one untrusted log after another, this serves and exits.
    scenarios::log::isolated::init();
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("AVGUARD_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let result = match cli.command {
        Command::Demo(args) => cmd::demo::run(args),
        Command::Simulate(args) => cmd::simulate::run(args),
        Command::Inspect(args) => cmd::inspect::run(args),
        Command::Perturb(args) => cmd::perturb::run(args),
        Command::Laws(command) => cmd::laws::run(command),
        Command::Learn(args) => cmd::learn::run(args),
        Command::Calibrate(args) => cmd::calibrate::run(args),
        Command::Evaluate(args) => cmd::evaluate::run(args),
        Command::Info(args) => cmd::info::run(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Import(args) => cmd::import::run(args),
        Command::Score(args) => cmd::score::run(args),
        Command::Bridge(args) => cmd::bridge::run(args),
        Command::Drive(args) => cmd::drive::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("avguard: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// A closed stdout (e.g. `avguard inspect ... | head`) is not a failure.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
