//! `avguard info` (not yet built; see the issue tracker).

/// Arguments of `avguard info`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `avguard info`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`avguard info` is not available yet")
}
