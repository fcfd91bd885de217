use rand::{Rng, SeedableRng};

use super::build::declared_start;
use super::criterion::{level_for_budget, utility, BUDGETS, LEAD_CAP_S};
use super::data::PropertyData;
use super::search::{assign_folds, Scorer, SearchConfig};
use super::*;
use crate::domain::Domain;
use crate::learning::Plan;
use crate::spec::PropertySpec;
use crate::StateId;
use laws::frame::obstacle_type;
use laws::{Frame, LawSource, Obstacle};

const LAWS: &str = "no_collision = G(collision == 0);\n";

fn laws() -> Vec<LawSource> {
    vec![LawSource {
        name: "t.law".into(),
        text: LAWS.into(),
    }]
}

/// A car-following run: the ego closes on a slower leader; an attentive driver brakes when the time to
/// collision drops below 3 s, an inattentive one does not and collides. Whether the driver is attentive
/// shows early in `acc` (an inattentive driver keeps accelerating gently), which is what the search
/// should find.
fn run(rng: &mut rand_chacha::ChaCha8Rng) -> Vec<Frame> {
    let attentive = rng.random_bool(0.7);
    let gap: f64 = rng.random_range(25.0..60.0);
    let v: f64 = rng.random_range(8.0..14.0);
    let leader: f64 = rng.random_range(2.0..6.0);
    following(attentive, gap, v, leader)
}

/// The same car following where only an inattentive driver behind a *slow* leader collides: half the
/// leaders drive faster than the ego and are never reached. The early sign is a conjunction.
fn run_two_causes(rng: &mut rand_chacha::ChaCha8Rng) -> Vec<Frame> {
    let attentive = rng.random_bool(0.5);
    let gap: f64 = rng.random_range(20.0..28.0);
    let v: f64 = rng.random_range(8.0..14.0);
    let leader: f64 = if rng.random_bool(0.5) {
        rng.random_range(2.0..6.0)
    } else {
        rng.random_range(20.0..24.0)
    };
    following(attentive, gap, v, leader)
}

/// 200 frames of an ego at speed `v`, `gap` metres behind a leader at constant speed `leader`.
fn following(attentive: bool, mut gap: f64, mut v: f64, leader: f64) -> Vec<Frame> {
    let mut frames = Vec::new();
    let mut collided = false;
    for k in 0..200 {
        let closing = v - leader;
        let ttc = if closing > 0.0 {
            gap / closing
        } else {
            f64::INFINITY
        };
        let accel = if attentive && ttc < 3.0 {
            -6.0
        } else if attentive {
            0.0
        } else {
            0.4
        };
        v = (v + accel * 0.1).max(leader.min(v));
        gap -= (v - leader) * 0.1;
        collided |= gap <= 0.0;
        frames.push(Frame {
            t: f64::from(k) * 0.1,
            speed_mps: v,
            accel_mps2: accel,
            collision: collided,
            obstacles: vec![Obstacle {
                id: 1,
                kind: obstacle_type::VEHICLE,
                x: laws::signals::EGO_FRONT_M + gap.max(0.0) + 2.0,
                y: 0.0,
                heading: 0.0,
                speed_mps: leader,
                length: 4.0,
                width: 2.0,
                priority: false,
            }],
            ..Frame::default()
        });
    }
    frames
}

fn properties() -> Vec<crate::ResolvedProperty> {
    let spec = PropertySpec {
        name: Some("no_collision".into()),
        law: "no_collision".into(),
        related_laws: Vec::new(),
        extra_atoms: vec!["NPCAhead(30)".into()],
        law_atoms: false,
        unsafe_atom: Some("collision".into()),
    };
    Plan::from_specs(laws(), &[spec], BuildConfig::default())
        .unwrap()
        .properties()
        .to_vec()
}

fn records(n: usize, seed: u64) -> (AutoPlan, Vec<RunRecord>) {
    let plan = AutoPlan::new(laws(), properties(), BuildConfig::default()).unwrap();
    let mut rec = plan.recorder().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let records = (0..n).map(|_| rec.record(&run(&mut rng))).collect();
    (plan, records)
}

/// [`records`] of [`run_two_causes`].
fn two_cause_records(n: usize, seed: u64) -> (AutoPlan, Vec<RunRecord>) {
    let plan = AutoPlan::new(laws(), properties(), BuildConfig::default()).unwrap();
    let mut rec = plan.recorder().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let records = (0..n)
        .map(|_| rec.record(&run_two_causes(&mut rng)))
        .collect();
    (plan, records)
}

/// Where each of the predicates `texts` (candidates of `pool`, by their text) is recorded.
fn sources_of(pool: &Pool, texts: &[String]) -> Vec<data::Source> {
    texts
        .iter()
        .map(|t| pool.iter().find(|(c, _)| c.text() == *t).unwrap().1)
        .collect()
}

/// Where the first `n` non-constant candidates of `full` are recorded whose score alone (under `cfg`)
/// is above `min` and below 0.5: a pool of weak candidates.
fn weak_sources(
    recs: &[RunRecord],
    all: &[data::Source],
    full: &PropertyData,
    cfg: &SearchConfig,
    min: f64,
    n: usize,
) -> Vec<data::Source> {
    (0..full.candidates.len())
        .filter(|&c| !full.candidates[c].is_constant())
        .filter(|&c| {
            let s = search::score_set(full, recs, cfg, &[c]).0;
            s > min && s < 0.5
        })
        .take(n)
        .map(|c| all[c])
        .collect()
}

/// A property's candidate pool: each candidate with where it is recorded.
type Pool = Vec<(pool::Candidate, data::Source)>;

/// 200 synthetic runs of seed `seed`, the first property's candidate pool on them, where each candidate
/// is recorded, and the property's data over the whole pool.
fn whole_pool(seed: u64) -> (Vec<RunRecord>, Pool, Vec<data::Source>, PropertyData) {
    let (plan, recs) = records(200, seed);
    let (pool, sources, data) = pool_data(&plan, &recs);
    (recs, pool, sources, data)
}

/// The first property's candidate pool on `recs`, where each candidate is recorded, and the property's
/// data over the whole pool.
fn pool_data(plan: &AutoPlan, recs: &[RunRecord]) -> (Pool, Vec<data::Source>, PropertyData) {
    let pool = plan.pool_of(recs, 0);
    let sources: Vec<data::Source> = pool.iter().map(|(_, s)| *s).collect();
    let data = PropertyData::new(recs, 0, &sources);
    (pool, sources, data)
}

/// Where the search on every run of `data` begins (its `AlphaChoice::start`), searched as
/// `build_property` searches it: from the reactive rule's literals and the declared predicates `fixed`.
fn main_start(
    data: &PropertyData,
    recs: &[RunRecord],
    cfg: &SearchConfig,
    fixed: &[usize],
    fine: search::Fine<'_>,
) -> Option<usize> {
    let all: Vec<usize> = (0..data.candidates.len()).collect();
    let rule_literals = rule_start(rule::best_rule(data, recs, &all).as_ref());
    let cache = search::RefineCache::new(data, recs, fine);
    let refine = |c: usize| cache.get(c);
    let starts = search_starts(&rule_literals, fixed);
    search::greedy_multi_alphas(data, recs, cfg, &starts, Some(&refine)).start
}

#[test]
fn utility_and_budget_levels_match_hand_values() {
    assert_eq!(utility(None), 0.0);
    assert_eq!(utility(Some(0.0)), 0.5);
    assert_eq!(utility(Some(LEAD_CAP_S / 2.0)), 0.75);
    assert_eq!(utility(Some(100.0)), 1.0);
    // Ten safe runs: a 10 % budget lets the highest one alarm, so alarms fire above the second highest.
    let maxima = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0];
    assert_eq!(level_for_budget(&maxima, 0.1), 0.8);
    assert_eq!(level_for_budget(&maxima, 0.0), 0.9);
    assert_eq!(level_for_budget(&maxima, 1.0), f64::NEG_INFINITY);
    assert_eq!(BUDGETS.len(), 4);
}

/// The strictest budget's recall, by hand: 40 safe runs let floor(0.05 · 40) = 2 alarm, so the level is
/// the third-highest safe maximum, and a violating run counts when some envelope entry is above it.
#[test]
fn the_strict_budget_recall_counts_the_runs_warned_above_the_5_percent_level() {
    use super::criterion::strict_budget_recall;
    assert_eq!(BUDGETS[0], 0.05);
    // Safe maxima 0.00, 0.025, …, 0.975 in shuffled order: the third highest is 0.925.
    let mut safe: Vec<f64> = (0..40).map(|i| f64::from((i * 7) % 40) / 40.0).collect();
    let envelopes = vec![
        vec![(0.5, 3.0), (0.93, 1.0)], // above 0.925: warned
        vec![(0.925, 2.0)],            // at the level, not above: missed
        vec![],                        // never a risk: missed
        vec![(0.2, 4.0), (0.99, 0.5)], // warned
    ];
    assert_eq!(strict_budget_recall(&mut safe, &envelopes), 0.5);
    assert_eq!(safe[2], 0.925, "sorted in descending order");
    assert_eq!(strict_budget_recall(&mut safe, &[]), 0.0);
    // No safe run: every run with a risk is warned.
    assert_eq!(strict_budget_recall(&mut [], &envelopes), 0.75);
}

