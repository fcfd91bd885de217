use super::*;
use laws::frame::{obstacle_type, Obstacle};
use laws::geometry::EGO_FRONT_M;

fn alarm(first_alarm_t: Option<f64>, lead_s: Option<f64>, false_alarm: bool) -> AlarmScore {
    AlarmScore {
        first_alarm_t,
        lead_s,
        false_alarm,
    }
}

/// A violating run that each variant warns of `leads[v]` ahead (`None`: not at all).
fn violating(leads: &[Option<f64>]) -> TuningRun {
    TuningRun {
        violated: true,
        unsafe_from_start: false,
        alarms: leads
            .iter()
            .map(|&l| alarm(l.map(|l| 10.0 - l), l, false))
            .collect(),
    }
}

/// A safe run on which each variant alarms or not.
fn safe(alarmed: &[bool]) -> TuningRun {
    TuningRun {
        violated: false,
        unsafe_from_start: false,
        alarms: alarmed
            .iter()
            .map(|&a| alarm(a.then_some(1.0), None, a))
            .collect(),
    }
}

/// Three variants, as three response times would give: the first warns of everything 3 s ahead and
/// alarms in 5 of 10 safe runs, the second of 2 of 3 violations 1 s ahead with 1 false alarm, the third
/// of 1 violation 0.5 s ahead with none.
fn three_variants() -> Vec<TuningRun> {
    let mut runs = vec![
        violating(&[Some(3.0), Some(1.0), Some(0.5)]),
        violating(&[Some(3.0), Some(1.0), None]),
        violating(&[Some(3.0), None, None]),
    ];
    for i in 0..10 {
        runs.push(safe(&[i < 5, i < 1, false]));
    }
    runs
}

#[test]
fn the_choice_is_the_most_useful_variant_within_the_budget_by_hand() {
    let runs = three_variants();
    // Utilities (½ + ½·lead/5 per warned violation, over 3 violations): 0.8, 0.4 and 0.55 / 3.
    // 10 % of 10 safe runs allows 1 false alarm: the second variant.
    assert_eq!(choose(&runs, 0.10), Some(1));
    // 5 % allows none: the third.
    assert_eq!(choose(&runs, 0.05), Some(2));
    // 50 % allows 5: the first.
    assert_eq!(choose(&runs, 0.5), Some(0));
    // 49 % allows 4 (floor): the second again.
    assert_eq!(choose(&runs, 0.49), Some(1));
}

#[test]
fn no_variant_within_the_budget_or_no_violation_gives_no_choice() {
    let mut runs = three_variants();
    for r in runs.iter_mut().filter(|r| !r.violated).take(1) {
        r.alarms[2].false_alarm = true;
    }
    assert_eq!(choose(&runs, 0.05), None);
    let safe_only: Vec<TuningRun> = runs.into_iter().filter(|r| !r.violated).collect();
    assert_eq!(choose(&safe_only, 0.4), None);
}

#[test]
fn ties_go_to_the_longer_response_time() {
    let runs = vec![violating(&[Some(2.0), Some(2.0)]), safe(&[false, false])];
    assert_eq!(choose(&runs, 0.1), Some(0));
}

#[test]
fn the_summary_is_a_hand_count() {
    let runs = three_variants();
    let s = summary_of(&runs, 1);
    assert_eq!((s.n_violating_runs, s.n_safe_runs), (3, 10));
    assert!((s.predicted_pct.unwrap() - 200.0 / 3.0).abs() < 1e-9);
    assert!((s.false_alarm_pct.unwrap() - 10.0).abs() < 1e-9);
    assert_eq!(s.median_lead_s, Some(1.0));
    let s = summary_of(&runs, 0);
    assert_eq!((s.median_lead_s, s.max_lead_s), (Some(3.0), Some(3.0)));
    assert!((s.false_alarm_pct.unwrap() - 50.0).abs() < 1e-9);
}

#[test]
fn a_run_s_alarms_count_only_before_its_violation() {
    let s = series(6, Some(4));
    let r = TuningRun::of(&s, &[Some(1), Some(4), None]);
    assert!(r.violated);
    assert!((r.alarms[0].lead_s.unwrap() - 0.3).abs() < 1e-12);
    assert_eq!(r.alarms[1].lead_s, None);
    assert_eq!(r.alarms[2].lead_s, None);
    assert!(!r.unsafe_from_start);
    let r = TuningRun::of(&series(6, None), &[Some(5), None, None]);
    assert!(!r.violated && r.alarms[0].false_alarm && !r.alarms[1].false_alarm);
    // A run unsafe from its first frame: no alarm precedes it, and the summary counts it as such.
    let r = TuningRun::of(&series(4, Some(0)), &[Some(0), None, None]);
    assert!(r.violated && r.unsafe_from_start && r.alarms[0].lead_s.is_none());
    assert_eq!(summary_of(&[r], 0).n_unsafe_from_start, 1);
}

