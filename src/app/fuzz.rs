//! `mallcheck fuzz`: validate the flags, start the embedded server when no base URL is given,
//! send `run`'s preflight, learn real malls, run the fuzzer on a blocking thread (a signal stops
//! it), print its reproducers and summary, write the JUnit report and pick the exit code.

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::lines::Lines;
use crate::atomic;
use crate::case::parse::ParseContext;
use crate::cli::{FuzzArgs, FuzzEndpoint};
use crate::error::UsageError;
use crate::exit;
use crate::fuzz::body::{FuzzBody, Limits};
use crate::fuzz::engine::{Halt, Interrupt};
use crate::fuzz::properties::PROPERTIES;
use crate::fuzz::regressions::Saver;
use crate::fuzz::{FuzzOptions, FuzzReport, Fuzzer, Identity, Known, discover, regressions};
use crate::redact::Redactor;
use crate::report::file::ReportKind;
use crate::report::fuzz::{self as render, Style};
use crate::report::style;
use crate::runner::preflight;
use crate::server::data;
use crate::service::client::Client;
use crate::service::discover::{self, Discovery};
use crate::service::discover::{
    MALL_SIGNATURE_SENTINEL, MALL_SIGNATURE_VAR, MALL_SN_SENTINEL, MALL_SN_VAR,
};
use crate::session::Session;
use crate::settings::{Flags, Settings};
use crate::sign::Signer;
use crate::spec::schemas::SchemaSet;
use crate::verdict::endpoint::Endpoint;

use super::signals::Stop;

/// Candidates tried while shrinking one failure.
const MAX_SHRINK_TRIES: u32 = 1000;

/// A seed from the clock, for runs without `--seed` (it is printed, so the run can be repeated).
pub(super) fn clock_seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    u64::try_from(nanos % u128::from(u64::MAX)).unwrap_or(0) ^ u64::from(std::process::id())
}

fn var(target: &Settings, name: &str) -> String {
    target.vars.get(name).cloned().unwrap_or_default()
}

/// The configured identity first, then the others the target knows.
fn identities(target: &Settings) -> Vec<Identity> {
    let id = &target.identity;
    let me = Identity {
        merchant_id: id.merchant_id.clone(),
        merchant_user_id: id.merchant_user_id.clone(),
        role: id.role.clone(),
    };
    let mut out = vec![me.clone()];
    let others: Vec<Identity> = if target.base_url.is_none() {
        [data::OTHER, data::SINGLE, data::EMPTY, data::MAIN]
            .iter()
            .map(|i| Identity {
                merchant_id: i.merchant_id.to_string(),
                merchant_user_id: i.merchant_user_id.to_string(),
                role: i.role.to_string(),
            })
            .collect()
    } else {
        vec![Identity {
            merchant_id: id.other_merchant_id.clone(),
            merchant_user_id: id.other_merchant_user_id.clone(),
            role: me.role.clone(),
        }]
    };
    for other in others {
        if !out.iter().any(|i| i.merchant_id == other.merchant_id) {
            out.push(other);
        }
    }
    out
}

/// The mall the user named with `MALLCHECK_MALL_SN` and `MALLCHECK_MALL_SIGNATURE`, if both.
fn given_mall(target: &Settings) -> Option<(String, String)> {
    let sn = var(target, MALL_SN_VAR);
    let sig = var(target, MALL_SIGNATURE_VAR);
    (sn != MALL_SN_SENTINEL && sig != MALL_SIGNATURE_SENTINEL && !sn.is_empty())
        .then_some((sn, sig))
}

fn options(args: &FuzzArgs, seed: u64) -> Result<FuzzOptions, UsageError> {
    if args.cases == 0 {
        return Err(UsageError::setting("--count", "must be at least 1", None));
    }
    if let Some(rate) = args.rate
        && !(rate.is_finite() && rate >= 0.0)
    {
        return Err(UsageError::setting(
            "--rate",
            format!("{rate} is not a number of requests per second (0 = unlimited)"),
            None,
        ));
    }
    if args.jobs == 0 {
        return Err(UsageError::setting("--jobs", "must be at least 1", None));
    }
    if args.max_time == 0 {
        return Err(UsageError::setting(
            "--max-time",
            "must be at least 1 second",
            None,
        ));
    }
    let endpoints = match args.endpoint {
        FuzzEndpoint::MallList => vec![Endpoint::MallList],
        FuzzEndpoint::MallProducts => vec![Endpoint::MallProducts],
        FuzzEndpoint::All => vec![Endpoint::MallList, Endpoint::MallProducts],
    };
    Ok(FuzzOptions {
        endpoints,
        cases: args.cases,
        seed,
        max_time: Duration::from_secs(args.max_time),
        // Resolved with the target's profile and host in `fuzz`.
        rate: 0.0,
        max_shrink_tries: MAX_SHRINK_TRIES,
        save: None,
        limits: Limits::new(args.oversize),
        jobs: args.jobs,
        robustness: args.robustness,
    })
}

