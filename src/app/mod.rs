//! Subcommands: wiring only.
