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
use crate::rss_tuned;
pub use crate::rss_tuned::TunedRss;
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
/// promised for the same population it is shown for. On the same runs, RSS is tuned to each collision
/// property's target.
pub fn calibrate(
    model: &mut Model,
    scenarios: &[Scenario],
    runs: u64,
    base_seed: u64,
    opts: &CalibrateOptions,
) -> anyhow::Result<(Vec<PropertyCalibration>, Vec<TunedRss>)> {
    let variants = rss_tuned::model_variants(model);
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
                let first = rss_tuned::first_dangerous(&frames, &variants);
                progress.inc(1);
                (r, first)
            },
        )
        .collect();
    progress.finish_and_clear();
    let (series, first): (Vec<_>, Vec<_>) = series.into_iter().unzip();
    let laws: Vec<String> = model
        .properties()
        .iter()
        .map(|p| p.law().to_owned())
        .collect();
    let stresses = |r: usize, p: usize| {
        let stressed = jobs.get(r).map(|&(s, _)| scenarios[s].stresses());
        match (stressed, laws.get(p)) {
            (Some(laws_of_run), Some(law)) => laws_of_run.iter().any(|l| l == law),
            _ => false,
        }
    };
    let tuned = rss_tuned::tune_to_target(
        model,
        &variants,
        &series,
        &first,
        opts.target_false_alarm,
        stresses,
    )?;
    // The debounce is chosen Bonferroni-style on these runs: the demo keeps its training runs for learning.
    let calibrations = calibrate_model_on(model, &[], &series, &[], opts, stresses)?;
    Ok((calibrations, tuned))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time_ahead::median;

    /// The RSS the demo tunes on its calibration runs, recounted from the runs' frames alone: a run
    /// violates no_collision from its first colliding frame, and RSS alarms before it.
    #[test]
    fn rss_is_tuned_on_the_calibration_runs_as_a_recount_from_their_frames_says() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let scenarios =
            vec![
                crate::scenario_runs::read_scenario(&root.join("scenarios/left_turn.toml"))
                    .unwrap(),
            ];
        let model = learn(
            &root.join("laws/specs"),
            &scenarios,
            40,
            7,
            AbstractionMode::Fixed,
        )
        .unwrap();
        // A target RSS cannot keep within on these runs (its fewest false alarms stand in), and one it can.
        let mut within = Vec::new();
        for target in [0.2, 0.6] {
            let opts = CalibrateOptions {
                target_false_alarm: target,
                ..CalibrateOptions::default()
            };
            let mut calibrated = model.clone();
            let (_, tuned) = calibrate(&mut calibrated, &scenarios, 60, 9, &opts).unwrap();
            let [t] = tuned.as_slice() else {
                panic!("one collision property, tuned: {tuned:?}");
            };
            // The model keeps it, for `score` and the bridge's model file.
            let stored = calibrated
                .property("no_collision")
                .and_then(|p| p.rss_tuning())
                .unwrap();
            assert_eq!(
                (
                    stored.response_scale,
                    stored.within_target,
                    stored.target_false_alarm
                ),
                (t.scale, t.within_target, target)
            );
            assert_eq!(
                (stored.n_violating_runs, stored.n_safe_runs),
                (t.calibration.n_violating_runs, t.calibration.n_safe_runs)
            );
            assert_eq!(t.property, "no_collision");
            assert_eq!(
                t.params,
                laws::rss::RssParams::CARLA.with_response_scale(t.scale)
            );
            // The recount, over the same runs.
            let (mut n_viol, mut n_safe, mut n_false, mut leads) = (0, 0, 0, Vec::new());
            for (s, seed) in jobs(&scenarios, 60, 9) {
                let frames = scenarios::run(&scenarios[s], seed);
                let violation = frames.iter().position(|f| f.collision);
                let alarm = frames[..violation.unwrap_or(frames.len())]
                    .iter()
                    .position(|f| t.params.dangerous(f));
                match violation {
                    Some(v) => {
                        n_viol += 1;
                        leads.extend(alarm.map(|a| frames[v].t - frames[a].t));
                    }
                    None => {
                        n_safe += 1;
                        n_false += usize::from(alarm.is_some());
                    }
                }
            }
            assert!(n_viol > 0, "no collision among the calibration runs");
            leads.sort_by(f64::total_cmp);
            let c = &t.calibration;
            assert_eq!((c.n_violating_runs, c.n_safe_runs), (n_viol, n_safe));
            let fa = 100.0 * n_false as f64 / n_safe as f64;
            assert!((c.false_alarm_pct.unwrap() - fa).abs() < 1e-9, "{c:?}");
            assert_eq!(c.median_lead_s, median(&leads), "{c:?}");
            // Within the target exactly when its false alarms are.
            assert_eq!(t.within_target, fa <= 100.0 * target + 1e-9, "{t:?}");
            within.push(t.within_target);
        }
        assert_eq!(within, [false, true]);
    }
}
