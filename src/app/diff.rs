//! `mallcheck diff`: release verification. Each case with a snapshot recorded against the
//! baseline release is sent to the candidate; the response is compared field by field with the
//! snapshot and every change classified (breaking, additive, data). Output: console, JUnit and a
//! Markdown summary for a pull-request comment. Exit 1 when a change is breaking.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::app::settings::{self, Target};
use crate::case::model::{CaseKind, ExchangeCase, SnapshotSpec};
use crate::cli::DiffArgs;
use crate::error::UsageError;
use crate::exit;
use crate::redact::Secret;
use crate::report::junit::xml_safe;
use crate::report::{atomic, text};
use crate::runner::client::Client;
use crate::runner::discover::Discovery;
use crate::runner::release_diff::{self, Change, Class, Contract, Group};
use crate::runner::request;
use crate::runner::snapshot::engine::{self, Assertion, UpdateMode, Verdict};
use crate::runner::snapshot::{Snapshotter, scrub_value, snapshot_name, store};

/// Schemas of response documents whose properties give the closed sets, types and nullability
/// used to classify changes.
const RESPONSE_SCHEMAS: [&str; 10] = [
    "mall-list-response",
    "mall",
    "seller",
    "order-statistics",
    "seller-statistics",
    "cross-city-payment",
    "products-response",
    "product",
    "sku",
    "content-block",
];

/// Most change groups printed per case in the console.
const CONSOLE_GROUPS: usize = 20;
/// Most change rows in the Markdown table.
const MARKDOWN_ROWS: usize = 200;

/// The result of one case.
#[derive(Debug, Clone)]
pub struct CaseDiff {
    /// Case file as given.
    pub file: PathBuf,
    /// Case name.
    pub case: String,
    /// Baseline snapshot, as shown to the user.
    pub snapshot: PathBuf,
    /// The changes, or why the case could not be compared.
    pub outcome: Result<Vec<Change>, String>,
    /// Time to fetch and compare.
    pub duration: Duration,
}

/// Verdict of a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DiffVerdict {
    /// Nothing changed.
    Unchanged,
    /// Only values changed.
    Data,
    /// Something was added; nothing breaks.
    Additive,
    /// A change breaks the contract of the baseline.
    Breaking,
    /// The candidate could not be compared (transport, unreadable snapshot).
    Error,
}

impl DiffVerdict {
    /// Upper-case label.
    pub fn label(self) -> &'static str {
        match self {
            DiffVerdict::Unchanged => "UNCHANGED",
            DiffVerdict::Data => "DATA",
            DiffVerdict::Additive => "ADDITIVE",
            DiffVerdict::Breaking => "BREAKING",
            DiffVerdict::Error => "ERROR",
        }
    }
}

impl CaseDiff {
    /// The case's verdict.
    pub fn verdict(&self) -> DiffVerdict {
        match &self.outcome {
            Err(_) => DiffVerdict::Error,
            Ok(changes) => {
                let has = |class: Class| changes.iter().any(|c| c.class == class);
                if has(Class::Breaking) {
                    DiffVerdict::Breaking
                } else if has(Class::Additive) {
                    DiffVerdict::Additive
                } else if has(Class::Data) {
                    DiffVerdict::Data
                } else {
                    DiffVerdict::Unchanged
                }
            }
        }
    }

    fn count(&self, class: Class) -> usize {
        self.outcome
            .as_ref()
            .map_or(0, |c| c.iter().filter(|x| x.class == class).count())
    }

    fn label(&self) -> String {
        format!("{} › {}", self.file.display(), self.case)
    }
}

/// Exit code of a diff: 1 when a change is breaking or a case could not be compared.
pub fn exit_code(results: &[CaseDiff]) -> i32 {
    if results
        .iter()
        .any(|r| matches!(r.verdict(), DiffVerdict::Breaking | DiffVerdict::Error))
    {
        exit::FAILURE
    } else {
        exit::PASS
    }
}

/// One case to compare.
struct Work<'a> {
    file: PathBuf,
    case: String,
    exchange: &'a ExchangeCase,
    spec: &'a SnapshotSpec,
    name: String,
}

