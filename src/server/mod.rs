//! The reference server of the interface: seeded data, both endpoints, auth and fault modes.
//!
//! [`start`] binds (by default `127.0.0.1:0`), spawns the server and returns at once with its
//! address; every fault is also reachable under `/fault/<name>` of the base URL.

mod body;
mod conn;
pub mod data;
pub mod echo_forms;
pub mod faults;
pub mod guide;
mod pages;
mod request;
pub mod routes;
mod start;
mod wire;

pub use conn::ConnectionLimits;
pub use start::{RunningServer, ServerOptions, start};

#[cfg(test)]
mod tests;