#[test]
fn thresholds_read_as_words() {
    assert_eq!(pool::readable(42.37), 42.0);
    assert_eq!(pool::readable(3.456), 3.5);
    assert_eq!(pool::readable(0.01234), 0.012);
    assert_eq!(pool::readable(-0.0004).to_string(), "-0.0004");
    assert_eq!(pool::readable(-0.0).to_string(), "0");
    assert_eq!(pool::readable(1234.0), 1200.0);
    let cuts = pool::thresholds((0..=100).map(f64::from).collect());
    assert_eq!(cuts, vec![2.0, 10.0, 25.0, 50.0, 75.0, 90.0]);
    // The finer grid: every 2 % level, less the coarse cuts.
    let fine = pool::fine_thresholds((0..=100).map(f64::from).collect(), &cuts);
    let want: Vec<f64> = (1..50)
        .map(|j| f64::from(2 * j))
        .filter(|c| !cuts.contains(c))
        .collect();
    assert_eq!(fine, want);
    // 2, 10, 50 and 90 are on the 2 % grid; 25 and 75 are not.
    assert_eq!(fine.len(), 49 - 4);
    assert!(pool::fine_thresholds(vec![f64::NAN, f64::INFINITY], &[]).is_empty());
    // A cut a thousandth of the scale from zero reads as 0: a signal spread over ±10 with a bulk at
    // ±1e-7 (every level between 2 % and 98 % lies in that bulk).
    let mut noisy: Vec<f64> = (0..1000).map(|i| f64::from(i - 500) * 2e-10).collect();
    noisy.extend([-10.0; 30].iter().chain([10.0; 30].iter()));
    let fine = pool::fine_thresholds(noisy, &[]);
    assert!(fine.contains(&0.0), "{fine:?}");
    assert!(
        fine.iter().all(|&c| c == 0.0 || c.abs() >= 0.01),
        "{fine:?}"
    );
    assert_eq!(
        negated_text(&laws::Atom::parse("speed <= 30").unwrap()),
        "speed>30"
    );
    assert_eq!(
        negated_text(&laws::Atom::parse("speed < 0.5").unwrap()),
        "speed>=0.5"
    );
}

#[test]
fn folds_split_runs_and_are_stratified_and_seeded() {
    let (plan, recs) = records(60, 1);
    let _ = plan;
    let data = PropertyData::new(&recs, 0, &[]);
    let n_violating = data.runs.iter().filter(|r| r.violated).count();
    assert!((10..=30).contains(&n_violating), "{n_violating}");
    let folds = assign_folds(&data, 5, 7);
    assert_eq!(folds.len(), data.runs.len());
    for f in 0..5u8 {
        let v = (0..folds.len())
            .filter(|&i| folds[i] == f && data.runs[i].violated)
            .count();
        // Dealt round-robin: fold sizes differ by at most one.
        assert!(v.abs_diff(n_violating / 5) <= 1, "fold {f}: {v}");
    }
    assert_eq!(folds, assign_folds(&data, 5, 7));
    assert_ne!(folds, assign_folds(&data, 5, 8));
}

#[test]
fn the_search_finds_the_early_sign_and_beats_the_fixed_abstraction() {
    let (plan, recs) = records(300, 2);
    let cfg = SearchConfig {
        max_predicates: 4,
        ..SearchConfig::default()
    };
    let (model, reports) = plan.build(&recs, AbstractionMode::Auto, &cfg).unwrap();
    let sel = &reports[0].selection;
    assert_eq!(sel.mode, AbstractionMode::Auto);
    assert_eq!(sel.steps[0].predicate, "collision==1");
    // Only an `acc` threshold separates the drivers before the danger is visible; it comes first.
    assert!(
        sel.steps[1].predicate.starts_with("acc<="),
        "{:?}",
        sel.steps
    );
    // Scores increase along the trace, and the result beats the fixed (distance-only) abstraction.
    assert!(sel.steps.windows(2).all(|w| w[1].score > w[0].score));
    let last = sel.steps.last().unwrap().score;
    assert!(
        last > sel.fixed_score + 0.1,
        "{last} vs {}",
        sel.fixed_score
    );
    // The model holds the chosen predicates, in selection order after the unsafe one.
    let p = &model.properties()[0];
    let names: Vec<&str> = sel.steps.iter().map(|s| s.predicate.as_str()).collect();
    assert_eq!(p.predicates(), names.as_slice());
    assert_eq!(p.selection(), Some(sel));
    // Deterministic for a seed.
    let (_, again) = plan.build(&recs, AbstractionMode::Auto, &cfg).unwrap();
    assert_eq!(again[0].selection, *sel);
    // A model round-trips through bytes with its selection and rule.
    let back = Model::from_bytes(&model.to_bytes()).unwrap();
    assert_eq!(back, model);
}

/// The search's fold chains are the model `avguard learn` builds: with no run held out the search's chain
/// is learned from every run, and its risks must equal the built model's table, unobserved states
/// included.
#[test]
fn search_risks_equal_the_built_model() {
    search_risks_equal_the_built_model_under(crate::property::SmoothingPrior::Flat);
}

/// The same under hierarchical smoothing, where the two compute the parents differently: the search
/// learns each coarser set's chain from its own segmentation, one predicate at a time, the model from
/// its counts projected onto the predicates without the last one. With a handful of visits to most
/// states, the risks also differ from flat smoothing's.
#[test]
fn hierarchical_search_risks_equal_the_built_model() {
    search_risks_equal_the_built_model_under(crate::property::SmoothingPrior::Hierarchical);
}

/// The first property of 200 synthetic runs built over three pool thresholds (on `acc`, `NPCAhead` and
/// `speed`) under `prior`, with the runs, where those predicates are recorded, and its data over them.
fn three_predicate_model(
    prior: crate::property::SmoothingPrior,
) -> (
    PropertyModel,
    Vec<RunRecord>,
    Vec<data::Source>,
    PropertyData,
) {
    let (mut plan, recs) = records(200, 3);
    plan.config.prior = prior;
    let pool = plan.pool_of(&recs, 0);
    let pick = |prefix: &str| {
        pool.iter()
            .map(|(c, _)| c.text())
            .find(|t| t.starts_with(prefix))
            .unwrap()
    };
    let chosen = vec![pick("acc<="), pick("NPCAhead<="), pick("speed<=")];
    let p = plan.build_with(&recs, 0, &chosen).unwrap();
    let sources = sources_of(&pool, &chosen);
    let data = PropertyData::new(&recs, 0, &sources);
    (p, recs, sources, data)
}

fn search_risks_equal_the_built_model_under(prior: crate::property::SmoothingPrior) {
    let hierarchical = prior == crate::property::SmoothingPrior::Hierarchical;
    let (p, recs, _, data) = three_predicate_model(prior);
    assert_eq!(
        p.counts().n_invalid(),
        0,
        "the validity rules rejected nothing"
    );
    let cfg = SearchConfig {
        hierarchical,
        ..SearchConfig::default()
    };
    let risks = Scorer::new(&data, &recs, &cfg).full_data_risks(&[0, 1, 2]);
    let other = Scorer::new(
        &data,
        &recs,
        &SearchConfig {
            hierarchical: !hierarchical,
            ..cfg
        },
    )
    .full_data_risks(&[0, 1, 2]);
    let domain = p.domain().unwrap();
    let (mut n_observed, mut n_differ) = (0, 0);
    for s in 0..(1u32 << 4) {
        if domain.is_unsafe(s) || !domain.is_valid_state(s) {
            continue;
        }
        let want = p.table().eventually(s as StateId).unwrap();
        let got = risks[s as usize];
        assert!(
            (want - got).abs() < 1e-6,
            "state {s}: model {want}, search {got}"
        );
        n_observed += usize::from(p.pac().state(s).is_some_and(|(n, _)| n > 0));
        n_differ += usize::from((other[s as usize] - got).abs() > 1e-6);
    }
    assert!(n_observed >= 3, "{n_observed}");
    assert!(n_differ >= 1, "the prior changed no risk");
}

/// With a frame share mixed in, the search scores the risks the built model then reads: the model's
/// share counted here frame by frame from the recorded predicate values (not from the search's
/// segments), weight ½, for every state — the visited ones mixed, the others the chain's alone.
#[test]
fn search_risks_with_a_frame_share_equal_the_built_model() {
    let (p, recs, sources, data) = three_predicate_model(crate::property::SmoothingPrior::Flat);
    // Each run's states frame by frame (the unsafe bit is only ever set on a violating run's last
    // frame, which the share leaves out).
    let traces: Vec<(Vec<StateId>, bool)> = data
        .runs
        .iter()
        .map(|run| {
            let rec = &recs[run.record];
            let states = (0..run.n as usize)
                .map(|k| {
                    sources
                        .iter()
                        .enumerate()
                        .map(|(i, &s)| StateId::from(rec.value(s, k)) << (i + 1))
                        .sum()
                })
                .collect();
            (states, run.violated)
        })
        .collect();
    let share = crate::share::FrameShare::from_traces(
        0.5,
        p.n_states(),
        &p.config().horizons_steps,
        p.config().laplace.alpha,
        traces.iter().map(|(t, v)| (t.as_slice(), *v)),
    )
    .unwrap();
    let p = p.with_frame_share(Some(share)).unwrap();
    let cfg = SearchConfig {
        share_weight: 0.5,
        ..SearchConfig::default()
    };
    let risks = Scorer::new(&data, &recs, &cfg).full_data_risks(&[0, 1, 2]);
    let domain = p.domain().unwrap();
    let (mut mixed, mut unvisited) = (0, 0);
    for s in 0..(1u32 << 4) {
        if domain.is_unsafe(s) || !domain.is_valid_state(s) {
            continue;
        }
        let want = p.risk_table().eventually(s).unwrap();
        let got = risks[s as usize];
        assert!(
            (want - got).abs() < 1e-6,
            "state {s}: model {want}, search {got}"
        );
        if p.frame_share().unwrap().eventually(s).is_some() {
            mixed += 1;
            assert!(
                (want - p.table().eventually(s).unwrap()).abs() > 1e-9,
                "state {s}"
            );
        } else {
            unvisited += 1;
            assert_eq!(Some(want), p.table().eventually(s), "state {s}");
        }
    }
    assert!(mixed >= 3, "{mixed}");
    assert!(unvisited >= 1, "{unvisited}");
}

