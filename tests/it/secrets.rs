//! No secret leaves the process. Against services that echo the request back (headers and body,
//! in response headers, in the JSON and in an HTML error page), with the md5, static and command
//! signers, custom credential headers and base URLs with userinfo, every byte mallcheck writes
//! (stdout, stderr, every report, snapshots, fuzz regressions) is scanned for the key, every
//! signature sent, the URL password and the sign command, in every form an echo can take.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use md5::{Digest, Md5};
use percent_encoding::percent_decode_str;
use regex::Regex;

use crate::common::{assert_exit, bin, output_text, repo};
use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, MAIN};
use mallcheck::server::faults::Fault;
use mallcheck::server::{RunningServer, ServerOptions};
use mallcheck::sign::{Signer, SignerKind};

/// An md5 key with characters that JSON, percent-encoding and HTML all rewrite.
const MD5_KEY: &str = "md5-k3y/\"never+leak me\\&<é>-7f3a9c";
/// A static signature (the key itself on the wire): visible ASCII, as a header value must be.
const STATIC_KEY: &str = "St4tic/\"key+with spaces\\and=marks'<&>";
/// The key inside the sign command.
const COMMAND_KEY: &str = "cmd-k3y-9f8e7d6c5b4a";
/// The password of a base URL.
const URL_PASSWORD: &str = "Pa55-w0rd-in-url";
/// Credential header values of a case file.
const API_KEY: &str = "api-key-value-1234abcd";
const AUTH_TOKEN: &str = "auth-token-value-5678efgh";
const TENANT: &str = "tenant-credential-90ab";

/// Every file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                pending.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The reference server in this process with a given signer (the binary's `serve` knows only
/// the demo key); every fault is under `/fault/NAME`.
struct InProcess {
    runtime: tokio::runtime::Runtime,
    server: Option<RunningServer>,
}

impl InProcess {
    fn start(signer: Signer) -> InProcess {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let options = ServerOptions {
            signer,
            ..ServerOptions::default()
        };
        let server = runtime.block_on(mallcheck::server::start(options)).unwrap();
        InProcess {
            runtime,
            server: Some(server),
        }
    }

    fn fault_url(&self, fault: Fault) -> String {
        let base = self.server.as_ref().map(RunningServer::base_url);
        format!("{}/fault/{}", base.unwrap_or_default(), fault.name())
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            self.runtime.block_on(server.shutdown());
        }
    }
}

/// `mallcheck` in `dir` with a clean environment.
fn mallcheck(dir: &Path) -> Command {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    cmd
}

/// `mallcheck run` against `url` as the main merchant, every report written under `reports/`.
fn run(dir: &Path, url: &str, extra: &[&str]) -> Command {
    let mut cmd = mallcheck(dir);
    cmd.args(["run", "--color", "never", "--base-url", url])
        .args(["--appid", DEMO_APPID, "--merchant-id", MAIN.merchant_id])
        .args(["--merchant-user-id", MAIN.merchant_user_id])
        .args(extra);
    cmd
}

/// A workspace: the shipped cases, a snapshot case and a case with credential headers.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    for f in std::fs::read_dir(repo().join("cases")).unwrap().flatten() {
        if f.path().is_file() {
            std::fs::copy(f.path(), cases.join(f.file_name())).unwrap();
        }
    }
    let body = format!(
        r#"{{ appid: "{DEMO_APPID}", filter: {{ seller: {{ merchantId: "{}", merchantUserId: "{}", role: super_admin }} }}, sort: {{ sortField: id, sort: DESC }}, cursor: {{ cursorField: id, endCursor: null, count: 3 }} }}"#,
        MAIN.merchant_id, MAIN.merchant_user_id
    );
    std::fs::write(
        cases.join("secrets.yaml"),
        format!(
            "cases:\n  - name: snapshot of a page\n    endpoint: mall-list\n    request:\n      body: {body}\n    snapshot: true\n\
             \n  - name: credential headers\n    endpoint: mall-list\n    request:\n      body: {body}\n      headers: {{ X-Api-Key: \"{API_KEY}\", X-Auth-Token: \"{AUTH_TOKEN}\", X-Tenant: \"{TENANT}\", X-env-flag: \"1\" }}\n      secret-headers: [X-Tenant]\n"
        ),
    )
    .unwrap();
    dir
}

/// Input files of a workspace, which hold secrets on purpose.
fn is_input(dir: &Path, p: &Path) -> bool {
    let cases = dir.join("cases");
    (p.starts_with(&cases) && !p.starts_with(cases.join("fuzz-regressions")))
        || p.ends_with("mallcheck.toml")
}

fn html_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

fn json_unescape(s: &str) -> String {
    let re = Regex::new(r#"\\(u[0-9a-fA-F]{4}|["\\/nrt])"#).unwrap();
    re.replace_all(s, |c: &regex::Captures<'_>| {
        let e = &c[1];
        match e {
            "n" => "\n".to_string(),
            "r" => "\r".to_string(),
            "t" => "\t".to_string(),
            _ if e.starts_with('u') => u32::from_str_radix(&e[1..], 16)
                .ok()
                .and_then(char::from_u32)
                .map_or_else(|| c[0].to_string(), String::from),
            _ => e.to_string(),
        }
    })
    .into_owned()
}

