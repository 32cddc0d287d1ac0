//! Merging the JUnit XML and JSON reports of several runs (CI shards) into one of each.
//!
//! JSON reports are merged as documents (unknown fields survive): cases are concatenated,
//! deduplicated by case file and name, ordered by case file then index, re-indexed and
//! re-counted. JUnit files are read back and written again through the one JUnit module
//! (`report::junit`), testsuites merged by name and testcases deduplicated by class and name;
//! when JSON reports are among the inputs, testcases follow the merged JSON case order.
//!
//! Inputs must be of one run: every input that names its target (`target` in JSON, the
//! `target` property of a JUnit testsuite) names the same one, and every shard of a sharded run
//! is there (`shard`, `K/N`). The merged time is wall time: from the earliest start to the
//! latest end when every input gives its start (`started_at`, the testsuite `timestamp`), the
//! sum of the inputs' times otherwise.
//!
//! A case found in several inputs (a rerun, overlapping shards) keeps its worst outcome:
//! error, then fail, then warn, then pass, then skip (a case skipped in one run and run in
//! another was run). Equal outcomes are told apart by their content, so the merged result, its
//! verdict included, does not depend on the order of the inputs.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
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

/// Most shards a run is cut into (`run --shard K/N` refuses more, and more shards than cases).
pub const MAX_SHARDS: u64 = 10_000;

/// The outcomes a JSON report's case can have.
const OUTCOMES: [&str; 5] = ["pass", "warn", "fail", "error", "skip"];

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
    /// A JUnit XML report.
    Junit(JunitInput),
}

/// A JUnit XML report read back.
#[derive(Debug, Clone)]
pub struct JunitInput {
    /// Its testsuites.
    pub suites: Vec<TestSuite>,
    /// The `time` of `<testsuites>` (the run's wall time), or the sum of the suites' times.
    pub time: Duration,
}

/// What the inputs say of the runs they come from: targets, shards, times.
#[derive(Debug, Default)]
pub struct Runs {
    /// Per target (`embedded` or a base URL), the inputs that name it.
    pub targets: BTreeMap<String, BTreeSet<PathBuf>>,
    /// Per shard count, the 1-based shards present.
    pub shards: BTreeMap<u64, BTreeSet<u64>>,
    /// Per input, its start (when it gives one) and its wall time.
    pub times: Vec<(Option<SystemTime>, Duration)>,
    /// Per selection a shard says it is of (cases selected before sharding, digest of their
    /// ids), the inputs that say so.
    pub selections: BTreeMap<(u64, String), BTreeSet<PathBuf>>,
    /// Shard inputs that name no selection (reports of an earlier version).
    pub unselected: BTreeSet<PathBuf>,
    /// Per CI run an input says it was written in, the inputs that say so.
    pub ci_runs: BTreeMap<String, BTreeSet<PathBuf>>,
    /// The inputs that name no CI run.
    pub without_ci_run: BTreeSet<PathBuf>,
}

impl Runs {
    /// Records that `path` was run against `target`.
    pub fn target(&mut self, path: &Path, target: &str) {
        if !target.is_empty() {
            self.targets
                .entry(target.to_string())
                .or_default()
                .insert(path.to_path_buf());
        }
    }

    /// Records that `path` was written in the CI run `id`.
    pub fn ci_run(&mut self, path: &Path, id: &str) {
        if !id.is_empty() {
            self.ci_runs
                .entry(id.to_string())
                .or_default()
                .insert(path.to_path_buf());
        }
    }

    /// The one CI run the inputs that name one were written in (`None` when none does), or
    /// why there is not one: a shard an earlier pipeline left behind is no shard of this run.
    pub fn single_ci_run(&self) -> Result<Option<&str>, String> {
        if self.ci_runs.len() == 1 && !self.without_ci_run.is_empty() {
            let list: Vec<String> = self
                .without_ci_run
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            let id = self.ci_runs.keys().next().map_or("", String::as_str);
            return Err(format!(
                "{} record{} no CI run while the other inputs were written in {id}: a report \
                 written outside this pipeline is not one of its shards; merge the shards of \
                 one run",
                list.join(", "),
                if list.len() == 1 { "s" } else { "" }
            ));
        }
        if self.ci_runs.len() <= 1 {
            return Ok(self.ci_runs.keys().next().map(String::as_str));
        }
        let list = self
            .ci_runs
            .iter()
            .map(|(id, paths)| {
                let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                format!("{id} ({})", paths.join(", "))
            })
            .collect::<Vec<_>>()
            .join("; ");
        Err(format!(
            "the inputs were written in different CI runs: {list}; merge the shards of one run \
             (a report an earlier pipeline left in the workspace or a cache is not one of them)"
        ))
    }

