//! Typed user and configuration errors; every one maps to exit code 2.
