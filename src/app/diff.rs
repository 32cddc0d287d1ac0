//! `mallcheck diff`: release verification against recorded snapshots.

use crate::cli::DiffArgs;
use crate::error::UsageError;

/// Compares a candidate with the baseline snapshots.
pub fn diff(_args: DiffArgs) -> Result<i32, UsageError> {
    Err(UsageError::setting("diff", "not available in this build yet", None))
}
