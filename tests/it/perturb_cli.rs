//! `avguard perturb` as a user runs it: what each perturbation does to real simulated logs (checked frame
//! by frame against the originals), determinism, a bad file failing alone, and the refusals.

use std::path::{Path, PathBuf};

use scenarios::log::{read_log, RunLog};

use crate::support::{avguard, python_script, run_ok, run_refused, scratch, workspace_root};

fn simulate(out: &Path) {
    simulate_seed(out, "5");
}

/// Three priority-road runs of `seed` (seed 2: one of them collides, over its last 11 frames).
fn simulate_seed(out: &Path, seed: &str) {
    run_ok(
        avguard()
            .args(["simulate", "--runs", "3", "--seed", seed, "--out"])
            .arg(out)
            .arg("--scenario")
            .arg(workspace_root().join("scenarios/priority_road.toml")),
    );
}

fn logs_in(dir: &Path) -> Vec<(String, RunLog)> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").path())
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            (
                name,
                read_log(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
            )
        })
        .collect()
}

#[test]
fn range_priority_and_map_are_removed_as_asked_and_the_labels_kept() {
    let tmp = scratch();
    let (orig, a, b) = (
        tmp.path().join("orig"),
        tmp.path().join("a"),
        tmp.path().join("b"),
    );
    simulate(&orig);
    let perturb = |out: &Path| {
        run_ok(
            avguard()
                .args([
                    "perturb",
                    "--perception-range",
                    "30",
                    "--clear-priority",
                    "--no-map",
                ])
                .arg("--out")
                .arg(out)
                .arg(&orig),
        )
    };
    let said = perturb(&a);
    assert!(said.contains("3 of 3 logs perturbed"), "{said}");
    assert!(said.contains("road users within 30 m"), "{said}");
    perturb(&b);
    let (originals, copies) = (logs_in(&orig), logs_in(&a));
    assert_eq!(copies.len(), 3);
    let mut dropped = 0;
    let mut had_priority = false;
    let mut had_map = false;
    for ((name, o), (copy_name, c)) in originals.iter().zip(&copies) {
        assert_eq!(name, copy_name);
        assert_eq!(c.meta, o.meta, "{name}: attributes");
        assert_eq!(c.frames.len(), o.frames.len(), "{name}");
        // Same file, same copy.
        assert_eq!(
            std::fs::read(a.join(name)).expect("a"),
            std::fs::read(b.join(name)).expect("b"),
            "{name}"
        );
        for (fo, fc) in o.frames.iter().zip(&c.frames) {
            assert_eq!(
                (fc.t, fc.x, fc.y, fc.speed_mps),
                (fo.t, fo.x, fo.y, fo.speed_mps)
            );
            assert_eq!(
                (fc.collision, fc.destination),
                (fo.collision, fo.destination)
            );
            // The road users kept are exactly the originals within 30 m of the ego, in order.
            let within: Vec<i32> = fo
                .obstacles
                .iter()
                .filter(|ob| (ob.x - fo.x).hypot(ob.y - fo.y) <= 30.0)
                .map(|ob| ob.id)
                .collect();
            let kept: Vec<i32> = fc.obstacles.iter().map(|ob| ob.id).collect();
            assert_eq!(kept, within, "{name} t = {}", fo.t);
            dropped += fo.obstacles.len() - fc.obstacles.len();
            had_priority |= fo.obstacles.iter().any(|ob| ob.priority);
            assert!(fc.obstacles.iter().all(|ob| !ob.priority));
            had_map |= fo.junction_dist_m.is_finite();
            assert!(fc.junction_dist_m.is_infinite() && fc.stopline_dist_m.is_infinite());
            assert!(fc.speed_limit_mps.is_infinite());
        }
    }
    // The originals had something to remove.
    assert!(dropped > 0 && had_priority && had_map);
    // h5py and numpy, from the original files alone, agree with every column of the copies.
    let summary = python_check(&[orig.as_os_str(), a.as_os_str(), "30".as_ref()]);
    assert_eq!(summary["files"], 3);
    assert_eq!(summary["rows_dropped"], dropped);
}

/// The sample standard deviation of `b − a` over paired values.
fn sd_of_differences(pairs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let d: Vec<f64> = pairs.map(|(a, b)| b - a).collect();
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
}

