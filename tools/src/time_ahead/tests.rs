use super::*;

fn series(risk: &[f64], unsafe_at: Option<usize>, baseline_at: &[usize]) -> RunSeries {
    let n = risk.len();
    RunSeries {
        t: (0..n).map(|i| i as f64 * 0.1).collect(),
        risk: risk.to_vec(),
        unsafe_now: (0..n).map(|i| unsafe_at.is_some_and(|u| i >= u)).collect(),
        baseline_alarm: (0..n).map(|i| baseline_at.contains(&i)).collect(),
    }
}

fn thresholds() -> Vec<(String, f64)> {
    [0.3, 0.5, 0.7]
        .iter()
        .map(|&t| (threshold_key(t), t))
        .collect()
}

#[test]
fn violating_run_counts_only_alarms_strictly_before_the_violation() {
    // Risk crosses 0.3 at frame 2 (t=0.2), 0.5 at frame 4 (t=0.4); the violation is at frame 5 (t=0.5),
    // where risk is 1.0: that frame must not count as an alarm for 0.7.
    let s = series(&[0.1, 0.2, 0.35, 0.4, 0.6, 1.0, 1.0], Some(5), &[3]);
    let score = score_run("r", "sc", "p", &s, &thresholds());
    assert!(score.violated);
    assert_eq!(score.violation_t, Some(0.5));
    let a03 = score.alarms["0.3"];
    assert_eq!(a03.first_alarm_t, Some(0.2));
    assert!((a03.lead_s.unwrap() - 0.3).abs() < 1e-12);
    assert!(!a03.false_alarm);
    assert!((score.alarms["0.5"].lead_s.unwrap() - 0.1).abs() < 1e-12);
    assert_eq!(
        score.alarms["0.7"],
        AlarmScore {
            first_alarm_t: None,
            lead_s: None,
            false_alarm: false
        }
    );
    assert!((score.baseline.lead_s.unwrap() - 0.2).abs() < 1e-12);
    assert!((score.max_risk - 0.6).abs() < 1e-12);
}

#[test]
fn safe_run_with_alarm_is_a_false_alarm() {
    let s = series(&[0.1, 0.55, 0.2], None, &[]);
    let score = score_run("r", "sc", "p", &s, &thresholds());
    assert!(!score.violated);
    assert!(score.alarms["0.3"].false_alarm);
    assert!(score.alarms["0.5"].false_alarm);
    assert!(!score.alarms["0.7"].false_alarm);
    assert_eq!(score.alarms["0.5"].lead_s, None);
    assert!(!score.baseline.false_alarm);
}

#[test]
fn violation_on_the_first_frame_cannot_be_predicted() {
    let s = series(&[1.0, 1.0], Some(0), &[0]);
    let score = score_run("r", "sc", "p", &s, &thresholds());
    assert_eq!(score.violation_t, Some(0.0));
    assert!(score
        .alarms
        .values()
        .all(|a| a.first_alarm_t.is_none() && a.lead_s.is_none()));
    assert_eq!(score.baseline.first_alarm_t, None);
}

#[test]
fn summary_matches_a_hand_count() {
    // Three violating runs with leads 1.0, 3.0 and none; two safe runs, one with an alarm.
    let mk = |violated: bool, lead: Option<f64>, false_alarm: bool| {
        let alarm = AlarmScore {
            first_alarm_t: lead.map(|_| 0.0),
            lead_s: lead,
            false_alarm,
        };
        let run = RunScore {
            run_id: String::new(),
            scenario: String::new(),
            property: "p".into(),
            violated,
            violation_t: violated.then_some(5.0),
            alarms: BTreeMap::from([("0.5".to_owned(), alarm)]),
            baseline: alarm,
            max_risk: 0.0,
        };
        (run, alarm)
    };
    let runs = [
        mk(true, Some(3.0), false),
        mk(true, Some(1.0), false),
        mk(true, None, false),
        mk(false, None, true),
        mk(false, None, false),
    ];
    let s = summarise(runs.iter().map(|(r, a)| (r, a)));
    assert_eq!(s.n_violating_runs, 3);
    assert!((s.predicted_pct.unwrap() - 200.0 / 3.0).abs() < 1e-9);
    assert_eq!(s.median_lead_s, Some(2.0));
    assert_eq!(s.max_lead_s, Some(3.0));
    assert_eq!(s.n_safe_runs, 2);
    assert_eq!(s.false_alarm_pct, Some(50.0));
}

#[test]
fn empty_groups_give_null_percentages() {
    let s = summarise(std::iter::empty());
    assert_eq!(s.predicted_pct, None);
    assert_eq!(s.false_alarm_pct, None);
    assert_eq!(s.median_lead_s, None);
}

#[test]
fn median_of_odd_and_even_counts() {
    assert_eq!(median(&[1.0, 2.0, 9.0]), Some(2.0));
    assert_eq!(median(&[1.0, 2.0, 4.0, 9.0]), Some(3.0));
}

#[test]
fn threshold_keys_read_back() {
    for theta in [0.3, 0.5, 0.7, 0.05, 1.0] {
        assert_eq!(threshold_key(theta).parse::<f64>().unwrap(), theta);
    }
    assert_eq!(threshold_key(0.3), "0.3");
}
