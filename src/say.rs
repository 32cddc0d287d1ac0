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

/// Writes a command's whole output, a document (`openapi`, `checks`, `list`), to standard
/// output and flushes it. A closed pipe (`| head -1`) is no error: the reader had what it
/// wanted. Any other failure (a full disk behind `> out.json`) is returned: a command whose
/// output is its product must not exit 0 with half of it written.
pub fn stdout_document(text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        done => done,
    }
}

// Callers name them by this module (`crate::say::stderr_line!`), as every other import names
// its layer.
pub use super::{stderr_line, stdout_line, stdout_text};
