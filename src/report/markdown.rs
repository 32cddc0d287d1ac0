//! Markdown summary sink for a CI step summary or a pull-request comment: totals, a table of
//! failing checks, one collapsible `<details>` per failing case and the warnings, rewritten
//! atomically after every case.
//!
//! Everything a server sent is untrusted: it only appears inside code spans and fenced code
//! blocks (whose fences outgrow any backtick run in the text) or HTML-escaped, so a response
//! body can neither inject HTML nor mention anyone.

use std::fmt::Write as _;

use crate::report::file::Run;
use crate::report::text;
use crate::verdict::event::{CaseResult, Finding, Outcome, truncate};
use crate::verdict::sealed::Sealed;

/// Most rows of the failure table; later rows are counted, not shown.
pub const MAX_TABLE_ROWS: usize = 60;
/// Most failing cases given a `<details>` block.
pub const MAX_DETAILS: usize = 25;
/// Most findings listed inside one `<details>` block.
pub const MAX_FINDINGS_PER_CASE: usize = 10;
/// Most warnings listed.
pub const MAX_WARNINGS: usize = 60;
/// Characters of an expected or actual value shown in a table cell.
const CELL_CHARS: usize = 80;

/// Renders the whole Markdown summary.
pub fn render(run: &Run<'_>) -> String {
    let s = run.summary;
    let mut out = format!(
        "## mallcheck: {} {}\n\n{}: {} passed{}, {} warned, {} failed, {} errored, {} skipped in {:.2}s against {}{}\n",
        if run.complete {
            icon(s.outcome())
        } else {
            "⏹️"
        },
        text::headline(run),
        text::plural(s.total(), "case"),
        s.passed,
        text::flaky_note(run),
        s.warned,
        s.failed,
        s.errored,
        s.skipped,
        s.duration.as_secs_f64(),
        code(&text::target(run)),
        if run.strict { " (strict)" } else { "" },
    );
    if let Some(code) = run.exit_code() {
        let _ = writeln!(out, "\nVerdict: **{}** (exit {code})", run.verdict());
    }
    if let Some(note) = text::incomplete_note(run) {
        let _ = writeln!(out, "\n> **Partial report:** {note}.");
    }
    for warning in run.warnings {
        // As code: a path or a name in it is the user's text, never Markdown.
        let _ = writeln!(out, "\n> **Warning:** {}", code(warning));
    }
    let failing: Vec<&CaseResult> = run
        .results
        .iter()
        .map(|r| &**r)
        .filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::Error))
        .collect();
    if !failing.is_empty() {
        out.push_str(&failure_table(&failing, run.strict));
        out.push_str(&failure_details(&failing, run.strict));
    }
    out.push_str(&warnings(run.results, run.strict));
    out.push_str(&skipped(run.results));
    out.push_str(&coverage(run.results));
    out
}

/// Most skipped cases and coverage lines listed.
pub const MAX_LISTED: usize = 100;

/// The skipped cases with their reasons: a skip is never a silent pass.
fn skipped(results: &[Sealed<CaseResult>]) -> String {
    let skips: Vec<&CaseResult> = results
        .iter()
        .map(|r| &**r)
        .filter(|r| r.skip_reason.is_some())
        .collect();
    if skips.is_empty() {
        return String::new();
    }
    let mut out = format!("\n### Skipped ({})\n\n", skips.len());
    for r in skips.iter().take(MAX_LISTED) {
        let why = r.skip_reason.as_deref().unwrap_or_default();
        let _ = writeln!(
            out,
            "- {}: {}",
            code(&text::case_label(r)),
            code(&truncate(why, 300))
        );
    }
    if skips.len() > MAX_LISTED {
        let _ = writeln!(out, "- … and {} more", skips.len() - MAX_LISTED);
    }
    out
}

