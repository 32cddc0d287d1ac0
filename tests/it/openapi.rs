//! Integration tests of the interop commands: `mallcheck openapi` (checked with the real
//! openapi-spec-validator from PyPI, installed by `.ci/install-openapi-validator.sh`) and
//! `mallcheck validate` (exit codes and console findings).
//!
//! Without the validator the OpenAPI test prints a note and checks the document's own
//! references only, unless `MALLCHECK_REQUIRE_TOOLS` is set (as CI does).
//!
//! spectral, redocly and openapi-typescript (npm, installed by `.ci/install-openapi-lint.sh`)
//! lint the export and type it: no lint error, and the fields every record carries required.
//!
//! Schemathesis (PyPI, installed by `.ci/install-schemathesis.sh`) runs every one of its checks
//! with the exported document against `mallcheck serve`, signing each request with the hooks
//! of `tests/it/schemathesis_hooks.py`: no schema-valid request may be rejected, no invalid one
//! accepted, no response may break the document. Without Schemathesis the test is skipped with
//! a note, unless `MALLCHECK_REQUIRE_TOOLS` is set.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, Dataset, MAIN, Shape};
use serde_json::{Value, json};

use crate::common::{Server, bin, repo};

fn mallcheck(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .args(args)
        .output()
        .expect("run mallcheck")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// Whether `python3 -m openapi_spec_validator` can run here.
fn validator_available() -> bool {
    Command::new(python())
        .args(["-c", "import openapi_spec_validator"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn validate_openapi(path: &Path) -> Output {
    Command::new(python())
        .args(["-m", "openapi_spec_validator", "--schema", "3.1"])
        .arg(path)
        .output()
        .expect("run openapi-spec-validator")
}

fn refs(node: &Value, out: &mut Vec<String>) {
    match node {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                out.push(r.clone());
            }
            m.values().for_each(|v| refs(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[test]
fn openapi_export_validates_with_openapi_spec_validator() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = mallcheck(dir.path(), &["openapi", "--output", "api/openapi.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let path = dir.path().join("api/openapi.json");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("written")).expect("JSON");
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(doc["paths"]["/optimus/core/open/mall/queryMallList"]["post"].is_object());
    assert!(doc["paths"]["/optimus/core/open/mall/queryMallProducts"]["post"].is_object());
    let mut found = Vec::new();
    refs(&doc, &mut found);
    for r in &found {
        let pointer = r
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("a reference leaves the document: {r}"));
        assert!(doc.pointer(pointer).is_some(), "dangling reference {r}");
    }

    let stdout = mallcheck(dir.path(), &["openapi"]);
    assert_eq!(stdout.status.code(), Some(0));
    assert_eq!(
        text(&stdout.stdout),
        std::fs::read_to_string(&path).expect("written"),
        "stdout and --output agree"
    );

    if !validator_available() {
        assert!(
            std::env::var_os("MALLCHECK_REQUIRE_TOOLS").is_none(),
            "MALLCHECK_REQUIRE_TOOLS is set but openapi-spec-validator is missing \
             (run .ci/install-openapi-validator.sh)"
        );
        eprintln!(
            "note: openapi-spec-validator is not installed; skipped the external validation \
             (see .ci/install-openapi-validator.sh)"
        );
        return;
    }
    let checked = validate_openapi(&path);
    assert!(
        checked.status.success(),
        "openapi-spec-validator rejects the export:\n{}{}",
        text(&checked.stdout),
        text(&checked.stderr)
    );

    // The validator must be able to say no: a dangling reference and a bad parameter location.
    let mut broken = doc.clone();
    broken["components"]["schemas"]["mall"]["properties"]["mallSn"]["$ref"] =
        json!("#/components/schemas/no-such-schema");
    broken["paths"]["/optimus/core/open/mall/queryMallProducts"]["post"]["parameters"][0]["in"] =
        json!("body");
    let broken_path = dir.path().join("broken.json");
    std::fs::write(&broken_path, broken.to_string()).expect("write");
    assert!(!validate_openapi(&broken_path).status.success());
}

/// The npm tools of `.ci/install-openapi-lint.sh` (spectral, redocly, openapi-typescript, tsc),
/// or `None` with a note (a failure under `MALLCHECK_REQUIRE_TOOLS`).
fn lint_tools() -> Option<PathBuf> {
    let bin = repo().join("target/openapi-lint/node_modules/.bin");
    let present = ["spectral", "redocly", "openapi-typescript", "tsc"]
        .iter()
        .all(|t| bin.join(t).is_file());
    if !present {
        assert!(
            std::env::var_os("MALLCHECK_REQUIRE_TOOLS").is_none(),
            "MALLCHECK_REQUIRE_TOOLS is set but the OpenAPI linters are missing \
             (run .ci/install-openapi-lint.sh)"
        );
        eprintln!(
            "note: spectral, redocly or openapi-typescript is not installed; skipped \
             (see .ci/install-openapi-lint.sh)"
        );
        return None;
    }
    Some(bin)
}

fn tool(bin: &Path, name: &str, dir: &Path) -> Command {
    let mut cmd = Command::new(bin.join(name));
    cmd.current_dir(dir)
        .env("REDOCLY_TELEMETRY", "off")
        .env("REDOCLY_SUPPRESS_UPDATE_NOTICE", "true")
        .env("NO_UPDATE_NOTIFIER", "1");
    cmd
}

fn outputs(out: &Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

/// Issue 23: spectral's oas ruleset and redocly's recommended rules find no error in the
/// export, and openapi-typescript makes the fields every mall carries required.
#[test]
fn openapi_export_lints_clean_and_types_required_fields() {
    let Some(bin) = lint_tools() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let out = mallcheck(dir.path(), &["openapi", "--output", "openapi.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::write(
        dir.path().join(".spectral.yaml"),
        "extends: [\"spectral:oas\"]\n",
    )
    .expect("ruleset");

    let spectral = tool(&bin, "spectral", dir.path())
        .args([
            "lint",
            "--ruleset",
            ".spectral.yaml",
            "--fail-severity",
            "error",
        ])
        .arg("openapi.json")
        .output()
        .expect("run spectral");
    assert!(
        spectral.status.success(),
        "spectral:\n{}",
        outputs(&spectral)
    );
    assert!(
        outputs(&spectral).contains("0 errors"),
        "{}",
        outputs(&spectral)
    );

    let redocly = tool(&bin, "redocly", dir.path())
        .args(["lint", "openapi.json"])
        .output()
        .expect("run redocly");
    assert!(redocly.status.success(), "redocly:\n{}", outputs(&redocly));

    let generated = tool(&bin, "openapi-typescript", dir.path())
        .args(["openapi.json", "--output", "api.d.ts"])
        .output()
        .expect("run openapi-typescript");
    assert!(generated.status.success(), "{}", outputs(&generated));
    let types = std::fs::read_to_string(dir.path().join("api.d.ts")).expect("api.d.ts");
    assert!(!types.contains("mallSn?:"), "mallSn is optional:\n{types}");
    // A strict compile fails when a field the spec lists may be undefined.
    std::fs::write(
        dir.path().join("use.ts"),
        "import type { components } from \"./api\";\n\
         type Mall = components[\"schemas\"][\"mall\"];\n\
         type Product = components[\"schemas\"][\"product\"];\n\
         export function sn(m: Mall): string { return m.mallSn; }\n\
         export function state(m: Mall): number { return m.state; }\n\
         export function merchant(m: Mall): string { return m.seller.merchantId; }\n\
         export function title(p: Product): string { return p.title; }\n",
    )
    .expect("use.ts");
    let tsc = tool(&bin, "tsc", dir.path())
        .args(["--strict", "--noEmit", "--skipLibCheck", "use.ts"])
        .output()
        .expect("run tsc");
    assert!(tsc.status.success(), "tsc:\n{}", outputs(&tsc));

    // The linter can say no: an array without items is spectral's `array-items` error.
    let mut doc: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("openapi.json")).expect("read"),
    )
    .expect("JSON");
    doc["components"]["schemas"]["product"]["properties"]["converImages"] =
        json!({"type": "array"});
    std::fs::write(dir.path().join("broken.json"), doc.to_string()).expect("write");
    let broken = tool(&bin, "spectral", dir.path())
        .args(["lint", "--ruleset", ".spectral.yaml", "broken.json"])
        .output()
        .expect("run spectral");
    assert!(!broken.status.success(), "{}", outputs(&broken));
    assert!(
        outputs(&broken).contains("array-items"),
        "{}",
        outputs(&broken)
    );
}

const GOOD_LIST: &str = r#"{"success":true,"code":"0000","msg":"ok","data":[]}"#;
const BAD_LIST: &str = r#"{"success":true,"code":"0001","msg":"ok","data":[]}"#;

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).expect("write");
    p
}

/// `validate` with `body` on its standard input through a pipe.
fn validate_stdin(dir: &Path, args: &[&str], body: &'static str) -> Output {
    use std::io::Write;
    let mut child = Command::new(bin())
        .current_dir(dir)
        .args([
            "validate",
            "--schema",
            "mall-list-response",
            "--color",
            "never",
        ])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn mallcheck");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(body.as_bytes());
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    out
}

#[test]
fn validate_reads_a_capture_piped_to_its_standard_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ok = validate_stdin(dir.path(), &["-"], GOOD_LIST);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    assert!(text(&ok.stdout).contains("PASS  -"), "{}", text(&ok.stdout));
    let bad = validate_stdin(dir.path(), &["-"], BAD_LIST);
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad.stderr));
    assert!(
        text(&bad.stdout).contains("FAIL  -"),
        "{}",
        text(&bad.stdout)
    );
    // /dev/stdin, as a shell gives it, too.
    let ok = validate_stdin(dir.path(), &["/dev/stdin"], GOOD_LIST);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
}

#[test]
fn validate_passes_a_conforming_capture_and_fails_a_broken_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "good.json", GOOD_LIST);
    write(dir.path(), "bad.json", BAD_LIST);
    write(dir.path(), "truncated.json", r#"{"success":tr"#);

    let ok = mallcheck(
        dir.path(),
        &["validate", "--schema", "mall-list-response", "good.json"],
    );
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stdout));
    assert!(
        text(&ok.stdout).contains("PASS  good.json"),
        "{}",
        text(&ok.stdout)
    );

    let bad = mallcheck(
        dir.path(),
        &[
            "validate",
            "--schema",
            "mall-list-response",
            "good.json",
            "bad.json",
            "truncated.json",
        ],
    );
    let stdout = text(&bad.stdout);
    assert_eq!(bad.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL  bad.json"), "{stdout}");
    assert!(
        stdout.contains("mall-list.envelope.success-code (§7.1) at /code"),
        "findings printed like the console: {stdout}"
    );
    // A body that is not JSON is a broken answer: it fails.
    assert!(stdout.contains("FAIL  truncated.json"), "{stdout}");
    assert!(stdout.contains("response.json (§4)"), "{stdout}");
    assert!(stdout.contains("Summary: 3 cases: 1 passed"), "{stdout}");
}

