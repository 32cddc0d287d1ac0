//! Every shipped case file parses with mallcheck's parser and validates against
//! `schemas/case.schema.json`, and the schema's closed lists agree with the parser's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mallcheck::case::model::CaseKind;
use mallcheck::case::parse::{EXCHANGE_CHECKS, NO_DATA_CHECKS, ParseContext, parse_file};
use mallcheck::case::vars::KNOWN_VARS;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files_under(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).expect("readable directory") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| extensions.contains(&e))
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Names of the response schemas a case may name: the files of `schemas/` but the case schema.
fn schema_names() -> Vec<String> {
    files_under(&root().join("schemas"), &["json"])
        .iter()
        .filter_map(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".json"))
        })
        .filter(|n| *n != "case.schema")
        .map(str::to_string)
        .collect()
}

fn dummy_vars() -> BTreeMap<String, String> {
    KNOWN_VARS
        .iter()
        .map(|k| (k.to_string(), format!("dummy-{}", k.to_lowercase())))
        .collect()
}

/// The file as plain JSON, read with the same strict YAML options as the parser.
fn to_json(path: &Path, text: &str) -> Value {
    if path.extension().is_some_and(|e| e == "json") {
        return serde_json::from_str(text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    let options = serde_saphyr::options! {
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
    };
    serde_saphyr::from_str_with_options(text, options)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn case_schema() -> Value {
    let text = std::fs::read_to_string(root().join("schemas/case.schema.json"))
        .expect("case schema readable");
    serde_json::from_str(&text).expect("case schema is JSON")
}

#[test]
fn case_schema_is_a_valid_2020_12_schema() {
    let schema = case_schema();
    assert!(
        jsonschema::meta::is_valid(&schema),
        "case.schema.json fails the 2020-12 meta-schema"
    );
    jsonschema::draft202012::new(&schema).expect("case schema compiles");
}

#[test]
fn every_shipped_case_parses_and_matches_the_case_schema() {
    let validator = jsonschema::draft202012::new(&case_schema()).expect("case schema compiles");
    let names = schema_names();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let vars = dummy_vars();
    let cx = ParseContext {
        vars: &vars,
        schema_names: &name_refs,
    };
    let files = files_under(&root().join("cases"), &["yaml", "yml", "json"]);
    assert!(files.len() >= 5, "shipped case files: {files:?}");
    let mut total = 0;
    let mut endpoints = std::collections::BTreeSet::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("case file readable");
        let file = parse_file(path, text.clone(), &cx)
            .unwrap_or_else(|d| panic!("{}", mallcheck::diag::render(&d, false)));
        total += file.cases.len();
        for case in &file.cases {
            endpoints.insert(case.endpoint().name());
            if let CaseKind::Exchange(x) = &case.kind {
                let body = x
                    .request
                    .body
                    .as_ref()
                    .map(|b| b.value.to_string())
                    .unwrap_or_default();
                assert!(
                    !body.contains("${"),
                    "{}: unsubstituted variable in {body}",
                    case.name.value
                );
            }
        }
        let errors: Vec<String> = validator
            .iter_errors(&to_json(path, &text))
            .map(|e| format!("{} at {}: {e}", path.display(), e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}", errors.join("\n"));
    }
    assert!(total >= 32, "at least 32 shipped cases, found {total}");
    assert_eq!(
        endpoints.len(),
        2,
        "both endpoints are covered: {endpoints:?}"
    );
}

#[test]
fn case_schema_rejects_typos_the_parser_rejects() {
    let validator = jsonschema::draft202012::new(&case_schema()).expect("case schema compiles");
    let bad = [
        (
            "unknown key",
            r#"{"cases": [{"name": "a", "endpoint": "mall-list", "request": {"body": {}}, "expcet": {}}]}"#,
        ),
        (
            "two kinds",
            r#"{"cases": [{"name": "a", "endpoint": "mall-list", "request": {"body": {}}, "walk": {"body": {}, "sizes": [1]}}]}"#,
        ),
        (
            "body and raw",
            r#"{"cases": [{"name": "a", "endpoint": "mall-list", "request": {"body": {}, "raw": "x"}}]}"#,
        ),
        (
            "two operators",
            r#"{"cases": [{"name": "a", "endpoint": "mall-list", "request": {"body": {}}, "expect": {"assert": [{"path": "$", "count": 1, "exists": true}]}}]}"#,
        ),
        (
            "zero size",
            r#"{"cases": [{"name": "a", "walk": {"body": {}, "sizes": [0]}}]}"#,
        ),
        (
            "bad pointer",
            r#"{"cases": [{"name": "a", "walk": {"body": {}, "sizes": [1], "cursor": {"last-record": "mallSn"}}}]}"#,
        ),
        (
            "status type",
            r#"{"cases": [{"name": "a", "endpoint": "mall-list", "request": {"body": {}}, "expect": {"status": "two hundred"}}]}"#,
        ),
    ];
    for (why, text) in bad {
        let instance: Value = serde_json::from_str(text).expect("test JSON");
        assert!(
            !validator.is_valid(&instance),
            "{why}: accepted by the case schema"
        );
    }
}

#[test]
fn check_lists_of_the_schema_match_the_parser() {
    let schema = case_schema();
    let ids = |pointer: &str| -> Vec<String> {
        let mut v: Vec<String> = schema
            .pointer(pointer)
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("{pointer} is an array"))
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect();
        v.sort();
        v
    };
    let sorted = |checks: &[&mallcheck::verdict::check::Check]| -> Vec<String> {
        let mut v: Vec<String> = checks.iter().map(|c| c.id.to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(
        ids("/$defs/expect/properties/checks/items/enum"),
        sorted(EXCHANGE_CHECKS)
    );
    assert_eq!(
        ids("/$defs/expect/properties/no-data/enum"),
        sorted(NO_DATA_CHECKS)
    );
}

#[test]
fn limits_of_the_schema_match_the_parser() {
    use mallcheck::case::model::limits;
    let schema = case_schema();
    let number = |pointer: &str| -> u64 {
        schema
            .pointer(pointer)
            .and_then(Value::as_u64)
            .unwrap_or_else(|| panic!("{pointer} is a number"))
    };
    let rows: &[(&str, u64)] = &[
        (
            "/$defs/case/properties/name/maxLength",
            limits::MAX_NAME_CHARS as u64,
        ),
        (
            "/$defs/walk/properties/sizes/maxItems",
            limits::MAX_WALK_SIZES as u64,
        ),
        (
            "/$defs/walk/properties/sizes/items/maximum",
            limits::MAX_PAGE_SIZE,
        ),
        (
            "/$defs/walk/properties/max-pages/maximum",
            limits::MAX_WALK_PAGES,
        ),
        (
            "/$defs/productsSweep/properties/sample/maximum",
            limits::MAX_SAMPLE,
        ),
        (
            "/$defs/snapshot/oneOf/1/properties/malls/maximum",
            limits::MAX_SNAPSHOT_MALLS,
        ),
        (
            "/$defs/expect/properties/assert/maxItems",
            limits::MAX_ASSERTIONS as u64,
        ),
        (
            "/$defs/assertion/properties/one-of/maxItems",
            limits::MAX_ONE_OF as u64,
        ),
        (
            "/$defs/assertion/properties/path/maxLength",
            limits::MAX_JSON_PATH_CHARS as u64,
        ),
        (
            "/$defs/assertion/properties/matches/maxLength",
            limits::MAX_REGEX_CHARS as u64,
        ),
    ];
    for (pointer, limit) in rows {
        assert_eq!(number(pointer), *limit, "{pointer}");
    }
}
