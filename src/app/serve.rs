//! `mallcheck serve`: runs the reference server until Ctrl-C.

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

use crate::cli::ServeArgs;
use crate::error::UsageError;
use crate::exit;
use crate::server::faults::Fault;
use crate::server::guide::guide;
use crate::server::{ConnectionLimits, ServerOptions, start};

/// Longest header or idle timeout accepted, in seconds.
const MAX_TIMEOUT_SECS: f64 = 3600.0;

/// Most malls `--malls` may ask for.
const MAX_MALLS: usize = 1_000_000;

/// Longest `--latency-ms`.
const MAX_LATENCY_MS: u64 = 60_000;

/// Serves the reference implementation.
pub fn serve(args: ServeArgs) -> Result<i32, UsageError> {
    if args.list_faults {
        for f in Fault::all() {
            let verdict = match f.expected_check() {
                Some(id) => format!("caught by {id}"),
                None => "tolerated: must pass".to_string(),
            };
            let _ = writeln!(
                std::io::stdout(),
                "{:<34} {:<40} {}",
                f.name(),
                verdict,
                f.description()
            );
        }
        return Ok(exit::PASS);
    }
    let fault = match &args.fault {
        None => None,
        Some(name) => Some(Fault::from_name(name).ok_or_else(|| {
            UsageError::setting(
                "--fault",
                format!("unknown fault `{name}`"),
                Some("see `mallcheck serve --list-faults`"),
            )
        })?),
    };
    if args.malls.is_some_and(|n| n > MAX_MALLS) {
        return Err(UsageError::setting(
            "--malls",
            format!("at most {MAX_MALLS} malls"),
            None,
        ));
    }
    if args.latency_ms > MAX_LATENCY_MS {
        return Err(UsageError::setting(
            "--latency-ms",
            format!("at most {MAX_LATENCY_MS} ms"),
            None,
        ));
    }
    let options = ServerOptions {
        bind: SocketAddr::new(args.bind, args.port),
        fault,
        limits: limits(&args)?,
        malls: args.malls,
        latency: Duration::from_millis(args.latency_ms),
        max_page_size: args.max_page_size,
        plain_errors: args.plain_errors,
        ..ServerOptions::default()
    };
    let rt = super::runtime()?;
    rt.block_on(async {
        let server = start(options).await.map_err(|e| {
            UsageError::setting(
                "--port",
                format!("cannot listen on {}:{}: {e}", args.bind, args.port),
                None,
            )
        })?;
        crate::say::stdout_line!(
            "mallcheck reference server listening on {}",
            server.base_url()
        );
        crate::say::stdout_line!(
            "faults are served under {}/fault/<name>/ (see --list-faults)",
            server.base_url()
        );
        crate::say::stdout_line!();
        crate::say::stdout_line!("{}", guide(&server.base_url()));
        crate::say::stdout_line!("Ctrl-C stops the server.");
        let _ = tokio::signal::ctrl_c().await;
        crate::say::stdout_line!("served {} requests", server.requests());
        server.shutdown().await;
        Ok(exit::PASS)
    })
}

/// The connection limits of `--header-timeout`, `--idle-timeout` and `--max-connections`.
fn limits(args: &ServeArgs) -> Result<ConnectionLimits, UsageError> {
    let seconds = |flag: &str, value: f64| {
        if value.is_finite() && value > 0.0 && value <= MAX_TIMEOUT_SECS {
            Ok(Duration::from_secs_f64(value))
        } else {
            Err(UsageError::setting(
                flag,
                format!("{value} is not a number of seconds in (0, {MAX_TIMEOUT_SECS}]"),
                None,
            ))
        }
    };
    if args.max_connections == 0 {
        return Err(UsageError::setting(
            "--max-connections",
            "0 connections would serve nobody",
            Some("give at least 1"),
        ));
    }
    Ok(ConnectionLimits {
        header_timeout: seconds("--header-timeout", args.header_timeout)?,
        idle_timeout: seconds("--idle-timeout", args.idle_timeout)?,
        max_connections: args.max_connections,
    })
}
