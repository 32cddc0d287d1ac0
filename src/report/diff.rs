//! The three renderings of a release diff: console, Markdown (a pull-request comment) and JUnit.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

use anstyle::Style;

use crate::release::compare::{CaseDiff, DiffVerdict};
use crate::report::junit::xml_safe;
use crate::report::markdown::code;
use crate::report::style::{self, Palette};
use crate::report::text;
use crate::snapshot::classify::{self, Class, Group};

/// Most change groups printed per case in the console.
const CONSOLE_GROUPS: usize = 20;
/// Most change rows in the Markdown table.
const MARKDOWN_ROWS: usize = 200;

fn verdict_style(v: DiffVerdict) -> Style {
    match v {
        DiffVerdict::Breaking | DiffVerdict::Error => style::FAIL,
        DiffVerdict::Additive => style::WARN,
        DiffVerdict::Data | DiffVerdict::Unchanged => style::PASS,
    }
}

fn group_line(g: &Group) -> String {
    let records = if g.count > 1 {
        format!(" ×{}", g.count)
    } else {
        String::new()
    };
    let at = if g.pattern.is_empty() {
        "(root)"
    } else {
        &g.pattern
    };
    format!(
        "{:<8}  {at}  {}{records}",
        g.class.label(),
        g.example.describe()
    )
}

/// The console report.
pub fn render_console(
    results: &[CaseDiff],
    baseline: &Path,
    candidate: &str,
    without: &[String],
    color: bool,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "mallcheck diff: baseline {}, candidate {candidate}",
        baseline.display()
    );
    for r in results {
        let v = r.verdict();
        let label = Palette::new(color).paint(verdict_style(v), &format!("{:<9}", v.label()));
        match &r.outcome {
            Err(e) => {
                let _ = writeln!(out, "{label} {}: {e}", r.label());
            }
            Ok(changes) => {
                let _ = writeln!(
                    out,
                    "{label} {} ({} breaking, {} additive, {} data; {} compared)",
                    r.label(),
                    r.count(Class::Breaking),
                    r.count(Class::Additive),
                    r.count(Class::Data),
                    text::plural(r.records, "record")
                );
                if let Some(evidence) = r.evidence() {
                    let _ = writeln!(out, "  the breaking verdict {evidence}");
                }
                let groups = classify::group(changes);
                for g in groups.iter().take(CONSOLE_GROUPS) {
                    let _ = writeln!(out, "  {}", group_line(g));
                }
                if groups.len() > CONSOLE_GROUPS {
                    let _ = writeln!(
                        out,
                        "  … {} more (see the Markdown report)",
                        groups.len() - CONSOLE_GROUPS
                    );
                }
            }
        }
    }
    let count = |v: DiffVerdict| results.iter().filter(|r| r.verdict() == v).count();
    let _ = write!(
        out,
        "\n{} compared: {} breaking, {} additive, {} data only, {} unchanged, {}",
        text::plural(results.len(), "case"),
        count(DiffVerdict::Breaking),
        count(DiffVerdict::Additive),
        count(DiffVerdict::Data),
        count(DiffVerdict::Unchanged),
        text::plural(count(DiffVerdict::Error), "error"),
    );
    if !without.is_empty() {
        let _ = write!(
            out,
            "; {} without a baseline snapshot skipped",
            text::plural(without.len(), "case")
        );
    }
    out.push('\n');
    out
}

/// Escapes a Markdown table cell: a `<shipped>/cases/…` path is markup to GitHub, which drops
/// the tag, so `&`, `<` and `>` are written as entities.
fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('\n', " ")
        .replace('`', "'")
}

