use super::*;

const JAM: &str = r#"
[scenario]
name = "j"
[road]
approach_m = 100.0
speed_limit_kph = 40.0
[road.junction]
size_m = 20.0
control = "none"
[[vehicles]]
role = "jam"
count = 4
speed_kph = 25.0
first_arrival_s = 2.0
headway_s = 2.0
gap_m = 2.0
hold_s = 8.0
"#;

/// An ego footprint far from every lane.
fn far_ego() -> Rect {
    Rect {
        centre_x: -500.0,
        centre_y: -500.0,
        heading: 0.0,
        half_length_m: 2.35,
        half_width_m: 1.03,
    }
}

fn view<'a>(road: &'a Road, t: f64, ego: Rect) -> NpcView<'a> {
    NpcView {
        road,
        light: None,
        t,
        dt: 0.1,
        ego_in_junction: false,
        ego,
    }
}

#[test]
fn blocked_exit_jams_the_box_then_releases() {
    let s = Scenario::from_toml_str(JAM).expect("valid");
    let road = Road::new(s.road());
    let mut rng = crate::seed::rng_for(1);
    let mut traffic = Traffic::sample(&s, &road, 0.0, &mut rng);
    assert_eq!(traffic.vehicles.len(), 4);
    let stopped_in_box = |tr: &Traffic| {
        tr.vehicles
            .iter()
            .filter(|v| {
                let (x, y, _) = v.position(&road);
                x.abs() < 10.0 && y.abs() < 10.0 && v.v < 1.0
            })
            .count()
    };
    let (mut jam_seen_t, mut all_gone_t) = (None, None);
    for k in 0..600 {
        let t = k as f64 * 0.1;
        traffic.step(&view(&road, t, far_ego()));
        if jam_seen_t.is_none() && stopped_in_box(&traffic) >= 2 {
            jam_seen_t = Some(t);
        }
        let head = &traffic.vehicles[0];
        if jam_seen_t.is_some() && head.front() > 10.0 + 2.0 + 5.0 && all_gone_t.is_none() {
            all_gone_t = Some(t);
        }
    }
    let jam_t = jam_seen_t.expect("queued cars stop inside the box");
    assert!(
        jam_t > 2.0,
        "the jam forms during the run, not at t = 0 ({jam_t})"
    );
    let gone = all_gone_t.expect("the head drives on after its hold");
    assert!(gone > jam_t + 5.0, "head left at {gone}, jam at {jam_t}");
}

#[test]
fn cross_traffic_keeps_clear_of_an_ego_on_its_lane() {
    let s = Scenario::from_toml_str(JAM).expect("valid");
    let road = Road::new(s.road());
    let mut rng = crate::seed::rng_for(2);
    let mut traffic = Traffic::sample(&s, &road, 0.0, &mut rng);
    // The ego stands across the northbound cross lane in the middle of the box.
    let ego = Rect {
        centre_x: LANE_CENTRE_M,
        centre_y: -LANE_CENTRE_M,
        heading: 0.0,
        half_length_m: 2.35,
        half_width_m: 1.03,
    };
    for k in 0..300 {
        let t = k as f64 * 0.1;
        traffic.step(&view(&road, t, ego));
        for v in &traffic.vehicles {
            let (x, y, h) = v.position(&road);
            let rect = Rect {
                centre_x: x,
                centre_y: y,
                heading: h,
                half_length_m: v.length_m / 2.0,
                half_width_m: v.width_m / 2.0,
            };
            assert!(
                !rect.overlaps(&ego),
                "vehicle {} hit the ego at t = {t}",
                v.id
            );
        }
    }
    // They queue behind it instead of passing.
    assert!(traffic
        .vehicles
        .iter()
        .all(|v| v.front() < -LANE_CENTRE_M - 1.03));
}
