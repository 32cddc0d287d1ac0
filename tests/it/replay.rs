//! Signatures bound to the body (spec §5): a valid signature moved from another request is
//! caught against a service that remembers signatures, and skipped with a reason for `static`.

use std::process::Command;

use mallcheck::server::ServerOptions;
use mallcheck::server::data::{DEMO_APPID, MAIN};
use mallcheck::sign::{Signer, SignerKind};

use crate::common::{Server, assert_exit, bin, finding_ids, repo, run_against};

#[test]
fn a_signature_cache_is_caught_by_the_replay_probes() {
    let server = Server::start(&[]);
    for (fault, caught, passed) in [
        (
            "auth-signature-cache",
            vec!["auth.signature-other-operation", "auth.signature-replay"],
            vec![],
        ),
        (
            "auth-signature-cache-per-operation",
            vec!["auth.signature-replay"],
            vec!["auth.signature-other-operation"],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = run_against(&server.fault_url(fault), dir.path())
            .args(["--filter", "tag:replay"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{fault}: {stdout}");
        let ids = finding_ids(&dir.path().join("report.json"));
        for id in caught {
            assert!(
                ids.contains(&id.to_string()),
                "{fault}: {id} not in {ids:?}"
            );
        }
        for id in passed {
            assert!(!ids.contains(&id.to_string()), "{fault}: {id} in {ids:?}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&server.base_url, dir.path())
        .args(["--filter", "tag:replay"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
}

#[test]
fn replay_probes_are_skipped_with_a_reason_for_the_static_signer() {
    // A service signing with a fixed signature (a key is a remote target's setting, so the
    // reference server runs here, not as the embedded target).
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(mallcheck::server::start(ServerOptions {
            signer: Signer::new(SignerKind::Static, "a-fixed-signature".into()),
            ..ServerOptions::default()
        }))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MALLCHECK_SIGN_KEY", "a-fixed-signature")
        .args([
            "run",
            "--base-url",
            &server.base_url(),
            "--appid",
            DEMO_APPID,
        ])
        .args(["--merchant-id", MAIN.merchant_id])
        .args(["--merchant-user-id", MAIN.merchant_user_id])
        .args(["--signer", "static", "--filter", "tag:replay"])
        .args(["--color", "never", "--json", "report.json", "--cases"])
        .arg(repo().join("cases"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Every selected case skipped: nothing was covered, which is not a pass (issue 21).
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    let cases: Vec<&serde_json::Value> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"]["name"] != "discovery")
        .collect();
    assert_eq!(cases.len(), 4, "{report}");
    for c in cases {
        assert_eq!(c["outcome"], "skip", "{c}");
        assert!(
            c["skip_reason"]
                .as_str()
                .unwrap_or_default()
                .contains("`static` signer"),
            "{c}"
        );
    }
    assert!(
        !stdout.contains("a-fixed-signature"),
        "the signature leaked"
    );
    runtime.block_on(server.shutdown());
}
