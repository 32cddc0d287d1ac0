//! Source spans and case-file diagnostics rendered as `file:line:col` with carets (miette).
