use super::*;
use proptest::prelude::*;
use std::f64::consts::FRAC_PI_2;

/// A car with track id `id` at (`x`, `y`) heading `heading` at `speed`.
fn car(id: i32, x: f64, y: f64, heading: f64, speed: f64) -> Obstacle {
    Obstacle {
        id,
        ..Obstacle::car(x, y, heading, speed)
    }
}

/// A frame at `t` with `obstacles`.
fn frame(t: f64, obstacles: Vec<Obstacle>) -> Frame {
    Frame {
        t,
        obstacles,
        ..Frame::default()
    }
}

/// The run's frames smoothed one after another by one smoother.
fn smoothed(frames: &[Frame], window_s: f64) -> Vec<Frame> {
    smoothed_with(frames, window_s, false)
}

/// The same, smoothing velocities too when `velocities`.
fn smoothed_with(frames: &[Frame], window_s: f64, velocities: bool) -> Vec<Frame> {
    let mut s = TrackSmoother::new(window_s).with_velocities(velocities);
    frames
        .iter()
        .map(|f| {
            let mut f = f.clone();
            s.smooth(&mut f);
            f
        })
        .collect()
}

#[test]
fn a_road_user_reported_at_constant_velocity_stays_where_it_is() {
    // A car at 12 m/s heading 30° reported on time at 10 Hz: every report moved ahead to a later frame's
    // time is where that frame reports it, so the mean is the report itself.
    let h = 30f64.to_radians();
    let frames: Vec<Frame> = (0..30)
        .map(|k| {
            let t = 100.0 + 0.1 * f64::from(k);
            let s = 12.0 * (t - 100.0);
            frame(
                t,
                vec![car(7, 5.0 + s * h.cos(), -3.0 + s * h.sin(), h, 12.0)],
            )
        })
        .collect();
    for (a, b) in frames.iter().zip(smoothed(&frames, SMOOTHING_S)) {
        assert!((a.obstacles[0].x - b.obstacles[0].x).abs() < 1e-9);
        assert!((a.obstacles[0].y - b.obstacles[0].y).abs() < 1e-9);
        assert_eq!(a.obstacles[0].heading, b.obstacles[0].heading);
        assert_eq!(a.obstacles[0].speed_mps, b.obstacles[0].speed_mps);
    }
}

#[test]
fn reports_of_varying_age_are_averaged_to_their_mean_age() {
    // A car driving east at 10 m/s, x = 10 t. Frames at 0, 0.1, 0.2 s report it 0.2, 0.3 (the same report
    // again) and 0.1 s old: at x = −2, −2 and 1 m. With a 0.2 s window the third frame's reports, moved
    // ahead to 0.2 s, are at 0, −1 and 1 m: the mean 0 m is where the car was 0.2 s earlier, the mean age.
    let frames = vec![
        frame(0.0, vec![car(1, -2.0, 0.0, 0.0, 10.0)]),
        frame(0.1, vec![car(1, -2.0, 0.0, 0.0, 10.0)]),
        frame(0.2, vec![car(1, 1.0, 0.0, 0.0, 10.0)]),
    ];
    let out = smoothed(&frames, 0.2);
    // The first frame has only its own report; the second the mean of −2 + 1 and −2: −1.5.
    let xs: Vec<f64> = out.iter().map(|f| f.obstacles[0].x).collect();
    for (x, want) in xs.iter().zip([-2.0, -1.5, 0.0]) {
        assert!((x - want).abs() < 1e-12, "{xs:?}");
    }
    // A window of 0.1 s leaves out the report 0.2 s back: (−1 + 1) / 2 = 0 at the third frame too, and
    // −1.5 at the second; a window of 0.05 s smooths nothing.
    let narrow: Vec<f64> = smoothed(&frames, 0.1)
        .iter()
        .map(|f| f.obstacles[0].x)
        .collect();
    assert_eq!(narrow, vec![-2.0, -1.5, 0.0]);
    let none: Vec<f64> = smoothed(&frames, 0.05)
        .iter()
        .map(|f| f.obstacles[0].x)
        .collect();
    assert_eq!(none, vec![-2.0, -2.0, 1.0]);
}

