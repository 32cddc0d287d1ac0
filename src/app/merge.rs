//! `mallcheck merge`: combines the JUnit XML and JSON reports of several runs (CI shards) into
//! one of each, and exits 1 when the merged result holds a failure, misses a shard or holds a
//! run that did not complete, 3 when it holds only errors (cases that could not test the
//! service); inputs of different targets are refused (exit 2).

use std::path::{Path, PathBuf};

use quick_junit::TestCaseStatus;
use serde_json::Value;

use crate::atomic;
use crate::cli::MergeArgs;
use crate::error::UsageError;
use crate::exit;
use crate::local_file::{self, Kind};
use crate::redact::Redactor;
use crate::report::file::ReportKind;
use crate::report::merge::{
    Duplicates, Input, JunitInput, describe, junit_runs, merge_json, merge_junit, order_like_json,
    parse_input,
};
use crate::spec::catalog;

/// Runs `mallcheck merge`.
pub fn merge(args: &MergeArgs, redactor: &Redactor) -> Result<i32, UsageError> {
    let outputs: Vec<(ReportKind, &Path)> = [
        (ReportKind::Json, args.json.as_deref()),
        (ReportKind::Junit, args.junit.as_deref()),
    ]
    .into_iter()
    .filter_map(|(kind, path)| Some((kind, path?)))
    .collect();
    super::check_reports(&outputs)?;
    // Held to the end: a run or a fuzz run writing one of these files is not overwritten.
    let paths: Vec<PathBuf> = outputs.iter().map(|(_, p)| p.to_path_buf()).collect();
    let _locks = crate::report::lock::acquire(&paths)?;
    let mut json_inputs: Vec<(PathBuf, Value)> = Vec::new();
    let mut junit_inputs: Vec<(PathBuf, JunitInput)> = Vec::new();
    for path in &args.inputs {
        match read_input(path)? {
            Input::Json(v) => json_inputs.push((path.clone(), v)),
            Input::Junit(s) => junit_inputs.push((path.clone(), s)),
        }
    }
    if args.json.is_some() && json_inputs.is_empty() {
        return Err(UsageError::setting(
            "--json",
            "no JSON report among the inputs",
            Some("pass the report.json files of the runs, or drop --json"),
        ));
    }
    if args.junit.is_some() && junit_inputs.is_empty() {
        return Err(UsageError::setting(
            "--junit",
            "no JUnit XML report among the inputs",
            Some("pass the junit.xml files of the runs, or drop --junit"),
        ));
    }
    let refused =
        |e: crate::report::merge::MergeError| UsageError::setting(e.subject, e.message, None);
    let mut merged = if json_inputs.is_empty() {
        None
    } else {
        Some(merge_json(&json_inputs).map_err(refused)?)
    };
    // What the JUnit inputs say of their runs, held to the same rules as the JSON reports.
    let junit_runs = junit_runs(&junit_inputs).map_err(refused)?;
    let mut runs = crate::report::merge::Runs::default();
    runs.absorb(&junit_runs);
    if let Some(m) = &merged {
        runs.absorb(&m.runs);
    }
    if let Err(message) = runs.single_target() {
        return Err(UsageError::setting(
            "merge",
            message,
            Some("a merged report speaks for one service: merge the shards of one run"),
        ));
    }
    if let Err(message) = runs.single_ci_run() {
        return Err(UsageError::setting(
            "merge",
            message,
            Some("each shard of one pipeline records its CI run: merge the reports of this run"),
        ));
    }
    let selection = runs.single_selection().map_err(|message| {
        UsageError::setting(
            "merge",
            message,
            Some("shards of one run share their selection: run each with the same cases and flags"),
        )
    })?;
    let junit = args
        .junit
        .as_ref()
        .map(|_| merge_junit(junit_inputs.iter().map(|(_, j)| j.suites.clone())));
    for note in merged.iter().flat_map(|m| &m.notes) {
        crate::say::stderr_line!("note: {note}");
    }
    let duplicates = merged
        .as_ref()
        .map(|m| m.duplicates)
        .or(junit.as_ref().map(|j| j.duplicates));
    if let Some(note) = duplicates.and_then(Duplicates::note) {
        crate::say::stderr_line!("note: {note}");
    }
    // A partial input makes a partial whole: the gate fails, naming the input.
    let mut incomplete: Vec<&Path> = merged
        .iter()
        .flat_map(|m| m.incomplete.iter().map(PathBuf::as_path))
        .collect();
    incomplete.extend(
        junit_inputs
            .iter()
            .filter(|(_, input)| interrupted(&input.suites))
            .map(|(path, _)| path.as_path()),
    );
    for path in &incomplete {
        crate::say::stderr_line!(
            "error: {} is the report of a run that did not complete (interrupted, or still running): the merged result is incomplete",
            path.display()
        );
    }
    // Each merged report is made of the inputs of its own format, so each must hold every
    // shard: a shard given only as JSON is not in the merged JUnit (a glob that missed one
    // JUnit upload went green with `shard 1/3,2/3,3/3` in a report of two shards' cases).
    let mut missing = false;
    let mut report_missing = |what: &str, runs: &crate::report::merge::Runs| {
        for shard in runs.missing_shards() {
            missing = true;
            crate::say::stderr_line!(
                "error: shard {shard} is missing from the {what} inputs: the merged {what} report covers part of the run"
            );
        }
    };
    if let (Some(_), Some(m)) = (&args.json, &merged) {
        report_missing("JSON", &m.runs);
    }
    if args.junit.is_some() {
        report_missing("JUnit", &junit_runs);
    }
    let interrupted = !incomplete.is_empty();
    let mut failing = interrupted || missing;
    // Could-not-test (3) unless a case failed (1): the same codes as `run`.
    let mut could_not_test = false;
    let mut unwritten = false;
    // Reports that hold no case that ran (a crashed shard's stub, `cases: []`) tested nothing:
    // their merge must not read as a pass.
    let nothing_ran = |what: &str| {
        crate::say::stderr_line!(
            "error: the merged {what} reports hold no case that ran: nothing was tested"
        );
        true
    };
    if let (Some(out), Some(merged)) = (&args.json, &mut merged) {
        failing |= merged.summary.failed > 0;
        failing |= lost_cases(
            "JSON",
            merged.summary.total(),
            merged.summary.errored > 0,
            selection,
            &merged.runs,
        );
        could_not_test |= merged.summary.errored > 0;
        if merged.summary.total() == merged.summary.skipped {
            could_not_test |= nothing_ran("JSON");
        }
        // The merged report says its verdict as a run's report does (the JUnit inputs may add
        // to the command's exit code; this is the JSON inputs' own).
        let (code, verdict) = merged_verdict(failing, could_not_test, interrupted);
        if let Value::Object(doc) = &mut merged.document {
            doc.insert("exit_code".into(), Value::from(code));
            doc.insert("verdict".into(), Value::from(verdict));
        }
        let written = serde_json::to_string_pretty(&merged.document)
            .map_err(std::io::Error::other)
            .and_then(|text| atomic::write(out, text.as_bytes(), redactor));
        if let Err(e) = written {
            crate::say::stderr_line!("error: {}", ReportKind::Json.write_error(out, &e));
            unwritten = true;
        } else {
            crate::say::stderr_line!(
                "merged {} into {}: {} passed, {} warned, {} failed, {} errored, {} skipped",
                crate::report::text::plural(json_inputs.len(), "JSON report"),
                out.display(),
                merged.summary.passed,
                merged.summary.warned,
                merged.summary.failed,
                merged.summary.errored,
                merged.summary.skipped
            );
        }
    }
    if let (Some(out), Some(junit)) = (&args.junit, junit) {
        let mut suites = junit.suites;
        if let Some(merged) = &merged {
            order_like_json(&mut suites, &merged.document);
        }
        describe(&mut suites, &with_targets(&junit_runs, &runs));
        failing |= suites.iter().any(|s| s.failures > 0);
        could_not_test |= suites.iter().any(|s| s.errors > 0);
        let ran = suites
            .iter()
            .flat_map(|s| &s.test_cases)
            .filter(|c| !matches!(c.status, quick_junit::TestCaseStatus::Skipped { .. }))
            .count();
        if ran == 0 {
            could_not_test |= nothing_ran("JUnit");
        }
        let count = suites.iter().map(|s| s.tests).sum::<usize>();
        failing |= lost_cases(
            "JUnit",
            count,
            suites.iter().any(|s| s.errors > 0),
            selection,
            &junit_runs,
        );
        // The merged verdict on every suite, as a run's JUnit says its own (h31 F3: a
        // pipeline that reads the merged JUnit saw no verdict at all).
        let (code, verdict) = merged_verdict(failing, could_not_test, interrupted);
        for suite in &mut suites {
            suite.add_property(quick_junit::Property::new(
                "mallcheck.exit-code",
                code.to_string(),
            ));
            suite.add_property(quick_junit::Property::new("mallcheck.verdict", verdict));
        }
        let written =
            crate::report::junit::document_timed("mallcheck merge", suites, junit_runs.wall_time())
                .and_then(|xml| atomic::write(out, xml.as_bytes(), redactor));
        if let Err(e) = written {
            crate::say::stderr_line!("error: {}", ReportKind::Junit.write_error(out, &e));
            unwritten = true;
        } else {
            crate::say::stderr_line!(
                "merged {} into {}: {}",
                crate::report::text::plural(junit_inputs.len(), "JUnit report"),
                out.display(),
                crate::report::text::plural(count, "test case")
            );
        }
    }
    // A merged report that could not be written fails the gate like a failure would.
    Ok(merged_verdict(failing || unwritten, could_not_test, interrupted).0)
}

