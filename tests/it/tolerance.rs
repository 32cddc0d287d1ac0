//! What the spec leaves open is tolerated end to end: a correct service that refuses in plain
//! text (§7.2-§7.4 show no error shape and no status) passes `run` and `fuzz`, still has its
//! wrong key caught by the preflight, and a failing sign command stops the run at once.

use std::process::Output;

use crate::common::{Server, fuzz_as_main, output_text, run_against};

fn report(dir: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json");
    serde_json::from_str(&text).expect("JSON report")
}

fn fuzz_at(dir: &std::path::Path, base_url: &str, seed: &str) -> Output {
    fuzz_as_main(base_url, dir, seed)
        .args(["--cases", "300"])
        .output()
        .expect("run mallcheck fuzz")
}

#[test]
fn a_service_refusing_in_plain_text_passes_run() {
    let server = Server::start(&["--plain-errors"]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&server.base_url, dir.path())
        .args(["--snapshots", "off"])
        .output()
        .unwrap();
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let report = report(dir.path());
    let auth: Vec<_> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["id"]["file"]
                .as_str()
                .unwrap_or("")
                .ends_with("auth.yaml")
        })
        .collect();
    assert!(auth.len() >= 6, "the auth probes ran: {report}");
    assert!(auth.iter().all(|c| c["outcome"] == "pass"), "{report}");
    // The refusals really were plain text: their exchanges say so.
    let exchanges = report.to_string();
    assert!(exchanges.contains("text/plain"), "{exchanges}");
}

#[test]
fn a_service_refusing_in_plain_text_passes_fuzz_for_every_seed() {
    let server = Server::start(&["--plain-errors"]);
    for seed in ["1", "2", "3"] {
        let dir = tempfile::tempdir().unwrap();
        let out = fuzz_at(dir.path(), &server.base_url, seed);
        let text = output_text(&out);
        assert_eq!(out.status.code(), Some(0), "seed {seed}: {text}");
        assert!(
            text.contains("0 of 12 properties failed"),
            "seed {seed}: {text}"
        );
        assert!(
            !dir.path().join("regs").exists(),
            "seed {seed}: nothing to save"
        );
    }
}

#[test]
fn page_sizes_turned_away_in_plain_text_are_found_by_bisection() {
    let server = Server::start(&["--plain-errors", "--max-page-size", "40"]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&server.base_url, dir.path())
        .args(["--snapshots", "off"])
        .output()
        .unwrap();
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("turns away pages of more than 40 records"),
        "{text}"
    );
}

#[test]
fn a_wrong_key_is_caught_by_the_preflight_when_refusals_are_plain_text() {
    let server = Server::start(&["--plain-errors"]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&server.base_url, dir.path())
        .env("MALLCHECK_SIGN_KEY", "not-the-key-at-all")
        .output()
        .unwrap();
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert_eq!(text.matches("preflight failed").count(), 1, "{text}");
    assert!(
        text.contains("HTTP 401") && text.contains("signing key"),
        "{text}"
    );
    assert_eq!(report(dir.path())["cases"].as_array().unwrap().len(), 1);
}

#[test]
fn a_failing_sign_command_stops_the_run_at_the_preflight() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&server.base_url, dir.path())
        .env("MALLCHECK_SIGNER", "command")
        .env(
            "MALLCHECK_SIGN_COMMAND",
            "echo broken-tool-output >&2; exit 3",
        )
        .output()
        .unwrap();
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert_eq!(text.matches("preflight failed").count(), 1, "{text}");
    assert!(text.contains("the signer gave no signature"), "{text}");
    assert!(text.contains("run it by hand"), "{text}");
    assert!(
        !text.contains("exit 3"),
        "the command itself is never shown: {text}"
    );
    let cases = report(dir.path())["cases"].as_array().unwrap().clone();
    assert_eq!(cases.len(), 1, "only the preflight case: {cases:?}");
    assert_eq!(cases[0]["findings"][0]["check"], "harness.signer");
}

#[test]
fn fuzz_discovers_its_malls_when_the_service_turns_page_size_50_away() {
    let server = Server::start(&["--plain-errors", "--max-page-size", "40"]);
    let dir = tempfile::tempdir().unwrap();
    let out = fuzz_at(dir.path(), &server.base_url, "1");
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains("has no data array"), "{text}");
    assert!(!text.contains("failed:"), "{text}");
}

/// A refused products call answered 200 with no body (§7.4 shows no products error shape)
/// passes a user's case that asks for no data whether or not it turns the default schema off;
/// the same case against a service refusing with 401 passes too.
#[test]
fn an_empty_200_refusal_passes_a_no_data_case_that_keeps_the_default_schema() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    std::fs::write(
        cases.join("refused.yaml"),
        r#"cases:
  - name: products without Authorization, default schema kept
    endpoint: mall-products
    request:
      auth: missing
      body:
        appid: "${MALLCHECK_APPID}"
        seller:
          merchantId: "${MALLCHECK_MERCHANT_ID}"
          merchantUserId: "${MALLCHECK_MERCHANT_USER_ID}"
          role: "${MALLCHECK_ROLE}"
        mallID: { mallSn: "${MALLCHECK_MALL_SN}", signature: "${MALLCHECK_MALL_SIGNATURE}" }
    expect:
      no-data: auth.required
"#,
    )
    .unwrap();
    for url in [
        server.base_url.clone(),
        server.fault_url("products-refused-empty-200"),
    ] {
        let out = crate::common::run_as_main(&url, dir.path())
            .arg("--cases")
            .arg(&cases)
            .args(["--json", "report.json", "--color", "never"])
            .output()
            .unwrap();
        let text = output_text(&out);
        assert_eq!(out.status.code(), Some(0), "{url}: {text}");
        assert_eq!(report(dir.path())["summary"]["passed"], 1, "{url}: {text}");
    }
}
