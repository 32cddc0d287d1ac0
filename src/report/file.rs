//! The file-report sink shared by the JSON, Markdown, HTML and JUnit reports: it keeps the run's
//! state and rewrites the file atomically as cases finish (on the schedule of
//! [`Cadence`](crate::report::cadence::Cadence)) and when the run ends or is interrupted, so the
//! file is always a valid report of what ran. Each format only supplies a render function.
//!
//! Until the run finishes, a report is of an incomplete run: the planned cases that have not
//! finished are listed as skipped (not run, and why), the duration is the time elapsed so far,
//! and every human report says INTERRUPTED rather than an outcome (see
//! [`text::headline`](crate::report::text::headline)). That is what a reader finds after a
//! signal, and also after a kill that left the last file written during the run.

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use crate::atomic;
use crate::redact::Redactor;
use crate::report::Sink;
use crate::report::cadence::Cadence;
use crate::verdict::event::{CaseId, CaseResult, Event, Outcome, RunSummary};
use crate::verdict::sealed::Sealed;

/// The shard a run is under `--shard K/N`: shard `index` (1-based) of `total`, of a
/// selection of `selected` cases (before sharding) whose ids hash to `selection`, so that a
/// merge can tell shards of different selections (another commit, another `--filter`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: usize,
    /// Shards in all.
    pub total: usize,
    /// Cases selected before sharding.
    pub selected: usize,
    /// 16 hex digits of an MD5 of the selected cases' ids (file and name), in order.
    pub selection: String,
}

/// Everything a report is rendered from.
pub struct Run<'a> {
    /// Base URL under test.
    pub base_url: &'a str,
    /// The target as reports name it: `embedded`, or the base URL (see [`text::target`]).
    ///
    /// [`text::target`]: crate::report::text::target
    pub target: &'a str,
    /// Whether observed findings fail.
    pub strict: bool,
    /// Whether the run has finished.
    pub complete: bool,
    /// What stopped the run before its end (e.g. `SIGTERM`), when a signal did.
    pub interrupted: Option<&'a str>,
    /// How many planned cases did not run (they are in `results`, skipped, with the reason).
    pub not_run: usize,
    /// Counts (the cases not run among the skipped); the duration is the time elapsed so far
    /// while the run is not complete.
    pub summary: &'a RunSummary,
    /// Case results in run order.
    pub results: &'a [Sealed<CaseResult>],
    /// The shard this run is under `--shard K/N`.
    pub shard: Option<&'a Shard>,
    /// The target is the reference server mallcheck started (no base URL was given).
    pub embedded: bool,
    /// When the run started (clock time), for reports a merge puts on one time line.
    pub started_at: Option<SystemTime>,
    /// The run's warnings, as the console printed them (edited schemas, settings with blanks
    /// around them, a profile not chosen): a report read alone says what the verdict rests on.
    pub warnings: &'a [String],
}

impl Run<'_> {
    /// The target as every report names it: `embedded` for the reference server mallcheck
    /// started, else the base URL.
    pub fn target_name(&self) -> &str {
        if self.embedded {
            "embedded"
        } else if self.target.is_empty() {
            self.base_url
        } else {
            self.target
        }
    }

    /// The exit code the run ends with (0, 1 or 3), once it is known: `None` while it runs.
    /// An interrupted run exits 1. (A report that cannot be written makes it 1 too, but such
    /// a report is not read.)
    pub fn exit_code(&self) -> Option<i32> {
        if self.interrupted.is_some() {
            Some(crate::exit::FAILURE)
        } else if self.complete {
            Some(crate::exit::for_summary(self.summary))
        } else {
            None
        }
    }

    /// The verdict word of [`Run::exit_code`]: `pass`, `contract-broken`, `could-not-test`,
    /// `interrupted` or `running`.
    pub fn verdict(&self) -> &'static str {
        match self.exit_code() {
            _ if self.interrupted.is_some() => "interrupted",
            Some(code) => crate::exit::verdict(code),
            None => "running",
        }
    }
}

