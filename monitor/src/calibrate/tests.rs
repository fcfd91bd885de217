use super::*;

/// P(X ≤ k) for X ~ Binomial(n, p), summed term by term (an independent route to the bound).
fn binomial_cdf(k: usize, n: usize, p: f64) -> f64 {
    let mut term = (1.0 - p).powi(n as i32); // P(X = 0)
    let mut sum = term;
    for i in 1..=k {
        term *= (n - i + 1) as f64 / i as f64 * p / (1.0 - p);
        sum += term;
    }
    sum
}

/// The lower bound: closed forms at k = 1 and k = n, the binomial definition P(X ≥ k | n, L) = 1 − c,
/// and the mirror image of the upper bound.
#[test]
fn clopper_pearson_lower_matches_closed_forms_and_the_binomial_definition() {
    assert_eq!(clopper_pearson_lower(0, 50, 0.95), 0.0);
    // A confidence that is not a probability (a hand-edited settings file) gives the vacuous bounds, not
    // a panic in the Beta quantile.
    for c in [f64::NAN, -0.5, 5.0] {
        assert_eq!(clopper_pearson_lower(3, 10, c), 0.0);
        assert_eq!(clopper_pearson_upper(3, 10, c), 1.0);
    }
    assert_eq!(clopper_pearson_lower(3, 0, 0.95), 0.0);
    for n in [1usize, 7, 20, 160] {
        // k = n: Beta(n, 1), whose quantile at 0.05 is 0.05^(1/n).
        let want = 0.05f64.powf(1.0 / n as f64);
        assert!((clopper_pearson_lower(n, n, 0.95) - want).abs() < 1e-9);
        // k = 1: Beta(1, n), whose quantile at 0.05 is 1 − 0.95^(1/n).
        let want = 1.0 - 0.95f64.powf(1.0 / n as f64);
        assert!((clopper_pearson_lower(1, n, 0.95) - want).abs() < 1e-9);
    }
    for (k, n, c) in [(5usize, 40usize, 0.95), (63, 160, 0.95), (12, 100, 0.9)] {
        let lower = clopper_pearson_lower(k, n, c);
        let tail = 1.0 - binomial_cdf(k - 1, n, lower);
        assert!((tail - (1.0 - c)).abs() < 1e-7, "k {k} n {n}: tail {tail}");
        let mirror = 1.0 - clopper_pearson_upper(n - k, n, c);
        assert!((lower - mirror).abs() < 1e-9);
    }
}

/// New safe runs contradict a calibration only when even the lower bound of their false-alarm rate is
/// above the target.
#[test]
fn a_calibration_check_fails_only_when_the_lower_bound_passes_the_target() {
    // 63 of 160 (39 %): far above a 10 % target.
    let c = CalibrationCheck::new(63, 160, 0.1, 0.95);
    assert!(!c.holds && c.false_alarm_lower > 0.3);
    assert!(c.describe().contains("does not hold"), "{}", c.describe());
    assert!(c.describe().contains("63 of 160"));
    assert!(
        c.describe()
            .contains("one of the 5 % the bound misses by chance"),
        "{}",
        c.describe()
    );
    // 14 of 100 (14 %): above the target, but 14 in 100 is not unlikely at 10 % (P(X ≥ 14) ≈ 0.12).
    let c = CalibrationCheck::new(14, 100, 0.1, 0.95);
    assert!(c.holds, "{c:?}");
    assert!((1.0 - binomial_cdf(13, 100, 0.1)) > 0.05);
    // 17 of 100: P(X ≥ 17 | 10 %) ≈ 0.02 < 5 %, so it does not hold.
    assert!((1.0 - binomial_cdf(16, 100, 0.1)) < 0.05);
    assert!(!CalibrationCheck::new(17, 100, 0.1, 0.95).holds);
    // No safe run: nothing to contradict.
    assert!(CalibrationCheck::new(0, 0, 0.1, 0.95).holds);
}

