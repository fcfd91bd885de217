//! What `avguard simulate` and `avguard drive` share: a scenario file, how many seeded runs of it, and the
//! law folder their outcome counts use. Scenario files are read here for every command (the demo too).

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Context;
use scenarios::scenario::MAX_SCENARIO_BYTES;
use scenarios::{run_seed, Scenario, ScenarioError};

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

/// Reads and checks a scenario file; errors name the file. At most [`MAX_SCENARIO_BYTES`] are read (one
/// more tells a longer file), so a device such as `/dev/zero` is refused, not read without end.
pub fn read_scenario(path: &Path) -> anyhow::Result<Scenario> {
    let cannot_read = || format!("{}: cannot read", path.display());
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| {
            f.take(MAX_SCENARIO_BYTES as u64 + 1)
                .read_to_end(&mut bytes)
        })
        .with_context(cannot_read)?;
    if bytes.len() > MAX_SCENARIO_BYTES {
        return Err(ScenarioError::TooLarge).with_context(|| format!("{}", path.display()));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{}: not UTF-8 text", path.display()))?;
    Scenario::from_toml_str(&text).with_context(|| format!("{}", path.display()))
}

/// The law folder for outcome counts: `--laws DIR` when given, else `laws/specs` when it exists.
pub fn laws_dir_or_default(laws: Option<&Path>) -> Option<PathBuf> {
    laws.map(Path::to_path_buf)
        .or_else(|| Some(PathBuf::from("laws/specs")).filter(|p| p.is_dir()))
}
