//! Response bodies on the wire: JSON encoding (with the gzip variation) and the transport faults
//! that break framing, encoding, size or timing.

use std::convert::Infallible;
use std::io::Write;
use std::time::Duration;

use bytes::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;
use futures_util::StreamExt;
use futures_util::stream;
use http::{HeaderValue, StatusCode, header};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::server::body::{self, Body, Response};
use crate::server::faults::{BELOW_LONG_FLOAT, BELOW_LONG_LITERAL, Fault};

/// `Content-Type` of every JSON answer.
const JSON_TYPE: &str = "application/json;charset=UTF-8";

/// How long the slow and stalling faults wait (past any sane client timeout).
pub(crate) const STALL: Duration = Duration::from_secs(30);

/// Size of the `huge-body` answer.
const HUGE_BODY_BYTES: usize = 20 * 1024 * 1024;

/// Nesting depth of the `deep-nesting` answer.
const NESTING_DEPTH: usize = 100_000;

/// A stock framework's answer to an unhandled exception: HTTP 500 in plain text, after which
/// the connection is dropped at the client's next request without `Connection: close`.
pub(crate) fn crash_and_close() -> Response {
    let mut response = with_type(
        StatusCode::INTERNAL_SERVER_ERROR,
        "text/plain; charset=utf-8",
        body::full("Internal Server Error"),
    );
    response
        .extensions_mut()
        .insert(crate::server::conn::CloseAfterResponse);
    response
}

/// Sleeps for `duration`, or less if the server is shutting down.
pub(crate) async fn pause(shutdown: &watch::Receiver<bool>, duration: Duration) {
    let mut rx = shutdown.clone();
    tokio::select! {
        () = tokio::time::sleep(duration) => {}
        _ = rx.wait_for(|&stop| stop) => {}
    }
}

/// The error envelope every failure answers with.
pub(crate) fn error_envelope(code: &str, msg: &str) -> Value {
    json!({"success": false, "code": code, "msg": msg, "data": null})
}

/// Encodes a JSON answer, applying the encoding faults (truncation, invalid UTF-8, a stalled
/// body) and the gzip variation.
pub(crate) fn json_response(
    status: StatusCode,
    value: &Value,
    fault: Option<Fault>,
    accepts_gzip: bool,
    shutdown: &watch::Receiver<bool>,
) -> Response {
    let mut bytes = serde_json::to_vec(value).expect("a serde_json::Value always serializes");
    match fault {
        Some(Fault::JsonTruncated) => bytes.truncate(bytes.len() / 2),
        Some(Fault::InvalidUtf8) => match bytes.iter().position(|&b| b == b'"') {
            Some(i) => drop(bytes.splice(i + 1..i + 1, [0xff, 0xfe, 0xfd])),
            None => bytes = b"[\"\xff\xfe\xfd\"]".to_vec(),
        },
        Some(Fault::StalledBody) => return stalled(status, Bytes::from(bytes), shutdown.clone()),
        Some(Fault::OrderTotalNumBelowLong) => {
            // serde_json writes the float in exponent form; the fault sends the exact integer.
            let float = serde_json::to_string(&BELOW_LONG_FLOAT).unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes).replace(&float, BELOW_LONG_LITERAL);
            bytes = text.into_bytes();
        }
        Some(other) => bytes = other.respell(bytes),
        None => {}
    }
    let mut gzip = false;
    if fault == Some(Fault::Gzip) && accepts_gzip {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        if enc.write_all(&bytes).is_ok()
            && let Ok(compressed) = enc.finish()
        {
            bytes = compressed;
            gzip = true;
        }
    }
    let mut resp = with_type(status, JSON_TYPE, body::full(bytes));
    if gzip {
        let headers = resp.headers_mut();
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    resp
}

/// Half of the body, then a pause of [`STALL`], then the rest; Content-Length is the full size.
fn stalled(status: StatusCode, bytes: Bytes, shutdown: watch::Receiver<bool>) -> Response {
    let total = bytes.len();
    let first = bytes.slice(..total / 2);
    let rest = bytes.slice(total / 2..);
    let tail = stream::once(async move {
        pause(&shutdown, STALL).await;
        Ok::<_, Infallible>(rest)
    });
    let body = body::streamed(stream::iter([Ok::<_, Infallible>(first)]).chain(tail));
    let mut resp = with_type(status, JSON_TYPE, body);
    resp.headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(total));
    resp
}