#[test]
fn road_users_are_matched_by_id_and_a_new_run_starts_afresh() {
    // Two cars in swapped order in the second frame: each is matched with its own report. Car 2 stands
    // still; car 1 drives north at 5 m/s and is reported 1 m behind where its first report puts it.
    let frames = vec![
        frame(
            1.0,
            vec![car(1, 0.0, 0.0, FRAC_PI_2, 5.0), car(2, 9.0, 9.0, 0.0, 0.0)],
        ),
        frame(
            1.1,
            vec![
                car(2, 9.0, 9.0, 0.0, 0.0),
                car(1, 0.0, -0.5, FRAC_PI_2, 5.0),
            ],
        ),
    ];
    let out = smoothed(&frames, 0.5);
    assert_eq!((out[1].obstacles[0].x, out[1].obstacles[0].y), (9.0, 9.0));
    // Car 1: its first report moved 0.1 s ahead is at y = 0.5; the mean with −0.5 is 0.
    assert!(out[1].obstacles[1].x.abs() < 1e-12);
    assert!(out[1].obstacles[1].y.abs() < 1e-12);
    // A frame whose time is not after the last one's starts a new run: nothing before it is used.
    let mut s = TrackSmoother::new(0.5);
    for f in &frames {
        s.smooth(&mut f.clone());
    }
    let mut again = frame(1.1, vec![car(1, 0.0, -0.5, FRAC_PI_2, 5.0)]);
    s.smooth(&mut again);
    assert_eq!(again.obstacles[0].y, -0.5);
    // So does `reset`.
    let mut s = TrackSmoother::new(0.5);
    s.smooth(&mut frames[0].clone());
    s.reset();
    let mut after = frames[1].clone();
    s.smooth(&mut after);
    assert_eq!(after.obstacles[1].y, -0.5);
}

#[test]
fn reports_that_are_not_finite_are_neither_smoothed_nor_used() {
    let frames = vec![
        frame(0.0, vec![car(1, 0.0, 0.0, 0.0, f64::NAN)]),
        frame(0.1, vec![car(1, 3.0, 0.0, 0.0, 10.0)]),
        frame(0.2, vec![car(1, f64::INFINITY, 0.0, 0.0, 10.0)]),
        frame(f64::NAN, vec![car(1, 5.0, 0.0, 0.0, 10.0)]),
    ];
    let out = smoothed(&frames, 1.0);
    assert!(out[0].obstacles[0].speed_mps.is_nan());
    assert_eq!(out[1].obstacles[0].x, 3.0, "the NaN report is not used");
    assert_eq!(out[2].obstacles[0].x, f64::INFINITY);
    assert_eq!(
        out[3].obstacles[0].x, 5.0,
        "a frame at NaN is left as it is"
    );
}

#[test]
fn the_corrector_smooths_then_moves_ahead() {
    let frames = [
        frame(0.0, vec![car(1, -2.0, 0.0, 0.0, 10.0)]),
        frame(0.1, vec![car(1, -2.0, 0.0, 0.0, 10.0)]),
    ];
    // None: the frame itself.
    let mut c = Corrector::new(RoadUserCorrection::NONE);
    assert!(std::ptr::eq(c.view(&frames[0]), &frames[0]));
    // Latency alone: Frame::advance_road_users.
    let mut c = Corrector::new(RoadUserCorrection {
        smoothing_s: 0.0,
        latency_s: 0.25,
        smooth_velocities: false,
    });
    let mut want = frames[1].clone();
    want.advance_road_users(0.25);
    assert_eq!(c.view(&frames[1]), &want);
    assert_eq!(c.last_view(&frames[1]), &want);
    // Both: −1.5 m smoothed (as above), then 0.25 s ahead at 10 m/s: 1 m.
    let mut c = Corrector::new(RoadUserCorrection {
        smoothing_s: 0.5,
        latency_s: 0.25,
        smooth_velocities: false,
    });
    c.view(&frames[0]);
    assert!((c.view(&frames[1]).obstacles[0].x - 1.0).abs() < 1e-12);
    c.reset();
    assert!((c.view(&frames[1]).obstacles[0].x - 0.5).abs() < 1e-12);
    // Velocities smoothed too: reported at 10 then 14 m/s, the car moves on at the mean, 12 m/s; its
    // position is smoothed with each report's own velocity (−1.5 m as above), then 0.25 s ahead at
    // 12 m/s: 1.5 m.
    let mut c = Corrector::new(RoadUserCorrection {
        smoothing_s: 0.5,
        latency_s: 0.25,
        smooth_velocities: true,
    });
    let faster = frame(0.1, vec![car(1, -2.0, 0.0, 0.0, 14.0)]);
    c.view(&frames[0]);
    let out = c.view(&faster).obstacles[0];
    assert!((out.speed_mps - 12.0).abs() < 1e-12, "{out:?}");
    assert!((out.x - 1.5).abs() < 1e-12, "{out:?}");
}

