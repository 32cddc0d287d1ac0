//! Lowering of `expect`: status, schema, checks, JSONPath assertions (their filter regexes
//! checked at load) and snapshots.

use regex::{Regex, RegexBuilder};
use serde_json::Value;
use serde_json_path::JsonPath;

use super::lower::{Lower, backticked, choice_help, head};
use super::{
    ASSERT_KEYS, ASSERT_OPS, ASSERT_TYPES, EXCHANGE_CHECKS, EXPECT_KEYS, NO_DATA_CHECKS,
    SCHEMA_NONE, SNAPSHOT_KEYS,
};
use crate::case::model::{AssertOp, Assertion, Expect, ExpectedStatus, SnapshotSpec, limits};
use crate::case::node::{Key, Node, NodeKind};
use crate::json::selector::Selector;
use crate::verdict::source::Spanned;

impl Lower<'_> {
    pub(super) fn expect(&mut self, node: &Node) -> Option<Expect> {
        let fields = self.fields(node, "`expect`", EXPECT_KEYS)?;
        let mut ok = true;
        let mut expect = Expect {
            schema_enabled: true,
            ..Expect::default()
        };
        if let Some(s) = fields.get("status") {
            let class = match &s.kind {
                NodeKind::Str(text) => Some((ExpectedStatus::class(text), text.as_str())),
                _ => None,
            };
            match class {
                Some((Some(class), _)) => expect.status = Some(Spanned::new(class, s.span.clone())),
                Some((None, text)) => {
                    self.error(
                        s.span.clone(),
                        format!(
                            "`expect.status` must be an HTTP status code (100-599) or a class \
                             such as `2xx`, found the string `{text}`"
                        ),
                    );
                    ok = false;
                }
                None => match self.uint(s, "`expect.status`") {
                    Some(code @ 100..=599) => {
                        expect.status = Some(Spanned::new(
                            ExpectedStatus::Code(code as u16),
                            s.span.clone(),
                        ))
                    }
                    Some(code) => {
                        self.error(
                        s.span.clone(),
                        format!(
                            "`expect.status` must be an HTTP status code (100-599), found {code}"
                        ),
                    );
                        ok = false;
                    }
                    None => ok = false,
                },
            }
        }
        if let Some(s) = fields.get("schema") {
            match self.string(s, "`expect.schema`") {
                Some(name) if name.value == SCHEMA_NONE => expect.schema_enabled = false,
                Some(name) if self.cx.schema_names.contains(&name.value.as_str()) => {
                    expect.schema = Some(name)
                }
                Some(name) => {
                    let mut valid: Vec<&str> = self.cx.schema_names.to_vec();
                    valid.push(SCHEMA_NONE);
                    let help = choice_help(&name.value, &valid, "schema names");
                    self.error_help(name.span, format!("unknown schema `{}`", name.value), help);
                    ok = false;
                }
                None => ok = false,
            }
        }
        if let Some(c) = fields.get("checks") {
            match &c.kind {
                NodeKind::Seq(items) => {
                    for item in items {
                        match self.check_ref(item, "`expect.checks`", EXCHANGE_CHECKS) {
                            Some(r)
                                if expect.checks.iter().any(|x| std::ptr::eq(x.check, r.check)) =>
                            {
                                self.error(
                                    r.span,
                                    format!("check `{}` is listed twice", r.check.id),
                                );
                                ok = false;
                            }
                            Some(r) => expect.checks.push(r),
                            None => ok = false,
                        }
                    }
                }
                _ => {
                    self.type_error(c, "`expect.checks`", "a sequence of check ids");
                    ok = false;
                }
            }
        }
        if let Some(n) = fields.get("no-data") {
            match self.check_ref(n, "`expect.no-data`", NO_DATA_CHECKS) {
                Some(r) => expect.no_data = Some(r),
                None => ok = false,
            }
        }
        if let Some(a) = fields.get("assert") {
            match &a.kind {
                NodeKind::Seq(items) => {
                    ok &= self.fits(items, limits::MAX_ASSERTIONS, "`expect.assert`");
                    for item in items.iter().take(limits::MAX_ASSERTIONS) {
                        match self.assertion(item) {
                            Some(x) => expect.asserts.push(x),
                            None => ok = false,
                        }
                    }
                }
                _ => {
                    self.type_error(a, "`expect.assert`", "a sequence of assertions");
                    ok = false;
                }
            }
        }
        ok.then_some(expect)
    }

    pub(super) fn assertion(&mut self, node: &Node) -> Option<Assertion> {
        let fields = self.fields(node, "an assertion", ASSERT_KEYS)?;
        let path = self
            .require(&fields, "path", node, "an assertion")
            .and_then(|p| self.json_path(p));
        let ops: Vec<&Key> = ASSERT_OPS.iter().filter_map(|k| fields.key(k)).collect();
        let op_key = match ops.as_slice() {
            [] => {
                self.error_help(
                    head(node),
                    "an assertion needs an operator",
                    format!("add one of {}", backticked(ASSERT_OPS)),
                );
                None
            }
            [one] => Some(*one),
            [first, rest @ ..] => {
                for other in rest {
                    self.error_help(
                        other.span.clone(),
                        format!(
                            "an assertion has one operator, but `{}` is set as well as `{}`",
                            other.text, first.text
                        ),
                        "write one assertion per operator",
                    );
                }
                None
            }
        };
        let op = op_key.and_then(|k| fields.get(&k.text).and_then(|v| self.assert_op(&k.text, v)));
        let (path_text, path) = path?;
        Some(Assertion {
            path_text,
            path,
            op: op?,
            span: node.span.clone(),
        })
    }

    pub(super) fn json_path(&mut self, node: &Node) -> Option<(String, JsonPath)> {
        let text = self.string(node, "`path`")?;
        let chars = text.value.chars().count();
        if chars > limits::MAX_JSON_PATH_CHARS {
            self.error(
                text.span,
                format!(
                    "the JSONPath is {chars} characters, more than the limit of {}",
                    limits::MAX_JSON_PATH_CHARS
                ),
            );
            return None;
        }
        match JsonPath::parse(&text.value) {
            Ok(p) => self
                .json_path_parts(node, &text.value)
                .then_some((text.value, p)),
            Err(e) => {
                let pos = e.position().min(text.value.len());
                let at = match &node.kind {
                    NodeKind::Str(raw)
                        if raw == &text.value && text.value.is_char_boundary(pos) =>
                    {
                        let end = text.value[pos..]
                            .chars()
                            .next()
                            .map_or(pos, |c| pos + c.len_utf8());
                        self.inner_span(&node.span, raw, pos..end)
                    }
                    _ => node.span.clone(),
                };
                self.error_help(
                    at,
                    format!(
                        "invalid JSONPath `{}`: {} (at position {})",
                        text.value,
                        e.message(),
                        e.position()
                    ),
                    "paths follow RFC 9535, e.g. `$.data[*].mallSn` or `$.data[0].topTime`",
                );
                None
            }
        }
    }

    /// Checks what JSONPath parsing accepts but a run cannot use: too many descendant
    /// segments, and `match()`/`search()` patterns that are not regexes (serde_json_path
    /// treats those as matching nothing). True when the path is usable.
    pub(super) fn json_path_parts(&mut self, node: &Node, path: &str) -> bool {
        let scan = scan_json_path(path);
        let at = |this: &Self, range: std::ops::Range<usize>| match &node.kind {
            NodeKind::Str(raw) if raw == path => this.inner_span(&node.span, raw, range),
            _ => node.span.clone(),
        };
        let mut ok = true;
        if let Some(extra) = scan.descendants.get(limits::MAX_DESCENDANT_SEGMENTS) {
            let span = at(self, extra.clone());
            self.error_help(
                span,
                format!(
                    "the JSONPath has {} descendant segments (`..`), more than the limit of {}",
                    scan.descendants.len(),
                    limits::MAX_DESCENDANT_SEGMENTS
                ),
                "each `..` visits the whole response again below every node it selects: name the members on the way instead",
            );
            ok = false;
        }
        for p in scan.patterns {
            let wrapped = if p.anchored {
                format!("(?R)^({})$", p.pattern)
            } else {
                format!("(?R)({})", p.pattern)
            };
            let problem = regex_length_problem(&p.pattern)
                .or_else(|| build_regex(&wrapped, limits::MAX_FILTER_REGEX_COMPILED_BYTES).err());
            if let Some(problem) = problem {
                let span = at(self, p.range);
                self.error_help(
                    span,
                    format!(
                        "invalid regex {} in `{}()` of the JSONPath: {problem}",
                        crate::diag::quote(&p.pattern),
                        if p.anchored { "match" } else { "search" }
                    ),
                    "a filter compiles its pattern once per node, and one that does not compile matches nothing: keep it small and valid, or select the nodes and assert `matches` on them",
                );
                ok = false;
            }
        }
        ok
    }

    pub(super) fn assert_op(&mut self, key: &str, node: &Node) -> Option<AssertOp> {
        match key {
            "equals" => self.value(node).map(AssertOp::Equals),
            "matches" => {
                let pattern = self.string(node, "`matches`")?;
                match compile_regex(&pattern.value) {
                    Ok(re) => Some(AssertOp::Matches(re)),
                    Err(problem) => {
                        self.error(
                            pattern.span,
                            format!(
                                "invalid regex {}: {problem}",
                                crate::diag::quote(&pattern.value)
                            ),
                        );
                        None
                    }
                }
            }
            "one-of" => match &node.kind {
                NodeKind::Seq(items) if !items.is_empty() => {
                    if !self.fits(items, limits::MAX_ONE_OF, "`one-of`") {
                        return None;
                    }
                    let values: Vec<Option<Value>> = items.iter().map(|i| self.value(i)).collect();
                    values
                        .into_iter()
                        .collect::<Option<Vec<_>>>()
                        .map(AssertOp::OneOf)
                }
                NodeKind::Seq(_) => {
                    self.error(
                        node.span.clone(),
                        "`one-of` is empty: no value could ever match",
                    );
                    None
                }
                _ => {
                    self.type_error(node, "`one-of`", "a sequence of values");
                    None
                }
            },
            "count" => {
                let n = self.uint(node, "`count`")?;
                match usize::try_from(n) {
                    Ok(n) => Some(AssertOp::Count(n)),
                    Err(_) => {
                        self.error(node.span.clone(), "`count` is too large");
                        None
                    }
                }
            }
            "exists" => match &node.kind {
                NodeKind::Bool(b) => Some(AssertOp::Exists(*b)),
                _ => {
                    self.type_error(node, "`exists`", "`true` or `false`");
                    None
                }
            },
            _ => {
                let t = self.string(node, "`type`")?;
                if ASSERT_TYPES.contains(&t.value.as_str()) {
                    Some(AssertOp::Type(t.value))
                } else {
                    let help = choice_help(&t.value, ASSERT_TYPES, "types");
                    self.error_help(t.span, format!("unknown JSON type `{}`", t.value), help);
                    None
                }
            }
        }
    }

    pub(super) fn snapshot(&mut self, node: &Node) -> Option<Option<SnapshotSpec>> {
        match &node.kind {
            NodeKind::Bool(true) => return Some(Some(SnapshotSpec::default())),
            NodeKind::Bool(false) => return Some(None),
            NodeKind::Map(_) => {}
            _ => {
                self.type_error(
                    node,
                    "`snapshot`",
                    "`true`, `false` or a mapping with `redact`, `sort`, `walk` and `malls`",
                );
                return None;
            }
        }
        let fields = self.fields(node, "`snapshot`", SNAPSHOT_KEYS)?;
        let mut lists = [Vec::new(), Vec::new()];
        let mut ok = true;
        for (slot, key) in lists.iter_mut().zip(&SNAPSHOT_KEYS[..2]) {
            let Some(n) = fields.get(key) else { continue };
            match self.strings(n, &format!("`snapshot.{key}`")) {
                Some(items) => {
                    for s in items {
                        if let Err(problem) = Selector::parse(&s.value) {
                            self.error_help(
                                s.span,
                                format!("invalid snapshot selector `{}`: {problem}", s.value),
                                "selectors look like `.data[].orderStatistics`, `.data[0].ctime` or `.**`",
                            );
                            ok = false;
                        } else {
                            slot.push(s.value);
                        }
                    }
                }
                None => ok = false,
            }
        }
        let [redact, sort] = lists;
        let walk = self.bool(fields.get("walk"), "`snapshot.walk`")?;
        let malls = match fields.get("malls") {
            None => None,
            Some(m) => Some(
                self.bounded(m, "`snapshot.malls`", limits::MAX_SNAPSHOT_MALLS)
                    .and_then(|n| usize::try_from(n).ok())?,
            ),
        };
        ok.then_some(Some(SnapshotSpec {
            redact,
            sort,
            walk,
            malls,
        }))
    }
}

