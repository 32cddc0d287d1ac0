//! Every JUnit file mallcheck writes (`run` passing, failing, with errors and skips, and
//! interrupted; `fuzz`; `diff`; `merge`) validates against the two strict schemas pipelines
//! check, unmodified: pytest's and Jenkins xunit's junit-10.xsd (copies in
//! tests/fixtures/junit/). It also follows what Jenkins, GitLab and the GitHub test reporters
//! read (read back with an independent parser).
//!
//! `.ci/install-junit-xsd.sh` installs xmllint. Locally, a missing xmllint skips the schema
//! checks with a note; with `MALLCHECK_REQUIRE_TOOLS=1` (CI) it fails instead.

use std::path::Path;
use std::process::Command;

use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, MAIN};

use crate::common::{Server, bin, fuzz_as_main, repo, run_against};

/// The strict schemas, unmodified, in tests/fixtures/junit/.
const SCHEMAS: [&str; 2] = ["pytest-junit-10.xsd", "jenkins-xunit-junit-10.xsd"];

/// Whether xmllint is there to validate with.
fn xmllint() -> bool {
    if Command::new("xmllint").arg("--version").output().is_ok() {
        return true;
    }
    assert!(
        std::env::var_os("MALLCHECK_REQUIRE_TOOLS").is_none(),
        "xmllint missing: run .ci/install-junit-xsd.sh"
    );
    eprintln!("note: xmllint missing; run .ci/install-junit-xsd.sh");
    false
}

