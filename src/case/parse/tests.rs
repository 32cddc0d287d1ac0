//! Tests of case-file parsing: the model built, every problem at its position, limits.

use std::path::PathBuf;

use serde_json::Value;

use super::expect::scan_json_path;
use super::files::load_paths;
use super::lower::{pointer_problem, suggest};
use super::*;
use crate::case::model::{AssertOp, CaseKind, CursorRule, ExpectedStatus, limits};
use crate::case::vars;
use crate::verdict::endpoint::{AuthMode, Endpoint};

const SCHEMAS: &[&str] = &["mall-list-response", "products-response", "mall"];

fn vars() -> BTreeMap<String, String> {
    vars::KNOWN_VARS
        .iter()
        .map(|k| (k.to_string(), format!("v-{k}")))
        .collect()
}

fn parse(name: &str, text: &str) -> Result<CaseFile, Vec<Diagnostic>> {
    let v = vars();
    let cx = ParseContext {
        vars: &v,
        schema_names: SCHEMAS,
    };
    parse_file(Path::new(name), text.to_string(), &cx)
}

fn errors(text: &str) -> Vec<Diagnostic> {
    match parse("cases/t.yaml", text) {
        Ok(_) => panic!("expected errors for:\n{text}"),
        Err(d) => d,
    }
}

fn one_error(text: &str) -> Diagnostic {
    let mut d = errors(text);
    assert_eq!(d.len(), 1, "{}", crate::diag::render(&d, false));
    d.remove(0)
}

const VALID: &str = r#"
cases:
  - name: first page
    tags: [smoke, mall-list]
    endpoint: mall-list
    request:
      body:
        appid: "${MALLCHECK_APPID}"
        filter: { seller: { merchantId: "${MALLCHECK_MERCHANT_ID}", merchantUserId: "u-${MALLCHECK_ROLE}", role: NO } }
        sort: { sortField: id, sort: DESC }
        cursor: { cursorField: id, endCursor: null, count: 10, code: 007 }
      headers: { X-env-flag: "1" }
      auth: wrong-signature
    expect:
      status: 200
      schema: mall-list-response
      checks: [ownership.merchant]
      no-data: auth.required
      assert:
        - { path: "$.code", equals: "0000" }
        - { path: "$.data[*].mallSn", matches: "^[0-9]+$" }
        - { path: "$.data[*]", count: 10 }
        - { path: "$.data[*].state", one-of: [0, 1, 2] }
        - { path: "$.data[0].topTime", type: string }
        - { path: "$.data[0].nope", exists: false }
    snapshot: { redact: [".data[].orderStatistics"], sort: [] }
  - name: raw body
    endpoint: mall-products
    request: { raw: "not json $${X}", auth: missing }
    expect: { schema: none }
    snapshot: true
  - name: walk
    walk:
      body: { appid: x }
      sizes: [1, 3, 10, 100]
      repeat: true
      cursor: { response: /nextCursor }
      max-pages: 20000
      ownership: true
  - name: sweep
    products-sweep:
      list-body: { appid: x }
      seller: { merchantId: m }
      other-seller: { merchantId: o }
      sample: 5
      order: true
      tamper-signature: true
"#;

