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

/// Mixing in a frame share: `(1 − w) · table + w · share` where the share has a value, the table's own
/// risk elsewhere, bounded risks per horizon alike, expected steps and paths unchanged. Hand values.
#[test]
fn a_frame_share_mixes_into_the_risks_by_its_weight() {
    let (_, t) = three_states();
    // State 0 visited (share 0.7; within 1 step 0.2, within 4 steps 0.4), states 1 and 2 not.
    let share_at = |weight: f64| {
        FrameShare::try_new(
            weight,
            vec![1, 4],
            vec![Some(0.7), None, None],
            vec![Some(0.2), Some(0.4), None, None, None, None],
        )
        .unwrap()
    };
    let m = t.blended(&share_at(0.25)).unwrap();
    let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-12);
    assert!(near(m.eventually(0), 0.75 * 0.5 + 0.25 * 0.7));
    assert!(near(m.within(0, 0), 0.75 * 0.1 + 0.25 * 0.2));
    assert!(near(m.within(1, 0), 0.75 * 0.2 + 0.25 * 0.4));
    for s in 1..3 {
        assert_eq!(m.eventually(s), t.eventually(s), "state {s} has no share");
        assert_eq!(m.within_row(s), t.within_row(s));
    }
    for s in 0..3 {
        assert_eq!(m.expected_steps(s), t.expected_steps(s));
        assert_eq!(m.most_likely_path(s), t.most_likely_path(s));
    }
    // Weight 0 is the table itself.
    assert_eq!(t.blended(&share_at(0.0)).unwrap(), t);
    // A share of another shape is refused.
    let two = FrameShare::try_new(0.5, vec![1, 4], vec![None, None], vec![None; 4]).unwrap();
    assert!(t.blended(&two).is_err());
    let other_horizons =
        FrameShare::try_new(0.5, vec![2], vec![None, None, None], vec![None; 3]).unwrap();
    assert!(t.blended(&other_horizons).is_err());
}
