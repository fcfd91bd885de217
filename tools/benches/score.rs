//! Scoring throughput against a plain read of the same HDF5 logs, measured in the same run.
//!
//! `cargo bench -p tools --bench score` simulates logs of three scenario kinds, learns a model from other
//! runs, then times (best of 3, one thread each): reading every log with `scenarios::log::read_log`, and
//! `avguard score`'s per-log work (`tools::score::score_file`: the same read, every frame through
//! `monitor::Session`, alarms and leads for three thresholds). Target: scoring at ≥ 50 % of the read rate.

// A bench prints its figures with `println!`; a closed stdout may end it (tools/clippy.toml).
#![allow(clippy::disallowed_macros)]

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use monitor::{BuildConfig, Plan, RiskMeasure};
use scenarios::log::{write_log, RunLog, RunMeta};

const SCENARIOS: [&str; 3] = ["red_light_queue", "yellow_light", "left_turn"];
const N_LOGS_PER_SCENARIO: u64 = 20;
const N_TRAIN_PER_SCENARIO: u64 = 40;

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scenarios = support::scenarios(&SCENARIOS);
    let (laws, specs) = support::shipped_laws();
    let plan = Plan::from_specs(laws, &specs, BuildConfig::default()).expect("plan");
    let mut learner = plan
        .learner(laws::SignalContext::default())
        .expect("learner");
    for (s, scenario) in scenarios.iter().enumerate() {
        for i in 0..N_TRAIN_PER_SCENARIO {
            learner
                .observe_run(&scenarios::run(scenario, scenarios::run_seed(s as u64, i)))
                .expect("learn");
        }
    }
    let model = Arc::new(plan.build(learner.into_counts()).expect("model"));
    let mut logs = Vec::new();
    let mut n_frames = 0usize;
    for (s, scenario) in scenarios.iter().enumerate() {
        for i in 0..N_LOGS_PER_SCENARIO {
            let seed = scenarios::run_seed(100 + s as u64, i);
            let frames = scenarios::run(scenario, seed);
            n_frames += frames.len();
            let run_id = format!("{}_{i:04}", scenario.name());
            let path = dir.path().join(format!("{run_id}.h5"));
            let meta = RunMeta {
                scenario: scenario.name().into(),
                run_id,
                frame_period_s: 0.1,
                seed: Some(seed),
            };
            write_log(&path, &RunLog { meta, frames }).expect("write log");
            logs.push(path);
        }
    }
    let thresholds: Vec<(String, f64)> = [0.3, 0.5, 0.7]
        .iter()
        .map(|&t| (format!("{t}"), t))
        .collect();
    let measure = RiskMeasure::Eventually;
    let best_of = |f: &dyn Fn()| -> Duration {
        (0..3)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    let read = best_of(&|| {
        for path in &logs {
            std::hint::black_box(scenarios::log::read_log(path).expect("read"));
        }
    });
    let score = best_of(&|| {
        for path in &logs {
            std::hint::black_box(
                tools::score::score_file(path, &model, &measure, &thresholds, None, None)
                    .expect("score"),
            );
        }
    });
    let fps = |d: Duration| n_frames as f64 / d.as_secs_f64();
    println!(
        "score throughput: {} logs, {n_frames} frames, {} properties, 3 thresholds",
        logs.len(),
        model.properties().len()
    );
    println!("  plain read (read_log):    {:>12.0} frames/s", fps(read));
    println!("  score (read + monitor):   {:>12.0} frames/s", fps(score));
    println!(
        "  ratio score / read:       {:>12.2} (target >= 0.50)",
        fps(score) / fps(read)
    );
}
