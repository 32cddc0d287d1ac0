//! How a request goes out and its answer comes back. A plain `http://` base URL whose
//! redirects are not followed (most gates: a service on loopback or inside a cluster) goes
//! through hyper's pooled HTTP/1.1 client directly; anything else (TLS, `--follow-redirects`,
//! credentials in the URL) goes through reqwest. Both put the same request on the wire (with
//! reqwest's defaults `accept: */*` and `accept-encoding: gzip,deflate`), decode a gzip or
//! deflate answer with the same decoder (tower-http's, which reqwest wraps) and fail in the
//! same words, so a verdict never depends on which one carried it
//! (`tests::both_transports_agree` holds them to it over hostile answers). What the plain path
//! leaves out is reqwest's other layers: its redirect policy parses the URL again from text on
//! every request even when no redirect is followed, and with its retry layer and its futures a
//! bare reqwest loop sends about 60 % of the requests per second of a bare hyper one on the
//! same server (measured side by side with `mallcheck bench`'s generator).

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{ACCEPT, HeaderMap};
use http::{HeaderValue, Method, Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use reqwest::redirect;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tower_http::decompression::{Decompression, DecompressionBody};
use tower_service::Service;

/// Idle connections kept per host by the pooled client (as many as a run's `--jobs` may use).
const IDLE_PER_HOST: usize = 64;

/// reqwest's defaults, which the plain path keeps: idle connections are closed after 90 s; TCP
/// keep-alive probes start after 15 s idle, every 15 s, 3 of them, and unacknowledged data
/// gives up after 30 s (so that a connection the network dropped is found out within a minute).
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);
const TCP_KEEPALIVE: Duration = Duration::from_secs(15);
const TCP_KEEPALIVE_RETRIES: u32 = 3;
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(30);

/// hyper's pooled client behind reqwest's decompression.
type Decoding = Decompression<HyperClient<CountingConnector, Full<Bytes>>>;

/// How many answers a connection of the plain path has brought, shared by every copy of its
/// hyper-util `Connected` (the pool's, an error's, a response's extensions). A request whose
/// connection is lost before any answer may only be sent again when the connection had
/// answered before: a keep-alive connection the service closed while it sat in the pool. A
/// new connection closed on its first request is the service failing on that request.
#[derive(Debug, Clone, Default)]
struct Answers(Arc<ConnectionLog>);

/// What one connection of the plain path brought.
#[derive(Debug, Default)]
struct ConnectionLog {
    /// Answers whose head arrived whole.
    answers: AtomicU32,
    /// Bytes read since the request now out was written, and the first [`FIRST_BYTES_KEPT`]
    /// of them: a service that closes a connection in the middle of an answer's head
    /// (`HTTP/1.1 200 OK\r\nContent-Ty`) answered, brokenly; hyper says only that the
    /// connection closed before the message was complete. On a kept-alive connection too: that
    /// is no connection closed while it sat in the pool, which is sent again unsaid.
    this_answer: Mutex<(usize, Vec<u8>)>,
    /// `answers` when `this_answer` was last emptied: a write after an answer more is the
    /// next request's (HTTP/1.1 sends one request at a time on a connection, after the
    /// answer before it was read whole).
    emptied_at: AtomicU32,
}

/// How many of the bytes read for the request out on a connection are kept to be shown.
const FIRST_BYTES_KEPT: usize = 256;

impl Answers {
    fn count(&self) -> u32 {
        self.0.answers.load(Ordering::Acquire)
    }

    /// The bytes the connection read for the request that failed on it, which brought no
    /// whole head (how many, and the first of them); `None` when it read none.
    fn cut_head(&self) -> Option<(usize, Vec<u8>)> {
        let read = self.this_answer();
        (read.0 > 0).then(|| read.clone())
    }

    fn this_answer(&self) -> std::sync::MutexGuard<'_, (usize, Vec<u8>)> {
        self.0
            .this_answer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes `read`, bytes the connection read.
    fn note_read(&self, read: &[u8]) {
        if read.is_empty() {
            return;
        }
        let mut this = self.this_answer();
        this.0 += read.len();
        let keep = FIRST_BYTES_KEPT
            .saturating_sub(this.1.len())
            .min(read.len());
        this.1.extend_from_slice(&read[..keep]);
    }

    /// Before a write: a write after an answer more begins the next request.
    fn note_write(&self) {
        let answers = self.count();
        if self.0.emptied_at.load(Ordering::Acquire) != answers {
            self.0.emptied_at.store(answers, Ordering::Release);
            *self.this_answer() = (0, Vec::new());
        }
    }
}

/// hyper-util's `HttpConnector`, whose connections carry their [`Answers`].
#[derive(Debug, Clone)]
struct CountingConnector(HttpConnector);

/// A connection of [`CountingConnector`].
struct CountedIo {
    io: TokioIo<TcpStream>,
    answers: Answers,
}

impl Service<Uri> for CountingConnector {
    type Response = CountedIo;
    type Error = BoxError;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<CountedIo, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.0.call(uri);
        Box::pin(async move {
            Ok(CountedIo {
                io: connecting.await?,
                answers: Answers::default(),
            })
        })
    }
}

impl Connection for CountedIo {
    fn connected(&self) -> Connected {
        self.io.connected().extra(self.answers.clone())
    }
}

