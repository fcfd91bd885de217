//! `avguard score` (not yet built; see the issue tracker).

/// Arguments of `avguard score`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `avguard score`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`avguard score` is not available yet")
}
