//! `Session::step` for a model of 8 properties over the shipped laws: per-frame latency (median and p99 of
//! individually timed steps, printed) and criterion figures, with, in the same run, the two costs every
//! step pays as baselines: `Signals::from_frame` alone and the law evaluator alone; the same model as
//! ensembles of three chains per property (`learn --ensemble 3`); and those ensembles with a forest of 8
//! trees per property (`learn --forest 8` where the search's folds choose one), or a boosted forest of
//! 100 trees (`learn --forest-kind boosted`), or a forest of both kinds, 8 bagged and 100 boosted trees
//! (`learn --forest-kind both`). A second group steps the model through frames with ten road users each,
//! as learned from ground truth and as learned from logs whose road users it smooths over 0.7 s and moves
//! 0.3 s ahead (`learn --road-user-smoothing`, `--perception-latency`; session 38).
//!
//! Run: `cargo bench -p monitor --bench session` (release). Target: median ≤ 0.5 µs, p99 ≤ 5 µs per frame.
//! This drive has one road user and the model the declared predicates; `cargo bench -p tools --bench
//! step_learned` steps models learned from simulated runs through held-out scenario frames.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use laws::frame::{light_color, obstacle_type};
use laws::perception::RoadUserCorrection;
use laws::{EvalConfig, Evaluator, Frame, Obstacle, SignalContext, Signals};
use monitor::spec::{parse_properties_toml, PropertySpec};
use monitor::{BuildConfig, Domain, Model, Plan, Session, SessionConfig};

/// A 40 s drive: approach a slower car and a light that cycles green → yellow → red, with a junction.
fn drive(seed: u32) -> Vec<Frame> {
    let mut frames = Vec::with_capacity(400);
    let mut x = 0.0f64;
    let mut v = 8.0 + f64::from(seed % 5);
    for k in 0..400u32 {
        let t = f64::from(k) * 0.1;
        let gap = 60.0 - x * 0.3 + f64::from(seed % 7);
        if gap < 15.0 {
            v = (v - 0.4).max(0.0);
        }
        x += v * 0.1;
        let phase = (k / 100) % 3;
        frames.push(Frame {
            t,
            x,
            speed_mps: v,
            speed_limit_mps: 13.9,
            light_color: [light_color::GREEN, light_color::YELLOW, light_color::RED]
                [phase as usize],
            signal_ahead: true,
            stopline_dist_m: (120.0 - x).max(0.0),
            junction_dist_m: (125.0 - x).max(0.0),
            collision: gap <= 0.0,
            obstacles: vec![Obstacle {
                id: 1,
                kind: obstacle_type::VEHICLE,
                x: x + 5.7 + gap.max(0.0),
                y: 0.0,
                heading: 0.0,
                speed_mps: 3.0,
                length: 4.0,
                width: 2.0,
                priority: seed % 2 == 0,
            }],
            ..Frame::default()
        });
    }
    frames
}

/// The seven properties of `laws/specs/properties.toml` plus law57's default property: 8 laws.
fn model() -> Arc<Model> {
    let laws = laws::shipped::sources();
    let mut specs =
        parse_properties_toml(laws::shipped::PROPERTIES_TOML).expect("valid properties");
    specs.push(PropertySpec::for_law("law57"));
    assert_eq!(specs.len(), 8);
    let plan = Plan::from_specs(laws, &specs, BuildConfig::default()).expect("plan");
    let mut learner = plan.learner(SignalContext::default()).expect("learner");
    for seed in 0..40 {
        learner.observe_run(&drive(seed)).expect("learn");
    }
    Arc::new(plan.build(learner.into_counts()).expect("model"))
}

/// `base` as an ensemble of three chains per property: each further chain drops two of the property's
/// predicates and reads two thresholds of its own (what searches under other folds choose), smoothed
/// from no data: the risks do not matter here, the per-frame work of encoding and reading three chains
/// does.
fn ensemble(base: &Model) -> Arc<Model> {
    let properties = base
        .properties()
        .iter()
        .map(|p| {
            let members = (1..=2)
                .map(|k| {
                    let unsafe_text = &p.predicates()[p.unsafe_bit()];
                    let mut predicates: Vec<String> = vec![unsafe_text.clone()];
                    predicates.extend(
                        p.predicates()
                            .iter()
                            .filter(|t| *t != unsafe_text)
                            .skip(2)
                            .cloned(),
                    );
                    predicates.push(format!("speed<={}", 20 + 5 * k));
                    predicates.push(format!("closestApproach.accTtc<={}", 1 + k));
                    let config = p.config().clone();
                    let domain = monitor::PropertyModel::domain_for(&predicates, 0, &config)
                        .expect("domain");
                    let counts = monitor::Counts::new(domain.n_states());
                    monitor::PropertyModel::build_for_law(
                        p.name(),
                        p.law(),
                        predicates,
                        0,
                        counts,
                        &config,
                    )
                    .expect("member")
                })
                .collect();
            p.clone().with_members(members).expect("ensemble")
        })
        .collect();
    Arc::new(Model::try_new(base.laws().to_vec(), properties).expect("model"))
}

