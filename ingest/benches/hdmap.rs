//! Input-source speed, each figure beside a baseline measured in the same run:
//! - **lane lookup** on borregas_ave (60 lanes, 15 signals; and cube_town, 18 lanes): the R-tree query for
//!   the lanes near a pose against a linear scan of every centre-line segment (the same result, checked);
//! - **road fields per frame** (`MapTracker::fill`: match, path, features, light by id) along a drive,
//!   against the R-tree lookup alone;
//! - **record import**: a synthetic Cyber record of 60 s at 100 Hz (localization + chassis, 12,000
//!   messages, built from the real example record's messages) read, decoded and assembled into frames,
//!   against reading and prost-decoding the same messages without assembly.
//!
//! Run: `cargo bench -p ingest --bench hdmap`. A summary with the ratios follows criterion's output.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion};
use ingest::assemble::{Assembler, AssemblerConfig};
use ingest::hdmap::geometry::Point;
use ingest::hdmap::index::LaneIndex;
use ingest::hdmap::tracker::{MapTracker, TrackerConfig};
use ingest::hdmap::{HdMap, DEFAULT_MAX_MAP_BYTES};
use ingest::record::{self, RecordReader};
use ingest::wire::apollo::canbus::Chassis;
use ingest::wire::apollo::cyber::{Channel, ChunkBody, Header, SectionType, SingleMessage};
use ingest::wire::apollo::localization::LocalizationEstimate;
use laws::Frame;
use prost::Message as _;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/apollo")
}

fn load(name: &str) -> Arc<HdMap> {
    let path = fixtures().join(format!(
        "lgsvl-apollo-5.0/modules/map/data/{name}/base_map.bin"
    ));
    Arc::new(HdMap::load(&path, DEFAULT_MAX_MAP_BYTES).expect("fixture map"))
}

/// Query points: every lane sampled every 2 m, offset 0.8 m to the side.
fn query_points(map: &HdMap) -> Vec<Point> {
    let mut pts = Vec::new();
    for lane in map.lanes() {
        let len = lane.centre.length();
        let mut s = 0.0;
        while s <= len {
            pts.push(lane.centre.point_at(s) + Point::new(0.0, 0.8));
            s += 2.0;
        }
    }
    pts
}

/// Frames along every lane (pose on the centre line, lane heading), for the per-frame road fields.
fn drive_frames(map: &HdMap) -> Vec<Frame> {
    let mut frames = Vec::new();
    for lane in map.lanes() {
        let len = lane.centre.length();
        let mut s = 0.0;
        while s <= len {
            let p = lane.centre.point_at(s);
            frames.push(Frame {
                x: p.x,
                y: p.y,
                heading: lane.centre.heading_at(s),
                ..Frame::default()
            });
            s += 1.0;
        }
    }
    frames
}

