//! Bounded, safe reads of the local files a user names: case files, reports to merge, captured
//! responses, the signing key, the profile, snapshots, schemas, certificate bundles.
//!
//! Every read refuses what is not a regular file before opening it (opening a FIFO blocks until
//! a writer comes; `/dev/zero` never ends), and never holds more than its kind's limit: a file
//! whose size is not known in advance (`/proc` files say 0) is read with `take(limit + 1)`.

use std::fmt;
use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// What a file is to mallcheck: names it in messages and sets its size limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A case file (`cases/*.yaml`), and a fuzz regression.
    CaseFile,
    /// A JUnit or JSON report given to `merge`.
    MergeInput,
    /// A captured response given to `validate`.
    CapturedResponse,
    /// The file of `--sign-key-file` / `sign_key_file`.
    SignKey,
    /// The config file holding the profiles (`mallcheck.toml`).
    Profile,
    /// A snapshot file (`.snap`, `.snap.new`).
    Snapshot,
    /// A JSON Schema of `--schemas DIR`.
    Schema,
    /// A certificate bundle (`SSL_CERT_FILE`, a file of `SSL_CERT_DIR`).
    Certificates,
}

const MIB: u64 = 1024 * 1024;

const DIRECTORY: &str = "a directory";

impl Kind {
    /// The largest file of this kind read, in bytes.
    pub const fn limit(self) -> u64 {
        match self {
            Kind::CaseFile => 4 * MIB,
            Kind::MergeInput => 256 * MIB,
            Kind::CapturedResponse => 64 * MIB,
            Kind::SignKey => 64 * 1024,
            Kind::Profile => MIB,
            Kind::Snapshot => 64 * MIB,
            Kind::Schema => 4 * MIB,
            Kind::Certificates => 16 * MIB,
        }
    }

    /// Whether a pipe is read too: `--sign-key-file <(vault read ...)` and `/dev/stdin` hand
    /// the key over without writing it to disk. A named pipe without a writer reads as empty.
    fn reads_pipes(self) -> bool {
        matches!(self, Kind::SignKey | Kind::CapturedResponse)
    }

    /// How long a pipe of this kind may take to reach its end: a key comes at once (see
    /// [`PIPE_WAIT`]); a captured response may still be on its way (`curl … | mallcheck
    /// validate --schema NAME -`).
    fn pipe_wait(self) -> std::time::Duration {
        match self {
            Kind::CapturedResponse => CAPTURE_PIPE_WAIT,
            _ => PIPE_WAIT,
        }
    }

    /// The file in a message: `cannot read the signing key file PATH`, `the limit for a
    /// signing key file`.
    pub fn what(self) -> &'static str {
        match self {
            Kind::CaseFile => "case file",
            Kind::MergeInput => "merge input",
            Kind::CapturedResponse => "captured response",
            Kind::SignKey => "signing key file",
            Kind::Profile => "config file",
            Kind::Snapshot => "snapshot file",
            Kind::Schema => "schema file",
            Kind::Certificates => "certificate file",
        }
    }
}

/// Why a file was not read.
#[derive(Debug)]
pub enum Problem {
    /// It is not a regular file (a FIFO, a device, a directory, a socket).
    NotAFile(&'static str),
    /// It is larger than its kind's limit.
    TooLarge(u64),
    /// It is not UTF-8 text (when text was asked for).
    NotText,
    /// The file system refused.
    Io(io::Error),
}

/// A local file that could not be read: names the file, what it is and why.
#[derive(Debug)]
pub struct ReadError {
    /// The file.
    pub path: PathBuf,
    /// What it is.
    pub kind: Kind,
    /// Why it was not read.
    pub problem: Problem,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot read the {} {}: {}",
            self.kind.what(),
            self.path.display(),
            self.reason()
        )
    }
}

impl std::error::Error for ReadError {}

impl ReadError {
    /// Why, as a lowercase fragment without the path (for messages that name the file
    /// themselves, e.g. case-file diagnostics).
    pub fn reason(&self) -> String {
        match &self.problem {
            Problem::NotAFile(what) => format!("it is {what}, not a regular file"),
            Problem::TooLarge(limit) => format!(
                "it is larger than {}, the limit for a {}",
                size(*limit),
                self.kind.what()
            ),
            Problem::NotText => "it is not UTF-8 text".to_string(),
            Problem::Io(e) => e.to_string(),
        }
    }

