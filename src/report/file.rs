//! The file-report sink shared by the JSON, Markdown, HTML and JUnit reports: it keeps the run's
//! state and rewrites the file atomically as cases finish (on the schedule of
//! [`Cadence`](crate::report::cadence::Cadence)) and when the run ends or is interrupted, so the
//! file is always a valid report of what ran. Each format only supplies a render function.

use std::io;
use std::path::PathBuf;
use std::time::Instant;

use crate::atomic;
use crate::report::Sink;
use crate::report::cadence::Cadence;
use crate::verdict::event::{CaseResult, Event, RunSummary};

/// Everything a report is rendered from.
pub struct Run<'a> {
    /// Base URL under test.
    pub base_url: &'a str,
    /// Whether observed findings fail.
    pub strict: bool,
    /// Whether the run has finished.
    pub complete: bool,
    /// Counts.
    pub summary: &'a RunSummary,
    /// Case results in run order.
    pub results: &'a [CaseResult],
}

/// Renders a whole report from the run so far.
pub type Render = fn(&Run<'_>) -> io::Result<String>;

/// A report file rewritten as the run changes it.
pub struct FileReport {
    path: PathBuf,
    render: Render,
    strict: bool,
    base_url: String,
    summary: RunSummary,
    complete: bool,
    results: Vec<CaseResult>,
    cadence: Cadence,
}

impl FileReport {
    /// A sink writing `path` with `render`.
    pub fn new(path: PathBuf, strict: bool, render: Render) -> Self {
        FileReport {
            path,
            render,
            strict,
            base_url: String::new(),
            summary: RunSummary::default(),
            complete: false,
            results: vec![],
            cadence: Cadence::default(),
        }
    }

    fn write(&mut self) -> io::Result<()> {
        let started = Instant::now();
        self.results.sort_by_key(|r| r.id.index);
        let text = (self.render)(&Run {
            base_url: &self.base_url,
            strict: self.strict,
            complete: self.complete,
            summary: &self.summary,
            results: &self.results,
        })?;
        let written = atomic::write(&self.path, text.as_bytes());
        self.cadence.wrote(started);
        written
    }
}

impl Sink for FileReport {
    fn on_event(&mut self, event: &Event) -> io::Result<()> {
        match event {
            Event::RunStarted { base_url, .. } => {
                self.base_url = base_url.clone();
                self.write()
            }
            Event::CaseStarted(_) => Ok(()),
            Event::CaseFinished(result) => {
                self.summary.add(result.outcome);
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
            Event::RunFinished(summary) => {
                self.summary = summary.clone();
                self.complete = true;
                self.write()
            }
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.write()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::Path;
    use std::time::Duration;

    use super::*;
    use crate::verdict::event::{CaseId, Outcome};

    /// A passing case with nothing found and no exchange.
    pub(crate) fn passed(index: usize) -> CaseResult {
        CaseResult {
            id: CaseId {
                file: Path::new("cases/many.yaml").into(),
                name: format!("case {index}"),
                endpoint: "mall-list".into(),
                index,
            },
            outcome: Outcome::Pass,
            findings: vec![],
            omitted: vec![],
            exchanges: vec![],
            skip_reason: None,
            flaky: false,
            duration: Duration::from_millis(1),
            coverage: vec![],
        }
    }

    fn count(run: &Run<'_>) -> io::Result<String> {
        Ok(run.results.len().to_string())
    }

    #[test]
    fn a_burst_of_cases_is_written_once_it_is_due_and_in_full_on_finish() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("count.txt");
        let mut sink = FileReport::new(path.clone(), false, count);
        sink.on_event(&Event::RunStarted {
            base_url: "http://x".into(),
            cases: 1000,
        })
        .expect("write");
        assert_eq!(std::fs::read_to_string(&path).expect("written"), "0");
        for i in 0..1000 {
            sink.on_event(&Event::CaseFinished(Box::new(passed(i))))
                .expect("write");
        }
        let written: usize = std::fs::read_to_string(&path)
            .expect("written")
            .parse()
            .expect("a count");
        assert!(
            written < 1000,
            "cases finishing right after a write are held back, not each rewritten"
        );
        sink.finish().expect("write");
        assert_eq!(std::fs::read_to_string(&path).expect("written"), "1000");
    }
}