#[test]
fn noise_has_the_standard_deviations_given_and_depends_on_the_seed() {
    let tmp = scratch();
    let orig = tmp.path().join("orig");
    simulate(&orig);
    let noisy_of = |from: &Path, seed: &str, out: &Path| {
        run_ok(
            avguard()
                .args(["perturb", "--seed", seed])
                .args([
                    "--obstacle-noise",
                    "0.2,0.3,0.03",
                    "--ego-noise",
                    "0.05,0.1,0.01,0.5",
                ])
                .arg("--out")
                .arg(out)
                .arg(from),
        );
        logs_in(out)
    };
    let noisy = |seed: &str, out: &Path| noisy_of(&orig, seed, out);
    let (n1, n2) = (
        noisy("1", &tmp.path().join("n1")),
        noisy("2", &tmp.path().join("n2")),
    );
    let originals = logs_in(&orig);
    let frames = || {
        originals
            .iter()
            .zip(&n1)
            .flat_map(|((_, o), (_, c))| o.frames.iter().zip(&c.frames))
    };
    // Over about a thousand frames the sample σ is within 10 % of the one asked for (its standard error
    // is about 2 %).
    for (what, sd, want) in [
        (
            "ego x",
            sd_of_differences(frames().map(|(a, b)| (a.x, b.x))),
            0.05,
        ),
        (
            "ego acceleration",
            sd_of_differences(frames().map(|(a, b)| (a.accel_mps2, b.accel_mps2))),
            0.5,
        ),
        (
            "road-user x",
            sd_of_differences(
                frames()
                    .flat_map(|(a, b)| a.obstacles.iter().zip(&b.obstacles))
                    .map(|(a, b)| (a.x, b.x)),
            ),
            0.2,
        ),
    ] {
        assert!(
            (sd / want - 1.0).abs() < 0.1,
            "{what}: σ {sd} against {want}"
        );
    }
    for (_, c) in &n1 {
        assert!(c.frames.iter().all(|f| f.speed_mps >= 0.0));
    }
    assert_ne!(n1[0].1.frames, n2[0].1.frames, "another seed, other noise");
    // Another set of runs with the same file names (a test set beside a training set), perturbed with
    // the same seed, draws noise of its own: the ego's offsets in the first frame differ.
    let other = tmp.path().join("other");
    simulate_seed(&other, "6");
    let drawn = |from: &Path, out: &str| {
        let copies = noisy_of(from, "1", &tmp.path().join(out));
        logs_in(from)
            .iter()
            .zip(&copies)
            .map(|((name, o), (copy_name, c))| {
                assert_eq!(name, copy_name);
                // The ego's noise in the first frame: the stream's first draws.
                let (a, b) = (&o.frames[0], &c.frames[0]);
                (name.clone(), b.x - a.x, b.y - a.y)
            })
            .collect::<Vec<_>>()
    };
    let (mine, theirs) = (drawn(&orig, "again"), drawn(&other, "o1"));
    for (m, t) in mine.iter().zip(&theirs) {
        assert_eq!(m.0, t.0, "the sets share file names");
        assert!(m.1 != t.1 && m.2 != t.2, "{m:?} / {t:?}: the same draws");
    }
    // The same set and seed, the same copy.
    assert_eq!(
        logs_in(&tmp.path().join("again")),
        n1,
        "perturbed twice with one seed"
    );
}

#[test]
fn a_bad_file_fails_alone() {
    let tmp = scratch();
    let orig = tmp.path().join("orig");
    simulate(&orig);
    std::fs::write(orig.join("broken.h5"), b"not an HDF5 file").expect("write");
    let out = tmp.path().join("out");
    let stderr = run_refused(
        avguard()
            .args(["perturb", "--clear-priority", "--out"])
            .arg(&out)
            .arg(&orig),
        &["broken.h5", "1 of 4 logs could not be perturbed"],
    );
    assert_eq!(logs_in(&out).len(), 3, "{stderr}");
    // The file is named once: the reader's error about a whole file names it already.
    let line = stderr
        .lines()
        .find(|l| l.contains("broken.h5"))
        .expect("a line on broken.h5");
    assert_eq!(line.matches("broken.h5").count(), 1, "{stderr}");
}

