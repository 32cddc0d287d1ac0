//! insta's snapshot selectors (`.data[].mallSn`, `.**`, `[1:3]`, `["key"]`), applied by mallcheck
//! to a response before insta serializes it: the `redact` and `sort` lists of a case.
//!
//! Why not insta's own: its `redactions` feature brings a PEG parser generator (pest, pest_derive,
//! pest_meta, built from source by every `cargo install`) and a C build (psm through
//! pest_stack_guard), about 14 s of CPU of a 2-core release build, for a grammar of ten lines.
//! What a selector matches, what sorting orders before what, and when it happens are insta
//! 1.49's (`redaction.rs`, `content/serialization.rs`), quirks included, because recorded
//! snapshots depend on them: maps are sorted by key first, then each selector is applied in
//! turn, redactions before sorts; a selector whose last segment is a wildcard also matches the
//! keys of the map it reaches (insta visits a key at the path `…, "$key"`); sorting orders values
//! as insta's `Content` does (booleans, then unsigned, signed and float numbers, strings, null,
//! arrays, objects). The one difference: a negative index `[-1]` counts from the end, where insta
//! panics. `tests` compares both on generated documents.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

/// A parsed selector: alternatives separated by `,`, each a list of segments (empty: the root).
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    alternatives: Vec<Vec<Segment>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    /// `.**`: any number of levels (at most one per alternative).
    DeepWildcard,
    /// `.*`: any one key or index.
    Wildcard,
    /// `.key` or `["key"]`.
    Key(String),
    /// `[n]`; a negative `n` counts from the end.
    Index(i64),
    /// `[]`, `[a:b]`, `[:b]`, `[a:]`: half-open, negative bounds count from the end.
    Range(Option<i64>, Option<i64>),
}

impl Selector {
    /// Parses `text` (insta's `select_grammar.pest`: whitespace may separate tokens).
    ///
    /// # Errors
    /// What is wrong with it, in words.
    pub fn parse(text: &str) -> Result<Self, &'static str> {
        let mut p = Cursor { rest: text };
        let mut alternatives = Vec::new();
        loop {
            p.skip_space();
            if p.rest.is_empty() {
                // A trailing `,` is allowed, an empty selector is not.
                return if alternatives.is_empty() {
                    Err("it is empty")
                } else {
                    Ok(Self { alternatives })
                };
            }
            alternatives.push(p.alternative()?);
            p.skip_space();
            if p.rest.is_empty() {
                return Ok(Self { alternatives });
            }
            if !p.eat(",") {
                return Err("a selector segment starts with `.` or `[`");
            }
        }
    }

    fn matches(&self, path: &[Step<'_>]) -> bool {
        self.alternatives
            .iter()
            .any(|a| alternative_matches(a, path))
    }

    /// Whether some longer path that starts with `path` could match: when not, nothing below
    /// the node at `path` (its items, entries and keys) is touched and it is left as it is.
    fn may_match_below(&self, path: &[Step<'_>]) -> bool {
        self.alternatives.iter().any(|segments| {
            // Up to a `.**` the segments must match the path one for one; past it, anything
            // may follow.
            let fixed = segments
                .iter()
                .position(|s| *s == Segment::DeepWildcard)
                .unwrap_or(segments.len());
            let deep = fixed < segments.len();
            (deep || segments.len() > path.len())
                && segments[..fixed]
                    .iter()
                    .zip(path)
                    .all(|(s, p)| segment_matches(s, p))
        })
    }
}

struct Cursor<'a> {
    rest: &'a str,
}

