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
use crate::verdict::check::{Check, Severity};
use crate::verdict::event::{CaseResult, Finding, Outcome};
use crate::verdict::exchange::Exchange;

/// Most findings of one check in one case shown.
pub const MAX_FINDINGS_PER_CHECK: usize = 25;
/// Most places listed for findings that differ only in where they are.
pub const MAX_PLACES: usize = 12;
/// Most exchanges of one case shown.
pub const MAX_EXCHANGES_PER_CASE: usize = 5;
/// Characters of a response body shown.
pub const BODY_CHARS: usize = 4_000;
/// Bytes of a pretty-printed JSON body shown (its indentation makes it longer than the raw).
pub const PRETTY_BYTES: usize = 2 * BODY_CHARS;

const STYLE: &str = "
:root{--pass:#1a7f37;--warn:#9a6700;--fail:#cf222e;--muted:#57606a;--line:#d0d7de;--bg:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1200px;padding:1.5rem;color:#1f2328}
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
.diff .exp{color:var(--pass)}.diff .act{color:var(--fail);font-weight:600}article.o-warn .diff .act{color:var(--warn)}
.legend{color:var(--muted);font-size:.9rem}.legend .exp{color:var(--pass)}.legend .act{color:var(--fail);font-weight:600}
.b-notrun{background:#fff;color:var(--muted);border:1px dashed var(--muted)}
.why{color:var(--muted);font-size:.85rem;overflow-wrap:anywhere}
td{overflow-wrap:break-word}
table.cases{table-layout:fixed}
.case-list{overflow-wrap:anywhere}
pre.response-body,pre.request-body{max-height:24rem;white-space:pre;word-break:normal}
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

/// The title of a spec section (the spec's own headings, shortened), for headings that would
/// otherwise be bare numbers.
fn section_title(section: &str) -> Option<&'static str> {
    Some(match section {
        "§1" => "What the service does",
        "§2" => "Resources and their fields",
        "§2.1" => "Seller identity",
        "§2.2" => "Mall",
        "§2.3" => "Seller",
        "§2.4" => "OrderStatistics",
        "§2.5" => "SellerStatistics",
        "§2.6" => "CrossCityPayment",
        "§2.7" => "Product",
        "§2.8" => "Sku",
        "§3" => "States and transitions",
        "§4" => "Endpoints",
        "§4.1" => "Mall list",
        "§4.2" => "Mall products",
        "§5" | "§5.1" | "§5.2" | "§5.3" => "Authentication",
        "§6" => "Events",
        "§7" | "§7.1" | "§7.2" | "§7.3" | "§7.4" => "Errors",
        "§8" => "Limits",
        "§9" => "Versioning",
        "case file" => "Case file expectations",
        "snapshot" => "Snapshots",
        "-" => "mallcheck itself (transport, harness)",
        _ => return None,
    })
}

/// A section's number and title, escaped: `§2.2 Mall`.
fn section_label(section: &str) -> String {
    match section_title(section) {
        Some(title) if !section.starts_with('§') => escape(title),
        Some(title) => format!("{} {}", escape(section), escape(title)),
        None => escape(section),
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
    let badge = if run.complete {
        badge(outcome)
    } else {
        format!("<span class=\"badge b-error\">{}</span>", text::INTERRUPTED)
    };
    let mut out = String::with_capacity(16 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"mallcheck {version}\">\n\
         <title>mallcheck report: {label}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <header>\n<h1>mallcheck report {badge}</h1>\n\
         <p class=\"meta\" id=\"totals\">{total}: {passed} passed{flaky}, {warned} warned, {failed} failed, \
         {errored} errored, {skipped} skipped in {secs:.2}s against <code>{url}</code>{strict} \
         · mallcheck {version}</p>\n",
        version = env!("CARGO_PKG_VERSION"),
        label = text::headline(run),
        total = escape(&text::plural(s.total(), "case")),
        passed = s.passed,
        flaky = escape(&text::flaky_note(run)),
        warned = s.warned,
        failed = s.failed,
        errored = s.errored,
        skipped = s.skipped,
        secs = s.duration.as_secs_f64(),
        url = escape(&text::target(run)),
        strict = if run.strict { " (strict)" } else { "" },
    );
    if let Some(code) = run.exit_code() {
        let _ = writeln!(
            out,
            "<p class=\"meta\" id=\"verdict\">Verdict: <strong>{}</strong> (exit {code})</p>",
            run.verdict()
        );
    }
    if let Some(note) = text::incomplete_note(run) {
        let _ = writeln!(
            out,
            "<p class=\"banner\" id=\"partial\">Partial report: {}.</p>",
            escape(&note)
        );
    }
    for warning in run.warnings {
        let _ = writeln!(
            out,
            "<p class=\"banner warning\">Warning: {}</p>",
            escape(warning)
        );
    }
    out.push_str("</header>\n<main>\n");
    // The failures first: the first screen shows what broke, the overview of every section
    // comes after them.
    out.push_str(&section_details(run));
    out.push_str(&section_overview(run));
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

/// Why a check did not run in a case, as far as the result tells: the runner records what was
/// found, not which checks ran, so this is read from the case (skipped), the check's scope
/// (its endpoint, `mallcheck fuzz` only) and the answers (none, or none that is JSON).
/// `None` means the check ran there (or may have).
fn not_run_why(check: &Check, r: &CaseResult) -> Option<&'static str> {
    let snapshot = crate::spec::catalog::SNAPSHOT_MATCH.id;
    if check.id == snapshot || check.id == crate::spec::catalog::SNAPSHOT_DATA.id {
        // The runner says in the coverage whether a snapshot was compared.
        return match r.coverage.iter().find(|c| c.check == snapshot) {
            Some(c)
                if c.scope
                    .starts_with(crate::verdict::event::SNAPSHOT_COMPARED) =>
            {
                None
            }
            Some(_) => Some("snapshots off (--snapshots off)"),
            None => Some("no case takes a snapshot"),
        };
    }
    if check.id.starts_with("fuzz.") {
        return Some("runs in mallcheck fuzz only");
    }
    let endpoint = endpoint_of(check);
    if let Some(e) = endpoint
        && r.id.endpoint != e
    {
        return Some(match e {
            "mall-list" => "no mall-list case ran",
            _ => "no mall-products case ran",
        });
    }
    if r.skip_reason.is_some() {
        return Some("case skipped");
    }
    if r.exchanges.is_empty() {
        return Some("no request was made");
    }
    if endpoint.is_some() && !r.exchanges.iter().any(answered_json) {
        return Some("no case got a JSON answer");
    }
    if let Some(record) = record_field(check)
        && !r.exchanges.iter().any(|x| answered_record(x, record))
    {
        return Some(match record {
            "\"mallSn\"" => "no mall record was returned (0 malls checked)",
            _ => "no product record was returned (0 products checked)",
        });
    }
    None
}

/// The field every record a check reads carries, for checks of mall or product records: such
/// a check checked nothing in a case whose answers held no record ("no findings" would be a
/// pass over nothing).
fn record_field(check: &Check) -> Option<&'static str> {
    match check.id.split('.').next().unwrap_or_default() {
        "mall" | "paging" | "ownership" if check.id != "ownership.unknown-merchant" => {
            Some("\"mallSn\"")
        }
        "product" | "sku" | "products" => Some("\"spuId\""),
        _ => None,
    }
}

/// Whether the exchange got a 2xx answer holding a record (the field, as far as the excerpt
/// shows).
fn answered_record(x: &Exchange, field: &str) -> bool {
    answered_json(x)
        && x.response
            .as_ref()
            .is_some_and(|r| r.body_excerpt.as_str().contains(field))
}

/// The operation whose response body a check reads, from its id; `None` for checks of any
/// exchange (transport, HTTP, auth, case assertions).
fn endpoint_of(check: &Check) -> Option<&'static str> {
    let family = check.id.split('.').next().unwrap_or_default();
    match family {
        "mall-list" | "mall" | "paging" | "ownership" => Some("mall-list"),
        "products" | "product" | "sku" => Some("mall-products"),
        _ => None,
    }
}