#[test]
fn smoothed_velocities_are_the_mean_of_the_reports_velocities() {
    // A car heading east at 10 m/s whose reported heading swings ±0.1 rad and speed 9, 11, 10: the mean
    // velocity is east, at (9 cos 0.1 + 11 cos 0.1 + 10) / 3 and a northward (9 − 11) sin 0.1 / 3.
    let frames = vec![
        frame(0.0, vec![car(3, 0.0, 0.0, 0.1, 9.0)]),
        frame(0.1, vec![car(3, 1.0, 0.0, -0.1, 11.0)]),
        frame(0.2, vec![car(3, 2.0, 0.0, 0.0, 10.0)]),
    ];
    let out = smoothed_with(&frames, 0.5, true);
    let (vx, vy) = (
        (20.0 * 0.1f64.cos() + 10.0) / 3.0,
        (9.0 - 11.0) * 0.1f64.sin() / 3.0,
    );
    let o = &out[2].obstacles[0];
    assert!((o.speed_mps - vx.hypot(vy)).abs() < 1e-12, "{o:?}");
    assert!((o.heading - vy.atan2(vx)).abs() < 1e-12, "{o:?}");
    // Positions are smoothed as without: each report moved ahead at its own velocity.
    let plain = smoothed(&frames, 0.5);
    assert_eq!(
        (o.x, o.y),
        (plain[2].obstacles[0].x, plain[2].obstacles[0].y)
    );
    assert_eq!(plain[2].obstacles[0].heading, 0.0);
    // Velocities that cancel: speed 0, the road user's own heading kept.
    let back_and_forth = vec![
        frame(0.0, vec![car(4, 0.0, 0.0, 0.0, 5.0)]),
        frame(0.1, vec![car(4, 0.0, 0.0, std::f64::consts::PI, 5.0)]),
    ];
    let o = &smoothed_with(&back_and_forth, 0.5, true)[1].obstacles[0];
    assert!(o.speed_mps < STILL_MPS, "{o:?}");
    assert_eq!(o.heading, std::f64::consts::PI);
}

