//! What the spec says, in machine form: the check catalogue and the compiled JSON Schemas.

pub mod catalog;
pub mod openapi;
pub mod schemas;
pub mod wire;