impl hyper::rt::Read for CountedIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        // SAFETY: as hyper-util's `TokioIo` reads: the cursor's unfilled part is handed to
        // tokio as a `ReadBuf`, which writes only initialised bytes into it, and the cursor
        // advances by the bytes tokio says it filled. Read in place, so that noting how many
        // came (and the first of them) copies no answer.
        let filled = unsafe {
            let mut read = tokio::io::ReadBuf::uninit(buf.as_mut());
            match tokio::io::AsyncRead::poll_read(Pin::new(this.io.inner_mut()), cx, &mut read) {
                Poll::Ready(Ok(())) => {}
                other => return other,
            }
            this.answers.note_read(read.filled());
            read.filled().len()
        };
        // SAFETY: `filled` bytes of the cursor were initialised by the read above.
        unsafe { buf.advance(filled) };
        Poll::Ready(Ok(()))
    }
}

impl hyper::rt::Write for CountedIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        this.answers.note_write();
        Pin::new(&mut this.io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        this.answers.note_write();
        Pin::new(&mut this.io).poll_write_vectored(cx, bufs)
    }
}

/// The [`Answers`] of the connection a plain-path request failed on, when hyper-util names it.
fn answers_of_failed(error: &(dyn StdError + 'static)) -> Option<Answers> {
    let mut source = Some(error);
    while let Some(s) = source {
        if let Some(e) = s.downcast_ref::<hyper_util::client::legacy::Error>() {
            let mut extensions = http::Extensions::new();
            e.connect_info()?.get_extras(&mut extensions);
            return extensions.get::<Answers>().cloned();
        }
        source = s.source();
    }
    None
}

/// What the client asks of its transport.
#[derive(Debug, Clone, Copy)]
pub struct TransportOptions {
    /// Deadline of one whole exchange: connect, first byte and complete body.
    pub timeout: Duration,
    /// Same-origin redirects are followed (only reqwest does).
    pub follow_redirects: bool,
    /// The requests go through an HTTP proxy (only reqwest does).
    pub proxied: bool,
}

/// One of the two ways a request goes out (see the module's comment).
#[derive(Debug, Clone)]
pub enum Transport {
    /// hyper's pooled client, for a plain `http://` base URL.
    Plain(Box<Plain>),
    /// reqwest, for the rest.
    Reqwest(Reqwested),
}

/// hyper's pooled HTTP/1.1 client.
#[derive(Debug, Clone)]
pub struct Plain {
    pooled: Decoding,
    /// Keeps no idle connection: every request it sends opens a new one.
    fresh: Decoding,
    timeout: Duration,
}

/// reqwest's clients.
#[derive(Debug, Clone)]
pub struct Reqwested {
    pooled: reqwest::Client,
    /// Keeps no idle connection: every request it sends opens a new one.
    fresh: reqwest::Client,
}

/// Where a request goes: its URL as text (for errors and records) and parsed once for each
/// transport (reqwest parses a URL given as text on every request, with the host's IDNA pass).
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL as text.
    pub text: String,
    uri: Option<Uri>,
    url: Option<reqwest::Url>,
}

impl Target {
    /// Parses `text` once for either transport.
    pub fn new(text: String) -> Target {
        let url = reqwest::Url::parse(&text).ok();
        // The URL as the url crate normalises it (percent-encoded, dot segments resolved, the
        // host in lower case), as reqwest sends it too.
        let uri = url.as_ref().and_then(|u| u.as_str().parse().ok());
        Target { uri, url, text }
    }
}

impl Transport {
    /// The transport for `base_url`: the plain one when it is `http://` without credentials,
    /// redirects are not followed and no proxy carries it, else reqwest (`build_reqwest` builds its client for an idle
    /// pool of the size given).
    pub fn new(
        base_url: &str,
        options: TransportOptions,
        build_reqwest: impl Fn(usize, redirect::Policy) -> Result<reqwest::Client, String>,
    ) -> Result<Transport, String> {
        if !options.proxied && plain_applies(base_url, options.follow_redirects) {
            Ok(Transport::plain(options.timeout))
        } else {
            Transport::reqwest(options.follow_redirects, build_reqwest)
        }
    }

    fn plain(timeout: Duration) -> Transport {
        Transport::Plain(Box::new(Plain {
            pooled: hyper_client(IDLE_PER_HOST, timeout),
            fresh: hyper_client(0, timeout),
            timeout,
        }))
    }

    fn reqwest(
        follow_redirects: bool,
        build: impl Fn(usize, redirect::Policy) -> Result<reqwest::Client, String>,
    ) -> Result<Transport, String> {
        Ok(Transport::Reqwest(Reqwested {
            pooled: build(IDLE_PER_HOST, redirect_policy(follow_redirects))?,
            fresh: build(0, redirect_policy(follow_redirects))?,
        }))
    }

    /// Whether this is the plain path.
    #[cfg(test)]
    fn is_plain(&self) -> bool {
        matches!(self, Transport::Plain(_))
    }

    /// Sends a POST of `body` with `headers` to `target`, on a new connection when `fresh`, and
    /// gives the answer's head; its body is read with [`Answer::read`].
    pub async fn post(
        &self,
        target: &Target,
        headers: &HeaderMap,
        body: &Bytes,
        fresh: bool,
    ) -> Result<Answer, TransportError> {
        match self {
            Transport::Plain(plain) => plain.post(target, headers, body, fresh).await,
            Transport::Reqwest(r) => {
                let client = if fresh { &r.fresh } else { &r.pooled };
                let builder = match &target.url {
                    Some(url) => client.post(url.clone()),
                    None => client.post(&target.text),
                };
                let response = builder
                    .headers(headers.clone())
                    .body(body.clone())
                    .send()
                    .await
                    .map_err(TransportError::Reqwest)?;
                Ok(Answer {
                    status: response.status().as_u16(),
                    headers: response.headers().clone(),
                    content_length: response.content_length(),
                    body: AnswerBody::Reqwest(response),
                })
            }
        }
    }
}

