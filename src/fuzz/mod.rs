//! `mallcheck fuzz`: generated request bodies for both operations, properties checked on every
//! response, and failures shrunk with proptest to a minimal, saved and replayable reproducer.

pub mod body;
pub mod dedup;
pub mod engine;
pub mod known;
pub mod properties;
pub mod regressions;
pub mod shrink;
pub mod strategies;

pub use engine::{EndpointStats, FuzzEvent, FuzzFailure, FuzzOptions, FuzzReport, Fuzzer, Origin};
pub use known::{Identity, Known, discover};
