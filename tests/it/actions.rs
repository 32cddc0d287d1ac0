//! Under GitHub Actions (`GITHUB_ACTIONS=true`), a failing run annotates each failing case at
//! its case file and line (`::error file=…,line=…::`), folds each case file's lines into a
//! `::group::`, and appends its Markdown summary to `$GITHUB_STEP_SUMMARY`.

use std::path::Path;
use std::process::Command;

use mallcheck::server::data::DEMO_SIGN_KEY;

use crate::common::{Server, repo, run_as_main};

/// A working directory with the shipped case files in `cases/` (relative paths, as in a CI
/// checkout).
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    for entry in std::fs::read_dir(repo().join("cases")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            std::fs::copy(&path, cases.join(path.file_name().unwrap())).unwrap();
        }
    }
    dir
}

fn run(url: &str, dir: &Path, actions: bool) -> (Option<i32>, String) {
    let mut cmd: Command = run_as_main(url, dir);
    cmd.args(["--cases", "cases", "--color", "never"]);
    if actions {
        cmd.env("GITHUB_ACTIONS", "true")
            .env("GITHUB_STEP_SUMMARY", dir.join("step-summary.md"));
    }
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The 1-based line where the case named `name` starts in `text`, and where the next starts.
fn case_lines(text: &str, name: &str) -> (usize, usize) {
    let starts: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| l.strip_prefix("  - name: ").map(|n| (i + 1, n)))
        .collect();
    let at = starts.iter().position(|(_, n)| *n == name).unwrap();
    let end = starts.get(at + 1).map_or(usize::MAX, |(l, _)| *l);
    (starts[at].0, end)
}

#[test]
fn a_failing_run_under_github_actions_annotates_groups_and_summarises() {
    let server = Server::start(&[]);
    let dir = checkout();
    std::fs::write(dir.path().join("step-summary.md"), "earlier step\n").unwrap();
    let (code, stdout) = run(
        &server.fault_url("mall-state-out-of-range"),
        dir.path(),
        true,
    );
    assert_eq!(code, Some(1), "{stdout}");
    let name = "first page is a success envelope";
    let prefix = "::error file=cases/mall-list.yaml,line=";
    let annotation = stdout
        .lines()
        .find(|l| l.starts_with(prefix) && l.contains(&format!(",title=FAIL {name}::")))
        .unwrap_or_else(|| panic!("no annotation of {name}:\n{stdout}"));
    assert!(annotation.contains("::mall.state (§3)"), "{annotation}");
    let line: usize = annotation[prefix.len()..]
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let text = std::fs::read_to_string(dir.path().join("cases/mall-list.yaml")).unwrap();
    let (start, end) = case_lines(&text, name);
    assert!(
        (start..end).contains(&line),
        "line {line} is not in the case (lines {start}..{end})"
    );
    // One group per case file, each closed, holding its cases' lines.
    let files = std::fs::read_dir(dir.path().join("cases")).unwrap().count();
    let groups: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("::group::"))
        .collect();
    assert_eq!(groups.len(), files, "{stdout}");
    assert_eq!(
        stdout.lines().filter(|l| *l == "::endgroup::").count(),
        files
    );
    let group = stdout
        .split("::group::cases/mall-list.yaml")
        .nth(1)
        .and_then(|rest| rest.split("::endgroup::").next())
        .unwrap();
    assert!(
        group.contains(&format!("FAIL  cases/mall-list.yaml › {name}")),
        "{group}"
    );
    assert!(!stdout.contains(DEMO_SIGN_KEY));
    let summary = std::fs::read_to_string(dir.path().join("step-summary.md")).unwrap();
    assert!(
        summary.starts_with("earlier step\n") && summary.contains("## mallcheck: ❌ FAIL"),
        "{summary}"
    );
}

#[test]
fn outside_github_actions_there_are_no_workflow_commands() {
    let server = Server::start(&[]);
    let dir = checkout();
    let (code, stdout) = run(
        &server.fault_url("mall-state-out-of-range"),
        dir.path(),
        false,
    );
    assert_eq!(code, Some(1));
    assert!(
        !stdout.contains("::error") && !stdout.contains("::group::"),
        "{stdout}"
    );
    assert!(!dir.path().join("step-summary.md").exists());
}
