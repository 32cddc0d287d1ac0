//! Line (b): the request rate of `mallcheck fuzz --jobs N` against the field's limit.
//!
//! The limit is the field's, not our server's: `mallcheck fuzz --seed 1` runs once through the
//! recording proxy in front of the embedded server, and its exchanges become the table of a
//! server that answers from precomputed bytes ([`CannedServer`]). A load generator of the field
//! (bare hyper client loops, N connections) sends the same requests to that server: that is
//! the limit. Then the same fuzz run (same seed, same bodies, so the same answers) runs against
//! the same server with N requests in flight, and its own request rate over the limit is the
//! ratio: how much of the wire mallcheck uses. The embedded server's throughput under the same
//! generator and requests is printed on its own line, for information.

use std::net::SocketAddr;
use std::process::Command as Process;
use std::sync::Arc;
use std::time::Duration;

use crate::bench::canned::CannedServer;
use crate::bench::child::{mallcheck_exe, run_child};
use crate::bench::harness::{BenchOptions, SuiteEnv};
use crate::bench::load::{self, GENERATOR};
use crate::bench::load_child;
use crate::bench::measure::{CpuUse, Goal, Measurement, children_cpu, cpu_time, ms};
use crate::bench::proxy::Proxy;
use crate::server::data::{self, DEMO_SIGN_KEY};
use crate::settings;

/// (b) Fuzzer requests per second over the field's limit.
pub(crate) const FUZZ_RATE_TARGET: Goal = Goal::AtLeast(0.5);

/// Pairs of line (b) at most (`--rounds` fewer): each is 2 s of load and a fuzz run.
const FUZZ_RATE_PAIRS: usize = 3;

/// One limit and the fuzz run after it.
#[derive(Debug, Clone, Copy)]
struct Pair {
    limit: load::Load,
    generator_cpu: CpuUse,
    limit_server_cpu: Duration,
    fuzz: FuzzSummary,
    fuzz_cpu: CpuUse,
    server_cpu: Duration,
    /// Requests the server answered during the fuzz run.
    fuzz_served: u64,
}

impl Pair {
    fn ratio(&self) -> f64 {
        let limit = self.limit.rate();
        if limit > 0.0 {
            self.fuzz.rate / limit
        } else {
            0.0
        }
    }
}

/// What `mallcheck fuzz` printed at its end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FuzzSummary {
    /// Requests sent.
    pub requests: u64,
    /// Its own rate, requests per second.
    pub rate: f64,
    /// Properties that failed, of how many.
    pub failed: Option<(u32, u32)>,
}

/// Reads the `N of M properties failed` and `sent N requests in X s (R req/s)` lines of
/// `mallcheck fuzz`.
pub fn parse_fuzz_summary(stdout: &str) -> Option<FuzzSummary> {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("sent ") && l.contains("req/s"))?;
    let requests = number(
        line.trim_start()
            .strip_prefix("sent ")?
            .split_whitespace()
            .next()?,
    )?;
    let rate = number(line.rsplit_once('(')?.1.split_whitespace().next()?)?;
    let failed = stdout.lines().find_map(|l| {
        let (failed, rest) = l.trim().split_once(" of ")?;
        let mut words = rest.split_whitespace();
        let total = words.next()?;
        let noun = words.next()?;
        let verb = words.next()?.trim_end_matches(';');
        (noun.starts_with("propert") && verb == "failed")
            .then(|| Some((number(failed)?, number(total)?)))?
    });
    Some(FuzzSummary {
        requests,
        rate,
        failed,
    })
}

/// Microseconds of `cpu` per request of `requests`.
fn per_request(cpu: Duration, requests: u64) -> f64 {
    cpu.as_secs_f64() * 1e6 / requests.max(1) as f64
}

/// A number as the fuzz summary prints it (`1,234`).
fn number<T: std::str::FromStr>(s: &str) -> Option<T> {
    s.replace(',', "").parse().ok()
}