/// The Markdown report for a pull-request comment.
pub fn render_markdown(
    results: &[CaseDiff],
    baseline: &Path,
    candidate: &str,
    without: &[String],
) -> String {
    let mut out = String::new();
    let breaking = results
        .iter()
        .any(|r| matches!(r.verdict(), DiffVerdict::Breaking | DiffVerdict::Error));
    let verdict = if breaking {
        "❌ **breaking changes**"
    } else {
        "✅ no breaking change"
    };
    let _ = writeln!(out, "## mallcheck release diff\n");
    let _ = writeln!(
        out,
        "{verdict} · baseline {} · candidate {} · {}\n",
        code(&baseline.display().to_string()),
        code(candidate),
        text::plural(results.len(), "case")
    );
    let _ = writeln!(
        out,
        "| Case | Verdict | Breaking | Additive | Data | Records compared |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|");
    for r in results {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            cell(&r.label()),
            r.verdict().label().to_lowercase(),
            r.count(Class::Breaking),
            r.count(Class::Additive),
            r.count(Class::Data),
            r.records
        );
    }
    for r in results {
        if let Some(evidence) = r.evidence() {
            let _ = writeln!(
                out,
                "\n> The breaking verdict of {} {}.",
                cell(&r.label()),
                cell(&evidence)
            );
        }
    }
    let mut rows: Vec<String> = Vec::new();
    for r in results {
        match &r.outcome {
            Err(e) => rows.push(format!(
                "| {} | error | | {} | |",
                cell(&r.label()),
                cell(e)
            )),
            Ok(changes) => {
                for g in classify::group(changes) {
                    let at = if g.pattern.is_empty() {
                        "(root)".to_string()
                    } else {
                        g.pattern.clone()
                    };
                    rows.push(format!(
                        "| {} | {} | {} | {} | {} |",
                        cell(&r.label()),
                        g.class.label(),
                        code(&at),
                        cell(&g.example.describe()),
                        g.count
                    ));
                }
            }
        }
    }
    if !rows.is_empty() {
        let _ = writeln!(out, "\n### Changes\n");
        let _ = writeln!(out, "| Case | Class | Where | Change | Records |");
        let _ = writeln!(out, "|---|---|---|---|---:|");
        for row in rows.iter().take(MARKDOWN_ROWS) {
            let _ = writeln!(out, "{row}");
        }
        if rows.len() > MARKDOWN_ROWS {
            let _ = writeln!(
                out,
                "\n… {} more rows left out.",
                rows.len() - MARKDOWN_ROWS
            );
        }
    }
    if !without.is_empty() {
        let _ = writeln!(
            out,
            "\nWithout a baseline snapshot (not compared): {}",
            without
                .iter()
                .map(|w| cell(w))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    out
}

/// The JUnit report: one suite per case file, one test case per case; breaking is a failure,
/// a case that could not be compared an error, additive and data changes are listed in
/// system-out.
pub fn render_junit(results: &[CaseDiff]) -> io::Result<String> {
    use crate::report::junit::{self, Verdict as Junit};
    let mut by_file: BTreeMap<&Path, Vec<&CaseDiff>> = BTreeMap::new();
    for r in results {
        by_file.entry(r.file.as_path()).or_default().push(r);
    }
    let mut suites = Vec::new();
    for (file, cases) in by_file {
        let mut tests = Vec::new();
        for r in cases {
            let (verdict, out) = match &r.outcome {
                Err(e) => (
                    Junit::Error {
                        ty: "release-diff.error".into(),
                        message: e.clone(),
                        detail: String::new(),
                    },
                    None,
                ),
                Ok(changes) => {
                    let groups = classify::group(changes);
                    let lines = groups.iter().map(group_line).collect::<Vec<_>>().join("\n");
                    match groups.iter().find(|g| g.class == Class::Breaking) {
                        Some(first) => (
                            Junit::Failure {
                                ty: "release-diff.breaking".into(),
                                message: format!(
                                    "{} breaking change(s); first at {}: {} (the verdict {})",
                                    r.count(Class::Breaking),
                                    first.pattern,
                                    first.example.describe(),
                                    r.evidence().unwrap_or_default()
                                ),
                                detail: lines,
                            },
                            None,
                        ),
                        None => (Junit::Pass, (!lines.is_empty()).then_some(lines)),
                    }
                }
            };
            let mut case =
                junit::testcase(&r.case, &junit::classname(&r.file), r.duration, verdict);
            // The strict schemas allow no properties on a testcase: the snapshot compared is
            // the first line of its output.
            let mut text = format!("snapshot: {}", r.snapshot.display());
            if let Some(out) = out {
                text.push('\n');
                text.push_str(&out);
            }
            case.set_system_out(xml_safe(&text));
            tests.push(case);
        }
        suites.push(junit::suite(
            &format!("diff {}", junit::file_attr(file)),
            Some(file),
            tests,
        ));
    }
    junit::document("mallcheck diff", suites)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::release::compare::fixtures::{change, result};
    use crate::snapshot::classify::ChangeKind;

    #[test]
    fn markup_in_a_cell_is_shown_as_text_not_dropped_by_the_renderer() {
        assert_eq!(
            cell("<shipped>/cases/a.yaml › x & y"),
            "&lt;shipped&gt;/cases/a.yaml › x &amp; y"
        );
        let md = render_markdown(&[], Path::new("<shipped>/snapshots"), "http://h", &[]);
        assert!(md.contains("baseline `<shipped>/snapshots`"), "{md}");
    }

    #[test]
    fn markdown_has_a_case_table_and_escaped_change_rows() {
        let r = result(Ok(vec![
            change(
                ChangeKind::FieldRemoved,
                Class::Breaking,
                "/data/0/mallName",
            ),
            change(
                ChangeKind::FieldRemoved,
                Class::Breaking,
                "/data/1/mallName",
            ),
        ]));
        let md = render_markdown(&[r], Path::new("snapshots"), "http://h", &[]);
        assert!(md.contains("❌ **breaking changes**"), "{md}");
        assert!(
            md.contains("| cases/x.yaml › first page | breaking | 2 | 0 | 0 |"),
            "{md}"
        );
        assert!(
            md.contains("| breaking | `/data/*/mallName` | field removed (was \"a\\|b\") | 2 |"),
            "{md}"
        );
    }

    #[test]
    fn console_groups_changes_and_counts_cases() {
        let r = result(Ok(vec![change(
            ChangeKind::FieldAdded,
            Class::Additive,
            "/data/0/x",
        )]));
        let text = render_console(
            &[r],
            Path::new("snapshots"),
            "http://h",
            &["a › b".into()],
            false,
        );
        assert!(
            text.contains(
                "ADDITIVE  cases/x.yaml › first page (0 breaking, 1 additive, 0 data; 3 records compared)"
            ),
            "{text}"
        );
        assert!(text.contains("additive  /data/*/x  field added"), "{text}");
        assert!(
            text.contains("1 case compared: 0 breaking, 1 additive"),
            "{text}"
        );
        assert!(
            text.contains("1 case without a baseline snapshot skipped"),
            "{text}"
        );
    }

    #[test]
    fn junit_fails_breaking_cases_and_errors_unreachable_ones() {
        let xml = render_junit(&[
            result(Ok(vec![change(
                ChangeKind::TypeChanged,
                Class::Breaking,
                "/data/0/edition",
            )])),
            CaseDiff {
                case: "second".into(),
                ..result(Err("connection refused".into()))
            },
        ])
        .unwrap();
        let report = crate::report::junit::read(&xml).expect("read back");
        assert_eq!(
            (report.tests, report.failures, report.errors),
            (2, 1, 1),
            "{xml}"
        );
        assert!(
            xml.contains(r#"type="release-diff.breaking""#)
                && xml
                    .contains(r#"<error message="connection refused" type="release-diff.error"/>"#),
            "{xml}"
        );
    }
}
