//! `mallcheck snapshots`: list, review, accept or reject pending snapshots, with no Cargo project
//! around them; and the snapshot set-up of `run`.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use crate::cli::{RunArgs, SnapshotAction, SnapshotArg, SnapshotsArgs};
use crate::error::UsageError;
use crate::exit;
use crate::redact::Redactor;
use crate::settings;
use crate::snapshot::engine;
use crate::snapshot::render;
use crate::snapshot::store::{self, Pending};
use crate::snapshot::target::{self, TargetSelector};
use crate::snapshot::{SnapshotMode, SnapshotOptions, Snapshotter, ci_from_env};

/// The snapshot behaviour of `run` (`None` with `--snapshots off`), configuring insta for the
/// process. Call it before the async runtime or any other thread starts: it sets environment
/// variables.
pub fn snapshotter(args: &RunArgs, redactor: &Redactor) -> Result<Option<Snapshotter>, UsageError> {
    let mode = match args.snapshots {
        SnapshotArg::Off => return Ok(None),
        SnapshotArg::Check => SnapshotMode::Check,
        // `--ci` writes nothing and fails on a missing snapshot; `update` writes every one:
        // together, a gate would record what it exists to compare and pass.
        SnapshotArg::Update if args.ci => {
            return Err(UsageError::setting(
                "--ci",
                "cannot go with --snapshots update: --ci writes no snapshot, update writes them all",
                Some(
                    "record snapshots with `mallcheck run --snapshots update` and commit them; gate with `--ci`",
                ),
            ));
        }
        SnapshotArg::Update => SnapshotMode::Update,
    };
    let root = working_dir()?;
    // Only `--ci` makes a missing snapshot fail: with `CI=true` alone (every pipeline sets it)
    // a gate against a target with no recorded snapshot yet would go red for that reason only.
    let options = SnapshotOptions {
        mode,
        dir: args.snapshot_dir.clone(),
        root,
        ci: args.ci,
        ci_env: !args.ci && ci_from_env(std::env::var("CI").ok().as_deref()),
    };
    // SAFETY: `run` calls this on the main thread before it starts the runtime; no other
    // thread exists yet.
    unsafe { engine::prepare_process(options.update_mode(), &options.root) };
    Ok(Some(Snapshotter::new(options, redactor)))
}

/// The working directory, insta's workspace root.
pub(crate) fn working_dir() -> Result<std::path::PathBuf, UsageError> {
    std::env::current_dir().map_err(|source| UsageError::Io {
        path: ".".into(),
        source,
    })
}

/// The snapshot directory of `run`'s target (`<dir>/<target>/`, see [`target`]).
pub fn target_name(
    args: &RunArgs,
    profile: Option<&str>,
    base_url: Option<&str>,
) -> Result<String, UsageError> {
    let selector = TargetSelector {
        explicit: args.snapshot_target.as_deref(),
        profile,
        base_url,
    };
    let flag = if args.snapshot_target.is_some() {
        "--snapshot-target"
    } else {
        "--profile"
    };
    selector
        .name()
        .map_err(|e| UsageError::setting(flag, e.to_string(), None))
}

/// The directories `mallcheck snapshots` works on: the selected target's, or, with no
/// selection, the root itself (snapshots recorded before per-target directories) and every
/// target directory in it.
fn directories(args: &SnapshotsArgs) -> Result<Vec<PathBuf>, UsageError> {
    let (profile, base_url) =
        settings::snapshot_selection(args.profile.as_deref(), args.base_url.as_deref());
    let named = if let Some(name) = &args.target {
        Some(
            target::explicit_name(name)
                .map_err(|e| UsageError::setting("--target", e.to_string(), None))?,
        )
    } else if let Some(profile) = &profile {
        Some(
            target::from_profile(profile)
                .map_err(|e| UsageError::setting("--profile", e.to_string(), None))?,
        )
    } else {
        base_url.as_deref().map(target::from_base_url)
    };
    if let Some(name) = named {
        return Ok(vec![target::dir(&args.dir, &name)]);
    }
    let mut dirs = vec![args.dir.clone()];
    match std::fs::read_dir(&args.dir) {
        Ok(entries) => {
            let mut sub: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect();
            sub.sort();
            dirs.extend(sub);
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(UsageError::Io {
                path: args.dir.clone(),
                source,
            });
        }
    }
    Ok(dirs)
}

