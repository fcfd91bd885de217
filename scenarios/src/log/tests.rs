use super::*;
use laws::Obstacle;

/// 2,500 frames with obstacles, a collision, infinite distances and a `u64::MAX` seed (also used by the
/// isolated reader's tests).
pub(super) fn sample_run() -> RunLog {
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

/// Writes the sample run and lets `edit` change the file with the plain HDF5 API.
fn corrupted(edit: impl FnOnce(&hdf5::File)) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.h5");
    write_log(&path, &sample_run()).expect("write");
    let file = hdf5::File::open_rw(&path).expect("open rw");
    edit(&file);
    drop(file);
    (dir, path)
}

#[test]
fn issue11_obstacle_offset_ending_in_2_pow_40_is_an_error() {
    // Was: "memory allocation of ... bytes failed" (abort) in `inspect`, and the whole `score` batch lost.
    let (_dir, path) = corrupted(|f| {
        let ds = f.dataset("obstacles/offset").expect("offset");
        let n = ds.size();
        ds.write_slice(&[1u64 << 40], n - 1..n).expect("write");
    });
    let err = read_log(&path).expect_err("corrupt offset").to_string();
    assert!(
        err.starts_with("dataset `/obstacles/offset`, row 2500: frame 2499 has 1099511625277 obstacles, more than the limit of 1024"),
        "{err}"
    );
}

#[test]
fn declared_lengths_are_checked_against_the_file_size_before_allocating() {
    // A chunked dataset stretched to 2^40 rows with no data written reads as fill values: 8 TiB.
    let (_dir, path) = corrupted(|f| {
        let ds = f.dataset("frames/t").expect("t");
        ds.resize(1usize << 40).expect("resize");
    });
    let len = std::fs::metadata(&path).expect("size").len();
    let err = read_log(&path).expect_err("stretched").to_string();
    assert_eq!(
        err,
        format!("dataset `/frames/t` declares 1099511627776 rows (8796093022208 bytes), more than the file's {len} bytes can hold")
    );
    // The last offset matching a stretched obstacle column is refused by the same check.
    let (_dir, path) = corrupted(|f| {
        let offset = f.dataset("obstacles/offset").expect("offset");
        let n = offset.size();
        let last: Vec<u64> = offset.read_slice_1d(n - 2..n).expect("read").to_vec();
        offset
            .write_slice(&[last[1] + (1 << 30)], n - 1..n)
            .expect("write");
        let x = f.dataset("obstacles/x").expect("x");
        x.resize(x.size() + (1 << 30)).expect("resize");
    });
    let err = read_log(&path).expect_err("stretched").to_string();
    assert!(err.contains("more than the limit of 1024"), "{err}");
}

#[test]
fn in_memory_images_read_like_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a.h5");
    let log = sample_run();
    write_log(&path, &log).expect("write");
    let image = std::fs::read(&path).expect("bytes");
    assert_eq!(read_log_image("a.h5", &image).expect("image"), log);
    let err = read_log_image("cut.h5", &image[..image.len() / 2]).expect_err("truncated");
    assert!(err.to_string().starts_with("cut.h5: "), "{err}");
    assert!(read_log_image("none.h5", b"").is_err());
}

