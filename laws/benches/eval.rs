//! Evaluation speed: 8 shipped laws over 1 M frames, side by side with rtamt's online monitor timed in the
//! same run (Python, on a smaller trace of the same law shape).
//!
//! Three paths are measured:
//! - the evaluator alone on precomputed [`Signals`], with and without the relevance check;
//! - `Signals::from_frame` alone, on frames with a handful of obstacles (the geometry cost);
//! - the full frame → verdict path (`from_frame` + `step`), what `avguard laws eval` and the monitor pay.
//!
//! Run: `cargo bench -p laws --bench eval`. The summary after criterion's output gives frames/s,
//! law-evaluations/s, the relevance saving, and the ratio to rtamt. For a deterministic instruction count
//! of the evaluator alone: `valgrind --tool=callgrind --toggle-collect='*Evaluator::step*'
//! target/release/deps/eval-* --bench nomatch` (the summary still runs).

use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use criterion::{criterion_group, Criterion, Throughput};
use laws::signals::SignalSet;
use laws::{
    EvalConfig, Evaluator, Frame, LawSet, LawSource, Obstacle, Signal, SignalContext, Signals,
};

const N_FRAMES: usize = 1_000_000;
const N_DISTINCT: usize = 10_000;
const LAWS: [&str; 8] = [
    "law38_sub1",
    "law38_sub2",
    "law38_sub3",
    "law51_sub4",
    "law51_sub5",
    "law51_sub7",
    "law53",
    "no_collision",
];

fn eight_laws() -> LawSet {
    let set = laws::shipped::law_set();
    // Re-parse a file holding only the 8 laws' full formulas, so the set has exactly 8 laws.
    let text: String = LAWS
        .iter()
        .map(|name| {
            let law = &set.laws()[set.index_of(name).expect("shipped law")];
            format!("{name} = {};\n", law.formula())
        })
        .collect();
    LawSet::parse(&[LawSource {
        name: "bench.law".into(),
        text,
    }])
    .expect("bench laws parse")
}

/// A city-driving trace: a light cycle every 35 s, approaches and stops, traffic, occasional jams.
fn trace() -> Vec<Signals> {
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..N_DISTINCT)
        .map(|k| {
            let mut s = Signals::default();
            let cycle = k % 350;
            s.set(
                Signal::LightColor,
                if cycle < 150 {
                    3.0
                } else if cycle < 200 {
                    2.0
                } else {
                    1.0
                },
            );
            s.set(Signal::SignalAhead, 1.0);
            let to_line = 60.0 - (k % 600) as f64 * 0.1;
            s.set(
                Signal::StoplineAhead,
                if to_line >= 0.0 {
                    to_line
                } else {
                    f64::INFINITY
                },
            );
            s.set(Signal::JunctionAhead, (to_line + 1.0).max(0.0));
            s.set(Signal::Speed, [0.0, 0.3, 20.0, 40.0][(rnd() % 4) as usize]);
            s.set(
                Signal::NpcAhead,
                [0.3, 5.0, 30.0, f64::INFINITY][(rnd() % 4) as usize],
            );
            s.set(Signal::NpcAheadSpeed, (rnd() % 10) as f64);
            s.set(Signal::LaneNumber, 2.0);
            s.set(Signal::Direction, (rnd() % 3) as f64);
            s.set(Signal::TrafficJam, f64::from(u8::from(rnd() % 50 == 0)));
            s.set(
                Signal::PriorityNpcAhead,
                f64::from(u8::from(rnd() % 20 == 0)),
            );
            s
        })
        .collect()
}

