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

mod reader;

#[cfg(test)]
mod tests;

use std::io::{Read, Seek};
use std::path::Path;

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
    mut reader: RecordReader<R>,
    assembler: &mut Assembler,
    mut sink: impl FnMut(Imported<'_>),
) -> Result<ImportStats, RecordError> {
    let mut stats = ImportStats::default();
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
    stats.assembly = assembler.stats();
    Ok(stats)
}

/// Every run of a record as frames (see [`import`]); the first run may be empty when the record holds
/// no pose.
pub fn read_runs(
    path: &Path,
    assembler: &mut Assembler,
) -> Result<(Vec<Vec<Frame>>, ImportStats), RecordError> {
    let mut runs = vec![Vec::new()];
    let stats = import(path, assembler, |step| match step {
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
