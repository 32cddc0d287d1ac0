//! Events the runner emits and the findings and outcomes they carry; every sink consumes these.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::redact::Redactor;
use crate::verdict::check::{Check, Severity};
use crate::verdict::exchange::Exchange;
use crate::verdict::findings::Omitted;
use crate::verdict::sealed::{self, Sealable, Sealed};

/// Name (and file) of the case that reports the preflight (stopped, or its page broken).
pub const PREFLIGHT_CASE: &str = "preflight";

/// Name (and file) of the case that reports a failed discovery of the target mall, or a run
/// that covered nothing.
pub const DISCOVERY_CASE: &str = "discovery";

/// Whether a case's file is one of the run's own cases (no case file holds them).
pub fn is_run_case_file(file: &std::path::Path) -> bool {
    [PREFLIGHT_CASE, DISCOVERY_CASE]
        .iter()
        .any(|name| file == std::path::Path::new(name))
}

/// A place in a case file that a finding can blame, already rendered as `file:line:col`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceLocation {
    /// Case file path as given by the user.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// One thing a check found in one response (or across responses).
///
/// Its texts may quote the service (`actual`, `detail`) or a case file (`expected`): until
/// [`Finding::seal`] they are raw, only bounded; the runner seals every finding with the run's
/// redactor before a result leaves it, and from then on they are [`Shown`](crate::redact::Shown) text: scrubbed, then
/// escaped, then capped.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// The catalogue entry that produced the finding.
    #[serde(serialize_with = "serialize_check_id")]
    pub check: &'static Check,
    /// JSON Pointer into the response ("" for the whole body).
    pub pointer: String,
    /// What the spec (or the case) expects, in a few words.
    pub expected: String,
    /// What was seen (capped once sealed).
    pub actual: String,
    /// Extra context (e.g. the cursor trail of a walk); may be empty.
    pub detail: String,
    /// Case-file location that asked for the check, when one exists.
    pub location: Option<SourceLocation>,
    /// Bytes of the value `actual` was taken from that it does not keep before the seal (the
    /// seal says "… N bytes more"); a scrub or a respelling of `actual` leaves it as it is.
    #[serde(skip)]
    actual_dropped: usize,
    /// Whether [`Finding::seal`] made the texts [`Shown`](crate::redact::Shown) text.
    #[serde(skip)]
    sealed: bool,
}

fn serialize_check_id<S: serde::Serializer>(c: &&'static Check, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(c.id)
}

/// Longest actual value shown in a finding, in bytes of the value.
pub const ACTUAL_MAX_CHARS: usize = 200;

/// Longest `expected` or `detail` shown, in bytes.
pub const DETAIL_MAX_BYTES: usize = 4 * 1024;

/// Bytes of an `actual` kept until the seal: far more than is shown, so that a secret that
/// crosses the shown cut is still whole for the redactor (which looks that far past it), and a
/// huge value (an 8 MB cursor) does not stay in memory.
const ACTUAL_RAW_MAX: usize = 64 * 1024;

/// The text of what was seen, as a finding keeps it: at most [`ACTUAL_RAW_MAX`] bytes, and
/// how long the whole was.
#[derive(Debug, Clone)]
pub struct Actual {
    text: String,
    total: usize,
}

impl Actual {
    /// The compact JSON text of `value`, rendered only as far as a finding keeps it (a
    /// 16 MiB string is never copied whole), with the length of the whole.
    pub fn json(value: &serde_json::Value) -> Actual {
        /// Keeps the first bytes written and counts the rest.
        struct Kept {
            text: Vec<u8>,
            total: usize,
        }
        impl std::io::Write for Kept {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                let room = (ACTUAL_RAW_MAX + 4).saturating_sub(self.text.len());
                self.text.extend_from_slice(&buf[..buf.len().min(room)]);
                self.total += buf.len();
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut kept = Kept {
            text: Vec::new(),
            total: 0,
        };
        let _ = serde_json::to_writer(&mut kept, value);
        // The cut may fall inside a character: keep the whole ones before it.
        let text = match String::from_utf8(kept.text) {
            Ok(t) => t,
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                let mut bytes = e.into_bytes();
                bytes.truncate(valid);
                String::from_utf8(bytes).unwrap_or_default()
            }
        };
        Actual {
            text,
            total: kept.total,
        }
    }
}

