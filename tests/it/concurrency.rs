//! Concurrency inside a case (issue 14, item 2): the walks of a case and the products calls of
//! a sweep overlap, never more than `--jobs` at once, and the report reads the same whatever
//! order the answers came in.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Server, run_against};
use crate::politeness::{empty_answer, raw_server, response};

/// The reference server's counters: requests answered and the most handled at once.
fn counters(server: &Server) -> (u64, u64) {
    let v = server.counters();
    let most = v["max_in_flight"]
        .as_u64()
        .unwrap_or_else(|| panic!("no max_in_flight in {v}"));
    (v["requests"].as_u64().unwrap(), most)
}

/// Runs one case (by name) with `jobs` against `base_url`; returns the exit code, stdout and
/// the JSON report.
fn run_one(base_url: &str, case: &str, jobs: &str) -> (Option<i32>, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(base_url, dir.path())
        .args([
            "--quiet",
            "--no-preflight",
            "--jobs",
            jobs,
            // One sample for both runs (the default seed changes from run to run).
            "--seed",
            "1",
            "--filter",
            case,
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let report = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    (
        out.status.code(),
        stdout,
        serde_json::from_str(&report).unwrap(),
    )
}

const WALK: &str = "paging walk agrees at every page size";
const SWEEP: &str = "products of every listed mall";

#[test]
fn the_walks_of_one_case_overlap_within_jobs() {
    // One case only: any overlap is inside the case.
    let server = Server::start(&["--latency-ms", "10"]);
    let (code, stdout, _) = run_one(&server.base_url, WALK, "4");
    assert_eq!(code, Some(0), "{stdout}");
    let (requests, most) = counters(&server);
    assert!(requests > 50, "{requests} requests");
    assert!(
        (2..=4).contains(&most),
        "the walks at sizes 1, 3, 10, 100 (twice) overlap within --jobs 4: {most} at once"
    );

    // --jobs 1 is one request at a time, for the whole run.
    let server = Server::start(&["--latency-ms", "10"]);
    let (code, stdout, _) = run_one(&server.base_url, WALK, "1");
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(counters(&server).1, 1);
}

/// The report without what varies from run to run (durations, dates).
fn stable(mut report: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.remove("duration");
                map.remove("started");
                map.remove("finished");
                for (_, child) in map.iter_mut() {
                    strip(child);
                }
            }
            Value::Array(items) => {
                items.retain(|i| {
                    i.get(0)
                        .and_then(Value::as_str)
                        .is_none_or(|name| !name.eq_ignore_ascii_case("date"))
                });
                for child in items {
                    strip(child);
                }
            }
            _ => {}
        }
    }
    strip(&mut report);
    report["cases"].take()
}

#[test]
fn findings_exchanges_and_coverage_keep_their_order_whatever_jobs_is() {
    // Faults found on every page of every walk, and in every products answer of the sweep,
    // past the 50 findings kept per check: which ones are kept depends on the order.
    for (fault, case, check) in [
        ("mall-sn-not-digits", WALK, "mall.digit-strings"),
        ("product-title-missing", SWEEP, "product.fields"),
    ] {
        let server = Server::start(&["--latency-ms", "5", "--malls", "60"]);
        let url = server.fault_url(fault);
        let (code_1, stdout_1, one) = run_one(&url, case, "1");
        assert_eq!(counters(&server).1, 1, "{fault}: --jobs 1");
        let (code_8, stdout_8, eight) = run_one(&url, case, "8");
        assert_eq!(code_1, Some(1), "{fault}: {stdout_1}");
        assert_eq!(code_8, Some(1), "{fault}: {stdout_8}");
        assert!(
            counters(&server).1 > 1,
            "{fault}: the requests of `{case}` overlap with --jobs 8"
        );
        let ids: Vec<&str> = one["cases"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["check"].as_str())
            .collect();
        assert!(ids.contains(&check), "{fault}: {ids:?}");
        // The case reads in its planned order (sizes as listed, malls in list order), not in
        // the order the answers came in.
        let sent: Vec<Value> = eight["cases"][0]["exchanges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| serde_json::from_str(e["request"]["body"].as_str().unwrap()).unwrap())
            .collect();
        if case == WALK {
            let counts: Vec<u64> = sent
                .iter()
                .filter_map(|b| b["cursor"]["count"].as_u64())
                .collect();
            assert!(counts.is_sorted(), "walk sizes in order: {counts:?}");
            let first = &eight["cases"][0]["findings"][0];
            assert_eq!(first["pointer"], "/data/0/mallSn", "{first}");
        } else {
            let malls: Vec<&str> = sent
                .iter()
                .filter_map(|b| b["mallID"]["mallSn"].as_str())
                .collect();
            assert!(
                malls.len() > 1 && malls.is_sorted_by(|a, b| a > b),
                "{malls:?}"
            );
        }
        assert_eq!(
            stable(one.clone()),
            stable(eight.clone()),
            "{fault}: the report of `{case}` differs between --jobs 1 and --jobs 8"
        );
    }
}

#[test]
fn a_429_pauses_every_walk_of_the_case_even_those_waiting_for_their_rate_slot() {
    // The first request is turned away for a second; the case's other walks have already
    // taken their slots of the rate (--rate 5: one every 200 ms) and must still wait.
    let (url, arrivals) = raw_server(|request, n| {
        if n == 0 {
            response(
                "429 Too Many Requests",
                "Retry-After: 1\r\n",
                r#"{"success":false,"code":"4290","msg":"too many requests","data":null}"#,
            )
        } else {
            empty_answer(request, n)
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&url, dir.path())
        .args(["--quiet", "--no-preflight", "--jobs", "8", "--rate", "5"])
        .args(["--filter", WALK])
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
    let times: Vec<Instant> = arrivals.lock().unwrap().iter().map(|r| r.at).collect();
    assert!(times.len() >= 8, "{} requests: one per walk", times.len());
    let early: Vec<Duration> = times[1..]
        .iter()
        .map(|t| *t - times[0])
        .filter(|d| *d < Duration::from_millis(900))
        .collect();
    assert!(
        early.is_empty(),
        "requests sent during the pause of Retry-After: 1 s: {early:?}"
    );
}
