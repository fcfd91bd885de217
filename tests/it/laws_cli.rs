//! `avguard laws eval` on a log whose violation time is known by construction.

use crate::support::{avguard, ok, scratch, workspace_root};
use laws::frame::light_color;
use laws::Frame;
use scenarios::log::{write_log, RunLog, RunMeta};

/// An ego at 36 km/h that reaches a red light's stop line zone (1.5 m) at frame 10 and never slows:
/// law51_sub5 (`red & stoplineAhead(2) -> F[0,2] speed < 0.5`) has its antecedent from frame 10, so the
/// violation becomes certain at frame 10 + 20 = 30 and every later frame.
fn red_light_run() -> RunLog {
    let frames = (0..60)
        .map(|k| Frame {
            t: f64::from(k) * 0.1,
            x: f64::from(k),
            speed_mps: 10.0,
            light_color: light_color::RED,
            signal_ahead: true,
            stopline_dist_m: if k >= 10 { 1.5 } else { 30.0 },
            ..Frame::default()
        })
        .collect();
    let meta = RunMeta {
        scenario: "hand".into(),
        run_id: "red".into(),
        frame_period_s: 0.1,
        seed: None,
    };
    RunLog { meta, frames }
}

#[test]
fn laws_eval_reports_the_violation_at_its_deadline() {
    let dir = scratch();
    let log = dir.path().join("red.h5");
    write_log(&log, &red_light_run()).unwrap();
    let csv = dir.path().join("verdicts.csv");
    ok(avguard()
        .args(["laws", "eval", "--laws"])
        .arg(workspace_root().join("laws/specs"))
        .arg("--out")
        .arg(&csv)
        .arg(&log)
        .output()
        .unwrap());
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "t");
    let col = header
        .iter()
        .position(|h| *h == "law51_sub5")
        .expect("law51_sub5 column");
    assert_eq!(header[col + 1], "law51_sub5.w");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 60);
    let violated: Vec<usize> = (0..60).filter(|&k| rows[k][col] == "1").collect();
    assert_eq!(violated, (30..60).collect::<Vec<_>>());
    let in_window: Vec<usize> = (0..60).filter(|&k| rows[k][col + 1] == "1").collect();
    assert_eq!(in_window, (30..60).collect::<Vec<_>>());
    assert_eq!(rows[30][0].parse::<f64>().unwrap(), 3.0);
}

#[test]
fn laws_eval_names_a_bad_law_file_with_line_and_column() {
    let dir = scratch();
    std::fs::write(
        dir.path().join("bad.law"),
        "ok = G(speed < 10);\nbroken = G(speed < );\n",
    )
    .unwrap();
    let log = dir.path().join("red.h5");
    write_log(&log, &red_light_run()).unwrap();
    let out = avguard()
        .args(["laws", "eval", "--laws"])
        .arg(dir.path())
        .arg("--out")
        .arg(dir.path().join("v.csv"))
        .arg(&log)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.law:2:"), "{err}");
}
