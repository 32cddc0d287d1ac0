//! Local inputs are bounded and safe (issue 20, item 5): every file mallcheck reads (merge
//! inputs, captured responses, the signing key, the profile, snapshots, certificate bundles) is
//! refused with exit 2 and a message naming it when it is a device, a FIFO or too large;
//! nothing blocks, nothing is read whole.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use mallcheck::server::data::DEMO_SIGN_KEY;

use crate::common::{Server, bin, output_text, repo, run_as_main};

/// Runs `cmd` to its end and returns what it printed. A command still running after two
/// minutes (blocked on a FIFO, reading `/dev/zero`) is killed and the test fails: this is a
/// guard against a hung suite, not a measure of speed.
pub fn finish(cmd: &mut Command) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mallcheck");
    finish_child(&mut child)
}

/// [`finish`] of a spawned child whose stdout and stderr are piped.
pub fn finish_child(child: &mut std::process::Child) -> Output {
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stdout.read_to_end(&mut b);
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stderr.read_to_end(&mut b);
        b
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for mallcheck") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mallcheck did not finish within two minutes (blocked?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

/// Makes a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().expect("UTF-8 path")).expect("no NUL");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// Asserts exit 2 and a message naming `path` with `reason`; returns what was printed.
fn refused(out: &Output, path: &Path, reason: &str) -> String {
    let shown = output_text(out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(shown.contains(&path.display().to_string()), "{shown}");
    assert!(shown.contains(reason), "{shown}");
    shown
}

/// A command in `dir` with a clean environment.
fn mallcheck(dir: &Path) -> Command {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    cmd
}

#[test]
fn merge_refuses_a_device_a_fifo_and_an_oversize_input_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zero = Path::new("/dev/zero");
    let out = finish(
        mallcheck(dir.path())
            .args(["merge", "--json", "o.json"])
            .arg(zero),
    );
    refused(&out, zero, "it is a character device, not a regular file");
    assert!(!dir.path().join("o.json").exists());

    let fifo = dir.path().join("shard.json");
    mkfifo(&fifo);
    let out = finish(
        mallcheck(dir.path())
            .args(["merge", "--json", "o.json"])
            .arg(&fifo),
    );
    refused(&out, &fifo, "it is a FIFO (named pipe), not a regular file");

    // A sparse file: its size is refused before a byte is read.
    let big = dir.path().join("big.json");
    let file = std::fs::File::create(&big).expect("create");
    file.set_len(257 * 1024 * 1024).expect("set length");
    let out = finish(
        mallcheck(dir.path())
            .args(["merge", "--json", "o.json"])
            .arg(&big),
    );
    refused(
        &out,
        &big,
        "it is larger than 256 MiB, the limit for a merge input",
    );
}

#[test]
fn validate_refuses_a_device_and_waits_for_a_fifos_writer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = finish(
        mallcheck(dir.path())
            .args(["validate", "--schema", "mall-list-response"])
            .arg("/dev/zero"),
    );
    refused(&out, Path::new("/dev/zero"), "a character device");
    // A FIFO is read as a pipe (`validate -` reads one), and its writer may come later: it is
    // waited for, not read as an empty body.
    let fifo = dir.path().join("captured.json");
    mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            std::fs::write(
                &fifo,
                r#"{"success":true,"code":"0000","msg":"ok","data":[]}"#,
            )
            .expect("write the FIFO");
        })
    };
    let out = finish(
        mallcheck(dir.path())
            .args([
                "validate",
                "--schema",
                "mall-list-response",
                "--color",
                "never",
            ])
            .arg(&fifo),
    );
    writer.join().expect("writer");
    let shown = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    // Standard input once: a second `-` would read nothing.
    let out = finish(mallcheck(dir.path()).args([
        "validate",
        "--schema",
        "mall-list-response",
        "-",
        "-",
    ]));
    let shown = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(shown.contains("more than once"), "{shown}");
}

