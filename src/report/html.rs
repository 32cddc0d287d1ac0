//! Single-file HTML report sink: pass/fail by spec section, every failure with its redacted
//! request, the response excerpt and an expected/actual diff, and the list of all cases.
//!
//! The page is self-contained (inline CSS, no scripts, no external assets) so it opens from a
//! CI artifact, and every piece of text is HTML-escaped, so a hostile server's body cannot
//! inject markup. It is rewritten atomically after every case.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::report::file::Run;
use crate::report::text;
use crate::spec::catalog::CATALOG;
use crate::verdict::check::Severity;
use crate::verdict::event::{CaseResult, Finding, Outcome, truncate};
use crate::verdict::exchange::Exchange;

/// Most findings of one check in one case shown.
pub const MAX_FINDINGS_PER_CHECK: usize = 25;
/// Most exchanges of one case shown.
pub const MAX_EXCHANGES_PER_CASE: usize = 5;
/// Characters of a response body shown.
pub const BODY_CHARS: usize = 4_000;

const STYLE: &str = "
:root{--pass:#1a7f37;--warn:#9a6700;--fail:#cf222e;--muted:#57606a;--line:#d0d7de;--bg:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1100px;padding:1.5rem;color:#1f2328}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.25rem;border-bottom:1px solid var(--line);padding-bottom:.3rem;margin-top:2rem}
h3{font-size:1rem;margin:.2rem 0 .5rem}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.6rem;overflow:auto;white-space:pre-wrap;word-break:break-all;margin:.3rem 0}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{border:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:var(--bg)}
.badge{display:inline-block;white-space:nowrap;border-radius:1rem;padding:0 .6rem;font-size:.8rem;font-weight:600;color:#fff;vertical-align:middle}
.b-pass{background:var(--pass)}.b-warn{background:var(--warn)}.b-fail{background:var(--fail)}.b-error{background:#8250df}.b-skip{background:var(--muted)}.b-none{background:#8c959f}
.meta{color:var(--muted)}
.banner{border:1px solid var(--warn);background:#fff8c5;padding:.5rem .8rem;border-radius:6px}
article{border:1px solid var(--line);border-left:4px solid var(--fail);border-radius:6px;padding:.6rem .9rem;margin:.8rem 0}
article.o-warn{border-left-color:var(--warn)}article.o-error{border-left-color:#8250df}
.finding{margin:.5rem 0}
.diff .del{color:var(--fail)}.diff .add{color:var(--pass)}
.detail{color:var(--muted);margin:.2rem 0}
summary{cursor:pointer;color:var(--muted)}
";

/// Escapes text for HTML element content and quoted attributes; drops control characters.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Sort key of a spec section: `§2.2` before `§4.1` before `§10`, then non-numbered ones.
fn section_key(section: &str) -> (u8, Vec<u32>, String) {
    match section.strip_prefix('§') {
        Some(num) => {
            let parts: Option<Vec<u32>> = num.split('.').map(|p| p.parse().ok()).collect();
            match parts {
                Some(p) => (0, p, String::new()),
                None => (1, vec![], section.to_string()),
            }
        }
        None => (1, vec![], section.to_string()),
    }
}

/// An HTML id for a section: `§4.1` → `sec-4-1`.
fn section_anchor(section: &str) -> String {
    let slug: String = section
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    if slug.is_empty() {
        "sec-other".to_string()
    } else {
        format!("sec-{slug}")
    }
}

fn badge(outcome: Outcome) -> String {
    let class = match outcome {
        Outcome::Pass => "b-pass",
        Outcome::Skip => "b-skip",
        Outcome::Warn => "b-warn",
        Outcome::Fail => "b-fail",
        Outcome::Error => "b-error",
    };
    format!("<span class=\"badge {class}\">{}</span>", outcome.label())
}

fn case_label(r: &CaseResult) -> String {
    format!("{} › {}", r.id.file.display(), r.id.name)
}

/// Findings that show up in the report: everything that fails, errs or warns.
fn reported(f: &Finding, strict: bool) -> bool {
    matches!(
        f.outcome(strict),
        Outcome::Warn | Outcome::Fail | Outcome::Error
    )
}

/// Renders the whole page.
pub fn render(run: &Run<'_>) -> String {
    let s = run.summary;
    let outcome = s.outcome();
    let mut out = String::with_capacity(16 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"mallcheck {version}\">\n\
         <title>mallcheck report: {label}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <header>\n<h1>mallcheck report {badge}</h1>\n\
         <p class=\"meta\" id=\"totals\">{total}: {passed} passed, {warned} warned, {failed} failed, \
         {errored} errored, {skipped} skipped in {secs:.2}s against <code>{url}</code>{strict} \
         · mallcheck {version}</p>\n",
        version = env!("CARGO_PKG_VERSION"),
        label = outcome.label(),
        badge = badge(outcome),
        total = escape(&text::plural(s.total(), "case")),
        passed = s.passed,
        warned = s.warned,
        failed = s.failed,
        errored = s.errored,
        skipped = s.skipped,
        secs = s.duration.as_secs_f64(),
        url = escape(run.base_url),
        strict = if run.strict { " (strict)" } else { "" },
    );
    if !run.complete {
        out.push_str(
            "<p class=\"banner\" id=\"partial\">Partial report: the run has not finished \
             (or was interrupted). It lists the cases that completed.</p>\n",
        );
    }
    out.push_str("</header>\n<main>\n");
    out.push_str(&section_overview(run));
    out.push_str(&section_details(run));
    out.push_str(&case_list(run));
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

/// The sections that have findings, in spec order, each with its worst outcome.
fn sections_with_findings(run: &Run<'_>) -> Vec<(&'static str, Outcome)> {
    let mut found: Vec<(&'static str, Outcome)> = Vec::new();
    for r in run.results {
        for f in r.findings.iter().filter(|f| reported(f, run.strict)) {
            let o = f.outcome(run.strict);
            match found.iter_mut().find(|(s, _)| *s == f.check.section) {
                Some((_, worst)) => *worst = (*worst).max(o),
                None => found.push((f.check.section, o)),
            }
        }
    }
    found.sort_by_key(|(s, _)| section_key(s));
    found
}

fn section_overview(run: &Run<'_>) -> String {
    let failing = sections_with_findings(run);
    let mut sections: Vec<&'static str> = CATALOG
        .iter()
        .filter(|c| c.severity != Severity::Info)
        .map(|c| c.section)
        .chain(failing.iter().map(|(s, _)| *s))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    sections.sort_by_key(|s| section_key(s));
    let mut out = String::from(
        "<section id=\"sections\">\n<h2>By spec section</h2>\n<table>\n\
         <tr><th>Section</th><th>Verdict</th><th>Cases with findings</th><th>Checks</th></tr>\n",
    );
    for section in sections {
        let verdict = failing.iter().find(|(s, _)| *s == section).map(|(_, o)| *o);
        let cases = run
            .results
            .iter()
            .filter(|r| {
                r.findings
                    .iter()
                    .any(|f| f.check.section == section && reported(f, run.strict))
            })
            .count();
        let checks: Vec<String> = CATALOG
            .iter()
            .filter(|c| c.section == section && c.severity != Severity::Info)
            .map(|c| format!("<code>{}</code>", escape(c.id)))
            .collect();
        let (name, verdict_html) = match verdict {
            Some(o) => (
                format!(
                    "<a href=\"#{}\">{}</a>",
                    section_anchor(section),
                    escape(section)
                ),
                badge(o),
            ),
            None => (
                escape(section),
                "<span class=\"badge b-none\">no findings</span>".to_string(),
            ),
        };
        let _ = writeln!(
            out,
            "<tr><td>{name}</td><td>{verdict_html}</td><td>{cases}</td><td>{}</td></tr>",
            checks.join(" ")
        );
    }
    out.push_str("</table>\n</section>\n");
    out
}

fn section_details(run: &Run<'_>) -> String {
    let mut out = String::new();
    for (section, worst) in sections_with_findings(run) {
        let _ = writeln!(
            out,
            "<section id=\"{}\">\n<h2>{} {}</h2>",
            section_anchor(section),
            escape(section),
            badge(worst)
        );
        for r in run.results {
            let findings: Vec<&Finding> = r
                .findings
                .iter()
                .filter(|f| f.check.section == section && reported(f, run.strict))
                .collect();
            if findings.is_empty() {
                continue;
            }
            out.push_str(&case_article(r, &findings, run.strict));
        }
        out.push_str("</section>\n");
    }
    out
}

fn case_article(r: &CaseResult, findings: &[&Finding], strict: bool) -> String {
    let worst = findings
        .iter()
        .map(|f| f.outcome(strict))
        .max()
        .unwrap_or(r.outcome);
    let mut out = format!(
        "<article class=\"case o-{}\">\n<h3>{} <a href=\"#case-{}\">{}</a></h3>\n",
        worst.label().to_ascii_lowercase(),
        badge(worst),
        r.id.index,
        escape(&case_label(r))
    );
    let mut groups: Vec<Vec<&Finding>> = Vec::new();
    for f in findings {
        match groups.iter_mut().find(|g| g[0].check.id == f.check.id) {
            Some(g) => g.push(f),
            None => groups.push(vec![f]),
        }
    }
    for g in &groups {
        out.push_str(&check_group_html(g, text::omitted_count(r, g[0].check)));
    }
    let primary = r
        .exchanges
        .iter()
        .position(|x| x.transport_error.is_some())
        .or(if r.exchanges.is_empty() {
            None
        } else {
            Some(0)
        });
    if let Some(i) = primary {
        out.push_str("<details open><summary>Request and response</summary>\n");
        out.push_str(&exchange_html(&r.exchanges[i]));
        out.push_str("</details>\n");
        let others: Vec<&Exchange> = r
            .exchanges
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, x)| x)
            .collect();
        if !others.is_empty() {
            let _ = writeln!(
                out,
                "<details><summary>{} of this case</summary>",
                escape(&text::plural(others.len(), "more exchange"))
            );
            for x in others.iter().take(MAX_EXCHANGES_PER_CASE - 1) {
                out.push_str(&exchange_html(x));
            }
            if others.len() > MAX_EXCHANGES_PER_CASE - 1 {
                let _ = writeln!(
                    out,
                    "<p class=\"detail\">… and {} (see the JSON report).</p>",
                    text::plural(others.len() - (MAX_EXCHANGES_PER_CASE - 1), "more")
                );
            }
            out.push_str("</details>\n");
        }
    }
    out.push_str("</article>\n");
    out
}

/// The findings of one check in one case: the check once, then every pointer with its
/// expected/actual diff (at most [`MAX_FINDINGS_PER_CHECK`]); `omitted` more were counted.
fn check_group_html(group: &[&Finding], omitted: usize) -> String {
    let check = group[0].check;
    let total = group.len() + omitted;
    let count = if total > 1 {
        format!(" ({} findings)", text::thousands(total))
    } else {
        String::new()
    };
    let mut out = format!(
        "<div class=\"finding\">\n<p><code class=\"check\">{}</code> ({}, {}): {}{count}</p>\n<pre class=\"diff\">",
        escape(check.id),
        escape(check.section),
        check.severity,
        escape(check.summary)
    );
    for (i, f) in group.iter().take(MAX_FINDINGS_PER_CHECK).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let at = if f.pointer.is_empty() {
            "the whole body".to_string()
        } else {
            f.pointer.clone()
        };
        let _ = write!(
            out,
            "at {}\n<span class=\"del\">- expected: {}</span>\n<span class=\"add\">+ actual:   {}</span>\n",
            escape(&at),
            escape(&f.expected),
            escape(&f.actual)
        );
        if !f.detail.is_empty() {
            let _ = writeln!(out, "  {}", escape(&f.detail));
        }
    }
    if group.len() > MAX_FINDINGS_PER_CHECK {
        let _ = write!(
            out,
            "\n… and {} (in the JSON report)\n",
            text::plural(group.len() - MAX_FINDINGS_PER_CHECK, "more finding")
        );
    }
    if omitted > 0 {
        let _ = writeln!(out, "\n{}", escape(&text::omitted_line(check, omitted)));
    }
    out.push_str("</pre>\n");
    let locations: BTreeSet<String> = group
        .iter()
        .filter_map(|f| f.location.as_ref())
        .map(|l| format!("{}:{}:{}", l.file.display(), l.line, l.column))
        .collect();
    if !locations.is_empty() {
        let list: Vec<String> = locations.iter().map(|l| escape(l)).collect();
        let _ = writeln!(
            out,
            "<p class=\"detail\">asked for by {}</p>",
            list.join(", ")
        );
    }
    out.push_str("</div>\n");
    out
}

fn exchange_html(x: &Exchange) -> String {
    let mut out = format!(
        "<p>Request (redacted):</p>\n<pre class=\"request\">{}</pre>\n",
        escape(&x.request.to_curl())
    );
    match (&x.response, &x.transport_error) {
        (Some(r), _) => {
            let mut head = format!(
                "HTTP {} ({} bytes in {:.3}s)",
                r.status,
                r.body_len,
                x.duration.as_secs_f64()
            );
            for (k, v) in &r.headers {
                let _ = write!(head, "\n{k}: {v}");
            }
            let _ = writeln!(
                out,
                "<p>Response:</p>\n<pre class=\"response\">{}\n\n{}</pre>",
                escape(&head),
                escape(&truncate(&r.body_excerpt, BODY_CHARS))
            );
        }
        (None, Some(e)) => {
            let _ = writeln!(
                out,
                "<p>Response: none</p>\n<pre class=\"response\">{}</pre>",
                escape(e)
            );
        }
        (None, None) => out.push_str("<p>Response: none</p>\n"),
    }
    out
}

fn case_list(run: &Run<'_>) -> String {
    let mut out = String::from(
        "<section id=\"cases\">\n<h2>All cases</h2>\n<table>\n\
         <tr><th>Verdict</th><th>Case</th><th>Endpoint</th><th>Findings</th><th>Time</th></tr>\n",
    );
    for r in run.results {
        let shown: Vec<&Finding> = r
            .findings
            .iter()
            .filter(|f| reported(f, run.strict))
            .collect();
        let sections: BTreeSet<&str> = shown.iter().map(|f| f.check.section).collect();
        let mut notes: Vec<String> = sections
            .iter()
            .map(|s| format!("<a href=\"#{}\">{}</a>", section_anchor(s), escape(s)))
            .collect();
        if let Some(reason) = &r.skip_reason {
            notes.push(format!("skipped: {}", escape(reason)));
        }
        let _ = writeln!(
            out,
            "<tr id=\"case-{}\"><td>{}</td><td>{}</td><td>{}</td><td>{} {}</td><td>{:.3}s</td></tr>",
            r.id.index,
            badge(r.outcome),
            escape(&case_label(r)),
            escape(&r.id.endpoint),
            shown.len(),
            notes.join(" "),
            r.duration.as_secs_f64()
        );
    }
    out.push_str("</table>\n</section>\n");
    out
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::report::Sink;
    use crate::report::file::FileReport;
    use crate::report::text::fixtures::{case, exchange};
    use crate::spec::catalog::{MALL_STATE, PRODUCTS_ORDER, TRANSPORT_CONNECT};
    use crate::verdict::event::{Event, RunSummary};

    fn rendered(results: &[CaseResult]) -> String {
        let mut summary = RunSummary::default();
        for r in results {
            summary.add(r.outcome);
        }
        render(&Run {
            base_url: "http://127.0.0.1:1",
            strict: false,
            complete: true,
            summary: &summary,
            results,
        })
    }

    #[test]
    fn failures_are_grouped_by_section_with_request_response_and_diff() {
        let html = rendered(&[
            case(
                0,
                "first page",
                vec![Finding::new(
                    &MALL_STATE,
                    "/data/0/state",
                    "one of [0, 1, 2]",
                    "3",
                )],
                "{\"state\":3}",
            ),
            case(1, "healthy", vec![], "{}"),
        ]);
        let sec = html.find("<section id=\"sec-3\">").expect("a §3 section");
        let article = &html[sec..];
        assert!(
            article.contains("<code class=\"check\">mall.state</code>"),
            "{html}"
        );
        assert!(article.contains("- expected: one of [0, 1, 2]"), "{html}");
        assert!(article.contains("+ actual:   3"), "{html}");
        assert!(article.contains("curl -sS -X POST"), "{html}");
        assert!(article.contains("app &lt;redacted&gt;"), "{html}");
        assert!(article.contains("{&quot;state&quot;:3}"), "{html}");
        assert!(
            html.contains("cases/mall-list.yaml › healthy"),
            "passing cases are listed"
        );
        assert!(!html.contains("<script"), "no scripts");
        assert!(!html.contains("href=\"http"), "no external assets");
    }

    #[test]
    fn hostile_body_and_names_are_escaped() {
        let evil = "</pre><script>alert('x')</script><img src=x onerror=alert(1)>";
        let html = rendered(&[case(
            0,
            evil,
            vec![Finding::new(&MALL_STATE, "/data/0/state", "0", evil)],
            evil,
        )]);
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("&lt;/pre&gt;&lt;script&gt;alert(&#39;x&#39;)"),
            "{html}"
        );
    }

    #[test]
    fn sections_sort_in_spec_order_and_warnings_and_errors_show() {
        let mut broken = exchange("");
        broken.response = None;
        broken.transport_error = Some("connection refused".into());
        let mut errored = case(
            2,
            "down",
            vec![Finding::new(
                &TRANSPORT_CONNECT,
                "",
                "a response",
                "connection refused",
            )],
            "",
        );
        errored.exchanges = vec![broken];
        let html = rendered(&[
            case(
                0,
                "order",
                vec![Finding::new(
                    &PRODUCTS_ORDER,
                    "/1/spuId",
                    "descending",
                    "12",
                )],
                "[]",
            ),
            case(
                1,
                "state",
                vec![Finding::new(&MALL_STATE, "/data/0/state", "0", "3")],
                "{}",
            ),
            errored,
        ]);
        let s3 = html.find("<section id=\"sec-3\">").expect("§3");
        let s4 = html.find("<section id=\"sec-4\">").expect("§4");
        let s42 = html.find("<section id=\"sec-4-2\">").expect("§4.2");
        assert!(s3 < s4 && s4 < s42, "spec order");
        assert!(html[s42..].contains("b-warn"), "warning section");
        assert!(html[s4..s42].contains("connection refused"), "{html}");
        assert!(html[s4..s42].contains("Response: none"), "{html}");
    }

    #[test]
    fn findings_of_one_check_are_grouped_under_one_heading() {
        let html = rendered(&[case(
            0,
            "page",
            vec![
                Finding::new(&MALL_STATE, "/data/0/state", "0", "3"),
                Finding::new(&MALL_STATE, "/data/1/state", "0", "4"),
            ],
            "{}",
        )]);
        assert_eq!(
            html.matches("<code class=\"check\">mall.state</code>")
                .count(),
            1
        );
        assert!(html.contains("(2 findings)"), "{html}");
        assert!(html.contains("at /data/0/state\n") && html.contains("at /data/1/state\n"));
        assert!(html.contains("+ actual:   4"), "{html}");
    }

    #[test]
    fn section_keys_order_numerically() {
        let mut s = vec!["case file", "§10", "§4.1", "§2.2", "§4", "-"];
        s.sort_by_key(|x| section_key(x));
        assert_eq!(s, vec!["§2.2", "§4", "§4.1", "§10", "-", "case file"]);
        assert_eq!(section_anchor("§4.1"), "sec-4-1");
        assert_eq!(section_anchor("case file"), "sec-case-file");
        assert_eq!(section_anchor("-"), "sec-other");
    }

    #[test]
    fn sink_marks_partial_runs_until_run_finished() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("report.html");
        let mut sink = FileReport::new(path.clone(), false, |r| Ok(render(r)));
        sink.on_event(&Event::RunStarted {
            base_url: "http://x".into(),
            cases: 1,
        })
        .expect("write");
        sink.on_event(&Event::CaseFinished(Box::new(case(0, "a", vec![], "{}"))))
            .expect("write");
        let partial = std::fs::read_to_string(&path).expect("written");
        assert!(partial.contains("id=\"partial\""), "{partial}");
        let mut summary = RunSummary::default();
        summary.add(Outcome::Pass);
        sink.on_event(&Event::RunFinished(summary)).expect("write");
        let done = std::fs::read_to_string(&path).expect("written");
        assert!(!done.contains("id=\"partial\""), "{done}");
        assert!(done.contains("1 case: 1 passed"), "{done}");
    }
}