/// What each case's checks covered (malls listed, pages walked, malls whose products were
/// checked), so that a pass is read with its scope.
fn coverage(results: &[Sealed<CaseResult>]) -> String {
    let lines: Vec<String> = results
        .iter()
        .flat_map(|r| {
            r.coverage.iter().map(move |c| {
                format!(
                    "- {}: {} {}",
                    code(&text::case_label(r)),
                    code(&c.check),
                    cell_text(&c.scope)
                )
            })
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n<details><summary>Coverage</summary>\n\n");
    for line in lines.iter().take(MAX_LISTED) {
        out.push_str(line);
        out.push('\n');
    }
    if lines.len() > MAX_LISTED {
        let _ = writeln!(out, "- … and {} more", lines.len() - MAX_LISTED);
    }
    out.push_str("\n</details>\n");
    out
}

fn icon(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass | Outcome::Skip => "✅",
        Outcome::Warn => "⚠️",
        Outcome::Fail | Outcome::Error => "❌",
    }
}

fn failure_table(failing: &[&CaseResult], strict: bool) -> String {
    let mut out = String::from(
        "\n### Failures\n\n| Case | Outcome | Check | Spec § | Pointer | Expected | Actual |\n|---|---|---|---|---|---|---|\n",
    );
    let mut rows = 0;
    let mut hidden = 0;
    for members in identical(failing, strict) {
        let (r, blocking) = &members[0];
        let label = group_label(&members);
        let groups = text::by_check(blocking);
        if groups.is_empty() {
            if rows < MAX_TABLE_ROWS {
                let _ = writeln!(out, "| {label} | {} | | | | | |", r.outcome.label());
                rows += 1;
            } else {
                hidden += 1;
            }
        }
        for g in groups {
            if rows >= MAX_TABLE_ROWS {
                hidden += 1;
                continue;
            }
            let f = g[0];
            let pointer = if f.pointer.is_empty() {
                "(body)".to_string()
            } else {
                f.pointer.clone()
            };
            let more = g.len() - 1 + text::omitted_count(r, f.check);
            let more = if more > 0 {
                format!(" (+{} more)", text::thousands(more))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "| {label} | {} | {} | {} | {}{more} | {} | {} |",
                f.outcome(strict).label(),
                code(f.check.id),
                cell_text(f.check.section),
                code(&pointer),
                code(&truncate(&f.expected, CELL_CHARS)),
                code(&truncate(&f.actual, CELL_CHARS)),
            );
            rows += 1;
        }
    }
    if hidden > 0 {
        let _ = writeln!(
            out,
            "\n{} not shown; see the JUnit, JSON or HTML report.",
            text::plural(hidden, "more row")
        );
    }
    out
}

/// Failing cases with their blocking findings, identical ones together
/// ([`text::identical_groups`]): a failure shared by 20 cases is one row and one detail.
fn identical<'a>(
    failing: &[&'a CaseResult],
    strict: bool,
) -> Vec<Vec<(&'a CaseResult, Vec<&'a Finding>)>> {
    text::identical_groups(failing.iter().map(|r| (*r, text::blocking(r, strict))))
}

/// The first case of a group, and how many more share its findings.
fn group_label(members: &[(&CaseResult, Vec<&Finding>)]) -> String {
    let first = code(&text::case_label(members[0].0));
    match members.len() {
        1 => first,
        n => format!(
            "{first} and {} with the same findings",
            text::plural(n - 1, "more case")
        ),
    }
}

fn failure_details(failing: &[&CaseResult], strict: bool) -> String {
    let mut out = String::from("\n");
    let groups = identical(failing, strict);
    for members in groups.iter().take(MAX_DETAILS) {
        let (r, blocking) = &members[0];
        let mut lines: Vec<String> = blocking
            .iter()
            .take(MAX_FINDINGS_PER_CASE)
            .map(|f| text::finding(f))
            .collect();
        if blocking.len() > MAX_FINDINGS_PER_CASE {
            lines.push(format!(
                "… and {}",
                text::plural(blocking.len() - MAX_FINDINGS_PER_CASE, "more finding")
            ));
        }
        let body = text::case_detail_with(r, blocking, lines);
        let also = if members.len() > 1 {
            let names: Vec<String> = members[1..]
                .iter()
                .map(|(m, _)| html_escape(&text::case_label(m)))
                .collect();
            format!(
                " (the same findings in {}: {})",
                text::plural(names.len(), "more case"),
                names.join("; ")
            )
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "<details><summary>{} {}{also}</summary>\n\n{}\n</details>\n\n",
            r.outcome.label(),
            html_escape(&text::case_label(r)),
            fenced(&body)
        );
    }
    if groups.len() > MAX_DETAILS {
        let hidden: usize = groups[MAX_DETAILS..].iter().map(Vec::len).sum();
        let _ = writeln!(
            out,
            "Details of {} not shown; see the HTML report.\n",
            text::plural(hidden, "more failing case")
        );
    }
    out
}

fn warnings(results: &[Sealed<CaseResult>], strict: bool) -> String {
    let found: Vec<(&CaseResult, &Finding)> = results
        .iter()
        .map(|r| &**r)
        .flat_map(|r| {
            r.findings
                .iter()
                .filter(move |f| f.outcome(strict) == Outcome::Warn)
                .map(move |f| (r, f))
        })
        .collect();
    if found.is_empty() {
        return String::new();
    }
    let mut out = format!("\n### Warnings ({})\n\n", found.len());
    for (r, f) in found.iter().take(MAX_WARNINGS) {
        let _ = writeln!(
            out,
            "- {}: {} ({}) at {}: expected {}, got {}",
            code(&text::case_label(r)),
            code(f.check.id),
            cell_text(f.check.section),
            code(if f.pointer.is_empty() {
                "(body)"
            } else {
                &f.pointer
            }),
            code(&truncate(&f.expected, CELL_CHARS)),
            code(&truncate(&f.actual, CELL_CHARS)),
        );
    }
    if found.len() > MAX_WARNINGS {
        let _ = writeln!(
            out,
            "- … and {}",
            text::plural(found.len() - MAX_WARNINGS, "more warning")
        );
    }
    out
}

/// Longest run of consecutive backticks in `s`.
fn longest_backtick_run(s: &str) -> usize {
    let mut best = 0;
    let mut run = 0;
    for c in s.chars() {
        if c == '`' {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// Drops control characters other than tab and newline.
fn printable(s: &str) -> String {
    s.chars()
        .filter(|&c| c == '\n' || c == '\t' || !c.is_control())
        .collect()
}

/// A code span safe inside a table cell: one line, `|` escaped, a fence longer than any
/// backtick run in the text.
pub fn code(s: &str) -> String {
    let one_line = printable(s).replace(['\n', '\t'], " ").replace('|', "\\|");
    if one_line.is_empty() {
        return "` `".to_string();
    }
    let fence = "`".repeat(longest_backtick_run(&one_line) + 1);
    let pad = if one_line.starts_with('`') || one_line.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{one_line}{pad}{fence}")
}

/// Plain text for a cell built from trusted catalogue text (HTML-escaped, `|` escaped).
fn cell_text(s: &str) -> String {
    html_escape(s).replace('|', "\\|")
}

/// A fenced code block whose fence is longer than any backtick run in the text.
pub fn fenced(s: &str) -> String {
    let body = printable(s);
    let fence = "`".repeat((longest_backtick_run(&body) + 1).max(3));
    let newline = if body.ends_with('\n') { "" } else { "\n" };
    format!("{fence}text\n{body}{newline}{fence}\n")
}

/// Escapes `&`, `<`, `>` and `"` for HTML text and attributes.
fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in printable(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::redact::Redactor;
    use crate::report::Sink;
    use crate::report::text::fixtures::{case, started};
    use crate::spec::catalog::{MALL_STATE, PRODUCTS_ORDER};
    use crate::verdict::event::{Event, RunSummary};

    fn rendered(results: &[CaseResult], complete: bool) -> String {
        let mut summary = RunSummary::default();
        for r in results {
            summary.add(r.outcome);
        }
        let results: Vec<_> = results
            .iter()
            .map(|r| r.clone().seal(&Redactor::new()))
            .collect();
        render(&Run {
            complete,
            ..crate::report::text::fixtures::run(&summary, &results, &[])
        })
    }

    #[test]
    fn identical_failures_are_one_row_and_one_detail_naming_every_case() {
        let broken = || {
            vec![Finding::new(
                &MALL_STATE,
                "/data/0/state",
                "one of [0, 1, 2]",
                "3",
            )]
        };
        let other = vec![Finding::new(
            &MALL_STATE,
            "/data/0/state",
            "one of [0, 1, 2]",
            "7",
        )];
        let md = rendered(
            &[
                case(0, "first page", broken(), "{\"state\":3}"),
                case(1, "second page", broken(), "{\"state\":3}"),
                case(2, "third page", broken(), "{\"state\":3}"),
                case(3, "other value", other, "{\"state\":7}"),
            ],
            true,
        );
        assert!(
            md.contains(
                "| `cases/mall-list.yaml › first page` and 2 more cases with the same findings | FAIL |"
            ),
            "{md}"
        );
        assert_eq!(md.matches("| FAIL | `mall.state`").count(), 2, "{md}");
        assert!(
            md.contains(
                "<details><summary>FAIL cases/mall-list.yaml › first page (the same findings in \
                 2 more cases: cases/mall-list.yaml › second page; cases/mall-list.yaml › third \
                 page)</summary>"
            ),
            "{md}"
        );
        assert_eq!(md.matches("<details>").count(), 2, "{md}");
    }

    /// A case that passed only after a transport retry is counted in the totals, as on the
    /// console (h27c V3: only the console said so).
    #[test]
    fn flaky_passes_are_counted_in_the_totals() {
        let mut flaky = case(0, "first page", vec![], "{}");
        flaky.flaky = true;
        let md = rendered(&[flaky, case(1, "healthy", vec![], "{}")], true);
        assert!(
            md.contains(
                "2 cases: 2 passed (1 flaky: passed only after a transport retry), 0 warned"
            ),
            "{md}"
        );
        let md = rendered(&[case(1, "healthy", vec![], "{}")], true);
        assert!(!md.contains("flaky"), "{md}");
    }

    /// A warning is the user's text (a schema path): shown as code, never as Markdown (h29 F9).
    #[test]
    fn a_warning_is_shown_as_code() {
        let summary = RunSummary::default();
        let warnings =
            ["checking with edited schemas: s<img src=x>*b*/mall.json differs".to_string()];
        let md = render(&crate::report::text::fixtures::run(
            &summary,
            &[],
            &warnings,
        ));
        assert!(
            md.contains(
                "> **Warning:** `checking with edited schemas: s<img src=x>*b*/mall.json differs`"
            ),
            "{md}"
        );
    }

    #[test]
    fn failing_case_gets_a_table_row_and_details() {
        let findings = vec![
            Finding::new(&MALL_STATE, "/data/0/state", "one of [0, 1, 2]", "3"),
            Finding::new(&MALL_STATE, "/data/1/state", "one of [0, 1, 2]", "3"),
        ];
        let md = rendered(
            &[
                case(0, "first page", findings, "{\"state\":3}"),
                case(1, "healthy", vec![], "{}"),
            ],
            true,
        );
        assert!(md.contains("❌ FAIL"), "{md}");
        assert!(md.contains("2 cases: 1 passed, 0 warned, 1 failed"), "{md}");
        assert!(
            md.contains(
                "| `cases/mall-list.yaml › first page` | FAIL | `mall.state` | §3 | `/data/0/state` (+1 more) | `one of [0, 1, 2]` | `3` |"
            ),
            "{md}"
        );
        assert!(
            md.contains("<details><summary>FAIL cases/mall-list.yaml › first page</summary>"),
            "{md}"
        );
        assert!(md.contains("request: curl -sS -X POST"), "{md}");
        assert!(md.contains("response: HTTP 200"), "{md}");
        assert!(
            !md.contains("healthy"),
            "passing cases are not listed: {md}"
        );
        assert!(!md.contains("Partial report"), "{md}");
    }

    #[test]
    fn hostile_text_cannot_escape_cells_or_fences() {
        let evil = "|`x`|<script>alert(1)</script>\n```\n@everyone";
        let findings = vec![Finding::new(&MALL_STATE, "/data/0/state", "0", evil)];
        let md = rendered(&[case(0, "<b>name</b>", findings, evil)], true);
        let row = md
            .lines()
            .find(|l| l.contains("`mall.state`"))
            .expect("a table row");
        assert_eq!(row.matches(" | ").count(), 6, "seven cells: {row}");
        assert!(
            md.contains("<summary>FAIL cases/mall-list.yaml › &lt;b&gt;name&lt;/b&gt;</summary>")
        );
        assert!(md.contains("````text\n"), "fence outgrows the body's: {md}");
        assert!(!md.contains("\n<script>"), "{md}");
    }

    #[test]
    fn warnings_are_listed_separately_and_partial_runs_say_so() {
        let findings = vec![Finding::new(
            &PRODUCTS_ORDER,
            "/1/spuId",
            "descending",
            "12",
        )];
        let md = rendered(&[case(0, "order", findings, "[]")], false);
        assert!(
            md.contains("⏹️ INTERRUPTED"),
            "a run that did not complete never reads as its outcome: {md}"
        );
        assert!(!md.contains("### Failures"), "{md}");
        assert!(md.contains("### Warnings (1)"), "{md}");
        assert!(md.contains("`products.order` (§4.2) at `/1/spuId`"), "{md}");
        assert!(md.contains("Partial report"), "{md}");
    }

    #[test]
    fn sink_holds_back_a_case_right_after_a_write_and_writes_it_on_finish() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("out/summary.md");
        let mut sink = started(&path, |r| Ok(render(r)));
        let findings = vec![Finding::new(&MALL_STATE, "/data/0/state", "0", "3")];
        sink.on_event(&Event::CaseFinished(Box::new(
            case(0, "a", findings, "{}").seal(&Redactor::new()),
        )))
        .expect("write");
        let md = std::fs::read_to_string(&path).expect("written");
        assert!(
            md.contains("0 cases") && md.contains("Partial report"),
            "{md}"
        );
        // An interrupted run finishes its sinks without a RunFinished event.
        sink.finish().expect("write");
        let md = std::fs::read_to_string(&path).expect("written");
        assert!(
            md.contains("`mall.state`") && md.contains("Partial report"),
            "{md}"
        );
    }

    #[test]
    fn code_span_fence_outgrows_backticks() {
        assert_eq!(code("a``b"), "```a``b```");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(code(""), "` `");
        assert_eq!(code("a|b\nc"), "`a\\|b c`");
    }
}