/// The weight of the frame share is the one whose mean score over the search's folds and the fresh
/// ones is highest (ties: the lower), recomputed here from each weight's own scores; and the auto
/// model carries it, with the share of its own predicates.
#[test]
fn the_frame_share_weight_is_chosen_by_the_search_score() {
    let (plan, recs) = records(300, 4);
    let cfg = SearchConfig {
        max_predicates: 2,
        choose_share: true,
        ..SearchConfig::default()
    };
    let (model, _) = plan.build(&recs, AbstractionMode::Auto, &cfg).unwrap();
    assert_eq!(Model::from_bytes(&model.to_bytes()).unwrap(), model);
    let p = &model.properties()[0];
    let pool = plan.pool_of(&recs, 0);
    let sources = sources_of(&pool, &p.predicates()[1..]);
    let data = PropertyData::new(&recs, 0, &sources);
    let toggles: Vec<&data::Toggles> = data.candidates.iter().collect();
    let (w, scores) = search::choose_share_weight(&data, &recs, &cfg, &toggles);
    let set: Vec<usize> = (0..sources.len()).collect();
    let mut best = (f64::NEG_INFINITY, f64::NAN);
    for (&weight, &score) in search::SHARE_WEIGHTS.iter().zip(&scores) {
        let c = SearchConfig {
            share_weight: weight,
            ..cfg
        };
        let own = search::score_set(&data, &recs, &c, &set).0;
        let fresh: f64 = search::fresh_scorers(&data, &recs, &c)
            .iter()
            .map(|f| f.score_toggles(&toggles).0)
            .sum();
        let mean = (own + fresh) / (1 + cfg.finalist_repeats) as f64;
        assert!(
            (mean - score).abs() < 1e-12,
            "weight {weight}: {mean} vs {score}"
        );
        if mean > best.0 {
            best = (mean, weight);
        }
    }
    assert_eq!(w, best.1);
    assert_eq!(p.frame_share().map_or(0.0, |f| f.weight()), w);
    // On three weak predicates the weights rank frames differently, and score differently.
    let (recs, _, all, full) = whole_pool(4);
    let weak = weak_sources(&recs, &all, &full, &cfg, 0.01, 3);
    assert_eq!(weak.len(), 3);
    let data = PropertyData::new(&recs, 0, &weak);
    let toggles: Vec<&data::Toggles> = data.candidates.iter().collect();
    let (w, scores) = search::choose_share_weight(&data, &recs, &cfg, &toggles);
    assert!(
        scores.iter().any(|&x| (x - scores[0]).abs() > 1e-6),
        "{scores:?}"
    );
    let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let first_top = search::SHARE_WEIGHTS[scores.iter().position(|&x| x == top).unwrap()];
    assert_eq!(w, first_top, "{scores:?}");
}

#[test]
fn the_reactive_rule_is_learned_and_applied_by_the_session() {
    let (plan, recs) = records(300, 4);
    let (model, reports) = plan
        .build(&recs, AbstractionMode::Fixed, &SearchConfig::default())
        .unwrap();
    let rule = reports[0].rule.clone().unwrap();
    assert!(rule.n_predicted * 10 >= rule.n_violating * 8, "{rule:?}");
    assert!(rule.n_false_alarms * 10 <= rule.n_safe, "{rule:?}");
    // The session evaluates it: on a fresh run, the rule alarm is the conjunction of its literals.
    assert!(session_applies(model, &rule) > 0);
}

/// Runs 20 fresh runs through a session of `model` and checks that property 0's rule alarm is, frame by
/// frame, the conjunction of `rule`'s literals; returns the number of alarmed frames.
fn session_applies(model: crate::Model, rule: &crate::select::ReactiveRule) -> usize {
    let model = std::sync::Arc::new(model);
    let mut session = crate::Session::new(&model, &crate::SessionConfig::default()).unwrap();
    let atoms: Vec<laws::Atom> = rule
        .literals
        .iter()
        .map(|t| laws::Atom::parse(t).unwrap())
        .collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(99);
    let mut n_alarms = 0;
    for _ in 0..20 {
        session.reset();
        let mut stream = laws::SignalStream::new(
            laws::SignalContext::default(),
            laws::signals::SignalSet::ALL,
        );
        for f in run(&mut rng) {
            let want = atoms.iter().all(|a| a.eval(stream.next(&f)));
            assert_eq!(session.step(&f).properties[0].rule_alarm, want);
            n_alarms += usize::from(want);
        }
    }
    n_alarms
}

/// The rules written for a false-alarm budget keep within it on the learning runs, and a model copy that
/// carries one instead of its stored rule applies it at runtime and is otherwise the same model.
#[test]
fn budget_rules_keep_within_their_budget_and_replace_the_stored_rule() {
    let (plan, recs) = records(300, 4);
    let budgets = [0.0, 0.05, 0.4];
    let (model, reports) = plan
        .build_with_budget_rules(
            &recs,
            AbstractionMode::Fixed,
            &SearchConfig::default(),
            &budgets,
        )
        .unwrap();
    // Asking for the budget rules changes nothing else.
    let (plain, plain_reports) = plan
        .build(&recs, AbstractionMode::Fixed, &SearchConfig::default())
        .unwrap();
    assert_eq!(plain, model);
    assert_eq!(plain_reports[0].rule, reports[0].rule);
    assert!(plain_reports[0].budget_rules.is_empty());
    let rules: Vec<_> = reports.iter().map(|r| r.budget_rules.clone()).collect();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].len(), budgets.len());
    for (b, rule) in budgets.iter().zip(&rules[0]) {
        if let Some(r) = rule {
            assert!(
                r.n_false_alarms as f64 <= (b * r.n_safe as f64 + 1e-9).floor(),
                "{b}: {r:?}"
            );
            assert_eq!(r.n_safe + r.n_violating, recs.len());
        }
    }
    // The generous budget's rule warns of at least as many runs as the stored rule, which ends up
    // below it here.
    let loose = rules[0][2].clone().expect("a rule within 40 %");
    let stored = reports[0].rule.clone().unwrap();
    assert!(
        loose.n_predicted >= stored.n_predicted,
        "{loose:?} vs {stored:?}"
    );
    let copy = model.with_reactive_rules(|_| Some(loose.clone())).unwrap();
    assert_eq!(copy.properties()[0].reactive_rule(), Some(&loose));
    assert_eq!(
        copy.properties()[0]
            .clone()
            .with_reactive_rule(Some(stored)),
        model.properties()[0]
    );
    assert!(session_applies(copy, &loose) > 0, "{loose:?}");
    // A literal the laws cannot resolve is refused when the copy is assembled.
    let bad = crate::select::ReactiveRule {
        literals: vec!["noSuchSignal>1".into()],
        ..loose
    };
    assert!(model.with_reactive_rules(|_| Some(bad.clone())).is_err());
}

/// The cross-validated score recomputed frame by frame: per fold, the chain learned from the other folds'
/// runs alone (the search's own chain on a smaller data set, whose agreement with the built model is
/// checked above), every held-out frame's state read from the recorded values, θ set per budget on the
/// held-out safe runs' highest risks, and each violating run's first frame above it giving its lead. The
/// search computes the same on segments, with all folds in one pass.
#[test]
fn the_cross_validated_score_matches_a_frame_by_frame_recount() {
    cross_validated_score_matches_a_recount(false, 0.0);
}

/// The same with a frame share mixed in: each fold's shares count the other folds' frames alone.
#[test]
fn the_cross_validated_score_with_a_frame_share_matches_a_frame_by_frame_recount() {
    cross_validated_score_matches_a_recount(false, 0.5);
}

/// The same under hierarchical smoothing: there the search learns every coarser set's chain per fold
/// from the whole data's segments, the recount from each fold's training runs alone.
#[test]
fn the_hierarchical_cross_validated_score_matches_a_frame_by_frame_recount() {
    cross_validated_score_matches_a_recount(true, 0.0);
}

