//! Source spans and case-file diagnostics rendered as `file:line:col` with carets (miette).
//!
//! Every problem found while loading case files becomes one [`Diagnostic`]; [`render`] prints
//! them all through miette's graphical handler, plain unless colour is asked for. Whatever the
//! file holds, what is printed is bounded: messages keep their start and end, the source is
//! quoted as a few lines cut to a window around the span, and control characters are escaped
//! so a case file cannot move the cursor or clear the terminal.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents,
};

use crate::redact::REDACTED;
use crate::verdict::source::{SourceFile, Span};

/// Width the renderer wraps text at; wide enough that paths and messages rarely wrap.
const RENDER_WIDTH: usize = 120;

/// Longest message or help kept, in characters; a longer one keeps its start and its end.
const MAX_MESSAGE_CHARS: usize = 400;

/// Characters of a message kept after the cut (the rest of the budget goes to its start).
const MESSAGE_TAIL_CHARS: usize = 120;

/// Widest source line quoted, in rendered characters; longer lines show a window around the
/// span between `…` marks.
const MAX_LINE_CHARS: usize = 100;

/// Lines of a multi-line span quoted; the label stops at the end of the last one.
const MAX_SPAN_LINES: usize = 6;

/// Marks text left out of a quoted line or message.
const ELLIPSIS: char = '…';

/// One problem in one case file (or with reading it).
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// The file's text, when it could be read.
    pub file: Option<Arc<SourceFile>>,
    /// The file's path as given by the user.
    pub path: PathBuf,
    /// Where in the file the problem is; `None` for file-level problems such as I/O errors.
    pub span: Option<Span>,
    /// What is wrong, a lowercase fragment without a trailing period (bounded, control
    /// characters escaped: see [`printable`]).
    pub message: String,
    /// How to fix it, if we know (bounded and escaped like the message).
    pub help: Option<String>,
    /// Byte ranges of the file never quoted (a password or key on a quoted line): each shows
    /// as `<redacted>`.
    pub hidden: Box<[Range<usize>]>,
}

impl Diagnostic {
    /// A problem at a span of a loaded file.
    pub fn at(file: &Arc<SourceFile>, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            file: Some(Arc::clone(file)),
            path: file.path.clone(),
            span: Some(span),
            message: printable(&message.into()),
            help: None,
            hidden: Box::default(),
        }
    }

    /// A problem with a file as a whole (it could not be read, or a directory holds no cases).
    pub fn for_path(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Diagnostic {
            file: None,
            path: path.into(),
            span: None,
            message: printable(&message.into()),
            help: None,
            hidden: Box::default(),
        }
    }

    /// Adds a help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(printable(&help.into()));
        self
    }

    /// Hides byte ranges of the file from the quoted source (see [`Diagnostic::hidden`]).
    pub fn with_hidden(mut self, hidden: Vec<Range<usize>>) -> Self {
        self.hidden = hidden.into_boxed_slice();
        self
    }

    /// Keeps the run's secrets out of what this diagnostic prints, for a file that holds one
    /// literally: every occurrence in the file (in any ASCII letter case) is hidden from the
    /// quoted source before it is cut to its window, and every run of
    /// [`MIN_FRAGMENT_CHARS`] characters or more of a secret left in the message or the help
    /// (both already cut, which may have cut a secret in two) becomes `<redacted>`.
    pub fn hiding_secrets(mut self, secrets: &[&str]) -> Self {
        let secrets: Vec<&str> = secrets
            .iter()
            .copied()
            .filter(|s| s.chars().count() >= MIN_FRAGMENT_CHARS)
            .collect();
        if secrets.is_empty() {
            return self;
        }
        if let Some(file) = &self.file
            && let Ok(finder) = aho_corasick::AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(&secrets)
        {
            let mut hidden = self.hidden.to_vec();
            hidden.extend(finder.find_overlapping_iter(&file.text).map(|m| m.range()));
            self.hidden = hidden.into_boxed_slice();
        }
        self.message = scrub_fragments(&self.message, &secrets);
        self.help = self.help.map(|h| scrub_fragments(&h, &secrets));
        self
    }

    /// 1-based line and column of the span's start, when the diagnostic has both a file and a span.
    pub fn line_col(&self) -> Option<(usize, usize)> {
        match (&self.file, &self.span) {
            (Some(file), Some(span)) => Some(file.line_col(span.start)),
            _ => None,
        }
    }

    /// The path as printed: control characters escaped.
    fn shown_path(&self) -> String {
        escape_controls(&self.path.display().to_string()).into_owned()
    }
}