/// A copy has the input's attributes: those the writer sets (as it writes them) and every other, with its
/// type and value (h5py's writers add their own; they were dropped).
#[test]
fn a_copy_keeps_every_attribute_of_its_input() {
    let tmp = scratch();
    let orig = tmp.path().join("orig");
    std::fs::create_dir_all(&orig).expect("mkdir");
    let log = orig.join("from_h5py.h5");
    run_ok(python_script("h5_interop.py").arg("write").arg(&log));
    const ADD: &str = "import sys, h5py, numpy as np\n\
        with h5py.File(sys.argv[1], 'a') as f:\n\
        \x20   f.attrs['writer'] = 'a tool of ours 1.2'\n\
        \x20   f.attrs['extra_attr'] = np.arange(3, dtype='i2')\n\
        \x20   f.attrs['gain'] = np.float32(0.25)\n";
    run_ok(crate::support::python().arg("-c").arg(ADD).arg(&log));
    let out = tmp.path().join("out");
    run_ok(
        avguard()
            .args(["perturb", "--clear-priority", "--out"])
            .arg(&out)
            .arg(&orig),
    );
    const SAME: &str = "import sys, h5py, numpy as np\n\
        a, b = (h5py.File(p, 'r') for p in sys.argv[1:3])\n\
        assert sorted(a.attrs) == sorted(b.attrs), (sorted(a.attrs), sorted(b.attrs))\n\
        for k in a.attrs:\n\
        \x20   x, y = a.attrs[k], b.attrs[k]\n\
        \x20   known = ('format', 'version', 'scenario', 'run_id', 'frame_period_s', 'seed')\n\
        \x20   assert k in known or np.asarray(x).dtype == np.asarray(y).dtype, (k, x, y)\n\
        \x20   assert np.array_equal(np.asarray(x), np.asarray(y)), (k, x, y)\n\
        print(sorted(a.attrs))\n";
    let names = run_ok(
        crate::support::python()
            .arg("-c")
            .arg(SAME)
            .arg(&log)
            .arg(out.join("from_h5py.h5")),
    );
    for name in [
        "writer",
        "extra_attr",
        "gain",
        "comment",
        "seed",
        "frame_period_s",
    ] {
        assert!(names.contains(&format!("'{name}'")), "{name}: {names}");
    }
}

#[test]
fn refusals_name_the_problem() {
    let tmp = scratch();
    let orig = tmp.path().join("orig");
    simulate(&orig);
    let out = tmp.path().join("out");
    let refuse = |args: &[&str], out: &Path, needles: &[&str]| {
        run_refused(
            avguard()
                .arg("perturb")
                .args(args)
                .arg("--out")
                .arg(out)
                .arg(&orig),
            needles,
        );
    };
    refuse(&[], &out, &["nothing to perturb"]);
    refuse(&["--miss-rate", "1.5"], &out, &["the miss rate", "1.5"]);
    refuse(
        &["--perception-range", "-3"],
        &out,
        &["the perception range"],
    );
    refuse(
        &["--ego-noise", "0.1,-1,0,0"],
        &out,
        &["the ego's speed noise"],
    );
    refuse(&["--no-map"], &orig, &["in the output folder"]);
    // Two inputs of one file name.
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).expect("mkdir");
    std::fs::copy(
        orig.join("priority_road_0000.h5"),
        other.join("priority_road_0000.h5"),
    )
    .expect("copy");
    run_refused(
        avguard()
            .args(["perturb", "--no-map", "--out"])
            .arg(&out)
            .arg(&orig)
            .arg(&other),
        &["the same file name"],
    );
    // A noise option with the wrong number of values is a usage error.
    let usage = avguard()
        .args(["perturb", "--obstacle-noise", "0.1,0.2", "--out"])
        .arg(&out)
        .arg(&orig)
        .output()
        .expect("run");
    assert!(!usage.status.success());
    let said = String::from_utf8_lossy(&usage.stderr);
    assert!(
        said.contains("expected 3 comma-separated numbers, found 2"),
        "{said}"
    );
    assert!(
        !out.exists(),
        "nothing is written when the options are refused"
    );
}

/// Runs `perturb_check.py` with `args` (`tests/py/perturb_check.py` documents its modes); returns its JSON.
fn python_check(args: &[&std::ffi::OsStr]) -> serde_json::Value {
    // Its packages are pinned in tests/py/requirements.txt; a failure shows the command and both streams.
    let out = run_ok(python_script("perturb_check.py").args(args));
    serde_json::from_str(&out).expect("JSON")
}

