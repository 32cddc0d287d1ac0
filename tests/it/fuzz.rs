//! `mallcheck fuzz` end to end: the real binary against its embedded server and against
//! `mallcheck serve` fault modes that break only on a narrow trigger. Each trigger must be
//! found within the default budget and reported with a shrunk, runnable reproducer; a seed
//! repeats a run; minimal bodies are saved and replayed.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Server, bin};
use assert_cmd::Command;
use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, MAIN, OTHER};
use serde_json::Value;

/// A `mallcheck fuzz` command run in `dir` (reports and regressions land there).
fn fuzz(dir: &Path) -> Command {
    fuzz_seeded(dir, "1")
}

/// [`fuzz`] with another seed.
fn fuzz_seeded(dir: &Path, seed: &str) -> Command {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .args(["fuzz", "--seed", seed, "--color", "never"])
        .args(["--junit", "junit.xml", "--regressions", "regs"]);
    cmd
}

/// `fuzz` against a base URL as the reference server's main merchant.
fn fuzz_at(dir: &Path, base_url: &str) -> Command {
    fuzz_at_seeded(dir, base_url, "1")
}

/// [`fuzz_at`] with another seed.
fn fuzz_at_seeded(dir: &Path, base_url: &str, seed: &str) -> Command {
    let mut cmd = fuzz_seeded(dir, seed);
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
        r.stdout
            .contains("target: embedded (the reference server at "),
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

/// An empty 200 answer is a refusal of the products operation's unshown error shape (§7.4),
/// not a body that is not JSON; but a valid products call must still get JSON.
#[test]
fn an_empty_200_refusal_of_products_passes_and_an_empty_200_answer_to_all_is_found() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let url = server.fault_url("products-refused-empty-200");
    let r = run(fuzz_at(dir.path(), &url).args(["--cases", "200"]));
    assert_eq!(r.code, 0, "{}", r.stdout);
    // The valid products body goes first: even a run of one products case finds it.
    let dir = tempfile::tempdir().unwrap();
    let url = server.fault_url("products-empty-200");
    let r = run(fuzz_at(dir.path(), &url).args(["--cases", "1"]));
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("FAIL fuzz.json-body on mall-products"),
        "{}",
        r.stdout
    );
}

/// The valid products body answered 2xx with an object (a paginated or enveloped answer, not
/// the array §4.2 shows) is a broken contract, not a refusal: the run fails, and does not say
/// the endpoint went untested.
#[test]
fn the_valid_products_body_answered_with_an_object_fails_the_contract() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let url = server.fault_url("products-enveloped");
    let r = run(fuzz_at(dir.path(), &url).args(["--cases", "5"]));
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("FAIL fuzz.success-contract on mall-products"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("nothing tested"), "{}", r.stdout);
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
    let case = &file["cases"][0];
    assert_eq!(case["endpoint"], "mall-list");
    assert_eq!(case["tags"][0], "fuzz-regression");
    assert!(
        case["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("fuzz.no-server-error on mall-list")),
        "{case}"
    );
    let mut sent = case["request"]["body"].clone();
    assert_eq!(sent["appid"], "${MALLCHECK_APPID}", "identity as variables");
    assert_eq!(sent["filter"]["seller"]["role"], "${MALLCHECK_ROLE}");
    sent["appid"] = Value::from(DEMO_APPID);
    sent["filter"]["seller"]["merchantId"] = Value::from(MAIN.merchant_id);
    sent["filter"]["seller"]["merchantUserId"] = Value::from(MAIN.merchant_user_id);
    sent["filter"]["seller"]["role"] = Value::from("super_admin");
    assert_eq!(sent, body);

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
    // Response times differ from run to run; everything else must not.
    let elapsed = regex::Regex::new(r"after [0-9.]+ s").unwrap();
    let once = |dir: &Path| {
        let r = run(fuzz_at(dir, &url).args(["--cases", "120"]));
        assert_eq!(r.code, 1, "{}", r.stdout);
        r.stdout
            .lines()
            .filter(|l| !l.contains("req/s"))
            .map(|l| elapsed.replace_all(l, "after <t> s").into_owned())
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
    assert!(String::from_utf8_lossy(&r.stderr).contains("--count"));
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

/// nginx from the system's packages, if installed (`.ci/install-nginx.sh`).
fn nginx_binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|d| d.join("nginx"))
        .find(|p| p.is_file())
}

