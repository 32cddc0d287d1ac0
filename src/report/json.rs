//! Report sink: json.
