//! The Cyber RT record container: sections read one at a time from the file, each length checked against
//! the file size before anything is allocated.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use prost::Message as _;

use crate::wire::apollo::cyber::{
    single_index, Channel, ChunkBody, ChunkHeader, CompressType, Header, Index, SectionType,
    SingleMessage,
};

/// Bytes of a section header: int32 type, 4 bytes padding, int64 size (little-endian).
pub const SECTION_HEADER_BYTES: u64 = 16;
/// The header section's message is padded to this many bytes.
pub const HEADER_BYTES: u64 = 2048;
/// Largest section read, bytes (Cyber's default chunk limit is 200 MB).
pub const MAX_SECTION_BYTES: u64 = 1 << 30;

/// Which part of a record a problem is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The header section at offset 0.
    Header,
    /// A channel section.
    Channel,
    /// A chunk header section.
    ChunkHeader,
    /// A chunk body section.
    ChunkBody,
    /// The index section.
    Index,
    /// A section header whose type is not known.
    Unknown,
}

impl std::fmt::Display for Section {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Section::Header => "header",
            Section::Channel => "channel",
            Section::ChunkHeader => "chunk header",
            Section::ChunkBody => "chunk body",
            Section::Index => "index",
            Section::Unknown => "unknown",
        })
    }
}

/// Why a record cannot be read. Every variant names the file, the section and its byte offset.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The file could not be opened or read.
    #[error("{path}: cannot read: {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause (in the message, so not also a `source`: error chains would say it twice).
        cause: std::io::Error,
    },
    /// The file ends inside a section.
    #[error("{path}: {section} section at offset {offset}: truncated ({need} bytes needed, {have} left in the file)")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// The section.
        section: Section,
        /// Offset of its section header.
        offset: u64,
        /// Bytes the section says it has (with its header).
        need: u64,
        /// Bytes left in the file from `offset`.
        have: u64,
    },
    /// A section is not what the format allows there.
    #[error("{path}: {section} section at offset {offset}: {reason}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The section.
        section: Section,
        /// Offset of its section header.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
}

/// A channel of the record: name, message type and the embedded descriptors.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChannelInfo {
    /// Message type, e.g. `apollo.canbus.Chassis`.
    pub message_type: String,
    /// Serialized `apollo.cyber.proto.ProtoDesc` of the type.
    pub proto_desc: Vec<u8>,
    /// Messages of the channel, per the index (0 when the record has no index).
    pub n_messages: u64,
}

/// An open record: its header and channels are read at open; chunk bodies are read one at a time. Reads
/// a file ([`RecordReader::open`]) or any seekable source ([`RecordReader::from_reader`], e.g. bytes in
/// memory for fuzzing).
#[derive(Debug)]
pub struct RecordReader<R = BufReader<File>> {
    path: PathBuf,
    file: R,
    size: u64,
    header: Header,
    channels: BTreeMap<String, ChannelInfo>,
    /// Offset of the next section to read.
    pos: u64,
    /// Where sequential reading ends: the index section, or the end of the file.
    end: u64,
}

impl RecordReader {
    /// Opens `path`, reads and checks its header and (when present) its index.
    pub fn open(path: &Path) -> Result<RecordReader, RecordError> {
        let io = |cause| RecordError::Io {
            path: path.to_owned(),
            cause,
        };
        let file = File::open(path).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        RecordReader::from_reader(path, BufReader::new(file), size)
    }
}

