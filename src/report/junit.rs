//! The one JUnit XML module (through quick-junit): the report of `run` (the [`Junit`] sink), the
//! documents of `fuzz` and `diff` (built with [`testcase`], [`suite`] and [`document`]), and the
//! reader `merge` uses ([`read`]).
//!
//! Every document is valid against the strict JUnit schemas pipelines check, unmodified:
//! pytest's and Jenkins xunit's `junit-10.xsd` (tests/fixtures/junit/). What they have no
//! attribute for goes where they allow it:
//! - the case file is the `file` attribute of `<testsuite>` (not of `<testcase>`: pytest's
//!   schema has none); the line of a failing case starts its failure text (`at FILE:LINE`);
//! - the run's target, base URL and shard are `<properties>` of every `<testsuite>` (the only
//!   place the schemas allow properties), which `merge` reads back;
//! - `<testsuites>` carries `tests`, `failures`, `errors` and `time`, not `skipped` (the
//!   schemas have no such attribute there): each `<testsuite>` counts its skipped cases;
//! - every `<testcase>` has a `time`.
//!
//! Conventions, for what Jenkins, GitLab and the GitHub test reporters show:
//! - `classname` has no file-extension dot (Jenkins splits it on its last dot into package and
//!   class): `cases/auth.yaml` becomes `cases.auth`;
//! - no `package`, `hostname`, `id` or timestamp defaults;
//! - a finding repeated word for word (two walks of the same pages) is listed once, with a count.
//!
//! In `run`, one `<testsuite>` per case file, one `<testcase>` per case. A contract finding is a
//! `<failure>`, a transport or harness problem an `<error>`. A case that warned passes, named
//! with the [`WARN_PREFIX`] (the one place every JUnit viewer shows in its list), its warnings
//! in `<system-out>`, and its suite counts them in the `warnings` property. The file is rewritten atomically as cases finish (on the schedule of
//! [`Cadence`](crate::report::cadence::Cadence)) and when the run ends or is interrupted, so it is always a valid report of what
//! ran.

use std::collections::BTreeMap;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use crate::redact::Redactor;
use crate::report::file::{FileReport, ReportKind, Run, Shard};
use crate::report::{Sink, text};
use crate::spec::catalog;
use crate::verdict::event::{CaseResult, Event, Finding, Outcome};

/// Writes a JUnit report to a path: the shared [`FileReport`] sink with [`render`].
pub struct Junit(FileReport);

impl Junit {
    /// A sink writing `path`, scrubbed with `redactor` (the session's).
    pub fn new(path: PathBuf, strict: bool, redactor: &Redactor) -> Self {
        Junit(FileReport::new(
            ReportKind::Junit,
            path,
            strict,
            render,
            redactor,
        ))
    }

    /// Records the run's shard and whether its target is the embedded server (see
    /// [`FileReport::with_shard`] and [`FileReport::with_embedded`]).
    pub fn with_run(self, shard: Option<Shard>, embedded: bool) -> Self {
        Junit(self.0.with_shard(shard).with_embedded(embedded))
    }

    /// Records the run's warnings (see [`FileReport::with_warnings`]).
    pub fn with_warnings(self, warnings: Vec<String>) -> Self {
        Junit(self.0.with_warnings(warnings))
    }
}

/// Removes what XML 1.0 cannot carry (control characters) and what would end a CDATA section.
pub fn xml_safe(s: &str) -> String {
    s.chars()
        .filter(|&c| {
            matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}')
        })
        .collect::<String>()
        .replace("]]>", "]] >")
}

/// What became of one test case.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// Passed.
    Pass,
    /// A contract finding: `ty` is the check id, `message` one line, `detail` the full text.
    Failure {
        /// The check id.
        ty: String,
        /// One line.
        message: String,
        /// The full text.
        detail: String,
    },
    /// The case could not be judged (transport, harness).
    Error {
        /// What kind of problem.
        ty: String,
        /// One line.
        message: String,
        /// The full text.
        detail: String,
    },
    /// Not run, and why.
    Skipped {
        /// Why.
        reason: String,
    },
}

/// Starts the name of a testcase that passed with warnings: `[WARN] first page …`.
pub const WARN_PREFIX: &str = "[WARN] ";

/// The name of a testcase without its [`WARN_PREFIX`]: the case's identity across runs.
pub fn unmarked(name: &str) -> &str {
    name.strip_prefix(WARN_PREFIX).unwrap_or(name)
}

