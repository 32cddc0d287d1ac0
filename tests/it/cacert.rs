//! `--cacert FILE` against a real TLS server on loopback (issue 23 item 8): a certificate of a
//! private CA is refused in words naming `--cacert`, and trusted with it (flag or
//! `MALLCHECK_CACERT`). The certificates are made by the `openssl` command-line tool; without
//! it the test prints a note and passes, unless `MALLCHECK_REQUIRE_TOOLS` is set.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::common::{output_text, run_as_main};

/// Runs `openssl` with `args` in `dir`; false when it is missing or fails.
fn openssl(dir: &Path, args: &[&str]) -> bool {
    Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A private CA (`ca.pem`) and a certificate it issued for 127.0.0.1 (`leaf.pem`, `leaf.key`).
fn make_certificates(dir: &Path) -> bool {
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .expect("write the extensions");
    let made = openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=mallcheck test CA",
        ],
    ) && openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "leaf.key",
            "-out",
            "leaf.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    ) && openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "leaf.pem",
            "-days",
            "2",
            "-extfile",
            "leaf.ext",
        ],
    );
    if !made {
        assert!(
            std::env::var_os("MALLCHECK_REQUIRE_TOOLS").is_none(),
            "MALLCHECK_REQUIRE_TOOLS is set but `openssl` is missing or failed"
        );
        eprintln!("note: `openssl` is missing or failed; skipped the --cacert test");
    }
    made
}

/// A TLS server on 127.0.0.1 answering every request 404 with `leaf.pem`; its base URL.
fn tls_server(dir: &Path) -> String {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(dir.join("leaf.pem"))
        .expect("leaf.pem")
        .collect::<Result<_, _>>()
        .expect("a certificate");
    let key = PrivateKeyDer::from_pem_file(dir.join("leaf.key")).expect("leaf.key");
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .expect("server config");
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    // Serves until the test process ends; each connection on its own thread.
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let config = config.clone();
            std::thread::spawn(move || {
                let Ok(conn) = rustls::ServerConnection::new(config) else {
                    return;
                };
                let mut tls = rustls::StreamOwned::new(conn, stream);
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                // Up to the end of the headers; the answer does not depend on the body.
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = tls.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
                tls.conn.send_close_notify();
                let _ = tls.flush();
            });
        }
    });
    format!("https://127.0.0.1:{port}")
}

#[test]
fn a_private_ca_is_named_and_trusted_with_cacert() {
    let dir = tempfile::tempdir().expect("tempdir");
    if !make_certificates(dir.path()) {
        return;
    }
    let base_url = tls_server(dir.path());
    let run = |extra: &[&str], vars: &[(&str, &str)]| {
        let mut cmd = run_as_main(&base_url, dir.path());
        cmd.args(["--color", "never", "--snapshots", "off"])
            .args(extra);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        output_text(&cmd.output().expect("run mallcheck"))
    };
    let refused = run(&[], &[]);
    assert!(
        refused.contains(
            "the service's TLS certificate is not accepted: it is issued by a certificate \
             authority this machine does not trust"
        ) && refused.contains("pass --cacert FILE"),
        "{refused}"
    );
    assert!(!refused.contains("Other("), "no Rust Debug text: {refused}");
    for (extra, vars) in [
        (&["--cacert", "ca.pem"][..], &[][..]),
        (&[][..], &[("MALLCHECK_CACERT", "ca.pem")][..]),
    ] {
        let trusted = run(extra, vars);
        // The handshake passed: the server's 404 is what the preflight reports.
        assert!(
            trusted.contains("got HTTP 404"),
            "{extra:?} {vars:?}: {trusted}"
        );
        assert!(
            !trusted.contains("certificate"),
            "{extra:?} {vars:?}: {trusted}"
        );
    }
}
