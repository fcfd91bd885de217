use super::*;

fn two_state() -> Dtmc {
    Dtmc::try_new(2, vec![0, 2, 3], vec![0, 1, 1], vec![0.25, 0.75, 1.0]).unwrap()
}

#[test]
fn accepts_a_stochastic_matrix_and_answers_lookups() {
    let d = two_state();
    assert_eq!(d.n_states(), 2);
    assert_eq!(d.n_transitions(), 3);
    assert_eq!(d.prob(0, 1), 0.75);
    assert_eq!(d.prob(1, 0), 0.0);
    let (ptr, preds, probs) = d.transpose();
    assert_eq!(ptr, vec![0, 1, 3]);
    assert_eq!(preds, vec![0, 0, 1]);
    assert_eq!(probs, vec![0.25, 0.75, 1.0]);
}

#[test]
fn rejects_each_kind_of_malformed_matrix() {
    let cases: Vec<(Vec<usize>, Vec<u32>, Vec<f64>)> = vec![
        (vec![0, 2], vec![0, 1], vec![0.5, 0.5]), // row_ptr too short
        (vec![0, 2, 3], vec![0, 2, 1], vec![0.25, 0.75, 1.0]), // column out of range
        (vec![0, 2, 3], vec![1, 0, 1], vec![0.25, 0.75, 1.0]), // unsorted columns
        (vec![0, 2, 3], vec![0, 1, 1], vec![0.25, 0.7, 1.0]), // row sum 0.95
        (vec![0, 2, 3], vec![0, 1, 1], vec![-0.25, 1.25, 1.0]), // negative probability
        (vec![0, 2, 2], vec![0, 1], vec![0.25, 0.75]), // empty row (deadlock)
        (vec![0, 2, 3], vec![0, 1, 1], vec![f64::NAN, 0.75, 1.0]),
        (vec![0, 2, 3], vec![0, 1], vec![0.25, 0.75, 1.0]), // length mismatch
        // Found by the fuzz smoke (a model file): a middle pointer beyond the entries, last one in range.
        (vec![0, 5, 3], vec![0, 1, 1], vec![0.25, 0.75, 1.0]),
    ];
    for (i, (ptr, cols, probs)) in cases.into_iter().enumerate() {
        assert!(
            Dtmc::try_new(2, ptr, cols, probs).is_err(),
            "case {i} accepted"
        );
    }
}

#[test]
fn deserialisation_runs_the_same_validation() {
    let d = two_state();
    let bytes = postcard::to_stdvec(&d).unwrap();
    let back: Dtmc = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(back, d);
    // Corrupt the last probability (1.0 -> 0.5): the row no longer sums to one.
    let mut bad = bytes.clone();
    let one = 1.0f64.to_le_bytes();
    let pos = bad.windows(8).rposition(|w| w == one).unwrap();
    bad[pos..pos + 8].copy_from_slice(&0.5f64.to_le_bytes());
    assert!(postcard::from_bytes::<Dtmc>(&bad).is_err());
    // The same bytes decode as raw parts, and the validator names the broken invariant.
    let parts: DtmcParts = postcard::from_bytes(&bad).unwrap();
    assert!(matches!(
        Dtmc::try_from(parts),
        Err(StructureError::RowSum { row: 1, .. })
    ));
}