fn shell_unquote(s: &str) -> String {
    s.replace(r"'\''", "'")
}

/// What a reader can recover from `text`: the text itself, and the text with HTML, JSON,
/// percent and shell escapes undone (nested up to three deep), plus every base64 run decoded
/// at each alignment.
fn views(text: &str) -> Vec<String> {
    let undo: [fn(&str) -> String; 5] = [
        html_unescape,
        json_unescape,
        |s| percent_decode_str(s).decode_utf8_lossy().into_owned(),
        shell_unquote,
        // UTF-16 read as bytes: a NUL (or its escape, as reports show it) after every letter.
        |s| s.replace("\\u{0}", "").replace('\0', ""),
    ];
    let mut all = vec![text.to_string()];
    let mut frontier = vec![text.to_string()];
    for _ in 0..3 {
        let mut next = Vec::new();
        for v in &frontier {
            for f in undo {
                let w = f(v);
                if !all.contains(&w) {
                    all.push(w.clone());
                    next.push(w);
                }
            }
        }
        frontier = next;
    }
    let token = Regex::new(r"[A-Za-z0-9+/_-]{12,}").unwrap();
    let mut decoded = String::new();
    for v in &all {
        for m in token.find_iter(v) {
            for skip in 0..4 {
                let t = &m.as_str()[skip.min(m.len())..];
                let t = &t[..t.len() - t.len() % 4];
                for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
                    if let Ok(bytes) = engine.decode(t) {
                        decoded.push_str(&String::from_utf8_lossy(&bytes));
                        decoded.push('\n');
                    }
                }
            }
        }
    }
    // Runs of hex digits, decoded at both alignments (a byte dump of the key).
    let hex_run = Regex::new(r"[0-9A-Fa-f]{16,}").unwrap();
    for v in &all {
        for m in hex_run.find_iter(v) {
            for skip in 0..2 {
                let t = &m.as_str()[skip..];
                if let Ok(bytes) = hex::decode(&t[..t.len() - t.len() % 2]) {
                    decoded.push_str(&String::from_utf8_lossy(&bytes));
                    decoded.push('\n');
                }
            }
        }
    }
    all.push(decoded);
    all
}

/// Characters at the start of a secret that are a leak on their own: what a cut (of an excerpt,
/// of a line) may leave of a secret.
const PARTIAL_CHARS: usize = 12;

/// Secrets a run must not write, by name.
#[derive(Default)]
struct Secrets(Vec<(String, String)>);

impl Secrets {
    fn add(&mut self, what: &str, value: &str) {
        assert!(
            value.chars().count() >= 8,
            "{what} is too short to scan for"
        );
        if !self.0.iter().any(|(_, v)| v == value) {
            self.0.push((what.to_string(), value.to_string()));
        }
    }

    /// The secrets found in `text`, in any of its views, whole or their first
    /// [`PARTIAL_CHARS`] characters (what a cut leaves); also any `<appid> <8 or more hex>`
    /// value.
    fn found_in(&self, text: &str) -> Vec<String> {
        let authorization = Regex::new(&format!(r"{DEMO_APPID}(-other)? [0-9a-f]{{8,}}")).unwrap();
        // Pattern 2i is secret i whole, 2i+1 its first PARTIAL_CHARS characters: one pass of
        // an automaton per view (hundreds of signatures against megabytes of reports).
        let patterns: Vec<String> = self
            .0
            .iter()
            .flat_map(|(_, value)| [value.clone(), value.chars().take(PARTIAL_CHARS).collect()])
            .collect();
        let automaton = aho_corasick::AhoCorasick::new(&patterns).unwrap();
        let mut found = Vec::new();
        for view in views(text) {
            let mut whole = vec![false; self.0.len()];
            let mut start = vec![false; self.0.len()];
            for m in automaton.find_overlapping_iter(&view) {
                let i = m.pattern().as_usize();
                if i % 2 == 0 {
                    whole[i / 2] = true;
                } else {
                    start[i / 2] = true;
                }
            }
            for (i, (what, _)) in self.0.iter().enumerate() {
                if whole[i] && !found.contains(what) {
                    found.push(what.clone());
                } else if start[i] {
                    let leak = format!("the first {PARTIAL_CHARS} characters of {what}");
                    if !found.contains(&leak) {
                        found.push(leak);
                    }
                }
            }
            if let Some(m) = authorization.find(&view) {
                let leak = format!("an Authorization value {}", m.as_str());
                if !found.contains(&leak) {
                    found.push(leak);
                }
            }
        }
        found
    }

    /// Fails on any secret in the outputs or in a file under `dir` (inputs aside).
    fn assert_none_written(&self, dir: &Path, outputs: &[(&str, &Output)]) {
        let mut leaks = Vec::new();
        for (what, out) in outputs {
            for s in self.found_in(&output_text(out)) {
                leaks.push(format!("output of {what}: {s}"));
            }
        }
        let files: Vec<PathBuf> = files_under(dir)
            .into_iter()
            .filter(|p| !is_input(dir, p))
            .collect();
        assert!(!files.is_empty(), "nothing written under {}", dir.display());
        for p in files {
            let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
            for s in self.found_in(&text) {
                leaks.push(format!("{}: {s}", p.display()));
            }
        }
        assert!(leaks.is_empty(), "secrets written:\n{}", leaks.join("\n"));
    }
}

