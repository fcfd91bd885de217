use proptest::prelude::*;

use super::naive;
use super::*;
use crate::lang::lawset::{LawSet, LawSource};
use crate::signals::Signal;

const A: Signal = Signal::Horn;
const B: Signal = Signal::LowBeam;
const C: Signal = Signal::HighBeam;

fn set(text: &str) -> LawSet {
    LawSet::parse(&[LawSource {
        name: "test.law".into(),
        text: text.into(),
    }])
    .unwrap()
}

/// A trace of `n` frames where each listed signal is 1 on the listed frames.
fn trace(n: usize, on: &[(Signal, &[usize])]) -> Vec<Signals> {
    (0..n)
        .map(|k| {
            let mut s = Signals::default();
            for (sig, frames) in on {
                s.set(*sig, if frames.contains(&k) { 1.0 } else { 0.0 });
            }
            s
        })
        .collect()
}

// Operator and boundary cases are data: see `crate::fixtures` and `laws/tests/fixtures/op_*.trace`.

#[test]
fn bounds_must_be_whole_frames() {
    let err = Evaluator::new(
        &set("l = hornOn -> F[0,0.25] lowBeamOn;"),
        &EvalConfig::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("not a multiple"), "{err}");
    let cfg = EvalConfig {
        frame_period_s: 0.05,
        ..EvalConfig::default()
    };
    assert!(Evaluator::new(&set("l = hornOn -> F[0,0.25] lowBeamOn;"), &cfg).is_ok());
}

#[test]
fn window_memory_is_bounded_per_law_set() {
    // One-hour windows compile at 10 Hz; at 1 kHz five of them would need 288 MB of queues.
    let hour = "l0 = hornOn U[0,3600] lowBeamOn;";
    assert!(Evaluator::new(&set(hour), &EvalConfig::default()).is_ok());
    let text: String = (0..5)
        .map(|i| format!("l{i} = hornOn U[0,3600] lowBeamOn;\n"))
        .collect();
    let cfg = EvalConfig {
        frame_period_s: 0.001,
        ..EvalConfig::default()
    };
    let err = Evaluator::new(&set(&text), &cfg).unwrap_err();
    assert!(
        matches!(&err, EvalError::TooLarge { law, limit, .. } if law == "l4" && *limit == 256 << 20),
        "{err}"
    );
    assert!(err
        .to_string()
        .starts_with("law 'l4': the law set's window buffers would take"));
}

#[test]
fn relevance_skips_idle_laws_and_counts_it() {
    let law = "l = G(hornOn -> F[0,2] lowBeamOn);";
    let frames = trace(1000, &[(A, &[500])]);
    let mut ev = Evaluator::new(&set(law), &EvalConfig::default()).unwrap();
    assert!(ev.has_guard(0));
    let mut now = Vec::new();
    for (k, s) in frames.iter().enumerate() {
        if ev.step(s).violated_now(0) {
            now.push(k);
        }
    }
    assert_eq!(now, vec![520]);
    let st = ev.stats();
    assert_eq!(st.n_frames, 1000);
    assert_eq!(st.n_law_skips + st.n_law_steps, 1000);
    // Skipped whenever the horn was off for the last 21 frames: everything but 0..20 and 500..520.
    assert_eq!(st.n_law_skips, 1000 - 20 - 21);
}

/// A law of sub-laws of different horizons reports each sub-law's violation on the frame it becomes
/// certain, as the sub-law alone does — not the longest sub-law's horizon later, which a run that ends
/// sooner would never reach.
#[test]
fn a_conjunct_is_reported_when_it_is_decided_not_at_the_longest_horizon() {
    let laws = set("short = G(~highBeamOn);\n\
         long = G(hornOn -> F[0,3](lowBeamOn));\n\
         both = short & long;\n\
         nested = G(hornOn -> (F[0,3](lowBeamOn) & ~highBeamOn));");
    // 40 frames: the horn at 2 (never answered: certain at 32), the high beam at 5 and at 38.
    let signals = trace(40, &[(A, &[2]), (C, &[5, 38])]);
    let mut ev = Evaluator::new(&laws, &EvalConfig::default()).unwrap();
    let idx = |name: &str| laws.index_of(name).unwrap();
    let mut on = vec![Vec::new(); 4];
    for (k, s) in signals.iter().enumerate() {
        let v = ev.step(s);
        for (law, frames) in on.iter_mut().enumerate() {
            if v.violated_now(law) {
                frames.push(k);
            }
        }
    }
    assert_eq!(on[idx("short")], [5, 38]);
    assert_eq!(on[idx("long")], [32]);
    // The old reading put both at the horizon of 30 frames: 35 only, and 68 beyond the run's end.
    assert_eq!(on[idx("both")], [5, 32, 38]);
    // `hornOn -> (F[0,3] lowBeamOn & ~highBeamOn)`: the high beam is not on with the horn, so only the
    // unanswered horn, at its deadline.
    assert_eq!(on[idx("nested")], [32]);
    assert_eq!(ev.horizon(idx("both")), Some(30));
    let parts: Vec<i64> = ev.parts(idx("both")).unwrap().iter().map(|p| p.1).collect();
    assert_eq!(parts, [0, 30]);
    assert_eq!(ev.parts(idx("short")).unwrap().len(), 1);
}

