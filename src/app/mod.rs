//! Subcommands: wiring only. Each file turns parsed arguments into library calls.

pub mod bench;
pub mod checks;
pub mod command_line;
pub mod diff;
pub mod fuzz;
pub mod init;
mod lines;
pub mod merge;
pub mod openapi;
pub mod run;
pub mod serve;
pub mod shell;
mod signals;
pub mod snapshots;
pub mod validate;

use std::path::{Path, PathBuf};

use crate::cli::{Cli, Command};
use crate::error::UsageError;
use crate::redact::Redactor;
use crate::report::file::ReportKind;

/// Runs a parsed command line; Ok is the exit code, Err a usage error (exit 2). `redactor` is
/// the command's: its session registers every secret it resolves there, and the caller scrubs
/// an error with it, so even an error raised halfway through resolving hides what was
/// registered before it.
pub fn main(cli: Cli, redactor: &Redactor) -> Result<i32, UsageError> {
    signals::ignore_file_size_limit_signal();
    register_environment_secrets(redactor);
    dispatch(cli, redactor)
}

/// Registers the secrets of this process's environment with the command's redactor before any
/// command runs, whichever it is: the signing key, and every `MALLCHECK_*` variable whose name
/// says it carries a credential (`MALLCHECK_API_TOKEN`, ...). A command that resolves no
/// session (`validate`, `diff` of saved reports) may still show what a service echoed of them.
fn register_environment_secrets(redactor: &Redactor) {
    for (name, value) in std::env::vars_os().filter_map(|(n, v)| Some((n.into_string().ok()?, v))) {
        let Some(rest) = name.strip_prefix("MALLCHECK_") else {
            continue;
        };
        // A mall's signature identifies a mall (§2.2): no credential.
        let secret = name == crate::settings::SIGN_KEY_VAR
            || (crate::redact::is_secret_header_name(rest)
                && !rest.ends_with("_FILE")
                && name != crate::service::discover::MALL_SIGNATURE_VAR);
        if secret && let Some(value) = value.to_str() {
            redactor.add_secret(value.trim());
        }
    }
}

/// The reports of an earlier run that `run` removed as it started (see
/// [`remove_reports_at_start`]), for the note of a run that then stops at a usage error.
static REMOVED_AT_START: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// Removes the reports of an earlier run before anything else: a run that ends before writing
/// its own (a usage error, a kill during the preflight, a crash) must not leave another run's
/// verdict for a pipeline to read. Said only if the run then stops at a usage error.
pub(crate) fn remove_reports_at_start(paths: &[std::path::PathBuf]) {
    let removed = remove_reports(paths);
    *REMOVED_AT_START
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = removed;
}

/// Where a command line's run writes its reports (none for the other commands): what
/// [`remove_earlier_reports`] clears when the run stops at a usage error.
pub fn report_paths(cli: &Cli) -> Vec<std::path::PathBuf> {
    match &cli.command {
        Command::Run(args) => args.output.paths().into_iter().map(Into::into).collect(),
        _ => Vec::new(),
    }
}

/// The reports of an earlier run, left where a run that stopped at a usage error (exit 2,
/// before any request) would have written its own, are removed: a pipeline that publishes the
/// reports whatever the exit code (`if: always()`) must not publish an earlier green run as
/// this one's. Only regular files go; the removal is said on standard error.
pub fn remove_earlier_reports(paths: &[std::path::PathBuf]) {
    let mut removed = remove_reports(paths);
    let at_start = std::mem::take(
        &mut *REMOVED_AT_START
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    if removed.is_empty() {
        removed = at_start;
    }
    if !removed.is_empty() {
        crate::say::stderr_line!(
            "note: removed the reports of an earlier run ({removed}): this run did not start"
        );
    }
}

/// Removes the reports at `paths` that are regular files holding a mallcheck report (a file of
/// the user's named by mistake, `--json notes.txt`, is never touched); says which, for a note.
pub(crate) fn remove_reports(paths: &[std::path::PathBuf]) -> String {
    let removed: Vec<String> = paths
        .iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .filter(|p| is_own_report(p))
        .filter(|p| std::fs::remove_file(p).is_ok())
        .map(|p| p.display().to_string())
        .collect();
    crate::diag::escape_controls(&removed.join(", ")).into_owned()
}

/// Whether the file at `path` begins as one of mallcheck's reports does: the JUnit root named
/// `mallcheck …`, the JSON report's `"tool": "mallcheck"`, the Markdown summary's heading, the
/// HTML report's generator.
fn is_own_report(path: &std::path::Path) -> bool {
    use std::io::Read as _;
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head));
    if read.is_err() {
        return false;
    }
    let head = String::from_utf8_lossy(&head);
    [
        "<testsuites name=\"mallcheck ",
        "\"tool\": \"mallcheck\"",
        "<meta name=\"generator\" content=\"mallcheck ",
    ]
    .iter()
    .any(|mark| head.contains(mark))
        || head.starts_with("## mallcheck: ")
}

