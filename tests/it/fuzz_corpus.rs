//! The fuzz targets' bodies (`tests/fuzz/src/lib.rs`) replayed over the committed seed corpora and every
//! crash regression found by a fuzzing campaign (`tests/fuzz/regressions/TARGET/`), with the stable
//! toolchain: each input must be handled without a panic, so a fixed crash stays fixed. A smoke run then
//! feeds every target a fixed set of mutations of its seeds (the libFuzzer campaigns themselves need the
//! nightly toolchain and minutes of build: `cargo xtask fuzz`).

#[allow(dead_code, clippy::all)]
#[path = "../fuzz/src/lib.rs"]
mod bodies;

use std::path::Path;

use crate::support::{avguard, scratch, workspace_root};

/// Every file below `dir` (none when it does not exist).
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let path = e.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Every seed of `name`: its folder, the extra folders of `extra_seeds.txt`.
fn seeds(name: &str) -> Vec<std::path::PathBuf> {
    let root = workspace_root();
    let fuzz = root.join("tests/fuzz");
    let extra = std::fs::read_to_string(fuzz.join("extra_seeds.txt")).unwrap();
    let mut out = files(&fuzz.join("seeds").join(name));
    for line in extra.lines().filter(|l| !l.starts_with('#')) {
        if let Some((target, dir)) = line.split_once(' ') {
            if target == name {
                out.extend(files(&root.join(dir.trim())));
            }
        }
    }
    out
}

#[test]
fn seeds_and_crash_regressions_replay_without_a_panic() {
    let fuzz = workspace_root().join("tests/fuzz");
    let mut n_seeds = 0;
    for (name, body) in bodies::TARGETS {
        let seeds = seeds(name);
        assert!(!seeds.is_empty(), "{name} has no seeds");
        let regressions = files(&fuzz.join("regressions").join(name));
        for path in seeds.iter().chain(&regressions) {
            let data = std::fs::read(path).unwrap();
            let outcome = std::panic::catch_unwind(|| body(&data));
            assert!(outcome.is_ok(), "{name}: {} panicked", path.display());
        }
        n_seeds += seeds.len();
    }
    assert!(
        n_seeds >= 50,
        "only {n_seeds} seeds found under {}",
        fuzz.display()
    );
}

/// The model-file seeds are models this build reads: a seed refused at the format-version check would
/// leave the fuzzer mutating bytes that never reach the decoder (carry the seeds along when the format
/// changes; `tests/fuzz/README.md`).
#[test]
fn model_file_seeds_are_current_models() {
    let seeds = seeds("model_file");
    assert!(!seeds.is_empty());
    for path in &seeds {
        let bytes = std::fs::read(path).unwrap();
        let model = monitor::Model::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(model.to_bytes(), bytes, "{}", path.display());
    }
}

/// A small deterministic generator (xorshift64*), so that a failing mutation can be reproduced.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One libFuzzer-like mutation of `data`: a bit flip, a random or boundary byte, a deleted, repeated or
/// inserted run, or a truncation.
fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
    let n = data.len();
    let at = rng.below(n);
    match rng.below(7) {
        0 if n > 0 => data[at] ^= 1 << rng.below(8),
        1 if n > 0 => data[at] = rng.next() as u8,
        2 if n > 0 => data[at] = [0x00, 0x7f, 0x80, 0xff][rng.below(4)],
        3 if n > 0 => {
            let len = rng.below(n - at).max(1);
            data.drain(at..at + len);
        }
        4 if n > 0 => {
            let len = rng.below((n - at).min(64)).max(1);
            let run: Vec<u8> = data[at..at + len].to_vec();
            for _ in 0..rng.below(8) + 1 {
                data.splice(at..at, run.iter().copied());
            }
        }
        5 => {
            let len = rng.below(16) + 1;
            let byte = [0x00, 0xff, b'(', b'[', b'{', b'9'][rng.below(6)];
            data.splice(at..at, std::iter::repeat_n(byte, len));
        }
        _ => data.truncate(at),
    }
}