/// What [`scan_json_path`] finds in a JSONPath that parses.
#[derive(Debug, Default, PartialEq)]
pub(super) struct JsonPathScan {
    /// Byte ranges of the descendant segments' `..`.
    pub(super) descendants: Vec<std::ops::Range<usize>>,
    /// String literals given as the pattern of `match()` or `search()`.
    pub(super) patterns: Vec<FilterPattern>,
}

/// A regex literal of a JSONPath filter.
#[derive(Debug, PartialEq)]
pub(super) struct FilterPattern {
    /// Byte range of the literal (with its quotes) in the path.
    pub(super) range: std::ops::Range<usize>,
    /// The literal's value, escapes resolved.
    pub(super) pattern: String,
    /// `match()` (the whole string) rather than `search()`.
    pub(super) anchored: bool,
}

/// Finds the descendant segments and the regex literals of a well-formed JSONPath (RFC 9535):
/// string literals are skipped as a unit, so `..` or `match(` inside one count for nothing.
pub(super) fn scan_json_path(path: &str) -> JsonPathScan {
    /// An open `(` or `[`: the function it calls, which argument is being read, and whether
    /// that argument has anything in it yet.
    struct Frame {
        function: Option<bool>,
        arg: usize,
        started: bool,
    }
    let mut out = JsonPathScan::default();
    let mut frames: Vec<Frame> = Vec::new();
    let bytes = path.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\'' | b'"' => {
                let (value, end) = string_literal(path, i);
                if let Some(f) = frames.last_mut() {
                    if let (Some(anchored), 1, false) = (f.function, f.arg, f.started) {
                        out.patterns.push(FilterPattern {
                            range: i..end,
                            pattern: value,
                            anchored,
                        });
                    }
                    f.started = true;
                }
                i = end;
                continue;
            }
            b'.' if bytes.get(i + 1) == Some(&b'.') => {
                out.descendants.push(i..i + 2);
                i += 2;
                continue;
            }
            b'(' | b'[' => {
                if let Some(f) = frames.last_mut() {
                    f.started = true;
                }
                let name_start = path[..i]
                    .char_indices()
                    .rev()
                    .take_while(|(_, ch)| {
                        ch.is_ascii_lowercase() || ch.is_ascii_digit() || *ch == '_'
                    })
                    .last()
                    .map_or(i, |(j, _)| j);
                let function = match (c, &path[name_start..i]) {
                    (b'(', "match") => Some(true),
                    (b'(', "search") => Some(false),
                    _ => None,
                };
                frames.push(Frame {
                    function,
                    arg: 0,
                    started: false,
                });
            }
            b')' | b']' => {
                frames.pop();
            }
            b',' => {
                if let Some(f) = frames.last_mut() {
                    f.arg += 1;
                    f.started = false;
                }
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => {
                if let Some(f) = frames.last_mut() {
                    f.started = true;
                }
            }
        }
        i += 1;
    }
    out
}

