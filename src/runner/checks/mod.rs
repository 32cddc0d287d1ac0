//! Checks: pure functions from responses to findings, one file per family.
