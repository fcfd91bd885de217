//! `avguard simulate` (not yet built; see the issue tracker).

/// Arguments of `avguard simulate`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `avguard simulate`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`avguard simulate` is not available yet")
}
