//! The record of one HTTP exchange.
//!
//! When the record is built, the value of each credential header (the Authorization
//! signature, a cookie, a header a case marked secret) is registered with the run's redactor
//! (`crate::redact`) and replaced; every other text is kept as sent or received, and the body
//! excerpt holds bytes that show nothing ([`Excerpt`]). Sinks take only sealed records
//! ([`crate::verdict::sealed`]): [`Exchange::seal`] makes every text scrubbed, escaped and
//! capped, so no sink, snapshot or log can see a secret that a service echoed back, and an
//! exchange that nothing shows costs no scrub.

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

/// Bytes of a response body the reports show.
pub const EXCERPT_BYTES: usize = 2048;

/// Bodies up to this size are shared by an unsealed excerpt rather than copied.
const SHARED_UP_TO: usize = 256 * 1024;

/// The first bytes of a response body as the reports show them.
///
/// The client keeps only the bytes the excerpt needs (its [`EXCERPT_BYTES`] and the room a
/// secret crossing its end may take); their text is made by the run's redactor when the
/// exchange is sealed: cut where no part of a secret is left, scrubbed, escaped. So an
/// exchange that no report keeps (a passing probe of the fuzzer, a page past a case's cap)
/// costs no scrub, and an excerpt not sealed shows nothing: neither `Debug` nor `Serialize`
/// nor [`Excerpt::as_str`] gives its bytes.
#[derive(Clone)]
pub struct Excerpt(ExcerptState);

#[derive(Clone)]
enum ExcerptState {
    /// Bytes of the body, not yet cut or scrubbed; `whole` when they are all of it.
    Bytes { bytes: bytes::Bytes, whole: bool },
    /// Text: cut and scrubbed, then escaped once sealed.
    Text(String),
}

impl Excerpt {
    /// The excerpt of `body` (`whole` when it is all of the body: not when a size limit or a
    /// transport error cut it short), keeping the bytes `redactor` may need to judge its end.
    pub fn of(body: &[u8], whole: bool, redactor: &Redactor) -> Excerpt {
        let kept = Excerpt::kept(body.len(), redactor);
        Excerpt(ExcerptState::Bytes {
            bytes: bytes::Bytes::copy_from_slice(&body[..kept]),
            whole: whole && kept == body.len(),
        })
    }

    /// [`Excerpt::of`] a whole body already shared: a small one is kept by reference (no
    /// copy), a large one by a copy of what the excerpt needs (so that a kept exchange does
    /// not hold a large body).
    pub fn of_shared(body: &bytes::Bytes, redactor: &Redactor) -> Excerpt {
        if body.len() > SHARED_UP_TO {
            return Excerpt::of(body, true, redactor);
        }
        let kept = Excerpt::kept(body.len(), redactor);
        Excerpt(ExcerptState::Bytes {
            bytes: body.slice(..kept),
            whole: kept == body.len(),
        })
    }

    /// How many of `len` bytes of a body an excerpt keeps.
    fn kept(len: usize, redactor: &Redactor) -> usize {
        len.min(EXCERPT_BYTES.saturating_add(redactor.excerpt_room()))
    }

    /// An excerpt whose text is already cut (sealing still scrubs and escapes it).
    pub fn text(text: impl Into<String>) -> Excerpt {
        Excerpt(ExcerptState::Text(text.into()))
    }

    /// Cuts, scrubs and escapes the bytes into text ([`Redactor::show_excerpt`]); a text made
    /// as text is scrubbed and escaped ([`Redactor::show`]).
    pub fn seal(&mut self, redactor: &Redactor) {
        let shown = match &self.0 {
            ExcerptState::Bytes { bytes, whole } => {
                redactor.show_excerpt(bytes, EXCERPT_BYTES, *whole)
            }
            ExcerptState::Text(text) => redactor.show(text, usize::MAX),
        };
        self.0 = ExcerptState::Text(shown.into_string());
    }

    /// The text once sealed (or made as text); empty while the excerpt holds bytes.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            ExcerptState::Text(text) => text,
            ExcerptState::Bytes { .. } => "",
        }
    }
}

impl std::fmt::Debug for Excerpt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            ExcerptState::Text(text) => f.debug_tuple("Excerpt").field(text).finish(),
            ExcerptState::Bytes { bytes, .. } => {
                write!(f, "Excerpt(<{} bytes, not sealed>)", bytes.len())
            }
        }
    }
}

