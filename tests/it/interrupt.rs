//! SIGTERM and SIGHUP stop a run the way Ctrl-C does (issue 11, item 9): the real binary is
//! signalled mid-run against a slow fault of the reference server, and all four reports are
//! finished, parse, and agree on the cases that ran and the ones that did not. An interrupted
//! run never reads as a pass: every human report says INTERRUPTED, the JUnit report has an
//! `<error>` for it, and `merge` of its reports fails naming them.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Server, bin, run_against};

/// The `<testcase>` elements of a JUnit file (which must be well-formed XML): name, and the
/// element and `type` of its result (`pass` when it has none).
fn junit_testcases(xml: &str) -> Vec<(String, String, String)> {
    use quick_xml::events::Event;
    let attr = |e: &quick_xml::events::BytesStart<'_>, name: &str| -> String {
        e.attributes()
            .flatten()
            .find(|a| a.key.as_ref() == name.as_bytes())
            .map(|a| String::from_utf8_lossy(&a.value).into_owned())
            .unwrap_or_default()
    };
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut cases: Vec<(String, String, String)> = Vec::new();
    loop {
        match reader.read_event().expect("well-formed JUnit") {
            Event::Start(e) | Event::Empty(e) => match e.name().as_ref() {
                b"testcase" => cases.push((attr(&e, "name"), "pass".into(), String::new())),
                kind @ (b"failure" | b"error" | b"skipped") => {
                    let last = cases.last_mut().expect("a result inside a testcase");
                    last.1 = String::from_utf8_lossy(kind).into_owned();
                    last.2 = attr(&e, "type");
                }
                _ => {}
            },
            Event::Eof => return cases,
            _ => {}
        }
    }
}

/// Waits until the JSON report in `dir` holds a case that ran (the not-run cases are listed
/// as skipped from the start).
fn wait_for_a_finished_case(dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ran = std::fs::read_to_string(dir.join("report.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .is_some_and(|v| {
                v["cases"]
                    .as_array()
                    .is_some_and(|cases| cases.iter().any(|c| c["outcome"] != "skip"))
            });
        if ran {
            return;
        }
        assert!(Instant::now() < deadline, "no case finished");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends `signal` (e.g. `TERM`) to a process.
fn kill(signal: &str, pid: u32) {
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success());
}