#[test]
fn a_sign_key_file_that_is_a_device_or_too_large_exits_2_without_quoting_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = |key_file: &Path| {
        finish(
            mallcheck(dir.path())
                .args(["run", "--base-url", "http://127.0.0.1:9/"])
                .args([
                    "--appid",
                    "a",
                    "--merchant-id",
                    "m",
                    "--merchant-user-id",
                    "u",
                ])
                .arg("--sign-key-file")
                .arg(key_file),
        )
    };
    let zero = Path::new("/dev/zero");
    refused(&run(zero), zero, "a character device");

    let big = dir.path().join("key.txt");
    let key = "Zq7Xw2Lp9Rt4Vb8N".repeat(5_000);
    std::fs::write(&big, &key).expect("write key");
    let shown = refused(
        &run(&big),
        &big,
        "it is larger than 64 KiB, the limit for a signing key file",
    );
    assert!(!shown.contains("Zq7Xw2Lp"), "{shown}");
}

#[test]
fn a_sign_key_can_come_through_a_pipe() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut cmd = run_as_main(&server.base_url, dir.path());
    cmd.env_remove("MALLCHECK_SIGN_KEY")
        .args(["--sign-key-file", "/dev/stdin", "--snapshots", "off"])
        .arg("--cases")
        .arg(repo().join("cases/mall-list.yaml"))
        .args(["--filter", "first page", "--json", "report.json"]);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mallcheck");
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin
        .write_all(format!("{DEMO_SIGN_KEY}\n").as_bytes())
        .expect("write the key");
    drop(stdin);
    let out = finish_child(&mut child);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
}

#[test]
fn a_profile_that_is_a_device_exits_2_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zero = Path::new("/dev/zero");
    let out = finish(
        mallcheck(dir.path())
            .args(["list", "--profile", "staging", "--config"])
            .arg(zero),
    );
    refused(&out, zero, "cannot read the config file /dev/zero");
}

#[test]
fn a_config_file_given_without_a_profile_exits_2_instead_of_testing_something_else() {
    let dir = tempfile::tempdir().expect("temp dir");
    for config in ["missing.toml", "mallcheck.toml"] {
        std::fs::write(
            dir.path().join("mallcheck.toml"),
            "[profile.staging]\njobs = 2\n",
        )
        .unwrap();
        let out = finish(mallcheck(dir.path()).args(["run", "--config", config]));
        assert_eq!(out.status.code(), Some(2), "{}", output_text(&out));
        let text = output_text(&out);
        assert!(
            text.contains("--config") && text.contains("--profile"),
            "{text}"
        );
        assert!(!text.contains("running"), "nothing ran: {text}");
    }
}

#[test]
fn a_certificate_bundle_that_is_a_device_or_a_fifo_exits_2_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("ca.pem");
    mkfifo(&fifo);
    for (path, reason) in [
        (Path::new("/dev/zero"), "a character device"),
        (fifo.as_path(), "a FIFO"),
    ] {
        let out = finish(
            mallcheck(dir.path())
                .env("SSL_CERT_FILE", path)
                .env("MALLCHECK_SIGN_KEY", "k".repeat(16))
                .args(["run", "--base-url", "https://127.0.0.1:9/"])
                .args([
                    "--appid",
                    "a",
                    "--merchant-id",
                    "m",
                    "--merchant-user-id",
                    "u",
                ]),
        );
        let shown = refused(&out, path, reason);
        assert!(shown.contains("certificate file"), "{shown}");
    }
}

#[test]
fn a_snapshot_that_is_a_fifo_exits_2_before_the_run_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let snaps = dir.path().join("snapshots/embedded");
    std::fs::create_dir_all(&snaps).expect("snapshot dir");
    let fifo = snaps.join("mall_list__first-mall-list-page.snap");
    mkfifo(&fifo);
    let out = finish(
        mallcheck(dir.path())
            .arg("run")
            .arg("--cases")
            .arg(repo().join("cases"))
            .args(["--color", "never"]),
    );
    refused(
        &out,
        Path::new("snapshots/embedded/mall_list__first-mall-list-page.snap"),
        "a FIFO",
    );
}

/// A project directory with `cases/` holding one valid case file.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("cases")).expect("cases dir");
    std::fs::copy(
        repo().join("cases/mall-list.yaml"),
        dir.path().join("cases/mall-list.yaml"),
    )
    .expect("copy a case file");
    dir
}

/// `mallcheck list` in `dir` (its `cases/`).
fn list(dir: &Path) -> Output {
    finish(mallcheck(dir).args(["list", "--color", "never"]))
}

