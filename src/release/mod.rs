//! Release verification (`mallcheck diff`): a recorded baseline against a candidate release,
//! field by field, each change classed as breaking, additive or data-only.

pub mod compare;
