//! Snapshots and the release diff, end to end: the real binary against `mallcheck serve` on an
//! ephemeral port, in a temporary working directory (nothing is written into the repository).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_mallcheck");
const SIGN_KEY: &str = "mallcheck-demo-key";
const IDENTITY: [&str; 6] = [
    "--appid",
    "mallcheck-demo-app",
    "--merchant-id",
    "5f3c9a1e-7b42-4d8e-9c61-2a8f0e4b7d13",
    "--merchant-user-id",
    "b7e2d4a9-1c36-4f5b-8e90-3d7a6c2f1e48",
];
const SNAP: &str = "snapshots/list__first-page.snap";
const PENDING: &str = "snapshots/list__first-page.snap.new";

/// A reference server that serves every fault under `/fault/<name>`; killed on drop.
struct Server {
    child: Child,
    base_url: String,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(BIN)
            .args(["serve", "--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mallcheck serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        reader
            .read_line(&mut line)
            .expect("read the first line of serve");
        // Keep reading: a closed pipe would kill the server at its next line of output.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        let base_url = line
            .trim()
            .strip_prefix("mallcheck reference server listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_string();
        Server { child, base_url }
    }

    fn url(&self, fault: Option<&str>) -> String {
        match fault {
            Some(f) => format!("{}/fault/{f}", self.base_url),
            None => self.base_url.clone(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A mall list case with a snapshot; `snapshot` is the YAML value of its `snapshot:` key.
fn list_case(snapshot: &str) -> String {
    format!(
        r#"cases:
  - name: first page
    endpoint: mall-list
    request:
      body:
        appid: "${{MALLCHECK_APPID}}"
        filter:
          seller:
            merchantId: "${{MALLCHECK_MERCHANT_ID}}"
            merchantUserId: "${{MALLCHECK_MERCHANT_USER_ID}}"
            role: "${{MALLCHECK_ROLE}}"
        sort: {{ sortField: id, sort: DESC }}
        cursor: {{ cursorField: id, endCursor: null, count: 3 }}
    expect:
      status: 200
    snapshot: {snapshot}
"#
    )
}

/// A temporary working directory holding `cases/list.yaml`.
fn workdir(snapshot: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("cases")).expect("cases dir");
    std::fs::write(dir.path().join("cases/list.yaml"), list_case(snapshot)).expect("case file");
    dir
}

fn mallcheck(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .env("MALLCHECK_SIGN_KEY", SIGN_KEY)
        .env_remove("CI")
        .env_remove("TF_BUILD")
        .env_remove("MALLCHECK_BASE_URL")
        .env_remove("INSTA_UPDATE")
        .env_remove("INSTA_FORCE_PASS")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run mallcheck")
}

/// `mallcheck run --cases cases --base-url URL <identity> <extra>`.
fn run(dir: &Path, url: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut args = vec!["run", "--cases", "cases", "--base-url", url];
    args.extend(IDENTITY);
    args.extend(extra);
    mallcheck(dir, &args, env)
}

/// `mallcheck diff --cases cases --baseline snapshots --base-url URL <identity>`.
fn diff(dir: &Path, url: &str) -> Output {
    let mut args = vec![
        "diff",
        "--cases",
        "cases",
        "--baseline",
        "snapshots",
        "--base-url",
        url,
    ];
    args.extend(IDENTITY);
    mallcheck(dir, &args, &[])
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn describe(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        stdout(o),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("snapshots"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn record(dir: &Path, server: &Server) {
    let o = run(dir, &server.url(None), &["--snapshots", "update"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert!(dir.join(SNAP).is_file(), "{:?}", files(dir));
}

fn path(dir: &Path, rel: &str) -> PathBuf {
    dir.join(rel)
}

#[test]
fn recorded_snapshot_passes_on_the_next_run_and_holds_no_secret() {
    let server = Server::start();
    let dir = workdir("true");
    record(dir.path(), &server);
    let text = std::fs::read_to_string(path(dir.path(), SNAP)).unwrap();
    assert!(text.starts_with("---\n"), "{text}");
    assert!(text.contains("\"mallSn\""), "{text}");
    assert!(
        !text.contains(SIGN_KEY) && !text.contains("Authorization"),
        "{text}"
    );
    let o = run(dir.path(), &server.url(None), &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert_eq!(files(dir.path()), ["list__first-page.snap"]);
}

#[test]
fn changed_value_fails_with_a_diff_that_points_at_the_field() {
    let server = Server::start();
    let dir = workdir("true");
    record(dir.path(), &server);
    let o = run(
        dir.path(),
        &server.url(Some("mall-state-out-of-range")),
        &[],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    let out = stdout(&o);
    assert!(
        out.contains("snapshot.match (snapshot) at /data/0/state"),
        "{out}"
    );
    assert!(out.contains("/data/0/state (mallSn "), "{out}");
    assert!(out.contains("+      \"state\": 3,"), "{out}");
    assert!(
        path(dir.path(), PENDING).is_file(),
        "a changed snapshot is kept for review"
    );
    let junit = std::fs::read_to_string(path(dir.path(), "reports/junit.xml")).unwrap();
    assert!(junit.contains("snapshot.match"), "{junit}");
}

#[test]
fn first_check_writes_a_pending_snapshot_and_passes() {
    let server = Server::start();
    let dir = workdir("true");
    let o = run(dir.path(), &server.url(None), &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert_eq!(files(dir.path()), ["list__first-page.snap.new"]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("1 pending"),
        "{}",
        describe(&o)
    );
}

#[test]
fn ci_mode_fails_on_a_missing_snapshot_and_writes_nothing() {
    let server = Server::start();
    for (flags, env) in [(vec!["--ci"], vec![]), (vec![], vec![("CI", "true")])] {
        let dir = workdir("true");
        let o = run(dir.path(), &server.url(None), &flags, &env);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{flags:?} {env:?}\n{}",
            describe(&o)
        );
        assert!(
            stdout(&o).contains("no snapshot recorded (CI mode writes none)"),
            "{}",
            describe(&o)
        );
        assert!(files(dir.path()).is_empty(), "{:?}", files(dir.path()));
    }
}

#[test]
fn pending_snapshots_are_listed_reviewed_accepted_and_rejected() {
    let server = Server::start();
    let dir = workdir("true");
    let d = dir.path();
    let o = run(d, &server.url(None), &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let o = mallcheck(d, &["snapshots", "pending"], &[]);
    assert!(
        stdout(&o).contains("snapshots/list__first-page.snap.new (new)"),
        "{}",
        describe(&o)
    );
    let o = mallcheck(d, &["snapshots", "accept"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert_eq!(files(d), ["list__first-page.snap"]);
    let accepted = std::fs::read_to_string(path(d, SNAP)).unwrap();

    let o = run(d, &server.url(Some("mall-state-out-of-range")), &[], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    let o = mallcheck(d, &["snapshots", "review"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let review = stdout(&o);
    assert!(review.contains("/data/0/state (mallSn "), "{review}");
    assert!(
        review.contains("-      \"state\": 2,") || review.contains("-      \"state\": 1,"),
        "{review}"
    );
    let o = mallcheck(d, &["snapshots", "reject"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert_eq!(files(d), ["list__first-page.snap"]);
    assert_eq!(std::fs::read_to_string(path(d, SNAP)).unwrap(), accepted);
}

#[test]
fn redaction_hides_a_value_that_changes() {
    let server = Server::start();
    // Without a redaction, appType 0 -> 1 (a tolerated change) fails the snapshot.
    let plain = workdir("true");
    record(plain.path(), &server);
    let o = run(plain.path(), &server.url(Some("app-type-one")), &[], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(stdout(&o).contains("appType"), "{}", describe(&o));
    // With `.data[].appType` redacted, the same change passes.
    let redacted = workdir("{ redact: [\".data[].appType\"] }");
    record(redacted.path(), &server);
    let text = std::fs::read_to_string(path(redacted.path(), SNAP)).unwrap();
    assert!(text.contains("\"appType\": \"[redacted]\""), "{text}");
    let o = run(redacted.path(), &server.url(Some("app-type-one")), &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
}

#[test]
fn release_diff_reports_removed_and_retyped_fields_as_breaking() {
    let server = Server::start();
    let dir = workdir("true");
    record(dir.path(), &server);
    let o = diff(dir.path(), &server.url(None));
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert!(stdout(&o).contains("UNCHANGED"), "{}", describe(&o));

    let o = diff(dir.path(), &server.url(Some("mall-name-missing")));
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(
        stdout(&o).contains("breaking  /data/*/mallName  field removed"),
        "{}",
        describe(&o)
    );
    let md = std::fs::read_to_string(path(dir.path(), "reports/diff.md")).unwrap();
    assert!(
        md.contains("breaking changes") && md.contains("`/data/*/mallName`"),
        "{md}"
    );
    let junit = std::fs::read_to_string(path(dir.path(), "reports/diff-junit.xml")).unwrap();
    assert!(
        junit.contains("<failure ") && junit.contains(r#"type="release-diff.breaking""#),
        "{junit}"
    );

    let o = diff(dir.path(), &server.url(Some("mall-edition-string")));
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(
        stdout(&o).contains("/data/*/edition  type changed from integer to string"),
        "{}",
        describe(&o)
    );
}

#[test]
fn release_diff_lists_added_fields_as_additive_and_passes() {
    let server = Server::start();
    let dir = workdir("true");
    record(dir.path(), &server);
    let o = diff(dir.path(), &server.url(Some("extra-fields")));
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let out = stdout(&o);
    assert!(out.contains("ADDITIVE"), "{out}");
    assert!(
        out.contains("additive  /data/*/mallLogoUrl  field added"),
        "{out}"
    );
    assert!(!out.contains("breaking  "), "{out}");
    let md = std::fs::read_to_string(path(dir.path(), "reports/diff.md")).unwrap();
    assert!(md.contains("no breaking change"), "{md}");
}

#[test]
fn release_diff_without_baseline_snapshots_is_a_usage_error() {
    let server = Server::start();
    let dir = workdir("true");
    let o = diff(dir.path(), &server.url(None));
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no baseline snapshot"),
        "{}",
        describe(&o)
    );
}
