//! `mallcheck fuzz`: wiring of the fuzzer.

use crate::cli::FuzzArgs;
use crate::error::UsageError;

/// Runs the fuzzer.
pub fn fuzz(_args: FuzzArgs) -> Result<i32, UsageError> {
    Err(UsageError::setting("fuzz", "not available in this build yet", None))
}
