//! `mallcheck run`: wiring. Opens the [`Session`] (settings, redactor, schemas, target), loads
//! the cases, hands the session's parts to the runner and the sinks, picks the exit code.

use std::path::PathBuf;
use std::sync::Arc;

use super::lines::Lines;
use crate::case::model::{CaseFile, CaseKind, CursorRule};
use crate::case::parse::ParseContext;
use crate::case::parse::files::{hiding_secrets, load_paths_or_shipped};
use crate::case::select;
use crate::cli::RunArgs;
use crate::error::UsageError;
use crate::exit;
use crate::redact::Redactor;
use crate::release::compare::RESPONSE_SCHEMAS;
use crate::report::FanOut;
use crate::report::console::{Console, Verbosity};
use crate::report::file::{FileReport, Render, ReportKind, Shard};
use crate::report::junit::Junit;
use crate::report::style;
use crate::report::{html, json, markdown};
use crate::runner::{PlannedCase, Preflight, RunOptions, Runner, preflight};
use crate::service::discover::Discovery;
use crate::session::Session;
use crate::settings::Flags;
use crate::snapshot::classify::Contract;
use crate::spec::schemas::SchemaSet;
use crate::verdict::event::CaseResult;
use crate::verdict::event::Event;

use super::signals::Stop;

/// Loads schemas (see [`SchemaSet::load_default`]).
pub fn load_schemas(dir: Option<&PathBuf>) -> Result<SchemaSet, UsageError> {
    Ok(SchemaSet::load_default(dir.map(PathBuf::as_path))?)
}

/// Parses every case file before anything is sent, with the session's variables and schemas:
/// those of `paths`, or with none those of `./cases`, or without one the shipped cases.
pub fn load_cases(paths: &[PathBuf], session: &Session) -> Result<Vec<CaseFile>, UsageError> {
    let names = session.schemas().names();
    let cx = ParseContext {
        vars: &session.settings().vars,
        schema_names: &names,
    };
    let secrets = session.settings().signer.secrets();
    let secrets: Vec<&str> = secrets.iter().map(|s| s.expose()).collect();
    load_paths_or_shipped(paths, &cx)
        .map_err(|diags| UsageError::Cases(hiding_secrets(diags, &secrets)))
}

/// Prints the warnings of opening a session (a short key, a stray `MALLCHECK_*` variable),
/// scrubbed.
pub(crate) fn print_warnings(session: &Session, more: &[String]) {
    for warning in session.settings().warnings.iter().chain(more) {
        // A path or a name in it is the user's text: a line break in it must not start a line
        // of its own (a CI's `::error` workflow command).
        let scrubbed = session.redactor().scrub(warning);
        crate::say::stderr_line!("warning: {}", crate::diag::escape_controls(&scrubbed));
    }
}

/// Parses `--shard K/N` into a 0-based index and a count.
fn parse_shard(text: &str) -> Result<(usize, usize), UsageError> {
    let bad = || {
        UsageError::setting(
            "--shard",
            format!("`{text}` is not K/N with 1 <= K <= N"),
            Some("e.g. --shard 2/3"),
        )
    };
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    if n as u64 > crate::report::merge::MAX_SHARDS {
        return Err(UsageError::setting(
            "--shard",
            format!(
                "`{text}`: a run is cut into at most {} shards",
                crate::report::merge::MAX_SHARDS
            ),
            None,
        ));
    }
    Ok((k - 1, n))
}

/// Parses `--cursor last-record:/POINTER` or `response:/POINTER`.
pub fn parse_cursor(text: &str) -> Result<CursorRule, UsageError> {
    let bad = || {
        UsageError::setting(
            "--cursor",
            format!("`{text}` is not last-record:/POINTER or response:/POINTER"),
            Some("e.g. --cursor response:/nextCursor"),
        )
    };
    let (kind, pointer) = text.split_once(':').ok_or_else(bad)?;
    // An empty pointer names the whole record or answer, never a cursor value: every walk
    // would end at its first page as the service's fault (`paging.endless`).
    if !pointer.starts_with('/') {
        return Err(bad());
    }
    match kind {
        "last-record" => Ok(CursorRule::LastRecord(pointer.to_string())),
        "response" => Ok(CursorRule::Response(pointer.to_string())),
        _ => Err(bad()),
    }
}

