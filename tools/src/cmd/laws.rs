//! `avguard laws eval`: per-frame law verdicts of one log as CSV (INTERFACES §4); `avguard laws signals`:
//! per-frame signal values of one log as CSV.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use laws::{EvalConfig, Evaluator, LawSet, Signal, SignalContext, SignalStream};
use scenarios::log::RunLog;

/// Subcommands of `avguard laws`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Per-frame law verdicts for one log, as CSV: `t`, then for every law `L` (1 on the frame where a
    /// violation becomes certain) and `L.w` (1 when such a frame lies in the last W frames).
    Eval(EvalArgs),
    /// Per-frame signal values for one log, as CSV: `t`, then every signal the law language reads
    /// (LawBreaker's and avguard's, by their law-text names), as law atoms see them.
    Signals(SignalsArgs),
}

/// Arguments of `avguard laws signals`.
#[derive(clap::Args)]
pub struct SignalsArgs {
    /// The CSV file to write.
    #[arg(long, value_name = "FILE.csv")]
    out: PathBuf,
    /// The HDF5 log to read.
    #[arg(value_name = "LOG")]
    log: PathBuf,
}

/// Arguments of `avguard laws eval`.
#[derive(clap::Args)]
pub struct EvalArgs {
    /// Folder of `.law` files (every file, in file-name order).
    #[arg(long, value_name = "DIR")]
    laws: PathBuf,
    /// The CSV file to write.
    #[arg(long, value_name = "FILE.csv")]
    out: PathBuf,
    /// Window length of the `L.w` columns, in frames.
    #[arg(long, default_value_t = 100, value_name = "FRAMES")]
    window: usize,
    /// The HDF5 log to evaluate.
    #[arg(value_name = "LOG")]
    log: PathBuf,
}

/// Runs `avguard laws ...`.
pub fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Eval(args) => eval(args),
        Command::Signals(args) => signals(args),
    }
}

fn signals(args: SignalsArgs) -> anyhow::Result<()> {
    let log = read_log_named(&args.log)?;
    let file = std::fs::File::create(&args.out)
        .with_context(|| format!("{}: cannot create", args.out.display()))?;
    let mut out = BufWriter::new(file);
    write_signals(&log, &mut out)
        .and_then(|()| out.flush().map_err(Into::into))
        .with_context(|| format!("{}: cannot write", args.out.display()))
}

/// Writes the signal CSV of `log`: `t`, then every signal in index order ([`laws::signals::signal_table`]:
/// the default scenario context); infinities are written `inf` / `-inf`.
pub fn write_signals(log: &RunLog, out: &mut impl Write) -> anyhow::Result<()> {
    write!(out, "t")?;
    for sig in Signal::ALL {
        write!(out, ",{}", sig.name())?;
    }
    writeln!(out)?;
    let table = laws::signals::signal_table(&log.frames, SignalContext::default());
    let mut row = String::new();
    for (k, frame) in log.frames.iter().enumerate() {
        row.clear();
        row.push_str(&format!("{}", frame.t));
        for column in &table {
            row.push_str(&format!(",{}", column[k]));
        }
        writeln!(out, "{row}")?;
    }
    Ok(())
}

fn eval(args: EvalArgs) -> anyhow::Result<()> {
    let laws = crate::lawdir::load(&args.laws)?;
    let log = read_log_named(&args.log)?;
    // Whether the laws can be read at the log's frame period, before anything is written; the error
    // names the log, its period and the law's file.
    let period_s = log.meta.frame_period_s;
    anyhow::ensure!(args.window >= 1, "--window must be at least 1 frame");
    let cfg = EvalConfig {
        frame_period_s: period_s,
        window_frames: args.window,
        ..EvalConfig::default()
    };
    let evaluator = Evaluator::new(&laws, &cfg).with_context(|| {
        format!(
            "{}: the laws of {} cannot be evaluated at the log's frame period of {period_s} s",
            args.log.display(),
            args.laws.display()
        )
    })?;
    let file = std::fs::File::create(&args.out)
        .with_context(|| format!("{}: cannot create", args.out.display()))?;
    let mut out = BufWriter::new(file);
    write_verdicts(&laws, evaluator, cfg.context, &log, &mut out)
        .and_then(|()| out.flush().map_err(Into::into))
        .with_context(|| format!("{}: cannot write", args.out.display()))
}

/// Reads the log at `path`; the error names the file once.
fn read_log_named(path: &std::path::Path) -> anyhow::Result<RunLog> {
    scenarios::log::read_log_isolated(path)
        .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), crate::batch::reason(path, &e)))
}

/// Writes the verdict CSV of `log` under `laws`, stepped by `evaluator` (compiled from `laws` at the
/// log's frame period) with the scenario constants `context`.
pub fn write_verdicts(
    laws: &LawSet,
    mut evaluator: Evaluator,
    context: SignalContext,
    log: &RunLog,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    write!(out, "t")?;
    for law in laws.laws() {
        write!(out, ",{0},{0}.w", law.name())?;
    }
    writeln!(out)?;
    // Only the signals some law reads are computed (same values as a full computation).
    let mut signals = SignalStream::new(context, evaluator.needed_signals());
    let mut row = String::new();
    for frame in &log.frames {
        let verdicts = evaluator.step(signals.next(frame));
        row.clear();
        row.push_str(&format!("{}", frame.t));
        for i in 0..verdicts.len() {
            row.push_str(if verdicts.violated_now(i) { ",1" } else { ",0" });
            row.push_str(if verdicts.in_window(i) { ",1" } else { ",0" });
        }
        writeln!(out, "{row}")?;
    }
    Ok(())
}
