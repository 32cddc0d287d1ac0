//! Where a command's own lines go: standard output, unless one of its reports is written into
//! the stream standard output is (`--json /dev/stdout | jq`, `fuzz --junit /dev/stdout >
//! junit.xml`, or a FIFO that stdout is too). The report is then alone on standard output and
//! the lines go to standard error, so that what reads the pipe gets one document.

use std::io::{self, Write};
use std::path::Path;

/// The stream a command writes its lines (console, summary, "report written" notes) to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    Stdout,
    Stderr,
}

impl Lines {
    /// Standard error when one of `reports` is the stream standard output is, else standard
    /// output.
    pub fn beside(reports: &[&Path]) -> Self {
        if stdout_is_one_of(reports) {
            Lines::Stderr
        } else {
            Lines::Stdout
        }
    }

    /// A writer to the stream.
    pub fn writer(self) -> Box<dyn Write> {
        match self {
            Lines::Stdout => Box::new(io::stdout()),
            Lines::Stderr => Box::new(io::stderr()),
        }
    }

    /// Writes `text` (already scrubbed) and flushes; a closed stream is not an error of the
    /// command.
    pub fn print(self, text: &str) {
        let mut out = self.writer();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

/// Whether a report path names the stream standard output is: the same device and inode, and
/// a stream (a terminal, pipe, FIFO, socket or device), never a regular file that stdout
/// happens to be redirected to and that the report then replaces.
fn stdout_is_one_of(reports: &[&Path]) -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let stdout = io::stdout();
        let Ok(fd) = stdout.as_fd().try_clone_to_owned() else {
            return false;
        };
        let Ok(out) = std::fs::File::from(fd).metadata() else {
            return false;
        };
        reports.iter().any(|path| {
            crate::atomic::is_stream(path)
                && std::fs::metadata(path)
                    .is_ok_and(|m| m.dev() == out.dev() && m.ino() == out.ino())
        })
    }
    #[cfg(not(unix))]
    {
        let _ = reports;
        false
    }
}