impl Actual {
    /// `prefix` followed by the start of `body` (as text), with the length of the whole: for
    /// a body shown in a finding without copying it whole.
    pub fn with_body(prefix: &str, body: &[u8]) -> Actual {
        let shown = &body[..body.len().min(ACTUAL_RAW_MAX)];
        let mut text = prefix.to_string();
        text.push_str(&String::from_utf8_lossy(shown));
        Actual {
            total: text.len() + (body.len() - shown.len()),
            text,
        }
    }
}

impl From<String> for Actual {
    fn from(text: String) -> Actual {
        let total = text.len();
        Actual { text, total }
    }
}

impl From<&str> for Actual {
    fn from(text: &str) -> Actual {
        Actual::from(text.to_string())
    }
}

impl From<&String> for Actual {
    fn from(text: &String) -> Actual {
        Actual::from(text.clone())
    }
}

impl Finding {
    /// Builds a finding. `actual` is kept raw (at most [`ACTUAL_RAW_MAX`] bytes) until
    /// [`Finding::seal`] scrubs it and only then cuts it to [`ACTUAL_MAX_CHARS`]: a cut made
    /// first could leave part of a secret that no redactor recognises.
    pub fn new(
        check: &'static Check,
        pointer: impl Into<String>,
        expected: impl Into<String>,
        actual: impl Into<Actual>,
    ) -> Self {
        let Actual {
            text: mut actual,
            total: whole,
        } = actual.into();
        if actual.len() > ACTUAL_RAW_MAX {
            let end = (0..=ACTUAL_RAW_MAX)
                .rev()
                .find(|&i| actual.is_char_boundary(i))
                .unwrap_or(0);
            actual.truncate(end);
        }
        let actual_dropped = whole - actual.len();
        Finding {
            check,
            pointer: pointer.into(),
            expected: expected.into(),
            actual,
            detail: String::new(),
            location: None,
            actual_dropped,
            sealed: false,
        }
    }

    /// Makes every text of the finding [`Shown`](crate::redact::Shown) text with the run's `redactor`: scrubbed
    /// first, then escaped, then capped ("… N bytes more"). Done once, where a result leaves
    /// the runner; sealing again changes nothing.
    pub fn seal(&mut self, redactor: &Redactor) {
        if self.sealed {
            return;
        }
        let total = self.actual.len() + self.actual_dropped;
        self.actual = redactor
            .show_part(&self.actual, ACTUAL_MAX_CHARS, total)
            .into_string();
        self.expected = redactor
            .show(&self.expected, DETAIL_MAX_BYTES)
            .into_string();
        self.detail = redactor.show(&self.detail, DETAIL_MAX_BYTES).into_string();
        self.pointer = redactor.show(&self.pointer, DETAIL_MAX_BYTES).into_string();
        self.sealed = true;
    }

    /// Adds free-form detail.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = detail.into();
        self
    }

    /// Attaches the case-file location that asked for the check.
    pub fn at(mut self, location: Option<SourceLocation>) -> Self {
        self.location = location;
        self
    }

    /// The outcome this finding gives under the run's strictness.
    pub fn outcome(&self, strict: bool) -> Outcome {
        match (self.check.severity, self.check.family) {
            (Severity::Info, _) => Outcome::Pass,
            (Severity::Observed, _) if !strict => Outcome::Warn,
            // A broken answer (not JSON, too slow, a redirect) fails like a contract rule; only
            // a service that could not be tested at all is an error of the run.
            (Severity::Contract | Severity::Observed, _) if self.check.could_not_test() => {
                Outcome::Error
            }
            (Severity::Contract | Severity::Observed, _) => Outcome::Fail,
        }
    }

    /// One line: `check-id (§x) at /pointer: expected …, got …`.
    pub fn headline(&self) -> String {
        let at = if self.pointer.is_empty() {
            String::new()
        } else {
            format!(" at {}", self.pointer)
        };
        // A robustness finding cites no section: the spec has no rule on it.
        let section = if self.check.family == crate::verdict::check::Family::Robustness {
            String::new()
        } else {
            format!(" ({})", self.check.section)
        };
        format!(
            "{}{section}{at}: expected {}, got {}",
            self.check.id, self.expected, self.actual
        )
    }
}

