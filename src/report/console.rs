//! Console sink: one status line per case, details under failures, a summary with counts.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use anstyle::Style;

use crate::diag::escape_controls;
use crate::redact::{Redactor, ScrubWriter};
use crate::report::Sink;
use crate::report::actions;
use crate::report::style::{self, Palette};
use crate::report::text;
use crate::verdict::event::{CaseId, Event, Outcome};

/// Silence after which a console without a progress bar (a CI log) says the run is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(30);

/// Running cases named in a heartbeat line, longest-running first.
const HEARTBEAT_CASES: usize = 3;

/// How much the console prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    /// Only failures and the summary.
    Quiet,
    /// A line per case, details under failures and warnings.
    Normal,
    /// Also every exchange of every case (redacted).
    Verbose,
}

/// The style of an outcome's label.
fn outcome_style(o: Outcome) -> Style {
    match o {
        Outcome::Pass => style::PASS,
        Outcome::Skip | Outcome::Warn => style::WARN,
        Outcome::Fail | Outcome::Error => style::FAIL,
    }
}

/// Writes human-readable progress to an injected writer. Each event's text is scrubbed of the
/// run's secrets as one message (a secret across a line break is still found), and every text
/// that may come from the service or a case file is printed with its control characters
/// escaped (line breaks stay, as indented lines): a hostile service cannot move the cursor,
/// ring the bell or overwrite a line.
pub struct Console<W: Write> {
    out: ScrubWriter<Capture<W>>,
    redactor: Redactor,
    palette: Palette,
    verbosity: Verbosity,
    strict: bool,
    progress: Option<ProgressBar>,
    pulse: Pulse,
    groups: Option<Groups>,
}

/// A writer that holds what it is given while capturing (already scrubbed: it sits under the
/// scrubbing writer), and passes it on otherwise. When the reader of a pipe has gone
/// (`mallcheck run | head`), the rest of the console is dropped: the run goes on to its reports
/// and its verdict, which a console nobody reads must not change.
struct Capture<W> {
    inner: W,
    held: Option<Vec<u8>>,
    reader_gone: bool,
}

impl<W: Write> Capture<W> {
    /// `result` of a write to the inner writer, with a gone reader turned into success.
    fn unless_gone<T>(&mut self, result: io::Result<T>, done: T) -> io::Result<T> {
        match result {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.reader_gone = true;
                Ok(done)
            }
            other => other,
        }
    }
}

impl<W: Write> Write for Capture<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.held {
            Some(held) => held.write(buf),
            None if self.reader_gone => Ok(buf.len()),
            None => {
                let written = self.inner.write(buf);
                self.unless_gone(written, buf.len())
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.held {
            Some(_) => Ok(()),
            None if self.reader_gone => Ok(()),
            None => {
                let flushed = self.inner.flush();
                self.unless_gone(flushed, ())
            }
        }
    }
}

/// Under GitHub Actions, the lines of each case file, held until its last case finished and
/// then printed in one `::group::`, followed by the annotations of its cases.
#[derive(Default)]
struct Groups {
    files: BTreeMap<PathBuf, Group>,
}

#[derive(Default)]
struct Group {
    planned: usize,
    finished: usize,
    lines: Vec<u8>,
    annotations: Vec<String>,
}

/// What a heartbeat line says: cases running and finished, and when the console last wrote.
struct Pulse {
    every: Duration,
    started: Instant,
    last_line: Instant,
    total: usize,
    finished: usize,
    /// Cases that passed only after a transport retry: the summary counts them.
    flaky: usize,
    running: BTreeMap<usize, (CaseId, Instant)>,
}

impl<W: Write> Console<W> {
    /// A console sink writing to `out`, every message scrubbed with `redactor` (the
    /// session's).
    pub fn new(
        out: W,
        redactor: &Redactor,
        color: bool,
        verbosity: Verbosity,
        strict: bool,
    ) -> Self {
        Console {
            out: ScrubWriter::new(
                Capture {
                    inner: out,
                    held: None,
                    reader_gone: false,
                },
                redactor.clone(),
            ),
            redactor: redactor.clone(),
            palette: Palette::new(color),
            verbosity,
            strict,
            progress: None,
            pulse: Pulse {
                every: HEARTBEAT,
                started: Instant::now(),
                last_line: Instant::now(),
                total: 0,
                finished: 0,
                flaky: 0,
                running: BTreeMap::new(),
            },
            groups: None,
        }
    }