/// Splitting copies an implication's antecedent once per conjunct of its consequent; a law whose copies
/// would pass the node limit is split at `&` only, and still evaluated.
#[test]
fn splitting_a_law_is_bounded() {
    // Groups of ten in parentheses keep the text within the parser's nesting limit.
    let grouped = |items: Vec<String>, op: &str| {
        items
            .chunks(10)
            .map(|c| format!("({})", c.join(op)))
            .collect::<Vec<_>>()
            .join(op)
    };
    let antecedent = grouped((0..400).map(|i| format!("speed > {i}")).collect(), " | ");
    let consequent = grouped(
        (0..60).map(|i| format!("F[0,{}](hornOn)", i % 5)).collect(),
        " & ",
    );
    let body: Formula = set(&format!("l = ({antecedent}) -> ({consequent});")).laws()[0]
        .body()
        .clone();
    assert_eq!(conjuncts(&body).len(), 1, "kept whole");
    let laws = set(&format!("l = ({antecedent}) -> ({consequent});"));
    assert_eq!(
        Evaluator::new(&laws, &EvalConfig::default())
            .unwrap()
            .parts(0)
            .unwrap()
            .len(),
        1
    );
    let small: Formula = set("l = hornOn -> (lowBeamOn & F[0,1](highBeamOn) & ~speed > 3);").laws()
        [0]
    .body()
    .clone();
    assert_eq!(conjuncts(&small).len(), 3);
}

#[test]
fn reset_forgets_the_run() {
    let law = "l = G(hornOn -> F[0,2] lowBeamOn);";
    let mut ev = Evaluator::new(&set(law), &EvalConfig::default()).unwrap();
    for s in &trace(25, &[(A, &[0])]) {
        ev.step(s);
    }
    ev.reset();
    let quiet = trace(50, &[]);
    assert!(quiet.iter().all(|s| !ev.step(s).in_window(0)));
}

// ---- proptest against the naive implementation ----

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("hornOn".to_string()),
        Just("lowBeamOn".to_string()),
        Just("highBeamOn".to_string()),
        Just("~hornOn".to_string()),
        Just("true".to_string()),
    ]
}

/// Interval bounds in frames: non-negative and in order, as the parser requires.
fn bounds() -> impl Strategy<Value = (i64, i64)> {
    (0..=4i64, 0..=5i64).prop_map(|(lo, len)| (lo, lo + len))
}

fn formula() -> impl Strategy<Value = String> {
    leaf().prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|p| format!("~({p})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} & {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} | {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} -> {b})")),
            (bounds(), inner.clone()).prop_map(|((lo, hi), p)| format!(
                "F[{},{}]({p})",
                lo as f64 / 10.0,
                hi as f64 / 10.0
            )),
            (bounds(), inner.clone()).prop_map(|((lo, hi), p)| format!(
                "G[{},{}]({p})",
                lo as f64 / 10.0,
                hi as f64 / 10.0
            )),
            (bounds(), inner.clone(), inner.clone()).prop_map(|((lo, hi), a, b)| format!(
                "(({a}) U[{},{}] ({b}))",
                lo as f64 / 10.0,
                hi as f64 / 10.0
            )),
            inner.prop_map(|p| format!("X({p})")),
        ]
    })
}

