use super::*;
use crate::frame::{light_color, Frame};

#[test]
fn units_and_lawbreaker_fixes() {
    let f = Frame {
        speed_mps: 10.0,
        turn_signal: turn_signal::RIGHT,
        light_color: light_color::NONE,
        speed_limit_mps: 12.5,
        stopline_dist_m: 4.0,
        ..Frame::default()
    };
    let s = Signals::from_frame(
        &f,
        &SignalContext {
            time_h: 21.5,
            ..SignalContext::default()
        },
    );
    assert_eq!(s.get(Signal::Speed), 36.0);
    assert_eq!(
        s.get(Signal::TurnSignal),
        2.0,
        "right stays 2 (LawBreaker collapsed it to 1)"
    );
    assert_eq!(s.get(Signal::LightColor), 0.0, "no light is 0, not green");
    assert_eq!(
        s.get(Signal::SpeedUpper),
        45.0,
        "lane limit in km/h, not a constant"
    );
    assert_eq!(s.get(Signal::StoplineAhead), 4.0);
    assert_eq!(s.get(Signal::JunctionAhead), f64::INFINITY);
    assert_eq!(s.get(Signal::NpcAhead), f64::INFINITY);
    assert_eq!(s.get(Signal::Time), 21.5);
    assert_eq!(s.get(Signal::Visibility), 100.0);
}

#[test]
fn every_signal_name_round_trips() {
    for &sig in Signal::ALL {
        assert_eq!(Signal::from_name(sig.name()), Some(sig));
        assert!(!UNAVAILABLE.contains(&sig.name()));
    }
    assert_eq!(Signal::ALL.len(), N_SIGNALS);
}

#[test]
fn default_values_are_the_documented_ones() {
    let s = Signals::default();
    for &sig in Signal::ALL {
        let want = match sig {
            Signal::Time => 12.0,
            Signal::Visibility => 100.0,
            Signal::NpcAheadTtc
            | Signal::NpcAheadSpeed
            | Signal::NearestNpcSpeed
            | Signal::NpcOppositeSpeed
            | Signal::JunctionTime
            | Signal::SpeedLimitTime
            | Signal::ClosestApproachTime
            | Signal::ClosestApproachTtc
            | Signal::ClosestApproachAccTtc
            | Signal::PriorityConflictTime
            | Signal::PriorityConflictEgoTime
            | Signal::PriorityConflictGap => f64::INFINITY,
            _ if sig.kind() == SignalKind::Distance => f64::INFINITY,
            _ => 0.0,
        };
        assert_eq!(s.get(sig), want, "{}", sig.name());
    }
}

/// Random frames with obstacles of every kind around the ego (many within the priority and opposite
/// ranges, some far): for every needed set, the needed signals equal the full computation's.
#[test]
fn needed_signals_equal_the_full_computation() {
    use crate::frame::{obstacle_type, Obstacle};
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    let groups: [&[Signal]; 9] = [
        &[
            Signal::NpcAhead,
            Signal::NpcAheadSpeed,
            Signal::NpcAheadTtc,
            Signal::NpcAheadClosing,
        ],
        &[Signal::NearestNpc, Signal::NearestNpcSpeed],
        &[Signal::NpcOpposite, Signal::NpcOppositeSpeed],
        &[Signal::PriorityNpcAhead],
        &[Signal::PriorityPedsAhead],
        &[Signal::Speed, Signal::StoplineAhead],
        &[
            Signal::ClosestApproach,
            Signal::ClosestApproachTime,
            Signal::ClosestApproachTtc,
        ],
        &[Signal::ClosestApproachAccTtc, Signal::Speed],
        &[
            Signal::PriorityConflict,
            Signal::PriorityConflictTime,
            Signal::PriorityConflictEgoTime,
            Signal::PriorityConflictGap,
            Signal::RssDangerous,
            Signal::StoplineDecel,
            Signal::StopSignDecel,
            Signal::JunctionDecel,
            Signal::JunctionTime,
        ],
    ];
    let ctx = SignalContext::default();
    let mut n_checked = 0;
    for _ in 0..400 {
        let heading = (rnd() - 0.5) * 8.0;
        let (ex, ey) = (rnd() * 100.0, rnd() * 100.0);
        let n_obs = (rnd() * 8.0) as usize;
        let obstacles = (0..n_obs)
            .map(|i| {
                let range = if rnd() < 0.7 { 40.0 } else { 250.0 };
                Obstacle {
                    id: i as i32,
                    kind: [
                        obstacle_type::VEHICLE,
                        obstacle_type::BICYCLE,
                        obstacle_type::PEDESTRIAN,
                    ][(rnd() * 3.0) as usize % 3],
                    x: ex + (rnd() - 0.5) * range,
                    y: ey + (rnd() - 0.5) * range * 0.3,
                    heading: (rnd() - 0.5) * 8.0,
                    speed_mps: rnd() * 15.0,
                    length: 0.5 + rnd() * 5.0,
                    width: 0.5 + rnd() * 2.0,
                    priority: rnd() < 0.5,
                }
            })
            .collect();
        let f = Frame {
            x: ex,
            y: ey,
            heading,
            speed_mps: rnd() * 15.0,
            obstacles,
            ..Frame::default()
        };
        let full = Signals::from_frame(&f, &ctx);
        for mask in 0u32..(1 << groups.len()) {
            let needed: SignalSet = (0..groups.len())
                .filter(|g| mask >> g & 1 == 1)
                .flat_map(|g| groups[g].iter().copied())
                .collect();
            let part = Signals::from_frame_needed(&f, &ctx, needed);
            for &sig in Signal::ALL {
                if needed.contains(sig) {
                    assert_eq!(
                        part.get(sig).to_bits(),
                        full.get(sig).to_bits(),
                        "{} with mask {mask:b} on {f:?}",
                        sig.name()
                    );
                    n_checked += 1;
                }
            }
        }
    }
    assert!(n_checked > 10_000);
    // The obstacle geometry is skipped when no obstacle signal is needed, leaving the defaults.
    let f = Frame {
        obstacles: vec![Obstacle {
            id: 1,
            kind: obstacle_type::VEHICLE,
            x: 10.0,
            y: 0.0,
            heading: 0.0,
            speed_mps: 0.0,
            length: 4.0,
            width: 2.0,
            priority: false,
        }],
        ..Frame::default()
    };
    let none: SignalSet = [Signal::Speed].into_iter().collect();
    assert_eq!(
        Signals::from_frame_needed(&f, &ctx, none).get(Signal::NpcAhead),
        f64::INFINITY
    );
    assert!(Signals::from_frame(&f, &ctx).get(Signal::NpcAhead) < 10.0);
}