    /// Records shard `index` of `total`, refusing an index beyond the total and a total beyond
    /// [`MAX_SHARDS`] (a total of 2^64 - 1 made the list of missing shards fill the memory).
    fn shard(&mut self, path: &Path, index: u64, total: u64) -> Result<(), MergeError> {
        if total > MAX_SHARDS {
            return Err(bad_input(
                path,
                format!("shard {index}/{total}: a run is cut into at most {MAX_SHARDS} shards"),
            ));
        }
        if !(1..=total).contains(&index) {
            return Err(bad_input(
                path,
                format!("shard {index}/{total} is not K/N with 1 <= K <= N"),
            ));
        }
        self.shards.entry(total).or_default().insert(index);
        Ok(())
    }

    /// Records that `path` is a shard of a selection of `selected` cases hashing to `digest`.
    fn selection(&mut self, path: &Path, selected: u64, digest: &str) {
        self.selections
            .entry((selected, digest.to_string()))
            .or_default()
            .insert(path.to_path_buf());
    }

    /// The one selection the shards are of (`None` when no input says), or why there is not
    /// one: shards of another commit or another `--filter` do not make one run.
    pub fn single_selection(&self) -> Result<Option<(u64, &str)>, String> {
        // Shards of one run are made by one version: one that names no selection beside ones
        // that do is of another run (or was edited), and would switch the check off.
        if !self.selections.is_empty() && !self.unselected.is_empty() {
            let list: Vec<String> = self
                .unselected
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            return Err(format!(
                "{} name no selection of cases while the other shards do: they are not shards \
                 of one run; merge the shards of one run",
                list.join(", ")
            ));
        }
        if self.selections.len() <= 1 {
            return Ok(self.selections.keys().next().map(|(n, d)| (*n, d.as_str())));
        }
        let list = self
            .selections
            .iter()
            .map(|((n, digest), paths)| {
                let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                format!("{n} cases, selection {digest} ({})", paths.join(", "))
            })
            .collect::<Vec<_>>()
            .join("; ");
        Err(format!(
            "the inputs are shards of different selections of cases: {list}; merge the shards \
             of one run (the same cases, --cases and --filter)"
        ))
    }

    /// Adds what `other` says.
    pub fn absorb(&mut self, other: &Runs) {
        for (target, paths) in &other.targets {
            self.targets
                .entry(target.clone())
                .or_default()
                .extend(paths.iter().cloned());
        }
        for (total, seen) in &other.shards {
            self.shards.entry(*total).or_default().extend(seen);
        }
        self.unselected.extend(other.unselected.iter().cloned());
        for (id, paths) in &other.ci_runs {
            self.ci_runs
                .entry(id.clone())
                .or_default()
                .extend(paths.iter().cloned());
        }
        self.without_ci_run
            .extend(other.without_ci_run.iter().cloned());
        for (selection, paths) in &other.selections {
            self.selections
                .entry(selection.clone())
                .or_default()
                .extend(paths.iter().cloned());
        }
    }

    /// Shards (`K/N`) of a sharded run that no input holds: a lost CI job must not pass as a
    /// smaller run.
    pub fn missing_shards(&self) -> Vec<String> {
        self.shards
            .iter()
            .flat_map(|(total, seen)| {
                (1..=*total)
                    .filter(|i| !seen.contains(i))
                    .map(move |i| format!("{i}/{total}"))
            })
            .collect()
    }

