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
            t: &t,
            risk: r,
            violation: None,
        })
        .collect();
    runs.extend(violating.iter().map(|r| CalibrationRun {
        t: &t,
        risk: r,
        violation: Some(9),
    }));
    let cfg = CalibrateConfig {
        target_false_alarm: 0.1,
        confidence: 0.95,
        debounce_frames: vec![1],
        horizon_steps: None,
    };
    let c = calibrate(&runs, &cfg).unwrap();
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
    let err = calibrate(&runs[..20], &cfg).unwrap_err();
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
    };
    let c = calibrate(&runs, &cfg).unwrap();
    // Without a debounce θ must clear 0.9 and nothing is warned of; two frames see through the spikes.
    assert_eq!(c.debounce_frames, 2);
    assert_eq!(c.n_predicted, 10);
    assert_eq!(c.n_false_alarms, 0);
    assert_eq!(first_alarm(&violating[0], c.theta, 2), Some(11));
    assert!(c.check().is_ok());
}
