//! Case assertions (`expect.assert`) are evaluated on a tree of only what their paths reach
//! when the answer conforms; one that fails there is evaluated again on the whole answer, so
//! its finding shows what the whole answer holds.

use serde_json::Value;

use crate::common::{Server, output_text, run_as_main};

const CASE: &str = r#"cases:
  - name: assertions on a page
    endpoint: mall-list
    request:
      body:
        appid: "${MALLCHECK_APPID}"
        filter:
          seller:
            merchantId: "${MALLCHECK_MERCHANT_ID}"
            merchantUserId: "${MALLCHECK_MERCHANT_USER_ID}"
            role: "${MALLCHECK_ROLE}"
        sort: { sortField: id, sort: DESC }
        cursor: { cursorField: id, endCursor: null, count: 3 }
    expect:
      status: 200
      assert:
        - { path: "$.data[*].mallSn", matches: "^[0-9]+$" }
        - { path: "$.data[?!@.mallSn]", exists: false }
        - { path: "$.data[*]", count: 3 }
        - { path: "$.data[?@.mallSn]", exists: false }
"#;

#[test]
fn a_failing_assertion_is_told_from_the_whole_answer_and_the_passing_ones_pass() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), CASE).unwrap();
    let out = run_as_main(&server.base_url, dir.path())
        .args([
            "--cases",
            "a.yaml",
            "--json",
            "report.json",
            "--junit",
            "junit.xml",
        ])
        .args(["--color", "never", "--no-preflight"])
        .output()
        .unwrap();
    let shown = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    let findings: Vec<&Value> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["findings"].as_array().unwrap())
        .filter(|f| f["check"] == "case.assert")
        .collect();
    // Only the last assertion fails: every mall has a mall number, and the page has three.
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = findings[0];
    assert!(
        f["detail"].as_str().unwrap().contains("$.data[?@.mallSn]"),
        "{f:#}"
    );
    // The first node is shown whole: members the path never named are in it.
    let actual = f["actual"].as_str().unwrap();
    assert!(actual.starts_with("3 node(s), first {"), "{actual}");
    for member in ["\"mallName\"", "\"signature\"", "\"stateDesc\""] {
        assert!(actual.contains(member), "{member} missing: {actual}");
    }
}
