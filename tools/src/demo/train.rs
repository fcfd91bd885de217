//! The demo's offline half: simulate training and calibration runs in parallel, learn the model in memory
//! (predicates chosen from data, with each property's reactive comparator rule) and calibrate it.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context};
use laws::LawSource;
use monitor::select::{AbstractionMode, AutoPlan};
use monitor::{BuildConfig, Model, PropertySpec, RiskMeasure, Session, SessionConfig};
use rayon::prelude::*;
use scenarios::Scenario;

use crate::calibration::{calibrate_model_on, CalibrateOptions, PropertyCalibration};
use crate::score::run_series;

/// The runs `(scenario index, seed)` of `runs` per scenario from `base_seed`.
fn jobs(scenarios: &[Scenario], runs: u64, base_seed: u64) -> Vec<(usize, u64)> {
    (0..scenarios.len())
        .flat_map(|s| (0..runs).map(move |i| (s, scenarios::run_seed(base_seed + s as u64, i))))
        .collect()
}

/// Learns one model over `runs` training runs of each scenario, for the properties of `laws_dir`'s
/// `properties.toml` whose law one of the scenarios stresses, with the abstraction `mode`.
pub fn learn(
    laws_dir: &Path,
    scenarios: &[Scenario],
    runs: u64,
    base_seed: u64,
    mode: AbstractionMode,
) -> anyhow::Result<Model> {
    let laws: Vec<LawSource> = crate::lawdir::read_sources(laws_dir)?;
    let properties_path = laws_dir.join("properties.toml");
    let text = std::fs::read_to_string(&properties_path)
        .with_context(|| format!("{}: cannot read", properties_path.display()))?;
    let specs: Vec<PropertySpec> = monitor::spec::parse_properties_toml(&text)
        .with_context(|| format!("{}", properties_path.display()))?
        .into_iter()
        .filter(|spec| scenarios.iter().any(|s| s.stresses().contains(&spec.law)))
        .collect();
    if specs.is_empty() {
        bail!(
            "none of the demo scenarios stresses a property of {}",
            properties_path.display()
        );
    }
    let set = laws::LawSet::parse(&laws).map_err(|e| anyhow::anyhow!("{e}"))?;
    let properties = monitor::spec::resolve_all(&specs, &set)?;
    let plan = AutoPlan::new(laws, properties, BuildConfig::default())?;
    let recorder = plan.recorder()?;
    let jobs = jobs(scenarios, runs, base_seed);
    let progress = crate::progress::bar(jobs.len() as u64, "training");
    let records: Vec<_> = jobs
        .par_iter()
        .map_init(
            || recorder.clone(),
            |rec, &(s, seed)| {
                let r = rec.record(&scenarios::run(&scenarios[s], seed));
                progress.inc(1);
                r
            },
        )
        .collect();
    progress.finish_and_clear();
    // As `avguard learn` by default: the search chooses each property's Laplace α and the weight of its
    // frame share, each property averages three chains, and the forest's weight is chosen against chains
    // searched without each fold (since session 17 no slower than the direct choice).
    let search = crate::cmd::learn::default_search();
    Ok(plan.build(&records, mode, &search)?.0)
}

/// Calibrates `model` on `runs` fresh runs of each scenario (seeds from `base_seed`), each property on the
/// runs of the scenarios that stress its law: the runs the demo judges it on, so the false-alarm bound is
/// promised for the same population it is shown for.
pub fn calibrate(
    model: &mut Model,
    scenarios: &[Scenario],
    runs: u64,
    base_seed: u64,
    opts: &CalibrateOptions,
) -> anyhow::Result<Vec<PropertyCalibration>> {
    let shared = Arc::new(model.clone());
    let session = Session::new(&shared, &SessionConfig::default())?;
    let jobs = jobs(scenarios, runs, base_seed);
    let progress = crate::progress::bar(jobs.len() as u64, "calibrating");
    let series: Vec<_> = jobs
        .par_iter()
        .map_init(
            || session.clone(),
            |session, &(s, seed)| {
                let frames = scenarios::run(&scenarios[s], seed);
                let r = run_series(&frames, session, &RiskMeasure::Eventually, None);
                progress.inc(1);
                r
            },
        )
        .collect();
    progress.finish_and_clear();
    let laws: Vec<String> = model
        .properties()
        .iter()
        .map(|p| p.law().to_owned())
        .collect();
    // The debounce is chosen Bonferroni-style on these runs: the demo keeps its training runs for learning.
    calibrate_model_on(model, &[], &series, &[], opts, |r, p| {
        let stressed = jobs.get(r).map(|&(s, _)| scenarios[s].stresses());
        match (stressed, laws.get(p)) {
            (Some(laws_of_run), Some(law)) => laws_of_run.iter().any(|l| l == law),
            _ => false,
        }
    })
}