    /// The shards present, `K/N` comma-separated, as the merged JUnit gives them.
    pub fn shard_list(&self) -> String {
        self.shards
            .iter()
            .flat_map(|(total, seen)| seen.iter().map(move |i| format!("{i}/{total}")))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The one target of the inputs, or why there is not one.
    pub fn single_target(&self) -> Result<Option<&str>, String> {
        if self.targets.len() <= 1 {
            return Ok(self.targets.keys().next().map(String::as_str));
        }
        let list = self
            .targets
            .iter()
            .map(|(target, paths)| {
                let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                format!("{target} ({})", paths.join(", "))
            })
            .collect::<Vec<_>>()
            .join("; ");
        Err(format!(
            "the inputs were run against different targets: {list}; merge the reports of one target"
        ))
    }

    /// The earliest start, when every input gives one.
    pub fn started(&self) -> Option<SystemTime> {
        self.times.iter().map(|(start, _)| *start).min().flatten()
    }

    /// Wall time of the runs: from the earliest start to the latest end when every input gives
    /// its start, the sum of their times otherwise.
    pub fn wall_time(&self) -> Duration {
        let Some(first) = self.started() else {
            return self.times.iter().map(|(_, t)| *t).sum();
        };
        self.times
            .iter()
            .filter_map(|(start, time)| start.map(|s| s + *time))
            .filter_map(|end| end.duration_since(first).ok())
            .max()
            .unwrap_or_default()
    }
}

/// Parses `N:DIGEST`.
fn parse_selection(text: &str) -> Option<(u64, &str)> {
    let (n, digest) = text.trim().split_once(':')?;
    let digest = digest.trim();
    (!digest.is_empty()).then_some(())?;
    Some((n.trim().parse().ok()?, digest))
}

/// Parses `K/N`.
fn parse_shard(text: &str) -> Option<(u64, u64)> {
    let (k, n) = text.trim().split_once('/')?;
    Some((k.trim().parse().ok()?, n.trim().parse().ok()?))
}

/// What JUnit inputs say of their runs, from their testsuites' properties and timestamps.
pub fn junit_runs(inputs: &[(PathBuf, JunitInput)]) -> Result<Runs, MergeError> {
    let mut runs = Runs::default();
    for (path, input) in inputs {
        let mut start: Option<SystemTime> = None;
        for suite in &input.suites {
            for target in junit::property(suite, junit::TARGET_PROPERTY) {
                runs.target(path, target);
            }
            for id in junit::property(suite, junit::CI_RUN_PROPERTY) {
                runs.ci_run(path, id);
            }
            if junit::property(suite, junit::CI_RUN_PROPERTY)
                .next()
                .is_none()
            {
                runs.without_ci_run.insert(path.clone());
            }
            let mut named = false;
            for text in junit::property(suite, junit::SELECTION_PROPERTY) {
                let (selected, digest) = parse_selection(text).ok_or_else(|| {
                    bad_input(
                        path,
                        format!("the selection property {text:?} is not N:DIGEST"),
                    )
                })?;
                runs.selection(path, selected, digest);
                named = true;
            }
            if !named
                && junit::property(suite, junit::SHARD_PROPERTY)
                    .next()
                    .is_some()
            {
                runs.unselected.insert(path.clone());
            }
            for list in junit::property(suite, junit::SHARD_PROPERTY) {
                for text in list.split(',').filter(|t| !t.trim().is_empty()) {
                    let (index, total) = parse_shard(text).ok_or_else(|| {
                        bad_input(path, format!("the shard property {text:?} is not K/N"))
                    })?;
                    runs.shard(path, index, total)?;
                }
            }
            if let Some(t) = suite.timestamp {
                let t = SystemTime::from(t);
                start = Some(start.map_or(t, |s| s.min(t)));
            }
        }
        runs.times.push((start, input.time));
    }
    Ok(runs)
}

/// Parses one input, telling JSON from XML by its first non-blank character.
pub fn parse_input(text: &str) -> Result<Input, String> {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    match body.chars().next() {
        Some('{') => serde_json::from_str(body)
            .map(Input::Json)
            .map_err(|e| format!("not valid JSON: {e}")),
        Some('<') => junit::read(body)
            .map(|r| {
                let time = r
                    .time
                    .unwrap_or_else(|| r.test_suites.iter().filter_map(|s| s.time).sum());
                Input::Junit(JunitInput {
                    suites: r.test_suites,
                    time,
                })
            })
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
    /// Things worth telling the user (differing settings).
    pub notes: Vec<String>,
    /// Cases found in more than one input.
    pub duplicates: Duplicates,
    /// The inputs whose run did not complete (`complete` is not true): interrupted, or still
    /// running when the file was copied.
    pub incomplete: Vec<PathBuf>,
    /// Shards (`K/N`) of a sharded run that no input holds: the merge covers part of the run.
    pub missing_shards: Vec<String>,
    /// Targets, shards and times of the inputs.
    pub runs: Runs,
}

/// Cases found in more than one input.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Duplicates {
    /// How many cases.
    pub cases: usize,
    /// How many of them have different outcomes in different inputs.
    pub differing: usize,
}

impl Duplicates {
    /// The one note about them, if there are any.
    pub fn note(self) -> Option<String> {
        match (self.cases, self.differing) {
            (0, _) => None,
            (n, 0) => Some(format!(
                "{} in more than one input; the worst outcome of each is kept",
                appear(n)
            )),
            (n, d) => Some(format!(
                "{} in more than one input ({d} with different outcomes); the worst outcome of each is kept",
                appear(n)
            )),
        }
    }
}

fn appear(n: usize) -> String {
    if n == 1 {
        "1 case appears".to_string()
    } else {
        format!("{} cases appear", crate::report::text::thousands(n))
    }
}

/// How bad an outcome is, for keeping the worst of a duplicated case: error, fail, warn, pass,
/// skip (unlike [`crate::verdict::event::Outcome`]'s order, a skip is better than a pass here:
/// the run that ran the case tells more than the one that skipped it).
fn severity_rank(outcome: &str) -> u8 {
    match outcome {
        "error" => 4,
        "fail" => 3,
        "warn" => 2,
        "pass" => 1,
        _ => 0,
    }
}

fn json_rank(case: &Value) -> (u8, String) {
    let outcome = case.get("outcome").and_then(Value::as_str).unwrap_or("");
    (severity_rank(outcome), case.to_string())
}

fn case_key(case: &Value) -> Option<(String, String)> {
    let id = case.get("id")?;
    Some((
        id.get("file")?.as_str()?.to_string(),
        id.get("name")?.as_str()?.to_string(),
    ))
}

/// Merges JSON reports (path, document); the result does not depend on their order.
pub fn merge_json(inputs: &[(PathBuf, Value)]) -> Result<MergedJson, MergeError> {
    let mut notes = Vec::new();
    // Per case (file, name): the worst copy so far, its index, and the outcomes seen.
    let mut kept: BTreeMap<(String, String), (u64, Value, Vec<String>)> = BTreeMap::new();
    let mut incomplete = Vec::new();
    let mut runs = Runs::default();
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
                    // A target differs in more than a note (see below); the embedded server's
                    // base URL differs from run to run.
                    if key == "base_url" && obj.contains_key("target") {
                        continue;
                    }
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
        if obj.get("complete").and_then(Value::as_bool) != Some(true) {
            incomplete.push(path.clone());
        }
        // A merged report: the shards it holds, and their selection.
        if let Some(shards) = obj.get("shards").and_then(Value::as_array) {
            for shard in shards {
                let field = |k: &str| shard.get(k).and_then(Value::as_u64);
                let (Some(index), Some(total)) = (field("index"), field("total")) else {
                    return Err(bad_input(
                        path,
                        format!("`shards` holds {shard}, not {{index, total}}"),
                    ));
                };
                runs.shard(path, index, total)?;
            }
            match obj.get("selection") {
                None => {
                    runs.unselected.insert(path.clone());
                }
                Some(sel) => match (
                    sel.get("selected").and_then(Value::as_u64),
                    sel.get("selection").and_then(Value::as_str),
                ) {
                    (Some(n), Some(digest)) if !digest.is_empty() => {
                        runs.selection(path, n, digest);
                    }
                    _ => {
                        return Err(bad_input(
                            path,
                            format!("`selection` is not a count of cases and a digest: {sel}"),
                        ));
                    }
                },
            }
        }
        if let Some(shard) = obj.get("shard").filter(|s| !s.is_null()) {
            let field = |k: &str| shard.get(k).and_then(Value::as_u64);
            match (shard.get("selected"), shard.get("selection")) {
                // A report of a version before selections.
                (None, None) => {
                    runs.unselected.insert(path.clone());
                }
                (Some(n), Some(Value::String(digest))) if n.is_u64() && !digest.is_empty() => {
                    runs.selection(path, n.as_u64().unwrap_or_default(), digest);
                }
                _ => {
                    return Err(bad_input(
                        path,
                        format!(
                            "`shard.selected` and `shard.selection` are not a count of cases \
                             and a digest: {shard}"
                        ),
                    ));
                }
            }
            match (field("index"), field("total")) {
                (Some(index), Some(total)) => runs.shard(path, index, total)?,
                _ => {
                    return Err(bad_input(
                        path,
                        format!("`shard` is not {{index, total}}: {shard}"),
                    ));
                }
            }
        }
        let text = |key: &str| obj.get(key).and_then(Value::as_str);
        if let Some(target) = text("target") {
            runs.target(path, target);
        }
        match text("ci_run") {
            Some(id) => runs.ci_run(path, id),
            None => {
                runs.without_ci_run.insert(path.clone());
            }
        }
        let duration = obj
            .get("summary")
            .and_then(|s| s.get("duration"))
            .and_then(Value::as_f64)
            .and_then(|d| Duration::try_from_secs_f64(d).ok())
            .unwrap_or_default();
        let started = text("started_at")
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(SystemTime::from);
        runs.times.push((started, duration));
        for case in list {
            let key = case_key(case)
                .ok_or_else(|| bad_input(path, "a case has no `id` with a `file` and a `name`"))?;
            let index = case
                .get("id")
                .and_then(|id| id.get("index"))
                .and_then(Value::as_u64)
                .unwrap_or(u64::MAX);
            let outcome = case
                .get("outcome")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if !OUTCOMES.contains(&outcome.as_str()) {
                return Err(bad_input(
                    path,
                    format!(
                        "case `{}` of {} has an unknown outcome {outcome:?} (one of {} is \
                         expected)",
                        key.1,
                        key.0,
                        OUTCOMES.join(", ")
                    ),
                ));
            }
            match kept.get_mut(&key) {
                None => {
                    kept.insert(key, (index, case.clone(), vec![outcome]));
                }
                Some((kept_index, kept_case, outcomes)) => {
                    outcomes.push(outcome);
                    if json_rank(case) > json_rank(kept_case) {
                        *kept_index = index;
                        *kept_case = case.clone();
                    }
                }
            }
        }
    }
    let mut duplicates = Duplicates::default();
    let mut cases: Vec<(String, u64, String, Value)> = Vec::with_capacity(kept.len());
    for ((file, name), (index, case, mut outcomes)) in kept {
        if outcomes.len() > 1 {
            duplicates.cases += 1;
            outcomes.sort();
            outcomes.dedup();
            if outcomes.len() > 1 {
                duplicates.differing += 1;
            }
        }
        cases.push((file, index, name, case));
    }
    cases.sort_by(|a, b| (&a.0, a.1, &a.2).cmp(&(&b.0, b.1, &b.2)));
    let mut summary = RunSummary::default();
    let mut merged_cases = Vec::with_capacity(cases.len());
    for (position, (_, _, _, mut case)) in cases.into_iter().enumerate() {
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
            // Each input's outcomes were checked as it was read.
            other => unreachable!("an unknown outcome {other:?} passed the input check"),
        }
        if let Some(id) = case.get_mut("id").and_then(Value::as_object_mut) {
            id.insert("index".into(), json!(position));
        }
        merged_cases.push(case);
    }
    summary.duration = runs.wall_time();
    let first = first.cloned().unwrap_or_default();
    let mut document = json!({
        "format_version": FORMAT_VERSION,
        "tool": "mallcheck",
        "version": env!("CARGO_PKG_VERSION"),
        "base_url": first.get("base_url").cloned().unwrap_or(Value::Null),
        "target": first.get("target").cloned().unwrap_or(Value::Null),
        "strict": first.get("strict").cloned().unwrap_or(Value::Bool(false)),
        "complete": incomplete.is_empty(),
        "summary": summary,
        "cases": merged_cases,
    });
    if let Some(target) = first.get("target") {
        document["target"] = target.clone();
    }
    if let Some(started) = runs.started() {
        document["started_at"] = json!(crate::report::text::rfc3339(started));
    }
    // The CI run, so that a merged report is merged again under the same check.
    if let Ok(Some(id)) = runs.single_ci_run() {
        document["ci_run"] = json!(id);
    }
    // The shards merged and their selection, so that a merged report can be merged again with
    // the same checks (a shard's own report says `shard`).
    if !runs.shards.is_empty() {
        let shards: Vec<Value> = runs
            .shards
            .iter()
            .flat_map(|(total, seen)| {
                seen.iter()
                    .map(move |index| json!({"index": index, "total": total}))
            })
            .collect();
        document["shards"] = Value::Array(shards);
        if let Ok(Some((selected, digest))) = runs.single_selection() {
            document["selection"] = json!({"selected": selected, "selection": digest});
        }
    }
    Ok(MergedJson {
        document,
        summary,
        notes,
        duplicates,
        incomplete,
        missing_shards: runs.missing_shards(),
        runs,
    })
}

