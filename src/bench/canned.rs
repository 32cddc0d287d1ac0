//! A loopback HTTP/1.1 server that answers from precomputed bytes: the server of the field's
//! limit in line (b). Each answer is looked up in a table keyed by the request (method, path,
//! `Authorization` and body, hashed), so the server does no work of its own beyond reading the
//! request and writing bytes it already holds; what the load generator and the fuzzer measure
//! against it is the client and the wire, not the server.
//!
//! [`serve_in_background`] starts one on its own thread answering every request with the same
//! bytes, for tests that need a loopback server with a fixed (or hostile) body.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// Largest request body the server reads (larger ones are answered 413).
const MAX_REQUEST_BODY: usize = 2 * 1024 * 1024;

/// One precomputed answer: status, headers (`Content-Length` is the server's) and body.
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status.
    pub status: StatusCode,
    /// Headers sent as they are (e.g. `Content-Type`, `Content-Encoding`).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The body, sent as it is (never recompressed or re-encoded).
    pub body: Bytes,
}

impl Answer {
    /// A `200 OK` JSON answer.
    pub fn json(body: impl Into<Bytes>) -> Answer {
        Answer {
            status: StatusCode::OK,
            headers: vec![(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body: body.into(),
        }
    }

    fn response(&self) -> Response<Full<Bytes>> {
        let mut response = Response::new(Full::new(self.body.clone()));
        *response.status_mut() = self.status;
        for (k, v) in &self.headers {
            response.headers_mut().append(k.clone(), v.clone());
        }
        response
    }
}

/// The key of a request in a [`Table`]: a hash of its method, path (with query),
/// `Authorization` value and body. Only the hash is kept, never the header itself.
pub fn request_key(method: &Method, path: &str, authorization: Option<&[u8]>, body: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    method.as_str().hash(&mut h);
    path.hash(&mut h);
    authorization.hash(&mut h);
    body.hash(&mut h);
    h.finish()
}

/// Answers by request key, and one answer for any request not in the table.
#[derive(Debug, Clone)]
pub struct Table {
    answers: HashMap<u64, Answer>,
    fallback: Answer,
}

impl Table {
    /// A table that answers every request with `answer`.
    pub fn fixed(answer: Answer) -> Table {
        Table {
            answers: HashMap::new(),
            fallback: answer,
        }
    }

    /// Adds (or replaces) the answer to the request of `key`.
    pub fn insert(&mut self, key: u64, answer: Answer) {
        self.answers.insert(key, answer);
    }

    /// Distinct requests in the table.
    pub fn len(&self) -> usize {
        self.answers.len()
    }

    /// Whether only the fallback answers.
    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }

    /// The answer to a request and whether it was in the table.
    pub fn lookup(&self, key: u64) -> (&Answer, bool) {
        match self.answers.get(&key) {
            Some(a) => (a, true),
            None => (&self.fallback, self.answers.is_empty()),
        }
    }
}

/// Requests served and requests answered by the fallback of a non-empty table.
#[derive(Debug, Default)]
pub struct Counters {
    served: AtomicU64,
    misses: AtomicU64,
}

impl Counters {
    /// Requests answered so far.
    pub fn served(&self) -> u64 {
        self.served.load(Ordering::Relaxed)
    }

    /// Requests that were not in a non-empty table (answered by its fallback).
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }
}

/// A running precomputed-bytes server on 127.0.0.1; stops when dropped.
pub struct CannedServer {
    addr: SocketAddr,
    counters: Arc<Counters>,
    task: tokio::task::JoinHandle<()>,
}

