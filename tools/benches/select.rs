//! The abstraction search's speed against learning the fixed abstraction from the same recorded runs,
//! measured in the same run.
//!
//! `cargo bench -p tools --bench select` simulates 1,000 runs (200 each of five scenario kinds, in
//! memory), records them once for the shipped properties (`laws/specs/properties.toml`), then times, best
//! of 3 on the machine's rayon pool: building the model with the declared predicates (`learn
//! --abstraction fixed`: their counts, the reactive rule search, and the fixed set's cross-validated score)
//! and with learned predicates (`--abstraction auto`: the same plus the greedy forward selection from its
//! three starts — nothing, the rule's candidates, the declared predicates — each with every chosen
//! threshold refined on a finer grid of cuts, each step scored by 5-fold cross-validation over runs),
//! then the same with α chosen (each further α searched from the start that won) and with α and the
//! smoothing prior chosen. Last, once, what `avguard learn` runs without options
//! ([`tools::cmd::learn::default_search`]): α chosen, an ensemble of three chains, the frame share's
//! weight chosen, and a forest whose weight is chosen against chains searched without each fold.
//! Target: seconds, not minutes, on 2 cores.

// A bench prints its figures with `println!`; a closed stdout may end it (tools/clippy.toml).
#![allow(clippy::disallowed_macros)]

mod support;

use std::time::{Duration, Instant};

use monitor::select::{AbstractionMode, SearchConfig};

const SCENARIOS: [&str; 5] = [
    "red_light_queue",
    "yellow_light",
    "left_turn",
    "braking_leader",
    "crosswalk",
];
const N_RUNS_PER_SCENARIO: u64 = 200;

fn best_of_3(mut f: impl FnMut()) -> Duration {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let scenarios = support::scenarios(&SCENARIOS);
    let auto = support::shipped_auto_plan();
    let start = Instant::now();
    let records = support::record_runs(&auto, &scenarios, N_RUNS_PER_SCENARIO);
    let record_time = start.elapsed();
    let n_frames: usize = records.iter().map(|r| r.len()).sum();
    let cfg = SearchConfig::default();
    let fixed = best_of_3(|| {
        auto.build(&records, AbstractionMode::Fixed, &cfg)
            .expect("fixed");
    });
    let learned = best_of_3(|| {
        auto.build(&records, AbstractionMode::Auto, &cfg)
            .expect("auto");
    });
    // `avguard learn`'s default, `--alpha auto`: every start under the first α, the winning start under
    // each further one.
    let choosing = SearchConfig {
        choose_alpha: true,
        ..cfg
    };
    let chosen = best_of_3(|| {
        auto.build(&records, AbstractionMode::Auto, &choosing)
            .expect("auto, α chosen");
    });
    // `--prior auto`: hierarchical smoothing searched too, at the α of HIERARCHICAL_ALPHA_CHOICES.
    let choosing_prior = SearchConfig {
        choose_prior: true,
        ..choosing
    };
    let with_prior = best_of_3(|| {
        auto.build(&records, AbstractionMode::Auto, &choosing_prior)
            .expect("auto, α and prior chosen");
    });
    let (model, reports) = auto
        .build(&records, AbstractionMode::Auto, &choosing_prior)
        .expect("auto");
    let start = Instant::now();
    auto.build(
        &records,
        AbstractionMode::Auto,
        &tools::cmd::learn::default_search(),
    )
    .expect("auto, learn's defaults");
    let learn_default = start.elapsed();
    println!(
        "abstraction search: {} runs ({n_frames} frames) x {} properties on {} threads",
        records.len(),
        reports.len(),
        rayon::current_num_threads()
    );
    println!(
        "  simulating and recording the runs (once, shared by both): {:.2} s",
        record_time.as_secs_f64()
    );
    println!(
        "  baseline, fixed predicates (counts, reactive rule, cross-validated score): {:.2} s",
        fixed.as_secs_f64()
    );
    println!(
        "  learned predicates (the same plus greedy forward selection from three starts, refined cuts, 5-fold by run): {:.2} s = {:.1} x the baseline",
        learned.as_secs_f64(),
        learned.as_secs_f64() / fixed.as_secs_f64().max(1e-9)
    );
    println!(
        "  the same with Laplace α chosen from {:?} (learn's default): {:.2} s = {:.1} x the baseline, {:.2} x α = 1 alone",
        monitor::select::search::ALPHA_CHOICES,
        chosen.as_secs_f64(),
        chosen.as_secs_f64() / fixed.as_secs_f64().max(1e-9),
        chosen.as_secs_f64() / learned.as_secs_f64().max(1e-9)
    );
    println!(
        "  the same with the prior chosen too, flat or hierarchical at α {:?} (`--prior auto`): {:.2} s = {:.1} x the baseline, {:.2} x α chosen alone",
        monitor::select::search::HIERARCHICAL_ALPHA_CHOICES,
        with_prior.as_secs_f64(),
        with_prior.as_secs_f64() / fixed.as_secs_f64().max(1e-9),
        with_prior.as_secs_f64() / chosen.as_secs_f64().max(1e-9)
    );
    println!(
        "  `avguard learn`'s defaults (α chosen, --ensemble {}, --frame-share auto, --forest {}, --forest-choice nested), one run: {:.2} s = {:.1} x the baseline, {:.2} x α chosen alone",
        tools::cmd::learn::DEFAULT_ENSEMBLE,
        tools::cmd::learn::DEFAULT_FOREST,
        learn_default.as_secs_f64(),
        learn_default.as_secs_f64() / fixed.as_secs_f64().max(1e-9),
        learn_default.as_secs_f64() / chosen.as_secs_f64().max(1e-9)
    );
    for (r, p) in reports.iter().zip(model.properties()) {
        let n = r.selection.steps.len() - 1;
        if r.selection.mode == AbstractionMode::Fixed {
            println!(
                "    {:<16} no violating run: keeps its {n} declared predicates",
                r.name
            );
            continue;
        }
        println!(
            "    {:<16} {n} predicates chosen from {} candidates, α {} {}, score {:.3} (fixed {:.3})",
            r.name,
            r.selection.pool_size,
            p.config().laplace.alpha,
            p.config().prior.as_str(),
            r.selection.steps.last().map_or(0.0, |s| s.score),
            r.selection.fixed_score
        );
    }
}
