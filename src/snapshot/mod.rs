//! Response snapshots with insta at run time: record, compare, pending `.snap.new`, and the files
//! `mallcheck snapshots` and `mallcheck diff` read back.

pub mod classify;
pub mod engine;
pub mod render;
mod snapshotter;
pub mod store;
pub mod target;

pub use snapshotter::{
    DEFAULT_REDACTIONS, SnapshotCase, SnapshotMode, SnapshotOptions, Snapshotter, check_dir,
    ci_from_env, in_ci, name_problems, scrub_value, snapshot_name,
};