#[test]
fn columns_are_the_datasets_a_written_log_holds() {
    let run = sample_run();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.h5");
    write_log(&path, &run).unwrap();
    let file = hdf5::File::open(&path).unwrap();
    let frames = frame_columns(&run.frames);
    let mut names: Vec<&str> = frames.iter().map(|(n, _)| *n).collect();
    names.sort_unstable();
    let mut stored = file.group("frames").unwrap().member_names().unwrap();
    stored.sort();
    assert_eq!(names, stored);
    let column = |cols: &[(&str, Column)], name: &str| {
        cols.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| c.clone())
            .unwrap()
    };
    let Column::F64(x) = column(&frames, "x") else {
        panic!("x is not f64")
    };
    assert_eq!(
        x,
        file.dataset("frames/x").unwrap().read_raw::<f64>().unwrap()
    );
    let Column::U8(collision) = column(&frames, "collision") else {
        panic!("collision is not u8")
    };
    assert_eq!(collision.iter().position(|&c| c == 1), Some(7));

    // Frame k has k % 3 obstacles: frame indices 1, 2, 2, 4, 5, 5, ...
    let obstacles = obstacle_columns(&run.frames);
    let Column::I32(frame) = column(&obstacles, "frame") else {
        panic!("frame is not i32")
    };
    assert_eq!(frame[..6], [1, 2, 2, 4, 5, 5]);
    let Column::F64(t) = column(&obstacles, "t") else {
        panic!("t is not f64")
    };
    assert_eq!(t[1], 0.2);
    let Column::U8(priority) = column(&obstacles, "priority") else {
        panic!("priority is not u8")
    };
    assert_eq!(priority[..3], [0, 0, 1]);
    let offset = file
        .dataset("obstacles/offset")
        .unwrap()
        .read_raw::<u64>()
        .unwrap();
    assert_eq!(frame.len() as u64, *offset.last().unwrap());
}

/// An error's message names the file and the library's reason once, and a chain printer (which walks
/// `source()`) adds nothing to it: the CLI (`{:#}`), the Python module and the child-process reader must
/// all give the same text.
#[test]
fn read_errors_say_their_reason_once() {
    let dir = tempfile::tempdir().unwrap();
    let not_hdf5 = dir.path().join("garbage.h5");
    std::fs::write(&not_hdf5, b"not an HDF5 file").unwrap();
    let missing = dir.path().join("missing.h5");
    for path in [not_hdf5, missing] {
        let err = read_log(&path).unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with(&path.display().to_string()),
            "{message}"
        );
        assert!(
            std::error::Error::source(&err).is_none(),
            "{message}: its cause is already in the message"
        );
        let reason = message.rsplit(": ").next().unwrap();
        assert_eq!(message.matches(reason).count(), 1, "{message}");
    }
}

/// Rewrites the dataset `name` with `values` (its old data dropped).
fn replace_dataset<T: hdf5::H5Type>(f: &hdf5::File, name: &str, values: &[T]) {
    f.unlink(name).expect("unlink");
    f.new_dataset_builder()
        .with_data(values)
        .create(name)
        .expect("create");
}

#[test]
fn boolean_flag_columns_read_as_their_values() {
    // numpy's `bool`, as h5py writes it, is an 8-bit enum FALSE = 0 / TRUE = 1: the hdf5 crate's `bool`.
    let log = sample_run();
    let (_dir, path) = corrupted(|f| {
        let collision: Vec<bool> = log.frames.iter().map(|fr| fr.collision).collect();
        replace_dataset(f, "frames/collision", &collision);
        let priority: Vec<bool> = log
            .frames
            .iter()
            .flat_map(|fr| fr.obstacles.iter().map(|o| o.priority))
            .collect();
        replace_dataset(f, "obstacles/priority", &priority);
    });
    assert_eq!(read_log(&path).expect("boolean flags"), log);
}

#[test]
fn a_boolean_byte_other_than_false_or_true_names_its_row() {
    // Bytes are written as the boolean enum's raw values, so row 3 holds 2: neither FALSE nor TRUE.
    let (_dir, path) = corrupted(|f| {
        let n = f.dataset("frames/collision").expect("collision").size();
        let mut bytes = vec![0u8; n];
        bytes[3] = 2;
        f.unlink("frames/collision").expect("unlink");
        let ds = f
            .new_dataset::<bool>()
            .shape(n)
            .create("frames/collision")
            .expect("create");
        // SAFETY: a raw write of one byte per element through the dataset's own (boolean) type.
        let status = unsafe {
            hdf5_sys::h5d::H5Dwrite(
                ds.id(),
                ds.dtype().expect("dtype").id(),
                hdf5_sys::h5s::H5S_ALL,
                hdf5_sys::h5s::H5S_ALL,
                hdf5_sys::h5p::H5P_DEFAULT,
                bytes.as_ptr().cast(),
            )
        };
        assert!(status >= 0, "raw write");
    });
    let err = read_log(&path).expect_err("byte 2").to_string();
    assert_eq!(
        err,
        "dataset `/frames/collision`, row 3: a boolean other than FALSE or TRUE"
    );
}