/// Everything `run` and `list` decide before sending anything.
struct Plan {
    session: Session,
    planned: Vec<PlannedCase>,
    cursor: Option<CursorRule>,
    /// `--shard K/N` as (K, N), 1-based.
    shard: Option<Shard>,
    /// Cases of the selection that would share a snapshot file, and names too long for one
    /// (a problem when the run takes snapshots).
    snapshot_problems: Vec<String>,
    /// The run's warnings, as printed (the reports carry them too).
    warnings: Vec<String>,
}

/// Validates flags, loads schemas and cases, applies `--filter` and `--shard`.
fn plan(args: &RunArgs, flags: Flags, redactor: &Redactor) -> Result<Plan, UsageError> {
    if args.walk_prefix == Some(0) {
        return Err(UsageError::setting(
            "--walk-prefix",
            "must be at least 1",
            Some("--exhaustive walks every size to the end"),
        ));
    }
    if args.max_pages == Some(0) {
        return Err(UsageError::setting(
            "--max-pages",
            "must be at least 1",
            None,
        ));
    }
    let shard = args.shard.as_deref().map(parse_shard).transpose()?;
    let session = Session::open(&flags, args.schemas.as_deref(), redactor)?;
    let cursor = session
        .settings()
        .cursor
        .as_deref()
        .map(parse_cursor)
        .transpose()?;
    let files = load_cases(&args.cases, &session)?;
    let mut warnings = session.check_vars(&files)?;
    print_warnings(&session, &warnings);
    let warnings: Vec<String> = {
        let mut all = session.settings().warnings.clone();
        all.append(&mut warnings);
        all
    };
    select::check_filters(&args.filter, &files)
        .map_err(|p| UsageError::setting("--filter", p.message, Some(&p.help)))?;
    let mut selected_cases: Vec<PlannedCase> = Vec::new();
    for file in files {
        let CaseFile { source, cases } = file;
        let probe = CaseFile {
            source: Arc::clone(&source),
            cases: vec![],
        };
        for case in cases {
            if select::selected(&args.filter, &probe, &case) {
                selected_cases.push(PlannedCase {
                    source: Arc::clone(&source),
                    case,
                });
            }
        }
    }
    let selected = selected_cases.len();
    let selection = selection_digest(&selected_cases);
    // Over the whole selection: two cases of one snapshot file may fall in different shards.
    let snapshot_problems = crate::snapshot::name_problems(&snapshot_cases(&selected_cases));
    // Round-robin over the selection in file order: every shard gets a fair share and the N
    // shards together cover every case exactly once.
    let planned: Vec<PlannedCase> = match shard {
        None => selected_cases,
        Some((k, n)) => selected_cases
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % n == k)
            .map(|(_, c)| c)
            .collect(),
    };
    if let Some((k, n)) = shard
        && n > selected
        && selected > 0
    {
        // More shards than cases: some shard holds none, and the flag to fix is --shard, not
        // --filter (every shard of the run must say so, not only the empty ones).
        return Err(UsageError::setting(
            "--shard",
            format!(
                "shard {}/{n}: {n} shards of a selection of {}, so some hold no case",
                k + 1,
                crate::report::text::plural(selected, "case")
            ),
            Some(&format!("split the run into at most {selected} shards")),
        ));
    }
    if planned.is_empty() {
        return Err(UsageError::setting(
            "--filter",
            "no case selected",
            Some("check --cases, --filter and --shard"),
        ));
    }
    let shard = shard.map(|(k, n)| Shard {
        index: k + 1,
        total: n,
        selected,
        selection,
    });
    Ok(Plan {
        session,
        planned,
        cursor,
        shard,
        snapshot_problems,
        warnings,
    })
}

/// The cases that take a snapshot, with where each is written.
fn snapshot_cases(cases: &[PlannedCase]) -> Vec<crate::snapshot::SnapshotCase<'_>> {
    cases
        .iter()
        .filter(|p| matches!(&p.case.kind, CaseKind::Exchange(x) if x.snapshot.is_some()))
        .map(|p| crate::snapshot::SnapshotCase {
            file: &p.source.path,
            name: &p.case.name.value,
            place: format!(
                "{}:{}",
                p.source.path.display(),
                p.source.line_col(p.case.name.span.start).0
            ),
        })
        .collect()
}

