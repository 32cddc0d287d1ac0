//! Case files on disk: files and directories (searched recursively) read and decoded, every
//! problem collected before anything is parsed further.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use super::{ParseContext, parse_file};
use crate::case::model::{CaseFile, limits};
use crate::case::node;
use crate::diag::Diagnostic;
use crate::local_file::{self, Kind, Problem};
use crate::shipped;
use crate::verdict::source::SourceFile;

/// Extensions of case files found when a directory is given.
const CASE_EXTENSIONS: &[&str] = &["yaml", "yml", "json"];

/// Loads the case files named by `paths`; with none, those of `./cases` when the working
/// directory has one, else the case files shipped in the binary ([`crate::shipped`]).
pub fn load_paths_or_shipped(
    paths: &[PathBuf],
    cx: &ParseContext,
) -> Result<Vec<CaseFile>, Vec<Diagnostic>> {
    if !paths.is_empty() {
        return load_paths(paths, cx);
    }
    match shipped::local_cases_dir() {
        Some(dir) if holds_cases_of_its_own(&dir) => load_paths(&[dir], cx),
        // A `cases/` that `mallcheck fuzz` made to save its regressions in is no suite of the
        // project's: the shipped cases run, and the regressions with them (else a fuzz run
        // would leave the next `run` with one case and a green verdict).
        Some(dir) => {
            let mut files = load_shipped(cx)?;
            files.extend(load_paths(&[dir], cx)?);
            Ok(files)
        }
        None => load_shipped(cx),
    }
}

/// Where `mallcheck fuzz` saves its regressions by default, under `cases/`.
const FUZZ_REGRESSIONS: &str = "fuzz-regressions";

/// Whether `dir` holds a case file outside its `fuzz-regressions/` (or holds none at all,
/// which `load_paths` reports).
fn holds_cases_of_its_own(dir: &Path) -> bool {
    let (mut files, mut diags) = (Vec::new(), Vec::new());
    collect_files(dir, &mut files, &mut diags);
    let regressions = dir.join(FUZZ_REGRESSIONS);
    files.is_empty() || files.iter().any(|f| !f.starts_with(&regressions))
}

/// Parses the shipped case files, named `<shipped>/cases/NAME` in diagnostics and reports.
pub fn load_shipped(cx: &ParseContext) -> Result<Vec<CaseFile>, Vec<Diagnostic>> {
    let parsed = parse_each(shipped::CASE_FILES.to_vec(), &|(name, text)| {
        parse_file(&shipped::embedded_case_path(name), text.to_string(), cx)
    });
    gather(parsed)
}

/// Loads every case file named by `paths` (files, or directories searched recursively for
/// `*.yaml`, `*.yml` and `*.json`, in sorted order) and returns all of them or every problem of
/// every file. Unreadable paths and directories without case files are problems too.
pub fn load_paths(paths: &[PathBuf], cx: &ParseContext) -> Result<Vec<CaseFile>, Vec<Diagnostic>> {
    let mut files = Vec::new();
    let mut diags = Vec::new();
    for path in paths {
        collect_files(path, &mut files, &mut diags);
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|file| seen.insert(file.clone()));
    let parsed = parse_each(files, &|file| {
        let text = read_text(&file).map_err(|d| vec![d])?;
        parse_file(&file, text, cx)
    });
    match gather(parsed) {
        Ok(out) if diags.is_empty() => Ok(out),
        Ok(_) => Err(diags),
        Err(mut more) => {
            diags.append(&mut more);
            Err(diags)
        }
    }
}

type Parsed = Result<CaseFile, Vec<Diagnostic>>;

/// Every file parsed, or every problem of every file, in the order of the files.
fn gather(parsed: Vec<Parsed>) -> Result<Vec<CaseFile>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut diags = Vec::new();
    for p in parsed {
        match p {
            Ok(case_file) => out.push(case_file),
            Err(mut d) => diags.append(&mut d),
        }
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

/// `parse` of each item, in the items' order, on up to one thread per core: case files are
/// parsed before anything is sent, so a suite of several files waits on the largest one
/// instead of on all of them in turn.
fn parse_each<T: Send>(items: Vec<T>, parse: &(dyn Fn(T) -> Parsed + Sync)) -> Vec<Parsed> {
    let len = items.len();
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(len);
    if workers <= 1 {
        return items.into_iter().map(parse).collect();
    }
    // Workers take the next file from one queue; each result goes to its file's place.
    let queue = Mutex::new(items.into_iter().enumerate());
    let results: Vec<OnceLock<Parsed>> = (0..len).map(|_| OnceLock::new()).collect();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
                    let Some((i, item)) = next else { break };
                    let _ = results[i].set(parse(item));
                }
            });
        }
    });
    results
        .into_iter()
        .map(|r| r.into_inner().expect("each item is parsed by one worker"))
        .collect()
}

/// Keeps a run's secrets (the signing key, the sign command) out of the diagnostics of case
/// files: a file that holds one literally never shows it, nor any piece of it (see
/// [`Diagnostic::hiding_secrets`]).
pub fn hiding_secrets(diags: Vec<Diagnostic>, secrets: &[&str]) -> Vec<Diagnostic> {
    diags
        .into_iter()
        .map(|d| d.hiding_secrets(secrets))
        .collect()
}

