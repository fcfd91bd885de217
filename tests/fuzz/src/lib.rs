//! The bodies of avguard's fuzz targets, one function per parser (issue #11).
//!
//! Each takes arbitrary bytes and drives one input surface as far as a real caller would: decode, then use
//! what was decoded (assemble frames, compile laws, step a monitor session, run a few simulation steps).
//! Any panic, abort, stack overflow, or allocation beyond libFuzzer's `-rss_limit_mb` is a finding; an
//! `Err` is the expected answer to bad input. Where a decoder promises a round trip, the body checks it.
//!
//! `fuzz_targets/*.rs` wrap these for libFuzzer (`cargo xtask fuzz`); `tests/it/fuzz_corpus.rs` replays the
//! committed corpora and the regression inputs through the same functions in the ordinary test suite.

use std::sync::Arc;

use ingest::assemble::{Assembler, AssemblerConfig};
use ingest::message::{Payload, SimMessage};
use laws::{EvalConfig, Evaluator, Frame, LawSet, LawSource, SignalContext, Signals};

/// The frames a body steps through: a quiet one, a moving one near a red light, and one with obstacles.
fn sample_frames() -> Vec<Frame> {
    let mut moving = Frame {
        t: 0.1,
        speed_mps: 12.0,
        stopline_dist_m: 3.0,
        light_color: laws::frame::light_color::RED,
        ..Frame::default()
    };
    moving.horn = true;
    let mut crowded = moving.clone();
    crowded.t = 0.2;
    crowded.obstacles = (0..4)
        .map(|i| laws::Obstacle {
            id: i,
            kind: 5,
            x: 5.0 * f64::from(i),
            y: 1.0,
            heading: 0.0,
            speed_mps: 1.0,
            length: 4.5,
            width: 1.9,
            priority: i == 2,
        })
        .collect();
    vec![Frame::default(), moving, crowded]
}

/// Feeds decoded messages through frame assembly (what the bridge and the importer do next).
fn assemble(msgs: &[SimMessage]) {
    let mut assembler = Assembler::new(AssemblerConfig::default());
    let mut out = Vec::new();
    for m in msgs {
        let _ = assembler.push(m, &mut out);
        // A hostile clock must not make one message produce an unbounded number of ticks.
        assert!(
            out.len() <= 1 << 16,
            "one message produced {} frames",
            out.len()
        );
        out.clear();
    }
}

/// Law text: parse, check that the printed form parses back to the same formula, compile, evaluate.
pub fn law_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let sources = [LawSource {
        name: "fuzz.law".into(),
        text: text.into(),
    }];
    let Ok(set) = LawSet::parse(&sources) else {
        return;
    };
    for law in set.laws() {
        let printed = format!("{} = {};", law.name(), law.formula());
        let again = LawSet::parse(&[LawSource {
            name: "printed.law".into(),
            text: printed.clone(),
        }]);
        match again {
            Ok(again) => assert_eq!(
                again.laws()[0].formula().to_string(),
                law.formula().to_string(),
                "{printed}"
            ),
            Err(e) => panic!("printed law does not parse back: {e}\n{printed}"),
        }
    }
    let Ok(mut ev) = Evaluator::new(&set, &EvalConfig::default()) else {
        return;
    };
    let ctx = SignalContext::default();
    for f in sample_frames().iter().cycle().take(30) {
        let s = Signals::from_frame(f, &ctx);
        let v = ev.step(&s);
        for i in 0..v.len() {
            let _ = (v.violated_now(i), v.in_window(i));
        }
    }
}

/// Scenario TOML: parse and validate, then run the first frames of a simulation.
pub fn scenario_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(scenario) = scenarios::Scenario::from_toml_str(text) else {
        return;
    };
    let mut sim = scenarios::Simulation::new(&scenario, 7);
    let cmd = scenarios::Command::default();
    for _ in 0..50 {
        if sim.step(&cmd).is_none() {
            break;
        }
    }
}

/// The shipped law files (`laws/specs/*.law`), which a `properties.toml` names its laws and atoms from.
fn shipped_laws() -> Vec<LawSource> {
    macro_rules! law {
        ($name:literal) => {
            LawSource {
                name: concat!($name, ".law").into(),
                text: include_str!(concat!("../../../laws/specs/", $name, ".law")).into(),
            }
        };
    }
    vec![
        law!("law38"),
        law!("law45"),
        law!("law46"),
        law!("law50"),
        law!("law51"),
        law!("law52"),
        law!("law53"),
        law!("law57"),
        law!("law59"),
        law!("no_collision"),
        law!("p2g"),
        law!("rule42"),
    ]
}

/// A `properties.toml` over the shipped laws: parse, resolve every property (atoms, related laws,
/// obligation predicates), learn a model from one short run and step a session with it, as `learn` and
/// the bridge would. At most four properties are built, so one input stays cheap.
pub fn properties_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut specs) = monitor::spec::parse_properties_toml(text) else {
        return;
    };
    specs.truncate(4);
    let config = monitor::BuildConfig {
        horizons_steps: vec![1, 3],
        ..monitor::BuildConfig::default()
    };
    let Ok(plan) = monitor::Plan::from_specs(shipped_laws(), &specs, config) else {
        return;
    };
    let mut learner = plan
        .learner(SignalContext::default())
        .expect("a plan that was built makes a learner");
    let frames: Vec<Frame> = sample_frames()
        .into_iter()
        .cycle()
        .take(12)
        .enumerate()
        .map(|(i, mut f)| {
            f.t = 0.1 * i as f64;
            f
        })
        .collect();
    learner
        .observe_run(&frames)
        .expect("a learner observes any run");
    let model = plan
        .build(learner.into_counts())
        .expect("a plan builds a model from its own counts");
    let model = Arc::new(model);
    let mut session = monitor::Session::new(&model, &monitor::SessionConfig::default())
        .expect("a learned model starts a session");
    for f in &frames {
        session.step(f);
    }
}