#[test]
fn dropped_frames_keep_their_times_and_the_labelled_frames() {
    let tmp = scratch();
    let (orig, out) = (tmp.path().join("orig"), tmp.path().join("out"));
    simulate_seed(&orig, "2");
    let said = run_ok(
        avguard()
            .args(["perturb", "--drop-frames", "0.3", "--out"])
            .arg(&out)
            .arg(&orig),
    );
    assert!(
        said.contains("each frame dropped with probability 0.3"),
        "{said}"
    );
    let (originals, copies) = (logs_in(&orig), logs_in(&out));
    assert_eq!(copies.len(), 3);
    let (mut frames, mut kept, mut collisions) = (0, 0, 0);
    for ((name, o), (_, c)) in originals.iter().zip(&copies) {
        assert_eq!(c.meta, o.meta, "{name}: attributes, the frame period too");
        assert!(c.frames.len() < o.frames.len(), "{name}: nothing dropped");
        // Each kept frame is the original frame of its time, in order: the times are a subsequence.
        let mut left = o.frames.iter().enumerate();
        let at: Vec<usize> = c
            .frames
            .iter()
            .map(|fc| {
                let (i, fo) = left
                    .find(|(_, fo)| fo.t == fc.t)
                    .unwrap_or_else(|| panic!("{name}: t = {} not an original time", fc.t));
                assert_eq!(fc, fo, "{name} t = {}", fc.t);
                i
            })
            .collect();
        assert_eq!(at.first(), Some(&0), "{name}: the first frame");
        assert_eq!(
            at.last(),
            Some(&(o.frames.len() - 1)),
            "{name}: the last frame"
        );
        for (i, fo) in o.frames.iter().enumerate() {
            if fo.collision || fo.destination {
                assert!(at.contains(&i), "{name}: labelled frame {i} dropped");
            }
        }
        // The collision label, frame by frame: every collision frame kept.
        let collided = |frames: &[laws::Frame]| frames.iter().filter(|f| f.collision).count();
        assert_eq!(collided(&c.frames), collided(&o.frames), "{name}");
        collisions += collided(&o.frames);
        frames += o.frames.len();
        kept += c.frames.len();
    }
    // About 30 % of the droppable frames dropped (over about a thousand frames, σ ≈ 1.5 %).
    let share = 1.0 - kept as f64 / frames as f64;
    assert!((0.2..0.4).contains(&share), "{share} dropped");
    let summary = python_check(&["--drops".as_ref(), orig.as_os_str(), out.as_os_str()]);
    assert_eq!(summary["files"], 3);
    assert_eq!(summary["frames_kept"], kept);
    assert!(collisions > 0, "a run collides, so its label was at stake");
}

#[test]
fn a_perception_delay_shifts_the_road_users_by_whole_frames() {
    let tmp = scratch();
    let (orig, out) = (tmp.path().join("orig"), tmp.path().join("out"));
    simulate(&orig);
    let said = run_ok(
        avguard()
            .args(["perturb", "--perception-delay", "0.3", "--out"])
            .arg(&out)
            .arg(&orig),
    );
    assert!(said.contains("road users seen 0.3 s late"), "{said}");
    let mut moved = false;
    for ((name, o), (_, c)) in logs_in(&orig).iter().zip(&logs_in(&out)) {
        assert_eq!(o.meta.frame_period_s, 0.1, "{name}: the test assumes 0.1 s");
        assert_eq!(c.meta, o.meta, "{name}");
        assert_eq!(c.frames.len(), o.frames.len(), "{name}");
        for (i, (fo, fc)) in o.frames.iter().zip(&c.frames).enumerate() {
            // Three frames back, none in the first three; the ego and the labels as they were.
            let want = i
                .checked_sub(3)
                .map_or(&[][..], |j| &o.frames[j].obstacles[..]);
            assert_eq!(fc.obstacles, want, "{name} frame {i}");
            let mut restored = fc.clone();
            restored.obstacles.clone_from(&fo.obstacles);
            assert_eq!(&restored, fo, "{name} frame {i}");
            moved |= fc.obstacles != fo.obstacles;
        }
    }
    assert!(moved, "the road users moved, so the delay was visible");
    let summary = python_check(&[
        "--delay".as_ref(),
        orig.as_os_str(),
        out.as_os_str(),
        "0.3".as_ref(),
    ]);
    assert_eq!(summary["files"], 3);
    assert_eq!(summary["frames_back"], 3);
}

#[test]
fn a_jittered_delay_shows_road_users_about_the_delay_old_and_never_older_than_before() {
    let tmp = scratch();
    let (orig, out) = (tmp.path().join("orig"), tmp.path().join("out"));
    simulate(&orig);
    let jittered = |into: &Path| {
        run_ok(
            avguard()
                .args(["perturb", "--perception-delay", "0.3"])
                .args(["--perception-jitter", "0.15", "--out"])
                .arg(into)
                .arg(&orig),
        )
    };
    let said = jittered(&out);
    assert!(said.contains("road users seen 0.3 ± 0.15 s late"), "{said}");
    for ((name, o), (_, c)) in logs_in(&orig).iter().zip(&logs_in(&out)) {
        assert_eq!(c.frames.len(), o.frames.len(), "{name}");
        for (fo, fc) in o.frames.iter().zip(&c.frames) {
            let mut restored = fc.clone();
            restored.obstacles.clone_from(&fo.obstacles);
            assert_eq!(&restored, fo, "{name}: only the road users move");
        }
    }
    let summary = python_check(&[
        "--jitter".as_ref(),
        orig.as_os_str(),
        out.as_os_str(),
        "0.3".as_ref(),
        "0.15".as_ref(),
    ]);
    assert_eq!(summary["files"], 3);
    // 0.15 s old to one period more than 0.45 s at 0.1 s a frame: two to five frames back, and more
    // than one of them.
    let ages: Vec<u64> = summary["ages"]
        .as_array()
        .expect("ages")
        .iter()
        .filter_map(serde_json::Value::as_u64)
        .collect();
    assert!(
        ages.len() >= 2 && ages.iter().all(|a| (2..=5).contains(a)),
        "{ages:?}"
    );
    // The same seed (the default), the same copy.
    let again = tmp.path().join("again");
    jittered(&again);
    for ((_, c), (_, d)) in logs_in(&out).iter().zip(&logs_in(&again)) {
        assert_eq!(c.frames, d.frames);
    }
}