    /// Writes GitHub Actions workflow commands: the lines of each case file in one
    /// `::group::` (printed when its last case finished), and after it an `::error`
    /// (`::warning`) annotation at the case file and line of each failing (warning) case.
    pub fn with_github_actions(mut self) -> Self {
        self.groups = Some(Groups::default());
        self
    }

    /// Sets the silence after which a heartbeat line is printed (without a progress bar).
    pub fn with_heartbeat(mut self, every: Duration) -> Self {
        self.pulse.every = every;
        self
    }

    /// Adds a progress bar on stderr (for a terminal); lines print above it. It is redrawn on
    /// every tick of the runner (4 a second) with the cases running, longest first.
    pub fn with_progress(mut self) -> Self {
        let style = ProgressStyle::with_template("{bar:20} {pos}/{len} cases {elapsed} {wide_msg}")
            .expect("a valid progress template");
        self.progress = Some(ProgressBar::new(0).with_style(style));
        self
    }

    /// What the progress bar says after its counts: the cases running, longest first.
    fn running_message(&self) -> String {
        let now = Instant::now();
        let mut running: Vec<_> = self.pulse.running.values().collect();
        running.sort_by_key(|(_, since)| *since);
        let Some((id, since)) = running.first() else {
            return String::new();
        };
        // The time and the name first: a narrow terminal cuts the end of the line.
        let mut message = format!(
            "running {}: {} ({})",
            text::seconds(now.duration_since(*since)),
            escape_controls(&id.name),
            escape_controls(&id.file.display().to_string()),
        );
        if running.len() > 1 {
            message.push_str(&format!(" and {} more", running.len() - 1));
        }
        self.redactor.scrub(&message).into_owned()
    }

    /// The writer back (tests read the captured text).
    pub fn into_inner(self) -> W {
        self.out.into_inner().inner
    }

    /// Under GitHub Actions, renders a finished case into its file's group (scrubbed), and
    /// prints the group when it is complete; `false` when the case is not grouped.
    fn grouped(&mut self, event: &Event) -> io::Result<bool> {
        let Event::CaseFinished(result) = event else {
            return Ok(false);
        };
        let known = self
            .groups
            .as_ref()
            .is_some_and(|g| g.files.contains_key(&result.id.file));
        if !known {
            return Ok(false);
        }
        self.out.flush()?;
        self.out.get_mut().held = Some(Vec::new());
        let rendered = self.render_event(event).and_then(|()| self.out.flush());
        let lines = self.out.get_mut().held.take().unwrap_or_default();
        rendered?;
        let annotation = actions::annotation(result, self.strict);
        let Some(group) = self
            .groups
            .as_mut()
            .and_then(|g| g.files.get_mut(&result.id.file))
        else {
            return Ok(false);
        };
        group.lines.extend_from_slice(&lines);
        group.annotations.extend(annotation);
        group.finished += 1;
        if group.finished >= group.planned {
            self.print_groups(Some(result.id.file.clone()))?;
        }
        Ok(true)
    }

    /// Prints the group of `file`, or of every file with something to say (at the run's end),
    /// in one `::group::` each, its annotations after it.
    fn print_groups(&mut self, file: Option<PathBuf>) -> io::Result<()> {
        let Some(groups) = self.groups.as_mut() else {
            return Ok(());
        };
        let taken: Vec<(PathBuf, Group)> = match file {
            Some(f) => groups.files.remove_entry(&f).into_iter().collect(),
            None => std::mem::take(&mut groups.files).into_iter().collect(),
        };
        for (file, group) in taken {
            if !group.lines.is_empty() {
                let title = format!(
                    "{} ({})",
                    file.display(),
                    text::plural(group.planned, "case")
                );
                writeln!(self.out, "{}", actions::group(&title))?;
                self.out.write_all(&group.lines)?;
                writeln!(self.out, "{}", actions::GROUP_END)?;
            }
            for annotation in &group.annotations {
                writeln!(self.out, "{annotation}")?;
            }
        }
        self.out.flush()
    }

    /// Writes a block of text indented; it is scrubbed whole first, as the indent would cut a
    /// secret that spans its line breaks.
    fn indented(&mut self, block: &str) -> io::Result<()> {
        let block = self.redactor.scrub(block);
        let block = block.into_owned();
        for line in block.lines() {
            writeln!(self.out, "      {}", escape_controls(line))?;
        }
        Ok(())
    }

