//! The limits a law text must respect. Law texts come from files and from model files that a running
//! bridge reloads, so no text may exhaust the stack, memory or time: each limit is checked where the text
//! is read and a violation is a [`super::error::ParseError`] (or, for the compiled size, an
//! [`crate::EvalError`]) naming the law and the limit.

/// Largest law text, bytes (real law files are a few kilobytes).
pub const MAX_TEXT_BYTES: usize = 1 << 20;

/// Deepest nesting of a formula: parentheses, prefix operators, binary operators and arithmetic all count
/// one level each. The parser and every pass over a formula recurse once per level, so this bounds their
/// stack use: a formula at the limit parses, compiles and evaluates within a 2 MiB thread stack in an
/// unoptimised build (LawBreaker's deepest law, law51 with its sub-laws, is 14 levels deep).
pub const MAX_DEPTH: usize = 64;

/// Most operators and operands in one law, counting every earlier law it uses by name in full (a name
/// stands for a copy of that law's formula, so without this bound a chain of laws could double in size at
/// every step).
pub const MAX_NODES: usize = 10_000;

/// Largest interval bound, s: one hour. Bounds must also be non-negative and in order (`lo ≤ hi`).
pub const MAX_BOUND_S: f64 = 3600.0;

/// Most window-buffer memory one law set may compile into, bytes. A bounded operator keeps up to one
/// entry per frame of its window, and nested operators add their horizons, so this is what stops many
/// long windows (or a very short frame period) from asking for gigabytes.
pub const MAX_WINDOW_BYTES: usize = 256 << 20;
