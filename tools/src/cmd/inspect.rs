//! `avguard inspect` (not yet built; see the issue tracker).

/// Arguments of `avguard inspect`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `avguard inspect`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`avguard inspect` is not available yet")
}
