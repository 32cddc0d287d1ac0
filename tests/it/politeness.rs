//! Politeness and CI splitting, measured from the server side: `--rate` caps arrivals, and
//! `--shard K/N` runs cover every case exactly once.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{bin, repo};

/// One request as a raw test server saw it.
#[derive(Debug, Clone)]
pub struct RawRequest {
    /// When it arrived (its request line was read).
    pub at: Instant,
    /// `POST /path HTTP/1.1`.
    pub line: String,
    /// Header names (lower case) and values.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
}

impl RawRequest {
    /// The request path.
    pub fn path(&self) -> &str {
        self.line.split(' ').nth(1).unwrap_or("")
    }

    /// The value of a header (name in lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

type Answer = dyn Fn(&RawRequest, usize) -> String + Send + Sync;

/// A minimal keep-alive HTTP server on an ephemeral loopback port: `answer` turns each request
/// (and its 0-based arrival number) into the full response text; every request is logged.
pub fn raw_server(
    answer: impl Fn(&RawRequest, usize) -> String + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<RawRequest>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let log = Arc::new(Mutex::new(Vec::new()));
    let server_log = Arc::clone(&log);
    let answer: Arc<Answer> = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let log = Arc::clone(&server_log);
            let answer = Arc::clone(&answer);
            std::thread::spawn(move || serve_connection(stream, &log, &*answer));
        }
    });
    (url, log)
}

fn serve_connection(stream: TcpStream, log: &Mutex<Vec<RawRequest>>, answer: &Answer) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let at = Instant::now();
        let mut headers = Vec::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            if header == "\r\n" {
                break;
            }
            if let Some((k, v)) = header.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let length = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0usize);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request = RawRequest {
            at,
            line: line.trim_end().to_string(),
            headers,
            body,
        };
        let n = {
            let mut log = log.lock().unwrap();
            log.push(request.clone());
            log.len() - 1
        };
        if writer.write_all(answer(&request, n).as_bytes()).is_err() {
            return;
        }
    }
}

/// A response with a status line, extra header lines (each ending in CRLF) and a JSON body.
pub fn response(status: &str, headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{headers}\r\n{body}",
        body.len()
    )
}

/// An empty mall list (or an empty products array) for any request, signed or not.
pub fn empty_answer(request: &RawRequest, _: usize) -> String {
    let body = if request.path().contains("queryMallProducts") {
        "[]"
    } else {
        r#"{"success":true,"code":"0000","msg":"ok","data":[]}"#
    };
    response("200 OK", "", body)
}

/// A server answering [`empty_answer`] that records when each request arrives.
fn counting_server() -> (String, Arc<Mutex<Vec<RawRequest>>>) {
    raw_server(empty_answer)
}

