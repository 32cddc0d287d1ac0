//! The cross-merchant cursor probe (issue 22 item 7, spec §1, §4.1): a cursor taken from one
//! merchant's list, sent with another merchant's seller, lists none of the first merchant's
//! malls, both ways. Without a second merchant configured it is skipped, saying so, and makes
//! a run neither green nor red by itself.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{Server, assert_exit, finding_ids, output_text, run_against};
use mallcheck::server::data::{MAIN, OTHER};
use mallcheck::server::faults::Fault;

const PROBE: &str = "a cursor of another merchant lists none of its malls";

/// `run_against` with the reference server's second merchant configured.
fn with_other(url: &str, dir: &Path) -> Command {
    let mut run = run_against(url, dir);
    run.env("MALLCHECK_OTHER_MERCHANT_ID", OTHER.merchant_id)
        .env("MALLCHECK_OTHER_MERCHANT_USER_ID", OTHER.merchant_user_id);
    run
}

/// The probe's case of a JSON report.
fn probe(report: &Path) -> Value {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"]["name"] == PROBE)
        .cloned()
        .unwrap_or_else(|| panic!("no probe: {doc}"))
}

#[test]
fn a_cursor_that_continues_another_merchants_list_is_caught_both_ways() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let url = server.fault_url(Fault::PagingCursorAnyMerchant.name());
    let out = with_other(&url, dir.path())
        .args(["--filter", "tag:cross-merchant"])
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let report = dir.path().join("report.json");
    assert_eq!(finding_ids(&report), ["ownership.cursor-merchant"]);
    let case = probe(&report);
    assert_eq!(case["outcome"], "fail", "{case}");
    // One finding per direction: MAIN's malls served to OTHER, and OTHER's to MAIN.
    let actual: Vec<&str> = case["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["actual"].as_str())
        .collect();
    assert_eq!(actual.len(), 2, "{case}");
    assert!(actual[0].contains(MAIN.merchant_id), "{}", actual[0]);
    assert!(actual[1].contains(OTHER.merchant_id), "{}", actual[1]);
}

#[test]
fn a_correct_service_passes_the_probe_in_both_directions() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = with_other(&server.base_url, dir.path())
        .args(["--filter", "tag:cross-merchant"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let case = probe(&dir.path().join("report.json"));
    assert_eq!(case["outcome"], "pass", "{case}");
    let scope = case["coverage"][0]["scope"].as_str().unwrap_or_default();
    assert!(
        scope.contains(
            "the configured merchant's cursor in a request of the other merchant: HTTP 404"
        ) && scope.contains(
            "the other merchant's cursor in a request of the configured merchant: HTTP 404"
        ),
        "{case}"
    );
    // Two first pages and two probes.
    assert_eq!(case["exchanges"].as_array().unwrap().len(), 4, "{case}");
}

#[test]
fn without_a_second_merchant_the_probe_is_skipped_and_decides_nothing() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let url = server.fault_url(Fault::PagingCursorAnyMerchant.name());
    // Alone, a skipped probe is no green run (every selected case skipped: could not test)...
    let out = run_against(&url, dir.path())
        .args(["--filter", "tag:cross-merchant"])
        .output()
        .unwrap();
    assert_exit(&out, 3);
    let case = probe(&dir.path().join("report.json"));
    assert_eq!(case["outcome"], "skip", "{case}");
    let reason = case["skip_reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("no second merchant is configured")
            && reason.contains("MALLCHECK_OTHER_MERCHANT_ID"),
        "{reason}"
    );
    assert!(case["exchanges"].as_array().unwrap().is_empty(), "{case}");
    // ...and with the ownership cases of a correct service, no red one.
    let out = run_against(&server.base_url, dir.path())
        .args(["--filter", "tag:ownership"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(probe(&dir.path().join("report.json"))["outcome"], "skip");
    assert!(output_text(&out).contains(PROBE), "{}", output_text(&out));
}

#[test]
fn a_merchant_without_malls_is_probed_in_the_one_direction_the_data_allows() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let url = server.fault_url(Fault::NoMalls.name());
    let out = with_other(&url, dir.path())
        .args(["--filter", "tag:cross-merchant", "--allow-empty-merchant"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let case = probe(&dir.path().join("report.json"));
    assert_eq!(case["outcome"], "pass", "{case}");
    let scope = case["coverage"][0]["scope"].as_str().unwrap_or_default();
    assert!(
        scope.contains("the configured merchant lists no mall to take a cursor from")
            && scope.contains(
                "the other merchant's cursor in a request of the configured merchant: HTTP 404"
            ),
        "{case}"
    );
}