/// An HDF5 run log, from an in-memory file image.
pub fn log_image(data: &[u8]) {
    if let Ok(log) = scenarios::log::read_log_image("fuzz.h5", data) {
        assert!(!log.frames.is_empty());
    }
}

/// A model file: decode and validate, re-encode to the same bytes, then step a monitor session.
pub fn model_file(data: &[u8]) {
    let Ok(model) = monitor::Model::from_bytes(data) else {
        return;
    };
    // Compared as bytes: a model may hold NaN (e.g. an unvisited state's PAC figure), which is not equal
    // to itself.
    let bytes = model.to_bytes();
    let again = monitor::Model::from_bytes(&bytes).map(|m| m.to_bytes());
    assert_eq!(
        again.as_deref().ok(),
        Some(bytes.as_slice()),
        "a valid model re-encodes to the same bytes"
    );
    let model = Arc::new(model);
    let Ok(mut session) = monitor::Session::new(&model, &monitor::SessionConfig::default()) else {
        return;
    };
    for f in sample_frames().iter().cycle().take(20) {
        session.step(f);
    }
}

/// A binary websocket frame: the protobuf `Envelope { channel, payload }`.
pub fn envelope(data: &[u8]) {
    if let Ok(msg) = SimMessage::decode_envelope(data) {
        assemble(&[msg]);
    }
}

/// One Apollo message's protobuf payload on `topic`.
pub fn apollo_message(topic: &str, data: &[u8]) {
    if let Ok(msg) = SimMessage::decode(topic, Payload::Binary(data)) {
        assemble(&[msg]);
    }
}

/// Protobuf text format (Apollo's `.pb.txt`): the first line names the topic, the rest is the message.
pub fn apollo_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (topic, body) = text.split_once('\n').unwrap_or((text, ""));
    if let Ok(msg) = SimMessage::decode(topic.trim(), Payload::Text(body)) {
        assemble(&[msg]);
    }
}

/// A rosbridge v2 text frame: every op in it, every `publish` decoded (JSON mapping) and assembled, and
/// every `call_service` answered.
pub fn rosbridge_frame(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut msgs = Vec::new();
    for (_, op) in bridge::rosbridge::Op::parse_frame(text) {
        match op {
            Ok(bridge::rosbridge::Op::Publish { topic, msg, .. }) => {
                if let Ok(m) = SimMessage::decode(&topic, Payload::Json(&msg)) {
                    msgs.push(m);
                }
            }
            Ok(bridge::rosbridge::Op::CallService { id, service, args }) => {
                let _ = bridge::rosbridge::answer_call(&service, id.as_ref(), &args);
            }
            _ => {}
        }
    }
    assemble(&msgs);
}

/// A Cyber RT record file, read from memory: every chunk read, every consumed message decoded and
/// assembled into runs.
pub fn cyber_record(data: &[u8]) {
    let source = std::io::Cursor::new(data);
    let Ok(reader) = ingest::record::RecordReader::from_reader(
        std::path::Path::new("fuzz.record"),
        source,
        data.len() as u64,
    ) else {
        return;
    };
    let mut assembler = Assembler::new(AssemblerConfig::default());
    let mut n_frames = 0usize;
    let _ = ingest::record::import_from(reader, &mut assembler, |step| {
        if let ingest::record::Imported::Frame(_) = step {
            n_frames += 1;
        }
    });
}

/// An Apollo HD map from memory (binary, falling back to text as Apollo's loader does), then a drive
/// along it: lane matching and the road fields of a few frames.
pub fn hd_map(data: &[u8]) {
    use ingest::hdmap::{HdMap, MapFormat};
    let Ok(map) = HdMap::from_bytes(data, MapFormat::Binary)
        .or_else(|_| HdMap::from_bytes(data, MapFormat::Text))
    else {
        return;
    };
    let start = map
        .lanes()
        .first()
        .and_then(|l| l.centre.points().first().copied());
    let mut tracker = ingest::hdmap::tracker::MapTracker::new(Arc::new(map), Default::default());
    if let Some(p) = start {
        for k in 0..5 {
            let mut frame = Frame {
                x: p.x + f64::from(k),
                y: p.y,
                ..Frame::default()
            };
            tracker.locate(frame.x, frame.y, 0.0);
            tracker.fill(&mut frame);
        }
    }
}

/// A target's body: it takes the fuzzer's bytes.
pub type Body = fn(&[u8]);

/// Every target by name, for the corpus replay and `xtask fuzz`.
pub const TARGETS: &[(&str, Body)] = &[
    ("law_text", law_text),
    ("scenario_toml", scenario_toml),
    ("properties_toml", properties_toml),
    ("log_image", log_image),
    ("model_file", model_file),
    ("envelope", envelope),
    ("msg_localization", |d| {
        apollo_message("/apollo/localization/pose", d)
    }),
    ("msg_chassis", |d| {
        apollo_message("/apollo/canbus/chassis", d)
    }),
    ("msg_obstacles", |d| {
        apollo_message("/apollo/perception/obstacles", d)
    }),
    ("msg_traffic_lights", |d| {
        apollo_message("/apollo/perception/traffic_light", d)
    }),
    ("msg_text", apollo_text),
    ("rosbridge", rosbridge_frame),
    ("cyber_record", cyber_record),
    ("hd_map", hd_map),
];

/// Runs the target called `name` on `data` (unknown names do nothing; `TARGETS` lists the names).
pub fn run(name: &str, data: &[u8]) {
    if let Some((_, body)) = TARGETS.iter().find(|(n, _)| *n == name) {
        body(data);
    }
}
