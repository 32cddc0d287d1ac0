//! Integration tests of the Markdown and HTML reports and of `mallcheck merge`: the real binary
//! against `mallcheck serve` on an ephemeral loopback port.
//!
//! The HTML test renders the report in headless Chromium (`.ci/install-chromium.sh` installs
//! Debian's). Without a Chromium it prints a note and checks the file only, unless
//! `MALLCHECK_REQUIRE_TOOLS` is set (as CI does), where a missing browser fails the test.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Server, run_as_main};
use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, MAIN};
use serde_json::Value;

const FAULT: &str = "mall-state-out-of-range";
const FAILING_CHECK: &str = "mall.state";
const FAILING_CASE: &str = "first page is a success envelope";

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mallcheck"))
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Paths of the four reports of one run.
struct Reports {
    junit: PathBuf,
    json: PathBuf,
    html: PathBuf,
    markdown: PathBuf,
}

impl Reports {
    fn in_dir(dir: &Path, stem: &str) -> Reports {
        Reports {
            junit: dir.join(format!("{stem}/junit.xml")),
            json: dir.join(format!("{stem}/report.json")),
            html: dir.join(format!("{stem}/report.html")),
            markdown: dir.join(format!("{stem}/summary.md")),
        }
    }
}

/// `mallcheck run` as the server's main merchant, in `dir`, with a clean environment.
fn run(base_url: &str, dir: &Path, reports: &Reports, filters: &[&str]) -> Output {
    command(base_url, dir, reports, filters)
        .output()
        .expect("run mallcheck")
}

/// The command of [`run`], not started.
fn command(base_url: &str, dir: &Path, reports: &Reports, filters: &[&str]) -> Command {
    let mut cmd = run_as_main(base_url, dir);
    cmd.args(["--snapshots", "off", "--color", "never"])
        .arg("--cases")
        .arg(repo().join("cases"))
        .arg("--junit")
        .arg(&reports.junit)
        .arg("--json")
        .arg(&reports.json)
        .arg("--html")
        .arg(&reports.html)
        .arg("--markdown")
        .arg(&reports.markdown);
    for f in filters {
        cmd.args(["--filter", f]);
    }
    cmd
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn require_tools() -> bool {
    std::env::var_os("MALLCHECK_REQUIRE_TOOLS").is_some_and(|v| !v.is_empty())
}

fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MALLCHECK_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
    .find(|p| p.is_file())
}