#[test]
fn clopper_pearson_matches_closed_forms_and_the_binomial_definition() {
    // k = 0: 1 − (1 − c)^(1/n).
    for n in [1, 10, 29, 100, 1000] {
        let want = 1.0 - 0.05f64.powf(1.0 / n as f64);
        assert!(
            (clopper_pearson_upper(0, n, 0.95) - want).abs() < 1e-9,
            "n = {n}"
        );
    }
    // k = n − 1: c^(1/n).
    for n in [2, 10, 50] {
        let want = 0.95f64.powf(1.0 / n as f64);
        assert!((clopper_pearson_upper(n - 1, n, 0.95) - want).abs() < 1e-9);
    }
    // In general the bound p solves P(X ≤ k; n, p) = 1 − c.
    for (k, n, c) in [
        (5, 100, 0.95),
        (27, 413, 0.95),
        (3, 50, 0.99),
        (10, 40, 0.9),
    ] {
        let p = clopper_pearson_upper(k, n, c);
        assert!(
            (binomial_cdf(k, n, p) - (1.0 - c)).abs() < 1e-7,
            "{k}/{n}: {p}"
        );
    }
    // Hand value: 0 of 29 at 95 % is just under 10 %, which is why 29 safe runs are the minimum.
    assert!(clopper_pearson_upper(0, 29, 0.95) < 0.1);
    assert!(clopper_pearson_upper(0, 28, 0.95) > 0.1);
    assert_eq!(clopper_pearson_upper(3, 3, 0.95), 1.0);
    assert_eq!(clopper_pearson_upper(0, 0, 0.95), 1.0);
}

fn times(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64 * 0.1).collect()
}

#[test]
fn theta_sits_above_the_allowed_number_of_safe_runs() {
    // 100 safe runs whose highest risk is i/100, each held for one frame in the middle of the run.
    let t = times(10);
    let safe: Vec<Vec<f64>> = (0..100)
        .map(|i| {
            let mut r = vec![0.0; 10];
            r[5] = f64::from(i) / 100.0;
            r
        })
        .collect();
    // Ten violating runs ramping to 0.98 before their violation at frame 9.
    let violating: Vec<Vec<f64>> = (0..10)
        .map(|_| {
            (0..10)
                .map(|k| 0.98 * k as f64 / 8.0)
                .map(|x| x.min(0.98))
                .collect()
        })
        .collect();
    let mut runs: Vec<CalibrationRun<'_>> = safe
        .iter()
        .map(|r| CalibrationRun {
            group: "",
            t: &t,
            risk: r,
            violation: None,
        })
        .collect();
    runs.extend(violating.iter().map(|r| CalibrationRun {
        group: "",
        t: &t,
        risk: r,
        violation: Some(9),
    }));
    let cfg = CalibrateConfig {
        target_false_alarm: 0.1,
        confidence: 0.95,
        debounce_frames: vec![1],
        horizon_steps: None,
        per_group: false,
    };
    let c = calibrate(&[], &runs, &cfg).unwrap();
    // The largest k with CP(k, 100) ≤ 10 % is 5 (CP(5, 100) ≈ 10.3 % > 10 % → k = 4).
    let k_max = (0..100)
        .take_while(|&k| clopper_pearson_upper(k, 100, 0.95) <= 0.1)
        .last()
        .unwrap();
    assert_eq!(k_max, 4);
    assert_eq!(c.n_false_alarms, k_max);
    assert!(c.false_alarm_upper <= 0.1);
    // θ halfway between the 5th highest safe score (0.95) and the next level seen (0.96).
    assert!((c.theta - 0.955).abs() < 1e-12, "{}", c.theta);
    assert_eq!((c.n_predicted, c.n_violating_runs), (10, 10));
    // Too few safe runs: named with the number needed.
    let err = calibrate(&[], &runs[..20], &cfg).unwrap_err();
    assert!(
        matches!(err, CalibrateError::TooFewSafeRuns { needed: 29, .. }),
        "{err}"
    );
}

