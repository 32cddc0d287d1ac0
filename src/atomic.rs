//! Writes report files atomically: a temporary file in the same directory, renamed into place,
//! so a reader (or a crash) never sees a half-written report. Every file is scrubbed of the
//! run's secrets on the way (the last defence behind the redacted exchange records).

use std::io::{self, Write};
use std::path::Path;

/// Replaces `path` with `bytes` atomically, creating parent directories; every secret the run
/// knows is replaced (by `&lt;redacted&gt;` in HTML and XML files).
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let markup = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["html", "htm", "xml"].contains(&e.to_ascii_lowercase().as_str()));
    let bytes = crate::redact::global().scrub_bytes(bytes, markup);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(&bytes)?;
    tmp.flush()?;
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

#[cfg(test)]
mod tests {
    #[test]
    fn write_replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/report.xml");
        super::write(&p, b"one").unwrap();
        super::write(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);
    }
}