/// Suite property naming the target: `embedded` (the reference server mallcheck started) or
/// the base URL.
pub const TARGET_PROPERTY: &str = "target";
/// Suite property giving the base URL the run sent its requests to.
pub const BASE_URL_PROPERTY: &str = "base_url";
/// Suite property giving the shard(s) the suite comes from, `K/N` (a merge lists several,
/// comma-separated).
pub const SHARD_PROPERTY: &str = "shard";
/// Testsuite property of a shard's selection: `N:DIGEST` (cases selected before sharding, and
/// the digest of their ids), so that a merge can tell shards of different selections.
pub const SELECTION_PROPERTY: &str = "selection";
/// Suite property holding one warning of the run (edited schemas, a setting with blanks
/// around it), one property each: the console's `warning:` lines.
pub const WARNING_PROPERTY: &str = "mallcheck.warning";
/// Suite property naming the CI run the report was written in (`github:1234567`, see
/// [`super::ci_run`]): shards of one pipeline share it.
pub const CI_RUN_PROPERTY: &str = "mallcheck.ci-run";
/// Suite property counting its testcases that passed with warnings.
pub const WARNINGS_PROPERTY: &str = "warnings";
/// Suite property counting its testcases that passed only after a transport retry (each
/// begins its `<system-out>` with [`FLAKY_NOTE`]).
pub const FLAKY_PROPERTY: &str = "flaky";
/// The first line of a flaky testcase's `<system-out>`.
pub const FLAKY_NOTE: &str = "flaky: passed only after a transport retry (--retries)";

/// A `<testcase>` of class `classname` (a case file's [`classname`], or another source).
pub fn testcase(name: &str, classname: &str, time: Duration, verdict: Verdict) -> TestCase {
    let status = match verdict {
        Verdict::Pass => TestCaseStatus::success(),
        Verdict::Failure {
            ty,
            message,
            detail,
        } => non_success(NonSuccessKind::Failure, &ty, &message, &detail),
        Verdict::Error {
            ty,
            message,
            detail,
        } => non_success(NonSuccessKind::Error, &ty, &message, &detail),
        Verdict::Skipped { reason } => {
            let mut s = TestCaseStatus::skipped();
            s.set_type("skipped").set_message(xml_safe(&reason));
            s
        }
    };
    let mut case = TestCase::new(xml_safe(name), status);
    case.set_classname(xml_safe(classname));
    case.set_time(time);
    case
}

fn non_success(kind: NonSuccessKind, ty: &str, message: &str, detail: &str) -> TestCaseStatus {
    let mut s = TestCaseStatus::non_success(kind);
    s.set_type(xml_safe(ty)).set_message(xml_safe(message));
    if !detail.is_empty() {
        s.set_description(xml_safe(detail));
    }
    s
}

/// A `<testsuite>` of `cases`, with `file` when all of them come from one file; its time is the
/// sum of the cases' times.
pub fn suite(name: &str, file: Option<&Path>, cases: Vec<TestCase>) -> TestSuite {
    let mut suite = TestSuite::new(xml_safe(name));
    let time: Duration = cases.iter().filter_map(|c| c.time).sum();
    suite.add_test_cases(cases);
    suite.set_time(time);
    if let Some(file) = file {
        suite
            .extra
            .insert("file".into(), xml_safe(&file_attr(file)).into());
    }
    suite
}

/// The `<testsuites>` document named `name` (e.g. `mallcheck run`), with totals, as XML text;
/// its time is the sum of the suites' times.
pub fn document(name: &str, suites: Vec<TestSuite>) -> io::Result<String> {
    let time: Duration = suites.iter().filter_map(|s| s.time).sum();
    document_timed(name, suites, time)
}

/// [`document`] with the given time on `<testsuites>`: the wall time of a run, shorter than
/// the sum of its cases' times when cases ran at once.
pub fn document_timed(name: &str, suites: Vec<TestSuite>, time: Duration) -> io::Result<String> {
    let mut report = Report::new(name);
    report.add_test_suites(suites);
    report.set_time(time);
    let xml = report.to_string().map_err(io::Error::other)?;
    Ok(without_root_skipped(xml))
}

