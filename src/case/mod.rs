//! Declarative case files: the typed model and the parser that builds it with spans.

pub mod model;
pub mod parse;
