//! Load and soak benchmark (issue #11): N simulated clients, each sending one simulator tick every 10 ms
//! (100 Hz) through the whole live pipeline — websocket, binary envelopes of the five Apollo channels,
//! decoding, frame assembly, a real `monitor::Session` with a model learned from simulated runs, enforcement,
//! the prediction log and HDF5 recording — and waiting for each frame's risk reply.
//!
//! Prints messages per second, the decision latency each client sees (frame sent → its risk reply:
//! p50/p99/max), dropped frames (inbound drops, risk replies dropped, replies missing) and the resident
//! memory of the process (bridge and clients) sampled over time. Targets: 10 clients × 100 Hz for 10
//! minutes with 0 drops, p99 < 2 ms, and memory at the end ≤ memory after the first minute + 10 MB.
//! Before the soak it measures what `--fsync` costs, beside the same writes without it.
//!
//! Run: `cargo bench -p bridge --bench soak -- [--duration-s S] [--clients N] [--rate-hz R] [--fsync]`
//! (defaults: 60 s, 10 clients, 100 Hz; `--fsync` runs the soak itself with fsync on).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bridge::config::BridgeConfig;
use bridge::drive::encode::{encode_frame, Encoding, WsFrame};
use bridge::enforce::Event;
use bridge::pipeline::ModelStore;
use bridge::predlog::PredictionLog;
use bridge::record::{RecordConfig, Recording};
use bridge::server;
use bridge::session::MonitorFactory;
use futures_util::{SinkExt, StreamExt};
use laws::Frame;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

struct Args {
    duration: Duration,
    clients: usize,
    rate_hz: f64,
    fsync: bool,
}

fn args() -> Args {
    let mut a = Args {
        duration: Duration::from_secs(60),
        clients: 10,
        rate_hz: 100.0,
        fsync: false,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < argv.len() {
        let value = || argv.get(i + 1).and_then(|v| v.parse::<f64>().ok());
        match argv[i].as_str() {
            "--duration-s" => {
                a.duration = Duration::from_secs_f64(value().expect("--duration-s S"))
            }
            "--clients" => a.clients = value().expect("--clients N") as usize,
            "--rate-hz" => a.rate_hz = value().expect("--rate-hz R"),
            "--fsync" => {
                a.fsync = true;
                i += 1;
                continue;
            }
            // `cargo bench` passes `--bench`; anything else unknown is ignored too.
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    a
}

fn workspace() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("bridge/ sits in the workspace")
        .to_path_buf()
}

/// Simulated red-light runs: training data for the model, and the frames the clients replay.
fn runs(n: u64, seed: u64) -> Vec<Vec<Frame>> {
    let text = std::fs::read_to_string(workspace().join("scenarios/red_light_queue.toml")).unwrap();
    let scenario = scenarios::Scenario::from_toml_str(&text).unwrap();
    (0..n)
        .map(|i| scenarios::run(&scenario, seed + i))
        .collect()
}

/// A model learned (as `avguard learn --laws laws/specs` does) from 20 simulated runs.
fn learn_model() -> monitor::Model {
    let laws = laws::shipped::sources();
    let specs = monitor::spec::parse_properties_toml(laws::shipped::PROPERTIES_TOML).unwrap();
    let plan = monitor::Plan::from_specs(laws, &specs, monitor::BuildConfig::default()).unwrap();
    let mut learner = plan.learner(laws::SignalContext::default()).unwrap();
    for run in runs(20, 1) {
        learner.observe_run(&run).unwrap();
    }
    plan.build(learner.into_counts()).unwrap()
}

fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u64>().ok())
        })
        .map_or(0, |pages| pages * 4096)
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Microseconds per write, without and with fsync: prediction-log lines and recorded frames.
fn fsync_cost(frames: &[Frame]) {
    let dir = tempfile::tempdir().unwrap();
    let mut per_line = Vec::new();
    for fsync in [false, true] {
        let log =
            PredictionLog::create_with(&dir.path().join(format!("p{fsync}.jsonl")), fsync).unwrap();
        let n = 500;
        let started = Instant::now();
        for k in 0..n {
            let event = Event::Violation {
                t: f64::from(k) * 0.1,
                property: "law51_sub5".into(),
            };
            log.write(1, "conn1", &event).unwrap();
        }
        per_line.push(started.elapsed().as_secs_f64() * 1e6 / f64::from(n));
    }
    let mut per_frame = Vec::new();
    for fsync in [false, true] {
        let config = RecordConfig {
            path: dir.path().join(format!("r{fsync}.h5")),
            frame_period_s: 0.1,
            fsync,
        };
        let mut rec = Recording::create(&config, 1).unwrap();
        let n = frames.len().min(2000);
        let started = Instant::now();
        for (k, f) in frames.iter().take(n).enumerate() {
            let mut f = f.clone();
            f.t = k as f64 * 0.1;
            rec.append(&f).unwrap();
        }
        rec.finish().unwrap();
        per_frame.push(started.elapsed().as_secs_f64() * 1e6 / n as f64);
    }
    println!(
        "fsync cost: prediction-log line {:.1} µs without, {:.1} µs with fsync ({:.0}×); recorded frame {:.1} µs \
         without, {:.1} µs with fsync every {} frames ({:.1}×)",
        per_line[0],
        per_line[1],
        per_line[1] / per_line[0],
        per_frame[0],
        per_frame[1],
        bridge::record::FLUSH_EVERY_FRAMES,
        per_frame[1] / per_frame[0]
    );
}

