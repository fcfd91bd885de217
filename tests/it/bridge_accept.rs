//! The accept loop backs off when accepting fails (issue #11, point 3): with its file descriptors exhausted
//! (EMFILE), the bridge logs the failure and waits before retrying instead of spinning on the CPU.

use std::process::Command;
use std::time::Duration;

use crate::support::{avguard_bin, fixture, RunningBridge};

/// CPU time (user + system) the process has used, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which is in parentheses): utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn accept_failures_back_off_instead_of_spinning() {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "ulimit -n 48; exec {} bridge --listen 127.0.0.1:0 --model {}",
            avguard_bin().display(),
            fixture().model.display()
        ))
        .env("AVGUARD_LOG", "warn");
    let mut bridge = RunningBridge::spawn(cmd);
    let addr = bridge
        .url
        .trim_start_matches("ws://")
        .trim_end_matches('/')
        .to_owned();
    // More connections than descriptors: the ones beyond the limit wait in the backlog, accept fails.
    let _conns: Vec<_> = (0..80)
        .filter_map(|_| std::net::TcpStream::connect(&addr).ok())
        .collect();
    bridge.wait_for("accept failed; backing off");
    let before = cpu_ticks(bridge.pid());
    // Real time on purpose: the claim is about CPU used per second of wall time.
    std::thread::sleep(Duration::from_secs(2));
    let used = cpu_ticks(bridge.pid()) - before;
    // A spinning loop uses ~200 ticks (2 s at 100 Hz); backing off up to 1 s uses almost none.
    assert!(used < 40, "{used} ticks of CPU in 2 s");
}
