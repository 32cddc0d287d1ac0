//! SIGTERM and SIGHUP stop a run the way Ctrl-C does (issue 11, item 9): the real binary is
//! signalled mid-run against a slow fault of the reference server, and all four reports are
//! finished, parse, and agree on the cases that ran.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Server, run_against};

/// Number of the `<testcase>` elements of a JUnit file (which must be well-formed XML).
fn junit_testcases(xml: &str) -> usize {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut cases = 0;
    loop {
        match reader.read_event().expect("well-formed JUnit") {
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"testcase" => cases += 1,
            Event::Eof => return cases,
            _ => {}
        }
    }
}

/// The `N` of the `N cases: …` (or `1 case: …`) summary of a Markdown or HTML report.
fn stated_total(text: &str) -> usize {
    let at = [text.find(" case: "), text.find(" cases: ")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or_else(|| panic!("no case total in {text}"));
    let digits: String = text[..at]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no case total in {text}"))
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("read {name}: {e}"))
}

/// Runs the shipped cases against a fault that answers after 30 s (with a 1 s timeout, so each
/// case takes a second), sends `signal` once a case is in the JUnit report, and checks the
/// reports the run leaves.
fn signalled_run_finishes_its_reports(signal: &str) {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let child = run_against(&server.fault_url("slow-first-byte"), dir.path())
        .args(["--timeout", "1", "--jobs", "1", "--quiet", "--no-preflight"])
        .args(["--markdown", "summary.md", "--html", "report.html"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mallcheck run");
    let junit = dir.path().join("junit.xml");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&junit).is_ok_and(|t| t.contains("<testcase")) {
        assert!(Instant::now() < deadline, "no case finished");
        std::thread::sleep(Duration::from_millis(50));
    }
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success());
    let out = child.wait_with_output().expect("wait for mallcheck");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{signal}: {stderr}");
    assert!(
        stderr.contains(&format!("interrupted by SIG{signal}")),
        "{stderr}"
    );

    let report: Value = serde_json::from_str(&read(dir.path(), "report.json")).expect("JSON");
    assert_eq!(report["complete"], false);
    let ran = report["cases"].as_array().expect("cases").len();
    assert!(
        (1..36).contains(&ran),
        "{signal}: {ran} cases in the report"
    );
    let summary = &report["summary"];
    let counted: u64 = ["passed", "warned", "failed", "errored", "skipped"]
        .iter()
        .map(|k| summary[k].as_u64().expect("count"))
        .sum();
    assert_eq!(counted, ran as u64, "{signal}: summary {summary}");

    let xml = read(dir.path(), "junit.xml");
    assert!(xml.trim_end().ends_with("</testsuites>"), "{xml}");
    assert_eq!(junit_testcases(&xml), ran, "{signal}: JUnit and JSON agree");

    let markdown = read(dir.path(), "summary.md");
    assert!(markdown.contains("Partial report"), "{markdown}");
    assert_eq!(
        stated_total(&markdown),
        ran,
        "{signal}: Markdown and JSON agree"
    );

    let html = read(dir.path(), "report.html");
    assert!(html.trim_end().ends_with("</html>"), "{html}");
    assert!(html.contains("id=\"partial\""), "{html}");
    assert_eq!(stated_total(&html), ran, "{signal}: HTML and JSON agree");
    assert_eq!(html.matches("<tr id=\"case-").count(), ran);
}

#[test]
fn sigterm_stops_the_run_and_finishes_every_report() {
    signalled_run_finishes_its_reports("TERM");
}

#[test]
fn sighup_stops_the_run_and_finishes_every_report() {
    signalled_run_finishes_its_reports("HUP");
}
