//! Hostile case files (issue 11, items 12-15): whatever a case file holds, loading it ends in
//! exit 0 or exit 2 with a position, never a panic, and what is printed stays bounded and free
//! of raw control characters.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use mallcheck::case::node::decode;
use mallcheck::case::parse::{ParseContext, parse_file};
use mallcheck::case::vars::KNOWN_VARS;
use mallcheck::diag::{self, Diagnostic};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngSeed, TestRunner};

use crate::common::{bin, output_text, repo};

/// `mallcheck list --cases FILE`: loads (and so checks) the file without sending anything.
fn list(dir: &Path, name: &str, contents: &[u8]) -> Output {
    std::fs::write(dir.join(name), contents).expect("write case file");
    Command::new(bin())
        .current_dir(dir)
        .env_remove("MALLCHECK_BASE_URL")
        .args(["list", "--color", "never", "--cases", name])
        .output()
        .expect("run mallcheck list")
}

/// [`list`] of a file that must be rejected (exit 2): what it printed.
fn rejected(dir: &Path, name: &str, contents: &[u8]) -> String {
    let out = list(dir, name, contents);
    let shown = output_text(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        &shown[..shown.len().min(3000)]
    );
    shown
}

/// The `file:line:col` of the first diagnostic, as numbers.
fn position(out: &str, name: &str) -> Option<(usize, usize)> {
    let at = out.find(&format!("{name}:"))? + name.len() + 1;
    let mut parts = out[at..].split(|c: char| !c.is_ascii_digit());
    let line = parts.next()?.parse().ok()?;
    let col = parts.next()?.parse().ok()?;
    Some((line, col))
}

#[test]
fn a_typo_past_column_65536_of_a_one_line_json_file_exits_2_with_its_position() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tag = "x".repeat(69_000);
    let case = format!(
        r#"{{"cases": [{{"name": "a", "tags": ["{tag}"], "walk": {{"body": {{}}, "sizes": [1]}}, "expcet": 1}}]}}"#
    );
    let col = case.find("\"expcet\"").expect("in text") + 1;
    let shown = rejected(dir.path(), "wide.json", case.as_bytes());
    assert_eq!(position(&shown, "wide.json"), Some((1, col)), "{shown}");
    assert!(shown.contains("unknown key `expcet`"), "{shown}");
    assert!(shown.len() < 4_000, "{} bytes printed", shown.len());

    let unclosed = &case[..case.len() - 2];
    let shown = rejected(dir.path(), "cut.json", unclosed.as_bytes());
    assert_eq!(
        position(&shown, "cut.json").map(|p| p.0),
        Some(1),
        "{shown}"
    );
    assert!(shown.len() < 4_000, "{} bytes printed", shown.len());
}

#[test]
fn a_megabyte_regex_is_quoted_as_a_bounded_excerpt() {
    let dir = tempfile::tempdir().expect("temp dir");
    let case = format!(
        "cases:\n  - name: a\n    endpoint: mall-list\n    request: {{ body: {{}} }}\n    expect:\n      assert:\n        - path: $.code\n          matches: \"[{}\"\n",
        "a".repeat(1_000_000)
    );
    let shown = rejected(dir.path(), "big.yaml", case.as_bytes());
    assert_eq!(
        position(&shown, "big.yaml").map(|p| p.0),
        Some(8),
        "{}",
        &shown[..shown.len().min(3000)]
    );
    assert!(shown.len() < 4_000, "{} bytes printed", shown.len());
}

#[test]
fn control_characters_from_a_case_file_are_escaped_in_diagnostics() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rows: &[(&str, &[u8], &str)] = &[
        (
            "duplicate name written with a YAML escape",
            b"cases:\n  - name: \"a\\x1b[2Jb\"\n    walk: { body: {}, sizes: [1] }\n  - name: \"a\\x1b[2Jb\"\n    walk: { body: {}, sizes: [1] }\n",
            "duplicate case name `a\\u{1b}[2Jb`",
        ),
        (
            "a name that would clear the screen on the console and in `list`",
            b"cases:\n  - name: \"a\\x1b[2Jb\"\n    walk: { body: {}, sizes: [1] }\n",
            "`name` contains the control character U+001B",
        ),
        (
            "raw escape byte in the source line",
            b"cases:\n  - name: a\x1b[2Jb\n    walk: { body: {}, sizes: [1] }\n",
            "name: a\\u{1b}[2Jb",
        ),
        (
            "unknown endpoint with a C1 control and a bidi override",
            "cases:\n  - name: a\n    endpoint: \"mall\\x9b2J\u{202e}\"\n    request: { body: {} }\n".as_bytes(),
            "unknown endpoint `mall\\u{9b}2J\\u{202e}`",
        ),
    ];
    for (why, case, want) in rows {
        let out = list(dir.path(), "ctl.yaml", case);
        let shown = output_text(&out);
        assert_eq!(out.status.code(), Some(2), "{why}: {shown}");
        for raw in ['\u{1b}', '\u{9b}', '\u{202e}'] {
            assert!(
                !shown.contains(raw),
                "{why}: {raw:?} printed raw: {shown:?}"
            );
        }
        assert!(shown.contains(want), "{why}: {shown}");
    }
}