/// A stock nginx reverse proxy in front of `upstream`, on a free loopback port, stopped on drop.
struct Nginx {
    child: Child,
    base_url: String,
    _dir: tempfile::TempDir,
}

impl Nginx {
    fn start(binary: &Path, upstream: &str) -> Nginx {
        let dir = tempfile::tempdir().unwrap();
        let free_port = || {
            std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map(|a| a.port())
                .unwrap()
        };
        // The port is free when asked for; another process may take it before nginx binds it,
        // so a failed start is tried again on another port.
        for _ in 0..5 {
            let port = free_port();
            let d = dir.path().display();
            let config = format!(
                "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
                 events {{ worker_connections 256; }}\n\
                 http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
                 fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
                 server {{\n    listen 127.0.0.1:{port};\n    location / {{\n      proxy_pass {upstream};\n\
                 proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n    }}\n  }}\n}}\n"
            );
            let conf = dir.path().join("nginx.conf");
            std::fs::write(&conf, config).unwrap();
            let mut child = std::process::Command::new(binary)
                .arg("-c")
                .arg(&conf)
                .arg("-p")
                .arg(dir.path())
                .arg("-e")
                .arg(dir.path().join("error.log"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn nginx");
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Nginx {
                        child,
                        base_url: format!("http://127.0.0.1:{port}"),
                        _dir: dir,
                    };
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let log = std::fs::read_to_string(dir.path().join("error.log")).unwrap_or_default();
        panic!("nginx did not start:\n{log}");
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// nginx, or a skip message (a failure when `MALLCHECK_REQUIRE_TOOLS=1`, as in CI).
fn nginx_or_skip(test: &str) -> Option<PathBuf> {
    let found = nginx_binary();
    if found.is_none() {
        assert!(
            std::env::var_os("MALLCHECK_REQUIRE_TOOLS").is_none_or(|v| v != "1"),
            "nginx is required (MALLCHECK_REQUIRE_TOOLS=1): run .ci/install-nginx.sh"
        );
        eprintln!("skipping {test}: nginx is not installed (.ci/install-nginx.sh installs it)");
    }
    found
}

/// Asserts a run found nothing and saw no HTTP-layer refusal.
fn assert_clean(r: &Run, what: &str) {
    assert_eq!(r.code, 0, "{what}:\n{}", r.stdout);
    assert!(
        r.stdout.contains("0 of 12 properties failed"),
        "{what}:\n{}",
        r.stdout
    );
    assert!(
        !r.stdout.contains("refused by the HTTP layer"),
        "{what}:\n{}",
        r.stdout
    );
}

#[test]
fn a_correct_service_has_no_finding_behind_a_stock_http_server_for_any_seed() {
    let Some(binary) = nginx_or_skip("the nginx fuzz test") else {
        return;
    };
    let server = Server::start(&[]);
    let nginx = Nginx::start(&binary, &server.base_url);
    let dir = tempfile::tempdir().unwrap();
    // That no seed generates a body or header beyond the common limits (the cause of the
    // false findings behind a stock server) is shown for 8 seeds at generation cost by the unit
    // test `bodies_stay_within_common_limits_unless_oversize`. Here a few seeds go through
    // nginx: each sends the whole edge sweep and random bodies of every mode, and a finding of
    // the reference server would show behind nginx as well (`the_embedded_server_passes_300_cases`
    // runs it directly).
    for seed in 1..=3 {
        let seed = seed.to_string();
        let behind =
            run(fuzz_at_seeded(dir.path(), &nginx.base_url, &seed).args(["--cases", "1000"]));
        assert_clean(&behind, &format!("seed {seed} behind nginx"));
    }
    assert!(!dir.path().join("regs").exists(), "nothing to save");

    // Oversize probes reach nginx's header limit: its refusals are listed apart, and the run
    // passes.
    let oversize = run(fuzz_at(dir.path(), &nginx.base_url).args([
        "--cases",
        "1000",
        "--endpoint",
        "mall-list",
        "--oversize",
    ]));
    assert_eq!(oversize.code, 0, "{}", oversize.stdout);
    // How many of the seed's oversize probes reach the limit depends on the generator; each
    // is counted apart, none is a finding.
    let refused = oversize.stdout.lines().find_map(|l| {
        let (head, tail) =
            l.split_once(" beyond common size limits refused by the HTTP layer (HTTP 400 ×")?;
        let n: u32 = tail
            .strip_suffix("): not contract findings")?
            .parse()
            .ok()?;
        let said = head.strip_prefix("mall-list: ")?;
        (said == format!("{n} request{}", if n == 1 { "" } else { "s" })).then_some(n)
    });
    assert!(refused.is_some_and(|n| n >= 1), "{}", oversize.stdout);
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        !junit.contains("<failure") && junit.contains("HTTP 400 ×"),
        "{junit}"
    );
}

/// The products baseline asks for a mall that has products: OTHER's newest live mall has none,
/// and a service that skips the seller check when `seller.merchantId` is no string leaks the
/// products of the next one, which a probe of an empty mall could not show.
#[test]
fn a_seller_check_skipped_without_a_merchant_id_is_found_through_a_mall_with_products() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = fuzz_seeded(dir.path(), "1");
    cmd.env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .env("MALLCHECK_OTHER_MERCHANT_ID", MAIN.merchant_id)
        .env("MALLCHECK_OTHER_MERCHANT_USER_ID", MAIN.merchant_user_id)
        .args([
            "--base-url",
            &server.fault_url("fuzz-products-seller-optional"),
        ])
        .args(["--appid", DEMO_APPID, "--merchant-id", OTHER.merchant_id])
        .args(["--merchant-user-id", OTHER.merchant_user_id]);
    let r = run(&mut cmd);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("FAIL fuzz.ownership on mall-products"),
        "{}",
        r.stdout
    );
}

