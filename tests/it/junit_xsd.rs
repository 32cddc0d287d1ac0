//! The JUnit report validates against the schema Jenkins' xunit plugin uses (junit-10.xsd), for
//! a passing run, a run with failures, and a run with transport errors.
//!
//! `.ci/install-junit-xsd.sh` fetches the XSD and xmllint. Locally, a missing tool skips the
//! test with a note; with `MALLCHECK_REQUIRE_TOOLS=1` (CI) it fails instead.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Server, bin, repo, run_against};

fn xsd() -> Option<PathBuf> {
    let path = std::env::var_os("MALLCHECK_JUNIT_XSD")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/junit-xsd/junit-10.xsd"));
    let xmllint = Command::new("xmllint").arg("--version").output().is_ok();
    if path.exists() && xmllint {
        return Some(path);
    }
    assert!(
        std::env::var_os("MALLCHECK_REQUIRE_TOOLS").is_none(),
        "junit-10.xsd or xmllint missing: run .ci/install-junit-xsd.sh"
    );
    eprintln!("note: junit-10.xsd or xmllint missing; run .ci/install-junit-xsd.sh");
    None
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
