//! Lines for a person or a pipe that never panic. `println!` and `eprintln!` panic when their
//! stream is a closed pipe (`mallcheck run 2>&1 | head`, `mallcheck openapi | head -1`): the
//! command would end in a crash (exit 101) instead of its verdict. A line that cannot be
//! written is dropped; the reports and the exit code are the record of a run.

/// `eprintln!` that drops the line when standard error cannot take it.
#[macro_export]
macro_rules! stderr_line {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr(), $($arg)*);
    }};
}

/// `println!` that drops the line when standard output cannot take it.
#[macro_export]
macro_rules! stdout_line {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stdout(), $($arg)*);
    }};
}

/// `print!` that drops the text when standard output cannot take it (and flushes it, as the
/// text is a command's whole output).
#[macro_export]
macro_rules! stdout_text {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let mut out = ::std::io::stdout();
        let _ = ::std::write!(out, $($arg)*);
        let _ = out.flush();
    }};
}

// Callers name them by this module (`crate::say::stderr_line!`), as every other import names
// its layer.
pub use super::{stderr_line, stdout_line, stdout_text};
