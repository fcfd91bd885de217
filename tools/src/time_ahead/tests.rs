use super::*;

fn series(risk: &[f64], unsafe_at: Option<usize>, baseline_at: &[usize]) -> RunSeries {
    let n = risk.len();
    RunSeries {
        t: (0..n).map(|i| i as f64 * 0.1).collect(),
        risk: risk.to_vec(),
        unsafe_now: (0..n).map(|i| unsafe_at.is_some_and(|u| i >= u)).collect(),
        baseline_alarm: (0..n).map(|i| baseline_at.contains(&i)).collect(),
        rss_alarm: Vec::new(),
        rule_alarm: Vec::new(),
        rss_tuned_alarm: Vec::new(),
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
fn a_first_alarm_counts_only_before_the_violation() {
    let s = series(&[0.0; 7], Some(5), &[]);
    // Frame 2 (t = 0.2) warns 0.3 s ahead; frame 5 is the violation itself, too late.
    let a = first_alarm_score(Some(2), &s);
    assert_eq!(a.first_alarm_t, Some(0.2));
    assert!((a.lead_s.unwrap() - 0.3).abs() < 1e-12 && !a.false_alarm);
    for late in [Some(5), Some(6), None] {
        let a = first_alarm_score(late, &s);
        assert_eq!(
            (a.first_alarm_t, a.lead_s, a.false_alarm),
            (None, None, false)
        );
    }
    // In a safe run any alarm is false.
    let safe = series(&[0.0; 4], None, &[]);
    assert!(first_alarm_score(Some(3), &safe).false_alarm);
    assert!(!first_alarm_score(None, &safe).false_alarm);
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
    assert!(score.unsafe_from_start);
    // Unsafe from the second frame on: the first frame could have warned, so it is not from the start.
    let later = score_run(
        "r",
        "sc",
        "p",
        &series(&[0.9, 1.0], Some(1), &[]),
        &thresholds(),
    );
    assert!(later.violated && !later.unsafe_from_start);
    assert_eq!(later.alarms["0.7"].first_alarm_t, Some(0.0));
    // A safe run is never unsafe from the start, and the flag is left out of its JSON.
    let safe = score_run(
        "r",
        "sc",
        "p",
        &series(&[0.1, 0.2], None, &[]),
        &thresholds(),
    );
    assert!(!safe.unsafe_from_start);
    let json = serde_json::to_value(&safe).unwrap();
    assert!(json.get("unsafe_from_start").is_none(), "{json}");
    let json = serde_json::to_value(&score).unwrap();
    assert_eq!(json["unsafe_from_start"], serde_json::Value::Bool(true));
    let back: RunScore = serde_json::from_value(json).unwrap();
    assert_eq!(back, score);
}

#[test]
fn summary_matches_a_hand_count() {
    // Three violating runs with leads 1.0, 3.0 and none; two safe runs, one with an alarm.
    let mk = |violated: bool, lead: Option<f64>, false_alarm: bool, from_start: bool| {
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
            unsafe_from_start: from_start,
            alarms: BTreeMap::from([("0.5".to_owned(), alarm)]),
            baseline: alarm,
            max_risk: 0.0,
            rss: None,
            reactive_rule: None,
            rss_tuned: None,
            calibrated: None,
            envelope: Vec::new(),
        };
        (run, alarm)
    };
    let runs = [
        mk(true, Some(3.0), false, false),
        mk(true, Some(1.0), false, false),
        mk(true, None, false, true),
        mk(false, None, true, false),
        mk(false, None, false, false),
    ];
    let s = summarise(runs.iter().map(|(r, a)| (r, a)));
    assert_eq!(s.n_violating_runs, 3);
    assert_eq!(s.n_unsafe_from_start, 1);
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

#[test]
fn the_envelope_gives_the_lead_at_any_threshold_and_the_calibrated_alarm_debounces() {
    // Risk rises 0.1 → 0.4 → 0.2 → 0.6; violation at frame 5 (t = 0.5 s).
    let mut s = series(&[0.1, 0.4, 0.2, 0.6, 0.6, 0.9], Some(5), &[]);
    s.rule_alarm = vec![false, false, true, true, false, false];
    let run = score_run_calibrated("r", "s", "p", &s, &thresholds(), Some((0.5, 2)));
    let expected = [(0.1, 0.5), (0.4, 0.4), (0.6, 0.2)];
    assert_eq!(run.envelope.len(), expected.len());
    for (&(r, l), &(er, el)) in run.envelope.iter().zip(&expected) {
        assert!(r == er && (l - el).abs() < 1e-12, "{:?}", run.envelope);
    }
    // θ = 0.5 for 2 frames: frames 3 and 4 → alarm at frame 4 (t = 0.4), lead 0.1 s.
    let cal = run.calibrated.unwrap();
    assert!((cal.lead_s.unwrap() - 0.1).abs() < 1e-12);
    let rule = run.reactive_rule.unwrap();
    assert!((rule.lead_s.unwrap() - 0.3).abs() < 1e-12);
    assert!(run.rss.is_none(), "RSS was not computed for this series");
}

#[test]
fn curve_and_dominance_match_a_hand_count() {
    let s_violating = series(&[0.2, 0.5, 0.8, 0.9], Some(3), &[2]);
    let s_missed = series(&[0.1, 0.1, 0.3], Some(2), &[]);
    let s_safe_low = series(&[0.1, 0.4, 0.2], None, &[1]);
    let s_safe_high = series(&[0.1, 0.85], None, &[]);
    let runs: Vec<RunScore> = [s_violating, s_missed, s_safe_low, s_safe_high]
        .iter()
        .map(|s| score_run("r", "s", "p", s, &thresholds()))
        .collect();
    let refs: Vec<&RunScore> = runs.iter().collect();
    let c = curve(&refs);
    // Levels: 0.1, 0.2, 0.4, 0.5, 0.8, 0.85.
    let at = |theta: f64| {
        c.iter()
            .find(|p| (p.theta - theta).abs() < 1e-12)
            .copied()
            .unwrap()
    };
    assert_eq!(at(0.1).predicted_pct, 100.0);
    assert_eq!(at(0.1).false_alarm_pct, 100.0);
    let p = at(0.5);
    assert_eq!((p.predicted_pct, p.false_alarm_pct), (50.0, 50.0));
    assert!((p.median_lead_s.unwrap() - 0.2).abs() < 1e-12);
    let p = at(0.8);
    assert_eq!((p.predicted_pct, p.false_alarm_pct), (50.0, 50.0));
    assert_eq!(at(0.85).predicted_pct, 0.0);
    // Baseline: predicts the first run (alarm at frame 2, lead 0.1 s) and false-alarms in one safe run.
    let base = summarise(refs.iter().map(|r| (*r, &r.baseline)));
    assert_eq!(base.predicted_pct, Some(50.0));
    assert_eq!(base.false_alarm_pct, Some(50.0));
    let d = dominance("baseline", &base, &c);
    // At ≤ 50 % false alarms the curve's best point warns of 50 % with a median lead of 0.2 s > 0.1 s.
    assert!(d.dominates, "{d:?}");
    assert_eq!(d.ours.unwrap().predicted_pct, 50.0);
    // A comparator with no false alarm and the same recall is not dominated: no θ reaches 0 % false alarms
    // while warning of anything.
    let strict = Summary {
        false_alarm_pct: Some(0.0),
        ..base
    };
    assert!(!dominance("strict", &strict, &c).dominates);
    // The best point within a false-alarm budget: at 50 % the one at θ = 0.5 (50 % warned, lead 0.2 s,
    // longer than θ = 0.8's 0.1 s); at 100 % the lowest θ (both warned); below 50 % no θ, since even the
    // highest level is reached by a safe run.
    assert_eq!(best_within(&c, 50.0).map(|p| p.theta), Some(0.5));
    assert_eq!(best_within(&c, 100.0).map(|p| p.predicted_pct), Some(100.0));
    assert_eq!(best_within(&c, 49.0), None);
    assert_eq!(best_within(&[], 40.0), None);
}

/// The calibration check counts the safe runs alarmed at the calibrated θ (violating runs do not count)
/// and fails only when that count is evidence of a rate above the target.
#[test]
fn calibration_check_counts_safe_runs_alarmed_at_the_calibrated_theta() {
    // Safe runs whose risk peaks at 0.6 alarm at θ = 0.5; those peaking at 0.2 do not.
    let safe = |peak: f64, i: usize| {
        score_run_calibrated(
            &format!("safe-{i}"),
            "s",
            "p",
            &series(&[0.1, peak, 0.1], None, &[]),
            &thresholds(),
            Some((0.5, 1)),
        )
    };
    let violating = score_run_calibrated(
        "v",
        "s",
        "p",
        &series(&[0.1, 0.9, 0.9], Some(2), &[]),
        &thresholds(),
        Some((0.5, 1)),
    );
    let runs_with = |n_alarmed: usize| -> Vec<RunScore> {
        (0..40)
            .map(|i| safe(if i < n_alarmed { 0.6 } else { 0.2 }, i))
            .chain(std::iter::once(violating.clone()))
            .collect()
    };
    // 5 of 40 (12.5 %) at a 10 % target: P(X ≥ 5 | 40, 0.1) ≈ 0.37, consistent.
    let runs = runs_with(5);
    let refs: Vec<&RunScore> = runs.iter().collect();
    let c = calibration_check(&refs, 0.1, 0.95).unwrap();
    assert_eq!((c.n_safe_runs, c.n_false_alarms), (40, 5));
    assert!(c.holds, "{c:?}");
    // 14 of 40 (35 %): P(X ≥ 14 | 40, 0.1) ≈ 2e-5, contradicted.
    let runs = runs_with(14);
    let refs: Vec<&RunScore> = runs.iter().collect();
    let c = calibration_check(&refs, 0.1, 0.95).unwrap();
    assert_eq!((c.n_safe_runs, c.n_false_alarms), (40, 14));
    assert!(!c.holds && c.false_alarm_lower > 0.1, "{c:?}");
    // Runs scored without a calibrated alarm have nothing to check.
    let plain = score_run_calibrated(
        "x",
        "s",
        "p",
        &series(&[0.1], None, &[]),
        &thresholds(),
        None,
    );
    assert!(calibration_check(&[&plain], 0.1, 0.95).is_none());
}

mod resampling {
    use proptest::prelude::*;

    use super::super::*;
    use super::{series, thresholds};

    /// Runs of up to 12 frames whose risks come from a small grid (so that runs tie), each violating at a
    /// random frame or not, with the baseline alarming on random frames.
    fn runs() -> impl Strategy<Value = Vec<RunScore>> {
        let run = (
            prop::collection::vec(0u8..6, 1..12),
            prop::option::of(0usize..12),
            prop::collection::vec(0usize..12, 0..3),
        );
        prop::collection::vec(run, 1..14).prop_map(|runs| {
            runs.into_iter()
                .map(|(levels, unsafe_at, alarms)| {
                    let risk: Vec<f64> = levels.iter().map(|&l| f64::from(l) / 5.0).collect();
                    let unsafe_at = unsafe_at.filter(|&u| u < risk.len());
                    score_run(
                        "r",
                        "s",
                        "p",
                        &series(&risk, unsafe_at, &alarms),
                        &thresholds(),
                    )
                })
                .collect()
        })
    }

    /// Each series scored at the usual thresholds.
    fn scored(series: &[RunSeries]) -> Vec<RunScore> {
        series
            .iter()
            .map(|s| score_run("r", "s", "p", s, &thresholds()))
            .collect()
    }

    /// Each run against the reactive baseline.
    fn against_baseline<'a>(runs: impl Iterator<Item = &'a RunScore>) -> Vec<PairedRun<'a>> {
        runs.filter_map(|r| PairedRun::of(r, |r| Some(&r.baseline)))
            .collect()
    }

    /// The runs, and when `picks` is not empty the resample of them it picks (repeats allowed).
    fn samples<'a>(runs: &'a [RunScore], picks: &[prop::sample::Index]) -> Vec<Vec<&'a RunScore>> {
        let mut samples: Vec<Vec<&RunScore>> = vec![runs.iter().collect()];
        if !picks.is_empty() {
            samples.push(picks.iter().map(|i| &runs[i.index(runs.len())]).collect());
        }
        samples
    }

    proptest! {
        /// The shortcut verdict equals `dominance` on the curve of the same runs, for the runs and for
        /// resamples of them (repeats included).
        #[test]
        fn the_verdict_equals_dominance_on_the_curve(
            runs in runs(),
            picks in prop::collection::vec(any::<prop::sample::Index>(), 0..20),
        ) {
            for sample in samples(&runs, &picks) {
                let summary = summarise(sample.iter().map(|r| (*r, &r.baseline)));
                let want = dominance("baseline", &summary, &curve(&sample)).dominates;
                let paired = against_baseline(sample.iter().copied());
                let refs: Vec<&PairedRun<'_>> = paired.iter().collect();
                prop_assert_eq!(dominates_in(&refs), want);
            }
        }
    }

    /// The run-by-run count from the curve itself: the lowest θ of the curve with at most the
    /// comparator's false-alarm rate (the point whose leads are all at least those of any other
    /// admissible θ), each violating run's lead there read from its envelope and set beside the
    /// comparator's.
    fn run_by_run_on_the_curve(sample: &[&RunScore]) -> RunByRun {
        let summary = summarise(sample.iter().map(|r| (*r, &r.baseline)));
        let budget = summary.false_alarm_pct.unwrap_or(0.0);
        let theta = curve(sample)
            .iter()
            .find(|p| p.false_alarm_pct <= budget + 1e-9)
            .map(|p| p.theta);
        let mut want = RunByRun::default();
        for r in sample.iter().filter(|r| r.violated) {
            let ours = theta.and_then(|theta| {
                r.envelope
                    .iter()
                    .find(|&&(x, _)| x >= theta)
                    .map(|&(_, l)| l)
            });
            want.ours += usize::from(ours.is_some());
            let Some(theirs) = r.baseline.lead_s else {
                continue;
            };
            want.theirs += 1;
            match ours {
                None => want.missed += 1,
                Some(o) if o > theirs + 1e-9 => want.earlier += 1,
                Some(o) if o < theirs - 1e-9 => want.later += 1,
                Some(_) => want.same += 1,
            }
        }
        want
    }

    proptest! {
        /// The run-by-run shortcut equals the count made from the curve, for the runs and for resamples
        /// of them (repeats included).
        #[test]
        fn the_run_by_run_count_equals_the_curve_s(
            runs in runs(),
            picks in prop::collection::vec(any::<prop::sample::Index>(), 0..20),
        ) {
            for sample in samples(&runs, &picks) {
                let paired = against_baseline(sample.iter().copied());
                let refs: Vec<&PairedRun<'_>> = paired.iter().collect();
                prop_assert_eq!(run_by_run_in(&refs), run_by_run_on_the_curve(&sample));
            }
        }
    }

    proptest! {
        /// The lead intervals' shortcut — each budget's point found from the safe runs' highest risks and
        /// the violating runs' envelopes — equals the median lead of the curve's own point within the
        /// budget (`at_budgets` on `curve`; 0 s where it has none or warns of none), for the runs and for
        /// resamples of them (repeats included).
        #[test]
        fn the_budget_leads_equal_the_curve_s(
            runs in runs(),
            picks in prop::collection::vec(any::<prop::sample::Index>(), 0..20),
        ) {
            use super::super::spread::{allowed_false_alarms, median_leads_within};
            for sample in samples(&runs, &picks) {
                let want: Vec<f64> = at_budgets(&curve(&sample))
                    .iter()
                    .map(|b| b.point.and_then(|p| p.median_lead_s).unwrap_or(0.0))
                    .collect();
                let violating: Vec<&RunScore> =
                    sample.iter().copied().filter(|r| r.violated).collect();
                let safe: Vec<f64> = sample
                    .iter()
                    .filter(|r| !r.violated)
                    .map(|r| r.max_risk)
                    .collect();
                let allowed = allowed_false_alarms(&FALSE_ALARM_BUDGETS_PCT, safe.len());
                prop_assert_eq!(median_leads_within(&violating, &safe, &allowed), want);
            }
        }
    }

    /// The safe runs a budget lets alarm, by hand: of 7, 5 % and 10 % allow none (1 is 14.3 %), 20 %
    /// one, 40 % two (3 would be 42.9 %); of 10, exactly 4 at 40 %; with none, none.
    #[test]
    fn the_false_alarms_a_budget_allows() {
        use super::super::spread::allowed_false_alarms;
        assert_eq!(
            allowed_false_alarms(&FALSE_ALARM_BUDGETS_PCT, 7),
            [0, 0, 1, 2]
        );
        assert_eq!(
            allowed_false_alarms(&FALSE_ALARM_BUDGETS_PCT, 10),
            [0, 1, 2, 4]
        );
        assert_eq!(
            allowed_false_alarms(&FALSE_ALARM_BUDGETS_PCT, 0),
            [0, 0, 0, 0]
        );
    }

    /// Runs that are all alike give the same curve in every resample, so each interval is the point
    /// itself; runs that differ give an interval around it. Without a violating run there is none.
    #[test]
    fn the_lead_interval_is_the_point_when_every_resample_is_the_same() {
        // Three violating runs, each warned 0.3 s ahead (risk 0.9 from frame 6, the violation at frame 9),
        // and five safe runs reaching 0.2.
        let alike = scored(&[
            series(
                &[0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.9, 0.9, 0.9, 1.0],
                Some(9),
                &[],
            ),
            series(
                &[0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.9, 0.9, 0.9, 1.0],
                Some(9),
                &[],
            ),
            series(
                &[0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.9, 0.9, 0.9, 1.0],
                Some(9),
                &[],
            ),
            series(&[0.1, 0.2, 0.1], None, &[]),
            series(&[0.1, 0.2, 0.1], None, &[]),
            series(&[0.1, 0.2, 0.1], None, &[]),
            series(&[0.1, 0.2, 0.1], None, &[]),
            series(&[0.1, 0.2, 0.1], None, &[]),
        ]);
        let refs: Vec<&RunScore> = alike.iter().collect();
        let c = Comparison::of(&refs);
        for (b, plain) in c.budgets.iter().zip(at_budgets(&c.curve)) {
            assert_eq!(b.point, plain.point);
            let lead = b
                .point
                .and_then(|p| p.median_lead_s)
                .expect("0.9 keeps to no safe run");
            assert!((lead - 0.3).abs() < 1e-9, "{b:?}");
            assert_eq!(b.lead_interval_s, Some([lead, lead]), "{b:?}");
        }
        // One run warned 0.8 s ahead instead: resamples that draw it two or three times give a median of
        // 0.8 s, those that draw it at most once 0.3 s, so the interval spans both.
        let mut varied = alike.clone();
        varied[0] = scored(&[series(
            &[0.1, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 1.0],
            Some(9),
            &[],
        )])
        .remove(0);
        let refs: Vec<&RunScore> = varied.iter().collect();
        let c = Comparison::of(&refs);
        for b in &c.budgets {
            let [lo, hi] = b.lead_interval_s.expect("a point at every budget");
            assert!((lo - 0.3).abs() < 1e-9 && (hi - 0.8).abs() < 1e-9, "{b:?}");
        }
        // Safe runs only: no lead to spread.
        let refs: Vec<&RunScore> = alike[3..].iter().collect();
        assert!(Comparison::of(&refs)
            .budgets
            .iter()
            .all(|b| b.lead_interval_s.is_none()));
        assert!(lead_intervals(&refs, &FALSE_ALARM_BUDGETS_PCT, 100, 0)
            .iter()
            .all(Option::is_none));
    }

    /// Where the literal verdict and the run-by-run one part ways, by hand. The comparator warns of one
    /// violation of three, 0.5 s ahead; the curve, at its false-alarm rate (none), of all three: that
    /// one 0.6 s ahead, the others 0.1 s ahead. Its median lead (0.1 s) is shorter, so it does not
    /// dominate, but on the one violation the comparator warns of it is earlier.
    #[test]
    fn earlier_on_the_comparator_s_runs_with_a_shorter_median() {
        let runs = scored(&[
            // Risk 0.9 from frame 3 (0.6 s ahead of the violation at frame 9); baseline at frame 4.
            series(
                &[0.1, 0.1, 0.1, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 1.0],
                Some(9),
                &[4],
            ),
            series(
                &[0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.9, 1.0],
                Some(9),
                &[],
            ),
            series(
                &[0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.9, 1.0],
                Some(9),
                &[],
            ),
            series(&[0.1, 0.2, 0.1], None, &[]),
        ]);
        let refs: Vec<&RunScore> = runs.iter().collect();
        let c = Comparison::of(&refs);
        let d = &c.dominance[0];
        assert_eq!(d.comparator, "baseline");
        assert!(!d.dominates, "median 0.1 s against 0.5 s: {d:?}");
        let r = d.run_by_run.expect("computed");
        assert_eq!(
            r,
            RunByRun {
                theirs: 1,
                ours: 3,
                earlier: 1,
                same: 0,
                later: 0,
                missed: 0
            }
        );
        assert!(r.earlier_run_by_run());
        // Every resample draws the one run the comparator warns of or not; either way the curve warns of
        // at least as many, earlier on the comparator's (or the comparator warns of none).
        assert_eq!(d.run_by_run_share, Some(1.0));
        assert!(d.resampled_share.is_some_and(|s| s < 1.0), "{d:?}");
    }

    /// The run-by-run rule: at least as many warned, and more of the comparator's earlier than later or
    /// missed; a same-frame warning counts for neither side; a comparator that warns of nothing is
    /// beaten by any warning.
    #[test]
    fn earlier_run_by_run_needs_more_earlier_than_later_or_missed() {
        let r = |theirs, ours, earlier, same, later, missed| RunByRun {
            theirs,
            ours,
            earlier,
            same,
            later,
            missed,
        };
        assert!(r(4, 4, 3, 0, 1, 0).earlier_run_by_run());
        assert!(
            !r(4, 4, 2, 0, 1, 1).earlier_run_by_run(),
            "2 earlier, 2 not"
        );
        assert!(
            !r(4, 4, 0, 4, 0, 0).earlier_run_by_run(),
            "all on the same frame"
        );
        assert!(r(4, 4, 1, 3, 0, 0).earlier_run_by_run());
        assert!(!r(4, 3, 3, 0, 0, 1).earlier_run_by_run(), "fewer warned");
        assert!(r(0, 1, 0, 0, 0, 0).earlier_run_by_run());
        assert!(!r(0, 0, 0, 0, 0, 0).earlier_run_by_run());
    }

    /// A hand-made case: the curve warns of both violations 0.3 s ahead before any safe run alarms, the
    /// comparator of one, 0.1 s ahead. It dominates on the runs and in every resample that keeps a
    /// violation the curve warns of; the share is seeded, so it repeats.
    #[test]
    fn a_clear_win_holds_in_every_resample() {
        let runs = scored(&[
            series(&[0.2, 0.8, 0.8, 0.9, 1.0], Some(4), &[3]),
            series(&[0.2, 0.8, 0.8, 0.9, 1.0], Some(4), &[]),
            series(&[0.1, 0.2, 0.1], None, &[]),
            series(&[0.1, 0.3, 0.1], None, &[1]),
        ]);
        let paired = against_baseline(runs.iter());
        let share = dominance_shares(&paired, 200, 7).unwrap().0;
        // A resample whose violating runs are both the unwarned-by-the-baseline one still dominates (the
        // baseline then warns of none); every resample does.
        assert_eq!(share, 1.0);
        assert_eq!(dominance_shares(&paired, 200, 7).map(|s| s.0), Some(share));
        assert_eq!(
            dominance_shares(&paired[2..], 200, 7),
            None,
            "no violating run"
        );
    }

    /// The resample count: 1,000 up to 10,000 runs, then as many as keep the draws to 10⁷, at least 100.
    #[test]
    fn large_batches_draw_fewer_resamples() {
        assert_eq!(resamples_for(0), 1000);
        assert_eq!(resamples_for(10_000), 1000);
        assert_eq!(resamples_for(20_000), 500);
        assert_eq!(resamples_for(100_000), 100);
        assert_eq!(resamples_for(1_000_000), 100);
    }

    /// A coin flip: two violating runs, one warned earlier by the curve and one by the comparator, so a
    /// resample's verdict depends on which it draws; the share is neither 0 nor 1, and repeats.
    #[test]
    fn a_tie_is_split_across_resamples() {
        let runs = scored(&[
            // The curve rises 0.4 s ahead; the comparator 0.1 s ahead.
            series(&[0.1, 0.9, 0.9, 0.9, 0.9, 1.0], Some(5), &[4]),
            // The curve rises 0.1 s ahead; the comparator 0.4 s ahead.
            series(&[0.1, 0.1, 0.1, 0.1, 0.9, 1.0], Some(5), &[1]),
            series(&[0.1, 0.2], None, &[]),
        ]);
        let paired = against_baseline(runs.iter());
        let share = dominance_shares(&paired, 400, 1).unwrap().0;
        // Draws of the first run twice dominate, of the second twice do not, one of each ties the
        // medians (not longer): about a quarter.
        assert!((0.15..0.35).contains(&share), "{share}");
        assert_eq!(dominance_shares(&paired, 400, 1).map(|s| s.0), Some(share));
    }
}

