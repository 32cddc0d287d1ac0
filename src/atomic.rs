//! Writes report files atomically: a temporary file in the same directory, renamed into place,
//! so a reader (or a crash) never sees a half-written report. Every file is scrubbed of the
//! run's secrets on the way (the last defence behind the redacted exchange records).

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
    let dir = parent(path);
    std::fs::create_dir_all(dir)?;
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
    if path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory",
        ));
    }
    let dir = parent(path);
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
    })?;
    tempfile::NamedTempFile::new_in(dir).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot create a file in {}: {e}", dir.display()),
        )
    })?;
    Ok(())
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
