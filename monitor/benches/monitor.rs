//! Monitor benchmarks: learning from 1 M transitions, solving all-states reachability for 2^10, 2^16 and
//! 2^20 states (~10 successors each), a table lookup, and — in the same run — Storm's time for the same
//! all-states query on the same chain (via `tests/py/monitor_storm_time.py`), with the ratio printed.
//!
//! Run: `cargo bench -p monitor` (release). Storm's figure is skipped with a note if the project's Python
//! environment (`target/venv`, made by `cargo xtask setup`) cannot be made.

use std::hint::black_box;
use std::io::Write;
use std::process::Command;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use monitor::{prism, reach, BuildConfig, Counts, Domain, Dtmc, PropertyModel, StateId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[path = "../src/reach/random_chain.rs"]
mod random_chain;

/// `n` states, ~`deg` successors each, 1 % absorbing unsafe states, 1 % absorbing safe traps.
fn random_chain(n: usize, deg: usize, seed: u64) -> (Dtmc, Vec<bool>) {
    let c = random_chain::random_chain(n, deg, 100, seed);
    (
        Dtmc::try_new(n, c.row_ptr, c.cols, c.probs).expect("valid by construction"),
        c.target,
    )
}

fn learning(c: &mut Criterion) {
    let preds: Vec<String> = (0..10).map(|i| format!("p{i}")).collect();
    let cfg = BuildConfig::default();
    let d = PropertyModel::domain_for(&preds, 0, &cfg).expect("10 predicates");
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    // 10 000 runs of 100 frames: 1 M transitions, single-predicate flips avoiding the unsafe bit.
    let runs: Vec<Vec<StateId>> = (0..10_000)
        .map(|_| {
            let mut s: StateId = 0;
            (0..101)
                .map(|_| {
                    s ^= 1 << rng.random_range(1..10);
                    s
                })
                .collect()
        })
        .collect();
    c.bench_function("learn/count 1M transitions", |b| {
        b.iter(|| {
            let mut counts = Counts::new(d.n_states());
            for r in &runs {
                counts.observe_trace(&d, r).expect("in range");
            }
            black_box(counts)
        })
    });
    let mut counts = Counts::new(d.n_states());
    for r in &runs {
        counts.observe_trace(&d, r).expect("in range");
    }
    c.bench_function(
        "learn/build model (1025 states, smoothing+PAC+tables)",
        |b| {
            b.iter(|| {
                PropertyModel::build("p", preds.clone(), 0, counts.clone(), &cfg).expect("builds")
            })
        },
    );
}

fn write_prism(
    d: &Dtmc,
    target: &[bool],
    dir: &std::path::Path,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let tra = dir.join("bench.tra");
    let lab = dir.join("bench.lab");
    let w = std::io::BufWriter::new(std::fs::File::create(&tra).expect("tmp"));
    prism::write_dtmc_tra(d, w).expect("tmp");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&lab).expect("tmp"));
    writeln!(w, "{}\n0: 0", prism::LABELS).expect("tmp");
    for (s, &t) in target.iter().enumerate() {
        if t && s != 0 {
            writeln!(w, "{s}: 2").expect("tmp");
        }
    }
    (tra, lab)
}

fn storm_seconds(d: &Dtmc, target: &[bool]) -> Option<f64> {
    let dir = tempfile::tempdir().ok()?;
    let (tra, lab) = write_prism(d, target, dir.path());
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/py/monitor_storm_time.py"
    );
    let python = xtask::python::interpreter()
        .map_err(|e| eprintln!("storm timing unavailable: {e}"))
        .ok()?;
    let out = Command::new(python)
        .arg(script)
        .arg(&tra)
        .arg(&lab)
        .arg("3")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    if !out.status.success() {
        eprintln!(
            "storm timing unavailable: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    text.split_whitespace()
        .find_map(|kv| kv.strip_prefix("check_s="))
        .and_then(|v| v.parse().ok())
}

fn solving(c: &mut Criterion) {
    let mut group = c.benchmark_group("solve all states P(F unsafe)");
    group.sample_size(10);
    for bits in [10u32, 16, 20] {
        let (d, target) = random_chain(1 << bits, 10, u64::from(bits));
        group.bench_function(format!("2^{bits} states"), |b| {
            b.iter(|| black_box(reach::eventually(&d, &target)))
        });
        // Same-run comparison with Storm (its model-checking time only, model already built).
        let t0 = Instant::now();
        let reps = 3;
        for _ in 0..reps {
            black_box(reach::eventually(&d, &target));
        }
        let ours = t0.elapsed().as_secs_f64() / f64::from(reps);
        match storm_seconds(&d, &target) {
            Some(storm) => eprintln!(
                "2^{bits} states: ours {ours:.4} s, storm {storm:.4} s, storm/ours = {:.2}",
                storm / ours
            ),
            None => eprintln!("2^{bits} states: ours {ours:.4} s, storm n/a"),
        }
    }
    group.finish();
}

fn lookup(c: &mut Criterion) {
    let (d, target) = random_chain(1 << 16, 10, 3);
    let table = monitor::RiskTable::compute(&d, &target, &[10, 20, 30, 50]).expect("table");
    let mut s: StateId = 12345;
    c.bench_function("lookup P(F unsafe) + P(F<=50)", |b| {
        b.iter(|| {
            s = s.wrapping_mul(1_103_515_245).wrapping_add(12_345) & 0xFFFF;
            black_box(table.eventually(s).unwrap_or(0.0) + table.within(3, s).unwrap_or(0.0))
        })
    });
}

criterion_group!(benches, learning, solving, lookup);
criterion_main!(benches);
