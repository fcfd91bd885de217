//! `avguard demo` (not yet built; see the issue tracker).

/// Arguments of `avguard demo`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `avguard demo`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`avguard demo` is not available yet")
}