fn dispatch(cli: Cli, redactor: &Redactor) -> Result<i32, UsageError> {
    if matches!(
        cli.command,
        Command::Run(_) | Command::Fuzz(_) | Command::Diff(_)
    ) {
        // Before the HTTP client reads them whole: see `tls::check_cert_env`.
        crate::tls::check_cert_env()?;
    }
    match cli.command {
        Command::Run(args) => run::run(*args, redactor),
        Command::List(args) => run::list(*args, redactor),
        Command::Serve(args) => serve::serve(args),
        Command::Checks(args) => checks::checks(&args),
        Command::Fuzz(args) => fuzz::fuzz(*args, redactor),
        Command::Snapshots(args) => snapshots::snapshots(args),
        Command::Diff(args) => diff::diff(*args, redactor),
        Command::Merge(args) => merge::merge(&args, redactor),
        Command::Openapi(args) => openapi::openapi(&args, redactor),
        Command::Validate(args) => validate::validate(&args, redactor),
        Command::Bench(args) => bench::bench(args, redactor),
        Command::Init(args) => init::init(&args),
        Command::Completions(args) => shell::completions(&args),
        Command::Man(args) => shell::man(&args),
    }
}

/// A multi-threaded tokio runtime for a subcommand.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, UsageError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            UsageError::setting(
                "runtime",
                format!("cannot start the async runtime: {e}"),
                None,
            )
        })
}

/// Checks, before anything is sent, that every report can be written where the user asked
/// (see [`crate::atomic::prepare`]): one error per report that cannot, and one per pair of
/// reports that name the same file (the second written would replace the first without a word:
/// `--json out.xml --junit out.xml` left a pipeline a JSON document where it read JUnit).
pub(crate) fn report_problems(reports: &[(ReportKind, &Path)]) -> Vec<UsageError> {
    let mut problems: Vec<UsageError> = reports
        .iter()
        .filter_map(|&(kind, path)| {
            crate::atomic::prepare(path)
                .err()
                .map(|source| UsageError::Report {
                    what: kind.what(),
                    path: path.to_path_buf(),
                    source,
                })
        })
        .collect();
    let files: Vec<Option<PathBuf>> = reports.iter().map(|(_, p)| report_file(p)).collect();
    for (i, (kind, path)) in reports.iter().enumerate() {
        let Some(file) = &files[i] else { continue };
        if let Some(j) = files[..i].iter().position(|f| f.as_ref() == Some(file)) {
            problems.push(UsageError::setting(
                "reports",
                format!(
                    "{} and {} name the same file ({} and {}): one would replace the other",
                    reports[j].0.what(),
                    kind.what(),
                    reports[j].1.display(),
                    path.display()
                ),
                Some("give each report a path of its own"),
            ));
        }
    }
    problems
}

/// The file a report path names, to compare two reports' paths: the canonical path of the
/// file, or of its directory joined with its name when the file is not there yet. None for a
/// stream (a device, FIFO or socket: `/dev/null` may take several reports) and for a path
/// whose directory cannot be resolved (then `prepare` has said why).
fn report_file(path: &Path) -> Option<PathBuf> {
    if crate::atomic::is_stream(path) {
        return None;
    }
    if let Ok(file) = std::fs::canonicalize(path) {
        return Some(file);
    }
    let name = path.file_name()?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(dir).ok()?.join(name))
}

/// [`report_problems`] as one result: `Err` with every problem when there is one.
pub(crate) fn check_reports(reports: &[(ReportKind, &Path)]) -> Result<(), UsageError> {
    UsageError::from_all(report_problems(reports))
}