/// Compares a candidate with the baseline snapshots.
pub fn diff(args: DiffArgs) -> Result<i32, UsageError> {
    let root = super::snapshots::working_dir()?;
    // SAFETY: the first thing the command does, on the main thread, before the runtime (or any
    // other thread) starts.
    unsafe { engine::prepare_process(UpdateMode::Nothing, &root) };
    let target = settings::resolve(&args.target)?;
    let schemas = super::run::load_schemas(None)?;
    let contract = Contract::from_schema_documents(
        RESPONSE_SCHEMAS.iter().filter_map(|n| schemas.document(n)),
    );
    let files = super::run::load_cases(&args.cases, &schemas, &target)?;
    let baseline = root.join(&args.baseline);
    let mut work: Vec<Work<'_>> = Vec::new();
    let mut without: Vec<String> = Vec::new();
    for file in &files {
        for case in &file.cases {
            let CaseKind::Exchange(x) = &case.kind else {
                continue;
            };
            let Some(spec) = &x.snapshot else { continue };
            let name = snapshot_name(&file.source.path, &case.name.value);
            if store::snap_path(&baseline, &name).is_file() {
                work.push(Work {
                    file: file.source.path.clone(),
                    case: case.name.value.clone(),
                    exchange: x,
                    spec,
                    name,
                });
            } else {
                without.push(format!(
                    "{} › {}",
                    file.source.path.display(),
                    case.name.value
                ));
            }
        }
    }
    if work.is_empty() {
        return Err(UsageError::setting(
            "--baseline",
            format!(
                "no baseline snapshot in {} for the cases with `snapshot:`",
                args.baseline.display()
            ),
            Some(
                "record them against the baseline release: mallcheck run --snapshots update --base-url URL",
            ),
        ));
    }
    let rt = super::runtime()?;
    let outcome = rt.block_on(async {
        let (base_url, server) = target.connect().await?;
        let client = Client::new(&base_url, target.signer.clone(), target.client.clone())
            .map_err(|e| e.to_string())?;
        let results = compare_all(
            &client,
            &target,
            &work,
            &baseline,
            &args.baseline,
            &contract,
        )
        .await;
        if let Some(server) = server {
            server.shutdown().await;
        }
        Ok::<_, String>((base_url, results))
    });
    let (base_url, results) = match outcome {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(exit::FAILURE);
        }
    };
    let color = settings::use_color(args.color);
    let console = render_console(&results, &args.baseline, &base_url, &without, color);
    print!("{console}");
    let markdown = render_markdown(&results, &args.baseline, &base_url, &without);
    let mut code = exit_code(&results);
    for (path, bytes) in [
        (&args.markdown, Ok(markdown)),
        (&args.junit, render_junit(&results)),
    ] {
        let written = bytes.and_then(|b| atomic::write(path, b.as_bytes()));
        if let Err(e) = written {
            eprintln!("error: cannot write {}: {e}", path.display());
            code = exit::FAILURE;
        }
    }
    Ok(code)
}

