//! `mallcheck fuzz --jobs`: generated cases go out several at a time, and a seed still finds and
//! reports the same failures, shrunk the same way, whatever the number in flight.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::{Server, fuzz_as_main};
use crate::politeness::{empty_answer, raw_server};
use assert_cmd::Command;

/// `mallcheck fuzz --seed 1` on the mall list against `base_url` as the main merchant.
fn fuzz(dir: &Path, base_url: &str, jobs: &str) -> Command {
    let mut cmd = Command::from_std(fuzz_as_main(base_url, dir, "1"));
    cmd.args(["--jobs", jobs, "--cases", "150", "--endpoint", "mall-list"]);
    cmd
}

/// The output of one run (exit 1 expected), without the lines that name the speed or `--jobs`.
fn report(base_url: &str, jobs: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = fuzz(dir.path(), base_url, jobs).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    stdout
        .lines()
        .filter(|l| !l.contains("req/s") && !l.starts_with("budget:"))
        .map(without_elapsed)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A response line says how long the answer took ("HTTP 500 after 0.01 s"): not part of the
/// verdict, and it differs from run to run.
fn without_elapsed(line: &str) -> String {
    match (line.find(" after "), line.find(" s, ")) {
        (Some(start), Some(end)) if start < end => {
            format!("{} after _{}", &line[..start], &line[end..])
        }
        _ => line.to_string(),
    }
}

#[test]
fn a_seed_reports_the_same_failures_with_several_requests_in_flight() {
    let server = Server::start(&[]);
    let url = server.fault_url("fuzz-count-over-80");
    let one = report(&url, "1");
    assert!(
        one.contains("FAIL fuzz.no-server-error on mall-list") && one.contains("\"count\": 81"),
        "{one}"
    );
    let eight = report(&url, "8");
    assert_eq!(one, eight, "--jobs 8 reports what --jobs 1 reports");
    assert_eq!(
        eight,
        report(&url, "8"),
        "--jobs 8 twice gives the same report"
    );
}

/// A TCP forwarder to `upstream` that records the most connections open at once.
fn counting_forwarder(upstream: &str) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let upstream = upstream
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let open = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&most);
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(&upstream) else {
                continue;
            };
            let now = open.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            let open = Arc::clone(&open);
            std::thread::spawn(move || {
                let pipe = |mut from: TcpStream, mut to: TcpStream| {
                    let mut buf = [0u8; 16 * 1024];
                    while let Ok(n) = from.read(&mut buf) {
                        if n == 0 || to.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = to.shutdown(Shutdown::Write);
                };
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let back = std::thread::spawn(move || pipe(s2, c2));
                pipe(client, server);
                let _ = back.join();
                open.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
    (format!("http://{addr}"), seen)
}

#[test]
fn jobs_puts_several_requests_in_flight() {
    let server = Server::start(&[]);
    let (url, most) = counting_forwarder(&server.base_url);
    let dir = tempfile::tempdir().unwrap();
    let out = fuzz(dir.path(), &url, "4").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let most = most.load(Ordering::SeqCst);
    assert!(
        most >= 2,
        "--jobs 4 kept at most {most} connection(s) open at once"
    );
}

/// The most requests the reference server handled at once during a run with `jobs`.
fn most_at_once(jobs: &str) -> u64 {
    // Answers that take a while, so that requests queued for a place would show as overlap.
    let server = Server::start(&["--latency-ms", "5"]);
    let dir = tempfile::tempdir().unwrap();
    let out = fuzz(dir.path(), &server.base_url, jobs).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let counters = server.counters();
    assert!(counters["requests"].as_u64().unwrap() >= 150, "{counters}");
    counters["max_in_flight"].as_u64().unwrap()
}

#[test]
fn cases_started_ahead_never_put_more_than_jobs_requests_out() {
    // The engine starts twice --jobs cases ahead of their places; the places bound the wire.
    let most = most_at_once("3");
    assert!((2..=3).contains(&most), "--jobs 3: {most} requests at once");
    assert_eq!(most_at_once("1"), 1, "--jobs 1 is one request at a time");
}

#[test]
fn cases_started_ahead_do_not_go_out_after_max_time() {
    // Every answer takes 1.5 s; --max-time 8 (the discovery of malls takes about half of it)
    // with --jobs 2. Whatever the phase of the answers against the deadline, the first places
    // that free after it go to cases started ahead, and those are not sent: the whole command
    // ends with the answers in flight at its deadline (within one answer's time), where
    // sending them would end it one answer later.
    let (url, log) = raw_server(|request, _| {
        std::thread::sleep(Duration::from_millis(1500));
        empty_answer(request, 0)
    });
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::from_std(fuzz_as_main(&url, dir.path(), "1"));
    cmd.args(["--jobs", "2", "--cases", "1000", "--endpoint", "mall-list"])
        .args([
            "--max-time",
            "8",
            "--no-preflight",
            "--allow-empty-merchant",
        ]);
    let started = Instant::now();
    let out = cmd.output().unwrap();
    let took = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(stdout.contains("stopped by --max-time"), "{stdout}");
    assert!(
        took < 8.0 + 1.75,
        "the command overran --max-time 8 by more than one answer: {took} s ({} requests)\n{stdout}",
        log.lock().unwrap().len()
    );
}