/// Prints the command's lines (scrubbed: they may quote the service) on standard output, or on
/// standard error when the JUnit report goes to the stream standard output is.
fn print(lines: Lines, redactor: &Redactor, text: &str) {
    lines.print(&redactor.scrub(text));
}

/// Prints an error on standard error (scrubbed: it may quote the service).
fn print_error(redactor: &Redactor, text: &str) {
    let text = redactor.scrub(text);
    crate::say::stderr_line!("{}", crate::diag::escape_controls_by_line(&text));
}

/// Writes the JUnit report and says where.
/// Writes the JUnit report; false when it could not be written (a gate whose report is
/// missing must not pass).
fn write_junit(path: &Path, xml: io::Result<String>, lines: Lines, redactor: &Redactor) -> bool {
    match xml.and_then(|xml| atomic::write(path, xml.as_bytes(), redactor)) {
        Ok(()) => {
            print(
                lines,
                redactor,
                &format!("JUnit report: {}\n", path.display()),
            );
            true
        }
        Err(e) => {
            crate::say::stderr_line!("error: {}", ReportKind::Junit.write_error(path, &e));
            false
        }
    }
}

/// The regressions to replay: the saved cases (a discovered mall filled in where a case asks
/// for one) and the files of the earlier format, converted into case files on the way.
fn replays(
    stored: regressions::Stored,
    options: &FuzzOptions,
    known: &Known,
    lines: Lines,
    redactor: &Redactor,
) -> Vec<regressions::Regression> {
    let mut out = stored.regressions;
    for legacy in stored.legacy {
        let converted = options.save.as_ref().map(|s| s.convert(&legacy, known));
        match converted {
            Some(Ok(mut now)) => {
                let to = now
                    .first()
                    .map_or_else(String::new, |r| r.path.display().to_string());
                print(
                    lines,
                    redactor,
                    &format!(
                        "converted {} (the earlier regression format) into the case file {to}\n",
                        legacy.path.display()
                    ),
                );
                out.append(&mut now);
            }
            Some(Err(e)) => {
                print(
                    lines,
                    redactor,
                    &format!(
                        "note: {} is not converted into a case file ({e}); replaying it as it is\n",
                        legacy.path.display()
                    ),
                );
                out.push(regressions::Regression {
                    name: legacy.path.display().to_string(),
                    path: legacy.path,
                    endpoint: legacy.endpoint,
                    properties: PROPERTIES.to_vec(),
                    body: legacy.body,
                });
            }
            None => {}
        }
    }
    for r in &mut out {
        if let (FuzzBody::Json(v), Some((sn, sig))) = (&mut r.body, &known.target_mall)
            && Discovery::needs(v)
        {
            discover::replace(v, sn, sig);
        }
    }
    out
}

/// Runs the fuzzer.
pub fn fuzz(args: FuzzArgs, redactor: &Redactor) -> Result<i32, UsageError> {
    let seed = args.seed.unwrap_or_else(clock_seed);
    let mut options = options(&args, seed)?;
    let flags = Flags {
        rate: args.rate,
        ..Flags::from(&args.target)
    };
    let mut session = Session::open(&flags, None, redactor)?;
    // As `run` paces: flag or MALLCHECK_RATE, the profile, 10/s toward a remote host; every
    // request counts (discovery, replays, generated bodies, shrinking).
    let rate = session.settings().run_rate().filter(|r| *r > 0.0);
    options.rate = rate.unwrap_or(0.0);
    session.settings_mut().client.rate = rate;
    let target = session.settings();
    let schemas = Arc::clone(session.schemas());
    let names = schemas.names();
    let cx = ParseContext {
        vars: &target.vars,
        schema_names: &names,
    };
    let saved = regressions::load(&args.regressions, &cx).map_err(UsageError::Cases)?;
    // Saved regressions use the identity variables only, all of them settings.
    let warnings = session.check_vars(&[])?;
    super::run::print_warnings(&session, &warnings);
    super::check_reports(&[(ReportKind::Junit, &args.junit)])?;
    // Held to the end: another fuzz run writing the same JUnit file is refused.
    let _locks = crate::report::lock::acquire(std::slice::from_ref(&args.junit))?;
    options.save = Some(Saver {
        dir: args.regressions.clone(),
        vars: target.vars.clone(),
        schema_names: names.iter().map(|n| n.to_string()).collect(),
        redactor: redactor.clone(),
    });
    let rt = super::runtime()?;
    let code = rt.block_on(async {
        // Before anything starts: a signal from here on stops the run and finishes the report.
        let mut stop = Stop::listen();
        session
            .with_service(async |base_url| {
                fuzz_target(
                    &session, base_url, options, schemas, saved, &args, &mut stop,
                )
                .await
            })
            .await
            .unwrap_or_else(|e| {
                crate::say::stderr_line!("error: {}", redactor.scrub(&e));
                exit::COULD_NOT_TEST
            })
    });
    Ok(code)
}

