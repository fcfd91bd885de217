use proptest::prelude::*;

use super::*;

/// Distinct state bits below 64 for atoms drawn near one another (so that runs form and break), some
/// beyond the bitset's end.
fn mapping() -> impl Strategy<Value = Vec<(AtomIndex, bool, u32)>> {
    (1usize..40, any::<u64>()).prop_flat_map(|(n, seed)| {
        (
            prop::collection::vec((0usize..200, any::<bool>(), any::<bool>()), n),
            Just(seed),
        )
            .prop_map(|(draws, seed)| {
                // Mostly consecutive atoms on consecutive bits, sometimes a jump.
                let mut next_atom = (seed % 130) as usize;
                let mut bits: Vec<u32> = (0..64).collect();
                // A fixed shuffle of the bits per seed, applied to some entries only.
                bits.rotate_left((seed % 64) as usize);
                draws
                    .into_iter()
                    .enumerate()
                    .map(|(i, (jump, negated, scatter))| {
                        let atom = if scatter { jump } else { next_atom };
                        next_atom = atom + 1;
                        let bit = if scatter { bits[i] } else { i as u32 };
                        (AtomIndex(atom), negated, bit)
                    })
                    .fold(Vec::new(), |mut v: Vec<(AtomIndex, bool, u32)>, e| {
                        if v.iter().all(|&(_, _, b)| b != e.2) {
                            v.push(e);
                        }
                        v
                    })
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// The runs give the state the bit-by-bit definition gives, whatever the atom values.
    #[test]
    fn runs_gather_what_bits_gather(bits in mapping(), words in prop::collection::vec(any::<u64>(), 0..4)) {
        let g = AtomGather::new(&bits);
        prop_assert_eq!(g.gather(&words), AtomGather::gather_bitwise(&bits, &words));
    }
}

#[test]
fn consecutive_atoms_on_consecutive_bits_are_one_run_per_word() {
    // Atoms 60..70 on bits 0..10: split at the word boundary (atoms 60..64 and 64..70).
    let bits: Vec<(AtomIndex, bool, u32)> = (0..10)
        .map(|i| (AtomIndex(60 + i), i % 3 == 0, i as u32))
        .collect();
    let g = AtomGather::new(&bits);
    assert_eq!(g.n_runs(), 2);
    let words = [0xF000_0000_0000_0000u64, 0b10_1010];
    assert_eq!(g.gather(&words), AtomGather::gather_bitwise(&bits, &words));
    // By hand: atoms 60..63 are 1, 64..69 are 0,1,0,1,0,1; bits 0, 3, 6, 9 flipped.
    let raw = 0b1111u64 | 0b10_1010 << 4;
    assert_eq!(g.gather(&words), raw ^ 0b10_0100_1001);
}
