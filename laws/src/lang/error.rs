//! The parse error: where in which law text, and what was expected.

/// A law text could not be read. Displays as `file:line:col: message`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}:{col}: {message}")]
pub struct ParseError {
    /// The label of the text (usually its file name).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub col: usize,
    /// What went wrong, e.g. "expected ')' but found ';'".
    pub message: String,
}