/// Forest splits on signals the declared predicates already read.
const READ_SPLITS: [&str; 12] = [
    "speed<=8",
    "speed<=12",
    "speed<=16",
    "NPCAhead<=10",
    "NPCAhead<=15",
    "NPCAhead<=25",
    "NPCAhead.ttc<=2.8",
    "NPCAhead.ttc<=5",
    "junctionAhead<=10",
    "junctionAhead<=20",
    "stoplineAhead<=30",
    "stoplineAhead<=10",
];

/// Forest splits half of which read signals nothing else in the model reads (each road user's closest
/// approach and priority conflict, the nearest road user, jerk).
const NEW_SPLITS: [&str; 12] = [
    "speed<=8",
    "speed<=12",
    "closestApproach.accTtc<=1.5",
    "closestApproach.ttc<=3",
    "NPCAhead<=15",
    "NPCAhead.ttc<=2.8",
    "acc<=-1",
    "junctionAhead<=10",
    "stoplineAhead<=30",
    "jerk<=-0.5",
    "PriorityConflict.egoTime<=2",
    "NearestNPC<=6",
];

/// The kinds of forest [`with_forests`] builds.
#[derive(Clone, Copy)]
enum Trees {
    Bagged,
    Boosted,
    Both,
}

/// `base` with a forest on every property: 8 bagged complete trees of depth 4 (15 splits, 16 leaves
/// each) over `splits`, 100 such trees boosted (`learn --forest-kind boosted`), or both (`learn
/// --forest-kind both`). The leaf values do not matter here; the per-frame work of walking the trees
/// does.
fn with_forests(base: &Model, splits: &[&str], kind: Trees) -> Arc<Model> {
    use monitor::forest::{ForestShare, Node, Tree};
    let texts: Vec<String> = splits.iter().map(|t| t.to_string()).collect();
    let tree = |k: usize| {
        // Nodes in breadth-first order: node i's children are 2i + 1 and 2i + 2.
        let nodes = (0..31usize)
            .map(|i| {
                if i < 15 {
                    Node::Split {
                        predicate: ((i + k) % texts.len()) as u32,
                        yes: (2 * i + 1) as u32,
                        no: (2 * i + 2) as u32,
                    }
                } else {
                    Node::Leaf((i - 15) as f64 / 16.0)
                }
            })
            .collect();
        Tree { nodes }
    };
    let forest = match kind {
        Trees::Bagged => ForestShare::try_new(0.25, 30, texts.clone(), (0..8).map(tree).collect()),
        Trees::Boosted => ForestShare::try_new_boosted(
            0.25,
            30,
            texts.clone(),
            (0..100).map(tree).collect(),
            -2.0,
        ),
        Trees::Both => ForestShare::try_new_both(
            0.25,
            30,
            texts.clone(),
            ((0..8).map(tree).collect(), (8..108).map(tree).collect()),
            -2.0,
            0.5,
        ),
    }
    .expect("forest");
    let properties = base
        .properties()
        .iter()
        .map(|p| p.clone().with_forest(Some(forest.clone())))
        .collect();
    Arc::new(Model::try_new(base.laws().to_vec(), properties).expect("model"))
}

