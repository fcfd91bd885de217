//! Outputs beside interventions: the Apollo `ControlCommand` (JSON and binary), session recording, and the
//! stage metrics in the run report.

use prost::Message as _;

use super::*;
use crate::record::RecordConfig;
use ingest::wire::apollo::control::ControlCommand;
use ingest::wire::apollo::{common, localization};

fn pose_v(t: f64, x: f64, v: f64) -> Value {
    json!({"op": "publish", "topic": "/apollo/localization/pose",
        "msg": {"measurementTime": t, "pose": {"position": {"x": x, "y": 0.0}, "heading": 0.0,
            "linearVelocity": {"x": v, "y": 0.0, "z": 0.0}}}})
}

fn binary_pose(t: f64, x: f64, v: f64) -> Message {
    let loc = localization::LocalizationEstimate {
        measurement_time: Some(t),
        pose: Some(localization::Pose {
            position: Some(common::PointEnu {
                x: Some(x),
                y: Some(0.0),
                z: None,
            }),
            heading: Some(0.0),
            linear_velocity: Some(common::Point3D {
                x: Some(v),
                y: Some(0.0),
                z: Some(0.0),
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let env = ingest::wire::Envelope {
        channel: "/apollo/localization/pose".into(),
        payload: loc.encode_to_vec(),
    };
    Message::binary(env.encode_to_vec())
}

/// Next binary frame (5 s guard), skipping text frames.
async fn recv_binary(ws: &mut Ws) -> Vec<u8> {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let Message::Binary(b) = msg {
            return b.to_vec();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_command_goes_as_json_to_subscribers_and_binary_to_binary_clients() {
    let mut cfg = config(None);
    cfg.monitor.control_command = true;
    let bridge = start(cfg).await;
    let road = json!({"op": "publish", "topic": "/avguard/road_context",
        "msg": {"stopline_dist": 12.0}});

    // JSON client: subscribes to /apollo/control.
    let mut a = connect(bridge.addr).await;
    send(
        &mut a,
        json!({"op": "subscribe", "topic": "/avguard/intervention"}),
    )
    .await;
    send(
        &mut a,
        json!({"op": "subscribe", "topic": "/apollo/control"}),
    )
    .await;
    send(&mut a, road.clone()).await;
    send(&mut a, pose_v(0.0, 0.0, 10.0)).await;
    send(&mut a, pose_v(0.1, 6.0, 10.0)).await;
    let first = recv(&mut a).await;
    assert_eq!(first["topic"], "/avguard/intervention");
    assert_eq!(first["msg"]["action"], "stop");
    let cmd = recv(&mut a).await;
    assert_eq!(cmd["op"], "publish");
    assert_eq!(cmd["topic"], "/apollo/control");
    // Hand computation: room = 12 − 2 = 10 m, a = 10² / (2·10) = 5 m/s², brake = 100·5/8 = 62.5 %.
    assert_eq!(cmd["msg"]["throttle"], 0.0);
    assert_eq!(cmd["msg"]["brake"], 62.5);
    assert_eq!(cmd["msg"]["acceleration"], -5.0);

    // Binary client: gets the command as an envelope without subscribing to it.
    let mut b = connect(bridge.addr).await;
    send(&mut b, road).await;
    b.send(binary_pose(0.0, 0.0, 10.0)).await.unwrap();
    b.send(binary_pose(0.1, 6.0, 10.0)).await.unwrap();
    let env = ingest::wire::Envelope::decode(recv_binary(&mut b).await.as_slice()).unwrap();
    assert_eq!(env.channel, "/apollo/control");
    let cmd = ControlCommand::decode(env.payload.as_slice()).unwrap();
    assert_eq!((cmd.throttle, cmd.brake), (Some(0.0), Some(62.5)));
    assert!((cmd.header.unwrap().timestamp_sec.unwrap() - 0.1).abs() < 1e-9);

    bridge.stop.send(()).unwrap();
    let report = bridge.task.await.unwrap().unwrap();
    assert_eq!(report.metrics.n_control_commands, 2);
    assert_eq!(report.metrics.n_interventions, 2);
}

/// A bridge configuration that records into `dir/rec.h5`, and that recording's settings.
fn recording_config(dir: &std::path::Path) -> (BridgeConfig, RecordConfig) {
    let mut cfg = config(None);
    let record = RecordConfig {
        path: dir.join("rec.h5"),
        frame_period_s: 0.1,
        fsync: false,
    };
    cfg.record = Some(record.clone());
    (cfg, record)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_recorded_one_log_per_connection_and_metrics_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, record) = recording_config(dir.path());
    let bridge = start(cfg).await;
    let mut a = connect(bridge.addr).await;
    send(&mut a, json!({"op": "subscribe", "topic": "/avguard/risk"})).await;
    let xs = [0.0, 1.0, 2.0, 6.0, 7.0];
    for (k, x) in xs.iter().enumerate() {
        send(&mut a, pose_v(k as f64 * 0.1, *x, 10.0)).await;
        // Lock-step: the risk reply of each frame before the next pose.
        let r = recv(&mut a).await;
        assert_eq!(r["topic"], "/avguard/risk");
    }
    let mut b = connect(bridge.addr).await;
    send(&mut b, json!({"op": "subscribe", "topic": "/avguard/risk"})).await;
    send(&mut b, pose(0.0, 3.0)).await;
    recv(&mut b).await;
    a.close(None).await.unwrap();
    b.close(None).await.unwrap();
    bridge.stop.send(()).unwrap();
    let report = bridge.task.await.unwrap().unwrap();

    let log_a = scenarios::log::read_log(&record.path_for(1)).unwrap();
    let got: Vec<f64> = log_a.frames.iter().map(|f| f.x).collect();
    assert_eq!(got, xs);
    assert!(log_a
        .frames
        .iter()
        .all(|f| (f.speed_mps - 10.0).abs() < 1e-12));
    assert_eq!(log_a.meta.run_id, "conn1");
    let log_b = scenarios::log::read_log(&dir.path().join("rec_conn2.h5")).unwrap();
    assert_eq!(log_b.frames.len(), 1);

    let m = &report.metrics;
    assert_eq!(m.n_frames, 6);
    assert_eq!(m.step.count, 6);
    assert_eq!(m.decode.count, 6);
    assert_eq!(m.queue_wait.count, 6);
    // 5 + 1 risk messages and the intervention of x = 6 (queued even without a subscriber).
    assert_eq!(m.outbound_wait.count, 7);
    assert!(m.outbound_high_water >= 1);
    assert_eq!(m.n_record_errors, 0);
    assert_eq!(m.data_queue_lens, vec![0, 0]);
}

/// Three runs on one connection: a reset to t = 0, then an explicit `new_run` with an id. Each run gets
/// its own recording (named by its run id) and its own prediction-log run id, and the alarm of the
/// second run does not carry over into the third.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_on_one_connection_get_their_own_recording_and_run_id() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cfg, record) = recording_config(dir.path());
    cfg.log_path = Some(dir.path().join("pred.jsonl"));
    let bridge = start(cfg).await;
    let mut a = connect(bridge.addr).await;
    send(&mut a, json!({"op": "subscribe", "topic": "/avguard/risk"})).await;
    let lock_step = |t: f64, x: f64| pose_v(t, x, 10.0);
    // Run 1: t = 10.0 .. 10.2 (no alarm: no stop line).
    for (t, x) in [(10.0, 0.0), (10.1, 1.0), (10.2, 2.0)] {
        send(&mut a, lock_step(t, x)).await;
        assert_eq!(recv(&mut a).await["topic"], "/avguard/risk");
    }
    // Run 2: the simulator resets to t = 0; a stop line 12 m ahead raises an alarm.
    send(
        &mut a,
        json!({"op": "publish", "topic": "/avguard/road_context",
        "msg": {"stamp": 0.0, "stopline_dist": 12.0}}),
    )
    .await;
    for (t, x) in [(0.0, 0.0), (0.1, 6.0)] {
        send(&mut a, lock_step(t, x)).await;
        loop {
            if recv(&mut a).await["topic"] == "/avguard/risk" {
                break;
            }
        }
    }
    // Run 3, named by the client, on the same clock: nothing held from run 2 (no stop line).
    send(
        &mut a,
        json!({"op": "publish", "topic": "/avguard/control",
        "msg": {"op": "new_run", "run_id": "scenario-7"}}),
    )
    .await;
    for (t, x) in [(0.2, 0.0), (0.3, 1.0)] {
        send(&mut a, lock_step(t, x)).await;
        assert_eq!(recv(&mut a).await["topic"], "/avguard/risk");
    }
    a.close(None).await.unwrap();
    bridge.stop.send(()).unwrap();
    let report = bridge.task.await.unwrap().unwrap();
    assert_eq!(report.metrics.n_runs, 2);

    let run1 = scenarios::log::read_log(&record.path_for(1)).unwrap();
    assert_eq!(run1.meta.run_id, "conn1");
    assert_eq!(
        run1.frames.iter().map(|f| f.t).collect::<Vec<_>>(),
        vec![10.0, 10.1, 10.2]
    );
    let run2 = scenarios::log::read_log(&dir.path().join("rec_conn1_run2.h5")).unwrap();
    assert_eq!(run2.meta.run_id, "conn1_run2");
    assert_eq!(
        run2.frames.iter().map(|f| f.t).collect::<Vec<_>>(),
        vec![0.0, 0.1]
    );
    assert_eq!(run2.frames[1].stopline_dist_m, 12.0);
    let run3 = scenarios::log::read_log(&dir.path().join("rec_scenario-7.h5")).unwrap();
    assert_eq!(run3.meta.run_id, "scenario-7");
    assert_eq!(run3.frames.len(), 2);
    assert!(run3.frames.iter().all(|f| f.stopline_dist_m.is_infinite()));

    let lines = std::fs::read_to_string(dir.path().join("pred.jsonl")).unwrap();
    let events: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let starts: Vec<(&str, f64)> = events
        .iter()
        .filter(|e| e["event"] == "alarm_start")
        .map(|e| (e["run"].as_str().unwrap(), e["t"].as_f64().unwrap()))
        .collect();
    assert_eq!(starts, vec![("conn1_run2", 0.1)]);
}

/// Issue #11: control requests are not lossy. One client floods its own small inbound queue with 40 runs
/// of 50 poses, each run opened by a `new_run`: poses are dropped, but every `new_run` takes effect, in
/// order with the surviving poses (each recording holds only its own run's frames).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_client_loses_poses_but_never_a_new_run() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cfg, _) = recording_config(dir.path());
    cfg.monitor.n_workers = 1;
    cfg.monitor.data_capacity = 8;
    // One clock across all runs, and no time-based run boundary however many poses are dropped: every
    // run boundary comes from a `new_run`.
    cfg.monitor.assembler.max_gap_s = 1000.0;
    let bridge = start(cfg).await;
    let mut ws = connect(bridge.addr).await;
    let (n_runs, per_run, dt) = (40usize, 50usize, 0.1);
    for r in 0..n_runs {
        let new_run = json!({"op": "publish", "topic": "/avguard/control",
            "msg": {"op": "new_run", "run_id": format!("r{r}")}});
        ws.feed(Message::text(new_run.to_string())).await.unwrap();
        for k in 0..per_run {
            let t = (r * per_run + k) as f64 * dt;
            ws.feed(Message::text(pose_v(t, 0.0, 1.0).to_string()))
                .await
                .unwrap();
        }
    }
    ws.flush().await.unwrap();
    // Input still queued when a connection closes is discarded. Once the worker has taken everything
    // (it then holds at most one turn of 32 inputs), one last pose with risk replies asked for: its reply,
    // behind at most 32 others in the outbound queue of 64, comes once everything before it is stepped.
    for _ in 0..3000 {
        if stats(&mut ws).await["queued"] == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    send(
        &mut ws,
        json!({"op": "subscribe", "topic": "/avguard/risk"}),
    )
    .await;
    let t_last = (n_runs * per_run) as f64 * dt;
    send(&mut ws, pose_v(t_last, 0.0, 1.0)).await;
    let reply = tokio::time::timeout(Duration::from_secs(60), async {
        // Not `recv`: its 5 s guard could expire while the worker catches up under load.
        while let Some(msg) = ws.next().await {
            if let Message::Text(t) = msg.unwrap() {
                let v: Value = serde_json::from_str(t.as_str()).unwrap();
                if v["topic"] == "/avguard/risk"
                    && v["msg"]["stamp"]
                        .as_f64()
                        .is_some_and(|t| (t - t_last).abs() < 1e-6)
                {
                    return v;
                }
            }
        }
        panic!("the connection ended");
    })
    .await
    .expect("the last pose is stepped");
    assert!(reply["msg"]["risk"].is_object(), "{reply}");
    let st = stats(&mut ws).await;
    assert_eq!(st["queued"], 0, "{st}");
    assert_eq!(st["received"], (n_runs * (per_run + 1) + 1) as u64, "{st}");
    assert_eq!(st["rejected"], 0, "{st}");
    let n_dropped = st["dropped"].as_u64().unwrap();
    assert!(n_dropped > 0, "the flood overflowed the queue: {st}");
    ws.close(None).await.unwrap();
    bridge.stop.send(()).unwrap();
    let report = bridge.task.await.unwrap().unwrap();
    assert_eq!(
        report.metrics.n_runs, n_runs as u64,
        "every new_run took effect"
    );
    assert_eq!(report.n_data_dropped, n_dropped);

    let run_span = per_run as f64 * dt;
    let mut n_files = 0;
    for r in 0..n_runs {
        let path = dir.path().join(format!("rec_r{r}.h5"));
        // A run whose poses were all dropped has no frames, hence no file.
        let Ok(log) = scenarios::log::read_log(&path) else {
            continue;
        };
        n_files += 1;
        assert_eq!(log.meta.run_id, format!("r{r}"));
        let (lo, mut hi) = (r as f64 * run_span, (r + 1) as f64 * run_span - dt);
        if r == n_runs - 1 {
            hi = t_last;
        }
        assert!(
            log.frames
                .iter()
                .all(|f| f.t >= lo - 1e-6 && f.t <= hi + 1e-6),
            "run r{r} holds frames of another run: {:?}",
            log.frames.iter().map(|f| f.t).collect::<Vec<_>>()
        );
        if r == n_runs - 1 {
            // The newest poses are never the ones dropped.
            let last = log.frames.last().unwrap().t;
            assert!((last - hi).abs() < 1e-6, "last frame at {last}, sent {hi}");
        }
    }
    assert!(dir.path().join(format!("rec_r{}.h5", n_runs - 1)).exists());
    assert!(n_files >= 2, "only {n_files} runs kept frames");
    assert!(
        !dir.path().join("rec.h5").exists(),
        "the first run had no frames"
    );
}