#[test]
fn fixed_length_string_attributes_read_as_their_text() {
    use hdf5::types::FixedAscii;
    let log = sample_run();
    let (_dir, path) = corrupted(|f| {
        for (name, text) in [
            ("format", FORMAT),
            ("scenario", log.meta.scenario.as_str()),
            ("run_id", log.meta.run_id.as_str()),
        ] {
            f.delete_attr(name).expect("delete");
            let value = FixedAscii::<16>::from_ascii(text).expect("ascii");
            f.new_attr::<FixedAscii<16>>()
                .create(name)
                .and_then(|a| a.write_scalar(&value))
                .expect("fixed-length attribute");
        }
    });
    assert_eq!(read_log(&path).expect("fixed-length strings"), log);
}

#[test]
fn integers_are_read_as_stored_never_saturated() {
    // HDF5 converts out-of-range integers to the nearest value of the target type; read that way, a flag
    // of -1 was 0 and a negative offset 0. Each must be an error naming its dataset and row.
    let n = sample_run().frames.len();
    let mut flags = vec![0i32; n];
    flags[4] = -1;
    let (_dir, path) = corrupted(|f| replace_dataset(f, "frames/collision", &flags));
    assert_eq!(
        read_log(&path).expect_err("-1 flag").to_string(),
        "dataset `/frames/collision`, row 4: flag is neither 0 nor 1"
    );
    let mut gear = vec![1i64; n];
    gear[9] = 1 << 40;
    let (_dir, path) = corrupted(|f| replace_dataset(f, "frames/gear", &gear));
    assert_eq!(
        read_log(&path).expect_err("2^40 gear").to_string(),
        "dataset `/frames/gear`, row 9: value is out of range for a 32-bit integer"
    );
    let (_dir, path) = corrupted(|f| {
        let mut offset: Vec<i64> = f
            .dataset("obstacles/offset")
            .and_then(|d| d.read_raw::<i64>())
            .expect("offsets");
        offset[2] = -1;
        replace_dataset(f, "obstacles/offset", &offset);
    });
    assert_eq!(
        read_log(&path).expect_err("negative offset").to_string(),
        "dataset `/obstacles/offset`, row 2: offset is negative"
    );
    let mut huge = vec![0u64; n + 1];
    huge[n] = u64::MAX;
    let (_dir, path) = corrupted(|f| replace_dataset(f, "obstacles/offset", &huge));
    assert_eq!(
        read_log(&path).expect_err("u64::MAX offset").to_string(),
        format!("dataset `/obstacles/offset`, row {n}: value is out of range (above 2^63 - 1)")
    );
    let (_dir, path) = corrupted(|f| {
        f.delete_attr("seed").expect("delete");
        f.new_attr::<i64>()
            .create("seed")
            .and_then(|a| a.write_scalar(&-5i64))
            .expect("seed");
    });
    assert_eq!(
        read_log(&path).expect_err("negative seed").to_string(),
        "attribute `seed`: negative (-5)"
    );
}

