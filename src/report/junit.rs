//! Report sink: junit.
