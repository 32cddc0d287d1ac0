//! Line (f) of `mallcheck bench`: one default run against a merchant of 10,000 malls served
//! with a fixed per-response latency, at a polite rate. Its request count (read from the
//! reference server's counter) must stay bounded, and its wall time must be the pacing's:
//! requests ÷ rate. The latency is longer than the rate's interval, as a remote service's
//! often is: one walk alone (each page waits for the previous one's cursor) cannot keep pace,
//! so the line shows whether the walks and products calls of a case overlap.

use std::time::{Duration, Instant};

use crate::bench::harness::{SuiteEnv, planned_cases, runner_with};
use crate::bench::measure::{Goal, Measurement};
use crate::server::{self, ServerOptions};

/// Malls of the merchant of line (f).
pub const SCALE_MALLS: usize = 10_000;

/// Latency the server adds to every answer: twice the interval of [`SCALE_RATE`].
pub const SCALE_LATENCY: Duration = Duration::from_millis(200);

/// Requests per second of the timed run (mallcheck's default toward a remote host).
pub const SCALE_RATE: f64 = 10.0;

/// Most requests of one default run against [`SCALE_MALLS`] malls.
pub const SCALE_REQUESTS_TARGET: Goal = Goal::AtMost(1_500.0);

/// Wall time ÷ (requests ÷ rate).
pub const SCALE_PACING_TARGET: Goal = Goal::AtMost(1.2);

/// Runs the shipped cases once at [`SCALE_RATE`] against [`SCALE_MALLS`] malls and gives the
/// request-count line and the pacing line.
pub async fn scale_lines(env: &SuiteEnv) -> Result<[Measurement; 2], String> {
    let server = server::start(ServerOptions {
        signer: env.target.signer.clone(),
        appid: env.target.identity.appid.clone(),
        malls: Some(SCALE_MALLS),
        latency: SCALE_LATENCY,
        ..ServerOptions::default()
    })
    .await
    .map_err(|e| format!("cannot start the embedded server: {e}"))?;
    let mut limits = env.target.client.clone();
    limits.rate = Some(SCALE_RATE);
    let runner = runner_with(env, &server.base_url(), limits)?;
    let planned = planned_cases(env)?;
    let before = server.requests();
    let started = Instant::now();
    let summary = runner.run(planned, &mut |_| {}).await;
    let wall = started.elapsed();
    let requests = server.requests() - before;
    let most = server.max_in_flight();
    server.shutdown().await;
    let paced = requests as f64 / SCALE_RATE;
    let count = Measurement {
        item: "(f) scale: requests",
        figures: format!(
            "{requests} requests for one default run against {SCALE_MALLS} malls \
             ({} cases: {} passed)",
            summary.total(),
            summary.passed
        ),
        ratio: Some(requests as f64),
        goal: SCALE_REQUESTS_TARGET,
        details: vec![
            "before bounded runs: 34,564 requests against 10,000 malls (6,963 against 2,000)"
                .to_string(),
        ],
    };
    let pacing = Measurement {
        item: "(f) scale: pacing",
        figures: format!(
            "wall {:.1} s at --rate {SCALE_RATE} with {} ms latency; requests ÷ rate {paced:.1} s",
            wall.as_secs_f64(),
            SCALE_LATENCY.as_millis()
        ),
        ratio: (paced > 0.0).then(|| wall.as_secs_f64() / paced),
        goal: SCALE_PACING_TARGET,
        details: vec![format!(
            "at most {most} requests in flight (--jobs {}); before the walks and products calls \
             of a case overlapped: 1.61 (232.6 s for 1,444 requests, debug build)",
            env.jobs
        )],
    };
    Ok([count, pacing])
}
