//! `mallcheck bench`: end-to-end figures side by side with their baselines, as ratios.

pub mod canned;
pub mod child;
pub mod fuzz_rate;
pub mod harness;
pub mod load;
pub mod load_child;
pub mod measure;
pub mod memory;
pub mod proxy;
pub mod scale_line;
pub mod validation;
