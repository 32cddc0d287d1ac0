//! Diagnostics of settings and filters: each names the right file or flag, speaks plainly,
//! suggests the likely fix and exits 2.

use std::process::Command;

use crate::common::{bin, repo};

fn run(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(bin())
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg("run")
        .args(args)
        .args(["--color", "never", "--cases"])
        .arg(repo().join("cases"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

#[test]
fn a_profile_error_is_headed_by_the_config_file_and_says_a_number() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mallcheck.toml"),
        "[profile.staging]\nrate = \"fast\"\n",
    )
    .unwrap();
    let (code, text) = run(dir.path(), &["--profile", "staging"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("problem in mallcheck.toml"), "{text}");
    assert!(!text.contains("case files"), "{text}");
    assert!(text.contains("a number"), "{text}");
    assert!(!text.contains("f64"), "{text}");
    assert!(text.contains("mallcheck.toml:2:"), "{text}");
}

#[test]
fn filter_typos_get_a_did_you_mean_even_when_another_filter_matches() {
    let dir = tempfile::tempdir().unwrap();
    for (args, suggestion) in [
        (vec!["--filter", "tag:smok"], "did you mean `tag:smoke`?"),
        (
            vec!["--filter", "tag:auth", "--filter", "tag:smok"],
            "did you mean `tag:smoke`?",
        ),
        (
            vec!["--filter", "check:paging.dupe"],
            "did you mean `check:paging.duplicate`?",
        ),
        (
            vec!["--filter", "auth", "--filter", "check:paging.dupe"],
            "did you mean `check:paging.duplicate`?",
        ),
    ] {
        let (code, text) = run(dir.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {text}");
        assert!(text.contains("--filter"), "{args:?}: {text}");
        assert!(text.contains(suggestion), "{args:?}: {text}");
    }
}

#[test]
fn a_base_url_without_a_scheme_suggests_http() {
    let dir = tempfile::tempdir().unwrap();
    for raw in ["localhost:8080", "127.0.0.1:8080"] {
        let (code, text) = run(dir.path(), &["--base-url", raw]);
        assert_eq!(code, Some(2), "{raw}: {text}");
        assert!(
            text.contains(&format!("did you mean `http://{raw}`?")),
            "{raw}: {text}"
        );
    }
}