/// 16 hex digits of an MD5 of the selected cases' ids (file as reports give it, and name), in
/// order: shards of one run share it, shards of another selection (another commit, another
/// `--filter`) do not.
fn selection_digest(cases: &[PlannedCase]) -> String {
    use md5::{Digest, Md5};
    let mut hasher = Md5::new();
    for p in cases {
        hasher.update(p.source.path.display().to_string().as_bytes());
        hasher.update([0]);
        hasher.update(p.case.name.value.as_bytes());
        hasher.update([b'\n']);
    }
    hex::encode(&hasher.finalize()[..8])
}

/// `mallcheck list`: prints the cases `run` would run.
pub fn list(args: RunArgs, redactor: &Redactor) -> Result<i32, UsageError> {
    let flags = Flags {
        lists_only: true,
        ..Flags::from(&args)
    };
    let plan = plan(&args, flags, redactor)?;
    let mut out = String::new();
    for p in &plan.planned {
        let tags = if p.case.tags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", p.case.tags.join(", "))
        };
        out.push_str(&format!(
            "{} › {} ({}){tags}\n",
            p.source.path.display(),
            p.case.name.value,
            p.case.endpoint().name()
        ));
    }
    out.push_str(&format!(
        "{}\n",
        crate::report::text::plural(plan.planned.len(), "case")
    ));
    crate::say::stdout_document(&out).map_err(UsageError::stdout)?;
    Ok(exit::PASS)
}

