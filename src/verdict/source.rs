//! Source files, byte spans and spanned values: what diagnostics and findings point into.

use std::ops::Range;
use std::path::PathBuf;

use crate::verdict::event::SourceLocation;

/// A loaded source file (case file), kept whole so diagnostics and findings can point into it.
#[derive(Debug)]
pub struct SourceFile {
    /// Path as given by the user (relative to the cwd when it was relative).
    pub path: PathBuf,
    /// Full text.
    pub text: String,
}

impl SourceFile {
    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..offset];
        // A byte count (vectorised), not a char pattern search: a run asks this of every case.
        let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }

    /// Location of a span's start, for findings.
    pub fn location(&self, span: &Span) -> SourceLocation {
        let (line, column) = self.line_col(span.start);
        SourceLocation {
            file: self.path.clone(),
            line,
            column,
        }
    }
}

/// A byte range in a case file.
pub type Span = Range<usize>;

/// A value and the span it came from.
#[derive(Debug, Clone)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub span: Span,
}

impl<T> Spanned<T> {
    /// Wraps a value with its span.
    pub fn new(value: T, span: Span) -> Self {
        Spanned { value, span }
    }
}
