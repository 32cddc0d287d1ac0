//! `mallcheck bench`: end-to-end benchmarks against the embedded server on loopback, printed in
//! one run as ratios measured side by side (issue 7), since no absolute time is stable on a
//! shared machine.
//!
//! The lines: (a) the suite against a bare replay of its own requests, (b) the fuzzer's request
//! rate against a bare concurrent loop, (c) checking a large body against parsing it alone,
//! (d) the peak memory of checking the 5,000-product response against its size, and (e) the
//! suite's wall time as the data grows. The in-process parts also have a `cargo bench`.

use std::fmt;
use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::{Command as Process, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use clap::Parser;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::app::run::load_cases;
use crate::cli::{BenchArgs, Cli, Command};
use crate::error::UsageError;
use crate::exit;
use crate::report::FanOut;
use crate::report::console::{Console, Verbosity};
use crate::runner::checks::{ownership, products};
use crate::runner::client::Client;
use crate::runner::discover::Discovery;
use crate::runner::{PlannedCase, RunOptions, Runner};
use crate::server::data::{self, DEMO_SIGN_KEY, Dataset, MAIN, Shape};
use crate::server::{self, RunningServer, ServerOptions};
use crate::settings::{self, Target};
use crate::spec::schemas::SchemaSet;
use crate::verdict::endpoint::{AuthMode, Endpoint};
use crate::verdict::event::RunSummary;

/// (a) Suite wall time over the bare replay of the same requests.
const SUITE_OVERHEAD_TARGET: Goal = Goal::AtMost(1.3);
/// (b) Fuzzer requests per second over the loopback limit.
const FUZZ_RATE_TARGET: Goal = Goal::AtLeast(0.5);
/// (c) Time to parse and check a body over the time to parse it alone.
const VALIDATION_TARGET: Goal = Goal::AtMost(2.0);
/// (d) Peak memory added while receiving and checking a body over the body's size.
const MEMORY_TARGET: Goal = Goal::AtMost(4.0);
/// (e) Growth of the suite's wall time over the growth of the data between the two largest
/// scales (1.0 is linear; the margin absorbs noise).
const SCALING_TARGET: Goal = Goal::AtMost(1.2);

/// Malls in the page of line (c).
pub const PAGE_MALLS: usize = 2_000;
/// Products in the response of lines (c) and (d).
pub const RESPONSE_PRODUCTS: u32 = 5_000;

/// Largest request body the recording proxy accepts.
const PROXY_MAX_BODY: usize = 2 * 1024 * 1024;
/// Headers reqwest sets by itself, so a replay must not set them again.
const AUTOMATIC_HEADERS: [&str; 6] = [
    "host",
    "content-length",
    "connection",
    "accept",
    "accept-encoding",
    "user-agent",
];
/// Prefix of the memory probe's one line of output.
const PROBE_PREFIX: &str = "memory-probe";

/// Which way a ratio must go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    /// The ratio must not exceed this.
    AtMost(f64),
    /// The ratio must reach this.
    AtLeast(f64),
}

impl Goal {
    /// PASS or MISS for a ratio; a ratio that could not be measured is SKIP.
    pub fn verdict(self, ratio: Option<f64>) -> Verdict {
        match (self, ratio) {
            (_, None) => Verdict::Skip,
            (Goal::AtMost(t), Some(r)) if r <= t => Verdict::Pass,
            (Goal::AtLeast(t), Some(r)) if r >= t => Verdict::Pass,
            (_, Some(_)) => Verdict::Miss,
        }
    }
}

impl fmt::Display for Goal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Goal::AtMost(t) => write!(f, "<= {t:.2}"),
            Goal::AtLeast(t) => write!(f, ">= {t:.2}"),
        }
    }
}

/// The outcome of one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The target holds.
    Pass,
    /// The target does not hold.
    Miss,
    /// Not measured (the note says why).
    Skip,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Pass => "PASS",
            Verdict::Miss => "MISS",
            Verdict::Skip => "SKIP",
        })
    }
}

/// One line of the report: figures, the ratio they give, its target and detail lines.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Item label, e.g. `(a) suite overhead`.
    pub item: &'static str,
    /// The measured figures, side by side.
    pub figures: String,
    /// The ratio compared with the target (`None` when not measured).
    pub ratio: Option<f64>,
    /// The target.
    pub goal: Goal,
    /// Breakdowns and notes printed under the line.
    pub details: Vec<String>,
}

impl Measurement {
    /// PASS, MISS or SKIP.
    pub fn verdict(&self) -> Verdict {
        self.goal.verdict(self.ratio)
    }

    /// The line and its details, as printed.
    pub fn render(&self) -> String {
        let ratio = self
            .ratio
            .map_or_else(|| "-".to_string(), |r| format!("{r:.2}"));
        let mut out = format!(
            "{:<22} {}\n{:<22} ratio {ratio}  target {}  {}\n",
            self.item,
            self.figures,
            "",
            self.goal,
            self.verdict()
        );
        for d in &self.details {
            out.push_str(&format!("{:<24}{d}\n", ""));
        }
        out
    }
}

/// Sizes and repetitions of a bench run, free of CLI types.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Case files or directories of the suite.
    pub cases: Vec<PathBuf>,
    /// Timed rounds of each side-by-side pair (medians are compared).
    pub rounds: usize,
    /// Cases run at once by the suite and by its replay.
    pub jobs: usize,
    /// Data scale factors of line (e).
    pub scales: Vec<u32>,
    /// `mallcheck fuzz --cases` of line (b); 0 skips the line.
    pub fuzz_cases: u32,
    /// Duration of the bare concurrent loop of line (b).
    pub load_time: Duration,
    /// Malls of the page of line (c).
    pub page_malls: usize,
    /// Products of the response of lines (c) and (d).
    pub response_products: u32,
}

