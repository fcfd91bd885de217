//! `Session::step` with *learned* models, as `avguard learn` makes them: the per-frame cost of the
//! abstraction the search chooses (single chains, `--ensemble 1`, and the default ensembles of three
//! chains), beside, in the same run, `Signals::from_frame` alone.
//!
//! `monitor`'s `session` bench times a model of the declared predicates, and ensembles whose further
//! chains are made up (they read signals the first chain does not); this one learns the models from
//! simulated runs of the scenario kinds the shipped properties stress, so the chains read what searches
//! choose. `cargo bench -p tools --bench step_learned` simulates the runs, learns both models with
//! `learn`'s defaults (α chosen), then steps held-out runs of the same kinds through each model, the two
//! alternating five times, every step timed on its own (the clock's cost included, so the figures are
//! upper bounds), and whole passes over the runs timed once each (the mean per frame); the steps are also
//! split by the frame's number of road users. Then the same runs with 10 and 30 more vehicles driving
//! across a ring 40–120 m around the ego (busy traffic, mostly not near it). Target: median ≤ 0.5 µs,
//! p99 ≤ 5 µs per frame.

// A bench prints its figures with `println!`; a closed stdout may end it (tools/clippy.toml).
#![allow(clippy::disallowed_macros)]

mod support;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use laws::{Frame, Obstacle, SignalContext, Signals};
use monitor::select::{AbstractionMode, SearchConfig};
use monitor::{Model, Session, SessionConfig};

const SCENARIOS: [&str; 8] = [
    "red_light_queue",
    "yellow_light",
    "left_turn",
    "braking_leader",
    "crosswalk",
    "speeding",
    "stop_sign",
    "priority_road",
];
const TRAINING_RUNS_PER_SCENARIO: u64 = 60;
const HELD_OUT_RUNS_PER_SCENARIO: u64 = 4;
const ROUNDS: usize = 5;