/// The exit code and verdict of a merge that found so far what it says: a failure (1) over
/// a part it could not test (3), as `run`'s; an interrupted input's merge is `interrupted`.
fn merged_verdict(failing: bool, could_not_test: bool, interrupted: bool) -> (i32, &'static str) {
    let code = if failing {
        exit::FAILURE
    } else if could_not_test {
        exit::COULD_NOT_TEST
    } else {
        exit::PASS
    };
    let verdict = if interrupted {
        "interrupted"
    } else {
        exit::verdict(code)
    };
    (code, verdict)
}

/// Whether the merged `what` report, holding `held` cases, lost some of the selection its
/// shards were cut from (said on stderr): every shard present must mean every case present (a
/// shard report that lost its cases, edited or cut, is not a shard that ran them). Not asked
/// when a case errored: a shard stopped at its preflight lists only that case, and the merge is
/// already not green (exit 3), which is its verdict.
fn lost_cases(
    what: &str,
    held: usize,
    errored: bool,
    selection: Option<(u64, &str)>,
    runs: &crate::report::merge::Runs,
) -> bool {
    let Some((selected, _)) = selection else {
        return false;
    };
    let lost = !errored
        && !runs.shards.is_empty()
        && runs.missing_shards().is_empty()
        && held as u64 != selected;
    if lost {
        crate::say::stderr_line!(
            "error: the {what} inputs hold {held} of the {selected} cases their shards were cut from: the merged result covers part of the run"
        );
    }
    lost
}