#[test]
fn bad_drop_rates_and_delays_are_refused_naming_the_option() {
    let tmp = scratch();
    let out = tmp.path().join("out");
    // Refused before any log is read, so no log is needed.
    for (args, needles) in [
        (["--drop-frames", "1"], ["the frame drop rate", "not 1"]),
        (["--drop-frames", "-0.1"], ["the frame drop rate", "-0.1"]),
        (["--perception-delay", "-1"], ["the perception delay", "-1"]),
        (["--perception-delay", "11"], ["the perception delay", "11"]),
        (
            ["--perception-jitter", "0.1"],
            ["the perception delay's jitter", "0.1"],
        ),
    ] {
        run_refused(
            avguard()
                .arg("perturb")
                .args(args)
                .arg("--out")
                .arg(&out)
                .arg(tmp.path()),
            &needles,
        );
    }
    assert!(
        !out.exists(),
        "nothing is written when the options are refused"
    );
}

/// `learn` on `dir` with the fixed abstraction (fast) and `extra` options; returns its stderr.
fn learn_stderr(dir: &Path, model: &Path, extra: &[&str]) -> String {
    let out = crate::support::ok(
        avguard()
            .args(["learn", "--abstraction", "fixed"])
            .args(extra)
            .arg("--laws")
            .arg(workspace_root().join("laws/specs"))
            .arg("--out")
            .arg(model)
            .arg(dir)
            .output()
            .expect("run learn"),
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn learn_says_when_the_collisions_show_road_users_reported_late() {
    let tmp = scratch();
    let (orig, late) = priority_runs_and_copies(tmp.path(), &["--perception-delay", "0.3"]);
    let model = tmp.path().join("m.avg");
    let latency_of = |model: &Path| -> f64 {
        let info = run_ok(avguard().args(["info", "--json"]).arg(model));
        let v: serde_json::Value = serde_json::from_str(&info).expect("info --json");
        v["perception_latency_s"]
            .as_f64()
            .expect("perception_latency_s")
    };
    let timely = learn_stderr(&orig, &model, &[]);
    assert!(!timely.contains("reported late"), "{timely}");
    assert_eq!(latency_of(&model), 0.0);
    let said = learn_stderr(&late, &model, &[]);
    assert!(said.contains("first collision frame of 11 runs"), "{said}");
    // The estimate is the smallest lag at which every first collision frame shows a contact: the
    // delay itself when some run's first contact is at the very edge of the footprints, a little less
    // when each run's car is already a little way in or comes within the contact tolerance sooner (here
    // within 0.05 s of the 0.3 s).
    let lag: f64 = said
        .split("reported late, by about ")
        .nth(1)
        .and_then(|rest| rest.split(" s:").next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("no lag in {said}"));
    assert!((0.25..=0.3).contains(&lag), "{lag} s from {said}");
    // By default the model reads every frame with the road users moved ahead by that lag, and says so.
    assert!(
        said.contains("learning with every road user moved"),
        "{said}"
    );
    assert_eq!(latency_of(&model), lag);
    let info = run_ok(avguard().arg("info").arg(&model));
    assert!(
        info.contains(&format!("perception latency: {lag} s")),
        "{info}"
    );
    // `--perception-latency 0` keeps them as logged, and says so.
    let as_logged = tmp.path().join("as-logged.avg");
    let said = learn_stderr(&late, &as_logged, &["--perception-latency", "0"]);
    assert!(said.contains("learning with them as logged"), "{said}");
    assert_eq!(latency_of(&as_logged), 0.0);
    // A latency out of range is refused by name, as a usage error.
    let stderr = learn_refused(tmp.path(), &["--perception-latency", "2"], &late);
    assert!(stderr.contains("between 0 and 1"), "{stderr}");
    // Collisions that no lag explains (each first collision frame's road users 30 m off the ego and
    // standing still: no contact as logged or moved ahead) are said, as a disagreement with this tool's
    // footprints, and the road users are kept as logged.
    let apart = tmp.path().join("apart");
    std::fs::create_dir(&apart).expect("mkdir");
    for (name, mut log) in logs_in(&orig) {
        if let Some(f) = log.frames.iter_mut().find(|f| f.collision) {
            for o in &mut f.obstacles {
                (o.x, o.y, o.speed_mps) = (f.x + 30.0, f.y + 30.0, 0.0);
            }
        }
        scenarios::log::write_log(&apart.join(name), &log).expect("write");
    }
    let said = learn_stderr(&apart, &model, &[]);
    assert!(
        said.contains(
            "first collision frame of 11 runs the ego touches a road user in only 0 as logged, and in \
             at most 0 with the road users moved ahead"
        ) && said.contains("footprints or reference points differ"),
        "{said}"
    );
    assert_eq!(latency_of(&model), 0.0);
    assert!(
        !timely.contains("note: at the first collision frame"),
        "{timely}"
    );
}

#[test]
fn learn_smooths_road_users_reported_at_ages_that_vary() {
    let tmp = scratch();
    let (orig, jittered) = priority_runs_and_copies(
        tmp.path(),
        &["--perception-delay", "0.3", "--perception-jitter", "0.2"],
    );
    let read = |model: &Path| -> (f64, f64) {
        let info = run_ok(avguard().args(["info", "--json"]).arg(model));
        let v: serde_json::Value = serde_json::from_str(&info).expect("info --json");
        let f = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k} in {info}"));
        (f("road_user_smoothing_s"), f("perception_latency_s"))
    };
    let model = tmp.path().join("m.avg");
    // Ground truth: no step jumps, nothing said, nothing smoothed.
    let timely = learn_stderr(&orig, &model, &[]);
    assert!(!timely.contains("varying ages"), "{timely}");
    assert!(!timely.contains("velocities seem noisy"), "{timely}");
    assert_eq!(read(&model), (0.0, 0.0));
    // Reports 0.1–0.5 s old: most steps jump; smoothed over 0.7 s, and the latency read on the frames
    // as smoothed.
    let said = learn_stderr(&jittered, &model, &[]);
    let share: f64 = said
        .split(" steps from one frame to the next (")
        .nth(1)
        .and_then(|rest| rest.split(" %)").next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("no share in {said}"));
    assert!(share > 50.0, "{share} % in {said}");
    // The steps and jumps are those h5py counts from the logs alone.
    let counted = track_counts(&jittered);
    let words = format!(
        "{} of {} steps from one frame to the next",
        counted["jumps"], counted["steps"]
    );
    assert!(said.contains(&words), "{words} / {said}");
    assert!(
        said.contains("learning with each road user smoothed over its reports of the last 0.7 s"),
        "{said}"
    );
    assert!(said.contains("as smoothed, and in"), "{said}");
    // `inspect` says it before any learning: `learn`'s lines on the smoothing and the latency, each as
    // `learn` prints it.
    let (_, inspected) = inspect_road_users(&jittered);
    let (_, lines) = inspected
        .split_once("`avguard learn` would say of them (its defaults):\n")
        .unwrap_or_else(|| panic!("{inspected}"));
    let lines: Vec<&str> = lines.lines().map(|l| l.trim_start()).collect();
    assert_eq!(lines.len(), 2, "{inspected}");
    for line in lines {
        assert!(said.lines().any(|l| l == line), "{line} / {said}");
    }
    // Their velocities are exact (reported late, not noisy): positions alone are smoothed.
    assert!(!said.contains("velocities seem noisy"), "{said}");
    assert_eq!(velocities_smoothed(&model), Some(false));
    let (smoothing, lag) = read(&model);
    assert_eq!(smoothing, 0.7);
    assert!((0.2..=0.5).contains(&lag), "{lag} s from {said}");
    let info = run_ok(avguard().arg("info").arg(&model));
    assert!(info.contains("road-user smoothing: 0.7 s"), "{info}");
    // The same options given learn the same model in one recording.
    let given = tmp.path().join("given.avg");
    let lag_arg = format!("{lag}");
    let quiet = learn_stderr(
        &jittered,
        &given,
        &[
            "--road-user-smoothing",
            "0.7",
            "--perception-latency",
            &lag_arg,
        ],
    );
    assert!(
        quiet.contains("smoothed over its reports of the last 0.7 s"),
        "{quiet}"
    );
    assert_eq!(
        std::fs::read(&model).expect("model"),
        std::fs::read(&given).expect("given model")
    );
    // `--road-user-smoothing 0` keeps them as logged, and says so.
    let as_logged = tmp.path().join("as-logged.avg");
    let said = learn_stderr(&jittered, &as_logged, &["--road-user-smoothing", "0"]);
    assert!(
        said.contains("learning with them as logged (--road-user-smoothing auto smooths them)"),
        "{said}"
    );
    assert_eq!(read(&as_logged).0, 0.0);
    // The smoothed model scores the logs (RSS reads the frames as the model does).
    let scored = tmp.path().join("scored");
    run_ok(
        avguard()
            .args(["score", "--model"])
            .arg(&model)
            .arg("--out")
            .arg(&scored)
            .arg(&jittered),
    );
    assert!(scored.join("score.json").exists());
    // A window out of range is refused by name, as a usage error.
    let stderr = learn_refused(tmp.path(), &["--road-user-smoothing", "3"], &jittered);
    assert!(stderr.contains("a window between 0 and 2 s"), "{stderr}");
}

/// What `tests/py/track_steps.py` counts with h5py over the logs of `dir` (steps, jumps, pairs, flips).
fn track_counts(dir: &Path) -> serde_json::Value {
    let out = run_ok(python_script("track_steps.py").arg(dir));
    serde_json::from_str(&out).expect("JSON")
}

/// `inspect --json`'s road-user counts of the logs of `dir`, summed over its lines (steps, jumps, pairs,
/// flips, and the runs with a collision), and `inspect`'s text after its per-log lines.
fn inspect_road_users(dir: &Path) -> (serde_json::Value, String) {
    let json = run_ok(avguard().args(["inspect", "--json"]).arg(dir));
    let mut sums = [0u64; 5];
    for line in json.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("inspect --json line");
        let r = &v["road_users"];
        for (sum, key) in
            sums.iter_mut()
                .zip(["steps", "jumps", "velocity_pairs", "velocity_flips"])
        {
            *sum += r[key].as_u64().expect(key);
        }
        // A run without a collision has no first collision frame to touch at.
        assert_eq!(
            r["first_collision_touches_as_logged"].is_null(),
            !v["collision"].as_bool().expect("collision"),
            "{line}"
        );
        sums[4] += u64::from(v["collision"] == true);
    }
    let text = run_ok(avguard().arg("inspect").arg(dir));
    let n_logs = json.lines().count();
    let after: Vec<&str> = text.lines().skip(n_logs).collect();
    let counts = serde_json::json!({
        "steps": sums[0], "jumps": sums[1], "pairs": sums[2], "flips": sums[3], "collisions": sums[4],
    });
    (counts, after.join("\n"))
}