impl<R: Read + Seek> RecordReader<R> {
    /// Reads a record of `size` bytes from `source`; `name` is used in error messages.
    pub fn from_reader(name: &Path, source: R, size: u64) -> Result<RecordReader<R>, RecordError> {
        let mut r = RecordReader {
            path: name.to_owned(),
            file: source,
            size,
            header: Header::default(),
            channels: BTreeMap::new(),
            pos: 0,
            end: size,
        };
        let (kind, len) = r.section_at(0, Section::Header)?;
        if kind != SectionType::SectionHeader as i32 {
            return Err(r.malformed(
                Section::Header,
                0,
                format!(
                    "first section has type {kind}, not a record header (0); not a Cyber record"
                ),
            ));
        }
        if len > HEADER_BYTES {
            return Err(r.malformed(
                Section::Header,
                0,
                format!("header of {len} bytes exceeds {HEADER_BYTES}"),
            ));
        }
        let bytes = r.read_body(0, len, Section::Header)?;
        r.header = Header::decode(bytes.as_slice())
            .map_err(|e| r.malformed(Section::Header, 0, e.to_string()))?;
        // The header's `compress` field is not read here: Cyber's own writer stores chunk bodies
        // uncompressed whatever it says, and its reader reads them so; a body that does not decode says
        // what the header declared (see `next_chunk`).
        r.pos = SECTION_HEADER_BYTES + HEADER_BYTES;
        if r.pos > size {
            return Err(RecordError::Truncated {
                path: r.path.clone(),
                section: Section::Header,
                offset: 0,
                need: r.pos,
                have: size,
            });
        }
        let index_at = r.header.index_position();
        if index_at > 0 {
            if index_at < r.pos || index_at >= size {
                return Err(r.malformed(
                    Section::Header,
                    0,
                    format!(
                        "index position {index_at} lies outside the sections ({}..{size})",
                        r.pos
                    ),
                ));
            }
            r.read_index(index_at)?;
            r.end = index_at;
        }
        Ok(r)
    }

    /// The record's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The channels known so far (all of them after open when the record has an index; otherwise they are
    /// added as their sections are read).
    pub fn channels(&self) -> &BTreeMap<String, ChannelInfo> {
        &self.channels
    }

    /// The file's size, bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Reads sections up to the next chunk body and returns its messages, in record order; `None` at the
    /// end. Channel sections met on the way are added to [`RecordReader::channels`].
    pub fn next_chunk(&mut self) -> Result<Option<Vec<SingleMessage>>, RecordError> {
        while self.pos < self.end {
            let offset = self.pos;
            let (kind, len) = self.section_at(offset, Section::Unknown)?;
            let section = section_of(kind);
            let bytes = self.read_body(offset, len, section)?;
            self.pos = offset + SECTION_HEADER_BYTES + len;
            let bad = |e: prost::DecodeError| self.malformed(section, offset, e.to_string());
            match section {
                Section::ChunkBody => {
                    let body = ChunkBody::decode(bytes.as_slice()).map_err(|e| {
                        let declared = self.header.compress();
                        if declared == CompressType::CompressNone {
                            return bad(e);
                        }
                        self.malformed(
                            section,
                            offset,
                            format!(
                                "{e} (the header declares {declared:?} compression; chunk bodies are \
                                 read uncompressed, as Cyber writes them whatever the header says, and \
                                 compressed ones are not supported)"
                            ),
                        )
                    })?;
                    return Ok(Some(body.messages));
                }
                Section::Channel => {
                    let ch = Channel::decode(bytes.as_slice()).map_err(bad)?;
                    let name = ch.name.clone().unwrap_or_default();
                    let entry = self.channels.entry(name).or_default();
                    if entry.message_type.is_empty() {
                        entry.message_type = ch.message_type.unwrap_or_default();
                        entry.proto_desc = ch.proto_desc.unwrap_or_default();
                    }
                }
                Section::ChunkHeader => {
                    ChunkHeader::decode(bytes.as_slice()).map_err(bad)?;
                }
                Section::Index => {
                    // An index before the end (a record without `index_position`): nothing follows.
                    self.pos = self.end;
                }
                Section::Header | Section::Unknown => {
                    return Err(self.malformed(
                        section,
                        offset,
                        format!("unexpected section type {kind}"),
                    ));
                }
            }
        }
        Ok(None)
    }

