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
    // law51 = law51_sub3 & … & law51_sub7 reports law51_sub5's violation on the same frames, not at its
    // longest sub-law's horizon (3 s) as until session 40, which put it at 40..59.
    let law51 = header.iter().position(|h| *h == "law51").expect("law51");
    let conj: Vec<usize> = (0..60).filter(|&k| rows[k][law51] == "1").collect();
    assert_eq!(conj, (30..60).collect::<Vec<_>>());
}

/// A law whose bound is not a whole number of the log's frames is refused naming the log, its frame
/// period and the law's file, before the output is written.
#[test]
fn laws_eval_names_the_log_and_law_file_when_a_bound_does_not_fit_the_period() {
    let dir = scratch();
    let laws = dir.path().join("laws");
    std::fs::create_dir(&laws).unwrap();
    std::fs::write(
        laws.join("frac.law"),
        "x = G(speed > 1 -> F[0,0.05](speed < 0.5));\n",
    )
    .unwrap();
    let log = dir.path().join("red.h5");
    write_log(&log, &red_light_run()).unwrap();
    let csv = dir.path().join("v.csv");
    let out = avguard()
        .args(["laws", "eval", "--laws"])
        .arg(&laws)
        .arg("--out")
        .arg(&csv)
        .arg(&log)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("red.h5: the laws of")
            && err.contains("frame period of 0.1 s")
            && err.contains("law 'x' (frac.law, line 1,"),
        "{err}"
    );
    assert!(!err.contains("cannot write"), "{err}");
    assert!(!csv.exists());
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

/// The columns of `avguard laws signals` named `name`, parsed, one value per frame.
fn signal_column(text: &str, name: &str) -> Vec<f64> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == name)
        .unwrap_or_else(|| panic!("no {name} column in {header:?}"));
    lines
        .map(|l| l.split(',').nth(col).unwrap().parse::<f64>().unwrap())
        .collect()
}

#[test]
fn laws_signals_writes_every_signal_per_frame_as_atoms_read_it() {
    let dir = scratch();
    let log = dir.path().join("red.h5");
    write_log(&log, &red_light_run()).unwrap();
    let csv = dir.path().join("signals.csv");
    ok(avguard()
        .args(["laws", "signals", "--out"])
        .arg(&csv)
        .arg(&log)
        .output()
        .unwrap());
    let text = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    assert_eq!(header[0], "t");
    assert_eq!(header.len(), 1 + laws::Signal::ALL.len());
    assert!(text.lines().all(|l| l.split(',').count() == header.len()));
    let t = signal_column(&text, "t");
    assert_eq!(t.len(), 60);
    assert_eq!(t[30], 3.0);
    // 10 m/s is 36 km/h; a red light ahead throughout.
    assert!(signal_column(&text, "speed")
        .iter()
        .all(|&v| (v - 36.0).abs() < 1e-9));
    assert!(signal_column(&text, "trafficLightAhead.color")
        .iter()
        .all(|&v| v == 1.0));
    // The stop line 30 m ahead, then 1.5 m from frame 10; stopping there needs v²/2d.
    let line = signal_column(&text, "stoplineAhead");
    let decel = signal_column(&text, "stoplineAhead.decel");
    for k in 0..60 {
        let d = if k >= 10 { 1.5 } else { 30.0 };
        assert_eq!(line[k], d, "frame {k}");
        assert!(
            (decel[k] - 100.0 / (2.0 * d)).abs() < 1e-9,
            "frame {k}: {}",
            decel[k]
        );
    }
    // No road user: nothing to approach, written as inf.
    assert!(signal_column(&text, "closestApproach")
        .iter()
        .all(|v| v.is_infinite()));
}

#[test]
fn laws_signals_names_a_file_that_is_not_a_log() {
    let dir = scratch();
    let bad = dir.path().join("not-a-log.h5");
    std::fs::write(&bad, b"plain text, not HDF5").unwrap();
    let out = avguard()
        .args(["laws", "signals", "--out"])
        .arg(dir.path().join("s.csv"))
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not-a-log.h5"), "{err}");
}
