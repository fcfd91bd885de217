use super::*;
use crate::table::MAX_HORIZON_STEPS;

/// The defaults at a frame period: 0.1 s is `Default`, other rates convert the horizons' seconds, and a
/// period that is not a positive number of seconds up to the limit is refused.
#[test]
fn build_config_at_a_frame_period_converts_the_default_horizons() {
    assert_eq!(
        BuildConfig::at_frame_period(0.1).unwrap(),
        BuildConfig::default()
    );
    let fast = BuildConfig::at_frame_period(0.05).unwrap();
    assert_eq!(fast.frame_period_s, 0.05);
    assert_eq!(fast.horizons_steps, vec![20, 40, 60, 100]);
    // 1, 2, 3 and 5 s at 0.3 s: 3.33, 6.67, 10 and 16.67 steps, rounded.
    assert_eq!(
        BuildConfig::at_frame_period(0.3).unwrap().horizons_steps,
        vec![3, 7, 10, 17]
    );
    for bad in [0.0, -0.1, f64::NAN, f64::INFINITY, 10.5] {
        let err = BuildConfig::at_frame_period(bad).unwrap_err().to_string();
        assert!(
            err.contains("not a positive number of seconds"),
            "{bad}: {err}"
        );
    }
}

/// Horizons in seconds become steps up to the longest solved: 10,000 s at 0.1 s is the limit, a longer
/// horizon or a period so short that the default horizons exceed it is refused by name.
#[test]
fn a_horizon_longer_than_the_solve_takes_is_refused() {
    assert_eq!(
        BuildConfig::steps_from_seconds(&[10_000.0, 0.5], 0.1).unwrap(),
        vec![5, MAX_HORIZON_STEPS]
    );
    for (h, period) in [(10_000.1, 0.1), (1e9, 0.1), (1e300, 0.1), (5.0, 1e-6)] {
        let err = BuildConfig::steps_from_seconds(&[h], period)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("horizon {h:?} s")) && err.contains("at most 100000 steps"),
            "{h} s at {period} s: {err}"
        );
    }
    let err = BuildConfig::at_frame_period(1e-6).unwrap_err().to_string();
    assert!(err.contains("at most 100000 steps"), "{err}");
}

#[test]
fn a_collision_property_is_one_whose_unsafe_predicate_reads_the_collision_flag_alone() {
    for text in ["collision==1", "collision == 1", "collision"] {
        assert!(super::reads_collision_alone(text), "{text}");
    }
    for text in [
        "law38.w",
        "speed<=3",
        "collision==1 & speed<=3",
        "collision + speed > 1",
        "",
    ] {
        assert!(!super::reads_collision_alone(text), "{text}");
    }
}
