//! `mallcheck snapshots`: review, accept or reject pending snapshots.

use crate::cli::SnapshotsArgs;
use crate::error::UsageError;

/// Handles pending snapshots.
pub fn snapshots(_args: SnapshotsArgs) -> Result<i32, UsageError> {
    Err(UsageError::setting("snapshots", "not available in this build yet", None))
}