/// Asserts that `junit` validates against both strict schemas, and that every testcase has a
/// time (the schemas leave it optional; the consumers sum it).
pub fn assert_strict(junit: &Path) {
    let xml = std::fs::read_to_string(junit).unwrap();
    let cases = elements(&xml)
        .into_iter()
        .filter(|(name, _, _)| name == "testcase")
        .collect::<Vec<_>>();
    assert!(
        !cases.is_empty(),
        "no testcase in {}:\n{xml}",
        junit.display()
    );
    for (_, attrs, _) in &cases {
        assert!(
            attr(attrs, "time").is_some(),
            "a testcase without time:\n{xml}"
        );
    }
    if !xmllint() {
        return;
    }
    for schema in SCHEMAS {
        let xsd = repo().join("tests/fixtures/junit").join(schema);
        let out = Command::new("xmllint")
            .arg("--noout")
            .arg("--schema")
            .arg(&xsd)
            .arg(junit)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{} does not validate against {schema}:\n{}",
            junit.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn run_junit_validates_against_the_strict_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let passing = Command::new(bin())
        .current_dir(dir.path())
        .env_remove("MALLCHECK_BASE_URL")
        .args(["run", "--quiet", "--junit", "pass.xml", "--cases"])
        .arg(repo().join("cases"))
        .status()
        .unwrap();
    assert_eq!(passing.code(), Some(0));
    assert_strict(&dir.path().join("pass.xml"));
    let server = Server::start(&[]);
    for (fault, file, element) in [
        ("mall-state-out-of-range", "fail.xml", "<failure"),
        ("unreachable", "error.xml", "<error"),
        ("no-malls", "skip.xml", "<skipped"),
    ] {
        let sub = dir.path().join(fault);
        std::fs::create_dir(&sub).unwrap();
        // Past the preflight, which stops a run at a service that answers HTML.
        // A port nothing listens on: every case is a transport error.
        let url = if fault == "unreachable" {
            "http://127.0.0.1:1".to_string()
        } else {
            server.fault_url(fault)
        };
        run_against(&url, &sub)
            .args(["--quiet", "--no-preflight"])
            .status()
            .unwrap();
        let junit = sub.join("junit.xml");
        let text = std::fs::read_to_string(&junit).unwrap();
        assert!(text.contains(element), "{fault}: no {element} in\n{text}");
        std::fs::copy(&junit, dir.path().join(file)).unwrap();
        assert_strict(&junit);
    }
}

/// An element's name, attributes and text.
type Element = (String, Vec<(String, String)>, String);

/// Attributes of every element of an XML document, in document order, with the text of
/// `<failure>` elements (quick-xml, not the crate that wrote the report).
fn elements(xml: &str) -> Vec<Element> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut out: Vec<Element> = Vec::new();
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) | Event::Empty(e) => {
                let attrs = e
                    .attributes()
                    .flatten()
                    .map(|a| {
                        (
                            String::from_utf8_lossy(a.key.as_ref()).into_owned(),
                            a.normalized_value(quick_xml::XmlVersion::Explicit1_0)
                                .expect("attribute")
                                .into_owned(),
                        )
                    })
                    .collect();
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                out.push((name, attrs, String::new()));
            }
            Event::Text(t) => {
                if let Some(last) = out.last_mut() {
                    last.2.push_str(&t.decode().expect("text"));
                }
            }
            Event::GeneralRef(r) => {
                if let Some(last) = out.last_mut() {
                    let name = r.decode().expect("reference");
                    last.2.push_str(match name.as_ref() {
                        "lt" => "<",
                        "gt" => ">",
                        "amp" => "&",
                        "quot" => "\"",
                        "apos" => "'",
                        _ => "?",
                    });
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

fn attr<'a>(attrs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn junit_follows_what_jenkins_gitlab_and_github_read() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    // The case files under the working directory, given relatively, as in a CI checkout.
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    for entry in std::fs::read_dir(repo().join("cases")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            std::fs::copy(&path, cases.join(path.file_name().unwrap())).unwrap();
        }
    }
    let status = Command::new(bin())
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .args(["run", "--quiet", "--color", "never", "--cases", "cases"])
        .args(["--base-url", &server.fault_url("mall-state-out-of-range")])
        .args(["--appid", DEMO_APPID, "--merchant-id", MAIN.merchant_id])
        .args(["--merchant-user-id", MAIN.merchant_user_id])
        .args(["--junit", "junit.xml", "--json", "report.json"])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    let xml = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    let all = elements(&xml);
    let (root, totals, _) = &all[0];
    assert_eq!(root, "testsuites");
    // The total time is the run's wall time (the JSON report's), not the sum of the cases'
    // times, which count cases that ran at once several times over.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    let wall = report["summary"]["duration"].as_f64().unwrap();
    assert_eq!(attr(totals, "time"), Some(format!("{wall:.3}").as_str()));
    let count = |kind: &str| all.iter().filter(|(n, _, _)| n == kind).count();
    for (total, kind) in [
        ("tests", "testcase"),
        ("failures", "failure"),
        ("errors", "error"),
    ] {
        assert_eq!(
            attr(totals, total),
            Some(count(kind).to_string().as_str()),
            "<testsuites {total}> in\n{xml}"
        );
    }
    // The strict schemas have no `skipped` on <testsuites>: the suites count them.
    let skipped: usize = all
        .iter()
        .filter(|(n, _, _)| n == "testsuite")
        .map(|(_, a, _)| attr(a, "skipped").unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(skipped, count("skipped"));
    assert!(count("failure") > 0);
    assert!(attr(totals, "time").is_some(), "no total time");
    let mut suite_file = String::new();
    for (name, attrs, body) in &all {
        for meaningless in ["package", "hostname"] {
            assert!(
                attr(attrs, meaningless).is_none(),
                "<{name} {meaningless}> in\n{xml}"
            );
        }
        // The run's own case (the preflight's page broke the contract too) has no file.
        if name == "testsuite" && attr(attrs, "name") == Some("preflight") {
            assert!(attr(attrs, "file").is_none(), "{xml}");
            suite_file = "preflight".to_string();
            continue;
        } else if name == "testsuite" {
            let file = attr(attrs, "file").expect("file attribute");
            assert!(
                file.starts_with("cases/") && file.ends_with(".yaml"),
                "file={file}"
            );
            suite_file = file.to_string();
        }
        if suite_file == "preflight" {
            continue;
        }
        if name == "testcase" {
            let classname = attr(attrs, "classname").expect("classname");
            // Jenkins splits the classname on its last dot: the class must be the case file.
            let expected = suite_file.trim_end_matches(".yaml").replace('/', ".");
            assert_eq!(classname, expected);
        }
        if name == "failure" {
            // The failure text starts at the case file and line.
            assert!(
                body.starts_with(&format!("at {suite_file}:")),
                "no case line in:\n{body}"
            );
            let findings: Vec<&str> = body.lines().filter(|l| l.starts_with('[')).collect();
            let mut distinct = findings.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(
                findings.len(),
                distinct.len(),
                "a finding listed twice:\n{body}"
            );
        }
    }
    // Read back by the reader `merge` uses, through the binary: the merged report keeps the
    // cases and totals.
    let merged = Command::new(bin())
        .current_dir(dir.path())
        .args(["merge", "--junit", "merged.xml", "junit.xml"])
        .status()
        .unwrap();
    assert_eq!(merged.code(), Some(1));
    let again = elements(&std::fs::read_to_string(dir.path().join("merged.xml")).unwrap());
    assert_eq!(attr(&again[0].1, "tests"), attr(totals, "tests"));
    assert_eq!(attr(&again[0].1, "failures"), attr(totals, "failures"));
}

/// The JUnit report of a run stopped by a signal validates too: the cases not run are
/// `<skipped>`, and one `<error>` of type `harness.interrupted` says the run did not complete.
#[test]
fn interrupted_run_junit_validates_against_the_strict_schemas() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let child = run_against(&server.fault_url("slow-first-byte"), dir.path())
        .args(["--timeout", "1", "--jobs", "1", "--quiet", "--no-preflight"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let junit = dir.path().join("junit.xml");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !std::fs::read_to_string(&junit).is_ok_and(|t| t.contains("type=\"transport.timeout\"")) {
        assert!(std::time::Instant::now() < deadline, "no case finished");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(1));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<skipped") && xml.contains("type=\"harness.interrupted\""),
        "{xml}"
    );
    assert_strict(&junit);
}

