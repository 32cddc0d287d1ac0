//! Case files on disk: files and directories (searched recursively) read and decoded, every
//! problem collected before anything is parsed further.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{ParseContext, parse_file};
use crate::case::model::{CaseFile, limits};
use crate::case::node;
use crate::diag::Diagnostic;
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
        Some(dir) => load_paths(&[dir], cx),
        None => load_shipped(cx),
    }
}

/// Parses the shipped case files, named `<embedded>/cases/NAME` in diagnostics and reports.
pub fn load_shipped(cx: &ParseContext) -> Result<Vec<CaseFile>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut diags = Vec::new();
    for (name, text) in shipped::CASE_FILES {
        match parse_file(&shipped::embedded_case_path(name), text.to_string(), cx) {
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
    let mut out = Vec::new();
    for file in files {
        if !seen.insert(file.clone()) {
            continue;
        }
        match read_text(&file) {
            Ok(text) => match parse_file(&file, text, cx) {
                Ok(case_file) => out.push(case_file),
                Err(mut d) => diags.append(&mut d),
            },
            Err(d) => diags.push(d),
        }
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

/// Reads a case file as text (at most [`limits::MAX_FILE_BYTES`]; see [`node::decode`]).
fn read_text(path: &Path) -> Result<String, Diagnostic> {
    let cannot =
        |e: std::io::Error| Diagnostic::for_path(path, format!("cannot read case file: {e}"));
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(limits::MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(cannot)?;
    if bytes.len() as u64 > limits::MAX_FILE_BYTES {
        return Err(Diagnostic::for_path(
            path,
            format!(
                "the file is larger than {} MiB, the limit for a case file",
                limits::MAX_FILE_BYTES / (1024 * 1024)
            ),
        )
        .with_help("split it into several case files"));
    }
    node::decode(bytes).map_err(|e| {
        let file = Arc::new(SourceFile {
            path: path.to_path_buf(),
            text: e.text,
        });
        Diagnostic::at(&file, e.span, e.message).with_help("save the case file as UTF-8")
    })
}

fn collect_files(path: &Path, files: &mut Vec<PathBuf>, diags: &mut Vec<Diagnostic>) {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => {
            diags.push(Diagnostic::for_path(
                path,
                format!("cannot read case path: {e}"),
            ));
            return;
        }
    };
    if !meta.is_dir() {
        files.push(path.to_path_buf());
        return;
    }
    let mut found = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
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
            if p.is_dir() {
                pending.push(p);
            } else if p
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| CASE_EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)))
            {
                found.push(p);
            }
        }
    }
    if found.is_empty() {
        diags.push(
            Diagnostic::for_path(path, "no case files in this directory")
                .with_help("case files end in .yaml, .yml or .json"),
        );
    }
    found.sort();
    files.append(&mut found);
}
