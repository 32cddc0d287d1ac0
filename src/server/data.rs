//! Reference server: data.
