//! The per-connection inbound queue's two overflow policies (`ConnLink::push_input`): messages lossy,
//! control requests strict and in order.

use super::link::{ConnLink, ControlQueueFull, CONTROL_CAPACITY};
use super::Input;
use ingest::message::{LocalizationMsg, SimMessage};

fn pose(t: f64) -> Input {
    Input::Message(SimMessage::Localization(LocalizationMsg {
        time_s: t,
        x_m: 0.0,
        y_m: 0.0,
        z_m: 0.0,
        heading_rad: None,
        speed_mps: None,
        accel_mps2: None,
    }))
}

/// The queue's contents, oldest first: a message as its time, a new run as `-1 - k` for run id `rk`.
fn drain(link: &ConnLink) -> Vec<f64> {
    let mut out = Vec::new();
    while link.take_inputs(3, &mut out) {}
    out.into_iter()
        .map(|(input, _)| match input {
            Input::Message(SimMessage::Localization(l)) => l.time_s,
            Input::NewRun(id) => {
                let id = id.unwrap();
                -1.0 - id.trim_start_matches('r').parse::<f64>().unwrap()
            }
            Input::Message(other) => panic!("unexpected {other:?}"),
        })
        .collect()
}

#[test]
fn overflow_drops_the_oldest_message_never_a_control_request() {
    let (link, _out) = ConnLink::new(1, 4, 3);
    // m0 m1 | run r0 | m2 m3 m4 | run r1 | m5: capacity 3 messages, so m0, m1 and m2 are dropped.
    for input in [
        pose(0.0),
        pose(1.0),
        Input::NewRun(Some("r0".into())),
        pose(2.0),
        pose(3.0),
        pose(4.0),
        Input::NewRun(Some("r1".into())),
        pose(5.0),
    ] {
        link.push_input(input).unwrap();
    }
    assert_eq!(link.n_dropped.load(std::sync::atomic::Ordering::Relaxed), 3);
    assert_eq!(
        link.n_received.load(std::sync::atomic::Ordering::Relaxed),
        8
    );
    assert_eq!(drain(&link), vec![-1.0, 3.0, 4.0, -2.0, 5.0]);
    assert_eq!(link.inbox_len(), 0);
}

#[test]
fn control_requests_beyond_their_quota_are_refused_and_the_quota_frees_when_taken() {
    let (link, _out) = ConnLink::new(1, 4, 2);
    for k in 0..CONTROL_CAPACITY {
        link.push_input(Input::NewRun(Some(format!("r{k}"))))
            .unwrap();
        link.push_input(pose(k as f64)).unwrap();
    }
    assert_eq!(
        link.push_input(Input::NewRun(Some("late".into()))).err(),
        Some(ControlQueueFull {
            waiting: CONTROL_CAPACITY
        })
    );
    // Messages still flow (lossy) while the control quota is full.
    link.push_input(pose(1000.0)).unwrap();
    let mut taken = Vec::new();
    link.take_inputs(1, &mut taken);
    assert!(matches!(taken.as_slice(), [(Input::NewRun(Some(id)), _)] if id == "r0"));
    link.push_input(Input::NewRun(Some("r1000".into())))
        .expect("one request taken, one slot free");
    let rest = drain(&link);
    let n_runs = rest.iter().filter(|v| **v < 0.0).count();
    assert_eq!(n_runs, CONTROL_CAPACITY, "r1 .. r63 and r1000");
    let runs: Vec<f64> = rest.iter().copied().filter(|v| *v < 0.0).collect();
    let expected: Vec<f64> = (1..CONTROL_CAPACITY)
        .map(|k| -1.0 - k as f64)
        .chain([-1001.0])
        .collect();
    assert_eq!(runs, expected, "in the order they were sent");
    // Only the two newest messages survive, each after the run request sent before it.
    assert_eq!(rest[rest.len() - 4..], [-64.0, 63.0, 1000.0, -1001.0]);
}
