//! `mallcheck diff`: release verification. Each case with a snapshot recorded against the
//! baseline release is sent to the candidate and compared field by field; output: console,
//! JUnit and a Markdown summary for a pull-request comment. Exit 1 when a change is breaking,
//! 3 when the candidate could not be compared.

use std::path::{Path, PathBuf};

use super::lines::Lines;
use crate::atomic;
use crate::cli::DiffArgs;
use crate::error::UsageError;
use crate::exit;
use crate::redact::Redactor;
use crate::release::compare::{self, RESPONSE_SCHEMAS};
use crate::report::diff::{render_console, render_junit, render_markdown};
use crate::report::file::ReportKind;
use crate::report::style;
use crate::service::discover::Discovery;
use crate::session::Session;
use crate::settings::Flags;
use crate::snapshot::classify::Contract;
use crate::snapshot::engine::{self, UpdateMode};
use crate::snapshot::target::{self, TargetSelector};

/// Compares a candidate with the baseline snapshots.
pub fn diff(args: DiffArgs, redactor: &Redactor) -> Result<i32, UsageError> {
    let root = super::snapshots::working_dir()?;
    // SAFETY: the first thing the command does, on the main thread, before the runtime (or any
    // other thread) starts.
    unsafe { engine::prepare_process(UpdateMode::Nothing, &root) };
    let session = Session::open(&Flags::from(&args.target), None, redactor)?;
    let schemas = session.schemas();
    let contract = Contract::from_schema_documents(
        RESPONSE_SCHEMAS.iter().filter_map(|n| schemas.document(n)),
    );
    // The cursor convention of a walk snapshot, as `run` takes it (MALLCHECK_CURSOR).
    let cursor = session
        .settings()
        .cursor
        .as_deref()
        .map(super::run::parse_cursor)
        .transpose()?
        .unwrap_or_default();
    let files = super::run::load_cases(&args.cases, &session)?;
    let warnings = session.check_vars(&files)?;
    super::run::print_warnings(&session, &warnings);
    super::check_reports(&[
        (ReportKind::Markdown, &args.markdown),
        (ReportKind::Junit, &args.junit),
    ])?;
    let shown = baseline_dir(
        &args,
        &root,
        session.settings().profile_name.as_deref(),
        session.target().base_url(),
    )?;
    let baseline = root.join(&shown);
    let (work, without) = compare::plan(&files, &baseline);
    if work.is_empty() {
        return Err(UsageError::setting(
            "--baseline",
            format!(
                "no baseline snapshot in {} for the cases with `snapshot:`",
                shown.display()
            ),
            Some(
                "record them against the baseline release (mallcheck run --snapshots update --base-url URL) and name it: --baseline-target URL",
            ),
        ));
    }
    let rt = super::runtime()?;
    let outcome = rt.block_on(session.with_service(async |base_url| {
        let client = session.client(base_url)?;
        let discovery = Discovery::new(session.settings().first_page_body(10));
        let results = compare::compare_all(
            &client, &discovery, &work, &baseline, &shown, &contract, schemas, &cursor,
        )
        .await;
        Ok::<_, String>((base_url.to_string(), results))
    }));
    let outcome = outcome.and_then(|r| r);
    let (base_url, results) = match outcome {
        Ok(r) => r,
        Err(e) => {
            crate::say::stderr_line!("error: {}", redactor.scrub(&e));
            return Ok(exit::COULD_NOT_TEST);
        }
    };
    // The candidate as every report names it: `embedded` for the reference server.
    let base_url = if session.target().is_embedded() {
        format!(
            "{} (the reference server at {base_url})",
            session.target().name()
        )
    } else {
        base_url
    };
    let color = style::use_color(args.color.into());
    let console = render_console(&results, &shown, &base_url, &without, color);
    // On standard error when a report goes to the stream standard output is.
    Lines::beside(&[&args.markdown, &args.junit]).print(&console);
    let markdown = render_markdown(&results, &shown, &base_url, &without);
    let mut code = compare::exit_code(&results);
    for (kind, path, bytes) in [
        (ReportKind::Markdown, &args.markdown, Ok(markdown)),
        (ReportKind::Junit, &args.junit, render_junit(&results)),
    ] {
        let written = bytes.and_then(|b| atomic::write(path, b.as_bytes(), redactor));
        if let Err(e) = written {
            crate::say::stderr_line!("error: {}", kind.write_error(path, &e));
            code = exit::combine(code, exit::FAILURE);
        }
    }
    Ok(code)
}

/// The baseline's snapshot directory (as shown, relative to `root` unless absolute):
/// `<baseline>/<target>/`, where the target is `--baseline-target` or else the candidate's own;
/// when that directory does not exist and `<baseline>` itself holds snapshots (one target's
/// directory given directly, or snapshots recorded before per-target directories), `<baseline>`.
fn baseline_dir(
    args: &DiffArgs,
    root: &Path,
    profile: Option<&str>,
    base_url: Option<&str>,
) -> Result<PathBuf, UsageError> {
    let name = match &args.baseline_target {
        Some(name) => target::explicit_name(name)
            .map_err(|e| UsageError::setting("--baseline-target", e.to_string(), None))?,
        None => TargetSelector {
            explicit: None,
            profile,
            base_url,
        }
        .name()
        .map_err(|e| UsageError::setting("--profile", e.to_string(), None))?,
    };
    let per_target = target::dir(&args.baseline, &name);
    if args.baseline_target.is_none()
        && !root.join(&per_target).is_dir()
        && holds_snapshots(&root.join(&args.baseline))
    {
        return Ok(args.baseline.clone());
    }
    Ok(per_target)
}

fn holds_snapshots(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x == crate::snapshot::store::SNAP_EXT)
        })
    })
}
