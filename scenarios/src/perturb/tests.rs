use std::f64::consts::PI;

use laws::frame::obstacle_type;
use laws::{Frame, Obstacle};

use super::*;

fn car(id: i32, x: f64, y: f64, priority: bool) -> Obstacle {
    Obstacle {
        id,
        kind: obstacle_type::VEHICLE,
        x,
        y,
        heading: 0.5,
        speed_mps: 20.0,
        length: 4.0,
        width: 2.0,
        priority,
    }
}

/// A frame on a mapped road, ego at (100, 200), with road users `obstacles`.
fn frame(t: f64, obstacles: Vec<Obstacle>) -> Frame {
    Frame {
        t,
        x: 100.0,
        y: 200.0,
        heading: 0.25,
        speed_mps: 20.0,
        accel_mps2: -1.0,
        light_color: laws::frame::light_color::RED,
        light_blink: true,
        stopline_dist_m: 30.0,
        junction_dist_m: 35.0,
        crosswalk_dist_m: 32.0,
        stopsign_dist_m: 31.0,
        speed_limit_mps: 13.9,
        lane_number: 2,
        planned_turn: laws::frame::planned_turn::LEFT,
        signal_ahead: true,
        traffic_jam: true,
        collision: t > 1.0,
        destination: t > 2.0,
        obstacles,
        ..Frame::default()
    }
}

fn run(n: usize, obstacles: impl Fn(usize) -> Vec<Obstacle>) -> Vec<Frame> {
    (0..n)
        .map(|k| frame(k as f64 * 0.1, obstacles(k)))
        .collect()
}

#[test]
fn the_default_changes_nothing() {
    let p = Perturbation::default();
    assert!(p.is_identity());
    p.validate().unwrap();
    let original = run(30, |k| vec![car(1, 100.0 + k as f64, 210.0, true)]);
    let mut frames = original.clone();
    p.apply(&mut frames, 7);
    assert_eq!(frames, original);
}

#[test]
fn the_range_keeps_road_users_within_it_of_the_true_ego_position() {
    // Hand distances from the ego at (100, 200): a 3-4-5 triangle (5 m), 6-8-10 (10 m), exactly 7 m.
    let users = vec![
        car(1, 103.0, 204.0, false),
        car(2, 94.0, 192.0, false),
        car(3, 100.0, 207.0, false),
    ];
    let mut frames = vec![frame(0.0, users.clone())];
    let p = Perturbation {
        perception_range_m: Some(7.0),
        ..Perturbation::default()
    };
    p.apply(&mut frames, 0);
    let ids: Vec<i32> = frames[0].obstacles.iter().map(|o| o.id).collect();
    assert_eq!(ids, [1, 3], "5 m and 7 m are within 7 m, 10 m is not");
    // With large ego noise the kept road users are still those within range of where the ego is.
    let noisy = Perturbation {
        ego_noise: PoseNoise {
            position_m: 50.0,
            ..PoseNoise::default()
        },
        ..p
    };
    for seed in 0..20 {
        let mut frames = vec![frame(0.0, users.clone())];
        noisy.apply(&mut frames, seed);
        let ids: Vec<i32> = frames[0].obstacles.iter().map(|o| o.id).collect();
        assert_eq!(ids, [1, 3], "seed {seed}");
        assert_ne!((frames[0].x, frames[0].y), (100.0, 200.0));
    }
}

#[test]
fn misses_drop_road_users_at_the_rate() {
    let all = |rate: f64| {
        let mut frames = run(1000, |k| {
            (0..10)
                .map(|i| car(i, 100.0 + k as f64, 200.0 + i as f64, false))
                .collect()
        });
        Perturbation {
            miss_rate: rate,
            ..Perturbation::default()
        }
        .apply(&mut frames, 3);
        frames.iter().map(|f| f.obstacles.len()).sum::<usize>()
    };
    assert_eq!(all(0.0), 10_000);
    assert_eq!(all(1.0), 0);
    // Binomial(10,000, 0.3) kept: mean 7,000, σ ≈ 45.8; 5σ either side.
    let kept = all(0.3);
    assert!((6771..=7229).contains(&kept), "{kept} of 10,000 kept");
}

