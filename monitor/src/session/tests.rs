use super::*;
use crate::counts::Counts;
use crate::domain::Domain;
use crate::estimate::LaplaceConfig;
use crate::learning::Plan;
use crate::property::{BuildConfig, PropertyModel};
use crate::spec::PropertySpec;
use laws::frame::obstacle_type;
use laws::perception::RoadUserCorrection;
use laws::LawSource;
use laws::Obstacle;

const LAWS: &str = "no_collision = G(collision == 0);\n\
                    slow_near = G(NPCAhead(10) -> F[0,1](speed < 0.5));\n";

fn laws() -> Vec<LawSource> {
    vec![LawSource {
        name: "t.law".into(),
        text: LAWS.into(),
    }]
}

/// A car whose rear bumper is `gap_m` ahead of the ego's front.
fn car_ahead(gap_m: f64) -> Obstacle {
    Obstacle {
        id: 1,
        kind: obstacle_type::VEHICLE,
        x: laws::signals::EGO_FRONT_M + gap_m + 2.0,
        y: 0.0,
        heading: 0.0,
        speed_mps: 0.0,
        length: 4.0,
        width: 2.0,
        priority: false,
    }
}

fn frame(speed_mps: f64, gap_m: Option<f64>, collision: bool) -> Frame {
    Frame {
        speed_mps,
        collision,
        obstacles: gap_m.map(car_ahead).into_iter().collect(),
        ..Frame::default()
    }
}

/// no_collision over (collision, NPCAhead<=10) with α = 0 and hand-chosen counts:
/// 0 → 2 and 0 → done once each; 2 → 3 (collision) and 2 → 0 once each. So P(F unsafe) is
/// x0 = x2/2, x2 = 1/2 + x0/2: x0 = 1/3, x2 = 2/3; within 1 step: 0 and 1/2; within 2: 1/4 and 1/2.
fn hand_model() -> Arc<Model> {
    let p = hand_chain("NPCAhead<=10", &[&[0, 2, 3], &[2, 0, DONE]]);
    Arc::new(Model::try_new(laws(), vec![p]).unwrap())
}

/// Stands for the `done` state in [`hand_chain`]'s traces.
const DONE: StateId = StateId::MAX;