#[test]
fn validate_usage_errors_exit_two() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "good.json", GOOD_LIST);

    let unknown = mallcheck(
        dir.path(),
        &["validate", "--schema", "mall-lists-response", "good.json"],
    );
    assert_eq!(unknown.status.code(), Some(2));
    let stderr = text(&unknown.stderr);
    assert!(
        stderr.contains("unknown schema \"mall-lists-response\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("mall-list-response") && stderr.contains("products-response"),
        "lists the valid names: {stderr}"
    );

    let missing = mallcheck(
        dir.path(),
        &["validate", "--schema", "mall-list-response", "nowhere.json"],
    );
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing.stderr).contains("nowhere.json"),
        "{}",
        text(&missing.stderr)
    );
}

/// Where `.ci/install-schemathesis.sh` puts Schemathesis (or `MALLCHECK_SCHEMATHESIS`, or
/// `schemathesis` on the PATH); `None` when none of them runs.
fn schemathesis() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(path) = std::env::var_os("MALLCHECK_SCHEMATHESIS") {
        candidates.push(PathBuf::from(path));
    }
    let tools = std::env::var_os("MALLCHECK_TOOLS_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/mallcheck")));
    if let Some(dir) = tools {
        candidates.push(dir.join("schemathesis/bin/schemathesis"));
    }
    candidates.push(PathBuf::from("schemathesis"));
    candidates.into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Few examples per operation, so that the test stays cheap in CI. Most requests come from
