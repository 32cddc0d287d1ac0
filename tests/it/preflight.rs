//! The preflight: a wrong key, a wrong appid or a refused port stops `run` at once with one
//! message naming the likely causes, exit 1, and reports holding one error case `preflight`.

use std::process::{Command, Output};

use mallcheck::server::data::{DEMO_SIGN_KEY, MAIN};

use crate::common::{Server, bin, closed_port, repo, run_against};

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Asserts the run stopped after the preflight alone, with these words in its message.
fn assert_stopped(out: &Output, dir: &std::path::Path, words: &[&str]) {
    let (stdout, stderr) = text(out);
    // Could not test.
    assert_eq!(out.status.code(), Some(3), "{stdout}{stderr}");
    assert_eq!(
        stderr.matches("preflight failed").count(),
        1,
        "one message: {stderr}"
    );
    for w in words {
        assert!(stderr.contains(w), "`{w}` missing: {stderr}");
    }
    assert!(stderr.contains("--no-preflight"), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let cases = report["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 1, "only the preflight case: {report}");
    assert_eq!(cases[0]["id"]["name"], "preflight");
    assert_eq!(cases[0]["outcome"], "error");
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert!(
        junit.contains("preflight") && junit.contains("<error"),
        "{junit}"
    );
    assert!(!stdout.contains("merchant lists no mall"), "{stdout}");
}

#[test]
fn a_wrong_key_stops_the_run_naming_key_signer_and_appid() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&server.base_url, dir.path())
        .env("MALLCHECK_SIGN_KEY", "not-the-key")
        .output()
        .unwrap();
    assert_stopped(
        &out,
        dir.path(),
        &[
            "refused",
            "HTTP 401",
            "signing key",
            "signer",
            "appid",
            "base URL",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert!(
        !stdout.contains("not-the-key") && !stderr.contains("not-the-key"),
        "the key leaked"
    );
}

#[test]
fn a_wrong_appid_stops_the_run() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .current_dir(dir.path())
        .env_clear()
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .args(["run", "--base-url", &server.base_url])
        .args([
            "--appid",
            "someone-elses-app",
            "--merchant-id",
            MAIN.merchant_id,
        ])
        .args(["--merchant-user-id", MAIN.merchant_user_id, "--cases"])
        .arg(repo().join("cases"))
        .args(["--junit", "junit.xml", "--json", "report.json"])
        .output()
        .unwrap();
    assert_stopped(
        &out,
        dir.path(),
        &["refused", "`someone-elses-app`", "appid"],
    );
}

#[test]
fn a_refused_port_stops_the_run_naming_host_port_scheme_and_proxy() {
    let port = closed_port();
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&format!("http://127.0.0.1:{port}"), dir.path())
        .output()
        .unwrap();
    assert_stopped(
        &out,
        dir.path(),
        &["cannot reach", "host or port", "scheme", "proxy"],
    );
}

#[test]
fn a_wrong_path_prefix_stops_the_run_naming_it() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&format!("{}/api", server.base_url), dir.path())
        .output()
        .unwrap();
    assert_stopped(&out, dir.path(), &["HTTP 404", "path prefix"]);
}

#[test]
fn no_preflight_runs_the_whole_suite_against_a_wrong_key() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&server.base_url, dir.path())
        .env("MALLCHECK_SIGN_KEY", "not-the-key")
        .arg("--no-preflight")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    // The refused calls could not test the service: never a pass of the gate, and no contract
    // failure either (the raw-spelling probe's compact call is refused too).
    assert_eq!(out.status.code(), Some(3), "{stdout}{stderr}");
    assert!(!stderr.contains("preflight failed"), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    let cases = report["cases"].as_array().unwrap();
    assert!(cases.len() > 10, "{report}");
    // A case whose signed call was refused is an error, never a pass or a skip.
    for name in [
        "first page is a success envelope",
        "products of every listed mall",
        "paging walk agrees at every page size",
        "products of a listed mall are a bare array",
        "mall list signed over another spelling of its body is served",
        "products signed over another spelling of their body are served",
    ] {
        let case = cases
            .iter()
            .find(|c| c["id"]["name"] == name)
            .unwrap_or_else(|| panic!("{name}: {report}"));
        assert_eq!(case["outcome"], "error", "{name}: {case}");
    }
    // The one skip: the cross-merchant cursor probe, which sends nothing without a second
    // merchant configured.
    assert!(
        cases.iter().all(|c| c["outcome"] != "skip"
            || c["skip_reason"]
                .as_str()
                .is_some_and(|r| r.contains("no second merchant is configured"))),
        "{stdout}"
    );
    assert!(cases.iter().all(|c| c["outcome"] != "fail"), "{stdout}");
}

/// A server that answers every request with `answer`, then closes the connection.
fn answering(answer: &'static [u8]) -> String {
    crate::common::scripted_server(move |_| answer.to_vec())
}

/// A head cut short in the middle of an echoed secret (h29 F7): the bytes shown end before
/// the secret's beginning, as an excerpt cut short does.
#[test]
fn a_head_cut_in_the_middle_of_the_key_shows_no_part_of_it() {
    let url = answering(b"HTTP/1.1 401 Unauthorized\r\nX-Key: mallcheck-demo-ke");
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&url, dir.path()).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("before its head was complete"), "{stdout}");
    assert!(stdout.contains("X-Key: "), "{stdout}");
    for shown in [
        &stdout,
        &stderr,
        &std::fs::read_to_string(dir.path().join("report.json")).unwrap(),
    ] {
        assert!(!shown.contains("demo-ke"), "{shown}");
    }
}

#[test]
fn a_broken_answer_to_the_preflight_fails_the_run_instead_of_being_dropped() {
    // Each is an answer of the service to a valid signed request that breaks the contract:
    // the run fails on it (exit 1) and says so, even when the suite after it would pass.
    let cases: [(&[u8], &str); 5] = [
        (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 25\r\n\r\n{\"success\":true,\"data\":[{",
            "not JSON",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n",
            "an empty body",
        ),
        (
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 45\r\n\r\n{\"success\":false,\"code\":\"9999\",\"msg\":\"boom\"}",
            "HTTP 503",
        ),
        // HTTP/0.9: a body without a status line. The service was reached and answered.
        (b"{\"success\":true}\n", "well-formed HTTP/1.1 answer"),
        // A head cut short, then the connection closed: hyper says only that the message was
        // incomplete, which once read as "nothing listens there" (exit 3). The bytes that came
        // are shown.
        (
            b"HTTP/1.1 200 OK\r\nContent-Ty",
            r#"the connection was closed after 27 bytes of an answer, before its head was complete: "HTTP/1.1 200 OK\r\n"#,
        ),
    ];
    for (answer, words) in cases {
        let url = answering(answer);
        let dir = tempfile::tempdir().unwrap();
        let out = run_against(&url, dir.path()).output().unwrap();
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{words}: {stdout}{stderr}");
        assert!(stderr.contains("preflight failed"), "{stderr}");
        assert!(stderr.contains("broken answer"), "{stderr}");
        assert!(stdout.contains(words), "{words}: {stdout}");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
                .unwrap();
        let cases = report["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 1, "{report}");
        assert_eq!(cases[0]["id"]["name"], "preflight");
        assert_eq!(cases[0]["outcome"], "fail", "{report}");
    }
}
