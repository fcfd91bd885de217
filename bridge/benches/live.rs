//! Live-path benchmarks, each against a baseline measured in the same run:
//!
//! (a) throughput, once with rosbridge JSON poses and once with binary envelopes: messages per second
//!     through websocket → decode → assemble → decide → enforce → risk reply, vs a bare tokio-tungstenite
//!     echo server answering the same frames (target: ≥ 50 % of the echo rate). Both pipelined with the
//!     same window of frames in flight; echo and bridge alternate, best of 3 each.
//! (b) latency from sending the frame that crosses θ to receiving its intervention, at the client
//!     (p50/p99), vs the echo round trip of the same frame in lock-step.
//! (c) per-frame decision latency inside the monitor stage (decide + enforce, 8 properties) with a
//!     stand-in `Decide` (per property: 4 predicates → 4-bit state → table lookup), vs a session that
//!     returns a fixed decision (the enforcement and timer floor). Target: median ≤ 0.5 µs, p99 ≤ 5 µs.
//!
//! (d) the brake check's cost per frame during an alarm episode (8 properties alarmed, their enforcer
//!     rolling out braking and keeping on), with 1 to 1,024 road users within reach of the ego, vs the same
//!     frames with the check off (`brake_check_s = 0`) in the same run.
//!
//! Run: `cargo bench -p bridge --bench live` (release). Sizes scale with `AVGUARD_BENCH_SCALE` (default 1).

use std::hint::black_box;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bridge::decide::{Decide, DecideFactory, Decision, PropertyRisk};
use bridge::enforce::{EnforceConfig, Enforcer};
use bridge::pipeline::{ModelStore, MonitorConfig};
use bridge::server::{self, BridgeConfig};
use futures_util::{SinkExt, StreamExt};
use laws::Frame;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

const N_PROPS: usize = 8;

/// Stand-in session: property p's state is 4 predicates of the frame, its risk a table lookup.
struct TableSession {
    tables: Vec<[f64; 16]>,
    decision: Decision,
}

impl TableSession {
    fn new() -> Self {
        let tables = (0..N_PROPS)
            .map(|p| std::array::from_fn(|s| ((s * 7 + p * 3) % 16) as f64 / 16.0))
            .collect();
        let decision = Decision {
            properties: (0..N_PROPS)
                .map(|p| PropertyRisk {
                    name: format!("law{p}"),
                    state_bits: "0000".into(),
                    state_words: String::new(),
                    risk: 0.0,
                    violated: false,
                    likely_path: Vec::new(),
                    expected_time_s: None,
                    calibrated: None,
                    enforcement: None,
                    collision: false,
                })
                .collect(),
            seen: None,
        };
        TableSession { tables, decision }
    }
}

impl Decide for TableSession {
    fn step(&mut self, f: &Frame) -> &Decision {
        for (p, (prop, table)) in self
            .decision
            .properties
            .iter_mut()
            .zip(&self.tables)
            .enumerate()
        {
            let bits = usize::from(f.speed_mps > 5.0 + p as f64)
                | usize::from(f.stopline_dist_m < 30.0) << 1
                | usize::from(f.light_color == 1) << 2
                | usize::from(f.x >= 5.0) << 3;
            // The crossing frame of benchmark (b): x ≥ 5 → state 8.. → risk from the table, forced high.
            prop.risk = if f.x >= 5.0 { 0.9 } else { table[bits] * 0.4 };
        }
        &self.decision
    }
}

struct Fixed(Decision);
impl Decide for Fixed {
    fn step(&mut self, _: &Frame) -> &Decision {
        &self.0
    }
}

struct Factory;
impl DecideFactory for Factory {
    fn session(&self) -> Box<dyn Decide> {
        Box::new(TableSession::new())
    }
    fn label(&self) -> String {
        "table stand-in".into()
    }
}