impl fmt::Display for Diagnostic {
    /// One line: `path:line:col: message` (or `path: message` without a span).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.shown_path();
        let message = printable(&self.message);
        match self.line_col() {
            Some((line, col)) => write!(f, "{path}:{line}:{col}: {message}"),
            None => write!(f, "{path}: {message}"),
        }
    }
}

impl std::error::Error for Diagnostic {}

/// `text` made safe to print on one line: control characters (and the bidirectional
/// overrides that reorder what a terminal shows) escaped, and at most [`MAX_MESSAGE_CHARS`]
/// characters, the middle replaced by `…` when it is longer.
pub fn printable(text: &str) -> String {
    let escaped = escape_controls(text);
    let count = escaped.chars().count();
    if count <= MAX_MESSAGE_CHARS {
        return escaped.into_owned();
    }
    let head: String = escaped
        .chars()
        .take(MAX_MESSAGE_CHARS - MESSAGE_TAIL_CHARS - 1)
        .collect();
    let tail: String = escaped.chars().skip(count - MESSAGE_TAIL_CHARS).collect();
    format!("{head}{ELLIPSIS}{tail}")
}

/// Shortest run of a secret's characters that [`scrub_fragments`] hides: as long as the
/// shortest secret the redactor scrubs (`redact::MIN_SECRET_LEN`).
pub const MIN_FRAGMENT_CHARS: usize = 8;

/// `text` with every whole occurrence of one of `secrets` (ASCII letter case aside) replaced
/// by `<redacted>`, and what a cut left of one: a run of at least [`MIN_FRAGMENT_CHARS`] of its
/// first characters that ends the text or a `…`, or of its last characters that begins the
/// text or follows a `…`. A run of a secret's characters inside other text is not a cut of it
/// (`MALLCHECK_APPID` holds nine letters of the demo key `mallcheck-demo-key`, and was shown
/// as `<redacted>_APPID` in every message).
pub fn scrub_fragments(text: &str, secrets: &[&str]) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut hide = vec![false; chars.len()];
    for secret in secrets {
        let key: Vec<char> = secret.chars().collect();
        // Longest common suffix of text[..=i] and key[..=j], one row at a time.
        let mut row = vec![0usize; key.len() + 1];
        for (i, &c) in chars.iter().enumerate() {
            for j in (0..key.len()).rev() {
                row[j + 1] = if c.eq_ignore_ascii_case(&key[j]) {
                    row[j] + 1
                } else {
                    0
                };
                let run = row[j + 1];
                if run < MIN_FRAGMENT_CHARS {
                    continue;
                }
                let start = i + 1 - run;
                let is_cut = |at: Option<&char>| at.is_none_or(|&c| c == ELLIPSIS);
                let whole = run == key.len();
                let prefix_at_cut = j + 1 == run && is_cut(chars.get(i + 1));
                let suffix_at_cut =
                    j + 1 == key.len() && is_cut(start.checked_sub(1).map(|b| &chars[b]));
                if whole || prefix_at_cut || suffix_at_cut {
                    hide[start..=i].iter_mut().for_each(|h| *h = true);
                }
            }
        }
    }
    if !hide.contains(&true) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        if !hide[i] {
            out.push(c);
        } else if i == 0 || !hide[i - 1] {
            out.push_str(REDACTED);
        }
    }
    out
}

/// Longest value quoted by [`quote`], in characters.
const MAX_QUOTE_CHARS: usize = 60;

