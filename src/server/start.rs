//! Starting and stopping the reference server.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::server::conn::{self, ConnectionLimits};
use crate::server::data::{DEMO_APPID, DEMO_SIGN_KEY};
use crate::server::faults::Fault;
use crate::server::routes::AppState;
use crate::sign::{Signer, SignerKind};

/// How long [`RunningServer::shutdown`] waits for open connections before cutting them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// How to run the reference server.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Address to bind; port 0 picks a free port.
    pub bind: SocketAddr,
    /// Fault applied to paths without a `/fault/<name>` prefix.
    pub fault: Option<Fault>,
    /// Verifies the signature part of `Authorization`.
    pub signer: Signer,
    /// The only appid accepted.
    pub appid: String,
    /// Multiplies MAIN's malls and their products in the standard data (1 = the shipped
    /// data); for benchmarks of how cost grows with the data.
    pub scale: u32,
    /// MAIN holds exactly this many malls in the standard data (overrides `scale`).
    pub malls: Option<usize>,
    /// Fixed latency added before every answer.
    pub latency: Duration,
    /// Largest `cursor.count` served; a larger one is turned away like any invalid request
    /// (None: up to the server's own maximum, 1,000).
    pub max_page_size: Option<u64>,
    /// Refusals in plain text instead of the JSON envelope (a correct service too).
    pub plain_errors: bool,
    /// Timeouts and the connection limit.
    pub limits: ConnectionLimits,
}

impl Default for ServerOptions {
    /// `127.0.0.1:0`, no fault, the md5 signer with [`DEMO_SIGN_KEY`], appid [`DEMO_APPID`],
    /// scale 1, the default [`ConnectionLimits`].
    fn default() -> Self {
        ServerOptions {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            fault: None,
            signer: Signer::new(SignerKind::Md5, DEMO_SIGN_KEY.to_string()),
            appid: DEMO_APPID.to_string(),
            scale: 1,
            malls: None,
            latency: Duration::ZERO,
            max_page_size: None,
            plain_errors: false,
            limits: ConnectionLimits::default(),
        }
    }
}

/// A server running in the background; drop it or call [`RunningServer::shutdown`] to stop it.
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: JoinHandle<std::io::Result<()>>,
    requests: Arc<AtomicU64>,
    max_in_flight: Arc<AtomicU64>,
}

impl RunningServer {
    /// The bound address (with the real port when port 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// The most requests handled at once so far.
    pub fn max_in_flight(&self) -> u64 {
        self.max_in_flight.load(Ordering::Relaxed)
    }

    /// `http://<addr>`, the base URL to give a client.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, ends the deliberate hangs of the slow faults and waits (at most a few
    /// seconds) for open connections to finish.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let mut task = self.task;
        if tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }
}

/// Binds `opts.bind`, spawns the server on the current tokio runtime and returns at once.
pub async fn start(opts: ServerOptions) -> std::io::Result<RunningServer> {
    let listener = TcpListener::bind(opts.bind).await?;
    let addr = listener.local_addr()?;
    let (stop, shutdown) = watch::channel(false);
    let state = Arc::new(
        AppState::new(opts.fault, opts.signer, opts.appid, shutdown.clone())
            .with_scale(opts.scale)
            .with_main_malls(opts.malls)
            .with_latency(opts.latency)
            .with_max_page_size(opts.max_page_size)
            .with_plain_errors(opts.plain_errors),
    );
    let requests = Arc::clone(&state.requests);
    let max_in_flight = Arc::clone(&state.max_in_flight);
    let task = tokio::spawn(conn::serve(listener, state, opts.limits, shutdown));
    Ok(RunningServer {
        addr,
        stop,
        task,
        requests,
        max_in_flight,
    })
}
