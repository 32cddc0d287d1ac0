//! The HTTP client's TLS setup: rustls with the `ring` provider, chosen over reqwest's default
//! `aws-lc-rs` because `aws-lc-sys` is a long C build that doubled a fresh build's time.

/// A reqwest client builder with the process-wide rustls provider installed.
pub fn client_builder() -> reqwest::ClientBuilder {
    // Installing twice is harmless: the second call reports the provider already set.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
}
