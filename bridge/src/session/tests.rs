use std::sync::Arc;

use laws::frame::light_color;
use laws::Frame;
use laws::LawSource;
use monitor::{BuildConfig, Plan, PropertySpec, Session, SessionConfig};

use super::*;

const LAW: &str =
    "law51_sub5 = G( (trafficLightAhead.color == red & stoplineAhead(2)) -> F[0,2](speed < 0.5) );";

/// A run towards a red light's stop line: the driver stops in time iff `stops`.
fn run(stops: bool) -> Vec<Frame> {
    (0..80)
        .map(|k| {
            let dist = (20.0 - f64::from(k) * 0.5).max(1.0);
            let speed = if stops && k >= 38 { 0.0 } else { 5.0 };
            Frame {
                t: f64::from(k) * 0.1,
                speed_mps: speed,
                light_color: light_color::RED,
                signal_ahead: true,
                stopline_dist_m: dist,
                ..Frame::default()
            }
        })
        .collect()
}

fn model() -> Model {
    let laws = vec![LawSource {
        name: "test.law".into(),
        text: LAW.into(),
    }];
    let plan = Plan::from_specs(
        laws,
        &[PropertySpec::for_law("law51_sub5")],
        BuildConfig::default(),
    )
    .unwrap();
    let mut learner = plan.learner(laws::SignalContext::default()).unwrap();
    for i in 0..20 {
        learner.observe_run(&run(i % 3 != 0)).unwrap();
    }
    plan.build(learner.into_counts()).unwrap()
}

#[test]
fn adapter_reports_the_sessions_risks_and_verdicts() {
    let model = model();
    let mut direct = Session::new(&Arc::new(model.clone()), &SessionConfig::default()).unwrap();
    let factory = MonitorFactory::new(model, None, "test".into()).unwrap();
    let mut decide = factory.session();
    let mut n_violations = 0;
    let mut n_explained = 0;
    for frame in run(false) {
        let expected = direct.step(&frame).properties[0].clone();
        let got = &decide.step(&frame).properties[0];
        assert_eq!(got.name, "law51_sub5");
        assert_eq!(got.risk, expected.risk_eventually);
        assert_eq!(got.violated, expected.unsafe_now);
        assert_eq!(
            got.state_bits,
            direct.bit_string(0, expected.state).unwrap()
        );
        assert_eq!(got.state_words, direct.decode(0, expected.state).unwrap());
        n_violations += usize::from(got.violated);
        n_explained += usize::from(!got.likely_path.is_empty());
    }
    assert!(n_violations >= 1, "the non-stopping run violates the law");
    assert!(
        n_explained > 0,
        "states that can reach the violation carry a most likely path"
    );
}

#[test]
fn horizon_selects_the_bounded_table_and_unknown_horizons_are_refused() {
    let model = model();
    let mut direct = Session::new(&Arc::new(model.clone()), &SessionConfig::default()).unwrap();
    let factory = MonitorFactory::new(model.clone(), Some(2.0), "test".into()).unwrap();
    let mut decide = factory.session();
    let h = direct
        .horizons_steps(0)
        .unwrap()
        .iter()
        .position(|&k| k == 20)
        .unwrap();
    for frame in run(false) {
        let expected = direct.step(&frame).properties[0].risk_within(h).unwrap();
        assert_eq!(decide.step(&frame).properties[0].risk, expected);
    }
    let err = MonitorFactory::new(model, Some(4.0), "test".into())
        .err()
        .unwrap();
    assert!(err.to_string().contains("no 4 s table"), "{err}");
}

#[test]
fn each_session_starts_with_fresh_windows() {
    let factory = MonitorFactory::new(model(), None, "test".into()).unwrap();
    let mut a = factory.session();
    let frames = run(false);
    let first: Vec<f64> = frames
        .iter()
        .map(|f| a.step(f).properties[0].risk)
        .collect();
    let mut b = factory.session();
    let second: Vec<f64> = frames
        .iter()
        .map(|f| b.step(f).properties[0].risk)
        .collect();
    assert_eq!(first, second);
}