/// Truncates `s` to at most `max` characters, marking the cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let kept: String = s.chars().take(max).collect();
    format!("{kept}… ({} chars)", s.chars().count())
}

/// Verdict of a case (or of a run), ordered from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Nothing found, or only information.
    Pass,
    /// The case was not run (e.g. filtered out or missing a variable it needs).
    Skip,
    /// Only observed-severity findings, outside `--strict`.
    Warn,
    /// A contract finding, or a broken answer (not JSON, a timeout, a redirect).
    Fail,
    /// The service could not be tested: no connection, a rate limit waited out, a refused
    /// preflight, a harness problem, or nothing covered.
    Error,
}

impl Outcome {
    /// Worst outcome of a set of findings (Pass when empty).
    pub fn of(findings: &[Finding], strict: bool) -> Outcome {
        findings
            .iter()
            .map(|f| f.outcome(strict))
            .max()
            .unwrap_or(Outcome::Pass)
    }

    /// Upper-case label used in the console and reports.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Skip => "SKIP",
            Outcome::Warn => "WARN",
            Outcome::Fail => "FAIL",
            Outcome::Error => "ERROR",
        }
    }
}

/// Identity of a case within the run.
#[derive(Debug, Clone, Serialize)]
pub struct CaseId {
    /// Case file (suite) path, relative as given.
    pub file: PathBuf,
    /// Case name, unique within its file.
    pub name: String,
    /// The endpoint the case targets, for filtering and reports.
    pub endpoint: String,
    /// Position of the case in the run.
    pub index: usize,
    /// 1-based line of the case in its file, when it comes from one (annotations point there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

/// Result of one case.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// Which case.
    pub id: CaseId,
    /// Verdict.
    pub outcome: Outcome,
    /// What was found, in the order found: the first findings of each check (the rest are
    /// counted in `omitted`).
    pub findings: Vec<Finding>,
    /// Per check, how many more findings there were than `findings` keeps.
    pub omitted: Vec<Omitted>,
    /// Every exchange made, redacted.
    pub exchanges: Vec<Exchange>,
    /// Why the case was skipped, when it was.
    pub skip_reason: Option<String>,
    /// The case passed only after a transport retry (`--retries`).
    pub flaky: bool,
    /// Wall time of the case.
    #[serde(serialize_with = "serialize_secs")]
    pub duration: Duration,
    /// What the case's semantic checks covered (a bounded run reads a part of a large list),
    /// so that a reader knows what a pass means.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub coverage: Vec<Coverage>,
}

/// Coverage scope of `snapshot.match` in a case whose snapshot was compared.
pub const SNAPSHOT_COMPARED: &str = "the response against its snapshot";
impl CaseResult {
    /// Makes every text from outside in the result [`Shown`](crate::redact::Shown) text with the run's `redactor`
    /// (findings, exchanges, the reason of a skip): the runner does it before a result leaves
    /// it, so that every sink cuts and renders scrubbed, escaped, capped text.
    pub fn seal(self, redactor: &Redactor) -> Sealed<CaseResult> {
        sealed::seal(self, redactor)
    }
    /// A planned case that did not run because the run ended before it: skipped, with why.
    pub fn not_run(id: CaseId, reason: impl Into<String>) -> CaseResult {
        CaseResult {
            id,
            outcome: Outcome::Skip,
            findings: vec![],
            omitted: vec![],
            exchanges: vec![],
            skip_reason: Some(reason.into()),
            flaky: false,
            duration: Duration::ZERO,
            coverage: vec![],
        }
    }
}