/// A well-formed JSON envelope of 20 MiB, streamed in chunks with its Content-Length.
pub(crate) fn huge_body() -> Response {
    const CHUNK: usize = 64 * 1024;
    let head = Bytes::from_static(
        "{\"success\":true,\"code\":\"0000\",\"msg\":\"处理成功\",\"data\":[],\"padding\":\""
            .as_bytes(),
    );
    let tail = Bytes::from_static(b"\"}");
    let pad = Bytes::from(vec![b'x'; CHUNK]);
    let chunks = (HUGE_BODY_BYTES - head.len() - tail.len()).div_ceil(CHUNK);
    let padding = chunks * CHUNK;
    let parts = stream::iter(
        std::iter::once(head.clone())
            .chain(std::iter::repeat_n(pad, chunks))
            .chain(std::iter::once(tail.clone()))
            .map(Ok::<_, Infallible>),
    );
    let mut resp = with_type(StatusCode::OK, JSON_TYPE, body::streamed(parts));
    let total = head.len() + padding + tail.len();
    resp.headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(total));
    resp
}

/// 100,000 nested JSON arrays.
pub(crate) fn deep_nesting() -> Response {
    let mut body = Vec::with_capacity(NESTING_DEPTH * 2);
    body.resize(NESTING_DEPTH, b'[');
    body.resize(NESTING_DEPTH * 2, b']');
    with_type(StatusCode::OK, JSON_TYPE, body::full(body))
}

/// An HTML page with the given status (the `http-500-html` and `html-200` faults).
pub(crate) fn html(status: StatusCode) -> Response {
    let title = match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    };
    let page = format!(
        "<!DOCTYPE html>\n<html><head><title>{title}</title></head>\
         <body><h1>{title}</h1><p>nginx</p></body></html>\n"
    );
    with_type(status, "text/html; charset=utf-8", body::full(page))
}

/// A `302 Found` to `location`.
pub(crate) fn redirect(location: &str) -> Response {
    let mut resp = with_type(
        StatusCode::FOUND,
        "text/plain; charset=utf-8",
        body::empty(),
    );
    if let Ok(value) = HeaderValue::from_str(location) {
        resp.headers_mut().insert(header::LOCATION, value);
    }
    resp
}

fn with_type(status: StatusCode, content_type: &'static str, body: Body) -> Response {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx() -> watch::Receiver<bool> {
        watch::channel(false).1
    }

    async fn body_of(resp: Response) -> Vec<u8> {
        body::to_bytes(resp.into_body(), 64 * 1024 * 1024)
            .await
            .expect("a whole body")
            .to_vec()
    }

    #[tokio::test]
    async fn truncated_json_does_not_parse() {
        let v = json!({"success": true, "data": [1, 2, 3]});
        let resp = json_response(StatusCode::OK, &v, Some(Fault::JsonTruncated), false, &rx());
        let body = body_of(resp).await;
        assert!(serde_json::from_slice::<Value>(&body).is_err());
    }

    #[tokio::test]
    async fn invalid_utf8_is_not_utf8() {
        for v in [json!({"msg": "ok"}), json!([])] {
            let resp = json_response(StatusCode::OK, &v, Some(Fault::InvalidUtf8), false, &rx());
            assert!(std::str::from_utf8(&body_of(resp).await).is_err());
        }
    }

    #[tokio::test]
    async fn gzip_only_when_accepted() {
        let v = json!({"msg": "处理成功"});
        let plain = json_response(StatusCode::OK, &v, Some(Fault::Gzip), false, &rx());
        assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
        let zipped = json_response(StatusCode::OK, &v, Some(Fault::Gzip), true, &rx());
        assert_eq!(zipped.headers()[header::CONTENT_ENCODING], "gzip");
        let raw = body_of(zipped).await;
        let mut out = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&raw[..]), &mut out)
            .unwrap();
        assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), v);
    }

    #[tokio::test]
    async fn huge_body_is_twenty_mebibytes_of_json() {
        let resp = huge_body();
        let declared: usize = resp.headers()[header::CONTENT_LENGTH]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        let body = body_of(resp).await;
        assert_eq!(body.len(), declared);
        assert!(body.len() >= HUGE_BODY_BYTES);
        assert!(serde_json::from_slice::<Value>(&body).is_ok());
    }

    #[tokio::test]
    async fn deep_nesting_is_balanced() {
        let body = body_of(deep_nesting()).await;
        assert_eq!(body.len(), NESTING_DEPTH * 2);
        assert_eq!(body.first(), Some(&b'['));
        assert_eq!(body.last(), Some(&b']'));
    }
}