async fn fuzz_target(
    session: &Session,
    base_url: &str,
    mut options: FuzzOptions,
    schemas: Arc<SchemaSet>,
    stored: regressions::Stored,
    args: &FuzzArgs,
    stop: &mut Stop,
) -> i32 {
    // On standard error when the JUnit report goes to the stream standard output is.
    let lines = Lines::beside(&[&args.junit]);
    let target = session.settings();
    let redactor = session.redactor();
    let style = Style {
        color: style::use_color(args.color.into()),
    };
    // A connection the service closed while a request went out on it (a keep-alive race with
    // its idle timeout or request limit) is sent once more: a body that really breaks the
    // server breaks it again, a race does not, and a race must not be reported as a crash.
    let mut limits = target.client.clone();
    limits.retries = limits.retries.max(1);
    let client = match Client::new(base_url, target.signer.clone(), limits, redactor) {
        Ok(c) => c,
        Err(e) => {
            crate::say::stderr_line!("error: {}", redactor.scrub(&e.to_string()));
            return exit::COULD_NOT_TEST;
        }
    };
    let shown = if session.target().is_embedded() {
        format!(
            "{} (the reference server at {base_url})",
            session.target().name()
        )
    } else {
        base_url.to_string()
    };
    let rate = if options.rate > 0.0 {
        format!("{} requests/s", options.rate)
    } else {
        "unlimited rate".to_string()
    };
    let sizes = if options.limits == Limits::OVERSIZE {
        "oversize probes (--oversize)"
    } else {
        "within common HTTP limits (--oversize for larger)"
    };
    print(
        lines,
        redactor,
        &format!(
            "mallcheck fuzz: seed {seed} (repeat this run with --seed {seed})\ntarget: {shown}\nbudget: {} cases per endpoint, --max-time {} s, {rate}, {} in flight; sizes {sizes}\n",
            options.cases,
            options.max_time.as_secs(),
            options.jobs,
            seed = options.seed,
        ),
    );
    let signer = target.signer.clone();
    // --max-time bounds the whole run: the preflight and the discovery of malls too (against a
    // service that trickles its answers they alone took several times the budget).
    let preparing = std::time::Instant::now();
    let prepared = tokio::select! {
        prepared = prepare(target, &client, &schemas, &options, args, lines, redactor) => prepared,
        () = tokio::time::sleep(options.max_time) => {
            let (message, result) = preflight::out_of_time(options.max_time);
            let result = result.seal(redactor);
            write_junit(&args.junit, render::preflight_junit(&result), lines, redactor);
            print_error(redactor, &format!("error: {message}"));
            return exit::COULD_NOT_TEST;
        }
        cause = stop.wait() => {
            let report = FuzzReport {
                seed: options.seed,
                endpoints: Vec::new(),
                failures: Vec::new(),
                replayed: 0,
                requests: 0,
                duration: Duration::ZERO,
                halt: Some(Halt::Interrupted { cause }),
            };
            return finish(&report, args, &signer, style, lines, redactor);
        }
    };
    let known = match prepared {
        Ok(known) => known,
        Err(code) => return code,
    };
    options.max_time = options.max_time.saturating_sub(preparing.elapsed());
    let saved = replays(stored, &options, &known, lines, redactor);
    let replays = saved
        .iter()
        .filter(|r| options.endpoints.contains(&r.endpoint))
        .count();
    if replays > 0 {
        print(
            lines,
            redactor,
            &format!(
                "replaying {} from {}\n",
                if replays == 1 {
                    "1 saved failure".to_string()
                } else {
                    format!("{replays} saved failures")
                },
                args.regressions.display()
            ),
        );
    }
    let interrupt = Interrupt::default();
    let fuzzer = Fuzzer {
        client,
        schemas,
        known,
        options,
        regressions: saved,
        interrupt: interrupt.clone(),
    };
    let seed = fuzzer.options.seed;
    let event_signer = signer.clone();
    let event_redactor = redactor.clone();
    let handle = tokio::runtime::Handle::current();
    let mut fuzzing = tokio::task::spawn_blocking(move || {
        fuzzer.run(handle, &mut |event| {
            print(
                lines,
                &event_redactor,
                &render::event(event, seed, &event_signer, style),
            )
        })
    });
    // A signal makes the fuzzer stop and report what it found so far.
    let joined = tokio::select! {
        joined = &mut fuzzing => joined,
        cause = stop.wait() => {
            interrupt.raise(cause);
            fuzzing.await
        }
    };
    let report = match joined {
        Ok(report) => report,
        Err(e) => {
            crate::say::stderr_line!("error: the fuzzer crashed (a bug: please report it): {e}");
            return exit::COULD_NOT_TEST;
        }
    };
    finish(&report, args, &signer, style, lines, redactor)
}

