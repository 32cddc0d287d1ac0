//! The record of one HTTP exchange, redacted and truncated when it is built.

use std::time::Duration;

use serde::Serialize;

/// The request as sent, with secrets already redacted.
#[derive(Debug, Clone, Serialize)]
pub struct RequestRecord {
    /// Always POST for this interface.
    pub method: String,
    /// Full URL.
    pub url: String,
    /// Headers sent; the Authorization value is redacted.
    pub headers: Vec<(String, String)>,
    /// Body text as sent (truncated for display only by sinks).
    pub body: String,
}

/// The response as received.
#[derive(Debug, Clone, Serialize)]
pub struct ResponseRecord {
    /// HTTP status code.
    pub status: u16,
    /// Response headers.
    pub headers: Vec<(String, String)>,
    /// First bytes of the body, lossily decoded, for reports.
    pub body_excerpt: String,
    /// Body length in bytes (after decompression).
    pub body_len: usize,
}

/// One request and what came back.
#[derive(Debug, Clone, Serialize)]
pub struct Exchange {
    /// What was sent.
    pub request: RequestRecord,
    /// What came back, if anything did.
    pub response: Option<ResponseRecord>,
    /// Transport problem, if any (already rendered).
    pub transport_error: Option<String>,
    /// Time from sending to the end of the body.
    #[serde(serialize_with = "serialize_secs")]
    pub duration: Duration,
}

fn serialize_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl RequestRecord {
    /// A runnable curl command for the request (the Authorization value stays redacted).
    pub fn to_curl(&self) -> String {
        let mut out = format!("curl -sS -X {} {}", self.method, shell_quote(&self.url));
        for (k, v) in &self.headers {
            out.push_str(&format!(" -H {}", shell_quote(&format!("{k}: {v}"))));
        }
        if !self.body.is_empty() {
            out.push_str(&format!(" --data-raw {}", shell_quote(&self.body)));
        }
        out
    }
}

fn shell_quote(s: &str) -> String {
    shell_escape::unix::escape(s.into()).into_owned()
}