/// Whether `base_url` goes through the plain path.
fn plain_applies(base_url: &str, follow_redirects: bool) -> bool {
    !follow_redirects
        && url::Url::parse(base_url).is_ok_and(|u| {
            u.scheme() == "http" && u.username().is_empty() && u.password().is_none()
        })
}

fn hyper_client(idle: usize, timeout: Duration) -> Decoding {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    connector.set_connect_timeout(Some(timeout));
    connector.set_keepalive(Some(TCP_KEEPALIVE));
    connector.set_keepalive_interval(Some(TCP_KEEPALIVE));
    connector.set_keepalive_retries(Some(TCP_KEEPALIVE_RETRIES));
    #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
    connector.set_tcp_user_timeout(Some(TCP_USER_TIMEOUT));
    let client = HyperClient::builder(TokioExecutor::new())
        .timer(TokioTimer::new())
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(IDLE_TIMEOUT)
        .pool_max_idle_per_host(idle)
        .build(CountingConnector(connector));
    // gzip and deflate, as reqwest is built here (it adds `accept-encoding: gzip,deflate` to a
    // request that has none, and decodes an answer that is exactly `gzip` or `deflate`).
    Decompression::new(client).gzip(true).deflate(true)
}

impl Plain {
    async fn post(
        &self,
        target: &Target,
        headers: &HeaderMap,
        body: &Bytes,
        fresh: bool,
    ) -> Result<Answer, TransportError> {
        let deadline = Instant::now() + self.timeout;
        let request_error =
            |source: Option<BoxError>| PlainError::new(PlainKind::Request, source, target);
        let Some(uri) = &target.uri else {
            // A URL the url crate parses and `http::Uri` does not (over 64 KiB), in reqwest's
            // words.
            let source: BoxError = "Parsed Url is not a valid Uri".into();
            return Err(PlainError::new(PlainKind::Builder, Some(source), target).into());
        };
        let mut request = Request::new(Full::new(body.clone()));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = uri.clone();
        let sent = request.headers_mut();
        sent.reserve(headers.len() + 2);
        for (name, value) in headers {
            sent.append(name, value.clone());
        }
        // reqwest's client adds this when the request has none (and the decompression layer
        // adds `accept-encoding`).
        sent.entry(ACCEPT)
            .or_insert(HeaderValue::from_static("*/*"));
        let mut client = if fresh { &self.fresh } else { &self.pooled }.clone();
        // hyper-util's client is always ready; asked all the same, as a tower service must be.
        let exchange = async {
            std::future::poll_fn(|cx| client.poll_ready(cx)).await?;
            client.call(request).await
        };
        let response = match tokio::time::timeout_at(deadline, exchange).await {
            Ok(Ok(response)) => response,
            Ok(Err(e)) => {
                let timed_out = chain_has_timeout(&e);
                let answers = answers_of_failed(&e);
                let first_on_connection = answers.as_ref().is_some_and(|a| a.count() == 0);
                let cut_head = answers.as_ref().and_then(Answers::cut_head);
                let mut error = request_error(Some(Box::new(e)));
                error.timed_out = timed_out;
                error.first_on_connection = first_on_connection;
                error.cut_head = cut_head;
                return Err(error.into());
            }
            Err(_) => return Err(PlainError::timeout(target).into()),
        };
        if let Some(answers) = response.extensions().get::<Answers>() {
            // Counted at the head: the pool hands the connection out again only once this
            // answer's body is read.
            answers.0.answers.fetch_add(1, Ordering::AcqRel);
        }
        let (parts, incoming) = response.into_parts();
        let content_length = hyper::body::Body::size_hint(&incoming).exact();
        Ok(Answer {
            status: parts.status.as_u16(),
            headers: parts.headers,
            content_length,
            body: AnswerBody::Plain(Box::new(PlainBody { incoming, deadline })),
        })
    }
}

/// An answer's head, and its body to read.
#[derive(Debug)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Headers (without `content-encoding` and `content-length` when the body is decoded).
    pub headers: HeaderMap,
    /// The body's announced length, when it is not decoded.
    pub content_length: Option<u64>,
    body: AnswerBody,
}

#[derive(Debug)]
enum AnswerBody {
    /// Boxed: the decoders' state is large.
    Plain(Box<PlainBody>),
    Reqwest(reqwest::Response),
}

struct PlainBody {
    /// Decoded as it comes when it is gzip or deflate.
    incoming: DecompressionBody<Incoming>,
    /// The exchange's deadline: the body must be complete by then.
    deadline: Instant,
}

/// How reading an answer's body ended.
#[derive(Debug)]
pub enum BodyEnd {
    /// The whole body (decoded).
    Complete(Bytes),
    /// The body is longer than the limit: its first `limit` bytes.
    TooLong(Bytes),
    /// Reading or decoding failed after these bytes.
    Failed(Bytes, TransportError),
}