#[test]
fn a_debounce_ignores_one_frame_spikes() {
    let t = times(20);
    // Safe runs: one-frame spikes to 0.9 (noise), otherwise 0.1.
    let safe: Vec<Vec<f64>> = (0..60)
        .map(|i| {
            let mut r = vec![0.1; 20];
            r[i % 20] = 0.9;
            r
        })
        .collect();
    // Violating runs: 0.8 held from frame 10 to the violation at 19.
    let violating: Vec<Vec<f64>> = (0..10)
        .map(|_| (0..20).map(|k| if k >= 10 { 0.8 } else { 0.1 }).collect())
        .collect();
    let runs: Vec<CalibrationRun<'_>> = safe
        .iter()
        .map(|r| (r, None))
        .chain(violating.iter().map(|r| (r, Some(19))))
        .map(|(r, violation)| CalibrationRun {
            group: "",
            t: &t,
            risk: r,
            violation,
        })
        .collect();
    let cfg = CalibrateConfig {
        target_false_alarm: 0.1,
        confidence: 0.95,
        debounce_frames: vec![1, 2],
        horizon_steps: None,
        per_group: false,
    };
    let c = calibrate(&[], &runs, &cfg).unwrap();
    // Without a debounce θ must clear 0.9 and nothing is warned of; two frames see through the spikes.
    assert_eq!(c.debounce_frames, 2);
    assert_eq!(c.n_predicted, 10);
    assert_eq!(c.n_false_alarms, 0);
    assert_eq!(first_alarm(&violating[0], c.theta, 2), Some(11));
    assert!(c.check().is_ok());
}

/// Runs on frames 0.0, 0.1, ... s, each `(risk, violation)`.
fn runs_of<'a>(t: &'a [f64], series: &'a [(Vec<f64>, Option<usize>)]) -> Vec<CalibrationRun<'a>> {
    series
        .iter()
        .map(|(risk, violation)| CalibrationRun {
            group: "",
            t,
            risk,
            violation: *violation,
        })
        .collect()
}

#[test]
fn the_debounce_is_chosen_on_the_selection_runs_and_theta_bounded_with_the_full_confidence() {
    let t = times(20);
    // Selection runs: safe runs with one-frame spikes to 0.9, violating runs holding 0.8 from frame 10 to
    // their violation at 19. One frame cannot warn (θ must clear 0.9); 2 frames warn at frame 11 (lead
    // 0.8 s), 3 at 12 (0.7 s), 5 at 14 (0.5 s): the choice is 2.
    let selection: Vec<(Vec<f64>, Option<usize>)> = (0..60)
        .map(|i| {
            let mut r = vec![0.1; 20];
            r[i % 20] = 0.9;
            (r, None)
        })
        .chain((0..10).map(|_| {
            let r = (0..20).map(|k| if k >= 10 { 0.8 } else { 0.1 }).collect();
            (r, Some(19))
        }))
        .collect();
    // Calibration runs: 100 safe runs holding i/100 on frames 4..=8, and violating runs with a one-frame
    // spike to 0.99 at frame 8 before their violation at 9 (here one frame would warn, two would not —
    // the choice must not look).
    let calibration: Vec<(Vec<f64>, Option<usize>)> = (0..100)
        .map(|i| {
            let mut r = vec![0.0; 12];
            for x in &mut r[4..=8] {
                *x = f64::from(i) / 100.0;
            }
            (r, None)
        })
        .chain((0..10).map(|_| {
            let mut r = vec![0.0; 12];
            r[8] = 0.99;
            (r, Some(9))
        }))
        .collect();
    let (selection, calibration) = (runs_of(&t, &selection), runs_of(&t, &calibration));
    let cfg = CalibrateConfig {
        target_false_alarm: 0.1,
        confidence: 0.95,
        debounce_frames: vec![1, 2, 3, 5],
        horizon_steps: None,
        per_group: false,
    };
    assert_eq!(
        select_debounce(&selection, &cfg.debounce_frames, &cfg),
        Ok(2)
    );
    let c = calibrate(&selection, &calibration, &cfg).unwrap();
    // By hand (binomial sum, bisection): the one-sided 95 % Clopper–Pearson bounds for 100 runs are
    // 0.0892 for 4 false alarms and 0.1023 for 5, so 4 of the 100 safe runs may alarm: θ lies halfway
    // between the 5th highest score 0.95 and the next level 0.96.
    assert_eq!(c.debounce_frames, 2);
    assert!((c.theta - 0.955).abs() < 1e-12, "{}", c.theta);
    assert_eq!((c.n_false_alarms, c.n_safe_runs), (4, 100));
    assert!(
        (c.false_alarm_upper - 0.0892).abs() < 1e-4,
        "{}",
        c.false_alarm_upper
    );
    assert!((c.confidence - 0.95).abs() < 1e-15);
    assert_eq!((c.n_predicted, c.n_violating_runs), (0, 10));
    // Without selection runs the four options split the 5 %: at 98.75 % the bounds are 0.0942 for 3
    // and 0.1088 for 4, so only 3 may alarm (θ = 0.965), and one frame, which warns here, is kept.
    let split = calibrate(&[], &calibration, &cfg).unwrap();
    assert_eq!(split.debounce_frames, 1);
    assert!((split.theta - 0.965).abs() < 1e-12, "{}", split.theta);
    assert_eq!(split.n_false_alarms, 3);
    assert_eq!(split.n_predicted, 10);
    // That confidence is the one the few-runs note is to speak of: 98.75 % here, and 3 alarms allowed.
    let placed = placement_confidence(0.95, cfg.debounce_frames.len(), false);
    assert!((placed - 0.9875).abs() < 1e-15, "{placed}");
    assert_eq!(max_false_alarms(100, 0.1, placed), Some(3));
    assert_eq!(
        placement_confidence(0.95, cfg.debounce_frames.len(), true),
        0.95
    );
    assert_eq!(placement_confidence(0.95, 1, false), 0.95);
    // A single option has nothing to choose: the selection runs are not needed.
    let single = CalibrateConfig {
        debounce_frames: vec![3],
        ..cfg.clone()
    };
    let c3 = calibrate(&selection[..3], &calibration, &single).unwrap();
    assert_eq!((c3.debounce_frames, c3.n_false_alarms), (3, 4));
    // Too few safe selection runs to choose on: said to be about the selection runs.
    let err = calibrate(&selection[60..], &calibration, &cfg).unwrap_err();
    assert!(err.to_string().contains("selection runs"), "{err}");
}