    /// Renders one event and writes it out as one scrubbed message.
    fn write_event(&mut self, event: &Event) -> io::Result<()> {
        self.follow(event);
        if let Event::Tick = event {
            return self.heartbeat();
        }
        if let (Some(groups), Event::RunStarted { planned, .. }) = (self.groups.as_mut(), event) {
            for id in planned {
                groups.files.entry(id.file.clone()).or_default().planned += 1;
            }
        }
        if self.grouped(event)? {
            self.pulse.last_line = Instant::now();
            return Ok(());
        }
        if matches!(event, Event::RunFinished(_) | Event::RunInterrupted { .. }) {
            self.print_groups(None)?;
        }
        self.render_event(event)?;
        // A case of no case file (the preflight) is annotated where it is printed.
        if let (Some(_), Event::CaseFinished(result)) = (&self.groups, event)
            && let Some(annotation) = actions::annotation(result, self.strict)
        {
            writeln!(self.out, "{annotation}")?;
        }
        self.pulse.last_line = Instant::now();
        self.out.flush()
    }

    /// Keeps count of the cases running and finished.
    fn follow(&mut self, event: &Event) {
        let pulse = &mut self.pulse;
        match event {
            Event::RunStarted { planned, .. } => {
                pulse.total = planned.len();
                pulse.started = Instant::now();
            }
            Event::CaseStarted(id) => {
                pulse.running.insert(id.index, (id.clone(), Instant::now()));
            }
            Event::CaseFinished(result) => {
                pulse.running.remove(&result.id.index);
                pulse.finished += 1;
                pulse.flaky += usize::from(result.flaky);
            }
            Event::Tick | Event::RunFinished(_) | Event::RunInterrupted { .. } => {}
        }
    }

    /// After a silence of the heartbeat's length, one line saying the run is alive and which
    /// cases take long: a CI log shows no progress bar, and a paced run against a large
    /// merchant can spend minutes in one case.
    fn heartbeat(&mut self) -> io::Result<()> {
        let now = Instant::now();
        let pulse = &self.pulse;
        if self.verbosity == Verbosity::Quiet
            || pulse.total == 0
            || now.duration_since(pulse.last_line) < pulse.every
        {
            return Ok(());
        }
        let mut running: Vec<_> = pulse.running.values().collect();
        running.sort_by_key(|(_, since)| *since);
        let names: Vec<String> = running
            .iter()
            .take(HEARTBEAT_CASES)
            .map(|(id, since)| {
                format!(
                    "{} › {} ({})",
                    escape_controls(&id.file.display().to_string()),
                    escape_controls(&id.name),
                    text::seconds(now.duration_since(*since))
                )
            })
            .collect();
        let more = running.len().saturating_sub(HEARTBEAT_CASES);
        let mut line = format!(
            "… {} in: {} of {} finished",
            text::seconds(now.duration_since(pulse.started)),
            pulse.finished,
            text::plural(pulse.total, "case")
        );
        if !names.is_empty() {
            line.push_str(&format!("; running {}", names.join(", ")));
        }
        if more > 0 {
            line.push_str(&format!(" and {more} more"));
        }
        let dim = self.palette.paint(style::DIM, &line);
        writeln!(self.out, "{dim}")?;
        self.pulse.last_line = now;
        self.out.flush()
    }
}