/// Before anything is generated: `run`'s preflight (one signed first mall-list page; a refused
/// or unanswered one stops here with its message, exit 3 and a JUnit report holding the
/// `preflight` error), then what the fuzzer learns about the service. Err is the exit code.
async fn prepare(
    target: &Settings,
    client: &Client,
    schemas: &SchemaSet,
    options: &FuzzOptions,
    args: &FuzzArgs,
    lines: Lines,
    redactor: &Redactor,
) -> Result<Known, i32> {
    let preflight = if args.no_preflight {
        None
    } else {
        Some(
            preflight::check(
                client,
                &target.first_page_body(10),
                schemas,
                target.signer.kind_name(),
                &target.identity.appid,
            )
            .await,
        )
    };
    if let Some(Ok(accepted)) = &preflight
        && accepted.retried > 0
    {
        crate::say::stderr_line!(
            "note: the preflight was answered only after a transport retry (--retries): the \
             service dropped or refused the connection first"
        );
    }
    if let Some(Err(stopped)) = preflight
        // A broken answer to the first page (a 5xx, not JSON) is what the fuzzer is there to
        // find and shrink: it goes on, and its properties report it.
        && stopped.stop != preflight::Stop::Broken
    {
        let result = stopped.result.seal(redactor);
        write_junit(
            &args.junit,
            render::preflight_junit(&result),
            lines,
            redactor,
        );
        print_error(redactor, &format!("error: {}", stopped.message));
        return Err(exit::for_outcome(result.outcome));
    }
    let unknown = vec![target.identity.unknown_merchant_id.clone()];
    let pause = if options.rate > 0.0 {
        Duration::from_secs_f64(1.0 / options.rate)
    } else {
        Duration::ZERO
    };
    let known = discover(
        client,
        &target.identity.appid,
        identities(target),
        unknown,
        given_mall(target),
        pause,
    )
    .await
    .map_err(|e| {
        crate::say::stderr_line!("error: {}", redactor.scrub(&e.to_string()));
        exit::COULD_NOT_TEST
    })?;
    for note in &known.notes {
        print(lines, redactor, &format!("note: {note}\n"));
    }
    // As `run`: a merchant that lists no mall (a mistyped id looks just like it) leaves the
    // fuzzer nothing real to target, and its pass would rest on nothing.
    if known.lists_no_mall
        && known.target_mall.is_none()
        && !(args.allow_empty_merchant || target.allow_empty_merchant)
    {
        let (message, result) = preflight::empty_merchant_stop();
        let result = result.seal(redactor);
        write_junit(
            &args.junit,
            render::preflight_junit(&result),
            lines,
            redactor,
        );
        print_error(redactor, &format!("error: {message}"));
        return Err(exit::COULD_NOT_TEST);
    }
    Ok(known)
}

/// Prints the summary (and why the run halted, if it did), writes the JUnit report and picks
/// the exit code: 1 when a property failed or a signal stopped the run, 3 when a rate limit
/// stopped it before anything failed or `--max-time` left an endpoint without a case.
fn finish(
    report: &FuzzReport,
    args: &FuzzArgs,
    signer: &Signer,
    style: Style,
    lines: Lines,
    redactor: &Redactor,
) -> i32 {
    print(lines, redactor, &render::summary(report, style));
    let written = write_junit(&args.junit, render::junit(report, signer), lines, redactor);
    match &report.halt {
        Some(halt @ Halt::RateLimited { .. }) => {
            print_error(redactor, &format!("error: {}", render::halt_message(halt)));
        }
        Some(halt @ Halt::Interrupted { .. }) => print_error(redactor, &render::halt_message(halt)),
        None => {}
    }
    let code = if report.failed() {
        exit::FAILURE
    } else {
        match &report.halt {
            // Rate-limited until it gave up: the service could not be fuzzed to the end.
            Some(Halt::RateLimited { .. }) => exit::COULD_NOT_TEST,
            Some(Halt::Interrupted { .. }) => exit::FAILURE,
            // An endpoint --max-time left without a case: nothing of it was tested.
            None if report.untested().next().is_some() => exit::COULD_NOT_TEST,
            None => exit::PASS,
        }
    };
    if written {
        code
    } else {
        exit::combine(code, exit::FAILURE)
    }
}