/// The JUnit of `fuzz`, passing and failing, validates; its testcases are timed with the
/// endpoint's session.
#[test]
fn fuzz_junit_validates_against_the_strict_schemas() {
    let server = Server::start(&[]);
    for (url, code) in [
        (server.base_url.clone(), 0),
        (server.fault_url("fuzz-count-over-80"), 1),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = fuzz_as_main(&url, dir.path(), "3")
            .args(["--cases", "120", "--endpoint", "mall-list"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let junit = dir.path().join("junit.xml");
        if code == 1 {
            let xml = std::fs::read_to_string(&junit).unwrap();
            assert!(xml.contains("<failure"), "{xml}");
        }
        assert_strict(&junit);
    }
}

/// The JUnit of `diff`, with a breaking change, validates: the snapshot compared is in the
/// testcase's output, not in properties the schemas do not allow there.
#[test]
fn diff_junit_validates_against_the_strict_schemas() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let recorded = run_against(&server.base_url, dir.path())
        .args(["--quiet", "--snapshots", "update"])
        .status()
        .unwrap();
    assert_eq!(recorded.code(), Some(0));
    let out = Command::new(bin())
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .args(["diff", "--color", "never", "--cases"])
        .arg(repo().join("cases"))
        .args(["--baseline-target", &server.base_url])
        .args(["--base-url", &server.fault_url("mall-name-missing")])
        .args(["--appid", DEMO_APPID, "--merchant-id", MAIN.merchant_id])
        .args(["--merchant-user-id", MAIN.merchant_user_id])
        .args(["--junit", "diff.xml", "--markdown", "diff.md"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let junit = dir.path().join("diff.xml");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("type=\"release-diff.breaking\"") && xml.contains("snapshot: "),
        "{xml}"
    );
    assert_strict(&junit);
}

/// The JUnit `merge` writes validates, and keeps the target and shard properties.
#[test]
fn merge_junit_validates_against_the_strict_schemas() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for k in 1..=2 {
        let sub = dir.path().join(format!("s{k}"));
        std::fs::create_dir(&sub).unwrap();
        run_against(&server.fault_url("mall-state-out-of-range"), &sub)
            .args(["--quiet", "--shard", &format!("{k}/2")])
            .status()
            .unwrap();
    }
    let out = Command::new(bin())
        .current_dir(dir.path())
        .args([
            "merge",
            "--junit",
            "merged.xml",
            "s1/junit.xml",
            "s2/junit.xml",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = dir.path().join("merged.xml");
    let xml = std::fs::read_to_string(&merged).unwrap();
    assert!(
        xml.contains("<property name=\"shard\" value=\"1/2,2/2\"/>")
            && xml.contains(&format!(
                "<property name=\"target\" value=\"{}\"/>",
                server.fault_url("mall-state-out-of-range")
            )),
        "{xml}"
    );
    assert_strict(&merged);
}

/// A case that passed with warnings is named `[WARN] …` (what every JUnit viewer lists), its
/// warnings are in its output and its suite counts them; the file still validates, and a
/// merge keeps the mark and the case's identity.
#[test]
fn warnings_show_in_the_testcase_name_and_validate() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let status = run_against(&server.fault_url("products-ascending"), dir.path())
        .arg("--quiet")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let junit = dir.path().join("junit.xml");
    let xml = std::fs::read_to_string(&junit).unwrap();
    let all = elements(&xml);
    let warned: Vec<&Element> = all
        .iter()
        .filter(|(n, a, _)| n == "testcase" && attr(a, "name").unwrap().starts_with("[WARN] "))
        .collect();
    assert!(!warned.is_empty(), "{xml}");
    assert!(
        xml.contains("<property name=\"warnings\" value=\"")
            && xml.contains("[observed] products.order"),
        "{xml}"
    );
    assert_strict(&junit);
    let merged = dir.path().join("merged.xml");
    let out = Command::new(bin())
        .current_dir(dir.path())
        .args(["merge", "--junit", "merged.xml", "junit.xml", "junit.xml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let again = std::fs::read_to_string(&merged).unwrap();
    assert_eq!(
        again.matches("<testcase name=\"[WARN] ").count(),
        warned.len(),
        "{again}"
    );
    assert_strict(&merged);
}