/// Runs the suite.
pub fn run(args: RunArgs, redactor: &Redactor) -> Result<i32, UsageError> {
    let paths: Vec<std::path::PathBuf> = args.output.paths().into_iter().map(Into::into).collect();
    // Before anything is removed: another run's reports at these paths are left alone.
    let _locks = crate::report::lock::acquire(&paths)?;
    super::remove_reports_at_start(&paths);
    // Before any thread exists: it configures insta through environment variables.
    let snapshots = super::snapshots::snapshotter(&args, redactor)?;
    let Plan {
        mut session,
        planned,
        cursor,
        shard,
        snapshot_problems,
        warnings,
    } = plan(&args, Flags::from(&args), redactor)?;
    let schemas = Arc::clone(session.schemas());
    let snapshots = match snapshots {
        Some(s) => {
            // One directory per target: the embedded server's committed snapshots are never
            // compared with another service's responses.
            let name = super::snapshots::target_name(
                &args,
                session.settings().profile_name.as_deref(),
                session.target().base_url(),
            )?;
            let contract = Contract::from_schema_documents(
                RESPONSE_SCHEMAS.iter().filter_map(|n| schemas.document(n)),
            );
            Some(s.with_contract(contract).for_target(&name))
        }
        None => None,
    };
    // Every local problem before anything is sent, each named once. The snapshot directory is
    // relative to the working directory, insta's root.
    let out = &args.output;
    let mut problems = super::report_problems(&[
        (ReportKind::Junit, &out.junit),
        (ReportKind::Json, &out.json),
        (ReportKind::Markdown, &out.markdown),
        (ReportKind::Html, &out.html),
    ]);
    if snapshots.is_some() {
        problems.extend(
            snapshot_problems
                .into_iter()
                .map(|message| UsageError::setting("snapshots", message, None)),
        );
    }
    if let Some(s) = &snapshots
        && let Err(message) = crate::snapshot::check_dir(
            &s.options().dir,
            // Created only when nothing else is wrong.
            !s.options().ci && problems.is_empty(),
        )
    {
        problems.push(UsageError::setting(
            "--snapshot-dir",
            format!(
                "cannot keep snapshots in {}: {message}",
                s.options().dir.display()
            ),
            Some("name a directory (it is created when missing), or pass --snapshots off"),
        ));
    }
    UsageError::from_all(problems)?;
    let settings = session.settings_mut();
    let jobs = settings.jobs.unwrap_or(RunOptions::default().jobs);
    settings.client.retries = args.retries;
    settings.client.rate = settings.run_rate();
    let allow_empty_merchant = args.allow_empty_merchant || settings.allow_empty_merchant;
    let settings = session.settings();
    let color = style::use_color(args.output.color.into());
    let verbosity = if args.output.quiet {
        Verbosity::Quiet
    } else if args.output.verbose {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    };
    let options = RunOptions {
        jobs,
        strict: args.strict,
        robustness: args.robustness,
        max_pages: args.max_pages.unwrap_or(crate::runner::DEFAULT_MAX_PAGES),
        max_pages_cap: args.max_pages,
        sample: args.sample,
        exhaustive: settings.exhaustive,
        walk_prefix: settings
            .walk_prefix
            .unwrap_or(crate::runner::DEFAULT_WALK_PREFIX),
        sweep_budget: args
            .sweep_budget
            .or(settings.sweep_budget)
            .unwrap_or(crate::runner::DEFAULT_SWEEP_BUDGET),
        // A new sample each run, so that repeated runs cover the whole merchant over time.
        seed: args
            .seed
            .clone()
            .unwrap_or_else(|| format!("{:08x}", super::fuzz::clock_seed() as u32)),
        cursor,
        ..RunOptions::default()
    };
    let seed = options.seed.clone();
    let mut sinks = FanOut::default();
    let out = &args.output;
    let lines = Lines::beside(&[&out.junit, &out.json, &out.markdown, &out.html]);
    let console_on_stderr = lines == Lines::Stderr;
    let console = Console::new(lines.writer(), redactor, color, verbosity, args.strict);
    // A bar only on a terminal that can redraw it: CI logs, pipes and TERM=dumb get plain
    // lines and heartbeats (and so does a console on stderr, whose lines the bar would cut).
    let console = if !args.output.quiet && !console_on_stderr && style::stderr_can_redraw() {
        console.with_progress()
    } else {
        console
    };
    let console = if crate::report::actions::enabled() {
        console.with_github_actions()
    } else {
        console
    };
    sinks.push(Box::new(console));
    let embedded = session.target().is_embedded();
    sinks.push(Box::new(
        Junit::new(args.output.junit.clone(), args.strict, redactor)
            .with_run(shard.clone(), embedded)
            .with_warnings(warnings.clone()),
    ));
    let report = |kind: ReportKind, path: &std::path::PathBuf, render: Render| {
        Box::new(
            FileReport::new(kind, path.clone(), args.strict, render, redactor)
                .with_shard(shard.clone())
                .with_embedded(embedded)
                .with_warnings(warnings.clone()),
        )
    };
    sinks.push(report(ReportKind::Json, &args.output.json, json::render));
    sinks.push(report(ReportKind::Markdown, &args.output.markdown, |r| {
        Ok(markdown::render(r))
    }));
    sinks.push(report(ReportKind::Html, &args.output.html, |r| {
        Ok(html::render(r))
    }));

    let rt = super::runtime()?;
    let mut interrupted = false;
    let code = rt.block_on(async {
        // Before anything starts: a signal from here on stops the run and finishes the reports.
        let mut stop = Stop::listen();
        let no_preflight = args.no_preflight;
        // --max-time counts from here, the service started and nothing sent yet.
        let max_time = args.max_time.map(std::time::Duration::from_secs);
        let out_of_time = async move {
            match max_time {
                Some(t) => {
                    tokio::time::sleep(t).await;
                    format!("--max-time ({} s)", t.as_secs())
                }
                None => std::future::pending().await,
            }
        };
        let preflight_body = settings.first_page_body(10);
        let signer = settings.signer.kind_name();
        let appid = settings.identity.appid.clone();
        let response_cursor = match &options.cursor {
            Some(crate::case::model::CursorRule::Response(pointer)) => Some(pointer.clone()),
            _ => None,
        };
        let served = session
            .with_service(async |base_url| {
                let client = session.client(base_url)?;
                let runner = Arc::new(Runner {
                    client,
                    schemas: Arc::clone(&schemas),
                    options,
                    discovery: Discovery::new(settings.first_page_body(10))
                        .with_response_cursor(response_cursor.clone()),
                    snapshots: snapshots.clone(),
                    page_limit: Default::default(),
                    target: session.target().name(),
                });
                // A failed discovery of the target mall ends the run as an error (see
                // `preflight::discovery_stop`): one more case, before the run's end.
                let watched = Arc::clone(&runner);
                let mut discovery_stop = None;
                let mut discovery_note = None;
                let mut sampled = false;
                // Whether the reports have heard of the run: a signal or --max-time during the
                // preflight comes before the runner's start, and they must still name the
                // target and list the cases not run.
                let mut run_started = false;
                let planned_ids: Vec<_> =
                    planned.iter().enumerate().map(|(i, c)| c.id(i)).collect();
                let (base_url_shown, target_name) =
                    (runner.client.base_url().to_string(), runner.target.clone());
                // Cases the run adds at its end: the preflight's page when it broke the
                // contract, and the configured merchant's list read two ways.
                let preflight_broken: std::sync::Mutex<Option<Box<CaseResult>>> =
                    std::sync::Mutex::new(None);
                let planned_count = planned.len();
                let mut contract_broken = false;
                let mut on_event = |event: Event| {
                    run_started |= matches!(event, Event::RunStarted { .. });
                    let event = match event {
                        Event::RunFinished(summary) => {
                            let mut summary = summary.clone();
                            let mut added: Vec<CaseResult> = preflight_broken
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .take()
                                .map(|case| *case)
                                .into_iter()
                                .collect();
                            if watched.discovery.lists_two_ways() {
                                added.push(preflight::two_ways_case());
                            }
                            for (i, mut case) in added.into_iter().enumerate() {
                                // After the planned cases, as a merge of shards numbers it.
                                case.id.index = planned_count + i;
                                let case = Box::new(case.seal(redactor));
                                contract_broken = true;
                                summary.add(case.outcome);
                                sinks.on_event(&Event::CaseStarted(case.id.clone()));
                                sinks.on_event(&Event::CaseFinished(case));
                            }
                            Event::RunFinished(summary)
                        }
                        event => event,
                    };
                    if let Event::CaseFinished(r) = &event
                        && r.coverage.iter().any(|c| c.scope.contains("sampled (seed"))
                    {
                        sampled = true;
                    }
                    let empty = preflight::EmptyMerchant {
                        seen: watched.discovery.merchant_empty(),
                        no_products: watched.discovery.products_none(),
                        allowed: allow_empty_merchant,
                        unserved: !watched.client.served_a_signed_request(),
                        no_products_call: !watched.discovery.products_called(),
                    };
                    if let Event::RunFinished(summary) = &event {
                        discovery_note = preflight::discovery_note(empty, summary);
                    }
                    if let Event::RunFinished(summary) = &event
                        && let Some((message, case)) =
                            preflight::discovery_stop(watched.discovery.failure(), empty, summary)
                    {
                        let mut summary = summary.clone();
                        summary.add(case.outcome);
                        sinks.on_event(&Event::CaseStarted(case.id.clone()));
                        sinks.on_event(&Event::CaseFinished(Box::new(case.seal(redactor))));
                        sinks.on_event(&Event::RunFinished(summary));
                        discovery_stop = Some((message, exit::COULD_NOT_TEST));
                        return;
                    }
                    sinks.on_event(&event);
                };
                // The preflight, then the suite; a signal stops either.
                let work = async {
                    if !no_preflight {
                        match runner
                            .preflight(&preflight_body, signer, &appid, &mut on_event)
                            .await
                        {
                            Preflight::Stopped(message, code) => return Err((message, code)),
                            Preflight::Passed { broken, retried } => {
                                if retried > 0 {
                                    crate::say::stderr_line!(
                                        "note: the preflight was answered only after {} (--retries): \
                                         the service dropped or refused the connection first",
                                        if retried == 1 {
                                            "a transport retry".to_string()
                                        } else {
                                            format!("{retried} transport retries")
                                        }
                                    );
                                }
                                *preflight_broken
                                    .lock()
                                    .unwrap_or_else(std::sync::PoisonError::into_inner) = broken;
                            }
                        }
                    }
                    Ok(runner.run(planned, &mut on_event).await)
                };
                let done = tokio::select! {
                    done = work => Ok(done),
                    signal = stop.wait() => Err(signal.to_string()),
                    limit = out_of_time => Err(limit),
                };
                if done.is_err() && !run_started {
                    sinks.on_event(&Event::RunStarted {
                        base_url: base_url_shown,
                        target: target_name,
                        planned: planned_ids,
                    });
                }
                if let Some(note) = discovery_note {
                    crate::say::stderr_line!("note: {note}");
                }
                if sampled {
                    crate::say::stderr_line!(
                        "note: the products sweep sampled the merchant's malls with seed {seed}: \
                         --seed {seed} replays this sample; other runs draw others, and cover the \
                         whole merchant over time"
                    );
                }
                Ok(done.map(|done| match (done, discovery_stop) {
                    (Ok(_), Some(message)) => Err(message),
                    (Ok(summary), None) => Ok((summary, contract_broken)),
                    (Err(e), _) => Err(e),
                }))
            })
            .await
            .and_then(|summary| summary);
        match served {
            Ok(Ok(Ok((summary, contract_broken)))) => {
                let code = exit::for_summary(&summary);
                if contract_broken {
                    exit::combine(code, exit::FAILURE)
                } else {
                    code
                }
            }
            Ok(Ok(Err((preflight, code)))) => {
                // It quotes the service (an envelope's `msg`, a transport error).
                let shown = redactor.scrub(&preflight).into_owned();
                crate::say::stderr_line!("error: {}", crate::diag::escape_controls_by_line(&shown));
                code
            }
            Ok(Err(signal)) => {
                interrupted = true;
                sinks.on_event(&Event::RunInterrupted {
                    by: signal.to_string(),
                });
                crate::say::stderr_line!(
                    "interrupted by {signal}: the reports hold the cases that finished and list the others as not run"
                );
                exit::FAILURE
            }
            Err(e) => {
                // The embedded server or the client could not start: nothing was tested.
                crate::say::stderr_line!("error: {}", redactor.scrub(&e));
                exit::COULD_NOT_TEST
            }
        }
    });
    let mut code = code;
    if interrupted {
        // A case stopped in the middle of a check that runs in place of the worker
        // (`cpu::cpu_bound`) goes on once that check returns, and a runtime shutting down
        // would panic at its next timer: the process ends instead, with the runtime as it is.
        std::mem::forget(rt);
    }
    let unwritten = sinks.finish();
    for e in &unwritten {
        // A gate whose reports are missing must not pass.
        crate::say::stderr_line!("error: {e}");
    }
    if !unwritten.is_empty() {
        if code != exit::FAILURE {
            // The reports that were written carry the verdict before this failure (a pass):
            // none may say so of a run that exits 1.
            let paths: Vec<std::path::PathBuf> =
                args.output.paths().into_iter().map(Into::into).collect();
            let removed = super::remove_reports(&paths);
            if !removed.is_empty() {
                crate::say::stderr_line!(
                    "note: removed the reports written ({removed}): they gave this run a verdict \
                     it does not have"
                );
            }
        }
        code = exit::combine(code, exit::FAILURE);
    }
    if let Some(note) = snapshots.as_ref().and_then(|s| s.summary()) {
        crate::say::stderr_line!("{note}");
    }
    // The job's summary page; a failure to append it is said, and does not change the verdict
    // the reports carry.
    if let Err(e) = crate::report::actions::append_step_summary(&args.output.markdown) {
        crate::say::stderr_line!("warning: {e}");
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_rules_parse_and_bad_ones_name_the_flag() {
        assert_eq!(
            parse_cursor("response:/nextCursor").unwrap(),
            CursorRule::Response("/nextCursor".into())
        );
        assert_eq!(
            parse_cursor("last-record:/id").unwrap(),
            CursorRule::LastRecord("/id".into())
        );
        for bad in [
            "nextCursor",
            "response:nextCursor",
            "first:/x",
            "last-record:",
        ] {
            assert!(
                parse_cursor(bad)
                    .unwrap_err()
                    .to_string()
                    .contains("--cursor"),
                "{bad}"
            );
        }
    }

    #[test]
    fn shards_are_one_based_and_bounded() {
        assert_eq!(parse_shard("2/3").unwrap(), (1, 3));
        for bad in ["0/3", "4/3", "1/0", "x", "1-3"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
