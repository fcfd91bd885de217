//! Simulation speed: 1,000 runs × 60 s at 10 Hz of a busy scenario, against a baseline measured in the same
//! run that only builds the same number of default frames (the allocation floor of producing frames).
//!
//! `cargo bench -p scenarios --bench simulate` reports both; the ratio is the simulator's cost over the
//! floor.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use laws::Frame;
use scenarios::{run, run_seed, Scenario};

const RUNS: u64 = 1000;

/// A 60 s signalised-junction scenario with cross traffic (no early end at a destination: long exit).
const SCENARIO: &str = r#"
[scenario]
name = "bench"
duration_s = 60.0
[road]
approach_m = 400.0
exit_m = 600.0
speed_limit_kph = 50.0
[road.junction]
control = "light"
[light]
cycle_offset_s = [0.0, 30.0]
[[vehicles]]
role = "lead"
count = 2
gap_m = [20.0, 40.0]
[[vehicles]]
role = "cross"
count = 3
first_arrival_s = [5.0, 20.0]
"#;

fn bench(c: &mut Criterion) {
    let scenario = match Scenario::from_toml_str(SCENARIO) {
        Ok(s) => s,
        Err(e) => panic!("bench scenario: {e}"),
    };
    let frames_per_run = run(&scenario, 0).len();
    let mut group = c.benchmark_group("simulate_1000_runs_60s");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("baseline_default_frames", |b| {
        b.iter(|| {
            for _ in 0..RUNS {
                let frames: Vec<Frame> = (0..frames_per_run).map(|_| Frame::default()).collect();
                black_box(frames);
            }
        })
    });
    group.bench_function("simulate", |b| {
        b.iter(|| {
            for i in 0..RUNS {
                black_box(run(&scenario, run_seed(1, i)));
            }
        })
    });
    group.finish();

    // One-shot ratio, printed for the report (criterion's own numbers are above).
    let t0 = Instant::now();
    for _ in 0..RUNS {
        black_box(
            (0..frames_per_run)
                .map(|_| Frame::default())
                .collect::<Vec<Frame>>(),
        );
    }
    let base = t0.elapsed();
    let t1 = Instant::now();
    for i in 0..RUNS {
        black_box(run(&scenario, run_seed(1, i)));
    }
    let sim = t1.elapsed();
    println!(
        "{RUNS} runs x {frames_per_run} frames: simulate {:.2} s, baseline {:.3} s, ratio {:.1}",
        sim.as_secs_f64(),
        base.as_secs_f64(),
        sim.as_secs_f64() / base.as_secs_f64()
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