impl Cursor<'_> {
    fn skip_space(&mut self) {
        self.rest = self.rest.trim_start();
    }

    fn eat(&mut self, token: &str) -> bool {
        match self.rest.strip_prefix(token) {
            Some(rest) => {
                self.rest = rest;
                true
            }
            None => false,
        }
    }

    /// One selector between commas: `.` alone, or one or more segments.
    fn alternative(&mut self) -> Result<Vec<Segment>, &'static str> {
        let mut segments = Vec::new();
        loop {
            self.skip_space();
            if self.rest.is_empty() || self.rest.starts_with(',') {
                break;
            }
            let segment = self.segment()?;
            if let Some(segment) = segment {
                if segment == Segment::DeepWildcard && segments.contains(&Segment::DeepWildcard) {
                    return Err("`.**` may appear once in a selector");
                }
                segments.push(segment);
            } else if !segments.is_empty() {
                return Err("a `.` must be followed by a key, `*` or `**`");
            } else {
                // The identity `.`: nothing may follow it.
                self.skip_space();
                if !(self.rest.is_empty() || self.rest.starts_with(',')) {
                    return Err("a `.` must be followed by a key, `*` or `**`");
                }
                break;
            }
        }
        Ok(segments)
    }

    /// A segment, or `None` for a lone `.` (the identity).
    fn segment(&mut self) -> Result<Option<Segment>, &'static str> {
        if self.eat(".") {
            // `key` is one token in the grammar; `.*` and `.**` may hold whitespace.
            if let Some(end) = ident_len(self.rest) {
                let key = self.rest[..end].to_string();
                self.rest = &self.rest[end..];
                return Ok(Some(Segment::Key(key)));
            }
            self.skip_space();
            if self.eat("**") {
                return Ok(Some(Segment::DeepWildcard));
            }
            if self.eat("*") {
                return Ok(Some(Segment::Wildcard));
            }
            return if self.rest.trim_start().is_empty() || self.rest.trim_start().starts_with(',') {
                Ok(None)
            } else {
                Err("a `.` must be followed by a key, `*` or `**`")
            };
        }
        if self.eat("[") {
            return self.subscript().map(Some);
        }
        Err("a selector segment starts with `.` or `[`")
    }

    /// After `[`: `]`, `"key"]`, `n]`, `a:b]`, `:b]` or `a:]`.
    fn subscript(&mut self) -> Result<Segment, &'static str> {
        const FORMS: &str = "a subscript is `[]`, `[n]`, `[\"key\"]` or a range `[a:b]`";
        self.skip_space();
        if self.eat("]") {
            return Ok(Segment::Range(None, None));
        }
        if let Some(body) = self.rest.strip_prefix('"') {
            let close = body.find('"').ok_or(FORMS)?;
            let key = unescape(&body[..close]);
            self.rest = &body[close + 1..];
            self.skip_space();
            return if self.eat("]") {
                Ok(Segment::Key(key))
            } else {
                Err(FORMS)
            };
        }
        if self.eat(":") {
            let end = self.int().ok_or(FORMS)?;
            self.skip_space();
            return if self.eat("]") {
                Ok(Segment::Range(None, Some(end)))
            } else {
                Err(FORMS)
            };
        }
        let start = self.int().ok_or(FORMS)?;
        self.skip_space();
        if self.eat("]") {
            return Ok(Segment::Index(start));
        }
        // `range_from` is the token `:]`; `range` allows whitespace around its `:`.
        if self.eat(":]") {
            return Ok(Segment::Range(Some(start), None));
        }
        if self.eat(":") {
            let end = self.int().ok_or(FORMS)?;
            self.skip_space();
            if self.eat("]") {
                return Ok(Segment::Range(Some(start), Some(end)));
            }
        }
        Err(FORMS)
    }

    fn int(&mut self) -> Option<i64> {
        self.skip_space();
        let negative = self.eat("-");
        self.skip_space();
        let digits = self.rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let magnitude: i64 = self.rest[..digits].parse().ok()?;
        self.rest = &self.rest[digits..];
        Some(if negative { -magnitude } else { magnitude })
    }
}

/// Length of the identifier at the start of `s` (`_`, `$` or XID_Start, then XID_Continue).
fn ident_len(s: &str) -> Option<usize> {
    let mut chars = s.char_indices();
    match chars.next() {
        Some((_, c)) if c == '_' || c == '$' || unicode_ident::is_xid_start(c) => {}
        _ => return None,
    }
    Some(
        chars
            .find(|&(_, c)| !unicode_ident::is_xid_continue(c))
            .map_or(s.len(), |(i, _)| i),
    )
}