#[test]
fn an_invalid_regex_in_a_jsonpath_filter_exits_2_at_load_with_its_position() {
    let dir = tempfile::tempdir().expect("temp dir");
    let case = "cases:\n  - name: a\n    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert:\n        - { path: \"$.data[?search(@.mallSn,'[A-Z')]\", count: 0 }\n";
    let out = list(dir.path(), "filter.yaml", case.as_bytes());
    let shown = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    let col = case
        .lines()
        .nth(6)
        .and_then(|l| l.find("'[A-Z'"))
        .expect("in text")
        + 1;
    assert_eq!(position(&shown, "filter.yaml"), Some((7, col)), "{shown}");
    assert!(
        shown.contains("invalid regex `[A-Z` in `search()`"),
        "{shown}"
    );
}

#[test]
fn a_file_that_is_not_utf8_exits_2_with_the_byte_offset_and_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = list(
        dir.path(),
        "latin1.yaml",
        b"cases:\n  - name: caf\xe9\n    walk: { body: {}, sizes: [1] }\n",
    );
    let shown = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert_eq!(position(&shown, "latin1.yaml"), Some((2, 14)), "{shown}");
    assert!(
        shown.contains("not valid UTF-8: byte 0xE9 at byte offset 20"),
        "{shown}"
    );

    let mut utf16: Vec<u8> = vec![0xff, 0xfe];
    for unit in "cases:\n  - name: a".encode_utf16() {
        utf16.extend(unit.to_le_bytes());
    }
    utf16.extend([0x00, 0xdc]);
    let out = list(dir.path(), "broken16.yaml", &utf16);
    let shown = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert_eq!(position(&shown, "broken16.yaml"), Some((2, 12)), "{shown}");
    assert!(shown.contains("not valid UTF-16"), "{shown}");
}

#[test]
fn byte_order_marks_are_accepted_in_json_yaml_and_utf16_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let yaml = "cases:\n  - name: from-yaml\n    walk: { body: {}, sizes: [1] }\n";
    let json = r#"{"cases": [{"name": "from-json", "walk": {"body": {}, "sizes": [1]}}]}"#;
    let mut utf16: Vec<u8> = vec![0xff, 0xfe];
    for unit in yaml.replace("from-yaml", "from-utf16").encode_utf16() {
        utf16.extend(unit.to_le_bytes());
    }
    let rows: &[(&str, Vec<u8>, &str)] = &[
        (
            "bom.json",
            [&[0xef, 0xbb, 0xbf], json.as_bytes()].concat(),
            "from-json",
        ),
        (
            "bom.yaml",
            [&[0xef, 0xbb, 0xbf], yaml.as_bytes()].concat(),
            "from-yaml",
        ),
        ("utf16.yaml", utf16, "from-utf16"),
    ];
    for (name, bytes, case) in rows {
        let out = list(dir.path(), name, bytes);
        let shown = output_text(&out);
        assert_eq!(out.status.code(), Some(0), "{name}: {shown}");
        assert!(shown.contains(case), "{name}: {shown}");
    }
}

#[test]
fn a_walk_with_ten_thousand_page_sizes_is_refused_at_load_with_its_position() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sizes: Vec<String> = (1..=10_000).map(|n| n.to_string()).collect();
    let case = format!(
        "cases:\n  - name: a\n    walk:\n      body: {{}}\n      sizes: [{}]\n",
        sizes.join(", ")
    );
    let shown = rejected(dir.path(), "sizes.yaml", case.as_bytes());
    assert_eq!(
        position(&shown, "sizes.yaml").map(|p| p.0),
        Some(5),
        "{shown}"
    );
    assert!(
        shown.contains("`walk.sizes` has 10000 entries, more than the limit"),
        "{shown}"
    );
    assert!(shown.len() < 4_000, "{} bytes printed", shown.len());
}

/// Loads case-file bytes the way `mallcheck run` does (decode, then parse) and checks the
/// "no panic on any input" bar: a model, or diagnostics whose first one has a position and
/// whose rendering is bounded and free of raw control characters.
fn load_checked(name: &str, bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let vars: BTreeMap<String, String> = KNOWN_VARS
        .iter()
        .map(|k| (k.to_string(), format!("v-{k}")))
        .collect();
    let schemas = ["mall-list-response", "products-response"];
    let cx = ParseContext {
        vars: &vars,
        schema_names: &schemas,
    };
    let diags = match decode(bytes) {
        Err(e) => {
            let file = std::sync::Arc::new(mallcheck::verdict::source::SourceFile {
                path: name.into(),
                text: e.text,
            });
            vec![Diagnostic::at(&file, e.span, e.message)]
        }
        Ok(text) => match parse_file(Path::new(name), text, &cx) {
            Ok(_) => return Ok(()),
            Err(d) => d,
        },
    };
    prop_assert!(!diags.is_empty());
    prop_assert!(diags[0].line_col().is_some(), "no position: {}", diags[0]);
    let out = diag::render(&diags, false);
    prop_assert!(
        !out.chars().any(|c| c.is_control() && c != '\n'),
        "raw control character in:\n{out}"
    );
    prop_assert!(
        out.len() <= 4_000 * diags.len(),
        "{} bytes for {} problems",
        out.len(),
        diags.len()
    );
    Ok(())
}

