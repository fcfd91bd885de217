//! Error types of the monitor crate.
//!
//! Two families: [`StructureError`] says why a matrix or table failed validation (built in code or loaded
//! from bytes, the same checks either way), and [`ModelError`] wraps everything that can go wrong when a
//! model is built, loaded or used.

use thiserror::Error;

/// Why a transition matrix, a count table or a reachability table is malformed.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum StructureError {
    /// Two arrays that must agree in length do not.
    #[error("size mismatch in {what}: expected {expected}, found {found}")]
    SizeMismatch {
        /// Which array.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        found: usize,
    },
    /// A state index points outside the state space.
    #[error("index out of range in {what}: {index} >= {bound}")]
    OutOfRange {
        /// Which array.
        what: &'static str,
        /// The offending index.
        index: u64,
        /// The number of states.
        bound: u64,
    },
    /// Row pointers decrease or column indices within a row are not strictly increasing.
    #[error("{what} is not sorted at row {row}")]
    Unsorted {
        /// Which array.
        what: &'static str,
        /// The row where the order breaks.
        row: usize,
    },
    /// A probability is negative, above one, or not finite.
    #[error("invalid probability {value} in {what} at state {state}")]
    BadProbability {
        /// Which array.
        what: &'static str,
        /// The state (row) where it occurs.
        state: usize,
        /// The value found.
        value: f64,
    },
    /// A row of the transition matrix does not sum to one.
    #[error("row {row} sums to {sum}, not 1")]
    RowSum {
        /// The row.
        row: usize,
        /// Its sum.
        sum: f64,
    },
    /// Any other violated invariant.
    #[error("{0}")]
    Invalid(String),
}

/// Everything that can fail when building, loading or running a model.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A matrix or table did not pass validation.
    #[error("malformed model structure: {0}")]
    Structure(#[from] StructureError),
    /// The bytes do not start with the model file's magic string: not an avguard model.
    #[error("not an avguard model file (bad magic bytes)")]
    NotAModel,
    /// The file is a model of a format version this build cannot read.
    #[error(
        "unsupported model format version {found} (this build reads versions {oldest} to {supported})"
    )]
    Version {
        /// Version in the file.
        found: u32,
        /// Oldest version this build reads.
        oldest: u32,
        /// Version this build writes (the newest it reads).
        supported: u32,
    },
    /// The bytes could not be decoded (truncated or corrupt).
    #[error("corrupt model file: {0}")]
    Decode(String),
    /// A configuration value is out of its domain (e.g. ε ≤ 0).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A property or predicate definition is unusable.
    #[error("invalid property {property:?}: {reason}")]
    Property {
        /// Property name.
        property: String,
        /// Why.
        reason: String,
    },
}
