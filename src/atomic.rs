//! Writes report files atomically: a temporary file in the same directory, renamed into place,
//! so a reader (or a crash) never sees a half-written report. Every file is scrubbed of the
//! run's secrets on the way (the last defence behind the redacted exchange records).
//!
//! A path that names a stream (a device, a FIFO or a socket: `--junit /dev/null`,
//! `--json /dev/stdout`, a shell's process substitution) is written through and never replaced:
//! renaming a file over it would put a regular file where `/dev/null` was (run as root, that
//! broke every later reader of `/dev/null` on the machine). A symbolic link to a file is
//! followed: the file it names is replaced and the link stays.

use std::io::{self, Write};
use std::path::Path;

use crate::redact::Redactor;

/// Replaces `path` with `bytes` atomically, creating parent directories; every secret
/// `redactor` (the session's) knows is replaced (by `&lt;redacted&gt;` in HTML and XML files).
pub fn write(path: &Path, bytes: &[u8], redactor: &Redactor) -> io::Result<()> {
    let markup = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["html", "htm", "xml"].contains(&e.to_ascii_lowercase().as_str()));
    let bytes = redactor.scrub_bytes(bytes, markup);
    if is_stream(path) {
        return open_stream(path)?.write_all(&bytes);
    }
    let resolved = followed(path);
    let path = resolved.as_path();
    // Refused by name: the rename over a directory says "Is a directory", or for the working
    // directory "Device or resource busy".
    if path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!("{} is a directory, not a file", path.display()),
        ));
    }
    let dir = parent(path);
    create_dir(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    // A failed write (a full disk, EFBIG past `ulimit -f`) returns here and the temporary file
    // is removed when `tmp` drops: the report in place stays the last complete one.
    // Through the file itself: its errors do not name the temporary file, which is gone.
    tmp.as_file_mut().write_all(&bytes)?;
    // On disk before the rename, so that a crash never leaves a renamed, empty report.
    tmp.as_file().sync_all()?;
    // Reports are CI artifacts: readable by others, like any file the user's umask allows.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Checks, before anything is sent, that [`write`] can create `path`: its parent directories
/// are created, a file standing where a directory must be is named, a directory in place of the
/// file is refused, and a temporary file is created (and removed) next to it. The error is a
/// lowercase fragment that reads after "cannot write PATH: ".
pub fn prepare(path: &Path) -> io::Result<()> {
    // Nothing to create for a stream (and opening a FIFO here would wait for its reader).
    if is_stream(path) {
        return Ok(());
    }
    let resolved = followed(path);
    let path = resolved.as_path();
    if path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory",
        ));
    }
    let dir = parent(path);
    create_dir(dir)?;
    tempfile::NamedTempFile::new_in(dir).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot create a file in {}: {e}", dir.display()),
        )
    })?;
    Ok(())
}

/// Creates `dir` and its parents, naming a file that stands where one of them must be (the
/// OS says only "File exists"). The error is a lowercase fragment that reads after "cannot
/// write PATH: ".
pub fn create_dir(dir: &Path) -> io::Result<()> {
    if let Some(file) = dir
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .find(|a| a.exists() && !a.is_dir())
    {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{} is a file, not a directory", file.display()),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot create the directory {}: {e}", dir.display()),
        )
    })
}

