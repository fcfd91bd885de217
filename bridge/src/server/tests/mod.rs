//! End-to-end tests of the live path over real loopback websockets (port 0), with a scripted decision
//! double: risk 0.9 once the ego passes x = 5 m, a violation at x ≥ 8 m, a panic at x = 99 m.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use laws::Frame;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

use super::*;

mod outputs;
use crate::decide::{Decide, DecideFactory, Decision, PropertyRisk};
use crate::enforce::{Action, EnforceConfig};
use crate::pipeline::MonitorConfig;

#[derive(Default)]
struct Scripted(Decision);
impl Decide for Scripted {
    fn step(&mut self, f: &Frame) -> &Decision {
        assert!(f.x != 99.0, "injected monitor panic");
        self.0 = Decision {
            properties: vec![PropertyRisk {
                name: "stop_line".into(),
                state_bits: if f.x >= 5.0 { "11".into() } else { "01".into() },
                state_words: "near stop line".into(),
                risk: if f.x >= 5.0 { 0.9 } else { 0.1 },
                violated: f.x >= 8.0,
                likely_path: vec!["11".into(), "unsafe".into()],
                expected_time_s: Some(0.8),
                calibrated: None,
                enforcement: None,
                collision: false,
            }],
            seen: None,
        };
        &self.0
    }
}
struct ScriptedFactory;
impl DecideFactory for ScriptedFactory {
    fn session(&self) -> Box<dyn Decide> {
        Box::new(Scripted::default())
    }
    fn label(&self) -> String {
        "scripted".into()
    }
}

fn config(log: Option<PathBuf>) -> BridgeConfig {
    BridgeConfig {
        max_frame_bytes: 4096,
        hard_frame_bytes: 64 * 1024,
        max_connections: 8,
        outbound_capacity: 64,
        send_timeout: Duration::from_secs(2),
        shutdown_grace: Duration::from_secs(2),
        monitor: MonitorConfig {
            data_capacity: 1024,
            enforce: EnforceConfig {
                action: Action::Stop,
                ..Default::default()
            },
            ..MonitorConfig::default()
        },
        log_path: log,
        ..BridgeConfig::default()
    }
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

struct Running {
    addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<RunReport, BridgeError>>,
}

async fn start(cfg: BridgeConfig) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, rx) = tokio::sync::oneshot::channel::<()>();
    let models = Arc::new(ModelStore::new(Box::new(ScriptedFactory)));
    let task = tokio::spawn(run(listener, cfg, models, async move {
        let _ = rx.await;
    }));
    Running { addr, stop, task }
}

async fn connect(addr: SocketAddr) -> Ws {
    tokio_tungstenite::connect_async(format!("ws://{addr}/"))
        .await
        .unwrap()
        .0
}

async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::text(v.to_string())).await.unwrap();
}

/// Next text frame as JSON (5 s guard against hangs).
async fn recv(ws: &mut Ws) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let Message::Text(t) = msg {
            return serde_json::from_str(t.as_str()).unwrap();
        }
    }
}

