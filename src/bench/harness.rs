//! `mallcheck bench`: end-to-end benchmarks against the embedded server on loopback, printed in
//! one run as ratios measured side by side, since no absolute time is stable on a
//! shared machine.
//!
//! The lines: (a) the suite against a bare replay of its own requests, (b) the fuzzer's request
//! rate against a bare concurrent loop (both on a server answering recorded bytes), (c) checking a large body against parsing it alone,
//! (d) the peak memory of checking the 5,000-product response against its size, and (e) the
//! suite's wall time as the data grows. The in-process parts also have a `cargo bench`.

use std::io::{self};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::bench::canned::{CannedServer, Table};
use crate::bench::fuzz_rate::{FUZZ_RATE_TARGET, fuzz_rate};
use crate::bench::measure::print;
use crate::bench::measure::{
    Goal, Measurement, cpu_time, machine, median, median_ratio, mib, ms, ratio, skipped,
};
use crate::bench::memory::{MEMORY_TARGET, memory};
use crate::bench::proxy::{CLIENT_ADDS, Log, Proxy, Recorded};
use crate::bench::validation::validation;
use crate::case::parse::ParseContext;
use crate::case::parse::files::load_paths_or_shipped;
use crate::error::UsageError;
use crate::profile::Profile;
use crate::redact::Redactor;
use crate::report::FanOut;
use crate::report::console::{Console, Verbosity};
use crate::runner::{PlannedCase, RunOptions, Runner};
use crate::server::{self, RunningServer, ServerOptions};
use crate::service::client::{Client, ClientOptions};
use crate::service::discover::Discovery;
use crate::settings::{self, Settings};
use crate::spec::schemas::SchemaSet;
use crate::verdict::event::RunSummary;

/// (a) Suite wall time over the bare replay of the same requests.
const SUITE_OVERHEAD_TARGET: Goal = Goal::AtMost(1.3);
/// (e) Growth of the suite's wall time over the growth of the data between the two largest
/// scales (1.0 is linear; the margin absorbs noise).
const SCALING_TARGET: Goal = Goal::AtMost(1.2);

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
    /// `mallcheck fuzz --count` of line (b); 0 skips the line.
    pub fuzz_cases: u32,
    /// Duration of the bare concurrent loop of line (b).
    pub load_time: Duration,
    /// Malls of the page of line (c).
    pub page_malls: usize,
    /// Products of the response of lines (c) and (d).
    pub response_products: u32,
    /// The lines to measure (`a` to `f`); empty is all.
    pub only: Vec<char>,
}

impl BenchOptions {
    /// Whether line `line` is measured.
    pub fn wants(&self, line: char) -> bool {
        self.only.is_empty() || self.only.contains(&line)
    }
}

/// The first lines: build, machine and what is measured.
pub fn banner(load_time: Duration, compile_time: Duration) -> String {
    let build = if cfg!(debug_assertions) {
        "DEBUG build: figures are meaningless, use `cargo run --release -- bench`"
    } else {
        "release build"
    };
    format!(
        "mallcheck bench: {build}; {}; embedded server on 127.0.0.1\nschemas loaded in {} and \
         compiled in {}, once, before any line (a command compiles a shipped schema when an \
         answer first needs it)\n\n",
        machine(),
        ms(load_time),
        ms(compile_time),
    )
}

/// The settings `mallcheck run` uses without `--base-url`: the embedded server's identities
/// and signer, with the `MALLCHECK_*` overrides of the environment that apply to it (a remote
/// target's base URL, key and identity are left out).
pub fn embedded_target(redactor: &Redactor) -> Result<Settings, UsageError> {
    const REMOTE_ONLY: [&str; 5] = [
        "MALLCHECK_BASE_URL",
        settings::SIGN_KEY_VAR,
        "MALLCHECK_APPID",
        "MALLCHECK_MERCHANT_ID",
        "MALLCHECK_MERCHANT_USER_ID",
    ];
    let env = settings::Env::from_pairs(
        std::env::vars().filter(|(k, _)| !REMOTE_ONLY.contains(&k.as_str())),
    );
    settings::resolve(
        &settings::Flags::default(),
        &env,
        Profile::default(),
        redactor,
    )
}

/// What every suite run needs.
pub struct SuiteEnv {
    /// The embedded target's settings.
    pub target: Settings,
    /// The bench's redactor.
    pub redactor: Redactor,
    /// Compiled schemas.
    pub schemas: Arc<SchemaSet>,
    /// Case files or directories of the suite.
    pub cases: Vec<PathBuf>,
    /// Cases run at once.
    pub jobs: usize,
}

