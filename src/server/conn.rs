//! The reference server's connections: a bound on how many are open, and per connection a
//! header-read timeout and an idle timeout, so slow or silent clients cannot hold the server.
//!
//! Each connection keeps a [`Clock`] of whom it is waiting for. Waiting for the client (for a
//! request head, for more of a request body, for the next request of a keep-alive connection,
//! for the client to read the response) has a deadline; the server's own work (a handler, a
//! fault's deliberate pause) has none. When a deadline passes, the connection is closed.

use std::future::{Future, poll_fn};
use std::io;
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::Request;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep};

use crate::server::body;
use crate::server::routes::{self, AppState};

/// How long the accept loop waits after an accept error such as "too many open files".
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Bounds on the server's connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// A request head must arrive within this time, counted from the connection's accept (for
    /// its first request) or from the first byte of the head (for the next ones).
    pub header_timeout: Duration,
    /// The longest wait for the client otherwise: between the requests of a keep-alive
    /// connection, for the rest of a request body, and for the client to read the response.
    pub idle_timeout: Duration,
    /// Connections served at once; further clients wait in the listen backlog until one closes.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    /// 10 s for a request head, 60 s idle, 512 connections (under the usual limit of 1,024
    /// open files).
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 512,
        }
    }
}

/// Accepts connections until `stop` turns true (or its sender is dropped), then asks every open
/// connection to finish and waits for them.
pub(crate) async fn serve(
    listener: TcpListener,
    state: Arc<AppState>,
    limits: ConnectionLimits,
    stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut open = JoinSet::new();
    let mut stopping = stop.clone();
    loop {
        while open.try_join_next().is_some() {}
        let permit = tokio::select! {
            permit = Arc::clone(&permits).acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = stopping.wait_for(|&s| s) => break,
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopping.wait_for(|&s| s) => break,
        };
        match accepted {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                let connection = serve_connection(stream, Arc::clone(&state), limits, stop.clone());
                open.spawn(with_permit(connection, permit));
            }
            Err(e) if is_connection_error(&e) => {}
            Err(_) => {
                tokio::select! {
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => {}
                    _ = stopping.wait_for(|&s| s) => break,
                }
            }
        }
    }
    drop(listener);
    while open.join_next().await.is_some() {}
    Ok(())
}

/// Errors of one connection that was already gone when accepted: not a reason to pause.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Holds a connection slot for as long as the connection runs.
async fn with_permit(connection: impl Future<Output = ()>, permit: OwnedSemaphorePermit) {
    connection.await;
    drop(permit);
}

/// Serves one connection (HTTP/1.1 with keep-alive) until it closes, its clock runs out, or the
/// server stops (then it finishes the request in flight and closes).
async fn serve_connection(
    stream: TcpStream,
    state: Arc<AppState>,
    limits: ConnectionLimits,
    mut stop: watch::Receiver<bool>,
) {
    let clock = Arc::new(Clock::new());
    let io = TokioIo::new(Watched {
        inner: stream,
        clock: Arc::clone(&clock),
    });
    let handler = {
        let clock = Arc::clone(&clock);
        hyper::service::service_fn(move |req: Request<Incoming>| {
            clock.set(Phase::Working);
            let req = req.map(|body| {
                RequestBody {
                    inner: body,
                    clock: Arc::clone(&clock),
                }
                .map_err(Into::into)
                .boxed_unsync()
            });
            let done = ResponseDone(Arc::clone(&clock));
            let answer = routes::handle(Arc::clone(&state), req);
            async move {
                let response = answer.await;
                // A crash that loses the connection: no byte of an answer is written.
                if response.extensions().get::<DropConnection>().is_some() {
                    return Err("the handler crashed (a fault: the connection is dropped)");
                }
                if response.extensions().get::<CloseAfterResponse>().is_some() {
                    done.0.close_after_response();
                }
                Ok(response.map(|inner| ResponseBody { inner, _done: done }))
            }
        })
    };
    let mut builder = http1::Builder::new();
    builder.keep_alive(true).header_read_timeout(None);
    let mut conn = pin!(builder.serve_connection(io, handler));
    let mut stopped = pin!(async move {
        let _ = stop.wait_for(|&s| s).await;
    });
    let mut stopping = false;
    let mut timer: Pin<&mut Sleep> = pin!(tokio::time::sleep(limits.header_timeout));
    poll_fn(|cx| {
        if !stopping && stopped.as_mut().poll(cx).is_ready() {
            stopping = true;
            conn.as_mut().graceful_shutdown();
        }
        if conn.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        match clock.deadline(&limits) {
            None => Poll::Pending,
            Some(deadline) => {
                if timer.deadline() != deadline {
                    timer.as_mut().reset(deadline);
                }
                timer.as_mut().poll(cx)
            }
        }
    })
    .await;
}