fn cross_validated_score_matches_a_recount(hierarchical: bool, share_weight: f64) {
    let (plan, recs) = records(150, 5);
    let pool = plan.pool_of(&recs, 0);
    let cfg = SearchConfig {
        hierarchical,
        ..SearchConfig::default()
    };
    // The three best steps of the search, gain or not (so the score is far from trivial), as their own
    // small pool.
    let all: Vec<data::Source> = pool.iter().map(|(_, s)| *s).collect();
    let (steps, _) = search::greedy(
        &PropertyData::new(&recs, 0, &all),
        &recs,
        &SearchConfig {
            max_predicates: 4,
            min_gain: -1.0,
            ..cfg
        },
    );
    let sources: Vec<data::Source> = steps
        .iter()
        .filter_map(|s| s.candidate)
        .map(|c| all[c])
        .collect();
    assert_eq!(sources.len(), 3, "{steps:?}");
    let cfg = SearchConfig {
        share_weight,
        ..cfg
    };
    let set: Vec<usize> = (0..sources.len()).collect();
    let data = PropertyData::new(&recs, 0, &sources);
    let (score, _) = search::score_set(&data, &recs, &cfg, &set);

    let folds = assign_folds(&data, cfg.folds, cfg.seed);
    // Under hierarchical smoothing, the search's chains of the whole set, fold by fold, built one
    // predicate at a time on all runs' segments.
    let scorer = Scorer::new(&data, &recs, &cfg);
    let mut segs = search::Segments::initial(&data);
    let mut levels = scorer.level(&segs, 1, None);
    for (i, &c) in set.iter().enumerate() {
        segs = segs.with(&data, &data.candidates[c], i as u32 + 1);
        levels = scorer.level(&segs, i as u32 + 2, levels.as_ref());
    }
    assert_eq!(levels.is_some(), hierarchical);
    let (mut total, mut n_violating) = (0.0, 0usize);
    for f in 0..cfg.folds as u8 {
        let train: Vec<RunRecord> = data
            .runs
            .iter()
            .zip(&folds)
            .filter(|&(_, &g)| g != f)
            .map(|(r, _)| recs[r.record].clone())
            .collect();
        let train_data = PropertyData::new(&train, 0, &sources);
        let risks = Scorer::new(&train_data, &train, &cfg).full_data_risks(&set);
        if let Some(levels) = &levels {
            // The fold's chain is the one learned from the other folds alone, coarser sets included.
            for (s, (a, b)) in levels.fold(f as usize).iter().zip(&risks).enumerate() {
                assert!((a - b).abs() < 1e-9, "fold {f}, state {s}: {a} vs {b}");
            }
        }
        let mut safe_max: Vec<f64> = Vec::new();
        // Per violating run: (risk, lead) of every frame before the violation.
        let mut violating: Vec<Vec<(f64, f64)>> = Vec::new();
        for (run, _) in data.runs.iter().zip(&folds).filter(|&(_, &g)| g == f) {
            let rec = &recs[run.record];
            let n = run.n as usize;
            let risk_at = |k: usize| {
                let state: usize = sources
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| usize::from(rec.value(s, k)) << (i + 1))
                    .sum();
                risks[state]
            };
            if run.violated {
                let t_viol = rec.t[n - 1];
                violating.push(
                    (0..n - 1)
                        .map(|k| (risk_at(k), t_viol - rec.t[k]))
                        .collect(),
                );
            } else {
                safe_max.push((0..n).map(risk_at).fold(f64::NEG_INFINITY, f64::max));
            }
        }
        safe_max.sort_by(|a, b| b.total_cmp(a));
        n_violating += violating.len();
        for budget in BUDGETS {
            // At most floor(budget · n_safe) safe runs may alarm: θ sits at the next highest maximum.
            let allowed = (budget * safe_max.len() as f64 + 1e-9).floor() as usize;
            let level = safe_max.get(allowed).copied().unwrap_or(f64::NEG_INFINITY);
            for frames in &violating {
                let lead = frames.iter().find(|&&(x, _)| x > level).map(|&(_, l)| l);
                total += match lead {
                    None => 0.0,
                    Some(l) => 0.5 + 0.5 * l.min(LEAD_CAP_S) / LEAD_CAP_S,
                };
            }
        }
    }
    let want = total / (n_violating * BUDGETS.len()) as f64;
    assert!(n_violating >= 20, "{n_violating}");
    assert!(
        (score - want).abs() < 1e-9,
        "search {score}, frame-by-frame {want}"
    );
    // Not a degenerate case: the score is far from both ends.
    assert!(want > 0.2 && want < 0.99, "{want}");
}

/// The multi-start search keeps the best of its searches: its final score is the highest of the greedy
/// search from nothing and from each start, a start is taken whole before the search extends it, and a
/// start that beats the unseeded search wins.
#[test]
fn the_multi_start_search_keeps_the_best_start() {
    let (recs, pool, _, data) = whole_pool(6);
    // Finalists compared on their own scores (the fresh folds have their own test).
    let cfg = SearchConfig {
        max_predicates: 4,
        finalist_repeats: 0,
        ..SearchConfig::default()
    };
    let last = |steps: &[search::Step]| steps.last().unwrap().score;
    let (plain, _) = search::greedy(&data, &recs, &cfg);
    // A weak start (the smallest-quantile speed and distance thresholds) and the plain search's own set.
    let weak: Vec<usize> = ["speed<=", "NPCAhead<="]
        .iter()
        .map(|p| {
            pool.iter()
                .position(|(c, _)| c.text().starts_with(p))
                .unwrap()
        })
        .collect();
    let own: Vec<usize> = plain.iter().filter_map(|s| s.candidate).collect();
    let (from_weak, _) = search::greedy_from(&data, &recs, &cfg, &weak);
    let taken: Vec<Option<usize>> = from_weak[1..=2].iter().map(|s| s.candidate).collect();
    assert_eq!(taken, vec![Some(weak[0]), Some(weak[1])]);
    let (multi, segs, _) = search::greedy_multi(&data, &recs, &cfg, &[&weak, &own], None);
    let best = last(&plain).max(last(&from_weak));
    assert_eq!(last(&multi), best);
    // Its segmentation is the chosen set's.
    let chosen: Vec<usize> = multi.iter().filter_map(|s| s.candidate).collect();
    let (score, again) = search::score_set(&data, &recs, &cfg, &chosen);
    assert_eq!(score, last(&multi));
    assert_eq!(
        (0..data.runs.len())
            .map(|r| again.run(r).to_vec())
            .collect::<Vec<_>>(),
        (0..data.runs.len())
            .map(|r| segs.run(r).to_vec())
            .collect::<Vec<_>>()
    );
    // A start better than the unseeded search's result wins: the plain set plus its best next candidate
    // scores at least as high, so seeding with a strictly better one is kept.
    let (longer, _) = search::greedy(
        &data,
        &recs,
        &SearchConfig {
            max_predicates: 5,
            min_gain: -1.0,
            ..SearchConfig::default()
        },
    );
    let better: Vec<usize> = longer.iter().filter_map(|s| s.candidate).collect();
    let five = SearchConfig {
        max_predicates: 5,
        finalist_repeats: 0,
        ..SearchConfig::default()
    };
    let (plain5, _) = search::greedy(&data, &recs, &five);
    let (seeded5, _, _) = search::greedy_multi(&data, &recs, &five, &[&better], None);
    assert_eq!(last(&seeded5), last(&plain5).max(last(&longer)));
}

/// A step's threshold is replaced by a finer cut of its signal when that scores higher: with a pool of
/// one weak candidate whose "finer cuts" include the candidate the plain search likes best, the refined
/// search takes that alternative, its step says which one, its score is the score of the set with the
/// alternative's toggles, and it beats the unrefined search. A refinement that offers nothing better
/// changes nothing.
#[test]
fn a_chosen_threshold_is_refined_to_a_finer_cut_when_that_scores_higher() {
    let (recs, pool, all, full) = whole_pool(6);
    let cfg = SearchConfig {
        max_predicates: 2,
        choose_share: true,
        ..SearchConfig::default()
    };
    // The plain search's first choice is the "good" cut; a weak cut is the smallest speed threshold.
    let (plain, _) = search::greedy(&full, &recs, &cfg);
    let good = plain[1].candidate.unwrap();
    let weak = pool
        .iter()
        .position(|(c, _)| c.text().starts_with("speed<="))
        .unwrap();
    let data = PropertyData::new(&recs, 0, &[all[weak]]);
    let last = |steps: &[search::Step]| steps.last().unwrap().score;
    let (unrefined, _) = search::greedy(&data, &recs, &cfg);
    // Offered as "finer cuts" of candidate 0: a constant (skipped), the weak cut itself, the good one.
    let alternatives = vec![
        data.toggles_of(&recs, data::Source::AtMost(0, f64::INFINITY)),
        full.candidates[weak].clone(),
        full.candidates[good].clone(),
    ];
    let refine = |c: usize| -> std::sync::Arc<[data::Toggles]> {
        if c == 0 {
            alternatives.clone().into()
        } else {
            Vec::new().into()
        }
    };
    let (steps, segs, refined) = search::greedy_multi(&data, &recs, &cfg, &[], Some(&refine));
    assert_eq!(refined.len(), 1, "{steps:?}");
    assert_eq!(
        (refined[0].of, refined[0].kind),
        (0, search::RefinedKind::Cut(2))
    );
    assert_eq!(steps[1].candidate, Some(data.candidates.len()));
    assert!(
        last(&steps) > last(&unrefined) + 0.05,
        "{steps:?} vs {unrefined:?}"
    );
    // The score is that of the set with the alternative's toggles, and so is the segmentation.
    let mut with = data.clone();
    with.candidates.push(refined[0].toggles.clone());
    let (score, again) = search::score_set(&with, &recs, &cfg, &[1]);
    assert_eq!(score, last(&steps));
    assert!((0..data.runs.len()).all(|r| again.run(r) == segs.run(r)));
    // The same as the plain search's first step on the full pool.
    assert_eq!(score, plain[1].score);
    // Nothing better on offer: the refined search is the plain one.
    let none = |_: usize| -> std::sync::Arc<[data::Toggles]> {
        vec![full.candidates[weak].clone()].into()
    };
    let (same, _, refined) = search::greedy_multi(&data, &recs, &cfg, &[], Some(&none));
    assert!(refined.is_empty());
    assert_eq!(same, unrefined);
    // Deterministic.
    let (again_steps, _, _) = search::greedy_multi(&data, &recs, &cfg, &[], Some(&refine));
    assert_eq!(again_steps, steps);
}

/// A finer cut equal on the training runs to a predicate already chosen is not offered again. The pool is
/// one candidate that hurts once a base cut is in, and the base cut is that candidate's only finer cut:
/// the search refines its first step to the base cut and then, forced to take a second step, takes the
/// poor candidate, not the base cut a second time, although the duplicate would score higher (it changes
/// nothing, the poor candidate lowers the score).
#[test]
fn a_finer_cut_equal_to_a_chosen_predicate_is_not_chosen_again() {
    let (recs, _, all, full) = whole_pool(6);
    let cfg = SearchConfig {
        max_predicates: 3,
        min_gain: -1.0,
        ..SearchConfig::default()
    };
    let score_of = |set: &[usize]| search::score_set(&full, &recs, &cfg, set).0;
    let usable: Vec<usize> = (0..full.candidates.len())
        .filter(|&c| !full.candidates[c].is_constant())
        .collect();
    // A base cut and a poor candidate such that the refinement takes the base cut first (it scores
    // higher alone) and the duplicate would beat the poor candidate at the second step.
    let (base, poor) = usable
        .iter()
        .flat_map(|&b| usable.iter().map(move |&c| (b, c)))
        .find(|&(b, c)| {
            full.candidates[b] != full.candidates[c]
                && score_of(&[b]) > score_of(&[c])
                && score_of(&[b, b]) > score_of(&[b, c])
        })
        .expect("the synthetic runs hold a cut that a poor candidate spoils");
    let good = full.candidates[base].clone();
    let data = PropertyData::new(&recs, 0, &[all[poor]]);
    let refine = |_: usize| -> std::sync::Arc<[data::Toggles]> { vec![good.clone()].into() };
    let (steps, _, refined) = search::greedy_multi(&data, &recs, &cfg, &[], Some(&refine));
    assert_eq!(refined.len(), 1, "{steps:?}");
    assert_eq!(refined[0].toggles, good);
    let chosen: Vec<usize> = steps.iter().filter_map(|s| s.candidate).collect();
    assert_eq!(chosen, vec![data.candidates.len(), 0], "{steps:?}");
}

