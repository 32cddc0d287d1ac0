//! The three renderings of a release diff: console, Markdown (a pull-request comment) and JUnit.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

use anstyle::Style;
use junit_report::{Report, TestCaseBuilder, TestSuiteBuilder};

use crate::release::compare::{CaseDiff, DiffVerdict};
use crate::report::junit::xml_safe;
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
                    "{label} {} ({} breaking, {} additive, {} data)",
                    r.label(),
                    r.count(Class::Breaking),
                    r.count(Class::Additive),
                    r.count(Class::Data)
                );
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

/// Escapes a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
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
        "{verdict} · baseline `{}` · candidate `{}` · {}\n",
        cell(&baseline.display().to_string()),
        cell(candidate),
        text::plural(results.len(), "case")
    );
    let _ = writeln!(out, "| Case | Verdict | Breaking | Additive | Data |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|");
    for r in results {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            cell(&r.label()),
            r.verdict().label().to_lowercase(),
            r.count(Class::Breaking),
            r.count(Class::Additive),
            r.count(Class::Data)
        );
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
                        "| {} | {} | `{}` | {} | {} |",
                        cell(&r.label()),
                        g.class.label(),
                        cell(&at),
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
    let mut by_file: BTreeMap<String, Vec<&CaseDiff>> = BTreeMap::new();
    for r in results {
        by_file
            .entry(r.file.display().to_string())
            .or_default()
            .push(r);
    }
    let mut report = Report::new();
    for (file, cases) in by_file {
        let mut suite = TestSuiteBuilder::new(&xml_safe(&format!("diff {file}")));
        for r in cases {
            let name = xml_safe(&r.case);
            let time = crate::report::junit::junit_time(r.duration);
            let mut builder = match &r.outcome {
                Err(e) => TestCaseBuilder::error(&name, time, "release-diff.error", &xml_safe(e)),
                Ok(changes) => {
                    let groups = classify::group(changes);
                    let lines: Vec<String> = groups.iter().map(group_line).collect();
                    let breaking: Vec<&Group> = groups
                        .iter()
                        .filter(|g| g.class == Class::Breaking)
                        .collect();
                    let mut b = match breaking.first() {
                        Some(first) => {
                            let message = format!(
                                "{} breaking change(s); first at {}: {}",
                                r.count(Class::Breaking),
                                first.pattern,
                                first.example.describe()
                            );
                            let mut b = TestCaseBuilder::failure(
                                &name,
                                time,
                                "release-diff.breaking",
                                &xml_safe(&message),
                            );
                            b.set_trace(&xml_safe(&lines.join("\n")));
                            b
                        }
                        None => TestCaseBuilder::success(&name, time),
                    };
                    if breaking.is_empty() && !lines.is_empty() {
                        b.set_system_out(&xml_safe(&lines.join("\n")));
                    }
                    b
                }
            };
            builder.set_classname(&xml_safe(&r.snapshot.display().to_string()));
            suite.add_testcase(builder.build());
        }
        report.add_testsuite(suite.build());
    }
    let mut out = Vec::new();
    report.write_xml(&mut out).map_err(io::Error::other)?;
    String::from_utf8(out).map_err(io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::release::compare::fixtures::{change, result};
    use crate::snapshot::classify::ChangeKind;

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
            text.contains("ADDITIVE  cases/x.yaml › first page (0 breaking, 1 additive, 0 data)"),
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
        assert!(
            xml.contains("<failure type=\"release-diff.breaking\""),
            "{xml}"
        );
        assert!(
            xml.contains("<error type=\"release-diff.error\" message=\"connection refused\""),
            "{xml}"
        );
    }
}