/// Whom a connection is waiting for, and since when.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// For a request head (since the accept, or since the head's first byte).
    Head(Instant),
    /// For the next request of a keep-alive connection, since the last byte of the response.
    Idle(Instant),
    /// For more of a request body the handler asked for.
    Body(Instant),
    /// For nobody: a handler (or a fault's pause) is working.
    Working,
}

/// The [`Phase`] of one connection plus whether a write to the client is blocked.
#[derive(Debug)]
struct Clock(Mutex<ClockState>);

#[derive(Debug)]
struct ClockState {
    phase: Phase,
    write_blocked: Option<Instant>,
    /// The answer asked for the connection to be dropped when the next request arrives.
    closing: bool,
}

/// A response extension: drop the connection once this answer is sent, without saying so
/// (no `Connection: close`), when the client's next request on it arrives; as uvicorn does
/// after an unhandled exception, where the client only learns of it by a reset.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CloseAfterResponse;

/// A response extension: the connection is closed at once, with no answer written (a handler
/// that crashed, as a Go server's recovered panic closes the socket).
#[derive(Debug, Clone, Copy)]
pub(crate) struct DropConnection;

impl Clock {
    fn new() -> Clock {
        Clock(Mutex::new(ClockState {
            phase: Phase::Head(Instant::now()),
            write_blocked: None,
            closing: false,
        }))
    }

