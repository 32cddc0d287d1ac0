//! `mallcheck serve` tells how to talk to it: its banner and `--help` name the appid, the demo
//! key, the signer and the merchants, and the curl example of the banner, run by `sh` as a user
//! would paste it, gets the first page of the main merchant's malls.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, EMPTY, MAIN, OTHER, SINGLE};
use mallcheck::server::guide::EXAMPLE_HEADING;
use serde_json::Value;

use crate::common::bin;

const LAST_LINE: &str = "Ctrl-C stops the server.";

/// What a user needs to call the server, present in `text`.
fn assert_tells_how_to_call(text: &str) {
    for (what, needle) in [
        ("appid", DEMO_APPID),
        ("demo key", DEMO_SIGN_KEY),
        ("signer", "md5"),
        (
            "how the signature is made",
            "raw body bytes followed by the key",
        ),
        ("main merchant", MAIN.merchant_id),
        ("main merchant user", MAIN.merchant_user_id),
        ("single merchant", SINGLE.merchant_id),
        ("empty merchant", EMPTY.merchant_id),
        ("other merchant", OTHER.merchant_id),
        ("other merchant user", OTHER.merchant_user_id),
        ("role", "super_admin"),
        ("example", EXAMPLE_HEADING),
    ] {
        assert!(text.contains(needle), "the {what} is missing:\n{text}");
    }
}

#[test]
fn serve_help_tells_how_to_call_the_server() {
    let out = Command::new(bin())
        .args(["serve", "--help"])
        .output()
        .expect("run mallcheck serve --help");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_tells_how_to_call(&text);
    assert!(
        text.contains("curl -sS \"http://127.0.0.1:8080/optimus/core/open/mall/queryMallList\""),
        "{text}"
    );
}

/// `mallcheck serve --port 0`, killed on drop.
struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn has(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_serve_banner_tells_how_to_call_it_and_its_curl_example_works() {
    let mut child = Command::new(bin())
        .args(["serve", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn mallcheck serve");
    let stdout = child.stdout.take().expect("piped stdout");
    let _serve = Serve(child);
    let mut banner = String::new();
    let mut reader = BufReader::new(stdout);
    while !banner.contains(LAST_LINE) {
        let mut line = String::new();
        let n = reader.read_line(&mut line).expect("read the banner");
        assert!(n > 0, "serve ended its banner early:\n{banner}");
        banner.push_str(&line);
    }
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    let base_url = banner
        .lines()
        .next()
        .and_then(|l| l.rsplit(' ').next())
        .filter(|u| u.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no base URL in the first line:\n{banner}"))
        .to_string();
    assert_tells_how_to_call(&banner);
    assert!(
        banner.contains(&format!(
            "POST {base_url}/optimus/core/open/mall/queryMallProducts"
        )),
        "the products URL on this port:\n{banner}"
    );

    // The export lines and the run command, pasted into a shell in an empty folder, run the
    // shipped suite against this server and pass (issue 23 item 8).
    let pasted: String = banner
        .lines()
        .skip_while(|l| *l != mallcheck::server::guide::RUN_HEADING)
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        pasted.contains(&format!("export MALLCHECK_BASE_URL={base_url}\n"))
            && pasted.ends_with("mallcheck run\n"),
        "{banner}"
    );
    let empty = tempfile::tempdir().expect("tempdir");
    let bin_dir = bin().parent().expect("the binary's folder").to_path_buf();
    let out = Command::new("sh")
        .args(["-c", &pasted])
        .current_dir(empty.path())
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .output()
        .expect("run sh");
    assert_eq!(
        out.status.code(),
        Some(0),
        "the pasted lines:\n{pasted}\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    let example: String = banner
        .lines()
        .skip_while(|l| *l != EXAMPLE_HEADING)
        .skip(1)
        .take_while(|l| !l.is_empty() && *l != LAST_LINE)
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(example.contains(&base_url), "{example}");
    if !(has("curl") && has("md5sum")) {
        assert!(
            std::env::var_os("MALLCHECK_REQUIRE_TOOLS").is_none(),
            "MALLCHECK_REQUIRE_TOOLS is set but curl or md5sum is missing"
        );
        eprintln!("note: curl or md5sum is not installed; skipped running the banner's example");
        return;
    }
    let out = Command::new("sh")
        .args(["-c", &example])
        .output()
        .expect("run sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the example failed:\n{example}\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("the example's answer is not JSON ({e}):\n{stdout}"));
    assert_eq!(answer["success"], Value::Bool(true), "{answer}");
    assert_eq!(answer["code"], "0000", "{answer}");
    let malls = answer["data"].as_array().expect("data is an array");
    assert_eq!(malls.len(), 10, "a first page of 10: {answer}");
    assert!(
        malls
            .iter()
            .all(|m| m["seller"]["merchantId"] == MAIN.merchant_id),
        "the main merchant's malls: {answer}"
    );
}

/// The README's section on the reference server says what `serve --help` says.
#[test]
fn the_readme_shows_the_same_identities_and_example_as_serve_help() {
    let readme = std::fs::read_to_string(crate::common::repo().join("README.md")).expect("README");
    let section = readme
        .split("## The reference server\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("a README section \"The reference server\"");
    assert_tells_how_to_call(&format!("{section}\n{EXAMPLE_HEADING}"));
    let help = mallcheck::server::guide::help();
    let example: Vec<&str> = help
        .lines()
        .skip_while(|l| *l != EXAMPLE_HEADING)
        .skip(1)
        .collect();
    assert!(
        section.contains(&example.join("\n")),
        "the README's example differs from `serve --help`'s:\n{}",
        example.join("\n")
    );
}
