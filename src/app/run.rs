//! `mallcheck run`: load schemas and cases, start the embedded server when no base URL is
//! given, run, report, pick the exit code.

use std::path::PathBuf;
use std::sync::Arc;

use crate::app::settings::{self, Target};
use crate::case::model::CaseFile;
use crate::case::parse::{ParseContext, load_paths};
use crate::cli::RunArgs;
use crate::error::UsageError;
use crate::exit;
use crate::report::FanOut;
use crate::report::console::{Console, Verbosity};
use crate::report::html::HtmlReport;
use crate::report::json::JsonReport;
use crate::report::junit::Junit;
use crate::report::markdown::MarkdownReport;
use crate::runner::client::Client;
use crate::runner::discover::Discovery;
use crate::runner::{PlannedCase, RunOptions, Runner};
use crate::server::{self, ServerOptions};
use crate::spec::schemas::SchemaSet;

/// Loads schemas (built-in or `--schemas DIR`).
pub fn load_schemas(dir: Option<&PathBuf>) -> Result<SchemaSet, UsageError> {
    Ok(match dir {
        Some(d) => SchemaSet::load_dir(d)?,
        None => SchemaSet::embedded()?,
    })
}

/// Parses every case file before anything is sent.
pub fn load_cases(
    paths: &[PathBuf],
    schemas: &SchemaSet,
    target: &Target,
) -> Result<Vec<CaseFile>, UsageError> {
    let paths = if paths.is_empty() {
        vec![PathBuf::from("cases")]
    } else {
        paths.to_vec()
    };
    let names = schemas.names();
    let cx = ParseContext {
        vars: &target.vars,
        schema_names: &names,
    };
    load_paths(&paths, &cx).map_err(UsageError::Cases)
}

fn selected(filters: &[String], file: &CaseFile, case: &crate::case::model::Case) -> bool {
    if filters.is_empty() {
        return true;
    }
    let path = file.source.path.display().to_string();
    filters.iter().any(|f| {
        let f = f.as_str();
        match f.strip_prefix("tag:") {
            Some(tag) => case.tags.iter().any(|t| t == tag),
            None => {
                case.name.value.contains(f)
                    || path.contains(f)
                    || case.endpoint().name() == f
                    || case.tags.iter().any(|t| t == f)
            }
        }
    })
}

/// Runs the suite.
pub fn run(args: RunArgs) -> Result<i32, UsageError> {
    if args.jobs == 0 {
        return Err(UsageError::setting("--jobs", "must be at least 1", None));
    }
    if args.max_pages == 0 {
        return Err(UsageError::setting(
            "--max-pages",
            "must be at least 1",
            None,
        ));
    }
    // Before any thread exists: it configures insta through environment variables.
    let snapshots = super::snapshots::snapshotter(&args)?;
    let target = settings::resolve(&args.target)?;
    let snapshots =
        snapshots.map(|s| s.with_secrets(target.signer.secrets().into_iter().cloned().collect()));
    let schemas = Arc::new(load_schemas(args.schemas.as_ref())?);
    let files = load_cases(&args.cases, &schemas, &target)?;
    let mut planned: Vec<PlannedCase> = Vec::new();
    for file in files {
        let source = Arc::clone(&file.source);
        let CaseFile { cases, .. } = file;
        for case in cases {
            let keep = selected(
                &args.filter,
                &CaseFile {
                    source: Arc::clone(&source),
                    cases: vec![],
                },
                &case,
            );
            if keep {
                planned.push(PlannedCase {
                    source: Arc::clone(&source),
                    case,
                });
            }
        }
    }
    if planned.is_empty() {
        return Err(UsageError::setting(
            "--filter",
            "no case selected",
            Some("check --cases and --filter"),
        ));
    }
    let color = settings::use_color(args.output.color);
    let verbosity = if args.output.quiet {
        Verbosity::Quiet
    } else if args.output.verbose {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    };
    let options = RunOptions {
        jobs: args.jobs,
        strict: args.strict,
        max_pages: args.max_pages,
        sample: args.sample,
        ..RunOptions::default()
    };
    let mut sinks = FanOut::default();
    sinks.push(Box::new(Console::new(
        std::io::stdout(),
        color,
        verbosity,
        args.strict,
    )));
    sinks.push(Box::new(Junit::new(args.output.junit.clone(), args.strict)));
    sinks.push(Box::new(JsonReport::new(
        args.output.json.clone(),
        args.strict,
    )));
    sinks.push(Box::new(MarkdownReport::new(
        args.output.markdown.clone(),
        args.strict,
    )));
    sinks.push(Box::new(HtmlReport::new(
        args.output.html.clone(),
        args.strict,
    )));

    let rt = super::runtime()?;
    let code = rt.block_on(async {
        let server = match &target.base_url {
            Some(_) => None,
            None => {
                let opts = ServerOptions {
                    signer: target.signer.clone(),
                    appid: target.appid.clone(),
                    ..ServerOptions::default()
                };
                match server::start(opts).await {
                    Ok(s) => Some(s),
                    Err(e) => {
                        eprintln!("error: cannot start the embedded reference server: {e}");
                        return exit::FAILURE;
                    }
                }
            }
        };
        let base_url = target
            .base_url
            .clone()
            .or_else(|| server.as_ref().map(|s| s.base_url()))
            .unwrap_or_default();
        let client = match Client::new(&base_url, target.signer.clone(), target.client.clone()) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return exit::FAILURE;
            }
        };
        let runner = Arc::new(Runner {
            client,
            schemas: Arc::clone(&schemas),
            options,
            discovery: Discovery::new(target.first_page_body(10)),
            snapshots: snapshots.clone(),
        });
        let mut on_event = |event: crate::report::event::Event| sinks.on_event(&event);
        let run = runner.run(planned, &mut on_event);
        let summary = tokio::select! {
            summary = run => Some(summary),
            _ = tokio::signal::ctrl_c() => None,
        };
        if let Some(server) = server {
            server.shutdown().await;
        }
        match summary {
            Some(summary) => exit::for_outcome(summary.outcome()),
            None => {
                eprintln!("interrupted: the reports hold the cases that finished");
                exit::FAILURE
            }
        }
    });
    for e in sinks.finish() {
        eprintln!("error: cannot write a report: {e}");
    }
    if let Some(note) = snapshots.as_ref().and_then(|s| s.summary()) {
        eprintln!("{note}");
    }
    Ok(code)
}
