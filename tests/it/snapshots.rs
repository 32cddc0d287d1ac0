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
/// Every loopback service's snapshots, whatever its port.
const SNAP: &str = "snapshots/localhost/list__first-page.snap";
const PENDING: &str = "snapshots/localhost/list__first-page.snap.new";
/// A fault served by path is another base URL, hence another target: the runs below compare it
/// with the snapshots recorded against the plain server by naming that target.
const SAME_TARGET: [&str; 2] = ["--snapshot-target", "localhost"];

/// A reference server that serves every fault under `/fault/<name>`; killed on drop.
struct Server {
    child: Child,
    base_url: String,
}

impl Server {
    fn start() -> Server {
        Server::start_with(&[])
    }

    /// `mallcheck serve --port 0 <extra>`.
    fn start_with(extra: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args(["serve", "--port", "0"])
            .args(extra)
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
        .env_remove("MALLCHECK_SIGN_KEY")
        .env_remove("CI")
        .env_remove("TF_BUILD")
        .env_remove("MALLCHECK_BASE_URL")
        .env_remove("INSTA_UPDATE")
        .env_remove("INSTA_FORCE_PASS")
        .env("NO_COLOR", "1");
    // The key is a remote target's setting: without a base URL it is refused.
    if args.contains(&"--base-url") {
        cmd.env("MALLCHECK_SIGN_KEY", SIGN_KEY);
    }
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

/// `mallcheck diff --cases cases --baseline snapshots --baseline-target BASELINE_URL
/// --base-url URL <identity>`.
fn diff(dir: &Path, baseline_url: &str, url: &str) -> Output {
    diff_with(dir, baseline_url, url, &[])
}

/// [`diff`] with `extra` arguments.
fn diff_with(dir: &Path, baseline_url: &str, url: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "diff",
        "--cases",
        "cases",
        "--baseline",
        "snapshots",
        "--baseline-target",
        baseline_url,
        "--base-url",
        url,
    ];
    args.extend(IDENTITY);
    args.extend(extra);
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

/// The files in `snapshots/localhost/`.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("snapshots/localhost"))
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
fn a_broken_baseline_is_a_local_error_naming_it_never_a_pass_nor_the_services_fault() {
    let server = Server::start();
    let dir = workdir("true");
    record(dir.path(), &server);
    let snap = path(dir.path(), SNAP);
    let text = std::fs::read_to_string(&snap).unwrap();
    let broken_body = text.replace("\"mallSn\"", "\"mallSn\" \"");
    for (what, content) in [
        ("random bytes", b"\x8f\x00garbage\xff\n".to_vec()),
        ("no header", b"{}".to_vec()),
        ("no header, a JSON body", b"{\"data\": []}\n".to_vec()),
        ("a body that is not JSON", broken_body.into_bytes()),
    ] {
        std::fs::write(&snap, &content).unwrap();
        let o = run(dir.path(), &server.url(None), &[], &[]);
        let out = describe(&o);
        // An error of the run (exit 3), naming the file; no contract finding, no pass.
        assert_eq!(o.status.code(), Some(3), "{what}: {out}");
        assert!(out.contains("harness.snapshot"), "{what}: {out}");
        assert!(out.contains("list__first-page.snap"), "{what}: {out}");
        assert!(!out.contains("[contract] snapshot"), "{what}: {out}");
        // insta's advice for Cargo projects is not a mallcheck user's.
        assert!(!out.contains("cargo insta"), "{what}: {out}");
    }
    // A directory where the file should be.
    std::fs::remove_file(&snap).unwrap();
    std::fs::create_dir(&snap).unwrap();
    let o = run(dir.path(), &server.url(None), &[], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", describe(&o));
    // `--snapshots update` records it again over a broken file.
    std::fs::remove_dir(&snap).unwrap();
    std::fs::write(&snap, b"garbage").unwrap();
    record(dir.path(), &server);
    let o = run(dir.path(), &server.url(None), &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
}

#[test]
fn changed_value_fails_with_a_diff_that_points_at_the_field() {
    let server = Server::start();
    let dir = workdir("true");
    record(dir.path(), &server);
    let o = run(
        dir.path(),
        &server.url(Some("mall-state-out-of-range")),
        &SAME_TARGET,
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
fn ci_flag_fails_on_a_missing_snapshot_and_writes_nothing() {
    let server = Server::start();
    let dir = workdir("true");
    let o = run(dir.path(), &server.url(None), &["--ci"], &[("CI", "true")]);
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(
        stdout(&o).contains("no snapshot recorded (CI mode writes none)"),
        "{}",
        describe(&o)
    );
    assert!(files(dir.path()).is_empty(), "{:?}", files(dir.path()));
    // With `--snapshots update` it would record what it is there to compare: a usage error.
    let o = run(
        dir.path(),
        &server.url(None),
        &["--ci", "--snapshots", "update"],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(files(dir.path()).is_empty(), "{:?}", files(dir.path()));
}

#[test]
fn ci_variable_alone_keeps_a_first_run_green_and_writes_pending() {
    let server = Server::start();
    let dir = workdir("true");
    let o = run(dir.path(), &server.url(None), &[], &[("CI", "true")]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert_eq!(files(dir.path()), ["list__first-page.snap.new"]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("pass --ci to require recorded snapshots"),
        "{}",
        describe(&o)
    );
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
        stdout(&o).contains("snapshots/localhost/list__first-page.snap.new (new)"),
        "{}",
        describe(&o)
    );
    let o = mallcheck(d, &["snapshots", "accept"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert_eq!(files(d), ["list__first-page.snap"]);
    let accepted = std::fs::read_to_string(path(d, SNAP)).unwrap();

    let o = run(
        d,
        &server.url(Some("mall-state-out-of-range")),
        &SAME_TARGET,
        &[],
    );
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
    // Without a redaction, appType 0 -> 1 (a tolerated change of data) is shown as a warning.
    let plain = workdir("true");
    record(plain.path(), &server);
    let o = run(
        plain.path(),
        &server.url(Some("app-type-one")),
        &SAME_TARGET,
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert!(
        stdout(&o).contains("snapshot.data (snapshot) at /data/0/appType"),
        "{}",
        describe(&o)
    );
    // With `.data[].appType` redacted, the same change passes.
    let redacted = workdir("{ redact: [\".data[].appType\"] }");
    record(redacted.path(), &server);
    let text = std::fs::read_to_string(path(redacted.path(), SNAP)).unwrap();
    assert!(text.contains("\"appType\": \"[redacted]\""), "{text}");
    let o = run(
        redacted.path(),
        &server.url(Some("app-type-one")),
        &SAME_TARGET,
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
}

#[test]
fn release_diff_reports_removed_and_retyped_fields_as_breaking() {
    let server = Server::start();
    let dir = workdir("true");
    record(dir.path(), &server);
    let o = diff(dir.path(), &server.url(None), &server.url(None));
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert!(stdout(&o).contains("UNCHANGED"), "{}", describe(&o));

    let o = diff(
        dir.path(),
        &server.url(None),
        &server.url(Some("mall-name-missing")),
    );
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(
        stdout(&o).contains("breaking  /data/*/mallName  field removed"),
        "{}",
        describe(&o)
    );
    // The case's page holds 3 malls: the verdict says how little it rests on.
    assert!(
        stdout(&o).contains("the breaking verdict rests on only 3 records: thin evidence"),
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

    let o = diff(
        dir.path(),
        &server.url(None),
        &server.url(Some("mall-edition-string")),
    );
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
    let o = diff(
        dir.path(),
        &server.url(None),
        &server.url(Some("extra-fields")),
    );
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

/// `diff --junit /dev/stdout` piped on: standard output holds the JUnit document alone; the
/// console's comparison goes to standard error.
#[cfg(unix)]
#[test]
fn a_release_diff_with_its_junit_on_stdout_leaves_it_alone_there() {
    let server = Server::start();
    let dir = workdir("true");
    record(dir.path(), &server);
    let o = diff_with(
        dir.path(),
        &server.url(None),
        &server.url(Some("extra-fields")),
        &["--junit", "/dev/stdout"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let xml = stdout(&o);
    assert!(xml.starts_with("<?xml"), "{}", describe(&o));
    assert_eq!(xml.matches("<?xml").count(), 1, "{xml}");
    assert!(xml.trim_end().ends_with("</testsuites>"), "{xml}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("ADDITIVE"), "{stderr}");
}

#[test]
fn release_diff_without_baseline_snapshots_is_a_usage_error() {
    let server = Server::start();
    let dir = workdir("true");
    let o = diff(dir.path(), &server.url(None), &server.url(None));
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no baseline snapshot"),
        "{}",
        describe(&o)
    );
}

// The shipped snapshot cases (cases/snapshots.yaml) and the embedded server's committed
// snapshots (snapshots/embedded/).

/// The repository's `cases/`.
fn shipped_cases() -> String {
    format!("{}/cases", env!("CARGO_MANIFEST_DIR"))
}

/// The repository's `snapshots/`.
fn shipped_snapshots() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots")
}

/// Every file of a directory with its contents, sorted by name.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read(e.path()).unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// A temporary working directory holding a copy of the committed `snapshots/embedded/`.
fn workdir_with_embedded_snapshots() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let to = dir.path().join("snapshots/embedded");
    std::fs::create_dir_all(&to).expect("snapshot dir");
    for (name, bytes) in contents(&shipped_snapshots().join("embedded")) {
        std::fs::write(to.join(name), bytes).expect("copy a snapshot");
    }
    dir
}

/// `mallcheck run --cases <repo>/cases --filter tag:snapshot --base-url URL <identity> <extra>`.
fn run_shipped(dir: &Path, url: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let cases = shipped_cases();
    let mut args = vec!["run", "--cases", &cases, "--filter", "tag:snapshot"];
    args.extend(["--base-url", url]);
    args.extend(IDENTITY);
    args.extend(extra);
    mallcheck(dir, &args, env)
}

#[test]
fn default_run_checks_the_committed_embedded_snapshots_and_passes() {
    let committed = shipped_snapshots().join("embedded");
    let before = contents(&committed);
    let names: Vec<&str> = before.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "snapshots__first-mall-list-page.snap",
            "snapshots__products-of-a-listed-mall.snap",
            "snapshots__products-of-sampled-malls.snap"
        ]
    );
    // The default run (no base URL: the embedded server) with the repository's cases and
    // snapshots; reports go to a temporary directory.
    let dir = tempfile::tempdir().expect("temp dir");
    let snapshots = shipped_snapshots();
    let cases = shipped_cases();
    let o = mallcheck(
        dir.path(),
        &[
            "run",
            "--cases",
            &cases,
            "--snapshot-dir",
            &snapshots.to_string_lossy(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let out = stdout(&o);
    for case in [
        "first mall-list page",
        "products of a listed mall",
        "products of sampled malls",
    ] {
        assert!(
            out.contains(&format!("PASS  {cases}/snapshots.yaml › {case}")),
            "{out}"
        );
    }
    // Compared, not recorded: nothing pending, nothing written.
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("snapshots:"),
        "{}",
        describe(&o)
    );
    // `diff` with no base URL compares the embedded server with the same directory.
    let o = mallcheck(
        dir.path(),
        &[
            "diff",
            "--cases",
            &cases,
            "--baseline",
            &snapshots.to_string_lossy(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert!(
        stdout(&o).contains("3 cases compared: 0 breaking, 0 additive, 0 data only, 3 unchanged"),
        "{}",
        describe(&o)
    );
    assert_eq!(contents(&committed), before);
}

#[test]
fn a_changed_snapshotted_field_fails_against_the_embedded_snapshots_but_volatile_ones_pass() {
    let server = Server::start();
    let dir = workdir_with_embedded_snapshots();
    let d = dir.path();
    let before = contents(&d.join("snapshots/embedded"));
    let embedded = ["--snapshot-target", "embedded"];
    // `serve` holds the embedded server's data: its answers match the committed snapshots.
    let o = run_shipped(d, &server.url(None), &embedded, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    // A value the snapshot keeps (appType of every mall) changes within what the schemas
    // allow: data, as on a live service; the run warns with a diff, and fails under --strict.
    let o = run_shipped(d, &server.url(Some("app-type-one")), &embedded, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let out = stdout(&o);
    assert!(
        out.contains("snapshot.data (snapshot) at /data/0/appType"),
        "{out}"
    );
    assert!(out.contains("+      \"appType\": 1,"), "{out}");
    let strict = ["--snapshot-target", "embedded", "--strict"];
    let o = run_shipped(d, &server.url(Some("app-type-one")), &strict, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    // A value outside its closed set changes the shape a client relies on: the run fails.
    let o = run_shipped(
        d,
        &server.url(Some("mall-state-out-of-range")),
        &embedded,
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(
        stdout(&o).contains("snapshot.match (snapshot) at /data/0/state"),
        "{}",
        describe(&o)
    );
    // Values that change on a live service (order counters) and an order the spec leaves
    // open (products) are redacted or sorted: the run passes.
    for fault in ["big-integers", "products-ascending"] {
        let o = run_shipped(d, &server.url(Some(fault)), &embedded, &[]);
        assert_eq!(o.status.code(), Some(0), "{fault}\n{}", describe(&o));
    }
    let after: Vec<(String, Vec<u8>)> = contents(&d.join("snapshots/embedded"))
        .into_iter()
        .filter(|(n, _)| n.ends_with(".snap"))
        .collect();
    assert_eq!(after, before, "the accepted snapshots are never rewritten");
}

#[test]
fn another_target_gets_its_own_pending_snapshots_fails_only_under_ci_and_accept_settles_it() {
    let server = Server::start_with(&["--malls", "5"]);
    let url = server.url(None);
    let dir = workdir_with_embedded_snapshots();
    let d = dir.path();
    let embedded = contents(&d.join("snapshots/embedded"));
    // The first run against a new target: pending snapshots in its own directory, a pass.
    let o = run_shipped(d, &url, &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert_eq!(
        files(d),
        [
            "snapshots__first-mall-list-page.snap.new",
            "snapshots__products-of-a-listed-mall.snap.new",
            "snapshots__products-of-sampled-malls.snap.new"
        ]
    );
    // A pipeline (CI=true) stays green too; only --ci asks for recorded snapshots.
    let o = run_shipped(d, &url, &[], &[("CI", "true")]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let o = run_shipped(d, &url, &["--ci"], &[("CI", "true")]);
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(
        stdout(&o).contains("no snapshot recorded (CI mode writes none)"),
        "{}",
        describe(&o)
    );
    // `snapshots` selects the target by the same base URL.
    let o = mallcheck(d, &["snapshots", "pending", "--base-url", &url], &[]);
    assert!(
        stdout(&o).contains("snapshots/localhost/snapshots__first-mall-list-page.snap.new (new)")
            && stdout(&o).contains("3 pending"),
        "{}",
        describe(&o)
    );
    let o = mallcheck(d, &["snapshots", "pending", "--target", "embedded"], &[]);
    assert!(
        stdout(&o).contains("no pending snapshot in snapshots/embedded"),
        "{}",
        describe(&o)
    );
    let o = mallcheck(d, &["snapshots", "accept", "--base-url", &url], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert!(stdout(&o).contains("3 accepted"), "{}", describe(&o));
    // From now on the target's own snapshots are checked, in CI too.
    let o = run_shipped(d, &url, &["--ci"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert_eq!(
        files(d),
        [
            "snapshots__first-mall-list-page.snap",
            "snapshots__products-of-a-listed-mall.snap",
            "snapshots__products-of-sampled-malls.snap"
        ]
    );
    assert_eq!(contents(&d.join("snapshots/embedded")), embedded);
}

/// A file given as `--snapshot-dir` is a usage error naming it, before any request (it was a
/// `snapshot.match` contract failure against the service quoting insta's `unwrap`).
#[test]
fn snapshot_dir_that_is_a_file_exits_2_naming_it() {
    let server = Server::start();
    let dir = workdir("true");
    std::fs::write(dir.path().join("notadir"), "x").unwrap();
    let o = run(
        dir.path(),
        &server.url(None),
        &["--snapshot-dir", "notadir", "--json", "r.json"],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(
            "error: --snapshot-dir: cannot keep snapshots in notadir/localhost: notadir is a file, not a directory"
        ),
        "{}",
        describe(&o)
    );
    assert!(!dir.path().join("r.json").exists(), "nothing ran");
}

/// A snapshot file that cannot be written during the run (here a directory stands where the
/// pending snapshot goes) is a `harness.snapshot` error of the run with a plain message: the
/// service is not blamed, and no panic text reaches the reports.
#[test]
fn snapshot_dir_write_failure_is_a_harness_error_not_a_contract_failure() {
    let server = Server::start();
    let dir = workdir("true");
    std::fs::create_dir_all(dir.path().join(PENDING)).unwrap();
    let o = run(dir.path(), &server.url(None), &["--json", "r.json"], &[]);
    // A harness problem: could not test, never a broken contract.
    assert_eq!(o.status.code(), Some(3), "{}", describe(&o));
    let out = stdout(&o);
    assert!(
        out.contains("ERROR cases/list.yaml › first page"),
        "{}",
        describe(&o)
    );
    assert!(
        out.contains("[harness] harness.snapshot"),
        "{}",
        describe(&o)
    );
    assert!(
        !out.contains("unwrap") && !out.contains("snapshot.match ("),
        "{}",
        describe(&o)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let case = &report["cases"][0];
    assert_eq!(case["outcome"], "error", "{case}");
    assert_eq!(case["findings"][0]["check"], "harness.snapshot", "{case}");
}

/// The shipped first-page snapshot holds the whole list of a merchant of up to 100 malls: a
/// release verdict on it rests on every mall of the embedded server's merchant.
#[test]
fn a_release_diff_on_the_shipped_snapshots_rests_on_the_whole_first_walk() {
    let server = Server::start();
    let dir = workdir_with_embedded_snapshots();
    let cases = shipped_cases();
    let mut args = vec![
        "diff",
        "--cases",
        &cases,
        "--baseline",
        "snapshots",
        "--baseline-target",
        "embedded",
    ];
    let candidate = server.url(Some("mall-name-missing"));
    args.extend(["--base-url", &candidate]);
    args.extend(IDENTITY);
    let o = mallcheck(dir.path(), &args, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    let out = stdout(&o);
    assert!(
        out.contains("the breaking verdict rests on 30 records"),
        "{out}"
    );
    assert!(!out.contains("thin evidence"), "{out}");
}

/// The shipped mall-list snapshot walks the list to its end (`snapshot: { walk: true }`): a
/// merchant of more than 100 malls is recorded whole, and a release verdict rests on all of it.
#[test]
fn the_shipped_list_snapshot_records_the_whole_first_walk_beyond_100_malls() {
    let server = Server::start_with(&["--malls", "250"]);
    let dir = tempfile::tempdir().unwrap();
    let o = run_shipped(
        dir.path(),
        &server.url(None),
        &["--snapshots", "update", "--json", "r.json"],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let snap = std::fs::read_to_string(
        dir.path()
            .join("snapshots/localhost/snapshots__first-mall-list-page.snap"),
    )
    .unwrap();
    assert_eq!(snap.matches("\"mallSn\"").count(), 250, "{snap}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let case = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"]["name"] == "first mall-list page")
        .unwrap();
    assert!(
        case["coverage"]
            .to_string()
            .contains("the whole first walk, 250 malls in 3 pages"),
        "{case}"
    );
    // Checked again, the walk gives the same snapshot.
    let o = run_shipped(dir.path(), &server.url(None), &["--ci"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));

    let cases = shipped_cases();
    let mut args = vec![
        "diff",
        "--cases",
        &cases,
        "--baseline",
        "snapshots",
        "--baseline-target",
        "localhost",
    ];
    let candidate = server.url(Some("mall-name-missing"));
    args.extend(["--base-url", &candidate]);
    args.extend(IDENTITY);
    let o = mallcheck(dir.path(), &args, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(
        stdout(&o).contains("the breaking verdict rests on 250 records"),
        "{}",
        describe(&o)
    );
}

/// A small page size walks many pages: the snapshot is the list, not the page.
#[test]
fn a_walk_snapshot_at_a_small_page_size_holds_every_mall() {
    let server = Server::start();
    let dir = workdir("{ walk: true }");
    record(dir.path(), &server);
    let text = std::fs::read_to_string(path(dir.path(), SNAP)).unwrap();
    assert_eq!(text.matches("\"mallSn\"").count(), 30, "{text}");
    let o = diff(
        dir.path(),
        &server.url(None),
        &server.url(Some("mall-name-missing")),
    );
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(
        stdout(&o).contains("the breaking verdict rests on 30 records"),
        "{}",
        describe(&o)
    );
}

/// The sampled products snapshot holds the products of 8 malls spread over the first page; a
/// release verdict on a product field rests on all of them, not on one mall's.
#[test]
fn a_release_diff_on_sampled_products_rests_on_the_products_of_every_sampled_mall() {
    let server = Server::start();
    let dir = workdir_with_embedded_snapshots();
    let cases = shipped_cases();
    let mut args = vec![
        "diff",
        "--cases",
        &cases,
        "--baseline",
        "snapshots",
        "--baseline-target",
        "embedded",
        "--markdown",
        "diff.md",
    ];
    let candidate = server.url(Some("product-title-missing"));
    args.extend(["--base-url", &candidate]);
    args.extend(IDENTITY);
    let o = mallcheck(dir.path(), &args, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    let out = stdout(&o);
    assert!(out.contains("/*/products/*/title  field removed"), "{out}");
    // 109 products of 8 malls, against the 60 of the one listed mall.
    assert!(
        out.contains("the breaking verdict rests on 109 records"),
        "{out}"
    );
    assert!(
        out.contains("the breaking verdict rests on 60 records"),
        "{out}"
    );
}

#[test]
fn cases_that_would_share_a_snapshot_file_are_a_usage_error_before_any_request() {
    let dir = workdir("{}");
    // `First Page` and `first page` make one file name: each would be compared with the
    // other's answer.
    let text = list_case("{}");
    let second =
        text.strip_prefix("cases:\n")
            .unwrap()
            .replacen("name: first page", "name: First  Page", 1);
    std::fs::write(
        dir.path().join("cases/list.yaml"),
        format!("{text}{second}"),
    )
    .unwrap();
    // No server: a usage error comes before anything is sent.
    let out = run(
        dir.path(),
        "http://127.0.0.1:9",
        &["--snapshots", "update"],
        &[],
    );
    let shown = describe(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("`first page` (cases/list.yaml:2) and `First  Page` (cases/list.yaml:")
            && shown.contains("list__first-page.snap"),
        "{shown}"
    );
    assert!(
        !dir.path().join("snapshots").exists(),
        "nothing written: {shown}"
    );
    // Each in a shard of its own: still one file for two cases.
    for shard in ["1/2", "2/2"] {
        let out = run(
            dir.path(),
            "http://127.0.0.1:9",
            &["--snapshots", "update", "--shard", shard],
            &[],
        );
        assert_eq!(out.status.code(), Some(2), "{shard}: {}", describe(&out));
    }
    // Without snapshots the two cases run as they are.
    let listed = mallcheck(dir.path(), &["list", "--cases", "cases"], &[]);
    assert_eq!(listed.status.code(), Some(0), "{}", describe(&listed));
}

#[test]
fn a_snapshot_directory_that_cannot_be_created_is_a_usage_error_before_any_request() {
    let dir = workdir("{}");
    let out = run(
        dir.path(),
        "http://127.0.0.1:9",
        &["--snapshot-dir", "/proc/mallcheck-snapshots"],
        &[],
    );
    let shown = describe(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("/proc/mallcheck-snapshots") && shown.contains("cannot create it"),
        "{shown}"
    );
}

/// A walk snapshot holds its pages within one response's tree budget all told: a service whose
/// every page is a full one padded with a quarter megabyte of `{}` is walked until the trees
/// would outgrow it, and the snapshot is then not kept, saying why (it held every page's tree
/// before: twenty pages of 10 MiB of `{}` took gigabytes).
#[test]
fn a_walk_snapshot_of_pages_padded_with_small_objects_stops_at_the_tree_budget() {
    let url = crate::common::scripted_server(|request| {
        let body: serde_json::Value =
            serde_json::from_slice(&request.body).unwrap_or(serde_json::Value::Null);
        // Each page's last mall is the cursor of the next: the walk goes on until stopped.
        let after: u64 = body["cursor"]["endCursor"]
            .as_str()
            .and_then(|c| c.parse().ok())
            .unwrap_or(1_000_000);
        let pad = vec!["{}"; 30_000].join(",");
        let malls: Vec<String> = (1..=3)
            .map(|i| format!(r#"{{"mallSn":"{}","pad":[{pad}]}}"#, after - i))
            .collect();
        let body = format!(
            r#"{{"success":true,"code":"0000","msg":"ok","data":[{}]}}"#,
            malls.join(",")
        );
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    });
    let dir = workdir("{ walk: true }");
    let o = run(
        dir.path(),
        &url,
        &[
            "--snapshots",
            "update",
            "--no-preflight",
            "--max-body",
            "300000",
        ],
        &[],
    );
    let out = describe(&o);
    assert!(
        out.contains("the pages of the walk outgrow mallcheck's bound for one snapshot"),
        "{out}"
    );
    assert!(out.contains("the walk is not kept"), "{out}");
    assert!(!dir.path().join(SNAP).exists(), "{:?}", files(dir.path()));
}

/// A candidate whose answers break the contract is a breaking release, whatever the baseline
/// held: an impossible creation time only changes a value of the snapshot (data), but the
/// schema refuses it, as `run` would.
#[test]
fn a_release_diff_fails_a_candidate_that_breaks_the_contract_in_its_values() {
    let server = Server::start();
    let dir = workdir("true");
    record(dir.path(), &server);
    let o = diff(
        dir.path(),
        &server.url(None),
        &server.url(Some("mall-ctime-impossible")),
    );
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    let out = stdout(&o);
    assert!(out.contains("breaks the contract"), "{out}");
    assert!(out.contains("mall.datetime"), "{out}");
}

/// What reading the candidate's body finds breaks the contract too: a member twice (the
/// tree keeps one of them) or a number no client can hold, as `run` reports them.
#[test]
fn a_release_diff_fails_a_candidate_whose_body_holds_a_member_twice() {
    let server = Server::start();
    let dir = workdir("true");
    record(dir.path(), &server);
    for (fault, check) in [
        ("duplicate-data", "response.duplicate-key"),
        ("order-total-num-huge", "response.number-range"),
    ] {
        let o = diff(dir.path(), &server.url(None), &server.url(Some(fault)));
        assert_eq!(o.status.code(), Some(1), "{fault}: {}", describe(&o));
        let out = stdout(&o);
        assert!(out.contains(check), "{fault}: {out}");
    }
}
