//! Source spans and case-file diagnostics rendered as `file:line:col` with carets (miette).
//!
//! Every problem found while loading case files becomes one [`Diagnostic`]; [`render`] prints
//! them all through miette's graphical handler, plain unless colour is asked for.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceCode};

use crate::verdict::source::{SourceFile, Span};

/// Width the renderer wraps text at; wide enough that paths and messages rarely wrap.
const RENDER_WIDTH: usize = 120;

/// One problem in one case file (or with reading it).
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// The file's text, when it could be read.
    pub file: Option<Arc<SourceFile>>,
    /// The file's path as given by the user.
    pub path: PathBuf,
    /// Where in the file the problem is; `None` for file-level problems such as I/O errors.
    pub span: Option<Span>,
    /// What is wrong, a lowercase fragment without a trailing period.
    pub message: String,
    /// How to fix it, if we know.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A problem at a span of a loaded file.
    pub fn at(file: &Arc<SourceFile>, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            file: Some(Arc::clone(file)),
            path: file.path.clone(),
            span: Some(span),
            message: message.into(),
            help: None,
        }
    }

    /// A problem with a file as a whole (it could not be read, or a directory holds no cases).
    pub fn for_path(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Diagnostic {
            file: None,
            path: path.into(),
            span: None,
            message: message.into(),
            help: None,
        }
    }

    /// Adds a help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// 1-based line and column of the span's start, when the diagnostic has both a file and a span.
    pub fn line_col(&self) -> Option<(usize, usize)> {
        match (&self.file, &self.span) {
            (Some(file), Some(span)) => Some(file.line_col(span.start)),
            _ => None,
        }
    }
}

impl fmt::Display for Diagnostic {
    /// One line: `path:line:col: message` (or `path: message` without a span).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line_col() {
            Some((line, col)) => {
                write!(f, "{}:{line}:{col}: {}", self.path.display(), self.message)
            }
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for Diagnostic {}

/// What miette renders for one [`Diagnostic`].
#[derive(Debug)]
struct Report {
    title: String,
    help: Option<String>,
    source: Option<NamedSource<String>>,
    label: Option<LabeledSpan>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.title)
    }
}

impl std::error::Error for Report {}

impl miette::Diagnostic for Report {
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|s| s as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        self.label
            .clone()
            .map(|l| Box::new(std::iter::once(l)) as Box<dyn Iterator<Item = LabeledSpan>>)
    }
}

impl Report {
    fn from_diagnostic(d: &Diagnostic) -> Self {
        match (&d.file, &d.span) {
            (Some(file), Some(span)) => {
                let end = span.end.min(file.text.len());
                let start = span.start.min(end);
                Report {
                    title: d.message.clone(),
                    help: d.help.clone(),
                    source: Some(NamedSource::new(
                        file.path.display().to_string(),
                        file.text.clone(),
                    )),
                    label: Some(LabeledSpan::new_primary_with_span(None, start..end)),
                }
            }
            _ => Report {
                title: format!("{}: {}", d.path.display(), d.message),
                help: d.help.clone(),
                source: None,
                label: None,
            },
        }
    }
}

/// Renders diagnostics one after another with miette's graphical handler.
///
/// With `color` false the output holds no ANSI escapes (tests, files, pipes); each diagnostic
/// shows its message, `path:line:col`, the source line, a caret under the span and the help.
pub fn render(diags: &[Diagnostic], color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_links(false)
        .with_urls(false)
        .with_width(RENDER_WIDTH)
        .with_context_lines(1);
    let mut out = String::new();
    for (i, d) in diags.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let report = Report::from_diagnostic(d);
        if handler.render_report(&mut out, &report).is_err() {
            out.push_str(&format!("error: {d}\n"));
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> Arc<SourceFile> {
        Arc::new(SourceFile {
            path: PathBuf::from("cases/bad.yaml"),
            text: text.to_string(),
        })
    }

    #[test]
    fn line_col_is_one_based_and_counts_characters() {
        let f = file("cases:\n  - näme: x\n");
        let d = Diagnostic::at(&f, 14..15, "boom");
        assert_eq!(d.line_col(), Some((2, 7)));
    }

    #[test]
    fn plain_render_names_file_line_and_column_with_caret_and_help() {
        let f = file("cases:\n  - name: a\n    expcet: {}\n");
        let d =
            Diagnostic::at(&f, 23..29, "unknown key `expcet`").with_help("did you mean `expect`?");
        let out = render(&[d], false);
        assert!(
            !out.contains('\u{1b}'),
            "no ANSI escapes in plain output:\n{out}"
        );
        assert!(out.contains("cases/bad.yaml:3:5"), "{out}");
        assert!(out.contains("expcet: {}"), "source line shown:\n{out}");
        assert!(out.contains("unknown key `expcet`"), "{out}");
        assert!(out.contains("did you mean `expect`?"), "{out}");
        assert!(
            out.contains('^') || out.contains('┬') || out.contains('─'),
            "a marker under the span:\n{out}"
        );
    }

    #[test]
    fn diagnostic_without_span_names_the_path() {
        let d = Diagnostic::for_path("cases/missing.yaml", "cannot read file: not found");
        let out = render(std::slice::from_ref(&d), false);
        assert!(
            out.contains("cases/missing.yaml: cannot read file: not found"),
            "{out}"
        );
        assert_eq!(d.line_col(), None);
        assert_eq!(
            d.to_string(),
            "cases/missing.yaml: cannot read file: not found"
        );
    }

    #[test]
    fn several_diagnostics_render_in_order_separated_by_a_blank_line() {
        let f = file("a: 1\nb: 2\n");
        let out = render(
            &[
                Diagnostic::at(&f, 0..1, "first"),
                Diagnostic::at(&f, 5..6, "second"),
            ],
            false,
        );
        let first = out.find("first").expect("first rendered");
        let second = out.find("second").expect("second rendered");
        assert!(first < second, "{out}");
        assert!(
            out[first..second].contains("\n\n"),
            "blank line between:\n{out}"
        );
        assert!(out.contains("cases/bad.yaml:2:1"), "{out}");
    }

    #[test]
    fn span_past_the_end_is_clamped_instead_of_panicking() {
        let f = file("a: 1");
        let out = render(&[Diagnostic::at(&f, 10..20, "late")], false);
        assert!(out.contains("late"), "{out}");
    }
}