/// The value of the string literal opening at byte `start` of `path` (RFC 9535 escapes) and
/// the byte just past its closing quote.
fn string_literal(path: &str, start: usize) -> (String, usize) {
    let quote = path.as_bytes()[start];
    let mut value = String::new();
    let mut chars = path[start + 1..].char_indices();
    let mut pending_high: Option<u16> = None;
    while let Some((j, ch)) = chars.next() {
        let at = start + 1 + j;
        if ch as u32 == u32::from(quote) {
            return (value, at + 1);
        }
        if ch != '\\' {
            value.push(ch);
            continue;
        }
        let Some((_, esc)) = chars.next() else { break };
        match esc {
            'b' => value.push('\u{8}'),
            'f' => value.push('\u{c}'),
            'n' => value.push('\n'),
            'r' => value.push('\r'),
            't' => value.push('\t'),
            'u' => {
                let hex: String = chars.by_ref().take(4).map(|(_, h)| h).collect();
                let Ok(unit) = u16::from_str_radix(&hex, 16) else {
                    continue;
                };
                match (pending_high.take(), unit) {
                    (Some(high), 0xdc00..=0xdfff) => {
                        value.extend(char::decode_utf16([high, unit]).flatten());
                    }
                    (_, 0xd800..=0xdbff) => pending_high = Some(unit),
                    (_, unit) => value.extend(char::from_u32(u32::from(unit))),
                }
            }
            other => value.push(other),
        }
    }
    (value, path.len())
}

