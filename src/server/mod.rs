//! The reference server of the interface: seeded data, both endpoints, fault modes.

pub mod data;
pub mod faults;
pub mod routes;
