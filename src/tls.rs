//! The HTTP client's TLS setup: rustls with the `ring` provider, chosen over reqwest's default
//! `aws-lc-rs` because `aws-lc-sys` is a long C build that doubled a fresh build's time.

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
