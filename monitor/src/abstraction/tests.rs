use super::read::antecedents;
use super::*;
use laws::{Frame, SignalContext, Signals, Verdicts};

#[test]
fn every_shipped_law_survives_the_reduced_re_parse_unchanged() {
    let laws = laws::shipped::sources();
    let full = parse_laws(&laws).unwrap();
    let preds: Vec<Vec<String>> = full
        .laws()
        .iter()
        .map(|l| vec![format!("{}.w", l.name())])
        .collect();
    let defs: Vec<PropertyDef<'_>> = full
        .laws()
        .iter()
        .zip(&preds)
        .map(|(l, p)| PropertyDef {
            name: l.name(),
            law: l.name(),
            predicates: p,
            unsafe_bit: 0,
            reactive_rule: &[],
            forest: None,
        })
        .collect();
    let c = Compiled::new(&laws, &defs, 0.1, 100).unwrap();
    assert_eq!(c.laws().laws().len(), full.laws().len());
    for law in full.laws() {
        let i = c.laws().index_of(law.name()).unwrap();
        // Equal texts: equal trees up to source positions (Display prints every node).
        let r = &c.laws().laws()[i];
        assert_eq!(r.formula().to_string(), law.formula().to_string());
        assert_eq!(r.body().to_string(), law.body().to_string());
        assert_eq!(r.atoms(), law.atoms(), "{}", law.name());
    }
}

#[test]
fn only_the_needed_laws_are_evaluated() {
    let laws = laws::shipped::sources();
    let preds = vec![
        "no_collision.w".to_string(),
        "law52.w".to_string(),
        "speed<0.5".into(),
    ];
    let defs = [PropertyDef {
        name: "p",
        law: "no_collision",
        predicates: &preds,
        unsafe_bit: 0,
        reactive_rule: &[],
        forest: None,
    }];
    let c = Compiled::new(&laws, &defs, 0.1, 100).unwrap();
    let names: Vec<&str> = c.laws().laws().iter().map(|l| l.name()).collect();
    assert_eq!(names, ["no_collision", "law52"]);
}

#[test]
fn unknown_laws_and_bad_predicates_are_named() {
    let laws = laws::shipped::sources();
    let preds = vec!["nope.w".to_string()];
    let bad_law = [PropertyDef {
        name: "p",
        law: "law99",
        predicates: &preds,
        unsafe_bit: 0,
        reactive_rule: &[],
        forest: None,
    }];
    let e = Compiled::new(&laws, &bad_law, 0.1, 100)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown law 'law99'"), "{e}");
    let bad_pred = [PropertyDef {
        law: "law52",
        ..bad_law[0]
    }];
    let e = Compiled::new(&laws, &bad_pred, 0.1, 100)
        .unwrap_err()
        .to_string();
    assert!(e.contains("predicate 'nope.w'"), "{e}");
}

#[test]
fn antecedents_of_implications_and_conjunctions() {
    let laws = [LawSource {
        name: "t".into(),
        text: "a = G((speed > 5 -> F[0,1](speed < 1)) & (NPCAhead(3) -> speed < 2));\n\
               b = G(collision == 0);\n\
               c = G(F[0,1](speed > 5) -> speed < 2);"
            .into(),
    }];
    let set = parse_laws(&laws).unwrap();
    let count = |name: &str| {
        let mut out = Vec::new();
        antecedents(set.laws()[set.index_of(name).unwrap()].body(), &mut out);
        out.len()
    };
    assert_eq!((count("a"), count("b"), count("c")), (2, 0, 0));
}

/// A pseudo-random drive touching every signal group: lights, distances, speeds, obstacles of every kind.
fn random_frames(n: usize, seed: u64) -> Vec<Frame> {
    use laws::frame::obstacle_type;
    use laws::Obstacle;
    let mut x = seed | 1;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|k| {
            let heading = (rnd() - 0.5) * 0.4;
            let obstacles = (0..(rnd() * 5.0) as usize)
                .map(|i| Obstacle {
                    id: i as i32,
                    kind: [
                        obstacle_type::VEHICLE,
                        obstacle_type::BICYCLE,
                        obstacle_type::PEDESTRIAN,
                    ][(rnd() * 3.0) as usize % 3],
                    x: (rnd() - 0.2) * 50.0,
                    y: (rnd() - 0.5) * 12.0,
                    heading: (rnd() - 0.5) * 7.0,
                    speed_mps: rnd() * 12.0,
                    length: 0.5 + rnd() * 4.5,
                    width: 0.5 + rnd() * 1.8,
                    priority: rnd() < 0.4,
                })
                .collect();
            Frame {
                t: k as f64 * 0.1,
                heading,
                speed_mps: rnd() * 16.0,
                accel_mps2: (rnd() - 0.5) * 6.0,
                speed_limit_mps: 11.0 + rnd() * 3.0,
                light_color: (rnd() * 5.0) as i32 % 5,
                signal_ahead: rnd() < 0.7,
                stopline_dist_m: rnd() * 40.0,
                junction_dist_m: rnd() * 40.0,
                crosswalk_dist_m: rnd() * 60.0,
                traffic_jam: rnd() < 0.2,
                collision: rnd() < 0.02,
                turn_signal: (rnd() * 3.0) as i32 % 3,
                planned_turn: (rnd() * 3.0) as i32 % 3,
                obstacles,
                ..Frame::default()
            }
        })
        .collect()
}

