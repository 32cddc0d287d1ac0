//! mallcheck: contract and conformance harness for the Mall Query Interface.
//!
//! The library holds everything worth testing; `main.rs` only parses the command line, calls
//! [`app`] and maps the result to an exit code ([`exit`]).

pub mod app;
pub mod atomic;
pub mod bench;
pub mod case;
pub mod checks;
pub mod cli;
pub mod cpu;
pub mod diag;
pub mod error;
pub mod exit;
pub mod flag_range;
pub mod fuzz;
pub mod heap;
pub mod json;
pub mod local_file;
pub mod profile;
pub mod redact;
pub mod release;
pub mod report;
pub mod runner;
pub mod say;
pub mod server;
pub mod service;
pub mod session;
pub mod settings;
pub mod shipped;
pub mod sign;
pub mod snapshot;
pub mod spec;
pub mod tls;
pub mod verdict;
