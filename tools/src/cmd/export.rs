//! `avguard export` (not yet built; see the issue tracker).

/// Arguments of `avguard export`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `avguard export`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`avguard export` is not available yet")
}
