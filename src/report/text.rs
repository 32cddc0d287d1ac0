//! Plain-text rendering of findings and exchanges, shared by the console, JUnit and Markdown
//! so every report tells the same story.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::report::file::Run;
use crate::verdict::check::Check;
use crate::verdict::event::{CaseResult, Finding, Outcome, truncate};
use crate::verdict::exchange::Exchange;

/// Body characters shown in a report excerpt.
pub const BODY_EXCERPT_CHARS: usize = 600;

/// `1 case` / `2 cases`.
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// A duration in whole seconds, as a log line reads it: `45s`, `2m 05s`.
pub fn seconds(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m {:02}s", s / 60, s % 60)
    }
}

/// `2999950` as `2,999,950`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// How many findings of `check` the case counted but did not keep.
pub fn omitted_count(result: &CaseResult, check: &Check) -> usize {
    result
        .omitted
        .iter()
        .filter(|o| o.check.id == check.id)
        .map(|o| o.count)
        .sum()
}

/// One line per check among `shown` that lost findings:
/// ``… and 2,999,950 more `mall.fields` findings (counted, not kept)``.
pub fn omitted_lines(result: &CaseResult, shown: &[&Finding]) -> Vec<String> {
    let mut out = Vec::new();
    for o in &result.omitted {
        if shown.iter().any(|f| f.check.id == o.check.id) {
            out.push(omitted_line(o.check, o.count));
        }
    }
    out
}

/// ``… and 12 more `mall.fields` findings (counted, not kept)``.
pub fn omitted_line(check: &Check, count: usize) -> String {
    let noun = if count == 1 { "finding" } else { "findings" };
    format!(
        "… and {} more `{}` {noun} (counted, not kept)",
        thousands(count),
        check.id
    )
}

/// The target as a human report names it: `embedded (the reference server at URL)` for the
/// embedded server, else the base URL.
pub fn target(run: &Run<'_>) -> String {
    if run.target.is_empty() || run.target == run.base_url {
        run.base_url.to_string()
    } else {
        format!("{} (the reference server at {})", run.target, run.base_url)
    }
}

/// The word a human report leads with: the run's outcome once it is complete, else
/// `INTERRUPTED` (a run that did not finish never reads as a pass).
pub fn headline(run: &Run<'_>) -> &'static str {
    if run.complete {
        run.summary.outcome().label()
    } else {
        INTERRUPTED
    }
}

/// The headline of a run that did not complete.
pub const INTERRUPTED: &str = "INTERRUPTED";

/// How many cases passed only after a transport retry.
pub fn flaky_count(run: &Run<'_>) -> usize {
    run.results.iter().filter(|r| r.flaky).count()
}

/// What follows the count of passed cases in a report's totals: ` (N flaky: passed only after
/// a transport retry)`, or nothing (the console says the same).
pub fn flaky_note(run: &Run<'_>) -> String {
    match flaky_count(run) {
        0 => String::new(),
        n => format!(" ({n} flaky: passed only after a transport retry)"),
    }
}

/// Why a report is partial, as a sentence fragment, when the run is not complete.
pub fn incomplete_note(run: &Run<'_>) -> Option<String> {
    if run.complete {
        return None;
    }
    let total = run.results.len();
    let ran = total.saturating_sub(run.not_run);
    Some(match run.interrupted {
        Some(by) => format!(
            "the run was interrupted by {by} after {ran} of {}; the {} not run {} listed as skipped",
            plural(total, "case"),
            run.not_run,
            if run.not_run == 1 { "is" } else { "are" }
        ),
        None => format!(
            "the run had not finished when this report was written (it is still running, or it \
             stopped without finishing its reports): {ran} of {} finished",
            plural(total, "case")
        ),
    })
}

/// A finding as a few lines: the headline, where the case asked for it, and the detail.
pub fn finding(f: &Finding) -> String {
    let mut out = format!(
        "[{}] {}",
        f.check.family.label(f.check.severity),
        f.headline()
    );
    if let Some(loc) = &f.location {
        let _ = write!(
            out,
            "\n  --> {}:{}:{}",
            loc.file.display(),
            loc.line,
            loc.column
        );
    }
    if !f.detail.is_empty() {
        let _ = write!(out, "\n  {}", f.detail);
    }
    out
}

/// An exchange: the request as a curl command and the start of the response.
pub fn exchange(x: &Exchange) -> String {
    let mut out = format!("request: {}", x.request.to_curl());
    match (&x.response, &x.transport_error) {
        (Some(r), _) => {
            let _ = write!(
                out,
                "\nresponse: HTTP {} ({} bytes in {:.3}s): {}",
                r.status,
                r.body_len,
                x.duration.as_secs_f64(),
                truncate(r.body_excerpt.as_str(), BODY_EXCERPT_CHARS)
            );
        }
        (None, Some(e)) => {
            let _ = write!(out, "\nresponse: none ({e})");
        }
        (None, None) => out.push_str("\nresponse: none"),
    }
    out
}

/// Findings that count toward the outcome (failures and errors, or warnings for a WARN case).
pub fn blocking(result: &CaseResult, strict: bool) -> Vec<&Finding> {
    result
        .findings
        .iter()
        .filter(|f| matches!(f.outcome(strict), Outcome::Fail | Outcome::Error))
        .collect()
}

/// A clock time as RFC 3339 in UTC, to the millisecond (`2026-11-26T05:01:02.345Z`).
pub fn rfc3339(t: std::time::SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The line of its case file a case's outcome points at: that of the first of `shown` that
/// names a place in the case's own file, else the line the case starts on.
pub fn case_line(result: &CaseResult, shown: &[&Finding]) -> Option<usize> {
    shown
        .iter()
        .filter_map(|f| f.location.as_ref())
        .find(|l| l.file == result.id.file)
        .map(|l| l.line)
        .or(result.id.line)
}

/// `cases/mall-list.yaml › first page`: a case as reports name it.
pub fn case_label(r: &CaseResult) -> String {
    format!("{} › {}", r.id.file.display(), r.id.name)
}

/// Findings grouped by check, in first-seen order.
pub fn by_check<'a>(findings: &[&'a Finding]) -> Vec<Vec<&'a Finding>> {
    let mut groups: Vec<Vec<&Finding>> = Vec::new();
    for f in findings {
        match groups.iter_mut().find(|g| g[0].check.id == f.check.id) {
            Some(g) => g.push(f),
            None => groups.push(vec![f]),
        }
    }
    groups
}

