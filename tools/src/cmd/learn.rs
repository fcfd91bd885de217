//! `avguard learn` (not yet built; see the issue tracker).

/// Arguments of `avguard learn`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `avguard learn`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`avguard learn` is not available yet")
}
