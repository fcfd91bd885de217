//! Apollo Cyber RT `.record` files as an input source: the container ([`RecordReader`]: header, channel,
//! chunk header, chunk body and index sections) and the messages in it turned into frames exactly as the
//! live bridge turns websocket messages into frames ([`import`]: the same [`crate::message`] decoders and
//! the same [`Assembler`]).
//!
//! Messages are decoded with our compiled protos; the record's channel cache names each channel's message
//! type (and embeds its descriptors), and a consumed channel whose recorded type differs from the one the
//! bridge expects is skipped and counted rather than mis-decoded. Message time is the header time carried
//! inside each message, as on the live path; the record's own per-message time is not used.
//!
//! A damaged container is an error naming the section and its byte offset; a damaged message inside an
//! intact chunk is counted and skipped, as a bad websocket message is.
//!
//! **Segments.** `cyber_recorder` splits a long recording into files `NAME.record.00000`,
//! `NAME.record.00001`, … Those are one recording: [`recording_segments`] finds the consecutively numbered
//! files a segment belongs with, [`recordings`] groups a list of record files that way, and
//! [`import_recording`] feeds the segments in order through one assembler, so a run goes on across a
//! segment boundary exactly as it would in one file.

mod reader;

#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

use laws::Frame;

pub use reader::{ChannelInfo, RecordError, RecordReader, Section, MAX_SECTION_BYTES};

use crate::assemble::{Assembler, AssemblyStats, RunBoundary};
use crate::message::{Channel, Payload, SimMessage};

/// What an import produced besides frames.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportStats {
    /// Messages in the record.
    pub n_messages: u64,
    /// Messages on a channel the bridge consumes, decoded and assembled.
    pub n_decoded: u64,
    /// Messages on channels the bridge does not consume.
    pub n_other_channels: u64,
    /// Messages on a consumed channel whose recorded type is not the expected one.
    pub n_type_mismatch: u64,
    /// Messages that did not decode.
    pub n_decode_errors: u64,
    /// The first decode error, for the report.
    pub first_decode_error: Option<String>,
    /// The assembler's counters.
    pub assembly: AssemblyStats,
}

/// One step of an import, in order.
#[derive(Debug)]
pub enum Imported<'a> {
    /// A frame of the current run.
    Frame(&'a Frame),
    /// A new run starts (message time jumped or went back); later frames belong to it.
    NewRun(RunBoundary),
}