/// A predicate's value evaluated on its own: an atom on the frame's signals `s`, a window or an
/// obligation from a separate evaluator's verdicts `v`, where `obligation` is the law index and handle
/// of the one obligation registered with it (none: no predicate may read one).
fn direct_holds(
    pred: &Pred,
    s: &Signals,
    v: &Verdicts<'_>,
    obligation: Option<(usize, laws::ObligationHandle)>,
) -> bool {
    match pred {
        Pred::Atom(a) => a.eval(s),
        Pred::Window(i) => v.in_window(*i),
        Pred::Pending {
            law,
            more_than_frames,
        } => {
            let (registered, handle) = obligation.expect("no obligation registered");
            assert_eq!(*law, registered);
            let min_age = more_than_frames.map_or(0, |m| m + 1);
            v.pending_frames(handle).is_some_and(|age| age >= min_age)
        }
        Pred::And(literals) => literals
            .iter()
            .all(|(p, negated)| direct_holds(p, s, v, obligation) != *negated),
    }
}

/// The tracker (shared atom bits, needed-signals mask, antecedents as one table) against a direct
/// computation: every signal, every atom and antecedent evaluated on its own, a separate evaluator.
#[test]
fn tracker_equals_direct_evaluation_on_random_drives() {
    let laws = laws::shipped::sources();
    let full = parse_laws(&laws).unwrap();
    let names = [
        "law38_sub2_2",
        "p2g_law38_sub2",
        "law51_sub5",
        "law53",
        "law52",
        "law45",
        "no_collision",
        "law57",
    ];
    let preds: Vec<Vec<String>> = names
        .iter()
        .map(|n| {
            let law = &full.laws()[full.index_of(n).unwrap()];
            let mut p = vec![format!("{n}.w")];
            p.extend(law.atoms().iter().map(|a| a.to_string()));
            p.extend(
                [
                    "NPCAhead(10)",
                    "NPCAhead.ttc < 2",
                    "PriorityPedsAhead",
                    "NearestNPC(2)",
                ]
                .map(String::from),
            );
            // Conjunctions: of atoms (one negated by its comparison), and with a negated window.
            p.push("NPCAhead.ttc < 2 & speed > 5".into());
            p.push(format!("not {n}.w & NPCAhead(10) & speed <= 8"));
            p
        })
        .collect();
    let mut defs: Vec<PropertyDef<'_>> = names
        .iter()
        .zip(&preds)
        .map(|(n, p)| PropertyDef {
            name: n,
            law: n,
            predicates: p,
            unsafe_bit: 0,
            reactive_rule: &[],
            forest: None,
        })
        .collect();
    // An atom as the unsafe predicate (no_collision's shape).
    let collision_preds = vec!["collision".to_string(), "speed < 0.5".to_string()];
    defs.push(PropertyDef {
        name: "atom_unsafe",
        law: "no_collision",
        predicates: &collision_preds,
        unsafe_bit: 0,
        reactive_rule: &[],
        forest: None,
    });
    let c = Compiled::new(&laws, &defs, 0.1, 100).unwrap();
    let ctx = SignalContext::default();
    let mut tracker = c.tracker(ctx).unwrap();
    let mut reference = Evaluator::new(c.laws(), &c.eval).unwrap();
    let (mut n_bits_set, mut n_baseline, mut n_conjunctions_set) = (0u64, 0u64, 0u64);
    for f in random_frames(3000, 0x5eed_1234) {
        let got = tracker.step(&f).to_vec();
        let s = Signals::from_frame(&f, &ctx);
        let v = reference.step(&s);
        for (enc, g) in c.encoders.iter().zip(&got) {
            // The shipped properties read no obligation.
            let holds = |pred: &Pred, s: &Signals, v: &Verdicts<'_>| direct_holds(pred, s, v, None);
            let mut state: StateId = 0;
            for (bit, pred) in enc.preds.iter().enumerate() {
                state |= StateId::from(holds(pred, &s, &v)) << bit;
                n_conjunctions_set +=
                    u64::from(matches!(pred, Pred::And(_)) && holds(pred, &s, &v));
            }
            let unsafe_now = match &enc.unsafe_now {
                UnsafeNow::Violated(i) => v.violated_now(*i),
                UnsafeNow::Atom(a) => a.eval(&s),
            };
            let baseline = enc
                .antecedents
                .iter()
                .any(|f| f.eval_state(&mut |a| a.eval(&s)) == Some(true));
            let want = Encoded {
                state,
                unsafe_state: state >> enc.unsafe_bit & 1 == 1,
                unsafe_now,
                baseline,
                rule: false,
                forest: None,
            };
            assert_eq!(*g, want, "frame {f:?}");
            n_bits_set += u64::from(state.count_ones());
            n_baseline += u64::from(baseline);
        }
    }
    // The drive exercises the predicates and the baseline (the comparison is not vacuous).
    assert!(
        n_bits_set > 10_000 && n_baseline > 100 && n_conjunctions_set > 100,
        "{n_bits_set} {n_baseline} {n_conjunctions_set}"
    );
}

