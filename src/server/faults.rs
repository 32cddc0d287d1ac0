//! Reference server: faults.