fn percentile(sorted: &[u64], q: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Road-user counts the per-step times are also split by: 0, 1, 2, 3–5 and 6 or more.
const ROAD_USER_BINS: [(usize, usize, &str); 5] = [
    (0, 0, "0"),
    (1, 1, "1"),
    (2, 2, "2"),
    (3, 5, "3-5"),
    (6, usize::MAX, "6+"),
];

fn bin_of(road_users: usize) -> usize {
    ROAD_USER_BINS
        .iter()
        .position(|&(lo, hi, _)| (lo..=hi).contains(&road_users))
        .unwrap_or(ROAD_USER_BINS.len() - 1)
}

/// Every frame of `runs`, each run's steps timed one by one (the session reset between runs), also
/// filed by the frame's number of road users.
fn time_steps(
    session: &mut Session,
    runs: &[Vec<Frame>],
    out: &mut Vec<u64>,
    by_road_users: &mut [Vec<u64>],
) {
    for run in runs {
        session.reset();
        for f in run {
            let t0 = Instant::now();
            black_box(session.step(black_box(f)));
            let ns = t0.elapsed().as_nanos() as u64;
            out.push(ns);
            by_road_users[bin_of(f.obstacles.len())].push(ns);
        }
    }
}

/// Background road users added to every frame of the crowded passes.
const CROWD_EXTRA: [usize; 2] = [10, 30];

/// `run` with `extra` more vehicles on a ring 40–120 m around where the ego starts, each driving straight
/// at 8 m/s across it: dense traffic that is mostly not near the ego, as a busy junction's perception
/// output is.
fn crowded(run: &[Frame], extra: usize) -> Vec<Frame> {
    let Some(first) = run.first() else {
        return Vec::new();
    };
    let (x0, y0, t0) = (first.x, first.y, first.t);
    run.iter()
        .map(|f| {
            let mut f = f.clone();
            for j in 0..extra {
                let angle = std::f64::consts::TAU * j as f64 / extra as f64 + 0.3;
                let dist = 40.0 + 80.0 * j as f64 / extra as f64;
                let heading = angle + std::f64::consts::FRAC_PI_2 + 0.2 * (j % 3) as f64;
                let travelled = 8.0 * (f.t - t0);
                f.obstacles.push(Obstacle {
                    id: 10_000 + j as i32,
                    kind: laws::frame::obstacle_type::VEHICLE,
                    x: x0 + dist * angle.cos() + travelled * heading.cos(),
                    y: y0 + dist * angle.sin() + travelled * heading.sin(),
                    heading,
                    speed_mps: 8.0,
                    length: 4.5,
                    width: 1.9,
                    priority: j % 4 == 0,
                });
            }
            f
        })
        .collect()
}

fn main() {
    let scenarios = support::scenarios(&SCENARIOS);
    let auto = support::shipped_auto_plan();
    let records = support::record_runs(&auto, &scenarios, TRAINING_RUNS_PER_SCENARIO);
    // Held-out runs: seeds after the training runs'.
    let held_out: Vec<Vec<Frame>> = (0..scenarios.len())
        .flat_map(|s| {
            (0..HELD_OUT_RUNS_PER_SCENARIO).map(move |i| (s, TRAINING_RUNS_PER_SCENARIO + i))
        })
        .map(|(s, i)| scenarios::run(&scenarios[s], scenarios::run_seed(s as u64, i)))
        .collect();
    let n_frames: usize = held_out.iter().map(Vec::len).sum();
    let learn = |chains: usize| -> Arc<Model> {
        let cfg = SearchConfig {
            choose_alpha: true,
            chains,
            ..SearchConfig::default()
        };
        Arc::new(
            auto.build(&records, AbstractionMode::Auto, &cfg)
                .expect("model")
                .0,
        )
    };
    let models = [
        ("single chains", learn(1)),
        ("ensembles of 3 chains", learn(3)),
    ];
    let mut sessions: Vec<Session> = models
        .iter()
        .map(|(_, m)| Session::new(m, &SessionConfig::default()).expect("session"))
        .collect();
    let mut times: Vec<Vec<u64>> = vec![Vec::with_capacity(n_frames * ROUNDS); sessions.len()];
    let mut binned: Vec<Vec<Vec<u64>>> =
        vec![vec![Vec::new(); ROAD_USER_BINS.len()]; sessions.len()];
    let mut signals_ns: Vec<u64> = Vec::with_capacity(n_frames * ROUNDS);
    // Whole passes over the held-out runs, timed once each: the mean per frame without the clock's cost.
    let mut pass_ns: Vec<Vec<f64>> = vec![Vec::with_capacity(ROUNDS); sessions.len()];
    let ctx = SignalContext::default();
    for _ in 0..ROUNDS {
        for ((session, out), bins) in sessions.iter_mut().zip(&mut times).zip(&mut binned) {
            time_steps(session, &held_out, out, bins);
        }
        for (session, out) in sessions.iter_mut().zip(&mut pass_ns) {
            let t0 = Instant::now();
            for run in &held_out {
                session.reset();
                for f in run {
                    black_box(session.step(black_box(f)));
                }
            }
            out.push(t0.elapsed().as_nanos() as f64 / n_frames as f64);
        }
        for f in held_out.iter().flatten() {
            let t0 = Instant::now();
            black_box(Signals::from_frame(black_box(f), &ctx));
            signals_ns.push(t0.elapsed().as_nanos() as u64);
        }
    }
    signals_ns.sort_unstable();
    let base = percentile(&signals_ns, 0.5).max(1);
    println!(
        "Session::step with learned models ({} training runs, {n_frames} held-out frames of {} scenario kinds, {ROUNDS} rounds alternating), each step timed alone:",
        records.len(),
        SCENARIOS.len()
    );
    println!(
        "  baseline, Signals::from_frame alone: median {base} ns, p99 {} ns",
        percentile(&signals_ns, 0.99)
    );
    let mut frames_per_bin = vec![0usize; ROAD_USER_BINS.len()];
    for f in held_out.iter().flatten() {
        frames_per_bin[bin_of(f.obstacles.len())] += 1;
    }
    let road_users: usize = held_out.iter().flatten().map(|f| f.obstacles.len()).sum();
    println!(
        "  road users per frame: mean {:.2}; frames with {}",
        road_users as f64 / n_frames as f64,
        ROAD_USER_BINS
            .iter()
            .zip(&frames_per_bin)
            .map(|(b, n)| format!("{}: {n}", b.2))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (((what, model), mut ns), mut passes) in models.iter().zip(times).zip(pass_ns) {
        ns.sort_unstable();
        passes.sort_by(f64::total_cmp);
        let chains: usize = model
            .properties()
            .iter()
            .map(|p| 1 + p.members().len())
            .sum();
        let predicates: usize = model
            .properties()
            .iter()
            .flat_map(|p| std::iter::once(p).chain(p.members()))
            .map(|c| c.predicates().len())
            .sum();
        let median = percentile(&ns, 0.5);
        println!(
            "  {what}: {} properties, {chains} chains, {predicates} predicates: median {median} ns ({:.1} x the baseline), p99 {} ns, max {} ns; whole passes: {:.0} ns per frame (median of {ROUNDS})",
            model.properties().len(),
            median as f64 / base as f64,
            percentile(&ns, 0.99),
            ns[ns.len() - 1],
            passes[passes.len() / 2]
        );
    }
    for ((what, _), mut bins) in models.iter().zip(binned) {
        let cells: Vec<String> = ROAD_USER_BINS
            .iter()
            .zip(&mut bins)
            .filter(|(_, ns)| !ns.is_empty())
            .map(|(b, ns)| {
                ns.sort_unstable();
                format!("{} road users {} ns", b.2, percentile(ns, 0.5))
            })
            .collect();
        println!(
            "  {what}, median by road users per frame: {}",
            cells.join(", ")
        );
    }
    // Crowded passes: the same held-out runs with background traffic, each step timed alone.
    for extra in CROWD_EXTRA {
        let runs: Vec<Vec<Frame>> = held_out.iter().map(|r| crowded(r, extra)).collect();
        for ((what, _), session) in models.iter().zip(&mut sessions) {
            let mut ns = Vec::with_capacity(n_frames * ROUNDS);
            let mut bins = vec![Vec::new(); ROAD_USER_BINS.len()];
            for _ in 0..ROUNDS {
                time_steps(session, &runs, &mut ns, &mut bins);
            }
            ns.sort_unstable();
            println!(
                "  {what}, {extra} more road users on a ring 40-120 m out: median {} ns, p99 {} ns",
                percentile(&ns, 0.5),
                percentile(&ns, 0.99)
            );
        }
    }
}
