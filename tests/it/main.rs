//! Integration tests: the real binary against the real server over loopback. One test binary
//! (with one module per area) so that the suite links once.

mod bench_cli;
mod bounded;
mod case_inputs;
mod case_schema;
mod common;
mod concurrency;
mod diagnostics;
mod faults;
mod fuzz;
mod fuzz_chain;
mod fuzz_jobs;
mod fuzz_stops;
mod interrupt;
mod junit_xsd;
mod layout;
mod long_range;
mod noticed;
mod openapi;
mod politeness;
mod preflight;
mod readme;
mod replay;
mod reports;
mod run_cli;
mod scale;
mod schemas_meta;
mod secrets;
mod serve_guide;
mod serve_limits;
mod session;
mod snapshots;
mod streamed;
mod tolerance;