/// Bodies shaped like laws (guarded implications, conjunctions of them) as well as arbitrary formulas.
fn body() -> impl Strategy<Value = String> {
    let state = "(hornOn | (lowBeamOn & ~highBeamOn))";
    prop_oneof![
        formula(),
        formula().prop_map(move |c| format!("({state} -> {c})")),
        (formula(), formula())
            .prop_map(|(c, d)| format!("(hornOn -> {c}) & ((lowBeamOn & {d}) -> {c})")),
        // The fused `A -> F[lo,hi] B` shape (state A and B), alone and as conjunctions of different horizons.
        (bounds(), leaf(), leaf()).prop_map(move |((lo, hi), a, b)| format!(
            "(({a} | {state}) -> F[{},{}]({b} & ~lowBeamOn))",
            lo as f64 / 10.0,
            hi as f64 / 10.0
        )),
        (bounds(), bounds(), leaf(), leaf()).prop_map(|((l1, h1), (l2, h2), a, b)| format!(
            "(hornOn -> F[{},{}]({a})) & (({b} & lowBeamOn) -> F[{},{}](highBeamOn))",
            l1 as f64 / 10.0,
            h1 as f64 / 10.0,
            l2 as f64 / 10.0,
            h2 as f64 / 10.0
        )),
        // Consequents that are conjunctions (split into one implication each), and laws of sub-laws.
        (formula(), formula(), formula())
            .prop_map(move |(a, c, d)| format!("({a} -> ({c} & ({state} | {d})))")),
        (formula(), formula())
            .prop_map(|(c, d)| format!("G(~hornOn) & G({c}) & G(lowBeamOn -> {d})")),
    ]
}

/// The signals of a bit trace: horn, low beam and high beam on or off per frame.
fn bits_signals(tr: &[[bool; 3]]) -> Vec<Signals> {
    tr.iter()
        .map(|b| {
            let mut s = Signals::default();
            s.set(A, f64::from(u8::from(b[0])));
            s.set(B, f64::from(u8::from(b[1])));
            s.set(C, f64::from(u8::from(b[2])));
            s
        })
        .collect()
}