/// Per group: θ is the highest of the groups' own θ at the split confidence, and then every group's
/// false-alarm count meets the target at that confidence (checked with the binomial definition), where
/// the pooled θ leaves the riskier group far above it.
#[test]
fn a_per_group_calibration_bounds_every_group() {
    let t = times(4);
    // Group "calm": 100 safe runs peaking at 0.001 .. 0.100; group "busy": 100 safe runs peaking at
    // 0.501 .. 0.600; ten violating runs in "busy" reaching 0.9.
    let peak = |x: f64| vec![0.0, x, x / 2.0, 0.0];
    let calm: Vec<Vec<f64>> = (1..=100).map(|i| peak(f64::from(i) / 1000.0)).collect();
    let busy: Vec<Vec<f64>> = (1..=100)
        .map(|i| peak(0.5 + f64::from(i) / 1000.0))
        .collect();
    let violating: Vec<Vec<f64>> = (0..10).map(|_| vec![0.2, 0.9, 0.9, 0.9]).collect();
    let mut runs: Vec<CalibrationRun<'_>> = Vec::new();
    for (group, set, violation) in [
        ("calm", &calm, None),
        ("busy", &busy, None),
        ("busy", &violating, Some(3)),
    ] {
        runs.extend(set.iter().map(|r| CalibrationRun {
            group,
            t: &t,
            risk: r,
            violation,
        }));
    }
    let pooled_cfg = CalibrateConfig {
        target_false_alarm: 0.1,
        confidence: 0.95,
        debounce_frames: vec![1],
        horizon_steps: None,
        per_group: false,
    };
    let cfg = CalibrateConfig {
        per_group: true,
        ..pooled_cfg.clone()
    };
    let pooled = calibrate(&[], &runs, &pooled_cfg).unwrap();
    let per_group = calibrate(&[], &runs, &cfg).unwrap();
    // Two groups: each bounded at 1 − 0.05/2.
    let split = 0.975;
    let own = |g: &str| {
        let mine: Vec<CalibrationRun<'_>> = runs.iter().filter(|r| r.group == g).copied().collect();
        calibrate(
            &[],
            &mine,
            &CalibrateConfig {
                confidence: split,
                ..pooled_cfg.clone()
            },
        )
        .unwrap()
        .theta
    };
    assert_eq!(per_group.theta, own("calm").max(own("busy")));
    assert_eq!(per_group.theta, own("busy"));
    for g in ["calm", "busy"] {
        let safe: Vec<&CalibrationRun<'_>> = runs
            .iter()
            .filter(|r| r.group == g && r.violation.is_none())
            .collect();
        let k = safe
            .iter()
            .filter(|r| r.risk.iter().any(|&x| x >= per_group.theta))
            .count();
        // The bound at the split confidence meets the target: P(X ≤ k | n, 10 %) ≤ 1 − 0.975.
        assert!(binomial_cdf(k, safe.len(), 0.1) <= 1.0 - split, "{g}: {k}");
        assert!(clopper_pearson_upper(k, safe.len(), split) <= per_group.false_alarm_upper + 1e-12);
    }
    assert!(per_group.false_alarm_upper <= 0.1);
    // The pooled θ counts the calm runs in: more than the target's share of the busy ones alarm.
    let busy_alarms = busy
        .iter()
        .filter(|r| r.iter().any(|&x| x >= pooled.theta))
        .count();
    assert!(busy_alarms > 10, "{busy_alarms}");
    assert!(pooled.theta < per_group.theta);
    assert_eq!(per_group.n_safe_runs, 200);
    assert_eq!(per_group.n_predicted, 10);
    // With one group the two agree.
    let one: Vec<CalibrationRun<'_>> = runs
        .iter()
        .map(|r| CalibrationRun { group: "all", ..*r })
        .collect();
    assert_eq!(
        calibrate(&[], &one, &cfg).unwrap(),
        calibrate(&[], &one, &pooled_cfg).unwrap()
    );
    // A group too small for the target is named.
    let few: Vec<CalibrationRun<'_>> = runs
        .iter()
        .filter(|r| r.group == "busy")
        .copied()
        .chain(runs.iter().filter(|r| r.group == "calm").take(20).copied())
        .collect();
    let err = calibrate(&[], &few, &cfg).unwrap_err();
    assert!(err.to_string().contains("`calm`"), "{err}");
}