#[test]
fn integer_columns_of_other_widths_read_as_their_values() {
    // Narrower, wider and unsigned integers hold the same values: the same log.
    let log = sample_run();
    let (_dir, path) = corrupted(|f| {
        let gear: Vec<i64> = log.frames.iter().map(|fr| i64::from(fr.gear)).collect();
        replace_dataset(f, "frames/gear", &gear);
        let light: Vec<u16> = log.frames.iter().map(|fr| fr.light_color as u16).collect();
        replace_dataset(f, "frames/light_color", &light);
        let collision: Vec<i8> = log.frames.iter().map(|fr| i8::from(fr.collision)).collect();
        replace_dataset(f, "frames/collision", &collision);
        let offset: Vec<i32> = f
            .dataset("obstacles/offset")
            .and_then(|d| d.read_raw::<i32>())
            .expect("offsets");
        replace_dataset(f, "obstacles/offset", &offset);
        f.delete_attr("seed").expect("delete");
        f.new_attr::<u64>()
            .create("seed")
            .and_then(|a| a.write_scalar(&u64::MAX))
            .expect("seed");
    });
    assert_eq!(read_log(&path).expect("other widths"), log);
}

#[test]
fn a_folder_is_named_as_a_folder_not_read_as_a_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = read_log(dir.path()).expect_err("a folder").to_string();
    assert_eq!(
        err,
        format!("{}: a folder, not a log file", dir.path().display())
    );
}

/// Replaces the root attribute `name` with the scalar `value` of type `T`.
fn set_attr<T: hdf5::H5Type>(f: &hdf5::File, name: &str, value: T) {
    f.delete_attr(name).expect("delete");
    f.new_attr::<T>()
        .create(name)
        .and_then(|a| a.write_scalar(&value))
        .expect("attribute");
}

#[test]
fn a_float32_frame_period_reads_as_the_decimal_it_was_written_as() {
    // Read as stored, float32 0.1 is 0.10000000149011612, and a batch of float64 0.1 logs then had two
    // periods: `learn` took the first log's and refused every other one.
    for (stored, expected) in [
        (0.1f32, 0.1),
        (0.05, 0.05),
        (0.033, 0.033),
        (1.0 / 3.0, 0.33333334),
    ] {
        let (_dir, path) = corrupted(|f| set_attr(f, "frame_period_s", stored));
        let log = read_log(&path).expect("float32 period");
        assert_eq!(log.meta.frame_period_s, expected, "{stored}");
    }
}

#[test]
fn an_implausible_frame_period_names_the_attribute() {
    for period in [
        1e-9,
        5e-324,
        1e300,
        3600.0,
        0.0,
        -0.1,
        f64::NAN,
        f64::INFINITY,
    ] {
        let (_dir, path) = corrupted(|f| set_attr(f, "frame_period_s", period));
        let err = read_log(&path).expect_err("implausible period").to_string();
        assert!(
            err.starts_with("attribute `frame_period_s`: ")
                && err.contains("not a plausible frame period (from 0.001 to 10 s)"),
            "{period}: {err}"
        );
    }
    for period in [0.001, 10.0] {
        let (_dir, path) = corrupted(|f| set_attr(f, "frame_period_s", period));
        assert_eq!(read_log(&path).expect("bounds").meta.frame_period_s, period);
    }
}

/// The error of the sample run with `/frames/x` rebuilt by `make` from its values (the old dataset
/// dropped), given the open file and its folder.
fn with_x_made_by(make: impl FnOnce(&hdf5::File, &[f64], &std::path::Path)) -> String {
    let xs: Vec<f64> = sample_run().frames.iter().map(|f| f.x).collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("outside.h5");
    write_log(&path, &sample_run()).expect("write");
    let file = hdf5::File::open_rw(&path).expect("open rw");
    file.unlink("frames/x").expect("unlink");
    make(&file, &xs, dir.path());
    drop(file);
    read_log(&path).expect_err("x outside the file").to_string()
}