/// Reads a case file as text (at most [`limits::MAX_FILE_BYTES`]; see [`node::decode`]).
fn read_text(path: &Path) -> Result<String, Diagnostic> {
    let bytes = local_file::read(path, Kind::CaseFile).map_err(|e| match e.problem {
        Problem::TooLarge(_) => Diagnostic::for_path(
            path,
            format!(
                "the file is larger than {} MiB, the limit for a case file",
                limits::MAX_FILE_BYTES / (1024 * 1024)
            ),
        )
        .with_help("split it into several case files"),
        _ => Diagnostic::for_path(path, format!("cannot read case file: {}", e.reason())),
    })?;
    node::decode(bytes).map_err(|e| {
        let file = Arc::new(SourceFile {
            path: path.to_path_buf(),
            text: e.text,
        });
        Diagnostic::at(&file, e.span, e.message).with_help("save the case file as UTF-8")
    })
}

/// Most directories below one case path walked; a deeper tree is refused (a link farm).
const MAX_DEPTH: usize = 32;

/// Collects the case files of `path`: the file itself, or the case files of the directory,
/// searched recursively in sorted order. Symbolic links are followed within the directory
/// tree and the working directory; a link that loops, or that leaves both (to `/proc`, to a
/// credentials file), is refused with a problem naming it, and its target is never read.
fn collect_files(path: &Path, files: &mut Vec<PathBuf>, diags: &mut Vec<Diagnostic>) {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => {
            diags.push(Diagnostic::for_path(
                path,
                format!("cannot read case path: {}", link_problem(&e)),
            ));
            return;
        }
    };
    if !meta.is_dir() {
        files.push(path.to_path_buf());
        return;
    }
    let root = match std::fs::canonicalize(path) {
        Ok(r) => r,
        Err(e) => {
            diags.push(Diagnostic::for_path(
                path,
                format!("cannot read case path: {e}"),
            ));
            return;
        }
    };
    let cwd = std::env::current_dir().and_then(std::fs::canonicalize).ok();
    let inside =
        |real: &Path| real.starts_with(&root) || cwd.as_ref().is_some_and(|c| real.starts_with(c));
    let mut found = Vec::new();
    // (directory as shown, its real path, the real paths of the directories above it)
    let mut pending = vec![(path.to_path_buf(), root.clone(), vec![])];
    let mut walked = std::collections::HashSet::new();
    while let Some((dir, real_dir, above)) = pending.pop() {
        if !walked.insert(real_dir.clone()) {
            continue;
        }
        let unreadable =
            |e: std::io::Error| Diagnostic::for_path(&dir, format!("cannot read directory: {e}"));
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                diags.push(unreadable(e));
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    diags.push(unreadable(e));
                    continue;
                }
            };
            let p = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let is_case = has_case_extension(&p);
            let link = entry.file_type().is_ok_and(|t| t.is_symlink());
            let meta = match std::fs::metadata(&p) {
                Ok(m) => m,
                // A dangling link that is no case file is skipped, as any other file; a loop
                // never is.
                Err(e) if is_case || is_loop(&e) => {
                    diags.push(Diagnostic::for_path(
                        &p,
                        format!("cannot read case path: {}", link_problem(&e)),
                    ));
                    continue;
                }
                Err(_) => continue,
            };
            if !(meta.is_dir() || is_case) {
                continue;
            }
            let real = if link {
                match std::fs::canonicalize(&p) {
                    Ok(real) => real,
                    Err(e) => {
                        diags.push(Diagnostic::for_path(
                            &p,
                            format!("cannot read case path: {}", link_problem(&e)),
                        ));
                        continue;
                    }
                }
            } else {
                real_dir.join(entry.file_name())
            };
            if link && !inside(&real) {
                diags.push(
                    Diagnostic::for_path(
                        &p,
                        format!(
                            "a symbolic link to {}, outside the case directory and the working directory: not read",
                            real.display()
                        ),
                    )
                    .with_help("copy the file into the case directory, or link to one inside the project"),
                );
                continue;
            }
            if meta.is_dir() {
                if real == real_dir || above.contains(&real) || real_dir.starts_with(&real) {
                    diags.push(
                        Diagnostic::for_path(
                            &p,
                            format!(
                                "a symbolic link loop: it leads back to {}, a directory above it",
                                real.display()
                            ),
                        )
                        .with_help(
                            "remove the link, or give the directory it leads to with --cases",
                        ),
                    );
                    continue;
                }
                if above.len() >= MAX_DEPTH {
                    diags.push(Diagnostic::for_path(
                        &p,
                        format!("more than {MAX_DEPTH} directories deep: not searched"),
                    ));
                    continue;
                }
                let mut deeper = above.clone();
                deeper.push(real_dir.clone());
                pending.push((p, real, deeper));
            } else {
                found.push(p);
            }
        }
    }
    if found.is_empty() && diags.is_empty() {
        diags.push(
            Diagnostic::for_path(path, "no case files in this directory")
                .with_help("case files end in .yaml, .yml or .json"),
        );
    }
    found.sort();
    files.append(&mut found);
}

fn has_case_extension(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| CASE_EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// Whether an error of following a path is a symbolic link loop (ELOOP).
fn is_loop(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// An error of following a path, saying "symbolic link loop" where it is one.
fn link_problem(e: &std::io::Error) -> String {
    if is_loop(e) {
        "a symbolic link loop (the links lead to each other)".to_string()
    } else {
        e.to_string()
    }
}
