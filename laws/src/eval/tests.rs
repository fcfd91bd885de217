use proptest::prelude::*;

use super::naive;
use super::*;
use crate::lang::lawset::{LawSet, LawSource};
use crate::signals::Signal;

const A: Signal = Signal::Horn;
const B: Signal = Signal::LowBeam;
const C: Signal = Signal::HighBeam;

fn set(text: &str) -> LawSet {
    LawSet::parse(&[LawSource { name: "test.law".into(), text: text.into() }]).unwrap()
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

/// Runs law 0 of `text` over the trace: (frames where a violation became certain, frames in window).
fn check(text: &str, cfg: &EvalConfig, frames: &[Signals]) -> (Vec<usize>, Vec<usize>) {
    let mut ev = Evaluator::new(&set(text), cfg).unwrap();
    let (mut now, mut win) = (Vec::new(), Vec::new());
    for (k, s) in frames.iter().enumerate() {
        let v = ev.step(s);
        if v.violated_now(0) {
            now.push(k);
        }
        if v.in_window(0) {
            win.push(k);
        }
    }
    (now, win)
}

fn viol(text: &str, n: usize, on: &[(Signal, &[usize])]) -> Vec<usize> {
    check(text, &EvalConfig::default(), &trace(n, on)).0
}

#[test]
fn eventually_violation_is_certain_at_the_deadline() {
    // INTERFACES §4: G(A -> F[0,2] B) at 10 Hz; A at frame 5, B never: certain at 5 + 20.
    let law = "l = G(hornOn -> F[0,2] lowBeamOn);";
    assert_eq!(viol(law, 200, &[(A, &[5])]), vec![25]);
    // B exactly at the upper end of the interval (frame 25) satisfies it; one frame late does not.
    assert_eq!(viol(law, 200, &[(A, &[5]), (B, &[25])]), Vec::<usize>::new());
    assert_eq!(viol(law, 200, &[(A, &[5]), (B, &[26])]), vec![25]);
    // B at the lower end (the same frame as A) satisfies it.
    assert_eq!(viol(law, 200, &[(A, &[5]), (B, &[5])]), Vec::<usize>::new());
    // B before A does not count.
    assert_eq!(viol(law, 200, &[(A, &[5]), (B, &[4])]), vec![25]);
}

#[test]
fn pending_obligations_at_the_end_are_never_reported() {
    let law = "l = G(hornOn -> F[0,2] lowBeamOn);";
    // A at frame 80 of 100: the deadline (frame 100) is past the end.
    assert_eq!(viol(law, 100, &[(A, &[80])]), Vec::<usize>::new());
    // A at frame 79: the deadline is frame 99, the last frame.
    assert_eq!(viol(law, 100, &[(A, &[79])]), vec![99]);
}

#[test]
fn window_column_covers_exactly_the_last_w_frames() {
    let law = "l = G(hornOn -> F[0,2] lowBeamOn);";
    let (now, win) = check(law, &EvalConfig::default(), &trace(300, &[(A, &[5])]));
    assert_eq!(now, vec![25]);
    assert_eq!(win.first(), Some(&25));
    assert_eq!(win.last(), Some(&124));
    assert_eq!(win.len(), 100);
    let cfg = EvalConfig { window_frames: 3, ..EvalConfig::default() };
    assert_eq!(check(law, &cfg, &trace(300, &[(A, &[5])])).1, vec![25, 26, 27]);
}

#[test]
fn always_interval_reports_at_its_deadline_not_earlier() {
    let law = "l = hornOn -> G[0,1] lowBeamOn;";
    let beam: Vec<usize> = (0..10).collect();
    // Low beam on 0..9, off at 10: the position-0 obligation covers 0..10, decided at frame 10.
    assert_eq!(viol(law, 50, &[(A, &[0]), (B, &beam)]), vec![10]);
    // Off at frame 3: still reported at frame 10, the deadline.
    assert_eq!(viol(law, 50, &[(A, &[0]), (B, &[0, 1, 2])]), vec![10]);
    let beam: Vec<usize> = (0..11).collect();
    assert_eq!(viol(law, 50, &[(A, &[0]), (B, &beam)]), Vec::<usize>::new());
}

#[test]
fn negative_bounds_look_into_the_past_and_the_first_frames_have_no_past() {
    // law47's shape: F[-1,0] looks back one second.
    let law = "l = lowBeamOn -> F[-1,0] hornOn;";
    assert_eq!(viol(law, 50, &[(A, &[0]), (B, &[10])]), Vec::<usize>::new());
    assert_eq!(viol(law, 50, &[(A, &[0]), (B, &[11])]), vec![11]);
    // No horn before frame 0 exists.
    assert_eq!(viol(law, 50, &[(B, &[3])]), vec![3]);
    // Purely past window F[-1,-0.5]: horn at 0 covers low beam at 5..10.
    let law = "l = lowBeamOn -> F[-1,-0.5] hornOn;";
    assert_eq!(viol(law, 50, &[(A, &[0]), (B, &[4, 5, 10, 11])]), vec![4, 11]);
}

#[test]
fn until_and_next() {
    let law = "l = hornOn -> (lowBeamOn U[0,0.3] highBeamOn);";
    // Low beam holds 0..2, high beam at 3: satisfied (p on [i, j) = 0..2).
    assert_eq!(viol(law, 20, &[(A, &[0]), (B, &[0, 1, 2]), (C, &[3])]), Vec::<usize>::new());
    // Gap in low beam at 2: violated, known at the deadline 0 + 3.
    assert_eq!(viol(law, 20, &[(A, &[0]), (B, &[0, 1]), (C, &[3])]), vec![3]);
    // High beam at the position itself needs no low beam.
    assert_eq!(viol(law, 20, &[(A, &[0]), (C, &[0])]), Vec::<usize>::new());
    // Next: horn at 4 requires low beam at 5, known at frame 5.
    let law = "l = hornOn -> X lowBeamOn;";
    assert_eq!(viol(law, 20, &[(A, &[4]), (B, &[5])]), Vec::<usize>::new());
    assert_eq!(viol(law, 20, &[(A, &[4]), (B, &[4])]), vec![5]);
}

#[test]
fn state_law_and_conjunction_of_top_level_always() {
    let law = "l = G(~(gear == 2)) & G(collision == 0);";
    let mut frames = trace(10, &[(Signal::Collision, &[7])]);
    frames[3].set(Signal::Gear, 2.0);
    assert_eq!(check(law, &EvalConfig::default(), &frames).0, vec![3, 7]);
}

#[test]
fn bounds_must_be_whole_frames() {
    let err = Evaluator::new(&set("l = hornOn -> F[0,0.25] lowBeamOn;"), &EvalConfig::default()).unwrap_err();
    assert!(err.to_string().contains("not a multiple"), "{err}");
    let cfg = EvalConfig { frame_period_s: 0.05, ..EvalConfig::default() };
    assert!(Evaluator::new(&set("l = hornOn -> F[0,0.25] lowBeamOn;"), &cfg).is_ok());
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

fn bounds(past: bool) -> impl Strategy<Value = (i64, i64)> {
    let lo_min = if past { -4 } else { 0 };
    (lo_min..=4i64, 0..=5i64).prop_map(|(lo, len)| (lo, lo + len))
}

fn formula() -> impl Strategy<Value = String> {
    leaf().prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|p| format!("~({p})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} & {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} | {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} -> {b})")),
            (bounds(true), inner.clone()).prop_map(|((lo, hi), p)| format!("F[{},{}]({p})", lo as f64 / 10.0, hi as f64 / 10.0)),
            (bounds(true), inner.clone()).prop_map(|((lo, hi), p)| format!("G[{},{}]({p})", lo as f64 / 10.0, hi as f64 / 10.0)),
            (bounds(false), inner.clone(), inner.clone())
                .prop_map(|((lo, hi), a, b)| format!("(({a}) U[{},{}] ({b}))", lo as f64 / 10.0, hi as f64 / 10.0)),
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
        (formula(), formula()).prop_map(|(c, d)| format!("(hornOn -> {c}) & ((lowBeamOn & {d}) -> {c})")),
    ]
}

fn bits_trace() -> impl Strategy<Value = Vec<[bool; 3]>> {
    // Runs of constant values make long idle stretches (relevance) as well as fast toggling.
    prop::collection::vec((any::<[bool; 3]>(), 1..30usize), 0..20).prop_map(|runs| {
        runs.into_iter().flat_map(|(bits, len)| std::iter::repeat_n(bits, len)).collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn incremental_matches_naive(bodies in prop::collection::vec(body(), 1..4), tr in bits_trace(), window in 1..40usize) {
        let text: String = bodies.iter().enumerate().map(|(i, b)| format!("l{i} = {b};\n")).collect();
        let laws = set(&text);
        let signals: Vec<Signals> = tr.iter().map(|b| {
            let mut s = Signals::default();
            s.set(A, f64::from(u8::from(b[0])));
            s.set(B, f64::from(u8::from(b[1])));
            s.set(C, f64::from(u8::from(b[2])));
            s
        }).collect();
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