    /// Whether the path is a directory.
    pub fn is_directory(&self) -> bool {
        matches!(self.problem, Problem::NotAFile(t) if t == DIRECTORY)
    }

    /// Whether the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(&self.problem, Problem::Io(e) if e.kind() == io::ErrorKind::NotFound)
    }
}

/// A size limit as people write it: `4 MiB`, `64 KiB`.
fn size(bytes: u64) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// Reads the file at `path` (symbolic links followed) as bytes, within `kind`'s limit.
pub fn read(path: &Path, kind: Kind) -> Result<Vec<u8>, ReadError> {
    let error = |problem| ReadError {
        path: path.to_path_buf(),
        kind,
        problem,
    };
    check(path, kind)?;
    let file = open(path).map_err(|e| error(Problem::Io(e)))?;
    // The path may have been replaced between the check and the open: look again at what was
    // opened (non-blocking, so a FIFO swapped in did not block the open).
    let meta = file.metadata().map_err(|e| error(Problem::Io(e)))?;
    acceptable(&meta, kind).map_err(error)?;
    if is_pipe(&meta) {
        return read_pipe(&file, kind.limit(), kind.pipe_wait()).map_err(error);
    }
    let mut bytes = Vec::with_capacity(meta.len().min(kind.limit()) as usize);
    file.take(kind.limit() + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| error(Problem::Io(e)))?;
    if bytes.len() as u64 > kind.limit() {
        return Err(error(Problem::TooLarge(kind.limit())));
    }
    Ok(bytes)
}

/// [`read`] as UTF-8 text.
pub fn read_text(path: &Path, kind: Kind) -> Result<String, ReadError> {
    String::from_utf8(read(path, kind)?).map_err(|_| ReadError {
        path: path.to_path_buf(),
        kind,
        problem: Problem::NotText,
    })
}

/// Checks, without opening it, that `path` is a regular file within `kind`'s limit, for files
/// another library reads (certificate bundles).
pub fn check(path: &Path, kind: Kind) -> Result<(), ReadError> {
    let error = |problem| ReadError {
        path: path.to_path_buf(),
        kind,
        problem,
    };
    let meta = std::fs::metadata(path).map_err(|e| error(Problem::Io(e)))?;
    acceptable(&meta, kind).map_err(error)
}

fn acceptable(meta: &Metadata, kind: Kind) -> Result<(), Problem> {
    if kind.reads_pipes() && is_pipe(meta) {
        return Ok(());
    }
    if !meta.is_file() {
        return Err(Problem::NotAFile(file_type(meta)));
    }
    if meta.len() > kind.limit() {
        return Err(Problem::TooLarge(kind.limit()));
    }
    Ok(())
}

#[cfg(unix)]
fn is_pipe(meta: &Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_fifo()
}

#[cfg(not(unix))]
fn is_pipe(_meta: &Metadata) -> bool {
    false
}

/// How long a pipe's writer may take to write and close it (`--sign-key-file <(vault read …)`):
/// one that never closes (`(echo key; sleep 600) | mallcheck run --sign-key-file /dev/stdin`)
/// held a run before it sent anything.
pub const PIPE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a captured response piped to `validate` may take to arrive whole.
pub const CAPTURE_PIPE_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Reads a pipe opened without blocking to its end, within `limit` bytes and `wait`. A FIFO
/// no writer has opened yet reads as empty at once: it is then waited for, once, until a writer
/// comes (and writes, or closes it) within `wait` (`mkfifo f; (sleep 1; curl … > f) &
/// mallcheck validate … f` read an empty body).
#[cfg(unix)]
fn read_pipe(file: &File, limit: u64, wait: std::time::Duration) -> Result<Vec<u8>, Problem> {
    use std::os::fd::AsRawFd;
    let deadline = std::time::Instant::now() + wait;
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut reader = file;
    let mut waited_for_a_writer = false;
    loop {
        match reader.read(&mut chunk) {
            // Linux reports a hang-up only once a writer has come and gone, so the poll below
            // waits for one; after it, an empty read is the end.
            Ok(0) if bytes.is_empty() && !waited_for_a_writer => waited_for_a_writer = true,
            Ok(0) => return Ok(bytes),
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if bytes.len() as u64 > limit {
                    return Err(Problem::TooLarge(limit));
                }
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Problem::Io(e)),
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(Problem::Io(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "its writer did not finish within {} s (a pipe is read to its end)",
                    wait.as_secs()
                ),
            )));
        }
        let mut poll = libc::pollfd {
            fd: reader.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
        // SAFETY: one pollfd of a descriptor this function's caller owns and keeps open.
        match unsafe { libc::poll(&mut poll, 1, ms) } {
            0 if bytes.is_empty() => {
                return Err(Problem::Io(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "nothing came through it within {} s (is anything writing to it?)",
                        wait.as_secs()
                    ),
                )));
            }
            n if n < 0 => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(Problem::Io(e));
                }
            }
            _ => {}
        }
    }
}

