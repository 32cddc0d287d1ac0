//! HTTP client: signing, timeouts, body caps, no silent redirects.