#[test]
fn the_calibrated_alarm_is_earlier_only_with_as_much_recall_no_more_false_alarms_and_a_longer_lead()
{
    let s = |pred: f64, fa: f64, lead: Option<f64>| Summary {
        n_violating_runs: 10,
        n_unsafe_from_start: 0,
        predicted_pct: Some(pred),
        median_lead_s: lead,
        max_lead_s: lead,
        n_safe_runs: 100,
        false_alarm_pct: Some(fa),
    };
    let rss = s(100.0, 12.0, Some(1.35));
    assert!(calibrated_is_earlier(&s(100.0, 6.6, Some(1.8)), &rss));
    assert!(!calibrated_is_earlier(&s(90.0, 6.6, Some(1.8)), &rss));
    assert!(!calibrated_is_earlier(&s(100.0, 13.0, Some(1.8)), &rss));
    assert!(!calibrated_is_earlier(&s(100.0, 6.6, Some(1.35)), &rss));
    assert!(calibrated_is_earlier(
        &s(10.0, 0.0, Some(0.1)),
        &s(0.0, 0.0, None)
    ));
}

#[test]
fn leads_that_differ_only_in_rounding_are_equal() {
    // The same 0.6 s lead taken from two runs' frame times: 17.5 − 16.9 and 8.3 − 7.7 differ in their last
    // bits, and so do the same leads on Unix times such as an Apollo record's.
    let (a, b) = (17.5 - 16.9, 8.3 - 7.7);
    assert_ne!(a, b);
    let (ua, ub) = (
        (1.7e9 + 17.5) - (1.7e9 + 16.9),
        (1.7e9 + 8.3) - (1.7e9 + 7.7),
    );
    for (x, y) in [(a, b), (b, a), (ua, 0.6), (0.6, ua), (ua, ub), (ub, ua)] {
        assert!(!longer_lead(Some(x), Some(y)), "{x} against {y}");
    }
    // One frame is longer, whatever the rounding.
    assert!(longer_lead(Some(0.7), Some(a)));
    assert!(longer_lead(Some((1.7e9 + 17.5) - (1.7e9 + 16.8)), Some(ua)));
    assert!(!longer_lead(Some(b), Some(0.7)));
    assert!(longer_lead(Some(0.0), None));
    assert!(!longer_lead(None, Some(0.0)));
}

