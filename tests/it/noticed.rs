//! Bugs noticed in earlier rounds: config diagnostics that quoted a URL password, a console that
//! passed secrets across a line break or a hostile service's control characters, runs that
//! passed although nothing could be tested, and fuzz regressions replayed unlike they were found.

use std::process::{Command, Output};

use crate::common::bin;

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_config_syntax_error_names_file_and_line_without_quoting_a_url_password() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mallcheck.toml"),
        "[profile.staging]\nbase_url = \"https://user:s3cret@staging.example\"\ntimeout = 10s\n",
    )
    .unwrap();
    let out = Command::new(bin())
        .current_dir(dir.path())
        .env_clear()
        .args(["run", "--profile", "staging", "--color", "never"])
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains("mallcheck.toml:3:"), "{all}");
    assert!(!all.contains("s3cret"), "{all}");
    assert!(all.contains("https://<redacted>@staging.example"), "{all}");
}
