//! `mallcheck run` end to end: the real binary against the real server over loopback.

use std::process::Command;

use crate::common::{
    Server, assert_exit, bin, closed_port, finding_ids, output_text, repo, run_against,
};

#[test]
fn run_with_no_base_url_passes_against_the_embedded_server_and_writes_junit() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .current_dir(dir.path())
        .env_remove("MALLCHECK_BASE_URL")
        .args(["run", "--cases"])
        .arg(repo().join("cases"))
        .args(["--color", "never"])
        .output()
        .unwrap();
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let summary = text
        .lines()
        .find(|l| l.starts_with("Summary"))
        .expect("summary line");
    let total: usize = summary.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(total >= 30, "{summary}");
    assert!(summary.contains(" 0 failed, 0 errored"), "{summary}");
    let junit = std::fs::read_to_string(dir.path().join("reports/junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase ").count(), total, "{junit}");
    assert!(junit.matches("<testsuite ").count() >= 5);
}

#[test]
fn a_malformed_case_file_exits_2_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = repo().join("tests/fixtures/bad-cases/unknown-key.yaml");
    let out = Command::new(bin())
        .current_dir(dir.path())
        .args(["run", "--color", "never", "--cases"])
        .arg(&fixture)
        .output()
        .unwrap();
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("unknown-key.yaml:7:"), "{text}");
    assert!(text.contains("expect"), "did-you-mean missing: {text}");
    assert!(
        !dir.path().join("reports/junit.xml").exists(),
        "nothing may run before the cases are valid"
    );
}

#[test]
fn bad_flags_exit_2_with_the_flag_named() {
    for (args, needle) in [
        (vec!["run", "--timeout", "0"], "--timeout"),
        (vec!["run", "--base-url", "ftp://x"], "--base-url"),
        (vec!["run", "--no-such-flag"], "--no-such-flag"),
        (vec!["serve", "--fault", "no-such-fault"], "no-such-fault"),
    ] {
        let out = Command::new(bin())
            .args(&args)
            .env("MALLCHECK_SIGN_KEY", "k")
            .output()
            .unwrap();
        let text = output_text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(text.contains(needle), "{args:?}: {text}");
    }
}

#[test]
fn an_unreachable_service_exits_3_and_still_writes_the_report() {
    let port = closed_port();
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&format!("http://127.0.0.1:{port}"), dir.path())
        .output()
        .unwrap();
    let text = output_text(&out);
    // Could not test: a pipeline retries it rather than blocking on a broken contract.
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        finding_ids(&dir.path().join("report.json")).contains(&"transport.connect".to_string())
    );
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(junit.contains("<error"), "{junit}");
}

#[test]
fn a_base_url_with_a_path_prefix_is_honoured() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&server.fault_url("extra-fields"), dir.path())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert!(
        finding_ids(&dir.path().join("report.json")).contains(&"info.extra-fields".to_string())
    );
}

#[test]
fn checks_lists_every_catalogue_entry() {
    let out = Command::new(bin()).arg("checks").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    for c in mallcheck::spec::catalog::CATALOG {
        assert!(
            text.contains(c.id) && text.contains(c.section),
            "{} missing",
            c.id
        );
    }
}

#[test]
fn an_interrupted_run_leaves_valid_reports_of_what_ran() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let mut child = run_against(&server.fault_url("slow-first-byte"), dir.path())
        .args(["--timeout", "1", "--jobs", "1", "--quiet", "--no-preflight"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let junit = dir.path().join("junit.xml");
    // Poll until at least one case has run (timed out), then interrupt; the cases not run yet
    // are in the report from the start, as skipped.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !std::fs::read_to_string(&junit).is_ok_and(|t| t.contains("type=\"transport.timeout\"")) {
        assert!(std::time::Instant::now() < deadline, "no case finished");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(1));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.trim_end().ends_with("</testsuites>"), "{xml}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(report["complete"], false);
    assert_eq!(report["interrupted"], "SIGINT");
    let cases = report["cases"].as_array().unwrap();
    let ran = cases.iter().filter(|c| c["outcome"] != "skip").count();
    assert!((1..cases.len()).contains(&ran), "{ran} cases ran");
}

/// A cursor rule of the user's that finds no cursor on the first full page (a typo in
/// `--cursor`) is the run's error, exit 3 naming the rule: not a paging break of a service
/// that follows the default convention.
#[test]
fn a_cursor_rule_that_finds_nothing_is_the_runs_error_not_the_services() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    // A `last-record:` rule that finds nothing on the first full page; a `response:` rule that
    // finds no cursor anywhere (the reference server returns none): its walks end at their
    // first full page and read different lists.
    for (rule, said) in [
        (
            "last-record:/mallsn",
            "no cursor value at the last record's /mallsn: is the cursor rule right",
        ),
        ("response:/nextCursr", "is the cursor rule right"),
    ] {
        let out = run_against(&server.base_url, dir.path())
            .args(["--cursor", rule])
            .output()
            .unwrap();
        let text = output_text(&out);
        assert_exit(&out, 3);
        assert_eq!(
            finding_ids(&dir.path().join("report.json")),
            ["harness.cursor-rule"],
            "{rule}: {text}"
        );
        assert!(text.contains(said), "{rule}: {text}");
        // A case whose endCursor is the discovered mallSn (the spec's last-record cursor) is
        // sent under a `response:` rule with the first page's own next cursor: skipped, saying
        // so, when the first page gives none.
        if rule.starts_with("response:") {
            assert!(
                text.contains(
                    "the first mall-list page gives no next cursor at response:/nextCursr"
                ),
                "{rule}: {text}"
            );
        }
    }
    // The same suite under the default rule passes.
    let out = run_against(&server.base_url, dir.path()).output().unwrap();
    assert_exit(&out, 0);
}

/// A service that gives its next cursor as a token of its own in the envelope (§4.1 shows no
/// way) and refuses a mallSn as cursor: under the default rule the walks could not go on, said
/// as the run's error naming the rule to use (exit 3, not a broken contract); with that rule
/// the service passes.
#[test]
fn a_cursor_of_the_services_own_in_the_envelope_is_named_and_then_followed() {
    let server = Server::start(&[]);
    let url = server.fault_url("cursor-token-in-envelope");
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&url, dir.path()).output().unwrap();
    let text = output_text(&out);
    assert_exit(&out, 3);
    // The envelope's extra member is information, not a failure.
    let ids = finding_ids(&dir.path().join("report.json"));
    assert!(
        ids.iter()
            .all(|id| id == "harness.cursor-rule" || id == "info.extra-fields")
            && ids.contains(&"harness.cursor-rule".to_string()),
        "{ids:?}: {text}"
    );
    assert!(text.contains("--cursor response:/endCursor"), "{text}");
    let out = run_against(&url, dir.path())
        .args(["--cursor", "response:/endCursor"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
}