/// How bad a testcase's status is, as [`severity_rank`] ranks outcomes (a passing testcase
/// may have warned; JUnit does not say), then its content, which makes the choice between two
/// copies independent of their order.
fn junit_rank(case: &TestCase) -> (u8, String) {
    let rank = match &case.status {
        TestCaseStatus::NonSuccess {
            kind: NonSuccessKind::Error,
            ..
        } => 4,
        TestCaseStatus::NonSuccess {
            kind: NonSuccessKind::Failure,
            ..
        } => 3,
        TestCaseStatus::Success { .. } if case.name.as_str() != junit::unmarked(&case.name) => 2,
        TestCaseStatus::Success { .. } => 1,
        TestCaseStatus::Skipped { .. } => 0,
    };
    (rank, format!("{case:?}"))
}

/// Merged JUnit testsuites.
#[derive(Debug)]
pub struct MergedJunit {
    /// Testsuites by name (sorted), counts recomputed.
    pub suites: Vec<TestSuite>,
    /// Testcases found in more than one input.
    pub duplicates: Duplicates,
}

/// Merges parsed JUnit reports: testsuites by name (sorted), testcases in the order first
/// seen, deduplicated by class and name keeping the worst copy (see the module doc), counts
/// recomputed.
pub fn merge_junit(inputs: impl IntoIterator<Item = Vec<TestSuite>>) -> MergedJunit {
    let mut by_name: BTreeMap<String, TestSuite> = BTreeMap::new();
    // Per (suite, class, name): where the testcase is, and the ranks of its copies.
    let mut seen: HashMap<(String, String, String), (usize, Vec<u8>)> = HashMap::new();
    for suites in inputs {
        for suite in suites {
            let name = suite.name.as_str().to_string();
            // The properties of the run (target, shard) are written anew by [`describe`].
            let merged = by_name.entry(name.clone()).or_insert_with(|| {
                let mut fresh = TestSuite::new(suite.name.clone());
                fresh.extra = suite.extra.clone();
                fresh
            });
            for mut case in suite.test_cases {
                strictly(&mut case);
                let key = (
                    name.clone(),
                    case.classname
                        .as_ref()
                        .map_or_else(String::new, |c| c.as_str().to_string()),
                    junit::unmarked(&case.name).to_string(),
                );
                let rank = junit_rank(&case);
                match seen.get_mut(&key) {
                    None => {
                        seen.insert(key, (merged.test_cases.len(), vec![rank.0]));
                        merged.test_cases.push(case);
                    }
                    Some((at, ranks)) => {
                        ranks.push(rank.0);
                        if rank > junit_rank(&merged.test_cases[*at]) {
                            merged.test_cases[*at] = case;
                        }
                    }
                }
            }
            merged.system_out = join_opt(merged.system_out.take(), suite.system_out);
            merged.system_err = join_opt(merged.system_err.take(), suite.system_err);
        }
    }
    let mut duplicates = Duplicates::default();
    for (_, mut ranks) in seen.into_values() {
        if ranks.len() > 1 {
            duplicates.cases += 1;
            ranks.sort_unstable();
            ranks.dedup();
            if ranks.len() > 1 {
                duplicates.differing += 1;
            }
        }
    }
    let suites = by_name
        .into_values()
        .map(|s| {
            // Recounted from the kept testcases.
            let mut counted = TestSuite::new(s.name.clone());
            counted.extra = s.extra;
            counted.system_out = s.system_out;
            counted.system_err = s.system_err;
            let time = s.test_cases.iter().filter_map(|c| c.time).sum();
            counted.add_test_cases(s.test_cases);
            counted.time = Some(time);
            counted
        })
        .collect();
    MergedJunit { suites, duplicates }
}