/// Runs a child to completion within `limit`, killing it past the deadline.
fn output_within(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stdout.read_to_end(&mut b);
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stderr.read_to_end(&mut b);
        b
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the child did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

/// The DOM of a local HTML file after headless Chromium parsed it.
fn dump_dom(chromium: &Path, page: &Path) -> String {
    let profile = tempfile::tempdir().expect("profile dir");
    let mut cmd = Command::new(chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--no-first-run",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .arg("--dump-dom")
    .arg(format!("file://{}", page.display()));
    let out = output_within(cmd, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The DOM of `page` in headless Chromium; `None` (with a note) when there is no Chromium,
/// which fails instead under `MALLCHECK_REQUIRE_TOOLS`.
fn rendered_dom(page: &Path) -> Option<String> {
    let Some(chromium) = find_chromium() else {
        assert!(
            !require_tools(),
            "MALLCHECK_REQUIRE_TOOLS is set but no Chromium was found (run .ci/install-chromium.sh)"
        );
        eprintln!(
            "note: no chromium on PATH; skipped rendering the HTML report (see .ci/install-chromium.sh)"
        );
        return None;
    };
    Some(dump_dom(&chromium, page))
}

#[test]
fn fault_run_html_report_shows_the_failures_in_headless_chromium() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let reports = Reports::in_dir(dir.path(), "reports");
    let out = run(
        &format!("{}/fault/{FAULT}", server.base_url),
        dir.path(),
        &reports,
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "a fault run fails: {}",
        String::from_utf8_lossy(&out.stdout)
    );

    let html = read(&reports.html);
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(
        !html.contains("<script") && !html.contains("<link"),
        "self-contained, no JS"
    );
    assert!(!html.contains("id=\"partial\""), "the run finished");
    assert!(!html.contains(DEMO_SIGN_KEY), "no secret in the report");

    let Some(dom) = rendered_dom(&reports.html) else {
        return;
    };
    assert!(
        dom.contains("<section id=\"sec-3\">"),
        "a §3 section: {dom}"
    );
    let section = &dom[dom.find("<section id=\"sec-3\">").expect("§3")..];
    assert!(
        section.contains(&format!("<code class=\"check\">{FAILING_CHECK}</code>")),
        "the failing check id: {dom}"
    );
    assert!(section.contains(FAILING_CASE), "the failing case: {dom}");
    assert!(
        section.contains("- expected: one of [0, 1, 2]"),
        "the expected side: {dom}"
    );
    assert!(section.contains("+ actual:   3"), "the actual side: {dom}");
    assert!(section.contains("curl -sS -X POST"), "the request: {dom}");
    assert!(
        section.contains("&lt;redacted&gt;"),
        "a redacted Authorization: {dom}"
    );
    assert!(section.contains("HTTP 200"), "the response: {dom}");
    assert!(
        dom.contains("badge b-fail\">FAIL</span></h1>"),
        "the run verdict in the title: {dom}"
    );

    // Identical findings of many cases: one group naming every case, one example exchange.
    let doc: Value = serde_json::from_str(&read(&reports.json)).expect("JSON report");
    let failing: Vec<_> = json_cases(&doc)
        .into_iter()
        .filter(|c| c.4.iter().any(|id| id == FAILING_CHECK))
        .collect();
    assert!(failing.len() > 1, "the fault fails several cases");
    let section = &section[..section.find("</section>").expect("end of §3")];
    let articles = section.matches("<article").count();
    assert!(
        articles < failing.len(),
        "{} cases in {articles} articles: {dom}",
        failing.len()
    );
    let largest = section
        .match_indices("data-cases=\"")
        .filter_map(|(i, m)| {
            section[i + m.len()..]
                .split('"')
                .next()?
                .parse::<usize>()
                .ok()
        })
        .max()
        .expect("a group of cases");
    assert!(largest > 1, "{dom}");
    assert_eq!(
        section.matches("<pre class=\"request\">").count(),
        articles,
        "one example exchange an article: {dom}"
    );
    for (_, name, index, _, _) in &failing {
        assert!(
            section.contains(&format!("href=\"#case-{index}\">{name}</a>")),
            "failing case {name} is named in §3: {dom}"
        );
    }
    // JSON bodies re-indented, the actual value painted as the wrong one.
    assert!(
        section.contains("<pre class=\"response-body json\">{\n  \"success\": true,\n"),
        "a pretty response body: {dom}"
    );
    assert!(
        section.contains("<span class=\"act\">+ actual:   3</span>"),
        "{dom}"
    );
}

#[test]
fn server_error_run_html_report_groups_the_cases_and_marks_checks_not_run() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let reports = Reports::in_dir(dir.path(), "reports");
    // Without the preflight, which stops at the first 500: every case meets it.
    let out = command(
        &format!("{}/fault/http-500-html", server.base_url),
        dir.path(),
        &reports,
        &[],
    )
    .arg("--no-preflight")
    .output()
    .expect("run mallcheck");
    assert_eq!(out.status.code(), Some(1), "a fault run fails");
    let doc: Value = serde_json::from_str(&read(&reports.json)).expect("JSON report");
    let cases = json_cases(&doc);
    let failing = cases
        .iter()
        .filter(|c| c.4.iter().any(|id| id == "http.server-error"))
        .count();
    let skipped: Vec<_> = cases.iter().filter(|c| c.3 == "skip").collect();
    assert!(failing > 1 && !skipped.is_empty(), "{cases:?}");

    let Some(dom) = rendered_dom(&reports.html) else {
        return;
    };
    let section = &dom[dom.find("<section id=\"sec-7\">").expect("§7")..];
    let section = &section[..section.find("</section>").expect("end of §7")];
    assert_eq!(section.matches("<article").count(), 1, "one group: {dom}");
    assert!(
        section.contains(&format!("data-cases=\"{failing}\"")),
        "{failing} cases in the group: {dom}"
    );
    assert!(
        section.contains(&format!(
            "HTTP 500, not JSON (expected value at line 1 column 1) in {failing} cases"
        )),
        "{dom}"
    );
    assert_eq!(
        section.matches("<pre class=\"request\">").count(),
        1,
        "{dom}"
    );
    assert!(
        section.contains("<pre class=\"request-body json\">{\n  \"appid\": "),
        "the JSON request body re-indented: {dom}"
    );
    assert!(
        section.contains("<pre class=\"response-body\">&lt;!DOCTYPE html&gt;"),
        "the HTML body as sent: {dom}"
    );

    // The body checks never saw a JSON answer: "not run", not "no findings".
    let row = &dom[dom
        .find("<tr><td>§3 States and transitions</td>")
        .expect("§3 row")..];
    let row = &row[..row.find("</tr>").expect("row end")];
    assert!(row.contains(">not run</span>"), "{row}");
    assert!(!row.contains("no findings"), "{row}");
    // Skipped cases: "not run", with the reason in its own cell.
    for (_, name, index, _, _) in &skipped {
        let at = dom
            .find(&format!("<tr id=\"case-{index}\">"))
            .unwrap_or_else(|| panic!("row of {name}: {dom}"));
        let row = &dom[at..at + dom[at..].find("</tr>").expect("row end")];
        let cells: Vec<&str> = row.split("<td").skip(1).collect();
        assert_eq!(cells.len(), 6, "{row}");
        assert!(cells[3].contains(">not run</span>"), "{row}");
        // Discovery failed on the 500s; the cross-merchant cursor probe has no second merchant.
        assert!(
            cells[4].starts_with(" class=\"why skip-reason\">discovery failed")
                || cells[4]
                    .starts_with(" class=\"why skip-reason\">no second merchant is configured"),
            "{row}"
        );
    }
}

#[test]
fn fault_run_markdown_summary_lists_failures_with_details() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let reports = Reports::in_dir(dir.path(), "reports");
    let out = run(
        &format!("{}/fault/{FAULT}", server.base_url),
        dir.path(),
        &reports,
        &["mall-list.yaml"],
    );
    assert_eq!(out.status.code(), Some(1));
    let md = read(&reports.markdown);
    assert!(md.starts_with("## mallcheck: ❌ FAIL"), "{md}");
    assert!(md.contains("### Failures"), "{md}");
    let row = md
        .lines()
        .find(|l| l.contains(FAILING_CASE) && l.starts_with('|'))
        .unwrap_or_else(|| panic!("a table row for the failing case: {md}"));
    assert!(
        row.contains(&format!("`{FAILING_CHECK}` | §3 | `/data/0/state` (+")),
        "{row}"
    );
    assert!(
        md.contains("<details><summary>FAIL ") && md.contains("request: curl -sS -X POST"),
        "{md}"
    );
    assert!(!md.contains(DEMO_SIGN_KEY), "no secret in the summary");
}

/// (file, name, index, outcome, sorted check ids) of every case of a JSON report.
fn json_cases(doc: &Value) -> Vec<(String, String, u64, String, Vec<String>)> {
    doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| {
            let mut checks: Vec<String> = c["findings"]
                .as_array()
                .expect("findings")
                .iter()
                .map(|f| f["check"].as_str().expect("check").to_string())
                .collect();
            checks.sort();
            (
                c["id"]["file"].as_str().expect("file").to_string(),
                c["id"]["name"].as_str().expect("name").to_string(),
                c["id"]["index"].as_u64().expect("index"),
                c["outcome"].as_str().expect("outcome").to_string(),
                checks,
            )
        })
        .collect()
}

