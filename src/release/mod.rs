//! Release verification (`mallcheck diff`): a recorded baseline against a candidate release,
//! field by field, each change classed as breaking, additive or data-only; and the evidence a
//! snapshot may gather beyond one answer (the whole first walk, the products of sampled malls),
//! alike for `run --snapshots update` and `diff`.

pub mod compare;
pub mod sample;
pub mod walk;