/// A value from a case file in backticks for a message: escaped like [`printable`] and cut to
/// a few dozen characters (`…` marks the cut).
pub fn quote(text: &str) -> String {
    let escaped = escape_controls(text);
    if escaped.chars().count() <= MAX_QUOTE_CHARS {
        return format!("`{escaped}`");
    }
    let head: String = escaped.chars().take(MAX_QUOTE_CHARS - 1).collect();
    format!("`{head}{ELLIPSIS}`")
}

/// Whether `c` must not reach a terminal as is: a C0 or C1 control character, DEL, or a
/// bidirectional override or isolate.
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The first character of `text` that must not reach a terminal as is (a control character
/// or a bidirectional override), if any.
pub fn first_unsafe(text: &str) -> Option<char> {
    text.chars().find(|&c| is_unsafe(c))
}

/// `text` with every [unsafe](is_unsafe) character written as a Rust escape (`\t`, `\n`,
/// `\u{1b}`).
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let command_at = ci_command_at(text);
    if command_at.is_none() && !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for (at, c) in text.char_indices() {
        match c {
            // One character of a CI runner's command, escaped: the line reads the same to a
            // person and is no command (see `ci_command_at`).
            ':' | '#' if command_at.as_ref().is_some_and(|cmds| cmds.contains(&at)) => {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => push_char(&mut out, c),
        }
    }
    Cow::Owned(out)
}

/// Where a line of text from outside (a service's answer) would read as a command to a CI
/// runner: GitHub Actions takes a line that starts, after white space, with `::` (`::error`,
/// `::add-mask::`, `::stop-commands::`), Azure Pipelines a `##vso[` or `##[` anywhere. Gives
/// the byte offset of the character to escape in each (the first `:`, the second `#`), or
/// `None` when there is none. The text is taken as one line (callers escape line by line).
fn ci_command_at(text: &str) -> Option<Vec<usize>> {
    let mut at = Vec::new();
    let lead = text.len() - text.trim_start().len();
    if text[lead..].starts_with("::") {
        at.push(lead);
    }
    let mut from = 0;
    while let Some(i) = text[from..].find("##") {
        let i = from + i;
        let rest = &text[i + 2..];
        if rest.starts_with('[') || rest.starts_with("vso[") {
            at.push(i + 1);
        }
        from = i + 1;
    }
    (!at.is_empty()).then_some(at)
}

fn push_char(out: &mut String, c: char) {
    match c {
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if is_unsafe(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        c => out.push(c),
    }
}

/// `text` with every [unsafe](is_unsafe) character escaped but its line breaks kept: a
/// multi-line message whose lines may quote a service or a case file.
pub fn escape_controls_by_line(text: &str) -> String {
    text.split('\n')
        .map(escape_controls)
        .collect::<Vec<_>>()
        .join("\n")
}

/// How many characters `c` takes once printed in a quoted source line.
fn shown_width(c: char) -> usize {
    match c {
        '\t' => 4,
        c if is_unsafe(c) => format!("\\u{{{:x}}}", u32::from(c)).len(),
        _ => 1,
    }
}

/// A few lines of a case file around a span, cut and escaped, with the span moved into them.
#[derive(Debug, PartialEq)]
struct Excerpt {
    /// The quoted lines joined by `\n`.
    text: String,
    /// The span inside `text`.
    label: Range<usize>,
    /// 0-based number of the first quoted line in the file.
    first_line: usize,
}

/// Quotes the line of `span` with one line of context on each side (at most
/// [`MAX_SPAN_LINES`] lines of the span itself), each cut to a window of [`MAX_LINE_CHARS`]
/// around the span's column, control characters escaped (tabs kept); each `hidden` range shows
/// as `<redacted>`.
fn excerpt(text: &str, span: &Span, hidden: &[Range<usize>]) -> Excerpt {
    let start = floor_boundary(text, span.start.min(text.len()));
    let mut end = ceil_boundary(text, span.end.clamp(start, text.len()));
    let start_line = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let start_line_no = text.as_bytes()[..start]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();

    let mut last_line = start_line;
    let mut span_lines = 1;
    loop {
        let line_end = line_end(text, last_line);
        if end <= line_end || line_end == text.len() {
            break;
        }
        if span_lines == MAX_SPAN_LINES {
            end = line_end;
            break;
        }
        last_line = line_end + 1;
        span_lines += 1;
    }
    let (first, first_line) = if start_line == 0 {
        (0, start_line_no)
    } else {
        let prev = text[..start_line - 1].rfind('\n').map_or(0, |i| i + 1);
        (prev, start_line_no - 1)
    };
    let last_end = line_end(text, last_line);
    let stop = if last_end + 1 < text.len() {
        line_end(text, last_end + 1)
    } else {
        last_end
    };

    let line_text = |from: usize| {
        let to = line_end(text, from);
        let line = &text[from..to];
        line.strip_suffix('\r').unwrap_or(line)
    };
    let window = window_start(line_text(start_line), start - start_line);

    let mut out = String::new();
    let mut marks = [(start, None), (end, None)];
    let mut from = first;
    loop {
        let to = line_end(text, from);
        let line = Line {
            text: line_text(from),
            from,
            to,
        };
        push_line(&mut out, &line, window, hidden, &mut marks);
        if to >= stop {
            break;
        }
        out.push('\n');
        from = to + 1;
    }
    let at = |m: Option<usize>| m.unwrap_or(out.len());
    let label_start = at(marks[0].1);
    let label_end = at(marks[1].1).max(label_start);
    Excerpt {
        label: label_start..label_end,
        text: out,
        first_line,
    }
}

/// Byte offset of the `\n` ending the line that starts at `from` (or the end of the text).
fn line_end(text: &str, from: usize) -> usize {
    text[from..].find('\n').map_or(text.len(), |i| from + i)
}

/// The first character (by index) of the window shown of a line whose span starts at byte
/// `col_byte`: 0 when the span's column fits in two thirds of the window, otherwise so that a
/// third of the window shows what comes before it.
fn window_start(line: &str, col_byte: usize) -> usize {
    let before = &line[..floor_boundary(line, col_byte.min(line.len()))];
    let width: usize = before.chars().map(shown_width).sum();
    if width <= MAX_LINE_CHARS * 2 / 3 {
        return 0;
    }
    let mut kept = 0;
    let mut skipped = before.chars().count();
    for c in before.chars().rev() {
        kept += shown_width(c);
        if kept > MAX_LINE_CHARS / 3 {
            break;
        }
        skipped -= 1;
    }
    skipped
}

/// One line of the quoted file: its text (without the line break), the file offset it starts
/// at and that of its `\n`.
struct Line<'a> {
    text: &'a str,
    from: usize,
    to: usize,
}

/// Appends the shown part of one line and places every mark (a file offset) that falls on it;
/// a character inside a `hidden` range is not shown, each run of them becomes `<redacted>`.
fn push_line(
    out: &mut String,
    line: &Line<'_>,
    window: usize,
    hidden: &[Range<usize>],
    marks: &mut [(usize, Option<usize>)],
) {
    let mut width = 0;
    let mut cut = false;
    let mut in_hidden: Option<usize> = None;
    for (index, (offset, c)) in line.text.char_indices().enumerate() {
        if index < window {
            continue;
        }
        if index == window && window > 0 {
            out.push(ELLIPSIS);
        }
        let at = line.from + offset;
        if let Some(range) = hidden.iter().find(|r| r.contains(&at)) {
            place(marks, at, out.len());
            if in_hidden != Some(range.start) {
                if width + REDACTED.len() > MAX_LINE_CHARS {
                    cut = true;
                    break;
                }
                in_hidden = Some(range.start);
                width += REDACTED.len();
                out.push_str(REDACTED);
            }
            continue;
        }
        in_hidden = None;
        if width + shown_width(c) > MAX_LINE_CHARS {
            cut = true;
            break;
        }
        place(marks, at, out.len());
        width += shown_width(c);
        if c == '\t' {
            out.push(c);
        } else {
            push_char(out, c);
        }
    }
    let hidden_line =
        window > 0 && !line.text.is_empty() && line.text.chars().nth(window).is_none();
    if hidden_line {
        out.push(ELLIPSIS);
    }
    place(marks, line.to, out.len());
    if cut {
        out.push(ELLIPSIS);
    }
}

/// Gives every unplaced mark at or before file offset `upto` the excerpt position `at`.
fn place(marks: &mut [(usize, Option<usize>)], upto: usize, at: usize) {
    for (offset, shown) in marks.iter_mut() {
        if shown.is_none() && *offset <= upto {
            *shown = Some(at);
        }
    }
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The source miette reads: an [`Excerpt`] whose line numbers are those of the file.
#[derive(Debug)]
struct Quoted {
    name: String,
    excerpt: Excerpt,
}

impl SourceCode for Quoted {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner = self
            .excerpt
            .text
            .read_span(span, context_lines_before, context_lines_after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            inner.line() + self.excerpt.first_line,
            inner.column(),
            inner.line_count(),
        )))
    }
}

