//! `fuzz` keeps to the rate of `run` (issue 23 item 7): `MALLCHECK_RATE` and the profile's
//! `rate` pace every request it sends, measured from the reference server's side.

use std::time::Instant;

use crate::common::{Server, assert_exit, fuzz_as_main, output_text};

/// Runs `fuzz` as set up by `configure` against a fresh reference server; returns what it
/// printed, the requests the server answered and the seconds the whole process took.
fn paced_fuzz(
    configure: impl FnOnce(&mut std::process::Command, &std::path::Path),
) -> (String, u64, f64) {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = fuzz_as_main(&server.base_url, dir.path(), "7");
    cmd.args(["--endpoint", "mall-list", "--cases", "30"]);
    configure(&mut cmd, dir.path());
    let started = Instant::now();
    let out = cmd.output().expect("run mallcheck fuzz");
    let took = started.elapsed().as_secs_f64();
    assert_exit(&out, 0);
    let requests = server.counters()["requests"].as_u64().expect("requests");
    (output_text(&out), requests, took)
}

/// `n` requests at most `rate` per second span at least `(n - 1) / rate` seconds; the whole
/// process took longer still, so this lower bound holds however loaded the machine is.
fn assert_paced(requests: u64, took: f64, rate: f64, text: &str) {
    assert!(requests >= 30, "{requests} requests:\n{text}");
    let least = (requests - 1) as f64 / rate;
    assert!(
        took >= least,
        "{requests} requests in {took:.2} s: faster than {rate}/s\n{text}"
    );
}

#[test]
fn mallcheck_rate_paces_fuzz() {
    let (text, requests, took) = paced_fuzz(|cmd, _| {
        cmd.env("MALLCHECK_RATE", "20");
    });
    assert!(text.contains("20 requests/s"), "{text}");
    assert_paced(requests, took, 20.0, &text);
}

#[test]
fn the_profile_rate_paces_fuzz() {
    let (text, requests, took) = paced_fuzz(|cmd, dir| {
        std::fs::write(dir.join("mallcheck.toml"), "[profile.slow]\nrate = 25\n").expect("profile");
        cmd.args(["--profile", "slow"]);
    });
    assert!(text.contains("25 requests/s"), "{text}");
    assert_paced(requests, took, 25.0, &text);
}

#[test]
fn a_zero_rate_flag_still_means_unlimited() {
    let (text, _, _) = paced_fuzz(|cmd, _| {
        cmd.env("MALLCHECK_RATE", "20").args(["--rate", "0"]);
    });
    assert!(text.contains("unlimited rate"), "{text}");
}