/// no_collision over (collision, `predicate`) with α = 0, horizons 1 and 2, learned from `traces`.
fn hand_chain(predicate: &str, traces: &[&[StateId]]) -> PropertyModel {
    let preds: Vec<String> = vec!["collision==1".into(), predicate.into()];
    let cfg = BuildConfig {
        laplace: LaplaceConfig { alpha: 0.0 },
        horizons_steps: vec![1, 2],
        ..BuildConfig::default()
    };
    let d = PropertyModel::domain_for(&preds, 0, &cfg).unwrap();
    let mut c = Counts::new(d.n_states());
    for trace in traces {
        let trace: Vec<StateId> = trace
            .iter()
            .map(|&s| if s == DONE { d.done() } else { s })
            .collect();
        c.observe_trace(&d, &trace).unwrap();
    }
    PropertyModel::build("no_collision", preds, 0, c, &cfg).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn hand_built_model_gives_the_hand_computed_risks_and_absorbs() {
    let model = hand_model();
    let mut s = Session::new(&model, &SessionConfig::default()).unwrap();
    // Far from anything: state 0.
    let o = s.step(&frame(5.0, None, false)).properties[0].clone();
    assert_eq!((o.state, o.unsafe_now, o.absorbed), (0, false, false));
    assert!(close(o.risk_eventually, 1.0 / 3.0), "{}", o.risk_eventually);
    assert!(close(o.risk_within[0], 0.0) && close(o.risk_within[1], 0.25));
    assert!(!o.baseline_alarm, "G(collision == 0) has no antecedent");
    // A car 5 m ahead: state 2 (bit 1).
    let o = s.step(&frame(5.0, Some(5.0), false)).properties[0].clone();
    assert_eq!(o.state, 0b10);
    assert!(o.bit(1) && !o.bit(0));
    assert!(close(o.risk_eventually, 2.0 / 3.0));
    assert!(close(o.risk_within(0).unwrap(), 0.5) && close(o.risk_within[1], 0.5));
    assert!(o.risk_upper >= o.risk_eventually);
    // Collision: unsafe state 3, risk 1 at every horizon.
    let out = s.step(&frame(5.0, Some(0.0), true));
    assert_eq!(out.frame_index, 2);
    let o = out.properties[0].clone();
    assert_eq!((o.state, o.unsafe_now, o.absorbed), (0b11, true, true));
    assert_eq!(o.risk_within, vec![1.0, 1.0]);
    assert_eq!((o.risk_eventually, o.risk_upper), (1.0, 1.0));
    // Back to an empty road: still absorbed in state 3, but the collision is no longer happening.
    let o = s.step(&frame(5.0, None, false)).properties[0].clone();
    assert_eq!((o.state, o.unsafe_now, o.absorbed), (0b11, false, true));
    assert_eq!(o.risk_eventually, 1.0);
    // A new run starts fresh.
    s.reset();
    let out = s.step(&frame(5.0, None, false));
    assert_eq!(out.frame_index, 0);
    assert_eq!(out.properties[0].state, 0);
    assert!(close(out.properties[0].risk_eventually, 1.0 / 3.0));
}

/// A second chain of no_collision over (collision, NPCAhead<=5), α = 0: 0 → 2 → unsafe once and 0 → done
/// once. So P(F unsafe) is 1/2 from 0 and 1 from 2; within 1 step 0 and 1; within 2 steps 1/2 and 1.
fn hand_member() -> PropertyModel {
    hand_chain("NPCAhead<=5", &[&[0, 2, 3], &[0, DONE]])
}

#[test]
fn an_ensemble_averages_its_chains_each_at_its_own_state() {
    let own = hand_model().properties()[0].clone();
    let ensemble = own.clone().with_members(vec![hand_member()]).unwrap();
    let model = Arc::new(Model::try_new(laws(), vec![ensemble]).unwrap());
    // The file keeps the member.
    let model = Arc::new(Model::from_bytes(&model.to_bytes()).unwrap());
    assert_eq!(model.properties()[0].members().len(), 1);
    let mut s = Session::new(&model, &SessionConfig::default()).unwrap();
    // (own chain, member) at each frame, by hand: no car (1/3, 1/2); a car 7 m ahead, seen by the own
    // chain only (2/3, 1/2); a car 3 m ahead, seen by both (2/3, 1).
    let cases = [
        (None, 0, [1.0 / 3.0, 0.5], [0.0, 0.0], [0.25, 0.5]),
        (Some(7.0), 0b10, [2.0 / 3.0, 0.5], [0.5, 0.0], [0.5, 0.5]),
        (Some(3.0), 0b10, [2.0 / 3.0, 1.0], [0.5, 1.0], [0.5, 1.0]),
    ];
    for (gap, state, eventually, within1, within2) in cases {
        let o = s.step(&frame(5.0, gap, false)).properties[0].clone();
        assert_eq!(o.state, state, "the own chain's state is reported");
        assert!(
            close(o.risk_eventually, (eventually[0] + eventually[1]) / 2.0),
            "{gap:?}: {}",
            o.risk_eventually
        );
        assert!(
            close(o.risk_within[0], (within1[0] + within1[1]) / 2.0),
            "{gap:?}: {:?}",
            o.risk_within
        );
        assert!(
            close(o.risk_within[1], (within2[0] + within2[1]) / 2.0),
            "{gap:?}: {:?}",
            o.risk_within
        );
        assert!(o.risk_upper >= o.risk_eventually - 1e-12 && o.risk_upper <= 1.0);
    }
    // Both chains share the unsafe predicate: a collision absorbs the property at risk 1.
    let o = s.step(&frame(0.0, Some(0.5), true)).properties[0].clone();
    assert!(o.absorbed && close(o.risk_eventually, 1.0));
}

/// The hand model with half its risk from the frame share of its own two runs (α = 0), counted by hand:
/// the violating run spends one frame in state 0 (two steps before the collision) and one in state 2
/// (one step before); the safe run one in each. So each state's share is 1/2; within one step 0 (state
/// 0) and 1/2 (state 2); within two steps 1/2 and 1/2. The session reads the mix, and a model file
/// keeps it.
#[test]
fn the_session_reads_the_risk_mixed_with_the_frame_share() {
    let own = hand_model().properties()[0].clone();
    let cfg = own.config().clone();
    let violating: &[StateId] = &[0, 2, 3];
    let safe: &[StateId] = &[2, 0];
    let share = crate::share::FrameShare::from_traces(
        0.5,
        own.n_states(),
        &cfg.horizons_steps,
        cfg.laplace.alpha,
        [(violating, true), (safe, false)],
    )
    .unwrap();
    let mixed = own.clone().with_frame_share(Some(share)).unwrap();
    assert_eq!(
        mixed.table(),
        own.table(),
        "the chain's own table stays the DTMC's"
    );
    let model = Arc::new(Model::try_new(laws(), vec![mixed]).unwrap());
    let model = Arc::new(Model::from_bytes(&model.to_bytes()).unwrap());
    assert_eq!(
        model.properties()[0].frame_share().map(|f| f.weight()),
        Some(0.5)
    );
    assert!(model.mixes_frame_share() && !hand_model().mixes_frame_share());
    let mut s = Session::new(&model, &SessionConfig::default()).unwrap();
    // (gap, state, eventually, within 1 step, within 2 steps): half the chain's, half the share's.
    let cases = [
        (None, 0, 0.5 / 3.0 + 0.25, 0.0, 0.5 * 0.25 + 0.25),
        (Some(5.0), 0b10, 1.0 / 3.0 + 0.25, 0.5, 0.5),
    ];
    for (gap, state, eventually, within1, within2) in cases {
        let o = s.step(&frame(5.0, gap, false)).properties[0].clone();
        assert_eq!(o.state, state);
        assert!(
            close(o.risk_eventually, eventually),
            "{gap:?}: {}",
            o.risk_eventually
        );
        assert!(
            close(o.risk_within[0], within1),
            "{gap:?}: {:?}",
            o.risk_within
        );
        assert!(
            close(o.risk_within[1], within2),
            "{gap:?}: {:?}",
            o.risk_within
        );
        assert!(o.risk_upper >= o.risk_eventually - 1e-12 && o.risk_upper <= 1.0);
    }
}

#[test]
fn ensemble_members_must_be_chains_of_the_same_property() {
    let own = hand_model().properties()[0].clone();
    let other_name = PropertyModel::build(
        "slow_near",
        hand_member().predicates().to_vec(),
        0,
        hand_member().counts().clone(),
        hand_member().config(),
    )
    .unwrap();
    let err = own.clone().with_members(vec![other_name]).unwrap_err();
    assert!(
        err.to_string().contains("member 1 has another property"),
        "{err}"
    );
    let nested = own
        .clone()
        .with_members(vec![hand_member()
            .with_members(vec![hand_member()])
            .unwrap()])
        .unwrap_err();
    assert!(
        nested.to_string().contains("members of its own"),
        "{nested}"
    );
    let too_many = own
        .with_members(vec![hand_member(); crate::property::MAX_MEMBERS + 1])
        .unwrap_err();
    assert!(too_many.to_string().contains("at most"), "{too_many}");
}

#[test]
fn explanations_decode_paths_and_expected_steps() {
    let model = hand_model();
    let s = Session::new(&model, &SessionConfig::default()).unwrap();
    assert_eq!(s.decode(0, 0b10).unwrap(), "not collision==1, NPCAhead<=10");
    assert_eq!(s.bit_string(0, 0b10).unwrap(), "01");
    let path = s.most_likely_path(0, 0).unwrap();
    assert_eq!(path.states, vec![0, 2, 3]);
    assert!(close(path.probability, 0.25));
    assert_eq!(path.words[2], "collision==1, NPCAhead<=10");
    // From 2: reach 3 at step 1 w.p. 1/2, step 3 w.p. 1/8, ...: E[T | reach] = (Σ (2j+1)/4^j / 2) / (2/3) = 5/3.
    assert!(close(s.expected_steps(0, 2).unwrap(), 5.0 / 3.0));
    assert!(
        s.most_likely_path(0, 4).is_none(),
        "done never reaches unsafe"
    );
    assert!(s.decode(7, 0).is_none());
}

/// A plan with both laws' default properties, learned from a few runs.
fn learned(frames_runs: &[Vec<Frame>]) -> (Plan, Arc<Model>) {
    let specs = [
        PropertySpec::for_law("no_collision"),
        PropertySpec::for_law("slow_near"),
    ];
    let cfg = BuildConfig {
        horizons_steps: vec![1, 5],
        ..BuildConfig::default()
    };
    let plan = Plan::from_specs(laws(), &specs, cfg).unwrap();
    let mut l = plan.learner(SignalContext::default()).unwrap();
    for run in frames_runs {
        l.observe_run(run).unwrap();
    }
    let model = Arc::new(plan.build(l.into_counts()).unwrap());
    (plan, model)
}

/// Approach a stopped car at 5 m/s without braking: slow_near is violated 10 frames after the car is
/// within 10 m; then a collision.
fn approach_run() -> Vec<Frame> {
    let mut run = Vec::new();
    for i in 0..=30 {
        let gap = 15.0 - 0.5 * f64::from(i);
        run.push(frame(5.0, Some(gap.max(0.0)), gap <= 0.0));
    }
    run
}

#[test]
fn law_verdicts_drive_unsafe_and_the_baseline() {
    let (_plan, model) = learned(&[approach_run()]);
    let slow = model.properties()[1].clone();
    assert_eq!(
        slow.predicates(),
        ["slow_near.w", "NPCAhead<=10", "speed<0.5"]
    );
    let mut s = Session::new(&model, &SessionConfig::default()).unwrap();
    let run = approach_run();
    let mut first_unsafe = None;
    for (k, f) in run.iter().enumerate() {
        let o = s.step(f).properties[1].clone();
        // The antecedent NPCAhead(10) holds from gap 10 m on (frame 10).
        assert_eq!(o.baseline_alarm, k >= 10, "frame {k}");
        if o.unsafe_now && first_unsafe.is_none() {
            first_unsafe = Some(k);
            assert!(o.absorbed && o.bit(0));
        }
        if first_unsafe.is_none() {
            assert!(!o.absorbed);
            let t = slow.table();
            assert_eq!(o.risk_eventually, t.eventually(o.state).unwrap());
            assert_eq!(o.risk_within[1], t.within(1, o.state).unwrap());
        }
    }
    // Position 10 (first frame within 10 m) needs speed < 0.5 within frames 10..=20: certain at frame 20.
    assert_eq!(first_unsafe, Some(20));
    let mut s = Session::new(&model, &SessionConfig::default()).unwrap();
    let collided = run
        .iter()
        .map(|f| s.step(f).properties[0].unsafe_now)
        .position(|u| u);
    assert_eq!(collided, Some(30));
}

#[test]
fn learner_sees_the_state_sequence_the_session_reports() {
    let mut long = approach_run();
    // Keep pushing into the car for 20 more frames.
    for _ in 0..20 {
        long.push(frame(5.0, Some(0.0), true));
    }
    let (plan, model) = learned(&[long.clone(), approach_run()]);
    let mut learner = plan.learner(SignalContext::default()).unwrap();
    let traces = learner.traces(&long);
    let mut s = Session::new(&model, &SessionConfig::default()).unwrap();
    let mut seen: Vec<Vec<StateId>> = vec![Vec::new(); 2];
    let mut done = [false; 2];
    for f in &long {
        let out = s.step(f);
        for (p, o) in out.properties.iter().enumerate() {
            if !done[p] {
                seen[p].push(o.state);
                done[p] = o.absorbed;
            }
        }
    }
    for (p, trace) in traces.iter().enumerate() {
        assert_eq!(&trace[..seen[p].len()], seen[p].as_slice(), "property {p}");
    }
    // Both end unsafe: no_collision at frame 30, slow_near at frame 20 (no `done` appended).
    assert_eq!(traces[0].len(), 31);
    assert_eq!(traces[1].len(), 21);
    let d = model.properties()[1].domain().unwrap();
    assert!(d.is_unsafe(*traces[1].last().unwrap()));
    // A run that stays safe ends in `done`.
    let safe: Vec<Frame> = (0..5).map(|_| frame(5.0, None, false)).collect();
    let t = learner.traces(&safe);
    assert_eq!(t[1], vec![0, 0, 0, 0, 0, d.done()]);
}

/// A model learned from logs that report road users late moves each frame's road users ahead by its
/// latency before reading the frame: a car 12 m ahead coming towards the ego at 5 m/s is 9.5 m ahead
/// 0.5 s later, within `NPCAhead<=10`, so the hand model reads state 2 (risk 2/3) where the same model
/// without a latency reads state 0 (1/3) — and reads state 2 when given the frame moved ahead by hand.
#[test]
fn a_model_with_a_perception_latency_reads_the_road_users_moved_ahead() {
    let plain = hand_model();
    let late = Arc::new(
        Model::try_new(
            laws(),
            vec![plain.properties()[0]
                .clone()
                .with_road_users(RoadUserCorrection {
                    smoothing_s: 0.0,
                    latency_s: 0.5,
                    smooth_velocities: false,
                })],
        )
        .unwrap(),
    );
    let mut oncoming = car_ahead(12.0);
    oncoming.heading = std::f64::consts::PI;
    oncoming.speed_mps = 5.0;
    let f = Frame {
        speed_mps: 5.0,
        obstacles: vec![oncoming],
        ..Frame::default()
    };
    let step = |model: &Arc<Model>, f: &Frame| {
        let mut s = Session::new(model, &SessionConfig::default()).unwrap();
        s.step(f).properties[0].clone()
    };
    let o = step(&plain, &f);
    assert_eq!(o.state, 0);
    assert!(close(o.risk_eventually, 1.0 / 3.0));
    let o = step(&late, &f);
    assert_eq!(o.state, 0b10);
    assert!(close(o.risk_eventually, 2.0 / 3.0));
    let mut moved = f.clone();
    moved.advance_road_users(0.5);
    assert_eq!(step(&plain, &moved).state, 0b10);
    // A session over a whole run agrees frame by frame with the plain model on frames moved ahead.
    let run: Vec<Frame> = (0..20)
        .map(|i| {
            let mut g = f.clone();
            g.obstacles[0].x -= 0.5 * f64::from(i);
            g
        })
        .collect();
    let mut a = Session::new(&late, &SessionConfig::default()).unwrap();
    let mut b = Session::new(&plain, &SessionConfig::default()).unwrap();
    for g in &run {
        let mut moved = g.clone();
        moved.advance_road_users(0.5);
        assert_eq!(
            a.step(g).properties[0].risk_eventually,
            b.step(&moved).properties[0].risk_eventually
        );
    }
}

/// A model that smooths road users reads, frame by frame, what the plain model reads on the frames
/// smoothed and moved ahead by a `Corrector`, and `step_seen` gives that frame; a reset starts the
/// smoothing afresh.
#[test]
fn a_model_that_smooths_reads_the_corrected_frames_and_shows_them() {
    let plain = hand_model();
    let correction = RoadUserCorrection {
        smoothing_s: 0.3,
        latency_s: 0.2,
        smooth_velocities: false,
    };
    let smooth = Arc::new(
        Model::try_new(
            laws(),
            vec![plain.properties()[0].clone().with_road_users(correction)],
        )
        .unwrap(),
    );
    // An oncoming car at 5 m/s, reported at ages that vary: every other frame repeats the last report.
    let run: Vec<Frame> = (0..30)
        .map(|i| {
            let mut car = car_ahead(20.0 - 0.5 * f64::from(i - i % 2));
            car.heading = std::f64::consts::PI;
            car.speed_mps = 5.0;
            Frame {
                t: 0.1 * f64::from(i),
                speed_mps: 5.0,
                obstacles: vec![car],
                ..Frame::default()
            }
        })
        .collect();
    let mut a = Session::new(&smooth, &SessionConfig::default()).unwrap();
    let mut b = Session::new(&plain, &SessionConfig::default()).unwrap();
    let mut corrector = laws::perception::Corrector::new(correction);
    let mut states = std::collections::BTreeSet::new();
    for _ in 0..2 {
        for g in &run {
            let want = corrector.view(g).clone();
            let (outcome, seen) = a.step_seen(g);
            assert_eq!(seen, &want);
            assert_ne!(seen.obstacles[0].x, g.obstacles[0].x);
            let risk = outcome.properties[0].risk_eventually;
            let o = b.step(&want);
            assert_eq!(risk, o.properties[0].risk_eventually);
            states.insert(o.properties[0].state);
        }
        a.reset();
        b.reset();
        corrector.reset();
    }
    assert!(states.len() > 1, "the run crosses a predicate: {states:?}");
    // The plain model shows the frame as given.
    let mut p = Session::new(&plain, &SessionConfig::default()).unwrap();
    assert!(std::ptr::eq(p.step_seen(&run[3]).1, &run[3]));
}