/// One client: a tick every `period`, each frame's messages in one burst; returns its reply latencies (s)
/// and the number of frames it sent.
async fn client(
    addr: SocketAddr,
    ticks: Arc<Vec<Vec<Message>>>,
    offset: usize,
    period: Duration,
    until: Instant,
) -> (Vec<f64>, usize) {
    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/"))
        .await
        .unwrap();
    let (mut sink, mut stream) = ws.split();
    sink.send(Message::text(
        r#"{"op":"subscribe","topic":"/avguard/risk"}"#,
    ))
    .await
    .unwrap();
    let sent_at: Arc<Mutex<VecDeque<Instant>>> = Arc::default();
    let reader_sent = Arc::clone(&sent_at);
    let reader = tokio::spawn(async move {
        let mut latencies = Vec::new();
        while let Some(Ok(msg)) = stream.next().await {
            if let Message::Text(t) = msg {
                if t.as_str().contains("\"/avguard/risk\"") {
                    let sent = reader_sent.lock().unwrap().pop_front();
                    if let Some(sent) = sent {
                        latencies.push(sent.elapsed().as_secs_f64());
                    }
                }
            }
        }
        latencies
    });
    let mut interval = tokio::time::interval(period);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut n_sent = 0;
    while Instant::now() < until {
        interval.tick().await;
        let tick = &ticks[(offset + n_sent) % ticks.len()];
        sent_at.lock().unwrap().push_back(Instant::now());
        for m in tick {
            sink.feed(m.clone()).await.unwrap();
        }
        sink.flush().await.unwrap();
        n_sent += 1;
    }
    // Let the last replies arrive, then close.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = sink.close().await;
    (reader.await.unwrap(), n_sent)
}