impl Answer {
    /// Reads the body (decoded), keeping at most `limit` bytes; gives it with the head.
    pub async fn read(self, limit: usize) -> (u16, HeaderMap, BodyEnd) {
        let room = usize::try_from(self.content_length.unwrap_or(0))
            .unwrap_or(limit)
            .min(limit);
        let mut body = Gathered::new(room);
        let end = match self.body {
            AnswerBody::Reqwest(mut response) => loop {
                match response.chunk().await {
                    Ok(Some(chunk)) => {
                        if !body.push(chunk, limit) {
                            break Some(None);
                        }
                    }
                    Ok(None) => break None,
                    Err(e) => break Some(Some(TransportError::Reqwest(e))),
                }
            },
            AnswerBody::Plain(plain) => plain
                .read(&mut body, limit)
                .await
                .err()
                .map(|e| e.map(TransportError::Plain)),
        };
        let bytes = body.finish();
        let end = match end {
            None => BodyEnd::Complete(bytes),
            Some(None) => BodyEnd::TooLong(bytes),
            Some(Some(e)) => BodyEnd::Failed(bytes, e),
        };
        (self.status, self.headers, end)
    }
}

/// A body as it comes in, gathered in one buffer of its own. (A body that arrives in one piece
/// could be kept as hyper hands it over, but that piece is a slice of a read buffer of 8 KiB to
/// 400 KiB, which the answer would keep alive as long as it is held.)
struct Gathered {
    body: BytesMut,
    /// The announced length (within the limit): room made at once, as a buffer that grows by
    /// doubling may hold twice the body (and a copy while it grows).
    room: usize,
}

impl Gathered {
    fn new(room: usize) -> Gathered {
        Gathered {
            body: BytesMut::new(),
            room,
        }
    }

    /// Adds `chunk` unless that passes `limit`; then fills the body up to it and says no.
    fn push(&mut self, chunk: Bytes, limit: usize) -> bool {
        if self.body.capacity() == 0 {
            self.body.reserve(self.room.max(chunk.len().min(limit)));
        }
        let len = self.body.len();
        if len + chunk.len() > limit {
            self.body
                .extend_from_slice(&chunk[..limit.saturating_sub(len)]);
            return false;
        }
        self.body.extend_from_slice(&chunk);
        true
    }

    fn finish(self) -> Bytes {
        let body = self.body;
        // A body of unannounced length may have left its buffer up to twice its size: keep
        // only the bytes.
        if body.capacity() > body.len() + body.len() / 4 + 64 * 1024 {
            Bytes::copy_from_slice(&body)
        } else {
            body.freeze()
        }
    }
}

impl fmt::Debug for PlainBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlainBody")
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

impl PlainBody {
    /// Reads the body into `body` up to `limit`: `Err(None)` when it is longer,
    /// `Err(Some(e))` when reading or decoding failed.
    async fn read(mut self, body: &mut Gathered, limit: usize) -> Result<(), Option<PlainError>> {
        while let Some(chunk) = self.frame().await.map_err(Some)? {
            if !body.push(chunk, limit) {
                return Err(None);
            }
        }
        Ok(())
    }

    /// The next data frame of the body, within the deadline.
    async fn frame(&mut self) -> Result<Option<Bytes>, PlainError> {
        loop {
            let next = tokio::time::timeout_at(self.deadline, self.incoming.frame()).await;
            match next {
                Err(_) => return Err(PlainError::body(Box::new(TimedOut))),
                Ok(None) => return Ok(None),
                Ok(Some(Err(e))) => return Err(PlainError::body(e)),
                Ok(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        return Ok(Some(data));
                    }
                }
            }
        }
    }
}

type BoxError = Box<dyn StdError + Send + Sync>;

/// Why a request got no (complete) answer.
#[derive(Debug)]
pub enum TransportError {
    /// From the plain path.
    Plain(PlainError),
    /// From reqwest.
    Reqwest(reqwest::Error),
}

impl From<PlainError> for TransportError {
    fn from(e: PlainError) -> Self {
        TransportError::Plain(e)
    }
}

impl TransportError {
    /// The deadline passed (connecting, waiting or reading).
    pub fn is_timeout(&self) -> bool {
        match self {
            TransportError::Plain(e) => e.timed_out,
            TransportError::Reqwest(e) => e.is_timeout(),
        }
    }

    /// A redirect could not be followed.
    pub fn is_redirect(&self) -> bool {
        match self {
            TransportError::Plain(_) => false,
            TransportError::Reqwest(e) => e.is_redirect(),
        }
    }

    /// The answer began but its body could not be read or decoded.
    pub fn is_body(&self) -> bool {
        match self {
            TransportError::Plain(e) => matches!(e.kind, PlainKind::Body | PlainKind::Decode),
            TransportError::Reqwest(e) => e.is_body() || e.is_decode(),
        }
    }

    /// The error and its causes, as one line.
    pub fn chain(&self) -> String {
        let error: &dyn StdError = match self {
            TransportError::Plain(e) => e,
            TransportError::Reqwest(e) => e,
        };
        let mut chain = error.to_string();
        let mut source = error.source();
        while let Some(s) = source {
            chain.push_str(": ");
            chain.push_str(&s.to_string());
            source = s.source();
        }
        chain
    }

    /// Whether the service answered with bytes that are not an HTTP/1.1 answer: no status line
    /// (HTTP/0.9, a garbage or out-of-range status), a header that does not parse, two
    /// `Content-Length`s that disagree, or a head larger than hyper reads. The service was
    /// reached and answered: a broken answer, not a service that could not be reached.
    pub fn is_malformed_answer(&self) -> bool {
        let error: &dyn StdError = match self {
            TransportError::Plain(e) => e,
            TransportError::Reqwest(e) => e,
        };
        let mut source = error.source();
        while let Some(s) = source {
            if let Some(h) = s.downcast_ref::<hyper::Error>() {
                return h.is_parse() || h.is_parse_status() || h.is_parse_too_large();
            }
            source = s.source();
        }
        false
    }

