//! What ends `mallcheck fuzz` before its budget, end to end: `run`'s preflight (a wrong key or
//! a wrong path prefix stops it before anything is generated), a service that starts turning
//! requests away (an error of the run, never a property failure: nothing shrunk or saved, and
//! only what went out is counted) and a signal (the findings so far are reported).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::{Server, assert_exit, fuzz_as_main, output_text};
use crate::politeness::{RawRequest, raw_server, response};

/// `mallcheck fuzz --seed 1` in `dir` against `base_url` as the reference server's main
/// merchant, with the JUnit report and the regressions in `dir`.
fn fuzz(dir: &Path, base_url: &str) -> Command {
    fuzz_as_main(base_url, dir, "1")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn junit(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("junit.xml")).expect("the JUnit report is written")
}

/// `type` attributes of the `<error>` elements of a JUnit file (which must be well-formed).
fn junit_errors(xml: &str) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut types = Vec::new();
    loop {
        match reader.read_event().expect("well-formed JUnit") {
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"error" => {
                let ty = e
                    .try_get_attribute("type")
                    .ok()
                    .flatten()
                    .map(|a| String::from_utf8_lossy(&a.value).into_owned())
                    .unwrap_or_default();
                types.push(ty);
            }
            Event::Eof => return types,
            _ => {}
        }
    }
}

/// Asserts the fuzz run stopped at the preflight: exit 3, `run`'s one message naming these
/// words, nothing generated or saved, and a JUnit report holding the `preflight` error.
fn assert_stopped_by_preflight(out: &Output, dir: &Path, words: &[&str]) {
    // Could not test: the preflight stopped it.
    assert_exit(out, 3);
    let (stdout, stderr) = (stdout(out), stderr(out));
    assert_eq!(
        stderr.matches("preflight failed").count(),
        1,
        "one message: {stderr}"
    );
    for w in words.iter().chain(&["--no-preflight"]) {
        assert!(stderr.contains(w), "`{w}` missing: {stderr}");
    }
    assert!(!stdout.contains("fuzzing"), "nothing generated: {stdout}");
    assert!(!stdout.contains("properties failed"), "{stdout}");
    assert!(!dir.join("regs").exists(), "nothing saved");
    assert_eq!(
        junit_errors(&junit(dir)),
        ["preflight.signed-request"],
        "{}",
        junit(dir)
    );
}

#[test]
fn a_wrong_key_stops_fuzz_at_the_preflight() {
    let server = Server::start(&["--fault", "fuzz-count-over-80"]);
    let dir = tempfile::tempdir().unwrap();
    let out = fuzz(dir.path(), &server.base_url)
        .env("MALLCHECK_SIGN_KEY", "not-the-key")
        .args(["--cases", "300"])
        .output()
        .unwrap();
    assert_stopped_by_preflight(
        &out,
        dir.path(),
        &["refused", "HTTP 401", "signing key", "signer", "appid"],
    );
    assert!(!output_text(&out).contains("not-the-key"), "the key leaked");
    assert!(!junit(dir.path()).contains("not-the-key"), "the key leaked");

    // `--no-preflight` skips it, as for `run`: the fuzzing starts.
    let skipped = fuzz(dir.path(), &server.base_url)
        .env("MALLCHECK_SIGN_KEY", "not-the-key")
        .args(["--cases", "5", "--no-preflight"])
        .output()
        .unwrap();
    assert!(
        stdout(&skipped).contains("mall-list: fuzzing 5 cases"),
        "{}",
        output_text(&skipped)
    );
}

#[test]
fn a_wrong_path_prefix_stops_fuzz_at_the_preflight() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = fuzz(dir.path(), &format!("{}/api/v1", server.base_url))
        .args(["--cases", "100"])
        .output()
        .unwrap();
    assert_stopped_by_preflight(&out, dir.path(), &["HTTP 404", "path prefix"]);
}