impl Serialize for Excerpt {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The request as sent, credential header values already replaced (the rest is scrubbed when
/// the exchange is sealed). `Debug` shows its shape, never its texts.
#[derive(Clone, Serialize)]
pub struct RequestRecord {
    /// Always POST for this interface.
    pub method: String,
    /// Full URL (scrubbed once sealed).
    pub url: String,
    /// Headers sent: the Authorization signature and every credential header (by name, or
    /// marked in the case's `secret-headers`) redacted, other values scrubbed once sealed.
    pub headers: Vec<(String, String)>,
    /// Body text as sent (scrubbed and capped once sealed).
    pub body: String,
}

/// The response as received. `Debug` shows its shape, never its texts.
#[derive(Clone, Serialize)]
pub struct ResponseRecord {
    /// HTTP status code.
    pub status: u16,
    /// Response headers: credential headers redacted by name, every other value scrubbed once
    /// sealed.
    pub headers: Vec<(String, String)>,
    /// First bytes of the body, for reports (text once the exchange is sealed).
    pub body_excerpt: Excerpt,
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

/// The names of `headers`, without their values (which may be unsealed text from outside).
fn header_names(headers: &[(String, String)]) -> Vec<&str> {
    headers.iter().map(|(name, _)| name.as_str()).collect()
}

// A record keeps what was sent and received until it is sealed, so `Debug` (a panic message,
// a stray `{:?}`) shows no value of it: only what it is made of.
impl std::fmt::Debug for RequestRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestRecord")
            .field("method", &self.method)
            .field("url_bytes", &self.url.len())
            .field("headers", &header_names(&self.headers))
            .field("body_bytes", &self.body.len())
            .finish()
    }
}

impl std::fmt::Debug for ResponseRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseRecord")
            .field("status", &self.status)
            .field("headers", &header_names(&self.headers))
            .field("body_excerpt", &self.body_excerpt)
            .field("body_len", &self.body_len)
            .finish()
    }
}

fn serialize_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl Exchange {
    /// Makes every text of the record [`Shown`](crate::redact::Shown) text with the run's
    /// `redactor`: scrubbed, then escaped, then capped, the request's values included (a
    /// cursor or a header value is the service's too). The body excerpt is cut and scrubbed
    /// here, then escaped ([`Excerpt::seal`]).
    pub fn seal(&mut self, redactor: &Redactor) {
        let request = &mut self.request;
        request.url = redactor.show(&request.url, URL_MAX_BYTES).into_string();
        request.body = redactor
            .show(&request.body, REQUEST_BODY_MAX_BYTES)
            .into_string();
        seal_headers(&mut request.headers, redactor);
        if let Some(response) = &mut self.response {
            // The service's headers: what it echoes may be cut over two of them.
            redact_split_secrets(&mut response.headers, redactor);
            seal_headers(&mut response.headers, redactor);
            response.body_excerpt.seal(redactor);
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

/// A secret cut in two and echoed over adjacent header values (`X-Debug-A: mallcheck`,
/// `X-Debug-B: -demo-key`, h27c L0) is no secret in either value alone: the values are searched
/// once more end to end, and each value a secret spans part of is redacted whole.
fn redact_split_secrets(headers: &mut [(String, String)], redactor: &Redactor) {
    if headers.len() < 2 {
        return;
    }
    let mut joined = String::new();
    let mut bounds = Vec::with_capacity(headers.len());
    for (_, value) in headers.iter() {
        let start = joined.len();
        joined.push_str(value);
        bounds.push(start..joined.len());
    }
    for found in redactor.secret_ranges(&joined) {
        let spanned: Vec<usize> = bounds
            .iter()
            .enumerate()
            .filter(|(_, b)| b.start < found.end && found.start < b.end)
            .map(|(i, _)| i)
            .collect();
        // Within one value, its own scrub finds it.
        if spanned.len() > 1 {
            for i in spanned {
                headers[i].1 = crate::redact::REDACTED.to_string();
            }
        }
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

#[cfg(test)]
mod debug_tests {
    use super::*;

    #[test]
    fn debug_of_a_record_shows_no_text_from_outside() {
        let exchange = Exchange {
            request: RequestRecord {
                method: "POST".to_string(),
                url: "http://h/secret-in-url".to_string(),
                headers: vec![("X-Echo".to_string(), "secret-in-header".to_string())],
                body: "secret-in-body".to_string(),
            },
            response: Some(ResponseRecord {
                status: 200,
                headers: vec![("X-Back".to_string(), "secret-in-answer".to_string())],
                body_excerpt: Excerpt::of(b"secret-in-excerpt", true, &Redactor::new()),
                body_len: 17,
            }),
            transport_error: None,
            duration: Duration::ZERO,
            shows_finding: false,
        };
        let shown = format!("{exchange:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(
            shown.contains("X-Echo") && shown.contains("X-Back"),
            "{shown}"
        );
    }

    /// h27c L0: the key cut over two headers of the answer is redacted in both; a header
    /// that holds no part of it is kept.
    #[test]
    fn a_key_cut_over_two_response_headers_is_redacted() {
        let redactor = Redactor::new();
        redactor.add_secret("mallcheck-demo-key");
        let header = |n: &str, v: &str| (n.to_string(), v.to_string());
        let mut exchange = Exchange {
            request: RequestRecord {
                method: "POST".to_string(),
                url: "http://h/".to_string(),
                headers: vec![],
                body: String::new(),
            },
            response: Some(ResponseRecord {
                status: 200,
                headers: vec![
                    header("X-Trace", "abc123"),
                    header("X-Debug-A", "mallcheck"),
                    header("X-Debug-B", "-demo-key"),
                    header("Content-Type", "application/json"),
                ],
                body_excerpt: Excerpt::of(b"{}", true, &redactor),
                body_len: 2,
            }),
            transport_error: None,
            duration: Duration::ZERO,
            shows_finding: false,
        };
        exchange.seal(&redactor);
        let headers = &exchange.response.as_ref().unwrap().headers;
        let values: Vec<&str> = headers.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(
            values,
            ["abc123", "<redacted>", "<redacted>", "application/json"]
        );
    }
}