#[test]
fn velocity_changes_that_turn_around_are_flips() {
    // Speeds 10, 10.5, 10, 10.5 m/s east at 10 Hz: accelerations +5, −5, +5 m/s², two pairs, both flips.
    let run = |speeds: &[f64], headings: &[f64]| -> Vec<Frame> {
        speeds
            .iter()
            .zip(headings)
            .enumerate()
            .map(|(k, (&v, &h))| frame(0.1 * k as f64, vec![car(1, 0.0, 0.0, h, v)]))
            .collect()
    };
    let flips = |pairs, flips| VelocityFlips { pairs, flips };
    let east = [0.0; 4];
    assert_eq!(
        VelocityFlips::of_run(&run(&[10.0, 10.5, 10.0, 10.5], &east)),
        flips(2, 2)
    );
    // Braking at 5 m/s² throughout: no turn. Turns of 1 m/s²: below the least acceleration.
    assert_eq!(
        VelocityFlips::of_run(&run(&[10.0, 9.5, 9.0, 8.5], &east)),
        flips(2, 0)
    );
    assert_eq!(
        VelocityFlips::of_run(&run(&[10.0, 10.1, 10.0, 10.1], &east)),
        flips(2, 0)
    );
    // The heading swinging ±0.05 rad at 10 m/s: the lateral velocity ±0.5 m/s turns 10 m/s² around.
    assert_eq!(
        VelocityFlips::of_run(&run(&[10.0; 4], &[0.05, -0.05, 0.05, -0.05])),
        flips(2, 2)
    );
    // Road users are matched by id (the first of an id in a frame); one seen in two frames only, or a
    // frame whose time is not after the one before, gives no pair.
    let frames = vec![
        frame(
            0.0,
            vec![car(2, 0.0, 0.0, 0.0, 10.0), car(1, 0.0, 0.0, 0.0, 10.0)],
        ),
        frame(
            0.1,
            vec![
                car(1, 0.0, 0.0, 0.0, 10.5),
                car(1, 0.0, 0.0, 0.0, 99.0),
                car(2, 0.0, 0.0, 0.0, 10.0),
            ],
        ),
        frame(
            0.2,
            vec![car(2, 0.0, 0.0, 0.0, 10.0), car(1, 0.0, 0.0, 0.0, 10.0)],
        ),
        frame(0.2, vec![car(1, 0.0, 0.0, 0.0, 10.5)]),
        frame(0.3, vec![car(1, 0.0, 0.0, 0.0, 10.0)]),
    ];
    assert_eq!(VelocityFlips::of_run(&frames), flips(2, 1));
    // A first report that is not finite hides the id's other reports in its frame: no pair through it.
    let mut hidden = run(&[10.0, 10.5, 10.0, 10.5], &east);
    hidden[2]
        .obstacles
        .insert(0, car(1, 0.0, 0.0, 0.0, f64::NAN));
    assert_eq!(VelocityFlips::of_run(&hidden), flips(0, 0));
    let mut sum = flips(100, 5);
    sum += flips(100, 15);
    assert!(sum.noisy() && sum.share() == 0.1);
    assert!(!flips(200, 19).noisy());
    assert!(!flips(199, 199).noisy(), "too few pairs");
}

#[test]
fn corrections_out_of_range_are_named() {
    assert_eq!(RoadUserCorrection::NONE.out_of_range(), None);
    let bad = |smoothing_s, latency_s| {
        RoadUserCorrection {
            smoothing_s,
            latency_s,
            smooth_velocities: false,
        }
        .out_of_range()
        .unwrap_or_default()
    };
    assert!(bad(2.5, 0.0).contains("smoothing window 2.5 s"));
    assert!(bad(f64::NAN, 0.0).contains("smoothing"));
    assert!(bad(0.7, 1.5).contains("latency 1.5 s"));
    assert!(bad(0.0, -0.1).contains("latency"));
    assert_eq!(bad(MAX_SMOOTHING_S, 1.0), "");
    let velocities_alone = RoadUserCorrection {
        smooth_velocities: true,
        ..RoadUserCorrection::NONE
    };
    assert!(velocities_alone
        .out_of_range()
        .unwrap_or_default()
        .contains("velocities smoothed without a smoothing window"));
}

#[test]
fn steps_that_disagree_with_the_speed_are_jumps() {
    // Car 1 at 10 m/s east over 0.1 s steps: 1 m expected. Steps of 1.0, 0 (the same report), 3.0 (three
    // periods at once), 1.4 and 0.6 (within half): jumps at 0 and 3.
    let xs = [0.0, 1.0, 1.0, 4.0, 5.4, 6.0];
    let frames: Vec<Frame> = xs
        .iter()
        .enumerate()
        .map(|(k, &x)| frame(0.1 * k as f64, vec![car(1, x, 0.0, 0.0, 10.0)]))
        .collect();
    assert_eq!(
        TrackSteps::of_run(&frames),
        TrackSteps { steps: 5, jumps: 2 }
    );
    // A road user slower than 2 m/s in either frame, one seen once, or one whose id changes is not
    // compared; a frame whose time is not after the one before compares nothing.
    let frames = vec![
        frame(
            0.0,
            vec![car(1, 0.0, 0.0, 0.0, 1.9), car(2, 0.0, 5.0, 0.0, 10.0)],
        ),
        frame(
            0.1,
            vec![car(1, 9.0, 0.0, 0.0, 10.0), car(3, 1.0, 5.0, 0.0, 10.0)],
        ),
        frame(0.1, vec![car(1, 9.0, 0.0, 0.0, 10.0)]),
    ];
    assert_eq!(TrackSteps::of_run(&frames), TrackSteps::default());
    // An id reported twice in a frame is one road user, its first report (as the h5py count reads it).
    let frames = vec![
        frame(0.0, vec![car(5, 0.0, 0.0, 0.0, 10.0)]),
        frame(
            0.1,
            vec![car(5, 1.0, 0.0, 0.0, 10.0), car(5, 5.0, 0.0, 0.0, 10.0)],
        ),
    ];
    assert_eq!(
        TrackSteps::of_run(&frames),
        TrackSteps { steps: 1, jumps: 0 }
    );
    // The step is measured along the first frame's heading: north at 10 m/s, 1 m north is no jump.
    let frames = vec![
        frame(0.0, vec![car(4, 0.0, 0.0, FRAC_PI_2, 10.0)]),
        frame(0.1, vec![car(4, 0.0, 1.0, FRAC_PI_2, 10.0)]),
    ];
    assert_eq!(
        TrackSteps::of_run(&frames),
        TrackSteps { steps: 1, jumps: 0 }
    );
}