fn section(out: &mut Vec<u8>, kind: SectionType, body: &[u8]) {
    out.extend_from_slice(&(kind as i32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(body.len() as i64).to_le_bytes());
    out.extend_from_slice(body);
}

/// A Cyber record of `seconds` at 100 Hz of localization and chassis, the example record's first pose and
/// chassis re-stamped, in chunks of one second.
fn synthetic_record(path: &Path, seconds: usize) -> u64 {
    let example = fixtures().join("daohu527-cyber_record/test/example.record.00000");
    let mut reader = RecordReader::open(&example).expect("example record");
    let mut loc = None;
    let mut chassis = None;
    while let Some(chunk) = reader.next_chunk().expect("chunk") {
        for m in chunk {
            let content = m.content.unwrap_or_default();
            match m.channel_name.as_deref() {
                Some("/apollo/localization/pose") if loc.is_none() => {
                    loc = LocalizationEstimate::decode(content.as_slice()).ok();
                }
                Some("/apollo/canbus/chassis") if chassis.is_none() => {
                    chassis = Chassis::decode(content.as_slice()).ok();
                }
                _ => {}
            }
        }
    }
    let (loc, chassis) = (loc.expect("a pose"), chassis.expect("a chassis"));
    let channels: Vec<(&str, &str)> = vec![
        (
            "/apollo/localization/pose",
            "apollo.localization.LocalizationEstimate",
        ),
        ("/apollo/canbus/chassis", "apollo.canbus.Chassis"),
    ];
    let mut body_sections = Vec::new();
    for (name, kind) in &channels {
        let ch = Channel {
            name: Some((*name).to_owned()),
            message_type: Some((*kind).to_owned()),
            proto_desc: None,
        };
        section(
            &mut body_sections,
            SectionType::SectionChannel,
            &ch.encode_to_vec(),
        );
    }
    let mut n = 0_u64;
    for second in 0..seconds {
        let mut body = ChunkBody::default();
        for k in 0..100 {
            let t = 1000.0 + second as f64 + k as f64 * 0.01;
            let mut l = loc.clone();
            l.measurement_time = Some(t);
            if let Some(p) = l.pose.as_mut().and_then(|p| p.position.as_mut()) {
                p.x = Some(p.x() + t);
            }
            let mut c = chassis.clone();
            if let Some(h) = c.header.as_mut() {
                h.timestamp_sec = Some(t);
            }
            for (name, content) in [
                (channels[0].0, l.encode_to_vec()),
                (channels[1].0, c.encode_to_vec()),
            ] {
                body.messages.push(SingleMessage {
                    channel_name: Some(name.to_owned()),
                    time: Some((t * 1e9) as u64),
                    content: Some(content),
                });
                n += 1;
            }
        }
        section(
            &mut body_sections,
            SectionType::SectionChunkBody,
            &body.encode_to_vec(),
        );
    }
    let header = Header {
        major_version: Some(1),
        minor_version: Some(0),
        message_number: Some(n),
        ..Default::default()
    };
    let mut out = Vec::new();
    let h = header.encode_to_vec();
    section(&mut out, SectionType::SectionHeader, &h);
    out.resize(16 + 2048, 0);
    out.extend_from_slice(&body_sections);
    std::fs::write(path, &out).expect("write the synthetic record");
    n
}

fn import_all(path: &Path) -> usize {
    let mut a = Assembler::new(AssemblerConfig::default());
    let mut n = 0;
    record::import(path, &mut a, |_| n += 1).expect("import");
    n
}

fn decode_only(path: &Path) -> usize {
    let mut reader = RecordReader::open(path).expect("open");
    let mut n = 0;
    while let Some(chunk) = reader.next_chunk().expect("chunk") {
        for m in chunk {
            let content = m.content.unwrap_or_default();
            let ok = match m.channel_name.as_deref() {
                Some("/apollo/localization/pose") => {
                    LocalizationEstimate::decode(content.as_slice()).is_ok()
                }
                _ => Chassis::decode(content.as_slice()).is_ok(),
            };
            n += usize::from(ok);
        }
    }
    n
}

fn time_per_iter(mut f: impl FnMut(), min: Duration) -> f64 {
    let start = Instant::now();
    let mut n = 0_u32;
    while start.elapsed() < min {
        f();
        n += 1;
    }
    start.elapsed().as_secs_f64() / f64::from(n)
}

fn benches(c: &mut Criterion) {
    let mut out = Vec::new();
    for name in ["borregas_ave", "cube_town"] {
        let map = load(name);
        let pts = query_points(&map);
        let mut g = c.benchmark_group(format!("lookup_{name}"));
        g.bench_function("rtree", |b| {
            b.iter(|| {
                for p in &pts {
                    map.index().candidates(map.lanes(), *p, 5.0, &mut out);
                    black_box(&out);
                }
            })
        });
        g.bench_function("linear", |b| {
            b.iter(|| {
                for p in &pts {
                    LaneIndex::candidates_linear(map.lanes(), *p, 5.0, &mut out);
                    black_box(&out);
                }
            })
        });
        g.finish();
    }
}

criterion_group! {
    name = group;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = benches
}

fn summary() {
    let min = Duration::from_millis(800);
    println!("\n== ingest summary (same run) ==");
    for name in ["borregas_ave", "cube_town"] {
        let map = load(name);
        let pts = query_points(&map);
        let mut out = Vec::new();
        let rtree = time_per_iter(
            || {
                for p in &pts {
                    map.index().candidates(map.lanes(), *p, 5.0, &mut out);
                    black_box(&out);
                }
            },
            min,
        ) / pts.len() as f64;
        let linear = time_per_iter(
            || {
                for p in &pts {
                    LaneIndex::candidates_linear(map.lanes(), *p, 5.0, &mut out);
                    black_box(&out);
                }
            },
            min,
        ) / pts.len() as f64;
        let frames = drive_frames(&map);
        let mut tracker = MapTracker::new(Arc::clone(&map), TrackerConfig::default());
        let mut scratch = frames.clone();
        let fill = time_per_iter(
            || {
                for f in scratch.iter_mut() {
                    tracker.fill(f);
                }
                black_box(&scratch);
            },
            min,
        ) / frames.len() as f64;
        println!(
            "{name}: {} lanes, {} segments: lookup R-tree {:.2} µs vs linear scan {:.2} µs ({:.1}x); \
             road fields per frame {:.2} µs",
            map.lanes().len(),
            map.index().n_segments(),
            rtree * 1e6,
            linear * 1e6,
            linear / rtree,
            fill * 1e6
        );
    }
    let dir = std::env::temp_dir().join(format!("avguard-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("synthetic.record");
    let n = synthetic_record(&path, 60);
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let full = time_per_iter(|| assert!(import_all(&path) > 0), min);
    let raw = time_per_iter(|| assert!(decode_only(&path) > 0), min);
    println!(
        "record import: {n} messages, {:.1} MB: {:.2} M msg/s ({:.0} MB/s) read+decode+assemble vs \
         {:.2} M msg/s read+prost decode only ({:.2}x the time)",
        bytes as f64 / 1e6,
        n as f64 / full / 1e6,
        bytes as f64 / full / 1e6,
        n as f64 / raw / 1e6,
        full / raw
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    group();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
