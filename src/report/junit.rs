//! JUnit XML sink (through junit-report): one `<testsuite>` per case file, one `<testcase>` per
//! case. A contract finding is a `<failure>`, a transport or harness problem an `<error>`,
//! warnings stay passing and are listed in `<system-out>`. The file is rewritten atomically as
//! cases finish (on the schedule of [`Cadence`]) and when the run ends or is interrupted, so it
//! is always a valid report of what ran.

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;
use std::time::Instant;

use junit_report::{Duration as JDuration, Report, TestCase, TestCaseBuilder, TestSuiteBuilder};

use crate::atomic;
use crate::report::cadence::Cadence;
use crate::report::{Sink, text};
use crate::verdict::event::{CaseResult, Event, Outcome};

/// Writes a JUnit report to a path.
pub struct Junit {
    path: PathBuf,
    strict: bool,
    results: Vec<CaseResult>,
    cadence: Cadence,
}

impl Junit {
    /// A sink writing `path`.
    pub fn new(path: PathBuf, strict: bool) -> Self {
        Junit {
            path,
            strict,
            results: vec![],
            cadence: Cadence::default(),
        }
    }

    fn write(&mut self) -> io::Result<()> {
        let started = Instant::now();
        let xml = render(&self.results, self.strict)?;
        let written = atomic::write(&self.path, xml.as_bytes());
        self.cadence.wrote(started);
        written
    }
}

/// A duration in whole milliseconds: the common JUnit XSD (Jenkins' junit-10.xsd) accepts at
/// most three decimals in `time`.
pub fn junit_time(d: std::time::Duration) -> JDuration {
    JDuration::milliseconds(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Removes what XML 1.0 cannot carry (control characters) and what would end a CDATA section.
pub fn xml_safe(s: &str) -> String {
    s.chars()
        .filter(|&c| {
            matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}')
        })
        .collect::<String>()
        .replace("]]>", "]] >")
}

fn testcase(result: &CaseResult, strict: bool) -> TestCase {
    let name = xml_safe(&result.id.name);
    let time = junit_time(result.duration);
    let blocking = text::blocking(result, strict);
    let mut builder = match result.outcome {
        Outcome::Fail | Outcome::Error => {
            let first = blocking.first().map_or_else(
                || ("mallcheck".to_string(), "failed".to_string()),
                |f| (f.check.id.to_string(), f.headline()),
            );
            let omitted: usize = result
                .omitted
                .iter()
                .filter(|o| blocking.iter().any(|f| f.check.id == o.check.id))
                .map(|o| o.count)
                .sum();
            let more = blocking.len().saturating_sub(1) + omitted;
            let more = if more > 0 {
                format!(" (+{} more)", text::thousands(more))
            } else {
                String::new()
            };
            let message = xml_safe(&format!("{}{more}", first.1));
            let mut b = if result.outcome == Outcome::Fail {
                TestCaseBuilder::failure(&name, time, &xml_safe(&first.0), &message)
            } else {
                TestCaseBuilder::error(&name, time, &xml_safe(&first.0), &message)
            };
            b.set_trace(&xml_safe(&text::case_detail(result, &blocking)));
            b
        }
        Outcome::Skip => TestCaseBuilder::skipped_with_cause(
            &name,
            "skipped",
            &xml_safe(result.skip_reason.as_deref().unwrap_or("skipped")),
        ),
        Outcome::Pass | Outcome::Warn => TestCaseBuilder::success(&name, time),
    };
    builder.set_classname(&xml_safe(&result.id.file.display().to_string()));
    let notes: Vec<String> = result
        .findings
        .iter()
        .filter(|f| matches!(f.outcome(strict), Outcome::Warn | Outcome::Pass))
        .map(text::finding)
        .collect();
    let mut notes = notes;
    if result.flaky {
        notes.insert(
            0,
            "flaky: passed only after a transport retry (--retries)".to_string(),
        );
    }
    if !notes.is_empty() {
        builder.set_system_out(&xml_safe(&notes.join("\n")));
    }
    builder.build()
}

/// Renders results as JUnit XML, grouped by case file in case order.
pub fn render(results: &[CaseResult], strict: bool) -> io::Result<String> {
    let mut by_file: BTreeMap<String, Vec<&CaseResult>> = BTreeMap::new();
    for r in results {
        by_file
            .entry(r.id.file.display().to_string())
            .or_default()
            .push(r);
    }
    let mut report = Report::new();
    for (file, mut cases) in by_file {
        cases.sort_by_key(|r| r.id.index);
        let mut suite = TestSuiteBuilder::new(&xml_safe(&file));
        for r in cases {
            suite.add_testcase(testcase(r, strict));
        }
        report.add_testsuite(suite.build());
    }
    let mut out = Vec::new();
    report.write_xml(&mut out).map_err(io::Error::other)?;
    String::from_utf8(out).map_err(io::Error::other)
}

impl Sink for Junit {
    fn on_event(&mut self, event: &Event) -> io::Result<()> {
        match event {
            Event::RunStarted { .. } => self.write(),
            Event::CaseStarted(_) => Ok(()),
            Event::CaseFinished(result) => {
                self.results.push((**result).clone());
                if self.cadence.changed() {
                    self.write()
                } else {
                    Ok(())
                }
            }
            Event::Tick => {
                if self.cadence.due() {
                    self.write()
                } else {
                    Ok(())
                }
            }
            Event::RunFinished(_) => Ok(()),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.write()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::file::tests::passed;

    #[test]
    fn a_burst_of_cases_is_held_back_and_written_in_full_on_finish() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("junit.xml");
        let mut sink = Junit::new(path.clone(), false);
        sink.on_event(&Event::RunStarted {
            base_url: "http://x".into(),
            cases: 1000,
        })
        .expect("write");
        for i in 0..1000 {
            sink.on_event(&Event::CaseFinished(Box::new(passed(i))))
                .expect("write");
        }
        let cases = |xml: String| xml.matches("<testcase").count();
        let written = cases(std::fs::read_to_string(&path).expect("written"));
        assert!(written < 1000, "{written} cases written during the burst");
        sink.finish().expect("write");
        assert_eq!(
            cases(std::fs::read_to_string(&path).expect("written")),
            1000
        );
    }

    #[test]
    fn xml_safe_drops_control_characters_and_cdata_ends() {
        assert_eq!(xml_safe("a\u{1}b]]>c\n"), "ab]] >c\n");
    }
}
