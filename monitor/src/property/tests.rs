use super::*;

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