/// The searches' finalists are compared on fresh fold assignments too: with a pool of weak candidates
/// and two starts taken whole (no room to extend them), the search keeps the finalist with the highest
/// mean of its own score and its scores on the three further assignments (recomputed here with
/// `score_set` at their seeds), which here is not the finalist its own folds rank first; with
/// `finalist_repeats = 0` it keeps that one.
#[test]
fn the_finalists_are_compared_on_fresh_folds_too() {
    let (recs, _, all, full) = whole_pool(6);
    let cfg = SearchConfig {
        max_predicates: 3,
        ..SearchConfig::default()
    };
    // Eight weak candidates: each alone scores between 0.01 and 0.5.
    let weak = weak_sources(&recs, &all, &full, &cfg, 0.01, 8);
    let data = PropertyData::new(&recs, 0, &weak);
    let at = |seed: u64, set: &[usize]| {
        search::score_set(&data, &recs, &SearchConfig { seed, ..cfg }, set).0
    };
    let mean = |set: &[usize]| (at(0, set) + at(1001, set) + at(1002, set) + at(1003, set)) / 4.0;
    // Every pair; the starts are the best pair by its own folds and the best by the mean.
    let pairs: Vec<[usize; 2]> = (0..weak.len())
        .flat_map(|a| (a + 1..weak.len()).map(move |b| [a, b]))
        .collect();
    let best_by = |f: &dyn Fn(&[usize]) -> f64| {
        *pairs
            .iter()
            .max_by(|x, y| f(&x[..]).total_cmp(&f(&y[..])))
            .unwrap()
    };
    let (by_own, by_mean) = (best_by(&|s| at(0, s)), best_by(&mean));
    assert_ne!(
        by_own, by_mean,
        "the seed-6 runs no longer tell the two rankings apart"
    );
    let (plain, _) = search::greedy(&data, &recs, &cfg);
    let plain_set: Vec<usize> = plain.iter().filter_map(|s| s.candidate).collect();
    let chosen = |cfg: &SearchConfig| -> Vec<usize> {
        let (steps, _, _) =
            search::greedy_multi(&data, &recs, cfg, &[&by_own[..], &by_mean[..]], None);
        steps.iter().filter_map(|s| s.candidate).collect()
    };
    // The expected winner among the three finalists (ties: the earlier).
    let finalists = [plain_set.clone(), by_own.to_vec(), by_mean.to_vec()];
    let argmax = |f: &dyn Fn(&[usize]) -> f64| {
        let mut best = &finalists[0];
        for c in &finalists[1..] {
            if f(c) > f(best) {
                best = c;
            }
        }
        best.clone()
    };
    assert_eq!(chosen(&cfg), argmax(&mean));
    assert_ne!(argmax(&mean), argmax(&|s| at(0, s)));
    let own_only = SearchConfig {
        finalist_repeats: 0,
        ..cfg
    };
    assert_eq!(chosen(&own_only), argmax(&|s| at(0, s)));
}

/// A start that the search from nothing took as its first steps, in its order, is not searched again:
/// from it the search repeats the one from nothing step for step, so the result is that search's, begun
/// from nothing. A start the search from nothing did not take first is searched and can win.
#[test]
fn a_start_the_search_from_nothing_took_first_repeats_it() {
    let (recs, _, _, full) = whole_pool(6);
    // Every step taken, whatever it gains, so that the search has several.
    let cfg = SearchConfig {
        max_predicates: 4,
        min_gain: -1.0,
        ..SearchConfig::default()
    };
    let (plain, _) = search::greedy(&full, &recs, &cfg);
    let taken: Vec<usize> = plain.iter().filter_map(|s| s.candidate).collect();
    assert!(taken.len() >= 2, "{plain:?}");
    let prefix = &taken[..2];
    let (again, _) = search::greedy_from(&full, &recs, &cfg, prefix);
    let again_taken: Vec<usize> = again.iter().filter_map(|s| s.candidate).collect();
    assert_eq!(again_taken, taken);
    let found = search::greedy_multi_alphas(&full, &recs, &cfg, &[prefix], None);
    assert_eq!(found.start, None);
    assert_eq!(found.steps, plain);
    // In the other order the start is a different search, and the finalist score decides.
    let swapped = [taken[1], taken[0]];
    let found = search::greedy_multi_alphas(&full, &recs, &cfg, &[&swapped], None);
    let (from_swapped, segs) = search::greedy_from(&full, &recs, &cfg, &swapped);
    let fresh = search::fresh_scorers(&full, &recs, &cfg);
    let score_of = |steps: &[search::Step], segs: &search::Segments| {
        let toggles: Vec<&data::Toggles> = steps
            .iter()
            .filter_map(|s| s.candidate)
            .map(|c| &full.candidates[c])
            .collect();
        search::finalist_score(steps, segs, &toggles, &fresh)
    };
    let (_, plain_segs) = search::greedy(&full, &recs, &cfg);
    let swapped_wins = score_of(&from_swapped, &segs) > score_of(&plain, &plain_segs);
    assert_eq!(found.start, swapped_wins.then_some(0));
}

/// Under the further smoothings the search runs once, from the start the first smoothing's winner grew
/// from, and the smoothings are compared by those searches' finalist scores (recomputed here with
/// `greedy_from` and `finalist_score` under each α, ties to the earlier). The starts are two weak pairs
/// (room for one more predicate), the second the best of all pairs, above the search from nothing;
/// the synthetic runs are drawn until, under some α, the searches from every start would have chosen
/// otherwise, so the test tells the two rules apart.
#[test]
fn further_smoothings_search_from_the_first_smoothing_s_start() {
    let cfg = SearchConfig {
        max_predicates: 4,
        ..SearchConfig::default()
    };
    let alpha_only = SearchConfig {
        choose_alpha: true,
        ..cfg
    };
    let finalist = |data: &PropertyData, recs: &[RunRecord], c: &SearchConfig, set: &[usize]| {
        let (steps, segs) = search::greedy_from(data, recs, c, set);
        let toggles = search::chosen_toggles(data, &steps, &[]);
        let fresh = search::fresh_scorers(data, recs, c);
        (
            search::finalist_score(&steps, &segs, &toggles, &fresh),
            steps,
        )
    };
    let mut told_apart = false;
    for seed in 1..40 {
        let (recs, _, all, full) = whole_pool(seed);
        let weak = weak_sources(&recs, &all, &full, &cfg, 0.01, 8);
        let data = PropertyData::new(&recs, 0, &weak);
        let (from_nothing, _) = finalist(&data, &recs, &cfg, &[]);
        let pairs: Vec<[usize; 2]> = (0..weak.len())
            .flat_map(|a| (a + 1..weak.len()).map(move |b| [a, b]))
            .collect();
        let scored: Vec<(f64, [usize; 2])> = pairs
            .iter()
            .map(|p| (finalist(&data, &recs, &cfg, p).0, *p))
            .collect();
        let Some(&(top, best)) = scored
            .iter()
            .filter(|(s, _)| *s > from_nothing)
            .max_by(|x, y| x.0.total_cmp(&y.0))
        else {
            continue;
        };
        for &(_, other) in scored.iter().filter(|(s, _)| *s < top).take(12) {
            let starts: [&[usize]; 2] = [&other, &best];
            let first = search::greedy_multi_alphas(&data, &recs, &cfg, &starts, None);
            assert_eq!(first.start, Some(1), "seed {seed}");
            let mut want = (1.0, first.score, first.steps.clone());
            // Under the rule replaced: every start searched again under every α.
            let mut every_start = want.clone();
            for alpha in [0.3, 0.1] {
                let under = SearchConfig { alpha, ..cfg };
                let (score, steps) = finalist(&data, &recs, &under, &best);
                if score > want.1 {
                    want = (alpha, score, steps);
                }
                let all_starts = search::greedy_multi_alphas(&data, &recs, &under, &starts, None);
                if all_starts.score > every_start.1 {
                    every_start = (alpha, all_starts.score, all_starts.steps);
                }
            }
            let got = search::greedy_multi_alphas(&data, &recs, &alpha_only, &starts, None);
            assert_eq!(
                (got.alpha, got.score, &got.steps),
                (want.0, want.1, &want.2),
                "seed {seed}"
            );
            assert_eq!(got.start, Some(1));
            told_apart |= every_start.2 != want.2;
        }
        if told_apart {
            break;
        }
    }
    assert!(told_apart, "no drawn runs tell the two rules apart");
}

