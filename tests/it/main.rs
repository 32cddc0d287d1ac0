//! Integration tests: the real binary against the real server over loopback. One test binary
//! (with one module per area) so that the suite links once.

// Tests print what they skip and why; the binary's own lines go through `say` (clippy.toml).
#![allow(clippy::disallowed_macros)]

mod actions;
mod asserts;
mod bench_cli;
mod bounded;
mod cacert;
mod case_inputs;
mod case_schema;
mod common;
mod completions;
mod concurrency;
mod connections;
mod coverage;
mod cross_cursor;
mod diagnostics;
mod fault_page;
mod faults;
mod first_contact;
mod fuzz;
mod fuzz_chain;
mod fuzz_jobs;
mod fuzz_rate;
mod fuzz_stops;
mod interrupt;
mod junit_xsd;
mod layout;
mod literals;
mod local_inputs;
mod long_range;
mod merge_strict;
mod noticed;
mod openapi;
mod parsing;
mod politeness;
mod preflight;
mod progress;
mod proxy;
mod raw_signature;
mod readme;
mod replay;
mod reports;
mod robustness;
mod run_cli;
mod scale;
mod schemas_meta;
mod secrets;
mod serve_guide;
mod serve_limits;
mod session;
mod shown;
mod snapshots;
mod standalone;
mod streamed;
mod tolerance;
mod unkeyed;
