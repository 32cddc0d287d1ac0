//! The types every layer shares: findings, outcomes and events, exchange records, source
//! locations, endpoints and check descriptors. It imports nothing of the crate but the redactor.

pub mod check;
pub mod endpoint;
pub mod event;
pub mod exchange;
pub mod findings;
pub mod sealed;
pub mod source;
