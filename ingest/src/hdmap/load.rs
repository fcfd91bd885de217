//! Reading a map file: size check, text or binary decoding by extension, then [`HdMap::from_proto`].

use std::path::Path;

use prost::Message as _;
use prost_reflect::DynamicMessage;

use super::HdMap;
use crate::wire;
use crate::wire::apollo::hdmap::Map;

/// Largest map file read, bytes (1 GiB): city maps are tens to hundreds of MB.
pub const DEFAULT_MAX_MAP_BYTES: u64 = 1 << 30;

/// How a map file is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapFormat {
    /// Protobuf binary (`base_map.bin`, `sim_map.bin`).
    Binary,
    /// Protobuf text format (`base_map.txt`, `sim_map.txt`).
    Text,
}

impl MapFormat {
    /// The format Apollo's loader assumes for `path`: text for `.txt`, binary otherwise.
    pub fn of_path(path: &Path) -> MapFormat {
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("txt"))
        {
            MapFormat::Text
        } else {
            MapFormat::Binary
        }
    }
}

/// Why a map could not be loaded. The message names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MapError {
    /// The file could not be read.
    #[error("{path}: cannot read: {cause}")]
    Io {
        /// The file.
        path: String,
        /// The cause (in the message, so not also a `source`: error chains would say it twice).
        cause: std::io::Error,
    },
    /// The file is larger than the limit.
    #[error("{path}: {size} bytes exceeds the {limit}-byte map size limit")]
    TooLarge {
        /// The file.
        path: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Neither encoding decodes.
    #[error("{path}: not an apollo.hdmap.Map in {format:?} encoding: {reason}")]
    Decode {
        /// The file.
        path: String,
        /// The encoding tried first (chosen by extension).
        format: MapFormat,
        /// The decoder's message.
        reason: String,
    },
    /// The map decodes but holds no usable lane.
    #[error("{path}: the map has no lane with a usable centre line")]
    NoLanes {
        /// The file.
        path: String,
    },
}

impl HdMap {
    /// Loads `path` (text for `*.txt`, binary otherwise, falling back to the other encoding as Apollo's
    /// loader does), refusing files above `max_bytes`.
    pub fn load(path: &Path, max_bytes: u64) -> Result<HdMap, MapError> {
        HdMap::from_file_bytes(path, &HdMap::read_file(path, max_bytes)?)
    }

    /// The bytes of the map file at `path`, refusing files above `max_bytes` before reading them.
    pub fn read_file(path: &Path, max_bytes: u64) -> Result<Vec<u8>, MapError> {
        let name = path.display().to_string();
        let io = |cause| MapError::Io {
            path: name.clone(),
            cause,
        };
        let size = std::fs::metadata(path).map_err(io)?.len();
        if size > max_bytes {
            return Err(MapError::TooLarge {
                path: name,
                size,
                limit: max_bytes,
            });
        }
        std::fs::read(path).map_err(io)
    }

    /// Builds the map from the contents `bytes` of the file at `path` (encoding chosen by its extension,
    /// falling back to the other one, as [`HdMap::load`]).
    pub fn from_file_bytes(path: &Path, bytes: &[u8]) -> Result<HdMap, MapError> {
        let name = path.display().to_string();
        let format = MapFormat::of_path(path);
        let proto = match decode(bytes, format) {
            Ok(map) => map,
            Err(reason) => {
                let other = match format {
                    MapFormat::Binary => MapFormat::Text,
                    MapFormat::Text => MapFormat::Binary,
                };
                decode(bytes, other).map_err(|_| MapError::Decode {
                    path: name.clone(),
                    format,
                    reason,
                })?
            }
        };
        let map = HdMap::from_proto(&proto);
        if map.lanes().is_empty() {
            return Err(MapError::NoLanes { path: name });
        }
        Ok(map)
    }
}

impl HdMap {
    /// Builds a map from file contents in `format` (no fallback to the other encoding): the entry point
    /// for callers that already hold the bytes, e.g. fuzzers. The error is the decoder's message.
    pub fn from_bytes(bytes: &[u8], format: MapFormat) -> Result<HdMap, String> {
        decode(bytes, format).map(|map| HdMap::from_proto(&map))
    }
}

/// Decodes map bytes in one encoding.
pub fn decode(bytes: &[u8], format: MapFormat) -> Result<Map, String> {
    match format {
        MapFormat::Binary => Map::decode(bytes).map_err(|e| e.to_string()),
        MapFormat::Text => {
            let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}"))?;
            let desc = wire::descriptor("apollo.hdmap.Map")
                .ok_or_else(|| "no descriptor for apollo.hdmap.Map".to_owned())?;
            DynamicMessage::parse_text_format(desc, text)
                .map_err(|e| e.to_string())?
                .transcode_to::<Map>()
                .map_err(|e| e.to_string())
        }
    }
}
