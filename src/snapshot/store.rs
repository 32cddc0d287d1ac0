//! Snapshot files on disk: pending `<name>.snap.new` next to accepted `<name>.snap`, listed,
//! accepted (a rename) or rejected (a delete), and read back as JSON.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::local_file::{self, Kind};

/// Extension of an accepted snapshot.
pub const SNAP_EXT: &str = "snap";
/// Suffix of a pending snapshot file.
pub const PENDING_SUFFIX: &str = ".snap.new";

/// A pending snapshot and the accepted file it would replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// Snapshot name (file name without `.snap.new`).
    pub name: String,
    /// The pending file.
    pub new: PathBuf,
    /// The accepted file (may not exist yet).
    pub accepted: PathBuf,
}

impl Pending {
    /// Whether an accepted snapshot exists (false: a new snapshot).
    pub fn replaces_existing(&self) -> bool {
        self.accepted.is_file()
    }
}

/// Why a snapshot file could not be used.
#[derive(Debug, thiserror::Error)]
#[error("cannot read snapshot {}: {message}", path.display())]
pub struct StoreError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

/// Why the recorded snapshot `name` in `dir` cannot be compared, when one is there: not a file,
/// not a snapshot insta can read (a merge conflict, a truncated file, random bytes), or a body
/// that is not JSON. insta itself takes such a file for no snapshot at all, writes a new
/// pending one and passes; a hand-broken baseline is the user's to mend, not the service's.
pub fn broken_baseline(dir: &Path, name: &str) -> Option<String> {
    let path = snap_path(dir, name);
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() {
        return Some("it is not a file".to_string());
    }
    // Without the `---` header mallcheck writes, insta reads the file as its legacy format and
    // prints advice for Cargo projects (`cargo insta test --force-update-snapshots`) on stderr.
    let mut head = [0u8; 3];
    let headed = std::fs::File::open(&path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok()
        && &head == b"---";
    // insta's own words are left out: they may quote the file, which the user may have filled
    // with anything, and this text reaches the console of `diff` as it is.
    let snapshot = headed
        .then(|| insta::Snapshot::from_file(&path).ok())
        .flatten();
    let Some(snapshot) = snapshot else {
        return Some(
            "it is not a snapshot file (a `---` header, then the recorded JSON)".to_string(),
        );
    };
    let Some(text) = snapshot.contents().as_text() else {
        return Some("it holds a binary snapshot, not JSON".to_string());
    };
    serde_json::from_str::<serde::de::IgnoredAny>(&text.to_string())
        .err()
        .map(|e| format!("its body is not JSON ({e})"))
}

/// The accepted snapshot file of `name` in `dir`.
pub fn snap_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.{SNAP_EXT}"))
}

/// Every pending snapshot in `dir`, sorted by name; a missing directory has none.
pub fn pending(dir: &Path) -> io::Result<Vec<Pending>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry?;
        let file_name = entry.file_name();
        let Some(name) = file_name
            .to_str()
            .and_then(|n| n.strip_suffix(PENDING_SUFFIX))
        else {
            continue;
        };
        if name.is_empty() || !entry.file_type()?.is_file() {
            continue;
        }
        out.push(Pending {
            name: name.to_string(),
            new: entry.path(),
            accepted: snap_path(dir, name),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Checks that every snapshot file in `dir` (accepted and pending, links followed) is a
/// regular file within [`Kind::Snapshot`]'s limit, without opening any: insta reads them
/// whole, and a FIFO would block it. An unreadable directory is left to the run to report.
pub fn check_files(dir: &Path) -> Result<(), local_file::ReadError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.ends_with(PENDING_SUFFIX) || name.ends_with(&format!(".{SNAP_EXT}")) {
            check_file(&entry.path())?;
        }
    }
    Ok(())
}

