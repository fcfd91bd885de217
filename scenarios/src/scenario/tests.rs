use super::*;

const MINIMAL: &str = r#"
[scenario]
name = "t"
[road]
approach_m = 100.0
speed_limit_kph = 50.0
"#;

#[test]
fn minimal_file_gets_defaults() {
    let s = Scenario::from_toml_str(MINIMAL).expect("valid");
    assert_eq!(s.name(), "t");
    assert!((s.frame_period_s() - 0.1).abs() < 1e-12 && (s.duration_s() - 60.0).abs() < 1e-12);
    assert_eq!(
        (s.light().green_s, s.light().yellow_s, s.light().red_s),
        (15.0, 5.0, 15.0)
    );
}

#[test]
fn a_run_longer_than_the_frame_limit_is_refused() {
    // A year at 1 ms per frame would take 3·10^10 frames of memory and hours of stepping.
    let text = MINIMAL.replace(
        "name = \"t\"",
        "name = \"t\"\nduration_s = 3.2e7\nframe_period_s = 0.001",
    );
    let err = Scenario::from_toml_str(&text).expect_err("too long");
    assert!(err.to_string().contains("scenario.duration_s"), "{err}");
    assert!(
        err.to_string()
            .contains("more than the limit of 1000000 frames per run"),
        "{err}"
    );
}

#[test]
fn a_frame_period_the_log_reader_would_refuse_is_refused_at_load() {
    // Was: 1e-11 s aborted `simulate` allocating a reaction-delay buffer of 772 GB, and 1e-5 or 50 s wrote
    // logs that no reader accepts.
    for period in ["1e-11", "1e-5", "0.0009", "50", "10.5", "0", "-0.1", "nan", "inf"] {
        let text = MINIMAL.replace(
            "name = \"t\"",
            &format!("name = \"t\"\nduration_s = 1.0\nframe_period_s = {period}"),
        );
        let err = Scenario::from_toml_str(&text).expect_err(period);
        assert!(err.to_string().contains("scenario.frame_period_s"), "{period}: {err}");
        assert!(
            err.to_string().contains("0.001") && err.to_string().contains("10 s"),
            "{period}: {err}"
        );
    }
    for period in ["0.001", "0.05", "10"] {
        let text = MINIMAL.replace(
            "name = \"t\"",
            &format!("name = \"t\"\nduration_s = 20.0\nframe_period_s = {period}"),
        );
        Scenario::from_toml_str(&text).unwrap_or_else(|e| panic!("{period}: {e}"));
    }
}

#[test]
fn file_without_scenario_table_is_rejected() {
    let err =
        Scenario::from_toml_str("[package]\nname = \"scenarios\"\n").expect_err("not a scenario");
    assert!(matches!(err, ScenarioError::NotAScenario));
    assert!(err.to_string().contains("[scenario]"));
}

#[test]
fn bad_values_name_the_field() {
    let text = MINIMAL.replace("approach_m = 100.0", "approach_m = -1.0");
    let err = Scenario::from_toml_str(&text).expect_err("negative");
    assert!(err.to_string().contains("road.approach_m"), "{err}");
    let text = format!("{MINIMAL}[ego]\nreaction_s = [2.0, 1.0]\n");
    assert!(Scenario::from_toml_str(&text).is_err(), "reversed range");
    let text = format!("{MINIMAL}[[vehicles]]\nrole = \"oncoming\"\n");
    let err = Scenario::from_toml_str(&text).expect_err("needs junction");
    assert!(err.to_string().contains("vehicles.role"), "{err}");
    let text = format!("{MINIMAL}[[vehicles]]\nrole = \"lead\"\nside = \"left\"\n");
    let err = Scenario::from_toml_str(&text).expect_err("a lead car has no side");
    assert!(err.to_string().contains("vehicles.side"), "{err}");
    let text = format!("{MINIMAL}[[vehicles]]\nrole = \"lead\"\nreaction_s = 4.0\n");
    let err = Scenario::from_toml_str(&text).expect_err("too slow");
    assert!(err.to_string().contains("vehicles.reaction_s"), "{err}");
    let text = format!("{MINIMAL}[ego]\npedal_noise_mps2 = -0.1\n");
    let err = Scenario::from_toml_str(&text).expect_err("negative noise");
    assert!(err.to_string().contains("ego.pedal_noise_mps2"), "{err}");
    let text = format!("{MINIMAL}[ego]\nlapse_effect = \"asleep\"\n");
    assert!(
        Scenario::from_toml_str(&text).is_err(),
        "unknown lapse effect"
    );
    let text = format!("{MINIMAL}[ego]\nunknown_knob = 1\n");
    assert!(
        Scenario::from_toml_str(&text).is_err(),
        "unknown fields are errors"
    );
}

#[test]
fn every_shipped_scenario_file_is_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("crate dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "toml")
            && path.file_name() != Some("Cargo.toml".as_ref())
        {
            let text = std::fs::read_to_string(&path).expect("read");
            let s = Scenario::from_toml_str(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                !s.stresses().is_empty(),
                "{} declares no stressed law",
                path.display()
            );
            assert!(!s.description().is_empty());
            n += 1;
        }
    }
    assert!(n >= 8, "expected at least 8 scenario files, found {n}");
}