impl Sealable for CaseResult {
    fn seal_texts(&mut self, redactor: &Redactor) {
        for finding in &mut self.findings {
            finding.seal(redactor);
        }
        for exchange in &mut self.exchanges {
            exchange.seal(redactor);
        }
        if let Some(reason) = &mut self.skip_reason {
            *reason = redactor.show(reason, DETAIL_MAX_BYTES).into_string();
        }
    }
}

/// Coverage scope of `snapshot.match` in a case whose snapshot could not be read or written.
pub const SNAPSHOT_FAILED: &str =
    "not compared: the snapshot could not be read or written (harness.snapshot)";
/// Coverage scope of `snapshot.match` in a case that takes a snapshot, under `--snapshots off`.
pub const SNAPSHOT_OFF: &str = "not compared: snapshots are off (--snapshots off)";

/// What a check covered in one case, e.g. `paging.size-consistency`: "first 200 of 10,000
/// malls at sizes 1, 3, 10 against the whole list at size 100".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// Check id, or several joined with ", ".
    pub check: String,
    /// What it saw.
    pub scope: String,
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.check, self.scope)
    }
}

fn serialize_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Summary counts of a run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunSummary {
    /// Cases that passed.
    pub passed: usize,
    /// Cases that only warned.
    pub warned: usize,
    /// Cases with a contract failure.
    pub failed: usize,
    /// Cases that could not be tested.
    pub errored: usize,
    /// Cases skipped.
    pub skipped: usize,
    /// Wall time of the run.
    #[serde(serialize_with = "serialize_secs")]
    pub duration: Duration,
}

impl RunSummary {
    /// Counts one case result.
    pub fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Pass => self.passed += 1,
            Outcome::Skip => self.skipped += 1,
            Outcome::Warn => self.warned += 1,
            Outcome::Fail => self.failed += 1,
            Outcome::Error => self.errored += 1,
        }
    }

    /// Total cases.
    pub fn total(&self) -> usize {
        self.passed + self.warned + self.failed + self.errored + self.skipped
    }

    /// Worst outcome of the run.
    pub fn outcome(&self) -> Outcome {
        if self.errored > 0 {
            Outcome::Error
        } else if self.failed > 0 {
            Outcome::Fail
        } else if self.warned > 0 {
            Outcome::Warn
        } else {
            Outcome::Pass
        }
    }
}

/// What the runner tells the sinks, in order.
#[derive(Debug, Clone)]
pub enum Event {
    /// The run begins.
    RunStarted {
        /// Base URL under test (no credentials).
        base_url: String,
        /// The target as reports name it: `embedded` for the embedded reference server, else
        /// the base URL.
        target: String,
        /// The cases that will run, in run order (their `index` is their position).
        planned: Vec<CaseId>,
    },
    /// A case begins.
    CaseStarted(CaseId),
    /// A case ended.
    CaseFinished(Box<Sealed<CaseResult>>),
    /// Sent every quarter second or so while cases run: sinks may write out what they hold.
    Tick,
    /// The run ended.
    RunFinished(RunSummary),
    /// The run was stopped before its end (a signal): no `RunFinished` follows, and the cases
    /// that were planned but did not finish were not run.
    RunInterrupted {
        /// What stopped it, e.g. `SIGTERM`.
        by: String,
    },
}
/// The message of a caught panic, when its payload is a `String` or a `&str` (what `panic!`
/// gives): the text a crash of mallcheck itself reports.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> Option<String> {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_message_reads_string_and_str_payloads() {
        let caught = |f: fn()| std::panic::catch_unwind(f).expect_err("it panics");
        let text = caught(|| panic!("case {}", 7));
        let literal = caught(|| panic!("literal"));
        let other = caught(|| std::panic::panic_any(7_u8));
        assert_eq!(panic_message(&*text).as_deref(), Some("case 7"));
        assert_eq!(panic_message(&*literal).as_deref(), Some("literal"));
        assert_eq!(panic_message(&*other), None);
    }
}
