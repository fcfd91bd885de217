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