fn scale() -> usize {
    std::env::var("AVGUARD_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// A pose as a binary envelope (`LocalizationEstimate`, protobuf wire encoding).
fn pose_binary(t: f64, x: f64) -> Vec<u8> {
    use prost::Message as _;
    let frame = Frame {
        t,
        x,
        speed_mps: 10.0,
        ..Frame::default()
    };
    ingest::wire::Envelope {
        channel: "/apollo/localization/pose".into(),
        payload: bridge::drive::encode::localization(&frame).encode_to_vec(),
    }
    .encode_to_vec()
}

fn pose(t: f64, x: f64) -> String {
    json!({"op": "publish", "topic": "/apollo/localization/pose",
        "msg": {"measurementTime": t, "pose": {"position": {"x": x, "y": 0.0}, "heading": 0.0,
            "linearVelocity": {"x": 10.0, "y": 0.0, "z": 0.0}}}})
    .to_string()
}

async fn echo_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            stream.set_nodelay(true).unwrap();
            tokio::spawn(async move {
                let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else {
                    return;
                };
                while let Some(Ok(msg)) = ws.next().await {
                    if (msg.is_text() || msg.is_binary()) && ws.send(msg).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

async fn bridge_server() -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = BridgeConfig {
        max_connections: 8,
        outbound_capacity: 1024,
        shutdown_grace: Duration::from_secs(1),
        monitor: MonitorConfig {
            n_workers: 1,
            data_capacity: 8192,
            ..MonitorConfig::default()
        },
        ..BridgeConfig::default()
    };
    let (stop, rx) = tokio::sync::oneshot::channel::<()>();
    let models = Arc::new(ModelStore::new(Box::new(Factory)));
    tokio::spawn(server::run(listener, config, models, async move {
        let _ = rx.await;
    }));
    (addr, stop)
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(addr: SocketAddr) -> Ws {
    tokio_tungstenite::connect_async_with_config(format!("ws://{addr}/"), None, true)
        .await
        .unwrap()
        .0
}

async fn next_json(ws: &mut Ws) -> Value {
    loop {
        if let Message::Text(t) = ws.next().await.unwrap().unwrap() {
            return serde_json::from_str(t.as_str()).unwrap();
        }
    }
}

/// `n` poses, 0.1 s apart, as rosbridge JSON (`binary` false) or binary envelopes.
fn poses(n: usize, binary: bool) -> Vec<Message> {
    (0..n)
        .map(|k| {
            let t = k as f64 * 0.1;
            if binary {
                Message::binary(pose_binary(t, 0.0))
            } else {
                Message::text(pose(t, 0.0))
            }
        })
        .collect()
}

/// Sends `frames` with up to `window` unanswered (one reply per frame); returns messages per second.
async fn pipelined(ws: &mut Ws, frames: &[Message], window: usize) -> f64 {
    let n = frames.len();
    let started = Instant::now();
    let (mut sent, mut got) = (0, 0);
    while got < n {
        while sent < n && sent - got < window {
            ws.feed(frames[sent].clone()).await.unwrap();
            sent += 1;
        }
        ws.flush().await.unwrap();
        ws.next().await.unwrap().unwrap();
        got += 1;
    }
    n as f64 / started.elapsed().as_secs_f64()
}

fn quantiles(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((p * v.len() as f64) as usize).min(v.len() - 1)];
    (q(0.5), q(0.99))
}

async fn live_benches() {
    let n = 20_000 * scale();
    let window = 64;
    let echo = echo_server().await;
    let (bridge, stop) = bridge_server().await;

    // (a) throughput, per encoding; the bridge answers every pose with its risk message. Echo and bridge
    // alternate, best of `rounds`, so that a burst of load on the machine does not land on one side only.
    for binary in [false, true] {
        let frames = poses(n, binary);
        let (mut echo_rate, mut bridge_rate) = (0.0f64, 0.0f64);
        for _ in 0..3 {
            let mut e = connect(echo).await;
            echo_rate = echo_rate.max(pipelined(&mut e, &frames, window).await);
            let mut b = connect(bridge).await;
            b.send(Message::text(
                json!({"op": "subscribe", "topic": "/avguard/risk"}).to_string(),
            ))
            .await
            .unwrap();
            bridge_rate = bridge_rate.max(pipelined(&mut b, &frames, window).await);
        }
        println!(
            "(a) throughput, {}: bridge {:.0} msg/s, echo {:.0} msg/s, ratio {:.2} (target >= 0.50)",
            if binary { "binary envelopes" } else { "rosbridge JSON" },
            bridge_rate,
            echo_rate,
            bridge_rate / echo_rate
        );
    }
    let mut e = connect(echo).await;

    // (b) θ-crossing latency vs echo round trip, lock-step.
    let k = 2_000 * scale();
    let mut rtt = Vec::with_capacity(k);
    for i in 0..k {
        let t0 = Instant::now();
        e.send(Message::text(pose(i as f64 * 0.1, 6.0)))
            .await
            .unwrap();
        next_json(&mut e).await;
        rtt.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    let mut b = connect(bridge).await;
    for topic in ["/avguard/intervention", "/avguard/risk"] {
        b.send(Message::text(
            json!({"op": "subscribe", "topic": topic}).to_string(),
        ))
        .await
        .unwrap();
    }
    let mut lat = Vec::with_capacity(k);
    let mut t = 0.0;
    for _ in 0..k {
        // A calm frame (risk < θ − hysteresis, ends any episode), then the crossing frame.
        b.send(Message::text(pose(t, 0.0))).await.unwrap();
        loop {
            let v = next_json(&mut b).await;
            if v["topic"] == "/avguard/risk" {
                break;
            }
        }
        t += 0.1;
        let t0 = Instant::now();
        b.send(Message::text(pose(t, 6.0))).await.unwrap();
        loop {
            let v = next_json(&mut b).await;
            if v["topic"] == "/avguard/intervention" && v["msg"]["action"] == "slow_down" {
                lat.push(t0.elapsed().as_secs_f64() * 1e6);
                break;
            }
        }
        // Its risk reply.
        loop {
            if next_json(&mut b).await["topic"] == "/avguard/risk" {
                break;
            }
        }
        t += 0.1;
    }
    let (l50, l99) = quantiles(lat);
    let (r50, r99) = quantiles(rtt);
    println!(
        "(b) theta-crossing -> intervention at the client: p50 {l50:.1} us, p99 {l99:.1} us; \
         echo round trip p50 {r50:.1} us, p99 {r99:.1} us; ratio p50 {:.2}, p99 {:.2}",
        l50 / r50,
        l99 / r99
    );
    let _ = stop.send(());
}

/// Median and p99 per-frame time of decide + enforce, ns.
fn stage_latency(session: &mut dyn Decide, frames: &[Frame]) -> (f64, f64) {
    let mut enforcer = Enforcer::new(EnforceConfig::default());
    let mut events = Vec::new();
    let mut times = Vec::with_capacity(frames.len());
    for f in frames {
        let t0 = Instant::now();
        let d = session.step(f);
        events.clear();
        enforcer.step(f, d, &mut events);
        black_box(&events);
        times.push(t0.elapsed().as_nanos() as f64);
    }
    quantiles(times)
}

fn decision_bench() {
    let n = 200_000 * scale();
    let frames: Vec<Frame> = (0..n)
        .map(|k| Frame {
            t: k as f64 * 0.1,
            speed_mps: (k % 150) as f64 / 10.0,
            stopline_dist_m: (k % 400) as f64 / 4.0,
            light_color: (k % 4) as i32,
            x: if k % 1000 < 10 { 6.0 } else { 0.0 },
            ..Frame::default()
        })
        .collect();
    let mut table = TableSession::new();
    let fixed_decision = table.decision.clone();
    let mut fixed = Fixed(fixed_decision);
    // Warm up both.
    stage_latency(&mut table, &frames[..n / 10]);
    stage_latency(&mut fixed, &frames[..n / 10]);
    let (m, p99) = stage_latency(&mut table, &frames);
    let (bm, bp99) = stage_latency(&mut fixed, &frames);
    println!(
        "(c) monitor stage, {N_PROPS} properties (stand-in table session): median {m:.0} ns, p99 {p99:.0} ns \
         (targets 500 ns / 5000 ns); fixed-decision floor median {bm:.0} ns, p99 {bp99:.0} ns; ratio {:.2}",
        m / bm.max(1.0)
    );
}

/// Per-frame time of `Enforcer::step` with every property alarmed, over frames with `n_obstacles` road
/// users scattered within 30 m of the ego and moving at up to 15 m/s.
fn brake_check_latency(n_obstacles: usize, brake_check_s: f64, frames: usize) -> (f64, f64) {
    let mut alarmed = TableSession::new().decision;
    for p in &mut alarmed.properties {
        p.risk = 0.9;
    }
    let mut seed = 12_345u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let frames: Vec<Frame> = (0..frames)
        .map(|k| Frame {
            t: k as f64 * 0.1,
            speed_mps: 8.0,
            accel_mps2: 0.5,
            heading: 0.02 * k as f64,
            obstacles: (0..n_obstacles)
                .map(|i| laws::Obstacle {
                    id: i as i32,
                    kind: laws::frame::obstacle_type::VEHICLE,
                    x: 60.0 * next() - 30.0,
                    y: 60.0 * next() - 30.0,
                    heading: 6.3 * next(),
                    speed_mps: 15.0 * next(),
                    length: 4.5,
                    width: 1.8,
                    priority: false,
                })
                .collect(),
            ..Frame::default()
        })
        .collect();
    let mut enforcer = Enforcer::new(EnforceConfig {
        brake_check_s,
        ..EnforceConfig::default()
    });
    let mut events = Vec::new();
    let mut times = Vec::with_capacity(frames.len());
    for f in &frames {
        let t0 = Instant::now();
        events.clear();
        enforcer.step(f, &alarmed, &mut events);
        black_box(&events);
        times.push(t0.elapsed().as_nanos() as f64);
    }
    quantiles(times)
}

fn brake_check_bench() {
    for n in [1, 10, 100, 1024] {
        let frames = (20_000 / n).max(200) * scale();
        let (m, p99) = brake_check_latency(n, 3.0, frames);
        let (bm, bp99) = brake_check_latency(n, 0.0, frames);
        println!(
            "(d) brake check during an episode, {n} road users near: median {:.1} µs, p99 {:.1} µs; check off \
             median {:.1} µs, p99 {:.1} µs; ratio {:.1}",
            m / 1e3,
            p99 / 1e3,
            bm / 1e3,
            bp99 / 1e3,
            m / bm.max(1.0)
        );
    }
}

fn main() {
    decision_bench();
    brake_check_bench();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(live_benches());
}