#[test]
fn symlink_loops_in_cases_exit_2_naming_each_link() {
    let dir = project();
    let cases = dir.path().join("cases");
    let link = |target: &str, name: &str| {
        std::os::unix::fs::symlink(target, cases.join(name)).expect("symlink")
    };
    link("..", "up");
    link("../cases", "again");
    link("b", "a");
    link("a", "b");
    link("two.yaml", "one.yaml");
    link("one.yaml", "two.yaml");
    let out = list(dir.path());
    let shown = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    for name in ["up", "again", "a", "b", "one.yaml", "two.yaml"] {
        assert!(
            shown.contains(&format!("cases/{name}: ")),
            "{name} not named: {shown}"
        );
    }
    assert!(shown.contains("a symbolic link loop"), "{shown}");
}

#[test]
fn a_fifo_named_like_a_case_file_exits_2_naming_it() {
    let dir = project();
    mkfifo(&dir.path().join("cases/x.yaml"));
    let out = list(dir.path());
    let shown = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("cases/x.yaml: cannot read case file: it is a FIFO"),
        "{shown}"
    );
}

#[test]
fn a_case_link_leaving_the_project_is_refused_and_never_quoted() {
    let dir = project();
    let outside = tempfile::tempdir().expect("temp dir");
    let secret = "AWS_SECRET_ACCESS_KEY=FAKEwJalrXUtnFEMIK7MDENGbPxRfiCY";
    let credentials = outside.path().join("credentials");
    std::fs::write(&credentials, format!("[default]\n{secret}\n")).expect("write");
    let cases = dir.path().join("cases");
    std::os::unix::fs::symlink(&credentials, cases.join("creds.yaml")).expect("symlink");
    std::os::unix::fs::symlink("/proc/self/environ", cases.join("env.yaml")).expect("symlink");
    let out = finish(
        mallcheck(dir.path())
            .env("AWS_SECRET_ACCESS_KEY", "FAKEenvSecretValue0123456789")
            .args(["list", "--color", "never"]),
    );
    let shown = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    for name in ["creds.yaml", "env.yaml"] {
        assert!(
            shown.contains(&format!("cases/{name}: a symbolic link to ")),
            "{shown}"
        );
    }
    assert!(!shown.contains("FAKE"), "{shown}");

    // A link that stays in the project is followed.
    std::fs::remove_file(cases.join("creds.yaml")).expect("remove");
    std::fs::remove_file(cases.join("env.yaml")).expect("remove");
    std::fs::create_dir(dir.path().join("shared")).expect("shared dir");
    std::fs::copy(
        repo().join("cases/ownership.yaml"),
        dir.path().join("shared/ownership.yaml"),
    )
    .expect("copy");
    std::os::unix::fs::symlink("../shared", cases.join("shared")).expect("symlink");
    let out = list(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    assert!(output_text(&out).contains("ownership.yaml"));
}

#[test]
fn a_file_where_an_output_directory_must_be_is_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("afile"), "x").expect("write a file");
    let tries: &[&[&str]] = &[
        &["openapi", "-o", "afile/x.json"],
        &["man", "--dir", "afile"],
        &["man", "--dir", "afile/pages"],
        &["init", "--dir", "afile/project"],
    ];
    for args in tries {
        let out = finish(mallcheck(dir.path()).args(*args));
        let shown = output_text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {shown}");
        // The OS says only "File exists".
        assert!(
            shown.contains("afile is a file, not a directory"),
            "{args:?}: {shown}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("afile")).expect("still a file"),
        "x"
    );
}

/// A command whose output is its document fails when standard output cannot take it (a full
/// disk behind `>`), and a reader that closes the pipe early is no error.
#[test]
fn a_document_that_standard_output_cannot_take_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    for command in ["openapi", "checks", "list"] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let out = mallcheck(dir.path())
            .arg(command)
            .stdout(full)
            .output()
            .expect("run mallcheck");
        let shown = output_text(&out);
        assert_eq!(out.status.code(), Some(2), "{command}: {shown}");
        assert!(
            shown.contains("cannot access standard output: No space left on device"),
            "{command}: {shown}"
        );
    }
}

/// A text filter that matches nothing is refused even beside one that selects cases: it would
/// otherwise narrow nothing, silently.
#[test]
fn a_text_filter_that_matches_nothing_is_refused_beside_others() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = finish(mallcheck(dir.path()).args([
        "list",
        "--filter",
        "tag:snapshot",
        "--filter",
        "ownershp",
    ]));
    let shown = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("`ownershp` matches no case name, file, endpoint, tag or check id"),
        "{shown}"
    );
    assert!(shown.contains("did you mean `ownership`?"), "{shown}");
    let out = finish(mallcheck(dir.path()).args(["list", "--filter", "walk agrees"]));
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
}