/// (suite, testcase, result element, result type) of every testcase of a JUnit file.
fn junit_cases(xml: &str) -> Vec<(String, String, String, String)> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut suite = String::new();
    let mut out: Vec<(String, String, String, String)> = Vec::new();
    let attr = |e: &quick_xml::events::BytesStart<'_>, name: &str| -> String {
        e.attributes()
            .flatten()
            .find(|a| a.key.as_ref() == name.as_bytes())
            .map(|a| String::from_utf8_lossy(&a.value).into_owned())
            .unwrap_or_default()
    };
    loop {
        match reader.read_event().expect("well-formed JUnit") {
            Event::Start(e) | Event::Empty(e) => match e.name().as_ref() {
                b"testsuite" => suite = attr(&e, "name"),
                b"testcase" => out.push((
                    suite.clone(),
                    attr(&e, "name"),
                    "pass".into(),
                    String::new(),
                )),
                kind @ (b"failure" | b"error" | b"skipped") => {
                    let last = out.last_mut().expect("a result inside a testcase");
                    last.2 = String::from_utf8_lossy(kind).into_owned();
                    last.3 = attr(&e, "type");
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

fn merge(dir: &Path, args: &[&Path]) -> Output {
    Command::new(bin())
        .current_dir(dir)
        .arg("merge")
        .args(args)
        .output()
        .expect("run mallcheck merge")
}

#[test]
fn merging_two_partial_runs_equals_the_run_of_both() {
    let server = Server::start(&[]);
    let url = format!("{}/fault/{FAULT}", server.base_url);
    let dir = tempfile::tempdir().expect("temp dir");
    let (a, b, both) = (
        Reports::in_dir(dir.path(), "a"),
        Reports::in_dir(dir.path(), "b"),
        Reports::in_dir(dir.path(), "both"),
    );
    assert_eq!(
        run(&url, dir.path(), &a, &["mall-list.yaml"]).status.code(),
        Some(1)
    );
    // The preflight's first page breaks the contract too (state 3): every shard fails on it.
    assert_eq!(
        run(&url, dir.path(), &b, &["auth.yaml"]).status.code(),
        Some(1)
    );
    assert_eq!(
        run(&url, dir.path(), &both, &["mall-list.yaml", "auth.yaml"])
            .status
            .code(),
        Some(1)
    );
    let merged_json = dir.path().join("merged/report.json");
    let merged_junit = dir.path().join("merged/junit.xml");
    let out = merge(
        dir.path(),
        &[
            Path::new("--json"),
            &merged_json,
            Path::new("--junit"),
            &merged_junit,
            &a.json,
            &b.junit,
            &a.junit,
            &b.json,
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "the merged result has failures: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let merged: Value = serde_json::from_str(&read(&merged_json)).expect("merged JSON");
    let whole: Value = serde_json::from_str(&read(&both.json)).expect("whole JSON");
    let merged_cases = json_cases(&merged);
    assert!(merged_cases.len() > 10, "{merged_cases:?}");
    assert_eq!(merged_cases, json_cases(&whole));
    assert_eq!(merged["format_version"], 1);
    for key in ["passed", "warned", "failed", "errored", "skipped"] {
        assert_eq!(
            merged["summary"][key], whole["summary"][key],
            "summary.{key}"
        );
    }
    assert_eq!(
        junit_cases(&read(&merged_junit)),
        junit_cases(&read(&both.junit))
    );
}

#[test]
fn merge_of_passing_reports_exits_zero_and_unreadable_input_exits_two() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let reports = Reports::in_dir(dir.path(), "ok");
    assert_eq!(
        run(&server.base_url, dir.path(), &reports, &["auth.yaml"])
            .status
            .code(),
        Some(0)
    );
    let out_json = dir.path().join("merged.json");
    let ok = merge(dir.path(), &[Path::new("--json"), &out_json, &reports.json]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );

    let missing = dir.path().join("shard-9/report.json");
    let bad = merge(
        dir.path(),
        &[Path::new("--json"), &out_json, &reports.json, &missing],
    );
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("shard-9/report.json"),
        "names the file: {stderr}"
    );

    let garbage = dir.path().join("notes.txt");
    std::fs::write(&garbage, "hello").expect("write");
    let bad = merge(dir.path(), &[Path::new("--junit"), &out_json, &garbage]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("notes.txt"));
}

/// Under `--snapshots off` the snapshot cases compare nothing: the coverage says so and the
/// HTML report marks `snapshot.match` "not run" (it said "no findings", read as a pass).
#[test]
fn snapshots_off_marks_snapshot_match_not_run_in_the_html_report() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let reports = Reports::in_dir(dir.path(), "reports");
    let out = run(&server.base_url, dir.path(), &reports, &["snapshot"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("covered: snapshot.match: not compared: snapshots are off"),
        "{stdout}"
    );
    let html = read(&reports.html);
    let row = &html[html.find("<tr><td>Snapshots</td>").expect("snapshot row")..];
    let row = &row[..row.find("</tr>").expect("row end")];
    assert!(row.contains(">not run</span>"), "{row}");
    assert!(row.contains("snapshots off (--snapshots off)"), "{row}");
    assert!(!row.contains("no findings"), "{row}");
}

/// `mallcheck SUBCOMMAND` against `base_url` as the embedded server's main merchant, in `dir`,
/// with a clean environment.
fn as_main(subcommand: &str, base_url: &str, dir: &Path) -> Command {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .args([subcommand, "--base-url", base_url, "--appid", DEMO_APPID])
        .args(["--merchant-id", MAIN.merchant_id])
        .args(["--merchant-user-id", MAIN.merchant_user_id]);
    cmd
}

/// The lines of a command's stderr that start with `error:`.
fn error_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("error:"))
        .map(str::to_string)
        .collect()
}

/// A report under a file (not a directory) cannot be written: `run` says so for each report,
/// naming it, and exits 2 before it sends a request (it used to run, print a dozen nameless
/// "cannot write a report" lines and exit 0, a green gate with no JUnit).
#[test]
fn run_with_unwritable_reports_exits_2_naming_each_before_any_request() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("notadir"), "x").expect("write");
    let out = run_as_main(&server.base_url, dir.path())
        .args(["--snapshots", "off", "--color", "never", "--quiet"])
        .arg("--cases")
        .arg(repo().join("cases/auth.yaml"))
        .args(["--junit", "notadir/junit.xml", "--json", "notadir/r.json"])
        .args(["--html", "notadir/r.html", "--markdown", "reports/s.md"])
        .output()
        .expect("run mallcheck");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        error_lines(&out).join("\n")
    );
    let errors = error_lines(&out);
    assert_eq!(
        errors,
        [
            "error: cannot write the JUnit report notadir/junit.xml: notadir is a file, not a directory",
            "error: cannot write the JSON report notadir/r.json: notadir is a file, not a directory",
            "error: cannot write the HTML report notadir/r.html: notadir is a file, not a directory",
        ],
        "one error per report that cannot be written"
    );
    assert_eq!(server.counters()["requests"], 0, "nothing was sent");
    assert!(!dir.path().join("reports/s.md").exists());
}

