//! The three exit codes and the one function that picks one.

use crate::verdict::event::Outcome;

/// Everything passed (warnings allowed outside `--strict`).
pub const PASS: i32 = 0;
/// A contract failure, or an unreachable or broken service.
pub const FAILURE: i32 = 1;
/// A usage or configuration error (bad flag, malformed case file, unknown schema).
pub const USAGE: i32 = 2;

/// Exit code for a run's overall outcome.
pub fn for_outcome(outcome: Outcome) -> i32 {
    match outcome {
        Outcome::Pass | Outcome::Skip | Outcome::Warn => PASS,
        Outcome::Fail | Outcome::Error => FAILURE,
    }
}