/// A directory where an output file must be is named as such (for the working directory the
/// OS said "Device or resource busy").
#[test]
fn a_directory_where_an_output_file_must_be_is_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("adir")).expect("a directory");
    for args in [&["openapi", "-o", "."][..], &["openapi", "-o", "adir"]] {
        let out = finish(mallcheck(dir.path()).args(args));
        let shown = output_text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {shown}");
        assert!(
            shown.contains(&format!("{} is a directory, not a file", args[2])),
            "{args:?}: {shown}"
        );
    }
}

#[test]
fn more_shards_than_cases_is_said_of_shard_not_filter() {
    let dir = tempfile::tempdir().expect("temp dir");
    for args in [
        &["list", "--shard", "99/100"][..],
        &["list", "--shard", "1/100"],
        &["list", "--filter", "tag:snapshot", "--shard", "9/9"],
        &["list", "--filter", "tag:snapshot", "--shard", "1/9"],
    ] {
        let out = finish(mallcheck(dir.path()).args(args));
        let shown = output_text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {shown}");
        assert!(
            shown.contains("--shard") && shown.contains("so some hold no case"),
            "{args:?}: {shown}"
        );
        assert!(!shown.contains("--filter: no case selected"), "{shown}");
    }
}

#[test]
fn every_numeric_flag_out_of_range_exits_2_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let huge = "18446744073709551615";
    let tries: &[(&[&str], &str)] = &[
        (&["run", "--jobs", "2305843009213693952"], "--jobs"),
        (&["run", "--jobs", "0"], "--jobs"),
        (&["run", "--rate", "1e-300"], "--rate"),
        (&["run", "--timeout", "1e999"], "--timeout"),
        (&["run", "--timeout", "1e-300"], "--timeout"),
        (&["run", "--max-retry-wait=-1"], "--max-retry-wait"),
        (&["run", "--max-body", huge], "--max-body"),
        (&["run", "--retries", "4000000000"], "--retries"),
        (&["run", "--max-pages", huge], "--max-pages"),
        (&["run", "--sample", "0"], "--sample"),
        (&["run", "--walk-prefix", huge], "--walk-prefix"),
        (&["serve", "--max-connections", huge], "--max-connections"),
        (&["serve", "--malls", huge], "--malls"),
        (&["serve", "--latency-ms", huge], "--latency-ms"),
        (&["serve", "--idle-timeout", "1e300"], "--idle-timeout"),
        (&["fuzz", "--max-time", huge], "--max-time"),
        (&["fuzz", "--rate", "1e-300"], "--rate"),
        (&["fuzz", "--jobs", huge], "--jobs"),
        (&["fuzz", "--count", "0"], "--count"),
        (&["bench", "--rounds", huge], "--rounds"),
        (&["bench", "--scales", "0"], "--scales"),
    ];
    for (args, flag) in tries {
        let out = finish(mallcheck(dir.path()).args(*args));
        let shown = output_text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {shown}");
        assert!(shown.contains(flag), "{args:?}: {shown}");
        assert!(!shown.contains("panicked"), "{args:?}: {shown}");
        assert!(!shown.contains("listening"), "{args:?}: {shown}");
    }
}

#[test]
fn a_profile_number_out_of_range_exits_2_naming_the_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (key, value) in [
        ("jobs", "2305843009213693952"),
        ("rate", "1e-300"),
        ("timeout", "0"),
        ("timeout", "1e-300"),
    ] {
        std::fs::write(
            dir.path().join("mallcheck.toml"),
            format!("[profile.p]\n{key} = {value}\n"),
        )
        .expect("write profile");
        let out = finish(mallcheck(dir.path()).args(["list", "--profile", "p"]));
        let shown = output_text(&out);
        assert_eq!(out.status.code(), Some(2), "{key}: {shown}");
        assert!(
            shown.contains(&format!("`{key}` of profile `p`")),
            "{shown}"
        );
        // Pointed at, line and column, as a parse error is.
        assert!(shown.contains("mallcheck.toml:2:"), "{shown}");
    }
}