/// Conjunction predicates are read literal by literal; malformed ones are refused with the reason.
#[test]
fn conjunction_predicates_are_read_and_malformed_ones_refused() {
    let laws = laws::shipped::sources();
    let compile = |preds: &[&str]| {
        let preds: Vec<String> = preds.iter().map(|p| p.to_string()).collect();
        let defs = [PropertyDef {
            name: "p",
            law: "law52",
            predicates: &preds,
            unsafe_bit: 0,
            reactive_rule: &[],
            forest: None,
        }];
        Compiled::new(&laws, &defs, 0.1, 100).map(|c| c.encoders[0].preds.clone())
    };
    let preds = compile(&["law52.w", "law52.pending>1.3 & acc>-1.9"]).unwrap();
    match &preds[1] {
        Pred::And(l) => {
            assert_eq!(l.len(), 2);
            assert!(matches!(l[0], (Pred::Pending { .. }, false)));
            // `acc>-1.9` is kept as written; the evaluator reads its comparison.
            assert!(matches!(&l[1], (Pred::Atom(a), false) if a.to_string() == "acc>-1.9"));
        }
        other => panic!("{other:?}"),
    }
    for (bad, says) in [
        (
            "speed<1 & speed<2 & speed<3 & speed<4 & speed<5",
            "at most 4",
        ),
        ("speed<1 & ", "empty predicate"),
        ("speed<1 & nosuchsignal>2", "nosuchsignal"),
        ("speed<1 & nolaw.pending", "nolaw"),
    ] {
        let err = compile(&["law52.w", bad]).unwrap_err().to_string();
        assert!(
            err.contains(says) && err.contains("conjunction"),
            "{bad}: {err}"
        );
    }
    let err = compile(&["collision & speed<1"]).unwrap_err().to_string();
    assert!(err.contains("unsafe predicate"), "{err}");
}

/// Two laws: `slow`, stop within 1 s of coming within 10 m of a stop line (an obligation), and `fast`,
/// never above `limit_kmh`.
fn slow_and_fast(limit_kmh: f64) -> [LawSource; 1] {
    [LawSource {
        name: "t".into(),
        text: format!(
            "slow = G(stoplineAhead(10) -> F[0,1](speed < 0.5));\nfast = G(speed <= {limit_kmh});\n"
        ),
    }]
}