/// `info --json`'s `road_user_velocities_smoothed` of `model`.
fn velocities_smoothed(model: &Path) -> Option<bool> {
    let info = run_ok(avguard().args(["info", "--json"]).arg(model));
    let v: serde_json::Value = serde_json::from_str(&info).expect("info --json");
    v["road_user_velocities_smoothed"].as_bool()
}

#[test]
fn learn_smooths_road_users_whose_velocities_are_noisy() {
    let tmp = scratch();
    // Noise on the speeds (0.3 m/s) and headings (0.03 rad) alone: the steps do not jump, the
    // velocities turn around.
    let (orig, noisy) = priority_runs_and_copies(tmp.path(), &["--obstacle-noise", "0,0.3,0.03"]);
    let model = tmp.path().join("m.avg");
    let said = learn_stderr(&noisy, &model, &[]);
    assert!(!said.contains("varying ages"), "{said}");
    // The pairs and flips are those h5py counts from the logs alone.
    let counted = track_counts(&noisy);
    let (pairs, flips) = (
        counted["pairs"].as_u64().expect("pairs"),
        counted["flips"].as_u64().expect("flips"),
    );
    assert!(flips * 10 >= pairs && pairs >= 200, "{counted}");
    let words = format!(
        "road users' velocities seem noisy: in {flips} of {pairs} pairs of steps from one frame to \
         the next"
    );
    assert!(said.contains(&words), "{words} / {said}");
    // `inspect` counts the same per log, and says of the logs what `learn` says, before any learning.
    let inspected = inspect_road_users(&noisy);
    for key in ["steps", "jumps", "pairs", "flips"] {
        assert_eq!(inspected.0[key], counted[key], "{key}: {}", inspected.1);
    }
    let velocity_line = said
        .lines()
        .find(|l| l.starts_with("road users' velocities seem noisy"))
        .expect("learn's velocity line");
    assert!(
        inspected.1.contains(&format!(
            "`avguard learn` would say of them (its defaults):\n  {velocity_line}"
        )),
        "{}",
        inspected.1
    );
    // The simulator's own logs: nothing jumps or flips, every collision touches, read as logged.
    let timely = inspect_road_users(&orig);
    assert_eq!(
        (timely.0["jumps"].as_u64(), timely.0["flips"].as_u64()),
        (Some(0), Some(0))
    );
    assert!(
        timely
            .1
            .ends_with("`avguard learn` would read them as logged"),
        "{}",
        timely.1
    );
    let collisions = timely.0["collisions"].as_u64().expect("collisions");
    assert!(
        timely.1.contains(&format!(
            "{collisions} runs with a collision, {collisions} of them with the ego touching"
        )),
        "{}",
        timely.1
    );
    assert!(
        said.contains(
            "learning with each road user's velocity smoothed over its reports of the last 0.7 s"
        ),
        "{said}"
    );
    assert_eq!(velocities_smoothed(&model), Some(true));
    let info = run_ok(avguard().arg("info").arg(&model));
    assert!(
        info.contains("road-user smoothing: 0.7 s, velocities too"),
        "{info}"
    );
    // `as-logged` keeps them as logged and says so; no window then either.
    let as_logged = tmp.path().join("as-logged.avg");
    let said = learn_stderr(&noisy, &as_logged, &["--road-user-velocities", "as-logged"]);
    assert!(
        said.contains("learning with them as logged (--road-user-velocities auto smooths them)"),
        "{said}"
    );
    assert_eq!(velocities_smoothed(&as_logged), Some(false));
    // Given the window, `smoothed` and the latency read, the same model as `auto`'s.
    let info = run_ok(avguard().args(["info", "--json"]).arg(&model));
    let lag = serde_json::from_str::<serde_json::Value>(&info).expect("info")
        ["perception_latency_s"]
        .as_f64()
        .expect("latency")
        .to_string();
    let given = tmp.path().join("given.avg");
    learn_stderr(
        &noisy,
        &given,
        &[
            "--road-user-smoothing",
            "0.7",
            "--road-user-velocities",
            "smoothed",
            "--perception-latency",
            &lag,
        ],
    );
    assert_eq!(
        std::fs::read(&model).expect("model"),
        std::fs::read(&given).expect("given model")
    );
    // Smoothed velocities without a window are refused by name, before any work.
    let out = avguard()
        .args([
            "learn",
            "--road-user-smoothing",
            "0",
            "--road-user-velocities",
            "smoothed",
            "--laws",
        ])
        .arg(workspace_root().join("laws/specs"))
        .arg("--out")
        .arg(tmp.path().join("refused.avg"))
        .arg(&noisy)
        .output()
        .expect("run learn");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(
            "--road-user-velocities smoothed needs --road-user-smoothing auto or above 0"
        ),
        "{stderr}"
    );
    assert!(!tmp.path().join("refused.avg").exists());
}