#[test]
fn rate_caps_server_side_arrivals() {
    let (url, arrivals) = counting_server();
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .current_dir(dir.path())
        .env("MALLCHECK_SIGN_KEY", "k")
        .args([
            "run",
            "--base-url",
            &url,
            "--appid",
            "a",
            "--merchant-id",
            "m",
        ])
        .args([
            "--merchant-user-id",
            "u",
            "--rate",
            "20",
            "--jobs",
            "8",
            "--quiet",
        ])
        .arg("--cases")
        .arg(repo().join("cases"))
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{:?}", out);
    let times: Vec<Instant> = arrivals.lock().unwrap().iter().map(|r| r.at).collect();
    assert!(times.len() >= 20, "only {} requests arrived", times.len());
    let span = times[times.len() - 1] - times[0];
    let rate = (times.len() - 1) as f64 / span.as_secs_f64();
    assert!(
        rate <= 20.0 * 1.02,
        "{} requests in {span:?}: {rate:.2}/s",
        times.len()
    );
    // No one-second window holds more than the rate (one arrival of jitter allowed).
    for (i, t) in times.iter().enumerate() {
        let in_window = times[i..]
            .iter()
            .take_while(|u| **u - *t < Duration::from_secs(1))
            .count();
        assert!(in_window <= 21, "{in_window} arrivals within 1 s");
    }
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn verdicts(report: &serde_json::Value) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"]["file"].as_str().unwrap().to_string(),
                c["id"]["name"].as_str().unwrap().to_string(),
                c["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn three_shards_merged_equal_one_unsharded_run() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str], json_name: &str| {
        let out = Command::new(bin())
            .current_dir(dir.path())
            .env_remove("MALLCHECK_BASE_URL")
            .args(["run", "--quiet", "--cases"])
            .arg(repo().join("cases"))
            .args(extra)
            .args(["--json", json_name, "--junit", &format!("{json_name}.xml")])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    };
    run(&[], "all.json");
    for k in 1..=3 {
        run(&["--shard", &format!("{k}/3")], &format!("shard{k}.json"));
    }
    let parts: Vec<serde_json::Value> = (1..=3)
        .map(|k| json(&dir.path().join(format!("shard{k}.json"))))
        .collect();
    let sizes: Vec<usize> = parts
        .iter()
        .map(|p| p["cases"].as_array().unwrap().len())
        .collect();
    assert!(sizes.iter().all(|n| *n > 0), "{sizes:?}");
    let out = Command::new(bin())
        .current_dir(dir.path())
        .args([
            "merge",
            "--json",
            "merged.json",
            "shard1.json",
            "shard2.json",
            "shard3.json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = json(&dir.path().join("merged.json"));
    let all = json(&dir.path().join("all.json"));
    assert_eq!(verdicts(&merged), verdicts(&all));
    assert_eq!(sizes.iter().sum::<usize>(), verdicts(&all).len());
}

#[test]
fn list_prints_the_selected_cases() {
    let out = Command::new(bin())
        .args(["list", "--filter", "auth", "--cases"])
        .arg(repo().join("cases"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("auth.yaml › "), "{text}");
    assert!(!text.contains("paging.yaml"), "{text}");
}

/// `mallcheck run` of the shipped cases against a raw test server, as merchant `m` of appid
/// `a`, with reports in `dir` (`report.json`, `junit.xml`).
fn run_raw(base_url: &str, dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MALLCHECK_SIGN_KEY", "k")
        .args(["run", "--base-url", base_url, "--appid", "a"])
        .args(["--merchant-id", "m", "--merchant-user-id", "u"])
        .args(["--json", "report.json", "--junit", "junit.xml"])
        .args(["--color", "never", "--quiet", "--cases"])
        .arg(repo().join("cases"));
    cmd
}

fn cases_of(dir: &std::path::Path) -> Vec<serde_json::Value> {
    json(&dir.join("report.json"))["cases"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn finding_checks(cases: &[serde_json::Value]) -> Vec<String> {
    let mut ids: Vec<String> = cases
        .iter()
        .flat_map(|c| c["findings"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f["check"].as_str().map(str::to_string))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_redirect_to_another_origin_is_a_finding_and_is_never_followed() {
    // Another service on another port answers anything, signed or not.
    let (other, other_log) = counting_server();
    let target = other.clone();
    let (front, _) = raw_server(move |request, _| {
        let location = format!("Location: {target}{}\r\n", request.path());
        response("307 Temporary Redirect", &location, "{}")
    });
    let dir = tempfile::tempdir().unwrap();
    let out = run_raw(&front, dir.path())
        .arg("--follow-redirects")
        .output()
        .unwrap();
    let cases = cases_of(dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        finding_checks(&cases).contains(&"transport.redirect".to_string()),
        "{:?}",
        finding_checks(&cases)
    );
    assert!(
        cases
            .iter()
            .all(|c| c["outcome"] == "error" || c["outcome"] == "skip"),
        "{}",
        text(&out)
    );
    assert_eq!(
        other_log.lock().unwrap().len(),
        0,
        "a request was followed to another origin"
    );
}

#[test]
fn a_same_origin_redirect_is_followed_with_the_flag_and_keeps_authorization() {
    let (url, log) = raw_server(|request, n| {
        if request.path().starts_with("/moved") {
            empty_answer(request, n)
        } else {
            let location = format!("Location: /moved{}\r\n", request.path());
            response("307 Temporary Redirect", &location, "{}")
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = run_raw(&url, dir.path())
        .args([
            "--follow-redirects",
            "--filter",
            "first page is a success envelope",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let log = log.lock().unwrap();
    let moved: Vec<&RawRequest> = log
        .iter()
        .filter(|r| r.path().starts_with("/moved"))
        .collect();
    assert!(!moved.is_empty());
    assert!(
        moved.iter().all(|r| r
            .header("authorization")
            .is_some_and(|v| v.starts_with("a "))),
        "{moved:?}"
    );
}

/// A 429 answer with the given `Retry-After` value and a JSON error envelope.
fn too_many_requests(retry_after: &str) -> String {
    response(
        "429 Too Many Requests",
        &format!("Retry-After: {retry_after}\r\n"),
        r#"{"success":false,"code":"4290","msg":"too many requests","data":null}"#,
    )
}

#[test]
fn rate_limiting_is_an_error_of_the_run_with_the_true_skip_reason() {
    let (url, _) = raw_server(|_, _| too_many_requests("999999"));
    let dir = tempfile::tempdir().unwrap();
    let out = run_raw(&url, dir.path()).output().unwrap();
    let cases = cases_of(dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let checks = finding_checks(&cases);
    assert_eq!(checks, vec!["transport.rate-limited"], "{}", text(&out));
    let skipped: Vec<&serde_json::Value> =
        cases.iter().filter(|c| c["outcome"] == "skip").collect();
    assert!(!skipped.is_empty(), "the products cases need discovery");
    for c in skipped {
        let reason = c["skip_reason"].as_str().unwrap_or_default();
        assert!(
            reason.starts_with("discovery failed: rate limited (429, Retry-After 999999 s)"),
            "{reason}"
        );
    }
    assert!(
        cases
            .iter()
            .all(|c| c["outcome"] == "error" || c["outcome"] == "skip"),
        "no contract verdict on a throttled service"
    );
}

#[test]
fn a_retry_after_past_the_ceiling_is_not_waited_for() {
    let (url, log) = raw_server(|_, _| too_many_requests("30"));
    let dir = tempfile::tempdir().unwrap();
    let out = run_raw(&url, dir.path())
        .args(["--timeout", "5", "--max-retry-wait", "2"])
        .args(["--filter", "first page is a success envelope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let cases = cases_of(dir.path());
    assert_eq!(finding_checks(&cases), vec!["transport.rate-limited"]);
    assert!(text(&out).contains("rate limited (429, Retry-After 30 s)"));
    // A wait longer than the ceiling is not waited for, so the request is not sent again.
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[test]
fn retry_after_in_the_http_date_form_is_honoured() {
    // First answer: come back now (an HTTP-date); then answer normally.
    let (url, log) = raw_server(|request, n| {
        if n == 0 {
            too_many_requests(&httpdate::fmt_http_date(std::time::SystemTime::now()))
        } else {
            empty_answer(request, n)
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = run_raw(&url, dir.path())
        .args(["--filter", "first page is a success envelope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(log.lock().unwrap().len(), 2);

    // A date a day ahead is read as such, and is past the ceiling set in the environment.
    let tomorrow = std::time::SystemTime::now() + Duration::from_secs(86_400);
    let (url, log) = raw_server(move |_, _| too_many_requests(&httpdate::fmt_http_date(tomorrow)));
    let out = run_raw(&url, dir.path())
        .env("MALLCHECK_MAX_RETRY_WAIT", "3")
        .args(["--filter", "first page is a success envelope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let all = text(&out);
    assert!(all.contains("rate limited (429, Retry-After 86"), "{all}");
    assert!(all.contains("within 3 s of waiting"), "{all}");
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[test]
fn a_bad_max_retry_wait_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_raw("http://127.0.0.1:9", dir.path())
        .args(["--max-retry-wait", "4000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("--max-retry-wait"), "{}", text(&out));
}