#[test]
fn valid_file_builds_the_whole_model() {
    let file = match parse("cases/ok.yaml", VALID) {
        Ok(f) => f,
        Err(d) => panic!("{}", crate::diag::render(&d, false)),
    };
    assert_eq!(file.cases.len(), 4);
    let first = &file.cases[0];
    assert_eq!(first.name.value, "first page");
    assert_eq!(first.tags, vec!["smoke", "mall-list"]);
    assert_eq!(file.source.line_col(first.name.span.start), (3, 11));
    let CaseKind::Exchange(x) = &first.kind else {
        panic!("exchange")
    };
    assert_eq!(x.endpoint, Endpoint::MallList);
    let body = &x.request.body.as_ref().expect("body").value;
    assert_eq!(body["appid"], "v-MALLCHECK_APPID");
    assert_eq!(
        body["filter"]["seller"]["merchantUserId"],
        "u-v-MALLCHECK_ROLE"
    );
    assert_eq!(
        body["filter"]["seller"]["role"], "NO",
        "strict booleans keep NO a string"
    );
    assert_eq!(body["cursor"]["code"], "007", "leading zeros stay a string");
    assert_eq!(body["cursor"]["endCursor"], Value::Null);
    assert_eq!(body["cursor"]["count"], 10);
    assert_eq!(
        x.request.headers,
        vec![("X-env-flag".to_string(), "1".to_string())]
    );
    assert_eq!(x.request.auth, AuthMode::WrongSignature);
    assert_eq!(
        x.expect.status.as_ref().map(|s| s.value),
        Some(ExpectedStatus::Code(200))
    );
    assert!(x.expect.schema_enabled);
    assert_eq!(
        x.expect.schema.as_ref().map(|s| s.value.as_str()),
        Some("mall-list-response")
    );
    assert_eq!(x.expect.checks[0].check.id, catalog::OWNERSHIP_MERCHANT.id);
    assert_eq!(
        x.expect.no_data.as_ref().map(|c| c.check.id),
        Some(catalog::AUTH_REQUIRED.id)
    );
    let ops: Vec<&str> = x
        .expect
        .asserts
        .iter()
        .map(|a| match &a.op {
            AssertOp::Equals(v) if v == "0000" => "equals",
            AssertOp::Matches(r) if r.as_str() == "^[0-9]+$" => "matches",
            AssertOp::Count(10) => "count",
            AssertOp::OneOf(v) if v.len() == 3 => "one-of",
            AssertOp::Type(t) if t == "string" => "type",
            AssertOp::Exists(false) => "exists",
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        ops,
        ["equals", "matches", "count", "one-of", "type", "exists"]
    );
    assert_eq!(
        x.snapshot.as_ref().map(|s| s.redact.clone()),
        Some(vec![".data[].orderStatistics".to_string()])
    );

    let CaseKind::Exchange(raw) = &file.cases[1].kind else {
        panic!("exchange")
    };
    assert_eq!(
        raw.request.raw.as_ref().map(|r| r.value.as_str()),
        Some("not json ${X}")
    );
    assert_eq!(raw.request.auth, AuthMode::Missing);
    assert!(!raw.expect.schema_enabled);
    assert!(raw.snapshot.is_some());
    assert_eq!(file.cases[1].endpoint(), Endpoint::MallProducts);

    let CaseKind::Walk(w) = &file.cases[2].kind else {
        panic!("walk")
    };
    assert_eq!(w.sizes, [1, 3, 10, 100]);
    assert!(w.repeat && w.ownership);
    assert_eq!(w.cursor, CursorRule::Response("/nextCursor".to_string()));
    assert_eq!(w.max_pages, Some(20000));

    let CaseKind::ProductsSweep(s) = &file.cases[3].kind else {
        panic!("sweep")
    };
    assert_eq!(s.seller["merchantId"], "m");
    assert_eq!(
        s.other_seller.as_ref().map(|o| o["merchantId"].clone()),
        Some(Value::from("o"))
    );
    assert_eq!(s.sample, Some(5));
    assert!(s.order && s.tamper_signature);
}

#[test]
fn defaults_apply_when_optional_keys_are_absent() {
    let file = parse(
        "cases/d.yaml",
        "cases:\n  - name: a\n    endpoint: mall-list\n    request: { body: {} }\n  - name: w\n    walk: { body: {}, sizes: [3] }\n",
    )
    .unwrap_or_else(|d| panic!("{}", crate::diag::render(&d, false)));
    let CaseKind::Exchange(x) = &file.cases[0].kind else {
        panic!("exchange")
    };
    assert_eq!(x.request.auth, AuthMode::Signed);
    assert!(x.expect.schema_enabled && x.expect.schema.is_none() && x.expect.status.is_none());
    assert!(x.snapshot.is_none());
    let CaseKind::Walk(w) = &file.cases[1].kind else {
        panic!("walk")
    };
    assert_eq!(w.cursor, CursorRule::LastRecord("/mallSn".to_string()));
    assert!(!w.repeat && !w.ownership && w.max_pages.is_none());
}

#[test]
fn json_case_files_parse_into_the_same_model() {
    let text = r#"{"$schema": "../schemas/case.schema.json", "cases": [
  {"name": "j", "endpoint": "mall-list", "request": {"body": {"appid": "${MALLCHECK_APPID}", "id": "007"}},
   "expect": {"status": 200}}]}"#;
    let file = parse("cases/j.json", text)
        .unwrap_or_else(|d| panic!("{}", crate::diag::render(&d, false)));
    let CaseFile { cases, .. } = file;
    let CaseKind::Exchange(x) = &cases[0].kind else {
        panic!("exchange")
    };
    assert_eq!(
        x.request.body.as_ref().map(|b| b.value["appid"].clone()),
        Some(Value::from("v-MALLCHECK_APPID"))
    );
}

