//! The reference server's HTTP types: one boxed body for requests and responses (a whole
//! answer, an empty one, or a stream for the transport faults), on hyper alone.

use std::convert::Infallible;

use bytes::{Bytes, BytesMut};
use futures_util::{Stream, TryStreamExt};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Empty, Full, StreamBody};
use hyper::body::Frame;

/// What a body may fail with (the client went away, or a limit was passed).
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A request or response body.
pub(crate) type Body = UnsyncBoxBody<Bytes, BoxError>;

/// A request as the handlers see it.
pub(crate) type Request = http::Request<Body>;

/// A response as the handlers make it.
pub(crate) type Response = http::Response<Body>;

/// A body of these bytes.
pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never: Infallible| match never {})
        .boxed_unsync()
}

/// A body of no bytes.
pub(crate) fn empty() -> Body {
    Empty::new()
        .map_err(|never: Infallible| match never {})
        .boxed_unsync()
}

/// A body sent chunk by chunk as the stream yields them.
pub(crate) fn streamed(
    chunks: impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static,
) -> Body {
    StreamBody::new(
        chunks
            .map_ok(Frame::data)
            .map_err(|never: Infallible| match never {}),
    )
    .boxed_unsync()
}

/// The whole body, or `None` past `limit` bytes (or when the client goes away).
///
/// Read frame by frame rather than through `http_body_util::Limited`: its error conversion
/// inside the handler's future makes rustc unable to prove that future `Send`
/// (rust-lang/rust#102211).
pub(crate) async fn to_bytes(mut body: Body, limit: usize) -> Option<Bytes> {
    let mut out = BytesMut::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.ok()?.into_data() {
            if out.len() + data.len() > limit {
                return None;
            }
            out.extend_from_slice(&data);
        }
    }
    Some(out.freeze())
}