/// With `choose_alpha` the search runs under each α of `ALPHA_CHOICES`, and with `choose_prior` also
/// hierarchically under each of `HIERARCHICAL_ALPHA_CHOICES`, and keeps the smoothing whose result has
/// the highest finalist score (recomputed here from `greedy_multi` under each, ties to the earlier);
/// without either, it searches under `cfg`'s own smoothing.
#[test]
fn the_smoothing_is_chosen_by_the_search_score() {
    let (recs, _, all, full) = whole_pool(6);
    let cfg = SearchConfig {
        max_predicates: 5,
        ..SearchConfig::default()
    };
    // Weak candidates (each alone scores below 0.5), so that the chains stay uncertain and α matters.
    let weak = weak_sources(&recs, &all, &full, &cfg, f64::NEG_INFINITY, usize::MAX);
    let data = PropertyData::new(&recs, 0, &weak);
    let under = |alpha: f64, hierarchical: bool| {
        let cfg = SearchConfig {
            alpha,
            hierarchical,
            ..cfg
        };
        let (steps, segs, refined) = search::greedy_multi(&data, &recs, &cfg, &[], None);
        let fresh = search::fresh_scorers(&data, &recs, &cfg);
        let toggles = search::chosen_toggles(&data, &steps, &refined);
        let score = search::finalist_score(&steps, &segs, &toggles, &fresh);
        (steps, score)
    };
    let choices = [
        (1.0, false),
        (0.3, false),
        (0.1, false),
        (1.0, true),
        (0.3, true),
    ];
    let both = SearchConfig {
        choose_alpha: true,
        choose_prior: true,
        ..cfg
    };
    assert_eq!(search::smoothing_choices(&both), choices);
    let alpha_only = SearchConfig {
        choose_alpha: true,
        ..cfg
    };
    assert_eq!(search::smoothing_choices(&alpha_only), choices[..3]);
    let results: Vec<((f64, bool), Vec<search::Step>, f64)> = choices
        .iter()
        .map(|&(a, h)| {
            let (steps, score) = under(a, h);
            ((a, h), steps, score)
        })
        .collect();
    // Not degenerate: the α values score differently, and so do the two priors at one α.
    assert!(
        results[..3].iter().any(|r| r.2 != results[0].2),
        "{:?}",
        results.iter().map(|r| r.2).collect::<Vec<_>>()
    );
    assert_ne!(results[0].2, results[3].2);
    let best_of = |rs: &[((f64, bool), Vec<search::Step>, f64)]| {
        let mut want = rs[0].clone();
        for r in &rs[1..] {
            if r.2 > want.2 {
                want = r.clone();
            }
        }
        want
    };
    for (cfg, rs) in [(both, &results[..]), (alpha_only, &results[..3])] {
        let want = best_of(rs);
        let got = search::greedy_multi_alphas(&data, &recs, &cfg, &[], None);
        assert_eq!((got.alpha, got.hierarchical), want.0);
        assert_eq!(got.score, want.2);
        assert_eq!(got.steps, want.1);
    }
    // Without a choice: the given smoothing.
    for hierarchical in [false, true] {
        let given = SearchConfig {
            alpha: 0.3,
            hierarchical,
            ..cfg
        };
        let fixed = search::greedy_multi_alphas(&data, &recs, &given, &[], None);
        assert_eq!((fixed.alpha, fixed.hierarchical), (0.3, hierarchical));
        assert_eq!(fixed.steps, under(0.3, hierarchical).0);
    }
}

/// The auto model is smoothed as its search ran (the chosen α and prior, with `choose_alpha` and
/// `choose_prior`), whatever the plan's build α and prior: it stores that smoothing, and its risk table
/// is the search's own chain under it with no run held out, which differs from the table at α = 1 flat.
#[test]
fn the_auto_model_is_smoothed_as_its_search() {
    let (plan, recs) = records(300, 2);
    let at = |alpha: f64, hierarchical: bool| {
        let cfg = SearchConfig {
            max_predicates: 4,
            alpha,
            hierarchical,
            ..SearchConfig::default()
        };
        let (model, _) = plan.build(&recs, AbstractionMode::Auto, &cfg).unwrap();
        // The file keeps the smoothing: a model read back is the same model.
        assert_eq!(Model::from_bytes(&model.to_bytes()).unwrap(), model);
        (model.properties()[0].clone(), cfg)
    };
    let (one, _) = at(1.0, false);
    assert_eq!(one.config().laplace.alpha, 1.0);
    assert_eq!(one.config().prior, crate::property::SmoothingPrior::Flat);
    for (alpha, hierarchical) in [(0.3, false), (1.0, true)] {
        let (p, cfg) = at(alpha, hierarchical);
        assert_eq!(p.config().laplace.alpha, alpha);
        let prior = if hierarchical {
            crate::property::SmoothingPrior::Hierarchical
        } else {
            crate::property::SmoothingPrior::Flat
        };
        assert_eq!(p.config().prior, prior);
        assert_ne!(p.table(), one.table());
        // Its stored counts and configuration rebuild it (what merging counts relies on).
        let rebuilt = PropertyModel::build_for_law(
            p.name(),
            p.law(),
            p.predicates().to_vec(),
            p.unsafe_bit(),
            p.counts().clone(),
            p.config(),
        )
        .unwrap();
        assert_eq!(rebuilt.dtmc(), p.dtmc());
        assert_eq!(rebuilt.table(), p.table());
        // The table is the chain the search scored under that smoothing.
        let pool = plan.pool_of(&recs, 0);
        let sources = sources_of(&pool, &p.predicates()[1..]);
        let data = PropertyData::new(&recs, 0, &sources);
        let set: Vec<usize> = (0..sources.len()).collect();
        let risks = Scorer::new(&data, &recs, &cfg).full_data_risks(&set);
        let domain = p.domain().unwrap();
        let mut compared = 0;
        for s in 0..(1u32 << p.predicates().len()) {
            if domain.is_unsafe(s) || !domain.is_valid_state(s) {
                continue;
            }
            let want = p.table().eventually(s as StateId).unwrap();
            assert!((want - risks[s as usize]).abs() < 1e-6, "state {s}");
            compared += 1;
        }
        assert!(compared >= 1);
    }
    // With the choice, the model stores one of the smoothings searched.
    let choose = SearchConfig {
        max_predicates: 4,
        choose_alpha: true,
        choose_prior: true,
        ..SearchConfig::default()
    };
    let (model, _) = plan.build(&recs, AbstractionMode::Auto, &choose).unwrap();
    let p = &model.properties()[0];
    let chosen = (
        p.config().laplace.alpha,
        p.config().prior == crate::property::SmoothingPrior::Hierarchical,
    );
    assert!(
        search::smoothing_choices(&choose).contains(&chosen),
        "{chosen:?}"
    );
}

#[test]
fn each_ensemble_member_is_the_chain_its_own_seed_learns() {
    let (plan, recs) = records(200, 5);
    let cfg = SearchConfig {
        max_predicates: 4,
        choose_alpha: true,
        seed: 3,
        ..SearchConfig::default()
    };
    let single = |seed: u64| {
        let (m, _) = plan
            .build(&recs, AbstractionMode::Auto, &SearchConfig { seed, ..cfg })
            .unwrap();
        m.properties()[0].clone()
    };
    let (model, _) = plan
        .build(
            &recs,
            AbstractionMode::Auto,
            &SearchConfig { chains: 3, ..cfg },
        )
        .unwrap();
    let p = &model.properties()[0];
    assert_eq!(p.members().len(), 2);
    // The property's own chain is the single search's, rule and all.
    let own = single(3);
    assert_eq!(p.predicates(), own.predicates());
    assert_eq!(p.table(), own.table());
    assert_eq!(p.reactive_rule(), own.reactive_rule());
    for (k, member) in p.members().iter().enumerate() {
        // A further chain is the search under its own folds with the smoothing the first one chose.
        let seed = member_seed(3, k + 1);
        let alone = {
            let cfg = SearchConfig {
                seed,
                alpha: p.config().laplace.alpha,
                hierarchical: p.config().prior == crate::property::SmoothingPrior::Hierarchical,
                choose_alpha: false,
                ..cfg
            };
            let (m, _) = plan.build(&recs, AbstractionMode::Auto, &cfg).unwrap();
            m.properties()[0].clone()
        };
        assert_eq!(member.predicates(), alone.predicates(), "member {}", k + 1);
        assert_eq!(member.config(), alone.config(), "member {}", k + 1);
        assert_eq!(member.table(), alone.table(), "member {}", k + 1);
        assert_eq!(member.selection().map(|s| s.seed), Some(seed));
        assert_eq!(
            member.selection().map(|s| &s.steps),
            alone.selection().map(|s| &s.steps)
        );
        assert!(member.reactive_rule().is_none() && member.calibration().is_none());
    }
}

/// A step may join a chosen predicate with one of its best candidates into one predicate. The model
/// stores it as readable literals (`a & b`); the runtime reads those literals frame by frame, and must see
/// the states the search scored: a learner replaying the same runs through the model's predicate texts
/// counts exactly the model's transitions. The conjunction scores higher than the single candidates it
/// beat, and the search with conjunctions ends no lower than without.
#[test]
fn a_chosen_conjunction_is_what_the_runtime_reads() {
    let (plan, recs) = two_cause_records(300, 2);
    // Room for one predicate besides the unsafe one: only a conjunction sees the cause.
    let cfg = |partners: usize| SearchConfig {
        max_predicates: 2,
        conjunction_partners: partners,
        ..SearchConfig::default()
    };
    let (model, reports) = plan.build(&recs, AbstractionMode::Auto, &cfg(8)).unwrap();
    let (_, without) = plan.build(&recs, AbstractionMode::Auto, &cfg(0)).unwrap();
    let steps = &reports[0].selection.steps;
    let joined: Vec<&str> = steps
        .iter()
        .map(|s| s.predicate.as_str())
        .filter(|p| p.contains(" & "))
        .collect();
    assert!(!joined.is_empty(), "no conjunction chosen: {steps:?}");
    assert!(!without[0]
        .selection
        .steps
        .iter()
        .any(|s| s.predicate.contains(" & ")));
    let last = |s: &[crate::provenance::SelectionStep]| s.last().unwrap().score;
    assert!(
        last(steps) > last(&without[0].selection.steps) + 0.05,
        "{steps:?} vs {:?}",
        without[0].selection.steps
    );
    // Replay the same runs through the stored texts.
    let p = &model.properties()[0];
    let resolved = crate::ResolvedProperty {
        name: p.name().to_string(),
        law: p.law().to_string(),
        predicates: p.predicates().to_vec(),
        unsafe_bit: 0,
    };
    let mut config = plan.config.clone();
    config.smoothing = crate::av::SmoothingScope::Observed;
    let replay = Plan::new(laws(), vec![resolved], config).unwrap();
    let mut learner = replay.learner(laws::SignalContext::default()).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
    for _ in 0..300 {
        learner.observe_run(&run_two_causes(&mut rng)).unwrap();
    }
    assert_eq!(&learner.counts()[0], p.counts(), "{joined:?}");
    // And the file keeps it.
    assert_eq!(Model::from_bytes(&model.to_bytes()).unwrap(), model);
}