fn percentile(sorted: &[u64], q: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn session(c: &mut Criterion) {
    let model = model();
    let frames: Vec<Frame> = (0..8).flat_map(drive).collect();
    let mut s = Session::new(&model, &SessionConfig::default()).expect("session");

    let ensemble = ensemble(&model);
    let mut e = Session::new(&ensemble, &SessionConfig::default()).expect("session");
    let forests = with_forests(&ensemble, &READ_SPLITS, Trees::Bagged);
    let mut fo = Session::new(&forests, &SessionConfig::default()).expect("session");
    let new_signals = with_forests(&ensemble, &NEW_SPLITS, Trees::Bagged);
    let mut fn_ = Session::new(&new_signals, &SessionConfig::default()).expect("session");
    let boosted = with_forests(&ensemble, &READ_SPLITS, Trees::Boosted);
    let mut fb = Session::new(&boosted, &SessionConfig::default()).expect("session");
    let both = with_forests(&ensemble, &READ_SPLITS, Trees::Both);
    let mut fbb = Session::new(&both, &SessionConfig::default()).expect("session");
    // Individually timed steps (Instant overhead included, so these are upper bounds).
    for (what, session, m) in [
        ("", &mut s, &model),
        (", ensembles of 3 chains", &mut e, &ensemble),
        (
            ", ensembles of 3 chains and forests of 8 trees (splits on signals read already)",
            &mut fo,
            &forests,
        ),
        (
            ", ensembles of 3 chains and forests of 8 trees (half the splits on new signals)",
            &mut fn_,
            &new_signals,
        ),
        (
            ", ensembles of 3 chains and boosted forests of 100 trees (splits on signals read already)",
            &mut fb,
            &boosted,
        ),
        (
            ", ensembles of 3 chains and forests of both kinds, 8 + 100 trees (splits on signals read already)",
            &mut fbb,
            &both,
        ),
    ] {
        let mut ns: Vec<u64> = Vec::with_capacity(frames.len() * 50);
        for _ in 0..50 {
            session.reset();
            for f in &frames {
                let t0 = Instant::now();
                black_box(session.step(black_box(f)));
                ns.push(t0.elapsed().as_nanos() as u64);
            }
        }
        ns.sort_unstable();
        println!(
            "Session::step, {} properties / {} laws evaluated{what}: median {} ns, p99 {} ns, max {} ns over {} frames",
            m.properties().len(),
            m.compile().expect("compiles").laws().laws().len(),
            percentile(&ns, 0.5),
            percentile(&ns, 0.99),
            ns[ns.len() - 1],
            ns.len()
        );
    }

    let mut g = c.benchmark_group("session");
    g.throughput(criterion::Throughput::Elements(frames.len() as u64));
    g.bench_function("step (8 properties)", |b| {
        b.iter(|| {
            s.reset();
            for f in &frames {
                black_box(s.step(black_box(f)));
            }
        })
    });
    g.bench_function("step (8 properties, ensembles of 3 chains)", |b| {
        b.iter(|| {
            e.reset();
            for f in &frames {
                black_box(e.step(black_box(f)));
            }
        })
    });
    g.bench_function(
        "step (8 properties, ensembles of 3 chains, forests of 8 trees on signals read already)",
        |b| {
            b.iter(|| {
                fo.reset();
                for f in &frames {
                    black_box(fo.step(black_box(f)));
                }
            })
        },
    );
    let ctx = SignalContext::default();
    g.bench_function("baseline: Signals::from_frame", |b| {
        b.iter(|| {
            for f in &frames {
                black_box(Signals::from_frame(black_box(f), &ctx));
            }
        })
    });
    let laws = model.compile().expect("compiles").laws().clone();
    let mut ev = Evaluator::new(&laws, &EvalConfig::default()).expect("evaluator");
    // The signals the laws' atoms read (the session also adds its predicates' atoms to this set).
    let needed = ev.needed_signals();
    g.bench_function(
        "baseline: Signals::from_frame_needed (laws' signals)",
        |b| {
            b.iter(|| {
                for f in &frames {
                    black_box(Signals::from_frame_needed(black_box(f), &ctx, needed));
                }
            })
        },
    );
    let signals: Vec<Signals> = frames
        .iter()
        .map(|f| Signals::from_frame(f, &ctx))
        .collect();
    g.bench_function("baseline: evaluator alone", |b| {
        b.iter(|| {
            ev.reset();
            for sig in &signals {
                black_box(ev.step(black_box(sig)).len());
            }
        })
    });
    g.finish();
}

/// The drive of `seed` with nine more road users beside the first (ids 2–10, each a lane and 8 m apart,
/// driving at its own speed): the road users a smoothing model matches from frame to frame.
fn crowded(seed: u32) -> Vec<Frame> {
    let mut frames = drive(seed);
    for f in &mut frames {
        let first = f.obstacles[0];
        for i in 2..=10 {
            let k = f64::from(i);
            f.obstacles.push(Obstacle {
                id: i,
                x: first.x + 8.0 * k + f.t * k,
                y: 3.5 * (k - 5.0),
                speed_mps: 3.0 + k,
                ..first
            });
        }
    }
    frames
}

/// The per-frame cost of reading road users otherwise than as logged: the same model, plain, with
/// every road user smoothed over 0.7 s and moved 0.3 s ahead, and with its velocity smoothed too, over
/// frames with ten road users.
fn corrected(c: &mut Criterion) {
    let plain = model();
    let reading = |smooth_velocities| {
        Arc::new(
            Model::try_new(
                plain.laws().to_vec(),
                plain
                    .properties()
                    .iter()
                    .map(|p| {
                        p.clone().with_road_users(RoadUserCorrection {
                            smoothing_s: laws::perception::SMOOTHING_S,
                            latency_s: 0.3,
                            smooth_velocities,
                        })
                    })
                    .collect(),
            )
            .expect("model"),
        )
    };
    let (read, read_velocities) = (reading(false), reading(true));
    let frames: Vec<Frame> = (0..8).flat_map(crowded).collect();
    let mut g = c.benchmark_group("session, 10 road users");
    g.throughput(criterion::Throughput::Elements(frames.len() as u64));
    for (name, model) in [
        ("step (as logged)", &plain),
        ("step (smoothed over 0.7 s, moved 0.3 s ahead)", &read),
        (
            "step (velocities smoothed too, moved 0.3 s ahead)",
            &read_velocities,
        ),
    ] {
        let mut s = Session::new(model, &SessionConfig::default()).expect("session");
        g.bench_function(name, |b| {
            b.iter(|| {
                s.reset();
                for f in &frames {
                    black_box(s.step(black_box(f)));
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, session, corrected);
criterion_main!(benches);