/// Whether the exchange got a 2xx answer whose body is (or, cut, starts like) JSON.
fn answered_json(x: &Exchange) -> bool {
    x.response.as_ref().is_some_and(|r| {
        (200..300).contains(&r.status)
            && if r.body_excerpt.as_str().len() == r.body_len {
                is_json(r.body_excerpt.as_str())
            } else {
                r.body_excerpt.as_str().trim_start().starts_with(['{', '['])
            }
    })
}

fn is_json(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// Reasons of [`not_run_why`] that come from the check's scope rather than from the case.
const SCOPE_REASONS: [&str; 4] = [
    "runs in mallcheck fuzz only",
    "no case takes a snapshot",
    "no mall-list case ran",
    "no mall-products case ran",
];

fn not_run_badge(why: &str) -> String {
    format!(
        "<span class=\"badge b-notrun\">not run</span> <span class=\"why\">{}</span>",
        escape(why)
    )
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
        let in_section: Vec<&Check> = CATALOG
            .iter()
            .copied()
            .filter(|c| c.section == section && c.severity != Severity::Info)
            .collect();
        let checks: Vec<String> = in_section
            .iter()
            .map(|c| format!("<code>{}</code>", escape(c.id)))
            .collect();
        let (name, verdict_html) = match verdict {
            Some(o) => (
                format!(
                    "<a href=\"#{}\">{}</a>",
                    section_anchor(section),
                    section_label(section)
                ),
                badge(o),
            ),
            None => (
                section_label(section),
                section_quiet_verdict(run, &in_section),
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

/// The verdict of a section without findings: "no findings" when one of its checks ran in some
/// case, else "not run" with the reasons.
fn section_quiet_verdict(run: &Run<'_>, checks: &[&Check]) -> String {
    let mut why: BTreeSet<&'static str> = BTreeSet::new();
    for c in checks {
        for r in run.results {
            match not_run_why(c, r) {
                None => return "<span class=\"badge b-none\">no findings</span>".to_string(),
                Some(w) => {
                    why.insert(w);
                }
            }
        }
    }
    // A check's scope (another operation, `mallcheck fuzz`) explains only a section that no
    // case of its scope reached; otherwise name what stopped the cases in scope.
    let scoped: BTreeSet<&'static str> = why
        .iter()
        .copied()
        .filter(|w| !SCOPE_REASONS.contains(w))
        .collect();
    if !scoped.is_empty() {
        why = scoped;
    }
    if why.is_empty() {
        why.insert("no case ran");
    }
    not_run_badge(&why.into_iter().collect::<Vec<_>>().join("; "))
}

fn section_details(run: &Run<'_>) -> String {
    let sections = sections_with_findings(run);
    let mut out = String::new();
    if !sections.is_empty() {
        out.push_str(
            "<p class=\"legend\" id=\"legend\">In each finding, <span class=\"exp\">- expected</span> \
             is what the spec asks for and <span class=\"act\">+ actual</span> is what the \
             service answered (the wrong value).</p>\n",
        );
    }
    for (section, worst) in sections {
        let _ = writeln!(
            out,
            "<section id=\"{}\">\n<h2>{} {}</h2>",
            section_anchor(section),
            section_label(section),
            badge(worst)
        );
        let groups = text::identical_groups(run.results.iter().filter_map(|r| {
            let findings: Vec<&Finding> = r
                .findings
                .iter()
                .filter(|f| f.check.section == section && reported(f, run.strict))
                .collect();
            (!findings.is_empty()).then_some((&**r, findings))
        }));
        for g in &groups {
            match g.as_slice() {
                [(r, findings)] => out.push_str(&case_article(r, findings, run.strict)),
                _ => out.push_str(&group_article(g, run.strict)),
            }
        }
        out.push_str("</section>\n");
    }
    out
}

fn worst_of(r: &CaseResult, findings: &[&Finding], strict: bool) -> Outcome {
    findings
        .iter()
        .map(|f| f.outcome(strict))
        .max()
        .unwrap_or(r.outcome)
}

fn case_article(r: &CaseResult, findings: &[&Finding], strict: bool) -> String {
    let worst = worst_of(r, findings, strict);
    let mut out = format!(
        "<article class=\"case o-{}\">\n<h3>{} <a href=\"#case-{}\">{}</a></h3>\n",
        worst.label().to_ascii_lowercase(),
        badge(worst),
        r.id.index,
        escape(&text::case_label(r))
    );
    out.push_str(&findings_html(r, findings));
    out.push_str(&exchanges_html(r, true));
    out.push_str("</article>\n");
    out
}

/// Cases whose findings in a section are identical ([`text::GroupKey`]): one heading naming the
/// finding and every case, then the first case's findings and exchange as the example.
fn group_article(members: &[(&CaseResult, Vec<&Finding>)], strict: bool) -> String {
    let (first, findings) = &members[0];
    let worst = members
        .iter()
        .map(|(r, f)| worst_of(r, f, strict))
        .max()
        .unwrap_or(first.outcome);
    let f = findings[0];
    let distinct: BTreeSet<(&str, &str, &str)> = findings
        .iter()
        .map(|f| (f.check.id, f.expected.as_str(), f.actual.as_str()))
        .collect();
    let more = if distinct.len() > 1 {
        format!(
            " (and {})",
            text::plural(distinct.len() - 1, "other finding")
        )
    } else {
        String::new()
    };
    let mut out = format!(
        "<article class=\"case group o-{}\" data-cases=\"{}\">\n<h3>{} <code>{}</code>: expected \
         {}, got {}{more} in {}</h3>\n",
        worst.label().to_ascii_lowercase(),
        members.len(),
        badge(worst),
        escape(f.check.id),
        escape(&f.expected),
        escape(&f.actual),
        escape(&text::plural(members.len(), "case")),
    );
    // The cases by file, each file named once, so that 26 cases stay a paragraph.
    let mut by_file: Vec<(String, Vec<String>)> = Vec::new();
    for (r, _) in members {
        let file = r.id.file.display().to_string();
        let link = format!(
            "<a href=\"#case-{}\">{}</a>",
            r.id.index,
            escape(&r.id.name)
        );
        match by_file.last_mut() {
            Some((f, links)) if *f == file => links.push(link),
            _ => by_file.push((file, vec![link])),
        }
    }
    let files: Vec<String> = by_file
        .iter()
        .map(|(f, links)| format!("<code>{}</code>: {}", escape(f), links.join(", ")))
        .collect();
    let _ = writeln!(
        out,
        "<p class=\"case-list\">{}</p>\n<p class=\"detail\">Example: {}</p>",
        files.join("; "),
        escape(&text::case_label(first))
    );
    out.push_str(&findings_html(first, findings));
    out.push_str(&exchanges_html(first, false));
    out.push_str("</article>\n");
    out
}

/// The findings of one case, one block per check.
fn findings_html(r: &CaseResult, findings: &[&Finding]) -> String {
    text::by_check(findings)
        .iter()
        .map(|g| check_group_html(g, text::omitted_count(r, g[0].check)))
        .collect()
}

/// The case's primary exchange, open, and (with `others`) the rest folded.
fn exchanges_html(r: &CaseResult, others: bool) -> String {
    let mut out = String::new();
    let Some(primary) = text::primary_exchange(r) else {
        return out;
    };
    // A walk's fault shows on a later page: say which exchange of the case this is.
    let position = r.exchanges.iter().position(|x| std::ptr::eq(x, primary));
    match position {
        Some(n) if n > 0 && primary.shows_finding => {
            let _ = writeln!(
                out,
                "<details open><summary>Request and response where it shows (exchange {} of {})</summary>",
                n + 1,
                r.exchanges.len()
            );
        }
        _ => out.push_str("<details open><summary>Request and response</summary>\n"),
    }
    out.push_str(&exchange_html(primary));
    out.push_str("</details>\n");
    let rest: Vec<&Exchange> = r
        .exchanges
        .iter()
        .filter(|x| !std::ptr::eq(*x, primary))
        .collect();
    if !others || rest.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "<details><summary>{} of this case</summary>",
        escape(&text::plural(rest.len(), "more exchange"))
    );
    for x in rest.iter().take(MAX_EXCHANGES_PER_CASE - 1) {
        out.push_str(&exchange_html(x));
    }
    if rest.len() > MAX_EXCHANGES_PER_CASE - 1 {
        let _ = writeln!(
            out,
            "<p class=\"detail\">… and {} (see the JSON report).</p>",
            text::plural(rest.len() - (MAX_EXCHANGES_PER_CASE - 1), "more")
        );
    }
    out.push_str("</details>\n");
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
        check.family.label(check.severity),
        escape(check.summary)
    );
    // Findings that differ only in where they are (every mall with state 3) share one entry
    // listing the places.
    let mut entries: Vec<(&Finding, Vec<&str>)> = Vec::new();
    for f in group {
        match entries
            .iter_mut()
            .find(|(e, _)| e.expected == f.expected && e.actual == f.actual && e.detail == f.detail)
        {
            Some((_, places)) => places.push(&f.pointer),
            None => entries.push((f, vec![&f.pointer])),
        }
    }
    for (i, (f, places)) in entries.iter().take(MAX_FINDINGS_PER_CHECK).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let at: Vec<&str> = places
            .iter()
            .take(MAX_PLACES)
            .map(|p| if p.is_empty() { "the whole body" } else { p })
            .collect();
        let more = if places.len() > MAX_PLACES {
            format!(
                " and {} ({} in all)",
                text::plural(places.len() - MAX_PLACES, "more place"),
                places.len()
            )
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "at {}{more}\n<span class=\"exp\">- expected: {}</span>\n<span class=\"act\">+ actual:   {}</span>\n",
            escape(&at.join(", ")),
            escape(&f.expected),
            escape(&f.actual)
        );
        if !f.detail.is_empty() {
            let _ = writeln!(out, "  {}", escape(&f.detail));
        }
    }
    if entries.len() > MAX_FINDINGS_PER_CHECK {
        let rest: usize = entries[MAX_FINDINGS_PER_CHECK..]
            .iter()
            .map(|(_, places)| places.len())
            .sum();
        let _ = write!(
            out,
            "\n… and {} (in the JSON report)\n",
            text::plural(rest, "more finding")
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
    if is_json(&x.request.body) {
        let _ = writeln!(
            out,
            "<details><summary>Request body</summary>\n<pre class=\"request-body json\">{}</pre>\n</details>",
            escape(&body_text(&x.request.body, x.request.body.len()))
        );
    }
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
            let json = shows_as_json(r.body_excerpt.as_str(), r.body_len);
            let _ = writeln!(
                out,
                "<p>Response:</p>\n<pre class=\"response\">{}</pre>\n<pre class=\"response-body{}\">{}</pre>",
                escape(&head),
                if json { " json" } else { "" },
                escape(&body_text(r.body_excerpt.as_str(), r.body_len))
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

/// Whether a body excerpt of a `total`-byte body is shown re-indented: the whole body is valid
/// JSON, or a cut one (the report keeps only the start of a large body) starts like JSON.
fn shows_as_json(excerpt: &str, total: usize) -> bool {
    if excerpt.len() >= total {
        is_json(excerpt)
    } else {
        excerpt.trim_start().starts_with(['{', '['])
    }
}

/// A body for display: re-indented when [`shows_as_json`], else as sent; either way cut to a
/// bound, with `… N more bytes` counting what is not shown of the `total` bytes of the body.
fn body_text(excerpt: &str, total: usize) -> String {
    let (mut shown, consumed) = if shows_as_json(excerpt, total) {
        pretty_json(excerpt, PRETTY_BYTES)
    } else {
        let cut = excerpt
            .char_indices()
            .nth(BODY_CHARS)
            .map_or(excerpt.len(), |(i, _)| i);
        (excerpt[..cut].to_string(), cut)
    };
    let rest = total.saturating_sub(consumed);
    if rest > 0 {
        shown.push('\n');
        let _ = write!(shown, "… {} more bytes", text::thousands(rest));
    }
    shown
}

/// Re-indents JSON text (or the start of it) two spaces a level without parsing its values (numbers, key
/// order and escapes stay exactly as sent), stopping once the output holds `max` bytes.
/// Returns the text and how many bytes of `json` it covers.
fn pretty_json(json: &str, max: usize) -> (String, usize) {
    fn newline(out: &mut String, depth: usize) {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    }
    let mut out = String::with_capacity(json.len().min(max) + 64);
    let mut depth = 0usize;
    let (mut in_string, mut escaped) = (false, false);
    let mut chars = json.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if out.len() >= max {
            return (out, i);
        }
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
                if let Some((_, close)) = chars.next_if(|(_, c)| matches!(c, '}' | ']')) {
                    out.push(close);
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    (out, json.len())
}

fn case_list(run: &Run<'_>) -> String {
    // The skip reason has a column of its own (wide, wrapping) when some case was skipped.
    let skips = run.results.iter().any(|r| r.skip_reason.is_some());
    let (reason_col, reason_th) = if skips {
        ("<col style=\"width:24rem\">", "<th>Skip reason</th>")
    } else {
        ("", "")
    };
    let mut out = format!(
        "<section id=\"cases\">\n<h2>All cases</h2>\n<table class=\"cases\">\n\
         <colgroup><col style=\"width:5.5rem\"><col><col style=\"width:7.5rem\">\
         <col style=\"width:6.5rem\">{reason_col}<col style=\"width:4.5rem\"></colgroup>\n\
         <tr><th>Verdict</th><th>Case</th><th>Endpoint</th><th>Findings</th>{reason_th}\
         <th>Time</th></tr>\n",
    );
    for r in run.results {
        let shown: Vec<&Finding> = r
            .findings
            .iter()
            .filter(|f| reported(f, run.strict))
            .collect();
        let findings = if r.skip_reason.is_some() && shown.is_empty() {
            "<span class=\"badge b-notrun\">not run</span>".to_string()
        } else {
            let sections: BTreeSet<&str> = shown.iter().map(|f| f.check.section).collect();
            let links: Vec<String> = sections
                .iter()
                .map(|s| format!("<a href=\"#{}\">{}</a>", section_anchor(s), escape(s)))
                .collect();
            format!("{} {}", shown.len(), links.join(" "))
        };
        let reason = if skips {
            format!(
                "<td class=\"why skip-reason\">{}</td>",
                r.skip_reason.as_deref().map(escape).unwrap_or_default()
            )
        } else {
            String::new()
        };
        // What the case covered, under its name: a pass is read with its scope.
        let covered: String = r
            .coverage
            .iter()
            .map(|c| {
                format!(
                    "<div class=\"why covered\">covered: {}</div>",
                    escape(&c.to_string())
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "<tr id=\"case-{}\"><td>{}</td><td>{}{covered}</td><td>{}</td><td>{}</td>{}<td>{:.3}s</td></tr>",
            r.id.index,
            badge(r.outcome),
            escape(&text::case_label(r)),
            escape(&r.id.endpoint),
            findings,
            reason,
            r.duration.as_secs_f64()
        );
    }
    out.push_str("</table>\n</section>\n");
    out
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::redact::Redactor;
    use crate::report::Sink;
    use crate::report::text::fixtures::{case, exchange, started};
    use crate::spec::catalog::{HTTP_SERVER_ERROR, MALL_STATE, PRODUCTS_ORDER, TRANSPORT_CONNECT};
    use crate::verdict::event::{Event, RunSummary};

    fn rendered(results: &[CaseResult]) -> String {
        let mut summary = RunSummary::default();
        for r in results {
            summary.add(r.outcome);
        }
        let results: Vec<_> = results
            .iter()
            .map(|r| r.clone().seal(&Redactor::new()))
            .collect();
        render(&crate::report::text::fixtures::run(&summary, &results, &[]))
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
        assert!(
            article.contains("{\n  &quot;state&quot;: 3\n}"),
            "the JSON body pretty-printed: {html}"
        );
        assert!(
            html.contains("cases/mall-list.yaml › healthy"),
            "passing cases are listed"
        );
        assert!(!html.contains("<script"), "no scripts");
        assert!(!html.contains("href=\"http"), "no external assets");
    }

    #[test]
    fn flaky_passes_are_counted_in_the_totals() {
        let mut flaky = case(0, "first page", vec![], "{}");
        flaky.flaky = true;
        let html = rendered(&[flaky]);
        assert!(
            html.contains(
                "1 case: 1 passed (1 flaky: passed only after a transport retry), 0 warned"
            ),
            "{html}"
        );
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
        let mut sink = started(&path, |r| Ok(render(r)));
        sink.on_event(&Event::CaseFinished(Box::new(
            case(0, "a", vec![], "{}").seal(&Redactor::new()),
        )))
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

    fn server_error(index: usize, name: &str) -> CaseResult {
        let mut r = case(
            index,
            name,
            vec![Finding::new(
                &HTTP_SERVER_ERROR,
                "",
                "a status below 500 with a JSON body",
                "HTTP 500, not JSON",
            )],
            "<html>500</html>",
        );
        if let Some(resp) = r.exchanges[0].response.as_mut() {
            resp.status = 500;
        }
        r
    }

    #[test]
    fn identical_findings_of_many_cases_make_one_group_with_one_example() {
        let mut results: Vec<CaseResult> = (0..26)
            .map(|i| server_error(i, &format!("case number {i}")))
            .collect();
        results.push(case(
            26,
            "other",
            vec![Finding::new(
                &HTTP_SERVER_ERROR,
                "",
                "a status below 500 with a JSON body",
                "HTTP 503",
            )],
            "{}",
        ));
        let html = rendered(&results);
        let sec = &html[html.find("<section id=\"sec-7\">").expect("§7")..];
        assert_eq!(
            sec.matches("<article").count(),
            2,
            "one group + one: {html}"
        );
        assert!(sec.contains("data-cases=\"26\""), "{html}");
        assert!(
            sec.contains(
                "<code>http.server-error</code>: expected a status below 500 with a JSON body, \
                 got HTTP 500, not JSON in 26 cases</h3>"
            ),
            "the group's heading: {html}"
        );
        for i in 0..26 {
            assert!(
                sec.contains(&format!("<a href=\"#case-{i}\">case number {i}</a>")),
                "case {i} is listed: {html}"
            );
        }
        assert_eq!(
            sec.matches("<pre class=\"request\">").count(),
            2,
            "one example exchange per group: {html}"
        );
        assert_eq!(
            sec.matches("<code class=\"check\">http.server-error</code>")
                .count(),
            2,
            "{html}"
        );
    }

    #[test]
    fn array_indices_do_not_split_a_group_but_other_values_do() {
        let state = |i, ptr: &str, actual: &str| {
            case(
                i,
                &format!("page {i}"),
                vec![Finding::new(&MALL_STATE, ptr, "one of [0, 1, 2]", actual)],
                "{}",
            )
        };
        let html = rendered(&[
            state(0, "/data/0/state", "3"),
            state(1, "/data/7/state", "3"),
            state(2, "/data/0/state", "4"),
        ]);
        let sec = &html[html.find("<section id=\"sec-3\">").expect("§3")..];
        assert_eq!(sec.matches("<article").count(), 2, "{html}");
        assert!(sec.contains("data-cases=\"2\""), "{html}");
    }

    #[test]
    fn json_bodies_are_pretty_printed_as_sent_and_others_raw() {
        let body = "{\"b\":[1,{}],\"a\":-9223372036854775809,\"s\":\"x,{y}\\\"\",\"e\":[]}";
        let html = rendered(&[case(
            0,
            "json",
            vec![Finding::new(&MALL_STATE, "/data/0/state", "0", "3")],
            body,
        )]);
        let pretty = "{\n  &quot;b&quot;: [\n    1,\n    {}\n  ],\n  &quot;a&quot;: \
                      -9223372036854775809,\n  &quot;s&quot;: &quot;x,{y}\\&quot;&quot;,\n  \
                      &quot;e&quot;: []\n}";
        assert!(
            html.contains(&format!("<pre class=\"response-body json\">{pretty}</pre>")),
            "key order, numbers and strings kept: {html}"
        );
        assert!(
            html.contains(
                "<pre class=\"request-body json\">{\n  &quot;appid&quot;: &quot;app&quot;\n}</pre>"
            ),
            "{html}"
        );
        let html = rendered(&[case(
            0,
            "html",
            vec![Finding::new(&MALL_STATE, "", "0", "3")],
            "<p>{\"a\":1}</p>",
        )]);
        assert!(
            html.contains(
                "<pre class=\"response-body\">&lt;p&gt;{&quot;a&quot;:1}&lt;/p&gt;</pre>"
            ),
            "{html}"
        );
    }

    #[test]
    fn a_large_body_is_cut_with_the_bytes_left() {
        let big = format!("[{}1]", "1,".repeat(10_000));
        let (pretty, used) = pretty_json(&big, PRETTY_BYTES);
        assert!(pretty.len() < PRETTY_BYTES + 8, "bounded");
        assert!(used < big.len());
        let shown = body_text(&big, big.len());
        assert!(
            shown.ends_with(&format!(
                "… {} more bytes",
                text::thousands(big.len() - used)
            )),
            "{shown}"
        );
        let cut = &big[..2_048];
        let shown = body_text(cut, big.len());
        assert!(
            shown.starts_with("[\n  1,\n  1,\n"),
            "a cut JSON body re-indented"
        );
        assert!(
            shown.ends_with(&format!(
                "\n… {} more bytes",
                text::thousands(big.len() - 2_048)
            )),
            "{shown}"
        );
        let page = format!("<html>{}</html>", "x".repeat(10_000));
        let shown = body_text(&page[..5_000], page.len());
        assert!(
            shown.starts_with(&page[..BODY_CHARS]),
            "a cut HTML body is shown raw"
        );
        assert!(
            shown.ends_with(&format!(
                "x\n… {} more bytes",
                text::thousands(page.len() - BODY_CHARS)
            )),
            "{shown}"
        );
    }

    #[test]
    fn the_actual_value_is_painted_as_wrong_and_a_legend_says_which_is_which() {
        let html = rendered(&[case(
            0,
            "state",
            vec![Finding::new(&MALL_STATE, "/data/0/state", "0", "3")],
            "{}",
        )]);
        assert!(
            html.contains("<span class=\"exp\">- expected: 0</span>")
                && html.contains("<span class=\"act\">+ actual:   3</span>"),
            "{html}"
        );
        assert!(
            STYLE.contains(".diff .act{color:var(--fail)"),
            "actual in red"
        );
        assert!(STYLE.contains(".diff .exp{color:var(--pass)}"));
        assert!(
            !STYLE.contains(".add{color:var(--pass)}"),
            "nothing else green"
        );
        assert!(html.contains("id=\"legend\""), "{html}");
    }

    #[test]
    fn the_failures_come_first_under_section_titles() {
        let finding = Finding::new(&MALL_STATE, "/data/0/state", "0, 1 or 2", "3");
        let html = rendered(&[case(0, "list", vec![finding], "{\"data\":[]}")]);
        let failures = html.find("<section id=\"sec-3\">").expect("the §3 section");
        let overview = html
            .find("<section id=\"sections\">")
            .expect("the overview");
        assert!(failures < overview, "the failures open the report: {html}");
        assert!(html.contains("<h2>§3 States and transitions "), "{html}");
        assert!(html.contains("§2.2 Mall</td>"), "{html}");
    }

    #[test]
    fn checks_that_did_not_run_say_not_run_with_why() {
        let mut skipped = case(1, "skipped one", vec![], "{}");
        skipped.skip_reason = Some(format!("needs MALLCHECK_MALL_SN {}", "x".repeat(300)));
        skipped.outcome = Outcome::Skip;
        skipped.exchanges.clear();
        skipped.id.endpoint = "mall-products".into();
        let list = case(0, "list", vec![], "{\"data\":[{\"mallSn\":\"1\"}]}");
        let html = rendered(&[list, skipped]);
        let row = |section: &str| {
            let start = html
                .find(&format!("<tr><td>{section} "))
                .unwrap_or_else(|| panic!("{section} row: {html}"));
            html[start..start + html[start..].find("</tr>").expect("row end")].to_string()
        };
        assert!(row("§3").contains("no findings"), "mall checks ran: {html}");
        let products = row("§2.7");
        assert!(products.contains("not run"), "{products}");
        assert!(products.contains("case skipped"), "{products}");
        assert!(!products.contains("no findings"), "{products}");
        let fuzz_only = row("§1");
        assert!(
            fuzz_only.contains("no findings"),
            "paging.repeatable is a run check"
        );
        let case_row = &html[html.find("<tr id=\"case-1\">").expect("row")..];
        let case_row = &case_row[..case_row.find("</tr>").expect("end")];
        assert!(
            case_row.contains("b-notrun\">not run</span></td>"),
            "{case_row}"
        );
        assert!(
            case_row.contains("<td class=\"why skip-reason\">needs MALLCHECK_MALL_SN xxx"),
            "the reason in its own column: {case_row}"
        );
        assert!(STYLE.contains(".why{") && STYLE.contains("overflow-wrap:anywhere"));
        let none_skipped = rendered(&[case(0, "list", vec![], "{}")]);
        assert!(
            !none_skipped.contains("Skip reason"),
            "no empty reason column: {none_skipped}"
        );
    }

    #[test]
    fn findings_that_differ_only_in_place_share_one_entry() {
        let findings: Vec<Finding> = (0..15)
            .map(|i| Finding::new(&MALL_STATE, format!("/data/{i}/state"), "0", "3"))
            .collect();
        let html = rendered(&[case(0, "page", findings, "{}")]);
        assert_eq!(html.matches("+ actual:   3").count(), 1, "{html}");
        assert!(
            html.contains("at /data/0/state, /data/1/state, "),
            "the places listed: {html}"
        );
        assert!(
            html.contains("/data/11/state and 3 more places (15 in all)\n"),
            "{html}"
        );
        assert!(html.contains("(15 findings)"), "{html}");
    }
}
