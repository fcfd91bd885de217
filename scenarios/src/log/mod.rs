//! The HDF5 run-log format (INTERFACES §2): one run per file, a `/frames` table of equal-length 1-D
//! datasets and a ragged `/obstacles` table indexed by `offset`.
//!
//! - [`LogWriter`] streams frames into chunked, extendable datasets (the live bridge records sessions with
//!   it); [`PartialLog`] does so under a temporary name and renames the file once complete, so a failed
//!   write never replaces a good log; [`write_log`] writes a whole run through it.
//! - [`read_log`] reads and validates a whole file; every problem is a [`LogError`] naming the dataset.
//!   [`read_log_isolated`] does the same in a child process, for files from users: a file that crashes
//!   or hangs the HDF5 library fails alone ([`isolated`]).
//! - [`frame_columns`] and [`obstacle_columns`] lay a run out as named columns, like the file.
//!
//! Byte-identical output: HDF5 stores object modification times by default; the writer switches them off
//! on the file, groups and datasets, so the same run written twice gives the same bytes.

mod attributes;
mod columns;
mod error;
pub mod isolated;
mod reader;
mod schema;
mod transfer;
mod writer;

pub use attributes::copy_root_attributes;
pub use columns::{frame_columns, obstacle_columns, Column};
pub use error::LogError;
pub use isolated::read_log_isolated;
pub use reader::{read_log, read_log_image};
pub use writer::{partial_path, write_log, LogWriter, PartialLog};

use laws::Frame;

/// Run-level metadata stored as root attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMeta {
    /// Scenario name.
    pub scenario: String,
    /// Run identifier (unique within a batch).
    pub run_id: String,
    /// Frame period, s.
    pub frame_period_s: f64,
    /// Seed of the run, when it came from the generator.
    pub seed: Option<u64>,
}

/// One run: metadata and frames.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLog {
    /// Metadata.
    pub meta: RunMeta,
    /// Frames in time order.
    pub frames: Vec<Frame>,
}

/// Value of the root `format` attribute.
pub const FORMAT: &str = "avguard-log";
/// Value of the root `version` attribute.
pub const VERSION: i64 = 1;
/// Shortest `frame_period_s` a log may declare, s (1 kHz): a shorter one is a unit slip, not a log.
pub const MIN_FRAME_PERIOD_S: f64 = 0.001;
/// Longest `frame_period_s` a log may declare, s: the longest step a model learns at.
pub const MAX_FRAME_PERIOD_S: f64 = 10.0;

#[cfg(test)]
mod tests;