/// Schemathesis's coverage phase (the boundary values of every schema keyword, about 200 with
/// this document), which this number does not shrink; it caps the random phase.
const MAX_EXAMPLES: &str = "10";

/// `schemathesis run` of `doc` against `base_url` from `dir`, signing as the demo app and
/// sending the main merchant and its first mall in about half of the bodies.
fn run_schemathesis(st: &Path, dir: &Path, doc: &Path, base_url: &str, extra: &[&str]) -> Output {
    let data = Dataset::new(Shape::Standard);
    let mall = data.malls_of(MAIN.merchant_id)[0];
    Command::new(st)
        .current_dir(dir)
        .env("PYTHONPATH", repo().join("tests/it"))
        .env("SCHEMATHESIS_HOOKS", "schemathesis_hooks")
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .env("MALLCHECK_APPID", DEMO_APPID)
        .env("MALLCHECK_MERCHANT_ID", MAIN.merchant_id)
        .env("MALLCHECK_MERCHANT_USER_ID", MAIN.merchant_user_id)
        .env("MALLCHECK_ROLE", MAIN.role)
        .env("MALLCHECK_MALL_SN", &mall.mall_sn)
        .env("MALLCHECK_MALL_SIGNATURE", &mall.signature)
        .env("NO_COLOR", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .arg("run")
        .arg(doc)
        .args(["--url", base_url])
        .args(["-H", &format!("Authorization: {DEMO_APPID} SIGN")])
        .args(["--max-examples", MAX_EXAMPLES, "--seed", "1"])
        .args(["--request-timeout", "10", "--no-color"])
        .args(extra)
        .output()
        .expect("run schemathesis")
}

#[test]
fn schemathesis_finds_no_failure_against_serve_with_the_exported_document() {
    let Some(st) = schemathesis() else {
        assert!(
            std::env::var_os("MALLCHECK_REQUIRE_TOOLS").is_none(),
            "MALLCHECK_REQUIRE_TOOLS is set but Schemathesis is missing \
             (run .ci/install-schemathesis.sh)"
        );
        eprintln!(
            "note: Schemathesis is not installed; skipped running it against mallcheck serve \
             (see .ci/install-schemathesis.sh)"
        );
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let out = mallcheck(dir.path(), &["openapi", "--output", "openapi.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = dir.path().join("openapi.json");
    let server = Server::start(&[]);

    let checked = run_schemathesis(
        &st,
        dir.path(),
        &doc,
        &server.base_url,
        &["--checks", "all"],
    );
    let report = format!("{}{}", text(&checked.stdout), text(&checked.stderr));
    assert!(
        checked.status.success(),
        "Schemathesis finds failures:\n{report}"
    );
    let generated = report
        .lines()
        .find_map(|l| l.trim().split_once(" generated, "))
        .and_then(|(n, _)| n.parse::<u32>().ok());
    assert!(
        generated.is_some_and(|n| n >= 60),
        "Schemathesis sent at least 30 requests to each operation:\n{report}"
    );

    // The same run can fail: with the request side left open, as it was, Schemathesis sends
    // `{}` as a valid body and the server's 400 is a schema-valid request rejected (ST202).
    let mut loose: Value =
        serde_json::from_str(&std::fs::read_to_string(&doc).expect("written")).expect("JSON");
    for name in ["mall-list-request", "products-request"] {
        if let Some(map) = loose["components"]["schemas"][name].as_object_mut() {
            map.remove("required");
        }
    }
    let loose_path = dir.path().join("loose.json");
    std::fs::write(&loose_path, loose.to_string()).expect("write");
    let rejected = run_schemathesis(
        &st,
        dir.path(),
        &loose_path,
        &server.base_url,
        &[
            "--checks",
            "positive_data_acceptance",
            "--max-failures",
            "1",
        ],
    );
    let report = text(&rejected.stdout);
    assert!(
        !rejected.status.success() && report.contains("ST202"),
        "a loose request schema is caught:\n{report}"
    );
}
