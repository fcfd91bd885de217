//! `avguard laws ...` (not yet built; see the issue tracker).

/// Subcommands of `avguard laws`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Per-frame law verdicts for one log, as CSV.
    Eval {},
}

/// Runs `avguard laws ...`.
pub fn run(_command: Command) -> anyhow::Result<()> {
    anyhow::bail!("`avguard laws eval` is not available yet")
}
