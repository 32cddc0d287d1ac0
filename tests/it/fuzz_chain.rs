//! Chained workflows around `mallcheck fuzz`: what the fuzzer saves is valid input for every
//! command that reads the case tree. A finding against a faulty server becomes a case that
//! `run` replays (failing against the fault, passing against a correct server), `list` lists,
//! `fuzz` replays first and `merge` combines, also when two fuzz processes share the directory
//! and when the directory holds files of the earlier regression format.

use std::path::{Path, PathBuf};

use crate::common::{Server, assert_exit, bin, output_text, repo};
use assert_cmd::Command;
use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, MAIN};
use serde_json::Value;

/// A project directory: a copy of the shipped `cases/` (with its `fuzz-regressions/`).
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut pending = vec![PathBuf::from("cases")];
    while let Some(rel) = pending.pop() {
        std::fs::create_dir_all(dir.path().join(&rel)).unwrap();
        for entry in std::fs::read_dir(repo().join(&rel)).unwrap() {
            let entry = entry.unwrap();
            let rel = rel.join(entry.file_name());
            if entry.path().is_dir() {
                pending.push(rel);
            } else {
                std::fs::copy(entry.path(), dir.path().join(&rel)).unwrap();
            }
        }
    }
    dir
}

/// `mallcheck <command>` in `dir` against `base_url` as the reference server's main merchant.
fn mallcheck(dir: &Path, command: &str, base_url: &str) -> Command {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .args([command, "--color", "never", "--base-url", base_url])
        .args(["--appid", DEMO_APPID, "--merchant-id", MAIN.merchant_id])
        .args(["--merchant-user-id", MAIN.merchant_user_id]);
    cmd
}

/// `mallcheck fuzz` of the mall list, `cases` bodies.
fn fuzz(dir: &Path, base_url: &str, seed: &str, cases: &str) -> Command {
    let mut cmd = mallcheck(dir, "fuzz", base_url);
    cmd.args(["--seed", seed, "--cases", cases, "--endpoint", "mall-list"]);
    cmd
}