async fn start_server(target: &Settings, scale: u32) -> Result<RunningServer, String> {
    server::start(ServerOptions {
        signer: target.signer.clone(),
        appid: target.identity.appid.clone(),
        scale,
        ..ServerOptions::default()
    })
    .await
    .map_err(|e| format!("cannot start the embedded server: {e}"))
}

/// Measures every line.
pub async fn measure_all(env: &SuiteEnv, options: &BenchOptions) -> Vec<Measurement> {
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
    if options.wants('a') {
        emit(
            suite_overhead(env, &base_url, options.rounds)
                .await
                .unwrap_or_else(|e| skipped("(a) suite overhead", SUITE_OVERHEAD_TARGET, e)),
        );
    }
    if options.wants('b') {
        match fuzz_rate(env, server.addr(), options).await {
            Ok(lines) => lines.into_iter().for_each(&mut emit),
            Err(e) => {
                emit(skipped("(b) fuzz rate", FUZZ_RATE_TARGET, e.clone()));
                emit(skipped("(b) embedded server", Goal::Informative, e));
            }
        }
    }
    if options.wants('c') {
        for line in crate::cpu::cpu_bound(usize::MAX, || validation(&env.schemas, options)) {
            emit(line);
        }
    }
    if options.wants('d') {
        let probe = memory(&base_url);
        emit(
            crate::cpu::cpu_bound(usize::MAX, probe)
                .unwrap_or_else(|e| skipped("(d) memory", MEMORY_TARGET, e)),
        );
    }
    server.shutdown().await;
    if options.wants('e') {
        emit(
            scaling(env, &options.scales, options.rounds)
                .await
                .unwrap_or_else(|e| skipped("(e) scaling", SCALING_TARGET, e)),
        );
    }
    if options.wants('f') {
        match crate::bench::scale_line::scale_lines(env).await {
            Ok(scale) => scale.into_iter().for_each(&mut emit),
            Err(e) => {
                use crate::bench::scale_line::{SCALE_PACING_TARGET, SCALE_REQUESTS_TARGET};
                emit(skipped(
                    "(f) scale: requests",
                    SCALE_REQUESTS_TARGET,
                    e.clone(),
                ));
                emit(skipped("(f) scale: pacing", SCALE_PACING_TARGET, e));
            }
        }
    }
    lines
}

// ---------------------------------------------------------------------------------------------
// (a) Suite overhead: the suite against a bare replay of the requests it made, both against a
// server answering the bytes the embedded server gave when they were recorded.

/// The cases of the suite, loaded and planned as `mallcheck run` does without a filter.
pub(crate) fn planned_cases(env: &SuiteEnv) -> Result<Vec<PlannedCase>, String> {
    let names = env.schemas.names();
    let cx = ParseContext {
        vars: &env.target.vars,
        schema_names: &names,
    };
    let files = load_paths_or_shipped(&env.cases, &cx)
        .map_err(|d| format!("cannot load the cases: {}", crate::diag::render(&d, false)))?;
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
    runner_with(env, base_url, env.target.client.clone())
}

/// The runner of `mallcheck run` (no snapshots) toward `base_url` under `limits`.
pub(crate) fn runner_with(
    env: &SuiteEnv,
    base_url: &str,
    limits: ClientOptions,
) -> Result<Arc<Runner>, String> {
    let client = Client::new(base_url, env.target.signer.clone(), limits, &env.redactor)
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
        page_limit: Default::default(),
        target: crate::session::EMBEDDED.to_string(),
    }))
}

/// One suite run as `mallcheck run` makes it: load the cases, run them with the console sink
/// writing to nowhere. Gives the whole time and the part spent loading the cases.
async fn suite_once(
    env: &SuiteEnv,
    base_url: &str,
) -> Result<(Duration, Duration, RunSummary), String> {
    let started = Instant::now();
    let planned = planned_cases(env)?;
    let loaded = started.elapsed();
    let runner = runner(env, base_url)?;
    let mut sinks = FanOut::default();
    sinks.push(Box::new(Console::new(
        io::sink(),
        &env.redactor,
        false,
        Verbosity::Normal,
        false,
    )));
    let summary = runner
        .run(planned, &mut |event| sinks.on_event(&event))
        .await;
    let _ = sinks.finish();
    Ok((started.elapsed(), loaded, summary))
}

