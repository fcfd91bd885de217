//! The real example record (15 localization + 15 chassis messages among 34) and damaged copies of it.

use std::path::PathBuf;

use super::*;
use crate::assemble::AssemblerConfig;
use crate::wire::apollo::cyber::{CompressType, Header, SectionType, SingleMessage};

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/apollo/daohu527-cyber_record/test/example.record.00000")
}

#[test]
fn example_record_has_its_documented_channels_and_messages() {
    let mut r = RecordReader::open(&example()).unwrap();
    assert_eq!(r.header().message_number(), 34);
    let types: Vec<(&str, &str, u64)> = r
        .channels()
        .iter()
        .map(|(n, c)| (n.as_str(), c.message_type.as_str(), c.n_messages))
        .collect();
    assert!(types.contains(&(
        "/apollo/localization/pose",
        "apollo.localization.LocalizationEstimate",
        15
    )));
    assert!(types.contains(&("/apollo/canbus/chassis", "apollo.canbus.Chassis", 15)));
    assert!(r.channels().values().all(|c| !c.proto_desc.is_empty()));
    let mut n = 0;
    while let Some(chunk) = r.next_chunk().unwrap() {
        n += chunk.len();
    }
    assert_eq!(n, 34);
}

#[test]
fn example_record_imports_through_the_live_assembler() {
    let mut a = Assembler::new(AssemblerConfig::default());
    let (runs, stats) = read_runs(&[example()], &mut a).unwrap();
    assert_eq!(stats.n_messages, 34);
    // 15 poses + 15 chassis + the routing response are consumed; prediction and planning are not.
    assert_eq!(stats.n_decoded, 31);
    assert_eq!(stats.n_other_channels, 3);
    assert_eq!(stats.n_decode_errors, 0);
    assert_eq!(runs.len(), 1);
    // The poses span 0.14 s: ticks at t0 and t0 + 0.1.
    let frames = &runs[0];
    assert_eq!(frames.len(), 2);
    assert!((frames[0].t - 1_627_031_535.112_913_4).abs() < 1e-6);
    assert!((frames[0].x - 315_323.445_888_350_5).abs() < 1e-9);
    assert!(frames
        .iter()
        .all(|f| f.stopline_dist_m.is_infinite() && !f.signal_ahead));
}

#[test]
fn importing_from_memory_gives_what_importing_the_file_gives() {
    let (mut from_file, mut from_memory) = (Vec::new(), Vec::new());
    let mut a = Assembler::new(AssemblerConfig::default());
    let file_stats = import(&example(), &mut a, |step| {
        if let Imported::Frame(f) = step {
            from_file.push(f.clone());
        }
    })
    .unwrap();
    let bytes = std::fs::read(example()).unwrap();
    let reader = RecordReader::from_reader(
        std::path::Path::new("in-memory.record"),
        std::io::Cursor::new(bytes.as_slice()),
        bytes.len() as u64,
    )
    .unwrap();
    let mut a = Assembler::new(AssemblerConfig::default());
    let memory_stats = import_from(reader, &mut a, |step| {
        if let Imported::Frame(f) = step {
            from_memory.push(f.clone());
        }
    })
    .unwrap();
    assert_eq!(from_file.len(), 2);
    assert_eq!(from_memory, from_file);
    assert_eq!(memory_stats, file_stats);
}

/// Reads `bytes` as a record, from memory, to the end.
fn open_bytes(bytes: &[u8]) -> Result<(), RecordError> {
    let name = std::path::Path::new("damaged.record");
    let mut r = RecordReader::from_reader(name, std::io::Cursor::new(bytes), bytes.len() as u64)?;
    while r.next_chunk()?.is_some() {}
    Ok(())
}

