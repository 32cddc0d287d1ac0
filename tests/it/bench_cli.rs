//! `mallcheck bench`: line (b) measures the fuzzer against the field's limit on a server that
//! answers from the recorded bytes of the same run (no timing is asserted, only what the line
//! says it measured), and `--only` names lines that exist.

use assert_cmd::Command;

use crate::common::bin;

fn bench(dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg("bench");
    cmd
}

#[test]
fn the_fuzz_rate_line_replays_the_recorded_run_against_precomputed_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let out = bench(dir.path())
        .args([
            "--only",
            "b",
            "--fuzz-cases",
            "15",
            "--load-secs",
            "0.2",
            "--rounds",
            "1",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    // The field's limit: a bare hyper loop against the precomputed-bytes server.
    assert!(stdout.contains("(b) fuzz rate"), "{stdout}");
    assert!(
        stdout.contains("on the same precomputed-bytes server"),
        "{stdout}"
    );
    assert!(
        stdout.contains("limit: bare hyper client loops"),
        "{stdout}"
    );
    // The load generator runs in a process of its own, as the fuzz run does, and its own CPU
    // is measured (a child that did not run would give none).
    assert!(stdout.contains("in a process of its own"), "{stdout}");
    let generator_us: f64 = stdout
        .split("the load generator ")
        .nth(1)
        .and_then(|rest| rest.split(" us").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no CPU of the load generator: {stdout}"));
    assert!(generator_us > 0.0, "{stdout}");
    // Each pair's ratio is printed beside the median shown.
    assert!(
        stdout.contains("the pair of the median ratio of 1: "),
        "{stdout}"
    );
    // Every request of the second run was answered from the recording, with the same verdicts.
    assert!(stdout.contains(", 0 not recorded"), "{stdout}");
    let verdicts = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("verdicts: "))
        .unwrap_or_else(|| panic!("no verdicts line: {stdout}"));
    let (recorded, replayed) = verdicts
        .split_once(" against the embedded server, ")
        .unwrap_or_else(|| panic!("{verdicts}"));
    assert_eq!(
        recorded.trim_start().trim_start_matches("verdicts: "),
        replayed.trim_end_matches(" against the precomputed bytes"),
        "{verdicts}"
    );
    // The embedded server's throughput is on its own line, with no target.
    let server = stdout
        .lines()
        .skip_while(|l| !l.starts_with("(b) embedded server"))
        .nth(1)
        .unwrap_or_else(|| panic!("no embedded server line: {stdout}"));
    assert!(server.contains("target none  INFO"), "{stdout}");
    // Only the fuzz rate line counts as a target.
    assert!(stdout.contains(" of 1 targets hold"), "{stdout}");
}

#[test]
fn only_names_existing_lines() {
    let dir = tempfile::tempdir().unwrap();
    let out = bench(dir.path()).args(["--only", "a,z"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--only") && stderr.contains("(z)"),
        "{stderr}"
    );
}
