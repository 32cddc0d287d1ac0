//! Parsing that cannot be fooled (issue 20, item 6; issue 22, item 6): a key given twice in a
//! response object is a contract finding (last-wins hid a foreign merchantId, and an empty
//! data list before the real one), and a number beyond a double (`1e999`, ten thousand
//! digits) is a finding of the contract, not a "not JSON" transport error; what is not JSON
//! (`NaN`, comments) still is one.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{Server, bin, run_against};

/// The findings of a JSON report, each as (check, pointer, actual).
fn findings(report: &Path) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(report).unwrap_or_default();
    let v: Value = serde_json::from_str(&text).unwrap_or_default();
    let field = |f: &Value, k: &str| f[k].as_str().unwrap_or_default().to_string();
    v["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["findings"].as_array().cloned().unwrap_or_default())
        .map(|f| {
            (
                field(&f, "check"),
                field(&f, "pointer"),
                field(&f, "actual"),
            )
        })
        .collect()
}

#[test]
fn run_reports_duplicate_keys_and_huge_numbers_as_contract_findings() {
    let server = Server::start(&[]);
    for (fault, check, pointer, actual) in [
        (
            "duplicate-merchant-id",
            "response.duplicate-key",
            "/data/0/seller/merchantId",
            "`merchantId`",
        ),
        (
            "duplicate-data",
            "response.duplicate-key",
            "/data",
            "`data`",
        ),
        (
            "order-total-num-huge",
            "response.number-range",
            "/data/0/orderStatistics/totalNum",
            "1e999",
        ),
        (
            "order-total-amount-digits",
            "response.number-range",
            "/data/0/orderStatistics/totalAmount",
            "(10000 characters)",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = run_against(&server.fault_url(fault), dir.path())
            .args(["--filter", "cases/mall-list.yaml", "--quiet"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{fault}");
        let found = findings(&dir.path().join("report.json"));
        assert!(
            found
                .iter()
                .any(|(c, p, a)| c == check && p == pointer && a.contains(actual)),
            "{fault}: {found:#?}"
        );
        // The body was read: no transport error, and the rest of it was checked.
        assert!(
            !found
                .iter()
                .any(|(c, _, _)| c == "response.json" || c.starts_with("transport.")),
            "{fault}: {found:#?}"
        );
    }
}

fn validate(body: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("captured.json");
    std::fs::write(&file, body).unwrap();
    let out = Command::new(bin())
        .args([
            "validate",
            "--schema",
            "mall-list-response",
            "--color",
            "never",
        ])
        .arg(&file)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn validate_tells_numbers_out_of_range_from_what_is_not_json() {
    let envelope =
        |data: &str| format!(r#"{{"success":true,"code":"0000","msg":"ok","data":{data}}}"#);
    let digits = format!("[{}]", "7".repeat(10_000));
    for (data, check, not) in [
        ("[1e999]", "response.number-range", "response.json"),
        (digits.as_str(), "response.number-range", "response.json"),
        ("[NaN]", "response.json", "response.number-range"),
        ("[Infinity]", "response.json", "response.number-range"),
        ("[] /* note */", "response.json", "response.number-range"),
    ] {
        let (code, stdout) = validate(&envelope(data));
        assert_eq!(code, Some(1), "{data}: {stdout}");
        assert!(stdout.contains(check), "{data}: {stdout}");
        assert!(!stdout.contains(not), "{data}: {stdout}");
    }
    let (code, stdout) =
        validate(r#"{"success":true,"code":"0000","msg":"ok","data":[],"data":[]}"#);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("response.duplicate-key"), "{stdout}");
}
