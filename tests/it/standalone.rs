//! The binary outside a checkout (issue 23 item 2): the shipped cases and schemas are built in,
//! a local `cases/` or `--cases` wins, and `mallcheck init` writes editable copies.

use std::process::Command;

use crate::common::{Server, assert_exit, bin, output_text, repo, run_as_main};

/// Cases of the shipped files (each case is one `- name:` line at the case level).
fn shipped_case_count() -> usize {
    std::fs::read_dir(repo().join("cases"))
        .expect("cases/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| {
            std::fs::read_to_string(p)
                .expect("case file")
                .lines()
                .filter(|l| l.starts_with("  - name:"))
                .count()
        })
        .sum()
}

fn report(dir: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("reports/report.json")).expect("report.json");
    serde_json::from_str(&text).expect("JSON report")
}

#[test]
fn run_in_an_empty_folder_runs_the_whole_shipped_suite() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run_as_main(&server.base_url, dir.path())
        .args(["--color", "never"])
        .output()
        .expect("run mallcheck");
    assert_exit(&out, 0);
    let cases = report(dir.path())["cases"]
        .as_array()
        .cloned()
        .expect("cases");
    let expected = shipped_case_count();
    assert!(expected >= 40, "the shipped suite has {expected} cases");
    assert_eq!(cases.len(), expected, "{}", output_text(&out));
    let text = output_text(&out);
    assert!(
        text.contains("<shipped>/cases/paging.yaml"),
        "cases are named by where they come from:\n{text}"
    );
}

#[test]
fn a_local_cases_folder_replaces_the_shipped_cases() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("cases")).expect("mkdir");
    std::fs::copy(
        repo().join("cases/auth.yaml"),
        dir.path().join("cases/auth.yaml"),
    )
    .expect("copy");
    let out = run_as_main(&server.base_url, dir.path())
        .args(["--color", "never"])
        .output()
        .expect("run mallcheck");
    assert_exit(&out, 0);
    let cases = report(dir.path())["cases"]
        .as_array()
        .cloned()
        .expect("cases");
    assert!(!cases.is_empty());
    assert!(
        cases
            .iter()
            .all(|c| c["id"]["file"].as_str() == Some("cases/auth.yaml")),
        "{cases:#?}"
    );
}

#[test]
fn a_failure_of_a_shipped_case_points_at_its_embedded_file_and_line() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run_as_main(&server.fault_url("mall-state-out-of-range"), dir.path())
        .args(["--color", "never"])
        .output()
        .expect("run mallcheck");
    assert_exit(&out, 1);
    let text = output_text(&out);
    let pointer = regex::Regex::new(r"--> <shipped>/cases/mall-list\.yaml:\d+:\d+").unwrap();
    assert!(pointer.is_match(&text), "{text}");
}

#[test]
fn init_writes_editable_copies_and_keeps_existing_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("cases")).expect("mkdir");
    std::fs::write(dir.path().join("cases/auth.yaml"), "# mine\n").expect("write");
    std::fs::write(dir.path().join(".gitignore"), "/target\n").expect("write");
    let out = Command::new(bin())
        .current_dir(dir.path())
        .arg("init")
        .output()
        .expect("run mallcheck init");
    assert_exit(&out, 0);
    let text = output_text(&out);
    assert!(text.contains("kept     ./cases/auth.yaml"), "{text}");
    assert!(text.contains("wrote    ./cases/paging.yaml"), "{text}");
    assert!(text.contains("wrote    ./schemas/mall.json"), "{text}");
    assert!(text.contains("wrote    ./mallcheck.toml"), "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("cases/auth.yaml")).expect("read"),
        "# mine\n",
        "an existing file is never overwritten"
    );
    for (relative, original) in [
        ("cases/paging.yaml", "cases/paging.yaml"),
        ("schemas/case.schema.json", "schemas/case.schema.json"),
        (
            "schemas/products-response.json",
            "schemas/products-response.json",
        ),
    ] {
        assert_eq!(
            std::fs::read(dir.path().join(relative)).expect("written"),
            std::fs::read(repo().join(original)).expect("shipped"),
            "{relative} is a copy of the shipped file"
        );
    }
    let ignore = std::fs::read_to_string(dir.path().join(".gitignore")).expect("read");
    assert!(ignore.starts_with("/target\n"), "{ignore}");
    assert!(ignore.lines().any(|l| l == "/reports/"), "{ignore}");
    assert!(ignore.lines().any(|l| l == "*.snap.new"), "{ignore}");

    // A second init changes nothing and says so.
    let again = Command::new(bin())
        .current_dir(dir.path())
        .arg("init")
        .output()
        .expect("run mallcheck init again");
    assert_exit(&again, 0);
    let text = output_text(&again);
    assert!(!text.contains("wrote"), "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".gitignore")).expect("read"),
        ignore
    );
}

#[test]
fn local_schema_copies_are_used_when_present() {
    // A local copy with a mistake is read (and rejected), proving the copy is what runs.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(bin())
        .current_dir(dir.path())
        .arg("init")
        .output()
        .expect("init");
    assert_exit(&out, 0);
    std::fs::write(dir.path().join("schemas/mall.json"), "{ not json").expect("break");
    let out = Command::new(bin())
        .current_dir(dir.path())
        .arg("list")
        .output()
        .expect("list");
    assert_exit(&out, 2);
    let text = output_text(&out);
    assert!(text.contains("schemas/mall.json"), "{text}");
}