fn print(text: &str) {
    let mut out = io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Runs `mallcheck bench` (or, with the hidden `--memory-probe`, the child of line (d)).
pub fn bench(args: BenchArgs) -> Result<i32, UsageError> {
    if let Some(url) = &args.memory_probe {
        return memory_probe(url);
    }
    if args.rounds == 0 {
        return Err(UsageError::setting("--rounds", "must be at least 1", None));
    }
    if args.jobs == Some(0) {
        return Err(UsageError::setting("--jobs", "must be at least 1", None));
    }
    if args.scales.iter().any(|&s| s == 0 || s > 1_000) {
        return Err(UsageError::setting(
            "--scales",
            "every factor must be between 1 and 1000",
            Some("e.g. --scales 1,10,100"),
        ));
    }
    if !(args.load_secs.is_finite() && args.load_secs > 0.0 && args.load_secs <= 60.0) {
        return Err(UsageError::setting(
            "--load-secs",
            "must be a number of seconds in (0, 60]",
            None,
        ));
    }
    let options = BenchOptions {
        cases: if args.cases.is_empty() {
            vec![PathBuf::from("cases")]
        } else {
            args.cases.clone()
        },
        rounds: args.rounds,
        jobs: args.jobs.unwrap_or(RunOptions::default().jobs),
        scales: args.scales.clone(),
        fuzz_cases: args.fuzz_cases,
        load_time: Duration::from_secs_f64(args.load_secs),
        page_malls: PAGE_MALLS,
        response_products: RESPONSE_PRODUCTS,
    };
    let target = embedded_target()?;
    let compile_started = Instant::now();
    let schemas = Arc::new(SchemaSet::embedded()?);
    let compile_time = compile_started.elapsed();
    // Bad case files end the bench before anything is measured (exit 2).
    load_cases(&options.cases, &schemas, &target)?;
    print(&banner(compile_time));
    let env = SuiteEnv {
        target,
        schemas,
        cases: options.cases.clone(),
        jobs: options.jobs,
    };
    let lines = crate::app::runtime()?.block_on(measure_all(&env, &options));
    let mut misses = 0;
    for line in &lines {
        if line.verdict() == Verdict::Miss {
            misses += 1;
        }
    }
    print(&format!(
        "\n{} of {} targets hold; figures are ratios of runs made side by side in this process\n",
        lines
            .iter()
            .filter(|l| l.verdict() == Verdict::Pass)
            .count(),
        lines.len(),
    ));
    if misses > 0 {
        print("a MISS is a finding of the bench, not an error: the exit code stays 0\n");
    }
    Ok(exit::PASS)
}

/// The first lines: build, machine and what is measured.
fn banner(compile_time: Duration) -> String {
    let build = if cfg!(debug_assertions) {
        "DEBUG build: figures are meaningless, use `cargo run --release -- bench`"
    } else {
        "release build"
    };
    format!(
        "mallcheck bench: {build}; {}; embedded server on 127.0.0.1\nschemas compiled once in {} (not part of any line)\n\n",
        machine(),
        ms(compile_time),
    )
}

/// `N CPUs (model)` from the standard library and /proc/cpuinfo.
pub fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown model".to_string());
    format!("{cpus} CPUs ({model})")
}

/// The target `mallcheck run` uses without `--base-url`: the embedded server's identities and
/// signer, with any `MALLCHECK_*` overrides of the environment.
fn embedded_target() -> Result<Target, UsageError> {
    let cli = Cli::try_parse_from(["mallcheck", "run"]).map_err(|e| {
        UsageError::setting(
            "bench",
            format!("cannot build the default target: {e}"),
            None,
        )
    })?;
    let Command::Run(mut args) = cli.command else {
        return Err(UsageError::setting(
            "bench",
            "cannot build the default target",
            None,
        ));
    };
    args.target.base_url = None;
    settings::from_process(&settings::Flags::from(&args.target))
}

/// What every suite run needs.
struct SuiteEnv {
    target: Target,
    schemas: Arc<SchemaSet>,
    cases: Vec<PathBuf>,
    jobs: usize,
}

async fn start_server(target: &Target, scale: u32) -> Result<RunningServer, String> {
    server::start(ServerOptions {
        signer: target.signer.clone(),
        appid: target.identity.appid.clone(),
        scale,
        ..ServerOptions::default()
    })
    .await
    .map_err(|e| format!("cannot start the embedded server: {e}"))
}

async fn measure_all(env: &SuiteEnv, options: &BenchOptions) -> Vec<Measurement> {
    let mut lines = Vec::new();
    let server = match start_server(&env.target, 1).await {
        Ok(s) => s,
        Err(e) => {
            print(&format!("error: {e}\n"));
            return lines;
        }
    };
    let base_url = server.base_url();
    let mut emit = |line: Measurement| {
        print(&line.render());
        lines.push(line);
    };
    emit(
        suite_overhead(env, &base_url, options.rounds)
            .await
            .unwrap_or_else(|e| skipped("(a) suite overhead", SUITE_OVERHEAD_TARGET, e)),
    );
    emit(
        fuzz_rate(env, &base_url, options)
            .await
            .unwrap_or_else(|e| skipped("(b) fuzz rate", FUZZ_RATE_TARGET, e)),
    );
    for line in crate::runner::cpu_bound(|| validation(&env.schemas, options)) {
        emit(line);
    }
    let probe = memory(&base_url);
    emit(
        crate::runner::cpu_bound(probe).unwrap_or_else(|e| skipped("(d) memory", MEMORY_TARGET, e)),
    );
    server.shutdown().await;
    emit(
        scaling(env, &options.scales, options.rounds)
            .await
            .unwrap_or_else(|e| skipped("(e) scaling", SCALING_TARGET, e)),
    );
    lines
}