/// Handles pending snapshots.
pub fn snapshots(args: SnapshotsArgs) -> Result<i32, UsageError> {
    let dirs = directories(&args)?;
    let mut pending = Vec::new();
    for dir in &dirs {
        pending.extend(store::pending(dir).map_err(|source| UsageError::Io {
            path: dir.clone(),
            source,
        })?);
    }
    let shown = match dirs.as_slice() {
        [one] => one.clone(),
        _ => args.dir.clone(),
    };
    let io_err = |source: io::Error| UsageError::Io {
        path: shown.clone(),
        source,
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let result = match args.action {
        SnapshotAction::Pending => list(&mut out, &shown, &pending),
        SnapshotAction::Accept => apply(&mut out, &pending, "accepted", store::accept),
        SnapshotAction::Reject => apply(&mut out, &pending, "rejected", store::reject),
        SnapshotAction::Review => {
            let interactive = io::stdin().is_terminal() && io::stdout().is_terminal();
            if interactive {
                review_interactive(&mut out, &mut io::stdin().lock(), &pending)
            } else {
                review(&mut out, &pending)
            }
        }
    };
    result.map_err(io_err)?;
    Ok(exit::PASS)
}

fn list(out: &mut dyn Write, dir: &Path, pending: &[Pending]) -> io::Result<()> {
    if pending.is_empty() {
        return writeln!(out, "no pending snapshot in {}", dir.display());
    }
    for p in pending {
        let kind = if p.replaces_existing() {
            "changed"
        } else {
            "new"
        };
        writeln!(out, "{} ({kind})", p.new.display())?;
    }
    writeln!(out, "{} pending", pending.len())
}

fn apply(
    out: &mut dyn Write,
    pending: &[Pending],
    verb: &str,
    action: fn(&Pending) -> io::Result<()>,
) -> io::Result<()> {
    for p in pending {
        action(p)?;
        writeln!(out, "{verb} {}", p.new.display())?;
    }
    writeln!(out, "{} {verb}", pending.len())
}

/// The diff of one pending snapshot against the accepted one (or its whole text when new), its
/// control and bidi characters escaped: a snapshot holds what a service sent.
fn describe(p: &Pending) -> String {
    crate::diag::escape_controls_by_line(&describe_raw(p))
}

fn describe_raw(p: &Pending) -> String {
    let new = match store::read_contents(&p.new) {
        Ok(t) => t,
        Err(e) => return format!("{e}"),
    };
    if !p.replaces_existing() {
        return format!("new snapshot:\n{new}");
    }
    match store::read_contents(&p.accepted) {
        Ok(old) if old == new => {
            "same contents as the accepted snapshot (only the header differs)".to_string()
        }
        Ok(old) => render::explain(
            &old,
            &new,
            &p.accepted.display().to_string(),
            &p.new.display().to_string(),
        ),
        Err(e) => format!("{e}\nnew contents:\n{new}"),
    }
}

fn review(out: &mut dyn Write, pending: &[Pending]) -> io::Result<()> {
    if pending.is_empty() {
        return writeln!(out, "no pending snapshot");
    }
    for p in pending {
        writeln!(out, "── {} ──", p.new.display())?;
        writeln!(out, "{}\n", describe(p))?;
    }
    writeln!(
        out,
        "{} pending: `mallcheck snapshots accept` keeps them, `mallcheck snapshots reject` drops them",
        pending.len()
    )
}

/// Asks for each pending snapshot: accept, reject or skip.
fn review_interactive(
    out: &mut dyn Write,
    input: &mut dyn BufRead,
    pending: &[Pending],
) -> io::Result<()> {
    if pending.is_empty() {
        return writeln!(out, "no pending snapshot");
    }
    let (mut accepted, mut rejected, mut skipped) = (0, 0, 0);
    for p in pending {
        writeln!(out, "── {} ──", p.new.display())?;
        writeln!(out, "{}\n", describe(p))?;
        loop {
            write!(out, "[a]ccept, [r]eject, [s]kip? ")?;
            out.flush()?;
            let mut line = String::new();
            if input.read_line(&mut line)? == 0 {
                writeln!(out)?;
                return writeln!(
                    out,
                    "{accepted} accepted, {rejected} rejected, {} skipped",
                    pending.len() - accepted - rejected
                );
            }
            match line.trim() {
                "a" | "accept" => {
                    store::accept(p)?;
                    accepted += 1;
                }
                "r" | "reject" => {
                    store::reject(p)?;
                    rejected += 1;
                }
                "s" | "skip" | "" => skipped += 1,
                _ => continue,
            }
            break;
        }
    }
    writeln!(
        out,
        "{accepted} accepted, {rejected} rejected, {skipped} skipped"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(contents: &str) -> String {
        format!("---\nsource: x\n---\n{contents}\n")
    }

    #[test]
    fn review_shows_the_changed_field_of_a_pending_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.snap"), snap("{\n  \"state\": 1\n}")).unwrap();
        std::fs::write(dir.path().join("a.snap.new"), snap("{\n  \"state\": 3\n}")).unwrap();
        std::fs::write(dir.path().join("b.snap.new"), snap("{}")).unwrap();
        let pending = store::pending(dir.path()).unwrap();
        let mut out = Vec::new();
        review(&mut out, &pending).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("/state: value changed: 1 → 3"), "{text}");
        assert!(text.contains("+  \"state\": 3"), "{text}");
        assert!(text.contains("new snapshot:\n{}"), "{text}");
        assert!(text.contains("2 pending"), "{text}");
    }

    #[test]
    fn review_shows_escape_sequences_of_a_pending_snapshot_escaped() {
        let dir = tempfile::tempdir().unwrap();
        let hostile = "{\n  \"msg\": \"\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}txt\"\n}";
        std::fs::write(dir.path().join("a.snap"), snap("{}")).unwrap();
        std::fs::write(dir.path().join("a.snap.new"), snap(hostile)).unwrap();
        std::fs::write(dir.path().join("b.snap.new"), snap(hostile)).unwrap();
        let pending = store::pending(dir.path()).unwrap();
        let mut out = Vec::new();
        review(&mut out, &pending).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            crate::diag::first_unsafe(&text.replace('\n', "")),
            None,
            "{text:?}"
        );
        assert!(text.contains("\\u{1b}[2J\\u{202e}txt"), "{text}");
    }

    #[test]
    fn interactive_review_accepts_rejects_and_skips_by_answer() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["a", "b", "c"] {
            std::fs::write(dir.path().join(format!("{n}.snap.new")), snap("{}")).unwrap();
        }
        let pending = store::pending(dir.path()).unwrap();
        let mut out = Vec::new();
        let mut answers: &[u8] = b"a\nx\nr\ns\n";
        review_interactive(&mut out, &mut answers, &pending).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("1 accepted, 1 rejected, 1 skipped"), "{text}");
        assert!(dir.path().join("a.snap").is_file());
        assert!(!dir.path().join("b.snap.new").exists());
        assert!(dir.path().join("c.snap.new").is_file());
    }

    fn args(dir: &Path, target: Option<&str>, base_url: Option<&str>) -> SnapshotsArgs {
        SnapshotsArgs {
            action: SnapshotAction::Pending,
            dir: dir.to_path_buf(),
            target: target.map(str::to_string),
            base_url: base_url.map(str::to_string),
            profile: None,
        }
    }

    #[test]
    fn no_selection_means_the_root_and_every_target_directory() {
        let dir = tempfile::tempdir().unwrap();
        for t in ["localhost", "embedded"] {
            std::fs::create_dir(dir.path().join(t)).unwrap();
        }
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        let dirs = directories(&args(dir.path(), None, None)).unwrap();
        assert_eq!(
            dirs,
            [
                dir.path().to_path_buf(),
                dir.path().join("embedded"),
                dir.path().join("localhost")
            ]
        );
        let one = directories(&args(dir.path(), None, Some("http://127.0.0.1:9"))).unwrap();
        assert_eq!(one, [dir.path().join("localhost")]);
        let named = directories(&args(dir.path(), Some("embedded"), Some("http://x"))).unwrap();
        assert_eq!(named, [dir.path().join("embedded")]);
        assert!(directories(&args(dir.path(), Some("../up"), None)).is_err());
    }

    #[test]
    fn listing_an_empty_directory_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let mut out = Vec::new();
        list(&mut out, dir.path(), &[]).unwrap();
        assert!(
            String::from_utf8(out)
                .unwrap()
                .starts_with("no pending snapshot")
        );
    }
}
