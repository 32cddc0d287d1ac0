//! `mallcheck completions SHELL` prints a completion script a shell loads, and `mallcheck man`
//! a manual page in roff, both generated from the command-line definition.

use std::process::Command;

use crate::common::bin;

fn mallcheck(args: &[&str]) -> std::process::Output {
    Command::new(bin()).args(args).output().unwrap()
}

#[test]
fn bash_loads_the_completion_script_for_mallcheck() {
    let out = mallcheck(&["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0));
    let script = String::from_utf8(out.stdout).unwrap();
    assert!(
        script.contains("mallcheck") && script.contains("merge"),
        "{script}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mallcheck.bash");
    std::fs::write(&path, &script).unwrap();
    // Sourced by bash, it registers a completion function for `mallcheck`.
    let loaded = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && complete -p mallcheck",
            path.display()
        ))
        .output()
        .unwrap();
    let registered = String::from_utf8_lossy(&loaded.stdout);
    assert!(
        loaded.status.success()
            && registered.contains("_mallcheck")
            && registered.contains("mallcheck"),
        "{registered}{}",
        String::from_utf8_lossy(&loaded.stderr)
    );
    for shell in ["zsh", "fish"] {
        let out = mallcheck(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("mallcheck"));
    }
    assert_eq!(mallcheck(&["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
fn man_prints_roff_and_writes_a_page_per_command() {
    let out = mallcheck(&["man"]);
    assert_eq!(out.status.code(), Some(0));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH mallcheck 1"), "{page}");
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH SUBCOMMANDS"] {
        assert!(page.contains(section), "no {section} in\n{page}");
    }
    assert!(page.contains("mallcheck\\-run"), "{page}");
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("man1");
    let out = Command::new(bin())
        .args(["man", "--dir"])
        .arg(&pages)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    for name in ["mallcheck.1", "mallcheck-run.1", "mallcheck-merge.1"] {
        let text = std::fs::read_to_string(pages.join(name)).unwrap();
        assert!(text.starts_with(".ie"), "{name}: {text}");
    }
}
