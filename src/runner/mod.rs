//! Runs cases against a base URL and emits events; never prints.

pub mod checks;
pub mod client;
pub mod exchange;
pub mod paging;
