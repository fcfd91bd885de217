use super::*;

#[test]
fn jam_vehicles_hold_until_release() {
    let text = r#"
[scenario]
name = "j"
[road]
approach_m = 100.0
speed_limit_kph = 40.0
[road.junction]
control = "none"
[[vehicles]]
role = "jam"
count = 3
hold_s = 5.0
"#;
    let s = Scenario::from_toml_str(text).expect("valid");
    let road = Road::new(s.road());
    let mut rng = crate::seed::rng_for(1);
    let mut traffic = Traffic::sample(&s, &road, 0.0, &mut rng);
    assert_eq!(traffic.vehicles.len(), 3);
    for k in 0..100 {
        let t = k as f64 * 0.1;
        traffic.step(&NpcView {
            road: &road,
            light: None,
            t,
            dt: 0.1,
            ego_in_junction: false,
        });
        let moving = traffic.vehicles.iter().any(|v| v.v > 0.0);
        assert_eq!(moving, t >= 5.0, "t = {t}");
    }
}