    fn read_index(&mut self, offset: u64) -> Result<(), RecordError> {
        let (kind, len) = self.section_at(offset, Section::Index)?;
        if kind != SectionType::SectionIndex as i32 {
            return Err(self.malformed(
                Section::Index,
                offset,
                format!("the header's index position points at a section of type {kind}"),
            ));
        }
        let bytes = self.read_body(offset, len, Section::Index)?;
        let index = Index::decode(bytes.as_slice())
            .map_err(|e| self.malformed(Section::Index, offset, e.to_string()))?;
        for entry in index.indexes {
            if let Some(single_index::Cache::ChannelCache(c)) = entry.cache {
                self.channels.insert(
                    c.name.clone().unwrap_or_default(),
                    ChannelInfo {
                        message_type: c.message_type.clone().unwrap_or_default(),
                        proto_desc: c.proto_desc.clone().unwrap_or_default(),
                        n_messages: c.message_number(),
                    },
                );
            }
        }
        Ok(())
    }

    /// Reads the section header at `offset`: (type, body length), the length checked against the file.
    fn section_at(&mut self, offset: u64, section: Section) -> Result<(i32, u64), RecordError> {
        let have = self.size.saturating_sub(offset);
        if have < SECTION_HEADER_BYTES {
            return Err(RecordError::Truncated {
                path: self.path.clone(),
                section,
                offset,
                need: SECTION_HEADER_BYTES,
                have,
            });
        }
        let mut head = [0_u8; SECTION_HEADER_BYTES as usize];
        self.read_exact_at(offset, &mut head, section)?;
        let [t0, t1, t2, t3, _, _, _, _, s0, s1, s2, s3, s4, s5, s6, s7] = head;
        let kind = i32::from_le_bytes([t0, t1, t2, t3]);
        let len = i64::from_le_bytes([s0, s1, s2, s3, s4, s5, s6, s7]);
        let section = if section == Section::Unknown {
            section_of(kind)
        } else {
            section
        };
        let len = u64::try_from(len)
            .map_err(|_| self.malformed(section, offset, format!("negative size {len}")))?;
        if len > MAX_SECTION_BYTES {
            return Err(self.malformed(
                section,
                offset,
                format!("size {len} exceeds the {MAX_SECTION_BYTES}-byte section limit"),
            ));
        }
        let need = SECTION_HEADER_BYTES.saturating_add(len);
        if need > have {
            return Err(RecordError::Truncated {
                path: self.path.clone(),
                section,
                offset,
                need,
                have,
            });
        }
        Ok((kind, len))
    }

    /// Reads a section's body (already checked to lie inside the file).
    fn read_body(
        &mut self,
        offset: u64,
        len: u64,
        section: Section,
    ) -> Result<Vec<u8>, RecordError> {
        let n = usize::try_from(len).map_err(|_| {
            self.malformed(
                section,
                offset,
                format!("size {len} does not fit in memory"),
            )
        })?;
        let mut bytes = vec![0_u8; n];
        self.read_exact_at(offset + SECTION_HEADER_BYTES, &mut bytes, section)?;
        Ok(bytes)
    }

    fn read_exact_at(
        &mut self,
        at: u64,
        buf: &mut [u8],
        section: Section,
    ) -> Result<(), RecordError> {
        let path = self.path.clone();
        self.file
            .seek(SeekFrom::Start(at))
            .and_then(|_| self.file.read_exact(buf))
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::UnexpectedEof => RecordError::Truncated {
                    path,
                    section,
                    offset: at,
                    need: buf.len() as u64,
                    have: self.size.saturating_sub(at),
                },
                _ => RecordError::Io {
                    path,
                    cause: source,
                },
            })
    }

    fn malformed(&self, section: Section, offset: u64, reason: String) -> RecordError {
        RecordError::Malformed {
            path: self.path.clone(),
            section,
            offset,
            reason,
        }
    }
}

fn section_of(kind: i32) -> Section {
    match SectionType::try_from(kind) {
        Ok(SectionType::SectionHeader) => Section::Header,
        Ok(SectionType::SectionChunkHeader) => Section::ChunkHeader,
        Ok(SectionType::SectionChunkBody) => Section::ChunkBody,
        Ok(SectionType::SectionIndex) => Section::Index,
        Ok(SectionType::SectionChannel) => Section::Channel,
        Err(_) => Section::Unknown,
    }
}