/// Renders a whole report from the run so far.
pub type Render = fn(&Run<'_>) -> io::Result<String>;

/// Which report a file holds, as messages name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportKind {
    /// JUnit XML.
    Junit,
    /// The JSON report.
    Json,
    /// The HTML report.
    Html,
    /// The Markdown summary.
    Markdown,
}

impl ReportKind {
    /// The report in a message: `cannot write the JUnit report PATH`.
    pub fn what(self) -> &'static str {
        match self {
            ReportKind::Junit => "the JUnit report",
            ReportKind::Json => "the JSON report",
            ReportKind::Html => "the HTML report",
            ReportKind::Markdown => "the Markdown summary",
        }
    }

    /// An error of writing `path`, naming the report and the path.
    pub fn write_error(self, path: &Path, e: &io::Error) -> io::Error {
        io::Error::new(
            e.kind(),
            format!("cannot write {} {}: {e}", self.what(), path.display()),
        )
    }
}

/// A report file rewritten as the run changes it. A write that fails during the run is tried
/// again at the next one; only the last write's failure is returned (by [`Sink::finish`]), so
/// a report that cannot be written is reported once.
pub struct FileReport {
    kind: ReportKind,
    path: PathBuf,
    render: Render,
    strict: bool,
    base_url: String,
    target: String,
    summary: RunSummary,
    complete: bool,
    interrupted: Option<String>,
    started: Instant,
    planned: Vec<CaseId>,
    results: Vec<Sealed<CaseResult>>,
    cadence: Cadence,
    failed: Option<io::Error>,
    shard: Option<Shard>,
    embedded: bool,
    started_at: Option<SystemTime>,
    /// The session's redactor: the file is scrubbed with it as it is written.
    redactor: Redactor,
    /// The finished report is on disk as it stands: `finish` has nothing to add.
    final_written: bool,
    /// The run's warnings (see [`Run::warnings`]).
    warnings: Vec<String>,
    /// What the path is, and for a stream whether its one write was made.
    path_kind: PathKind,
}

/// The kind of path a report goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathKind {
    /// A file, replaced by each write.
    File,
    /// A stream (`/dev/null`, `/dev/stdout`, a FIFO; see [`atomic::is_stream`]) not written
    /// yet: it gets one write, the last word of the run, since writes into it follow one
    /// another instead of replacing each other.
    Stream,
    /// A stream that has had its one write.
    StreamWritten,
}

impl FileReport {
    /// A sink writing the report `kind` to `path` with `render`, scrubbed with `redactor` (the
    /// session's); the time an incomplete report gives is counted from here.
    pub fn new(
        kind: ReportKind,
        path: PathBuf,
        strict: bool,
        render: Render,
        redactor: &Redactor,
    ) -> Self {
        FileReport {
            redactor: redactor.clone(),
            kind,
            path_kind: if atomic::is_stream(&path) {
                PathKind::Stream
            } else {
                PathKind::File
            },
            path,
            render,
            strict,
            base_url: String::new(),
            target: String::new(),
            summary: RunSummary::default(),
            complete: false,
            interrupted: None,
            started: Instant::now(),
            planned: vec![],
            results: vec![],
            cadence: Cadence::default(),
            failed: None,
            shard: None,
            embedded: false,
            started_at: None,
            final_written: false,
            warnings: Vec::new(),
        }
    }

    /// Records the run's warnings, which every report carries.
    pub fn with_warnings(mut self, warnings: Vec<String>) -> Self {
        self.warnings = warnings;
        self
    }

    /// Records the shard the run is (`--shard`), so that a merge can tell a missing shard and
    /// shards of different selections.
    pub fn with_shard(mut self, shard: Option<Shard>) -> Self {
        self.shard = shard;
        self
    }

    /// Records that the target is the embedded reference server, which reports name
    /// `embedded` (its loopback URL changes from run to run).
    pub fn with_embedded(mut self, embedded: bool) -> Self {
        self.embedded = embedded;
        self
    }

    /// Writes the report now (into a stream, only the run's last word); a failure is kept
    /// until a later write succeeds.
    fn write(&mut self) -> io::Result<()> {
        let last_word = self.complete || self.interrupted.is_some();
        match self.path_kind {
            PathKind::StreamWritten => Ok(()),
            PathKind::Stream if !last_word => Ok(()),
            PathKind::Stream | PathKind::File => self.write_now(),
        }
    }