/// The md5 signatures of every request body the JSON report records.
fn md5_signatures(report: &Path, key: &str) -> Vec<String> {
    let text = std::fs::read_to_string(report).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    for case in v["cases"].as_array().unwrap() {
        for x in case["exchanges"].as_array().unwrap() {
            let body = x["request"]["body"].as_str().unwrap_or_default();
            let mut h = Md5::new();
            h.update(body.as_bytes());
            h.update(key.as_bytes());
            out.push(hex::encode(h.finalize()));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Proof that the service echoed, so that the scan means something: the recorded responses
/// carry the echoed Authorization header, in a header and in the body.
fn assert_echoed(report: &Path) {
    let text = std::fs::read_to_string(report).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let responses: Vec<&serde_json::Value> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["exchanges"].as_array().unwrap())
        .filter_map(|x| x.get("response").filter(|r| !r.is_null()))
        .collect();
    assert!(
        responses.iter().any(|r| r["headers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h[0] == "x-echo-authorization")),
        "no echoed Authorization header"
    );
    assert!(
        responses.iter().any(|r| r["body_excerpt"]
            .as_str()
            .unwrap_or_default()
            .contains("\"authorization\":\"mallcheck-demo-app ")),
        "no echoed Authorization in a body"
    );
}

#[test]
fn md5_signer_echoing_service_error_page_snapshots_and_fuzz_leak_nothing() {
    let dir = workspace();
    let server = InProcess::start(Signer::new(SignerKind::Md5, MD5_KEY.to_string()));
    let echo = server.fault_url(Fault::EchoRequest);
    let page = server.fault_url(Fault::EchoErrorPage);
    let passing = run(dir.path(), &echo, &["--verbose", "--snapshots", "update"])
        .env("MALLCHECK_SIGN_KEY", MD5_KEY)
        .output()
        .unwrap();
    assert_exit(&passing, 0);
    let report = dir.path().join("reports/report.json");
    assert_echoed(&report);
    let mut secrets = Secrets::default();
    secrets.add("the md5 key", MD5_KEY);
    for (i, sig) in md5_signatures(&report, MD5_KEY).iter().enumerate() {
        secrets.add(&format!("signature {i}"), sig);
    }
    assert!(secrets.0.len() > 30, "{} signatures", secrets.0.len());
    for (what, value) in [
        ("X-Api-Key", API_KEY),
        ("X-Auth-Token", AUTH_TOKEN),
        ("X-Tenant (secret-headers)", TENANT),
    ] {
        secrets.add(what, value);
    }
    let verbose = output_text(&passing);
    for header in ["X-Api-Key", "X-Auth-Token", "X-Tenant"] {
        assert!(
            verbose.contains(&format!("-H '{header}: <redacted>'")),
            "{header} in the curl line:\n{verbose}"
        );
    }
    assert!(verbose.contains("-H 'X-env-flag: 1'"), "{verbose}");

    let failing = run(
        dir.path(),
        &page,
        &["--verbose", "--json", "reports/page.json"],
    )
    .env("MALLCHECK_SIGN_KEY", MD5_KEY)
    .output()
    .unwrap();
    assert_exit(&failing, 1);
    assert!(
        output_text(&failing).contains(&format!("<p>Authorization: {DEMO_APPID} <redacted></p>")),
        "{}",
        output_text(&failing)
    );
    for (i, sig) in md5_signatures(&dir.path().join("reports/page.json"), MD5_KEY)
        .iter()
        .enumerate()
    {
        secrets.add(&format!("error-page signature {i}"), sig);
    }
    let fuzz = mallcheck(dir.path())
        .env("MALLCHECK_SIGN_KEY", MD5_KEY)
        .args(["fuzz", "--cases", "15", "--seed", "7", "--color", "never"])
        .args(["--base-url", &page, "--appid", DEMO_APPID])
        .args(["--merchant-id", MAIN.merchant_id])
        .args(["--merchant-user-id", MAIN.merchant_user_id])
        .args(["--junit", "reports/fuzz.xml"])
        .output()
        .unwrap();
    assert_exit(&fuzz, 1);
    assert!(
        !files_under(&dir.path().join("cases/fuzz-regressions")).is_empty(),
        "fuzz saved no regression"
    );
    assert!(
        files_under(dir.path())
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "snap")),
        "no snapshot written"
    );
    secrets.assert_none_written(
        dir.path(),
        &[
            ("run (echo)", &passing),
            ("run (error page)", &failing),
            ("fuzz", &fuzz),
        ],
    );
}

/// A run against the echo fault of `server` with `echo_args` (it passes, and the request is
/// echoed into the report), then one against its error page with `page_args` and the JSON report
/// in `reports/page.json` (it fails); both with the signer's setting `env` in the environment.
fn echo_then_error_page(
    dir: &Path,
    server: &InProcess,
    env: (&str, &str),
    echo_args: &[&str],
    page_args: &[&str],
) -> (Output, Output) {
    let echo = run(dir, &server.fault_url(Fault::EchoRequest), echo_args)
        .env(env.0, env.1)
        .output()
        .unwrap();
    assert_exit(&echo, 0);
    assert_echoed(&dir.join("reports/report.json"));
    let page = run(dir, &server.fault_url(Fault::EchoErrorPage), page_args)
        .args(["--json", "reports/page.json"])
        .env(env.0, env.1)
        .output()
        .unwrap();
    assert_exit(&page, 1);
    (echo, page)
}

#[test]
fn static_signer_key_is_never_written_in_any_encoding() {
    let dir = workspace();
    let server = InProcess::start(Signer::new(SignerKind::Static, STATIC_KEY.to_string()));
    let (echo, page) = echo_then_error_page(
        dir.path(),
        &server,
        ("MALLCHECK_SIGN_KEY", STATIC_KEY),
        &["--verbose", "--signer", "static", "--snapshots", "update"],
        &["--verbose", "--signer", "static"],
    );
    let mut secrets = Secrets::default();
    secrets.add("the static key", STATIC_KEY);
    secrets.assert_none_written(
        dir.path(),
        &[("run (echo)", &echo), ("run (error page)", &page)],
    );
}

#[test]
fn a_body_cut_by_max_body_inside_a_signature_leaves_no_part_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("cut.yaml");
    // A long header that the service echoes before the Authorization header, so that the
    // signature it echoes lies beyond the smallest --max-body.
    std::fs::write(
        &case,
        format!(
            "cases:\n  - name: padded request\n    endpoint: mall-list\n    request:\n      body: {{ appid: \"{DEMO_APPID}\", filter: {{ seller: {{ merchantId: \"{}\", merchantUserId: \"{}\", role: super_admin }} }}, sort: {{ sortField: id, sort: DESC }}, cursor: {{ cursorField: id, endCursor: null, count: 3 }} }}\n      headers: {{ X-Pad: \"{}\" }}\n",
            MAIN.merchant_id,
            MAIN.merchant_user_id,
            ".".repeat(1200)
        ),
    )
    .unwrap();
    let server = InProcess::start(Signer::new(SignerKind::Md5, MD5_KEY.to_string()));
    let echo = server.fault_url(Fault::EchoRequest);
    let case_arg = case.to_str().unwrap();
    let excerpt = |report: &str| -> String {
        let text = std::fs::read_to_string(dir.path().join(report)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["cases"][0]["exchanges"][0]["response"]["body_excerpt"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let whole = run(dir.path(), &echo, &["--cases", case_arg])
        .args(["--json", "reports/whole.json"])
        .env("MALLCHECK_SIGN_KEY", MD5_KEY)
        .output()
        .unwrap();
    assert_exit(&whole, 0);
    // Where the echoed signature starts: nothing before it is redacted.
    let echoed = format!("\"authorization\":\"{DEMO_APPID} ");
    let shown = excerpt("reports/whole.json");
    let at = shown.find(&format!("{echoed}{}", mallcheck::redact::REDACTED));
    let at = at.unwrap_or_else(|| panic!("no echoed signature in {shown}")) + echoed.len();
    assert!(at > 1024, "the signature is echoed at byte {at}");
    // Cut the answer 20 characters into the signature.
    let max_body = (at + 20).to_string();
    // Without the preflight, whose own answer the limit cuts too (a broken answer stops the
    // run there): the padded case is the one to see.
    let cut = run(
        dir.path(),
        &echo,
        &["--cases", case_arg, "--verbose", "--no-preflight"],
    )
    .args(["--max-body", &max_body, "--json", "reports/cut.json"])
    .args(["--markdown", "reports/cut.md", "--html", "reports/cut.html"])
    .args(["--junit", "reports/cut.xml"])
    .env("MALLCHECK_SIGN_KEY", MD5_KEY)
    .output()
    .unwrap();
    assert_exit(&cut, 1);
    assert!(
        output_text(&cut).contains("transport.body-size"),
        "{}",
        output_text(&cut)
    );
    let shown = excerpt("reports/cut.json");
    // It stops before the signature: at its start, or (as the run of letters before a cut
    // may be the beginning of a signature wrapped by a line break) at the start of the appid.
    assert!(
        shown.ends_with(&echoed) || shown.ends_with("\"authorization\":\""),
        "the excerpt should stop before the signature: …{}",
        &shown[shown.len().saturating_sub(80)..]
    );
    let mut secrets = Secrets::default();
    secrets.add("the md5 key", MD5_KEY);
    for (i, sig) in md5_signatures(&dir.path().join("reports/cut.json"), MD5_KEY)
        .iter()
        .enumerate()
    {
        secrets.add(&format!("signature {i}"), sig);
    }
    secrets.assert_none_written(dir.path(), &[("run (cut)", &cut)]);
}

#[test]
fn command_signer_its_command_and_signatures_are_never_written() {
    let dir = workspace();
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("signatures.log");
    let command = format!(
        "sig=$({{ cat; printf %s '{COMMAND_KEY}'; }} | md5sum | cut -c1-32); printf '%s\\n' \"$sig\" >> '{}'; printf '%s\\n' \"$sig\"",
        log.display()
    );
    let server = InProcess::start(Signer::new(SignerKind::Command, command.clone()));
    let (echo, page) = echo_then_error_page(
        dir.path(),
        &server,
        ("MALLCHECK_SIGN_COMMAND", &command),
        &["--verbose", "--signer", "command"],
        &["--signer", "command"],
    );
    // A command that fails: the reports say a command signer failed, not which command.
    let broken = format!("cat >/dev/null; exit 3 # {COMMAND_KEY}-broken");
    let failed = mallcheck(dir.path())
        .args(["run", "--signer", "command", "--color", "never", "--cases"])
        .arg(dir.path().join("cases/auth.yaml"))
        .args([
            "--json",
            "reports/broken.json",
            "--junit",
            "reports/broken.xml",
        ])
        .env("MALLCHECK_SIGN_COMMAND", &broken)
        .output()
        .unwrap();
    // The signer failed: could not test.
    assert_exit(&failed, 3);
    let broken_report = std::fs::read_to_string(dir.path().join("reports/broken.json")).unwrap();
    assert!(
        broken_report.contains("sign command failed"),
        "the report should say a command signer failed:\n{broken_report}"
    );
    let mut secrets = Secrets::default();
    secrets.add("the sign command", &command);
    secrets.add("the failing sign command", &broken);
    secrets.add("the key inside the command", COMMAND_KEY);
    let logged = std::fs::read_to_string(&log).unwrap();
    for (i, sig) in logged.lines().enumerate() {
        secrets.add(&format!("signature {i}"), sig);
    }
    assert!(
        secrets.0.len() > 30,
        "{} signatures logged",
        secrets.0.len()
    );
    secrets.assert_none_written(
        dir.path(),
        &[
            ("run (echo)", &echo),
            ("run (error page)", &page),
            ("run (broken command)", &failed),
        ],
    );
}

/// A sign command that reads a credential from the environment (a vault token) and prints it
/// when it fails: the value of a variable whose name says it is a credential is never written.
#[test]
fn a_credential_the_sign_command_reads_from_the_environment_is_never_written() {
    let dir = workspace();
    let token = "EnvTokenSecret-9f8e7d6c";
    let failed = mallcheck(dir.path())
        .args(["run", "--signer", "command", "--color", "never", "--cases"])
        .arg(dir.path().join("cases/auth.yaml"))
        .args([
            "--json",
            "reports/vault.json",
            "--junit",
            "reports/vault.xml",
        ])
        .env(
            "MALLCHECK_SIGN_COMMAND",
            "cat >/dev/null; echo \"vault: token rejected: $VAULT_SIGNING_TOKEN\" >&2; exit 3",
        )
        .env("VAULT_SIGNING_TOKEN", token)
        .output()
        .unwrap();
    assert_exit(&failed, 3);
    let report = std::fs::read_to_string(dir.path().join("reports/vault.json")).unwrap();
    assert!(
        report.contains("the sign command failed (exit status 3); stderr: vault"),
        "the command's output is quoted:\n{report}"
    );
    let mut secrets = Secrets::default();
    secrets.add("the vault token", token);
    secrets.assert_none_written(dir.path(), &[("run (vault)", &failed)]);
}

#[test]
fn url_userinfo_never_appears_in_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mallcheck.toml"),
        format!(
            "[profile.stage]\nbase_url = \"http://deploy-bot:{URL_PASSWORD}@127.0.0.1:8080/\"\n"
        ),
    )
    .unwrap();
    let mut outputs = Vec::new();
    let bad_port = format!("http://deploy-bot:{URL_PASSWORD}@127.0.0.1:99999/");
    let ftp = format!("ftp://deploy-bot:{URL_PASSWORD}@127.0.0.1/");
    let encoded = "http://deploy-bot:Pa55%2Dw0rd%2Din%2Durl@[::1/";
    for (what, cmd) in [
        ("flag, bad port", run(dir.path(), &bad_port, &[])),
        (
            "flag, percent-encoded password",
            run(dir.path(), encoded, &[]),
        ),
        ("environment, ftp", {
            let mut c = mallcheck(dir.path());
            c.args(["run", "--appid", DEMO_APPID])
                .env("MALLCHECK_BASE_URL", &ftp);
            c
        }),
        ("profile, valid URL with credentials", {
            let mut c = mallcheck(dir.path());
            c.args(["run", "--profile", "stage", "--appid", DEMO_APPID]);
            c
        }),
    ] {
        let mut cmd = cmd;
        let out = cmd.env("MALLCHECK_SIGN_KEY", MD5_KEY).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{what}: {}", output_text(&out));
        let text = output_text(&out);
        assert!(
            text.contains("<redacted>@"),
            "{what}: the URL should be shown masked:\n{text}"
        );
        outputs.push((what, out));
    }
    assert!(output_text(&outputs[3].1).contains("base_url (profile `stage`)"));
    let mut secrets = Secrets::default();
    secrets.add("the URL password", URL_PASSWORD);
    secrets.add(
        "the URL user and password",
        &format!("deploy-bot:{URL_PASSWORD}"),
    );
    let outputs: Vec<(&str, &Output)> = outputs.iter().map(|(w, o)| (*w, o)).collect();
    for (what, out) in &outputs {
        let found = secrets.found_in(&output_text(out));
        assert!(found.is_empty(), "{what}: {found:?}\n{}", output_text(out));
    }
}

#[test]
fn a_misspelt_secret_header_is_a_load_error() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("typo.yaml");
    std::fs::write(
        &case,
        "cases:\n  - name: typo\n    endpoint: mall-list\n    request:\n      body: {}\n      headers: { X-Tenant: \"x\" }\n      secret-headers: [X-Tenat]\n",
    )
    .unwrap();
    let out = mallcheck(dir.path())
        .args(["run", "--color", "never", "--cases"])
        .arg(&case)
        .output()
        .unwrap();
    assert_exit(&out, 2);
    let text = output_text(&out);
    assert!(
        text.contains("`X-Tenat` is not a header of this request"),
        "{text}"
    );
    assert!(text.contains("did you mean `X-Tenant`?"), "{text}");
    assert!(text.contains("typo.yaml:7:"), "{text}");
}

#[test]
fn a_key_too_short_to_scrub_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let server = InProcess::start(Signer::new(SignerKind::Md5, "k3y".to_string()));
    let url = server
        .server
        .as_ref()
        .map(RunningServer::base_url)
        .unwrap_or_default();
    let out = run(dir.path(), &url, &["--quiet", "--cases"])
        .arg(repo().join("cases/auth.yaml"))
        .env("MALLCHECK_SIGN_KEY", "k3y")
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: the signing key is shorter than 8 characters"),
        "{stderr}"
    );
}