fn skipped(item: &'static str, goal: Goal, why: String) -> Measurement {
    Measurement {
        item,
        figures: "not measured".to_string(),
        ratio: None,
        goal,
        details: vec![format!("note: {why}")],
    }
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms >= 10_000.0 {
        format!("{:.1} s", ms / 1e3)
    } else if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

fn mib(bytes: f64) -> String {
    format!("{:.1} MiB", bytes / (1024.0 * 1024.0))
}

/// The median of some durations (the upper one of an even count); zero for none.
pub fn median(values: &[Duration]) -> Duration {
    let mut sorted = values.to_vec();
    sorted.sort();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

fn ratio(a: Duration, b: Duration) -> Option<f64> {
    let b = b.as_secs_f64();
    (b > 0.0).then(|| a.as_secs_f64() / b)
}

// ---------------------------------------------------------------------------------------------
// (a) Suite overhead: the suite against a bare replay of the requests it made.

/// One request as the suite sent it, for a replay.
#[derive(Debug, Clone)]
struct Recorded {
    method: Method,
    path: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
}

/// What the recording proxy saw.
#[derive(Debug, Default)]
struct Log {
    requests: Vec<Recorded>,
    response_bytes: u64,
}

#[derive(Clone)]
struct Recorder {
    upstream: String,
    http: reqwest::Client,
    log: Arc<Mutex<Log>>,
}

/// A reverse proxy on loopback that records every request before forwarding it unchanged.
struct Proxy {
    base_url: String,
    log: Arc<Mutex<Log>>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    async fn start(upstream: &str) -> Result<Proxy, String> {
        let http = crate::tls::client_builder()
            .no_proxy()
            .no_gzip()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build the proxy's client: {e}"))?;
        let log = Arc::new(Mutex::new(Log::default()));
        let recorder = Recorder {
            upstream: upstream.to_string(),
            http,
            log: Arc::clone(&log),
        };
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
            .await
            .map_err(|e| format!("cannot bind the recording proxy: {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot bind the recording proxy: {e}"))?;
        let app = Router::new().fallback(forward).with_state(recorder);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Proxy {
            base_url: format!("http://{addr}"),
            log,
            task,
        })
    }

    /// Takes what was recorded since the last call.
    fn take(&self) -> Log {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut *log)
    }

    fn stop(self) {
        self.task.abort();
    }
}

async fn forward(State(rec): State<Recorder>, req: Request) -> axum::response::Response {
    let (parts, body) = req.into_parts();
    let Ok(body) = axum::body::to_bytes(body, PROXY_MAX_BODY).await else {
        return status_only(StatusCode::PAYLOAD_TOO_LARGE);
    };
    let path = parts.uri.path_and_query().map_or_else(
        || parts.uri.path().to_string(),
        |pq| pq.as_str().to_string(),
    );
    let headers: Vec<(HeaderName, HeaderValue)> = parts
        .headers
        .iter()
        .filter(|(k, _)| !AUTOMATIC_HEADERS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut builder = rec
        .http
        .request(parts.method.clone(), format!("{}{path}", rec.upstream))
        .body(body.clone());
    for (k, v) in &headers {
        builder = builder.header(k, v);
    }
    if let Some(v) = parts.headers.get(header::ACCEPT_ENCODING) {
        builder = builder.header(header::ACCEPT_ENCODING, v);
    }
    rec.log
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .requests
        .push(Recorded {
            method: parts.method,
            path,
            headers,
            body,
        });
    let Ok(upstream) = builder.send().await else {
        return status_only(StatusCode::BAD_GATEWAY);
    };
    let status = upstream.status();
    let upstream_headers = upstream.headers().clone();
    let Ok(bytes) = upstream.bytes().await else {
        return status_only(StatusCode::BAD_GATEWAY);
    };
    rec.log
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .response_bytes += bytes.len() as u64;
    let mut response = axum::response::Response::new(Body::from(bytes));
    *response.status_mut() = status;
    for (k, v) in &upstream_headers {
        if k != header::CONTENT_LENGTH && k != header::TRANSFER_ENCODING && k != header::CONNECTION
        {
            response.headers_mut().append(k.clone(), v.clone());
        }
    }
    response
}

fn status_only(status: StatusCode) -> axum::response::Response {
    let mut response = axum::response::Response::new(Body::empty());
    *response.status_mut() = status;
    response
}

/// The cases of the suite, loaded and planned as `mallcheck run` does without a filter.
fn planned_cases(env: &SuiteEnv) -> Result<Vec<PlannedCase>, String> {
    let files = load_cases(&env.cases, &env.schemas, &env.target)
        .map_err(|e| format!("cannot load the cases: {}", e.render(false)))?;
    let mut planned = Vec::new();
    for file in files {
        for case in file.cases {
            planned.push(PlannedCase {
                source: Arc::clone(&file.source),
                case,
            });
        }
    }
    Ok(planned)
}

fn runner(env: &SuiteEnv, base_url: &str) -> Result<Arc<Runner>, String> {
    let client = Client::new(
        base_url,
        env.target.signer.clone(),
        env.target.client.clone(),
    )
    .map_err(|e| e.to_string())?;
    Ok(Arc::new(Runner {
        client,
        schemas: Arc::clone(&env.schemas),
        options: RunOptions {
            jobs: env.jobs,
            ..RunOptions::default()
        },
        discovery: Discovery::new(env.target.first_page_body(10)),
        snapshots: None,
    }))
}

/// One suite run as `mallcheck run` makes it: load the cases, run them with the console sink
/// writing to nowhere.
async fn suite_once(env: &SuiteEnv, base_url: &str) -> Result<(Duration, RunSummary), String> {
    let started = Instant::now();
    let planned = planned_cases(env)?;
    let runner = runner(env, base_url)?;
    let mut sinks = FanOut::default();
    sinks.push(Box::new(Console::new(
        io::sink(),
        false,
        Verbosity::Normal,
        false,
    )));
    let summary = runner
        .run(planned, &mut |event| sinks.on_event(&event))
        .await;
    let _ = sinks.finish();
    Ok((started.elapsed(), summary))
}

/// Runs every case alone through the recording proxy and returns each case's requests.
async fn record_cases(env: &SuiteEnv, base_url: &str) -> Result<Vec<Vec<Recorded>>, String> {
    let proxy = Proxy::start(base_url).await?;
    let runner = runner(env, &proxy.base_url)?;
    let mut per_case = Vec::new();
    for case in planned_cases(env)? {
        Arc::clone(&runner).run(vec![case], &mut |_| {}).await;
        per_case.push(proxy.take().requests);
    }
    proxy.stop();
    Ok(per_case)
}

/// A bare client configured as the suite's (pool, timeouts, no redirects), without checks.
fn bare_client(env: &SuiteEnv) -> Result<reqwest::Client, String> {
    crate::tls::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(env.target.client.timeout)
        .connect_timeout(env.target.client.timeout)
        .no_proxy()
        .pool_max_idle_per_host(64)
        .build()
        .map_err(|e| format!("cannot build the bare client: {e}"))
}

async fn send_recorded(
    http: &reqwest::Client,
    base_url: &str,
    r: &Recorded,
) -> Result<usize, String> {
    let mut builder = http
        .request(r.method.clone(), format!("{base_url}{}", r.path))
        .body(r.body.clone());
    for (k, v) in &r.headers {
        builder = builder.header(k, v);
    }
    let response = builder.send().await.map_err(|e| e.to_string())?;
    let body = response.bytes().await.map_err(|e| e.to_string())?;
    Ok(body.len())
}

/// Sends each case's requests in order, `jobs` cases at once, as the runner schedules them.
async fn replay(
    env: &SuiteEnv,
    base_url: &str,
    cases: &Arc<Vec<Vec<Recorded>>>,
) -> Result<Duration, String> {
    let started = Instant::now();
    let http = bare_client(env)?;
    let permits = Arc::new(Semaphore::new(env.jobs.max(1)));
    let mut tasks = JoinSet::new();
    for index in 0..cases.len() {
        let (http, cases, permits) = (http.clone(), Arc::clone(cases), Arc::clone(&permits));
        let base_url = base_url.to_string();
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.map_err(|e| e.to_string())?;
            for r in &cases[index] {
                send_recorded(&http, &base_url, r).await?;
            }
            Ok::<(), String>(())
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.map_err(|e| e.to_string())??;
    }
    Ok(started.elapsed())
}

async fn suite_overhead(
    env: &SuiteEnv,
    base_url: &str,
    rounds: usize,
) -> Result<Measurement, String> {
    let recorded = Arc::new(record_cases(env, base_url).await?);
    let requests: usize = recorded.iter().map(Vec::len).sum();
    suite_once(env, base_url).await?;
    replay(env, base_url, &recorded).await?;
    let (mut suite, mut bare) = (Vec::new(), Vec::new());
    let mut summary = RunSummary::default();
    for _ in 0..rounds {
        let (took, s) = suite_once(env, base_url).await?;
        suite.push(took);
        summary = s;
        bare.push(replay(env, base_url, &recorded).await?);
    }
    let (s, b) = (median(&suite), median(&bare));
    let mut details = vec![format!(
        "{} cases: {} passed, {} warned, {} failed, {} errored, {} skipped; {} jobs; snapshots off",
        recorded.len(),
        summary.passed,
        summary.warned,
        summary.failed,
        summary.errored,
        summary.skipped,
        env.jobs
    )];
    details.push(format!(
        "per request: suite {:.0} us, bare {:.0} us",
        s.as_secs_f64() * 1e6 / requests.max(1) as f64,
        b.as_secs_f64() * 1e6 / requests.max(1) as f64
    ));
    Ok(Measurement {
        item: "(a) suite overhead",
        figures: format!(
            "suite {} vs bare replay {} of the same {requests} requests (median of {rounds})",
            ms(s),
            ms(b)
        ),
        ratio: ratio(s, b),
        goal: SUITE_OVERHEAD_TARGET,
        details,
    })
}

// ---------------------------------------------------------------------------------------------
// (b) Fuzz rate: `mallcheck fuzz` against a bare concurrent loop on the same server.

/// A signed first-page mall-list request (count 10) of the configured merchant.
fn first_page_request(target: &Target) -> Result<Recorded, String> {
    let body = serde_json::to_vec(&target.first_page_body(10)).map_err(|e| e.to_string())?;
    let authorization = target
        .signer
        .authorization(&target.identity.appid, &body)
        .map_err(|e| e.to_string())?;
    let value = HeaderValue::from_str(authorization.expose()).map_err(|e| e.to_string())?;
    Ok(Recorded {
        method: Method::POST,
        path: Endpoint::MallList.path().to_string(),
        headers: vec![
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::AUTHORIZATION, value),
        ],
        body: Bytes::from(body),
    })
}

