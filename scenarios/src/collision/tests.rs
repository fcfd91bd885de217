use super::*;

fn rect(x: f64, y: f64, heading: f64, l: f64, w: f64) -> Rect {
    Rect {
        centre_x: x,
        centre_y: y,
        heading,
        half_length_m: l / 2.0,
        half_width_m: w / 2.0,
    }
}

#[test]
fn hand_computed_cases() {
    let a = rect(0.0, 0.0, 0.0, 4.0, 2.0);
    assert!(a.overlaps(&rect(3.9, 0.0, 0.0, 4.0, 2.0)));
    assert!(
        a.overlaps(&rect(4.0, 0.0, 0.0, 4.0, 2.0)),
        "touching counts"
    );
    assert!(!a.overlaps(&rect(4.01, 0.0, 0.0, 4.0, 2.0)));
    // A square turned 45°: its corner reaches sqrt(2) from its centre.
    let diamond = rect(
        2.0 + 2f64.sqrt() - 0.01,
        0.0,
        std::f64::consts::FRAC_PI_4,
        2.0,
        2.0,
    );
    assert!(a.overlaps(&diamond));
    let diamond = rect(
        2.0 + 2f64.sqrt() + 0.01,
        0.0,
        std::f64::consts::FRAC_PI_4,
        2.0,
        2.0,
    );
    assert!(!a.overlaps(&diamond));
    // Bounding boxes overlap but a separating axis exists (diagonal thin bars).
    let bar = rect(0.0, 0.0, std::f64::consts::FRAC_PI_4, 6.0, 0.2);
    assert!(!bar.overlaps(&rect(1.6, -1.6, std::f64::consts::FRAC_PI_4, 6.0, 0.2)));
}

/// Second algorithm: point-in-polygon on a dense sample of each rectangle.
fn sampled_overlap(a: &Rect, b: &Rect) -> bool {
    let inside = |r: &Rect, x: f64, y: f64| {
        let (c, s) = (r.heading.cos(), r.heading.sin());
        let (dx, dy) = (x - r.centre_x, y - r.centre_y);
        (dx * c + dy * s).abs() <= r.half_length_m + 1e-9
            && (-dx * s + dy * c).abs() <= r.half_width_m + 1e-9
    };
    let n = 40;
    let sample = |r: &Rect, other: &Rect| {
        let (c, s) = (r.heading.cos(), r.heading.sin());
        (0..=n).any(|i| {
            (0..=n).any(|j| {
                let u = (i as f64 / n as f64 * 2.0 - 1.0) * r.half_length_m;
                let v = (j as f64 / n as f64 * 2.0 - 1.0) * r.half_width_m;
                inside(
                    other,
                    r.centre_x + u * c - v * s,
                    r.centre_y + u * s + v * c,
                )
            })
        })
    };
    sample(a, b) || sample(b, a)
}

#[test]
fn agrees_with_sampling_away_from_contact() {
    let mut state = 12345u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut checked = 0;
    for _ in 0..2000 {
        let a = rect(0.0, 0.0, next() * 6.3, 4.7, 2.06);
        let b = rect(
            next() * 10.0 - 5.0,
            next() * 10.0 - 5.0,
            next() * 6.3,
            0.5 + next() * 4.0,
            0.5 + next() * 2.0,
        );
        let grow = |r: &Rect, d: f64| Rect {
            half_length_m: r.half_length_m + d,
            half_width_m: r.half_width_m + d,
            ..*r
        };
        // Skip near-contact cases where sampling resolution matters.
        let sure_in = sampled_overlap(&grow(&a, -0.1), &grow(&b, -0.1));
        let sure_out = !sampled_overlap(&grow(&a, 0.1), &grow(&b, 0.1));
        if sure_in {
            assert!(a.overlaps(&b), "{a:?} {b:?}");
            checked += 1;
        } else if sure_out {
            assert!(!a.overlaps(&b), "{a:?} {b:?}");
            checked += 1;
        }
    }
    assert!(checked > 1500);
}