/// Drops the `skipped` attribute quick-junit always writes on `<testsuites>`, which neither
/// strict schema allows. Attribute values are escaped (`"` is `&quot;`), so the first
/// ` skipped="` inside the root tag is the attribute itself.
fn without_root_skipped(mut xml: String) -> String {
    let Some(start) = xml.find("<testsuites") else {
        return xml;
    };
    let end = xml[start..].find('>').map_or(xml.len(), |e| start + e);
    const ATTR: &str = " skipped=\"";
    if let Some(at) = xml[start..end].find(ATTR).map(|a| start + a)
        && let Some(close) = xml[at + ATTR.len()..end].find('"')
    {
        xml.replace_range(at..at + ATTR.len() + close + 1, "");
    }
    xml
}

/// Adds `<properties>` to a suite, in order.
pub fn add_properties<'a>(
    suite: &mut TestSuite,
    properties: impl IntoIterator<Item = (&'a str, String)>,
) {
    for (name, value) in properties {
        suite.add_property(Property::new(name, xml_safe(&value)));
    }
}

/// The values of a suite's property `name`.
pub fn property<'a>(suite: &'a TestSuite, name: &str) -> impl Iterator<Item = &'a str> {
    suite
        .properties
        .iter()
        .filter(move |p| p.name.as_str() == name)
        .map(|p| p.value.as_str())
}

/// Name and class of the testcase that marks a run that did not complete.
pub const INTERRUPTED_CASE: (&str, &str) = ("run interrupted", "mallcheck");

/// Reads a JUnit XML document (`<testsuites>` root, or a single `<testsuite>`) back.
pub fn read(text: &str) -> Result<Report, String> {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    let body = match body.strip_prefix("<?xml") {
        Some(rest) => rest.split_once("?>").map_or("", |(_, r)| r).trim_start(),
        None => body,
    };
    let wrapped;
    let body = if body.starts_with("<testsuites") {
        body
    } else if body.starts_with("<testsuite") {
        wrapped = format!("<testsuites>{body}</testsuites>");
        &wrapped
    } else {
        let root: String = body
            .trim_start_matches('<')
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':'))
            .collect();
        return Err(format!(
            "the root element is <{root}>, expected <testsuites> or <testsuite>"
        ));
    };
    let mut report = Report::deserialize_from_str(body).map_err(|e| e.to_string())?;
    // Recount from the cases: the totals of the file are not trusted.
    let suites = std::mem::take(&mut report.test_suites);
    let mut fresh = Report::new(report.name.clone().map_or_else(String::new, String::from));
    fresh.name = report.name.clone();
    fresh.time = report.time;
    for s in suites {
        let mut counted = TestSuite::new(s.name.clone());
        counted.time = s.time;
        counted.timestamp = s.timestamp;
        counted.properties = s.properties.clone();
        counted.system_out = s.system_out.clone();
        counted.system_err = s.system_err.clone();
        counted.extra = s.extra.clone();
        counted.add_test_cases(s.test_cases);
        fresh.add_test_suite(counted);
    }
    Ok(fresh)
}

/// A classname without a file-extension dot, which Jenkins would take for the package/class
/// split: the path's components without the extension, joined by dots, other dots made `_`
/// (`cases/auth.yaml` → `cases.auth`). Absolute paths under the working directory are made
/// relative first.
pub fn classname(path: &Path) -> String {
    let rel = relative(path);
    let stem = rel.with_extension("");
    let parts: Vec<String> = stem
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().replace('.', "_")),
            Component::ParentDir => Some("_".to_string()),
            _ => None,
        })
        .collect();
    parts.join(".")
}

/// The `file` attribute: the path relative to the working directory when it lies under it
/// (CI tools resolve it against the checkout), as given otherwise.
pub fn file_attr(path: &Path) -> String {
    relative(path).display().to_string()
}

fn relative(path: &Path) -> PathBuf {
    if path.is_absolute()
        && let Ok(cwd) = std::env::current_dir()
        && let Ok(rel) = path.strip_prefix(&cwd)
    {
        return rel.to_path_buf();
    }
    path.to_path_buf()
}

/// The findings as text, each distinct one once: a finding repeated word for word (the same
/// record seen by two walks) gets a `(×N)` count instead of N copies.
fn distinct_findings(findings: &[&Finding]) -> Vec<String> {
    let mut order: Vec<(String, usize)> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for f in findings {
        let line = text::finding(f);
        if let Some(&i) = index.get(&line) {
            order[i].1 += 1;
        } else {
            index.insert(line.clone(), order.len());
            order.push((line, 1));
        }
    }
    order
        .into_iter()
        .map(|(line, n)| {
            if n == 1 {
                line
            } else {
                let (head, rest) = line.split_once('\n').unwrap_or((&line, ""));
                let mut out = format!("{head} (×{n})");
                if !rest.is_empty() {
                    out.push('\n');
                    out.push_str(rest);
                }
                out
            }
        })
        .collect()
}

