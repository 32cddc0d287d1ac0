//! The record of one HTTP exchange, redacted and truncated when it is built.
//!
//! Both sides are scrubbed by the run's redactor (`crate::redact`) before a record exists, so
//! no sink, snapshot or log can see a secret that a service echoed back.

use std::time::Duration;

use serde::Serialize;

use crate::redact::Redactor;

/// Longest URL shown, in bytes.
pub const URL_MAX_BYTES: usize = 2 * 1024;
/// Longest header value shown, in bytes.
pub const HEADER_MAX_BYTES: usize = 1024;
/// Longest request body shown, in bytes (an 8 MB cursor the service gave comes back in the
/// next request's body).
pub const REQUEST_BODY_MAX_BYTES: usize = 16 * 1024;
/// Longest transport error shown, in bytes.
pub const ERROR_MAX_BYTES: usize = 4 * 1024;

/// The request as sent, with secrets already redacted.
#[derive(Debug, Clone, Serialize)]
pub struct RequestRecord {
    /// Always POST for this interface.
    pub method: String,
    /// Full URL, scrubbed.
    pub url: String,
    /// Headers sent: the Authorization signature and every credential header (by name, or
    /// marked in the case's `secret-headers`) redacted, other values scrubbed.
    pub headers: Vec<(String, String)>,
    /// Body text as sent, scrubbed (truncated for display only by sinks).
    pub body: String,
}

/// The response as received.
#[derive(Debug, Clone, Serialize)]
pub struct ResponseRecord {
    /// HTTP status code.
    pub status: u16,
    /// Response headers: credential headers redacted by name, every value scrubbed.
    pub headers: Vec<(String, String)>,
    /// First bytes of the body, lossily decoded and scrubbed, for reports.
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
    /// A finding of the case shows in this exchange (the page of a walk holding a duplicate,
    /// an oversize page, a record that fails its checks): the reports show it as the case's
    /// example rather than the first page, and the runner keeps it past its cap.
    #[serde(skip)]
    pub shows_finding: bool,
}

fn serialize_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl Exchange {
    /// Makes every text of the record [`Shown`](crate::redact::Shown) text with the run's
    /// `redactor`: scrubbed, then escaped, then capped, the request's values included (a
    /// cursor or a header value is the service's too). The body excerpt is already cut, and
    /// scrubbed before it was; it is escaped here.
    pub fn seal(&mut self, redactor: &Redactor) {
        let request = &mut self.request;
        request.url = redactor.show(&request.url, URL_MAX_BYTES).into_string();
        request.body = redactor
            .show(&request.body, REQUEST_BODY_MAX_BYTES)
            .into_string();
        seal_headers(&mut request.headers, redactor);
        if let Some(response) = &mut self.response {
            seal_headers(&mut response.headers, redactor);
            response.body_excerpt = redactor
                .show(&response.body_excerpt, usize::MAX)
                .into_string();
        }
        if let Some(error) = &mut self.transport_error {
            *error = redactor.show(error, ERROR_MAX_BYTES).into_string();
        }
    }
}

fn seal_headers(headers: &mut [(String, String)], redactor: &Redactor) {
    for (name, value) in headers {
        *name = redactor.show(name, HEADER_MAX_BYTES).into_string();
        *value = redactor.show(value, HEADER_MAX_BYTES).into_string();
    }
}

impl RequestRecord {
    /// A runnable curl command for the request (the Authorization signature and credential
    /// headers stay redacted).
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
