//! `mallcheck fuzz` end to end: the real binary against its embedded server and against
//! `mallcheck serve` fault modes that break only on a narrow trigger. Each trigger must be
//! found within the default budget and reported with a shrunk, runnable reproducer; a seed
//! repeats a run; minimal bodies are saved and replayed.

use std::path::Path;

use crate::common::{Server, bin};
use assert_cmd::Command;
use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, MAIN, OTHER};
use serde_json::Value;

/// A `mallcheck fuzz` command run in `dir` (reports and regressions land there).
fn fuzz(dir: &Path) -> Command {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .args(["fuzz", "--seed", "1", "--color", "never"])
        .args(["--junit", "junit.xml", "--regressions", "regs"]);
    cmd
}

/// `fuzz` against a base URL as the reference server's main merchant.
fn fuzz_at(dir: &Path, base_url: &str) -> Command {
    let mut cmd = fuzz(dir);
    cmd.env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .env("MALLCHECK_OTHER_MERCHANT_ID", OTHER.merchant_id)
        .env("MALLCHECK_OTHER_MERCHANT_USER_ID", OTHER.merchant_user_id)
        .args(["--base-url", base_url, "--appid", DEMO_APPID])
        .args([
            "--merchant-id",
            MAIN.merchant_id,
            "--merchant-user-id",
            MAIN.merchant_user_id,
        ]);
    cmd
}

struct Run {
    code: i32,
    stdout: String,
}

fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().expect("run mallcheck fuzz");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.is_empty() || out.status.code() == Some(2),
        "unexpected stderr: {stderr}"
    );
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout,
    }
}

/// The pretty-printed minimal body of the first failure (the lines between "minimal body" and
/// "response:"), parsed.
fn minimal_body(stdout: &str) -> Value {
    let text: String = stdout
        .lines()
        .skip_while(|l| !l.contains("minimal body ("))
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with("response:"))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("no minimal JSON body ({e}) in:\n{stdout}"))
}

/// Asserts a trigger was found on the mall list, shrunk to the baseline plus one change, and
/// reported with everything needed to reproduce it; returns the minimal body.
fn assert_found(run: &Run, property: &str) -> Value {
    let out = &run.stdout;
    assert_eq!(run.code, 1, "a failure exits 1:\n{out}");
    assert!(
        out.contains(&format!("FAIL {property} on mall-list")),
        "{out}"
    );
    for needle in [
        "response: ",
        "curl -sS -X POST '",
        "Authorization: mallcheck-demo-app <redacted>",
        "# re-sign: ",
        "md5",
        "seed: 1 ",
        "saved: regs/mall-list-",
    ] {
        assert!(out.contains(needle), "`{needle}` missing from:\n{out}");
    }
    let body = minimal_body(out);
    assert_eq!(
        body["appid"], DEMO_APPID,
        "untouched fields keep their baseline values"
    );
    assert_eq!(body["sort"]["sortField"], "id");
    body
}

#[test]
fn the_embedded_server_passes_300_cases() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(fuzz(dir.path()).args(["--cases", "300"]));
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.contains("(embedded reference server)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("0 of 12 properties failed; 600 cases generated"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("req/s)"), "{}", r.stdout);
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert_eq!(
        junit.matches("<testcase").count(),
        12,
        "one test case per property per endpoint"
    );
    assert!(!junit.contains("<failure"));
    assert!(!dir.path().join("regs").exists(), "nothing to save");
}