/// Reads the record at `path` and feeds every consumed message through `assembler`, handing each frame
/// (and each run boundary) to `sink` as it is made. Memory stays bounded by the largest chunk.
pub fn import(
    path: &Path,
    assembler: &mut Assembler,
    sink: impl FnMut(Imported<'_>),
) -> Result<ImportStats, RecordError> {
    import_from(RecordReader::open(path)?, assembler, sink)
}

/// [`import`] from a record already opened on any seekable source (a file, or bytes in memory).
pub fn import_from<R: Read + Seek>(
    reader: RecordReader<R>,
    assembler: &mut Assembler,
    mut sink: impl FnMut(Imported<'_>),
) -> Result<ImportStats, RecordError> {
    let mut stats = ImportStats::default();
    feed(reader, assembler, &mut stats, &mut sink)?;
    stats.assembly = assembler.stats();
    Ok(stats)
}

/// [`import`] of the segments of one recording, in order, through one assembler (see the module docs):
/// the counters are the sums over the segments. A damaged segment ends the import with its error (which
/// names that file).
pub fn import_recording(
    segments: &[PathBuf],
    assembler: &mut Assembler,
    mut sink: impl FnMut(Imported<'_>),
) -> Result<ImportStats, RecordError> {
    let mut stats = ImportStats::default();
    for path in segments {
        feed(RecordReader::open(path)?, assembler, &mut stats, &mut sink)?;
    }
    stats.assembly = assembler.stats();
    Ok(stats)
}

/// Feeds every consumed message of `reader` through `assembler`, counting into `stats`.
fn feed<R: Read + Seek>(
    mut reader: RecordReader<R>,
    assembler: &mut Assembler,
    stats: &mut ImportStats,
    sink: &mut impl FnMut(Imported<'_>),
) -> Result<(), RecordError> {
    let mut frames = Vec::new();
    while let Some(messages) = reader.next_chunk()? {
        for m in messages {
            stats.n_messages += 1;
            let name = m.channel_name.as_deref().unwrap_or("");
            let Some(channel) = Channel::from_topic(name) else {
                stats.n_other_channels += 1;
                continue;
            };
            let recorded = reader.channels().get(name).map(|c| c.message_type.as_str());
            if let (Some(recorded), Some(expected)) = (recorded, channel.proto_type()) {
                if !recorded.is_empty() && recorded != expected {
                    stats.n_type_mismatch += 1;
                    continue;
                }
            }
            let content = m.content.as_deref().unwrap_or(&[]);
            let msg = match SimMessage::decode(name, Payload::Binary(content)) {
                Ok(msg) => msg,
                Err(err) => {
                    stats.n_decode_errors += 1;
                    stats
                        .first_decode_error
                        .get_or_insert_with(|| err.to_string());
                    continue;
                }
            };
            stats.n_decoded += 1;
            frames.clear();
            if let Some(boundary) = assembler.push(&msg, &mut frames) {
                sink(Imported::NewRun(boundary));
            }
            for f in &frames {
                sink(Imported::Frame(f));
            }
        }
    }
    Ok(())
}

/// Every run of a recording (its segments, in order) as frames (see [`import_recording`]); the first run
/// may be empty when the recording holds no pose.
pub fn read_runs(
    segments: &[PathBuf],
    assembler: &mut Assembler,
) -> Result<(Vec<Vec<Frame>>, ImportStats), RecordError> {
    let mut runs = vec![Vec::new()];
    let stats = import_recording(segments, assembler, |step| match step {
        Imported::Frame(f) => {
            if let Some(run) = runs.last_mut() {
                run.push(f.clone());
            }
        }
        Imported::NewRun(_) => runs.push(Vec::new()),
    })?;
    Ok((runs, stats))
}

/// Whether `path` looks like a Cyber record by name (`*.record` or `*.record.NNNNN`).
pub fn is_record_name(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n.ends_with(".record")
            || n.rsplit_once(".record.").is_some_and(|(_, tail)| {
                !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit())
            })
    })
}

/// Most segments one recording is followed through (each is one file-system lookup).
pub const MAX_SEGMENTS: usize = 100_000;

/// `NAME.record.NNNNN` split into `NAME.record.`, the segment number and its digit count; `None` for
/// other names (and for numbers of more than nine digits).
fn segment_name(path: &Path) -> Option<(&str, u32, usize)> {
    let name = path.file_name()?.to_str()?;
    let (stem, digits) = name.rsplit_once(".record.")?;
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let prefix = &name[..stem.len() + ".record.".len()];
    Some((prefix, digits.parse().ok()?, digits.len()))
}

/// The file of segment `index` beside `path` (same prefix and digit count), if that name has the width.
fn segment_file(path: &Path, prefix: &str, index: u32, width: usize) -> Option<PathBuf> {
    let name = format!("{prefix}{index:0width$}");
    (name.len() == prefix.len() + width).then(|| path.with_file_name(name))
}

/// The segments of the recording that the record file `path` is part of, in order: the files beside it
/// numbered consecutively before and after it (`NAME.record.00000`, `NAME.record.00001`, … with the same
/// number of digits; at most [`MAX_SEGMENTS`]). A record that is not a numbered segment is a recording of
/// its own, and so is a segment whose neighbours are missing.
pub fn recording_segments(path: &Path) -> Vec<PathBuf> {
    let Some((prefix, index, width)) = segment_name(path) else {
        return vec![path.to_path_buf()];
    };
    let mut first = index;
    while index - first < MAX_SEGMENTS as u32 / 2 && first > 0 {
        match segment_file(path, prefix, first - 1, width) {
            Some(p) if p.is_file() => first -= 1,
            _ => break,
        }
    }
    let mut out = Vec::new();
    let mut k = first;
    while out.len() < MAX_SEGMENTS {
        let Some(p) = segment_file(path, prefix, k, width) else {
            break;
        };
        if k != index && !p.is_file() {
            break;
        }
        out.push(if k == index { path.to_path_buf() } else { p });
        match k.checked_add(1) {
            Some(next) => k = next,
            None => break,
        }
    }
    out
}

/// `paths` (record files) as recordings: each path's [`recording_segments`], once per recording, in the
/// order of the paths' first appearance.
pub fn recordings(paths: &[PathBuf]) -> Vec<Vec<PathBuf>> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for path in paths {
        let segments = recording_segments(path);
        if segments
            .first()
            .is_some_and(|first| seen.insert(first.clone()))
        {
            out.push(segments);
        }
    }
    out
}