#[test]
fn clearing_priority_and_the_map_touches_nothing_else() {
    let original = run(5, |_| {
        vec![car(1, 110.0, 200.0, true), car(2, 90.0, 200.0, false)]
    });
    let mut cleared = original.clone();
    Perturbation {
        clear_priority: true,
        ..Perturbation::default()
    }
    .apply(&mut cleared, 0);
    for (a, b) in original.iter().zip(&cleared) {
        assert!(b.obstacles.iter().all(|o| !o.priority));
        let mut restored = b.clone();
        restored.obstacles[0].priority = true;
        assert_eq!(&restored, a);
    }
    let mut mapless = original.clone();
    Perturbation {
        no_map: true,
        ..Perturbation::default()
    }
    .apply(&mut mapless, 0);
    let d = Frame::default();
    for (a, b) in original.iter().zip(&mapless) {
        assert_eq!(b.stopline_dist_m, f64::INFINITY);
        assert_eq!(b.junction_dist_m, f64::INFINITY);
        assert_eq!(b.crosswalk_dist_m, f64::INFINITY);
        assert_eq!(b.stopsign_dist_m, f64::INFINITY);
        assert_eq!(b.speed_limit_mps, f64::INFINITY);
        assert_eq!(b.light_color, laws::frame::light_color::NONE);
        assert!(!b.light_blink && !b.signal_ahead && !b.traffic_jam);
        assert_eq!(
            (b.lane_number, b.planned_turn),
            (d.lane_number, d.planned_turn)
        );
        // Pose, labels and road users (their right of way too) are as they were.
        assert_eq!(
            (b.t, b.x, b.y, b.heading, b.speed_mps),
            (a.t, a.x, a.y, a.heading, a.speed_mps)
        );
        assert_eq!((b.collision, b.destination), (a.collision, a.destination));
        assert_eq!(b.obstacles, a.obstacles);
    }
}

/// Reads one perturbed value of a frame.
type Field = dyn Fn(&Frame) -> f64;

