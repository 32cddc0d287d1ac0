//! `mallcheck bench`: end-to-end figures side by side with their baselines, as ratios.

pub mod harness;