/// Sends `request` to `base_url` (which may carry a path prefix) and returns the answer as a
/// complete response for [`raw_server`].
fn forward(base_url: &str, request: &RawRequest) -> String {
    let rest = base_url.trim_start_matches("http://");
    let (host, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    let prefix = if prefix.is_empty() {
        String::new()
    } else {
        format!("/{prefix}")
    };
    let mut stream = TcpStream::connect(host).expect("connect to mallcheck serve");
    let mut head = format!(
        "POST {prefix}{} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        request.path(),
        request.body.len()
    );
    for (k, v) in &request.headers {
        if !matches!(k.as_str(), "host" | "connection" | "content-length") {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&request.body).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("a complete answer");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.strip_prefix("HTTP/1.1 "))
        .expect("a status line");
    let kept: String = lines
        .filter(|l| l.to_ascii_lowercase().starts_with("retry-after:"))
        .map(|l| format!("{l}\r\n"))
        .collect();
    response(status, &kept, body)
}

/// The first number of the `sent N requests` line of the fuzz summary.
fn reported_requests(stdout: &str) -> usize {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("sent "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.replace(',', "").parse().ok())
        .unwrap_or_else(|| panic!("no `sent N requests` line in:\n{stdout}"))
}

#[test]
fn a_connection_closed_once_under_a_request_is_sent_again_not_reported_as_a_crash() {
    // The twelfth request (a generated case) finds its connection closed without an answer,
    // as when a keep-alive connection times out while the request is on its way; every other
    // request, the same body sent again included, reaches the correct server.
    let server = Server::start(&[]);
    let good = server.base_url.clone();
    let (url, log) = raw_server(move |request, n| {
        if n == 11 {
            String::new()
        } else {
            forward(&good, request)
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = fuzz(dir.path(), &url)
        .args(["--cases", "40", "--jobs", "1"])
        .output()
        .unwrap();
    let stdout = stdout(&out);
    assert_exit(&out, 0);
    assert!(stdout.contains("0 of 12 properties failed"), "{stdout}");
    assert!(!dir.path().join("regs").exists(), "nothing saved");
    let arrived = log.lock().unwrap();
    assert_eq!(
        arrived[11].body, arrived[12].body,
        "the closed request was sent again"
    );
}

#[test]
fn a_service_that_starts_rate_limiting_ends_fuzz_as_an_error_not_a_failure() {
    // The preflight, the discovery of both merchants and the products call that finds the
    // target mall has products reach the correct server, then five generated cases; every
    // later request reaches the `rate-limited` fault (429, Retry-After 30 s, longer than the
    // default --max-retry-wait).
    const BEFORE_FUZZING: usize = 4;
    let server = Server::start(&[]);
    let good = server.base_url.clone();
    let limited = server.fault_url("rate-limited");
    let (url, log) = raw_server(move |request, n| {
        forward(
            if n < BEFORE_FUZZING + 5 {
                &good
            } else {
                &limited
            },
            request,
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let out = fuzz(dir.path(), &url)
        .args(["--cases", "100"])
        .output()
        .unwrap();
    let (stdout, stderr) = (stdout(&out), stderr(&out));
    // Rate-limited until it gave up, nothing failed: could not test.
    assert_exit(&out, 3);
    assert!(
        stderr.contains("error: the fuzz run stopped on mall-list: transport.rate-limited"),
        "{stderr}"
    );
    assert!(stderr.contains("not a property failure"), "{stderr}");
    assert!(!stdout.contains("FAIL"), "no property failed: {stdout}");
    assert!(!stdout.contains("shrunk"), "nothing shrunk: {stdout}");
    assert!(
        stdout.contains("stopped early: transport.rate-limited"),
        "{stdout}"
    );
    assert!(!stdout.contains("mall-products: fuzzing"), "{stdout}");
    assert!(!dir.path().join("regs").exists(), "nothing saved");
    let xml = junit(dir.path());
    assert_eq!(junit_errors(&xml), ["transport.rate-limited"], "{xml}");
    assert!(!xml.contains("<failure"), "{xml}");
    let arrived = log.lock().unwrap().len();
    assert_eq!(
        reported_requests(&stdout),
        arrived - BEFORE_FUZZING,
        "only requests that went out are counted:\n{stdout}"
    );
}

/// A service that refuses a products call with HTTP 200 and an array of error objects (no
/// field of a product in any: a shape §7.4 leaves open, which `run` takes for a refusal) is
/// no broken contract to the fuzzer either.
#[test]
fn a_products_refusal_as_an_array_of_errors_passes() {
    let server = Server::start(&[]);
    let good = server.base_url.clone();
    let (url, _log) = raw_server(move |request, _| {
        let answer = forward(&good, request);
        if request.path().contains("queryMallProducts") && !answer.starts_with("HTTP/1.1 200") {
            response("200 OK", "", r#"[{"error":"refused","code":"4010"}]"#)
        } else {
            answer
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = fuzz(dir.path(), &url)
        .args(["--cases", "30", "--endpoint", "mall-products"])
        .output()
        .unwrap();
    let stdout = stdout(&out);
    assert_exit(&out, 0);
    assert!(stdout.contains("0 of 6 properties failed"), "{stdout}");
}

/// A firewall that turns away the discovery of malls and every products call (h29 F6): no
/// mall is known, so no products call could be a valid one, and none was served: the products
/// endpoint is untested (exit 3), not a pass on refusals alone.
#[test]
fn products_behind_a_firewall_with_no_mall_discovered_are_untested() {
    let server = Server::start(&[]);
    let good = server.base_url.clone();
    let (url, _log) = raw_server(move |request, n| {
        let products = request.path().contains("queryMallProducts");
        if products || (1..=2).contains(&n) {
            let page = "<html><body>403 Forbidden</body></html>";
            format!(
                "HTTP/1.1 403 Forbidden\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{page}",
                page.len()
            )
        } else {
            forward(&good, request)
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = fuzz(dir.path(), &url)
        .args(["--cases", "10"])
        .output()
        .unwrap();
    let stdout = stdout(&out);
    assert_exit(&out, 3);
    assert!(
        stdout.contains("nothing tested on mall-products: no mall of the merchant was found"),
        "{stdout}"
    );
}

/// A preflight whose connection is closed under it the first time is answered on a retry: the
/// run goes on, and says so (h27c V3: it was sent again in silence).
#[test]
fn a_preflight_answered_only_on_a_retry_is_said() {
    let server = Server::start(&[]);
    let good = server.base_url.clone();
    let (url, _log) = raw_server(move |request, n| {
        if n == 0 {
            String::new()
        } else {
            forward(&good, request)
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = crate::common::run_as_main(&url, dir.path())
        .args(["--filter", "tag:envelope"])
        .output()
        .unwrap();
    let stderr = stderr(&out);
    assert_exit(&out, 0);
    assert!(
        stderr.contains("note: the preflight was answered only after a transport retry"),
        "{stderr}"
    );
}

/// A firewall in front of the service lets the preflight and the discovery through, then
/// turns every generated request away with an HTML 413 (each far within the common size
/// limits): every property holds, on refusals alone. Nothing was tested, so the run says so
/// and exits 3; it is not a pass.
#[test]
fn a_firewall_refusing_every_generated_request_is_could_not_test_not_a_pass() {
    const BEFORE_FUZZING: usize = 4;
    let server = Server::start(&[]);
    let good = server.base_url.clone();
    let (url, _log) = raw_server(move |request, n| {
        if n < BEFORE_FUZZING {
            forward(&good, request)
        } else {
            let page = "<html><body><h1>413 Request Entity Too Large</h1></body></html>";
            format!(
                "HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: text/html\r\n\
                 Content-Length: {}\r\n\r\n{page}",
                page.len()
            )
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = fuzz(dir.path(), &url)
        .args(["--cases", "20"])
        .output()
        .unwrap();
    let stdout = stdout(&out);
    assert_exit(&out, 3);
    for endpoint in ["mall-list", "mall-products"] {
        assert!(
            stdout.contains(&format!(
                "nothing tested on {endpoint}: none of its 20 cases was served, the valid body \
                 included: every answer was a refusal or an error (413 ×20)"
            )),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!("{endpoint:<14} fuzz.ownership         not tested")),
            "{stdout}"
        );
    }
    let xml = junit(dir.path());
    assert_eq!(xml.matches("<skipped").count(), 12, "{xml}");
    assert!(!xml.contains("<failure"), "{xml}");
    // The correct service behind no firewall is served and passes.
    let dir = tempfile::tempdir().unwrap();
    let out = fuzz(dir.path(), &server.base_url)
        .args(["--cases", "1"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
}

#[test]
fn sigterm_stops_fuzz_and_reports_what_it_found() {
    // Each answer takes 100 ms: 2,000 cases would take far longer than the test.
    let server = Server::start(&["--latency-ms", "100"]);
    let dir = tempfile::tempdir().unwrap();
    let mut child = fuzz(dir.path(), &server.base_url)
        .args(["--cases", "2000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mallcheck fuzz");
    let (tx, rx) = mpsc::channel();
    let lines = BufReader::new(child.stdout.take().expect("piped stdout"));
    std::thread::spawn(move || {
        for line in lines.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut stdout = String::new();
    while !stdout.contains("mall-list: fuzzing") {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("fuzzing starts");
        stdout.push_str(&line);
        stdout.push('\n');
    }
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success());
    let out = child.wait_with_output().expect("wait for mallcheck fuzz");
    stdout.extend(rx.iter().map(|l| l + "\n"));
    let stderr = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("interrupted by SIGTERM: the report holds what was found so far"),
        "{stderr}"
    );
    assert!(
        stdout.contains("mall-list: stopped after ") && stdout.contains("interrupted by SIGTERM"),
        "{stdout}"
    );
    assert!(stdout.contains("0 of 6 properties failed"), "{stdout}");
    let xml = junit(dir.path());
    assert_eq!(junit_errors(&xml), ["interrupted"], "{xml}");
    assert_eq!(xml.matches("<testcase").count(), 7, "{xml}");
}