/// insta drops each backslash that does not follow a dropped one (`\\` is one backslash).
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut was_backslash = false;
    for c in s.chars() {
        if c == '\\' && !was_backslash {
            was_backslash = true;
            continue;
        }
        was_backslash = false;
        out.push(c);
    }
    out
}

/// One step of the path to a node: a map key, the key itself of a map entry (insta's
/// `"$key"`), or an index with the length of its array.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    MapKey,
    Index(usize, usize),
}

impl Step<'_> {
    fn name(&self) -> Option<&str> {
        match *self {
            Step::Key(k) => Some(k),
            Step::MapKey => Some("$key"),
            Step::Index(..) => None,
        }
    }
}

/// `n` counted from the end when negative (may stay negative: past the start).
fn from_end_signed(n: i64, len: usize) -> i64 {
    if n < 0 {
        i64::try_from(len).unwrap_or(i64::MAX).saturating_add(n)
    } else {
        n
    }
}

/// insta's range bound: counted from the end when negative, never before the start.
fn from_end(n: i64, len: usize) -> i64 {
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    if n < 0 { (len + n).max(0) } else { n }
}

fn segment_matches(segment: &Segment, step: &Step<'_>) -> bool {
    match segment {
        Segment::Wildcard | Segment::DeepWildcard => true,
        Segment::Key(k) => step.name() == Some(k.as_str()),
        Segment::Index(i) => match *step {
            Step::Index(at, len) => {
                let want = from_end_signed(*i, len);
                want >= 0 && i64::try_from(at).is_ok_and(|at| at == want)
            }
            _ => false,
        },
        Segment::Range(start, end) => match *step {
            Step::Index(at, len) => {
                let at = i64::try_from(at).unwrap_or(i64::MAX);
                start.is_none_or(|s| at >= from_end(s, len))
                    && end.is_none_or(|e| at < from_end(e, len))
            }
            _ => false,
        },
    }
}

fn alternative_matches(segments: &[Segment], path: &[Step<'_>]) -> bool {
    match segments.iter().position(|s| *s == Segment::DeepWildcard) {
        Some(deep) => {
            path.len() > deep
                && segments[..deep]
                    .iter()
                    .zip(path)
                    .all(|(s, p)| segment_matches(s, p))
                && segments[deep + 1..]
                    .iter()
                    .rev()
                    .zip(path.iter().rev())
                    .all(|(s, p)| segment_matches(s, p))
        }
        None => {
            segments.len() == path.len()
                && segments
                    .iter()
                    .zip(path)
                    .all(|(s, p)| segment_matches(s, p))
        }
    }
}

/// A response as insta's `Content` holds it after serialization: the variants in the order of
/// `Content`'s (derived) ordering, and maps as lists of entries, which a key redaction can
/// leave with equal keys.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
pub enum Shaped {
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Text(String),
    Null,
    List(Vec<Shaped>),
    Map(Vec<(Shaped, Shaped)>),
}

/// What every string and key of a value goes through as it is copied (the session's
/// redactor scrubbing secrets).
pub type Scrub<'f> = &'f dyn for<'s> Fn(&'s str) -> Cow<'s, str>;

/// A [`Scrub`] that changes nothing (a value scrubbed already, or a test's).
pub fn unchanged(text: &str) -> Cow<'_, str> {
    Cow::Borrowed(text)
}

impl Shaped {
    fn of(value: &Value, scrub: Scrub<'_>) -> Self {
        match value {
            Value::Null => Shaped::Null,
            Value::Bool(b) => Shaped::Bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => Shaped::Unsigned(u),
                (None, Some(i)) => Shaped::Signed(i),
                _ => Shaped::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => Shaped::Text(scrub(s).into_owned()),
            Value::Array(items) => {
                Shaped::List(items.iter().map(|v| Shaped::of(v, scrub)).collect())
            }
            Value::Object(map) => Shaped::Map(
                map.iter()
                    .map(|(k, v)| (Shaped::Text(scrub(k).into_owned()), Shaped::of(v, scrub)))
                    .collect(),
            ),
        }
    }

