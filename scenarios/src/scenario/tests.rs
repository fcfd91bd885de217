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

/// The name begins every log's file name, so it is a plain file-name stem: a name with a path in it
/// would write outside `--out`.
#[test]
fn a_name_that_is_not_a_file_name_stem_is_refused() {
    let up = ["..", "..", "escaped"].join("/");
    let long = "n".repeat(101);
    for bad in [up.as_str(), "/tmp/abs", ".hidden", "a b", long.as_str()] {
        let text = MINIMAL.replace("name = \"t\"", &format!("name = {bad:?}"));
        let err = Scenario::from_toml_str(&text).expect_err(bad).to_string();
        assert!(
            err.contains("scenario.name") && err.contains("it names the log files"),
            "{bad}: {err}"
        );
    }
    for good in ["yellow_light", "priority-road.20hz", "T1"] {
        let text = MINIMAL.replace("name = \"t\"", &format!("name = {good:?}"));
        assert!(Scenario::from_toml_str(&text).is_ok(), "{good}");
    }
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
    for period in [
        "1e-11", "1e-5", "0.0009", "50", "10.5", "0", "-0.1", "nan", "inf",
    ] {
        let text = MINIMAL.replace(
            "name = \"t\"",
            &format!("name = \"t\"\nduration_s = 1.0\nframe_period_s = {period}"),
        );
        let err = Scenario::from_toml_str(&text).expect_err(period);
        assert!(
            err.to_string().contains("scenario.frame_period_s"),
            "{period}: {err}"
        );
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

/// A junction with a light and a crosswalk, so that every table and role is allowed.
const FULL: &str = r#"
[scenario]
name = "t"
duration_s = 30.0
[road]
approach_m = 100.0
speed_limit_kph = 50.0
limit_changes = [[50.0, 30.0]]
[road.junction]
control = "light"
crosswalk = true
[light]
green_s = 15.0
"#;

#[test]
fn every_numeric_field_out_of_its_domain_is_refused_by_name() {
    // Was: a billion pedestrians grew memory without bound, a negative count meant none, 1e308 km/h was
    // logged, a negative start speed failed only when the log was written, and negative gaps, rates,
    // decelerations and arrival times ran.
    let cases: &[(&str, &str, &str)] = &[
        (
            "[pedestrians]\nstart_t_s = 1.0\ncount = 1e9\n",
            "pedestrians.count",
            "0..=50",
        ),
        (
            "[pedestrians]\nstart_t_s = 1.0\ncount = 1e300\n",
            "pedestrians.count",
            "",
        ),
        (
            "[pedestrians]\nstart_t_s = 1.0\ncount = -5.0\n",
            "pedestrians.count",
            "",
        ),
        (
            "[pedestrians]\nstart_t_s = -1e308\n",
            "pedestrians.start_t_s",
            "",
        ),
        (
            "[pedestrians]\nstart_t_s = 1.0\nspeed_mps = 1e308\n",
            "pedestrians.speed_mps",
            "",
        ),
        (
            "[ego]\nstart_speed_kph = 1e308\n",
            "ego.start_speed_kph",
            "0..=200 km/h",
        ),
        (
            "[ego]\nstart_speed_kph = -50.0\n",
            "ego.start_speed_kph",
            "",
        ),
        ("[ego]\nstart_s_m = -10.0\n", "ego.start_s_m", ""),
        ("[ego]\nlapses_per_min = -5.0\n", "ego.lapses_per_min", ""),
        ("[ego]\nlapses_per_min = 1e308\n", "ego.lapses_per_min", ""),
        ("[ego]\nlapse_s = -5.0\n", "ego.lapse_s", ""),
        ("[ego]\nmin_gap_m = -100.0\n", "ego.min_gap_m", ""),
        (
            "[ego]\ndesired_speed_factor = 1e300\n",
            "ego.desired_speed_factor",
            "",
        ),
        ("[ego]\ntime_headway_s = 1e300\n", "ego.time_headway_s", ""),
        (
            "[ego]\ncomfort_decel_mps2 = 1e-300\n",
            "ego.comfort_decel_mps2",
            "",
        ),
        ("[ego]\ncritical_gap_s = -1.0\n", "ego.critical_gap_s", ""),
        (
            "[ego]\nspeed_judgement_error = 5.0\n",
            "ego.speed_judgement_error",
            "",
        ),
        (
            "[ego]\ngive_way_approach_kph = 1e9\n",
            "ego.give_way_approach_kph",
            "",
        ),
        (
            "[ego]\nignore_limit_prob = 1.5\n",
            "ego.ignore_limit_prob",
            "",
        ),
        (
            "[[vehicles]]\nrole = \"lead\"\ncount = 1e9\n",
            "vehicles.count",
            "0..=12",
        ),
        (
            "[[vehicles]]\nrole = \"lead\"\nspeed_kph = 1e308\n",
            "vehicles.speed_kph",
            "",
        ),
        (
            "[[vehicles]]\nrole = \"lead\"\ngap_m = -1e3\n",
            "vehicles.gap_m",
            "",
        ),
        (
            "[[vehicles]]\nrole = \"lead\"\nbrake_at_s = 1.0\nbrake_decel_mps2 = -5.0\n",
            "vehicles.brake_decel_mps2",
            "",
        ),
        (
            "[[vehicles]]\nrole = \"lead\"\nbrake_at_s = 1.0\nbrake_decel_mps2 = 1e308\n",
            "vehicles.brake_decel_mps2",
            "",
        ),
        (
            "[[vehicles]]\nrole = \"lead\"\nbrake_to_kph = -100.0\n",
            "vehicles.brake_to_kph",
            "",
        ),
        (
            "[[vehicles]]\nrole = \"lead\"\nbrake_at_s = -1.0\n",
            "vehicles.brake_at_s",
            "",
        ),
        (
            "[[vehicles]]\nrole = \"lead\"\nhold_s = -1.0\n",
            "vehicles.hold_s",
            "",
        ),
        (
            "[[vehicles]]\nrole = \"oncoming\"\nfirst_arrival_s = -1e300\n",
            "vehicles.first_arrival_s",
            "",
        ),
        (
            "[[vehicles]]\nrole = \"oncoming\"\nheadway_s = -1.0\n",
            "vehicles.headway_s",
            "",
        ),
    ];
    for (table, field, bound) in cases {
        let text = format!("{FULL}{table}");
        let err = Scenario::from_toml_str(&text).expect_err(table);
        let msg = err.to_string();
        assert!(msg.contains(&format!("`{field}`")), "{table}: {msg}");
        assert!(msg.contains(bound), "{table}: {msg}");
    }
    let header_and_road: &[(&str, &str, &str)] = &[
        (
            "approach_m = 100.0",
            "approach_m = 1e308",
            "road.approach_m",
        ),
        (
            "speed_limit_kph = 50.0",
            "speed_limit_kph = 1e308",
            "road.speed_limit_kph",
        ),
        ("[[50.0, 30.0]]", "[[50.0, 1e308]]", "road.limit_changes"),
        ("[[50.0, 30.0]]", "[[inf, 30.0]]", "road.limit_changes"),
        ("green_s = 15.0", "green_s = 1e308", "light.green_s"),
        ("green_s = 15.0", "green_s = 1e-300", "light.green_s"),
        (
            "green_s = 15.0",
            "green_s = 15.0\ncycle_offset_s = -1e300",
            "light.cycle_offset_s",
        ),
        (
            "crosswalk = true",
            "crosswalk = true\nstop_line_gap_m = nan",
            "road.junction.stop_line_gap_m",
        ),
        (
            "duration_s = 30.0",
            "duration_s = nan",
            "scenario.duration_s",
        ),
        (
            "duration_s = 30.0",
            "duration_s = inf",
            "scenario.duration_s",
        ),
        (
            "duration_s = 30.0",
            "duration_s = -1.0",
            "scenario.duration_s",
        ),
    ];
    for (from, to, field) in header_and_road {
        let text = FULL.replace(from, to);
        let err = Scenario::from_toml_str(&text).expect_err(to);
        assert!(
            err.to_string().contains(&format!("`{field}`")),
            "{to}: {err}"
        );
    }
    // At the bounds, and the most vehicle groups, the file is valid.
    let mut text = format!(
        "{FULL}[pedestrians]\nstart_t_s = 86400.0\ncount = 50\n[ego]\nstart_speed_kph = 200.0\n\
         lapses_per_min = 0.0\nmin_gap_m = 0.0\n"
    );
    for _ in 0..MAX_VEHICLE_GROUPS {
        text += "[[vehicles]]\nrole = \"lead\"\ncount = 12\ngap_m = 0.0\n";
    }
    Scenario::from_toml_str(&text).unwrap_or_else(|e| panic!("{e}"));
    text += "[[vehicles]]\nrole = \"lead\"\n";
    let err = Scenario::from_toml_str(&text).expect_err("one group too many");
    assert!(err.to_string().contains("`vehicles`"), "{err}");
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

#[test]
fn a_text_above_the_size_cap_is_refused() {
    let text = format!("{MINIMAL}# {}\n", "x".repeat(MAX_SCENARIO_BYTES));
    let err = Scenario::from_toml_str(&text).expect_err("too large");
    assert!(matches!(err, ScenarioError::TooLarge), "{err}");
    assert!(err.to_string().contains("more than 1048576 bytes"), "{err}");
    let text = format!("{MINIMAL}# {}\n", "x".repeat(MAX_SCENARIO_BYTES / 2));
    Scenario::from_toml_str(&text).expect("below the cap");
}