/// `jerk` is the change of acceleration over the time step, from the second frame of a run on.
#[test]
fn stream_jerk_needs_the_previous_frame() {
    let at = |t: f64, accel_mps2: f64| Frame {
        t,
        accel_mps2,
        ..Frame::default()
    };
    let mut stream = SignalStream::new(SignalContext::default(), SignalSet::ALL);
    assert_eq!(stream.next(&at(0.0, 1.0)).get(Signal::Jerk), 0.0);
    assert!((stream.next(&at(0.1, -2.0)).get(Signal::Jerk) + 30.0).abs() < 1e-9);
    assert!((stream.next(&at(0.3, -1.0)).get(Signal::Jerk) - 5.0).abs() < 1e-9);
    // A repeated stamp gives no jerk and restarts the difference there.
    assert_eq!(stream.next(&at(0.3, 4.0)).get(Signal::Jerk), 0.0);
    assert!((stream.next(&at(0.4, 3.0)).get(Signal::Jerk) + 10.0).abs() < 1e-9);
    // A new run starts without a previous frame.
    stream.reset();
    assert_eq!(stream.next(&at(0.0, 3.0)).get(Signal::Jerk), 0.0);
    // Every other signal is the stateless computation's.
    let f = Frame {
        speed_mps: 7.0,
        stopline_dist_m: 12.0,
        ..at(0.1, 3.0)
    };
    let mut streamed = *stream.next(&f);
    streamed.set(Signal::Jerk, 0.0);
    assert!((streamed.get(Signal::AccMean) - 70.0).abs() < 1e-9);
    streamed.set(Signal::AccMean, 3.0);
    // `speedLimit.time` reads the stream's mean, but the default frame has no limit to reach.
    assert_eq!(streamed.get(Signal::SpeedLimitTime), f64::INFINITY);
    assert_eq!(streamed, Signals::from_frame(&f, &SignalContext::default()));
}