impl<W: Write> Console<W> {
    fn render_event(&mut self, event: &Event) -> io::Result<()> {
        let p = self.palette;
        match event {
            Event::RunStarted {
                base_url,
                target,
                planned,
            } => {
                if self.verbosity != Verbosity::Quiet {
                    let against = if target.is_empty() || target == base_url {
                        base_url.clone()
                    } else {
                        format!("{target} (the reference server at {base_url})")
                    };
                    writeln!(
                        self.out,
                        "mallcheck: running {} against {}",
                        text::plural(planned.len(), "case"),
                        escape_controls(&against)
                    )?;
                }
            }
            Event::CaseStarted(_) | Event::Tick => {}
            Event::RunInterrupted { by } => {
                writeln!(
                    self.out,
                    "{}: INTERRUPTED by {by} after {} of {}; {} not run",
                    p.paint(style::FAIL, "Summary"),
                    self.pulse.finished,
                    text::plural(self.pulse.total, "case"),
                    self.pulse.total.saturating_sub(self.pulse.finished)
                )?;
            }
            Event::CaseFinished(result) => {
                let show_line = self.verbosity != Verbosity::Quiet
                    || matches!(result.outcome, Outcome::Fail | Outcome::Error);
                if !show_line {
                    return Ok(());
                }
                let label = if result.flaky {
                    format!("{} (flaky)", result.outcome.label())
                } else {
                    result.outcome.label().to_string()
                };
                writeln!(
                    self.out,
                    "{} {} › {} {}",
                    p.paint(outcome_style(result.outcome), &format!("{label:<5}")),
                    escape_controls(&result.id.file.display().to_string()),
                    escape_controls(&result.id.name),
                    p.paint(
                        style::DIM,
                        &format!("({:.3}s)", result.duration.as_secs_f64())
                    ),
                )?;
                if let Some(reason) = &result.skip_reason {
                    self.indented(&format!("skipped: {reason}"))?;
                }
                if self.verbosity != Verbosity::Quiet {
                    for c in &result.coverage {
                        self.indented(&format!("covered: {c}"))?;
                    }
                }
                let shown: Vec<_> = match result.outcome {
                    Outcome::Fail | Outcome::Error => text::blocking(result, self.strict),
                    Outcome::Warn => result
                        .findings
                        .iter()
                        .filter(|f| f.outcome(self.strict) == Outcome::Warn)
                        .collect(),
                    Outcome::Pass | Outcome::Skip => vec![],
                };
                // Verbose prints every exchange below, so the detail leaves its exchange out.
                let verbose = self.verbosity == Verbosity::Verbose;
                if !shown.is_empty() {
                    let detail = if verbose || matches!(result.outcome, Outcome::Warn) {
                        shown
                            .iter()
                            .map(|f| text::finding(f))
                            .chain(text::omitted_lines(result, &shown))
                            .collect::<Vec<_>>()
                            .join("\n")
                    } else {
                        text::case_detail(result, &shown)
                    };
                    self.indented(&detail)?;
                }
                if verbose {
                    for x in &result.exchanges {
                        self.indented(&text::exchange(x))?;
                    }
                }
            }
            Event::RunFinished(summary) => {
                // A pass after a transport retry is still a pass (as nextest counts it), but
                // the summary says how many there were: a service that drops requests shows.
                let flaky = match self.pulse.flaky {
                    0 => String::new(),
                    n => format!(" ({n} flaky: passed only after a transport retry)"),
                };
                writeln!(
                    self.out,
                    "{}: {}: {} passed{flaky}, {} warned, {} failed, {} errored, {} skipped in {:.2}s",
                    p.paint(outcome_style(summary.outcome()), "Summary"),
                    text::plural(summary.total(), "case"),
                    summary.passed,
                    summary.warned,
                    summary.failed,
                    summary.errored,
                    summary.skipped,
                    summary.duration.as_secs_f64()
                )?;
            }
        }
        Ok(())
    }
}

/// An error of the console's writer, saying what could not be written.
fn output_error(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("cannot write the console output: {e}"))
}