/// 40 priority-road runs of seed 9 (11 collide, enough for a latency estimate) in `DIR/orig`, and their
/// copies made by `perturb` with `options` in `DIR/copies`.
fn priority_runs_and_copies(dir: &Path, options: &[&str]) -> (PathBuf, PathBuf) {
    let (orig, copies) = (dir.join("orig"), dir.join("copies"));
    run_ok(
        avguard()
            .args(["simulate", "--runs", "40", "--seed", "9", "--out"])
            .arg(&orig)
            .arg("--scenario")
            .arg(workspace_root().join("scenarios/priority_road.toml")),
    );
    run_ok(
        avguard()
            .arg("perturb")
            .args(options)
            .arg("--out")
            .arg(&copies)
            .arg(&orig),
    );
    (orig, copies)
}

/// `learn` with `options` (the first of them an option name) on `logs`, which must be refused as a usage
/// error naming that option and write no model; returns its stderr.
fn learn_refused(dir: &Path, options: &[&str], logs: &Path) -> String {
    let model = dir.join("refused.avg");
    let out = avguard()
        .arg("learn")
        .args(options)
        .arg("--out")
        .arg(&model)
        .arg("--laws")
        .arg(workspace_root().join("laws/specs"))
        .arg(logs)
        .output()
        .expect("run learn");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(options[0]), "{stderr}");
    assert!(!model.exists());
    stderr
}

#[test]
fn a_copy_that_cannot_be_written_leaves_the_older_copy_as_it_was() {
    // Was: the second perturb failed ("frame … cannot be logged: not finite") and left an empty file in
    // place of the first one's good copy.
    let tmp = scratch();
    let orig = tmp.path().join("orig");
    simulate(&orig);
    let out = tmp.path().join("out");
    run_ok(
        avguard()
            .args(["perturb", "--miss-rate=0.5", "--out"])
            .arg(&out)
            .arg(&orig),
    );
    let first = logs_in(&out);
    run_refused(
        avguard()
            .args(["perturb", "--ego-noise=1e308,0,0,0", "--out"])
            .arg(&out)
            .arg(&orig),
        &["not finite", "3 of 3 logs could not be perturbed"],
    );
    // The same files, read back as they were, and no temporary file left beside them.
    assert_eq!(logs_in(&out), first);
}
