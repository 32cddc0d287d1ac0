//! The file-report sink shared by the JSON, Markdown and HTML reports: it keeps the run's
//! state and rewrites the file atomically after every case, so an interrupted run leaves a
//! valid report of what ran. Each format only supplies a render function.

use std::io;
use std::path::PathBuf;

use crate::atomic;
use crate::report::Sink;
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

/// A report file rewritten after every event that changes it.
pub struct FileReport {
    path: PathBuf,
    render: Render,
    strict: bool,
    base_url: String,
    summary: RunSummary,
    complete: bool,
    results: Vec<CaseResult>,
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
        }
    }

    fn write(&mut self) -> io::Result<()> {
        self.results.sort_by_key(|r| r.id.index);
        let text = (self.render)(&Run {
            base_url: &self.base_url,
            strict: self.strict,
            complete: self.complete,
            summary: &self.summary,
            results: &self.results,
        })?;
        atomic::write(&self.path, text.as_bytes())
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
                self.write()
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