    fn with<T>(&self, f: impl FnOnce(&mut ClockState) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn set(&self, phase: Phase) {
        self.with(|s| s.phase = phase);
    }

    fn close_after_response(&self) {
        self.with(|s| s.closing = true);
    }

    fn closing(&self) -> bool {
        self.with(|s| s.closing)
    }

    /// Bytes arrived: the first of a request head ends an idle wait.
    fn read(&self) {
        self.with(|s| {
            if let Phase::Idle(_) = s.phase {
                s.phase = Phase::Head(Instant::now());
            }
        });
    }

    /// A write had to wait for the client to read.
    fn write_blocked(&self) {
        self.with(|s| {
            s.write_blocked.get_or_insert_with(Instant::now);
        });
    }

    /// A write or flush went through; `sent` bytes of an answer still being flushed after its
    /// body ended are progress of the idle wait.
    fn write_done(&self, sent: bool) {
        self.with(|s| {
            s.write_blocked = None;
            if let (true, Phase::Idle(_)) = (sent, s.phase) {
                s.phase = Phase::Idle(Instant::now());
            }
        });
    }

    /// The handler is waiting for body bytes (`true`) or got some (`false`).
    fn body_waiting(&self, waiting: bool) {
        self.with(|s| match (s.phase, waiting) {
            (Phase::Working, true) => s.phase = Phase::Body(Instant::now()),
            (Phase::Body(_), false) => s.phase = Phase::Working,
            _ => {}
        });
    }

    /// When the connection must be closed, if it is waiting for the client.
    fn deadline(&self, limits: &ConnectionLimits) -> Option<Instant> {
        self.with(|s| {
            let phase = match s.phase {
                Phase::Head(since) => Some(since + limits.header_timeout),
                Phase::Idle(since) | Phase::Body(since) => Some(since + limits.idle_timeout),
                Phase::Working => None,
            };
            let write = s.write_blocked.map(|since| since + limits.idle_timeout);
            match (phase, write) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        })
    }
}

/// The TCP stream, telling the clock about every read and write.
struct Watched {
    inner: TcpStream,
    clock: Arc<Clock>,
}

impl Watched {
    fn note_write(&self, poll: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        match &poll {
            Poll::Pending => self.clock.write_blocked(),
            Poll::Ready(Ok(n)) => self.clock.write_done(*n > 0),
            Poll::Ready(Err(_)) => self.clock.write_done(false),
        }
        poll
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.clock.closing() {
            // Once the next request is there, an end of stream: hyper drops the connection
            // with the request unread, so the client gets a reset, not an answer.
            let mut probe = [0u8; 1];
            let mut probe = ReadBuf::new(&mut probe);
            return match this.inner.poll_peek(cx, &mut probe) {
                Poll::Ready(Ok(_)) => Poll::Ready(Ok(())),
                other => other.map_ok(|_| ()),
            };
        }
        let before = buf.filled().len();
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(poll, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.clock.read();
        }
        poll
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.note_write(poll)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.note_write(poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_flush(cx);
        match &poll {
            Poll::Pending => this.clock.write_blocked(),
            Poll::Ready(_) => this.clock.write_done(false),
        }
        poll
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// A request body that tells the clock when the handler waits for the client.
struct RequestBody {
    inner: Incoming,
    clock: Arc<Clock>,
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_frame(cx);
        this.clock.body_waiting(poll.is_pending());
        poll
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body; when hyper drops it (sent, or the connection is gone) the connection
/// starts waiting for its next request.
struct ResponseBody {
    inner: body::Body,
    _done: ResponseDone,
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = body::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, body::BoxError>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Moves the clock to [`Phase::Idle`] when the response is over.
struct ResponseDone(Arc<Clock>);

impl Drop for ResponseDone {
    fn drop(&mut self) {
        self.0.set(Phase::Idle(Instant::now()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: ConnectionLimits = ConnectionLimits {
        header_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(60),
        max_connections: 1,
    };

    #[test]
    fn clock_waits_for_the_client_only() {
        let clock = Clock::new();
        let phase = || clock.with(|s| s.phase);
        assert!(
            matches!(phase(), Phase::Head(_)),
            "a fresh connection waits for a head"
        );
        assert!(clock.deadline(&LIMITS).is_some());
        clock.set(Phase::Working);
        assert_eq!(
            clock.deadline(&LIMITS),
            None,
            "a handler at work has no deadline"
        );
        clock.read();
        assert_eq!(
            phase(),
            Phase::Working,
            "body bytes read ahead change nothing"
        );
        clock.body_waiting(true);
        assert!(
            matches!(phase(), Phase::Body(_)),
            "the handler waits for the body"
        );
        assert!(clock.deadline(&LIMITS).is_some());
        clock.body_waiting(false);
        assert_eq!(clock.deadline(&LIMITS), None);
        clock.write_blocked();
        assert!(
            clock.deadline(&LIMITS).is_some(),
            "a blocked write waits for the client"
        );
        clock.write_done(true);
        assert_eq!(clock.deadline(&LIMITS), None);

        let since = Instant::now();
        clock.set(Phase::Idle(since));
        assert_eq!(
            clock.deadline(&LIMITS),
            Some(since + LIMITS.idle_timeout),
            "keep-alive wait"
        );
        clock.write_done(false);
        assert_eq!(
            clock.deadline(&LIMITS),
            Some(since + LIMITS.idle_timeout),
            "a flush that sends nothing is no progress"
        );
        clock.read();
        let Phase::Head(head) = phase() else {
            panic!("the next head has begun: {:?}", phase())
        };
        clock.read();
        assert_eq!(
            clock.deadline(&LIMITS),
            Some(head + LIMITS.header_timeout),
            "more bytes of the head do not extend its deadline"
        );
    }
}
