//! The target is explicit (issue 21 item 1) and the session's redactor sees a setting's secrets
//! before any message quotes them (issue 20 item 1): the real binary, with a clean environment.

use std::path::Path;
use std::process::{Command, Output};

use super::common::{assert_exit, bin, closed_port, output_text, repo};

/// `mallcheck ARGS` in `dir` with only PATH (and `vars`) in the environment.
fn mallcheck(dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("NO_COLOR", "1")
        .args(args)
        .envs(vars.iter().copied());
    cmd.output().expect("run mallcheck")
}

fn cases() -> String {
    repo().join("cases").to_string_lossy().into_owned()
}

#[test]
fn a_misspelt_base_url_variable_is_a_usage_error_with_the_name_meant() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}", closed_port());
    // A misspelt name, or a misspelt prefix (which mallcheck would not read at all).
    for name in [
        "MALLCHECK_BASEURL",
        "MALLCHEK_BASE_URL",
        "mallcheck_base_url",
    ] {
        let out = mallcheck(dir.path(), &["run", "--cases", &cases()], &[(name, &url)]);
        assert_exit(&out, 2);
        let text = output_text(&out);
        assert!(text.contains(name), "{text}");
        assert!(text.contains("did you mean MALLCHECK_BASE_URL?"), "{text}");
        // why: nothing ran, so no report claims a run of the embedded server.
        assert!(!dir.path().join("reports/junit.xml").exists());
    }
}

#[test]
fn a_variable_no_setting_and_no_case_file_uses_is_warned_about_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let out = mallcheck(
        dir.path(),
        &["list", "--cases", &cases()],
        &[("MALLCHECK_SOMETHING_UNRELATED", "1")],
    );
    assert_exit(&out, 0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: MALLCHECK_SOMETHING_UNRELATED is set"),
        "{stderr}"
    );
}

#[test]
fn a_case_variable_used_by_a_case_file_is_no_typo() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tenant.yaml"),
        "cases:\n  - name: tenant header\n    endpoint: mall-list\n    request:\n      body: {}\n      headers: { X-Tenant: \"${MALLCHECK_MALL_ID}\" }\n",
    )
    .unwrap();
    // why: MALLCHECK_MALL_ID is close to MALLCHECK_MALL_SN, but the case file uses it: it is a
    // case variable, not a typo.
    let out = mallcheck(
        dir.path(),
        &["list", "--cases", "tenant.yaml"],
        &[("MALLCHECK_MALL_ID", "t-1")],
    );
    assert_exit(&out, 0);
    assert!(
        !output_text(&out).contains("MALLCHECK_MALL_ID is"),
        "{}",
        output_text(&out)
    );
}

#[test]
fn remote_settings_without_a_base_url_are_a_usage_error_naming_each() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mallcheck.toml"),
        "[profile.ci]\nmerchant_id = \"6f1c0d1e\"\n",
    )
    .unwrap();
    let out = mallcheck(
        dir.path(),
        &["run", "--cases", &cases()],
        &[("MALLCHECK_SIGN_KEY", "a-real-looking-signing-key")],
    );
    assert_exit(&out, 2);
    let text = output_text(&out);
    assert!(text.contains("MALLCHECK_SIGN_KEY"), "{text}");
    assert!(text.contains("base URL"), "{text}");
    assert!(!text.contains("a-real-looking-signing-key"), "{text}");
    let out = mallcheck(
        dir.path(),
        &[
            "run",
            "--cases",
            &cases(),
            "--appid",
            "my-app",
            "--profile",
            "ci",
        ],
        &[("MALLCHECK_MERCHANT_USER_ID", "u-1")],
    );
    assert_exit(&out, 2);
    let text = output_text(&out);
    for named in [
        "--appid",
        "MALLCHECK_MERCHANT_USER_ID",
        "merchant_id (profile `ci`)",
    ] {
        assert!(text.contains(named), "{named}: {text}");
    }
}