async fn compare_all(
    client: &Client,
    target: &Target,
    work: &[Work<'_>],
    baseline: &Path,
    shown_dir: &Path,
    contract: &Contract,
) -> Vec<CaseDiff> {
    let discovery = Discovery::new(target.first_page_body(10));
    let secrets: Vec<Secret> = target.signer.secrets().into_iter().cloned().collect();
    let secret_refs: Vec<&Secret> = secrets.iter().collect();
    let mut results = Vec::new();
    for w in work {
        let started = Instant::now();
        let outcome = match fetch(client, &discovery, w.exchange).await {
            Ok(body) => compare_case(baseline, w, &scrub_value(&body, &secret_refs), contract),
            Err(e) => Err(e),
        };
        results.push(CaseDiff {
            file: w.file.clone(),
            case: w.case.clone(),
            snapshot: store::snap_path(shown_dir, &w.name),
            outcome,
            duration: started.elapsed(),
        });
    }
    results
}

/// Sends the case's request to the candidate; Ok is the JSON body.
async fn fetch(client: &Client, discovery: &Discovery, x: &ExchangeCase) -> Result<Value, String> {
    let sent = request::send(client, discovery, x).await?;
    sent.result.map(|r| r.json).map_err(|f| f.headline())
}

/// Compares one response with its baseline snapshot, through insta so that the case's
/// redactions and sorting apply to the response exactly as they did when it was recorded.
fn compare_case(
    baseline: &Path,
    w: &Work<'_>,
    body: &Value,
    contract: &Contract,
) -> Result<Vec<Change>, String> {
    let redact = Snapshotter::redactions(w.spec);
    let description = format!("release diff of case `{}`", w.case);
    let assertion = Assertion {
        dir: baseline,
        name: &w.name,
        value: body,
        redact: &redact,
        sort: &w.spec.sort,
        description: &description,
        input_file: None,
    };
    match engine::assert_json(&assertion) {
        Verdict::Match => Ok(vec![]),
        Verdict::Mismatch { reference, test } => {
            let parse = |t: &str, what: &str| {
                serde_json::from_str::<Value>(t).map_err(|e| format!("the {what} is not JSON: {e}"))
            };
            Ok(release_diff::compare(
                &parse(&reference, "baseline snapshot")?,
                &parse(&test, "candidate response")?,
                contract,
            ))
        }
        Verdict::New => Err("the baseline snapshot could not be read".to_string()),
        Verdict::Failed(message) => Err(message),
    }
}

fn paint(text: &str, code: &str, color: bool) -> String {
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

fn verdict_color(v: DiffVerdict) -> &'static str {
    match v {
        DiffVerdict::Breaking | DiffVerdict::Error => "1;31",
        DiffVerdict::Additive => "33",
        DiffVerdict::Data | DiffVerdict::Unchanged => "32",
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
        let label = paint(&format!("{:<9}", v.label()), verdict_color(v), color);
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
                let groups = release_diff::group(changes);
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
                for g in release_diff::group(changes) {
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
                    let groups = release_diff::group(changes);
                    let lines = groups.iter().map(group_line).collect::<Vec<_>>().join("\n");
                    match groups.iter().find(|g| g.class == Class::Breaking) {
                        Some(first) => (
                            Junit::Failure {
                                ty: "release-diff.breaking".into(),
                                message: format!(
                                    "{} breaking change(s); first at {}: {}",
                                    r.count(Class::Breaking),
                                    first.pattern,
                                    first.example.describe()
                                ),
                                detail: lines,
                            },
                            None,
                        ),
                        None => (Junit::Pass, (!lines.is_empty()).then_some(lines)),
                    }
                }
            };
            let mut case = junit::testcase(
                &r.case,
                &junit::classname(&r.file),
                Some(&r.file),
                Some(r.duration),
                verdict,
            );
            case.add_property(quick_junit::Property::new(
                "snapshot",
                xml_safe(&r.snapshot.display().to_string()),
            ));
            if let Some(out) = out {
                case.set_system_out(xml_safe(&out));
            }
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
    use crate::runner::release_diff::ChangeKind;

    fn change(kind: ChangeKind, class: Class, pointer: &str) -> Change {
        Change {
            pointer: pointer.into(),
            record: None,
            kind,
            class,
            before: Some(serde_json::json!("a|b")),
            after: None,
            note: String::new(),
        }
    }

    fn result(changes: Result<Vec<Change>, String>) -> CaseDiff {
        CaseDiff {
            file: "cases/x.yaml".into(),
            case: "first page".into(),
            snapshot: "snapshots/x__first-page.snap".into(),
            outcome: changes,
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn verdict_is_the_worst_class_and_breaking_exits_one() {
        let breaking = result(Ok(vec![
            change(
                ChangeKind::FieldRemoved,
                Class::Breaking,
                "/data/0/mallName",
            ),
            change(ChangeKind::FieldAdded, Class::Additive, "/x"),
        ]));
        let additive = result(Ok(vec![change(
            ChangeKind::FieldAdded,
            Class::Additive,
            "/x",
        )]));
        assert_eq!(breaking.verdict(), DiffVerdict::Breaking);
        assert_eq!(additive.verdict(), DiffVerdict::Additive);
        assert_eq!(result(Ok(vec![])).verdict(), DiffVerdict::Unchanged);
        assert_eq!(result(Err("down".into())).verdict(), DiffVerdict::Error);
        assert_eq!(exit_code(std::slice::from_ref(&additive)), exit::PASS);
        assert_eq!(exit_code(&[additive, breaking]), exit::FAILURE);
        assert_eq!(exit_code(&[result(Err("down".into()))]), exit::FAILURE);
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