#[cfg(not(unix))]
fn read_pipe(file: &File, limit: u64, _wait: std::time::Duration) -> Result<Vec<u8>, Problem> {
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(Problem::Io)?;
    if bytes.len() as u64 > limit {
        return Err(Problem::TooLarge(limit));
    }
    Ok(bytes)
}

/// What a file that is not a regular file is, in a message.
pub fn file_type(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return DIRECTORY;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

#[cfg(unix)]
fn open(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open(path: &Path) -> io::Result<File> {
    File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_file_within_its_limit_and_refuses_a_larger_one() {
        let dir = tempfile::tempdir().unwrap();
        let fine = dir.path().join("key");
        std::fs::write(&fine, "k".repeat(64 * 1024)).unwrap();
        assert_eq!(read(&fine, Kind::SignKey).unwrap().len(), 64 * 1024);
        std::fs::write(&fine, "k".repeat(64 * 1024 + 1)).unwrap();
        let err = read(&fine, Kind::SignKey).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot read the signing key file {}: it is larger than 64 KiB, the limit for a signing key file",
                fine.display()
            )
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn devices_fifos_and_directories_are_refused_without_blocking() {
        let err = read(Path::new("/dev/zero"), Kind::MergeInput).unwrap_err();
        assert!(
            err.to_string().contains("it is a character device"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.yaml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read(&fifo, Kind::CaseFile).unwrap_err();
        assert!(err.to_string().contains("a FIFO"), "{err}");
        let err = read(dir.path(), Kind::Profile).unwrap_err();
        assert!(err.to_string().contains("a directory"), "{err}");
        // A key may come through a pipe, whose writer may come after the read began.
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(200));
                std::fs::write(&fifo, "key").unwrap();
            })
        };
        assert_eq!(read(&fifo, Kind::SignKey).unwrap(), b"key");
        writer.join().unwrap();
        let err = read(Path::new("/dev/zero"), Kind::SignKey).unwrap_err();
        assert!(
            err.to_string().contains("it is a character device"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_whose_writer_never_closes_is_given_up_after_the_wait() {
        use std::io::Write as _;
        use std::os::fd::FromRawFd;
        let mut fds = [0; 2];
        // SAFETY: a fresh pipe; each end is owned by one File below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (reader, mut writer) =
            unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
        unsafe { libc::fcntl(fds[0], libc::F_SETFL, libc::O_NONBLOCK) };
        writer.write_all(b"k3y-written\n").unwrap();
        let started = std::time::Instant::now();
        let err = read_pipe(&reader, 64, std::time::Duration::from_millis(300)).unwrap_err();
        assert!(
            matches!(&err, Problem::Io(e) if e.kind() == io::ErrorKind::TimedOut),
            "{err:?}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        // Closed, it is read to its end at once.
        drop(writer);
        assert_eq!(
            read_pipe(&reader, 64, std::time::Duration::from_secs(5)).unwrap(),
            b""
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_of_unknown_size_is_cut_at_the_limit() {
        // /proc files report a size of 0 and are read to the limit only.
        let bytes = read(Path::new("/proc/self/maps"), Kind::SignKey);
        match bytes {
            Ok(b) => assert!(b.len() as u64 <= Kind::SignKey.limit()),
            Err(e) => assert!(matches!(e.problem, Problem::TooLarge(_)), "{e}"),
        }
    }
}
