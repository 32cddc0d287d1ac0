//! One run at a time per report file. Two runs that share a report path (two CI jobs in one
//! workspace, a rerun started before the first ended) interleave their writes: the run that
//! failed could leave the other's green JUnit under its own name (h27c F3). Each report path
//! gets a lock file beside it (`.NAME.lock`, holding the pid of the run that holds it), locked
//! for the whole run; a second run that finds one held stops before it removes or writes
//! anything, a usage error naming the report and the other run.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::UsageError;

/// The locks a run holds on its report paths, released when dropped (or when the process ends,
/// whatever way it ends: the OS releases an advisory lock with its file descriptor).
#[derive(Debug)]
pub struct ReportLocks {
    held: Vec<(PathBuf, File)>,
}

impl Drop for ReportLocks {
    /// Removes each lock file, then releases it, so that no lock file stays beside the
    /// reports. (A run that opened one in the instant before it went, and takes its lock
    /// after, holds a lock file no later run finds: it would take three runs started together.)
    fn drop(&mut self) {
        for (path, file) in self.held.drain(..) {
            let _ = std::fs::remove_file(&path);
            drop(file);
        }
    }
}

/// Whether a path is named as a lock file is ([`lock_path`]).
fn is_lock_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.') && n.ends_with(".lock") && n.len() > 6)
}

/// The lock file of a report path: a dot file beside it.
fn lock_path(report: &Path) -> Option<PathBuf> {
    let name = report.file_name()?;
    let mut lock = std::ffi::OsString::from(".");
    lock.push(name);
    lock.push(".lock");
    Some(report.with_file_name(lock))
}

/// Locks every report path that names a file (a stream, `-` or `/dev/stdout`, has nothing to
/// lock). A lock file whose directory cannot be made is passed over: the check of the report
/// paths says why it cannot be written.
pub fn acquire(reports: &[PathBuf]) -> Result<ReportLocks, UsageError> {
    let mut held: Vec<(PathBuf, File)> = Vec::new();
    let mut busy = Vec::new();
    // A report written where a lock file lives would replace another run's lock (h29 F14).
    if let Some(report) = reports.iter().find(|r| is_lock_name(r)) {
        return Err(UsageError::setting(
            "reports",
            format!(
                "{} is named as mallcheck's lock files are (`.NAME.lock`, beside each report)",
                report.display()
            ),
            Some("give the report another name"),
        ));
    }
    for report in reports {
        if crate::atomic::is_stream(report) {
            continue;
        }
        // Beside the file written: a link to another run's report is that report.
        let Some(lock) = lock_path(&link_target(report)) else {
            continue;
        };
        if let Some(dir) = lock.parent().filter(|d| !d.as_os_str().is_empty())
            && crate::atomic::create_dir(dir).is_err()
        {
            continue;
        }
        // Two spellings of one path (`sub/../out.xml`, `out.xml`) are one lock: the run holds
        // it already (the check of the report paths says they name one file).
        let same = |other: &Path| same_file(other, &lock);
        if held.iter().any(|(other, _)| same(other)) {
            continue;
        }
        let Ok(mut file) = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock)
        else {
            continue;
        };
        match file.try_lock() {
            Ok(()) => {
                // The holder's pid, for the message a second run gives.
                let _ = file.set_len(0);
                let _ = file.seek(SeekFrom::Start(0));
                let _ = write!(file, "{}", std::process::id());
                held.push((lock, file));
            }
            Err(TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                let who = if pid.chars().all(|c| c.is_ascii_digit()) && !pid.is_empty() {
                    format!("another mallcheck run (pid {pid})")
                } else {
                    "another mallcheck run".to_string()
                };
                busy.push(UsageError::setting(
                    "reports",
                    format!(
                        "{who} is writing {}: two runs sharing a report would leave one \
                         run's verdict under the other's name",
                        report.display()
                    ),
                    Some(
                        "give each run reports of its own (--junit, --json, --markdown, \
                         --html), or start this one when the other has ended",
                    ),
                ));
            }
            // A file system without locks: the run goes on as before.
            Err(TryLockError::Error(_)) => {}
        }
    }
    // Dropped on a refusal: the lock files this run made go again.
    let locks = ReportLocks { held };
    if busy.is_empty() {
        Ok(locks)
    } else {
        Err(UsageError::ReportsBusy(Box::new(
            UsageError::from_all(busy).expect_err("at least one"),
        )))
    }
}

/// Where `path` leads when it is a symbolic link (its target need not exist yet: a run
/// writes its report at the end), else `path`.
fn link_target(path: &Path) -> PathBuf {
    let mut path = path.to_path_buf();
    // A chain of links, bounded as the OS bounds one.
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&path) else {
            break;
        };
        path = match path.parent() {
            Some(dir) if target.is_relative() => dir.join(target),
            _ => target,
        };
    }
    path
}

/// Whether two existing paths name one file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_of_a_report_is_refused_naming_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let junit = dir.path().join("reports/junit.xml");
        let json = dir.path().join("reports/report.json");
        let first = acquire(&[junit.clone(), PathBuf::from("-")]).expect("free");
        assert!(dir.path().join("reports/.junit.xml.lock").is_file());
        let refused = acquire(&[json.clone(), junit.clone()]).expect_err("junit.xml is held");
        assert!(refused.keeps_reports(), "the other run's reports stay");
        let text = refused.render(false);
        assert!(
            text.contains(&format!(
                "another mallcheck run (pid {}) is writing {}",
                std::process::id(),
                junit.display()
            )),
            "{text}"
        );
        assert!(!text.contains("report.json"), "{text}");
        // One path spelt twice is one lock.
        let twice = [
            junit.clone(),
            dir.path().join("reports/../reports/junit.xml"),
        ];
        assert!(acquire(&twice).is_err(), "still held by the first");
        drop(first);
        assert!(
            !dir.path().join("reports/.junit.xml.lock").exists(),
            "no lock file stays"
        );
        // A report named as a lock file is refused: it would replace a lock.
        let lock_named = dir.path().join("reports/.junit.xml.lock");
        assert!(acquire(&[lock_named]).is_err());
        let both = acquire(&twice).expect("free once the first run ended");
        drop(both);
        acquire(&[json, junit.clone()]).expect("free");
        // A link to a report held by another run is that report (h29 F1).
        let link = dir.path().join("link.xml");
        std::os::unix::fs::symlink(&junit, &link).unwrap();
        let held = acquire(std::slice::from_ref(&junit)).expect("free");
        assert!(acquire(&[link]).is_err(), "the link's target is held");
        drop(held);
    }
}
