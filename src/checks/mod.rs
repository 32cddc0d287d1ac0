//! Checks: pure, synchronous functions from a response (or several) to findings, one file per
//! family. They never decide pass or fail; severity becomes an outcome in `verdict::event`.

pub mod assert;
pub mod conforming;
pub mod http;
pub mod ownership;
pub mod payload;
pub mod products;
pub mod robustness;
