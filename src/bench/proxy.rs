//! A reverse proxy on loopback that records every request of the suite before forwarding it,
//! so line (a) can replay the same requests with a bare client, and every answer with its
//! request, so line (b) can serve the same answers from precomputed bytes.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response};
use tokio::net::TcpListener;

use crate::bench::canned::{Answer, Table, accept, request_key};

/// Largest request body the recording proxy accepts.
pub(crate) const PROXY_MAX_BODY: usize = 2 * 1024 * 1024;
/// Headers the client sets by itself (reqwest, and the plain HTTP path as reqwest does), left
/// out of a recorded request: a replay sets them as its own client does.
pub(crate) const AUTOMATIC_HEADERS: [&str; 6] = [
    "host",
    "content-length",
    "connection",
    "accept",
    "accept-encoding",
    "user-agent",
];

/// The headers the suite's and the fuzz run's client adds to every request besides `host` and
/// `content-length` (see `service::transport`): a replay of a recorded request adds them too, so
/// that both sides of a line put the same bytes on the wire.
pub(crate) const CLIENT_ADDS: [(HeaderName, &str); 2] = [
    (header::ACCEPT, "*/*"),
    (header::ACCEPT_ENCODING, "gzip,deflate"),
];

/// Answer headers that belong to the connection, set again by whoever sends the answer.
const HOP_HEADERS: [HeaderName; 4] = [
    header::CONTENT_LENGTH,
    header::TRANSFER_ENCODING,
    header::CONNECTION,
    header::DATE,
];

/// One request as the suite sent it, for a replay.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) body: Bytes,
}

/// What the recording proxy saw.
#[derive(Debug, Default)]
pub(crate) struct Log {
    pub(crate) requests: Vec<Recorded>,
    pub(crate) response_bytes: u64,
    /// Each answered request's key ([`request_key`]) and its answer.
    pub(crate) answers: Vec<(u64, Answer)>,
}

impl Log {
    /// The answers as a table for the precomputed-bytes server (unknown requests get `404`).
    pub(crate) fn table(&self) -> Table {
        let mut table = Table::fixed(Answer {
            status: StatusCode::NOT_FOUND,
            headers: vec![],
            body: Bytes::new(),
        });
        for (key, answer) in &self.answers {
            table.insert(*key, answer.clone());
        }
        table
    }
}

#[derive(Clone)]
pub(crate) struct Recorder {
    upstream: String,
    http: reqwest::Client,
    log: Arc<Mutex<Log>>,
}

/// A reverse proxy on loopback that records every request before forwarding it unchanged.
pub(crate) struct Proxy {
    pub(crate) base_url: String,
    pub(crate) log: Arc<Mutex<Log>>,
    pub(crate) task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    pub(crate) async fn start(upstream: &str) -> Result<Proxy, String> {
        let http = crate::tls::client_builder()
            .no_proxy()
            .no_gzip()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build the proxy's client: {e}"))?;
        let log = Arc::new(Mutex::new(Log::default()));
        let recorder = Recorder {
            upstream: upstream.to_string(),
            http,
            log: Arc::clone(&log),
        };
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
            .await
            .map_err(|e| format!("cannot bind the recording proxy: {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot bind the recording proxy: {e}"))?;
        let task = tokio::spawn(accept(listener, move |req| forward(recorder.clone(), req)));
        Ok(Proxy {
            base_url: format!("http://{addr}"),
            log,
            task,
        })
    }

    /// Takes what was recorded since the last call.
    pub(crate) fn take(&self) -> Log {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut *log)
    }

    pub(crate) fn stop(self) {
        self.task.abort();
    }
}

pub(crate) async fn forward(rec: Recorder, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let Ok(body) = Limited::new(body, PROXY_MAX_BODY).collect().await else {
        return status_only(StatusCode::PAYLOAD_TOO_LARGE);
    };
    let body = body.to_bytes();
    let path = parts.uri.path_and_query().map_or_else(
        || parts.uri.path().to_string(),
        |pq| pq.as_str().to_string(),
    );
    let headers: Vec<(HeaderName, HeaderValue)> = parts
        .headers
        .iter()
        .filter(|(k, _)| !AUTOMATIC_HEADERS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let key = request_key(
        &parts.method,
        &path,
        parts
            .headers
            .get(header::AUTHORIZATION)
            .map(HeaderValue::as_bytes),
        &body,
    );
    let mut builder = rec
        .http
        .request(parts.method.clone(), format!("{}{path}", rec.upstream))
        .body(body.clone());
    for (k, v) in &headers {
        builder = builder.header(k, v);
    }
    if let Some(v) = parts.headers.get(header::ACCEPT_ENCODING) {
        builder = builder.header(header::ACCEPT_ENCODING, v);
    }
    rec.log
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .requests
        .push(Recorded {
            method: parts.method,
            path,
            headers,
            body,
        });
    let Ok(upstream) = builder.send().await else {
        return status_only(StatusCode::BAD_GATEWAY);
    };
    let status = upstream.status();
    let upstream_headers = upstream.headers().clone();
    let Ok(bytes) = upstream.bytes().await else {
        return status_only(StatusCode::BAD_GATEWAY);
    };
    {
        let mut log = rec.log.lock().unwrap_or_else(|p| p.into_inner());
        log.response_bytes += bytes.len() as u64;
        log.answers.push((
            key,
            Answer {
                status,
                headers: upstream_headers
                    .iter()
                    .filter(|(k, _)| !HOP_HEADERS.contains(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                body: bytes.clone(),
            },
        ));
    }
    let mut response = Response::new(Full::new(bytes));
    *response.status_mut() = status;
    for (k, v) in &upstream_headers {
        if !HOP_HEADERS.contains(k) {
            response.headers_mut().append(k.clone(), v.clone());
        }
    }
    response
}

pub(crate) fn status_only(status: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = status;
    response
}
