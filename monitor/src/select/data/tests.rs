//! Records travel between machines intact or not at all.

use super::RunRecord;

fn record() -> RunRecord {
    RunRecord {
        t: vec![0.0, 0.1, 0.2],
        n_words: 1,
        bits: vec![0b01, 0b11, 0b10],
        n_signals: 2,
        values: vec![1.0, -1.0, 2.0, -1.0, 3.0, 4.0],
        first_unsafe: vec![Some(2), None],
    }
}

#[test]
fn a_record_travels_and_a_corrupt_one_is_refused() {
    let good = record();
    let bytes = postcard::to_stdvec(&good).unwrap();
    assert_eq!(postcard::from_bytes::<RunRecord>(&bytes).unwrap(), good);
    assert_eq!(good.layout(), (1, 2));

    let mut short_bits = record();
    short_bits.bits.pop();
    let mut short_values = record();
    short_values.values.pop();
    let mut late_unsafe = record();
    late_unsafe.first_unsafe[1] = Some(3);
    let mut no_words = record();
    no_words.n_words = 0;
    no_words.bits.clear();
    for bad in [short_bits, short_values, late_unsafe, no_words] {
        let bytes = postcard::to_stdvec(&bad).unwrap();
        assert!(
            postcard::from_bytes::<RunRecord>(&bytes).is_err(),
            "{bad:?}"
        );
    }
}

mod cuts {
    use proptest::prelude::*;

    use super::super::{PropertyData, RunRecord, Source};

    /// Signal values with the awkward ones: repeats (cuts fall on data values), ±∞ and NaN.
    fn value() -> impl Strategy<Value = f64> {
        prop_oneof![
            6 => (-4i32..=4).prop_map(f64::from),
            2 => -5.0f64..5.0,
            1 => Just(f64::INFINITY),
            1 => Just(f64::NEG_INFINITY),
            1 => Just(f64::NAN),
        ]
    }

    /// Runs of one property over two signals (signal 1 is the one cut), some ending in a violation.
    fn runs() -> impl Strategy<Value = Vec<RunRecord>> {
        prop::collection::vec((prop::collection::vec(value(), 1..30), any::<bool>()), 1..8)
            .prop_map(|runs| {
                runs.into_iter()
                    .map(|(v, violated)| {
                        let n = v.len();
                        RunRecord {
                            t: (0..n).map(|k| k as f64 * 0.1).collect(),
                            n_words: 1,
                            bits: vec![0; n],
                            n_signals: 2,
                            values: v.iter().flat_map(|&x| [0.0, x]).collect(),
                            first_unsafe: vec![violated.then(|| (n as u32 - 1) / 2)],
                        }
                    })
                    .collect()
            })
    }

    proptest! {
        /// One pass over every cut gives, cut by cut, what reading each cut alone gives; so does the
        /// fallback for cut lists that are not ascending or hold a NaN.
        #[test]
        fn all_cuts_in_one_pass_equal_one_cut_at_a_time(
            records in runs(),
            mut cuts in prop::collection::vec(value(), 0..12),
            sorted in any::<bool>(),
        ) {
            if sorted {
                cuts.retain(|c| !c.is_nan());
                cuts.sort_by(f64::total_cmp);
            }
            let data = PropertyData::new(&records, 0, &[]);
            let got = data.toggles_of_cuts(&records, 1, &cuts);
            prop_assert_eq!(got.len(), cuts.len());
            for (t, &c) in got.iter().zip(&cuts) {
                prop_assert_eq!(t, &data.toggles_of(&records, Source::AtMost(1, c)), "cut {}", c);
            }
        }
    }
}

mod conjunctions {
    use proptest::prelude::*;

    use super::super::{PropertyData, RunRecord, Source};

    /// Runs of one property over two bit columns, some cut short by a violation.
    fn runs() -> impl Strategy<Value = Vec<RunRecord>> {
        prop::collection::vec((prop::collection::vec(0u64..4, 1..40), any::<bool>()), 1..8)
            .prop_map(|runs| {
                runs.into_iter()
                    .map(|(bits, violated)| {
                        let n = bits.len();
                        let t = (0..n).map(|k| k as f64 * 0.1).collect();
                        RunRecord::from_bits(t, bits, violated.then(|| (n as u32 - 1) * 2 / 3))
                    })
                    .collect()
            })
    }

    proptest! {
        /// A conjunction's toggles, merged from its literals' toggles, are what reading the conjunction
        /// frame by frame gives, for every choice of negations (changes at the same frame included).
        #[test]
        fn a_conjunction_equals_its_frame_by_frame_value(
            records in runs(),
            negated_a in any::<bool>(),
            negated_b in any::<bool>(),
        ) {
            let (a, b) = (Source::Bit(0), Source::Bit(1));
            let data = PropertyData::new(&records, 0, &[a, b]);
            let got = data.candidates[0].and(&data.candidates[1], negated_a, negated_b);
            let want = super::super::toggles(&records, &data.runs, |rec, k| {
                (rec.value(a, k) != negated_a) && (rec.value(b, k) != negated_b)
            });
            prop_assert_eq!(got, want);
        }
    }
}

mod subsets {
    use proptest::prelude::*;

    use super::super::{PropertyData, RunRecord, Source};

    /// Runs of one property over two bit columns, some cut short by a violation, some empty.
    fn runs() -> impl Strategy<Value = Vec<RunRecord>> {
        prop::collection::vec(
            (prop::collection::vec(0u64..4, 0..30), any::<bool>()),
            1..10,
        )
        .prop_map(|runs| {
            runs.into_iter()
                .map(|(bits, violated)| {
                    let n = bits.len();
                    let t = (0..n).map(|k| k as f64 * 0.1).collect();
                    let first = (violated && n > 0).then(|| (n as u32 - 1) / 2);
                    RunRecord::from_bits(t, bits, first)
                })
                .collect()
        })
    }

    proptest! {
        /// The data of some runs, cut from the data of all, is the data read from those runs' records
        /// alone: the same runs (up to where their records sit), unsafe toggles and candidates.
        #[test]
        fn a_subset_is_the_data_of_its_runs_read_alone(
            records in runs(),
            picks in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
        ) {
            let sources = [Source::Bit(0), Source::Bit(1)];
            let data = PropertyData::new(&records, 0, &sources);
            prop_assume!(!data.runs.is_empty());
            let keep: Vec<usize> = picks.iter().map(|i| i.index(data.runs.len())).collect();
            let sub = data.subset(&keep);
            let alone: Vec<RunRecord> = keep
                .iter()
                .map(|&r| records[data.runs[r].record].clone())
                .collect();
            let want = PropertyData::new(&alone, 0, &sources);
            prop_assert_eq!(sub.runs.len(), want.runs.len());
            for (i, (got, w)) in sub.runs.iter().zip(&want.runs).enumerate() {
                prop_assert_eq!(got.record, data.runs[keep[i]].record);
                prop_assert_eq!((got.n, got.violated), (w.n, w.violated));
            }
            prop_assert_eq!(&sub.unsafe_toggles, &want.unsafe_toggles);
            prop_assert_eq!(&sub.candidates, &want.candidates);
        }
    }
}