/// A static key of letters and digits, as many keys are: 32 characters, any 8 of them in a row
/// a leak.
const BAR_KEY: &str = "Zq7Xw2Lp9Rt4Vb8Nc3Mk6Hj1Gf5Ds0Ay";

/// Every run of 8 characters of `key` that `text` holds, in any letter case, in any view a
/// reader can recover ([`views`]), white space taken out or not.
fn fragments_of(key: &str, text: &str) -> Vec<String> {
    let windows: Vec<String> = (0..=key.len() - 8)
        .map(|i| key[i..i + 8].to_ascii_lowercase())
        .collect();
    let mut found = Vec::new();
    for view in views(text) {
        let lower = view.to_lowercase();
        let joined: String = lower.chars().filter(|c| !c.is_whitespace()).collect();
        for w in &windows {
            if (lower.contains(w.as_str()) || joined.contains(w.as_str())) && !found.contains(w) {
                found.push(w.clone());
            }
        }
    }
    found
}

/// Every output of a run in `dir` (inputs aside) and its stdout and stderr, by name.
fn outputs_of(dir: &Path, out: &Output) -> Vec<(String, String)> {
    let mut all = vec![
        (
            "stdout".to_string(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        ),
        (
            "stderr".to_string(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ),
    ];
    for p in files_under(dir).into_iter().filter(|p| !is_input(dir, p)) {
        let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
        all.push((p.display().to_string(), text));
    }
    all
}

/// The bar of the secrets work: a service that answers every request by quoting the key (the
/// signature of `--signer static`) in any of its spellings, raw after a right-to-left override,
/// leaves no 8 characters of the key in a row in stdout, stderr, JUnit, JSON, HTML, Markdown or
/// snapshots, and no raw override anywhere but in the snapshots (which keep the data as it
/// came); with the preflight (the run stops at the first refusal) and without (every case is
/// refused).
#[test]
fn every_echo_form_of_the_key_leaves_no_eight_characters_of_it_in_any_output() {
    use mallcheck::server::echo_forms::{EchoForm, RLO};
    let server = InProcess::start(Signer::new(SignerKind::Static, BAR_KEY.to_string()));
    let mut leaks = Vec::new();
    for form in EchoForm::ALL {
        for preflight in [true, false] {
            let dir = workspace();
            let url = format!("{}/{}", server.fault_url(Fault::EchoSignature), form.name());
            let mut cmd = run(dir.path(), &url, &["--signer", "static", "--verbose"]);
            if !preflight {
                cmd.args(["--no-preflight", "--snapshots", "update"]);
            }
            let out = cmd.env("MALLCHECK_SIGN_KEY", BAR_KEY).output().unwrap();
            // Refused: the service could not be tested (3), or a case failed (1).
            let code = out.status.code();
            assert!(code == Some(3) || code == Some(1), "{}", output_text(&out));
            let run = format!(
                "{} {}",
                form.name(),
                if preflight {
                    "with preflight"
                } else {
                    "without"
                }
            );
            let outputs = outputs_of(dir.path(), &out);
            // Proof that the refusal reached the reports, so that the scan means something.
            let summary = &outputs
                .iter()
                .find(|(p, _)| p.ends_with("summary.md"))
                .unwrap_or_else(|| panic!("{run}: no summary.md"))
                .1;
            assert!(summary.contains("did not match"), "{run}: {summary}");
            for (what, text) in &outputs {
                let found = fragments_of(BAR_KEY, text);
                if !found.is_empty() {
                    leaks.push(format!("{run}: {what}: {found:?}"));
                }
                // A snapshot keeps the response's data as it came (it is compared, not read).
                if text.contains(RLO) && !what.contains("/snapshots/") {
                    leaks.push(format!("{run}: {what}: a raw U+202E"));
                }
            }
        }
    }
    assert!(leaks.is_empty(), "written:\n{}", leaks.join("\n"));
}

/// A response header of 380 KB is recorded capped: the reports stay small.
#[test]
fn a_huge_response_header_is_capped_in_every_report() {
    let server = InProcess::start(Signer::new(SignerKind::Md5, DEMO_SIGN_KEY.into()));
    let dir = workspace();
    // Two cases are enough to see the records; each answer is slow to parse on a busy machine.
    let args = ["--verbose", "--filter", "secrets.yaml", "--timeout", "120"];
    let out = run(dir.path(), &server.fault_url(Fault::HugeHeader), &args)
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    for (what, text) in outputs_of(dir.path(), &out) {
        assert!(
            !text.contains(&"p".repeat(4096)),
            "{what} holds 4 KiB of the header ({} bytes)",
            text.len()
        );
    }
    let json = std::fs::read_to_string(dir.path().join("reports/report.json")).unwrap();
    assert!(json.contains("bytes more"), "the cut is not marked");
}

/// The scanner every test here relies on finds what it must: a secret whole, its first
/// characters alone, in an escaped view, and an Authorization value.
#[test]
fn the_scanner_finds_a_secret_whole_cut_escaped_or_as_an_authorization_value() {
    let mut secrets = Secrets::default();
    secrets.add("the key", "Zq7Xw2Lp9Rt4Vb8Nc3Mk");
    secrets.add("a signature", "eb15fe36e951f0f5fc291e60749d3a07");
    assert_eq!(secrets.found_in("nothing here"), Vec::<String>::new());
    assert_eq!(secrets.found_in("x Zq7Xw2Lp9Rt4Vb8Nc3Mk y"), ["the key"]);
    assert_eq!(
        secrets.found_in("cut: Zq7Xw2Lp9Rt4…"),
        ["the first 12 characters of the key"]
    );
    assert!(
        secrets
            .found_in(r#"{"m":"Zq7Xw2Lp9Rt4Vb8Nc3\u004dk"}"#)
            .contains(&"the key".to_string())
    );
    let auth = format!("{DEMO_APPID} eb15fe36e951f0f5fc291e60749d3a07");
    assert_eq!(
        secrets.found_in(&auth),
        [
            "a signature".to_string(),
            format!("an Authorization value {auth}")
        ]
    );
}

/// A service that answers each request with the Authorization value of the request before it
/// (in the envelope's `msg` and in a header), one request per connection; every value it
/// received is kept.
fn echo_previous_authorization() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let log = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let (mut length, mut authorization) = (0usize, String::new());
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some((name, value)) = line.trim_end().split_once(':') {
                    match name.to_ascii_lowercase().as_str() {
                        "content-length" => length = value.trim().parse().unwrap_or(0),
                        "authorization" => authorization = value.trim().to_string(),
                        _ => {}
                    }
                }
            }
            let mut body = vec![0u8; length];
            let _ = reader.read_exact(&mut body);
            let previous = {
                let mut seen = log.lock().unwrap();
                let previous = seen.last().cloned().unwrap_or_default();
                seen.push(authorization);
                previous
            };
            let answer = serde_json::json!({
                "success": false,
                "code": "5001",
                "msg": format!("the request before yours: {previous}"),
                "data": null,
            })
            .to_string();
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Previous: {previous}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
            let _ = reader.get_mut().write_all(response.as_bytes());
        }
    });
    (url, seen)
}

