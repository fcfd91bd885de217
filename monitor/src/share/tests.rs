use super::*;

/// Two runs over states 0–2 with horizons of 1 and 2 steps, α = 1, counted by hand:
/// - a violating run `0 1 1 2`: its last frame (state 2) is the violation and is not counted; the kept
///   frames are 3, 2 and 1 steps before it;
/// - a safe run `0 0 1`.
///
/// State 0: 3 frames, 1 in the violating run (3 steps ahead); state 1: 3 frames, 2 violating (2 and 1
/// steps ahead); state 2: none.
#[test]
fn shares_are_counted_frame_by_frame() {
    let violating: &[StateId] = &[0, 1, 1, 2];
    let safe: &[StateId] = &[0, 0, 1];
    let share =
        FrameShare::from_traces(0.5, 3, &[1, 2], 1.0, [(violating, true), (safe, false)]).unwrap();
    let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-12);
    assert!(near(share.eventually(0), (1.0 + 0.5) / (3.0 + 1.0)));
    assert!(near(share.eventually(1), (2.0 + 0.5) / (3.0 + 1.0)));
    assert_eq!(
        share.eventually(2),
        None,
        "state 2 was never visited before a violation"
    );
    // Within one step: state 0 has no frame one step ahead, state 1 one (its second frame).
    assert!(near(share.within(0, 0), 0.5 / 4.0));
    assert!(near(share.within(0, 1), 1.5 / 4.0));
    // Within two steps: state 1's two frames.
    assert!(near(share.within(1, 0), 0.5 / 4.0));
    assert!(near(share.within(1, 1), 2.5 / 4.0));
    assert_eq!(share.within(0, 2), None);
    assert_eq!(share.within(2, 0), None, "no third horizon");
    assert_eq!(share.weight(), 0.5);
    assert_eq!(share.n_states(), 3);
}

#[test]
fn malformed_shares_are_refused() {
    let ok = || (vec![Some(0.5), None], vec![Some(0.25), None]);
    let (e, w) = ok();
    assert!(FrameShare::try_new(0.5, vec![4], e, w).is_ok());
    let refused = |weight: f64, e: Vec<Option<f64>>, w: Vec<Option<f64>>, why: &str| {
        let err = FrameShare::try_new(weight, vec![4], e, w)
            .unwrap_err()
            .to_string();
        assert!(err.contains(why), "{err}");
    };
    let (e, w) = ok();
    refused(1.5, e, w, "weight 1.5");
    let (e, w) = ok();
    refused(f64::NAN, e, w, "weight NaN");
    let (_, w) = ok();
    refused(0.5, vec![Some(1.2), None], w, "1.2");
    refused(0.5, vec![Some(0.5), None], vec![Some(0.6), None], "0.6");
    refused(0.5, vec![Some(0.5), None], vec![Some(0.25)], "within");
    refused(
        0.5,
        vec![Some(0.5), None],
        vec![Some(0.25), Some(0.1)],
        "no unbounded one",
    );
    refused(
        0.5,
        vec![Some(0.5), None],
        vec![None, None],
        "lacks a bounded share",
    );
    let err = FrameShare::try_new(0.5, vec![1, 2], vec![Some(0.5)], vec![Some(0.3), Some(0.2)])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("0.2"),
        "a bounded share that shrinks with the horizon: {err}"
    );
    let state_out_of_range: &[StateId] = &[0, 5];
    let err = FrameShare::from_traces(0.5, 3, &[], 1.0, [(state_out_of_range, false)])
        .unwrap_err()
        .to_string();
    assert!(err.contains('5'), "{err}");
}

/// A share read back from its encoding passes the same checks: a tampered one is refused.
#[test]
fn decoding_validates() {
    let a: &[StateId] = &[0, 1];
    let share = FrameShare::from_traces(0.25, 2, &[1], 0.3, [(a, true)]).unwrap();
    let bytes = postcard::to_allocvec(&share).unwrap();
    let back: FrameShare = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(back, share);
    let tampered = FrameShare {
        weight: 2.0,
        ..share
    };
    let bytes = postcard::to_allocvec(&tampered).unwrap();
    assert!(postcard::from_bytes::<FrameShare>(&bytes).is_err());
}