/// What the suite sent and was answered, case by case, recorded through a proxy.
struct Recording {
    /// Each case's requests, in the order they were sent.
    per_case: Vec<Vec<Recorded>>,
    /// The answers' bodies.
    bodies: Vec<bytes::Bytes>,
    /// Every answer by its request, for the precomputed-bytes server.
    table: Table,
}

/// Runs every case alone through the recording proxy in front of `base_url`.
async fn record_cases(env: &SuiteEnv, base_url: &str) -> Result<Recording, String> {
    let proxy = Proxy::start(base_url).await?;
    let runner = runner(env, &proxy.base_url)?;
    let (mut per_case, mut answers) = (Vec::new(), Vec::new());
    for case in planned_cases(env)? {
        Arc::clone(&runner).run(vec![case], &mut |_| {}).await;
        let log = proxy.take();
        answers.extend(log.answers);
        per_case.push(log.requests);
    }
    proxy.stop();
    let bodies = answers.iter().map(|(_, a)| a.body.clone()).collect();
    let table = Log {
        answers,
        ..Log::default()
    }
    .table();
    Ok(Recording {
        per_case,
        bodies,
        table,
    })
}

/// A bare client as the suite's own path for a plain `http://` URL is (hyper's pooled HTTP/1.1
/// client, keep-alive, no redirects), without checks.
pub(crate) type BareClient = hyper_util::client::legacy::Client<HttpConnector, Full<bytes::Bytes>>;

pub(crate) fn bare_client() -> BareClient {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .pool_max_idle_per_host(64)
        .build(connector)
}

pub(crate) async fn send_recorded(
    http: &BareClient,
    base_url: &str,
    r: &Recorded,
    timeout: Duration,
) -> Result<usize, String> {
    let mut request = http::Request::builder()
        .method(r.method.clone())
        .uri(format!("{base_url}{}", r.path));
    for (k, v) in &r.headers {
        request = request.header(k, v);
    }
    for (k, v) in CLIENT_ADDS {
        request = request.header(k, v);
    }
    let request = request
        .body(Full::new(r.body.clone()))
        .map_err(|e| e.to_string())?;
    let exchange = async {
        let response = http.request(request).await.map_err(|e| e.to_string())?;
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?;
        Ok::<usize, String>(body.to_bytes().len())
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| "no answer in time".to_string())?
}

/// Sends every recorded request with `jobs` in flight across the whole suite: the runner also
/// bounds the whole run's requests in flight by `--jobs` and overlaps a case's walks, so the
/// bare side keeps the wire as busy as it can (a lower bound, not a sequential replay per case).
async fn replay(
    env: &SuiteEnv,
    base_url: &str,
    cases: &Arc<Vec<Vec<Recorded>>>,
) -> Result<Duration, String> {
    let started = Instant::now();
    let http = bare_client();
    let timeout = env.target.client.timeout;
    let permits = Arc::new(Semaphore::new(env.jobs.max(1)));
    let mut tasks = JoinSet::new();
    for (case, index) in cases
        .iter()
        .enumerate()
        .flat_map(|(c, requests)| (0..requests.len()).map(move |i| (c, i)))
    {
        let (http, cases, permits) = (http.clone(), Arc::clone(cases), Arc::clone(&permits));
        let base_url = base_url.to_string();
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.map_err(|e| e.to_string())?;
            send_recorded(&http, &base_url, &cases[case][index], timeout).await?;
            Ok::<(), String>(())
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.map_err(|e| e.to_string())??;
    }
    Ok(started.elapsed())
}