    /// The bytes a connection brought for this request before it closed in the middle of the
    /// answer's head: how many, and the first of them (the plain path knows; reqwest's does not
    /// say).
    pub fn cut_head(&self) -> Option<(usize, &[u8])> {
        match self {
            TransportError::Plain(e) => e.cut_head.as_ref().map(|(n, b)| (*n, b.as_slice())),
            TransportError::Reqwest(_) => None,
        }
    }

    /// Whether the request failed on a connection that had brought no answer before (the plain
    /// path knows; reqwest's does not say, and its errors are taken for a reused connection).
    pub fn on_new_connection(&self) -> bool {
        matches!(self, TransportError::Plain(e) if e.first_on_connection)
    }

    /// Whether the request failed because its connection was reset or closed before any byte
    /// of the answer, not because no connection could be made or the answer was late.
    pub fn is_lost_connection(&self) -> bool {
        let error: &dyn StdError = match self {
            TransportError::Plain(e) => {
                // A connection that brought bytes of the answer was not lost before it: the
                // service answered, and cut its answer short.
                if e.kind != PlainKind::Request || e.timed_out || e.connect || e.cut_head.is_some()
                {
                    return false;
                }
                e
            }
            TransportError::Reqwest(e) => {
                if e.is_connect() || e.is_timeout() || !e.is_request() {
                    return false;
                }
                e
            }
        };
        let mut source = error.source();
        while let Some(s) = source {
            if let Some(h) = s.downcast_ref::<hyper::Error>()
                && (h.is_incomplete_message() || h.is_canceled())
            {
                return true;
            }
            if let Some(io) = s.downcast_ref::<std::io::Error>()
                && matches!(
                    io.kind(),
                    std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::ConnectionAborted
                        | std::io::ErrorKind::BrokenPipe
                        | std::io::ErrorKind::UnexpectedEof
                )
            {
                return true;
            }
            source = s.source();
        }
        false
    }
}

/// An error of the plain path, worded as reqwest words its own.
#[derive(Debug)]
pub struct PlainError {
    kind: PlainKind,
    /// The URL, for an error of sending.
    url: Option<String>,
    source: Option<BoxError>,
    timed_out: bool,
    /// No connection could be made.
    connect: bool,
    /// The request was the first on its connection: the connection had brought no answer.
    first_on_connection: bool,
    /// The bytes its connection brought before it closed with no whole head: how many, and
    /// the first of them.
    cut_head: Option<(usize, Vec<u8>)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PlainKind {
    Builder,
    Request,
    Body,
    Decode,
}

impl PlainError {
    fn new(kind: PlainKind, source: Option<BoxError>, target: &Target) -> PlainError {
        let connect = source
            .as_ref()
            .and_then(|s| s.downcast_ref::<hyper_util::client::legacy::Error>())
            .is_some_and(hyper_util::client::legacy::Error::is_connect);
        PlainError {
            kind,
            url: Some(
                target
                    .url
                    .as_ref()
                    .map_or_else(|| target.text.clone(), |u| u.to_string()),
            ),
            source,
            timed_out: false,
            connect,
            first_on_connection: false,
            cut_head: None,
        }
    }

    fn timeout(target: &Target) -> PlainError {
        let mut e = PlainError::new(PlainKind::Request, Some(Box::new(TimedOut)), target);
        e.timed_out = true;
        e
    }

    /// An error of reading the body, worded as reqwest's `chunk` words it: a decoding error
    /// around a body error around the cause.
    fn body(source: BoxError) -> PlainError {
        let timed_out = source.is::<TimedOut>();
        let inner = PlainError {
            kind: PlainKind::Body,
            url: None,
            source: Some(source),
            timed_out,
            connect: false,
            first_on_connection: false,
            cut_head: None,
        };
        PlainError {
            kind: PlainKind::Decode,
            url: None,
            source: Some(Box::new(inner)),
            timed_out,
            connect: false,
            first_on_connection: false,
            cut_head: None,
        }
    }
}

impl fmt::Display for PlainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            PlainKind::Builder => "builder error",
            PlainKind::Request => "error sending request",
            PlainKind::Body => "request or response body error",
            PlainKind::Decode => "error decoding response body",
        })?;
        if let Some(url) = &self.url {
            write!(f, " for url ({url})")?;
        }
        Ok(())
    }
}

impl StdError for PlainError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_ref().map(|e| &**e as _)
    }
}

/// The deadline passed, in reqwest's words.
#[derive(Debug)]
struct TimedOut;

impl fmt::Display for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("operation timed out")
    }
}

impl StdError for TimedOut {}

/// Whether a cause in `e`'s chain is a timeout (a connect timeout of the connector).
fn chain_has_timeout(e: &(dyn StdError + 'static)) -> bool {
    let mut source = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::TimedOut
        {
            return true;
        }
        if let Some(h) = s.downcast_ref::<hyper::Error>()
            && h.is_timeout()
        {
            return true;
        }
        source = s.source();
    }
    false
}

/// Same-origin redirects under `--follow-redirects` (see [`may_follow`]), else none.
fn redirect_policy(follow: bool) -> redirect::Policy {
    if follow {
        redirect::Policy::custom(|attempt| {
            if may_follow(attempt.previous(), attempt.url()) {
                attempt.follow()
            } else {
                attempt.stop()
            }
        })
    } else {
        redirect::Policy::none()
    }
}

/// Redirects followed at most under `--follow-redirects`.
pub(crate) const MAX_REDIRECTS: usize = 5;

