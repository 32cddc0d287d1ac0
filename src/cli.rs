//! Clap derive types for the command line; no logic.
