//! Subcommands: wiring only. Each file turns parsed arguments into library calls.

pub mod bench;
pub mod checks;
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

use std::path::Path;

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
/// (see [`crate::atomic::prepare`]): one error per report that cannot.
pub(crate) fn report_problems(reports: &[(ReportKind, &Path)]) -> Vec<UsageError> {
    reports
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
        .collect()
}

/// [`report_problems`] as one result: `Err` with every problem when there is one.
pub(crate) fn check_reports(reports: &[(ReportKind, &Path)]) -> Result<(), UsageError> {
    UsageError::from_all(report_problems(reports))
}
