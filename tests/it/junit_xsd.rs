//! The JUnit report validates against the schema Jenkins' xunit plugin uses (junit-10.xsd), for
//! a passing run, a run with failures, and a run with transport errors, and follows what
//! Jenkins, GitLab and the GitHub test reporters read (read back with an independent parser).
//!
//! junit-10.xsd knows neither the `file` attribute on `<testcase>` (GitLab and the GitHub
//! reporters read it for annotations) nor `skipped` on `<testsuites>` (the totals the issue asks
//! for; quick-junit always writes it). The schema used here is junit-10.xsd with exactly these
//! two optional attributes added; everything else is validated as Jenkins' schema says.
//!
//! `.ci/install-junit-xsd.sh` fetches the XSD and xmllint. Locally, a missing tool skips the
//! test with a note; with `MALLCHECK_REQUIRE_TOOLS=1` (CI) it fails instead.

use std::path::{Path, PathBuf};
use std::process::Command;

use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, MAIN};

use crate::common::{Server, bin, repo, run_against};

fn xsd() -> Option<PathBuf> {
    let path = std::env::var_os("MALLCHECK_JUNIT_XSD")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/junit-xsd/junit-10.xsd"));
    let xmllint = Command::new("xmllint").arg("--version").output().is_ok();
    if path.exists() && xmllint {
        return Some(extended(&path));
    }
    assert!(
        std::env::var_os("MALLCHECK_REQUIRE_TOOLS").is_none(),
        "junit-10.xsd or xmllint missing: run .ci/install-junit-xsd.sh"
    );
    eprintln!("note: junit-10.xsd or xmllint missing; run .ci/install-junit-xsd.sh");
    None
}

/// junit-10.xsd with `file` allowed on `<testcase>` and `skipped` on `<testsuites>`.
fn extended(xsd: &Path) -> PathBuf {
    let text = std::fs::read_to_string(xsd).unwrap();
    let case = r#"<xs:attribute name="group" type="xs:string"/>
        </xs:complexType>
    </xs:element>

    <xs:element name="testsuite">"#;
    let suites = r#"<xs:attribute name="errors" type="xs:string" />
        </xs:complexType>
    </xs:element>

</xs:schema>"#;
    assert!(
        text.contains(case) && text.contains(suites),
        "unexpected junit-10.xsd"
    );
    let text = text
        .replace(
            case,
            &case.replace(
                "/>\n",
                "/>\n            <xs:attribute name=\"file\" type=\"xs:string\"/>\n",
            ),
        )
        .replace(
            suites,
            &suites.replace(
                "/>\n",
                "/>\n            <xs:attribute name=\"skipped\" type=\"xs:string\"/>\n",
            ),
        );
    let out = std::env::temp_dir().join(format!("mallcheck-junit-{}.xsd", std::process::id()));
    std::fs::write(&out, text).unwrap();
    out
}

fn assert_valid(xsd: &Path, junit: &Path) {
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(xsd)
        .arg(junit)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} does not validate:\n{}",
        junit.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn junit_reports_validate_against_the_jenkins_schema() {
    let Some(xsd) = xsd() else { return };
    let dir = tempfile::tempdir().unwrap();
    let passing = Command::new(bin())
        .current_dir(dir.path())
        .env_remove("MALLCHECK_BASE_URL")
        .args(["run", "--quiet", "--junit", "pass.xml", "--cases"])
        .arg(repo().join("cases"))
        .status()
        .unwrap();
    assert_eq!(passing.code(), Some(0));
    assert_valid(&xsd, &dir.path().join("pass.xml"));
    let server = Server::start(&[]);
    for (fault, file, element) in [
        ("mall-state-out-of-range", "fail.xml", "<failure"),
        ("html-200", "error.xml", "<error"),
        ("no-malls", "skip.xml", "<skipped"),
    ] {
        let sub = dir.path().join(fault);
        std::fs::create_dir(&sub).unwrap();
        run_against(&server.fault_url(fault), &sub)
            .arg("--quiet")
            .status()
            .unwrap();
        let junit = sub.join("junit.xml");
        let text = std::fs::read_to_string(&junit).unwrap();
        assert!(text.contains(element), "{fault}: no {element} in\n{text}");
        std::fs::copy(&junit, dir.path().join(file)).unwrap();
        assert_valid(&xsd, &junit);
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
        ("skipped", "skipped"),
    ] {
        assert_eq!(
            attr(totals, total),
            Some(count(kind).to_string().as_str()),
            "<testsuites {total}> in\n{xml}"
        );
    }
    assert!(count("failure") > 0);
    assert!(attr(totals, "time").is_some(), "no total time");
    for (name, attrs, body) in &all {
        for meaningless in ["package", "hostname"] {
            assert!(
                attr(attrs, meaningless).is_none(),
                "<{name} {meaningless}> in\n{xml}"
            );
        }
        if name == "testcase" {
            let classname = attr(attrs, "classname").expect("classname");
            let file = attr(attrs, "file").expect("file attribute");
            assert!(
                file.starts_with("cases/") && file.ends_with(".yaml"),
                "file={file}"
            );
            // Jenkins splits the classname on its last dot: the class must be the case file.
            let expected = file.trim_end_matches(".yaml").replace('/', ".");
            assert_eq!(classname, expected);
        }
        if name == "failure" {
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
fn interrupted_run_junit_validates_against_the_jenkins_schema() {
    let Some(xsd) = xsd() else { return };
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
    assert_valid(&xsd, &junit);
}