/// A car at 10 m/s whose rear is `gap_m` ahead of the ego's front, the ego at 10 m/s.
fn following(gap_m: f64) -> Frame {
    Frame {
        speed_mps: 10.0,
        obstacles: vec![Obstacle {
            id: 1,
            kind: obstacle_type::VEHICLE,
            x: EGO_FRONT_M + gap_m + 2.0,
            y: 0.0,
            heading: 0.0,
            speed_mps: 10.0,
            length: 4.0,
            width: 2.0,
            priority: false,
        }],
        ..Frame::default()
    }
}

#[test]
fn each_variant_finds_its_first_dangerous_frame() {
    // Safe distances behind the car (laws::rss's hand-computed cases): 28.28 m under CARLA's response
    // times, 16.45 m at half of them, 6.25 m without.
    let frames: Vec<Frame> = [30.0, 20.0, 10.0, 5.0]
        .iter()
        .map(|&g| following(g))
        .collect();
    let base = RssParams::CARLA;
    let variants = [
        base,
        base.with_response_scale(0.5),
        base.with_response_scale(0.0),
    ];
    assert_eq!(
        first_dangerous(&frames, &variants),
        vec![Some(1), Some(2), Some(3)]
    );
    assert_eq!(first_dangerous(&frames[..3], &variants)[2], None);
    assert_eq!(variants.len(), 3);
    assert_eq!(self::variants(&base).len(), RESPONSE_SCALES.len());
    assert_eq!(self::variants(&base)[0], base);
}

#[test]
fn the_fewest_false_alarms_are_as_near_as_rss_comes_to_a_budget() {
    let mut runs = three_variants();
    assert_eq!(fewest_false_alarms(&runs), Some(2));
    // With the third as noisy as the second, the more useful second wins the tie.
    for r in runs.iter_mut().filter(|r| !r.violated).take(1) {
        r.alarms[2].false_alarm = true;
    }
    assert_eq!(fewest_false_alarms(&runs), Some(1));
    let safe_only: Vec<TuningRun> = runs.into_iter().filter(|r| !r.violated).collect();
    assert_eq!(fewest_false_alarms(&safe_only), None);
}

/// A model with one collision property (`no_collision`, its unsafe predicate the collision flag), learned
/// from three short traces: enough for [`tune_to_target`] to store a tuning in.
fn collision_model() -> monitor::Model {
    use monitor::{property::BuildConfig, Counts, Domain, PropertyModel};
    let preds: Vec<String> = ["collision", "speed < 0.5"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let cfg = BuildConfig::default();
    let d = PropertyModel::domain_for(&preds, 0, &cfg).unwrap();
    let mut c = Counts::new(d.n_states());
    for trace in [vec![0b00, 0b10, 0b01], vec![0b10, 0b00, d.done()]] {
        c.observe_trace(&d, &trace).unwrap();
    }
    let p = PropertyModel::build("no_collision", preds, 0, c, &cfg).unwrap();
    monitor::Model::try_new(
        vec![laws::LawSource {
            name: "a.law".into(),
            text: "no_collision = G(collision == 0);".into(),
        }],
        vec![p],
    )
    .unwrap()
}

/// By hand: one safe run that the four longest response times alarm on, one collision at frame 10 that
/// the five longest warn of at frame 2 (0.8 s ahead) and the others at frame 8 (0.2 s). A 50 % target
/// allows no false alarm in one safe run, so the scale is the fifth (× 0.4), the most useful without one;
/// the model stores it with the counts. Variants that are not one per scale are refused.
#[test]
fn tune_to_target_stores_the_hand_chosen_scale_in_the_model() {
    let mut model = collision_model();
    let variants = model_variants(&model);
    assert_eq!(variants.len(), RESPONSE_SCALES.len());
    let series_of = |unsafe_at| vec![series(20, unsafe_at)];
    let runs = vec![series_of(None), series_of(Some(10))];
    let first = vec![
        (0..9).map(|v| (v < 4).then_some(2)).collect::<Vec<_>>(),
        (0..9).map(|v| Some(if v < 5 { 2 } else { 8 })).collect(),
    ];
    let tuned = tune_to_target(&mut model, &variants, &runs, &first, 0.5, |_, _| true).unwrap();
    assert_eq!(tuned.len(), 1);
    assert_eq!((tuned[0].scale, tuned[0].within_target), (0.4, true));
    let stored = model.properties()[0].rss_tuning().unwrap();
    assert_eq!(
        (
            stored.response_scale,
            stored.n_safe_runs,
            stored.n_false_alarms,
            stored.n_violating_runs,
            stored.n_predicted
        ),
        (0.4, 1, 0, 1, 1)
    );
    assert!(
        (stored.median_lead_s.unwrap() - 0.8).abs() < 1e-9,
        "{stored:?}"
    );
    let err = tune_to_target(&mut model, &variants[..3], &runs, &first, 0.5, |_, _| true)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("9 response-time scales") && err.contains("3 variants"),
        "{err}"
    );
}
