//! Lowering: the positioned tree of a case file to the typed model. This file holds the shared
//! helpers (typed values, keys, variables, suggestions) and the case itself; the request, the
//! expectations and the walk and sweep kinds have their own files.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{CASE_KEYS, EXCHANGE_ONLY_KEYS, KIND_KEYS, ParseContext, ROOT_KEYS};
use crate::case::model::{Case, CaseKind, CheckRef, limits};
use crate::case::node::{Key, Node, NodeKind};
use crate::case::vars;
use crate::diag::Diagnostic;
use crate::json::json_size;
use crate::spec::catalog::{self, CATALOG};
use crate::verdict::check::Check;
use crate::verdict::source::{SourceFile, Span, Spanned};

/// The closest candidate to `word`, if it is close enough to be a likely typo.
pub(crate) fn suggest<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let limit = (word.chars().count().max(3)) / 3;
    candidates
        .into_iter()
        .map(|c| {
            let d = if c.eq_ignore_ascii_case(word) {
                0
            } else {
                strsim::osa_distance(word, c)
            };
            (d, c)
        })
        .filter(|(d, _)| *d <= limit.max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

pub(super) fn backticked(items: &[&str]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Help for a word that is not one of `valid`: "did you mean" when close, else the list.
pub(super) fn choice_help(word: &str, valid: &[&str], what: &str) -> String {
    match suggest(word, valid.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("valid {what}: {}", backticked(valid)),
    }
}

/// The entries of a mapping node whose keys have been checked.
pub(super) struct Fields<'n> {
    pub(super) entries: Vec<(&'n Key, &'n Node)>,
}

impl<'n> Fields<'n> {
    pub(super) fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _)| k.text == key)
            .map(|(_, v)| *v)
    }

    pub(super) fn key(&self, key: &str) -> Option<&'n Key> {
        self.entries
            .iter()
            .find(|(k, _)| k.text == key)
            .map(|(k, _)| *k)
    }
}

/// Lowering state for one file: the source and the problems found so far.
pub(super) struct Lower<'a> {
    pub(super) file: Arc<SourceFile>,
    pub(super) cx: &'a ParseContext<'a>,
    pub(super) diags: Vec<Diagnostic>,
}

