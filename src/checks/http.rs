//! HTTP-level checks: server errors, the case's expected status, the JSON content type.

use reqwest::header::{CONTENT_TYPE, HeaderMap};

use crate::case::model::ExpectedStatus;
use crate::spec::catalog;
use crate::verdict::event::Finding;

/// A 5xx answer to a well-formed request means the service is broken (§7 shows no 5xx).
pub fn server_error(status: u16) -> Vec<Finding> {
    if (500..600).contains(&status) {
        vec![Finding::new(
            &catalog::HTTP_SERVER_ERROR,
            "",
            "a status below 500",
            format!("HTTP {status}"),
        )]
    } else {
        vec![]
    }
}

/// The status the case expects.
pub fn expected_status(status: u16, expected: ExpectedStatus) -> Vec<Finding> {
    if expected.admits(status) {
        vec![]
    } else {
        vec![Finding::new(
            &catalog::HTTP_STATUS,
            "",
            format!("HTTP {expected}"),
            format!("HTTP {status}"),
        )]
    }
}

/// A JSON body should be labelled as JSON; the spec only shows JSON-over-HTTP, so this is
/// observed severity.
pub fn content_type(headers: &HeaderMap) -> Vec<Finding> {
    let value = headers
        .get(CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).to_ascii_lowercase());
    let ok = value.as_deref().is_some_and(|v| {
        let essence = v.split(';').next().unwrap_or("").trim();
        essence == "application/json" || essence.ends_with("+json")
    });
    if ok {
        vec![]
    } else {
        vec![Finding::new(
            &catalog::RESPONSE_CONTENT_TYPE,
            "",
            "Content-Type: application/json",
            value.unwrap_or_else(|| "no Content-Type".to_string()),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn five_hundreds_are_findings_and_four_hundreds_are_not() {
        assert_eq!(server_error(503).len(), 1);
        assert!(server_error(401).is_empty());
    }

    #[test]
    fn content_type_accepts_charset_and_rejects_html() {
        let mut h = HeaderMap::new();
        h.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        );
        assert!(content_type(&h).is_empty());
        h.insert(CONTENT_TYPE, HeaderValue::from_static("text/html"));
        assert_eq!(content_type(&h)[0].check.id, "response.content-type");
        assert_eq!(content_type(&HeaderMap::new()).len(), 1);
    }
}
