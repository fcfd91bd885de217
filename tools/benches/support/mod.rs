//! What the `score`, `select` and `step_learned` benches share: the repository's scenario files and the
//! shipped laws and properties, read the way `avguard learn --laws laws/specs` reads them, and the
//! learning plan of those properties with simulated runs recorded for it.

use std::path::PathBuf;

use laws::LawSource;
use monitor::spec::PropertySpec;
use scenarios::Scenario;

/// The repository root (the benches run from `tools/`).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The scenarios `scenarios/NAME.toml` of `names`, in order.
pub fn scenarios(names: &[&str]) -> Vec<Scenario> {
    names
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(root().join(format!("scenarios/{name}.toml")))
                .expect("scenario file");
            Scenario::from_toml_str(&text).expect("scenario")
        })
        .collect()
}

/// The shipped law texts (`laws/specs/*.law`) and properties (`laws/specs/properties.toml`).
pub fn shipped_laws() -> (Vec<LawSource>, Vec<PropertySpec>) {
    let dir = root().join("laws/specs");
    let laws = tools::lawdir::read_sources(&dir).expect("laws");
    let specs = monitor::spec::parse_properties_toml(
        &std::fs::read_to_string(dir.join("properties.toml")).expect("properties.toml"),
    )
    .expect("properties");
    (laws, specs)
}

/// The abstraction search's plan for the shipped properties, as `avguard learn` makes it.
#[allow(dead_code)] // not every bench learns
pub fn shipped_auto_plan() -> monitor::select::AutoPlan {
    let (laws, specs) = shipped_laws();
    let config = monitor::BuildConfig::default();
    let plan = monitor::Plan::from_specs(laws.clone(), &specs, config.clone()).expect("plan");
    monitor::select::AutoPlan::new(laws, plan.properties().to_vec(), config).expect("auto plan")
}

/// `runs_per_scenario` runs of each of `scenarios` (seeds `scenarios::run_seed(s, 0..)`), simulated
/// and recorded for `auto` in parallel, scenario by scenario.
#[allow(dead_code)] // not every bench learns
pub fn record_runs(
    auto: &monitor::select::AutoPlan,
    scenarios: &[Scenario],
    runs_per_scenario: u64,
) -> Vec<monitor::select::data::RunRecord> {
    use rayon::prelude::*;
    let recorder = auto.recorder().expect("recorder");
    let jobs: Vec<(usize, u64)> = (0..scenarios.len())
        .flat_map(|s| (0..runs_per_scenario).map(move |i| (s, i)))
        .collect();
    jobs.par_iter()
        .map_init(
            || recorder.clone(),
            |rec, &(s, i)| {
                rec.record(&scenarios::run(
                    &scenarios[s],
                    scenarios::run_seed(s as u64, i),
                ))
            },
        )
        .collect()
}