impl Lower<'_> {
    pub(super) fn error(&mut self, span: Span, message: impl Into<String>) {
        self.diags.push(Diagnostic::at(&self.file, span, message));
    }

    pub(super) fn error_help(
        &mut self,
        span: Span,
        message: impl Into<String>,
        help: impl Into<String>,
    ) {
        self.diags
            .push(Diagnostic::at(&self.file, span, message).with_help(help));
    }

    pub(super) fn type_error(&mut self, node: &Node, what: &str, expected: &str) {
        self.error(
            node.span.clone(),
            format!("{what} must be {expected}, found {}", node.kind.describe()),
        );
    }

    /// Checks that `node` is a mapping with keys from `allowed`; reports every unknown key.
    pub(super) fn fields<'n>(
        &mut self,
        node: &'n Node,
        what: &str,
        allowed: &[&str],
    ) -> Option<Fields<'n>> {
        let NodeKind::Map(entries) = &node.kind else {
            self.type_error(node, what, "a mapping");
            return None;
        };
        let mut fields = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            if allowed.contains(&key.text.as_str()) {
                fields.push((key, value));
            } else {
                let help = match suggest(&key.text, allowed.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("valid keys in {what}: {}", backticked(allowed)),
                };
                self.error_help(
                    key.span.clone(),
                    format!("unknown key `{}` in {what}", key.text),
                    help,
                );
            }
        }
        Some(Fields { entries: fields })
    }

    pub(super) fn require<'n>(
        &mut self,
        fields: &Fields<'n>,
        key: &str,
        owner: &Node,
        what: &str,
    ) -> Option<&'n Node> {
        let found = fields.get(key);
        if found.is_none() {
            self.error(head(owner), format!("{what} needs a `{key}`"));
        }
        found
    }

    /// Span inside a scalar for a byte range of its (unescaped) value, when it can be located.
    pub(super) fn inner_span(
        &self,
        span: &Span,
        value: &str,
        range: std::ops::Range<usize>,
    ) -> Span {
        let src = self.file.text.get(span.clone()).unwrap_or("");
        let piece = value.get(range.clone()).unwrap_or("");
        if src == value {
            return span.start + range.start..span.start + range.end;
        }
        let quoted = src.len() >= 2
            && ((src.starts_with('"') && src.ends_with('"'))
                || (src.starts_with('\'') && src.ends_with('\'')));
        if quoted && &src[1..src.len() - 1] == value {
            return span.start + 1 + range.start..span.start + 1 + range.end;
        }
        match src.find(piece) {
            Some(i) if !piece.is_empty() => span.start + i..span.start + i + piece.len(),
            _ => span.clone(),
        }
    }

    /// Substitutes variables in a string scalar, reporting every bad reference.
    pub(super) fn subst(&mut self, text: &str, span: &Span) -> Option<String> {
        match vars::substitute(text, self.cx.vars) {
            Ok(s) => Some(s),
            Err(errors) => {
                for e in errors {
                    let at = self.inner_span(span, text, e.range.clone());
                    let known: Vec<&str> = self.cx.vars.keys().map(String::as_str).collect();
                    let list = if known.is_empty() {
                        "no variables are defined".to_string()
                    } else {
                        format!("known variables: {}", known.join(", "))
                    };
                    let help = match e
                        .undefined
                        .as_deref()
                        .and_then(|n| suggest(n, known.iter().copied()))
                    {
                        Some(s) => format!("did you mean `{s}`? {list}"),
                        None if e.undefined.is_some() => list,
                        None => "write `$${` for a literal `${`".to_string(),
                    };
                    self.error_help(at, e.message, help);
                }
                None
            }
        }
    }

    pub(super) fn string(&mut self, node: &Node, what: &str) -> Option<Spanned<String>> {
        match &node.kind {
            NodeKind::Str(s) => self
                .subst(s, &node.span)
                .map(|v| Spanned::new(v, node.span.clone())),
            _ => {
                self.type_error(node, what, "a string");
                None
            }
        }
    }

    pub(super) fn bool(&mut self, node: Option<&Node>, what: &str) -> Option<bool> {
        match node {
            None => Some(false),
            Some(Node {
                kind: NodeKind::Bool(b),
                ..
            }) => Some(*b),
            Some(n) => {
                self.type_error(n, what, "`true` or `false`");
                None
            }
        }
    }

    pub(super) fn uint(&mut self, node: &Node, what: &str) -> Option<u64> {
        match &node.kind {
            NodeKind::Number(n) if n.as_u64().is_some() => n.as_u64(),
            _ => {
                self.type_error(node, what, "a non-negative integer");
                None
            }
        }
    }

    pub(super) fn positive(&mut self, node: &Node, what: &str) -> Option<u64> {
        let n = self.uint(node, what)?;
        if n == 0 {
            self.error(node.span.clone(), format!("{what} must be at least 1"));
            return None;
        }
        Some(n)
    }

    /// Reports a control character (or a bidirectional override) in text that is printed on
    /// consoles and in reports as is, such as a case name; true when there is none.
    pub(super) fn plain_text(&mut self, text: &Spanned<String>, what: &str) -> bool {
        match crate::diag::first_unsafe(&text.value) {
            None => true,
            Some(c) => {
                self.error_help(
                    text.span.clone(),
                    format!(
                        "{what} contains the control character U+{:04X}",
                        u32::from(c)
                    ),
                    "names and tags are printed on consoles and in reports as they are: write them as plain text",
                );
                false
            }
        }
    }

    /// A positive integer of at most `max` ([`limits`]).
    pub(super) fn bounded(&mut self, node: &Node, what: &str, max: u64) -> Option<u64> {
        let n = self.positive(node, what)?;
        if n > max {
            self.error(
                node.span.clone(),
                format!("{what} must be at most {max}, found {n}"),
            );
            return None;
        }
        Some(n)
    }

    /// Reports the first item past `max` of a list ([`limits`]); true when the list fits.
    pub(super) fn fits(&mut self, items: &[Node], max: usize, what: &str) -> bool {
        match items.get(max) {
            None => true,
            Some(extra) => {
                self.error(
                    extra.span.clone(),
                    format!(
                        "{what} has {} entries, more than the limit of {max}",
                        items.len()
                    ),
                );
                false
            }
        }
    }

    /// A JSON value of at most [`limits::MAX_BODY_BYTES`] once serialized.
    pub(super) fn bounded_json(&mut self, node: &Node, value: Value, what: &str) -> Option<Value> {
        let size = json_size(&value);
        if size > limits::MAX_BODY_BYTES {
            self.error_help(
                node.span.clone(),
                format!(
                    "{what} is {size} bytes as JSON, more than the limit of {} bytes",
                    limits::MAX_BODY_BYTES
                ),
                "a case sends what it needs to test; generate large bodies with `mallcheck fuzz`",
            );
            return None;
        }
        Some(value)
    }

    pub(super) fn strings(&mut self, node: &Node, what: &str) -> Option<Vec<Spanned<String>>> {
        let NodeKind::Seq(items) = &node.kind else {
            self.type_error(node, what, "a sequence of strings");
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        let mut ok = true;
        for item in items {
            match self.string(item, &format!("an entry of {what}")) {
                Some(s) => out.push(s),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    /// Converts a node to JSON, substituting variables in every string scalar (not in keys).
    pub(super) fn value(&mut self, node: &Node) -> Option<Value> {
        match &node.kind {
            NodeKind::Null => Some(Value::Null),
            NodeKind::Bool(b) => Some(Value::Bool(*b)),
            NodeKind::Number(n) => Some(Value::Number(n.clone())),
            NodeKind::Str(s) => self.subst(s, &node.span).map(Value::String),
            NodeKind::Seq(items) => {
                let values: Vec<Option<Value>> = items.iter().map(|i| self.value(i)).collect();
                values
                    .into_iter()
                    .collect::<Option<Vec<_>>>()
                    .map(Value::Array)
            }
            NodeKind::Map(entries) => {
                let mut map = Map::with_capacity(entries.len());
                let mut ok = true;
                for (k, v) in entries {
                    match self.value(v) {
                        Some(v) => {
                            map.insert(k.text.clone(), v);
                        }
                        None => ok = false,
                    }
                }
                ok.then_some(Value::Object(map))
            }
        }
    }

    pub(super) fn object(&mut self, node: &Node, what: &str) -> Option<Spanned<Value>> {
        if !matches!(node.kind, NodeKind::Map(_)) {
            self.type_error(node, what, "a mapping (JSON object)");
            return None;
        }
        let value = self.value(node)?;
        self.bounded_json(node, value, what)
            .map(|v| Spanned::new(v, node.span.clone()))
    }

    /// A check id from the catalogue that is one of `allowed` (what this place can run).
    pub(super) fn check_ref(
        &mut self,
        node: &Node,
        what: &str,
        allowed: &[&'static Check],
    ) -> Option<CheckRef> {
        let id = self.string(node, what)?;
        let ids: Vec<&str> = allowed.iter().map(|c| c.id).collect();
        match catalog::find(&id.value) {
            Some(check) if allowed.iter().any(|c| std::ptr::eq(*c, check)) => Some(CheckRef {
                check,
                span: id.span,
            }),
            Some(check) => {
                self.error_help(
                    id.span,
                    format!("check `{}` cannot be used in {what}", check.id),
                    format!("checks usable here: {}", backticked(&ids)),
                );
                None
            }
            None => {
                let help = match suggest(&id.value, CATALOG.iter().map(|c| c.id)) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("checks usable here: {}", backticked(&ids)),
                };
                self.error_help(id.span, format!("unknown check id `{}`", id.value), help);
                None
            }
        }
    }

    pub(super) fn pointer(&mut self, node: &Node, what: &str) -> Option<String> {
        let p = self.string(node, what)?;
        match pointer_problem(&p.value) {
            None => Some(p.value),
            Some(problem) => {
                self.error_help(
                    p.span,
                    format!("invalid JSON Pointer `{}` in {what}: {problem}", p.value),
                    "a JSON Pointer is empty or starts with `/`, e.g. `/mallSn` (RFC 6901; `~0` is `~`, `~1` is `/`)",
                );
                None
            }
        }
    }

    pub(super) fn root(&mut self, root: &Node) -> Vec<Case> {
        if let NodeKind::Map(entries) = &root.kind
            && entries.iter().any(|(k, _)| k.text == "property")
            && entries.iter().any(|(k, _)| k.text == "endpoint")
        {
            self.error_help(
                head(root),
                "this is a fuzz regression in the format of earlier mallcheck versions, not a case file",
                "run `mallcheck fuzz` once: it converts every such file of its --regressions directory into a case file",
            );
            return Vec::new();
        }
        let Some(fields) = self.fields(root, "a case file", ROOT_KEYS) else {
            return Vec::new();
        };
        if let Some(s) = fields.get("$schema") {
            self.string(s, "`$schema`");
        }
        let Some(cases) = self.require(&fields, "cases", root, "a case file") else {
            return Vec::new();
        };
        let NodeKind::Seq(items) = &cases.kind else {
            self.type_error(cases, "`cases`", "a sequence of cases");
            return Vec::new();
        };
        if items.is_empty() {
            self.error(
                cases.span.clone(),
                "`cases` is empty: a case file needs at least one case",
            );
        }
        let mut names: HashMap<String, Span> = HashMap::new();
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            if let Some(case) = self.case(item) {
                if let Some(first) = names.get(&case.name.value) {
                    let (line, _) = self.file.line_col(first.start);
                    self.error_help(
                        case.name.span.clone(),
                        format!("duplicate case name `{}`", case.name.value),
                        format!("the first case with this name is on line {line}; names are unique in a file"),
                    );
                } else {
                    names.insert(case.name.value.clone(), case.name.span.clone());
                }
                out.push(case);
            }
        }
        out
    }

    pub(super) fn case(&mut self, node: &Node) -> Option<Case> {
        let fields = self.fields(node, "a case", CASE_KEYS)?;
        let name = self
            .require(&fields, "name", node, "a case")
            .and_then(|n| self.string(n, "`name`"));
        if let Some(n) = &name
            && n.value.trim().is_empty()
        {
            self.error(n.span.clone(), "`name` is empty");
        }
        if let Some(n) = &name
            && n.value.chars().count() > limits::MAX_NAME_CHARS
        {
            self.error(
                n.span.clone(),
                format!(
                    "`name` is {} characters, more than the limit of {}",
                    n.value.chars().count(),
                    limits::MAX_NAME_CHARS
                ),
            );
        }
        if let Some(n) = &name {
            self.plain_text(n, "`name`");
        }
        let tags = match fields.get("tags") {
            Some(t) => self.strings(t, "`tags`").map(|v| {
                v.into_iter()
                    .filter_map(|s| self.plain_text(&s, "a tag").then_some(s.value))
                    .collect()
            }),
            None => Some(Vec::new()),
        };
        let kinds: Vec<&Key> = KIND_KEYS.iter().filter_map(|k| fields.key(k)).collect();
        let kind = match kinds.as_slice() {
            [] => {
                self.error_help(
                    head(node),
                    "a case needs a kind: none of `endpoint`, `walk`, `products-sweep` or `cross-merchant-cursor` is set",
                    "set exactly one of `endpoint` (one request), `walk` (paging walk), `products-sweep` or `cross-merchant-cursor`",
                );
                None
            }
            [one] => match one.text.as_str() {
                "endpoint" => self.exchange(&fields),
                "walk" => {
                    self.reject_exchange_keys(&fields, "walk");
                    fields
                        .get("walk")
                        .and_then(|w| self.walk(w))
                        .map(CaseKind::Walk)
                }
                "cross-merchant-cursor" => {
                    self.reject_exchange_keys(&fields, "cross-merchant-cursor");
                    fields
                        .get("cross-merchant-cursor")
                        .and_then(|x| self.cross_cursor(x))
                        .map(CaseKind::CrossMerchantCursor)
                }
                _ => {
                    self.reject_exchange_keys(&fields, "products-sweep");
                    fields
                        .get("products-sweep")
                        .and_then(|s| self.sweep(s))
                        .map(CaseKind::ProductsSweep)
                }
            },
            [first, rest @ ..] => {
                for other in rest {
                    self.error_help(
                        other.span.clone(),
                        format!(
                            "a case has exactly one kind, but `{}` is set as well as `{}`",
                            other.text, first.text
                        ),
                        "split it into two cases",
                    );
                }
                None
            }
        };
        Some(Case {
            name: name?,
            tags: tags?,
            kind: kind?,
            span: node.span.clone(),
        })
    }

    pub(super) fn reject_exchange_keys(&mut self, fields: &Fields, kind: &str) {
        for key in EXCHANGE_ONLY_KEYS {
            if let Some(k) = fields.key(key) {
                self.error_help(
                    k.span.clone(),
                    format!("`{key}` applies only to `endpoint` cases, not to a `{kind}` case"),
                    format!("remove it, or move the settings into `{kind}`"),
                );
            }
        }
    }
}

/// Turns "absent" (outer `None`) into `Some(None)` and "present but invalid" into `None`.
pub(super) fn optional<T>(x: Option<Option<T>>) -> Option<Option<T>> {
    match x {
        None => Some(None),
        Some(v) => v.map(Some),
    }
}

/// A zero-width span at the start of a node (where "needs a key" errors point).
pub(super) fn head(node: &Node) -> Span {
    node.span.start..node.span.start
}

/// Why `p` is not a JSON Pointer (RFC 6901), or `None` when it is one.
pub(super) fn pointer_problem(p: &str) -> Option<&'static str> {
    if !p.is_empty() && !p.starts_with('/') {
        return Some("it must be empty or start with `/`");
    }
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return Some("`~` must be followed by `0` or `1`");
        }
    }
    None
}
