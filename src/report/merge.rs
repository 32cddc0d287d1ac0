//! Merging the JUnit XML and JSON reports of several runs (CI shards) into one of each.
//!
//! JSON reports are merged as documents (unknown fields survive): cases are concatenated,
//! deduplicated by case file and name (the first input wins), ordered by case file then index,
//! re-indexed and re-counted. JUnit files are read back and written again through the one JUnit
//! module (`report::junit`), testsuites merged by name and testcases deduplicated by class and
//! name; when JSON reports are among the inputs, testcases follow the merged JSON case order.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use quick_junit::TestSuite;
use serde_json::{Map, Value, json};

use crate::report::json::FORMAT_VERSION;
use crate::report::junit;
use crate::verdict::event::RunSummary;

/// A report that cannot be merged: the input it is about (or `merge`) and why.
#[derive(Debug, thiserror::Error)]
#[error("{subject}: {message}")]
pub struct MergeError {
    /// The input file, or `merge` for the merged whole.
    pub subject: String,
    /// What is wrong, a lowercase fragment.
    pub message: String,
}

fn bad_input(path: &Path, message: impl Into<String>) -> MergeError {
    MergeError {
        subject: path.display().to_string(),
        message: message.into(),
    }
}

/// What one input file holds.
#[derive(Debug)]
pub enum Input {
    /// A JSON report.
    Json(Value),
    /// The testsuites of a JUnit XML report.
    Junit(Vec<TestSuite>),
}

/// Parses one input, telling JSON from XML by its first non-blank character.
pub fn parse_input(text: &str) -> Result<Input, String> {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    match body.chars().next() {
        Some('{') => serde_json::from_str(body)
            .map(Input::Json)
            .map_err(|e| format!("not valid JSON: {e}")),
        Some('<') => junit::read(body)
            .map(|r| Input::Junit(r.test_suites))
            .map_err(|e| format!("not a JUnit XML report: {e}")),
        _ => Err("neither a JSON report nor a JUnit XML report".to_string()),
    }
}

/// A merged JSON report.
#[derive(Debug)]
pub struct MergedJson {
    /// The merged document, in the JSON report format.
    pub document: Value,
    /// Counts of the merged cases.
    pub summary: RunSummary,
    /// Things worth telling the user (duplicates, differing settings).
    pub notes: Vec<String>,
}

fn case_key(case: &Value) -> Option<(String, String)> {
    let id = case.get("id")?;
    Some((
        id.get("file")?.as_str()?.to_string(),
        id.get("name")?.as_str()?.to_string(),
    ))
}

/// Merges JSON reports (path, document) in the given order.
pub fn merge_json(inputs: &[(PathBuf, Value)]) -> Result<MergedJson, MergeError> {
    let mut notes = Vec::new();
    let mut cases: Vec<(String, u64, Value)> = Vec::new();
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let mut duration = 0.0_f64;
    let mut complete = true;
    let mut first: Option<&Map<String, Value>> = None;
    for (path, doc) in inputs {
        let obj = doc
            .as_object()
            .ok_or_else(|| bad_input(path, "the JSON report is not an object"))?;
        let version = obj.get("format_version").and_then(Value::as_u64);
        if version != Some(u64::from(FORMAT_VERSION)) {
            return Err(bad_input(
                path,
                format!(
                    "format_version is {}, this mallcheck reads {FORMAT_VERSION}",
                    obj.get("format_version")
                        .map_or_else(|| "missing".to_string(), Value::to_string)
                ),
            ));
        }
        let list = obj
            .get("cases")
            .and_then(Value::as_array)
            .ok_or_else(|| bad_input(path, "the JSON report has no `cases` array"))?;
        match first {
            None => first = Some(obj),
            Some(f) => {
                for key in ["base_url", "strict"] {
                    if f.get(key) != obj.get(key) {
                        notes.push(format!(
                            "{} has {key} {}, the first input has {}; the merged report keeps the first",
                            path.display(),
                            obj.get(key).unwrap_or(&Value::Null),
                            f.get(key).unwrap_or(&Value::Null)
                        ));
                    }
                }
            }
        }
        complete &= obj
            .get("complete")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        duration += obj
            .get("summary")
            .and_then(|s| s.get("duration"))
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        for case in list {
            let key = case_key(case)
                .ok_or_else(|| bad_input(path, "a case has no `id` with a `file` and a `name`"))?;
            if !seen.insert(key.clone()) {
                notes.push(format!(
                    "{}: case {:?} of {} is already in an earlier input; keeping the first",
                    path.display(),
                    key.1,
                    key.0
                ));
                continue;
            }
            let index = case
                .get("id")
                .and_then(|id| id.get("index"))
                .and_then(Value::as_u64)
                .unwrap_or(u64::MAX);
            cases.push((key.0, index, case.clone()));
        }
    }
    cases.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    let mut summary = RunSummary::default();
    let mut merged_cases = Vec::with_capacity(cases.len());
    for (position, (_, _, mut case)) in cases.into_iter().enumerate() {
        let outcome = case
            .get("outcome")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match outcome {
            "pass" => summary.passed += 1,
            "warn" => summary.warned += 1,
            "fail" => summary.failed += 1,
            "error" => summary.errored += 1,
            "skip" => summary.skipped += 1,
            other => {
                return Err(MergeError {
                    subject: "merge".to_string(),
                    message: format!("a case has an unknown outcome {other:?}"),
                });
            }
        }
        if let Some(id) = case.get_mut("id").and_then(Value::as_object_mut) {
            id.insert("index".into(), json!(position));
        }
        merged_cases.push(case);
    }
    summary.duration = std::time::Duration::try_from_secs_f64(duration).unwrap_or_default();
    let first = first.cloned().unwrap_or_default();
    let document = json!({
        "format_version": FORMAT_VERSION,
        "tool": "mallcheck",
        "version": env!("CARGO_PKG_VERSION"),
        "base_url": first.get("base_url").cloned().unwrap_or(Value::Null),
        "strict": first.get("strict").cloned().unwrap_or(Value::Bool(false)),
        "complete": complete,
        "summary": summary,
        "cases": merged_cases,
    });
    Ok(MergedJson {
        document,
        summary,
        notes,
    })
}

