//! The signature covers the raw bytes (spec §5): `run` sends a correctly signed body in another
//! JSON spelling (whitespace, key order, escaped characters) and expects it served as the
//! compact one is. A service that checks the signature over re-serialized JSON fails it; a
//! correct one passes; the `static` signer, whose signature ignores the body, skips it.

use serde_json::Value;

use crate::common::{Server, assert_exit, finding_ids, output_text, run_against};
use mallcheck::server::faults::Fault;

const PROBES: [&str; 2] = [
    "mall list signed over another spelling of its body is served",
    "products signed over another spelling of their body are served",
];

/// The outcome and skip reason of each probe in a JSON report.
fn probes(report: &std::path::Path) -> Vec<(String, String)> {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    let cases = doc["cases"].as_array().cloned().unwrap_or_default();
    PROBES
        .iter()
        .map(|name| {
            let case = cases
                .iter()
                .find(|c| c["id"]["name"] == *name)
                .unwrap_or_else(|| panic!("no case {name}: {doc}"));
            let reason = case["skip_reason"].as_str().unwrap_or_default().to_string();
            (
                case["outcome"].as_str().unwrap_or_default().to_string(),
                reason,
            )
        })
        .collect()
}

#[test]
fn a_signature_checked_over_reserialized_json_is_caught_and_a_correct_one_passes() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let url = server.fault_url(Fault::AuthSignatureOverReserializedJson.name());
    let out = run_against(&url, dir.path()).output().unwrap();
    assert_exit(&out, 1);
    let report = dir.path().join("report.json");
    assert!(
        finding_ids(&report).contains(&"auth.signature-raw-bytes".to_string()),
        "{}",
        output_text(&out)
    );
    for (outcome, _) in probes(&report) {
        assert_eq!(outcome, "fail", "{}", output_text(&out));
    }

    let out = run_against(&server.base_url, dir.path()).output().unwrap();
    assert_exit(&out, 0);
    for (outcome, _) in probes(&report) {
        assert_eq!(outcome, "pass", "{}", output_text(&out));
    }
}

#[test]
fn the_static_signer_skips_the_spelling_probe_saying_why() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&server.base_url, dir.path())
        .args(["--signer", "static", "--no-preflight"])
        .output()
        .unwrap();
    let report = dir.path().join("report.json");
    for (outcome, reason) in probes(&report) {
        assert_eq!(outcome, "skip", "{}", output_text(&out));
        assert!(
            reason.contains("`static` signer does not sign the body"),
            "{reason}"
        );
    }
}

#[test]
fn a_service_refusing_only_the_other_spelling_fails_the_probe_without_a_preflight() {
    // Refused in its other spelling, the probe sends the same request compact: served, the
    // refusal is the spelling's (a broken contract, exit 1), not the credentials' (exit 3).
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let url = server.fault_url(Fault::AuthSignatureOverReserializedJson.name());
    let out = run_against(&url, dir.path())
        .arg("--no-preflight")
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let report = dir.path().join("report.json");
    for (outcome, _) in probes(&report) {
        assert_eq!(outcome, "fail", "{}", output_text(&out));
    }
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    for name in PROBES {
        let case = doc["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"]["name"] == name)
            .unwrap();
        let ids: Vec<&str> = case["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["check"].as_str())
            .collect();
        assert_eq!(ids, ["auth.signature-raw-bytes"], "{case}");
        // The other spelling, then the compact one it was held against.
        let bodies: Vec<&str> = case["exchanges"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|x| x["request"]["body"].as_str())
            .collect();
        assert_eq!(bodies.len(), 2, "{case}");
        assert_ne!(bodies[0], bodies[1], "{case}");
        assert!(!bodies[1].contains(' '), "compact: {}", bodies[1]);
    }
}

/// A service that answers both spellings alike, broken in another way (every products answer
/// wrapped in an envelope): the spelling probe has nothing to say, and the cases that send the
/// compact spelling report the break.
#[test]
fn a_break_both_spellings_share_is_not_blamed_on_the_signature_bytes() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&server.fault_url("products-enveloped"), dir.path())
        .args(["--snapshots", "off"])
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let ids = finding_ids(&dir.path().join("report.json"));
    assert!(ids.iter().any(|id| id == "products.shape"), "{ids:?}");
    assert!(
        !ids.iter().any(|id| id == "auth.signature-raw-bytes"),
        "{ids:?}\n{}",
        output_text(&out)
    );
}