/// The same kind of driving as [`trace`] as raw frames, each with six obstacles around the ego (a car
/// ahead in lane, an oncoming car, a car beside, a pedestrian on the crosswalk, two parked cars).
fn raw_frames() -> Vec<Frame> {
    trace()
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let gap_m = s.get(Signal::NpcAhead).min(80.0);
            let car = |id, x, y, heading: f64, speed_mps, priority| Obstacle {
                id,
                kind: laws::frame::obstacle_type::VEHICLE,
                x,
                y,
                heading,
                speed_mps,
                length: 4.5,
                width: 1.9,
                priority,
            };
            Frame {
                t: k as f64 * 0.1,
                speed_mps: s.get(Signal::Speed) / 3.6,
                light_color: s.get(Signal::LightColor) as i32,
                signal_ahead: true,
                stopline_dist_m: s.get(Signal::StoplineAhead),
                junction_dist_m: s.get(Signal::JunctionAhead),
                lane_number: 2,
                planned_turn: s.get(Signal::Direction) as i32,
                traffic_jam: s.get(Signal::TrafficJam) > 0.5,
                speed_limit_mps: 13.9,
                obstacles: vec![
                    car(
                        1,
                        3.7 + gap_m + 2.25,
                        0.2,
                        0.0,
                        s.get(Signal::NpcAheadSpeed),
                        false,
                    ),
                    car(
                        2,
                        25.0,
                        3.5,
                        std::f64::consts::PI,
                        8.0,
                        s.get(Signal::PriorityNpcAhead) > 0.5,
                    ),
                    car(3, 1.0, -3.5, 0.0, 9.0, false),
                    Obstacle {
                        id: 4,
                        kind: laws::frame::obstacle_type::PEDESTRIAN,
                        x: 8.0 + (k % 50) as f64 * 0.1,
                        y: 2.0 - (k % 40) as f64 * 0.1,
                        heading: -1.57,
                        speed_mps: 1.2,
                        length: 0.5,
                        width: 0.5,
                        priority: true,
                    },
                    car(5, 40.0, -7.0, 0.0, 0.0, false),
                    car(6, -20.0, 7.0, 0.0, 0.0, false),
                ],
                ..Frame::default()
            }
        })
        .collect()
}

/// The full path a caller takes: only the signals the laws read (`Evaluator::needed_signals`), then a step.
fn run_frames(ev: &mut Evaluator, frames: &[Frame], ctx: &SignalContext) -> usize {
    let needed = ev.needed_signals();
    let mut n_violations = 0;
    for k in 0..N_FRAMES {
        let s = Signals::from_frame_needed(&frames[k % N_DISTINCT], ctx, needed);
        let v = ev.step(&s);
        for i in 0..v.len() {
            n_violations += usize::from(v.violated_now(i));
        }
    }
    n_violations
}

fn run_from_frame(frames: &[Frame], ctx: &SignalContext, needed: SignalSet) -> f64 {
    let mut acc = 0.0;
    for k in 0..N_FRAMES {
        acc +=
            Signals::from_frame_needed(&frames[k % N_DISTINCT], ctx, needed).get(Signal::NpcAhead);
    }
    acc
}

fn run(ev: &mut Evaluator, frames: &[Signals]) -> usize {
    let mut n_violations = 0;
    for k in 0..N_FRAMES {
        let v = ev.step(&frames[k % N_DISTINCT]);
        for i in 0..v.len() {
            n_violations += usize::from(v.violated_now(i));
        }
    }
    n_violations
}

fn bench(c: &mut Criterion) {
    let laws = eight_laws();
    let frames = trace();
    let mut group = c.benchmark_group("eval_8_laws_1M_frames");
    group
        .sample_size(10)
        .throughput(Throughput::Elements(N_FRAMES as u64));
    for relevance in [false, true] {
        let cfg = EvalConfig {
            relevance,
            ..EvalConfig::default()
        };
        let name = if relevance {
            "relevance_on"
        } else {
            "relevance_off"
        };
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut ev = Evaluator::new(&laws, &cfg).expect("compile");
                black_box(run(&mut ev, &frames))
            })
        });
    }
    let raw = raw_frames();
    let ctx = SignalContext::default();
    group.bench_function("from_frame_only", |b| {
        b.iter(|| black_box(run_from_frame(&raw, &ctx, SignalSet::ALL)))
    });
    group.bench_function("frame_to_verdict_relevance_on", |b| {
        b.iter(|| {
            let mut ev = Evaluator::new(&laws, &EvalConfig::default()).expect("compile");
            black_box(run_frames(&mut ev, &raw, &ctx))
        })
    });
    group.finish();
}

