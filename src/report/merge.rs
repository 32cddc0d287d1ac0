//! Merging the JUnit XML and JSON reports of several runs (CI shards) into one of each.
//!
//! JSON reports are merged as documents (unknown fields survive): cases are concatenated,
//! deduplicated by case file and name (the first input wins), ordered by case file then index,
//! re-indexed and re-counted. JUnit files are read back with quick-xml and written again
//! through junit-report, testsuites merged by name and testcases deduplicated by class and name;
//! when JSON reports are among the inputs, testcases follow the merged JSON case order.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use junit_report::{Duration as JDuration, TestCase, TestResult, TestSuite};
use quick_xml::XmlVersion;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesStart, Event as XmlEvent};
use serde_json::{Map, Value, json};

use crate::report::json::FORMAT_VERSION;
use crate::report::junit::xml_safe;
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
        Some('<') => parse_junit(body)
            .map(Input::Junit)
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
/// deduplicated by class and name (the first wins).
pub fn merge_junit(inputs: impl IntoIterator<Item = Vec<TestSuite>>) -> Vec<TestSuite> {
    let mut by_name: BTreeMap<String, TestSuite> = BTreeMap::new();
    let mut seen: HashSet<(String, String, String)> = HashSet::new();
    for suites in inputs {
        for suite in suites {
            let merged = by_name
                .entry(suite.name.clone())
                .or_insert_with(|| TestSuite {
                    testcases: vec![],
                    system_out: None,
                    system_err: None,
                    ..suite.clone()
                });
            for case in suite.testcases {
                let key = (
                    suite.name.clone(),
                    case.classname.clone().unwrap_or_default(),
                    case.name.clone(),
                );
                if seen.insert(key) {
                    merged.testcases.push(case);
                }
            }
            merged.system_out = join_opt(merged.system_out.take(), suite.system_out);
            merged.system_err = join_opt(merged.system_err.take(), suite.system_err);
        }
    }
    by_name.into_values().collect()
}

/// Orders each suite's testcases like the cases of a merged JSON report (case file = suite
/// name, case name = testcase name), so shards give the order of one unsharded run. Testcases
/// the report does not know keep their relative order after the known ones.
pub fn order_like_json(suites: &mut [TestSuite], report: &Value) {
    let mut position: HashMap<(String, String), usize> = HashMap::new();
    for (i, case) in report["cases"].as_array().into_iter().flatten().enumerate() {
        if let Some((file, name)) = case_key(case) {
            position.insert((xml_safe(&file), xml_safe(&name)), i);
        }
    }
    for suite in suites {
        let name = suite.name.clone();
        suite.testcases.sort_by_key(|c| {
            position
                .get(&(name.clone(), c.name.clone()))
                .copied()
                .unwrap_or(usize::MAX)
        });
    }
}

fn join_opt(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    }
}

/// A parsed XML element: name, attributes, children and the text directly inside it.
#[derive(Debug, Default)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Element>,
    text: String,
}

impl Element {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn children<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }
}

fn element(start: &BytesStart<'_>) -> Result<Element, String> {
    let name = String::from_utf8_lossy(start.name().as_ref()).into_owned();
    let mut attrs = Vec::new();
    for attr in start.attributes() {
        let attr = attr.map_err(|e| e.to_string())?;
        let key = String::from_utf8_lossy(attr.key.as_ref()).into_owned();
        let value = attr
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|e| e.to_string())?
            .into_owned();
        attrs.push((key, value));
    }
    Ok(Element {
        name,
        attrs,
        ..Element::default()
    })
}

/// Parses an XML document into its root element (no DTD, no external entities).
fn parse_xml(text: &str) -> Result<Element, String> {
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("at byte {}: {e}", reader.error_position()))?;
        match event {
            XmlEvent::Start(s) => stack.push(element(&s)?),
            XmlEvent::Empty(s) => {
                let e = element(&s)?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(e),
                    None => root = Some(e),
                }
            }
            XmlEvent::End(_) => {
                let done = stack.pop().ok_or("an end tag without a start tag")?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(done),
                    None => root = Some(done),
                }
            }
            XmlEvent::Text(t) => {
                if let Some(e) = stack.last_mut() {
                    e.text
                        .push_str(&t.xml10_content().map_err(|e| e.to_string())?);
                }
            }
            XmlEvent::CData(t) => {
                if let Some(e) = stack.last_mut() {
                    e.text.push_str(&t.decode().map_err(|e| e.to_string())?);
                }
            }
            XmlEvent::GeneralRef(r) => {
                let resolved = match r.resolve_char_ref().map_err(|e| e.to_string())? {
                    Some(c) => c.to_string(),
                    None => {
                        let name = r.decode().map_err(|e| e.to_string())?;
                        resolve_predefined_entity(&name)
                            .ok_or_else(|| format!("unknown entity &{name};"))?
                            .to_string()
                    }
                };
                if let Some(e) = stack.last_mut() {
                    e.text.push_str(&resolved);
                }
            }
            XmlEvent::Eof => break,
            XmlEvent::Decl(_) | XmlEvent::PI(_) | XmlEvent::Comment(_) | XmlEvent::DocType(_) => {}
        }
    }
    if !stack.is_empty() {
        return Err("the document ends inside an element".into());
    }
    root.ok_or_else(|| "the document has no root element".into())
}