/// Merges parsed JUnit reports: testsuites by name (sorted), testcases in input order,
/// deduplicated by class and name (the first wins), counts recomputed.
pub fn merge_junit(inputs: impl IntoIterator<Item = Vec<TestSuite>>) -> Vec<TestSuite> {
    let mut by_name: BTreeMap<String, TestSuite> = BTreeMap::new();
    let mut seen: HashSet<(String, String, String)> = HashSet::new();
    for suites in inputs {
        for suite in suites {
            let name = suite.name.as_str().to_string();
            let merged = by_name.entry(name.clone()).or_insert_with(|| {
                let mut fresh = TestSuite::new(suite.name.clone());
                fresh.extra = suite.extra.clone();
                fresh.properties = suite.properties.clone();
                fresh
            });
            for case in suite.test_cases {
                let key = (
                    name.clone(),
                    case.classname
                        .as_ref()
                        .map_or_else(String::new, |c| c.as_str().to_string()),
                    case.name.as_str().to_string(),
                );
                if seen.insert(key) {
                    merged.add_test_case(case);
                }
            }
            merged.system_out = join_opt(merged.system_out.take(), suite.system_out);
            merged.system_err = join_opt(merged.system_err.take(), suite.system_err);
        }
    }
    by_name
        .into_values()
        .map(|mut s| {
            s.time = Some(s.test_cases.iter().filter_map(|c| c.time).sum());
            s
        })
        .collect()
}

/// Orders each suite's testcases like the cases of a merged JSON report (case file = the
/// testcase's `file`, or the suite name; case name = testcase name), so shards give the order
/// of one unsharded run. Testcases the report does not know keep their relative order after
/// the known ones.
pub fn order_like_json(suites: &mut [TestSuite], report: &Value) {
    let mut position: HashMap<(String, String), usize> = HashMap::new();
    for (i, case) in report["cases"].as_array().into_iter().flatten().enumerate() {
        if let Some((file, name)) = case_key(case) {
            let file = junit::xml_safe(&junit::file_attr(Path::new(&file)));
            position.insert((file, junit::xml_safe(&name)), i);
        }
    }
    for suite in suites {
        let name = suite.name.as_str().to_string();
        suite.test_cases.sort_by_key(|c| {
            let file = c
                .extra
                .get("file")
                .map_or_else(|| name.clone(), |f| f.as_str().to_string());
            position
                .get(&(file, c.name.as_str().to_string()))
                .copied()
                .unwrap_or(usize::MAX)
        });
    }
}

