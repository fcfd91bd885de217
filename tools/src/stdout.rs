//! Command output on standard output, with write errors returned instead of panicking.
//!
//! `println!` panics when standard output is closed early (`avguard info MODEL | head -1`). Commands print
//! with [`outln!`](crate::outln) and [`out!`](crate::out) instead, which return the `io::Error`; the binary
//! treats a broken pipe as success. `tools/clippy.toml` disallows `println!` and `print!` in this crate so
//! that no new call brings the panic back.

/// `writeln!` to standard output: returns `std::io::Result<()>` (use `?`) instead of panicking.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        ::std::writeln!(::std::io::stdout().lock(), $($arg)*)
    }};
}

/// `write!` to standard output: returns `std::io::Result<()>` (use `?`) instead of panicking.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        ::std::write!(::std::io::stdout().lock(), $($arg)*)
    }};
}
