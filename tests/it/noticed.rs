//! Bugs noticed in earlier rounds: config diagnostics that quoted a URL password, a console that
//! passed secrets across a line break or a hostile service's control characters, runs that
//! passed although nothing could be tested, and fuzz regressions replayed unlike they were found.

use std::process::{Command, Output};

use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, MAIN};

use crate::common::{Server, bin, repo, run_against};
use crate::politeness::{empty_answer, raw_server, response};

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_config_syntax_error_names_file_and_line_without_quoting_a_url_password() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mallcheck.toml"),
        "[profile.staging]\nbase_url = \"https://user:s3cret@staging.example\"\ntimeout = 10s\n",
    )
    .unwrap();
    let out = Command::new(bin())
        .current_dir(dir.path())
        .env_clear()
        .args(["run", "--profile", "staging", "--color", "never"])
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains("mallcheck.toml:3:"), "{all}");
    assert!(!all.contains("s3cret"), "{all}");
    assert!(all.contains("https://<redacted>@staging.example"), "{all}");
}

/// Outcomes of the cases in a JSON report, by case name.
fn outcomes(report: &std::path::Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(report).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    v["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["id"]["name"].as_str().unwrap_or_default().to_string(),
                c["outcome"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_products_only_run_whose_discovery_fails_does_not_pass() {
    // Nothing listens on the port of a dropped listener: discovery cannot reach the service.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&format!("http://127.0.0.1:{port}"), dir.path())
        .args(["--no-preflight", "--filter", "are a bare array"])
        .output()
        .unwrap();
    let all = text(&out);
    // Could not test.
    assert_eq!(out.status.code(), Some(3), "{all}");
    assert!(
        all.contains("failed the discovery of a mall to target"),
        "{all}"
    );
    assert!(all.contains("transport.connect"), "the true cause: {all}");
    let cases = outcomes(&dir.path().join("report.json"));
    assert!(
        cases.contains(&("discovery".to_string(), "error".to_string())),
        "the reports agree with the exit code: {cases:?}"
    );
    assert!(cases.iter().any(|(_, o)| o == "skip"), "{cases:?}");
}

#[test]
fn a_run_that_skipped_every_case_for_want_of_a_mall_does_not_pass() {
    // The reference server: the preflight passes (a merchant it does not know lists nothing),
    // so there is no mall to target. (A merchant id is a remote target's setting: the embedded
    // server refuses it.)
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .current_dir(dir.path())
        .env_clear()
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .args(["run", "--base-url", &server.base_url])
        .args(["--appid", DEMO_APPID])
        .args(["--merchant-user-id", MAIN.merchant_user_id])
        .args(["--color", "never", "--json", "report.json", "--cases"])
        .arg(repo().join("cases"))
        .args(["--merchant-id", "00000000-0000-4000-8000-000000000123"])
        .args(["--filter", "are a bare array"])
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(3), "{all}");
    assert!(all.contains("nothing covered"), "{all}");
    assert!(all.contains("lists no mall"), "{all}");
    assert!(all.contains("MALLCHECK_MALL_SN"), "how to fix it: {all}");
}

/// Whether `text` holds a character that could rewrite a terminal (ESC, BEL, CR, CSI).
fn has_terminal_control(text: &str) -> Option<char> {
    text.chars()
        .find(|c| matches!(c, '\u{1b}' | '\u{7}' | '\r' | '\u{9b}' | '\u{8}'))
}

#[test]
fn control_characters_from_a_hostile_service_never_reach_the_console() {
    // Raw ESC, BEL and CR in a body that is not JSON, and JSON-escaped ones that decode to raw
    // characters in an envelope's `msg` (the preflight quotes it).
    let (url, _) = raw_server(|request, _| {
        if request
            .path()
            .ends_with("/refuse/optimus/core/open/mall/queryMallList")
        {
            return response(
                "401 Unauthorized",
                "",
                r#"{"success":false,"code":"4010","msg":"bad sign\u001b[2J\u0007\rPASS all"}"#,
            );
        }
        response(
            "200 OK",
            "",
            "{\"success\":true,\u{1b}]0;pwned\u{7}\u{1b}[2J\rPASS \u{9b}31m}",
        )
    });
    let dir = tempfile::tempdir().unwrap();
    for (base_url, extra) in [
        (url.clone(), &["--no-preflight", "--verbose"][..]),
        (format!("{url}/refuse"), &["--verbose"][..]),
    ] {
        let out = run_against(&base_url, dir.path())
            .args(extra)
            .args(["--filter", "first page is a success envelope"])
            .output()
            .unwrap();
        let all = text(&out);
        // A refused call: could not test (3), or a broken answer (1); never a pass.
        assert!(matches!(out.status.code(), Some(1 | 3)), "{all}");
        assert_eq!(has_terminal_control(&all), None, "{all:?}");
        assert!(all.contains("\\u{1b}"), "shown escaped: {all}");
    }
}

#[test]
fn run_replays_a_fuzz_regression_as_the_fuzzer_sent_it() {
    let (url, log) = raw_server(empty_answer);
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("fuzz-regressions");
    std::fs::create_dir(&cases).unwrap();
    // A saved regression into which `auth` and `headers` were written by hand.
    std::fs::write(
        cases.join("mall-list-timely-0123456789.json"),
        r#"{"cases": [{
            "name": "fuzz.timely on mall-list (0123456789)",
            "tags": ["fuzz-regression"],
            "endpoint": "mall-list",
            "request": {
                "body": {"appid": "${MALLCHECK_APPID}", "cursor": {"count": -1}},
                "auth": "missing",
                "headers": {"X-Extra": "1"}
            },
            "expect": {"schema": "none", "checks": ["fuzz.timely", "fuzz.json-body"]}
        }]}"#,
    )
    .unwrap();
    let out = Command::new(bin())
        .current_dir(dir.path())
        .env_clear()
        .env("MALLCHECK_SIGN_KEY", "regression-key-1")
        .args(["run", "--base-url", &url, "--appid", "app-1"])
        .args(["--merchant-id", "m", "--merchant-user-id", "u"])
        .args(["--no-preflight", "--color", "never", "--cases"])
        .arg(&cases)
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 1, "{all}");
    let request = &log[0];
    assert_eq!(
        String::from_utf8_lossy(&request.body),
        r#"{"appid":"app-1","cursor":{"count":-1}}"#,
        "the saved bytes"
    );
    let authorization = request.header("authorization").unwrap_or_default();
    let signature = authorization.strip_prefix("app-1 ").unwrap_or_default();
    assert!(
        signature.len() == 32 && signature.bytes().all(|b| b.is_ascii_hexdigit()),
        "signed with the configured signer, as the fuzzer did: {authorization}"
    );
    assert_eq!(
        request.header("x-extra"),
        None,
        "no header the fuzzer did not send"
    );
}
