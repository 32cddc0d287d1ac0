//! `merge` holds JUnit inputs to the rules of JSON ones: every shard of a sharded run, one
//! target, and the merged time is the wall time of the runs.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{Server, bin, repo, run_against, run_as_main};

/// Runs shard `k` of `n` against `url` in `dir/s<k>` (reports `junit.xml`, `report.json`).
fn shard(dir: &Path, url: &str, k: usize, n: usize) {
    let sub = dir.join(format!("s{k}"));
    std::fs::create_dir(&sub).unwrap();
    let status = run_against(url, &sub)
        .args(["--quiet", "--shard", &format!("{k}/{n}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

fn merge(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(dir)
        .arg("merge")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_junit_only_merge_missing_a_shard_fails_naming_it() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for k in [1, 3] {
        shard(dir.path(), &server.base_url, k, 3);
    }
    let out = merge(
        dir.path(),
        &["--junit", "merged.xml", "s1/junit.xml", "s3/junit.xml"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("shard 2/3 is missing"), "{stderr}");
    let xml = std::fs::read_to_string(dir.path().join("merged.xml")).unwrap();
    assert!(
        xml.contains("<property name=\"shard\" value=\"1/3,3/3\"/>"),
        "{xml}"
    );
    // The merged JUnit says the merge's verdict, as a run's says its own (h31 F3).
    assert!(
        xml.contains("<property name=\"mallcheck.exit-code\" value=\"1\"/>"),
        "{xml}"
    );
    assert!(
        xml.contains("<property name=\"mallcheck.verdict\" value=\"contract-broken\"/>"),
        "{xml}"
    );
}

#[test]
fn a_shard_given_only_in_the_other_format_is_missing_from_each_merged_report() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for k in 1..=3 {
        shard(dir.path(), &server.base_url, k, 3);
    }
    // Shard 3 only as JSON for the JUnit output, only as JUnit for the JSON output.
    let tries: [&[&str]; 3] = [
        &[
            "--junit",
            "m.xml",
            "s1/junit.xml",
            "s2/junit.xml",
            "s3/report.json",
        ],
        &[
            "--json",
            "m.json",
            "s1/report.json",
            "s2/report.json",
            "s3/junit.xml",
        ],
        &[
            "--json",
            "m.json",
            "--junit",
            "m.xml",
            "s1/report.json",
            "s2/report.json",
            "s3/report.json",
            "s1/junit.xml",
            "s2/junit.xml",
        ],
    ];
    for args in tries {
        let out = merge(dir.path(), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("shard 3/3 is missing"),
            "{args:?}: {stderr}"
        );
    }
    let xml = std::fs::read_to_string(dir.path().join("m.xml")).unwrap();
    assert!(
        xml.contains("<property name=\"shard\" value=\"1/3,2/3\"/>"),
        "the merged JUnit names the shards it holds: {xml}"
    );
    // Every shard in both formats merges into a pass.
    let out = merge(
        dir.path(),
        &[
            "--json",
            "m.json",
            "--junit",
            "m.xml",
            "s1/report.json",
            "s2/report.json",
            "s3/report.json",
            "s1/junit.xml",
            "s2/junit.xml",
            "s3/junit.xml",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A merged report says the shards it holds and their selection: merged again with a
    // shard, nothing is missing; it needs no shard to be whole.
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("m.json")).unwrap()).unwrap();
    assert_eq!(
        merged["shards"].as_array().map(Vec::len),
        Some(3),
        "{merged}"
    );
    assert!(merged["selection"]["selection"].is_string(), "{merged}");
    for args in [
        &["--json", "again.json", "m.json", "s1/report.json"][..],
        &["--json", "again.json", "m.json"],
    ] {
        let out = merge(dir.path(), args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn shards_of_different_selections_are_not_merged_and_lost_cases_fail() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for k in 2..=3 {
        shard(dir.path(), &server.base_url, k, 3);
    }
    // Shard 1 of another selection (another --filter, or another commit's cases).
    let other = dir.path().join("s1");
    std::fs::create_dir(&other).unwrap();
    let status = run_against(&server.base_url, &other)
        .args(["--quiet", "--shard", "1/3", "--filter", "tag:snapshot"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    for args in [
        [
            "--json",
            "m.json",
            "s1/report.json",
            "s2/report.json",
            "s3/report.json",
        ],
        [
            "--junit",
            "m.xml",
            "s1/junit.xml",
            "s2/junit.xml",
            "s3/junit.xml",
        ],
    ] {
        let out = merge(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("different selections") && stderr.contains("s1/"),
            "{args:?}: {stderr}"
        );
    }
    // The right shard 1, then its cases cut from its report: every shard is there, not every
    // case.
    std::fs::remove_dir_all(&other).unwrap();
    shard(dir.path(), &server.base_url, 1, 3);
    let inputs = ["s1/report.json", "s2/report.json", "s3/report.json"];
    let whole = merge(dir.path(), &[&["--json", "m.json"][..], &inputs].concat());
    assert_eq!(
        whole.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&whole.stderr)
    );
    let path = dir.path().join("s1/report.json");
    let mut report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    report["cases"] = serde_json::json!([]);
    std::fs::write(&path, report.to_string()).unwrap();
    let cut = merge(dir.path(), &[&["--json", "m.json"][..], &inputs].concat());
    let stderr = String::from_utf8_lossy(&cut.stderr);
    assert_eq!(cut.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cases their shards were cut from"),
        "{stderr}"
    );
    // A selection that is not a count and a digest, or one shard that names none beside
    // shards that do: not shards of one run.
    for (selected, selection) in [
        (serde_json::json!("50"), serde_json::json!("ab")),
        (serde_json::json!(-1), serde_json::json!("ab")),
        (serde_json::json!(50), serde_json::json!("")),
        (serde_json::json!(null), serde_json::json!(null)),
    ] {
        report["shard"]["selected"] = selected;
        report["shard"]["selection"] = selection;
        std::fs::write(&path, report.to_string()).unwrap();
        let out = merge(dir.path(), &[&["--json", "m.json"][..], &inputs].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("s1/report.json"), "{stderr}");
    }
    let shard = report["shard"].as_object_mut().unwrap();
    shard.remove("selected");
    shard.remove("selection");
    std::fs::write(&path, report.to_string()).unwrap();
    let out = merge(dir.path(), &[&["--json", "m.json"][..], &inputs].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("name no selection"), "{stderr}");
    // A JUnit shard that lost a testsuite: every shard, not every case.
    let xml = dir.path().join("s3/junit.xml");
    let text = std::fs::read_to_string(&xml).unwrap();
    let first = text.find("<testsuite ").unwrap();
    let end = text[first..].find("</testsuite>").unwrap() + first + "</testsuite>".len();
    std::fs::write(&xml, format!("{}{}", &text[..first], &text[end..])).unwrap();
    let out = merge(
        dir.path(),
        &[
            "--junit",
            "m.xml",
            "s1/junit.xml",
            "s2/junit.xml",
            "s3/junit.xml",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the JUnit inputs hold"), "{stderr}");
}

#[test]
fn shards_stopped_at_their_preflight_merge_into_could_not_test() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens on port 9: each shard stops at its preflight (exit 3) and lists only it.
    for k in 1..=2 {
        let sub = dir.path().join(format!("s{k}"));
        std::fs::create_dir(&sub).unwrap();
        let status = run_against("http://127.0.0.1:9", &sub)
            .args(["--quiet", "--shard", &format!("{k}/2")])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(3));
    }
    let out = merge(
        dir.path(),
        &[
            "--json",
            "m.json",
            "--junit",
            "m.xml",
            "s1/report.json",
            "s2/report.json",
            "s1/junit.xml",
            "s2/junit.xml",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        !stderr.contains("cases their shards were cut from"),
        "{stderr}"
    );
}

#[test]
fn shards_run_against_different_targets_are_not_merged() {
    let server = Server::start(&[]);
    let second = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let other = second.base_url.clone();
    shard(dir.path(), &server.base_url, 1, 2);
    shard(dir.path(), &other, 2, 2);
    for args in [
        ["--junit", "m.xml", "s1/junit.xml", "s2/junit.xml"],
        ["--json", "m.json", "s1/report.json", "s2/report.json"],
    ] {
        let out = merge(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("different targets")
                && stderr.contains(&server.base_url)
                && stderr.contains(&other),
            "{stderr}"
        );
        assert!(!dir.path().join(args[1]).exists(), "{args:?}");
    }
}

/// Each shard records the CI run it was written in: a shard an earlier pipeline left in the
/// workspace (h26c F15) is not merged with this run's, and the shards of one run are.
#[test]
fn shards_of_different_ci_runs_are_not_merged() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for (k, run_id) in [(1, "1001"), (2, "1002")] {
        let sub = dir.path().join(format!("s{k}"));
        std::fs::create_dir(&sub).unwrap();
        let status = run_against(&server.base_url, &sub)
            .args(["--quiet", "--shard", &format!("{k}/2")])
            .env("GITHUB_RUN_ID", run_id)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(0));
    }
    let junit = std::fs::read_to_string(dir.path().join("s1/junit.xml")).unwrap();
    assert!(
        junit.contains("<property name=\"mallcheck.ci-run\" value=\"github:1001\"/>"),
        "{junit}"
    );
    for args in [
        ["--junit", "m.xml", "s1/junit.xml", "s2/junit.xml"],
        ["--json", "m.json", "s1/report.json", "s2/report.json"],
    ] {
        let out = merge(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("written in different CI runs: github:1001 (s1/")
                && stderr.contains("github:1002 (s2/"),
            "{stderr}"
        );
        assert!(!dir.path().join(args[1]).exists(), "{args:?}");
    }
    // The same run id: one run, merged.
    std::fs::remove_dir_all(dir.path().join("s2")).unwrap();
    let sub = dir.path().join("s2");
    std::fs::create_dir(&sub).unwrap();
    run_against(&server.base_url, &sub)
        .args(["--quiet", "--shard", "2/2"])
        .env("GITHUB_RUN_ID", "1001")
        .output()
        .unwrap();
    let out = merge(
        dir.path(),
        &["--junit", "m.xml", "s1/junit.xml", "s2/junit.xml"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = std::fs::read_to_string(dir.path().join("m.xml")).unwrap();
    assert!(merged.contains("value=\"github:1001\""), "{merged}");
    // The merged JSON keeps the run's id, so that it merges again under the same check (h29
    // F2); a report written outside any CI run beside this run's is no shard of it (h29 F3).
    let out = merge(
        dir.path(),
        &["--json", "m.json", "s1/report.json", "s2/report.json"],
    );
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("m.json")).unwrap()).unwrap();
    assert_eq!(json["ci_run"], "github:1001", "{json}");
    let local = dir.path().join("local");
    std::fs::create_dir(&local).unwrap();
    run_against(&server.base_url, &local)
        .args(["--quiet", "--shard", "2/2"])
        .output()
        .unwrap();
    let out = merge(
        dir.path(),
        &["--json", "m2.json", "s1/report.json", "local/report.json"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "local/report.json records no CI run while the other inputs were written in github:1001"
        ),
        "{stderr}"
    );
}

/// The merged time is from the earliest start to the latest end, as the inputs give them.
#[test]
fn the_merged_time_is_wall_time() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for k in 1..=2 {
        shard(dir.path(), &server.base_url, k, 2);
    }
    let out = merge(
        dir.path(),
        &[
            "--junit",
            "m.xml",
            "--json",
            "m.json",
            "s1/junit.xml",
            "s2/junit.xml",
            "s1/report.json",
            "s2/report.json",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = |p: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(p)).unwrap()).unwrap()
    };
    let span = |reports: &[serde_json::Value]| {
        let start = |r: &serde_json::Value| {
            chrono::DateTime::parse_from_rfc3339(r["started_at"].as_str().unwrap()).unwrap()
        };
        let first = reports.iter().map(start).min().unwrap();
        reports
            .iter()
            .map(|r| {
                (start(r) - first).as_seconds_f64() + r["summary"]["duration"].as_f64().unwrap()
            })
            .fold(0.0, f64::max)
    };
    let inputs = [json("s1/report.json"), json("s2/report.json")];
    let sum: f64 = inputs
        .iter()
        .map(|r| r["summary"]["duration"].as_f64().unwrap())
        .sum();
    let merged = json("m.json");
    let wall = merged["summary"]["duration"].as_f64().unwrap();
    assert!(
        (wall - span(&inputs)).abs() < 0.002,
        "{wall} vs {}",
        span(&inputs)
    );
    assert_eq!(merged["started_at"], inputs[0]["started_at"]);
    // Run one after the other, the wall time holds both runs and the gap between them.
    assert!(wall >= sum - 0.002, "{wall} < {sum}");
    // The JUnit's total time is the span its own inputs give, from their suites' timestamps
    // and their total times.
    let junit = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap();
    let attr = |xml: &str, tag: &str, name: &str| -> String {
        xml.split(&format!("<{tag} "))
            .nth(1)
            .and_then(|t| t.split(&format!(" {name}=\"")).nth(1))
            .and_then(|t| t.split('"').next())
            .unwrap()
            .to_string()
    };
    let as_json = |xml: String| {
        serde_json::json!({
            "started_at": attr(&xml, "testsuite", "timestamp"),
            "summary": {"duration": attr(&xml, "testsuites", "time").parse::<f64>().unwrap()},
        })
    };
    let junit_inputs = [
        as_json(junit("s1/junit.xml")),
        as_json(junit("s2/junit.xml")),
    ];
    let time: f64 = attr(&junit("m.xml"), "testsuites", "time").parse().unwrap();
    assert!(
        (time - span(&junit_inputs)).abs() < 0.002,
        "JUnit {time} vs {}",
        span(&junit_inputs)
    );
}

/// Reports that hold no case that ran (a crashed shard's stub) merge into a report that says
/// so: could not test, never a pass.
#[test]
fn reports_without_a_case_that_ran_do_not_merge_into_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("stub.xml"), "<testsuites></testsuites>").unwrap();
    std::fs::write(
        dir.path().join("stub.json"),
        r#"{"format_version": 1, "tool": "mallcheck", "version": "0.1.0", "target": "embedded", "base_url": "http://127.0.0.1:1", "started_at": "2026-11-27T16:59:12.178Z", "strict": false, "complete": true, "interrupted": null, "exit_code": 0, "verdict": "pass", "shard": null, "summary": {"passed": 1, "warned": 0, "failed": 0, "errored": 0, "skipped": 0, "duration": 0.004}, "cases": []}"#,
    )
    .unwrap();
    for (flag, out, input) in [
        ("--junit", "all.xml", "stub.xml"),
        ("--json", "all.json", "stub.json"),
    ] {
        let o = merge(dir.path(), &[flag, out, input]);
        let text = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{input}: {text}");
        assert!(text.contains("hold no case that ran"), "{text}");
    }
    // The merged JSON report says so too, as a run's report does.
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("all.json")).unwrap())
            .unwrap();
    assert_eq!(merged["exit_code"], 3, "{merged}");
    assert_eq!(merged["verdict"], "could-not-test", "{merged}");
}

