//! The demo's offline half: simulate training runs in parallel and learn the model in memory.

use std::path::Path;

use anyhow::{bail, Context};
use monitor::{BuildConfig, Model, Plan, PropertySpec};
use rayon::prelude::*;
use scenarios::Scenario;

/// Learns one model over `runs` training runs of each scenario, for the properties of `laws_dir`'s
/// `properties.toml` whose law one of the scenarios stresses.
pub fn learn(
    laws_dir: &Path,
    scenarios: &[Scenario],
    runs: u64,
    base_seed: u64,
) -> anyhow::Result<Model> {
    let laws = crate::lawdir::read_sources(laws_dir)?;
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
    let plan = Plan::from_specs(laws, &specs, BuildConfig::default())?;
    let jobs: Vec<(usize, u64)> = (0..scenarios.len())
        .flat_map(|s| (0..runs).map(move |i| (s, i)))
        .collect();
    let progress = crate::progress::bar(jobs.len() as u64, "training");
    let context = laws::SignalContext::default();
    // Each rayon worker learns into its own learner; the partial counts are merged at the end (counts
    // are the source of truth, so the split does not change the model).
    let partials: Vec<Result<Vec<monitor::Counts>, monitor::ModelError>> = jobs
        .par_iter()
        .fold(
            || plan.learner(context),
            |learner, &(s, i)| {
                let mut learner = learner?;
                let frames =
                    scenarios::run(&scenarios[s], scenarios::run_seed(base_seed + s as u64, i));
                learner.observe_run(&frames)?;
                progress.inc(1);
                Ok(learner)
            },
        )
        .map(|learner| learner.map(monitor::Learner::into_counts))
        .collect();
    let mut counts = plan.empty_counts();
    for part in partials {
        monitor::learning::merge_counts(&mut counts, &part?)?;
    }
    progress.finish_and_clear();
    Ok(plan.build(counts)?)
}
