//! Loads and compiles the JSON Schemas in `schemas/` and turns violations into findings.