/// The exchange a report shows for a case: the first that failed in transport, else the first
/// a finding shows in (the page of a walk where the fault is), else the first.
pub fn primary_exchange(result: &CaseResult) -> Option<&Exchange> {
    let xs = &result.exchanges;
    xs.iter()
        .find(|x| x.transport_error.is_some())
        .or_else(|| xs.iter().find(|x| x.shows_finding))
        .or(xs.first())
}

/// Full detail of a case for a failure body: findings, then the first exchange (or the one
/// that failed).
pub fn case_detail(result: &CaseResult, findings: &[&Finding]) -> String {
    case_detail_with(result, findings, findings.iter().map(|f| finding(f)))
}

/// [`case_detail`] with the findings written as `lines` (JUnit lists repeated findings once).
pub fn case_detail_with(
    result: &CaseResult,
    findings: &[&Finding],
    lines: impl IntoIterator<Item = String>,
) -> String {
    let mut out = String::new();
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    for line in omitted_lines(result, findings) {
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(x) = primary_exchange(result) {
        out.push_str(&exchange(x));
        out.push('\n');
    }
    out
}

/// Report inputs shared by the report modules' unit tests.
/// What makes two cases' findings (in a report section, or all of a case's) "identical" so the report shows them once:
/// the same checks failing at the same places (array indices in pointers ignored: page 2's
/// `/data/3` is page 1's `/data/0`) with the same expected and actual text, and the same
/// answer status (or transport error) on the exchange shown. Details, case names and request
/// bodies are case-specific and left out.
pub type GroupKey = (BTreeSet<(&'static str, String, String, String)>, String);

pub fn group_key(r: &CaseResult, findings: &[&Finding]) -> GroupKey {
    let found = findings
        .iter()
        .map(|f| {
            let pointer: Vec<&str> = f
                .pointer
                .split('/')
                .map(|seg| {
                    if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
                        "*"
                    } else {
                        seg
                    }
                })
                .collect();
            (
                f.check.id,
                pointer.join("/"),
                f.expected.clone(),
                f.actual.clone(),
            )
        })
        .collect();
    let answer = match primary_exchange(r) {
        Some(Exchange {
            response: Some(resp),
            ..
        }) => format!("HTTP {}", resp.status),
        Some(Exchange {
            transport_error: Some(e),
            ..
        }) => e.clone(),
        _ => String::new(),
    };
    (found, answer)
}

/// Cases with identical findings ([`GroupKey`]) together, groups in the order of their first
/// case; a case without findings stays alone.
pub fn identical_groups<'a>(
    cases: impl IntoIterator<Item = (&'a CaseResult, Vec<&'a Finding>)>,
) -> Vec<Vec<(&'a CaseResult, Vec<&'a Finding>)>> {
    let mut groups: Vec<Vec<(&CaseResult, Vec<&Finding>)>> = Vec::new();
    let mut index: BTreeMap<GroupKey, usize> = BTreeMap::new();
    for (r, findings) in cases {
        if findings.is_empty() {
            groups.push(vec![(r, findings)]);
            continue;
        }
        let key = group_key(r, &findings);
        match index.get(&key) {
            Some(&i) => groups[i].push((r, findings)),
            None => {
                index.insert(key, groups.len());
                groups.push(vec![(r, findings)]);
            }
        }
    }
    groups
}

#[cfg(test)]
pub(crate) mod fixtures {
    use std::path::Path;
    use std::time::Duration;

    use crate::report::Sink;
    use crate::report::file::{FileReport, Render, ReportKind};
    use crate::verdict::event::{CaseId, CaseResult, Event, Finding, Outcome};
    use crate::verdict::exchange::{Exchange, RequestRecord, ResponseRecord};

    /// A file-report sink writing `path` with `render`, told that a run started (with no
    /// planned case, so that its files list the finished cases only).
    pub fn started(path: &Path, render: Render) -> FileReport {
        let mut sink = FileReport::new(
            ReportKind::Json,
            path.to_path_buf(),
            false,
            render,
            &crate::redact::Redactor::new(),
        );
        sink.on_event(&Event::RunStarted {
            base_url: "http://x".into(),
            target: "http://x".into(),
            planned: vec![],
        })
        .expect("write");
        sink
    }

    /// A complete run against `http://127.0.0.1:1` of `results` (counted in `summary`), with
    /// `warnings`: what the renderers' tests render.
    pub fn run<'a>(
        summary: &'a crate::verdict::event::RunSummary,
        results: &'a [crate::verdict::sealed::Sealed<CaseResult>],
        warnings: &'a [String],
    ) -> crate::report::file::Run<'a> {
        crate::report::file::Run {
            base_url: "http://127.0.0.1:1",
            target: "http://127.0.0.1:1",
            strict: false,
            complete: true,
            interrupted: None,
            not_run: 0,
            summary,
            results,
            shard: None,
            embedded: false,
            started_at: None,
            warnings,
        }
    }

    /// A redacted mall-list exchange answered 200 with `body`.
    pub fn exchange(body: &str) -> Exchange {
        Exchange {
            request: RequestRecord {
                method: "POST".into(),
                url: "http://127.0.0.1:1/optimus/core/open/mall/queryMallList".into(),
                headers: vec![("Authorization".into(), "app <redacted>".into())],
                body: "{\"appid\":\"app\"}".into(),
            },
            response: Some(ResponseRecord {
                status: 200,
                headers: vec![("content-type".into(), "application/json".into())],
                body_excerpt: crate::verdict::exchange::Excerpt::text(body),
                body_len: body.len(),
            }),
            transport_error: None,
            duration: Duration::from_millis(5),
            shows_finding: false,
        }
    }

    /// A mall-list case of `cases/mall-list.yaml` with `findings` and one exchange.
    pub fn case(index: usize, name: &str, findings: Vec<Finding>, body: &str) -> CaseResult {
        CaseResult {
            id: CaseId {
                file: Path::new("cases/mall-list.yaml").into(),
                name: name.into(),
                endpoint: "mall-list".into(),
                index,
                line: None,
            },
            outcome: Outcome::of(&findings, false),
            findings,
            omitted: vec![],
            exchanges: vec![exchange(body)],
            skip_reason: None,
            flaky: false,
            duration: Duration::from_millis(7),
            coverage: vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits_by_three() {
        for (n, text) in [
            (0, "0"),
            (999, "999"),
            (1_000, "1,000"),
            (2_999_950, "2,999,950"),
            (12_345_678, "12,345,678"),
        ] {
            assert_eq!(thousands(n), text);
        }
    }
}