/// A testcase as the strict schemas take it, whatever wrote the input: no attributes beyond
/// theirs (an earlier mallcheck wrote `file`), no properties, and a time.
fn strictly(case: &mut TestCase) {
    case.extra.clear();
    case.properties.clear();
    case.time.get_or_insert(Duration::ZERO);
}

/// Writes the properties of the merged run on every suite: the one target, the shards merged,
/// the warnings counted; and the earliest start as the suites' timestamp.
pub fn describe(suites: &mut [TestSuite], runs: &Runs) {
    let target = runs.single_target().ok().flatten();
    let shards = runs.shard_list();
    for suite in suites {
        let mut properties = Vec::new();
        if let Some(target) = target {
            properties.push((junit::TARGET_PROPERTY, target.to_string()));
        }
        if !shards.is_empty() {
            properties.push((junit::SHARD_PROPERTY, shards.clone()));
        }
        if let Ok(Some((selected, digest))) = runs.single_selection() {
            properties.push((junit::SELECTION_PROPERTY, format!("{selected}:{digest}")));
        }
        if let Ok(Some(id)) = runs.single_ci_run() {
            properties.push((junit::CI_RUN_PROPERTY, id.to_string()));
        }
        let warnings = suite
            .test_cases
            .iter()
            .filter(|c| c.name.as_str() != junit::unmarked(&c.name))
            .count();
        if warnings > 0 {
            properties.push((junit::WARNINGS_PROPERTY, warnings.to_string()));
        }
        let flaky = suite
            .test_cases
            .iter()
            .filter(|c| {
                c.system_out
                    .as_ref()
                    .is_some_and(|out| out.as_str().starts_with(junit::FLAKY_NOTE))
            })
            .count();
        if flaky > 0 {
            properties.push((junit::FLAKY_PROPERTY, flaky.to_string()));
        }
        junit::add_properties(suite, properties);
        if let Some(started) = runs.started() {
            suite.set_timestamp(chrono::DateTime::<chrono::Utc>::from(started));
        }
    }
}