/// Where two causes each need two conditions at once — a violation follows `a ∧ b` or `c ∧ d`, four
/// independent traits of a run — two single predicates can only see one cause, half of each other's
/// corners wasted on safe runs; two conjunctions see both. With room for two predicates the search with
/// conjunctions finds `a & b` and `c & d` and warns of every violation at no false alarm, and scores
/// higher than without.
#[test]
fn conjunctions_of_two_candidates_see_two_causes() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let recs: Vec<RunRecord> = (0..240)
        .map(|_| {
            let traits: u64 = rng.random_range(0..16);
            let has = |i: u64| traits >> i & 1 == 1;
            let violated = (has(0) && has(1)) || (has(2) && has(3));
            let n = if violated { 51 } else { 60 };
            // The traits show from frame 10 on; a violation comes at frame 50.
            let bits = (0..n).map(|k| if k < 10 { 0 } else { traits }).collect();
            let t = (0..n).map(|k| f64::from(k) * 0.1).collect();
            RunRecord::from_bits(t, bits, violated.then_some(50))
        })
        .collect();
    let sources: Vec<data::Source> = (0..4).map(data::Source::Bit).collect();
    let data = PropertyData::new(&recs, 0, &sources);
    let cfg = |partners: usize| SearchConfig {
        max_predicates: 3,
        conjunction_partners: partners,
        ..SearchConfig::default()
    };
    let (steps, _, refined) = search::greedy_multi(&data, &recs, &cfg(4), &[], None);
    let (single_steps, _, _) = search::greedy_multi(&data, &recs, &cfg(0), &[], None);
    let mut pairs: Vec<(usize, usize)> = refined
        .iter()
        .filter_map(|r| match r.kind {
            search::RefinedKind::And {
                left,
                left_negated: false,
                negated: false,
            } => Some((left.min(r.of), left.max(r.of))),
            _ => None,
        })
        .collect();
    pairs.sort_unstable();
    assert_eq!(pairs, [(0, 1), (2, 3)], "{steps:?} {refined:?}");
    let last = |s: &[search::Step]| s.last().unwrap().score;
    // Every violation warned of 4 s ahead at no false alarm: ½ + ½ · min(4, 5) / 5 at every budget.
    assert!((last(&steps) - 0.9).abs() < 1e-9, "{steps:?}");
    assert!(
        last(&steps) > last(&single_steps) + 0.05,
        "{single_steps:?}"
    );
}

/// The pool candidates that vary on `data` (as `AutoPlan` grows forests over them) and their frame table
/// at a 3 s horizon (30 frames).
fn forest_table(pool: &Pool, data: &PropertyData) -> (Vec<usize>, forest::FrameTable) {
    let varying: Vec<usize> = (0..pool.len())
        .filter(|&c| !data.candidates[c].is_constant())
        .collect();
    let toggles: Vec<&data::Toggles> = varying.iter().map(|&c| &data.candidates[c]).collect();
    let table = forest::FrameTable::new(data, &toggles, 30);
    (varying, table)
}

/// A forest grown on the search's data is what the runtime reads: frame by frame, a session of the
/// model with it reports the mix of the same model's risk without it and the forest's value, the
/// forest's splits evaluated by the session as the recorder evaluated the candidates; and the model
/// file carries it.
#[test]
fn a_forest_is_what_the_runtime_reads() {
    runtime_reads_the_forest(false);
}

/// [`a_forest_is_what_the_runtime_reads`] for a boosted forest: its value `σ(base + Σ leaf)`, not a mean.
#[test]
fn a_boosted_forest_is_what_the_runtime_reads() {
    runtime_reads_the_forest(true);
}

fn runtime_reads_the_forest(boosted: bool) {
    let (plan, recs) = records(300, 5);
    let (model, _) = plan
        .build(&recs, AbstractionMode::Fixed, &SearchConfig::default())
        .unwrap();
    let (pool, sources, data) = pool_data(&plan, &recs);
    let (varying, table) = forest_table(&pool, &data);
    let all: Vec<usize> = (0..data.runs.len()).collect();
    let (mut trees, base) = if boosted {
        let b = forest::boost::grow_boosted(&table, &all, 5, 0);
        (b.trees, Some(b.base))
    } else {
        (forest::grow_forest(&table, &all, 3, 1.0, 0), None)
    };
    // And a tree that splits on every varying candidate in turn (more than a word of split bits, and
    // every kind of predicate the pool holds): candidate i's yes is a leaf, its no the next split.
    let n = varying.len() as u32;
    let mut caterpillar: Vec<crate::forest::Node> = (0..n)
        .flat_map(|i| {
            let split = crate::forest::Node::Split {
                predicate: i,
                yes: 2 * i + 1,
                no: 2 * i + 2,
            };
            [split, crate::forest::Node::Leaf(f64::from(i % 7) / 7.0)]
        })
        .collect();
    caterpillar.push(crate::forest::Node::Leaf(0.5));
    trees.push(crate::forest::Tree { nodes: caterpillar });
    let (texts, trees) = forest::renumbered(trees, |c| pool[varying[c]].0.text());
    // Where each split predicate is recorded.
    let used: Vec<usize> = texts
        .iter()
        .map(|t| pool.iter().position(|(c, _)| c.text() == *t).unwrap())
        .collect();
    assert!(used.len() >= 2, "{used:?}");
    let share = match base {
        Some(b) => crate::forest::ForestShare::try_new_boosted(0.5, 30, texts, trees, b),
        None => crate::forest::ForestShare::try_new(0.5, 30, texts, trees),
    }
    .unwrap();
    let with = Model::try_new(
        model.laws().to_vec(),
        vec![model.properties()[0]
            .clone()
            .with_forest(Some(share.clone()))],
    )
    .unwrap();
    // The file carries the forest; a file of the format before forests reads without one.
    let bytes = with.to_bytes();
    assert_eq!(Model::from_bytes(&bytes).unwrap(), with);
    assert!(Model::from_bytes(&bytes).unwrap().properties()[0]
        .forest()
        .is_some());
    // Each run's frames through both models, against the recorded candidate values.
    let with = std::sync::Arc::new(with);
    let without = std::sync::Arc::new(model);
    let cfg = crate::SessionConfig::default();
    let mut a = crate::Session::new(&with, &cfg).unwrap();
    let mut b = crate::Session::new(&without, &cfg).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let (mut recorder, mut n_frames, mut values) = (plan.recorder().unwrap(), 0, Vec::new());
    for _ in 0..30 {
        let frames = run(&mut rng);
        let rec = recorder.record(&frames);
        a.reset();
        b.reset();
        for (k, f) in frames.iter().enumerate() {
            let (x, y) = (&a.step(f).properties[0], &b.step(f).properties[0]);
            if y.absorbed {
                assert_eq!(x.risk_eventually, 1.0);
                continue;
            }
            let v = share.value(|i| rec.value(sources[used[i]], k));
            let want = 0.5 * y.risk_eventually + 0.5 * v;
            assert!((x.risk_eventually - want).abs() < 1e-12, "frame {k}");
            for (xw, yw) in x.risk_within.iter().zip(&y.risk_within) {
                assert!((xw - (0.5 * yw + 0.5 * v)).abs() < 1e-12, "frame {k}");
            }
            assert_eq!(x.risk_upper, y.risk_upper, "the PAC bound is the chains'");
            n_frames += 1;
            values.push(v);
        }
    }
    assert!(n_frames > 1000);
    values.sort_by(f64::total_cmp);
    assert!(
        values[0] < values[values.len() - 1],
        "the forest's value varies"
    );
}

/// The auto model carries a forest exactly when the fold score chose a weight above 0, with that
/// weight; `forest_trees: 0` grows none. With the unsafe predicate alone the chain gives every frame
/// one risk and cannot rank them, so the forest is chosen.
#[test]
fn the_auto_model_carries_the_forest_its_fold_score_chose() {
    let (plan, recs) = records(300, 6);
    let cfg = SearchConfig {
        max_predicates: 1,
        forest_trees: 4,
        ..SearchConfig::default()
    };
    let (model, reports) = plan.build(&recs, AbstractionMode::Auto, &cfg).unwrap();
    let p = &model.properties()[0];
    let (pool, _, data) = pool_data(&plan, &recs);
    let chosen_sources = sources_of(&pool, &p.predicates()[1..]);
    let chosen_data = PropertyData::new(&recs, 0, &chosen_sources);
    let chosen: Vec<&data::Toggles> = chosen_data.candidates.iter().collect();
    let (_, table) = forest_table(&pool, &data);
    let first = search::Scorer::new(&data, &recs, &cfg).fold_risks(&chosen);
    let (w, scores) = forest::choose_forest_weight(
        &data,
        &recs,
        &cfg,
        &forest::shared_chains(&first),
        &table,
        (forest::ForestKind::Bagged, 4),
        p.config().laplace.alpha,
    );
    assert!(w > 0.0, "{scores:?}");
    assert!(scores[0] < scores[1], "{scores:?}");
    assert_eq!(reports[0].forest.scores, scores, "the report carries them");
    let f = p.forest().unwrap();
    assert_eq!(f.weight(), w);
    assert_eq!(f.trees().len(), 4);
    assert_eq!(f.horizon_steps(), 30);
    let (none, none_reports) = plan
        .build(
            &recs,
            AbstractionMode::Auto,
            &SearchConfig {
                forest_trees: 0,
                ..cfg
            },
        )
        .unwrap();
    assert!(none.properties()[0].forest().is_none());
    assert!(none_reports[0].forest.scores.is_empty());
}