/// The most alarms a calibration allows, by the binomial tail instead of the Beta quantile: the bound
/// for k alarms in n runs is at most the target exactly when P(X ≤ k | n, target) ≤ 1 − confidence.
fn allowed_by_binomial_tail(n: usize, target: f64, confidence: f64) -> Option<usize> {
    (0..n).rfind(|&k| binomial_cdf(k, n, target) <= 1.0 - confidence + 1e-12)
}

#[test]
fn the_alarms_a_calibration_allows_match_the_binomial_tail() {
    for (target, confidence) in [(0.1, 0.95), (0.05, 0.9), (0.2, 0.99)] {
        for n in 1..400 {
            assert_eq!(
                max_false_alarms(n, target, confidence),
                allowed_by_binomial_tail(n, target, confidence),
                "n {n}, target {target}, confidence {confidence}"
            );
        }
    }
    // By hand (exact binomial sums): at 10 % and 95 %, 75 safe runs allow 2 alarms, 125 allow 6, 200
    // allow 12; fewer than 29 allow none.
    assert_eq!(max_false_alarms(75, 0.1, 0.95), Some(2));
    assert_eq!(max_false_alarms(125, 0.1, 0.95), Some(6));
    assert_eq!(max_false_alarms(200, 0.1, 0.95), Some(12));
    assert_eq!(max_false_alarms(28, 0.1, 0.95), None);
}

#[test]
fn the_runs_needed_for_a_share_of_the_target_are_the_first_that_reach_it() {
    // Share 0: the fewest runs that allow a calibration at all (CP(0, 29) < 10 % < CP(0, 28)).
    assert_eq!(safe_runs_for_share(0.1, 0.95, 0.0), Some(29));
    // Half of 10 %: 116 runs allow 6 alarms (5.2 %); every smaller n allows less than 5 %.
    assert_eq!(safe_runs_for_share(0.1, 0.95, 0.5), Some(116));
    for n in 1..116 {
        let k = allowed_by_binomial_tail(n, 0.1, 0.95);
        assert!(k.is_none_or(|k| (k as f64) < 0.05 * n as f64), "n {n}");
    }
    assert_eq!(safe_runs_for_share(0.1, 0.95, 1.0), None);
}

