//! `avguard bridge` and `avguard drive` fail with a one-line reason and a non-zero exit when they cannot
//! work (the live path itself is tested in the `bridge` crate against in-process bridges).

use crate::support::{avguard, workspace_root};

/// `avguard drive` of the stop-sign scenario against port 9 (discard) on loopback, where nothing listens
/// in CI, with `extra` options.
fn drive_to_nowhere(extra: &[&str]) -> std::process::Output {
    avguard()
        .current_dir(workspace_root())
        .args([
            "drive",
            "--connect",
            "ws://127.0.0.1:9/",
            "--scenario",
            "scenarios/stop_sign.toml",
        ])
        .args(extra)
        .output()
        .expect("run avguard drive")
}

#[test]
fn drive_without_a_bridge_fails_with_a_reason() {
    let out = drive_to_nowhere(&[]);
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

/// Service options under which the bridge could not serve are refused at start with the option's name,
/// before the model is read (a metrics interval of 1e300 s once panicked converting to a duration).
#[test]
fn bridge_and_drive_refuse_options_they_cannot_serve_with() {
    for (option, value) in [
        ("--workers", "0"),
        ("--workers", "100000"),
        ("--max-connections", "0"),
        ("--max-frame-bytes", "10"),
        ("--decel-mps2", "0"),
        ("--decel-mps2", "NaN"),
        ("--hysteresis", "2"),
        ("--metrics-every-s", "1e300"),
        ("--metrics-every-s", "NaN"),
        ("--handshake-timeout-s", "0"),
        ("--handshake-timeout-s", "1e300"),
        ("--handshake-timeout-s", "NaN"),
    ] {
        let out = avguard()
            .args(["bridge", "--listen", "127.0.0.1:0", "--model"])
            .arg("no-such-model.bin")
            .arg(format!("{option}={value}"))
            .output()
            .expect("run avguard bridge");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(1) && err.contains(option) && err.lines().count() == 1,
            "{option} {value}: {err}"
        );
    }
    let out = drive_to_nowhere(&["--reply-timeout-s", "1e300"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(1) && err.contains("--reply-timeout-s"),
        "{err}"
    );
}

/// `import` refuses a frame period or gap limit that would make assembly unbounded (a period of 1e-300 s
/// once ran for ever) before it reads a record.
#[test]
fn import_refuses_periods_assembly_cannot_keep_to() {
    for (option, value) in [
        ("--frame-period-s", "1e-300"),
        ("--frame-period-s", "20"),
        ("--gap-limit", "1e300"),
    ] {
        let out = avguard()
            .args(["import", "--out"])
            .arg(std::env::temp_dir().join("avguard-never-written"))
            .arg(format!("{option}={value}"))
            .arg("no-such.record")
            .output()
            .expect("run avguard import");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(1) && err.contains(option) && err.contains(value),
            "{option} {value}: {err}"
        );
    }
}

/// Thresholds and false-alarm targets out of range are refused by the command line of every command that
/// takes them, before any log is read.
#[test]
fn thresholds_and_targets_out_of_range_are_refused_by_the_command_line() {
    for line in [
        "score --model m --out o --thresholds 0.3,2 x.h5",
        "evaluate --laws l --train a --test b --thresholds 0",
        "evaluate --laws l --train a --test b --target-false-alarms 0",
        "demo --target-false-alarms 1.5",
        "calibrate --model m --target-false-alarms 100% x.h5",
    ] {
        let args: Vec<&str> = line.split(' ').collect();
        let out = avguard().args(args).output().expect("run avguard");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(2) && err.contains("is outside"),
            "{line}: {err}"
        );
    }
}