/// Requests per second of `concurrency` bare loops sending `request` for `time`.
async fn loopback_limit(
    env: &SuiteEnv,
    base_url: &str,
    request: Recorded,
    concurrency: usize,
    time: Duration,
) -> Result<(u64, Duration), String> {
    let http = bare_client(env)?;
    let request = Arc::new(request);
    send_recorded(&http, base_url, &request).await?;
    let started = Instant::now();
    let deadline = started + time;
    let mut tasks = JoinSet::new();
    for _ in 0..concurrency {
        let (http, request, base_url) = (http.clone(), Arc::clone(&request), base_url.to_string());
        tasks.spawn(async move {
            let mut sent = 0u64;
            while Instant::now() < deadline {
                send_recorded(&http, &base_url, &request).await?;
                sent += 1;
            }
            Ok::<u64, String>(sent)
        });
    }
    let mut total = 0;
    while let Some(done) = tasks.join_next().await {
        total += done.map_err(|e| e.to_string())??;
    }
    Ok((total, started.elapsed()))
}

/// The `sent N requests in X s (R req/s)` line of `mallcheck fuzz`: (requests, req/s).
pub fn parse_fuzz_summary(stdout: &str) -> Option<(u64, f64)> {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("sent ") && l.contains("req/s"))?;
    let requests = line
        .trim_start()
        .strip_prefix("sent ")?
        .split_whitespace()
        .next()?
        .replace(',', "")
        .parse()
        .ok()?;
    let rate = line
        .rsplit_once('(')?
        .1
        .split_whitespace()
        .next()?
        .replace(',', "")
        .parse()
        .ok()?;
    Some((requests, rate))
}

/// Runs a child process to its end, killing it after `limit`; (status, stdout, stderr).
fn run_child(mut command: Process, limit: Duration) -> Result<(i32, String, String), String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {command:?}: {e}"))?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let read = |pipe: Option<Box<dyn io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            text
        })
    };
    let out = read(stdout.map(|p| Box::new(p) as Box<dyn io::Read + Send>));
    let err = read(stderr.map(|p| Box::new(p) as Box<dyn io::Read + Send>));
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "the child did not end within {} s",
                    limit.as_secs()
                ));
            }
            Err(e) => return Err(format!("cannot wait for the child: {e}")),
        }
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    Ok((status.code().unwrap_or(-1), out, err))
}