fn bits_trace() -> impl Strategy<Value = Vec<[bool; 3]>> {
    // Runs of constant values make long idle stretches (relevance) as well as fast toggling.
    prop::collection::vec((any::<[bool; 3]>(), 1..30usize), 0..20).prop_map(|runs| {
        runs.into_iter()
            .flat_map(|(bits, len)| std::iter::repeat_n(bits, len))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn incremental_matches_naive(bodies in prop::collection::vec(body(), 1..4), tr in bits_trace(), window in 1..40usize) {
        let text: String = bodies.iter().enumerate().map(|(i, b)| format!("l{i} = {b};\n")).collect();
        let laws = set(&text);
        let signals = bits_signals(&tr);
        let mut results = Vec::new();
        for relevance in [true, false] {
            let cfg = EvalConfig { window_frames: window, relevance, ..EvalConfig::default() };
            let mut ev = Evaluator::new(&laws, &cfg).unwrap();
            let mut got = vec![Vec::new(); laws.laws().len()];
            for s in &signals {
                let v = ev.step(s);
                for (i, g) in got.iter_mut().enumerate() {
                    g.push((v.violated_now(i), v.in_window(i)));
                }
            }
            results.push(got);
        }
        prop_assert_eq!(&results[0], &results[1], "relevance changed a verdict");
        for (i, law) in laws.laws().iter().enumerate() {
            let atom = |a: &crate::lang::atom::Atom, k: i64| a.eval(&signals[k as usize]);
            let want = naive::verdicts(law.body(), signals.len(), 0.1, window, &atom);
            prop_assert_eq!(&results[0][i], &want, "law {}: {}", i, law.body());
        }
    }
}

/// Bodies with and without top-level `A -> F[a,b] B` obligations (a ≥ 0), mixed with other conjuncts.
fn obligation_body() -> impl Strategy<Value = String> {
    let state = "(hornOn | (lowBeamOn & ~highBeamOn))";
    let s = |b: i64| b as f64 / 10.0;
    prop_oneof![
        (bounds(), leaf(), leaf()).prop_map(move |((lo, hi), a, b)| format!(
            "(({a} | {state}) -> F[{},{}]({b} & ~lowBeamOn))",
            s(lo),
            s(hi)
        )),
        (bounds(), bounds(), leaf()).prop_map(move |((l1, h1), (l2, h2), a)| format!(
            "(hornOn -> F[{},{}]({a})) & ((lowBeamOn & ~hornOn) -> F[{},{}](highBeamOn))",
            s(l1),
            s(h1),
            s(l2),
            s(h2)
        )),
        (bounds(), formula()).prop_map(move |((lo, hi), c)| format!(
            "(lowBeamOn -> F[{},{}](hornOn)) & {c}",
            s(lo),
            s(hi)
        )),
        formula(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Obligation memory equals its definition, re-evaluated from scratch at every frame.
    #[test]
    fn pending_obligations_match_naive(body in obligation_body(), tr in bits_trace()) {
        let laws = set(&format!("l = {body};"));
        let law = &laws.laws()[0];
        let signals = bits_signals(&tr);
        let atom = |a: &crate::lang::atom::Atom, k: i64| a.eval(&signals[k as usize]);
        let want = naive::pending_ages(law.body(), signals.len(), 0.1, &atom);
        for relevance in [true, false] {
            let cfg = EvalConfig { relevance, ..EvalConfig::default() };
            let mut ev = Evaluator::new(&laws, &cfg).unwrap();
            match (ev.add_obligation(law), &want) {
                (Err(EvalError::NoObligation(_)), None) => {}
                (Ok(h), Some(want)) => {
                    let got: Vec<Option<u64>> =
                        signals.iter().map(|s| ev.step(s).pending_frames(h)).collect();
                    prop_assert_eq!(&got, want, "{}", law.body());
                    // A reset run starts with nothing pending and repeats itself.
                    ev.reset();
                    let again: Vec<Option<u64>> =
                        signals.iter().map(|s| ev.step(s).pending_frames(h)).collect();
                    prop_assert_eq!(&again, want);
                }
                (got, want) => prop_assert!(false, "{:?} vs {:?} for {}", got, want.is_some(), law.body()),
            }
        }
    }
}

#[test]
fn pending_obligation_of_a_yellow_light_law_by_hand() {
    // A at frames 2..=4, deadline 3 frames (F[0,0.3]); B at frame 6 meets the obligations of 3 and 4, that
    // of 2 expires at frame 5 (a violation).
    let laws = set("l = hornOn -> F[0,0.3] lowBeamOn;");
    let mut ev = Evaluator::new(&laws, &EvalConfig::default()).unwrap();
    let h = ev.add_obligation(&laws.laws()[0]).unwrap();
    let tr = trace(9, &[(A, &[2, 3, 4]), (B, &[6])]);
    let got: Vec<Option<u64>> = tr.iter().map(|s| ev.step(s).pending_frames(h)).collect();
    // Frame 2: 2 pending (age 0); 3: age 1; 4: age 2; 5: 2's deadline has come, 3 is the oldest (age 2);
    // 6: B meets 3 and 4: none; then nothing.
    assert_eq!(
        got,
        vec![
            None,
            None,
            Some(0),
            Some(1),
            Some(2),
            Some(2),
            None,
            None,
            None
        ]
    );
    // A law without an obligation has no obligation memory.
    let plain = set("g = hornOn -> lowBeamOn;");
    let mut ev = Evaluator::new(&plain, &EvalConfig::default()).unwrap();
    assert!(matches!(
        ev.add_obligation(&plain.laws()[0]),
        Err(EvalError::NoObligation(_))
    ));
}

/// A state formula of one atom or its negation is named by `state_atom`, and `Verdicts::atom` reads the same bit `Verdicts::state` does on every frame; a compound formula is
/// not named.
#[test]
fn single_atom_states_are_read_straight_from_the_atom_bits() {
    use crate::lang::atom::{Atom, Cmp, Term};
    let laws = set("l = hornOn -> F[0,0.3] lowBeamOn;");
    let mut ev = Evaluator::new(&laws, &EvalConfig::default()).unwrap();
    let atom =
        |s: Signal, cmp: Cmp| Formula::Atom(Atom::new(Term::Signal(s), cmp, Term::Const(0.5)));
    let plain = ev.add_state(&atom(A, Cmp::Le)).unwrap();
    let negated = ev
        .add_state(&Formula::Not(Box::new(atom(B, Cmp::Le))))
        .unwrap();
    let both = ev
        .add_state(&Formula::And(
            Box::new(atom(A, Cmp::Le)),
            Box::new(atom(C, Cmp::Le)),
        ))
        .unwrap();
    let (a, a_negated) = ev.state_atom(plain).expect("one atom");
    let (b, b_negated) = ev.state_atom(negated).expect("one atom, negated");
    assert!(!a_negated && b_negated);
    assert_ne!(a, b);
    assert_eq!(ev.state_atom(both), None);
    let tr = trace(6, &[(A, &[1, 2]), (B, &[2, 3, 4])]);
    let mut seen = Vec::new();
    for s in &tr {
        let v = ev.step(s);
        assert_eq!(v.atom(a) != a_negated, v.state(plain));
        assert_eq!(v.atom(b) != b_negated, v.state(negated));
        seen.push((v.state(plain), v.state(negated)));
    }
    // hornOn <= 0.5 holds where the horn is off; not lowBeamOn <= 0.5 where the low beam is on.
    let want: Vec<(bool, bool)> = (0..6)
        .map(|k| (![1, 2].contains(&k), [2, 3, 4].contains(&k)))
        .collect();
    assert_eq!(seen, want);
}
