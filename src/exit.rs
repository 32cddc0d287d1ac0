//! The four exit codes and the functions that pick one.
//!
//! A pipeline retries "could not test" (3) and blocks on "the contract is broken" (1), so the
//! two never share a code. When a run has both, a broken contract wins: it is proven.

use crate::verdict::event::{Outcome, RunSummary};

/// Everything passed (warnings allowed outside `--strict`).
pub const PASS: i32 = 0;
/// The service breaks the contract: wrong data, a 5xx, a body that is not JSON, an answer
/// that times out.
pub const FAILURE: i32 = 1;
/// A usage or configuration error (bad flag, malformed case file, unknown schema).
pub const USAGE: i32 = 2;
/// The service could not be tested: unreachable (refused, DNS, TLS), the preflight refused,
/// rate-limited until the run gave up, the signer failed, or the run covered nothing.
pub const COULD_NOT_TEST: i32 = 3;

/// Exit code for one outcome: `Fail` is a broken contract, `Error` a service that could not be
/// tested.
pub fn for_outcome(outcome: Outcome) -> i32 {
    match outcome {
        Outcome::Pass | Outcome::Skip | Outcome::Warn => PASS,
        Outcome::Fail => FAILURE,
        Outcome::Error => COULD_NOT_TEST,
    }
}

/// Exit code of a finished run: 1 when a case failed, else 3 when a case could not be tested,
/// else 0.
pub fn for_summary(summary: &RunSummary) -> i32 {
    if summary.failed > 0 {
        FAILURE
    } else if summary.errored > 0 {
        COULD_NOT_TEST
    } else {
        PASS
    }
}

/// The code of two verdicts together: usage first, then a broken contract, then could not
/// test, then pass.
pub fn combine(a: i32, b: i32) -> i32 {
    let rank = |c: i32| match c {
        PASS => 0,
        COULD_NOT_TEST => 1,
        FAILURE => 2,
        _ => 3,
    };
    if rank(b) > rank(a) { b } else { a }
}

/// The verdict word a report gives next to its exit code.
pub fn verdict(code: i32) -> &'static str {
    match code {
        PASS => "pass",
        FAILURE => "contract-broken",
        USAGE => "usage-error",
        _ => "could-not-test",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_contract_wins_over_could_not_test() {
        let mut s = RunSummary::default();
        s.add(Outcome::Pass);
        s.add(Outcome::Skip);
        assert_eq!(for_summary(&s), PASS);
        s.add(Outcome::Error);
        assert_eq!(for_summary(&s), COULD_NOT_TEST);
        s.add(Outcome::Fail);
        assert_eq!(for_summary(&s), FAILURE);
        assert_eq!(combine(COULD_NOT_TEST, FAILURE), FAILURE);
        assert_eq!(combine(FAILURE, COULD_NOT_TEST), FAILURE);
        assert_eq!(combine(PASS, COULD_NOT_TEST), COULD_NOT_TEST);
        assert_eq!(verdict(COULD_NOT_TEST), "could-not-test");
    }
}