/// This executable, which is `mallcheck` when the bench runs from the binary.
fn mallcheck_exe() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let is_mallcheck = exe
        .file_stem()
        .is_some_and(|s| s.to_string_lossy() == "mallcheck");
    if is_mallcheck {
        Ok(exe)
    } else {
        Err(format!(
            "{} is not the mallcheck binary (run `mallcheck bench`)",
            exe.display()
        ))
    }
}

async fn fuzz_rate(
    env: &SuiteEnv,
    base_url: &str,
    options: &BenchOptions,
) -> Result<Measurement, String> {
    if options.fuzz_cases == 0 {
        return Err("--fuzz-cases 0 skips this line".to_string());
    }
    let exe = mallcheck_exe()?;
    let concurrency = (4 * std::thread::available_parallelism().map_or(1, |n| n.get())).max(8);
    let request = first_page_request(&env.target)?;
    let (sent, took) =
        loopback_limit(env, base_url, request, concurrency, options.load_time).await?;
    let limit = sent as f64 / took.as_secs_f64().max(1e-9);
    let scratch = tempfile::tempdir().map_err(|e| format!("cannot make a temp dir: {e}"))?;
    let mut command = Process::new(exe);
    command
        .arg("fuzz")
        .args(["--base-url", base_url])
        .args(["--appid", &env.target.identity.appid])
        .args(["--merchant-id", &env.target.identity.merchant_id])
        .args(["--merchant-user-id", &env.target.identity.merchant_user_id])
        .args(["--cases", &options.fuzz_cases.to_string()])
        .args(["--seed", "1", "--max-time", "60", "--color", "never"])
        .arg("--junit")
        .arg(scratch.path().join("fuzz-junit.xml"))
        .arg("--regressions")
        .arg(scratch.path().join("regressions"))
        .env("MALLCHECK_OTHER_MERCHANT_ID", data::OTHER.merchant_id)
        .env(
            "MALLCHECK_OTHER_MERCHANT_USER_ID",
            data::OTHER.merchant_user_id,
        )
        .current_dir(scratch.path());
    if std::env::var_os(settings::SIGN_KEY_VAR).is_none() {
        command.env(settings::SIGN_KEY_VAR, DEMO_SIGN_KEY);
    }
    let (code, stdout, stderr) =
        tokio::task::spawn_blocking(move || run_child(command, Duration::from_secs(90)))
            .await
            .map_err(|e| e.to_string())??;
    let Some((fuzz_requests, fuzz_rate)) = parse_fuzz_summary(&stdout) else {
        let why = stderr
            .lines()
            .chain(stdout.lines())
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output")
            .to_string();
        return Err(format!(
            "`mallcheck fuzz` printed no `sent N requests` summary (exit {code}): {why}"
        ));
    };
    Ok(Measurement {
        item: "(b) fuzz rate",
        figures: format!(
            "fuzz {fuzz_rate:.0} req/s ({fuzz_requests} requests, --cases {} --seed 1) vs loopback limit {limit:.0} req/s",
            options.fuzz_cases
        ),
        ratio: (limit > 0.0).then(|| fuzz_rate / limit),
        goal: FUZZ_RATE_TARGET,
        details: vec![format!(
            "limit: {concurrency} bare loops sending a first-page mall list (count 10) for {}: {sent} requests",
            ms(took)
        )],
    })
}

// ---------------------------------------------------------------------------------------------
// (c) Validation throughput and the bodies of (c) and (d).

/// Which response a body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// A mall-list page (`mall-list-response`).
    MallPage,
    /// A products response (`products-response`).
    Products,
}

impl BodyKind {
    /// The response schema of the body.
    pub fn schema(self) -> &'static str {
        match self {
            BodyKind::MallPage => Endpoint::MallList.response_schema(),
            BodyKind::Products => Endpoint::MallProducts.response_schema(),
        }
    }
}

impl fmt::Display for BodyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BodyKind::MallPage => "mall-page",
            BodyKind::Products => "products",
        })
    }
}

/// A response body of the reference data, as the server sends it.
#[derive(Debug, Clone)]
pub struct SampleBody {
    /// Which response it is.
    pub kind: BodyKind,
    /// What it holds, e.g. `2000-mall page`.
    pub label: String,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// A mall-list success page holding the first `malls` malls of MAIN.
pub fn mall_page(malls: usize) -> SampleBody {
    let scale = u32::try_from(malls.div_ceil(data::MAIN_MALLS).max(1)).unwrap_or(u32::MAX);
    let dataset = Dataset::scaled(Shape::Standard, scale);
    let records: Vec<Value> = dataset
        .malls_of(MAIN.merchant_id)
        .into_iter()
        .take(malls)
        .map(data::mall_record)
        .collect();
    let page = json!({"success": true, "code": "0000", "msg": "处理成功", "data": records});
    SampleBody {
        kind: BodyKind::MallPage,
        label: format!("{malls}-mall page"),
        bytes: serde_json::to_vec(&page).expect("a serde_json::Value always serializes"),
    }
}

/// The products response of MAIN's first mall holding `count` products.
pub fn products_response(count: u32) -> SampleBody {
    let dataset = Dataset::new(Shape::Standard);
    let mut mall = dataset.malls_of(MAIN.merchant_id)[0].clone();
    mall.product_count = count;
    let list = Value::Array(data::products(&mall));
    SampleBody {
        kind: BodyKind::Products,
        label: format!("{count}-product response"),
        bytes: serde_json::to_vec(&list).expect("a serde_json::Value always serializes"),
    }
}

/// Parses a body alone: the floor any check of it pays.
pub fn parse_only(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice(bytes)
}

/// Time spent in each stage of checking one body.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stages {
    /// `serde_json` parse.
    pub parse: Duration,
    /// `SchemaSet::validate`.
    pub schema: Duration,
    /// `SchemaSet::extra_fields`.
    pub extra: Duration,
    /// The semantic checks of the runner (ownership, product order).
    pub semantic: Duration,
    /// Findings produced (0 for the reference data).
    pub findings: usize,
}