fn run_case(result: &CaseResult, strict: bool) -> TestCase {
    let blocking = text::blocking(result, strict);
    let verdict = match result.outcome {
        Outcome::Fail | Outcome::Error => {
            let distinct = distinct_findings(&blocking).len();
            let (ty, headline) = blocking.first().map_or_else(
                || ("mallcheck".to_string(), "failed".to_string()),
                |f| (f.check.id.to_string(), f.headline()),
            );
            let omitted: usize = result
                .omitted
                .iter()
                .filter(|o| blocking.iter().any(|f| f.check.id == o.check.id))
                .map(|o| o.count)
                .sum();
            let more = distinct.saturating_sub(1) + omitted;
            let message = if more > 0 {
                format!("{headline} (+{} more)", text::thousands(more))
            } else {
                headline
            };
            // The failure body: where in the case file, the distinct findings, the findings
            // counted but not kept, then the exchange that failed (or the first).
            let mut detail = match text::case_line(result, &blocking) {
                Some(line) => format!("at {}:{line}\n", file_attr(&result.id.file)),
                None => String::new(),
            };
            detail.push_str(&text::case_detail_with(
                result,
                &blocking,
                distinct_findings(&blocking),
            ));
            if result.outcome == Outcome::Fail {
                Verdict::Failure {
                    ty,
                    message,
                    detail,
                }
            } else {
                Verdict::Error {
                    ty,
                    message,
                    detail,
                }
            }
        }
        Outcome::Skip => Verdict::Skipped {
            reason: result
                .skip_reason
                .clone()
                .unwrap_or_else(|| "skipped".to_string()),
        },
        Outcome::Pass | Outcome::Warn => Verdict::Pass,
    };
    let name = if result.outcome == Outcome::Warn {
        format!("{WARN_PREFIX}{}", result.id.name)
    } else {
        result.id.name.clone()
    };
    let mut case = testcase(&name, &classname(&result.id.file), result.duration, verdict);
    let notes: Vec<&Finding> = result
        .findings
        .iter()
        .filter(|f| matches!(f.outcome(strict), Outcome::Warn | Outcome::Pass))
        .collect();
    let mut notes = distinct_findings(&notes);
    // What each check covered, first in <system-out>: junit-10.xsd (Jenkins) allows no
    // properties on a test case.
    for (i, c) in result.coverage.iter().enumerate() {
        notes.insert(i, format!("covered: {c}"));
    }
    if result.flaky {
        notes.insert(0, FLAKY_NOTE.to_string());
    }
    if !notes.is_empty() {
        case.set_system_out(xml_safe(&notes.join("\n")));
    }
    case
}

/// Renders a run as JUnit XML, grouped by case file in case order, timed with the run's wall
/// time. A run that did not complete gets one more suite, `mallcheck`, whose testcase
/// `run interrupted` is an `<error>` of type `harness.interrupted` saying so (a CI test view
/// shows the run red, not a green subset); its cases not run are `<skipped>`.
pub fn render(run: &Run<'_>) -> io::Result<String> {
    render_named("mallcheck run", run)
}

