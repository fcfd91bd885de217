//! Hostile clients cannot take the bridge's memory or its connection slots: a client that floods pings and
//! never reads its pongs, and sockets that never finish the websocket handshake.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use crate::support::{fixture, RunningBridge};

/// The bridge's resident memory, KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A client ping frame with a 125-byte payload (masked with a zero key, so the payload is as written).
fn ping_frame() -> Vec<u8> {
    let mut frame = vec![0x89, 0x80 | 125, 0, 0, 0, 0];
    frame.extend([b'p'; 125]);
    frame
}

/// Pongs are owed to a client that pings without end and never reads: the bridge holds at most its capped
/// write buffer for it (it once queued every pong, 5 GB in 20 s), and serves other clients meanwhile.
#[test]
fn a_ping_flood_from_a_client_that_never_reads_keeps_memory_bounded() {
    let bridge = RunningBridge::start(|c| c.arg("--model").arg(&fixture().model));
    let (ws, _) = tungstenite::connect(bridge.url.as_str()).unwrap();
    let tungstenite::stream::MaybeTlsStream::Plain(mut tcp) = ws.into_inner() else {
        panic!("a plain TCP stream was expected");
    };
    let before = rss_kib(bridge.pid());
    let burst = ping_frame().repeat(1000);
    let started = Instant::now();
    let mut sent = 0usize;
    // 256 MiB of pings, or 8 s of them: the bridge's reading is what limits the rate.
    while sent < 256 << 20 && started.elapsed() < Duration::from_secs(8) {
        if tcp.write_all(&burst).is_err() {
            break;
        }
        sent += burst.len();
    }
    let grown_mib = rss_kib(bridge.pid()).saturating_sub(before) / 1024;
    assert!(sent >= 32 << 20, "only {} MiB of pings sent", sent >> 20);
    assert!(
        grown_mib < 48,
        "{grown_mib} MiB more memory after {} MiB of pings",
        sent >> 20
    );
    // Another client is served as usual.
    let (mut other, _) = tungstenite::connect(bridge.url.as_str()).unwrap();
    other
        .send(tungstenite::Message::text(
            r#"{"op":"publish","topic":"/avguard/control","msg":{"command":"stats"}}"#,
        ))
        .unwrap();
    assert!(matches!(
        other.read().unwrap(),
        tungstenite::Message::Text(_)
    ));
    drop(tcp);
}

/// Connection slots are freed from sockets that do not complete the handshake within
/// `--handshake-timeout-s`: a client gets in while the idle sockets that held every slot still exist, and
/// each of them has been closed by the bridge.
#[test]
fn sockets_that_never_finish_the_handshake_lose_their_slot() {
    let bridge = RunningBridge::start(|c| {
        c.arg("--model").arg(&fixture().model).args([
            "--max-connections",
            "2",
            "--handshake-timeout-s",
            "0.5",
        ])
    });
    let addr = bridge
        .url
        .trim_start_matches("ws://")
        .trim_end_matches('/')
        .to_owned();
    // One idle socket and one slowloris trickling an unfinished request.
    let mut idle = std::net::TcpStream::connect(&addr).unwrap();
    let mut slow = std::net::TcpStream::connect(&addr).unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        slow.write_all(b"X-a: b\r\n").ok();
        match tungstenite::connect(bridge.url.as_str()) {
            Ok(_) => break,
            Err(err) => assert!(Instant::now() < deadline, "no slot freed within 5 s: {err}"),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for socket in [&mut idle, &mut slow] {
        socket
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut buf = [0u8; 64];
        // Closed by the bridge: end of stream or a reset, not a read timeout.
        match socket.read(&mut buf) {
            Ok(n) => assert_eq!(n, 0, "unexpected bytes from the bridge"),
            Err(err) => assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset, "{err}"),
        }
    }
}
