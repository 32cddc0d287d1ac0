//! Declarative case files: the typed model and the parser that builds it with spans.

pub mod model;
pub mod node;
pub mod parse;
pub mod select;
pub mod vars;
