//! The types every layer shares: findings, outcomes and events, exchange records, source
//! locations, endpoints and check descriptors. This module imports nothing else of the crate.

pub mod check;
pub mod endpoint;
pub mod event;
pub mod exchange;
pub mod findings;
pub mod source;
