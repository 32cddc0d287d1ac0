//! Report sink: console.