#[test]
fn jumpy_needs_enough_steps_and_one_in_ten() {
    let s = |steps, jumps| TrackSteps { steps, jumps };
    assert!(s(200, 20).jumpy());
    assert!(!s(200, 19).jumpy());
    assert!(!s(199, 199).jumpy(), "too few steps");
    assert!(!s(0, 0).jumpy());
    let mut sum = s(100, 5);
    sum += s(100, 15);
    assert_eq!(sum, s(200, 20));
    assert_eq!(sum.share(), 0.1);
    assert_eq!(s(0, 0).share(), 0.0);
}

#[test]
fn a_run_reading_smooths_up_to_its_first_collision() {
    // The car of `reports_of_varying_age_are_averaged_to_their_mean_age`, crossing at the third frame
    // (flagged): smoothed over 0.2 s it stands at 0 m, as logged at 1 m.
    let mut frames = vec![
        frame(0.0, vec![car(1, -2.0, 0.0, 0.0, 10.0)]),
        frame(0.1, vec![car(1, -2.0, 0.0, 0.0, 10.0)]),
        frame(0.2, vec![car(1, 1.0, 0.0, 0.0, 10.0)]),
        frame(0.3, vec![car(1, 3.0, 0.0, 0.0, 10.0)]),
    ];
    frames[2].collision = true;
    let r = RunReading::of(&frames, 0.2);
    assert_eq!(r.contact, Some(contact_profile(&frames[2])));
    let mut at_zero = frames[2].clone();
    at_zero.obstacles[0].x = 0.0;
    assert_eq!(r.contact_smoothed, Some(contact_profile(&at_zero)));
    assert_ne!(r.contact, r.contact_smoothed);
    assert_eq!(r.steps, TrackSteps::of_run(&frames));
    assert_eq!(r.flips, VelocityFlips::of_run(&frames));
    // Velocities smoothed too: the car's speeds are all 10 m/s east, so the same profile; the reading
    // picks the profile a correction reads.
    assert_eq!(r.contact_smoothed_velocities, r.contact_smoothed);
    let c = |smoothing_s, smooth_velocities| RoadUserCorrection {
        smoothing_s,
        latency_s: 0.3,
        smooth_velocities,
    };
    let mut one = RoadUserReading::default();
    one.add(&r);
    assert_eq!(one.contacts_as(&c(0.0, false)), [r.contact.unwrap()]);
    assert_eq!(
        one.contacts_as(&c(0.2, false)),
        [r.contact_smoothed.unwrap()]
    );
    let mut turned = frames.clone();
    turned[1].obstacles[0].heading = FRAC_PI_2;
    let t = RunReading::of(&turned, 0.2);
    assert_ne!(t.contact_smoothed_velocities, t.contact_smoothed);
    // Each profile is that of the collision frame smoothed by a smoother of its own kind.
    for (velocities, profile) in [
        (false, t.contact_smoothed),
        (true, t.contact_smoothed_velocities),
    ] {
        let alone = smoothed_with(&turned[..=2], 0.2, velocities);
        assert_eq!(profile, Some(contact_profile(&alone[2])), "{velocities}");
    }
    let mut all = RoadUserReading::default();
    all.add(&r);
    all.add(&t);
    assert_eq!(all.contacts_as(&c(0.2, true)).len(), 2);
    assert_eq!(
        all.contacts_as(&c(0.2, true))[1],
        t.contact_smoothed_velocities.unwrap()
    );
    // No smoothing: both profiles are the logged one; no collision: none.
    let r0 = RunReading::of(&frames, 0.0);
    assert_eq!(r0.contact, r0.contact_smoothed);
    frames[2].collision = false;
    assert_eq!(RunReading::of(&frames, 0.2).contact, None);
}

