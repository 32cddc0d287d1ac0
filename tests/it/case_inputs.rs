//! Hostile case files (issue 11, items 12-15): whatever a case file holds, loading it ends in
//! exit 0 or exit 2 with a position, never a panic, and what is printed stays bounded and free
//! of raw control characters.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::bin;

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

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
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
    let out = list(dir.path(), "wide.json", case.as_bytes());
    let shown = text(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        &shown[..shown.len().min(3000)]
    );
    assert_eq!(position(&shown, "wide.json"), Some((1, col)), "{shown}");
    assert!(shown.contains("unknown key `expcet`"), "{shown}");
    assert!(shown.len() < 4_000, "{} bytes printed", shown.len());

    let unclosed = &case[..case.len() - 2];
    let out = list(dir.path(), "cut.json", unclosed.as_bytes());
    let shown = text(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        &shown[..shown.len().min(3000)]
    );
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
    let out = list(dir.path(), "big.yaml", case.as_bytes());
    let shown = text(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        &shown[..shown.len().min(3000)]
    );
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
        let shown = text(&out);
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
