//! What `avguard simulate` and `avguard drive` share: a scenario file, how many seeded runs of it, and the
//! law folder their outcome counts use. Scenario files are read here for every command (the demo too).

use std::path::{Path, PathBuf};

use anyhow::Context;
use scenarios::{run_seed, Scenario};

/// Most `--runs` of one `simulate` or `drive`: a million logs of a minute at 10 Hz are about 100 GB.
pub const MAX_RUNS: u64 = 1_000_000;

/// `--scenario FILE --runs N --seed S`.
#[derive(clap::Args)]
pub struct ScenarioRuns {
    /// Scenario file (`scenarios/*.toml`).
    #[arg(long)]
    pub scenario: PathBuf,
    /// Number of runs (at most 1,000,000).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(0..=MAX_RUNS))]
    pub runs: u64,
    /// Base seed; run i uses a seed derived from (seed, i).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

impl ScenarioRuns {
    /// Reads the scenario file.
    pub fn scenario(&self) -> anyhow::Result<Scenario> {
        read_scenario(&self.scenario)
    }

    /// The seed of run `i` (the same for `simulate` and `drive`).
    pub fn seed_of(&self, i: u64) -> u64 {
        run_seed(self.seed, i)
    }
}

/// Reads and checks a scenario file; errors name the file.
pub fn read_scenario(path: &Path) -> anyhow::Result<Scenario> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    Scenario::from_toml_str(&text).with_context(|| format!("{}", path.display()))
}

/// The law folder for outcome counts: `--laws DIR` when given, else `laws/specs` when it exists.
pub fn laws_dir_or_default(laws: Option<&Path>) -> Option<PathBuf> {
    laws.map(Path::to_path_buf)
        .or_else(|| Some(PathBuf::from("laws/specs")).filter(|p| p.is_dir()))
}