/// Runs `mallcheck fuzz --seed 1 --jobs N` against `base_url` and reads its summary; with the
/// CPU time the process used, start to end.
async fn fuzz_once(
    env: &SuiteEnv,
    base_url: &str,
    options: &BenchOptions,
    jobs: usize,
) -> Result<(FuzzSummary, CpuUse), String> {
    let exe = mallcheck_exe()?;
    let scratch = tempfile::tempdir().map_err(|e| format!("cannot make a temp dir: {e}"))?;
    let mut command = Process::new(exe);
    command
        .arg("fuzz")
        .args(["--base-url", base_url])
        .args(["--appid", &env.target.identity.appid])
        .args(["--merchant-id", &env.target.identity.merchant_id])
        .args(["--merchant-user-id", &env.target.identity.merchant_user_id])
        .args(["--count", &options.fuzz_cases.to_string()])
        .args(["--jobs", &jobs.to_string()])
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
    let (code, stdout, stderr, cpu) = tokio::task::spawn_blocking(move || {
        // The bench waits for no other child meanwhile: the difference is this one's.
        let before = children_cpu();
        run_child(command, Duration::from_secs(90))
            .map(|(code, out, err)| (code, out, err, children_cpu().since(before)))
    })
    .await
    .map_err(|e| e.to_string())??;
    let summary = parse_fuzz_summary(&stdout).ok_or_else(|| {
        let why = stderr
            .lines()
            .chain(stdout.lines())
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output");
        format!("`mallcheck fuzz` printed no `sent N requests` summary (exit {code}): {why}")
    })?;
    Ok((summary, cpu))
}

/// How fast one core reads the recorded answers: the floor (a syntax-only read of the bytes,
/// `serde_json` into `IgnoredAny`: the least any client that looks at an answer does), the
/// read a run does (`LazyJson::parse`: the typed fast path for a conforming answer, the tree
/// for the rest) and the `serde_json::Value` tree a check built before the fast path.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ParseCeiling {
    /// The syntax-only read.
    pub(crate) floor: Rate,
    /// `LazyJson::parse`, as the client reads each answer.
    pub(crate) checked: Rate,
    /// `serde_json::Value` trees.
    pub(crate) tree: Rate,
    /// Answers that took the fast path, of all answers.
    pub(crate) fast: (usize, usize),
    pub(crate) mean_bytes: u64,
}

/// Answers read in a time.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Rate {
    pub(crate) parsed: u64,
    pub(crate) took: Duration,
}

impl Rate {
    /// Answers per second.
    pub(crate) fn per_second(&self) -> f64 {
        let secs = self.took.as_secs_f64();
        if secs > 0.0 {
            self.parsed as f64 / secs
        } else {
            0.0
        }
    }

    /// The time all `n` answers take at this rate.
    pub(crate) fn time_for(&self, n: usize) -> Duration {
        Duration::from_secs_f64(n as f64 / self.per_second().max(1e-9))
    }
}

impl ParseCeiling {
    /// Answers per second at the floor.
    pub(crate) fn rate(&self) -> f64 {
        self.floor.per_second()
    }
}

/// Reads `bodies` in turn on this thread each of the three ways, for about `time` each (at
/// least one pass).
pub(crate) fn parse_ceiling(bodies: &[bytes::Bytes], time: Duration) -> ParseCeiling {
    use crate::service::lazy_json::LazyJson;
    let total: u64 = bodies.iter().map(|b| b.len() as u64).sum();
    let mean_bytes = total / (bodies.len().max(1) as u64);
    let fast = bodies
        .iter()
        .filter(|b| LazyJson::parse((*b).clone()).is_ok_and(|j| j.digest().is_some()))
        .count();
    ParseCeiling {
        floor: read_for(bodies, time, |b| {
            std::hint::black_box(crate::spec::wire::syntax_only(b));
        }),
        checked: read_for(bodies, time, |b| {
            std::hint::black_box(LazyJson::parse(b.clone()).is_ok());
        }),
        tree: read_for(bodies, time, |b| {
            let tree = serde_json::from_slice::<serde_json::Value>(b);
            std::hint::black_box(&tree);
        }),
        fast: (fast, bodies.len()),
        mean_bytes,
    }
}

fn read_for(bodies: &[bytes::Bytes], time: Duration, read: impl Fn(&bytes::Bytes)) -> Rate {
    let started = std::time::Instant::now();
    let mut parsed = 0u64;
    loop {
        for body in bodies {
            read(body);
            parsed += 1;
        }
        if bodies.is_empty() || started.elapsed() >= time {
            break;
        }
    }
    Rate {
        parsed,
        took: started.elapsed(),
    }
}

