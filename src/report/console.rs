//! Console sink: one status line per case, details under failures, a summary with counts.

use std::io::{self, Write};

use indicatif::{ProgressBar, ProgressStyle};

use crate::report::Sink;
use crate::report::text;
use crate::verdict::event::{Event, Outcome};

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

/// ANSI styles; all empty when colour is off.
#[derive(Debug, Clone, Copy)]
struct Styles {
    pass: &'static str,
    warn: &'static str,
    fail: &'static str,
    dim: &'static str,
    reset: &'static str,
}

impl Styles {
    fn new(color: bool) -> Styles {
        if color {
            Styles {
                pass: "\x1b[32m",
                warn: "\x1b[33m",
                fail: "\x1b[31;1m",
                dim: "\x1b[2m",
                reset: "\x1b[0m",
            }
        } else {
            Styles {
                pass: "",
                warn: "",
                fail: "",
                dim: "",
                reset: "",
            }
        }
    }

    fn outcome(&self, o: Outcome) -> &'static str {
        match o {
            Outcome::Pass => self.pass,
            Outcome::Skip | Outcome::Warn => self.warn,
            Outcome::Fail | Outcome::Error => self.fail,
        }
    }
}

/// Writes human-readable progress to an injected writer.
pub struct Console<W: Write> {
    out: W,
    styles: Styles,
    verbosity: Verbosity,
    strict: bool,
    progress: Option<ProgressBar>,
}

impl<W: Write> Console<W> {
    /// A console sink writing to `out`.
    pub fn new(out: W, color: bool, verbosity: Verbosity, strict: bool) -> Self {
        Console {
            out,
            styles: Styles::new(color),
            verbosity,
            strict,
            progress: None,
        }
    }

    /// Adds a progress bar on stderr (for a terminal); lines print above it.
    pub fn with_progress(mut self) -> Self {
        let style = ProgressStyle::with_template("{bar:30} {pos}/{len} cases {elapsed}")
            .expect("a valid progress template");
        self.progress = Some(ProgressBar::new(0).with_style(style));
        self
    }

    /// The writer back (tests read the captured text).
    pub fn into_inner(self) -> W {
        self.out
    }

    fn indented(&mut self, block: &str) -> io::Result<()> {
        for line in block.lines() {
            writeln!(self.out, "      {line}")?;
        }
        Ok(())
    }
}

impl<W: Write> Console<W> {
    fn render_event(&mut self, event: &Event) -> io::Result<()> {
        let s = self.styles;
        match event {
            Event::RunStarted { base_url, cases } => {
                if self.verbosity != Verbosity::Quiet {
                    writeln!(
                        self.out,
                        "mallcheck: running {} against {base_url}",
                        text::plural(*cases, "case")
                    )?;
                }
            }
            Event::CaseStarted(_) => {}
            Event::CaseFinished(result) => {
                let show_line = self.verbosity != Verbosity::Quiet
                    || matches!(result.outcome, Outcome::Fail | Outcome::Error);
                if !show_line {
                    return Ok(());
                }
                writeln!(
                    self.out,
                    "{}{:<5}{} {} › {} {}({:.3}s){}",
                    s.outcome(result.outcome),
                    if result.flaky {
                        format!("{} (flaky)", result.outcome.label())
                    } else {
                        result.outcome.label().to_string()
                    },
                    s.reset,
                    result.id.file.display(),
                    result.id.name,
                    s.dim,
                    result.duration.as_secs_f64(),
                    s.reset
                )?;
                if let Some(reason) = &result.skip_reason {
                    self.indented(&format!("skipped: {reason}"))?;
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
                if !shown.is_empty() {
                    let detail = if matches!(result.outcome, Outcome::Warn) {
                        shown
                            .iter()
                            .map(|f| text::finding(f))
                            .collect::<Vec<_>>()
                            .join("\n")
                    } else {
                        text::case_detail(result, &shown)
                    };
                    self.indented(&detail)?;
                }
                if self.verbosity == Verbosity::Verbose {
                    for x in &result.exchanges {
                        self.indented(&text::exchange(x))?;
                    }
                }
            }
            Event::RunFinished(summary) => {
                let color = s.outcome(summary.outcome());
                writeln!(
                    self.out,
                    "{color}Summary{}: {}: {} passed, {} warned, {} failed, {} errored, {} skipped in {:.2}s",
                    s.reset,
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

impl<W: Write> Sink for Console<W> {
    fn on_event(&mut self, event: &Event) -> io::Result<()> {
        let Some(bar) = self.progress.clone() else {
            return self.render_event(event);
        };
        if let Event::RunStarted { cases, .. } = event {
            bar.set_length(*cases as u64);
        }
        let written = bar.suspend(|| self.render_event(event));
        match event {
            Event::CaseFinished(_) => bar.inc(1),
            Event::RunFinished(_) => bar.finish_and_clear(),
            Event::RunStarted { .. } | Event::CaseStarted(_) => {}
        }
        written
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