/// `ForestKind::Both` keeps both kinds at the weights the folds chose for each alone: its model's risk
/// is, frame by frame and in every measure, the mean of the risks of the bagged and the boosted models
/// learned with the same seed, stepped through the runtime; its report carries each kind's scores.
#[test]
fn a_forest_of_both_kinds_is_the_mean_of_the_two_models() {
    let (plan, recs) = records(300, 6);
    let cfg = |kind| SearchConfig {
        max_predicates: 1,
        forest_trees: 4,
        forest_kind: kind,
        ..SearchConfig::default()
    };
    let build = |kind| {
        plan.build(&recs, AbstractionMode::Auto, &cfg(kind))
            .unwrap()
    };
    let (bagged, bagged_reports) = build(forest::ForestKind::Bagged);
    let (boosted, boosted_reports) = build(forest::ForestKind::Boosted);
    let (both, both_reports) = build(forest::ForestKind::Both);
    assert_eq!(both_reports[0].forest.kind, forest::ForestKind::Both);
    assert_eq!(
        both_reports[0].forest.scores,
        bagged_reports[0].forest.scores
    );
    assert_eq!(
        both_reports[0].forest.boosted_scores,
        boosted_reports[0].forest.scores
    );
    let weight = |m: &Model| m.properties()[0].forest().map_or(0.0, |f| f.weight());
    let (wb, wg) = (weight(&bagged), weight(&boosted));
    assert!(wb > 0.0 && wg > 0.0, "both kinds mix in here: {wb} {wg}");
    let f = both.properties()[0].forest().unwrap();
    assert_eq!(f.weight(), (wb + wg) / 2.0);
    let part = f.bagged_part().unwrap();
    assert_eq!(part.trees, 4);
    assert!((part.share - wb / (wb + wg)).abs() < 1e-15);
    let models = [bagged, boosted, both].map(std::sync::Arc::new);
    let session_cfg = crate::SessionConfig::default();
    let mut sessions: Vec<crate::Session> = models
        .iter()
        .map(|m| crate::Session::new(m, &session_cfg).unwrap())
        .collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    let (mut n_frames, mut gaps) = (0, 0);
    for _ in 0..30 {
        let frames = run(&mut rng);
        for s in &mut sessions {
            s.reset();
        }
        for (k, frame) in frames.iter().enumerate() {
            let r: Vec<_> = sessions
                .iter_mut()
                .map(|s| s.step(frame).properties[0].clone())
                .collect();
            let mean = 0.5 * (r[0].risk_eventually + r[1].risk_eventually);
            assert!((r[2].risk_eventually - mean).abs() < 1e-12, "frame {k}");
            for ((a, b), c) in r[0]
                .risk_within
                .iter()
                .zip(&r[1].risk_within)
                .zip(&r[2].risk_within)
            {
                assert!((c - 0.5 * (a + b)).abs() < 1e-12, "frame {k}");
            }
            gaps += usize::from((r[0].risk_eventually - r[1].risk_eventually).abs() > 1e-6);
            n_frames += 1;
        }
    }
    assert!(
        n_frames > 1000 && gaps > 100,
        "{n_frames} frames, {gaps} where the kinds differ"
    );
}

/// With `forest_nested` the weight is chosen against the chains of searches run without each fold
/// ([`nested::fold_searches`]): the report carries their scores and the model their choice, and they
/// differ from the direct choice's, whose chain's predicates were chosen on every run.
#[test]
fn a_nested_forest_weight_is_scored_against_chains_searched_without_the_fold() {
    let (plan, recs) = two_cause_records(300, 6);
    // Room for one predicate: the cause is a conjunction, so the forest has something to add.
    let cfg = SearchConfig {
        max_predicates: 2,
        forest_trees: 4,
        forest_nested: true,
        ..SearchConfig::default()
    };
    let (model, reports) = plan.build(&recs, AbstractionMode::Auto, &cfg).unwrap();
    let p = &model.properties()[0];
    let (pool, _, data) = pool_data(&plan, &recs);
    let cuts = plan.cuts(&recs);
    let fine = |c: usize| cuts.fine_of(&pool, c);
    let fixed = declared_start(&plan.properties()[0], &pool);
    assert!(!fixed.is_empty(), "the declared start is searched from too");
    let start = main_start(&data, &recs, &cfg, &fixed, &fine);
    let searches = nested::fold_searches(&data, &recs, &cfg, (&fixed, start), &fine);
    let views = nested::views(&searches);
    let (_, table) = forest_table(&pool, &data);
    let alpha = p.config().laplace.alpha;
    let (w, scores) = forest::choose_forest_weight(
        &data,
        &recs,
        &cfg,
        &views,
        &table,
        (forest::ForestKind::Bagged, 4),
        alpha,
    );
    assert_eq!(reports[0].forest.scores, scores);
    assert_eq!(p.forest().map_or(0.0, |f| f.weight()), w);
    let direct = SearchConfig {
        forest_nested: false,
        ..cfg
    };
    let (_, direct_reports) = plan.build(&recs, AbstractionMode::Auto, &direct).unwrap();
    assert_eq!(direct_reports[0].forest.scores.len(), scores.len());
    assert_ne!(direct_reports[0].forest.scores, scores);
}

/// `build_observed` reports each property once, by index and name, after learning it (in any order),
/// and learns what `build` learns.
#[test]
fn a_build_reports_each_property_as_it_is_learned() {
    let (plan, recs) = records(80, 3);
    let cfg = SearchConfig {
        max_predicates: 3,
        ..SearchConfig::default()
    };
    let seen = std::sync::Mutex::new(Vec::new());
    let (model, _) = plan
        .build_observed(&recs, AbstractionMode::Auto, &cfg, &[], &|i, name| {
            seen.lock().unwrap().push((i, name.to_string()));
        })
        .unwrap();
    let names: Vec<(usize, String)> = plan
        .properties()
        .iter()
        .enumerate()
        .map(|(i, p)| (i, p.name.clone()))
        .collect();
    // Learned in parallel, they finish in any order.
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    assert_eq!(seen, names);
    let (built, _) = plan.build(&recs, AbstractionMode::Auto, &cfg).unwrap();
    assert_eq!(model.to_bytes(), built.to_bytes());
}

/// Where the forest's weight is chosen against searches run without each fold, those searches are the
/// ensemble's further chains: member k is fold k − 1's search (its trace, the runs it searched, its
/// declared predicates' score on them), learned on every run. Members beyond the folds are searched on
/// every run under their own seed, as without the nested choice.
#[test]
fn with_the_nested_choice_the_members_are_the_fold_searches() {
    let (plan, recs) = records(200, 5);
    let cfg = SearchConfig {
        max_predicates: 4,
        forest_trees: 4,
        forest_nested: true,
        chains: 3,
        ..SearchConfig::default()
    };
    let (model, _) = plan.build(&recs, AbstractionMode::Auto, &cfg).unwrap();
    let p = &model.properties()[0];
    let first = p.selection().unwrap();
    let (pool, _, data) = pool_data(&plan, &recs);
    let cuts = plan.cuts(&recs);
    let fine = |c: usize| cuts.fine_of(&pool, c);
    let fixed = declared_start(&plan.properties()[0], &pool);
    let start = main_start(&data, &recs, &cfg, &fixed, &fine);
    let searches = nested::fold_searches(&data, &recs, &cfg, (&fixed, start), &fine);
    assert_eq!(p.members().len(), 2);
    for (member, search) in p.members().iter().zip(&searches) {
        let sel = member.selection().unwrap();
        let scores: Vec<f64> = sel.steps.iter().map(|s| s.score).collect();
        let searched: Vec<f64> = search.found.steps.iter().map(|s| s.score).collect();
        assert_eq!(scores, searched);
        assert_eq!(sel.n_runs, search.runs.len());
        assert!(sel.n_runs < first.n_runs && sel.n_runs > first.n_runs / 2);
        let sub = data.subset(&search.runs);
        let violating = sub.runs.iter().filter(|r| r.violated).count();
        assert_eq!(sel.n_violating, violating);
        assert_eq!(
            sel.fixed_score,
            search::score_set(&sub, &recs, &cfg, &fixed).0
        );
        // Learned on every run: as many runs and transitions counted as the first chain's.
        assert_eq!(member.counts().n_runs(), p.counts().n_runs());
        assert_eq!(member.counts().n_transitions(), p.counts().n_transitions());
        assert!(member.reactive_rule().is_none() && member.forest().is_none());
    }
    // Two more members than folds: the last is searched on every run under its own seed.
    let (model, _) = plan
        .build(
            &recs,
            AbstractionMode::Auto,
            &SearchConfig { chains: 7, ..cfg },
        )
        .unwrap();
    let members = model.properties()[0].members();
    assert_eq!(members.len(), 6);
    for (k, member) in members.iter().enumerate() {
        let sel = member.selection().unwrap();
        if k < 5 {
            assert_eq!((sel.n_runs, sel.seed), (searches[k].runs.len(), cfg.seed));
        } else {
            assert_eq!(
                (sel.n_runs, sel.seed),
                (first.n_runs, member_seed(cfg.seed, 6))
            );
        }
    }
}