/// The smoothed position of every road user of `frames[k]`, computed directly from the definition: the
/// mean of its own report and, in each of the (at most `MAX_SMOOTHED_FRAMES`) frames before it no more than
/// `window_s` (plus a microsecond) older, the first finite report of its id moved ahead to `t_k`.
fn direct(frames: &[Frame], k: usize, window_s: f64) -> Vec<(f64, f64, f64, f64)> {
    let t = frames[k].t;
    let first = k.saturating_sub(MAX_SMOOTHED_FRAMES);
    frames[k]
        .obstacles
        .iter()
        .map(|o| {
            let Some(own) = Report::of(0, o) else {
                return (o.x, o.y, o.speed_mps, o.heading);
            };
            let (mut sx, mut sy, mut n) = (own.x, own.y, 1.0);
            let (mut svx, mut svy) = (own.vx, own.vy);
            for past in &frames[first..k] {
                if t - past.t > window_s + 1e-6 {
                    continue;
                }
                let hit = past
                    .obstacles
                    .iter()
                    .enumerate()
                    .filter_map(|(i, o)| Report::of(i, o))
                    .find(|r| r.id == own.id);
                if let Some(r) = hit {
                    sx += r.x + r.vx * (t - past.t);
                    sy += r.y + r.vy * (t - past.t);
                    svx += r.vx;
                    svy += r.vy;
                    n += 1.0;
                }
            }
            let (vx, vy) = (svx / n, svy / n);
            let heading = if vx.hypot(vy) >= STILL_MPS {
                vy.atan2(vx)
            } else {
                o.heading
            };
            (sx / n, sy / n, vx.hypot(vy), heading)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The smoother equals the definition on random runs: road users that come and go, share ids, have
    /// non-finite fields, at periods from a millisecond (more frames in the window than are kept) up.
    #[test]
    fn the_smoother_equals_the_definition(
        period in prop_oneof![Just(0.001), Just(0.05), Just(0.1), 0.01f64..0.3],
        window in prop_oneof![Just(0.0), Just(SMOOTHING_S), 0.05f64..2.0],
        velocities in any::<bool>(),
        run in proptest::collection::vec(
            proptest::collection::vec(
                (0i32..5, -50.0f64..50.0, -50.0f64..50.0, -4.0f64..4.0,
                    prop_oneof![9 => 0.0f64..20.0, 1 => Just(f64::NAN)]),
                0..6,
            ),
            1..120,
        ),
    ) {
        let frames: Vec<Frame> = run
            .iter()
            .enumerate()
            .map(|(k, os)| {
                let obstacles = os.iter().map(|&(id, x, y, h, v)| car(id, x, y, h, v)).collect();
                frame(1.7e9 + period * k as f64, obstacles)
            })
            .collect();
        let out = smoothed_with(&frames, window, velocities);
        for k in 0..frames.len() {
            let want: Vec<(f64, f64, f64, f64)> = if window > 0.0 {
                direct(&frames, k, window)
            } else {
                frames[k].obstacles.iter().map(|o| (o.x, o.y, o.speed_mps, o.heading)).collect()
            };
            for ((o, (x, y, v, h)), logged) in out[k].obstacles.iter().zip(want).zip(&frames[k].obstacles) {
                let close = |a: f64, b: f64| a == b || (a - b).abs() <= 1e-6 * (1.0 + b.abs());
                prop_assert!(close(o.x, x) && close(o.y, y), "frame {k}: {:?} vs ({x}, {y})", o);
                // Velocities: the mean's when smoothed (a speed that is NaN stays so), else as logged.
                let (v, h) = if velocities && window > 0.0 { (v, h) } else { (logged.speed_mps, logged.heading) };
                prop_assert!(
                    (close(o.speed_mps, v) || (o.speed_mps.is_nan() && v.is_nan())) && close(o.heading, h),
                    "frame {k}: {:?} vs speed {v}, heading {h}", o
                );
            }
        }
    }
}