/// A merchant filter written with SQL LIKE lists every merchant's malls for `%`: the edge
/// sweep sends it in every string member, and the ownership property sees the other merchants.
#[test]
fn a_like_merchant_filter_is_found() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let r = run(&mut fuzz_at(
        dir.path(),
        &server.fault_url("fuzz-list-merchant-like"),
    ));
    let body = assert_found(&r, "fuzz.ownership");
    assert_eq!(body["filter"]["seller"]["merchantId"], "%", "{body}");
}

/// A page of a size no walk of `run` asks for (above 100) that lists a mall twice: the fuzzer's
/// contract property reads every success page for a mall given twice.
#[test]
fn a_large_page_listing_a_mall_twice_is_found() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let r = run(&mut fuzz_at(
        dir.path(),
        &server.fault_url("fuzz-page-over-100-repeats-a-mall"),
    ));
    let body = assert_found(&r, "fuzz.success-contract");
    assert!(
        body["cursor"]["count"].as_u64().is_some_and(|c| c > 100),
        "{body}"
    );
    assert!(r.stdout.contains("paging.duplicate"), "{}", r.stdout);
}

/// `mallcheck fuzz` saves its regressions in `cases/fuzz-regressions/` by default: in a folder
/// with no `cases/` of its own, that folder is no suite of the project's, and the next `run`
/// runs the shipped cases with the regression, not the regression alone (one case and a green
/// verdict against a service that answers one canned page to everything).
#[test]
fn a_cases_folder_the_fuzzer_made_adds_its_regressions_to_the_shipped_cases() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let url = server.fault_url("fuzz-count-over-80");
    let found = run(fuzz_at(dir.path(), &url).args(["--endpoint", "mall-list", "--count", "200"]));
    assert_eq!(found.code, 1, "{}", found.stdout);
    // Where the fuzzer saves by default (the helper names its own folder).
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    std::fs::rename(
        dir.path().join("regs"),
        dir.path().join("cases/fuzz-regressions"),
    )
    .unwrap();
    let saved = std::fs::read_dir(dir.path().join("cases/fuzz-regressions"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "json"))
        })
        .count();
    assert_eq!(saved, 1, "{}", found.stdout);
    let out = Command::new(bin())
        .current_dir(dir.path())
        .env_clear()
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .args(["run", "--base-url", &server.base_url, "--appid", DEMO_APPID])
        .args(["--merchant-id", MAIN.merchant_id])
        .args(["--merchant-user-id", MAIN.merchant_user_id])
        .args(["--color", "never", "--snapshots", "off", "--json", "r.json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let files: Vec<String> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"]["file"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(files.len() > 50, "{files:?}");
    assert!(
        files.iter().any(|f| f.starts_with("<shipped>/cases/")),
        "{files:?}"
    );
    assert_eq!(
        files
            .iter()
            .filter(|f| f.contains("fuzz-regressions"))
            .count(),
        1,
        "{files:?}"
    );
}