/// The shards and times of the JUnit inputs with the targets of every input: what the merged
/// JUnit says of its run (a JUnit report may not name its target; a JSON one beside it does).
fn with_targets(
    junit: &crate::report::merge::Runs,
    all: &crate::report::merge::Runs,
) -> crate::report::merge::Runs {
    crate::report::merge::Runs {
        targets: all.targets.clone(),
        shards: junit.shards.clone(),
        times: junit.times.clone(),
        selections: junit.selections.clone(),
        unselected: junit.unselected.clone(),
        ci_runs: all.ci_runs.clone(),
        without_ci_run: all.without_ci_run.clone(),
    }
}

/// Whether a JUnit report is of a run that did not complete: it holds the `run interrupted`
/// testcase `report::junit` writes for one.
fn interrupted(suites: &[quick_junit::TestSuite]) -> bool {
    suites.iter().flat_map(|s| &s.test_cases).any(|c| {
        matches!(
            &c.status,
            TestCaseStatus::NonSuccess { ty: Some(ty), .. }
                if ty.as_str() == catalog::HARNESS_INTERRUPTED.id
        )
    })
}

fn bad_input(path: &Path, message: impl Into<String>) -> UsageError {
    UsageError::setting(path.display().to_string(), message, None)
}

/// Reads one input report.
fn read_input(path: &Path) -> Result<Input, UsageError> {
    let text = local_file::read_text(path, Kind::MergeInput)?;
    parse_input(&text).map_err(|message| bad_input(path, message))
}
