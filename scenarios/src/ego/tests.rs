use super::*;

const P: IdmParams = IdmParams {
    max_accel_mps2: 1.5,
    comfort_decel_mps2: 2.0,
    time_headway_s: 1.5,
    min_gap_m: 2.0,
};

#[test]
fn idm_hand_computed() {
    // Free road at half the desired speed: a (1 - (1/2)^4) = 1.5 × 15/16.
    assert!((idm(&P, 5.0, 10.0, None) - 1.5 * 15.0 / 16.0).abs() < 1e-12);
    // Standing behind a standing car exactly at s0: a (1 - 0 - 1) = -a·0 ... free term 1, interaction 1.
    assert!(idm(&P, 0.0, 10.0, Some(Leader::standing(2.0))).abs() < 1e-12);
    // At desired speed, closing on a stopped car 20 m ahead:
    // s* = 2 + 10·1.5 + 10·10/(2·sqrt(3)) = 17 + 28.8675; a = 1.5 (0 - (s*/20)^2).
    let s_star = 2.0 + 15.0 + 100.0 / (2.0 * 3f64.sqrt());
    assert!(
        (idm(&P, 10.0, 10.0, Some(Leader::standing(20.0))) + 1.5 * (s_star / 20.0).powi(2)).abs()
            < 1e-9
    );
}
