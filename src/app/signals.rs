//! The signals that stop `run` and `fuzz` the way Ctrl-C does, so that both finish their
//! reports of what was done and exit 1 instead of dying with the signal.

/// The signals that stop a run the way Ctrl-C does: SIGINT, SIGTERM (a CI job cancelled or
/// timed out) and SIGHUP (the terminal closed). Listening starts when this is built, so a signal
/// that arrives before [`Stop::wait`] is polled still counts.
pub(crate) struct Stop {
    #[cfg(unix)]
    signals: Vec<(tokio::signal::unix::Signal, &'static str)>,
}

impl Stop {
    /// Starts listening (inside the runtime).
    pub(crate) fn listen() -> Stop {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let signals = [
                (SignalKind::interrupt(), "SIGINT"),
                (SignalKind::terminate(), "SIGTERM"),
                (SignalKind::hangup(), "SIGHUP"),
            ]
            .into_iter()
            .filter_map(|(kind, name)| signal(kind).ok().map(|s| (s, name)))
            .collect();
            Stop { signals }
        }
        #[cfg(not(unix))]
        Stop {}
    }

    /// Resolves with the name of the first signal received.
    pub(crate) async fn wait(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            if self.signals.is_empty() {
                return std::future::pending().await;
            }
            let received = self.signals.iter_mut().map(|(signal, name)| {
                Box::pin(async move {
                    signal.recv().await;
                    *name
                })
            });
            futures_util::future::select_all(received).await.0
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}

/// Ignores SIGXFSZ, whose default action kills the process when a write passes the file size
/// limit (`ulimit -f`): the write then fails with EFBIG instead, the report is not replaced
/// (its temporary file is removed) and the command says which report it could not write.
pub(crate) fn ignore_file_size_limit_signal() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_IGN installs no handler code.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}