/// Orders each suite's testcases like the cases of a merged JSON report (case file = the
/// suite's `file`, or its name; case name = testcase name without its warning mark), so shards give the order
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
        let file = suite.extra.get("file").map_or_else(
            || suite.name.as_str().to_string(),
            |f| f.as_str().to_string(),
        );
        suite.test_cases.sort_by_key(|c| {
            position
                .get(&(file.clone(), junit::unmarked(&c.name).to_string()))
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
            "the worst outcome is kept"
        );
        assert_eq!(merged.document["cases"][2]["id"]["index"], 2, "re-indexed");
        assert_eq!(
            (merged.summary.passed, merged.summary.failed),
            (2, 1),
            "re-counted"
        );
        assert_eq!(merged.document["summary"]["duration"], 3.0);
        assert!(merged.notes.is_empty(), "{:?}", merged.notes);
        assert_eq!(
            merged.duplicates,
            Duplicates {
                cases: 1,
                differing: 1
            }
        );
    }

    #[test]
    fn json_merge_names_the_shards_no_input_holds() {
        let shard = |k: u64| {
            let mut r = report(
                "http://x",
                json!([case("a.yaml", &format!("c{k}"), k, "pass")]),
            );
            r["shard"] = json!({"index": k, "total": 3});
            (PathBuf::from(format!("s{k}.json")), r)
        };
        let merged = merge_json(&[shard(1), shard(3)]).expect("merge");
        assert_eq!(merged.missing_shards, ["2/3"]);
        let merged = merge_json(&[shard(3), shard(2), shard(1)]).expect("merge");
        assert!(merged.missing_shards.is_empty());
        let unsharded = merge_json(&[("a.json".into(), report("http://x", json!([])))]);
        assert!(unsharded.expect("merge").missing_shards.is_empty());
        let (path, mut bad) = shard(1);
        bad["shard"] = json!({"index": 4, "total": 3});
        assert!(merge_json(&[(path, bad)]).is_err(), "index beyond total");
    }

    #[test]
    fn json_merge_keeps_the_worst_copy_whatever_the_input_order() {
        let table = [
            ("error", "fail", "error", "an error beats a failure"),
            ("fail", "warn", "fail", "a failure beats a warning"),
            ("warn", "pass", "warn", "a warning beats a pass"),
            ("pass", "skip", "pass", "a case that ran beats its skip"),
        ];
        for (worse, better, kept, why) in table {
            let a = report("http://x", json!([case("a.yaml", "one", 0, worse)]));
            let b = report("http://x", json!([case("a.yaml", "one", 4, better)]));
            let ab = merge_json(&[("a.json".into(), a.clone()), ("b.json".into(), b.clone())])
                .expect("merge");
            let ba = merge_json(&[("b.json".into(), b), ("a.json".into(), a)]).expect("merge");
            assert_eq!(ab.document, ba.document, "{why}");
            assert_eq!(ab.document["cases"][0]["outcome"], kept, "{why}");
            assert_eq!(ab.document["cases"].as_array().map(Vec::len), Some(1));
        }
        let same = |index| report("http://x", json!([case("a.yaml", "one", index, "fail")]));
        let ab = merge_json(&[("a.json".into(), same(0)), ("b.json".into(), same(7))]);
        let ba = merge_json(&[("b.json".into(), same(7)), ("a.json".into(), same(0))]);
        assert_eq!(
            ab.expect("merge").document,
            ba.expect("merge").document,
            "equal outcomes are told apart by content"
        );
    }

    #[test]
    fn json_merge_names_the_input_holding_an_unknown_outcome() {
        let good = report("http://x", json!([case("a.yaml", "one", 0, "pass")]));
        let bad = report("http://x", json!([case("a.yaml", "two", 1, "passed")]));
        let err = merge_json(&[("good.json".into(), good), ("bad.json".into(), bad)])
            .expect_err("an unknown outcome is refused");
        assert_eq!(err.subject, "bad.json");
        assert!(
            err.message.contains("`two` of a.yaml") && err.message.contains("\"passed\""),
            "{}",
            err.message
        );
    }

    #[test]
    fn json_merge_names_the_inputs_of_runs_that_did_not_complete() {
        let mut partial = report("http://x", json!([case("a.yaml", "one", 0, "pass")]));
        partial["complete"] = json!(false);
        let whole = report("http://x", json!([case("a.yaml", "two", 1, "pass")]));
        let merged = merge_json(&[
            ("whole.json".into(), whole),
            ("partial.json".into(), partial),
        ])
        .expect("merge");
        assert_eq!(merged.incomplete, [PathBuf::from("partial.json")]);
        assert_eq!(merged.document["complete"], false);
    }

    #[test]
    fn duplicates_make_one_note() {
        assert_eq!(Duplicates::default().note(), None);
        assert_eq!(
            Duplicates {
                cases: 35,
                differing: 2
            }
            .note()
            .as_deref(),
            Some(
                "35 cases appear in more than one input (2 with different outcomes); the worst outcome of each is kept"
            )
        );
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
        let merged = merge_junit([parse(SHARD_1), parse(SHARD_2)]).suites;
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
    fn junit_merge_keeps_the_worst_copy_whatever_the_input_order() {
        const PASSED: &str = r#"<testsuites><testsuite name="cases/a.yaml" tests="2">
<testcase name="one" time="0.1" classname="cases.a"/><testcase name="two" time="0.1" classname="cases.a"/>
</testsuite></testsuites>"#;
        const FAILED: &str = r#"<testsuites><testsuite name="cases/a.yaml" tests="2">
<testcase name="one" time="0.2" classname="cases.a"><failure type="mall.state" message="bad"/></testcase>
<testcase name="two" time="0.2" classname="cases.a"><skipped message="no mall"/></testcase>
</testsuite></testsuites>"#;
        let ab = merge_junit([parse(PASSED), parse(FAILED)]);
        let ba = merge_junit([parse(FAILED), parse(PASSED)]);
        let xml = |m: MergedJunit| junit::document("merged", m.suites).expect("xml");
        assert_eq!(
            ab.duplicates,
            Duplicates {
                cases: 2,
                differing: 2
            }
        );
        let (ab, ba) = (xml(ab), xml(ba));
        assert_eq!(ab, ba);
        let read = junit::read(&ab).expect("a JUnit report");
        assert_eq!(
            (read.tests, read.failures, read.skipped),
            (2, 1, 0),
            "the failure of one and the pass of two are kept: {ab}"
        );
    }

    #[test]
    fn junit_testcases_follow_the_json_case_order() {
        let mut suites = merge_junit([parse(SHARD_2)]).suites;
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
