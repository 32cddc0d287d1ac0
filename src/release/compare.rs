//! Release comparison: each case with a snapshot recorded against the baseline release is sent
//! to the candidate, and the response is compared field by field with the snapshot, every
//! change classified (breaking, additive, data).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::case::model::{CaseFile, CaseKind, CursorRule, ExchangeCase, SnapshotSpec};
use crate::exit;
use crate::release::{sample, walk};
use crate::service::client::Client;
use crate::service::discover::Discovery;
use crate::service::request;
use crate::snapshot::classify::{self, Change, ChangeKind, Class, Contract};
use crate::snapshot::engine::{self, Assertion, Verdict};
use crate::snapshot::{Snapshotter, scrub_value, snapshot_name, store};
use crate::spec::schemas::SchemaSet;
use crate::verdict::event::Outcome;
use crate::verdict::findings::Findings;

/// Schemas of response documents whose properties give the closed sets, types and nullability
/// used to classify changes.
pub const RESPONSE_SCHEMAS: [&str; 10] = [
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
    /// Records (malls of `data`, products of a bare array) the comparison rests on: the fewer
    /// of the baseline's and the candidate's.
    pub records: usize,
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

    /// How many changes of a class the case has (0 when it could not be compared).
    pub fn count(&self, class: Class) -> usize {
        self.outcome
            .as_ref()
            .map_or(0, |c| c.iter().filter(|x| x.class == class).count())
    }

    /// `file › case`, as reports name the case.
    pub fn label(&self) -> String {
        format!("{} › {}", self.file.display(), self.case)
    }

    /// What a breaking verdict rests on, when the case is breaking: `on 30 records`, and a
    /// warning when that is fewer than [`THIN_EVIDENCE`].
    pub fn evidence(&self) -> Option<String> {
        if self.verdict() != DiffVerdict::Breaking {
            return None;
        }
        let on = match self.records {
            1 => "1 record".to_string(),
            n => format!("{n} records"),
        };
        Some(if self.records < THIN_EVIDENCE {
            format!(
                "rests on only {on}: thin evidence for a release verdict; record a baseline \
                 with more (mallcheck run --snapshots update against a merchant with malls)"
            )
        } else {
            format!("rests on {on}")
        })
    }
}

/// Fewer records than this under a breaking verdict are called thin evidence.
pub const THIN_EVIDENCE: usize = 5;

/// The records a response body holds: the malls of a mall-list envelope's `data`, the
/// products of a bare products array or of every mall of a sampled snapshot; 1 for any other
/// document.
pub fn record_count(body: &Value) -> usize {
    match body {
        // The products of sampled malls: every product of every mall.
        Value::Array(items)
            if items
                .iter()
                .all(|i| i.get("products").is_some_and(Value::is_array))
                && !items.is_empty() =>
        {
            items
                .iter()
                .filter_map(|i| i.get("products").and_then(Value::as_array))
                .map(Vec::len)
                .sum()
        }
        Value::Array(items) => items.len(),
        Value::Object(o) => o.get("data").and_then(Value::as_array).map_or(1, Vec::len),
        _ => 1,
    }
}

/// Exit code of a diff: 1 when a change is breaking, else 3 when a case could not be compared.
pub fn exit_code(results: &[CaseDiff]) -> i32 {
    let has = |v: DiffVerdict| results.iter().any(|r| r.verdict() == v);
    if has(DiffVerdict::Breaking) {
        exit::FAILURE
    } else if has(DiffVerdict::Error) {
        exit::COULD_NOT_TEST
    } else {
        exit::PASS
    }
}

/// One case to compare.
pub struct Work<'a> {
    /// Case file as given.
    pub file: PathBuf,
    /// Case name.
    pub case: String,
    /// The request to send.
    pub exchange: &'a ExchangeCase,
    /// The case's snapshot settings (redactions, sorting).
    pub spec: &'a SnapshotSpec,
    /// Snapshot name in the baseline directory.
    pub name: String,
}

