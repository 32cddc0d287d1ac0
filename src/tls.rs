//! The HTTP client's TLS setup: rustls with the `ring` provider, chosen over reqwest's default
//! `aws-lc-rs` because `aws-lc-sys` is a long C build that doubled a fresh build's time.

use std::path::Path;

use crate::local_file::{self, Kind, ReadError};

/// A reqwest client builder with the process-wide rustls provider installed.
pub fn client_builder() -> reqwest::ClientBuilder {
    // Installing twice is harmless: the second call reports the provider already set.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
}

/// [`client_builder`] for requests to `base_url` only. A plain-HTTP base URL never needs the
/// system's root certificates (redirects are followed within the origin at most), and reading
/// them is a tenth of a short run's instructions, so they are read for `https` only.
pub fn client_builder_for(base_url: &str) -> reqwest::ClientBuilder {
    let builder = client_builder();
    if base_url
        .get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("http://"))
    {
        builder.tls_certs_only(std::iter::empty())
    } else {
        builder
    }
}

/// Checks the certificate bundles the TLS layer reads when the client is built
/// (`SSL_CERT_FILE`, and the files of the `SSL_CERT_DIR` directories): each must be a regular
/// file within [`Kind::Certificates`]'s limit. The TLS layer reads a bundle whole, so
/// `SSL_CERT_FILE=/dev/zero` would exhaust memory and a FIFO would block the run.
pub fn check_cert_env() -> Result<(), ReadError> {
    if let Some(file) = std::env::var_os("SSL_CERT_FILE").filter(|f| !f.is_empty()) {
        check_bundle(Path::new(&file))?;
    }
    if let Some(dirs) = std::env::var_os("SSL_CERT_DIR").filter(|d| !d.is_empty()) {
        for dir in std::env::split_paths(&dirs) {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                // The TLS layer reads regular files only (links followed); so do we.
                if std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
                    check_bundle(&path)?;
                }
            }
        }
    }
    Ok(())
}

/// A bundle that does not exist is left to the TLS layer, which ignores it.
fn check_bundle(path: &Path) -> Result<(), ReadError> {
    match local_file::check(path, Kind::Certificates) {
        Err(e) if e.is_not_found() => Ok(()),
        other => other,
    }
}

/// Reads `--cacert FILE` (through [`local_file`], bounded like every certificate bundle): its
/// bytes when it holds at least one PEM certificate, else why not.
pub fn read_cacert(path: &Path) -> Result<Vec<u8>, String> {
    let pem = local_file::read(path, Kind::Certificates).map_err(|e| e.to_string())?;
    match reqwest::Certificate::from_pem_bundle(&pem) {
        Ok(certs) if !certs.is_empty() => Ok(pem),
        Ok(_) => Err(format!(
            "{} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
            path.display()
        )),
        Err(e) => Err(format!(
            "{} is not a PEM certificate bundle: {e}",
            path.display()
        )),
    }
}

/// `builder` trusting the certificates of a PEM bundle besides the system's roots.
pub fn trust(
    mut builder: reqwest::ClientBuilder,
    pem: &[u8],
) -> Result<reqwest::ClientBuilder, String> {
    let certs = reqwest::Certificate::from_pem_bundle(pem)
        .map_err(|e| format!("the --cacert bundle cannot be read: {e}"))?;
    for cert in certs {
        builder = builder.add_root_certificate(cert);
    }
    Ok(builder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cacert_file_must_hold_a_certificate() {
        let dir = tempfile::tempdir().expect("tempdir");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").expect("write");
        let e = read_cacert(&empty).expect_err("no certificate");
        assert!(
            e.contains("holds no PEM certificate") || e.contains("not a PEM"),
            "{e}"
        );
        let e = read_cacert(&dir.path().join("missing.pem")).expect_err("missing");
        assert!(e.starts_with("cannot read the certificate file"), "{e}");
    }
}