/// Whether a redirect to `next` may be followed: only within the origin (scheme, host and port)
/// of the first URL, so that a signed request never goes to another service, and only a few
/// times. A stopped redirect comes back as the 3xx answer, which the client reports.
pub(crate) fn may_follow(previous: &[url::Url], next: &url::Url) -> bool {
    previous.len() <= MAX_REDIRECTS
        && previous
            .first()
            .is_some_and(|first| first.origin() == next.origin())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_same_origin_redirects_may_be_followed() {
        let u = |s: &str| url::Url::parse(s).unwrap();
        let first = [u("http://127.0.0.1:8080/a")];
        for (next, ok, why) in [
            ("http://127.0.0.1:8080/b", true, "same origin, other path"),
            ("http://127.0.0.1:8081/a", false, "another port"),
            ("https://127.0.0.1:8080/a", false, "another scheme"),
            ("http://localhost:8080/a", false, "another host name"),
            ("http://example.invalid/a", false, "another host"),
        ] {
            assert_eq!(may_follow(&first, &u(next)), ok, "{why}");
        }
        let many: Vec<url::Url> = (0..=MAX_REDIRECTS).map(|_| first[0].clone()).collect();
        assert!(!may_follow(&many, &first[0]), "a redirect chain ends");
    }

    use std::io::Write as _;
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// What a scripted server does on each connection after reading a request.
    #[derive(Clone)]
    enum Then {
        /// Writes these bytes and closes.
        Close(Vec<u8>),
        /// Writes these bytes and keeps the connection open without a word more.
        Stall(Vec<u8>),
        /// Writes these bytes and keeps the connection open; closes it when the next request
        /// has come, without an answer (uvicorn after a 500).
        KeepThenDrop(Vec<u8>),
        /// Writes the first bytes and keeps the connection open; writes the second when the
        /// next request has come, and closes it.
        KeepThenCut(Vec<u8>, Vec<u8>),
    }

    /// Reads one request (head and `content-length` body); its head without the `host` line
    /// (the port differs from server to server), or `None` when the peer closed.
    async fn request(stream: &mut tokio::net::TcpStream) -> Option<String> {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        let head_end = loop {
            if let Some(i) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        };
        let head = String::from_utf8_lossy(&seen[..head_end]).to_string();
        let length: usize = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse().unwrap_or(0))
            })
            .unwrap_or(0);
        while seen.len() < head_end + length {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        Some(
            head.trim_end()
                .lines()
                .filter(|l| !l.to_ascii_lowercase().starts_with("host:"))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }

    /// A server that reads a request on each connection, logs its head and does `then`.
    async fn scripted(then: Then) -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mall/list", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let heads = Arc::clone(&log);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let (then, heads) = (then.clone(), Arc::clone(&heads));
                tokio::spawn(async move {
                    let Some(head) = request(&mut stream).await else {
                        return;
                    };
                    heads.lock().unwrap().push(head);
                    match then {
                        Then::Close(bytes) => {
                            let _ = stream.write_all(&bytes).await;
                            let _ = stream.shutdown().await;
                        }
                        Then::Stall(bytes) => {
                            let _ = stream.write_all(&bytes).await;
                            tokio::time::sleep(Duration::from_secs(30)).await;
                        }
                        Then::KeepThenDrop(bytes) => {
                            let _ = stream.write_all(&bytes).await;
                            if let Some(head) = request(&mut stream).await {
                                heads.lock().unwrap().push(head);
                            }
                        }
                        Then::KeepThenCut(first, second) => {
                            let _ = stream.write_all(&first).await;
                            if let Some(head) = request(&mut stream).await {
                                heads.lock().unwrap().push(head);
                                let _ = stream.write_all(&second).await;
                                let _ = stream.shutdown().await;
                            }
                        }
                    }
                });
            }
        });
        (url, log)
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn answer(head: &str, body: &[u8]) -> Vec<u8> {
        let mut bytes = head.replace('\n', "\r\n").into_bytes();
        bytes.extend_from_slice(b"\r\n\r\n");
        bytes.extend_from_slice(body);
        bytes
    }

    fn with_length(head: &str, body: &[u8]) -> Vec<u8> {
        answer(&format!("{head}\nContent-Length: {}", body.len()), body)
    }

    /// Everything the client reads of an outcome: status, headers, how the body ended, its
    /// bytes, the error's kind and words.
    async fn outcome(transport: &Transport, url: &str, limit: usize) -> String {
        let target = Target::new(url.to_string());
        let mut headers = HeaderMap::new();
        headers.append("content-type", HeaderValue::from_static("application/json"));
        headers.append("authorization", HeaderValue::from_static("app sig"));
        let body = Bytes::from_static(b"{\"appid\":\"app\"}");
        let error = |e: &TransportError| {
            format!(
                "timeout {} body {} redirect {} lost {}: {}",
                e.is_timeout(),
                e.is_body(),
                e.is_redirect(),
                e.is_lost_connection(),
                e.chain()
            )
        };
        match transport.post(&target, &headers, &body, false).await {
            Err(e) => format!("no answer: {}", error(&e)),
            Ok(answer) => {
                let head = format!(
                    "{} {:?} {:?}",
                    answer.status, answer.headers, answer.content_length
                );
                match answer.read(limit).await.2 {
                    BodyEnd::Complete(b) => format!("{head} complete {b:?}"),
                    BodyEnd::TooLong(b) => format!("{head} too long {b:?}"),
                    BodyEnd::Failed(b, e) => format!("{head} failed {b:?} {}", error(&e)),
                }
            }
        }
    }

    /// h28: a head cut short on a kept-alive connection is the service's broken answer with
    /// the bytes that came, as on a new one; it was taken for a connection closed while it sat
    /// in the pool, and sent again on a new one without a word, `--retries 0` or not.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_head_cut_on_a_kept_alive_connection_is_no_lost_connection() {
        let json = br#"{"success":true,"code":200,"msg":"ok","data":[]}"#;
        let whole = with_length("HTTP/1.1 200 OK\nContent-Type: application/json", json);
        let cut = b"HTTP/1.1 200 OK\r\nContent-Ty".to_vec();
        let (url, heads) = scripted(Then::KeepThenCut(whole, cut)).await;
        let plain = Transport::plain(Duration::from_secs(5));
        assert!(outcome(&plain, &url, 1_000).await.contains(" complete "));
        // The pool takes the connection back in a task of its own once the body is read: the
        // next request finds it there (else it opens a new one, which answers whole).
        tokio::time::sleep(Duration::from_millis(200)).await;
        let target = Target::new(url.clone());
        let body = Bytes::from_static(b"{}");
        let Err(e) = plain.post(&target, &HeaderMap::new(), &body, false).await else {
            panic!("an answer from a cut head");
        };
        assert_eq!(heads.lock().unwrap().len(), 2, "both on one connection");
        assert!(!e.is_lost_connection(), "{}", e.chain());
        assert!(!e.on_new_connection(), "{}", e.chain());
        let (read, first) = e.cut_head().expect("the bytes of the cut head");
        assert_eq!((read, first), (27, &b"HTTP/1.1 200 OK\r\nContent-Ty"[..]));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn both_transports_agree() {
        let json = br#"{"success":true,"code":200,"msg":"ok","data":[]}"#;
        let big = vec![b'7'; 5_000];
        let zipped = gzip(json);
        let bomb = gzip(&vec![b' '; 200_000]);
        let ok = "HTTP/1.1 200 OK\nContent-Type: application/json";
        let scenarios: Vec<(&str, Then)> = vec![
            ("with a length", Then::Close(with_length(ok, json))),
            (
                "chunked",
                Then::Close(answer(
                    &format!("{ok}\nTransfer-Encoding: chunked"),
                    b"5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n",
                )),
            ),
            (
                "chunked with trailers",
                Then::Close(answer(
                    &format!("{ok}\nTransfer-Encoding: chunked"),
                    b"2\r\n{}\r\n0\r\nX-Sum: 1\r\n\r\n",
                )),
            ),
            ("to the close", Then::Close(answer(ok, json))),
            ("HTTP/1.0", Then::Close(answer("HTTP/1.0 200 OK", json))),
            (
                "gzip",
                Then::Close(with_length(
                    &format!("{ok}\nContent-Encoding: gzip"),
                    &zipped,
                )),
            ),
            (
                "gzip, chunked",
                Then::Close(answer(
                    &format!("{ok}\nContent-Encoding: gzip\nTransfer-Encoding: chunked"),
                    &[
                        format!("{:x}\r\n", zipped.len()).as_bytes(),
                        &zipped,
                        b"\r\n0\r\n\r\n",
                    ]
                    .concat(),
                )),
            ),
            (
                "deflate",
                Then::Close(with_length(
                    &format!("{ok}\nContent-Encoding: deflate"),
                    &zlib(json),
                )),
            ),
            (
                "gzip in capitals",
                Then::Close(with_length(
                    &format!("{ok}\nContent-Encoding: GZIP"),
                    &zipped,
                )),
            ),
            (
                "br",
                Then::Close(with_length(&format!("{ok}\nContent-Encoding: br"), json)),
            ),
            (
                "corrupt gzip",
                Then::Close(with_length(
                    &format!("{ok}\nContent-Encoding: gzip"),
                    b"not gzip at all",
                )),
            ),
            (
                "corrupt deflate",
                Then::Close(with_length(
                    &format!("{ok}\nContent-Encoding: deflate"),
                    &[&zlib(json)[..2], b"garbage after the header"].concat(),
                )),
            ),
            (
                "truncated gzip",
                Then::Close(with_length(
                    &format!("{ok}\nContent-Encoding: gzip"),
                    &zipped[..zipped.len() / 2],
                )),
            ),
            (
                "a gzip bomb",
                Then::Close(with_length(&format!("{ok}\nContent-Encoding: gzip"), &bomb)),
            ),
            ("over the limit", Then::Close(with_length(ok, &big))),
            (
                "over the limit, to the close",
                Then::Close(answer(ok, &big)),
            ),
            (
                "shorter than its length",
                Then::Close(answer(&format!("{ok}\nContent-Length: 500"), json)),
            ),
            (
                "an empty gzip body, 401",
                Then::Close(answer(
                    "HTTP/1.1 401 Unauthorized\nContent-Encoding: gzip\nContent-Length: 0",
                    b"",
                )),
            ),
            (
                "an empty deflate body, 204",
                Then::Close(answer(
                    "HTTP/1.1 204 No Content\nContent-Encoding: deflate",
                    b"",
                )),
            ),
            (
                "not gzip, then a stall",
                Then::Stall(answer(
                    &format!("{ok}\nContent-Encoding: gzip\nContent-Length: 100"),
                    b"not gzip",
                )),
            ),
            (
                "gzip with reserved flag bits",
                Then::Close(with_length(&format!("{ok}\nContent-Encoding: gzip"), &{
                    let mut z = zipped.clone();
                    z[3] |= 0xe0;
                    z
                })),
            ),
            (
                "gzip, then more in another chunk",
                Then::Close(answer(
                    &format!("{ok}\nContent-Encoding: gzip\nTransfer-Encoding: chunked"),
                    &[
                        format!("{:x}\r\n", zipped.len()).as_bytes(),
                        &zipped,
                        b"\r\n1\r\nx\r\n0\r\n\r\n",
                    ]
                    .concat(),
                )),
            ),
            (
                "two gzip members",
                Then::Close(with_length(
                    &format!("{ok}\nContent-Encoding: gzip"),
                    &[zipped.clone(), zipped.clone()].concat(),
                )),
            ),
            (
                "gzip with a wrong checksum",
                Then::Close(with_length(&format!("{ok}\nContent-Encoding: gzip"), &{
                    let mut z = zipped.clone();
                    let at = z.len() - 8;
                    z[at] ^= 0xff;
                    z
                })),
            ),
            ("no answer, closed", Then::Close(Vec::new())),
            ("not HTTP", Then::Close(b"HELLO\r\n\r\n".to_vec())),
            (
                "a redirect",
                Then::Close(with_length("HTTP/1.1 302 Found\nLocation: /elsewhere", b"")),
            ),
            (
                "two lengths",
                Then::Close(answer(
                    &format!("{ok}\nContent-Length: 2\nContent-Length: 3"),
                    b"{}",
                )),
            ),
            (
                "a head, then nothing",
                Then::Stall(answer(&format!("{ok}\nContent-Length: 50"), b"{\"a\"")),
            ),
            ("nothing at all", Then::Stall(Vec::new())),
        ];
        let timeout = Duration::from_millis(400);
        let plain = Transport::plain(timeout);
        let reqwested = Transport::reqwest(false, |idle, policy| {
            crate::tls::client_builder_for("http://127.0.0.1")
                .redirect(policy)
                .timeout(timeout)
                .connect_timeout(timeout)
                .no_proxy()
                .pool_max_idle_per_host(idle)
                .build()
                .map_err(|e| e.to_string())
        })
        .unwrap();
        assert!(plain.is_plain() && !reqwested.is_plain());
        for (name, then) in scenarios {
            let (url_a, heads_a) = scripted(then.clone()).await;
            let (url_b, heads_b) = scripted(then).await;
            let a = outcome(&plain, &url_a, 1_000).await;
            let b = outcome(&reqwested, &url_b, 1_000).await;
            let (a, b) = (a.replace(&url_a, "URL"), b.replace(&url_b, "URL"));
            assert_eq!(a, b, "{name}");
            assert_eq!(
                *heads_a.lock().unwrap(),
                *heads_b.lock().unwrap(),
                "{name}: the requests sent"
            );
        }
        // A path the url crate normalises: both send it as reqwest does.
        let (url_a, heads_a) = scripted(Then::Close(with_length(ok, json))).await;
        let (url_b, heads_b) = scripted(Then::Close(with_length(ok, json))).await;
        let odd = |url: &str| url.replace("/mall/list", "/Prefix/./a/../mall/li st%41");
        let a = outcome(&plain, &odd(&url_a), 1_000).await;
        let b = outcome(&reqwested, &odd(&url_b), 1_000).await;
        assert_eq!(a.replace(&url_a, "URL"), b.replace(&url_b, "URL"));
        let heads = heads_a.lock().unwrap().clone();
        assert!(
            heads[0].starts_with("POST /Prefix/mall/li%20st%41 "),
            "{heads:?}"
        );
        assert_eq!(heads, *heads_b.lock().unwrap(), "the normalised path");
        // The bench replays recorded requests with the headers the client adds to each.
        for (name, value) in crate::bench::proxy::CLIENT_ADDS {
            let line = format!("{name}: {value}");
            assert!(
                heads[0].lines().any(|l| l.eq_ignore_ascii_case(&line)),
                "{line} in {heads:?}"
            );
        }
        // A keep-alive connection the service drops when the next request comes: the second
        // request is lost on it, in the same words.
        let mut kept = Vec::new();
        for transport in [&plain, &reqwested] {
            let (url, heads) = scripted(Then::KeepThenDrop(with_length(ok, json))).await;
            let first = outcome(transport, &url, 1_000).await;
            let second = outcome(transport, &url, 1_000).await;
            kept.push((
                first.replace(&url, "URL"),
                second.replace(&url, "URL"),
                heads.lock().unwrap().len(),
            ));
        }
        assert_eq!(kept[0], kept[1], "a dropped keep-alive connection");
        assert!(kept[0].0.contains(" complete "), "{kept:?}");
        assert!(kept[0].1.contains("lost true"), "{kept:?}");
        assert_eq!(kept[0].2, 2, "both requests reached the service: {kept:?}");
        // A URL over 64 KiB: the url crate parses it, hyper's `Uri` does not; nothing is sent.
        let (url, heads) = scripted(Then::Close(with_length(ok, json))).await;
        let long = format!("{url}/{}", "a".repeat(70_000));
        let (a, b) = (
            outcome(&plain, &long, 1_000).await,
            outcome(&reqwested, &long, 1_000).await,
        );
        assert_eq!(
            a.replace(&long, "URL"),
            b.replace(&long, "URL"),
            "a long URL"
        );
        assert!(a.contains("Parsed Url is not a valid Uri"), "{a}");
        assert!(heads.lock().unwrap().is_empty(), "nothing sent");
        // Refused: nothing listens on the port.
        let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mall/list", closed.local_addr().unwrap());
        drop(closed);
        assert_eq!(
            outcome(&plain, &url, 1_000).await,
            outcome(&reqwested, &url, 1_000).await,
            "refused"
        );
    }
}
