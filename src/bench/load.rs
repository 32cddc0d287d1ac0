//! The load generator of line (b): a bare hyper HTTP/1.1 client loop, the in-process stand-in
//! for a load generator of the field (`oha`, `wrk`). `connections` keep-alive connections each
//! send the recorded requests in turn (each starting at another offset) as fast as the server
//! answers, read every body whole, and count the answers.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::task::JoinSet;

use crate::bench::proxy::{CLIENT_ADDS, Recorded};

/// What one load run did.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    /// Answers received in the timed part.
    pub answers: u64,
    /// Length of the timed part.
    pub took: Duration,
    /// Connections used.
    pub connections: usize,
}

impl Load {
    /// Answers per second.
    pub fn rate(&self) -> f64 {
        self.answers as f64 / self.took.as_secs_f64().max(1e-9)
    }
}

/// How the load generator is named in the bench's output.
pub const GENERATOR: &str =
    "bare hyper client loops (HTTP/1.1 keep-alive, one request in flight per connection)";

/// Sends `requests` round-robin over `connections` connections to `addr` for `time` (after a
/// warm-up of one pass over the requests on each connection) and counts the answers.
pub(crate) async fn drive(
    addr: SocketAddr,
    requests: Arc<Vec<Recorded>>,
    connections: usize,
    time: Duration,
) -> Result<Load, String> {
    if requests.is_empty() {
        return Err("no requests to send".to_string());
    }
    let connections = connections.max(1);
    let mut senders = Vec::new();
    for _ in 0..connections {
        senders.push(connect(addr).await?);
    }
    // Warm-up: every connection sends a few requests before the clock starts.
    for (i, sender) in senders.iter_mut().enumerate() {
        for r in requests.iter().cycle().skip(i).take(4) {
            send(sender, addr, r).await?;
        }
    }
    let started = Instant::now();
    let deadline = started + time;
    let mut tasks = JoinSet::new();
    for (i, mut sender) in senders.into_iter().enumerate() {
        let requests = Arc::clone(&requests);
        let offset = i * requests.len() / connections;
        tasks.spawn(async move {
            let mut answers = 0u64;
            for r in requests.iter().cycle().skip(offset) {
                if Instant::now() >= deadline {
                    break;
                }
                send(&mut sender, addr, r).await?;
                answers += 1;
            }
            Ok::<u64, String>(answers)
        });
    }
    let mut answers = 0;
    while let Some(done) = tasks.join_next().await {
        answers += done.map_err(|e| e.to_string())??;
    }
    Ok(Load {
        answers,
        took: started.elapsed(),
        connections,
    })
}

type Sender = http1::SendRequest<Full<Bytes>>;

async fn connect(addr: SocketAddr) -> Result<Sender, String> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP handshake with {addr}: {e}"))?;
    tokio::spawn(connection);
    Ok(sender)
}

async fn send(sender: &mut Sender, addr: SocketAddr, r: &Recorded) -> Result<usize, String> {
    sender
        .ready()
        .await
        .map_err(|e| format!("connection to {addr} closed: {e}"))?;
    let mut request = Request::builder()
        .method(r.method.clone())
        .uri(r.path.as_str())
        .header(header::HOST, addr.to_string());
    for (k, v) in &r.headers {
        request = request.header(k, v);
    }
    for (k, v) in CLIENT_ADDS {
        request = request.header(k, v);
    }
    let request = request
        .body(Full::new(r.body.clone()))
        .map_err(|e| format!("cannot build a request: {e}"))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("request to {addr} failed: {e}"))?;
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("reading an answer from {addr}: {e}"))?;
    Ok(body.to_bytes().len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::canned::{Answer, CannedServer, Table};
    use http::Method;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_answer_is_counted_over_several_connections() {
        let server = CannedServer::start(Table::fixed(Answer::json("{}")))
            .await
            .expect("bind loopback");
        let requests = Arc::new(vec![Recorded {
            method: Method::POST,
            path: "/x".to_string(),
            headers: vec![],
            body: Bytes::from_static(b"{}"),
        }]);
        let load = drive(server.addr(), requests, 3, Duration::from_millis(30))
            .await
            .expect("the load runs");
        assert_eq!(load.connections, 3);
        // Warm-up (4 per connection) and the timed part all reached the server.
        assert_eq!(server.counters().served(), 12 + load.answers);
        assert!(load.answers > 0 && load.rate() > 0.0);
    }
}
