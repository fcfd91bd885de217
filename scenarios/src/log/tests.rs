use super::*;
use laws::Obstacle;

fn sample_run() -> RunLog {
    let frames = (0..2500)
        .map(|k| Frame {
            t: k as f64 * 0.1,
            x: k as f64,
            speed_mps: 1.5,
            stopline_dist_m: if k % 2 == 0 { 3.0 } else { f64::INFINITY },
            light_color: laws::frame::light_color::YELLOW,
            collision: k == 7,
            obstacles: (0..(k % 3))
                .map(|i| Obstacle {
                    id: i,
                    kind: 5,
                    x: 1.0,
                    y: 2.0,
                    heading: 0.5,
                    speed_mps: 3.0,
                    length: 4.5,
                    width: 1.9,
                    priority: i == 1,
                })
                .collect(),
            ..Frame::default()
        })
        .collect();
    RunLog {
        meta: RunMeta {
            scenario: "s".into(),
            run_id: "r-1".into(),
            frame_period_s: 0.1,
            seed: Some(u64::MAX),
        },
        frames,
    }
}

#[test]
fn round_trip_across_chunks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a.h5");
    let log = sample_run();
    write_log(&path, &log).expect("write");
    let back = read_log(&path).expect("read");
    assert_eq!(back, log);
}

#[test]
fn streaming_with_flushes_matches_batch_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = sample_run();
    let (a, b) = (dir.path().join("a.h5"), dir.path().join("b.h5"));
    write_log(&a, &log).expect("write");
    let mut w = LogWriter::create(&b, &log.meta).expect("create");
    for (k, f) in log.frames.iter().enumerate() {
        w.append(f).expect("append");
        if k % 100 == 0 {
            w.flush().expect("flush");
        }
    }
    w.finish().expect("finish");
    assert_eq!(read_log(&b).expect("read"), log);
}

#[test]
fn writes_are_byte_identical() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = sample_run();
    let (a, b) = (dir.path().join("a.h5"), dir.path().join("b.h5"));
    write_log(&a, &log).expect("write");
    // Real time on purpose: HDF5 stamps objects with the wall clock (1 s resolution) unless the writer
    // turns that off, and only a second boundary between the writes would show it.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    write_log(&b, &log).expect("write");
    assert!(std::fs::read(&a).expect("a") == std::fs::read(&b).expect("b"));
}

#[test]
fn writer_refuses_frames_the_reader_would_reject() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = sample_run();
    let mut w = LogWriter::create(&dir.path().join("c.h5"), &log.meta).expect("create");
    w.append(&log.frames[1]).expect("append");
    let err = w.append(&log.frames[0]).expect_err("time going back");
    assert!(err.to_string().contains("/frames/t"), "{err}");
    let nan = Frame {
        t: 5.0,
        speed_mps: f64::NAN,
        ..Frame::default()
    };
    assert!(w
        .append(&nan)
        .expect_err("nan")
        .to_string()
        .contains("/frames/speed"));
}

#[test]
fn empty_and_missing_files_are_errors_not_panics() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("empty.h5");
    let meta = sample_run().meta;
    LogWriter::create(&path, &meta)
        .expect("create")
        .finish()
        .expect("finish");
    assert!(matches!(read_log(&path), Err(LogError::Empty)));
    assert!(read_log(&dir.path().join("nope.h5")).is_err());
}
