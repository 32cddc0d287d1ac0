//! The console on a terminal (issue 23 item 6), through a real pseudo-terminal (`script` of
//! util-linux): the progress display names the running case and moves while it runs; with
//! `TERM=dumb` there is no bar to redraw, so the plain lines are printed instead.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::common::{Server, bin, output_text};
use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, MAIN};

/// Whether `script` (util-linux) can give a command a terminal here.
fn script_available() -> bool {
    let ok = Command::new("script")
        .args(["-qec", "true", "/dev/null"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("MALLCHECK_REQUIRE_TOOLS").is_none(),
            "MALLCHECK_REQUIRE_TOOLS is set but `script` (util-linux) is missing"
        );
        eprintln!("note: `script` (util-linux) is missing; skipped the terminal test");
    }
    ok
}

/// `mallcheck run` of one slow case against `base_url`, on a pseudo-terminal with `term` as
/// TERM; returns everything the terminal received.
fn run_on_a_terminal(base_url: &str, dir: &Path, term: &str) -> String {
    let command = format!(
        "{} run --base-url {base_url} --appid {DEMO_APPID} --merchant-id {} \
         --merchant-user-id {} --filter 'walk at the spec' --no-preflight",
        bin().display(),
        MAIN.merchant_id,
        MAIN.merchant_user_id,
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TERM", term)
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .output()
        .expect("run script");
    output_text(&out)
}

#[test]
fn the_terminal_bar_names_the_running_case_and_moves() {
    if !script_available() {
        return;
    }
    // 10 pages and more at 300 ms each: the case runs for seconds.
    let server = Server::start(&["--latency-ms", "300"]);
    let dir = tempfile::tempdir().expect("tempdir");
    let screen = run_on_a_terminal(&server.base_url, dir.path(), "xterm");
    assert!(screen.contains("1 passed"), "{screen}");
    let running = regex::Regex::new(
        // A pseudo-terminal of 80 columns: the end of the line may be cut, never its start.
        r"running (\d+)s: walk at the spec",
    )
    .unwrap();
    let shown: BTreeSet<u64> = running
        .captures_iter(&screen)
        .map(|c| c[1].parse().expect("seconds"))
        .collect();
    assert!(
        shown.len() >= 2,
        "the bar names the running case and its time moves: {shown:?}\n{screen}"
    );
}

#[test]
fn a_dumb_terminal_gets_plain_lines_and_no_bar() {
    if !script_available() {
        return;
    }
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let screen = run_on_a_terminal(&server.base_url, dir.path(), "dumb");
    assert!(screen.contains("1 passed"), "{screen}");
    assert!(screen.contains("PASS"), "{screen}");
    assert!(
        !screen.contains(" cases "),
        "no bar on a dumb terminal: {screen}"
    );
    assert!(
        !screen.contains('\u{1b}'),
        "no escape codes on a dumb terminal: {screen:?}"
    );
}

#[test]
fn force_color_and_clicolor_force_colour_a_pipe_and_no_color_wins() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let coloured = |vars: &[(&str, &str)]| {
        let mut cmd = crate::common::run_as_main(&server.base_url, dir.path());
        cmd.args(["--filter", "first page is a success envelope"]);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run mallcheck");
        assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
        String::from_utf8_lossy(&out.stdout).contains("\u{1b}[")
    };
    assert!(!coloured(&[]), "a pipe is plain");
    assert!(coloured(&[("FORCE_COLOR", "1")]));
    assert!(coloured(&[("CLICOLOR_FORCE", "1")]));
    assert!(!coloured(&[("FORCE_COLOR", "1"), ("NO_COLOR", "1")]));
}
