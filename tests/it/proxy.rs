//! The HTTP proxy of a run: `--proxy`, else curl's variables (`HTTP_PROXY`, `NO_PROXY`, ...),
//! never for a loopback host. The reference server stands in for the proxy: it answers an
//! absolute-form request (`POST http://host/path`) as it answers its own, so a base URL on a
//! host no resolver knows (`.invalid`) is reached only through it.

use std::process::Output;

use crate::common::{Server, closed_port, output_text, run_as_main};

const UNRESOLVABLE: &str = "http://mall.example.invalid";

fn run(base_url: &str, extra: &[&str], env: &[(&str, &str)]) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = run_as_main(base_url, dir.path());
    cmd.args(["--filter", "first mall-list page", "--rate", "0"])
        .args([
            "--snapshots",
            "off",
            "--color",
            "never",
            "--json",
            "report.json",
        ])
        .args(extra);
    for (k, v) in env {
        cmd.env(k, v);
    }
    (cmd.output().unwrap(), dir)
}

#[test]
fn a_run_goes_through_the_proxy_given_or_the_environments_and_no_proxy_skips_it() {
    let proxy = Server::start(&[]);
    let with_password = proxy
        .base_url
        .replace("http://", "http://ci-user:proxy-pw-9f3a@");
    let (out, dir) = run(UNRESOLVABLE, &["--proxy", &with_password], &[]);
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    // The proxy's password is a secret: written nowhere.
    let report = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    assert!(!text.contains("proxy-pw-9f3a") && !report.contains("proxy-pw-9f3a"));

    let (out, _dir) = run(UNRESOLVABLE, &[], &[("HTTP_PROXY", &proxy.base_url)]);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));

    // NO_PROXY and `--proxy none` send the requests directly: the host is not found (could
    // not test).
    let (out, _dir) = run(
        UNRESOLVABLE,
        &[],
        &[
            ("http_proxy", &proxy.base_url),
            ("NO_PROXY", "example.invalid"),
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", output_text(&out));
    let (out, _dir) = run(
        UNRESOLVABLE,
        &["--proxy", "none"],
        &[("HTTP_PROXY", &proxy.base_url)],
    );
    assert_eq!(out.status.code(), Some(3), "{}", output_text(&out));
}

#[test]
fn the_environments_proxy_never_carries_a_loopback_target_and_a_bad_one_is_named() {
    let server = Server::start(&[]);
    let nowhere = format!("http://127.0.0.1:{}", closed_port());
    let (out, _dir) = run(&server.base_url, &[], &[("HTTP_PROXY", &nowhere)]);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    // Given explicitly, a proxy carries a loopback target too (here to nowhere).
    let (out, _dir) = run(&server.base_url, &["--proxy", &nowhere], &[]);
    assert_eq!(out.status.code(), Some(3), "{}", output_text(&out));
    // A variable that is no proxy URL is a usage error naming it, where it would apply.
    let (out, _dir) = run(
        UNRESOLVABLE,
        &[],
        &[("HTTPS_PROXY", "x"), ("HTTP_PROXY", "ftp://p:1")],
    );
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("HTTP_PROXY: not a proxy URL"), "{text}");
    let (out, _dir) = run(UNRESOLVABLE, &["--proxy", "http://p:1/path"], &[]);
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("--proxy"), "{text}");
}

/// A proxy that refuses every request with 407 and quotes the request's headers in its page,
/// `Proxy-Authorization` included.
fn refusing_proxy() -> String {
    crate::common::scripted_server(|request| {
        let page = format!(
            "<html><pre>you sent:\n{}{}</pre></html>",
            request.line, request.head
        );
        format!(
            "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic \
             realm=\"corp\"\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{page}",
            page.len()
        )
        .into_bytes()
    })
}

#[test]
fn a_proxy_refusing_with_407_is_could_not_test_and_its_echo_of_the_credentials_is_redacted() {
    use base64::Engine as _;
    let proxy = refusing_proxy().replace("http://", "http://ci-user:proxy-pw-9f3a@");
    let token = base64::engine::general_purpose::STANDARD.encode("ci-user:proxy-pw-9f3a");
    for extra in [&["--verbose"][..], &["--verbose", "--no-preflight"][..]] {
        let mut args = vec!["--proxy", proxy.as_str()];
        args.extend_from_slice(extra);
        let (out, dir) = run(UNRESOLVABLE, &args, &[]);
        let text = output_text(&out);
        assert_eq!(out.status.code(), Some(3), "{extra:?}: {text}");
        assert!(text.contains("407"), "{text}");
        // The proxy's page was shown (with `--verbose`), its echo redacted.
        assert!(text.contains("Basic <redacted>"), "{text}");
        let report = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
        for (what, written) in [("output", &text), ("report", &report)] {
            // Not a piece of the `Basic` token either (its start spells the user).
            assert!(
                !written.contains("proxy-pw-9f3a") && !written.contains(&token[..8]),
                "{extra:?}: the proxy's credentials in the {what}: {written}"
            );
        }
    }
}

#[test]
fn a_tunnel_the_proxy_refuses_and_a_proxy_host_that_does_not_resolve_are_named_as_the_proxys() {
    let forbidding = crate::common::scripted_server(|_| {
        b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n".to_vec()
    });
    let (out, _dir) = run(
        "https://mall.example.invalid",
        &["--proxy", &forbidding],
        &[],
    );
    crate::common::assert_exit(&out, 3);
    let text = output_text(&out);
    assert!(
        text.contains("the proxy refused a tunnel (CONNECT)"),
        "{text}"
    );
    let (out, _dir) = run(
        UNRESOLVABLE,
        &["--proxy", "http://proxy.example.invalid:3128"],
        &[],
    );
    crate::common::assert_exit(&out, 3);
    let text = output_text(&out);
    assert!(text.contains("check the proxy's host"), "{text}");
    assert!(!text.contains("check the base URL's host"), "{text}");
}