#[test]
fn damaged_records_name_the_section_and_offset() {
    let good = std::fs::read(example()).unwrap();
    let cut = |n: usize| good.get(..n).unwrap().to_vec();
    // Truncated inside the header.
    let err = open_bytes(&cut(100)).unwrap_err().to_string();
    assert!(
        err.contains("header section at offset 0") && err.contains("truncated"),
        "{err}"
    );
    // Truncated inside the first channel section (at 2064): the index is gone too.
    let err = open_bytes(&cut(3000)).unwrap_err().to_string();
    assert!(err.contains("index position"), "{err}");
    // A chunk section claiming an absurd size: refused before allocating.
    let mut huge = good.clone();
    huge.get_mut(2064 + 8..2064 + 16)
        .unwrap()
        .copy_from_slice(&(1_i64 << 40).to_le_bytes());
    let err = open_bytes(&huge).unwrap_err().to_string();
    assert!(
        err.contains("channel section at offset 2064") && err.contains("exceeds"),
        "{err}"
    );
    let mut big = good.clone();
    big.get_mut(2064 + 8..2064 + 16)
        .unwrap()
        .copy_from_slice(&(10_000_000_i64).to_le_bytes());
    let err = open_bytes(&big).unwrap_err().to_string();
    assert!(
        err.contains("channel section at offset 2064") && err.contains("truncated"),
        "{err}"
    );
    // A negative size.
    let mut neg = good.clone();
    neg.get_mut(2064 + 8..2064 + 16)
        .unwrap()
        .copy_from_slice(&(-5_i64).to_le_bytes());
    let err = open_bytes(&neg).unwrap_err().to_string();
    assert!(err.contains("negative size"), "{err}");
    // Garbage in a section body.
    let mut garbage = good.clone();
    for b in garbage.get_mut(2064 + 16..2064 + 40).unwrap() {
        *b = 0xff;
    }
    let err = open_bytes(&garbage).unwrap_err().to_string();
    assert!(err.contains("channel section at offset 2064"), "{err}");
    // Not a record at all.
    let err = open_bytes(b"hello, this is not a record, only some text....")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("not a Cyber record") || err.contains("header section"),
        "{err}"
    );
    let err = open_bytes(&[]).unwrap_err().to_string();
    assert!(err.contains("truncated"), "{err}");
}

#[test]
fn record_names_are_recognised() {
    for (name, yes) in [
        ("a.record", true),
        ("example.record.00000", true),
        ("x.record.12", true),
        ("run.h5", false),
        ("a.record.x", false),
        ("a.record.", false),
    ] {
        assert_eq!(is_record_name(std::path::Path::new(name)), yes, "{name}");
    }
}

#[test]
fn segments_of_a_recording_are_the_consecutively_numbered_files_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, b"").unwrap();
        p
    };
    let r: Vec<PathBuf> = (0..3).map(|k| file(&format!("r.record.0000{k}"))).collect();
    let r4 = file("r.record.00004");
    let other = file("other.record");
    let narrow = file("r.record.1");
    let last = file("q.record.99999");
    file("q.record.100000");
    assert_eq!(recording_segments(&r[1]), r);
    assert_eq!(recording_segments(&r[0]), r);
    assert_eq!(recording_segments(&r[2]), r);
    // After a missing number, another recording; another digit count is another name.
    assert_eq!(recording_segments(&r4), vec![r4.clone()]);
    assert_eq!(recording_segments(&narrow), vec![narrow.clone()]);
    assert_eq!(recording_segments(&last), vec![last.clone()]);
    assert_eq!(recording_segments(&other), vec![other.clone()]);
    assert_eq!(
        recordings(&[r[2].clone(), other.clone(), r[0].clone(), r4.clone()]),
        vec![r.clone(), vec![other], vec![r4]]
    );
}

