//! The per-connection inbound queue's two overflow policies (`ConnLink::push_input`): messages lossy,
//! control requests strict and in order; and a model reload taking effect between a client's messages in
//! the order they were sent, whatever still waits in the queue.

use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::link::{ConnLink, ControlQueueFull, OutTopic, CONTROL_CAPACITY};
use super::{Input, Monitor, MonitorConfig, Sinks};
use crate::decide::{Decide, DecideFactory, Decision, PropertyRisk};
use crate::metrics::Metrics;
use crate::models::{ModelSlot, ModelStore};
use ingest::message::{LocalizationMsg, SimMessage};
use laws::Frame;

/// A model slot for queue tests, whose inputs are never decided.
fn slot() -> Arc<ModelSlot> {
    ModelStore::new(Box::new(Constant::new(0.0, None))).current()
}

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
        .map(|q| match q.input {
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
        link.push_input(input, slot()).unwrap();
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
        link.push_input(Input::NewRun(Some(format!("r{k}"))), slot())
            .unwrap();
        link.push_input(pose(k as f64), slot()).unwrap();
    }
    assert_eq!(
        link.push_input(Input::NewRun(Some("late".into())), slot())
            .err(),
        Some(ControlQueueFull {
            waiting: CONTROL_CAPACITY
        })
    );
    // Messages still flow (lossy) while the control quota is full.
    link.push_input(pose(1000.0), slot()).unwrap();
    let mut taken = Vec::new();
    link.take_inputs(1, &mut taken);
    assert!(
        matches!(taken.as_slice(), [q] if matches!(&q.input, Input::NewRun(Some(id)) if id == "r0"))
    );
    link.push_input(Input::NewRun(Some("r1000".into())), slot())
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

/// A model whose every frame has the same risk. The first session made waits, at its first frame, until
/// `gate` is opened: the worker is then held with the rest of the queue still waiting.
struct Constant {
    risk: f64,
    gate: Mutex<Option<mpsc::Receiver<()>>>,
}

impl Constant {
    fn new(risk: f64, gate: Option<mpsc::Receiver<()>>) -> Constant {
        Constant {
            risk,
            gate: Mutex::new(gate),
        }
    }
}

struct ConstantSession {
    decision: Decision,
    gate: Option<mpsc::Receiver<()>>,
}

impl Decide for ConstantSession {
    fn step(&mut self, _: &Frame) -> &Decision {
        if let Some(gate) = self.gate.take() {
            let _ = gate.recv();
        }
        &self.decision
    }
}

impl DecideFactory for Constant {
    fn session(&self) -> Box<dyn Decide> {
        let property = PropertyRisk {
            name: "p".into(),
            state_bits: String::new(),
            state_words: String::new(),
            risk: self.risk,
            violated: false,
            likely_path: Vec::new(),
            expected_time_s: None,
            calibrated: None,
            enforcement: None,
            collision: false,
        };
        Box::new(ConstantSession {
            decision: Decision {
                properties: vec![property],
                seen: None,
            },
            gate: self.gate.lock().take(),
        })
    }

    fn label(&self) -> String {
        format!("risk {}", self.risk)
    }
}

#[test]
fn a_reload_applies_from_the_next_queued_message_not_to_those_already_waiting() {
    let (open, gate) = mpsc::channel();
    let models = Arc::new(ModelStore::new(Box::new(Constant::new(0.25, Some(gate)))));
    let config = MonitorConfig {
        n_workers: 1,
        ..MonitorConfig::default()
    };
    let monitor = Monitor::start(
        config,
        Arc::clone(&models),
        Sinks::default(),
        Arc::new(Metrics::default()),
        CancellationToken::new(),
    )
    .unwrap();
    let handle = monitor.handle();
    let (link, mut out) = ConnLink::new(1, 4096, 4096);
    link.wants_risk.store(true, Ordering::Relaxed);
    // Two seconds of poses at 20 Hz; the worker stops at the first frame, with the rest queued.
    let before: Vec<f64> = (0..=40).map(|k| f64::from(k) * 0.05).collect();
    for &t in &before {
        let Input::Message(msg) = pose(t) else {
            unreachable!()
        };
        handle.send(&link, msg);
    }
    // The reload, then two more seconds: those are the new model's.
    models.swap(Box::new(Constant::new(0.75, None)));
    for k in 41..=80 {
        let Input::Message(msg) = pose(f64::from(k) * 0.05) else {
            unreachable!()
        };
        handle.send(&link, msg);
    }
    open.send(()).unwrap();
    let mut risks: Vec<(f64, f64)> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while risks.last().is_none_or(|&(t, _)| t < 3.5) && Instant::now() < deadline {
        match out.try_recv() {
            Ok(msg) if msg.topic == OutTopic::Risk => {
                let v: serde_json::Value = serde_json::from_str(&msg.msg_json).unwrap();
                risks.push((
                    v["stamp"].as_f64().unwrap(),
                    v["risk"]["p"].as_f64().unwrap(),
                ));
            }
            Ok(_) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    assert_eq!(monitor.shutdown(), 0);
    // A frame is complete once a later message arrives, so the frame at 2.0 s may come with the first
    // message after the reload: frames up to 1.9 s are the old model's, from 2.1 s the new one's.
    let old: Vec<f64> = risks.iter().filter(|r| r.0 < 1.95).map(|r| r.1).collect();
    let new: Vec<f64> = risks.iter().filter(|r| r.0 > 2.05).map(|r| r.1).collect();
    assert!(old.len() >= 15 && new.len() >= 10, "{risks:?}");
    assert!(old.iter().all(|&r| r == 0.25), "{risks:?}");
    assert!(new.iter().all(|&r| r == 0.75), "{risks:?}");
}