/// `fuzz`, `diff` and `merge` check their report paths before they start, too.
#[test]
fn fuzz_diff_and_merge_with_an_unwritable_report_exit_2_naming_it() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("notadir"), "x").expect("write");
    let reason = "notadir is a file, not a directory";

    let fuzz = as_main("fuzz", &server.base_url, dir.path())
        .args([
            "--cases",
            "5",
            "--color",
            "never",
            "--regressions",
            "regressions",
        ])
        .args(["--junit", "notadir/f.xml"])
        .output()
        .expect("run mallcheck fuzz");
    assert_eq!(
        fuzz.status.code(),
        Some(2),
        "{}",
        error_lines(&fuzz).join("\n")
    );
    assert_eq!(
        error_lines(&fuzz),
        [format!(
            "error: cannot write the JUnit report notadir/f.xml: {reason}"
        )]
    );
    assert_eq!(server.counters()["requests"], 0, "the fuzzer sent nothing");

    let diff = as_main("diff", &server.base_url, dir.path())
        .arg("--cases")
        .arg(repo().join("cases"))
        .args(["--junit", "notadir/d.xml", "--markdown", "notadir/d.md"])
        .output()
        .expect("run mallcheck diff");
    assert_eq!(
        diff.status.code(),
        Some(2),
        "{}",
        error_lines(&diff).join("\n")
    );
    assert_eq!(
        error_lines(&diff),
        [
            format!("error: cannot write the Markdown summary notadir/d.md: {reason}"),
            format!("error: cannot write the JUnit report notadir/d.xml: {reason}"),
        ]
    );

    let input = dir.path().join("in.json");
    std::fs::write(
        &input,
        r#"{"format_version": 1, "base_url": "http://x", "strict": false, "complete": true,
            "summary": {"duration": 1.0}, "cases": []}"#,
    )
    .expect("write");
    let merge = merge(
        dir.path(),
        &[Path::new("--json"), Path::new("notadir/m.json"), &input],
    );
    assert_eq!(
        merge.status.code(),
        Some(2),
        "{}",
        error_lines(&merge).join("\n")
    );
    assert_eq!(
        error_lines(&merge),
        [format!(
            "error: cannot write the JSON report notadir/m.json: {reason}"
        )]
    );
}

