//! `avguard bridge` and `avguard drive` fail with a one-line reason and a non-zero exit when they cannot
//! work (the live path itself is tested in the `bridge` crate against in-process bridges).

use crate::support::{avguard, workspace_root};

#[test]
fn drive_without_a_bridge_fails_with_a_reason() {
    // Port 9 (discard) on loopback: nothing listens there in CI.
    let out = avguard()
        .current_dir(workspace_root())
        .args([
            "drive",
            "--connect",
            "ws://127.0.0.1:9/",
            "--scenario",
            "scenarios/stop_sign.toml",
        ])
        .output()
        .expect("run avguard drive");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ws://127.0.0.1:9/"), "{err}");
}

#[test]
fn bridge_refuses_non_loopback_without_token_and_missing_models() {
    let out = avguard()
        .args([
            "bridge",
            "--listen",
            "0.0.0.0:0",
            "--model",
            "no-such-model.bin",
        ])
        .output()
        .expect("run avguard bridge");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--token"));
    let out = avguard()
        .args([
            "bridge",
            "--listen",
            "127.0.0.1:0",
            "--model",
            "no-such-model.bin",
        ])
        .output()
        .expect("run avguard bridge");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-model.bin"));
}