/// Whether `path` (its links followed) is neither a regular file nor a directory: a device, a
/// FIFO or a socket, which [`write`] writes through instead of replacing.
pub fn is_stream(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// How long a write into a FIFO waits for its reader to open it.
const FIFO_READER_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Opens a stream to write into, waiting at most [`FIFO_READER_WAIT`] for a FIFO's reader:
/// without one, the write fails ("a FIFO without a reader") instead of hanging the command.
fn open_stream(path: &Path) -> io::Result<std::fs::File> {
    open_stream_within(path, FIFO_READER_WAIT)
}

#[cfg(unix)]
fn open_stream_within(path: &Path, wait: std::time::Duration) -> io::Result<std::fs::File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let started = std::time::Instant::now();
    // Opened without blocking: a FIFO nobody reads yet fails with ENXIO, and is tried again.
    let file = loop {
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path);
        match opened {
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                if started.elapsed() >= wait {
                    return Err(io::Error::new(e.kind(), "a FIFO without a reader"));
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => break other?,
        }
    };
    let fd = file.as_raw_fd();
    // The write itself waits for the reader as usual. SAFETY: `fd` is the open descriptor
    // `file` owns for the duration of both calls; only this open's status flags change.
    let cleared = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
    };
    if cleared {
        Ok(file)
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(unix))]
fn open_stream_within(path: &Path, _wait: std::time::Duration) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new().write(true).open(path)
}

/// `path`, or the file its symbolic link names (the link itself stays in place); a dangling
/// link is replaced like a missing file.
fn followed(path: &Path) -> std::path::PathBuf {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    match is_link.then(|| std::fs::canonicalize(path)) {
        Some(Ok(target)) => target,
        _ => path.to_path_buf(),
    }
}

/// The directory a file is written in (`.` for a bare file name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn write_replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/report.xml");
        super::write(&p, b"one", &crate::redact::Redactor::new()).unwrap();
        super::write(&p, b"two", &crate::redact::Redactor::new()).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);
    }

    /// A FIFO in a temporary directory and a thread reading it to the end.
    #[cfg(unix)]
    fn fifo_with_reader(
        dir: &std::path::Path,
    ) -> (std::path::PathBuf, std::thread::JoinHandle<Vec<u8>>) {
        use std::os::unix::ffi::OsStrExt;
        let fifo = dir.join("report.fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
        let reading = fifo.clone();
        let reader = std::thread::spawn(move || std::fs::read(&reading).unwrap());
        (fifo, reader)
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_through_and_stays_a_fifo() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let (fifo, reader) = fifo_with_reader(dir.path());
        super::prepare(&fifo).unwrap();
        let redactor = crate::redact::Redactor::new();
        super::write(&fifo, b"<testsuites/>", &redactor).unwrap();
        // Checked before the reader is joined: a replaced FIFO leaves the reader waiting.
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "the FIFO was replaced: {kind:?}");
        assert_eq!(reader.join().unwrap(), b"<testsuites/>");
        // Nothing was created beside it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_without_a_reader_is_an_error_after_the_wait_not_a_hang() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("nobody-reads.fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
        // In a thread: an open that waits for a reader fails the test instead of hanging it.
        let (done, waiting) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let wait = std::time::Duration::from_millis(300);
            let opened = super::open_stream_within(&fifo, wait);
            let _ = done.send(opened.map(drop).map_err(|e| e.to_string()));
        });
        let written = waiting
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the open returned instead of waiting for a reader");
        assert_eq!(written, Err("a FIFO without a reader".to_string()));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_file_stays_a_link_and_its_file_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("real/junit.xml");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "old").unwrap();
        let link = dir.path().join("junit.xml");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        super::prepare(&link).unwrap();
        super::write(&link, b"new", &crate::redact::Redactor::new()).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
    }

    #[test]
    fn prepare_names_a_file_in_the_way_and_refuses_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("notadir");
        std::fs::write(&file, "x").unwrap();
        let err = super::prepare(&file.join("sub/junit.xml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{} is a file, not a directory", file.display())
        );
        let err = super::prepare(dir.path()).unwrap_err();
        assert_eq!(err.to_string(), "it is a directory");
        let fine = dir.path().join("a/b/report.json");
        super::prepare(&fine).unwrap();
        assert!(fine.parent().unwrap().is_dir() && !fine.exists());
        assert_eq!(
            std::fs::read_dir(fine.parent().unwrap()).unwrap().count(),
            0
        );
    }
}