impl Stages {
    /// The whole check.
    pub fn total(&self) -> Duration {
        self.parse + self.schema + self.extra + self.semantic
    }
}

/// Parses and checks a body as a run does: schema, extra fields and the semantic checks of
/// its endpoint, timing each stage.
pub fn check_body(
    schemas: &SchemaSet,
    kind: BodyKind,
    bytes: &[u8],
) -> Result<Stages, serde_json::Error> {
    let t = Instant::now();
    let json = parse_only(bytes)?;
    let parse = t.elapsed();
    let schema_name = kind.schema();
    let t = Instant::now();
    let mut findings = schemas.validate(schema_name, &json).len();
    let schema = t.elapsed();
    let t = Instant::now();
    findings += schemas.extra_fields(schema_name, &json).len();
    let extra = t.elapsed();
    let t = Instant::now();
    findings += match kind {
        BodyKind::MallPage => ownership::merchant(&json, MAIN.merchant_id).len(),
        BodyKind::Products => {
            let ids = products::spu_ids(&json);
            products::order(&json).len() + products::distinct(&[(String::new(), ids)]).len()
        }
    };
    let semantic = t.elapsed();
    Ok(Stages {
        parse,
        schema,
        extra,
        semantic,
        findings,
    })
}

fn median_by(stages: &[Stages], f: impl Fn(&Stages) -> Duration) -> Duration {
    median(&stages.iter().map(f).collect::<Vec<_>>())
}

/// Line (c) for one body: rounds of parse-alone and parse-and-check, interleaved.
pub fn validation_line(schemas: &SchemaSet, body: &SampleBody, rounds: usize) -> Measurement {
    let mut parse = Vec::new();
    let mut checks = Vec::new();
    for _ in 0..rounds + 1 {
        let t = Instant::now();
        let parsed = parse_only(&body.bytes);
        parse.push(t.elapsed());
        drop(parsed);
        match check_body(schemas, body.kind, &body.bytes) {
            Ok(stages) => checks.push(stages),
            Err(e) => {
                return skipped(
                    "(c) validation",
                    VALIDATION_TARGET,
                    format!("the {} is not JSON: {e}", body.label),
                );
            }
        }
    }
    // The first round warms caches and the allocator.
    parse.remove(0);
    checks.remove(0);
    let p = median(&parse);
    let c = median_by(&checks, Stages::total);
    let size = body.bytes.len() as f64;
    let rate = |d: Duration| size / (1024.0 * 1024.0) / d.as_secs_f64().max(1e-9);
    let findings = checks.first().map_or(0, |s| s.findings);
    Measurement {
        item: "(c) validation",
        figures: format!(
            "{} ({}): check {:.0} MiB/s ({}) vs parse alone {:.0} MiB/s ({})",
            body.label,
            mib(size),
            rate(c),
            ms(c),
            rate(p),
            ms(p)
        ),
        ratio: ratio(c, p),
        goal: VALIDATION_TARGET,
        details: vec![format!(
            "check = parse {} + schema {} + extra fields {} + semantic {}; {findings} findings; median of {rounds}",
            ms(median_by(&checks, |s| s.parse)),
            ms(median_by(&checks, |s| s.schema)),
            ms(median_by(&checks, |s| s.extra)),
            ms(median_by(&checks, |s| s.semantic)),
        )],
    }
}

fn validation(schemas: &SchemaSet, options: &BenchOptions) -> Vec<Measurement> {
    let rounds = options.rounds.max(3);
    [
        mall_page(options.page_malls),
        products_response(options.response_products),
    ]
    .iter()
    .map(|body| validation_line(schemas, body, rounds))
    .collect()
}

// ---------------------------------------------------------------------------------------------
// (d) Memory, measured in a child process so that nothing else of the bench is counted.

/// A `kB` field of /proc/self/status, in bytes.
pub fn status_bytes(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

fn own_status(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status_bytes(&status, field)
}

/// The child of line (d): fetches the 5,000-product response (the big-mall variation) from
/// `base_url` through the runner's client, checks it as a run does and prints its memory.
fn memory_probe(base_url: &str) -> Result<i32, UsageError> {
    let target = embedded_target()?;
    let schemas = SchemaSet::embedded()?;
    let fail = |what: String| {
        println!("{PROBE_PREFIX} error {what}");
        Ok(exit::FAILURE)
    };
    let client = match Client::new(
        &format!("{base_url}/fault/big-mall"),
        target.signer.clone(),
        target.client.clone(),
    ) {
        Ok(c) => c,
        Err(e) => return fail(e.to_string()),
    };
    let mall = Dataset::new(Shape::BigMall)
        .malls_of(MAIN.merchant_id)
        .first()
        .map(|m| (m.mall_sn.clone(), m.signature.clone()));
    let Some((sn, sig)) = mall else {
        return fail("the big-mall data has no mall".to_string());
    };
    let body = json!({
        "appid": target.identity.appid,
        "seller": {
            "merchantId": MAIN.merchant_id,
            "merchantUserId": MAIN.merchant_user_id,
            "role": MAIN.role,
        },
        "mallID": {"mallSn": sn, "signature": sig},
    });
    let rt = crate::app::runtime()?;
    let line = rt.block_on(async {
        // Warm up the pool, the runtime and the schemas' lazy parts on a small response.
        let warm = client
            .send_json(
                Endpoint::MallList,
                &target.first_page_body(10),
                &AuthMode::Signed,
                &[],
            )
            .await;
        if let Ok(r) = &warm.result {
            let _ = schemas.validate("mall-list-response", &r.json);
            let _ = schemas.extra_fields("mall-list-response", &r.json);
        }
        drop(warm);
        let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let baseline = own_status("VmRSS").unwrap_or(0);
        let sent = client
            .send_json(Endpoint::MallProducts, &body, &AuthMode::Signed, &[])
            .await;
        let received = own_status("VmHWM").unwrap_or(0);
        let response = match sent.result {
            Ok(r) => r,
            Err(f) => return format!("{PROBE_PREFIX} error {}", f.actual),
        };
        let mut findings = crate::runner::cpu_bound(|| {
            schemas.check("products-response", &response.json).len()
        });
        findings += products::order(&response.json).len();
        let ids = products::spu_ids(&response.json).len();
        let peak = own_status("VmHWM").unwrap_or(0);
        format!(
            "{PROBE_PREFIX} body={} products={ids} findings={findings} baseline={baseline} received={received} peak={peak} reset={reset}",
            response.body.len()
        )
    });
    println!("{line}");
    Ok(exit::PASS)
}

/// The figures the memory probe prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeFigures {
    /// Response body size in bytes.
    pub body: u64,
    /// Products in the response.
    pub products: u64,
    /// RSS before the request.
    pub baseline: u64,
    /// Peak RSS once the body was received and parsed.
    pub received: u64,
    /// Peak RSS once the checks ran.
    pub peak: u64,
    /// Whether the peak could be reset before the request.
    pub reset: bool,
}