/// A collision property (unsafe: the collision flag) reaches the enforcer with its interventions'
/// threshold beside its alarm's, each for the risk the session reads; the law property has neither.
#[test]
fn a_collision_property_carries_its_interventions_threshold() {
    let laws = vec![
        LawSource {
            name: "test.law".into(),
            text: LAW.into(),
        },
        LawSource {
            name: "c.law".into(),
            text: "no_collision = G(collision == 0);".into(),
        },
    ];
    let crash = PropertySpec {
        unsafe_atom: Some("collision".into()),
        extra_atoms: vec!["speed > 3".into()],
        ..PropertySpec::for_law("no_collision")
    };
    let plan = Plan::from_specs(
        laws,
        &[PropertySpec::for_law("law51_sub5"), crash],
        BuildConfig::default(),
    )
    .unwrap();
    let mut learner = plan.learner(laws::SignalContext::default()).unwrap();
    for i in 0..20 {
        let mut frames = run(i % 3 != 0);
        if i % 4 == 0 {
            frames.last_mut().unwrap().collision = true;
        }
        learner.observe_run(&frames).unwrap();
    }
    let mut model = plan.build(learner.into_counts()).unwrap();
    let at = |theta: f64, horizon_steps: Option<u32>| monitor::calibrate::Calibration {
        theta,
        debounce_frames: 2,
        horizon_steps,
        target_false_alarm: 0.1,
        confidence: 0.95,
        n_safe_runs: 30,
        n_false_alarms: 1,
        false_alarm_upper: 0.15,
        n_violating_runs: 5,
        n_predicted: 4,
        median_lead_s: Some(1.0),
    };
    model
        .set_calibration("no_collision", at(0.4, None))
        .unwrap();
    model
        .set_enforcement(
            "no_collision",
            Some(monitor::calibrate::Calibration {
                debounce_frames: 1,
                ..at(0.2, None)
            }),
        )
        .unwrap();
    let first = |horizon_s| {
        let factory = MonitorFactory::new(model.clone(), horizon_s, "test".into()).unwrap();
        factory.session().step(&run(true)[0]).clone()
    };
    let d = first(None);
    let (law, crash) = (&d.properties[0], &d.properties[1]);
    assert_eq!((law.name.as_str(), law.collision), ("law51_sub5", false));
    assert_eq!((law.calibrated, law.enforcement), (None, None));
    assert_eq!(crash.name, "no_collision");
    assert!(crash.collision);
    assert_eq!(crash.calibrated, Some((0.4, 2)));
    assert_eq!(crash.enforcement, Some((0.2, 1)));
    // Read within 2 s, neither P(eventually) calibration applies.
    let d = first(Some(2.0));
    assert_eq!(
        (d.properties[1].calibrated, d.properties[1].enforcement),
        (None, None)
    );
}

/// A model that reads road users otherwise than as they arrive hands each frame as it read it to the
/// enforcer (`Decision::seen`): the frame its session's corrector gives, smoothed and moved ahead; a model
/// that reads them as they arrive hands none.
#[test]
fn the_decision_carries_the_frame_as_the_model_read_it() {
    use laws::perception::{Corrector, RoadUserCorrection};
    let plain = model();
    let correction = RoadUserCorrection {
        smoothing_s: 0.5,
        latency_s: 0.3,
        smooth_velocities: true,
    };
    let corrected = Model::try_new(
        plain.laws().to_vec(),
        plain
            .properties()
            .iter()
            .map(|p| p.clone().with_road_users(correction))
            .collect(),
    )
    .unwrap();
    // A car crossing ahead, its reports repeated every other frame.
    let frames: Vec<Frame> = run(false)
        .into_iter()
        .enumerate()
        .map(|(k, mut f)| {
            let y = -30.0 + 1.0 * (k - k % 2) as f64;
            f.obstacles = vec![laws::Obstacle {
                id: 3,
                kind: laws::frame::obstacle_type::VEHICLE,
                x: 15.0,
                y,
                heading: std::f64::consts::FRAC_PI_2,
                speed_mps: 10.0,
                length: 4.0,
                width: 2.0,
                priority: false,
            }];
            f
        })
        .collect();
    let mut as_arrived = MonitorFactory::new(plain, None, "plain".into())
        .unwrap()
        .session();
    let mut read = MonitorFactory::new(corrected, None, "read".into())
        .unwrap()
        .session();
    let mut corrector = Corrector::new(correction);
    for f in &frames {
        assert_eq!(as_arrived.step(f).seen, None);
        let want = corrector.view(f).clone();
        let seen = read.step(f).seen.clone().expect("the frame as read");
        assert_eq!(seen, want);
        assert_ne!(seen.obstacles[0].y, f.obstacles[0].y);
    }
}