fn join_opt(
    a: Option<quick_junit::XmlString>,
    b: Option<quick_junit::XmlString>,
) -> Option<quick_junit::XmlString> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{}\n{}", a.as_str(), b.as_str()).into()),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(base_url: &str, cases: Value) -> Value {
        json!({
            "format_version": 1, "tool": "mallcheck", "version": "0.1.0",
            "base_url": base_url, "strict": false, "complete": true,
            "summary": {"passed": 0, "warned": 0, "failed": 0, "errored": 0, "skipped": 0, "duration": 1.5},
            "cases": cases,
        })
    }

    fn case(file: &str, name: &str, index: u64, outcome: &str) -> Value {
        json!({"id": {"file": file, "name": name, "endpoint": "mall-list", "index": index},
               "outcome": outcome, "findings": [], "exchanges": [], "skip_reason": null, "duration": 0.1})
    }

    #[test]
    fn json_merge_orders_by_file_then_index_dedupes_and_recounts() {
        let a = report(
            "http://x",
            json!([
                case("b.yaml", "b1", 3, "pass"),
                case("a.yaml", "a2", 1, "fail")
            ]),
        );
        let b = report(
            "http://x",
            json!([
                case("a.yaml", "a1", 0, "pass"),
                case("a.yaml", "a2", 1, "pass")
            ]),
        );
        let merged = merge_json(&[("a.json".into(), a), ("b.json".into(), b)]).expect("merge");
        let names: Vec<&str> = merged.document["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .map(|c| c["id"]["name"].as_str().expect("name"))
            .collect();
        assert_eq!(names, ["a1", "a2", "b1"]);
        assert_eq!(
            merged.document["cases"][1]["outcome"], "fail",
            "first input wins"
        );
        assert_eq!(merged.document["cases"][2]["id"]["index"], 2, "re-indexed");
        assert_eq!(
            (merged.summary.passed, merged.summary.failed),
            (2, 1),
            "re-counted"
        );
        assert_eq!(merged.document["summary"]["duration"], 3.0);
        assert_eq!(merged.notes.len(), 1, "{:?}", merged.notes);
    }

    #[test]
    fn json_merge_rejects_another_format_version_naming_the_file() {
        let mut doc = report("http://x", json!([]));
        doc["format_version"] = json!(2);
        let err = merge_json(&[("shard-2.json".into(), doc)]).expect_err("refused");
        let text = err.to_string();
        assert!(
            text.contains("shard-2.json") && text.contains("format_version is 2"),
            "{text}"
        );
    }

    const SHARD_1: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites>
<testsuite id="0" name="cases/a.yaml" package="testsuite/cases/a.yaml" tests="2" errors="0" failures="1" hostname="localhost" timestamp="2026-11-22T00:00:00Z" time="0.3">
<testcase name="one" time="0.1" classname="cases/a.yaml"/>
<testcase name="two &amp; more" time="0.2" classname="cases/a.yaml"><failure type="mall.state" message="mall.state (§3): expected 0, got 3"><![CDATA[trace <with> markup]]></failure><system-out><![CDATA[[observed] note]]></system-out></testcase>
</testsuite></testsuites>"#;

    const SHARD_2: &str = r#"<testsuites>
<testsuite name="cases/b.yaml" tests="1"><testcase name="three" time="0.5" classname="cases/b.yaml"><error type="transport.connect" message="refused"/></testcase></testsuite>
<testsuite name="cases/a.yaml" tests="2"><testcase name="four" time="0.1" classname="cases/a.yaml"><skipped type="skipped" message="no mall"/></testcase><testcase name="one" time="9" classname="cases/a.yaml"/></testsuite>
</testsuites>"#;

    fn parse(text: &str) -> Vec<TestSuite> {
        junit::read(text).expect("a JUnit report").test_suites
    }

    #[test]
    fn junit_merge_unites_suites_by_name_and_dedupes_cases() {
        let merged = merge_junit([parse(SHARD_1), parse(SHARD_2)]);
        let names: Vec<&str> = merged.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["cases/a.yaml", "cases/b.yaml"]);
        let a = &merged[0];
        let cases: Vec<&str> = a.test_cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(cases, ["one", "two & more", "four"]);
        assert_eq!((a.tests, a.failures, a.skipped), (3, 1, 1));
        assert_eq!(merged[1].errors, 1);
        match &a.test_cases[1].status {
            quick_junit::TestCaseStatus::NonSuccess {
                kind: quick_junit::NonSuccessKind::Failure,
                message,
                ty,
                description,
                ..
            } => {
                assert_eq!(ty.as_ref().map(|t| t.as_str()), Some("mall.state"));
                assert_eq!(
                    message.as_ref().map(|t| t.as_str()),
                    Some("mall.state (§3): expected 0, got 3")
                );
                assert_eq!(
                    description.as_ref().map(|t| t.as_str()),
                    Some("trace <with> markup")
                );
            }
            other => panic!("not a failure: {other:?}"),
        }
        assert_eq!(
            a.test_cases[1].system_out.as_ref().map(|t| t.as_str()),
            Some("[observed] note")
        );
        let xml = junit::document("merged", merged).expect("xml");
        let again = junit::read(&xml).expect("round trip");
        assert_eq!(again.test_suites[0].test_cases.len(), 3);
        assert_eq!(
            (again.tests, again.failures, again.errors, again.skipped),
            (4, 1, 1, 1)
        );
    }

    #[test]
    fn junit_testcases_follow_the_json_case_order() {
        let mut suites = merge_junit([parse(SHARD_2)]);
        let order = report(
            "http://x",
            json!([
                case("cases/a.yaml", "one", 0, "pass"),
                case("cases/a.yaml", "four", 1, "skip")
            ]),
        );
        order_like_json(&mut suites, &order);
        let names: Vec<&str> = suites[0]
            .test_cases
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["one", "four"]);
    }

    #[test]
    fn junit_parse_reports_broken_xml() {
        assert!(junit::read("<testsuites><testsuite name='a'>").is_err());
        assert!(junit::read("<html></html>").is_err());
        assert!(
            junit::read("<testsuites><testsuite name='a'><testcase/></testsuite></testsuites>")
                .is_err()
        );
    }
}