/// [`render`] under another document name (`mallcheck fuzz` for its preflight case).
pub fn render_named(name: &str, run: &Run<'_>) -> io::Result<String> {
    let mut by_file: BTreeMap<&Path, Vec<&CaseResult>> = BTreeMap::new();
    for r in run.results {
        by_file.entry(r.id.file.as_path()).or_default().push(r);
    }
    let mut suites = Vec::new();
    for (file, mut cases) in by_file {
        cases.sort_by_key(|r| r.id.index);
        let warnings = cases.iter().filter(|r| r.outcome == Outcome::Warn).count();
        let flaky = cases.iter().filter(|r| r.flaky).count();
        let cases = cases.into_iter().map(|r| run_case(r, run.strict)).collect();
        // The run's own cases (`preflight`, `discovery`) come from no file: a `file` would
        // send a CI's link to a file that does not exist.
        let pseudo = crate::verdict::event::is_run_case_file(file);
        let mut suite = suite(&file_attr(file), (!pseudo).then_some(file), cases);
        add_properties(&mut suite, run_properties(run));
        if let Some(t) = run.started_at {
            suite.set_timestamp(chrono::DateTime::<chrono::Utc>::from(t));
        }
        if warnings > 0 {
            add_properties(&mut suite, [(WARNINGS_PROPERTY, warnings.to_string())]);
        }
        if flaky > 0 {
            add_properties(&mut suite, [(FLAKY_PROPERTY, flaky.to_string())]);
        }
        suites.push(suite);
    }
    if let Some(note) = text::incomplete_note(run) {
        let (name, class) = INTERRUPTED_CASE;
        let marker = testcase(
            name,
            class,
            Duration::ZERO,
            Verdict::Error {
                ty: catalog::HARNESS_INTERRUPTED.id.to_string(),
                message: note,
                detail: String::new(),
            },
        );
        let mut suite = suite(class, None, vec![marker]);
        add_properties(&mut suite, run_properties(run));
        suites.push(suite);
    }
    // The exit code and its verdict on every suite (properties the strict schemas allow), so
    // that a test view tells a broken contract (1) from a service that could not be tested (3).
    if let Some(code) = run.exit_code() {
        for s in &mut suites {
            s.add_property(quick_junit::Property::new(
                "mallcheck.exit-code",
                code.to_string(),
            ));
            s.add_property(quick_junit::Property::new(
                "mallcheck.verdict",
                run.verdict(),
            ));
        }
    }
    document_timed(name, suites, run.summary.duration)
}

/// The properties every suite of a run carries: its target, base URL and shard.
fn run_properties(run: &Run<'_>) -> Vec<(&'static str, String)> {
    let target = run.target_name().to_string();
    let mut properties = Vec::new();
    if !target.is_empty() {
        properties.push((TARGET_PROPERTY, target));
    }
    if !run.base_url.is_empty() {
        properties.push((BASE_URL_PROPERTY, run.base_url.to_string()));
    }
    for warning in run.warnings {
        properties.push((WARNING_PROPERTY, warning.clone()));
    }
    if let Some(id) = super::ci_run::current() {
        properties.push((CI_RUN_PROPERTY, id));
    }
    if let Some(shard) = run.shard {
        properties.push((SHARD_PROPERTY, format!("{}/{}", shard.index, shard.total)));
        properties.push((
            SELECTION_PROPERTY,
            format!("{}:{}", shard.selected, shard.selection),
        ));
    }
    properties
}

impl Sink for Junit {
    fn on_event(&mut self, event: &Event) -> io::Result<()> {
        self.0.on_event(event)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.0.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::file::tests::passed;

    #[test]
    fn a_burst_of_cases_is_held_back_and_written_in_full_on_finish() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("junit.xml");
        let mut sink = Junit::new(path.clone(), false, &Redactor::new());
        sink.on_event(&Event::RunStarted {
            base_url: "http://x".into(),
            target: "http://x".into(),
            planned: vec![],
        })
        .expect("write");
        for i in 0..1000 {
            sink.on_event(&Event::CaseFinished(Box::new(
                passed(i).seal(&Redactor::new()),
            )))
            .expect("write");
        }
        let cases = |xml: String| xml.matches("<testcase name=\"case ").count();
        let written = cases(std::fs::read_to_string(&path).expect("written"));
        assert!(written < 1000, "{written} cases written during the burst");
        sink.finish().expect("write");
        assert_eq!(
            cases(std::fs::read_to_string(&path).expect("written")),
            1000
        );
    }

    /// A suite counts its cases that passed only after a transport retry, and each says so.
    #[test]
    fn flaky_cases_are_counted_on_their_suite() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("junit.xml");
        let mut sink = Junit::new(path.clone(), false, &Redactor::new());
        sink.on_event(&Event::RunStarted {
            base_url: "http://x".into(),
            target: "http://x".into(),
            planned: vec![],
        })
        .expect("write");
        for i in 0..3 {
            let mut case = passed(i);
            case.flaky = i == 1;
            sink.on_event(&Event::CaseFinished(Box::new(case.seal(&Redactor::new()))))
                .expect("write");
        }
        sink.finish().expect("write");
        let xml = std::fs::read_to_string(&path).expect("written");
        assert!(
            xml.contains("<property name=\"flaky\" value=\"1\"/>"),
            "{xml}"
        );
        assert_eq!(xml.matches(FLAKY_NOTE).count(), 1, "{xml}");
    }

    #[test]
    fn xml_safe_drops_control_characters_and_cdata_ends() {
        assert_eq!(xml_safe("a\u{1}b]]>c\n"), "ab]] >c\n");
    }
}