#[test]
fn a_signature_echoed_in_the_answer_to_a_later_request_is_never_written() {
    let dir = workspace();
    let (url, seen) = echo_previous_authorization();
    let ran = run(dir.path(), &url, &["--verbose", "--no-preflight"])
        .args([
            "--json",
            "reports/later.json",
            "--html",
            "reports/later.html",
        ])
        .env("MALLCHECK_SIGN_KEY", MD5_KEY)
        .output()
        .unwrap();
    let fuzz = mallcheck(dir.path())
        .env("MALLCHECK_SIGN_KEY", MD5_KEY)
        .args(["fuzz", "--cases", "20", "--seed", "3", "--color", "never"])
        .args(["--base-url", &url, "--appid", DEMO_APPID])
        .args(["--merchant-id", MAIN.merchant_id])
        .args(["--merchant-user-id", MAIN.merchant_user_id])
        .args(["--junit", "reports/later-fuzz.xml"])
        .output()
        .unwrap();
    let received = seen.lock().unwrap().clone();
    assert!(received.len() > 20, "{} requests", received.len());
    let mut secrets = Secrets::default();
    secrets.add("the md5 key", MD5_KEY);
    for (i, value) in received.iter().enumerate() {
        if let Some((_, signature)) = value.split_once(' ') {
            secrets.add(&format!("signature {i}"), signature);
        }
    }
    secrets.assert_none_written(dir.path(), &[("run", &ran), ("fuzz", &fuzz)]);
    // The echo was shown, its signature redacted: the scan above meant something.
    let report = std::fs::read_to_string(dir.path().join("reports/later.json")).unwrap();
    assert!(
        report.contains(&format!(
            "the request before yours: {DEMO_APPID} <redacted>"
        )),
        "no echo of an earlier request in the report"
    );
}