/// A speed or acceleration that went through a message encoding comes back a rounding error off (the live
/// bridge's frames against the simulator's): the stream's differences must not turn that into a jerk or a
/// mean acceleration, or a learned `jerk<=0` would hold in batch and fail live. A real change stays.
#[test]
fn rounding_errors_are_no_change_but_real_changes_are() {
    let at = |t: f64, speed_mps: f64, accel_mps2: f64| Frame {
        t,
        speed_mps,
        accel_mps2,
        ..Frame::default()
    };
    // Values taken from a left-turn run: the simulator's, and the same after the Apollo encoding.
    let (acc, acc_live) = (1.331_847_511_941_512_5, 1.331_847_511_941_512_7);
    let (v, v_live) = (1.467_824_552_572_675, 1.467_824_552_572_674_7);
    assert!(acc != acc_live && v != v_live);
    let mut stream = SignalStream::new(SignalContext::default(), SignalSet::ALL);
    stream.next(&at(0.0, v, acc));
    let s = stream.next(&at(0.1, v_live, acc_live));
    assert_eq!(s.get(Signal::Jerk), 0.0);
    assert_eq!(s.get(Signal::AccMean), 0.0);
    // 1 µm/s² over 0.1 s is a jerk of 10 µm/s³, and a change of 1 µm/s in speed a mean of 10 µm/s².
    let s = stream.next(&at(0.2, v_live + 1e-6, acc_live + 1e-6));
    assert!(
        (s.get(Signal::Jerk) - 1e-5).abs() < 1e-12,
        "{}",
        s.get(Signal::Jerk)
    );
    assert!(
        (s.get(Signal::AccMean) - 1e-6 / 0.2).abs() < 1e-12,
        "{}",
        s.get(Signal::AccMean)
    );
}

/// `speedLimit.time` is the time to the lane's limit at `acc.mean1s`, not at the frame's own `acc`;
/// alone, a frame uses its `acc`.
#[test]
fn stream_time_to_the_speed_limit_reads_the_mean_acceleration() {
    let at = |t: f64, speed_mps: f64| Frame {
        t,
        speed_mps,
        speed_limit_mps: 20.0,
        accel_mps2: -4.0,
        ..Frame::default()
    };
    let ctx = SignalContext::default();
    // Alone: braking, so never.
    assert_eq!(
        Signals::from_frame(&at(0.0, 10.0), &ctx).get(Signal::SpeedLimitTime),
        f64::INFINITY
    );
    let mut stream = SignalStream::new(ctx, SignalSet::ALL);
    let time = |stream: &mut SignalStream, t: f64, v: f64| {
        stream.next(&at(t, v)).get(Signal::SpeedLimitTime)
    };
    // The first frame has only its own acc.
    assert_eq!(time(&mut stream, 0.0, 10.0), f64::INFINITY);
    // Over the next second the speed rises 2 m/s: 8 m/s to go at 2 m/s², 4 s, whatever acc says.
    assert!((time(&mut stream, 1.0, 12.0) - 4.0).abs() < 1e-9);
    // At the limit: 0.
    assert_eq!(time(&mut stream, 2.0, 20.0), 0.0);
    // Slowing down below it again: never.
    assert_eq!(time(&mut stream, 3.0, 15.0), f64::INFINITY);
}

/// `acc.mean1s` is the speed change over the last second (or the span the run has so far) per second,
/// whatever the frames' own `acc` says; a stamp that goes back restarts it.
#[test]
fn stream_mean_acceleration_reads_the_last_second_of_speeds() {
    let at = |t: f64, speed_mps: f64| Frame {
        t,
        speed_mps,
        accel_mps2: 9.0,
        ..Frame::default()
    };
    let mut stream = SignalStream::new(SignalContext::default(), SignalSet::ALL);
    let mean =
        |stream: &mut SignalStream, t: f64, v: f64| stream.next(&at(t, v)).get(Signal::AccMean);
    // First frame: the frame's acc.
    assert_eq!(mean(&mut stream, 0.0, 10.0), 9.0);
    // 0.5 s later, 1 m/s slower: -2 m/s² over the half second the run has.
    assert!((mean(&mut stream, 0.5, 9.0) + 2.0).abs() < 1e-9);
    // At t = 1.0 the window still reaches back to t = 0: (8 - 10) / 1.
    assert!((mean(&mut stream, 1.0, 8.0) + 2.0).abs() < 1e-9);
    // At t = 1.2 the frame at 0 has left it; the oldest is t = 0.5: (9.7 - 9) / 0.7.
    assert!((mean(&mut stream, 1.2, 9.7) - 1.0).abs() < 1e-9);
    // A stamp that goes back restarts the window: the frame's acc again, then from there.
    assert_eq!(mean(&mut stream, 1.1, 5.0), 9.0);
    assert!((mean(&mut stream, 1.6, 6.0) - 2.0).abs() < 1e-9);
    // A non-finite speed gives the frame's acc and restarts it too.
    assert_eq!(mean(&mut stream, 1.7, f64::NAN), 9.0);
    assert_eq!(mean(&mut stream, 1.8, 6.0), 9.0);
    // A new run starts empty.
    stream.reset();
    assert_eq!(mean(&mut stream, 0.0, 3.0), 9.0);
    // At a very high frame rate the window holds the latest frames only, and stays bounded.
    stream.reset();
    for i in 0..10_000 {
        let t = f64::from(i) * 1e-4;
        assert!((mean(&mut stream, t, 2.0 * t) - if i == 0 { 9.0 } else { 2.0 }).abs() < 1e-6);
    }
}
