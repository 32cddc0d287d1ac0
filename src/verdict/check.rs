//! What a check is: its id, the spec section it enforces, its severity and family. The
//! catalogue of every check is `spec::catalog`.

use std::fmt;

/// How a finding of a check weighs in the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The spec states it: a finding fails the run.
    Contract,
    /// Only observed in the spec's examples: a finding warns, and fails under `--strict`.
    Observed,
    /// Additive or informational (e.g. an extra field): never fails.
    Info,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Contract => "contract",
            Severity::Observed => "observed",
            Severity::Info => "info",
        })
    }
}

/// What kind of problem a check reports: a broken contract, a service/transport problem, or a
/// problem of mallcheck's own side (its signer, its snapshot files, a bug).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// A rule about the content of responses.
    Contract,
    /// The service could not be talked to properly (transport, non-JSON body, limits).
    Transport,
    /// The harness could not do its part (signer, snapshot files, a bug): not the service's
    /// fault, and never a contract failure.
    Harness,
    /// What the service does with an odd or generated request (a 5xx, a hang, a dropped
    /// connection): a real defect, but no rule of the spec, so it cites no section. It fails
    /// the run unless `--robustness warn`.
    Robustness,
}

impl Family {
    /// The label a finding carries in the console and the reports: its severity for a contract
    /// rule (`contract`, `observed`, `info`), else its family (`transport`, `harness`), so an
    /// error of the run is never shown as a broken contract.
    pub fn label(self, severity: Severity) -> String {
        match self {
            Family::Contract => severity.to_string(),
            Family::Transport => "transport".to_string(),
            Family::Harness => "harness".to_string(),
            Family::Robustness => "robustness".to_string(),
        }
    }
}

/// Checks whose finding means the service could not be tested (nothing judged of its
/// answers): no connection, a rate limit waited out, a refused preflight. Every other transport
/// finding is a broken answer (a body that is not JSON, a timeout, a redirect, an oversized
/// body) and fails the case like a contract rule.
const COULD_NOT_TEST: [&str; 3] = [
    "transport.connect",
    "transport.rate-limited",
    "preflight.signed-request",
];

/// One entry of the catalogue.
#[derive(Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Check {
    /// Stable id, e.g. `mall.state`.
    pub id: &'static str,
    /// Spec section enforced, e.g. `§3`.
    pub section: &'static str,
    /// Weight of a finding.
    pub severity: Severity,
    /// Contract rule or transport/harness problem.
    pub family: Family,
    /// One line on what the check enforces.
    pub summary: &'static str,
}

impl Check {
    /// Whether a finding of this check means the service could not be tested (exit 3): a
    /// harness problem, no connection, a rate limit waited out, a refused preflight.
    pub fn could_not_test(&self) -> bool {
        self.family == Family::Harness || COULD_NOT_TEST.contains(&self.id)
    }
}
