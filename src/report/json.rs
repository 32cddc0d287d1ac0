//! JSON report sink. The format is public API: `format_version` changes on any incompatible
//! change. Fields: `format_version`, `tool`, `version`, `base_url`, `strict`, `summary`
//! (`passed`, `warned`, `failed`, `errored`, `skipped`, `duration`) and `cases`, each with
//! `id` (`file`, `name`, `endpoint`, `index`), `outcome`, `findings` (`check`, `pointer`,
//! `expected`, `actual`, `detail`, `location`), `exchanges` (redacted) and `duration`.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::report::event::{CaseResult, Event, RunSummary};
use crate::report::{Sink, atomic};

/// Version of the JSON report format.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Serialize)]
struct Document<'a> {
    format_version: u32,
    tool: &'static str,
    version: &'static str,
    base_url: &'a str,
    strict: bool,
    complete: bool,
    summary: &'a RunSummary,
    cases: &'a [CaseResult],
}

/// Writes the JSON report to a path, atomically after every case.
pub struct JsonReport {
    path: PathBuf,
    strict: bool,
    base_url: String,
    summary: RunSummary,
    complete: bool,
    results: Vec<CaseResult>,
}

impl JsonReport {
    /// A sink writing `path`.
    pub fn new(path: PathBuf, strict: bool) -> Self {
        JsonReport {
            path,
            strict,
            base_url: String::new(),
            summary: RunSummary::default(),
            complete: false,
            results: vec![],
        }
    }

    fn write(&mut self) -> io::Result<()> {
        self.results.sort_by_key(|r| r.id.index);
        let doc = Document {
            format_version: FORMAT_VERSION,
            tool: "mallcheck",
            version: env!("CARGO_PKG_VERSION"),
            base_url: &self.base_url,
            strict: self.strict,
            complete: self.complete,
            summary: &self.summary,
            cases: &self.results,
        };
        let text = serde_json::to_string_pretty(&doc).map_err(io::Error::other)?;
        atomic::write(&self.path, text.as_bytes())
    }
}

impl Sink for JsonReport {
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