#[test]
fn the_runs_any_calibration_needs_are_the_scan_s_and_the_bound_s() {
    for (target, confidence) in [
        (0.1, 0.95),
        (0.05, 0.9),
        (0.2, 0.99),
        (0.01, 0.95),
        (0.5, 0.5),
    ] {
        assert_eq!(
            Some(safe_runs_for_any(target, confidence)),
            safe_runs_for_share(target, confidence, 0.0),
            "target {target}, confidence {confidence}"
        );
    }
    // Beyond the scan's reach: one in a million at 95 % needs 2,995,731 runs, the first n with
    // 1 − 0.05^(1/n) ≤ 10⁻⁶ (by hand: ln 0.05 / ln(1 − 10⁻⁶) = 2,995,730.78; at 2,995,730 the bound is
    // 1.00000026 · 10⁻⁶, at 2,995,731 it is 0.99999993 · 10⁻⁶).
    assert_eq!(safe_runs_for_any(1e-6, 0.95), 2_995_731);
    // A target no set of runs could show returns at once, saturated.
    assert!(safe_runs_for_any(1e-300, 0.95) > 1_000_000_000_000);
    assert_eq!(safe_runs_for_any(0.0, 0.95), 1);
    assert_eq!(safe_runs_for_any(0.1, 1.0), 1);
}

#[test]
fn few_calibration_runs_are_named_and_enough_are_not() {
    let note = few_runs_note(75, 0.1, 0.95).expect("75 runs let through 2.7 %");
    assert!(
        note.contains("the 95 % bound at 10 % lets at most 2 of them alarm (2.7 %)"),
        "{note}"
    );
    assert!(note.contains("116 safe runs"), "{note}");
    // At 2.5 %: P(X ≤ 2 | 300, 2.5 %) = 0.019 ≤ 0.05 < P(X ≤ 3) = 0.057, so 2 of 300 (0.7 %).
    let note = few_runs_note(300, 0.025, 0.95).expect("300 runs let through 0.7 %");
    assert!(
        note.contains("the 95 % bound at 2.5 % lets at most 2 of them alarm (0.7 %)"),
        "{note}"
    );
    assert_eq!(few_runs_note(116, 0.1, 0.95), None);
    assert_eq!(few_runs_note(400, 0.1, 0.95), None);
    // 122 safe runs allow 6 alarms (4.9 %), under half of 10 % of 122, but more runs than the 116 that
    // allow half: the dip is the bound's step, and a note saying "only 122 … 116 would allow half" would
    // contradict itself.
    assert_eq!(max_false_alarms(122, 0.1, 0.95), Some(6));
    assert_eq!(few_runs_note(122, 0.1, 0.95), None);
    // Too few for any calibration: that is the calibration's own error, not this note.
    assert_eq!(few_runs_note(20, 0.1, 0.95), None);
}

#[test]
fn rates_read_as_percentages_to_their_first_digits() {
    assert_eq!(percent_words(0.1), "10 %");
    assert_eq!(percent_words(0.125), "12.5 %");
    assert_eq!(percent_words(0.01), "1 %");
    assert_eq!(percent_words(0.005), "0.5 %");
    assert_eq!(percent_words(1e-6), "0.0001 %");
    assert_eq!(percent_words(1.234_5e-5), "0.001234 %");
    assert_eq!(percent_words(0.0), "0 %");
    assert_eq!(percent_words(0.95), "95 %");
    assert_eq!(percent_words(0.9875), "98.75 %");
    assert_eq!(percent_words(1.0 / 3.0), "33.33 %");
}

#[test]
fn the_few_runs_note_is_shown_exactly_below_the_runs_it_names() {
    for (target, confidence) in [(0.1, 0.95), (0.05, 0.95), (0.2, 0.9), (0.1, 0.99)] {
        let needed = safe_runs_for_share(target, confidence, 0.5).expect("within the scan");
        let any = safe_runs_for_any(target, confidence);
        for n in 1..=4 * needed {
            let note = few_runs_note(n, target, confidence);
            let expected = n >= any && n < needed;
            assert_eq!(
                note.is_some(),
                expected,
                "n {n}, target {target}, confidence {confidence}: {note:?}"
            );
            if let Some(note) = note {
                assert!(
                    note.contains(&format!("only {n} safe calibration runs")),
                    "{note}"
                );
                assert!(
                    note.contains(&format!("{needed} safe runs would allow half")),
                    "{note}"
                );
                // Below the named count the runs do let through less than half the target.
                let k = max_false_alarms(n, target, confidence).expect("calibrable");
                assert!((k as f64) < 0.5 * target * n as f64, "n {n}: {k} allowed");
            }
        }
    }
}