#[test]
fn a_median_lead_equal_but_for_rounding_does_not_dominate() {
    // Two violating runs and no safe run. The curve warns of the first only, 17.5 − 16.9 s ahead; the
    // baseline of the second only, 8.3 − 7.7 s ahead: the same 0.6 s but for the last bits (the curve's
    // reads longer), so the curve does not dominate, by `dominance` on the curve and by the shortcut the
    // resamples use.
    let run = |t: [f64; 3], risk: [f64; 3], baseline_at: Option<usize>| RunSeries {
        t: t.to_vec(),
        risk: risk.to_vec(),
        unsafe_now: vec![false, false, true],
        baseline_alarm: (0..3).map(|i| Some(i) == baseline_at).collect(),
        rss_alarm: Vec::new(),
        rule_alarm: Vec::new(),
        rss_tuned_alarm: Vec::new(),
    };
    let runs: Vec<RunScore> = [
        run([0.0, 16.9, 17.5], [0.0, 0.9, 1.0], None),
        run([0.0, 7.7, 8.3], [0.0, 0.0, 1.0], Some(1)),
    ]
    .iter()
    .map(|s| score_run("r", "s", "p", s, &thresholds()))
    .collect();
    let refs: Vec<&RunScore> = runs.iter().collect();
    let base = summarise(refs.iter().map(|r| (*r, &r.baseline)));
    assert_eq!(base.median_lead_s, Some(8.3 - 7.7));
    let verdict = dominance("baseline", &base, &curve(&refs));
    let ours = verdict.ours.expect("a point within 0 % false alarms");
    assert_eq!(ours.median_lead_s, Some(17.5 - 16.9));
    assert!(ours.median_lead_s > base.median_lead_s);
    assert!(!verdict.dominates, "{verdict:?}");
    let paired: Vec<PairedRun<'_>> = refs
        .iter()
        .filter_map(|r| PairedRun::of(r, |r| Some(&r.baseline)))
        .collect();
    let paired_refs: Vec<&PairedRun<'_>> = paired.iter().collect();
    assert!(!dominates_in(&paired_refs));
}