#[test]
fn data_stored_outside_the_file_is_refused_naming_the_dataset() {
    // Each of these read as a valid log before: HDF5 follows them to other files (any file the writer
    // named, `/etc/hostname` as well) or fills a virtual dataset's missing sources with zeros.
    let external = with_x_made_by(|f, xs, dir| {
        let raw = dir.join("x.raw");
        f.new_dataset::<f64>()
            .shape(xs.len())
            .external(raw.to_str().expect("utf-8"), 0, xs.len() * 8)
            .create("frames/x")
            .and_then(|ds| ds.write(xs))
            .expect("external storage");
    });
    assert_eq!(
        external,
        "`/frames/x` is stored outside the file (external storage): a log must hold its own data"
    );
    let virtual_ = with_x_made_by(|f, xs, _| {
        f.new_dataset_builder()
            .with_data(xs)
            .create("x_source")
            .expect("source");
        f.new_dataset::<f64>()
            .shape(xs.len())
            .virtual_map(".", "/x_source", xs.len(), .., xs.len(), ..)
            .create("frames/x")
            .expect("virtual dataset");
    });
    assert_eq!(
        virtual_,
        "`/frames/x` is stored outside the file (a virtual dataset): a log must hold its own data"
    );
    let link = with_x_made_by(|f, xs, dir| {
        let other = dir.join("other.h5");
        let o = hdf5::File::create(&other).expect("other file");
        o.new_dataset_builder()
            .with_data(xs)
            .create("x")
            .expect("x there");
        f.group("frames")
            .and_then(|g| g.link_external(other.to_str().expect("utf-8"), "/x", "x"))
            .expect("external link");
    });
    assert_eq!(
        link,
        "`/frames/x` is stored outside the file (an external link to another file): a log must hold \
         its own data"
    );
}

#[test]
fn an_unsupported_version_is_named_as_stored() {
    let (_dir, path) = corrupted(|f| set_attr(f, "version", u64::MAX));
    let err = read_log(&path).expect_err("version").to_string();
    assert_eq!(
        err,
        "attribute `version`: unsupported version 18446744073709551615"
    );
}

#[test]
fn sixteen_bit_floats_read_as_their_values() {
    // h5py writes numpy's float16 as an IEEE half; the contract reads any floating-point width.
    let log = sample_run();
    let (_dir, path) = corrupted(|f| {
        let speeds: Vec<half::f16> = log
            .frames
            .iter()
            .map(|fr| half::f16::from_f64(fr.speed_mps))
            .collect();
        replace_dataset(f, "frames/speed", &speeds);
        set_attr(f, "frame_period_s", half::f16::from_f64(0.1));
    });
    let back = read_log(&path).expect("float16 columns");
    assert_eq!(back.meta.frame_period_s, 0.1);
    assert_eq!(back.frames, log.frames, "1.5 m/s is exact in 16 bits");
}

#[test]
fn a_write_that_fails_part_way_leaves_the_older_log_and_no_temporary_file() {
    // Was: `perturb` into a folder holding a good log, with noise that made frame 3 not finite, left an
    // empty file in its place.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a.h5");
    let good = sample_run();
    write_log(&path, &good).expect("write");
    let mut bad = sample_run();
    bad.frames[3].x = f64::INFINITY;
    let err = write_log(&path, &bad).expect_err("not finite");
    assert!(matches!(err, LogError::BadFrame { index: 3, .. }), "{err}");
    assert_eq!(read_log(&path).expect("the older log"), good);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["a.h5"], "{names:?}");
    // A log that cannot be created (a NUL in an attribute) leaves nothing either.
    let mut meta = good.meta.clone();
    meta.run_id = "a\0b".into();
    let other = dir.path().join("b.h5");
    assert!(PartialLog::create(&other, &meta).is_err());
    assert!(!partial_path(&other).exists() && !other.exists());
    // Finished, the new log replaces the older one.
    let mut newer = sample_run();
    newer.meta.run_id = "r-2".into();
    write_log(&path, &newer).expect("rewrite");
    assert_eq!(read_log(&path).expect("the newer log"), newer);
}