fn rtamt_rate() -> Option<f64> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/py/rtamt_bench.py");
    let python = xtask::python::interpreter()
        .map_err(|e| eprintln!("rtamt timing unavailable: {e}"))
        .ok()?;
    let out = Command::new(python)
        .arg(script)
        .arg("20000")
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "rtamt timing failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .strip_prefix("rtamt_online_samples_per_s=")?
        .parse()
        .ok()
}

fn summary() {
    let laws = eight_laws();
    let frames = trace();
    let mut line = String::from("\nsummary (8 laws, 1M frames):");
    let mut ours = 0.0;
    for relevance in [false, true] {
        let mut ev = Evaluator::new(
            &laws,
            &EvalConfig {
                relevance,
                ..EvalConfig::default()
            },
        )
        .expect("compile");
        let start = Instant::now();
        let n_viol = run(&mut ev, &frames);
        let fps = N_FRAMES as f64 / start.elapsed().as_secs_f64();
        let st = ev.stats();
        let skipped = st.n_law_skips as f64 / (st.n_law_skips + st.n_law_steps) as f64;
        line += &format!(
            "\n  relevance {}: {:.3e} frames/s, {:.3e} law-evals/s, {:.1}% law-steps skipped, {n_viol} violations",
            if relevance { "on " } else { "off" },
            fps,
            fps * laws.laws().len() as f64,
            skipped * 100.0
        );
        ours = fps * laws.laws().len() as f64;
    }
    let raw = raw_frames();
    let ctx = SignalContext::default();
    let mut ev = Evaluator::new(&laws, &EvalConfig::default()).expect("compile");
    // avguard's prediction signals by group, and LawBreaker's vocabulary without them, in the same run.
    let cpa = [
        Signal::ClosestApproach,
        Signal::ClosestApproachTime,
        Signal::ClosestApproachTtc,
    ];
    let conflict = [
        Signal::PriorityConflict,
        Signal::PriorityConflictTime,
        Signal::PriorityConflictEgoTime,
        Signal::PriorityConflictGap,
    ];
    let prediction: SignalSet = cpa
        .iter()
        .chain(&conflict)
        .chain(&[Signal::ClosestApproachAccTtc])
        .chain(&[Signal::RssDangerous])
        .copied()
        .collect();
    let lawbreaker: SignalSet = Signal::ALL
        .iter()
        .copied()
        .filter(|&s| !prediction.contains(s))
        .collect();
    for (label, needed) in [
        ("Signals::from_frame alone (6 obstacles)", SignalSet::ALL),
        (
            "  without the prediction signals (LawBreaker's vocabulary)",
            lawbreaker,
        ),
        ("  closest approach only", cpa.into_iter().collect()),
        (
            "  closestApproach.accTtc only",
            [Signal::ClosestApproachAccTtc].into_iter().collect(),
        ),
        ("  priority conflict only", conflict.into_iter().collect()),
        (
            "  rssDangerous only",
            [Signal::RssDangerous].into_iter().collect(),
        ),
        (
            "Signals::from_frame_needed alone (the 8 laws' signals)",
            ev.needed_signals(),
        ),
    ] {
        let start = Instant::now();
        black_box(run_from_frame(&raw, &ctx, needed));
        let fps = N_FRAMES as f64 / start.elapsed().as_secs_f64();
        line += &format!("\n  {label}: {fps:.3e} frames/s");
    }
    let start = Instant::now();
    let n_viol = run_frames(&mut ev, &raw, &ctx);
    let fps = N_FRAMES as f64 / start.elapsed().as_secs_f64();
    line += &format!(
        "\n  frame -> verdict (from_frame_needed + step, relevance on): {fps:.3e} frames/s, {:.3e} law-evals/s, {n_viol} violations",
        fps * laws.laws().len() as f64
    );
    match rtamt_rate() {
        Some(r) => {
            line += &format!(
                "\n  rtamt online (law51_sub5, 20k samples): {r:.3e} samples/s (law-evals/s)\n  ratio ours/rtamt: {:.0}x",
                ours / r
            )
        }
        None => line += "\n  rtamt online: not measured (the Python environment or rtamt is missing)",
    }
    println!("{line}");
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