/// `L.pending` and `L.pending>x` bits follow the law's oldest pending obligation.
#[test]
fn obligation_predicates_are_bits_of_the_state() {
    let laws = slow_and_fast(30.0);
    let preds: Vec<String> = ["slow.w", "slow.pending", "slow.pending>0.5"]
        .map(String::from)
        .to_vec();
    let defs = [PropertyDef {
        name: "p",
        law: "slow",
        predicates: &preds,
        unsafe_bit: 0,
        reactive_rule: &[],
        forest: None,
    }];
    let c = Compiled::new(&laws, &defs, 0.1, 100).unwrap();
    let mut tracker = c.tracker(SignalContext::default()).unwrap();
    // Frames 0..5: far from the line. 5..25: within 10 m, moving (an obligation arises every frame and
    // the first expires at frame 15). 25..: stopped, which meets every open one.
    let frame = |k: usize| Frame {
        t: k as f64 * 0.1,
        speed_mps: if k < 25 { 5.0 } else { 0.0 },
        stopline_dist_m: if k < 5 { 50.0 } else { 5.0 },
        ..Frame::default()
    };
    let states: Vec<StateId> = (0..30).map(|k| tracker.step(&frame(k))[0].state).collect();
    let bit = |k: usize, b: usize| states[k] >> b & 1 == 1;
    for k in 0..30usize {
        // The oldest pending obligation is max(5, k − 9) while moving near the line.
        let pending = (5..25).contains(&k);
        let age = if pending {
            k - 5.max(k.saturating_sub(9))
        } else {
            0
        };
        assert_eq!(bit(k, 1), pending, "frame {k}");
        assert_eq!(bit(k, 2), pending && age > 5, "frame {k}: age {age}");
    }
    // The first violation becomes certain at frame 15 (obligation of frame 5, deadline 1 s).
    assert!(!bit(14, 0) && bit(15, 0));
    // A law without an obligation, an unknown law and a malformed threshold are refused, naming the text.
    for (text, want) in [
        ("fast.pending", "no future-time obligation"),
        ("nope.pending", "unknown law 'nope'"),
        ("slow.pending >= 1", "the only comparison"),
        ("slow.pending > x", "expected a number"),
    ] {
        let preds = vec!["slow.w".to_string(), text.to_string()];
        let defs = [PropertyDef {
            predicates: &preds,
            ..defs[0]
        }];
        let e = Compiled::new(&laws, &defs, 0.1, 100)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
}

/// A forest's splits — more than a word of them, of every kind: atoms (some negated by their
/// comparison), windows, an obligation pending and pending longer than x, a conjunction with a negated
/// literal — read as a direct evaluation reads them (every predicate on its own, a separate evaluator),
/// and the tracker's forest value is the forest's walk ([`ForestShare::value`]) over those values.
#[test]
fn a_forest_reads_its_splits_as_a_direct_evaluation_does() {
    use crate::forest::{Node, Tree};
    let laws = slow_and_fast(57.3);
    let mut splits: Vec<String> = (0..70)
        .map(|k| format!("speed > {}", 0.1 + f64::from(k) * 0.2))
        .collect();
    splits.extend(
        [
            "slow.w",
            "slow.pending",
            "slow.pending>0.5",
            "not fast.w & stoplineAhead(10) & speed <= 8",
            "NPCAhead.ttc < 2",
            "fast.w",
            "stoplineAhead(20)",
        ]
        .map(String::from),
    );
    let n = splits.len() as u32;
    // 8 complete trees of depth 6; node j of tree t splits on predicate (7j + 13t) mod n.
    let trees: Vec<Tree> = (0..8u32)
        .map(|t| Tree {
            nodes: (0..127u32)
                .map(|j| {
                    if j < 63 {
                        Node::Split {
                            predicate: (7 * j + 13 * t) % n,
                            yes: 2 * j + 1,
                            no: 2 * j + 2,
                        }
                    } else {
                        Node::Leaf(f64::from((j * 31 + t * 17) % 64) / 63.0)
                    }
                })
                .collect(),
        })
        .collect();
    let share = ForestShare::try_new(0.5, 30, splits, trees).unwrap();
    let preds = vec!["slow.w".to_string()];
    let defs = [PropertyDef {
        name: "p",
        law: "slow",
        predicates: &preds,
        unsafe_bit: 0,
        reactive_rule: &[],
        forest: Some(&share),
    }];
    let c = Compiled::new(&laws, &defs, 0.1, 100).unwrap();
    let split_preds = &c.encoders[0].forest.as_ref().unwrap().0;
    let ctx = SignalContext::default();
    let mut tracker = c.tracker(ctx).unwrap();
    let mut reference = Evaluator::new(c.laws(), &c.eval).unwrap();
    let slow = c.laws().index_of("slow").unwrap();
    let obligation = reference.add_obligation(&c.laws().laws()[slow]).unwrap();
    let (mut values, mut n_true) = (Vec::new(), vec![0usize; split_preds.len()]);
    let frames = random_frames(3000, 0x0f0e_57ee);
    for f in &frames {
        let got = tracker.step(f)[0].forest;
        let s = Signals::from_frame(f, &ctx);
        let v = reference.step(&s);
        let direct: Vec<bool> = split_preds
            .iter()
            .map(|p| direct_holds(p, &s, &v, Some((slow, obligation))))
            .collect();
        for (count, &d) in n_true.iter_mut().zip(&direct) {
            *count += usize::from(d);
        }
        let want = share.value(|i| direct[i]);
        assert_eq!(got, Some(want), "frame {f:?}");
        values.push(want);
    }
    // Not vacuous: every split is true on some frames and false on others, and the value varies.
    for (i, &count) in n_true.iter().enumerate() {
        assert!(count > 0 && count < frames.len(), "split {i}: {count}");
    }
    values.sort_by(f64::total_cmp);
    assert!(values[0] < values[values.len() - 1]);
}
