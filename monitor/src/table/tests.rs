use super::*;

/// A three-state table with two horizons, its bounded risks given horizon-major as in model files.
fn three_states() -> (Vec<f64>, RiskTable) {
    // within[h·3 + s]: horizon 0 then horizon 1.
    let within = vec![0.1, 0.0, 0.3, 0.2, 0.0, 0.6];
    let table = RiskTable::try_new(
        3,
        vec![1, 4],
        vec![0.5, 0.0, 0.9],
        within.clone(),
        vec![7.0, f64::INFINITY, 2.0],
        vec![NO_PATH, NO_PATH, NO_PATH],
    )
    .unwrap();
    (within, table)
}

#[test]
fn bounded_risks_read_by_horizon_and_state_as_given() {
    let (within, t) = three_states();
    for s in 0..3u32 {
        for h in 0..2 {
            assert_eq!(
                t.within(h, s),
                Some(within[h * 3 + s as usize]),
                "h {h} s {s}"
            );
        }
        let row: Vec<f64> = (0..2).map(|h| within[h * 3 + s as usize]).collect();
        assert_eq!(t.within_row(s), Some(row.as_slice()));
    }
    assert_eq!(t.within(2, 0), None);
    assert_eq!(t.within(0, 3), None);
    assert_eq!(t.within_row(3), None);
    assert_eq!(t.within_row(StateId::MAX), None);
}

#[test]
fn model_files_keep_the_bounded_risks_horizon_major() {
    let (within, t) = three_states();
    // The file layout, field after field as before the in-memory layout became state-major (postcard
    // writes a struct as the tuple of its fields): states, horizons, eventually, within horizon-major,
    // expected steps, path pointers.
    let file = (
        3usize,
        vec![1u32, 4],
        vec![0.5, 0.0, 0.9],
        within,
        vec![7.0, f64::INFINITY, 2.0],
        vec![NO_PATH; 3],
    );
    let bytes = postcard::to_allocvec(&t).unwrap();
    assert_eq!(bytes, postcard::to_allocvec(&file).unwrap());
    let back: RiskTable = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(back, t);
}
