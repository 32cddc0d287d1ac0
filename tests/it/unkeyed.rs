//! A signature made without the key (spec §5: the second part of Authorization is the caller's
//! signature): caught against a service that leaves the key out of its check, under both
//! signers whose algorithm mallcheck runs, and skipped with a reason for the others.

use std::process::{Command, Output};

use mallcheck::server::data::{DEMO_APPID, MAIN};
use mallcheck::server::{RunningServer, ServerOptions};
use mallcheck::sign::{Signer, SignerKind};

use crate::common::{bin, finding_ids, repo};

const KEY: &str = "an-unguessable-key";

fn server(runtime: &tokio::runtime::Runtime, kind: SignerKind) -> RunningServer {
    runtime
        .block_on(mallcheck::server::start(ServerOptions {
            signer: Signer::new(kind, KEY.into()),
            ..ServerOptions::default()
        }))
        .unwrap()
}

/// The two keyless cases against `base_url`, signed by `signer`, reports in `dir`.
fn run(base_url: &str, signer: &str, dir: &std::path::Path) -> Output {
    Command::new(bin())
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MALLCHECK_SIGN_KEY", KEY)
        .args(["run", "--base-url", base_url, "--appid", DEMO_APPID])
        .args(["--merchant-id", MAIN.merchant_id])
        .args(["--merchant-user-id", MAIN.merchant_user_id])
        .args(["--signer", signer, "--filter", "signed without the key"])
        .args(["--color", "never", "--json", "report.json", "--cases"])
        .arg(repo().join("cases"))
        .output()
        .unwrap()
}

fn cases(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"]["name"] != "discovery")
        .cloned()
        .collect()
}

#[test]
fn a_check_without_the_key_is_caught_under_md5_and_hmac() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for (kind, flag) in [
        (SignerKind::Md5, "md5"),
        (SignerKind::HmacSha256, "hmac-sha256"),
    ] {
        let server = server(&runtime, kind);
        let base = server.base_url();
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            &format!("{base}/fault/auth-unkeyed-signature"),
            flag,
            dir.path(),
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{flag}: {stdout}");
        let caught = cases(dir.path());
        assert_eq!(caught.len(), 2, "{flag}: {caught:?}");
        assert!(caught.iter().all(|c| c["outcome"] == "fail"), "{caught:?}");
        assert_eq!(
            finding_ids(&dir.path().join("report.json")),
            ["auth.signature"]
        );
        assert!(!stdout.contains(KEY), "{flag}: the key leaked");

        // The same service checking the key refuses both probes.
        let dir = tempfile::tempdir().unwrap();
        let out = run(&base, flag, dir.path());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{flag}: {stdout}");
        assert!(
            cases(dir.path()).iter().all(|c| c["outcome"] == "pass"),
            "{flag}: {stdout}"
        );
    }
}

#[test]
fn keyless_probes_are_skipped_with_a_reason_for_the_static_signer() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = server(&runtime, SignerKind::Static);
    let dir = tempfile::tempdir().unwrap();
    let out = run(&server.base_url(), "static", dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Every selected case skipped: nothing was covered, which is not a pass.
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    let cases = cases(dir.path());
    assert_eq!(cases.len(), 2, "{cases:?}");
    for c in cases {
        assert_eq!(c["outcome"], "skip", "{c}");
        assert!(
            c["skip_reason"]
                .as_str()
                .unwrap_or_default()
                .contains("md5 or hmac-sha256 signer"),
            "{c}"
        );
    }
}
