//! Line (b): the request rate of `mallcheck fuzz` against bare concurrent loops on the same
//! server.

use std::process::Command as Process;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderValue, Method, header};
use tokio::task::JoinSet;

use crate::bench::child::{mallcheck_exe, run_child};
use crate::bench::harness::{BenchOptions, SuiteEnv, bare_client, send_recorded};
use crate::bench::measure::{Goal, Measurement, ms};
use crate::bench::proxy::Recorded;
use crate::server::data::{self, DEMO_SIGN_KEY};
use crate::settings::{self, Target};
use crate::verdict::endpoint::Endpoint;

/// (b) Fuzzer requests per second over the loopback limit.
pub(crate) const FUZZ_RATE_TARGET: Goal = Goal::AtLeast(0.5);

/// A signed first-page mall-list request (count 10) of the configured merchant.
pub(crate) async fn first_page_request(target: &Target) -> Result<Recorded, String> {
    let body = serde_json::to_vec(&target.first_page_body(10)).map_err(|e| e.to_string())?;
    let authorization = target
        .signer
        .authorization(&target.identity.appid, &body)
        .await
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
pub(crate) async fn loopback_limit(
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

pub(crate) async fn fuzz_rate(
    env: &SuiteEnv,
    base_url: &str,
    options: &BenchOptions,
) -> Result<Measurement, String> {
    if options.fuzz_cases == 0 {
        return Err("--fuzz-cases 0 skips this line".to_string());
    }
    let exe = mallcheck_exe()?;
    let concurrency = (4 * std::thread::available_parallelism().map_or(1, |n| n.get())).max(8);
    let request = first_page_request(&env.target).await?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzz_summary_line_gives_requests_and_rate() {
        let out = "seed 1\n\n0 of 8 properties failed; 20 cases generated, 0 replayed\nsent 1,234 requests in 2.0 s (617.0 req/s)\nJUnit report: x\n";
        assert_eq!(parse_fuzz_summary(out), Some((1234, 617.0)));
        assert_eq!(parse_fuzz_summary("error: fuzz: not available"), None);
    }
}
