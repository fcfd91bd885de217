//! `avguard bridge` (not yet built; see the issue tracker).

/// Arguments of `avguard bridge`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `avguard bridge`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`avguard bridge` is not available yet")
}