#[test]
fn a_count_above_80_is_found_shrunk_to_81_saved_and_replayed() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let url = server.fault_url("fuzz-count-over-80");
    let first = run(&mut fuzz_at(dir.path(), &url));
    let body = assert_found(&first, "fuzz.no-server-error");
    assert!(first.stdout.contains("\"count\": 81\n"), "{}", first.stdout);
    assert_eq!(body["cursor"]["count"], 81);
    assert_eq!(body["filter"]["seller"]["role"], "super_admin");
    assert!(
        first.stdout.contains("1 of 12 properties failed"),
        "the products endpoint has no count:\n{}",
        first.stdout
    );
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<failure").count(), 1, "{junit}");

    let saved: Vec<_> = std::fs::read_dir(dir.path().join("regs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&saved[0]).unwrap()).unwrap();
    assert_eq!(file["endpoint"], "mall-list");
    assert_eq!(file["property"], "fuzz.no-server-error");
    assert_eq!(file["body"], body);

    let again = run(fuzz_at(dir.path(), &url).args(["--cases", "3", "--endpoint", "mall-list"]));
    assert_eq!(again.code, 1, "{}", again.stdout);
    let name = saved[0].file_name().unwrap().to_string_lossy().into_owned();
    let replay_line = again
        .stdout
        .lines()
        .position(|l| l.starts_with("replayed regs/") && l.contains(&name));
    let fuzz_line = again
        .stdout
        .lines()
        .position(|l| l == "mall-list: fuzzing 3 cases");
    assert!(
        replay_line.is_some() && replay_line < fuzz_line,
        "replayed before fuzzing:\n{}",
        again.stdout
    );
    assert!(
        again.stdout.contains("still fails fuzz.no-server-error"),
        "{}",
        again.stdout
    );
    assert!(
        again.stdout.contains(&format!("replayed from regs/{name}")),
        "{}",
        again.stdout
    );
}

#[test]
fn a_user_id_with_a_space_is_found_and_shrunk() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let r = run(&mut fuzz_at(
        dir.path(),
        &server.fault_url("fuzz-user-id-space"),
    ));
    let body = assert_found(&r, "fuzz.no-server-error");
    let user = body["filter"]["seller"]["merchantUserId"]
        .as_str()
        .unwrap_or_default();
    assert!(
        user.contains(' ') && user.chars().count() <= 3,
        "shrunk to a short string with a space: {user:?}"
    );
    assert_eq!(body["cursor"]["count"], 10);
    assert!(
        r.stdout
            .contains("FAIL fuzz.no-server-error on mall-products"),
        "{}",
        r.stdout
    );
}

#[test]
fn an_empty_role_is_found_and_shrunk() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let r = run(&mut fuzz_at(
        dir.path(),
        &server.fault_url("fuzz-empty-role"),
    ));
    let body = assert_found(&r, "fuzz.no-server-error");
    assert_eq!(body["filter"]["seller"]["role"], "");
    assert_eq!(
        body["filter"]["seller"]["merchantUserId"],
        MAIN.merchant_user_id
    );
    assert!(r.stdout.contains("\"role\": \"\""), "{}", r.stdout);
}

#[test]
fn a_hang_on_an_empty_cursor_is_found_within_the_timeout() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let url = server.fault_url("fuzz-empty-cursor-hang");
    let r = run(fuzz_at(dir.path(), &url).args(["--timeout", "2"]));
    let body = assert_found(&r, "fuzz.timely");
    assert_eq!(body["cursor"]["endCursor"], "");
    assert_eq!(body["cursor"]["count"], 10);
    assert!(
        r.stdout.contains("no complete response in time"),
        "{}",
        r.stdout
    );
}

#[test]
fn the_same_seed_gives_the_same_output() {
    let server = Server::start(&[]);
    let url = server.fault_url("fuzz-count-over-80");
    let once = |dir: &Path| {
        let r = run(fuzz_at(dir, &url).args(["--cases", "120"]));
        assert_eq!(r.code, 1, "{}", r.stdout);
        r.stdout
            .lines()
            .filter(|l| !l.contains("req/s"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = once(a.path());
    assert!(
        first.contains("FAIL fuzz.no-server-error") && first.contains("seed: 1 "),
        "{first}"
    );
    assert_eq!(first, once(b.path()));
}

#[test]
fn bad_flags_and_bad_regression_files_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let r = fuzz(dir.path()).args(["--cases", "0"]).output().unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--cases"));
    std::fs::create_dir(dir.path().join("regs")).unwrap();
    std::fs::write(dir.path().join("regs/broken.json"), "{").unwrap();
    let r = fuzz(dir.path()).output().unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("broken.json"));
}

#[test]
fn max_time_stops_generation_and_reports_how_many_ran() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(fuzz(dir.path()).args([
        "--cases",
        "1000000",
        "--max-time",
        "1",
        "--endpoint",
        "mall-list",
    ]));
    assert_eq!(r.code, 0, "{}", r.stdout);
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("mall-list: stopped by --max-time after "));
    assert!(
        line.is_some_and(|l| l.contains(" of 1000000")),
        "{}",
        r.stdout
    );
}