/// One row per problem: the file text, the line the diagnostic must point at, a fragment of
/// its message and (optionally) of its help.
#[test]
fn each_problem_is_reported_at_its_line() {
    let base = |body: &str| format!("cases:\n  - name: a\n{body}");
    let rows: &[(&str, String, usize, &str, &str)] = &[
        ("typo in key", base("    endpoint: mall-list\n    request: { body: {} }\n    expcet: {}\n"), 5, "unknown key `expcet`", "did you mean `expect`?"),
        ("far-off key lists valid keys", base("    endpoint: mall-list\n    request: { body: {} }\n    zzzzzz: 1\n"), 5, "unknown key", "valid keys in a case"),
        ("unknown endpoint", base("    endpoint: mall-lists\n    request: { body: {} }\n"), 3, "unknown endpoint", "did you mean `mall-list`?"),
        ("unknown check", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      checks: [ownership.merchnat]\n"), 6, "unknown check id", "did you mean `ownership.merchant`?"),
        ("check not runnable on one exchange", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      checks: [paging.duplicate]\n"), 6, "cannot be used in `expect.checks`", "ownership.merchant"),
        ("unknown no-data check", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      no-data: auth.requird\n"), 6, "unknown check id", "auth.required"),
        ("unknown schema", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      schema: mall-list-respons\n"), 6, "unknown schema", "mall-list-response"),
        ("bad jsonpath", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert:\n        - { path: \"$.data[\", count: 1 }\n"), 7, "invalid JSONPath", ""),
        ("bad regex", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert:\n        - path: $.code\n          matches: \"^[0-9+$\"\n"), 8, "invalid regex", ""),
        ("two operators", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert:\n        - path: $.code\n          equals: 1\n          count: 1\n"), 9, "one operator", ""),
        ("no operator", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert:\n        - path: $.code\n"), 7, "needs an operator", ""),
        ("unknown type", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert:\n        - { path: $.code, type: strng }\n"), 7, "unknown JSON type", "did you mean `string`?"),
        ("status type", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      status: two hundred\n"), 6, "`expect.status` must be an HTTP status code (100-599) or a class such as `2xx`", ""),
        ("status class", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      status: 6xx\n"), 6, "found the string `6xx`", ""),
        ("status range", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      status: 99\n"), 6, "100-599", ""),
        ("undefined variable", base("    endpoint: mall-list\n    request:\n      body: { appid: \"${MALLCHECK_APPI}\" }\n"), 5, "undefined variable `MALLCHECK_APPI`", "did you mean `MALLCHECK_APPID`?"),
        ("body and raw", base("    endpoint: mall-list\n    request:\n      body: {}\n      raw: x\n"), 6, "`body` and `raw` are both set", ""),
        ("no body", base("    endpoint: mall-list\n    request: { auth: signed }\n"), 4, "needs a `body` or a `raw`", ""),
        ("unknown auth", base("    endpoint: mall-list\n    request: { body: {}, auth: unsigned }\n"), 4, "unknown auth mode", ""),
        ("two kinds", base("    endpoint: mall-list\n    request: { body: {} }\n    walk: { body: {}, sizes: [1] }\n"), 5, "exactly one kind", ""),
        ("no kind", base("    tags: [x]\n"), 2, "needs a kind", ""),
        ("empty sizes", base("    walk: { body: {}, sizes: [] }\n"), 3, "`walk.sizes` is empty", ""),
        ("zero size", base("    walk: { body: {}, sizes: [1, 0] }\n"), 3, "at least 1", ""),
        ("bad pointer", base("    walk: { body: {}, sizes: [1], cursor: { last-record: mallSn } }\n"), 3, "invalid JSON Pointer", ""),
        ("request on a walk", base("    walk: { body: {}, sizes: [1] }\n    request: { body: {} }\n"), 4, "applies only to `endpoint` cases", ""),
        ("bad selector", base("    endpoint: mall-list\n    request: { body: {} }\n    snapshot: { redact: [\"data[]\"] }\n"), 5, "invalid snapshot selector", ""),
        ("sampled malls of the list", base("    endpoint: mall-list\n    request: { body: {} }\n    snapshot: { malls: 3 }\n"), 5, "`snapshot.malls` applies to `endpoint: mall-products` cases only", ""),
        ("walk snapshot of products", base("    endpoint: mall-products\n    request: { body: {} }\n    snapshot: { walk: true }\n"), 5, "`snapshot.walk` applies to `endpoint: mall-list` cases only", ""),
        ("zero sample", base("    products-sweep: { list-body: {}, seller: {}, sample: 0 }\n"), 3, "at least 1", ""),
        ("duplicate names", "cases:\n  - name: a\n    walk: { body: {}, sizes: [1] }\n  - name: a\n    walk: { body: {}, sizes: [1] }\n".to_string(), 4, "duplicate case name", "line 2"),
        ("duplicate key", base("    endpoint: mall-list\n    endpoint: mall-list\n"), 4, "duplicate", ""),
        ("syntax error", base("    endpoint: [mall-list\n    request: x\n"), 4, "invalid YAML", ""),
        ("missing cases", "case: []\n".to_string(), 1, "unknown key `case`", "did you mean `cases`?"),
        ("authorization header", base("    endpoint: mall-list\n    request: { body: {}, headers: { Authorization: x } }\n"), 4, "Authorization header", ""),
        ("bad hex", base("    endpoint: mall-list\n    request: { raw-hex: \"7bz\" }\n"), 4, "`request.raw-hex` is not hex", "two hex digits"),
        ("raw and raw-hex", base("    endpoint: mall-list\n    request:\n      raw: x\n      raw-hex: \"7b\"\n"), 6, "`raw` and `raw-hex` are both set", ""),
        ("legacy fuzz regression", "{\"endpoint\": \"mall-list\", \"property\": \"fuzz.timely\", \"body\": {}}\n".to_string(), 1, "fuzz regression in the format of earlier", "run `mallcheck fuzz` once"),
    ];
    for (why, text, line, message, help) in rows {
        let diags = errors(text);
        let hit = diags.iter().find(|d| d.message.contains(message));
        let Some(d) = hit else {
            panic!(
                "{why}: no diagnostic containing {message:?}:\n{}",
                crate::diag::render(&diags, false)
            )
        };
        assert_eq!(d.line_col().map(|(l, _)| l), Some(*line), "{why}: {d}");
        assert!(
            d.help.as_deref().unwrap_or("").contains(help),
            "{why}: help {:?}",
            d.help
        );
    }
}

/// Each fixture in `tests/fixtures/bad-cases/` holds one problem; its rendered diagnostic
/// must name the file and the line of the problem.
#[test]
fn bad_fixtures_render_a_diagnostic_naming_file_and_line() {
    let rows: &[(&str, usize, &str)] = &[
        (
            "bad-check-id.yaml",
            8,
            "unknown check id `ownership.merchnat`",
        ),
        ("bad-jsonpath.yaml", 9, "invalid JSONPath"),
        ("bad-regex.yaml", 10, "invalid regex"),
        ("duplicate-key.yaml", 9, "duplicate mapping key"),
        (
            "status-type.yaml",
            8,
            "`expect.status` must be an HTTP status code (100-599) or a class such as `2xx`, found the string `two hundred`",
        ),
        ("two-kinds.yaml", 7, "exactly one kind"),
        (
            "undefined-variable.yaml",
            7,
            "undefined variable `MALLCHECK_APPI`",
        ),
        ("unknown-key.yaml", 7, "unknown key `expcet`"),
        ("yaml-syntax.yaml", 5, "invalid YAML"),
    ];
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad-cases");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixture directory")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    on_disk.sort();
    let listed: Vec<&str> = rows.iter().map(|r| r.0).collect();
    assert_eq!(
        on_disk, listed,
        "every fixture has a row and every row a fixture"
    );
    let v = vars();
    let cx = ParseContext {
        vars: &v,
        schema_names: SCHEMAS,
    };
    for (name, line, message) in rows {
        let shown = format!("tests/fixtures/bad-cases/{name}");
        let text = std::fs::read_to_string(dir.join(name)).expect("fixture readable");
        let diags = match parse_file(Path::new(&shown), text, &cx) {
            Ok(_) => panic!("{name}: parsed without error"),
            Err(d) => d,
        };
        let out = crate::diag::render(&diags, false);
        assert_eq!(diags.len(), 1, "{name}: one problem per fixture:\n{out}");
        assert!(
            out.contains(&format!("{shown}:{line}:")),
            "{name}: file and line {line}:\n{out}"
        );
        assert!(out.contains(message), "{name}: message {message:?}:\n{out}");
    }
}

#[test]
fn load_paths_reads_directories_recursively_and_reports_every_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).expect("mkdir");
    let ok = "cases:\n  - name: a\n    walk: { body: {}, sizes: [1] }\n";
    std::fs::write(dir.path().join("b.yaml"), ok).expect("write");
    std::fs::write(sub.join("a.yml"), ok).expect("write");
    std::fs::write(dir.path().join("notes.txt"), "not a case").expect("write");
    let v = vars();
    let cx = ParseContext {
        vars: &v,
        schema_names: SCHEMAS,
    };
    let files = load_paths(&[dir.path().to_path_buf()], &cx)
        .unwrap_or_else(|d| panic!("{}", crate::diag::render(&d, false)));
    let names: Vec<PathBuf> = files
        .iter()
        .map(|f| {
            f.source
                .path
                .strip_prefix(dir.path())
                .expect("under dir")
                .to_path_buf()
        })
        .collect();
    assert_eq!(names, [PathBuf::from("b.yaml"), PathBuf::from("sub/a.yml")]);

    std::fs::write(dir.path().join("c.json"), "{\"cases\": [{\"name\": 1}]}").expect("write");
    std::fs::write(sub.join("d.yaml"), "cases: [}").expect("write");
    let missing = dir.path().join("missing.yaml");
    let diags = load_paths(&[dir.path().to_path_buf(), missing.clone()], &cx).expect_err("errors");
    let paths: Vec<&Path> = diags.iter().map(|d| d.path.as_path()).collect();
    assert!(paths.contains(&missing.as_path()), "{paths:?}");
    assert!(
        paths.contains(&dir.path().join("c.json").as_path()),
        "{paths:?}"
    );
    assert!(paths.contains(&sub.join("d.yaml").as_path()), "{paths:?}");
    let empty = tempfile::tempdir().expect("temp dir");
    let diags = load_paths(&[empty.path().to_path_buf()], &cx).expect_err("no case files");
    assert!(diags[0].message.contains("no case files"), "{}", diags[0]);
}

#[test]
fn every_error_of_a_file_is_reported_in_position_order() {
    let text = "cases:\n  - name: a\n    endpoint: mall-lst\n    request: { body: {} }\n    expect:\n      checks: [nope]\n      statuss: 200\n  - name: b\n    walk: { body: {}, sizes: [] }\n";
    let diags = errors(text);
    let lines: Vec<usize> = diags
        .iter()
        .filter_map(|d| d.line_col().map(|(l, _)| l))
        .collect();
    assert_eq!(
        lines,
        [3, 6, 7, 9],
        "{}",
        crate::diag::render(&diags, false)
    );
}

#[test]
fn undefined_variable_points_inside_the_string_and_lists_known_names() {
    let text = "cases:\n  - name: a\n    endpoint: mall-list\n    request:\n      body: { appid: \"x-${NOPE}\" }\n";
    let d = one_error(text);
    assert_eq!(d.line_col(), Some((5, 25)));
    assert!(
        d.help
            .as_deref()
            .unwrap_or("")
            .contains("MALLCHECK_MALL_SIGNATURE"),
        "{:?}",
        d.help
    );
}

#[test]
fn bad_jsonpath_message_carries_the_parser_reason() {
    let text = "cases:\n  - name: a\n    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert: [{ path: \"$.data[?\", count: 1 }]\n";
    let d = one_error(text);
    assert!(
        d.message.contains("invalid JSONPath `$.data[?`:"),
        "{}",
        d.message
    );
    assert!(d.message.contains("position"), "{}", d.message);
}

#[test]
fn bad_jsonpath_with_non_ascii_text_does_not_panic() {
    let text = "cases:\n  - name: a\n    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert: [{ path: \"$.名前[\", count: 1 }]\n";
    let d = one_error(text);
    assert!(d.message.contains("invalid JSONPath"), "{}", d.message);
}

#[test]
fn pointer_rules_follow_rfc6901() {
    assert_eq!(pointer_problem(""), None);
    assert_eq!(pointer_problem("/mallSn"), None);
    assert_eq!(pointer_problem("/a~1b~0"), None);
    assert!(pointer_problem("mallSn").is_some());
    assert!(pointer_problem("/a~2").is_some());
}

#[test]
fn suggestions_are_close_matches_only() {
    assert_eq!(
        suggest("expcet", EXPECT_KEYS.iter().copied().chain(["expect"])),
        Some("expect")
    );
    assert_eq!(
        suggest("STATUS", EXPECT_KEYS.iter().copied()),
        Some("status")
    );
    assert_eq!(suggest("banana", EXPECT_KEYS.iter().copied()), None);
}

/// One row per limit of `model::limits` and per filter pattern: the file text, the line
/// the diagnostic must point at and a fragment of its message.
#[test]
fn limits_and_filter_regexes_are_load_time_errors_at_their_line() {
    let exchange = |expect: &str| {
        format!(
            "cases:\n  - name: a\n    endpoint: mall-list\n    request: {{ body: {{}} }}\n    expect:\n{expect}"
        )
    };
    let many = |n: usize, item: &str| vec![item; n].join(", ");
    let rows: Vec<(&str, String, usize, String)> = vec![
        ("bad regex in a filter", exchange("      assert:\n        - { path: \"$.data[?search(@.mallSn,'[A-Z')]\", count: 0 }\n"), 7, "invalid regex `[A-Z` in `search()`".into()),
        ("bad regex in match()", exchange("      assert:\n        - path: $.data[?match(@.mallSn, \"(x\")]\n          exists: false\n"), 7, "in `match()`".into()),
        ("too many page sizes", format!("cases:\n  - name: a\n    walk:\n      body: {{}}\n      sizes: [{}]\n", many(10_000, "1")), 5, format!("`walk.sizes` has 10000 entries, more than the limit of {}", limits::MAX_WALK_SIZES)),
        ("page size too large", "cases:\n  - name: a\n    walk: { body: {}, sizes: [1, 10001] }\n".into(), 3, "a page size must be at most 10000, found 10001".into()),
        ("max-pages too large", "cases:\n  - name: a\n    walk: { body: {}, sizes: [1], max-pages: 100000000 }\n".into(), 3, "`walk.max-pages` must be at most".into()),
        ("sample too large", "cases:\n  - name: a\n    products-sweep: { list-body: {}, seller: {}, sample: 1000000 }\n".into(), 3, "`sample` must be at most".into()),
        ("too many assertions", exchange(&format!("      assert: [{}]\n", many(101, "{ path: $.code, exists: true }"))), 6, "`expect.assert` has 101 entries".into()),
        ("one-of too long", exchange(&format!("      assert:\n        - path: $.code\n          one-of: [{}]\n", many(1001, "1"))), 8, "`one-of` has 1001 entries".into()),
        ("regex too long", exchange(&format!("      assert:\n        - path: $.code\n          matches: \"{}\"\n", "a".repeat(1001))), 8, "it is 1001 characters, more than the limit".into()),
        ("regex compiles too large", exchange("      assert:\n        - path: $.code\n          matches: \"\\\\w{1000}\\\\w{1000}\"\n"), 8, "size limit".into()),
        ("filter regex compiles too large", exchange("      assert:\n        - { path: \"$.data[?search(@.mallSn, '\\\\\\\\w{1000}\\\\\\\\w{1000}')]\", count: 0 }\n"), 7, "size limit".into()),
        ("path too long", exchange(&format!("      assert:\n        - {{ path: \"$.{}\", exists: false }}\n", "a".repeat(1000))), 7, "the JSONPath is 1002 characters".into()),
        ("too many descendant segments", exchange("      assert:\n        - { path: \"$..data..x..y\", exists: false }\n"), 7, "3 descendant segments".into()),
        ("body too large", format!("cases:\n  - name: a\n    endpoint: mall-list\n    request:\n      body: {{ x: \"{}\" }}\n", "y".repeat(limits::MAX_BODY_BYTES)), 5, "`request.body` is 1048584 bytes as JSON".into()),
        ("walk body too large", format!("cases:\n  - name: a\n    walk:\n      sizes: [1]\n      body: {{ x: \"{}\" }}\n", "y".repeat(limits::MAX_BODY_BYTES)), 5, "`walk.body` is".into()),
        ("raw too large", format!("cases:\n  - name: a\n    endpoint: mall-list\n    request:\n      raw: \"{}\"\n", "y".repeat(limits::MAX_BODY_BYTES + 1)), 5, "`request.raw` is 1048577 bytes".into()),
        ("control character in a name", "cases:\n  - name: \"a\\x1b[2Jb\"\n    walk: { body: {}, sizes: [1] }\n".into(), 2, "`name` contains the control character U+001B".into()),
        ("bidi override in a tag", "cases:\n  - name: a\n    tags: [ok, \"x\\u202Ey\"]\n    walk: { body: {}, sizes: [1] }\n".into(), 3, "a tag contains the control character U+202E".into()),
        ("name too long", format!("cases:\n  - name: {}\n    walk: {{ body: {{}}, sizes: [1] }}\n", "n".repeat(201)), 2, "`name` is 201 characters".into()),
    ];
    for (why, text, line, message) in &rows {
        let diags = errors(text);
        let Some(d) = diags.iter().find(|d| d.message.contains(message.as_str())) else {
            panic!(
                "{why}: no diagnostic containing {message:?}:\n{}",
                crate::diag::render(&diags, false)
            )
        };
        assert_eq!(d.line_col().map(|(l, _)| l), Some(*line), "{why}: {d}");
    }
}

#[test]
fn a_filter_regex_error_points_at_the_pattern() {
    let text = "cases:\n  - name: a\n    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert:\n        - { path: \"$.data[?search(@.mallSn,'[A-Z')]\", count: 0 }\n";
    let d = one_error(text);
    let span = d.span.clone().expect("span");
    assert_eq!(&text[span], "'[A-Z'", "{d}");
}

#[test]
fn limits_at_their_maximum_still_load() {
    let sizes = (1..=limits::MAX_WALK_SIZES as u64)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let text = format!(
        "cases:\n  - name: {}\n    walk: {{ body: {{}}, sizes: [{sizes}, {}], max-pages: {} }}\n  - name: b\n    products-sweep: {{ list-body: {{}}, seller: {{}}, sample: {} }}\n  - name: c\n    endpoint: mall-list\n    request: {{ body: {{}} }}\n    expect:\n      assert:\n        - {{ path: \"$..data..mallSn\", exists: true }}\n        - {{ path: \"$.data[?match(@.mallSn, 'M[0-9]+')]\", count: 3 }}\n        - {{ path: \"$.data[?search(@.x, \\\"a'b\\\")]\", count: 0 }}\n        - {{ path: $.code, matches: \"{}\" }}\n",
        "n".repeat(limits::MAX_NAME_CHARS),
        limits::MAX_PAGE_SIZE,
        limits::MAX_WALK_PAGES,
        limits::MAX_SAMPLE,
        "a".repeat(limits::MAX_REGEX_CHARS),
    )
    .replacen(&format!(", {}]", limits::MAX_PAGE_SIZE), "]", 1)
    .replacen("sizes: [1,", &format!("sizes: [{},", limits::MAX_PAGE_SIZE), 1);
    if let Err(d) = parse("cases/max.yaml", &text) {
        panic!("{}", crate::diag::render(&d, false));
    }
}

#[test]
fn json_path_scan_finds_descendants_and_filter_patterns_outside_strings() {
    type Row<'a> = (&'a str, &'a str, usize, &'a [(&'a str, bool)]);
    let rows: &[Row] = &[
        ("plain path", "$.data[*].mallSn", 0, &[]),
        ("descendants", "$..data..mallSn", 2, &[]),
        (
            "search pattern",
            "$.data[?search(@.mallSn,'[A-Z')]",
            0,
            &[("[A-Z", false)],
        ),
        (
            "match pattern with spaces",
            "$.d[?match( @.a , \"x+\" )]",
            0,
            &[("x+", true)],
        ),
        (
            "escapes resolved",
            r#"$.d[?match(@.a, 'it\'s\u0041\\d')]"#,
            0,
            &[("it'sA\\d", true)],
        ),
        (
            "dots and names inside strings count for nothing",
            "$['..'][?@.b == 'match(x, \"y\")']",
            0,
            &[],
        ),
        (
            "pattern that is a query is not a literal",
            "$.d[?match(@.a, @.b)]",
            0,
            &[],
        ),
        (
            "first argument literal is not a pattern",
            "$.d[?match('x', @.b)]",
            0,
            &[],
        ),
        (
            "nested calls",
            "$.d[?search(@.a, 'p') && match(@.b, 'q')]",
            0,
            &[("p", false), ("q", true)],
        ),
        ("another function", "$.d[?length(@.a) == 2]", 0, &[]),
        ("a name ending in match", "$.d[?rematch(@.a, 'z')]", 0, &[]),
        (
            "a non-ASCII character before a bracket",
            "$.dataé[?search(@.a, 'z')]",
            0,
            &[("z", false)],
        ),
    ];
    for (why, path, descendants, patterns) in rows {
        let scan = scan_json_path(path);
        assert_eq!(scan.descendants.len(), *descendants, "{why}");
        let found: Vec<(&str, bool)> = scan
            .patterns
            .iter()
            .map(|p| (p.pattern.as_str(), p.anchored))
            .collect();
        assert_eq!(found, *patterns, "{why}");
        for p in &scan.patterns {
            assert!(
                matches!(path.as_bytes()[p.range.start], b'\'' | b'"'),
                "{why}"
            );
        }
    }
}

#[test]
fn a_byte_order_mark_is_dropped_from_json_and_yaml() {
    for (name, text) in [
        (
            "cases/bom.json",
            "\u{feff}{\"cases\": [{\"name\": \"a\", \"walk\": {\"body\": {}, \"sizes\": [1]}}]}",
        ),
        (
            "cases/bom.yaml",
            "\u{feff}cases:\n  - name: a\n    walk: { body: {}, sizes: [1] }\n",
        ),
    ] {
        if let Err(d) = parse(name, text) {
            panic!("{name}: {}", crate::diag::render(&d, false));
        }
    }
}

#[test]
fn problems_past_the_cap_are_counted_not_listed() {
    let keys: String = (0..80).map(|i| format!("    bad{i}: 1\n")).collect();
    let text = format!("cases:\n  - name: a\n    walk: {{ body: {{}}, sizes: [1] }}\n{keys}");
    let diags = errors(&text);
    assert_eq!(diags.len(), MAX_DIAGNOSTICS_PER_FILE + 1);
    let last = diags.last().expect("the count");
    assert!(
        last.message.contains("30 more problems not shown"),
        "{last}"
    );
}