    /// Writes the report now, whatever the run's state and the path.
    fn write_now(&mut self) -> io::Result<()> {
        if self.path_kind == PathKind::Stream {
            self.path_kind = PathKind::StreamWritten;
        }
        self.failed = self
            .write_once()
            .err()
            .map(|e| self.kind.write_error(&self.path, &e));
        self.final_written = self.complete && self.failed.is_none();
        Ok(())
    }

    fn write_once(&mut self) -> io::Result<()> {
        let started = Instant::now();
        let missing = self.not_run();
        let not_run: HashSet<usize> = missing.iter().map(|r| r.id.index).collect();
        let mut summary = self.summary.clone();
        if !self.complete {
            for _ in &missing {
                summary.add(Outcome::Skip);
            }
            summary.duration = self.started.elapsed();
        }
        // The cases not run are listed among the others for this write only.
        self.results.extend(missing);
        self.results.sort_by_key(|r| r.id.index);
        let text = (self.render)(&Run {
            base_url: &self.base_url,
            target: &self.target,
            strict: self.strict,
            complete: self.complete,
            interrupted: self.interrupted.as_deref(),
            not_run: not_run.len(),
            summary: &summary,
            results: &self.results,
            shard: self.shard.as_ref(),
            embedded: self.embedded,
            started_at: self.started_at,
            warnings: &self.warnings,
        });
        if !not_run.is_empty() {
            self.results.retain(|r| !not_run.contains(&r.id.index));
        }
        let written = atomic::write(&self.path, text?.as_bytes(), &self.redactor);
        self.cadence.wrote(started);
        written
    }

    /// The planned cases that have not finished, as skipped results saying why (none once the
    /// run is complete).
    fn not_run(&self) -> Vec<Sealed<CaseResult>> {
        if self.complete {
            return vec![];
        }
        let finished: HashSet<usize> = self.results.iter().map(|r| r.id.index).collect();
        let reason = match &self.interrupted {
            Some(by) => format!("not run: the run was interrupted by {by} before this case"),
            None => "not run: the run had not finished when this report was written".to_string(),
        };
        self.planned
            .iter()
            .filter(|id| !finished.contains(&id.index))
            .map(|id| CaseResult::not_run(id.clone(), &reason).seal(&self.redactor))
            .collect()
    }
}