/// A report that becomes unwritable during a run (here its directory is replaced by a file,
/// as a full disk would refuse it) is one error naming it, and the run does not pass.
#[test]
fn a_report_that_cannot_be_written_at_the_end_fails_the_run_once() {
    let server = Server::start(&["--latency-ms", "100"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let child = run_as_main(&server.base_url, dir.path())
        .args([
            "--snapshots",
            "off",
            "--color",
            "never",
            "--quiet",
            "--jobs",
            "1",
        ])
        .arg("--cases")
        .arg(repo().join("cases/auth.yaml"))
        .args(["--junit", "out/junit.xml", "--json", "kept/r.json"])
        .args(["--html", "kept/r.html", "--markdown", "kept/s.md"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mallcheck run");
    let first = dir.path().join("out/junit.xml");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !first.exists() {
        assert!(
            Instant::now() < deadline,
            "the run never wrote its JUnit report"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::rename(dir.path().join("out"), dir.path().join("out.old")).expect("move out/");
    std::fs::write(dir.path().join("out"), "a file where the directory was").expect("write");
    let out = child.wait_with_output().expect("wait for mallcheck");
    let errors = error_lines(&out);
    assert_eq!(out.status.code(), Some(1), "{}", errors.join("\n"));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("error: cannot write the JUnit report out/junit.xml: "),
        "{errors:?}"
    );
    // The other reports gave the run the verdict it had before (a pass): none of them is left
    // to say so of a run that exits 1.
    for name in ["r.json", "r.html", "s.md"] {
        assert!(!dir.path().join("kept").join(name).exists(), "{name} left");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("note: removed the reports written (kept/r.json, kept/r.html, kept/s.md)"),
        "{stderr}"
    );
}

/// A passing and a failing run of the same cases merge to the same failing result in either
/// order (the first input used to win: good-then-bad passed, bad-then-good failed), with one
/// note about the duplicates instead of one per case.
#[test]
fn merge_in_either_order_keeps_the_worst_outcome_of_each_case() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let (good, bad) = (
        Reports::in_dir(dir.path(), "good"),
        Reports::in_dir(dir.path(), "bad"),
    );
    let filter = ["mall-list.yaml"];
    assert_eq!(
        run(&server.base_url, dir.path(), &good, &filter)
            .status
            .code(),
        Some(0)
    );
    let fault = format!("{}/fault/{FAULT}", server.base_url);
    assert_eq!(
        run(&fault, dir.path(), &bad, &filter).status.code(),
        Some(1)
    );
    // A rerun of the same target that failed: merge refuses reports of different targets.
    for report in [&bad.json, &bad.junit] {
        let text = read(report).replace(&fault, &server.base_url);
        std::fs::write(report, text).expect("write");
    }
    let merged = |name: &str, inputs: [&Path; 4]| {
        let json = dir.path().join(format!("{name}.json"));
        let xml = dir.path().join(format!("{name}.xml"));
        let mut args = vec![Path::new("--json"), &json, Path::new("--junit"), &xml];
        args.extend(inputs);
        let out = merge(dir.path(), &args);
        (out, read(&json), read(&xml))
    };
    let (good_first, json_gb, xml_gb) =
        merged("gb", [&good.json, &good.junit, &bad.json, &bad.junit]);
    let (bad_first, json_bg, xml_bg) =
        merged("bg", [&bad.json, &bad.junit, &good.json, &good.junit]);
    let bad_run: Value = serde_json::from_str(&read(&bad.json)).expect("JSON");
    let failing_of = |doc: &Value| -> Vec<(String, Vec<String>)> {
        json_cases(doc)
            .into_iter()
            .filter(|c| c.3 == "fail")
            .map(|c| (c.1, c.4))
            .collect()
    };
    let bad_failing = failing_of(&bad_run);
    assert!(
        bad_failing
            .iter()
            .any(|(name, checks)| name == FAILING_CASE && checks.contains(&FAILING_CHECK.into())),
        "{bad_failing:?}"
    );
    // The bad run's preflight case (its first page breaks the contract) is in it alone.
    let total = json_cases(&bad_run)
        .iter()
        .filter(|c| c.1 != "preflight")
        .count();
    let bad_failing_in_both = bad_failing
        .iter()
        .filter(|(name, _)| name != "preflight")
        .count();
    for out in [&good_first, &bad_first] {
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        // One note on the duplicates, not one per case.
        let notes: Vec<&str> = stderr.lines().filter(|l| l.starts_with("note:")).collect();
        assert_eq!(notes.len(), 1, "{stderr}");
        assert_eq!(
            notes[0],
            format!(
                "note: {total} cases appear in more than one input ({bad_failing_in_both} with different outcomes); the worst outcome of each is kept",
            ),
            "{stderr}"
        );
    }
    let (gb, bg): (Value, Value) = (
        serde_json::from_str(&json_gb).expect("JSON"),
        serde_json::from_str(&json_bg).expect("JSON"),
    );
    assert_eq!(
        gb["cases"], bg["cases"],
        "the same cases whatever the order"
    );
    assert_eq!(
        failing_of(&gb),
        bad_failing,
        "the failures of the bad run are kept"
    );
    assert_eq!(junit_cases(&xml_gb), junit_cases(&xml_bg));
    assert_eq!(
        junit_cases(&xml_gb)
            .iter()
            .filter(|c| c.2 == "failure")
            .count(),
        bad_failing.len()
    );
}

/// `mallcheck run` of the smoke cases as the main merchant, in `dir`, snapshots off.
fn smoke_run(base_url: &str, dir: &Path) -> Command {
    let mut cmd = run_as_main(base_url, dir);
    cmd.args([
        "--snapshots",
        "off",
        "--color",
        "never",
        "--filter",
        "tag:smoke",
    ]);
    cmd
}

/// Two reports naming one file, however spelt (`--json out.xml --junit sub/../out.xml`), are a
/// usage error naming both before anything is sent: the second would have replaced the first
/// without a word. `/dev/null` may take several reports.
#[test]
fn two_reports_naming_one_file_are_a_usage_error() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let out = smoke_run(&server.base_url, dir.path())
        .args(["--json", "out.xml", "--junit", "sub/../out.xml"])
        .output()
        .expect("run mallcheck");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        error_lines(&out).join("\n")
    );
    assert_eq!(
        error_lines(&out),
        [
            "error: reports: the JUnit report and the JSON report name the same file \
          (sub/../out.xml and out.xml): one would replace the other"
        ]
    );
    assert_eq!(server.counters()["requests"], 0, "nothing was sent");
    #[cfg(unix)]
    {
        let out = smoke_run(&server.base_url, dir.path())
            .args(["--json", "/dev/null", "--junit", "/dev/null"])
            .args(["--markdown", "/dev/null", "--html", "/dev/null"])
            .output()
            .expect("run mallcheck");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
    }
}

/// A console nobody reads (`mallcheck run 2>&1 | head -1`, here the reader gone before the
/// first line): the run goes on, its reports are written and its exit code is the verdict (it
/// was 1 for a passing service, or a crash, 101, when standard error was the same pipe).
#[test]
fn a_console_whose_reader_is_gone_leaves_the_verdict_and_the_reports() {
    let server = Server::start(&[]);
    for (base_url, code) in [
        (server.base_url.clone(), 0),
        (server.fault_url("mall-is-delete-out-of-range"), 1),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let status = smoke_run(&base_url, dir.path())
            .args(["--json", "report.json"])
            .stdout(writer.try_clone().expect("the pipe's writer"))
            .stderr(writer)
            .status()
            .expect("run mallcheck");
        assert_eq!(status.code(), Some(code), "{base_url}");
        let report = std::fs::read_to_string(dir.path().join("report.json")).expect("report");
        let doc: Value = serde_json::from_str(&report).expect("one JSON document");
        assert_eq!(doc["complete"], true, "{report}");
    }
}

/// `fuzz --junit /dev/stdout` piped on: standard output holds the JUnit document alone (the
/// fuzzer's budget line, progress and summary go to standard error).
#[cfg(unix)]
#[test]
fn a_fuzz_junit_report_on_stdout_is_alone_there() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = as_main("fuzz", &server.base_url, dir.path())
        .args(["--cases", "10", "--seed", "1", "--color", "never"])
        .args(["--regressions", "regressions", "--junit", "/dev/stdout"])
        .output()
        .expect("run mallcheck fuzz");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let xml = String::from_utf8_lossy(&out.stdout);
    assert!(xml.starts_with("<?xml"), "stdout: {xml}\nstderr: {stderr}");
    assert_eq!(xml.matches("<?xml").count(), 1, "{xml}");
    assert!(xml.trim_end().ends_with("</testsuites>"), "{xml}");
    assert!(stderr.contains("mallcheck fuzz: seed 1"), "{stderr}");
    assert!(stderr.contains("JUnit report: /dev/stdout"), "{stderr}");
}

/// `--json` and `--junit` naming FIFOs (a shell's process substitution, `/dev/stdout` piped
/// on): each gets the finished report once, written through, and stays a FIFO; nothing is
/// created beside it. Renamed over, as a report file is, `/dev/null` became a regular file.
#[cfg(unix)]
#[test]
fn reports_into_fifos_are_written_once_and_the_fifos_stay() {
    use std::os::unix::fs::FileTypeExt;
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let pipes = dir.path().join("pipes");
    std::fs::create_dir(&pipes).unwrap();
    let (json, junit) = (pipes.join("report.json"), pipes.join("junit.xml"));
    for fifo in [&json, &junit] {
        let made = Command::new("mkfifo")
            .arg(fifo)
            .status()
            .expect("run mkfifo");
        assert!(made.success(), "mkfifo {}", fifo.display());
    }
    let readers: Vec<_> = [json.clone(), junit.clone()]
        .into_iter()
        .map(|fifo| std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap()))
        .collect();
    let out = smoke_run(&server.base_url, dir.path())
        .arg("--json")
        .arg(&json)
        .arg("--junit")
        .arg(&junit)
        .output()
        .expect("run mallcheck");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Checked before the readers are joined: a replaced FIFO leaves its reader waiting.
    for fifo in [&json, &junit] {
        let kind = std::fs::symlink_metadata(fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "{} was replaced: {kind:?}", fifo.display());
    }
    assert_eq!(std::fs::read_dir(&pipes).unwrap().count(), 2);
    let texts: Vec<String> = readers.into_iter().map(|r| r.join().unwrap()).collect();
    let doc: Value = serde_json::from_str(&texts[0]).expect("one whole JSON document");
    assert_eq!(
        doc["complete"], true,
        "the finished report, not an earlier write"
    );
    assert!(doc["summary"]["passed"].as_u64().unwrap() > 0);
    assert_eq!(texts[1].matches("<testsuites").count(), 1, "{}", texts[1]);
}