/// Reads the memory probe's line.
pub fn parse_probe(stdout: &str) -> Result<ProbeFigures, String> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(PROBE_PREFIX))
        .ok_or_else(|| "the memory probe printed nothing".to_string())?;
    if let Some(e) = line.strip_prefix(&format!("{PROBE_PREFIX} error ")) {
        return Err(format!("the memory probe failed: {e}"));
    }
    let field = |name: &str| -> Option<&str> {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
    };
    let num = |name: &str| -> Result<u64, String> {
        field(name)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("the memory probe's line lacks {name}: {line}"))
    };
    Ok(ProbeFigures {
        body: num("body")?,
        products: num("products")?,
        baseline: num("baseline")?,
        received: num("received")?,
        peak: num("peak")?,
        reset: field("reset") == Some("true"),
    })
}

fn memory(base_url: &str) -> impl FnOnce() -> Result<Measurement, String> {
    let base_url = base_url.to_string();
    move || {
        let exe = mallcheck_exe()?;
        let mut command = Process::new(exe);
        command.args(["bench", "--memory-probe", &base_url]);
        let (code, stdout, stderr) = run_child(command, Duration::from_secs(60))?;
        let figures = parse_probe(&stdout).map_err(|e| {
            let err = stderr.lines().next().unwrap_or("").to_string();
            format!("{e} (exit {code}) {err}")
        })?;
        let added = figures.peak.saturating_sub(figures.baseline);
        let mut details = vec![format!(
            "RSS before the request {}; peak once received and parsed {} (+{}), once checked {} (+{})",
            mib(figures.baseline as f64),
            mib(figures.received as f64),
            mib(figures.received.saturating_sub(figures.baseline) as f64),
            mib(figures.peak as f64),
            mib(added as f64),
        )];
        if !figures.reset {
            details.push(
                "note: /proc/self/clear_refs could not reset the peak; it may predate the request"
                    .to_string(),
            );
        }
        Ok(Measurement {
            item: "(d) memory",
            figures: format!(
                "peak RSS added while receiving and checking the {}-product response: {} vs body {}",
                figures.products,
                mib(added as f64),
                mib(figures.body as f64)
            ),
            ratio: (figures.body > 0).then(|| added as f64 / figures.body as f64),
            goal: MEMORY_TARGET,
            details,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// (e) Scaling: the suite at growing data.

/// The suite's figures at one scale.
#[derive(Debug, Clone)]
struct ScalePoint {
    scale: u32,
    time: Duration,
    requests: usize,
    response_bytes: u64,
    summary: RunSummary,
}

async fn scale_point(env: &SuiteEnv, scale: u32, rounds: usize) -> Result<ScalePoint, String> {
    let server = start_server(&env.target, scale).await?;
    let base_url = server.base_url();
    // The counting pass (all cases at once through the proxy) also warms the server.
    let proxy = Proxy::start(&base_url).await?;
    suite_once(env, &proxy.base_url).await?;
    let log = proxy.take();
    proxy.stop();
    let mut times = Vec::new();
    let mut summary = RunSummary::default();
    for _ in 0..rounds {
        let (took, s) = suite_once(env, &base_url).await?;
        times.push(took);
        summary = s;
    }
    server.shutdown().await;
    Ok(ScalePoint {
        scale,
        time: median(&times),
        requests: log.requests.len(),
        response_bytes: log.response_bytes,
        summary,
    })
}

async fn scaling(env: &SuiteEnv, scales: &[u32], rounds: usize) -> Result<Measurement, String> {
    let mut scales = scales.to_vec();
    scales.sort_unstable();
    scales.dedup();
    if scales.len() < 2 {
        return Err("--scales needs at least two factors".to_string());
    }
    let mut points = Vec::new();
    for &scale in &scales {
        // Large scales take long enough per run for one or two rounds to be stable.
        let runs = match scale {
            s if s >= 50 => 1,
            s if s >= 5 => rounds.min(3),
            _ => rounds,
        };
        points.push(scale_point(env, scale, runs).await?);
    }
    let figures = points
        .iter()
        .map(|p| format!("{}x {}", p.scale, ms(p.time)))
        .collect::<Vec<_>>()
        .join(", ");
    let mut details: Vec<String> = points
        .iter()
        .map(|p| {
            let problems = p.summary.failed + p.summary.errored;
            let note = if problems > 0 {
                format!("; {problems} cases failed or errored")
            } else {
                String::new()
            };
            format!(
                "{:>4}x: {} requests, {} received, {:.0} us per request{note}",
                p.scale,
                p.requests,
                mib(p.response_bytes as f64),
                p.time.as_secs_f64() * 1e6 / p.requests.max(1) as f64
            )
        })
        .collect();
    let (lo, hi) = (&points[points.len() - 2], &points[points.len() - 1]);
    let data_growth = f64::from(hi.scale) / f64::from(lo.scale);
    let growth = ratio(hi.time, lo.time);
    if let Some(g) = growth {
        details.push(format!(
            "{}x -> {}x: data x{data_growth:.0}, time x{g:.1}, requests x{:.1}, bytes x{:.1}",
            lo.scale,
            hi.scale,
            hi.requests as f64 / lo.requests.max(1) as f64,
            hi.response_bytes as f64 / lo.response_bytes.max(1) as f64,
        ));
    }
    Ok(Measurement {
        item: "(e) scaling",
        figures: format!("suite wall time at {figures} (MAIN's malls and products scaled)"),
        ratio: growth.map(|g| g / data_growth),
        goal: SCALING_TARGET,
        details,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_for(cases: Vec<PathBuf>) -> SuiteEnv {
        let target = embedded_target().expect("the embedded target resolves");
        let schemas = Arc::new(SchemaSet::embedded().expect("the embedded schemas compile"));
        SuiteEnv {
            target,
            schemas,
            cases,
            jobs: 2,
        }
    }

    #[test]
    fn goals_give_pass_miss_and_skip() {
        assert_eq!(Goal::AtMost(1.3).verdict(Some(1.2)), Verdict::Pass);
        assert_eq!(Goal::AtMost(1.3).verdict(Some(1.4)), Verdict::Miss);
        assert_eq!(Goal::AtLeast(0.5).verdict(Some(0.4)), Verdict::Miss);
        assert_eq!(Goal::AtLeast(0.5).verdict(Some(0.5)), Verdict::Pass);
        assert_eq!(Goal::AtLeast(0.5).verdict(None), Verdict::Skip);
    }

    #[test]
    fn a_rendered_line_holds_figures_ratio_target_and_verdict() {
        let line = Measurement {
            item: "(a) suite overhead",
            figures: "suite 1 ms vs bare 1 ms".to_string(),
            ratio: Some(1.5),
            goal: Goal::AtMost(1.3),
            details: vec!["why".to_string()],
        };
        let text = line.render();
        assert!(text.contains("suite 1 ms vs bare 1 ms"), "{text}");
        assert!(text.contains("ratio 1.50  target <= 1.30  MISS"), "{text}");
        assert!(text.contains("why"), "{text}");
    }

    #[test]
    fn median_takes_the_middle_value() {
        let d = |ms| Duration::from_millis(ms);
        assert_eq!(median(&[d(5), d(1), d(3)]), d(3));
        assert_eq!(median(&[]), Duration::ZERO);
    }

    #[test]
    fn fuzz_summary_line_gives_requests_and_rate() {
        let out = "seed 1\n\n0 of 8 properties failed; 20 cases generated, 0 replayed\nsent 1,234 requests in 2.0 s (617.0 req/s)\nJUnit report: x\n";
        assert_eq!(parse_fuzz_summary(out), Some((1234, 617.0)));
        assert_eq!(parse_fuzz_summary("error: fuzz: not available"), None);
    }

    #[test]
    fn status_fields_are_read_in_bytes() {
        let status = "Name:\tmallcheck\nVmHWM:\t   2048 kB\nVmRSS:\t   1024 kB\n";
        assert_eq!(status_bytes(status, "VmHWM"), Some(2048 * 1024));
        assert_eq!(status_bytes(status, "VmRSS"), Some(1024 * 1024));
        assert_eq!(status_bytes(status, "VmSwap"), None);
        assert!(own_status("VmRSS").is_some_and(|b| b > 0));
    }

    #[test]
    fn probe_line_parses_and_errors_surface() {
        let ok = parse_probe(
            "memory-probe body=100 products=5 findings=0 baseline=10 received=20 peak=30 reset=true\n",
        )
        .unwrap();
        assert_eq!(
            (ok.body, ok.products, ok.peak, ok.reset),
            (100, 5, 30, true)
        );
        assert!(
            parse_probe("memory-probe error refused")
                .unwrap_err()
                .contains("refused")
        );
        assert!(parse_probe("").is_err());
    }

    #[test]
    fn sample_bodies_check_clean_and_the_check_costs_more_than_the_parse() {
        let schemas = SchemaSet::embedded().unwrap();
        for body in [mall_page(12), products_response(9)] {
            let stages = check_body(&schemas, body.kind, &body.bytes).unwrap();
            assert_eq!(stages.findings, 0, "{}", body.label);
            assert!(stages.total() >= stages.parse);
            let line = validation_line(&schemas, &body, 1);
            assert!(line.ratio.is_some_and(|r| r > 0.0), "{}", line.render());
        }
        let page: Value = serde_json::from_slice(&mall_page(12).bytes).unwrap();
        assert_eq!(page["data"].as_array().map(Vec::len), Some(12));
        let list: Value = serde_json::from_slice(&products_response(9).bytes).unwrap();
        assert_eq!(list.as_array().map(Vec::len), Some(9));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn suite_and_replay_run_the_same_requests_on_a_tiny_case_file() {
        let dir = tempfile::tempdir().unwrap();
        let case = r#"
cases:
  - name: first page
    endpoint: mall-list
    request:
      body:
        appid: "${MALLCHECK_APPID}"
        filter:
          seller:
            merchantId: "${MALLCHECK_MERCHANT_ID}"
            merchantUserId: "${MALLCHECK_MERCHANT_USER_ID}"
            role: "${MALLCHECK_ROLE}"
        sort: { sortField: id, sort: DESC }
        cursor: { cursorField: id, endCursor: null, count: 3 }
    expect:
      status: 200
"#;
        std::fs::write(dir.path().join("tiny.yaml"), case).unwrap();
        let env = env_for(vec![dir.path().to_path_buf()]);
        let server = start_server(&env.target, 1).await.unwrap();
        let line = suite_overhead(&env, &server.base_url(), 1).await.unwrap();
        assert!(
            line.figures.contains("same 1 requests"),
            "{}",
            line.render()
        );
        assert!(line.details[0].contains("1 passed"), "{}", line.render());
        assert!(line.ratio.is_some_and(|r| r > 0.0));
        let limit = loopback_limit(
            &env,
            &server.base_url(),
            first_page_request(&env.target).unwrap(),
            2,
            Duration::from_millis(50),
        )
        .await
        .unwrap();
        assert!(limit.0 > 0);
        server.shutdown().await;
        let scaled = scaling(&env, &[1, 2], 1).await.unwrap();
        assert!(scaled.ratio.is_some(), "{}", scaled.render());
        assert!(
            scaled.details[0].contains("1 requests"),
            "{}",
            scaled.render()
        );
    }
}