#[test]
fn smoke_mutations_of_every_seed_do_not_crash() {
    // 300 mutants per target (1 to 4 mutations each) keep this under ~30 s of an unoptimised build.
    const N_MUTANTS: usize = 300;
    for (name, body) in bodies::TARGETS {
        if *name == "log_image" {
            // libhdf5 1.10.8 (Debian's) segfaults on some corrupted files once it has read another
            // (`tests/fuzz/known-libhdf5/`): in this process, mutated HDF5 images would crash the test
            // binary within a few dozen inputs. `avguard` reads them in child processes instead:
            // `log_image_mutants_fail_alone_in_avguard_inspect` below.
            continue;
        }
        let originals: Vec<Vec<u8>> = seeds(name)
            .iter()
            .map(|p| std::fs::read(p).unwrap())
            .filter(|d| d.len() <= 1 << 16)
            .collect();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ name.len() as u64);
        for k in 0..N_MUTANTS {
            let mut data = originals[k % originals.len()].clone();
            for _ in 0..rng.below(4) + 1 {
                mutate(&mut rng, &mut data);
            }
            let outcome = std::panic::catch_unwind(|| body(&data));
            if outcome.is_err() {
                let path = std::env::temp_dir().join(format!("avguard-smoke-{name}-{k}"));
                let _ = std::fs::write(&path, &data);
                panic!(
                    "{name}: mutant {k} panicked; input saved to {}",
                    path.display()
                );
            }
        }
    }
}

/// The `log_image` smoke through the command line: 300 mutants of the HDF5 seeds, every one read by
/// `avguard inspect` in its isolated reader (`scenarios::log::isolated`). Whatever libhdf5 does with them,
/// `avguard` ends normally with one line per file.
#[test]
fn log_image_mutants_fail_alone_in_avguard_inspect() {
    const N_MUTANTS: usize = 300;
    let originals: Vec<Vec<u8>> = seeds("log_image")
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    let dir = scratch();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ 9);
    let mut paths = Vec::new();
    for k in 0..N_MUTANTS {
        let mut data = originals[k % originals.len()].clone();
        for _ in 0..rng.below(4) + 1 {
            mutate(&mut rng, &mut data);
        }
        let path = dir.path().join(format!("mutant-{k:03}.h5"));
        std::fs::write(&path, &data).unwrap();
        paths.push(path);
    }
    // Some mutants make libhdf5 1.10.8 loop: a short time limit keeps this test short.
    let out = avguard()
        .env("AVGUARD_LOG_READ_TIMEOUT_S", "3")
        .args(["inspect", "--json"])
        .args(&paths)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "avguard inspect ended with {}: {stderr}",
        out.status
    );
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), N_MUTANTS, "{stderr}");
    for (line, path) in lines.iter().zip(&paths) {
        assert_eq!(line["file"], path.display().to_string());
        assert!(
            line["ok"] == true || !line["error"].as_str().unwrap().is_empty(),
            "{line}"
        );
    }
    let count = |what: &str| {
        lines
            .iter()
            .filter(|l| l["error"].as_str().is_some_and(|e| e.contains(what)))
            .count()
    };
    let (n_crashed, n_stopped) = (count("crashed"), count("took longer than 3 s"));
    eprintln!(
        "log_image mutants: of {N_MUTANTS}, {n_crashed} crashed the HDF5 library and {n_stopped} hung in \
         it (stopped), each in a child process"
    );
    for (line, path) in lines.iter().zip(&paths) {
        if line["error"]
            .as_str()
            .is_some_and(|e| e.contains("took longer"))
        {
            // Kept for a look after the run, in cargo's per-target scratch folder (not the system's).
            let kept =
                std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("avguard-hung-mutant.h5");
            let _ = std::fs::copy(path, &kept);
            eprintln!("  hung: {} (kept as {})", path.display(), kept.display());
        }
    }
}