#[test]
fn a_run_with_nothing_set_tests_the_embedded_server_and_every_report_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = mallcheck(
        dir.path(),
        &["run", "--cases", &cases(), "--snapshots", "off"],
        &[],
    );
    assert_exit(&out, 0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("against embedded (the reference server at http://127.0.0.1:"),
        "{stdout}"
    );
    let read = |name: &str| std::fs::read_to_string(dir.path().join("reports").join(name)).unwrap();
    let json: serde_json::Value = serde_json::from_str(&read("report.json")).unwrap();
    assert_eq!(json["target"], "embedded", "{json}");
    assert!(
        read("junit.xml").contains(r#"<property name="target" value="embedded"/>"#),
        "{}",
        read("junit.xml")
    );
    for name in ["summary.md", "report.html"] {
        assert!(
            read(name).contains("embedded (the reference server at http://127.0.0.1:"),
            "{name}: {}",
            read(name)
        );
    }
}

#[test]
fn a_base_url_with_a_query_string_is_refused_and_its_query_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let url = "https://staging.example.com/api?token=SECRETSECRET";
    std::fs::write(
        dir.path().join("mallcheck.toml"),
        format!("[profile.s]\nbase_url = \"{url}\"\n"),
    )
    .unwrap();
    let identity = [
        ("MALLCHECK_APPID", "app"),
        ("MALLCHECK_MERCHANT_ID", "m"),
        ("MALLCHECK_MERCHANT_USER_ID", "u"),
        ("MALLCHECK_SIGN_KEY", "a-real-looking-signing-key"),
    ];
    let with_env: Vec<(&str, &str)> = identity
        .iter()
        .copied()
        .chain([("MALLCHECK_BASE_URL", url)])
        .collect();
    let fragment = "https://staging.example.com/api#SECRETSECRET";
    for (what, args, vars) in [
        ("flag", vec!["run", "--base-url", url], identity.to_vec()),
        (
            "flag, fragment",
            vec!["run", "--base-url", fragment],
            identity.to_vec(),
        ),
        ("variable", vec!["run"], with_env),
        ("profile", vec!["run", "--profile", "s"], identity.to_vec()),
    ] {
        let out = mallcheck(dir.path(), &args, &vars);
        assert_exit(&out, 2);
        let text = output_text(&out);
        assert!(text.contains("query string"), "{what}: {text}");
        assert!(!text.contains("SECRETSECRET"), "{what}: {text}");
        assert!(!text.contains("token="), "{what}: {text}");
    }
}

#[test]
fn a_profile_syntax_error_never_prints_an_unencoded_url_password() {
    let password = "p@ss/w#rd?x y";
    let dir = tempfile::tempdir().unwrap();
    for (what, toml) in [
        (
            "an error on the next line",
            format!(
                "[profile.s]\nbase_url = \"https://deploy:{password}@h.example\"\ntimeout = 1x\n"
            ),
        ),
        (
            "an unterminated string on the URL line",
            format!("[profile.s]\nbase_url = \"https://deploy:{password}@h.example\n"),
        ),
        (
            "an unquoted URL",
            format!("[profile.s]\nbase_url = https://deploy:{password}@h.example\n"),
        ),
        (
            "a URL where a number goes",
            format!("[profile.s]\ntimeout = \"https://deploy:{password}@h.example\"\n"),
        ),
    ] {
        std::fs::write(dir.path().join("mallcheck.toml"), &toml).unwrap();
        let out = mallcheck(dir.path(), &["run", "--profile", "s"], &[]);
        assert_exit(&out, 2);
        let text = output_text(&out);
        assert!(text.contains("mallcheck.toml"), "{what}: {text}");
        let chars: Vec<char> = password.chars().collect();
        for window in chars.windows(4) {
            let fragment: String = window.iter().collect();
            assert!(
                !text.contains(&fragment),
                "{what}: `{fragment}` of the password in:\n{text}"
            );
        }
    }
}