/// Sample mean and standard deviation.
fn moments(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// The noise drawn on each field has mean 0 and the standard deviation asked for: over 20,000 frames the
/// sample mean lies within 5 σ/√n of 0 and the sample σ within 5 % of it (its own standard error is
/// about 0.5 %).
#[test]
fn noise_has_the_standard_deviations_asked_for() {
    let n = 20_000;
    let original = run(n, |_| vec![car(1, 130.0, 240.0, false)]);
    let mut frames = original.clone();
    let obstacle = PoseNoise {
        position_m: 0.2,
        speed_mps: 0.3,
        heading_rad: 0.03,
        accel_mps2: 0.0,
    };
    let ego = PoseNoise {
        position_m: 0.05,
        speed_mps: 0.1,
        heading_rad: 0.01,
        accel_mps2: 0.5,
    };
    let p = Perturbation {
        obstacle_noise: obstacle,
        ego_noise: ego,
        ..Perturbation::default()
    };
    p.validate().unwrap();
    p.apply(&mut frames, 11);
    let check = |name: &str, diffs: Vec<f64>, sigma: f64| {
        let (mean, sd) = moments(&diffs);
        assert!(
            mean.abs() < 5.0 * sigma / (n as f64).sqrt(),
            "{name}: mean {mean}"
        );
        assert!(
            (sd / sigma - 1.0).abs() < 0.05,
            "{name}: σ {sd} against {sigma}"
        );
    };
    let diff = |get: &dyn Fn(&Frame) -> f64| -> Vec<f64> {
        original
            .iter()
            .zip(&frames)
            .map(|(a, b)| get(b) - get(a))
            .collect()
    };
    let fields: [(&str, &Field, f64); 9] = [
        ("ego x", &|f| f.x, ego.position_m),
        ("ego y", &|f| f.y, ego.position_m),
        ("ego heading", &|f| f.heading, ego.heading_rad),
        ("ego speed", &|f| f.speed_mps, ego.speed_mps),
        ("ego acceleration", &|f| f.accel_mps2, ego.accel_mps2),
        ("road user x", &|f| f.obstacles[0].x, obstacle.position_m),
        ("road user y", &|f| f.obstacles[0].y, obstacle.position_m),
        (
            "road user heading",
            &|f| f.obstacles[0].heading,
            obstacle.heading_rad,
        ),
        (
            "road user speed",
            &|f| f.obstacles[0].speed_mps,
            obstacle.speed_mps,
        ),
    ];
    for (name, get, sigma) in fields {
        check(name, diff(get), sigma);
    }
    // x and y of one road user are drawn independently.
    let (dx, dy) = (diff(&|f| f.obstacles[0].x), diff(&|f| f.obstacles[0].y));
    let corr = dx.iter().zip(&dy).map(|(a, b)| a * b).sum::<f64>()
        / (n as f64 * obstacle.position_m * obstacle.position_m);
    assert!(
        corr.abs() < 5.0 / (n as f64).sqrt(),
        "x–y correlation {corr}"
    );
    // Labels and times stay.
    for (a, b) in original.iter().zip(&frames) {
        assert_eq!(
            (a.t, a.collision, a.destination),
            (b.t, b.collision, b.destination)
        );
    }
}

#[test]
fn noisy_speeds_stay_at_least_zero_and_headings_wrapped() {
    let mut frames = run(2000, |_| {
        let mut o = car(1, 110.0, 200.0, false);
        o.speed_mps = 0.0;
        o.heading = PI - 0.001;
        vec![o]
    });
    for f in &mut frames {
        f.speed_mps = 0.0;
        f.heading = -PI + 0.001;
    }
    let noise = PoseNoise {
        speed_mps: 1.0,
        heading_rad: 0.5,
        ..PoseNoise::default()
    };
    Perturbation {
        obstacle_noise: noise,
        ego_noise: noise,
        ..Perturbation::default()
    }
    .apply(&mut frames, 5);
    for f in &frames {
        for (speed, heading) in [
            (f.speed_mps, f.heading),
            (f.obstacles[0].speed_mps, f.obstacles[0].heading),
        ] {
            assert!(speed >= 0.0, "{speed}");
            assert!(heading > -PI && heading <= PI, "{heading}");
        }
    }
    // Both sides of ±π were crossed, so the wrap was exercised.
    assert!(frames.iter().any(|f| f.heading > 0.0) && frames.iter().any(|f| f.heading < 0.0));
}

#[test]
fn a_run_is_a_function_of_its_seed() {
    let p = Perturbation {
        miss_rate: 0.2,
        obstacle_noise: PoseNoise {
            position_m: 0.2,
            ..PoseNoise::default()
        },
        ..Perturbation::default()
    };
    let original = run(50, |k| {
        vec![
            car(1, 110.0 + k as f64, 200.0, true),
            car(2, 90.0, 200.0, false),
        ]
    });
    let with = |seed| {
        let mut frames = original.clone();
        p.apply(&mut frames, seed);
        frames
    };
    assert_eq!(with(1), with(1));
    assert_ne!(with(1), with(2));
}

#[test]
fn bad_settings_are_refused_by_name() {
    let bad = [
        (
            Perturbation {
                perception_range_m: Some(f64::NAN),
                ..Perturbation::default()
            },
            "the perception range",
        ),
        (
            Perturbation {
                perception_range_m: Some(0.0),
                ..Perturbation::default()
            },
            "the perception range",
        ),
        (
            Perturbation {
                miss_rate: 1.5,
                ..Perturbation::default()
            },
            "the miss rate",
        ),
        (
            Perturbation {
                ego_noise: PoseNoise {
                    speed_mps: -0.1,
                    ..PoseNoise::default()
                },
                ..Perturbation::default()
            },
            "the ego's speed noise",
        ),
        (
            Perturbation {
                obstacle_noise: PoseNoise {
                    position_m: f64::INFINITY,
                    ..PoseNoise::default()
                },
                ..Perturbation::default()
            },
            "road users' position noise",
        ),
        (
            Perturbation {
                obstacle_noise: PoseNoise {
                    accel_mps2: 0.1,
                    ..PoseNoise::default()
                },
                ..Perturbation::default()
            },
            "road users' acceleration noise",
        ),
    ];
    for (p, name) in bad {
        let e = p.validate().unwrap_err().to_string();
        assert!(e.starts_with(name), "{e}");
    }
}

/// Road users identified by the frame they were recorded in: frame k holds one car of id k.
fn run_with_ids(n: usize) -> Vec<Frame> {
    run(n, |k| vec![car(k as i32, 100.0 + k as f64, 210.0, true)])
}

/// The id of the road user each frame carries, `None` when it carries none.
fn carried(frames: &[Frame]) -> Vec<Option<i32>> {
    frames
        .iter()
        .map(|f| match f.obstacles.as_slice() {
            [] => None,
            [o] => Some(o.id),
            more => panic!("t = {}: {} road users", f.t, more.len()),
        })
        .collect()
}

#[test]
fn a_delay_shows_each_frame_the_road_users_of_an_earlier_frame() {
    let original = run_with_ids(6);
    let delayed = |s: f64| {
        let p = Perturbation {
            perception_delay_s: s,
            ..Perturbation::default()
        };
        p.validate().unwrap();
        assert!(!p.is_identity());
        let mut frames = original.clone();
        p.apply(&mut frames, 0);
        frames
    };
    // 0.1 s: one frame back; frame 0 (t₀ + 0.1 s is later) sees nobody.
    let one = delayed(0.1);
    assert_eq!(
        carried(&one),
        [None, Some(0), Some(1), Some(2), Some(3), Some(4)]
    );
    // 0.25 s: t = 0.3 reads t ≤ 0.05 (frame 0), t = 0.4 reads t ≤ 0.15 (frame 1), t = 0.5 frame 2;
    // t = 0, 0.1, 0.2 are earlier than t₀ + 0.25 s.
    assert_eq!(
        carried(&delayed(0.25)),
        [None, None, None, Some(0), Some(1), Some(2)]
    );
    // The road users are moved whole; the ego and the labels are not delayed.
    for (a, b) in original.iter().zip(&one).skip(1) {
        let mut restored = b.clone();
        restored.obstacles = a.obstacles.clone();
        assert_eq!(&restored, a);
    }
    assert_eq!(one[3].obstacles[0], original[2].obstacles[0]);
}

#[test]
fn with_a_varying_delay_each_frame_shows_the_latest_road_users_that_have_arrived() {
    // Frames at 0, 0.1, …, 0.5 s whose road users arrive after 0.3, 0.1, 0.25, 0.1, 0.1 and 0.1 s: at
    // 0.2, 0.3, 0.45, 0.4, 0.5 and 0.6 s. At t = 0.2 frame 1's have arrived; at 0.3 frame 0's too, but
    // frame 1's are newer; at 0.4 frame 3's; at 0.5 frames 2's (0.45) and 4's, and 4 is the newer. Frame
    // 0's and 2's are never shown: they arrived after newer ones.
    let mut frames = run_with_ids(6);
    delay_road_users(&mut frames, &[0.3, 0.1, 0.25, 0.1, 0.1, 0.1]);
    assert_eq!(
        carried(&frames),
        [None, None, Some(1), Some(1), Some(3), Some(4)]
    );
    // A frame never shows a later frame's road users, even with a delay of 0.
    let mut frames = run_with_ids(3);
    delay_road_users(&mut frames, &[0.0, 0.0, 0.0]);
    assert_eq!(carried(&frames), [Some(0), Some(1), Some(2)]);
}

#[test]
fn a_jitter_draws_each_frame_s_delay_uniformly_about_the_delay() {
    let p = Perturbation {
        perception_delay_s: 0.2,
        perception_jitter_s: 0.1,
        ..Perturbation::default()
    };
    p.validate().unwrap();
    let n = 20_000;
    let delays = p.delays(n, &mut ChaCha8Rng::seed_from_u64(4));
    let mean = delays.iter().sum::<f64>() / n as f64;
    let var = delays.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    // Uniform on [0.1, 0.3]: mean 0.2, variance 0.2² / 12 = 0.00333; the mean's standard error is
    // sqrt(0.00333 / 20,000) = 0.0004.
    assert!((mean - 0.2).abs() < 0.002, "mean {mean}");
    assert!((var - 0.04 / 12.0).abs() < 0.0002, "variance {var}");
    assert!(delays.iter().all(|d| (0.1..=0.3).contains(d)));
    assert!(delays.iter().any(|&d| d < 0.11) && delays.iter().any(|&d| d > 0.29));
    // Without a jitter nothing is drawn: the stream is untouched.
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let fixed = Perturbation {
        perception_jitter_s: 0.0,
        ..p
    }
    .delays(5, &mut rng);
    assert_eq!(fixed, [0.2; 5]);
    assert_eq!(
        rng.random::<u64>(),
        ChaCha8Rng::seed_from_u64(4).random::<u64>()
    );
    // Applied: every frame shows road users from 0.1 to 0.3 s old (two or three frames back, never one),
    // never older than the frame before, and not always the same number of frames back (one back only
    // for a delay within a microsecond of 0.1 s).
    let original = run_with_ids(200);
    let mut frames = original.clone();
    p.apply(&mut frames, 9);
    let shown = carried(&frames);
    assert_eq!(&shown[..2], &[None, None]);
    let mut backs = std::collections::BTreeSet::new();
    for (k, id) in shown.iter().enumerate().skip(3) {
        let back = k as i32 - id.expect("a frame 0.3 s in has road users");
        assert!((1..=3).contains(&back), "frame {k} shows frame {id:?}");
        backs.insert(back);
    }
    assert!(shown.windows(2).all(|w| w[0] <= w[1]), "{shown:?}");
    assert!(backs.contains(&2) && backs.contains(&3), "{backs:?}");
}

/// A delay of 1 or 3 periods of `period_s` shows every frame of `original` (200 frames, one road user
/// each, ids 0, 1, …) the road user of exactly 1 or 3 frames back, and none before.
fn assert_whole_frames_back(original: &[Frame], period_s: f64) {
    for back in [1, 3] {
        let mut frames = original.to_vec();
        Perturbation {
            perception_delay_s: back as f64 * period_s,
            ..Perturbation::default()
        }
        .apply(&mut frames, 0);
        let want: Vec<Option<i32>> = (0..200)
            .map(|k: i32| (k >= back).then(|| k - back))
            .collect();
        assert_eq!(carried(&frames), want, "{back} frames back");
    }
}

/// Times k · 0.1 are not exact in binary (0.1 · 3 − 0.1 · 2 > 0.1 but 0.1 · 23 − 0.1 · 22 < 0.1): a
/// delay of 1 or 3 periods is still exactly 1 or 3 frames back in every frame.
#[test]
fn a_delay_of_whole_periods_is_whole_frames_despite_rounding() {
    let original = run_with_ids(200);
    assert!(
        original.windows(2).any(|w| w[1].t - 0.1 < w[0].t),
        "the rounding this test is about occurs"
    );
    assert_whole_frames_back(&original, 0.1);
}

/// The same on Unix times at 20 Hz, as an imported Apollo record may have: near 1.7e9 s the times are
/// spaced in steps of about 2.4e-7 s, and a nanosecond's slack is lost in their rounding (3 · 0.05 s back
/// misses the frame in about 40 % of frames with it).
#[test]
fn a_delay_of_whole_periods_is_whole_frames_on_unix_times() {
    let mut original = run_with_ids(200);
    for (k, f) in original.iter_mut().enumerate() {
        f.t = 1.7e9 + k as f64 * 0.05;
    }
    assert!(
        original
            .windows(4)
            .any(|w| w[3].t - 3.0 * 0.05 + 1e-9 < w[0].t),
        "the rounding this test is about occurs"
    );
    assert_whole_frames_back(&original, 0.05);
}

#[test]
fn the_range_of_delayed_road_users_is_measured_from_the_ego_at_the_frame() {
    // The car stays at (110, 200); the ego drives from x = 100 to 130, 10 m per frame.
    let mut original = run(4, |_| vec![car(1, 110.0, 200.0, false)]);
    for (k, f) in original.iter_mut().enumerate() {
        f.x = 100.0 + 10.0 * k as f64;
    }
    let mut frames = original.clone();
    Perturbation {
        perception_delay_s: 0.1,
        perception_range_m: Some(5.0),
        ..Perturbation::default()
    }
    .apply(&mut frames, 0);
    // Frame 1's ego (x = 110) is on the car it sees from frame 0; frames 2 and 3 are 10 and 20 m away.
    let counts: Vec<usize> = frames.iter().map(|f| f.obstacles.len()).collect();
    assert_eq!(counts, [0, 1, 0, 0]);
}

/// A run of `n` frames with no labels but a collision at frame `collision` and the destination reached at
/// `destination`.
fn labelled_run(n: usize, collision: usize, destination: usize) -> Vec<Frame> {
    let mut frames = run_with_ids(n);
    for (k, f) in frames.iter_mut().enumerate() {
        f.collision = k == collision;
        f.destination = k == destination;
    }
    frames
}

/// Checks that `kept`'s times are a strictly increasing subsequence of `original`'s, and returns the
/// original index of each kept frame.
fn kept_indices(original: &[Frame], kept: &[Frame]) -> Vec<usize> {
    let mut left = original.iter().enumerate();
    kept.iter()
        .map(|f| {
            left.find(|(_, o)| o.t == f.t)
                .unwrap_or_else(|| panic!("t = {} is not a later original time", f.t))
                .0
        })
        .collect()
}

#[test]
fn drops_never_take_the_first_the_last_or_a_labelled_frame() {
    let original = labelled_run(200, 50, 120);
    let p = Perturbation {
        drop_rate: 0.99,
        ..Perturbation::default()
    };
    p.validate().unwrap();
    assert!(!p.is_identity());
    for seed in 0..50 {
        let mut frames = original.clone();
        p.apply(&mut frames, seed);
        let kept = kept_indices(&original, &frames);
        for must in [0, 50, 120, 199] {
            assert!(kept.contains(&must), "seed {seed}: frame {must} dropped");
        }
        // Of 196 droppable frames about 2 are kept (Binomial(196, 0.01): σ ≈ 1.4).
        assert!(kept.len() <= 4 + 10, "seed {seed}: {} kept", kept.len());
        assert_eq!(frames.iter().filter(|f| f.collision).count(), 1);
        assert_eq!(frames.iter().filter(|f| f.destination).count(), 1);
        // A kept frame is its original, untouched.
        for (f, &k) in frames.iter().zip(&kept) {
            assert_eq!(f, &original[k]);
        }
    }
}

#[test]
fn drops_take_frames_at_the_rate() {
    let n = 10_000;
    let original = labelled_run(n, 3000, 7000);
    let mut frames = original.clone();
    Perturbation {
        drop_rate: 0.5,
        ..Perturbation::default()
    }
    .apply(&mut frames, 9);
    let kept = kept_indices(&original, &frames);
    // Binomial(9,996, 0.5) dropped: mean 4,998, σ ≈ 50; 5σ either side.
    let dropped = n - frames.len();
    assert!(
        (4748..=5248).contains(&dropped),
        "{dropped} of 9,996 dropped"
    );
    // One uniform per droppable frame, in frame order; the four protected frames draw none.
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let want: Vec<usize> = (0..n)
        .filter(|&k| [0, 3000, 7000, n - 1].contains(&k) || rng.random::<f64>() >= 0.5)
        .collect();
    assert_eq!(kept, want);
}

/// The delay draws nothing, the drops draw last, and zero settings draw nothing: the other settings'
/// noise is the same with or without them.
#[test]
fn the_new_settings_leave_the_other_draws_alone() {
    let original = labelled_run(300, 100, 299);
    let noisy = Perturbation {
        miss_rate: 0.3,
        ego_noise: PoseNoise {
            position_m: 0.5,
            ..PoseNoise::default()
        },
        obstacle_noise: PoseNoise {
            speed_mps: 0.5,
            ..PoseNoise::default()
        },
        ..Perturbation::default()
    };
    let with = |p: Perturbation| {
        let mut frames = original.clone();
        p.apply(&mut frames, 21);
        frames
    };
    let plain = with(noisy);
    // The first draw of the stream is frame 0's ego x noise, as without the new settings.
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let first = 0.5 * rng.sample::<f64, _>(StandardNormal);
    assert_eq!(plain[0].x, original[0].x + first);
    let zero = Perturbation {
        drop_rate: 0.0,
        perception_delay_s: 0.0,
        ..noisy
    };
    assert_eq!(with(zero), plain);
    // Drops keep the frames perturbed exactly as without them.
    let dropped = with(Perturbation {
        drop_rate: 0.5,
        ..noisy
    });
    let kept = kept_indices(&original, &dropped);
    assert!(kept.len() < 250, "{} kept", kept.len());
    for (f, &k) in dropped.iter().zip(&kept) {
        assert_eq!(f, &plain[k]);
    }
    // A delay moves the road users before the noise, and draws nothing itself: the ego's noise stays.
    let delayed = with(Perturbation {
        perception_delay_s: 0.2,
        ..noisy
    });
    assert_eq!(delayed[0].x, plain[0].x);
}

#[test]
fn bad_drop_rates_and_delays_are_refused_by_name() {
    for rate in [1.0, -0.1, f64::NAN, 1.5] {
        let p = Perturbation {
            drop_rate: rate,
            ..Perturbation::default()
        };
        let e = p.validate().unwrap_err().to_string();
        assert!(e.starts_with("the frame drop rate"), "{e}");
    }
    for delay in [-1.0, 10.5, f64::INFINITY, f64::NAN] {
        let p = Perturbation {
            perception_delay_s: delay,
            ..Perturbation::default()
        };
        let e = p.validate().unwrap_err().to_string();
        assert!(e.starts_with("the perception delay"), "{e}");
    }
    // A jitter larger than the delay would see road users before they were there.
    for (delay, jitter) in [(0.2, 0.3), (0.0, 0.1), (0.2, -0.1), (0.2, f64::NAN)] {
        let p = Perturbation {
            perception_delay_s: delay,
            perception_jitter_s: jitter,
            ..Perturbation::default()
        };
        let e = p.validate().unwrap_err().to_string();
        assert!(e.starts_with("the perception delay's jitter"), "{e}");
    }
    Perturbation {
        drop_rate: 0.99,
        perception_delay_s: 10.0,
        ..Perturbation::default()
    }
    .validate()
    .unwrap();
}

/// Random runs under random settings: the labels and times stay (the kept frames' times a subsequence of
/// the originals', the first, the last and every labelled frame kept), the road users kept are those of
/// the frame the delay reads within range of the unperturbed ego (in their order), speeds stay ≥ 0,
/// headings noised are wrapped, road users without noise are the originals (but for a cleared mark), and
/// a seed gives one copy.
mod properties {
    use proptest::prelude::*;

    use super::*;

    fn user() -> impl Strategy<Value = (f64, f64, f64, f64, bool)> {
        (
            -150.0..150.0f64,
            -150.0..150.0f64,
            -10.0..10.0f64,
            0.0..40.0f64,
            any::<bool>(),
        )
    }

    fn runs() -> impl Strategy<Value = Vec<Frame>> {
        prop::collection::vec(
            (
                -100.0..100.0f64,
                -100.0..100.0f64,
                0.0..30.0f64,
                prop::collection::vec(user(), 0..6),
                any::<bool>(),
                any::<bool>(),
            ),
            1..12,
        )
        .prop_map(|frames| {
            frames
                .into_iter()
                .enumerate()
                .map(|(k, (x, y, speed, users, collision, destination))| Frame {
                    t: k as f64 * 0.1,
                    x,
                    y,
                    speed_mps: speed,
                    collision,
                    destination,
                    obstacles: users
                        .into_iter()
                        .enumerate()
                        .map(|(i, (ox, oy, heading, v, priority))| Obstacle {
                            heading,
                            speed_mps: v,
                            ..car(i as i32, ox, oy, priority)
                        })
                        .collect(),
                    ..Frame::default()
                })
                .collect()
        })
    }

    fn noise(accel: bool) -> impl Strategy<Value = PoseNoise> {
        (
            0.0..2.0f64,
            0.0..2.0f64,
            0.0..2.0f64,
            0.0..2.0f64,
            any::<bool>(),
        )
            .prop_map(move |(p, s, h, a, off)| {
                if off {
                    PoseNoise::default()
                } else {
                    PoseNoise {
                        position_m: p,
                        speed_mps: s,
                        heading_rad: h,
                        accel_mps2: if accel { a } else { 0.0 },
                    }
                }
            })
    }

    fn perturbations() -> impl Strategy<Value = Perturbation> {
        (
            prop::option::of(0.1..300.0f64),
            prop_oneof![Just(0.0), 0.0..=1.0f64],
            any::<bool>(),
            any::<bool>(),
            noise(false),
            noise(true),
            prop_oneof![Just(0.0), 0.0..0.99f64],
            prop_oneof![Just(0.0), Just(0.1), Just(0.3), 0.0..1.5f64],
            prop_oneof![Just(0.0), 0.0..=1.0f64],
        )
            .prop_map(
                |(range, miss, clear, no_map, obstacle, ego, drop, delay, jitter)| Perturbation {
                    perception_range_m: range,
                    miss_rate: miss,
                    clear_priority: clear,
                    no_map,
                    obstacle_noise: obstacle,
                    ego_noise: ego,
                    drop_rate: drop,
                    perception_delay_s: delay,
                    perception_jitter_s: jitter * delay,
                },
            )
    }

    proptest! {
        #[test]
        fn perturbed_runs_keep_their_promises(
            original in runs(),
            p in perturbations(),
            seed in any::<u64>(),
        ) {
            prop_assert!(p.validate().is_ok());
            let delays: Vec<f64> = if p.perception_jitter_s == 0.0 {
                vec![p.perception_delay_s; original.len()]
            } else {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let (s, j) = (p.perception_delay_s, p.perception_jitter_s);
                (0..original.len())
                    .map(|_| s + j * (2.0 * rand::Rng::random::<f64>(&mut rng) - 1.0))
                    .collect()
            };
            let mut frames = original.clone();
            p.apply(&mut frames, seed);
            let mut again = original.clone();
            p.apply(&mut again, seed);
            prop_assert_eq!(&frames, &again);
            if p.drop_rate == 0.0 {
                prop_assert_eq!(frames.len(), original.len());
            }
            // The kept frames' times: strictly increasing, the originals' in order, first and last kept.
            prop_assert!(frames.windows(2).all(|w| w[0].t < w[1].t));
            let mut left = original.iter().enumerate();
            let mut kept = Vec::new();
            for b in &frames {
                let found = left.find(|(_, a)| a.t == b.t);
                prop_assert!(found.is_some(), "t = {} is not a later original time", b.t);
                kept.extend(found.map(|(i, _)| i));
            }
            prop_assert_eq!(kept.first(), Some(&0));
            prop_assert_eq!(kept.last(), Some(&(original.len() - 1)));
            for (i, a) in original.iter().enumerate() {
                if a.collision || a.destination {
                    prop_assert!(kept.contains(&i), "labelled frame {} dropped", i);
                }
            }
            for (b, &i) in frames.iter().zip(&kept) {
                let a = &original[i];
                prop_assert_eq!((a.t, a.collision, a.destination), (b.t, b.collision, b.destination));
                prop_assert!(b.speed_mps >= 0.0 && b.speed_mps.is_finite());
                if !p.ego_noise.is_none() {
                    prop_assert!(b.heading > -PI && b.heading <= PI);
                }
                // The frame whose road users this one carries: the latest at or before t − its delay. The
                // delays are the stream's first draws (documented), one per original frame.
                let seen: &[Obstacle] = original[..=i]
                    .iter()
                    .zip(&delays)
                    .rposition(|(s, d)| s.t <= a.t - d + TIME_TOLERANCE_S)
                    .map_or(&[], |j| &original[j].obstacles);
                if p.perception_delay_s == 0.0 {
                    prop_assert_eq!(seen, a.obstacles.as_slice());
                }
                // The kept road users, by id, in their original order, each within range of the true ego.
                let mut originals = seen.iter();
                for o in &b.obstacles {
                    let source = originals.find(|s| s.id == o.id);
                    prop_assert!(source.is_some(), "road user {} not in the frame seen, or out of order", o.id);
                    let source = source.unwrap();
                    if let Some(r) = p.perception_range_m {
                        prop_assert!((source.x - a.x).hypot(source.y - a.y) <= r);
                    }
                    prop_assert!(o.speed_mps >= 0.0 && o.speed_mps.is_finite());
                    prop_assert!(!(p.clear_priority && o.priority));
                    if p.obstacle_noise.is_none() {
                        let mut want = *source;
                        want.priority &= !p.clear_priority;
                        prop_assert_eq!(*o, want);
                    } else {
                        prop_assert!(o.heading > -PI && o.heading <= PI);
                    }
                }
                if p.perception_range_m.is_none() && p.miss_rate == 0.0 {
                    prop_assert_eq!(b.obstacles.len(), seen.len());
                }
                if p.miss_rate == 1.0 {
                    prop_assert!(b.obstacles.is_empty());
                }
            }
            let labels = |run: &[Frame]| {
                (run.iter().any(|f| f.collision), run.iter().any(|f| f.destination))
            };
            prop_assert_eq!(labels(&frames), labels(&original));
        }
    }
}