/// The exchange cases with a snapshot, split into those with a baseline snapshot in `baseline`
/// (to compare) and the names of those without one.
pub fn plan<'a>(files: &'a [CaseFile], baseline: &Path) -> (Vec<Work<'a>>, Vec<String>) {
    let mut work: Vec<Work<'_>> = Vec::new();
    let mut without: Vec<String> = Vec::new();
    for file in files {
        for case in &file.cases {
            let CaseKind::Exchange(x) = &case.kind else {
                continue;
            };
            let Some(spec) = &x.snapshot else { continue };
            let name = snapshot_name(&file.source.path, &case.name.value);
            if store::snap_path(baseline, &name).is_file() {
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
    (work, without)
}

/// Fetches every case from the candidate and compares it with its baseline snapshot.
#[allow(clippy::too_many_arguments)]
pub async fn compare_all(
    client: &Client,
    discovery: &Discovery,
    work: &[Work<'_>],
    baseline: &Path,
    shown_dir: &Path,
    contract: &Contract,
    schemas: &SchemaSet,
    cursor: &CursorRule,
) -> Vec<CaseDiff> {
    let mut results = Vec::new();
    for w in work {
        let started = Instant::now();
        let fetched = fetch(client, discovery, w.exchange, w.spec, cursor, schemas).await;
        let (outcome, records) = match fetched {
            Ok((broken, body)) => {
                let (outcome, records) = compare_case(
                    baseline,
                    w,
                    &scrub_value(&body, client.redactor()),
                    contract,
                );
                // What breaks the contract is breaking whatever the baseline held (a baseline
                // recorded against a release that already broke it changes nothing).
                let outcome = outcome.map(|mut changes| {
                    changes.extend(broken);
                    changes
                });
                (outcome, records)
            }
            Err(e) => (Err(e), 0),
        };
        results.push(CaseDiff {
            file: w.file.clone(),
            case: w.case.clone(),
            snapshot: store::snap_path(shown_dir, &w.name),
            outcome,
            records,
            duration: started.elapsed(),
        });
    }
    results
}

/// Sends the case's request to the candidate; Ok is the JSON body (with a walk snapshot, the
/// whole first walk, gathered as `run` gathered the baseline's).
async fn fetch(
    client: &Client,
    discovery: &Discovery,
    x: &ExchangeCase,
    spec: &SnapshotSpec,
    cursor: &CursorRule,
    schemas: &SchemaSet,
) -> Result<(Vec<Change>, Value), String> {
    let sent = request::send(client, discovery, x, None).await?;
    let request: Value = serde_json::from_str(&sent.exchange.request.body).unwrap_or(Value::Null);
    let (body, read) = sent
        .result
        .map(|r| {
            // What reading the body found (a duplicate key, a number out of range): the tree
            // holds one reading of such a body, and the schema sees only that one.
            let read = r.json.findings();
            (r.json.into_value(), read)
        })
        .map_err(|f| f.headline())?;
    let mut broken: Vec<Change> = read
        .iter()
        .filter(|f| f.outcome(false) == Outcome::Fail)
        .take(MAX_CONTRACT_CHANGES)
        .map(|f| {
            let mut change = contract_change(f);
            change.note = client.redactor().scrub(&change.note).into_owned();
            change
        })
        .collect();
    broken.extend(contract_breaks(
        schemas,
        x,
        &scrub_value(&body, client.redactor()),
    ));
    if spec.walk {
        return walk::whole_walk(client, &request, body, cursor, None)
            .await
            .map(|w| (broken, w.value));
    }
    match (spec.malls, discovery.list_body()) {
        (Some(n), Some(list)) => {
            sample::sampled_products(client, list, &request, &x.request.headers, n)
                .await
                .map(|s| (broken, s.value))
        }
        _ => Ok((broken, body)),
    }
}

/// Most contract findings of one answer a release diff lists (the rest are counted by `run`).
const MAX_CONTRACT_CHANGES: usize = 20;

/// What the candidate's answer to the case breaks of the case's schema (as `run` checks it):
/// each finding a breaking change, whatever the baseline held.
fn contract_breaks(schemas: &SchemaSet, x: &ExchangeCase, body: &Value) -> Vec<Change> {
    if !x.expect.schema_enabled {
        return Vec::new();
    }
    let name = x
        .expect
        .schema
        .as_ref()
        .map_or(x.endpoint.response_schema(), |s| s.value.as_str());
    let mut found = Findings::new(MAX_CONTRACT_CHANGES);
    schemas.check_into(name, body, &mut found);
    found
        .kept()
        .iter()
        .filter(|f| f.outcome(false) == Outcome::Fail)
        .map(contract_change)
        .collect()
}

/// A finding of the candidate's answer as a breaking change.
fn contract_change(f: &crate::verdict::event::Finding) -> Change {
    Change {
        pointer: f.pointer.clone(),
        record: None,
        kind: ChangeKind::ContractBroken,
        class: Class::Breaking,
        before: None,
        after: None,
        note: format!(
            "{} ({}): expected {}, got {}",
            f.check.id, f.check.section, f.expected, f.actual
        ),
    }
}

/// Compares one response with its baseline snapshot, through insta so that the case's
/// redactions and sorting apply to the response exactly as they did when it was recorded.
/// Gives the records compared with the changes.
fn compare_case(
    baseline: &Path,
    w: &Work<'_>,
    body: &Value,
    contract: &Contract,
) -> (Result<Vec<Change>, String>, usize) {
    let candidate = record_count(body);
    match compare_snapshot(baseline, w, body, contract) {
        Ok((changes, Some(reference))) => (Ok(changes), candidate.min(record_count(&reference))),
        Ok((changes, None)) => (Ok(changes), candidate),
        Err(e) => (Err(e), 0),
    }
}

/// [`compare_case`] through insta: the changes, and the baseline when it differs.
fn compare_snapshot(
    baseline: &Path,
    w: &Work<'_>,
    body: &Value,
    contract: &Contract,
) -> Result<(Vec<Change>, Option<Value>), String> {
    // A hand-broken baseline file is named, with what is wrong in it (insta would take it for
    // none, or compare its text).
    if let Some(problem) = crate::snapshot::store::broken_baseline(baseline, &w.name) {
        return Err(format!(
            "the baseline snapshot {} cannot be compared: {problem}",
            crate::snapshot::store::snap_path(baseline, &w.name).display()
        ));
    }
    let redact = Snapshotter::redactions(w.spec);
    let description = format!("release diff of case `{}`", w.case);
    let assertion = Assertion {
        dir: baseline,
        name: &w.name,
        value: body,
        // Scrubbed already: the changes are classified on the same value.
        scrub: &crate::json::selector::unchanged,
        redact: &redact,
        sort: &w.spec.sort,
        description: &description,
        input_file: None,
    };
    match engine::assert_json(&assertion) {
        Verdict::Match => Ok((vec![], None)),
        Verdict::Mismatch { reference, test } => {
            let parse = |t: &str, what: &str| {
                serde_json::from_str::<Value>(t).map_err(|e| format!("the {what} is not JSON: {e}"))
            };
            let reference = parse(&reference, "baseline snapshot")?;
            let changes =
                classify::compare(&reference, &parse(&test, "candidate response")?, contract);
            Ok((changes, Some(reference)))
        }
        Verdict::New => Err("the baseline snapshot could not be read".to_string()),
        Verdict::Failed(message) => Err(message),
    }
}

/// Small builders for the tests of this module and of its renderers.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;
    use crate::snapshot::classify::ChangeKind;

    pub(crate) fn change(kind: ChangeKind, class: Class, pointer: &str) -> Change {
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

    pub(crate) fn result(changes: Result<Vec<Change>, String>) -> CaseDiff {
        CaseDiff {
            file: "cases/x.yaml".into(),
            case: "first page".into(),
            snapshot: "snapshots/x__first-page.snap".into(),
            outcome: changes,
            records: 3,
            duration: Duration::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{change, result};
    use super::*;
    use crate::snapshot::classify::ChangeKind;

    #[test]
    fn a_breaking_verdict_states_its_evidence_and_thin_evidence_says_so() {
        let mut breaking = result(Ok(vec![change(
            ChangeKind::FieldRemoved,
            Class::Breaking,
            "/data/0/mallName",
        )]));
        let thin = breaking.evidence().expect("breaking");
        assert!(
            thin.contains("only 3 records") && thin.contains("thin"),
            "{thin}"
        );
        breaking.records = 30;
        assert_eq!(breaking.evidence().as_deref(), Some("rests on 30 records"));
        assert_eq!(result(Ok(vec![])).evidence(), None);
        assert_eq!(record_count(&serde_json::json!({"data": [1, 2]})), 2);
        assert_eq!(record_count(&serde_json::json!([1, 2, 3])), 3);
        let sampled = serde_json::json!([{"mallSn": "1", "products": [1, 2]}, {"mallSn": "2", "products": [3]}]);
        assert_eq!(record_count(&sampled), 3);
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
        assert_eq!(
            exit_code(&[result(Err("down".into()))]),
            exit::COULD_NOT_TEST
        );
    }
}