/// Compiles a `matches` regex of at most [`limits::MAX_REGEX_CHARS`] (within the regex
/// crate's default size limit); the error is a one-line reason.
fn compile_regex(pattern: &str) -> Result<Regex, String> {
    match regex_length_problem(pattern) {
        Some(problem) => Err(problem),
        None => build_regex(pattern, DEFAULT_REGEX_SIZE_LIMIT),
    }
}

/// The regex crate's default `size_limit`.
const DEFAULT_REGEX_SIZE_LIMIT: usize = 10 * (1 << 20);

/// Why `pattern` is too long to be a case-file regex, if it is.
fn regex_length_problem(pattern: &str) -> Option<String> {
    let chars = pattern.chars().count();
    (chars > limits::MAX_REGEX_CHARS).then(|| {
        format!(
            "it is {chars} characters, more than the limit of {}",
            limits::MAX_REGEX_CHARS
        )
    })
}

/// Compiles a regex within `size_limit` compiled bytes.
fn build_regex(pattern: &str, size_limit: usize) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .size_limit(size_limit)
        .build()
        .map_err(|e| regex_problem(&e))
}

/// The one-line reason of a regex error (its `Display` is a multi-line report).
fn regex_problem(e: &regex::Error) -> String {
    let text = e.to_string();
    text.lines()
        .find_map(|l| l.trim().strip_prefix("error: "))
        .map_or_else(
            || text.lines().last().unwrap_or("").trim().to_string(),
            str::to_string,
        )
}