/// One edit of a valid case file.
#[derive(Debug, Clone)]
enum Edit {
    Delete(Index, usize),
    Insert(Index, &'static str),
    Duplicate(Index, usize),
    Byte(Index, u8),
}

/// Pieces that case-file syntax and its checks react to.
const TOKENS: &[&str] = &[
    ":",
    " ",
    "\n",
    "\t",
    "-",
    "[",
    "]",
    "{",
    "}",
    ",",
    "\"",
    "'",
    "\\",
    "#",
    "&a ",
    "*a",
    "!!str ",
    "---\n",
    "? ",
    "|\n",
    "${",
    "${MALLCHECK_APPID}",
    "$$",
    "..",
    "$..",
    "[?search(@.a,'[')]",
    "match(",
    "0",
    "-1",
    "99999999999999999999",
    "1e400",
    "null",
    "true",
    "yes",
    "\u{feff}",
    "\u{1b}[2J",
    "\u{202e}",
    "\r\n",
    "\u{0}",
    "é",
    "😀",
    "~1",
    "/",
    "cases:",
    "name:",
    "walk:",
    "sizes: [0]",
    "expect:",
    "assert:",
    "matches: \"(\"",
];

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<Index>(), 1..64usize).prop_map(|(i, n)| Edit::Delete(i, n)),
        (any::<Index>(), proptest::sample::select(TOKENS)).prop_map(|(i, t)| Edit::Insert(i, t)),
        (any::<Index>(), 1..256usize).prop_map(|(i, n)| Edit::Duplicate(i, n)),
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Edit::Byte(i, b)),
    ]
}

fn apply(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let at = |i: &Index, len: usize| if len == 0 { 0 } else { i.index(len + 1) };
        match e {
            Edit::Delete(i, n) => {
                let start = at(i, bytes.len()).min(bytes.len());
                let end = (start + n).min(bytes.len());
                bytes.drain(start..end);
            }
            Edit::Insert(i, t) => {
                let pos = at(i, bytes.len()).min(bytes.len());
                bytes.splice(pos..pos, t.bytes());
            }
            Edit::Duplicate(i, n) => {
                let start = at(i, bytes.len()).min(bytes.len());
                let end = (start + n).min(bytes.len());
                let piece = bytes[start..end].to_vec();
                bytes.splice(end..end, piece);
            }
            Edit::Byte(i, b) => {
                if !bytes.is_empty() {
                    let pos = i.index(bytes.len());
                    bytes[pos] = *b;
                }
            }
        }
    }
    bytes
}

fn runner(seed: u64, cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    })
}

#[test]
fn the_loader_never_panics_on_arbitrary_bytes() {
    let bytes = proptest::collection::vec(any::<u8>(), 0..2_000);
    let result = runner(11, 300).run(&(bytes, any::<bool>()), |(bytes, json)| {
        load_checked(if json { "any.json" } else { "any.yaml" }, bytes)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn the_loader_never_panics_on_mutated_shipped_case_files() {
    let mut seeds: Vec<(String, Vec<u8>)> = Vec::new();
    for entry in std::fs::read_dir(repo().join("cases")).expect("cases/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let bytes = std::fs::read(&path).expect("readable case file");
            seeds.push(("mutated.yaml".to_string(), bytes));
        }
    }
    seeds.sort();
    let json = br#"{"cases": [{"name": "a", "endpoint": "mall-list", "request": {"body": {"appid": "${MALLCHECK_APPID}"}}, "expect": {"assert": [{"path": "$.data[?match(@.mallSn, 'M[0-9]+')]", "count": 1}]}}, {"name": "w", "walk": {"body": {}, "sizes": [1, 3], "max-pages": 10}}]}"#;
    seeds.push(("mutated.json".to_string(), json.to_vec()));
    let wide = String::from_utf8_lossy(json).replace(
        "\"name\": \"w\"",
        &format!("\"name\": \"w\", \"tags\": [\"{}\"]", "x".repeat(70_000)),
    );
    seeds.push(("wide.json".to_string(), wide.into_bytes()));
    let strategy = (
        proptest::sample::select(seeds),
        proptest::collection::vec(edit(), 1..8),
    );
    let result = runner(12, 500).run(&strategy, |((name, bytes), edits)| {
        load_checked(&name, apply(bytes, &edits))
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