#[test]
fn past_the_file_size_limit_no_report_claims_to_be_complete() {
    let dir = tempfile::tempdir().expect("temp dir");
    let reports = dir.path().join("reports");
    std::fs::create_dir(&reports).expect("reports dir");
    // A report of an earlier run, complete.
    std::fs::write(reports.join("report.json"), r#"{"complete": true}"#).expect("write");
    let cases = repo().join("cases");
    let script = format!(
        "ulimit -f 4; exec '{}' run --color never --snapshots off --cases '{}'",
        bin().display(),
        cases.display()
    );
    let out = finish(
        Command::new("sh")
            .current_dir(dir.path())
            .env_clear()
            .args(["-c", &script]),
    );
    let shown = output_text(&out);
    // Not killed by SIGXFSZ (153 from a shell): the run's failure, naming the reports.
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("cannot write the JSON report reports/report.json: File too large"),
        "{shown}"
    );
    assert!(
        shown.contains("cannot write the JUnit report reports/junit.xml"),
        "{shown}"
    );
    for entry in std::fs::read_dir(&reports).expect("reports") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        assert!(!name.starts_with('.'), "temporary file left: {name}");
        if name == "report.json" {
            let text = std::fs::read_to_string(&path).expect("read");
            let v: serde_json::Value = serde_json::from_str(&text).expect("whole JSON");
            assert_eq!(v["complete"], false, "{text}");
        }
        // A report written in full gave the run's verdict before the others failed (a pass):
        // none may be left saying so of a run that exits 1.
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(!text.contains("PASS"), "{name} says PASS: {text}");
    }
}

#[test]
fn a_sign_command_that_leaves_a_detached_child_gives_its_signature() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let pid_file = dir.path().join("pid");
    // md5 of the body and the key (the reference server's scheme), then a child in its own
    // session that holds stdout open for a minute.
    let sign = format!(
        "{{ cat; printf %s '{DEMO_SIGN_KEY}'; }} | md5sum | cut -c1-32; setsid sh -c 'echo $$ > {}; exec sleep 60' &",
        pid_file.display()
    );
    let mut cmd = run_as_main(&server.base_url, dir.path());
    cmd.env("MALLCHECK_SIGN_COMMAND", &sign)
        .args([
            "--signer",
            "command",
            "--timeout",
            "20",
            "--snapshots",
            "off",
        ])
        .arg("--cases")
        .arg(repo().join("cases/mall-list.yaml"))
        .args(["--filter", "first page", "--color", "never"]);
    let out = finish(&mut cmd);
    if let Ok(pid) = std::fs::read_to_string(&pid_file) {
        let _ = Command::new("kill").args(["-9", pid.trim()]).status();
    }
    let shown = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(!shown.contains("timed out"), "{shown}");
}

#[test]
fn a_key_written_in_a_case_file_leaves_no_fragment_in_a_diagnostic() {
    let key = "Zq7Xw2Lp9Rt4Vb8Nc3Mk6HyT5Gd1Fs0A";
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("cases")).expect("cases dir");
    // The key at the edge of the window of a quoted line, and inside a YAML key of over 400
    // characters (the message is cut at 400).
    let padding = "p".repeat(70);
    let long_key = format!("{}{key}{}", "k".repeat(250), "k".repeat(200));
    std::fs::write(
        dir.path().join("cases/leaky.yaml"),
        format!(
            "cases:\n  - name: a\n    endpoint: mall-list\n    request: {{ body: {{ appid: \"{padding}{key}\" }} }}\n    expect: {{ status: 200, bogus: 1 }}\n  - name: b\n    endpoint: mall-list\n    request: {{ body: {{}} }}\n    {long_key}: 1\n"
        ),
    )
    .expect("write case file");
    let out = finish(
        mallcheck(dir.path())
            .env("MALLCHECK_SIGN_KEY", key)
            .args([
                "list",
                "--color",
                "never",
                "--base-url",
                "http://127.0.0.1:9/",
            ])
            .args([
                "--appid",
                "a",
                "--merchant-id",
                "m",
                "--merchant-user-id",
                "u",
            ]),
    );
    let shown = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(shown.contains("cases/leaky.yaml:"), "{shown}");
    for i in 0..=key.len() - 8 {
        let piece = &key[i..i + 8];
        assert!(
            !shown
                .to_ascii_lowercase()
                .contains(&piece.to_ascii_lowercase()),
            "{piece} shown: {shown}"
        );
    }
}