/// Checks one snapshot file as [`check_files`] does; a missing one is fine (not recorded yet),
/// and a directory in its place is left to the write to report.
pub fn check_file(path: &Path) -> Result<(), local_file::ReadError> {
    match local_file::check(path, Kind::Snapshot) {
        Err(e) if e.is_not_found() || e.is_directory() => Ok(()),
        other => other,
    }
}

/// Accepts a pending snapshot: `<name>.snap.new` becomes `<name>.snap`.
pub fn accept(p: &Pending) -> io::Result<()> {
    std::fs::rename(&p.new, &p.accepted)
}

/// Rejects a pending snapshot: `<name>.snap.new` is deleted.
pub fn reject(p: &Pending) -> io::Result<()> {
    std::fs::remove_file(&p.new)
}

/// The contents of a snapshot file (the text after its `---` header).
pub fn read_contents(path: &Path) -> Result<String, StoreError> {
    let err = |message: String| StoreError {
        path: path.to_path_buf(),
        message,
    };
    let text = local_file::read_text(path, Kind::Snapshot).map_err(|e| err(e.reason()))?;
    contents_of(&text)
        .map(str::to_string)
        .ok_or_else(|| err("no `---` header closing line".to_string()))
}

/// The contents of a snapshot file, parsed as JSON.
pub fn read_json(path: &Path) -> Result<Value, StoreError> {
    let text = read_contents(path)?;
    serde_json::from_str(&text).map_err(|e| StoreError {
        path: path.to_path_buf(),
        message: format!("the contents are not JSON: {e}"),
    })
}

/// The part of a `.snap` text after the metadata block `---\n…\n---\n` (the whole text when it
/// has no metadata block).
pub fn contents_of(text: &str) -> Option<&str> {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Some(text.trim_end());
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        if line.trim_end() == "---" {
            return Some(rest[offset..].trim_end());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNAP: &str = "---\nsource: src/runner/snapshot/engine.rs\ndescription: mall-list\n---\n{\n  \"a\": 1\n}\n";

    #[test]
    fn contents_follow_the_metadata_block() {
        assert_eq!(contents_of(SNAP), Some("{\n  \"a\": 1\n}"));
        assert_eq!(contents_of("{}\n"), Some("{}"));
        assert_eq!(contents_of("---\nsource: x\n"), None);
    }

    #[test]
    fn pending_lists_only_snap_new_files_sorted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.snap.new"), SNAP).unwrap();
        std::fs::write(dir.path().join("a.snap.new"), SNAP).unwrap();
        std::fs::write(dir.path().join("a.snap"), SNAP).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        let p = pending(dir.path()).unwrap();
        let names: Vec<&str> = p.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(p[0].replaces_existing());
        assert!(!p[1].replaces_existing());
    }

    #[test]
    fn missing_directory_has_no_pending_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        assert!(pending(&dir.path().join("nope")).unwrap().is_empty());
    }

    #[test]
    fn accept_renames_and_reject_deletes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.snap.new"), SNAP).unwrap();
        std::fs::write(dir.path().join("b.snap.new"), SNAP).unwrap();
        let p = pending(dir.path()).unwrap();
        accept(&p[0]).unwrap();
        reject(&p[1]).unwrap();
        assert!(dir.path().join("a.snap").is_file());
        assert!(!dir.path().join("a.snap.new").exists());
        assert!(!dir.path().join("b.snap.new").exists());
        assert!(!dir.path().join("b.snap").exists());
    }

    #[test]
    fn read_json_parses_the_contents_and_reports_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("g.snap");
        std::fs::write(&good, SNAP).unwrap();
        assert_eq!(read_json(&good).unwrap(), serde_json::json!({"a": 1}));
        let bad = dir.path().join("b.snap");
        std::fs::write(&bad, "---\nx: 1\n---\nnot json\n").unwrap();
        assert!(
            read_json(&bad)
                .unwrap_err()
                .to_string()
                .contains("not JSON")
        );
    }
}
