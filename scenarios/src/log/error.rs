//! Errors of reading and writing logs. Every variant about content names the dataset or attribute.

/// A log that could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// The HDF5 library failed on an object (opening the file, reading or writing a dataset).
    ///
    /// The library's error is part of the message and deliberately not a `source`: a chain printer
    /// (`{:#}` of anyhow) would otherwise print it twice.
    #[error("{object}: {error}")]
    Hdf5 {
        /// The file, group or dataset involved.
        object: String,
        /// The library's error, as text (invalid UTF-8 replaced: the hdf5 crate builds its messages from
        /// the library's C strings unchecked, and a hostile file must not make them unprintable).
        error: String,
    },
    /// The file could not be read from disk (its error is part of the message, as for [`LogError::Hdf5`]).
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// A dataset declares more data than the file can hold (checked before anything is allocated).
    #[error("dataset `{dataset}` declares {rows} rows ({bytes} bytes), more than the file's {file_bytes} bytes can hold")]
    TooLarge {
        /// Dataset path.
        dataset: String,
        /// Rows declared.
        rows: u64,
        /// Bytes of raw data declared.
        bytes: u64,
        /// Size of the file.
        file_bytes: u64,
    },
    /// A dataset or group whose data is not in the file: behind an external link, in external raw storage,
    /// or a virtual dataset (whose missing sources read as fill values). A log is one self-contained file.
    #[error("`{object}` is stored outside the file ({how}): a log must hold its own data")]
    Outside {
        /// Dataset or group path.
        object: String,
        /// How it leaves the file.
        how: &'static str,
    },
    /// A required dataset or group is absent.
    #[error("missing dataset `{0}`")]
    Missing(String),
    /// A dataset has the wrong element type or rank.
    #[error("dataset `{dataset}` has the wrong type: expected {expected}, found {found}")]
    WrongType {
        /// Dataset path.
        dataset: String,
        /// What the format requires.
        expected: &'static str,
        /// What the file holds.
        found: String,
    },
    /// A dataset's length disagrees with the others.
    #[error("dataset `{dataset}` has {found} rows, expected {expected}")]
    Length {
        /// Dataset path.
        dataset: String,
        /// Rows found.
        found: usize,
        /// Rows required.
        expected: usize,
    },
    /// A value breaks the format's rules.
    #[error("dataset `{dataset}`, row {row}: {problem}")]
    Value {
        /// Dataset path.
        dataset: String,
        /// Zero-based row.
        row: usize,
        /// What is wrong.
        problem: String,
    },
    /// A root attribute is missing or malformed.
    #[error("attribute `{name}`: {problem}")]
    Attribute {
        /// Attribute name.
        name: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// The file has no frames.
    #[error("dataset `/frames/t` is empty: a log needs at least one frame")]
    Empty,
    /// The child process reading an untrusted log gave no answer (`read_log_isolated`): the HDF5 library
    /// crashed or hung on the file, or the process could not be started.
    #[error("{path}: {problem}")]
    Reader {
        /// The file.
        path: String,
        /// What happened.
        problem: String,
    },
    /// An error of the reader, reported as text by the child process that read the log (the same message
    /// an in-process read gives).
    #[error("{0}")]
    Reported(String),
    /// Writing: a frame cannot be stored (non-finite time, time not increasing, negative speed).
    #[error("frame {index} cannot be logged: {problem}")]
    BadFrame {
        /// Index of the frame in the run.
        index: usize,
        /// What is wrong.
        problem: String,
    },
}

impl LogError {
    pub(crate) fn hdf5(object: impl Into<String>) -> impl FnOnce(hdf5::Error) -> LogError {
        let object = object.into();
        move |error| LogError::Hdf5 {
            object,
            error: String::from_utf8_lossy(error.to_string().as_bytes()).into_owned(),
        }
    }
}
