//! `avguard drive` (not yet built; see the issue tracker).

/// Arguments of `avguard drive`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `avguard drive`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`avguard drive` is not available yet")
}
