//! `mallcheck serve`: runs the reference server until Ctrl-C.

use std::io::Write;
use std::net::SocketAddr;

use crate::cli::ServeArgs;
use crate::error::UsageError;
use crate::exit;
use crate::server::faults::Fault;
use crate::server::guide::guide;
use crate::server::{ServerOptions, start};

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
    let options = ServerOptions {
        bind: SocketAddr::new(args.bind, args.port),
        fault,
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
        println!(
            "mallcheck reference server listening on {}",
            server.base_url()
        );
        println!(
            "faults are served under {}/fault/<name>/ (see --list-faults)",
            server.base_url()
        );
        println!();
        println!("{}", guide(&server.base_url()));
        println!("Ctrl-C stops the server.");
        let _ = tokio::signal::ctrl_c().await;
        server.shutdown().await;
        Ok(exit::PASS)
    })
}