#[test]
fn a_recording_is_read_through_one_assembler_and_its_counters_add_up() {
    // The same segment twice: the shared assembler sees the second copy's messages as late (they go
    // back less than the 1 s that starts a new run), so the recording is the one file's run. Read on
    // their own, the two files would have given two runs.
    let mut a = Assembler::new(AssemblerConfig::default());
    let (one, one_stats) = read_runs(&[example()], &mut a).unwrap();
    let mut a = Assembler::new(AssemblerConfig::default());
    let (two, two_stats) = read_runs(&[example(), example()], &mut a).unwrap();
    assert_eq!(two, one);
    assert_eq!(two_stats.n_messages, 2 * one_stats.n_messages);
    assert_eq!(two_stats.n_decoded, 2 * one_stats.n_decoded);
    assert_eq!(two_stats.n_other_channels, 2 * one_stats.n_other_channels);
    // A damaged segment names itself.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.record.00001");
    std::fs::write(&bad, &std::fs::read(example()).unwrap()[..100]).unwrap();
    let mut a = Assembler::new(AssemblerConfig::default());
    let err = read_runs(&[example(), bad.clone()], &mut a).unwrap_err();
    assert!(err.to_string().contains("bad.record.00001"), "{err}");
}

/// The offset of the first chunk body section of `record`.
fn first_chunk_body(record: &[u8]) -> usize {
    let section = reader::SECTION_HEADER_BYTES as usize;
    let mut at = section + reader::HEADER_BYTES as usize;
    loop {
        let kind = i32::from_le_bytes(record[at..at + 4].try_into().unwrap());
        if kind == SectionType::SectionChunkBody as i32 {
            return at;
        }
        let len = u64::from_le_bytes(record[at + 8..at + section].try_into().unwrap());
        at += section + len as usize;
    }
}

/// `record` with its header's `compress` field set to `compress`, the rest of the header kept.
fn with_compress(record: &[u8], compress: CompressType) -> Vec<u8> {
    use prost::Message;
    use reader::{HEADER_BYTES, SECTION_HEADER_BYTES};
    let start = SECTION_HEADER_BYTES as usize;
    let len = u64::from_le_bytes(record[8..16].try_into().unwrap()) as usize;
    let mut header = Header::decode(&record[start..start + len]).unwrap();
    header.set_compress(compress);
    let body = header.encode_to_vec();
    assert!(body.len() as u64 <= HEADER_BYTES);
    let mut out = record.to_vec();
    out[8..16].copy_from_slice(&(body.len() as u64).to_le_bytes());
    let padded = &mut out[start..start + HEADER_BYTES as usize];
    padded.fill(0);
    padded[..body.len()].copy_from_slice(&body);
    out
}

/// Every message of `bytes` read as a record, in order.
fn messages_of(bytes: &[u8]) -> Result<Vec<SingleMessage>, RecordError> {
    let name = std::path::Path::new("declared.record");
    let mut r = RecordReader::from_reader(name, std::io::Cursor::new(bytes), bytes.len() as u64)?;
    let mut all = Vec::new();
    while let Some(chunk) = r.next_chunk()? {
        all.extend(chunk);
    }
    Ok(all)
}

/// A header that declares compression is read as Cyber's own reader reads it, with chunk bodies taken
/// as they are (Cyber's writer never compresses them); a body that then does not decode names the
/// declared compression.
#[test]
fn a_declared_compression_reads_as_cyber_reads_it() {
    let good = std::fs::read(example()).unwrap();
    let want = messages_of(&good).unwrap();
    assert_eq!(want.len(), 34);
    for compress in [CompressType::CompressBz2, CompressType::CompressLz4] {
        let declared = with_compress(&good, compress);
        assert_ne!(declared, good);
        assert_eq!(messages_of(&declared).unwrap(), want, "{compress:?}");
        // A body that is not a ChunkBody: the first chunk body's bytes overwritten.
        let body_at = first_chunk_body(&good);
        let mut garbage = declared.clone();
        for b in &mut garbage[body_at + 16..body_at + 40] {
            *b = 0xff;
        }
        let err = messages_of(&garbage).unwrap_err().to_string();
        assert!(
            err.contains("chunk body section at offset") && err.contains(&format!("{compress:?}")),
            "{err}"
        );
        // Without the declaration, the same damage says nothing of compression.
        let mut plain = good.clone();
        plain[body_at + 16..body_at + 40].fill(0xff);
        let err = messages_of(&plain).unwrap_err().to_string();
        assert!(!err.contains("compression"), "{err}");
    }
}