/// `--json /dev/stdout` piped on: standard output holds the report alone (the console's lines,
/// the summary included, go to standard error), so `| jq` reads it.
#[cfg(unix)]
#[test]
fn a_json_report_on_stdout_is_alone_there() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = smoke_run(&server.base_url, dir.path())
        .args(["--json", "/dev/stdout"])
        .output()
        .expect("run mallcheck");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert_eq!(doc["complete"], true);
    assert!(stderr.contains("Summary: "), "{stderr}");
}

/// A run that stops at a usage error (exit 2, nothing sent) removes the reports an earlier
/// run left at its report paths: a pipeline that publishes them whatever the exit code must
/// not show an earlier green run as this one.
#[test]
fn a_run_stopped_by_a_usage_error_leaves_no_earlier_report_behind() {
    let dir = tempfile::tempdir().unwrap();
    let embedded = || {
        let mut cmd = Command::new(bin());
        cmd.current_dir(dir.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .args([
                "run",
                "--quiet",
                "--snapshots",
                "off",
                "--filter",
                "tag:smoke",
            ]);
        cmd
    };
    let out = embedded().output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let reports = ["junit.xml", "report.json", "report.html", "summary.md"];
    for name in reports {
        assert!(dir.path().join("reports").join(name).is_file(), "{name}");
    }
    let out = embedded()
        .env("MALLCHECK_BASEURL", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    for name in reports {
        assert!(!dir.path().join("reports").join(name).exists(), "{name}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("note: removed the reports of an earlier run"),
        "{stderr}"
    );
    // A file of the user's named as a report by mistake is never removed.
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "mine").unwrap();
    let out = embedded()
        .args(["--json", "notes.txt"])
        .env("MALLCHECK_BASEURL", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "mine");
}

/// `dir`, made, holding a copy of each shipped schema.
fn copy_of_shipped_schemas(dir: &std::path::Path) -> std::path::PathBuf {
    std::fs::create_dir(dir).unwrap();
    for entry in std::fs::read_dir(repo().join("schemas")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    dir.to_path_buf()
}

/// A run with edited copies of the schemas (h27c F1: a price widened to integer or string
/// passed a service serving string prices) says so in every report, not only on the console:
/// a report read alone says what its verdict rests on.
#[test]
fn every_report_carries_the_warning_of_edited_schemas() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let schemas = copy_of_shipped_schemas(&dir.path().join("schemas"));
    let sku = schemas.join("sku.json");
    let mut doc: Value = serde_json::from_str(&read(&sku)).unwrap();
    let price = doc
        .pointer_mut("/properties/price")
        .expect("sku.json describes the price");
    price["type"] = serde_json::json!(["integer", "string"]);
    std::fs::write(&sku, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let out = run_as_main(&server.base_url, dir.path())
        .args(["--schemas", "schemas", "--filter", "tag:envelope"])
        .args(["--junit", "junit.xml", "--json", "report.json"])
        .args(["--markdown", "summary.md", "--html", "report.html"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: checking with edited schemas: schemas/sku.json differs"),
        "{stderr}"
    );
    let json: Value = serde_json::from_str(&read(&dir.path().join("report.json"))).unwrap();
    let warnings = json["warnings"].as_array().expect("a list of warnings");
    assert!(
        warnings.iter().any(|w| w
            .as_str()
            .is_some_and(|w| w.contains("schemas/sku.json differs"))),
        "{json}"
    );
    let junit = read(&dir.path().join("junit.xml"));
    assert!(
        junit.contains("<property name=\"mallcheck.warning\" value=\"checking with edited schemas: schemas/sku.json differs"),
        "{junit}"
    );
    let md = read(&dir.path().join("summary.md"));
    assert!(
        md.contains("> **Warning:** ``checking with edited schemas: schemas/sku.json differs"),
        "{md}"
    );
    let html = read(&dir.path().join("report.html"));
    assert!(
        html.contains("Warning: checking with edited schemas: schemas/sku.json differs"),
        "{html}"
    );
    // The shipped schemas: no warning anywhere.
    let dir = tempfile::tempdir().unwrap();
    run_as_main(&server.base_url, dir.path())
        .args(["--filter", "tag:envelope", "--json", "report.json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_str(&read(&dir.path().join("report.json"))).unwrap();
    assert_eq!(json["warnings"], serde_json::json!([]), "{json}");
}

/// Two runs sharing a report path (h27c F3): the second stops before it removes or writes
/// anything (exit 2, naming the report and the run holding it), so the first run's reports
/// stay its own; once the first has ended the path is free.
#[test]
fn a_run_refuses_report_paths_another_run_holds() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let run = || {
        run_as_main(&server.base_url, dir.path())
            .args(["--filter", "tag:envelope"])
            .args([
                "--junit",
                "reports/junit.xml",
                "--json",
                "reports/report.json",
            ])
            .output()
            .unwrap()
    };
    let first = run();
    assert_eq!(first.status.code(), Some(0));
    let junit = dir.path().join("reports/junit.xml");
    let before = read(&junit);
    // This process stands for a run still writing its JUnit report.
    let held = mallcheck::report::lock::acquire(std::slice::from_ref(&junit)).unwrap();
    let second = run();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: reports: another mallcheck run (pid {}) is writing reports/junit.xml",
            std::process::id()
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("removed the reports"), "{stderr}");
    assert_eq!(read(&junit), before, "the holder's report is untouched");
    assert!(dir.path().join("reports/report.json").is_file());
    drop(held);
    assert_eq!(run().status.code(), Some(0), "free once the holder ended");
}

/// A warning quoting a path of the user's holding a line break (h29 F15) stays on its line:
/// the rest of it cannot start a CI workflow command (`::error::`).
#[test]
fn a_line_break_in_a_warned_path_starts_no_line() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let schemas = copy_of_shipped_schemas(&dir.path().join("s\n::error::injected"));
    let sku = schemas.join("sku.json");
    let mut doc: Value = serde_json::from_str(&read(&sku)).unwrap();
    doc["description"] = serde_json::json!("edited");
    std::fs::write(&sku, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let out = run_as_main(&server.base_url, dir.path())
        .arg("--schemas")
        .arg(&schemas)
        .args(["--filter", "tag:envelope"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("checking with edited schemas"), "{stderr}");
    assert!(
        !stderr.lines().any(|l| l.starts_with("::error")),
        "{stderr}"
    );
}