/// A pipeline whose variables and secrets did not resolve sets them empty: that is no run of
/// the embedded server (exit 0) but a usage error naming them, for `run` and `fuzz` alike; an
/// empty `MALLCHECK_PROFILE` beside a config file too.
#[test]
fn variables_set_but_empty_are_a_usage_error_not_an_embedded_run() {
    let dir = tempfile::tempdir().unwrap();
    let empty = [
        ("MALLCHECK_BASE_URL", ""),
        ("MALLCHECK_APPID", ""),
        ("MALLCHECK_MERCHANT_ID", ""),
        ("MALLCHECK_MERCHANT_USER_ID", " "),
        ("MALLCHECK_SIGN_KEY", ""),
    ];
    for command in [&["run", "--cases", &cases()][..], &["fuzz", "--cases", "1"]] {
        let out = mallcheck(dir.path(), command, &empty);
        assert_exit(&out, 2);
        let text = output_text(&out);
        for (name, _) in empty {
            assert!(text.contains(name), "{name}: {text}");
        }
        assert!(text.contains("set but empty"), "{text}");
    }
    std::fs::write(
        dir.path().join("mallcheck.toml"),
        "[profile.staging]\nbase_url = \"http://127.0.0.1:9\"\n",
    )
    .unwrap();
    let out = mallcheck(
        dir.path(),
        &["run", "--cases", &cases()],
        &[("MALLCHECK_PROFILE", "")],
    );
    assert_exit(&out, 2);
    assert!(
        output_text(&out).contains("MALLCHECK_PROFILE"),
        "{}",
        output_text(&out)
    );
    // Unset, the embedded server is the target, as before.
    let out = mallcheck(
        dir.path(),
        &[
            "run",
            "--cases",
            &cases(),
            "--filter",
            "first mall-list page",
        ],
        &[],
    );
    assert_exit(&out, 0);
}

/// A config file of profiles and no profile chosen, no base URL: in CI (`CI=true`) a pipeline
/// that forgot its profile would test the embedded reference server and pass, so it is a
/// usage error naming the profiles; elsewhere the run goes on against the embedded server,
/// saying so; `list`, which sends nothing, lists in CI too. A variable named after a flag (`MALLCHECK_STRICT`) is a usage error naming it.
#[test]
fn a_forgotten_profile_in_ci_and_a_flag_set_as_a_variable_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mallcheck.toml"),
        "[profile.staging]\nbase_url = \"http://127.0.0.1:1\"\nappid = \"a\"\n",
    )
    .unwrap();
    let run = ["run", "--cases", &cases(), "--snapshots", "off"];
    let out = mallcheck(dir.path(), &run, &[("CI", "true")]);
    assert_exit(&out, 2);
    let text = output_text(&out);
    assert!(text.contains("defines the profiles staging"), "{text}");
    assert!(!dir.path().join("reports/junit.xml").exists(), "{text}");
    // `list` sends nothing: which target a run would test does not matter to it.
    let out = mallcheck(
        dir.path(),
        &["list", "--cases", &cases()],
        &[("CI", "true")],
    );
    assert_exit(&out, 0);
    assert!(
        !output_text(&out).contains("profile"),
        "{}",
        output_text(&out)
    );
    let mut with_ci = run.to_vec();
    with_ci.push("--ci");
    let out = mallcheck(dir.path(), &with_ci, &[]);
    assert_exit(&out, 2);
    // Jenkins and Azure Pipelines set no `CI`: their own variables say it is CI.
    for var in ["JENKINS_URL", "TF_BUILD", "GITHUB_ACTIONS"] {
        let out = mallcheck(dir.path(), &run, &[(var, "true")]);
        assert_exit(&out, 2);
    }
    let out = mallcheck(dir.path(), &run, &[]);
    assert_exit(&out, 0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("tests the embedded reference server"),
        "{stderr}"
    );
    for (name, flag) in [("MALLCHECK_STRICT", "--strict"), ("MALLCHECK_CI", "--ci")] {
        let out = mallcheck(dir.path(), &run, &[(name, "1")]);
        assert_exit(&out, 2);
        let text = output_text(&out);
        assert!(
            text.contains(&format!("pass {flag} on the command line")),
            "{text}"
        );
    }
}
