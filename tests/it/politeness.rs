//! Politeness and CI splitting, measured from the server side: `--rate` caps arrivals, and
//! `--shard K/N` runs cover every case exactly once.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{assert_exit, bin, finding_ids_of, output_text, repo};

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
        // An empty answer closes the connection without a response, as a server does when a
        // keep-alive connection times out while a request is on its way.
        let text = answer(&request, n);
        if text.is_empty() || writer.write_all(text.as_bytes()).is_err() {
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
    // One arrival of jitter allowed, as in the windows below: on a loaded machine the first
    // arrival (a new connection) can lag behind its slot and shorten the measured span.
    let rate = (times.len() - 2) as f64 / span.as_secs_f64();
    // The cap is 20/s; without it these requests arrive within milliseconds. The margin absorbs
    // a loaded CI machine that delays some arrivals and bunches the next ones.
    assert!(
        rate <= 25.0,
        "{} requests in {span:?}: {rate:.2}/s",
        times.len()
    );
    // No one-second window holds more than the rate (one arrival of jitter allowed).
    for (i, t) in times.iter().enumerate() {
        let in_window = times[i..]
            .iter()
            .take_while(|u| **u - *t < Duration::from_secs(1))
            .count();
        assert!(in_window <= 25, "{in_window} arrivals within 1 s");
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
        assert_exit(&out, 0);
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
    let shard = &parts[1]["shard"];
    assert_eq!((&shard["index"], &shard["total"]), (&2.into(), &3.into()));
    // The selection it was cut from: every case of the unsharded run, the same in each shard.
    assert_eq!(shard["selected"], verdicts(&all).len());
    assert_eq!(
        shard["selection"].as_str().map(str::len),
        Some(16),
        "{shard}"
    );
    assert!(
        parts
            .iter()
            .all(|p| p["shard"]["selection"] == shard["selection"])
    );
    // A lost CI job: shards 1 and 3 alone do not pass as a smaller run.
    let out = Command::new(bin())
        .current_dir(dir.path())
        .args(["merge", "--json", "part.json", "shard1.json", "shard3.json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("shard 2/3 is missing"), "{stderr}");
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
    run_raw_cases(base_url, dir, &repo().join("cases"))
}

/// [`run_raw`] of the given case files.
fn run_raw_cases(base_url: &str, dir: &std::path::Path, cases: &std::path::Path) -> Command {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MALLCHECK_SIGN_KEY", "k")
        .args(["run", "--base-url", base_url, "--appid", "a"])
        .args(["--merchant-id", "m", "--merchant-user-id", "u"])
        .args(["--json", "report.json", "--junit", "junit.xml"])
        .args(["--color", "never", "--quiet", "--cases"])
        .arg(cases)
        // These tests count requests: the preflight's one would be among them.
        .arg("--no-preflight");
    cmd
}

fn cases_of(dir: &std::path::Path) -> Vec<serde_json::Value> {
    json(&dir.join("report.json"))["cases"]
        .as_array()
        .cloned()
        .unwrap_or_default()
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
    assert_exit(&out, 1);
    assert!(
        finding_ids_of(&cases).contains(&"transport.redirect".to_string()),
        "{:?}",
        finding_ids_of(&cases)
    );
    // A redirect is a broken answer: the cases fail.
    assert!(
        cases
            .iter()
            .all(|c| c["outcome"] == "fail" || c["outcome"] == "skip"),
        "{}",
        output_text(&out)
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
    assert_exit(&out, 0);
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
    // Rate-limited until the run gave up: could not test.
    assert_exit(&out, 3);
    let checks = finding_ids_of(&cases);
    assert_eq!(
        checks,
        vec!["transport.rate-limited"],
        "{}",
        output_text(&out)
    );
    // The cross-merchant cursor probe, with no second merchant configured, sends nothing.
    let skipped: Vec<&serde_json::Value> = cases
        .iter()
        .filter(|c| c["outcome"] == "skip")
        .filter(|c| {
            !c["skip_reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("no second merchant is configured"))
        })
        .collect();
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
    assert_exit(&out, 3);
    let cases = cases_of(dir.path());
    assert_eq!(finding_ids_of(&cases), vec!["transport.rate-limited"]);
    assert!(output_text(&out).contains("rate limited (429, Retry-After 30 s)"));
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
    assert_exit(&out, 0);
    assert_eq!(log.lock().unwrap().len(), 2);

    // A date a day ahead is read as such, and is past the ceiling set in the environment.
    let tomorrow = std::time::SystemTime::now() + Duration::from_secs(86_400);
    let (url, log) = raw_server(move |_, _| too_many_requests(&httpdate::fmt_http_date(tomorrow)));
    let out = run_raw(&url, dir.path())
        .env("MALLCHECK_MAX_RETRY_WAIT", "3")
        .args(["--filter", "first page is a success envelope"])
        .output()
        .unwrap();
    assert_exit(&out, 3);
    let all = output_text(&out);
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
    assert!(
        output_text(&out).contains("--max-retry-wait"),
        "{}",
        output_text(&out)
    );
}

/// Waits for a child at most `limit`; a child still running then is killed and `None` returned
/// (a hang guard, not a timing assertion).
fn wait_bounded(
    child: &mut std::process::Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Process ids a sign command wrote to `file`, one a line.
fn pids(file: &std::path::Path) -> Vec<u32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Whether a process is still running (gone, or a zombie waiting for its reaper, is not).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

/// Polls until none of `pids` runs (at most 10 s); kills any survivor so a failing test leaves
/// nothing behind, and returns the survivors.
fn survivors(pids: &[u32]) -> Vec<u32> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) && pids.iter().any(|p| running(*p)) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<u32> = pids.iter().copied().filter(|p| running(*p)).collect();
    for p in &left {
        let _ = Command::new("kill")
            .args(["-KILL", &p.to_string()])
            .status();
    }
    left
}

/// A sign command that starts a long `sleep` in the background, notes its pid, and waits.
fn hanging_sign_command(pid_file: &std::path::Path) -> String {
    format!("sleep 3600 & echo $! >> '{}'; wait", pid_file.display())
}

/// `run_raw` with the command signer, output to files in `dir`.
fn spawn_with_command(
    url: &str,
    dir: &std::path::Path,
    command: &str,
    extra: &[&str],
) -> std::process::Child {
    run_raw(url, dir)
        .env("MALLCHECK_SIGN_COMMAND", command)
        .args(["--signer", "command"])
        .args(extra)
        .stdout(std::fs::File::create(dir.join("stdout.txt")).unwrap())
        .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
        .spawn()
        .unwrap()
}

/// Everything a run wrote: console and reports.
fn written(dir: &std::path::Path) -> String {
    ["stdout.txt", "stderr.txt", "report.json", "junit.xml"]
        .iter()
        .map(|f| std::fs::read_to_string(dir.join(f)).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A run of one case whose sign command hangs (its pids go to `pid_file`), with `--timeout`.
fn hanging_run(
    url: &str,
    dir: &std::path::Path,
    pid_file: &std::path::Path,
    timeout: &str,
) -> std::process::Child {
    let command = hanging_sign_command(pid_file);
    spawn_with_command(
        url,
        dir,
        &command,
        &[
            "--timeout",
            timeout,
            "--filter",
            "first page is a success envelope",
        ],
    )
}

#[test]
fn a_hanging_sign_command_is_stopped_at_the_timeout_with_its_children() {
    let (url, log) = counting_server();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let mut child = hanging_run(&url, dir.path(), &pid_file, "1");
    let status = wait_bounded(&mut child, Duration::from_secs(120));
    let left = survivors(&pids(&pid_file));
    let status = status.expect("the run hung on the sign command");
    let all = written(dir.path());
    // The signer failed: could not test.
    assert_eq!(status.code(), Some(3), "{all}");
    assert!(all.contains("harness.signer"), "{all}");
    assert!(all.contains("timed out after 1 s"), "{all}");
    assert!(!all.contains("sleep 3600"), "the command is never written");
    assert!(left.is_empty(), "still running: {left:?}");
    assert!(!pids(&pid_file).is_empty());
    assert!(log.lock().unwrap().is_empty(), "nothing is sent unsigned");
}

#[test]
fn an_interrupted_run_kills_the_sign_command_and_its_children() {
    let (url, _) = counting_server();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let mut child = hanging_run(&url, dir.path(), &pid_file, "600");
    let start = Instant::now();
    while pids(&pid_file).is_empty() && start.elapsed() < Duration::from_secs(60) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "{}",
            written(dir.path())
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !pids(&pid_file).is_empty(),
        "the sign command never started"
    );
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let status = wait_bounded(&mut child, Duration::from_secs(60));
    let left = survivors(&pids(&pid_file));
    let status = status.expect("Ctrl-C did not stop a run waiting for the sign command");
    assert_eq!(status.code(), Some(1), "{}", written(dir.path()));
    assert!(left.is_empty(), "still running: {left:?}");
}

#[test]
fn a_big_body_with_a_chatty_sign_command_does_not_deadlock() {
    let (url, log) = counting_server();
    let dir = tempfile::tempdir().unwrap();
    // A 100 KB body, and a command that writes 100 KB to stderr before it reads the body: both
    // pipes are past their 64 KB buffers.
    let filler = "x".repeat(100_000);
    std::fs::write(
        dir.path().join("big.yaml"),
        format!(
            "cases:\n  - name: a big body\n    endpoint: mall-list\n    request:\n      body:\n        appid: a\n        filler: {filler}\n    expect:\n      status: 200\n"
        ),
    )
    .unwrap();
    let command = "head -c 100000 /dev/zero | tr '\\0' e >&2; md5sum | cut -c1-32";
    let mut child = run_raw_cases(&url, dir.path(), &dir.path().join("big.yaml"))
        .env("MALLCHECK_SIGN_COMMAND", command)
        .args(["--signer", "command"])
        .stdout(std::fs::File::create(dir.path().join("stdout.txt")).unwrap())
        .stderr(std::fs::File::create(dir.path().join("stderr.txt")).unwrap())
        .spawn()
        .unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(120));
    let status = status.expect("the sign command deadlocked");
    assert_eq!(status.code(), Some(0), "{}", written(dir.path()));
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 1);
    let body = &log[0].body;
    assert!(body.len() > 100_000);
    let expected = {
        use md5::{Digest, Md5};
        format!("a {}", hex::encode(Md5::digest(body)))
    };
    assert_eq!(log[0].header("authorization"), Some(expected.as_str()));
}

#[test]
fn a_failing_sign_command_is_a_clear_error_without_the_command() {
    let (url, log) = counting_server();
    let dir = tempfile::tempdir().unwrap();
    let command = "echo \"cannot sign: key s3cr3t-k3y-0042 expired\" >&2; exit 3";
    let mut child = spawn_with_command(
        &url,
        dir.path(),
        command,
        &["--filter", "first page is a success envelope"],
    );
    let status = wait_bounded(&mut child, Duration::from_secs(120)).expect("the run hung");
    let all = written(dir.path());
    assert_eq!(status.code(), Some(3), "{all}");
    assert!(
        all.contains(
            "the sign command failed (exit status 3); stderr: cannot sign: key <redacted> expired"
        ),
        "{all}"
    );
    assert!(!all.contains("s3cr3t-k3y-0042"), "{all}");
    assert!(
        !all.contains("exit 3"),
        "the command is never written: {all}"
    );
    assert!(log.lock().unwrap().is_empty());
}