/// Line (a): records the suite's exchanges with the embedded server at `base_url`, then times
/// the suite and the bare replay in alternating rounds against the recorded bytes.
async fn suite_overhead(
    env: &SuiteEnv,
    base_url: &str,
    rounds: usize,
) -> Result<Measurement, String> {
    let Recording {
        per_case,
        bodies,
        table,
    } = record_cases(env, base_url).await?;
    let recorded = Arc::new(per_case);
    let answers = bodies.len();
    let ceiling = tokio::task::spawn_blocking(move || {
        crate::bench::fuzz_rate::parse_ceiling(&bodies, Duration::from_millis(300))
    })
    .await
    .map_err(|e| e.to_string())?;
    let requests: usize = recorded.iter().map(Vec::len).sum();
    // Both sides go to a server answering the recorded bytes, so that the limit is the client
    // and the wire, not the reference server's own work (which both sides would share).
    let distinct = table.len();
    let canned = CannedServer::start(table)
        .await
        .map_err(|e| format!("cannot start the precomputed-bytes server: {e}"))?;
    let base_url = canned.base_url();
    let base_url = base_url.as_str();
    suite_once(env, base_url).await?;
    replay(env, base_url, &recorded).await?;
    let (mut suite, mut bare, mut loading) = (Vec::new(), Vec::new(), Vec::new());
    let (mut suite_cpu, mut bare_cpu) = (Vec::new(), Vec::new());
    let mut summary = RunSummary::default();
    for _ in 0..rounds {
        let cpu = cpu_time();
        let (took, loaded, s) = suite_once(env, base_url).await?;
        suite_cpu.push(cpu_time().saturating_sub(cpu));
        suite.push(took);
        loading.push(loaded);
        summary = s;
        let cpu = cpu_time();
        bare.push(replay(env, base_url, &recorded).await?);
        bare_cpu.push(cpu_time().saturating_sub(cpu));
    }
    let (served, missed) = (canned.counters().served(), canned.counters().misses());
    drop(canned);
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
        "server: answers from precomputed bytes recorded from the suite against the embedded \
         server ({distinct} distinct requests): {served} requests served, {missed} not recorded"
    ));
    let (sc, bc) = (median(&suite_cpu), median(&bare_cpu));
    details.push(format!(
        "process CPU (the precomputed-bytes server's included): suite {} vs bare {} ({}x); loading the \
         cases {} of the suite's wall time",
        ms(sc),
        ms(bc),
        ratio(sc, bc).map_or_else(|| "-".to_string(), |r| format!("{r:.2}")),
        ms(median(&loading)),
    ));
    let of_bare = |d: Duration| d.as_secs_f64() / b.as_secs_f64().max(1e-9);
    let (floor, checked, tree) = (
        ceiling.floor.time_for(answers),
        ceiling.checked.time_for(answers),
        ceiling.tree.time_for(answers),
    );
    details.push(format!(
        "the floor: one core reads the {answers} answers (mean {} bytes) syntax-only \
         (serde_json into IgnoredAny) in {} ({:.0}/s), {:.2} of the bare replay's wall time; \
         as the client reads each anew (typed fast path for the {} that conform, else a tree) {} \
         ({:.2}); into serde_json trees {} ({:.2})",
        ceiling.mean_bytes,
        ms(floor),
        ceiling.rate(),
        of_bare(floor),
        ceiling.fast.0,
        ms(checked),
        of_bare(checked),
        ms(tree),
        of_bare(tree),
    ));
    details.push(format!(
        "per request: suite {:.0} us, bare {:.0} us",
        s.as_secs_f64() * 1e6 / requests.max(1) as f64,
        b.as_secs_f64() * 1e6 / requests.max(1) as f64
    ));
    Ok(Measurement {
        item: "(a) suite overhead",
        figures: format!(
            "suite {} vs bare replay {} of the same {requests} requests (medians of {rounds}; the ratio is the median of the {rounds} rounds side by side)",
            ms(s),
            ms(b)
        ),
        ratio: median_ratio(&suite, &bare),
        goal: SUITE_OVERHEAD_TARGET,
        details,
    })
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
        let (took, _, s) = suite_once(env, &base_url).await?;
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
        let redactor = Redactor::new();
        let target = embedded_target(&redactor).expect("the embedded target resolves");
        let schemas = Arc::new(SchemaSet::embedded().expect("the embedded schemas compile"));
        SuiteEnv {
            target,
            redactor,
            schemas,
            cases,
            jobs: 2,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn suite_and_replay_run_the_same_requests_on_a_tiny_case_file() {
        let dir = tempfile::tempdir().unwrap();
        let env = env_for(vec![dir.path().to_path_buf()]);
        // One case: the first page (count 3), written as JSON (which YAML reads as it is).
        let case = serde_json::json!({"cases": [{
            "name": "first page",
            "endpoint": "mall-list",
            "request": {"body": env.target.first_page_body(3)},
            "expect": {"status": 200},
        }]});
        std::fs::write(dir.path().join("tiny.yaml"), case.to_string()).unwrap();
        let server = start_server(&env.target, 1).await.unwrap();
        let line = suite_overhead(&env, &server.base_url(), 1).await.unwrap();
        assert!(
            line.figures.contains("same 1 requests"),
            "{}",
            line.render()
        );
        assert!(line.details[0].contains("1 passed"), "{}", line.render());
        // Both sides went to the recorded bytes: a warm-up and one round each, all answered.
        assert!(
            line.details[1].contains("1 distinct requests): 4 requests served, 0 not recorded"),
            "{}",
            line.render()
        );
        assert!(line.ratio.is_some_and(|r| r > 0.0));
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