impl CannedServer {
    /// Binds an ephemeral loopback port and serves `table` on the current runtime.
    pub async fn start(table: Table) -> std::io::Result<CannedServer> {
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await?;
        let addr = listener.local_addr()?;
        let counters = Arc::new(Counters::default());
        let (table, served) = (Arc::new(table), Arc::clone(&counters));
        let task = tokio::spawn(accept(listener, move |req| {
            let (table, counters) = (Arc::clone(&table), Arc::clone(&served));
            async move { answer(req, &table, &counters).await }
        }));
        Ok(CannedServer {
            addr,
            counters,
            task,
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// What it served so far.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
}

impl Drop for CannedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves HTTP/1.1 on every connection `listener` accepts, each request answered by `handler`
/// (the bench's servers: no limits, no timeouts, loopback only).
pub(crate) async fn accept<F, A>(listener: TcpListener, handler: F)
where
    F: Fn(Request<Incoming>) -> A + Clone + Send + 'static,
    A: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let handler = handler.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let answer = handler(req);
                async move { Ok::<_, Infallible>(answer.await) }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn answer(
    req: Request<Incoming>,
    table: &Table,
    counters: &Counters,
) -> Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let body = match http_body_util::Limited::new(body, MAX_REQUEST_BODY)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            let mut response = Response::new(Full::new(Bytes::new()));
            *response.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
            return response;
        }
    };
    let path = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path(), |pq| pq.as_str());
    let key = request_key(
        &parts.method,
        path,
        parts
            .headers
            .get(header::AUTHORIZATION)
            .map(HeaderValue::as_bytes),
        &body,
    );
    let (answer, found) = table.lookup(key);
    counters.served.fetch_add(1, Ordering::Relaxed);
    if !found {
        counters.misses.fetch_add(1, Ordering::Relaxed);
    }
    answer.response()
}

/// Starts a precomputed-bytes server on its own thread (with its own runtime) that answers
/// every request `200 OK` with `body` as JSON, for as long as the process lives; returns its
/// base URL. For tests that drive the real binary against a loopback server.
pub fn serve_in_background(body: impl Into<Bytes>) -> std::io::Result<String> {
    let table = Table::fixed(Answer::json(body));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let server = runtime.block_on(CannedServer::start(table))?;
    let base_url = server.base_url();
    std::thread::spawn(move || {
        runtime.block_on(async move {
            let _server = server;
            std::future::pending::<()>().await;
        });
    });
    Ok(base_url)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn post(base_url: &str, path: &str, auth: &str, body: &'static str) -> (u16, String) {
        let response = crate::tls::client_builder()
            .no_proxy()
            .build()
            .expect("a client")
            .post(format!("{base_url}{path}"))
            .header(header::AUTHORIZATION, auth)
            .body(body)
            .send()
            .await
            .expect("the canned server answers");
        let status = response.status().as_u16();
        (status, response.text().await.expect("a body"))
    }

    #[tokio::test]
    async fn answers_each_request_from_its_table_and_counts_misses() {
        let mut table = Table::fixed(Answer {
            status: StatusCode::NOT_FOUND,
            headers: vec![],
            body: Bytes::from_static(b"not recorded"),
        });
        let key = |auth: &str, body: &str| {
            request_key(&Method::POST, "/a", Some(auth.as_bytes()), body.as_bytes())
        };
        table.insert(key("app s1", "{\"x\":1}"), Answer::json("one"));
        table.insert(key("app s2", "{\"x\":2}"), Answer::json("two"));
        assert_eq!(table.len(), 2);
        let server = CannedServer::start(table).await.expect("bind loopback");
        let url = server.base_url();
        // Another signature, path or body is another request.
        let expected = [
            ("/a", "app s1", "{\"x\":1}", 200, "one"),
            ("/a", "app s2", "{\"x\":2}", 200, "two"),
            ("/a", "app s2", "{\"x\":1}", 404, "not recorded"),
            ("/b", "app s1", "{\"x\":1}", 404, "not recorded"),
        ];
        for (path, auth, body, status, answer) in expected {
            let got = post(&url, path, auth, body).await;
            assert_eq!(got, (status, answer.to_string()), "{path} {auth} {body}");
        }
        assert_eq!(server.counters().served(), 4);
        assert_eq!(server.counters().misses(), 2);
    }

    #[test]
    fn a_background_server_answers_every_request_with_its_body() {
        let url = serve_in_background(&b"{\"success\":true}"[..]).expect("bind loopback");
        let runtime = tokio::runtime::Runtime::new().expect("a runtime");
        let (status, body) = runtime.block_on(post(&url, "/any", "x", "{}"));
        assert_eq!((status, body.as_str()), (200, "{\"success\":true}"));
    }
}