fn seconds(value: Option<&str>) -> JDuration {
    value
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && (0.0..1e12).contains(v))
        .map_or(JDuration::ZERO, |s| {
            JDuration::milliseconds((s * 1000.0).round() as i64)
        })
}

fn non_empty(text: &str) -> Option<String> {
    if text.trim().is_empty() {
        None
    } else {
        Some(xml_safe(text))
    }
}

fn outcome_parts(e: &Element) -> (String, String, Option<String>) {
    (
        xml_safe(e.attr("type").unwrap_or_default()),
        xml_safe(e.attr("message").unwrap_or_default()),
        non_empty(&e.text),
    )
}

fn testcase(e: &Element) -> Result<TestCase, String> {
    let name = e.attr("name").ok_or("a <testcase> has no name attribute")?;
    let result = if let Some(f) = e.children("failure").next() {
        let (type_, message, cause) = outcome_parts(f);
        TestResult::Failure {
            type_,
            message,
            cause,
        }
    } else if let Some(f) = e.children("error").next() {
        let (type_, message, cause) = outcome_parts(f);
        TestResult::Error {
            type_,
            message,
            cause,
        }
    } else if let Some(s) = e.children("skipped").next() {
        if s.attr("type").is_none() && s.attr("message").is_none() && s.text.trim().is_empty() {
            TestResult::Skipped
        } else {
            let (type_, message, cause) = outcome_parts(s);
            TestResult::SkippedWithCause {
                type_,
                message,
                cause,
            }
        }
    } else {
        TestResult::Success
    };
    Ok(TestCase {
        name: xml_safe(name),
        time: seconds(e.attr("time")),
        result,
        classname: e.attr("classname").map(xml_safe),
        filepath: e.attr("file").map(xml_safe),
        system_out: e
            .children("system-out")
            .next()
            .and_then(|o| non_empty(&o.text)),
        system_err: e
            .children("system-err")
            .next()
            .and_then(|o| non_empty(&o.text)),
    })
}

fn testsuite(e: &Element) -> Result<TestSuite, String> {
    let name = e
        .attr("name")
        .ok_or("a <testsuite> has no name attribute")?;
    let mut suite = TestSuite::new(&xml_safe(name));
    if let Some(host) = e.attr("hostname") {
        suite.hostname = xml_safe(host);
    }
    for c in e.children("testcase") {
        suite.testcases.push(testcase(c)?);
    }
    suite.system_out = e
        .children("system-out")
        .next()
        .and_then(|o| non_empty(&o.text));
    suite.system_err = e
        .children("system-err")
        .next()
        .and_then(|o| non_empty(&o.text));
    Ok(suite)
}

/// Parses a JUnit XML document (`<testsuites>` root, or a single `<testsuite>`).
pub fn parse_junit(text: &str) -> Result<Vec<TestSuite>, String> {
    let root = parse_xml(text)?;
    match root.name.as_str() {
        "testsuites" => root.children("testsuite").map(testsuite).collect(),
        "testsuite" => Ok(vec![testsuite(&root)?]),
        other => Err(format!(
            "the root element is <{other}>, expected <testsuites> or <testsuite>"
        )),
    }
}

#[cfg(test)]
mod tests {
    use junit_report::Report;

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

    #[test]
    fn junit_merge_unites_suites_by_name_and_dedupes_cases() {
        let a = parse_junit(SHARD_1).expect("shard 1");
        let b = parse_junit(SHARD_2).expect("shard 2");
        let merged = merge_junit([a, b]);
        let names: Vec<&str> = merged.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["cases/a.yaml", "cases/b.yaml"]);
        let a = &merged[0];
        let cases: Vec<&str> = a.testcases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(cases, ["one", "two & more", "four"]);
        assert_eq!((a.tests(), a.failures(), a.skipped()), (3, 1, 1));
        assert_eq!(merged[1].errors(), 1);
        match &a.testcases[1].result {
            TestResult::Failure {
                type_,
                message,
                cause,
            } => {
                assert_eq!(type_, "mall.state");
                assert_eq!(message, "mall.state (§3): expected 0, got 3");
                assert_eq!(cause.as_deref(), Some("trace <with> markup"));
            }
            other => panic!("not a failure: {other:?}"),
        }
        assert_eq!(
            a.testcases[1].system_out.as_deref(),
            Some("[observed] note")
        );
        let mut out = Vec::new();
        let mut report = Report::new();
        report.add_testsuites(merged);
        report.write_xml(&mut out).expect("xml");
        let again = parse_junit(&String::from_utf8(out).expect("utf-8")).expect("round trip");
        assert_eq!(again[0].testcases.len(), 3);
    }

    #[test]
    fn junit_testcases_follow_the_json_case_order() {
        let mut suites = merge_junit([parse_junit(SHARD_2).expect("shard 2")]);
        let order = report(
            "http://x",
            json!([
                case("cases/a.yaml", "one", 0, "pass"),
                case("cases/a.yaml", "four", 1, "skip")
            ]),
        );
        order_like_json(&mut suites, &order);
        let names: Vec<&str> = suites[0]
            .testcases
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["one", "four"]);
    }

    #[test]
    fn junit_parse_reports_broken_xml() {
        assert!(parse_junit("<testsuites><testsuite name='a'>").is_err());
        assert!(parse_junit("<html></html>").is_err());
        assert!(
            parse_junit("<testsuites><testsuite name='a'><testcase/></testsuite></testsuites>")
                .is_err()
        );
    }
}