/// What miette renders for one [`Diagnostic`].
#[derive(Debug)]
struct Report {
    title: String,
    help: Option<String>,
    source: Option<Quoted>,
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
        let help = d.help.as_deref().map(printable);
        match (&d.file, &d.span, d.line_col()) {
            (Some(file), Some(span), Some((line, col))) => {
                let excerpt = excerpt(&file.text, span, &d.hidden);
                let label = LabeledSpan::new_primary_with_span(None, excerpt.label.clone());
                Report {
                    title: printable(&d.message),
                    help,
                    source: Some(Quoted {
                        name: format!("{}:{line}:{col}", d.shown_path()),
                        excerpt,
                    }),
                    label: Some(label),
                }
            }
            _ => Report {
                title: format!("{}: {}", d.shown_path(), printable(&d.message)),
                help,
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
/// A `key: value` pair of YAML or JSON text, block or flow style, the value quoted or plain.
static YAML_PAIR: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r#"(?m)(?:^|[{,\s])["']?([A-Za-z0-9_.-]+)["']?[ \t]*:[ \t]*("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^,{}\[\]\n#"'\s][^,}\n#]*)"#,
    )
    .expect("a valid pattern")
});

/// Byte ranges of a case file's text a diagnostic never quotes: the value of every key whose
/// name says it carries a credential (`X-Api-Key: "…"`, `Cookie: …`, `Authorization: …`), as a
/// case's headers write it. The case language's own keys with such parts (`auth`,
/// `tamper-signature`, `secret-headers`) name modes and header names, not credentials.
fn credential_values(text: &str) -> Vec<Range<usize>> {
    const CASE_KEYS: [&str; 3] = ["auth", "tamper-signature", "secret-headers"];
    YAML_PAIR
        .captures_iter(text)
        .filter_map(|pair| {
            let (key, value) = (pair.get(1)?, pair.get(2)?);
            let key = key.as_str();
            (crate::redact::is_secret_header_name(key) && !CASE_KEYS.contains(&key))
                .then(|| value.range())
        })
        .collect()
}

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
        .with_context_lines(1)
        .without_primary_span_start();
    let mut out = String::new();
    for (i, d) in diags.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        // A case file may hold a literal credential in a header: never quoted.
        let mut d = d.clone();
        if let Some(file) = &d.file {
            let mut hidden = d.hidden.to_vec();
            hidden.extend(credential_values(&file.text));
            hidden.sort_by_key(|r| r.start);
            d.hidden = hidden.into_boxed_slice();
        }
        let report = Report::from_diagnostic(&d);
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

    /// A service's answer printed in a CI log cannot issue the runner's commands (a fake
    /// annotation, a mask, `::stop-commands::` silencing mallcheck's own annotations).
    #[test]
    fn a_ci_runner_command_from_outside_is_escaped() {
        for (line, shown) in [
            (
                "::error file=x,line=1::INJECTED",
                "\\u{3a}:error file=x,line=1::INJECTED",
            ),
            ("   ::add-mask::zz", "   \\u{3a}:add-mask::zz"),
            (
                "x ##vso[task.setvariable variable=a]b",
                "x #\\u{23}vso[task.setvariable variable=a]b",
            ),
            ("##[group]g", "#\\u{23}[group]g"),
            ("a :: b ## c #", "a :: b ## c #"),
        ] {
            assert_eq!(escape_controls(line), shown, "{line}");
        }
        assert_eq!(
            escape_controls_by_line("HTTP 500: oops\n::endgroup::"),
            "HTTP 500: oops\n\\u{3a}:endgroup::"
        );
    }

    #[test]
    fn secrets_cut_by_a_window_or_a_message_limit_leave_no_fragment() {
        let key = "Zq7Xw2Lp9Rt4Vb8Nc3Mk6HyT5Gd1Fs0A";
        // A fragment at a cut, in another letter case, and a whole one.
        let message = format!("unknown key `{}…` and {}", &key[..20], key.to_lowercase());
        let shown = scrub_fragments(&message, &[key]);
        assert_eq!(shown, "unknown key `<redacted>…` and <redacted>");
        assert_eq!(scrub_fragments("Zq7Xw2L", &[key]), "Zq7Xw2L");
        // Its last characters after a cut, and nine letters of a key inside other words.
        assert_eq!(
            scrub_fragments(&format!("…{}", &key[10..]), &[key]),
            "…<redacted>"
        );
        let demo = "mallcheck-demo-key";
        let words = "undefined variable `MALLCHECK_UNDEFINED`; try `mallcheck fuzz`";
        assert_eq!(scrub_fragments(words, &[demo]), words);

        let text = format!("    appid: \"{}{key}\"\n", "x".repeat(80));
        let f = file(&text);
        let d = Diagnostic::at(&f, 4..9, "bad appid").hiding_secrets(&[key]);
        let out = render(&[d], false);
        assert!(!out.contains(&key[..8]), "{out}");
        for i in 0..key.len() - 8 {
            assert!(!out.contains(&key[i..i + 8]), "{out}");
        }
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

    #[test]
    fn span_past_column_65536_renders_a_window_instead_of_panicking() {
        let text = format!(
            "{{\"cases\": [{{\"tags\": [\"{}\"], \"expcet\": 1}}]}}",
            "x".repeat(69_000)
        );
        let at = text.find("expcet").expect("in text");
        let f = file(&text);
        let out = render(
            &[Diagnostic::at(&f, at..at + 8, "unknown key `expcet`")],
            false,
        );
        assert!(
            out.contains(&format!("cases/bad.yaml:1:{}", at + 1)),
            "{out}"
        );
        assert!(out.contains("\"expcet\": 1"), "the span is quoted:\n{out}");
        assert!(out.contains('…'), "the cut is marked:\n{out}");
        assert!(out.len() < 2_000, "bounded output, got {} bytes", out.len());
    }

    #[test]
    fn control_characters_are_escaped_in_message_help_path_and_source() {
        let f = Arc::new(SourceFile {
            path: PathBuf::from("cases/\u{1b}]0;x.yaml"),
            text: "cases:\n  - name: a\u{1b}[2Jb\u{202e}\n".to_string(),
        });
        let d = Diagnostic::at(&f, 17..21, "duplicate case name `a\u{1b}[2Jb`")
            .with_help("see \u{9b}31m");
        let out = render(std::slice::from_ref(&d), false);
        for bad in ['\u{1b}', '\u{9b}', '\u{202e}'] {
            assert!(!out.contains(bad), "{bad:?} printed raw:\n{out}");
            assert!(!d.to_string().contains(bad), "{bad:?} in Display: {d}");
        }
        assert!(out.contains("`a\\u{1b}[2Jb`"), "{out}");
        assert!(out.contains("name: a\\u{1b}[2Jb\\u{202e}"), "{out}");
        assert!(out.contains("see \\u{9b}31m"), "{out}");
    }

    #[test]
    fn hidden_ranges_are_quoted_as_redacted_and_the_caret_still_fits() {
        let text = "url = \"https://u:pw-secret@h\"\nbad = 1x\n";
        let at = text.find("u:pw").expect("in text");
        let f = file(text);
        let bad = text.find("1x").expect("in text");
        let d = Diagnostic::at(&f, bad..bad + 2, "bad value")
            .with_hidden(std::iter::once(at..at + 11).collect());
        let out = render(std::slice::from_ref(&d), false);
        assert!(!out.contains("pw-secret"), "{out}");
        assert!(out.contains("https://<redacted>@h"), "{out}");
        assert!(out.contains("cases/bad.yaml:2:7"), "{out}");
        let e = excerpt(text, &(at..at + 11), &d.hidden);
        assert_eq!(&e.text[e.label.clone()], REDACTED, "{e:?}");
    }

    #[test]
    fn a_huge_message_keeps_its_start_and_end() {
        let f = file("a: 1\n");
        let message = format!(
            "invalid regex `[{}`: unclosed character class",
            "a".repeat(1_000_000)
        );
        let out = render(&[Diagnostic::at(&f, 0..1, message)], false);
        assert!(out.len() < 2_000, "bounded output, got {} bytes", out.len());
        assert!(
            out.contains("invalid regex") && out.contains("`[aaa"),
            "{out}"
        );
        assert!(out.contains("unclosed character"), "{out}");
    }

    #[test]
    fn a_long_multi_line_span_is_cut_after_a_few_lines() {
        let text: String = (0..100).map(|i| format!("line{i}: x\n")).collect();
        let f = file(&text);
        let out = render(&[Diagnostic::at(&f, 0..text.len(), "everything")], false);
        assert!(out.contains("line0"), "{out}");
        assert!(!out.contains("line50"), "{out}");
        assert!(out.lines().count() < 20, "{out}");
    }

    #[test]
    fn excerpt_moves_the_span_into_the_quoted_lines() {
        let rows: &[(&str, &str, Span, &str, usize)] = &[
            (
                "short line kept whole",
                "a: 1\nb: two\nc: 3\n",
                8..11,
                "two",
                0,
            ),
            (
                "first line has no line before",
                "key: v\nz\n",
                0..3,
                "key",
                0,
            ),
            (
                "crlf endings",
                "a: 1\r\nb: two\r\nc: 3\r\n",
                9..12,
                "two",
                0,
            ),
            ("span at the end of the text", "a: 1\nb", 7..7, "", 0),
            ("tab kept", "a:\n\tb: x\n", 4..5, "b", 0),
            (
                "escaped control inside span",
                "a: \u{7}x\n",
                3..5,
                "\\u{7}x",
                0,
            ),
        ];
        for (why, text, span, want, first_line) in rows {
            let e = excerpt(text, span, &[]);
            assert_eq!(&e.text[e.label.clone()], *want, "{why}: {e:?}");
            assert_eq!(e.first_line, *first_line, "{why}");
        }
        let long = format!("k: {}TARGET{}\n", "y".repeat(500), "z".repeat(500));
        let at = long.find("TARGET").expect("in text");
        let e = excerpt(&long, &(at..at + 6), &[]);
        assert_eq!(&e.text[e.label.clone()], "TARGET");
        assert!(e.text.starts_with('…') && e.text.ends_with('…'), "{e:?}");
        assert!(e.text.chars().count() <= MAX_LINE_CHARS + 2, "{e:?}");
        let with_context = format!("short: 1\n{long}");
        let e = excerpt(&with_context, &(at + 9..at + 15), &[]);
        assert_eq!(&e.text[e.label.clone()], "TARGET");
        assert!(
            e.text.starts_with("…\n…"),
            "a context line cut away entirely shows `…`: {e:?}"
        );
    }
}

#[cfg(test)]
mod credential_tests {
    use super::credential_values;

    #[test]
    fn credential_header_values_of_a_case_file_are_found_and_case_keys_are_not() {
        let text = "request:\n  auth: wrong-signature\n  headers: { X-Api-Key: \"k-1234567\", \
                    Cookie: 'session=abc123456' }\n  headers:\n    Authorization: Bearer tok-987654321\n";
        let hidden: Vec<&str> = credential_values(text)
            .into_iter()
            .map(|r| &text[r])
            .collect();
        assert_eq!(
            hidden,
            [
                "\"k-1234567\"",
                "'session=abc123456'",
                "Bearer tok-987654321"
            ]
        );
    }
}