/// A service that quotes the valid signature of a refused body ("expected …") shows a value the
/// client never sent (the altered, truncated, wrong, unkeyed and replayed signature probes send
/// another):
/// it is redacted as the signatures sent are. The bodies here are signed nowhere else in the
/// run (a mallSn of no mall), so only that registration hides their valid signatures.
#[test]
fn the_valid_signature_a_refusal_quotes_is_redacted_though_it_was_never_sent() {
    let server = InProcess::start(Signer::new(SignerKind::Md5, DEMO_SIGN_KEY.into()));
    let dir = workspace();
    let case = |name: &str, auth: &str, mall_sn: &str| {
        format!(
            r#"  - name: {name}
    endpoint: mall-products
    request:
      auth: {auth}
      body: {{ appid: "{DEMO_APPID}", seller: {{ merchantId: "{}", merchantUserId: "{}", role: super_admin }}, mallID: {{ mallSn: "{mall_sn}", signature: "nope" }} }}
    expect: {{ schema: none, no-data: auth.signature }}
"#,
            MAIN.merchant_id, MAIN.merchant_user_id
        )
    };
    // Two bodies: the valid signature of one is no prefix of the other's truncated one.
    std::fs::write(
        dir.path().join("cases").join("expected.yaml"),
        format!(
            "cases:\n{}{}{}{}{}",
            case("quoted truncated", "truncated-signature", "4242"),
            case("quoted altered", "altered-signature", "4243"),
            case("quoted wrong", "wrong-signature", "4244"),
            case("quoted unkeyed", "unkeyed-signature", "4245"),
            case("quoted replay", "signature-of-other-body", "4246")
        ),
    )
    .unwrap();
    let args = ["--filter", "quoted", "--verbose"];
    let out = run(
        dir.path(),
        &server.fault_url(Fault::EchoExpectedSignature),
        &args,
    )
    .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
    .output()
    .unwrap();
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let outputs = outputs_of(dir.path(), &out);
    let report = &outputs
        .iter()
        .find(|(p, _)| p.ends_with("report.json"))
        .unwrap_or_else(|| panic!("no report.json: {text}"))
        .1;
    // The refusals reached the report, each quoting a value redacted whole (a prefix of it
    // registered, the truncated signature sent, hides all but its last character).
    assert_eq!(
        report
            .matches(r#"signature mismatch: expected <redacted>\""#)
            .count(),
        5,
        "{report}"
    );
    let hex32 = regex::Regex::new(r"\b[0-9a-f]{32}\b").unwrap();
    for (what, text) in &outputs {
        for m in hex32.find_iter(text) {
            assert!(
                !text[..m.start()].ends_with("expected "),
                "{what}: an expected signature in clear: {}",
                m.as_str()
            );
        }
    }
}

/// Commands that resolve no session still know the environment's secrets: `validate` of a
/// captured answer that echoes the signing key shows it redacted. And a case file's literal
/// credential header is never quoted by a load diagnostic (exit 2).
#[test]
fn validate_and_case_file_diagnostics_never_quote_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let key = "S3cretKey-for-test-2024";
    let captured = dir.path().join("cap.json");
    std::fs::write(
        &captured,
        format!(r#"{{"success":true,"code":"0000","msg":"bad key {key}","data":[{{"mallSn":"{key}"}}]}}"#),
    )
    .unwrap();
    let out = Command::new(bin())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MALLCHECK_SIGN_KEY", key)
        .args([
            "validate",
            "--schema",
            "mall-list-response",
            "--color",
            "never",
        ])
        .arg(&captured)
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let text = output_text(&out);
    assert!(!text.contains(key), "{text}");
    assert!(text.contains("<redacted>"), "{text}");

    let cases = dir.path().join("c.yaml");
    std::fs::write(
        &cases,
        "cases:\n  - name: literal credentials\n    endpoint: mall-list\n    request:\n      \
         headers: { X-Api-Key: \"LiteralApiKey-9f8e7d6c\", Cookie: \"session=LiteralSessi0n77\" }\n      \
         bodyy: { appid: \"x\" }\n",
    )
    .unwrap();
    let out = Command::new(bin())
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .args(["run", "--snapshots", "off", "--color", "never", "--cases"])
        .arg(&cases)
        .output()
        .unwrap();
    assert_exit(&out, 2);
    let text = output_text(&out);
    assert!(text.contains("unknown key `bodyy`"), "{text}");
    assert!(!text.contains("LiteralApiKey"), "{text}");
    assert!(!text.contains("LiteralSessi0n"), "{text}");
}