/// The files of the regressions directory, README aside.
fn saved(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("cases/fuzz-regressions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    files
}

#[test]
fn a_fuzz_finding_is_a_case_that_run_list_fuzz_and_merge_read() {
    let server = Server::start(&[]);
    let faulty = server.fault_url("fuzz-count-over-80");
    let dir = project();
    let d = dir.path();

    // Two fuzz processes share the directory: each writes atomically under a stable name.
    let mut first = fuzz(d, &faulty, "1", "120");
    let mut second = fuzz(d, &faulty, "2", "120");
    second.args(["--junit", "reports/fuzz-junit-2.xml"]);
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| first.output().unwrap());
        let b = s.spawn(|| second.output().unwrap());
        (a.join().unwrap(), b.join().unwrap())
    });
    for out in [&a, &b] {
        assert_exit(out, 1);
        assert!(
            output_text(out).contains("saved: cases/fuzz-regressions/mall-list-no-server-error-"),
            "{}",
            output_text(out)
        );
    }
    let files = saved(d);
    assert_eq!(
        files.len(),
        1,
        "the same minimal body is one file: {files:?}"
    );
    let case: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(case["cases"][0]["endpoint"], "mall-list");
    assert_eq!(case["cases"][0]["request"]["body"]["cursor"]["count"], 81);
    assert_eq!(
        case["cases"][0]["request"]["body"]["appid"],
        "${MALLCHECK_APPID}"
    );
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schemas/case.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&case)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");

    // `run` replays it: it fails against the fault and passes against a correct server, and
    // the whole tree (shipped cases and the regression) loads.
    let out = mallcheck(d, "run", &faulty)
        .args(["--cases", "cases/fuzz-regressions"])
        .output()
        .unwrap();
    assert_exit(&out, 1);
    assert!(
        output_text(&out).contains("FAIL  cases/fuzz-regressions/mall-list-no-server-error-")
            && output_text(&out).contains("[robustness] robustness.server-error")
            && !output_text(&out).contains("http.server-error"),
        "{}",
        output_text(&out)
    );
    let out = mallcheck(d, "run", &server.base_url).output().unwrap();
    assert_exit(&out, 0);
    assert!(
        output_text(&out).contains("PASS  cases/fuzz-regressions/mall-list-no-server-error-"),
        "{}",
        output_text(&out)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("reports/report.json")).unwrap())
            .unwrap();
    let shipped = report["cases"].as_array().map_or(0, Vec::len);

    // `list` lists it with its tag, and `--filter check:` finds it by a fuzz property.
    let out = mallcheck(d, "list", &server.base_url).output().unwrap();
    assert_exit(&out, 0);
    assert!(
        output_text(&out).contains("fuzz.no-server-error on mall-list (")
            && output_text(&out).contains("[fuzz-regression]")
            && output_text(&out).contains(&format!("{shipped} cases")),
        "{}",
        output_text(&out)
    );
    let out = mallcheck(d, "list", &server.base_url)
        .args(["--filter", "check:fuzz.timely"])
        .output()
        .unwrap();
    assert!(
        output_text(&out).ends_with("1 case\n"),
        "{}",
        output_text(&out)
    );

    // `fuzz` replays it first: it passes against a correct server (nothing new is saved) and
    // still fails against the fault.
    let out = fuzz(d, &server.base_url, "3", "120").output().unwrap();
    assert_exit(&out, 0);
    assert!(
        output_text(&out).contains("on mall-list: passes now")
            && output_text(&out).contains("1 replayed"),
        "{}",
        output_text(&out)
    );
    assert_eq!(saved(d), files);
    let out = fuzz(d, &faulty, "3", "120").output().unwrap();
    assert_exit(&out, 1);
    assert!(
        output_text(&out).contains("still fails fuzz.no-server-error"),
        "{}",
        output_text(&out)
    );

    // `merge` combines the reports of run and fuzz; the failing fuzz run fails the merge.
    let out = Command::new(bin())
        .current_dir(d)
        .args(["merge", "--junit", "all.xml", "--json", "all.json"])
        .args(["reports/junit.xml", "reports/report.json"])
        .args(["reports/fuzz-junit.xml"])
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let merged = std::fs::read_to_string(d.join("all.xml")).unwrap();
    assert!(
        merged.contains("fuzz.no-server-error on mall-list (") && merged.contains("fuzz.timely"),
        "{merged}"
    );
    let out = Command::new(bin())
        .current_dir(d)
        .args(["merge", "--junit", "pass.xml"])
        .args(["reports/junit.xml", "reports/report.json"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
}

#[test]
fn files_of_the_earlier_format_are_named_by_run_and_converted_by_fuzz() {
    let server = Server::start(&[]);
    let dir = project();
    let d = dir.path();
    let old = d.join("cases/fuzz-regressions/mall-list-no-server-error-0123456789.json");
    std::fs::write(
        &old,
        format!(
            r#"{{"endpoint": "mall-list", "property": "fuzz.no-server-error", "body": {{"appid": "{DEMO_APPID}", "cursor": {{"count": 81}}}}}}"#
        ),
    )
    .unwrap();
    let out = mallcheck(d, "run", &server.base_url).output().unwrap();
    assert_exit(&out, 2);
    assert!(
        // The demo key begins `mallcheck-`, so a diagnostic hides the word (8 characters of it).
        output_text(&out).contains("fuzz regression in the format of earlier")
            && output_text(&out).contains(" fuzz` once: it converts"),
        "{}",
        output_text(&out)
    );
    let out = fuzz(d, &server.base_url, "1", "5").output().unwrap();
    assert_exit(&out, 0);
    assert!(
        output_text(&out).contains("(the earlier regression format) into the case file"),
        "{}",
        output_text(&out)
    );
    assert!(!old.exists());
    let files = saved(d);
    assert_eq!(files.len(), 1, "{files:?}");
    let out = mallcheck(d, "run", &server.base_url).output().unwrap();
    assert_exit(&out, 0);
}
