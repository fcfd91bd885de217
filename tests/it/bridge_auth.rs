//! The bridge's token (issue #11, point 6): from `--token-file` or `AVGUARD_TOKEN` as well as `--token`,
//! presented by clients in the URL or an `Authorization: Bearer` header; a bridge bound beyond loopback
//! without one refuses to start.

use tungstenite::client::IntoClientRequest;

use crate::support::{avguard, fixture, scratch, RunningBridge};

/// Whether a websocket handshake with `request` succeeds.
fn admitted(request: impl IntoClientRequest) -> bool {
    tungstenite::connect(request).is_ok()
}

#[test]
fn token_from_a_file_or_the_environment_is_required_by_the_bridge() {
    let dir = scratch();
    let file = dir.path().join("token");
    std::fs::write(&file, "from-a-file_42\n").unwrap();
    let model = &fixture().model;
    let bridge = RunningBridge::start(|c| {
        c.arg("--model")
            .arg(model)
            .arg("--token-file")
            .arg(&file)
            .env_remove("AVGUARD_TOKEN")
    });
    assert!(!admitted(bridge.url.as_str()));
    assert!(!admitted(format!("{}?token=from-a-file_4", bridge.url)));
    assert!(admitted(format!("{}?token=from-a-file_42", bridge.url)));
    let mut request = bridge.url.as_str().into_client_request().unwrap();
    request
        .headers_mut()
        .insert("Authorization", "Bearer from-a-file_42".parse().unwrap());
    assert!(admitted(request));
    drop(bridge);

    let bridge = RunningBridge::start(|c| {
        c.arg("--model")
            .arg(model)
            .env("AVGUARD_TOKEN", "from-the-env")
    });
    assert!(!admitted(bridge.url.as_str()));
    assert!(admitted(format!("{}?token=from-the-env", bridge.url)));
}

#[test]
fn bad_or_missing_tokens_stop_the_bridge_before_it_serves() {
    let model = &fixture().model;
    let run = |extra: &[&str], envs: &[(&str, &str)]| {
        let mut cmd = avguard();
        cmd.arg("bridge").args(extra).arg("--model").arg(model);
        cmd.env_remove("AVGUARD_TOKEN");
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = run(&["--listen", "0.0.0.0:0"], &[]);
    assert!(err.contains("beyond loopback requires a token"), "{err}");
    let err = run(&["--token", "has space"], &[]);
    assert!(
        err.contains("--token / AVGUARD_TOKEN: the token has the character ' '"),
        "{err}"
    );
    let err = run(&["--token-file", "/no/such/token"], &[]);
    assert!(
        err.contains("/no/such/token: cannot read the token file"),
        "{err}"
    );
    let err = run(
        &["--token-file", "/no/such/token"],
        &[("AVGUARD_TOKEN", "x")],
    );
    assert!(err.contains("cannot be used with"), "{err}");
}