/// Shards started at once in one workspace (h29 F4: the second stopped at exit 2 on the
/// first's lock of the shared default `report.html`): each writes the reports it was not given
/// under names of its own, and the merge of their defaults holds both.
#[test]
fn shards_in_one_workspace_write_default_reports_of_their_own() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let children: Vec<_> = [1, 2]
        .map(|k| {
            run_as_main(&server.base_url, dir.path())
                .arg("--cases")
                .arg(repo().join("cases"))
                .args(["--quiet", "--color", "never", "--shard", &format!("{k}/2")])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .into_iter()
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
    }
    let reports = dir.path().join("reports");
    for k in [1, 2] {
        for name in [
            format!("junit-{k}.xml"),
            format!("report-{k}.json"),
            format!("report-{k}.html"),
            format!("summary-{k}.md"),
        ] {
            assert!(reports.join(&name).is_file(), "{name}");
        }
    }
    assert!(!reports.join("report.html").exists());
    let out = merge(
        &reports,
        &["--junit", "all.xml", "junit-1.xml", "junit-2.xml"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let xml = std::fs::read_to_string(reports.join("all.xml")).unwrap();
    assert!(
        xml.contains("<property name=\"mallcheck.verdict\" value=\"pass\"/>"),
        "{xml}"
    );
}
