//! The child's side of the protocol in-process, the transfer encoding, and the parent's handling of
//! children that crash or hang (shell scripts standing in for a library crash).

use std::io::Cursor;
use std::path::Path;
use std::time::Duration;

use super::*;
use crate::log::tests::sample_run;
use crate::log::write_log;

fn request(path: &Path) -> Vec<u8> {
    let text = path.to_str().unwrap();
    let mut out = (text.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(text.as_bytes());
    out
}

/// Splits `serve`'s output into (tag, payload) answers.
fn answers(mut bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    while let [tag, rest @ ..] = bytes {
        let (len, rest) = rest.split_at(8);
        let len = u64::from_le_bytes(len.try_into().unwrap()) as usize;
        out.push((*tag, rest[..len].to_vec()));
        bytes = &rest[len..];
    }
    out
}

#[test]
fn the_child_answers_each_request_with_the_run_or_the_readers_error() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.h5");
    let run = sample_run();
    write_log(&good, &run).unwrap();
    let junk = dir.path().join("junk.h5");
    std::fs::write(&junk, b"not an HDF5 file").unwrap();
    let mut input = request(&good);
    input.extend(request(&junk));
    input.extend(request(&good));
    let mut output = Vec::new();
    assert_eq!(
        serve(Cursor::new(input), &mut output),
        0,
        "ends at end of input"
    );
    let answers = answers(&output);
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[0].0, 0);
    assert_eq!(transfer::decode(&answers[0].1).unwrap(), run);
    assert_eq!(answers[1].0, 1);
    let in_process = read_log(&junk).unwrap_err().to_string();
    assert_eq!(String::from_utf8_lossy(&answers[1].1), in_process);
    assert_eq!(answers[2], answers[0]);
    // A request cut short (the parent died): exit code 2.
    let cut = request(&good);
    assert_eq!(serve(Cursor::new(&cut[..cut.len() - 1]), Vec::new()), 2);
}

#[test]
fn transfer_round_trips_a_run_and_rejects_every_truncation() {
    let run = sample_run();
    let bytes = transfer::encode(&run);
    assert_eq!(transfer::decode(&bytes).unwrap(), run);
    for cut in (0..bytes.len())
        .step_by(bytes.len() / 200)
        .chain([bytes.len() - 1])
    {
        assert!(transfer::decode(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(transfer::decode(&longer).is_err());
    // A frame count far beyond the bytes is refused before allocating.
    let mut huge = bytes;
    let at = 8 + 4 + 1 + 4 + 3 + 8 + 1 + 8;
    huge[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(transfer::decode(&huge).unwrap_err().contains("cannot fit"));
}

fn shell(script: &str, timeout: Duration) -> IsolatedReader {
    IsolatedReader::new("/bin/sh".into(), vec!["-c".into(), script.into()], timeout)
}

#[test]
fn a_crashing_child_fails_that_file_with_the_signal_and_a_fresh_child_is_tried_once() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    // Each start appends a line, then the child dies of SIGSEGV as libhdf5 does.
    let reader = shell(
        &format!("ulimit -c 0; echo x >> {}; kill -SEGV $$", starts.display()),
        Duration::from_secs(20),
    );
    let err = reader.read(Path::new("some/bad.h5")).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, LogError::Reader { .. }), "{err:?}");
    assert!(
        text.starts_with("some/bad.h5: the HDF5 library crashed"),
        "{text}"
    );
    assert!(text.contains("signal 11 (SIGSEGV)"), "{text}");
    let n_starts = std::fs::read_to_string(&starts).unwrap().lines().count();
    assert_eq!(n_starts, 2, "tried in a fresh child once more");
}

#[test]
fn a_hanging_child_is_stopped_at_the_time_limit() {
    let reader = shell("exec sleep 30", Duration::from_millis(300));
    let started = std::time::Instant::now();
    let err = reader.read(Path::new("slow.h5")).unwrap_err().to_string();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(
        err.starts_with("slow.h5: reading took longer than 0.3 s and was stopped"),
        "{err}"
    );
}

#[test]
fn a_child_that_cannot_start_is_a_clear_error() {
    let reader = IsolatedReader::new(
        "/nonexistent/avguard".into(),
        Vec::new(),
        Duration::from_secs(1),
    );
    let err = reader.read(Path::new("a.h5")).unwrap_err().to_string();
    assert!(
        err.starts_with("a.h5: cannot start the log reader process /nonexistent/avguard"),
        "{err}"
    );
}

#[test]
fn without_init_logs_are_read_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.h5");
    let run = sample_run();
    write_log(&path, &run).unwrap();
    assert_eq!(read_log_isolated(&path).unwrap(), run);
}