    fn text(&self) -> Option<&str> {
        match self {
            Shaped::Text(s) => Some(s),
            _ => None,
        }
    }

    /// insta's `sort_maps`: every map's entries by key (string keys; others by value).
    fn sort_maps(&mut self) {
        match self {
            Shaped::List(items) => items.iter_mut().for_each(Shaped::sort_maps),
            Shaped::Map(entries) => {
                for (k, v) in entries.iter_mut() {
                    k.sort_maps();
                    v.sort_maps();
                }
                entries.sort_by(|a, b| match (a.0.text(), b.0.text()) {
                    (Some(x), Some(y)) => x.cmp(y),
                    _ => a.0.partial_cmp(&b.0).unwrap_or(Ordering::Equal),
                });
            }
            _ => {}
        }
    }

    /// insta's `sorted_redaction`: the items of a list, or the entries of a map, in order.
    fn sorted(mut self) -> Self {
        match &mut self {
            Shaped::List(items) => {
                items.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
            }
            Shaped::Map(entries) => {
                entries.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
            }
            _ => {}
        }
        self
    }
}

/// What a selector does to the nodes it matches.
enum Action<'a> {
    Replace(&'a str),
    Sort,
}

/// insta's `Selector::redact`: a matched node is replaced whole (its inside is not visited);
/// otherwise each map entry's key, then its value, then each list item is visited.
fn apply(
    node: Shaped,
    selector: &Selector,
    action: &Action<'_>,
    path: &mut Vec<Step<'_>>,
) -> Shaped {
    if selector.matches(path) {
        return match action {
            Action::Replace(with) => Shaped::Text((*with).to_string()),
            Action::Sort => node.sorted(),
        };
    }
    if !selector.may_match_below(path) {
        return node;
    }
    match node {
        Shaped::List(items) => {
            let len = items.len();
            Shaped::List(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| {
                        path.push(Step::Index(i, len));
                        let item = apply(item, selector, action, path);
                        path.pop();
                        item
                    })
                    .collect(),
            )
        }
        Shaped::Map(entries) => Shaped::Map(
            entries
                .into_iter()
                .map(|(key, value)| {
                    path.push(Step::MapKey);
                    let new_key = apply(key.clone(), selector, action, path);
                    path.pop();
                    // The path names the entry by its key as it was before a redaction.
                    let name = key.text().map(str::to_string);
                    let value = match name.as_deref() {
                        Some(name) => {
                            let mut inner: Vec<Step<'_>> = path.clone();
                            inner.push(Step::Key(name));
                            apply(value, selector, action, &mut inner)
                        }
                        None => value,
                    };
                    (new_key, value)
                })
                .collect(),
        ),
        other => other,
    }
}

/// `value` as insta would serialize it for a JSON snapshot, its strings and keys passed
/// through `scrub` first (one copy of the value, not one scrubbed and one shaped), with maps
/// sorted, every `redact` selector replaced by `placeholder` and every `sort` selector
/// sorted, in that order. The
/// selectors were checked when the case file was loaded; one that does not parse does nothing.
pub fn shape(
    value: &Value,
    scrub: Scrub<'_>,
    redact: &[String],
    sort: &[String],
    placeholder: &str,
) -> Shaped {
    let mut shaped = Shaped::of(value, scrub);
    shaped.sort_maps();
    let actions = redact
        .iter()
        .map(|s| (s, Action::Replace(placeholder)))
        .chain(sort.iter().map(|s| (s, Action::Sort)));
    for (text, action) in actions {
        if let Ok(selector) = Selector::parse(text) {
            shaped = apply(shaped, &selector, &action, &mut Vec::new());
        }
    }
    shaped
}

impl Serialize for Shaped {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Shaped::Bool(b) => serializer.serialize_bool(*b),
            Shaped::Unsigned(u) => serializer.serialize_u64(*u),
            Shaped::Signed(i) => serializer.serialize_i64(*i),
            Shaped::Float(f) => serializer.serialize_f64(*f),
            Shaped::Text(s) => serializer.serialize_str(s),
            Shaped::Null => serializer.serialize_unit(),
            Shaped::List(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Shaped::Map(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests;