/// `a / b`, or 0 when `b` is 0.
fn share(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

fn failed(s: &FuzzSummary) -> String {
    s.failed.map_or_else(
        || "? properties failed".to_string(),
        |(f, t)| format!("{f} of {t} properties failed"),
    )
}

/// Line (b) and the embedded server's throughput line.
pub(crate) async fn fuzz_rate(
    env: &SuiteEnv,
    embedded: SocketAddr,
    options: &BenchOptions,
) -> Result<[Measurement; 2], String> {
    if options.fuzz_cases == 0 {
        return Err("--fuzz-cases 0 skips this line".to_string());
    }
    let jobs = env.jobs.max(1);
    // Record the exchanges of the fuzz run against the embedded server.
    let proxy = Proxy::start(&format!("http://{embedded}")).await?;
    let (recorded, _) = fuzz_once(env, &proxy.base_url, options, jobs).await?;
    let log = proxy.take();
    proxy.stop();
    let table = log.table();
    let bodies: Vec<bytes::Bytes> = log.answers.iter().map(|(_, a)| a.body.clone()).collect();
    let time = options.load_time;
    let ceiling = tokio::task::spawn_blocking(move || parse_ceiling(&bodies, time))
        .await
        .map_err(|e| e.to_string())?;
    let distinct = table.len();
    let requests = Arc::new(log.requests);
    // The field's limit: the load generator against the precomputed-bytes server.
    let canned = CannedServer::start(table)
        .await
        .map_err(|e| format!("cannot start the precomputed-bytes server: {e}"))?;
    // Pairs side by side, each the load generator in a process of its own (as the fuzz run
    // is) and then the fuzz run; this process's CPU meanwhile is the server's (the bench does
    // nothing else). The pair of the median ratio is shown: the host's speed drifts between
    // the two halves of one pair less than across the line.
    let mut pairs = Vec::new();
    let misses_before = canned.counters().misses();
    for _ in 0..options.rounds.clamp(1, FUZZ_RATE_PAIRS) {
        let cpu = cpu_time();
        let (limit, generator_cpu) =
            load_child::drive(canned.addr(), &requests, jobs, options.load_time).await?;
        let limit_server_cpu = cpu_time().saturating_sub(cpu);
        let counted = canned.counters().served();
        let cpu = cpu_time();
        let (fuzz, fuzz_cpu) = fuzz_once(env, &canned.base_url(), options, jobs).await?;
        let server_cpu = cpu_time().saturating_sub(cpu);
        pairs.push(Pair {
            limit,
            generator_cpu,
            limit_server_cpu,
            fuzz,
            fuzz_cpu,
            server_cpu,
            fuzz_served: canned.counters().served() - counted,
        });
    }
    // The load generator sends only recorded requests: a miss is a fuzz run's.
    let missed = canned.counters().misses() - misses_before;
    let ratios: Vec<f64> = pairs.iter().map(Pair::ratio).collect();
    pairs.sort_by(|a, b| a.ratio().total_cmp(&b.ratio()));
    let Pair {
        limit,
        generator_cpu,
        limit_server_cpu,
        fuzz,
        fuzz_cpu,
        server_cpu,
        fuzz_served: served,
    } = pairs[pairs.len() / 2];
    // The same generator in this process, beside the server (how the limit was measured
    // before; printed for comparison).
    let cpu = cpu_time();
    let shared = load::drive(
        canned.addr(),
        Arc::clone(&requests),
        jobs,
        options.load_time,
    )
    .await?;
    let shared_cpu = cpu_time().saturating_sub(cpu);
    drop(canned);
    // The embedded server under the same generator and requests (informative).
    let own = load::drive(embedded, Arc::clone(&requests), jobs, options.load_time).await?;
    let mut details = vec![
        format!(
            "limit: {GENERATOR}, {jobs} connections, in a process of its own (as the fuzz run \
             is), for {}: {} answers; the {} requests of the recorded run in turn; the same \
             generator inside the server's process: {:.0} req/s",
            ms(limit.took),
            limit.answers,
            requests.len(),
            shared.rate(),
        ),
        format!(
            "server: answers from precomputed bytes recorded from the same run against the \
             embedded server ({distinct} distinct requests); fuzz: {served} requests, {missed} \
             not recorded"
        ),
        format!(
            "the floor: one core reads {:.0} of the answers per second syntax-only (serde_json \
             into IgnoredAny, mean {} bytes), {:.2} of the limit; as the client reads each anew \
             (typed fast path for the {} of {} that conform, else a tree) {:.0}/s ({:.2}); into \
             serde_json trees {:.0}/s ({:.2})",
            ceiling.rate(),
            ceiling.mean_bytes,
            share(ceiling.rate(), limit.rate()),
            ceiling.fast.0,
            ceiling.fast.1,
            ceiling.checked.per_second(),
            share(ceiling.checked.per_second(), limit.rate()),
            ceiling.tree.per_second(),
            share(ceiling.tree.per_second(), limit.rate()),
        ),
        format!(
            "CPU per request: the fuzz process {:.0} us ({:.0} us in user space, {:.0} us in the \
             kernel; its start, the schemas and the preflight included), the precomputed-bytes \
             server {:.0} us; for the limit, the load generator {:.0} us ({:.0} user, {:.0} \
             kernel) and the server {:.0} us (inside the server's process, the two together \
             {:.0} us)",
            per_request(fuzz_cpu.total(), fuzz.requests),
            per_request(fuzz_cpu.user, fuzz.requests),
            per_request(fuzz_cpu.system, fuzz.requests),
            per_request(server_cpu, fuzz.requests),
            per_request(generator_cpu.total(), limit.answers),
            per_request(generator_cpu.user, limit.answers),
            per_request(generator_cpu.system, limit.answers),
            per_request(limit_server_cpu, limit.answers),
            per_request(shared_cpu, shared.answers),
        ),
        format!(
            "verdicts: {} against the embedded server, {} against the precomputed bytes",
            failed(&recorded),
            failed(&fuzz)
        ),
    ];
    if missed > 0 || recorded.failed != fuzz.failed {
        details.push(
            "note: the run against the precomputed bytes is not the recorded one (unrecorded \
             requests or other verdicts); its rate includes shrinking"
                .to_string(),
        );
    }
    let limit_rate = limit.rate();
    let rate = Measurement {
        item: "(b) fuzz rate",
        figures: format!(
            "fuzz --jobs {jobs} {:.0} req/s ({} requests, --count {} --seed 1) vs the field's \
             limit {limit_rate:.0} req/s on the same precomputed-bytes server (the pair of the \
             median ratio of {}: {})",
            fuzz.rate,
            fuzz.requests,
            options.fuzz_cases,
            ratios.len(),
            ratios
                .iter()
                .map(|r| format!("{r:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ratio: (limit_rate > 0.0).then(|| fuzz.rate / limit_rate),
        goal: FUZZ_RATE_TARGET,
        details,
    };
    let server = Measurement {
        item: "(b) embedded server",
        figures: format!(
            "{:.0} req/s under the same generator and requests ({} answers in {}) vs {limit_rate:.0} \
             req/s from precomputed bytes",
            own.rate(),
            own.answers,
            ms(own.took)
        ),
        ratio: (limit_rate > 0.0).then(|| own.rate() / limit_rate),
        goal: Goal::Informative,
        details: vec![],
    };
    Ok([rate, server])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parse_ceiling_reads_every_answer_at_least_once() {
        let bodies = vec![
            bytes::Bytes::from_static(b"{\"data\": [1, 2, 3]}"),
            bytes::Bytes::from_static(b"[]"),
        ];
        let c = parse_ceiling(&bodies, Duration::ZERO);
        assert_eq!((c.floor.parsed, c.tree.parsed, c.mean_bytes), (2, 2, 10));
        assert_eq!(c.checked.parsed, 2);
        assert_eq!(parse_ceiling(&[], Duration::ZERO).floor.parsed, 0);
    }

    #[test]
    fn fuzz_summary_gives_requests_rate_and_failed_properties() {
        let out = "seed 1\n\n0 of 8 properties failed; 20 cases generated, 0 replayed\nsent 1,234 requests in 2.0 s (617.0 req/s)\nJUnit report: x\n";
        assert_eq!(
            parse_fuzz_summary(out),
            Some(FuzzSummary {
                requests: 1234,
                rate: 617.0,
                failed: Some((0, 8))
            })
        );
        let one = "1 of 1 property failed; 3 cases generated, 0 replayed\nsent 1 request in 0.0 s (0.0 req/s)\n";
        assert_eq!(parse_fuzz_summary(one).and_then(|s| s.failed), Some((1, 1)));
        assert_eq!(parse_fuzz_summary("error: fuzz: not available"), None);
    }
}