fn main() {
    let a = args();
    let replay = runs(10, 1000);
    fsync_cost(&replay.concat());
    println!("learning the model (20 simulated runs, laws/specs/properties.toml) ...");
    let model = learn_model();
    let factory = MonitorFactory::new(model, None, "soak".into()).unwrap();
    // One tick per simulator frame, message time 0.1 s apart (sim time runs 10× faster than the 100 Hz
    // wall clock), binary envelopes of all five channels.
    let mut ticks = Vec::new();
    let mut t = 0.0;
    for run in &replay {
        for f in run {
            t += 0.1;
            let mut f = f.clone();
            f.t = t;
            ticks.push(
                encode_frame(&f, Encoding::Binary)
                    .into_iter()
                    .map(|m| match m {
                        WsFrame::Binary(b) => Message::binary(b),
                        WsFrame::Text(s) => Message::text(s),
                    })
                    .collect::<Vec<_>>(),
            );
        }
    }
    let ticks = Arc::new(ticks);
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let config = BridgeConfig {
            log_path: Some(dir.path().join("predictions.jsonl")),
            record: Some(RecordConfig {
                path: dir.path().join("session.h5"),
                frame_period_s: 0.1,
                fsync: a.fsync,
            }),
            fsync: a.fsync,
            ..BridgeConfig::default()
        };
        let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let models = Arc::new(ModelStore::new(Box::new(factory)));
        let server = tokio::spawn(server::run(listener, config, models, async move {
            let _ = stop_rx.await;
        }));
        println!(
            "soak: {} clients × {} Hz for {:.0} s{}",
            a.clients,
            a.rate_hz,
            a.duration.as_secs_f64(),
            if a.fsync { " (fsync on)" } else { "" }
        );
        let started = Instant::now();
        let until = started + a.duration;
        let period = Duration::from_secs_f64(1.0 / a.rate_hz);
        let sampler = tokio::spawn(async move {
            let mut samples = Vec::new();
            let every = (a.duration / 10).clamp(Duration::from_secs(1), Duration::from_secs(60));
            while Instant::now() < until {
                tokio::time::sleep(every).await;
                let s = (started.elapsed().as_secs_f64(), rss_bytes());
                println!("  t = {:5.0} s: resident memory {:.1} MB", s.0, s.1 as f64 / 1e6);
                samples.push(s);
            }
            samples
        });
        let clients: Vec<_> = (0..a.clients)
            .map(|c| {
                let ticks = Arc::clone(&ticks);
                tokio::spawn(client(addr, ticks, c * 997, period, until))
            })
            .collect();
        let (mut latencies, mut n_sent) = (Vec::new(), 0);
        for c in clients {
            let (l, n) = c.await.unwrap();
            latencies.extend(l);
            n_sent += n;
        }
        let elapsed = started.elapsed().as_secs_f64();
        let samples = sampler.await.unwrap();
        stop.send(()).unwrap();
        let report = server.await.unwrap().unwrap();
        latencies.sort_by(f64::total_cmp);
        let missing = n_sent.saturating_sub(latencies.len());
        // Five messages (Apollo channels and road context) per frame sent.
        let n_msgs = n_sent as u64 * 5;
        println!(
            "throughput: {:.0} messages/s ({:.0} frames/s stepped)",
            n_msgs as f64 / elapsed,
            report.n_frames as f64 / elapsed
        );
        println!(
            "decision latency (frame sent → its risk reply): p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms over {} frames",
            quantile(&latencies, 0.5) * 1e3,
            quantile(&latencies, 0.99) * 1e3,
            latencies.last().copied().unwrap_or(f64::NAN) * 1e3,
            latencies.len()
        );
        println!(
            "dropped: {} inbound, {} risk replies, {missing} replies missing, of {n_sent} frames sent",
            report.n_data_dropped, report.metrics.n_risk_dropped
        );
        // The baseline: the sample at the end of the first minute (or of the first tenth of a short run).
        let first = samples
            .iter()
            .find(|(t, _)| *t >= 60.0_f64.min(a.duration.as_secs_f64() / 10.0))
            .or(samples.first())
            .map_or(0, |s| s.1);
        let last = samples.last().map_or(0, |s| s.1);
        println!(
            "memory: {:.1} MB after the first minute, {:.1} MB at the end ({:+.1} MB; target ≤ +10 MB)",
            first as f64 / 1e6,
            last as f64 / 1e6,
            (last as f64 - first as f64) / 1e6
        );
    });
}