fn pose(t: f64, x: f64) -> Value {
    json!({"op": "publish", "topic": "/apollo/localization/pose",
        "msg": {"measurementTime": t, "pose": {"position": {"x": x, "y": 0.0}, "heading": 0.0}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn intervention_once_per_episode_then_clear_and_log_lines() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("pred.jsonl");
    let bridge = start(config(Some(log.clone()))).await;
    let mut ws = connect(bridge.addr).await;
    send(
        &mut ws,
        json!({"op": "subscribe", "topic": "/avguard/intervention", "id": "s1"}),
    )
    .await;
    send(
        &mut ws,
        json!({"op": "advertise", "topic": "/apollo/localization/pose", "type": "x"}),
    )
    .await;
    send(
        &mut ws,
        json!({"op": "publish", "topic": "/avguard/road_context", "msg": {"stopline_dist": 20.0}}),
    )
    .await;
    for (k, x) in [0.0, 1.0, 6.0, 7.0, 9.0, 1.0, 1.0].iter().enumerate() {
        send(&mut ws, pose(k as f64 * 0.1, *x)).await;
    }
    let first = recv(&mut ws).await;
    assert_eq!(first["op"], "publish");
    assert_eq!(first["topic"], "/avguard/intervention");
    let msg = &first["msg"];
    assert_eq!(msg["action"], "stop");
    assert_eq!(msg["property"], "stop_line");
    assert_eq!(msg["probability"], 0.9);
    assert_eq!(msg["target_speed_mps"], 0.0);
    assert_eq!(msg["state"], "11");
    assert!((msg["stamp"].as_f64().unwrap() - 0.2).abs() < 1e-9);
    assert!(msg["explanation"]
        .as_str()
        .unwrap()
        .contains("11 -> unsafe"));
    let second = recv(&mut ws).await;
    assert_eq!(second["msg"]["action"], "clear"); // frames 3 and 4 stay in the episode: one alarm only
    assert!((second["msg"]["stamp"].as_f64().unwrap() - 0.5).abs() < 1e-9);
    drop(ws);
    bridge.stop.send(()).unwrap();
    let report = bridge.task.await.unwrap().unwrap();
    assert_eq!(report.n_interventions, 2);
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        vec![
            "alarm_start",
            "intervention",
            "violation",
            "alarm_end",
            "intervention"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_status_errors_and_the_connection_goes_on() {
    let bridge = start(config(None)).await;
    let mut ws = connect(bridge.addr).await;
    let cases: Vec<(Message, &str)> = vec![
        (Message::text("{not json"), "malformed JSON"),
        (
            Message::text(r#"{"op":"teleport","id":"c1"}"#),
            "unsupported op",
        ),
        (
            Message::text(r#"{"op":"publish","topic":"/nope","msg":{}}"#),
            "unknown topic",
        ),
        (
            Message::text(r#"{"op":"subscribe","topic":"/nope"}"#),
            "unknown topic",
        ),
        (
            Message::text(
                r#"{"op":"publish","topic":"/apollo/canbus/chassis","msg":{"speedMps":"fast"}}"#,
            ),
            "/apollo/canbus/chassis",
        ),
        (
            Message::text(
                r#"{"op":"publish","topic":"/apollo/localization/pose","msg":{"measurementTime":1,"pose":{"position":{"x":"NaN","y":0}}}}"#,
            ),
            "not finite",
        ),
        (
            Message::text(r#"{"op":"publish","topic":"/apollo/canbus/chassis"}"#),
            "msg",
        ),
        (Message::binary(vec![0xde, 0xad, 0xbe, 0xef]), "envelope"),
        (Message::text(""), "empty text frame"),
        (Message::text(" \n\t"), "empty text frame"),
        (Message::binary(Vec::new()), "empty binary frame"),
        (
            Message::text(format!(
                r#"{{"op":"publish","topic":"/avguard/road_context","msg":{{"pad":"{}"}}}}"#,
                "x".repeat(5000)
            )),
            "limit",
        ),
    ];
    for (msg, expect) in cases {
        ws.send(msg).await.unwrap();
        let reply = recv(&mut ws).await;
        assert_eq!(reply["op"], "status");
        assert_eq!(reply["level"], "error");
        assert!(
            reply["msg"].as_str().unwrap().contains(expect),
            "{reply} should mention {expect:?}"
        );
    }
    assert_still_serving(&mut ws).await;
    bridge.stop.send(()).unwrap();
    let report = bridge.task.await.unwrap().unwrap();
    assert_eq!(report.n_decode_errors, 12);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_envelopes_and_separate_state_per_connection() {
    use ingest::wire::apollo::{common, localization};
    let bridge = start(config(None)).await;
    let mut a = connect(bridge.addr).await;
    let mut b = connect(bridge.addr).await;
    for ws in [&mut a, &mut b] {
        send(
            ws,
            json!({"op": "subscribe", "topic": "/avguard/intervention"}),
        )
        .await;
    }
    let envelope = |t: f64, x: f64| {
        let loc = localization::LocalizationEstimate {
            measurement_time: Some(t),
            pose: Some(localization::Pose {
                position: Some(common::PointEnu {
                    x: Some(x),
                    y: Some(0.0),
                    z: None,
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let env = ingest::wire::Envelope {
            channel: "/apollo/localization/pose".into(),
            payload: prost::Message::encode_to_vec(&loc),
        };
        Message::binary(prost::Message::encode_to_vec(&env))
    };
    // Connection a crosses θ at t = 0.1; b never does but uses the same times.
    a.send(envelope(0.0, 0.0)).await.unwrap();
    b.send(envelope(0.0, 0.0)).await.unwrap();
    a.send(envelope(0.1, 6.0)).await.unwrap();
    b.send(envelope(0.1, 1.0)).await.unwrap();
    b.send(envelope(0.2, 6.0)).await.unwrap();
    let ma = recv(&mut a).await;
    let mb = recv(&mut b).await;
    assert!((ma["msg"]["stamp"].as_f64().unwrap() - 0.1).abs() < 1e-9);
    assert!((mb["msg"]["stamp"].as_f64().unwrap() - 0.2).abs() < 1e-9);
    bridge.stop.send(()).unwrap();
    let report = bridge.task.await.unwrap().unwrap();
    assert_eq!(report.n_frames, 5);
}

/// Shutdown needs no timer: on tokio's paused clock (which moves only when every task waits on a timer),
/// the whole shutdown takes no virtual time, so no connection was waited out or aborted after the grace.
#[tokio::test(flavor = "current_thread")]
async fn shutdown_closes_clients_with_a_reason_and_joins_without_waiting() {
    let cfg = config(None);
    let grace = cfg.shutdown_grace;
    let bridge = start(cfg).await;
    let mut a = connect(bridge.addr).await;
    let mut b = connect(bridge.addr).await;
    send(&mut a, pose(0.0, 0.0)).await;
    send(&mut b, pose(0.0, 0.0)).await;
    tokio::time::pause();
    let began = tokio::time::Instant::now();
    bridge.stop.send(()).unwrap();
    let report = tokio::time::timeout(grace * 2, bridge.task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        began.elapsed(),
        Duration::ZERO,
        "shutdown waited on a timer"
    );
    assert_eq!(report.n_aborted, 0);
    assert_eq!(report.n_worker_panics, 0);
    assert_eq!(
        report.connection_reasons,
        vec![ShutdownReason::ServerShutdown; 2]
    );
    for ws in [&mut a, &mut b] {
        let close = loop {
            match ws.next().await {
                Some(Ok(Message::Close(c))) => break c,
                Some(Ok(_)) => continue,
                other => panic!("expected a close frame, got {other:?}"),
            }
        };
        assert!(close.unwrap().reason.contains("shutting down"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_monitor_worker_stops_every_thread_and_task() {
    let bridge = start(config(None)).await;
    let mut ws = connect(bridge.addr).await;
    send(&mut ws, pose(0.0, 99.0)).await;
    // No stop signal: the panic alone must bring the bridge down.
    let report = tokio::time::timeout(Duration::from_secs(5), bridge.task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(report.n_worker_panics, 1);
    assert_eq!(report.connection_reasons, vec![ShutdownReason::MonitorGone]);
    drop(bridge.stop);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_is_required_when_configured() {
    let mut cfg = config(None);
    cfg.token = Some(crate::auth::Token::new("s3cret", "test").unwrap());
    let bridge = start(cfg).await;
    assert!(
        tokio_tungstenite::connect_async(format!("ws://{}/", bridge.addr))
            .await
            .is_err()
    );
    let ok = tokio_tungstenite::connect_async(format!("ws://{}/?token=s3cret", bridge.addr)).await;
    assert!(ok.is_ok());
    bridge.stop.send(()).unwrap();
    let report = bridge.task.await.unwrap().unwrap();
    assert!(report
        .connection_reasons
        .contains(&ShutdownReason::HandshakeFailed));
}

/// Frames that arrive together are handled as one burst: every pose is stepped in order, the bad frame
/// in the middle gets its status error, and each frame's risk reply comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_frames_is_stepped_in_order_with_errors_answered() {
    let bridge = start(config(None)).await;
    let mut ws = connect(bridge.addr).await;
    send(
        &mut ws,
        json!({"op": "subscribe", "topic": "/avguard/risk"}),
    )
    .await;
    // Within the outbound capacity (64), so that no risk reply is dropped as telemetry.
    let n = 60;
    for k in 0..n {
        if k == 30 {
            ws.feed(Message::text("{not json")).await.unwrap();
        }
        ws.feed(Message::text(pose(k as f64 * 0.1, 0.0).to_string()))
            .await
            .unwrap();
    }
    ws.flush().await.unwrap();
    let (mut stamps, mut errors) = (Vec::new(), 0);
    while stamps.len() < n {
        let Ok(v) = tokio::time::timeout(Duration::from_secs(2), recv(&mut ws)).await else {
            panic!(
                "got {} risk replies, {errors} errors: {stamps:?}",
                stamps.len()
            );
        };
        match v["op"].as_str() {
            Some("status") => errors += 1,
            _ => stamps.push(v["msg"]["stamp"].as_f64().unwrap()),
        }
    }
    let expected: Vec<f64> = (0..n).map(|k| k as f64 * 0.1).collect();
    assert_eq!(stamps, expected);
    assert_eq!(errors, 1);
    bridge.stop.send(()).unwrap();
    let report = bridge.task.await.unwrap().unwrap();
    assert_eq!(report.n_frames, n as u64);
    assert_eq!(report.n_decode_errors, 1);
    assert_eq!(report.n_data_dropped, 0);
    assert_eq!(report.metrics.n_risk_dropped, 0);
}

/// The `stats` reply of `/avguard/control` on this connection.
async fn stats(ws: &mut Ws) -> Value {
    send(
        ws,
        json!({"op": "publish", "topic": "/avguard/control", "msg": {"command": "stats"}}),
    )
    .await;
    loop {
        let v = recv(ws).await;
        if v["op"] == "status" {
            return serde_json::from_str(v["msg"].as_str().unwrap()).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_client_loses_only_its_own_frames() {
    // One worker for both connections and small inbound queues: the flood must overflow.
    let mut cfg = config(None);
    cfg.monitor.n_workers = 1;
    cfg.monitor.data_capacity = 16;
    let bridge = start(cfg).await;
    let mut steady = connect(bridge.addr).await;
    let mut flood = connect(bridge.addr).await;
    send(
        &mut steady,
        json!({"op": "subscribe", "topic": "/avguard/risk"}),
    )
    .await;
    let n = 200;
    // The flooder sends 10× the steady client's frames as fast as it can, without reading replies.
    let flooder = tokio::spawn(async move {
        for k in 0..10 * n {
            flood
                .feed(Message::text(pose(k as f64 * 0.01, 0.0).to_string()))
                .await
                .unwrap();
        }
        flood.flush().await.unwrap();
        flood
    });
    // The steady client sends one frame at a time and waits for its risk reply (lock-step).
    let mut stamps = Vec::new();
    for k in 0..n {
        send(&mut steady, pose(k as f64 * 0.1, 0.0)).await;
        let v = recv(&mut steady).await;
        stamps.push(v["msg"]["stamp"].as_f64().unwrap());
    }
    let expected: Vec<f64> = (0..n).map(|k| k as f64 * 0.1).collect();
    assert_eq!(
        stamps, expected,
        "every frame of the steady client is scored"
    );
    let mut flood = flooder.await.unwrap();
    let steady_stats = stats(&mut steady).await;
    assert_eq!(steady_stats["received"], n as u64, "{steady_stats}");
    assert_eq!(steady_stats["dropped"], 0, "{steady_stats}");
    assert_eq!(steady_stats["rejected"], 0, "{steady_stats}");
    let flood_stats = stats(&mut flood).await;
    assert_eq!(flood_stats["received"], 10 * n as u64, "{flood_stats}");
    assert!(
        flood_stats["dropped"].as_u64().unwrap() > 0,
        "the flood overflowed its own queue: {flood_stats}"
    );
    bridge.stop.send(()).unwrap();
    let report = bridge.task.await.unwrap().unwrap();
    assert_eq!(
        report.n_data_dropped,
        flood_stats["dropped"].as_u64().unwrap(),
        "every drop was the flooder's"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rosapi_calls_get_service_responses_and_the_connection_goes_on() {
    let bridge = start(config(None)).await;
    let mut ws = connect(bridge.addr).await;
    send(
        &mut ws,
        json!({"op": "call_service", "service": "/rosapi/topic_type", "args": {"topic": "/avguard/risk"}, "id": "call:1"}),
    )
    .await;
    let reply = recv(&mut ws).await;
    assert_eq!(
        reply,
        json!({"op": "service_response", "service": "/rosapi/topic_type", "id": "call:1",
               "values": {"type": "avguard/Risk"}, "result": true})
    );
    send(
        &mut ws,
        json!({"op": "call_service", "service": "/rosapi/get_param", "id": "call:2"}),
    )
    .await;
    let reply = recv(&mut ws).await;
    assert_eq!(reply["op"], "service_response");
    assert_eq!(reply["id"], "call:2");
    assert_eq!(reply["result"], false);
    assert!(
        reply["values"].as_str().unwrap().contains("not provided"),
        "{reply}"
    );
    // An id that is not a string is echoed as given (rosbridge clients may number their calls); it was
    // once left out.
    send(
        &mut ws,
        json!({"op": "call_service", "service": "/rosapi/nodes", "id": 7}),
    )
    .await;
    assert_eq!(recv(&mut ws).await["id"], 7);
    send(
        &mut ws,
        json!({"op": "subscribe", "topic": "/nope", "id": {"n": 8}}),
    )
    .await;
    assert_eq!(recv(&mut ws).await["id"], json!({"n": 8}));
    // No service name: an error status, as for any op missing a required key.
    send(&mut ws, json!({"op": "call_service", "id": "call:3"})).await;
    let reply = recv(&mut ws).await;
    assert_eq!(reply["op"], "status");
    assert!(
        reply["msg"].as_str().unwrap().contains("\"service\""),
        "{reply}"
    );
    assert_still_serving(&mut ws).await;
    bridge.stop.send(()).unwrap();
    bridge.task.await.unwrap().unwrap();
}

/// The connection still works after what came before: a subscription and a pose that must stop the car
/// produce the intervention.
async fn assert_still_serving(ws: &mut Ws) {
    send(
        ws,
        json!({"op": "subscribe", "topic": "/avguard/intervention"}),
    )
    .await;
    send(ws, pose(0.0, 6.0)).await;
    assert_eq!(recv(ws).await["msg"]["action"], "stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_level_decides_which_statuses_the_client_gets() {
    let bridge = start(config(None)).await;
    let mut ws = connect(bridge.addr).await;
    let topic_type = |id: &str| json!({"op": "call_service", "service": "/rosapi/topic_type", "args": {"topic": "/avguard/risk"}, "id": id});
    let stats = json!({"op": "publish", "topic": "/avguard/control", "msg": {"command": "stats"}});
    // "none": a bad message gets no status; the next message the client receives answers its next call.
    send(&mut ws, json!({"op": "set_level", "level": "none"})).await;
    ws.send(Message::text("{not json")).await.unwrap();
    send(&mut ws, topic_type("a")).await;
    let reply = recv(&mut ws).await;
    assert_eq!(
        (reply["op"].as_str(), reply["id"].as_str()),
        (Some("service_response"), Some("a")),
        "{reply}"
    );
    // "error": an info status (the stats reply) is not sent, an error is.
    send(&mut ws, json!({"op": "set_level", "level": "error"})).await;
    send(&mut ws, stats.clone()).await;
    ws.send(Message::text("{not json")).await.unwrap();
    let reply = recv(&mut ws).await;
    assert_eq!(reply["level"], "error", "{reply}");
    // "info" (the default): both again; a level rosbridge does not know is an error naming the key.
    send(&mut ws, json!({"op": "set_level", "level": "info"})).await;
    send(&mut ws, stats).await;
    let reply = recv(&mut ws).await;
    assert_eq!(reply["level"], "info", "{reply}");
    assert!(
        reply["msg"].as_str().unwrap().contains("\"received\""),
        "{reply}"
    );
    send(&mut ws, json!({"op": "set_level", "level": "loud"})).await;
    let reply = recv(&mut ws).await;
    assert_eq!(reply["level"], "error", "{reply}");
    assert!(
        reply["msg"].as_str().unwrap().contains("\"level\""),
        "{reply}"
    );
    assert_still_serving(&mut ws).await;
    bridge.stop.send(()).unwrap();
    bridge.task.await.unwrap().unwrap();
}

/// The next frame, which must be a close frame (5 s guard against hangs).
async fn recv_close(ws: &mut Ws) -> tokio_tungstenite::tungstenite::protocol::CloseFrame {
    loop {
        match tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .unwrap()
        {
            Some(Ok(Message::Close(Some(close)))) => return close,
            Some(Ok(Message::Text(_))) => continue,
            other => panic!("expected a close frame with a reason, got {other:?}"),
        }
    }
}

/// A message beyond the hard size limit cannot be read past: the connection is closed with code 1009 and
/// a reason naming its size and the limit (it once just dropped), after the client has sent all of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_beyond_the_hard_limit_closes_with_1009_and_the_sizes() {
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
    let cfg = config(None);
    let hard = cfg.hard_frame_bytes;
    let bridge = start(cfg).await;
    let mut ws = connect(bridge.addr).await;
    let size = 1 << 20;
    ws.send(Message::text("x".repeat(size))).await.unwrap();
    let close = recv_close(&mut ws).await;
    assert_eq!(close.code, CloseCode::Size);
    for needle in [size.to_string(), hard.to_string()] {
        assert!(
            close.reason.contains(&needle),
            "{close:?} should name {needle}"
        );
    }
    stop_after_one_protocol_error(bridge, ws).await;
}

/// A text frame that is not UTF-8 cannot be read past either (tungstenite gives none of its bytes): the
/// connection is closed with code 1007 and a reason saying so (it once just dropped).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_frame_that_is_not_utf8_closes_with_1007_and_a_reason() {
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    let bridge = start(config(None)).await;
    let mut ws = connect(bridge.addr).await;
    let bad = Frame::message(
        &b"{\"op\": \"\xff\xfe\"}"[..],
        OpCode::Data(Data::Text),
        true,
    );
    ws.send(Message::Frame(bad)).await.unwrap();
    let close = recv_close(&mut ws).await;
    assert_eq!(close.code, CloseCode::Invalid);
    assert!(close.reason.contains("UTF-8"), "{close:?}");
    stop_after_one_protocol_error(bridge, ws).await;
}

/// A client over `--max-connections` is answered with an HTTP 503 that names the limit, not reset; the
/// slot is there again once a connection closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_over_the_limit_gets_a_503_naming_it() {
    let mut cfg = config(None);
    cfg.max_connections = 1;
    let bridge = start(cfg).await;
    let first = connect(bridge.addr).await;
    match tokio_tungstenite::connect_async(format!("ws://{}/", bridge.addr)).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 503);
            let body = String::from_utf8_lossy(response.body().as_deref().unwrap_or_default());
            assert!(body.contains("connection limit of 1"), "{body}");
        }
        Err(other) => panic!("refused without an answer: {other}"),
        Ok(_) => panic!("admitted over the limit"),
    }
    drop(first);
    let mut admitted = false;
    for _ in 0..50 {
        if tokio_tungstenite::connect_async(format!("ws://{}/", bridge.addr))
            .await
            .is_ok()
        {
            admitted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(admitted, "the slot was not freed");
    bridge.stop.send(()).unwrap();
    let report = bridge.task.await.unwrap().unwrap();
    assert!(report.n_refused >= 1);
}

/// Stops `bridge` once `ws` is dropped, and checks that its one connection ended on a protocol error
/// after one bad message.
async fn stop_after_one_protocol_error(bridge: Running, ws: Ws) {
    drop(ws);
    bridge.stop.send(()).unwrap();
    let report = bridge.task.await.unwrap().unwrap();
    assert_eq!(
        report.connection_reasons,
        vec![ShutdownReason::ProtocolError]
    );
    assert_eq!(report.n_decode_errors, 1);
}
