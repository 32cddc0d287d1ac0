//! mallcheck: contract and conformance harness for the Mall Query Interface.
//!
//! The library holds everything worth testing; `main.rs` only parses the command line, calls
//! [`app`] and maps the result to an exit code ([`exit`]).
//!
//! The lower layers live in `crates/core` (`mallcheck-core`), built beside the late
//! dependencies; they are re-exported here under their own names, so that `crate::spec::…`
//! reads the same in both crates and `mallcheck::…` the same to the tests.

pub mod app;
pub mod bench;
pub mod case;
pub mod checks;
pub mod cli;
pub mod error;
pub mod fuzz;
pub mod profile;
pub mod release;
pub mod report;
pub mod runner;
pub mod server;
pub mod service;
pub mod session;
pub mod settings;
pub mod snapshot;
pub mod tls;

pub use mallcheck_core::{
    atomic, cpu, dataset, diag, exit, flag_range, heap, json, local_file, redact, shipped, sign,
    spec, verdict,
};

#[cfg(test)]
#[global_allocator]
static COUNTING: json::heap_probe::Counting = json::heap_probe::Counting;
