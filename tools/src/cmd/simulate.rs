//! `avguard simulate`: write N seeded HDF5 run logs of a scenario file and report the outcomes.
//!
//! Run `i` uses seed `scenarios::run_seed(S, i)` and is written to `OUT/<scenario>_<i:04>.h5`; the same
//! seed gives byte-identical files. After writing, every run is evaluated against the law files (`--laws`,
//! default `laws/specs` when it exists) and the command prints, for the scenario's stressed laws, how many
//! runs violate each one and how many collide, so that a scenario's tuning can be checked at a glance.

use std::path::{Path, PathBuf};

use anyhow::Context;
use laws::{EvalConfig, Evaluator, LawSet, LawSource, Signals};
use scenarios::log::{write_log, RunLog, RunMeta};
use scenarios::{run_seed, Scenario};

/// Arguments of `avguard simulate`.
#[derive(clap::Args)]
pub struct Args {
    /// Scenario file (`scenarios/*.toml`).
    #[arg(long)]
    pub scenario: PathBuf,
    /// Number of runs.
    #[arg(long, default_value_t = 1)]
    pub runs: u64,
    /// Base seed; run i uses a seed derived from (seed, i).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output directory (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Law directory for the outcome counts (default: `laws/specs` if present).
    #[arg(long)]
    pub laws: Option<PathBuf>,
}

/// Runs `avguard simulate`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.scenario)
        .with_context(|| format!("reading {}", args.scenario.display()))?;
    let scenario = Scenario::from_toml_str(&text).with_context(|| format!("{}", args.scenario.display()))?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let laws_dir = args.laws.clone().or_else(|| Some(PathBuf::from("laws/specs")).filter(|p| p.is_dir()));
    let mut tally = match &laws_dir {
        Some(dir) => Some(Tally::new(dir, &scenario)?),
        None => None,
    };
    let mut collisions = 0u64;
    for i in 0..args.runs {
        let seed = run_seed(args.seed, i);
        let frames = scenarios::run(&scenario, seed);
        if frames.iter().any(|f| f.collision) {
            collisions += 1;
        }
        if let Some(tally) = &mut tally {
            tally.add(&frames);
        }
        let log = RunLog {
            meta: RunMeta {
                scenario: scenario.name().to_owned(),
                run_id: format!("{}_{i:04}", scenario.name()),
                frame_period_s: scenario.frame_period_s(),
                seed: Some(seed),
            },
            frames,
        };
        let path = args.out.join(format!("{}_{i:04}.h5", scenario.name()));
        write_log(&path, &log).with_context(|| format!("writing {}", path.display()))?;
    }
    println!(
        "{}: {} runs written to {}; {collisions} with a collision",
        scenario.name(),
        args.runs,
        args.out.display()
    );
    match tally {
        Some(tally) => tally.print(args.runs),
        None => println!("  (no law directory: pass --laws DIR for per-law counts)"),
    }
    Ok(())
}

/// Counts of runs violating each stressed law.
struct Tally {
    laws: LawSet,
    cfg: EvalConfig,
    /// (law name, index in the set, runs violating); index `None` when the set lacks the law.
    counts: Vec<(String, Option<usize>, u64)>,
}

impl Tally {
    fn new(dir: &Path, scenario: &Scenario) -> anyhow::Result<Tally> {
        let laws = load_laws(dir)?;
        let cfg = EvalConfig { frame_period_s: scenario.frame_period_s(), ..EvalConfig::default() };
        // Fail early on laws that cannot be evaluated at this frame period.
        Evaluator::new(&laws, &cfg).with_context(|| format!("laws in {}", dir.display()))?;
        let counts = scenario.stresses().iter().map(|name| (name.clone(), laws.index_of(name), 0)).collect();
        Ok(Tally { laws, cfg, counts })
    }

    fn add(&mut self, frames: &[laws::Frame]) {
        let Ok(mut eval) = Evaluator::new(&self.laws, &self.cfg) else { return };
        let mut violated = vec![false; self.laws.laws().len()];
        for frame in frames {
            let verdicts = eval.step(&Signals::from_frame(frame, &self.cfg.context));
            for (i, v) in violated.iter_mut().enumerate() {
                *v |= verdicts.violated_now(i);
            }
        }
        for (_, index, count) in &mut self.counts {
            if index.is_some_and(|i| violated.get(i).copied().unwrap_or(false)) {
                *count += 1;
            }
        }
    }

    fn print(&self, runs: u64) {
        for (name, index, count) in &self.counts {
            match index {
                Some(_) => println!(
                    "  {name}: {count} of {runs} runs violate it ({:.0} %)",
                    100.0 * *count as f64 / runs.max(1) as f64
                ),
                None => println!("  {name}: not in the law set"),
            }
        }
    }
}

/// Loads every `.law` file of `dir`, in file-name order.
fn load_laws(dir: &Path) -> anyhow::Result<LawSet> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "law"))
        .collect();
    paths.sort();
    let sources = paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            Ok(LawSource { name: p.display().to_string(), text })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    LawSet::parse(&sources).with_context(|| format!("parsing laws in {}", dir.display()))
}