impl<W: Write> Sink for Console<W> {
    fn on_event(&mut self, event: &Event) -> io::Result<()> {
        let Some(bar) = self.progress.clone() else {
            return self.write_event(event).map_err(output_error);
        };
        if let Event::RunStarted { planned, .. } = event {
            bar.set_length(planned.len() as u64);
        }
        // A tick prints no line: it redraws the bar, with the running cases and their times.
        let written = match event {
            Event::Tick => {
                bar.set_message(self.running_message());
                bar.tick();
                Ok(())
            }
            Event::RunStarted { .. }
            | Event::CaseStarted(_)
            | Event::CaseFinished(_)
            | Event::RunFinished(_)
            | Event::RunInterrupted { .. } => bar.suspend(|| self.write_event(event)),
        };
        match event {
            Event::CaseStarted(_) | Event::CaseFinished(_) => {
                bar.set_message(self.running_message());
                if matches!(event, Event::CaseFinished(_)) {
                    bar.inc(1);
                }
            }
            Event::RunFinished(_) | Event::RunInterrupted { .. } => bar.finish_and_clear(),
            Event::RunStarted { .. } | Event::Tick => {}
        }
        written.map_err(output_error)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush().map_err(output_error)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;
    use crate::spec::catalog;
    use crate::verdict::event::{CaseId, CaseResult, Finding, RunSummary, SourceLocation};
    use crate::verdict::exchange::{Exchange, RequestRecord, ResponseRecord};

    fn result(index: usize, name: &str, outcome: Outcome) -> CaseResult {
        CaseResult {
            id: CaseId {
                file: PathBuf::from("cases/mall-list.yaml"),
                name: name.to_string(),
                endpoint: "mall-list".to_string(),
                index,
                line: None,
            },
            outcome,
            findings: vec![],
            omitted: vec![],
            exchanges: vec![],
            skip_reason: None,
            flaky: false,
            duration: Duration::from_millis(12 + index as u64),
            coverage: vec![],
        }
    }

    fn exchange() -> Exchange {
        Exchange {
            request: RequestRecord {
                method: "POST".to_string(),
                url: "http://127.0.0.1:8080/optimus/core/open/mall/queryMallList".to_string(),
                headers: vec![
                    ("content-type".to_string(), "application/json".to_string()),
                    ("authorization".to_string(), "app <redacted>".to_string()),
                ],
                body: r#"{"appid":"app"}"#.to_string(),
            },
            response: Some(ResponseRecord {
                status: 200,
                headers: vec![],
                body_excerpt: crate::verdict::exchange::Excerpt::text(
                    r#"{"success":true,"code":"0000","data":[{"state":3}]}"#,
                ),
                body_len: 52,
            }),
            transport_error: None,
            duration: Duration::from_millis(7),
            shows_finding: false,
        }
    }

    /// A run with one case of each outcome, a flaky pass and a summary.
    fn events() -> Vec<Event> {
        let pass = result(0, "first page is a success envelope", Outcome::Pass);
        let mut fail = result(1, "state is in range", Outcome::Fail);
        fail.findings = vec![
            Finding::new(&catalog::MALL_STATE, "/data/0/state", "0, 1 or 2", "3").at(Some(
                SourceLocation {
                    file: PathBuf::from("cases/mall-list.yaml"),
                    line: 12,
                    column: 7,
                },
            )),
        ];
        fail.exchanges = vec![exchange()];
        let mut warn = result(2, "products come in order", Outcome::Warn);
        warn.findings = vec![
            Finding::new(
                &catalog::PRODUCTS_ORDER,
                "/1/spuId",
                "descending",
                "90001 after 90000",
            )
            .with_detail("compared as numbers"),
        ];
        let mut skip = result(3, "products of the given mall", Outcome::Skip);
        skip.skip_reason = Some("the merchant lists no mall".to_string());
        let mut error = result(4, "slow service", Outcome::Error);
        error.findings = vec![Finding::new(
            &catalog::TRANSPORT_TIMEOUT,
            "",
            "a response within 10s",
            "no response",
        )];
        let mut flaky = result(5, "retried page", Outcome::Pass);
        flaky.flaky = true;
        let cases = [pass, fail, warn, skip, error, flaky];
        let mut summary = RunSummary::default();
        let mut out = vec![Event::RunStarted {
            base_url: "http://127.0.0.1:8080".to_string(),
            target: "http://127.0.0.1:8080".to_string(),
            planned: cases.iter().map(|c| c.id.clone()).collect(),
        }];
        for case in cases {
            summary.add(case.outcome);
            out.push(Event::CaseStarted(case.id.clone()));
            out.push(Event::CaseFinished(Box::new(case.seal(&Redactor::new()))));
        }
        summary.duration = Duration::from_millis(1234);
        out.push(Event::RunFinished(summary));
        out
    }

    fn render(color: bool, verbosity: Verbosity) -> String {
        let mut console = Console::new(Vec::new(), &Redactor::new(), color, verbosity, false);
        for event in events() {
            console.on_event(&event).expect("writing to a buffer");
        }
        console.finish().expect("flushing a buffer");
        String::from_utf8(console.into_inner()).expect("UTF-8 output")
    }

    #[test]
    fn normal_console_shows_a_line_per_case_and_details_under_problems() {
        insta::assert_snapshot!(render(false, Verbosity::Normal));
    }

    #[test]
    fn quiet_console_shows_only_failures_and_the_summary() {
        insta::assert_snapshot!(render(false, Verbosity::Quiet));
    }

    #[test]
    fn verbose_console_adds_every_exchange() {
        insta::assert_snapshot!(render(false, Verbosity::Verbose));
    }

    /// A run of three cases where two are still running when ticks arrive.
    fn ticking(heartbeat: Duration, verbosity: Verbosity) -> String {
        let mut console = Console::new(Vec::new(), &Redactor::new(), false, verbosity, false)
            .with_heartbeat(heartbeat);
        let cases: Vec<_> = (0..3)
            .map(|i| result(i, &format!("case {i}"), Outcome::Pass))
            .collect();
        let mut events = vec![Event::RunStarted {
            base_url: "http://127.0.0.1:8080".to_string(),
            target: "http://127.0.0.1:8080".to_string(),
            planned: cases.iter().map(|c| c.id.clone()).collect(),
        }];
        events.extend(cases.iter().map(|c| Event::CaseStarted(c.id.clone())));
        events.push(Event::CaseFinished(Box::new(
            cases[0].clone().seal(&Redactor::new()),
        )));
        events.extend([Event::Tick, Event::Tick]);
        for event in events {
            console.on_event(&event).expect("writing to a buffer");
        }
        String::from_utf8(console.into_inner()).expect("UTF-8 output")
    }

    #[test]
    fn a_silent_console_says_the_run_is_alive_and_what_runs() {
        let out = ticking(Duration::ZERO, Verbosity::Normal);
        let beats: Vec<_> = out.lines().filter(|l| l.starts_with('…')).collect();
        assert_eq!(beats.len(), 2, "one line per tick past the silence: {out}");
        assert!(beats[0].contains("1 of 3 cases finished"), "{out}");
        assert!(
            beats[0].contains(
                "running cases/mall-list.yaml › case 1 (0s), cases/mall-list.yaml › case 2 (0s)"
            ),
            "{out}"
        );
        assert!(
            !beats[0].contains("case 0"),
            "a finished case is not running: {out}"
        );
    }

    #[test]
    fn no_heartbeat_before_the_silence_or_when_quiet() {
        let out = ticking(Duration::from_secs(3600), Verbosity::Normal);
        assert!(!out.contains('…'), "{out}");
        let out = ticking(Duration::ZERO, Verbosity::Quiet);
        assert!(!out.contains('…'), "{out}");
    }

    fn render_one(case: CaseResult, verbosity: Verbosity) -> String {
        render_with(case, verbosity, &Redactor::new())
    }

    fn render_with(case: CaseResult, verbosity: Verbosity, redactor: &Redactor) -> String {
        let mut console = Console::new(Vec::new(), redactor, false, verbosity, false);
        console
            .on_event(&Event::CaseFinished(Box::new(case.seal(&Redactor::new()))))
            .expect("writing to a buffer");
        String::from_utf8(console.into_inner()).expect("UTF-8 output")
    }

    #[test]
    fn a_secret_across_a_line_break_is_scrubbed_from_the_console() {
        let secret = "console-s3cret-first-half\nsecond-half-of-it";
        let redactor = Redactor::new();
        redactor.add_secret(secret);
        let mut skip = result(0, "skipped", Outcome::Skip);
        skip.skip_reason = Some(format!("the service said: {secret}"));
        let out = render_with(skip, Verbosity::Normal, &redactor);
        assert!(!out.contains("first-half"), "{out}");
        assert!(!out.contains("second-half"), "{out}");
        assert!(out.contains("<redacted>"), "{out}");
    }

    #[test]
    fn control_characters_from_the_service_are_escaped_and_an_exchange_shows_once() {
        let mut fail = result(0, "hostile\u{1b}]0;title\u{7}", Outcome::Fail);
        fail.findings = vec![Finding::new(
            &catalog::MALL_STATE,
            "/data/0/state",
            "0, 1 or 2",
            "\"\u{1b}[2J\u{7}x\rPASS\"",
        )];
        let mut x = exchange();
        if let Some(r) = x.response.as_mut() {
            r.body_excerpt = crate::verdict::exchange::Excerpt::text(
                "{\"msg\":\"\u{1b}[31mred\u{7}\rover\u{9b}1m\"}",
            );
        }
        x.transport_error = None;
        fail.exchanges = vec![x];
        for verbosity in [Verbosity::Normal, Verbosity::Verbose] {
            let out = render_one(fail.clone(), verbosity);
            for bad in ['\u{1b}', '\u{7}', '\r', '\u{9b}'] {
                assert!(
                    !out.contains(bad),
                    "{verbosity:?}: {bad:?} printed raw:\n{out}"
                );
            }
            assert!(out.contains("\\u{1b}[2J"), "{out}");
            assert!(out.contains("\\u{1b}[31mred\\u{7}\\u{d}over"), "{out}");
            assert!(out.contains("hostile\\u{1b}]0;title"), "{out}");
            assert_eq!(
                out.matches("response: HTTP 200").count(),
                1,
                "{verbosity:?}:\n{out}"
            );
        }
    }

    #[test]
    fn colour_paints_only_the_labels() {
        let coloured = render(true, Verbosity::Normal);
        assert!(coloured.contains('\u{1b}'), "{coloured}");
        let stripped = anstream::adapter::strip_str(&coloured).to_string();
        assert_eq!(stripped, render(false, Verbosity::Normal));
    }
}
