//! First contact (issue 23 item 8): every missing setting named at once, one spelling per flag
//! across subcommands (the old ones kept as hidden aliases), and transport errors in words.

use std::process::Command;

use crate::common::{Server, assert_exit, bin, output_text, run_as_main};

fn mallcheck(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(bin())
        .current_dir(dir)
        .env_remove("MALLCHECK_RATE")
        .args(args)
        .output()
        .expect("run mallcheck")
}

#[test]
fn fuzz_counts_with_count_and_still_takes_the_old_cases() {
    let dir = tempfile::tempdir().expect("tempdir");
    for flag in ["--count", "--cases"] {
        let out = mallcheck(dir.path(), &["fuzz", flag, "0"]);
        assert_exit(&out, 2);
        assert!(
            output_text(&out).contains("--count"),
            "{}",
            output_text(&out)
        );
    }
    let help = output_text(&mallcheck(dir.path(), &["fuzz", "--help"]));
    assert!(help.contains("--count <N>"), "{help}");
    assert!(!help.contains("--cases"), "the old name is hidden:\n{help}");
}

#[test]
fn snapshots_takes_the_snapshot_dir_of_run_and_still_the_old_dir() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("snaps/localhost")).expect("mkdir");
    std::fs::write(
        dir.path().join("snaps/localhost/a__b.snap.new"),
        "---\nsource: x\n---\n{}\n",
    )
    .expect("write");
    for flag in ["--snapshot-dir", "--dir"] {
        let out = mallcheck(dir.path(), &["snapshots", "pending", flag, "snaps"]);
        assert_exit(&out, 0);
        assert!(
            output_text(&out).contains("a__b"),
            "{flag}: {}",
            output_text(&out)
        );
    }
    let help = output_text(&mallcheck(dir.path(), &["snapshots", "--help"]));
    assert!(help.contains("--snapshot-dir <DIR>"), "{help}");
    assert!(!help.contains("--dir"), "the old name is hidden:\n{help}");
}

#[test]
fn an_unresolvable_host_is_said_in_words() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run_as_main("http://mallcheck-no-such-host.invalid", dir.path())
        .args(["--color", "never", "--timeout", "5"])
        .output()
        .expect("run mallcheck");
    // Could not test (exit 3): the service was not reached.
    assert_exit(&out, 3);
    let text = output_text(&out);
    assert!(
        text.contains("the host name could not be resolved (DNS:"),
        "{text}"
    );
    assert!(!text.contains("informati…"), "cut mid-word: {text}");
}

#[test]
fn a_first_run_against_a_separate_serve_names_every_missing_setting_at_once() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("tempdir");
    for command in ["run", "fuzz"] {
        let out = Command::new(bin())
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .args([command, "--base-url", &server.base_url])
            .output()
            .expect("run mallcheck");
        assert_exit(&out, 2);
        let text = output_text(&out);
        // One error, every setting in it, each with how to give it.
        assert_eq!(text.matches("error:").count(), 1, "{command}: {text}");
        assert!(
            text.contains(
                "error: --appid, --merchant-id, --merchant-user-id, MALLCHECK_SIGN_KEY: are \
                 required with a base URL, and not set (4 settings)"
            ),
            "{command}: {text}"
        );
        for how in [
            "set MALLCHECK_APPID",
            "set MALLCHECK_MERCHANT_ID",
            "set MALLCHECK_MERCHANT_USER_ID",
            "export the signing key in MALLCHECK_SIGN_KEY",
        ] {
            assert!(text.contains(how), "{command}: {how}: {text}");
        }
    }
    // Refused before any request was sent.
    assert_eq!(server.counters()["requests"], 0, "{}", server.counters());
}
