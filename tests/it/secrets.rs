//! No secret leaves the process: with a known signing key, nothing mallcheck writes (stdout,
//! stderr, every report, snapshots, fuzz regressions) holds the key or an Authorization value.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{Server, bin, repo};
use mallcheck::server::data::{DEMO_APPID, MAIN};
use mallcheck::sign::{Signer, SignerKind};

const KEY: &str = "k3y-that-must-never-leak-7f3a9c";

fn files_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Fails when `text` holds the key or an unredacted `Authorization` value.
fn assert_clean(what: &str, text: &str, signatures: &[String]) {
    assert!(!text.contains(KEY), "{what} holds the signing key");
    for sig in signatures {
        assert!(
            !text.contains(sig.as_str()),
            "{what} holds a request signature {sig}"
        );
    }
    let re = regex::Regex::new(&format!(r"{DEMO_APPID} [0-9a-f]{{32}}")).unwrap();
    assert!(
        !re.is_match(text),
        "{what} holds an Authorization value: {:?}",
        re.find(text)
    );
}

fn text_of(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn nothing_mallcheck_writes_holds_the_key_or_a_signature() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    for f in std::fs::read_dir(repo().join("cases")).unwrap().flatten() {
        if f.path().is_file() {
            std::fs::copy(f.path(), cases.join(f.file_name())).unwrap();
        }
    }
    let body = format!(
        r#"{{"appid":"{DEMO_APPID}","filter":{{"seller":{{"merchantId":"{}","merchantUserId":"{}","role":"super_admin"}}}},"sort":{{"sortField":"id","sort":"DESC"}},"cursor":{{"cursorField":"id","endCursor":null,"count":3}}}}"#,
        MAIN.merchant_id, MAIN.merchant_user_id
    );
    std::fs::write(
        cases.join("snap.yaml"),
        format!("cases:\n  - name: snapshot of a page\n    endpoint: mall-list\n    request:\n      raw: '{body}'\n    snapshot: true\n"),
    )
    .unwrap();
    let signer = Signer::new(SignerKind::Md5, KEY.to_string());
    let signing = tokio::runtime::Runtime::new().unwrap();
    let signatures = vec![signing.block_on(signer.sign(body.as_bytes())).unwrap()];

    let mut outputs = Vec::new();
    // The embedded server shares the key: every case passes, verbose prints every exchange.
    outputs.push(
        Command::new(bin())
            .current_dir(dir.path())
            .env("MALLCHECK_SIGN_KEY", KEY)
            .env_remove("MALLCHECK_BASE_URL")
            .args([
                "run",
                "--verbose",
                "--snapshots",
                "update",
                "--color",
                "never",
            ])
            .output()
            .unwrap(),
    );
    // A server with another key refuses everything: failures print requests and responses.
    let server = Server::start(&[]);
    outputs.push(
        Command::new(bin())
            .current_dir(dir.path())
            .env("MALLCHECK_SIGN_KEY", KEY)
            .args([
                "run",
                "--verbose",
                "--color",
                "never",
                "--base-url",
                &server.fault_url("auth-ignored"),
            ])
            .args(["--appid", DEMO_APPID, "--merchant-id", MAIN.merchant_id])
            .args([
                "--merchant-user-id",
                MAIN.merchant_user_id,
                "--json",
                "reports/fault.json",
            ])
            .output()
            .unwrap(),
    );
    outputs.push(
        Command::new(bin())
            .current_dir(dir.path())
            .env("MALLCHECK_SIGN_KEY", KEY)
            .args([
                "fuzz",
                "--cases",
                "40",
                "--seed",
                "7",
                "--color",
                "never",
                "--base-url",
                &server.fault_url("fuzz-empty-role"),
            ])
            .args(["--appid", DEMO_APPID, "--merchant-id", MAIN.merchant_id])
            .args(["--merchant-user-id", MAIN.merchant_user_id])
            .output()
            .unwrap(),
    );
    assert_eq!(
        outputs[0].status.code(),
        Some(0),
        "{}",
        text_of(&outputs[0])
    );
    // The scan is meaningful only if the Authorization header was printed, redacted.
    assert!(text_of(&outputs[0]).contains(&format!("Authorization: {DEMO_APPID} <redacted>")));
    for (i, out) in outputs.iter().enumerate() {
        assert_clean(
            &format!("output of command {i}"),
            &text_of(out),
            &signatures,
        );
    }
    let mut files = Vec::new();
    files_under(dir.path(), &mut files);
    let written: Vec<_> = files
        .iter()
        .filter(|p| !p.starts_with(&cases) || p.ends_with("README.md"))
        .collect();
    assert!(
        written
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "snap")),
        "{written:?}"
    );
    assert!(
        written.iter().any(|p| p.ends_with("junit.xml")),
        "{written:?}"
    );
    for p in files {
        let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
        assert_clean(&p.display().to_string(), &text, &signatures);
    }
}