impl Sink for FileReport {
    fn on_event(&mut self, event: &Event) -> io::Result<()> {
        self.final_written = false;
        match event {
            Event::RunStarted {
                base_url,
                target,
                planned,
            } => {
                self.base_url = base_url.clone();
                self.target = target.clone();
                self.planned = planned.clone();
                self.started_at = Some(SystemTime::now());
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
            Event::RunInterrupted { by } => {
                self.interrupted = Some(by.clone());
                self.write()
            }
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        // The end of the run wrote the whole report already (rendering and scrubbing it again
        // was a quarter of a passing run's instructions).
        if self.path_kind == PathKind::Stream {
            // A run that ended without its last event still leaves its one write in a stream.
            self.write_now()?;
        } else if !self.final_written {
            self.write()?;
        }
        let Some(e) = self.failed.take() else {
            return Ok(());
        };
        // The file in place is an earlier write of this run or a report of an earlier run:
        // neither is this run's last word, so none is left for a CI job to pick up. A stream
        // holds no earlier write, and is never removed.
        if self.path_kind != PathKind::File {
            return Err(e);
        }
        match std::fs::remove_file(&self.path) {
            Ok(()) => Err(io::Error::new(
                e.kind(),
                format!("{e} (the earlier file there was removed)"),
            )),
            Err(_) => Err(e),
        }
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
                line: None,
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

    /// The number of cases that ran.
    fn count(run: &Run<'_>) -> io::Result<String> {
        Ok(run
            .results
            .iter()
            .filter(|r| r.outcome != Outcome::Skip)
            .count()
            .to_string())
    }

    /// What an incomplete report is told: how complete, the skip reasons, the skipped count.
    fn state(run: &Run<'_>) -> io::Result<String> {
        let reasons: Vec<&str> = run
            .results
            .iter()
            .filter_map(|r| r.skip_reason.as_deref())
            .collect();
        Ok(format!(
            "complete={} interrupted={:?} not_run={} skipped={} {reasons:?}",
            run.complete, run.interrupted, run.not_run, run.summary.skipped
        ))
    }

    /// A JSON report sink to `path` rendered by `render`, told that a run of `planned` began.
    fn started(path: &Path, render: Render, planned: Vec<CaseId>) -> FileReport {
        let mut sink = FileReport::new(
            ReportKind::Json,
            path.to_path_buf(),
            false,
            render,
            &Redactor::new(),
        );
        sink.on_event(&Event::RunStarted {
            base_url: "http://x".into(),
            target: "http://x".into(),
            planned,
        })
        .expect("write");
        sink
    }

    #[test]
    fn an_interrupted_run_lists_the_cases_it_did_not_run_as_skipped() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("state.txt");
        let mut sink = started(&path, state, (0..3).map(|i| passed(i).id).collect());
        sink.on_event(&Event::CaseFinished(Box::new(
            passed(1).seal(&Redactor::new()),
        )))
        .expect("write");
        sink.on_event(&Event::RunInterrupted {
            by: "SIGTERM".into(),
        })
        .expect("write");
        sink.finish().expect("write");
        let reason = "not run: the run was interrupted by SIGTERM before this case";
        assert_eq!(
            std::fs::read_to_string(&path).expect("written"),
            format!(
                "complete=false interrupted=Some(\"SIGTERM\") not_run=2 skipped=2 [{reason:?}, {reason:?}]"
            )
        );
    }

    #[test]
    fn a_burst_of_cases_is_written_once_it_is_due_and_in_full_on_finish() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("count.txt");
        let mut sink = started(&path, count, (0..1000).map(|i| passed(i).id).collect());
        assert_eq!(std::fs::read_to_string(&path).expect("written"), "0");
        for i in 0..1000 {
            sink.on_event(&Event::CaseFinished(Box::new(
                passed(i).seal(&Redactor::new()),
            )))
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

    static RENDERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    fn counted(run: &Run<'_>) -> io::Result<String> {
        RENDERS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(format!("complete={}", run.complete))
    }

    #[test]
    fn the_finished_report_is_written_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("report.txt");
        let mut sink = started(&path, counted, vec![passed(0).id]);
        sink.on_event(&Event::CaseFinished(Box::new(
            passed(0).seal(&Redactor::new()),
        )))
        .expect("write");
        sink.on_event(&Event::RunFinished(RunSummary::default()))
            .expect("write");
        let renders = RENDERS.load(std::sync::atomic::Ordering::SeqCst);
        sink.finish().expect("finish");
        assert_eq!(
            RENDERS.load(std::sync::atomic::Ordering::SeqCst),
            renders,
            "finish adds nothing to the report the end of the run wrote"
        );
        assert_eq!(
            std::fs::read_to_string(&path).expect("written"),
            "complete=true"
        );
    }

    #[test]
    fn a_report_that_cannot_be_written_is_one_error_on_finish_naming_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let blocker = dir.path().join("notadir");
        std::fs::write(&blocker, "x").expect("write");
        let path = blocker.join("junit.xml");
        let mut sink = FileReport::new(
            ReportKind::Junit,
            path.clone(),
            false,
            count,
            &Redactor::new(),
        );
        sink.on_event(&Event::RunStarted {
            base_url: "http://x".into(),
            target: "http://x".into(),
            planned: vec![],
        })
        .expect("failures wait for finish");
        for i in 0..3 {
            sink.on_event(&Event::CaseFinished(Box::new(
                passed(i).seal(&Redactor::new()),
            )))
            .expect("failures wait for finish");
        }
        let err = sink.finish().expect_err("the report cannot be written");
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "cannot write the JUnit report {}: ",
                path.display()
            )),
            "{text}"
        );
    }
}
