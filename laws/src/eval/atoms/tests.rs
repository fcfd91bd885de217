use proptest::prelude::*;

use super::*;
use crate::lang::atom::{ArithOp, Term};

const SIGNALS: [Signal; 4] = [Signal::Speed, Signal::Acc, Signal::NpcAhead, Signal::Jerk];
const CMPS: [Cmp; 6] = [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne];

/// An atom over a few signals and constants: mostly `signal cmp constant` of all six comparisons, some
/// with an arithmetic left-hand side (the general path).
fn atom() -> impl Strategy<Value = Atom> {
    (0..SIGNALS.len(), 0..CMPS.len(), -3i32..=3, any::<bool>()).prop_map(|(s, c, k, arith)| {
        let sig = Term::Signal(SIGNALS[s]);
        let lhs = if arith {
            Term::Bin(
                Box::new(sig),
                ArithOp::Sub,
                Box::new(Term::Signal(SIGNALS[(s + 1) % SIGNALS.len()])),
            )
        } else {
            sig
        };
        Atom::new(lhs, CMPS[c], Term::Const(f64::from(k)))
    })
}

/// A signal value: the constants themselves (so `==` holds sometimes), others, infinities and NaN.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-3i32..=3).prop_map(f64::from),
        -4.0..4.0f64,
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(f64::NAN),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Every bit of the table is its atom's own truth at each frame, over several words, whatever the
    /// previous frame left there.
    #[test]
    fn every_bit_is_its_atoms_truth(
        atoms in prop::collection::vec(atom(), 1..300),
        frames in prop::collection::vec(prop::collection::vec(value(), SIGNALS.len()), 1..4),
    ) {
        let mut table = AtomTable::default();
        let bits: Vec<usize> = atoms.iter().map(|a| table.intern(a)).collect();
        for values in &frames {
            let mut s = Signals::default();
            for (sig, v) in SIGNALS.iter().zip(values) {
                s.set(*sig, *v);
            }
            table.eval_all(&s);
            for (a, &b) in atoms.iter().zip(&bits) {
                prop_assert_eq!(bit(table.words(), b), a.eval(&s), "atom {:?} at {:?}", a, values);
            }
            prop_assert_eq!(table.words().len(), table.atoms().len().div_ceil(64));
        }
    }
}