/// The cases of an interrupted run's JSON report that were not run, checking their reason.
fn not_run(report: &Value, signal: &str) -> usize {
    let reason = format!("not run: the run was interrupted by SIG{signal} before this case");
    report["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .filter(|c| c["skip_reason"] == reason.as_str())
        .inspect(|c| assert_eq!(c["outcome"], "skip", "{c}"))
        .count()
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
    wait_for_a_finished_case(dir.path());
    kill(signal, child.id());
    let out = child.wait_with_output().expect("wait for mallcheck");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{signal}: {stderr}");
    assert!(
        stderr.contains(&format!("interrupted by SIG{signal}")),
        "{stderr}"
    );

    let report: Value = serde_json::from_str(&read(dir.path(), "report.json")).expect("JSON");
    assert_eq!(report["complete"], false);
    assert_eq!(report["interrupted"], format!("SIG{signal}"));
    let total = report["cases"].as_array().expect("cases").len();
    let not_run = not_run(&report, signal);
    assert!(
        (1..total).contains(&not_run),
        "{signal}: {not_run} of {total} cases not run"
    );
    let summary = &report["summary"];
    let counted: u64 = ["passed", "warned", "failed", "errored", "skipped"]
        .iter()
        .map(|k| summary[k].as_u64().expect("count"))
        .sum();
    assert_eq!(counted, total as u64, "{signal}: summary {summary}");
    assert!(
        summary["duration"].as_f64().expect("duration") >= 1.0,
        "{signal}: the time elapsed (a case takes a second), not 0: {summary}"
    );

    let xml = read(dir.path(), "junit.xml");
    assert!(xml.trim_end().ends_with("</testsuites>"), "{xml}");
    let testcases = junit_testcases(&xml);
    assert_eq!(testcases.len(), total + 1, "{signal}: JUnit and JSON agree");
    assert_eq!(
        testcases.last(),
        Some(&(
            "run interrupted".to_string(),
            "error".to_string(),
            "harness.interrupted".to_string()
        )),
        "{signal}: {xml}"
    );

    let markdown = read(dir.path(), "summary.md");
    assert!(markdown.contains("Partial report"), "{markdown}");
    assert_eq!(
        stated_total(&markdown),
        total,
        "{signal}: Markdown and JSON agree"
    );

    let html = read(dir.path(), "report.html");
    assert!(html.trim_end().ends_with("</html>"), "{html}");
    assert!(html.contains("id=\"partial\""), "{html}");
    assert_eq!(stated_total(&html), total, "{signal}: HTML and JSON agree");
    assert_eq!(html.matches("<tr id=\"case-").count(), total);
}

#[test]
fn sigterm_stops_the_run_and_finishes_every_report() {
    signalled_run_finishes_its_reports("TERM");
}

#[test]
fn sighup_stops_the_run_and_finishes_every_report() {
    signalled_run_finishes_its_reports("HUP");
}

/// A passing run stopped by SIGTERM: its reports said PASS (Markdown and HTML headline, 35 of
/// 35 green testcases in JUnit, `duration: 0.0` in JSON) and `merge` of them exited 0. Now every
/// human report says INTERRUPTED, JUnit has an `<error>` for it and lists the cases not run as
/// skipped, the JSON duration is the time elapsed, and `merge` exits 1 naming the inputs.
#[test]
fn an_interrupted_passing_run_says_interrupted_and_its_merge_fails() {
    let server = Server::start(&["--latency-ms", "150"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let child = run_against(&server.base_url, dir.path())
        .args(["--jobs", "1", "--quiet", "--snapshots", "off"])
        .args(["--markdown", "summary.md", "--html", "report.html"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mallcheck run");
    wait_for_a_finished_case(dir.path());
    kill("TERM", child.id());
    let out = child.wait_with_output().expect("wait for mallcheck");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");

    let report: Value = serde_json::from_str(&read(dir.path(), "report.json")).expect("JSON");
    let summary = &report["summary"];
    assert_eq!(
        (&summary["failed"], &summary["errored"]),
        (&Value::from(0), &Value::from(0)),
        "the cases that ran passed: {summary}"
    );
    assert!(not_run(&report, "TERM") > 0, "{report}");
    assert!(
        summary["duration"].as_f64().expect("duration") > 0.0,
        "{summary}"
    );

    let markdown = read(dir.path(), "summary.md");
    assert!(
        markdown.starts_with("## mallcheck: ⏹️ INTERRUPTED\n"),
        "{markdown}"
    );
    assert!(
        !markdown.contains("PASS") && !markdown.contains("in 0.00s"),
        "{markdown}"
    );
    assert!(
        markdown.contains("the run was interrupted by SIGTERM after"),
        "{markdown}"
    );
    let html = read(dir.path(), "report.html");
    assert!(
        html.contains("<title>mallcheck report: INTERRUPTED</title>"),
        "{html}"
    );
    assert!(!html.contains("PASS</span></h1>"), "{html}");

    let xml = read(dir.path(), "junit.xml");
    let testcases = junit_testcases(&xml);
    let skipped = testcases.iter().filter(|c| c.1 == "skipped").count();
    assert!(skipped > 0, "the cases not run are listed: {xml}");
    assert_eq!(
        testcases.iter().filter(|c| c.1 == "error").count(),
        1,
        "{xml}"
    );

    for input in ["report.json", "junit.xml"] {
        let flag = if input.ends_with(".json") {
            "--json"
        } else {
            "--junit"
        };
        let merged = Command::new(bin())
            .current_dir(dir.path())
            .args(["merge", flag, "merged.out", input])
            .output()
            .expect("run mallcheck merge");
        let stderr = String::from_utf8_lossy(&merged.stderr);
        assert_eq!(merged.status.code(), Some(1), "{input}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "error: {input} is the report of a run that did not complete"
            )),
            "{stderr}"
        );
    }
}

/// `--max-time` stops a run as a signal does: against a service that answers every request
/// just within the timeout, the run ends at its budget, the reports say INTERRUPTED and list
/// the cases not run, and it exits 1.
#[test]
fn max_time_stops_a_slow_run_and_finishes_its_reports() {
    let server = Server::start(&["--latency-ms", "400"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let started = std::time::Instant::now();
    let out = run_against(&server.base_url, dir.path())
        .args([
            "--jobs",
            "1",
            "--quiet",
            "--snapshots",
            "off",
            "--max-time",
            "2",
        ])
        .output()
        .expect("run mallcheck");
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("interrupted by --max-time (2 s)"),
        "{stderr}"
    );
    // The budget, and the answer in flight at its end.
    assert!(took.as_secs_f64() < 2.0 + 1.5, "{took:?}");
    let report: Value = serde_json::from_str(&read(dir.path(), "report.json")).expect("JSON");
    let reason = "not run: the run was interrupted by --max-time (2 s) before this case";
    let not_run = report["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .filter(|c| c["skip_reason"] == reason)
        .count();
    assert!(not_run > 0, "{report}");
    assert_eq!(report["verdict"], "interrupted", "{report}");
}

/// Stopped during the preflight (a service that takes the connection and never answers): the
/// reports still name the target and list every planned case as not run.
#[test]
fn max_time_during_the_preflight_still_lists_the_cases_not_run() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let out = run_against(&url, dir.path())
        .args([
            "--quiet",
            "--snapshots",
            "off",
            "--timeout",
            "30",
            "--max-time",
            "1",
        ])
        .output()
        .expect("run mallcheck");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let report: Value = serde_json::from_str(&read(dir.path(), "report.json")).expect("JSON");
    assert_eq!(report["target"], url.as_str(), "{report}");
    let reason = "not run: the run was interrupted by --max-time (1 s) before this case";
    let cases = report["cases"].as_array().expect("cases");
    assert!(cases.len() > 10, "{report}");
    assert!(cases.iter().all(|c| c["skip_reason"] == reason), "{report}");
}
