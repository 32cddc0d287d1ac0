//! Case-file text to [`super::model`], collecting every error with its position.
//!
//! Parsing runs in two steps: the syntax step ([`super::node`]) builds a positioned tree with
//! serde-saphyr's strict options, then lowering checks keys, types, names, paths and patterns
//! and builds the typed model. Every problem of a file is reported, sorted by position.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use regex::{Regex, RegexBuilder};
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value};
use serde_json_path::JsonPath;

use super::model::{
    AssertOp, Assertion, Case, CaseFile, CaseKind, CheckRef, CursorRule, ExchangeCase, Expect,
    RequestSpec, SnapshotSpec, SweepCase, WalkCase, limits,
};

use crate::verdict::endpoint::{AuthMode, Endpoint};

use crate::verdict::source::{SourceFile, Span, Spanned};

use super::node::{self, Key, Node, NodeKind};
use super::vars;
use crate::diag::Diagnostic;
use crate::spec::catalog::{self, CATALOG};
use crate::verdict::check::Check;

/// What lowering needs from the application: variable values and the known schema names.
pub struct ParseContext<'a> {
    /// Values of `${NAME}` variables.
    pub vars: &'a BTreeMap<String, String>,
    /// Valid `expect.schema` values (besides `none`).
    pub schema_names: &'a [&'a str],
}

/// Checks an exchange case may switch on in `expect.checks` (they judge one response).
pub static EXCHANGE_CHECKS: &[&Check] = &[
    &catalog::OWNERSHIP_MERCHANT,
    &catalog::OWNERSHIP_UNKNOWN_MERCHANT,
    &catalog::PRODUCTS_ORDER,
    // The fuzz properties, which a saved fuzz regression case applies to its response.
    &catalog::FUZZ_NO_SERVER_ERROR,
    &catalog::FUZZ_TIMELY,
    &catalog::FUZZ_JSON,
    &catalog::FUZZ_CONTRACT,
    &catalog::FUZZ_ERROR_NO_DATA,
    &catalog::FUZZ_OWNERSHIP,
];

/// Checks `expect.no-data` may report under (each says "this response carries no merchant data").
pub static NO_DATA_CHECKS: &[&Check] = &[
    &catalog::AUTH_REQUIRED,
    &catalog::AUTH_SIGNATURE,
    &catalog::AUTH_APPID_MATCH,
    &catalog::AUTH_SIGNATURE_REPLAY,
    &catalog::AUTH_SIGNATURE_OTHER_OPERATION,
    &catalog::PRODUCTS_SELLER_BOUND,
    &catalog::PRODUCTS_SIGNATURE_BOUND,
    &catalog::OWNERSHIP_UNKNOWN_MERCHANT,
    &catalog::LIST_FAILURE_NO_DATA,
];

/// Extensions of case files found when a directory is given.
const CASE_EXTENSIONS: &[&str] = &["yaml", "yml", "json"];

const ROOT_KEYS: &[&str] = &["cases", "$schema"];
const CASE_KEYS: &[&str] = &[
    "name",
    "tags",
    "endpoint",
    "request",
    "expect",
    "snapshot",
    "walk",
    "products-sweep",
];
const KIND_KEYS: &[&str] = &["endpoint", "walk", "products-sweep"];
const EXCHANGE_ONLY_KEYS: &[&str] = &["request", "expect", "snapshot"];
const REQUEST_KEYS: &[&str] = &[
    "body",
    "raw",
    "raw-hex",
    "headers",
    "auth",
    "secret-headers",
];
const EXPECT_KEYS: &[&str] = &["status", "schema", "checks", "no-data", "assert"];
const ASSERT_KEYS: &[&str] = &[
    "path", "equals", "matches", "one-of", "count", "exists", "type",
];
const ASSERT_OPS: &[&str] = &["equals", "matches", "one-of", "count", "exists", "type"];
const ASSERT_TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "null", "array", "object",
];
const SNAPSHOT_KEYS: &[&str] = &["redact", "sort"];
const WALK_KEYS: &[&str] = &[
    "body",
    "sizes",
    "repeat",
    "cursor",
    "max-pages",
    "ownership",
];
const CURSOR_KEYS: &[&str] = &["last-record", "response"];
const SWEEP_KEYS: &[&str] = &[
    "list-body",
    "seller",
    "other-seller",
    "sample",
    "order",
    "tamper-signature",
];
const ENDPOINTS: &[&str] = &["mall-list", "mall-products"];
const AUTH_MODES: &[&str] = &[
    "signed",
    "missing",
    "wrong-signature",
    "appid-mismatch",
    "signature-of-other-body",
    "signature-of-other-operation",
];
/// Problems reported per case file; the rest are counted.
const MAX_DIAGNOSTICS_PER_FILE: usize = 50;
/// `expect.schema` value that switches schema validation off.
const SCHEMA_NONE: &str = "none";

/// Parses one case file; on failure returns every problem of the file, sorted by position.
pub fn parse_file(
    path: &Path,
    text: String,
    cx: &ParseContext,
) -> Result<CaseFile, Vec<Diagnostic>> {
    let is_json = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    };
    let source = Arc::new(SourceFile {
        path: path.to_path_buf(),
        text,
    });
    let tree = if is_json {
        node::parse_json(&source.text)
    } else {
        node::parse_yaml(&source.text)
    };
    let root = match tree {
        Ok(root) => root,
        Err(e) => {
            let what = if is_json {
                "invalid JSON"
            } else {
                "invalid YAML"
            };
            let mut d = match e.span {
                Some(span) => Diagnostic::at(&source, span, format!("{what}: {}", e.message)),
                None => Diagnostic::for_path(path, format!("{what}: {}", e.message)),
            };
            if e.message.contains("duplicate mapping key") {
                d = d.with_help("a key may appear only once in a mapping: keep one of them");
            }
            return Err(vec![d]);
        }
    };
    let mut lower = Lower {
        file: Arc::clone(&source),
        cx,
        diags: Vec::new(),
    };
    let cases = lower.root(&root);
    if lower.diags.is_empty() {
        Ok(CaseFile { source, cases })
    } else {
        let mut diags = lower.diags;
        diags.sort_by_key(|d| d.span.as_ref().map_or((0, 0), |s| (s.start, s.end)));
        if diags.len() > MAX_DIAGNOSTICS_PER_FILE {
            let more = diags.len() - MAX_DIAGNOSTICS_PER_FILE;
            diags.truncate(MAX_DIAGNOSTICS_PER_FILE);
            diags.push(Diagnostic::for_path(
                path,
                format!(
                    "{more} more problem{} not shown: fix the problems above first",
                    if more == 1 { "" } else { "s" }
                ),
            ));
        }
        Err(diags)
    }
}

/// Loads every case file named by `paths` (files, or directories searched recursively for
/// `*.yaml`, `*.yml` and `*.json`, in sorted order) and returns all of them or every problem of
/// every file. Unreadable paths and directories without case files are problems too.
pub fn load_paths(paths: &[PathBuf], cx: &ParseContext) -> Result<Vec<CaseFile>, Vec<Diagnostic>> {
    let mut files = Vec::new();
    let mut diags = Vec::new();
    for path in paths {
        collect_files(path, &mut files, &mut diags);
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for file in files {
        if !seen.insert(file.clone()) {
            continue;
        }
        match read_text(&file) {
            Ok(text) => match parse_file(&file, text, cx) {
                Ok(case_file) => out.push(case_file),
                Err(mut d) => diags.append(&mut d),
            },
            Err(d) => diags.push(d),
        }
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

/// Reads a case file as text (at most [`limits::MAX_FILE_BYTES`]; see [`node::decode`]).
fn read_text(path: &Path) -> Result<String, Diagnostic> {
    let cannot =
        |e: std::io::Error| Diagnostic::for_path(path, format!("cannot read case file: {e}"));
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(limits::MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(cannot)?;
    if bytes.len() as u64 > limits::MAX_FILE_BYTES {
        return Err(Diagnostic::for_path(
            path,
            format!(
                "the file is larger than {} MiB, the limit for a case file",
                limits::MAX_FILE_BYTES / (1024 * 1024)
            ),
        )
        .with_help("split it into several case files"));
    }
    node::decode(bytes).map_err(|e| {
        let file = Arc::new(SourceFile {
            path: path.to_path_buf(),
            text: e.text,
        });
        Diagnostic::at(&file, e.span, e.message).with_help("save the case file as UTF-8")
    })
}

fn collect_files(path: &Path, files: &mut Vec<PathBuf>, diags: &mut Vec<Diagnostic>) {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => {
            diags.push(Diagnostic::for_path(
                path,
                format!("cannot read case path: {e}"),
            ));
            return;
        }
    };
    if !meta.is_dir() {
        files.push(path.to_path_buf());
        return;
    }
    let mut found = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                diags.push(Diagnostic::for_path(
                    &dir,
                    format!("cannot read directory: {e}"),
                ));
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    diags.push(Diagnostic::for_path(
                        &dir,
                        format!("cannot read directory: {e}"),
                    ));
                    continue;
                }
            };
            let p = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if p.is_dir() {
                pending.push(p);
            } else if p
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| CASE_EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)))
            {
                found.push(p);
            }
        }
    }
    if found.is_empty() {
        diags.push(
            Diagnostic::for_path(path, "no case files in this directory")
                .with_help("case files end in .yaml, .yml or .json"),
        );
    }
    found.sort();
    files.append(&mut found);
}

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

fn backticked(items: &[&str]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Help for a word that is not one of `valid`: "did you mean" when close, else the list.
fn choice_help(word: &str, valid: &[&str], what: &str) -> String {
    match suggest(word, valid.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("valid {what}: {}", backticked(valid)),
    }
}

/// The entries of a mapping node whose keys have been checked.
struct Fields<'n> {
    entries: Vec<(&'n Key, &'n Node)>,
}

impl<'n> Fields<'n> {
    fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _)| k.text == key)
            .map(|(_, v)| *v)
    }

    fn key(&self, key: &str) -> Option<&'n Key> {
        self.entries
            .iter()
            .find(|(k, _)| k.text == key)
            .map(|(k, _)| *k)
    }
}

/// Lowering state for one file: the source and the problems found so far.
struct Lower<'a> {
    file: Arc<SourceFile>,
    cx: &'a ParseContext<'a>,
    diags: Vec<Diagnostic>,
}

impl Lower<'_> {
    fn error(&mut self, span: Span, message: impl Into<String>) {
        self.diags.push(Diagnostic::at(&self.file, span, message));
    }

    fn error_help(&mut self, span: Span, message: impl Into<String>, help: impl Into<String>) {
        self.diags
            .push(Diagnostic::at(&self.file, span, message).with_help(help));
    }

    fn type_error(&mut self, node: &Node, what: &str, expected: &str) {
        self.error(
            node.span.clone(),
            format!("{what} must be {expected}, found {}", node.kind.describe()),
        );
    }

    /// Checks that `node` is a mapping with keys from `allowed`; reports every unknown key.
    fn fields<'n>(&mut self, node: &'n Node, what: &str, allowed: &[&str]) -> Option<Fields<'n>> {
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

    fn require<'n>(
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
    fn inner_span(&self, span: &Span, value: &str, range: std::ops::Range<usize>) -> Span {
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
    fn subst(&mut self, text: &str, span: &Span) -> Option<String> {
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

    fn string(&mut self, node: &Node, what: &str) -> Option<Spanned<String>> {
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

    fn bool(&mut self, node: Option<&Node>, what: &str) -> Option<bool> {
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

    fn uint(&mut self, node: &Node, what: &str) -> Option<u64> {
        match &node.kind {
            NodeKind::Number(n) if n.as_u64().is_some() => n.as_u64(),
            _ => {
                self.type_error(node, what, "a non-negative integer");
                None
            }
        }
    }

    fn positive(&mut self, node: &Node, what: &str) -> Option<u64> {
        let n = self.uint(node, what)?;
        if n == 0 {
            self.error(node.span.clone(), format!("{what} must be at least 1"));
            return None;
        }
        Some(n)
    }

    /// Reports a control character (or a bidirectional override) in text that is printed on
    /// consoles and in reports as is, such as a case name; true when there is none.
    fn plain_text(&mut self, text: &Spanned<String>, what: &str) -> bool {
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
    fn bounded(&mut self, node: &Node, what: &str, max: u64) -> Option<u64> {
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
    fn fits(&mut self, items: &[Node], max: usize, what: &str) -> bool {
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
    fn bounded_json(&mut self, node: &Node, value: Value, what: &str) -> Option<Value> {
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

    fn strings(&mut self, node: &Node, what: &str) -> Option<Vec<Spanned<String>>> {
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
    fn value(&mut self, node: &Node) -> Option<Value> {
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

    fn object(&mut self, node: &Node, what: &str) -> Option<Spanned<Value>> {
        if !matches!(node.kind, NodeKind::Map(_)) {
            self.type_error(node, what, "a mapping (JSON object)");
            return None;
        }
        let value = self.value(node)?;
        self.bounded_json(node, value, what)
            .map(|v| Spanned::new(v, node.span.clone()))
    }

    /// A check id from the catalogue that is one of `allowed` (what this place can run).
    fn check_ref(
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

    fn pointer(&mut self, node: &Node, what: &str) -> Option<String> {
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

    fn root(&mut self, root: &Node) -> Vec<Case> {
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

    fn case(&mut self, node: &Node) -> Option<Case> {
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
                    "a case needs a kind: none of `endpoint`, `walk` or `products-sweep` is set",
                    "set exactly one of `endpoint` (one request), `walk` (paging walk) or `products-sweep`",
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

    fn reject_exchange_keys(&mut self, fields: &Fields, kind: &str) {
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

    fn exchange(&mut self, fields: &Fields) -> Option<CaseKind> {
        let endpoint = fields.get("endpoint").and_then(|e| self.endpoint(e));
        let request = match fields.get("request") {
            Some(r) => self.request(r),
            None => {
                let at = fields.key("endpoint").map_or(0..0, |k| k.span.clone());
                self.error_help(
                    at,
                    "an `endpoint` case needs a `request`",
                    "add `request: { body: {...} }`",
                );
                None
            }
        };
        let expect = match fields.get("expect") {
            Some(e) => self.expect(e),
            None => Some(Expect {
                schema_enabled: true,
                ..Expect::default()
            }),
        };
        let snapshot = match fields.get("snapshot") {
            Some(s) => self.snapshot(s),
            None => Some(None),
        };
        Some(CaseKind::Exchange(ExchangeCase {
            endpoint: endpoint?,
            request: request?,
            expect: expect?,
            snapshot: snapshot?,
        }))
    }

    fn endpoint(&mut self, node: &Node) -> Option<Endpoint> {
        let name = self.string(node, "`endpoint`")?;
        match name.value.as_str() {
            "mall-list" => Some(Endpoint::MallList),
            "mall-products" => Some(Endpoint::MallProducts),
            other => {
                let help = choice_help(other, ENDPOINTS, "endpoints");
                self.error_help(name.span, format!("unknown endpoint `{other}`"), help);
                None
            }
        }
    }

    fn request(&mut self, node: &Node) -> Option<RequestSpec> {
        let fields = self.fields(node, "`request`", REQUEST_KEYS)?;
        let body = fields.get("body").map(|b| {
            self.value(b)
                .and_then(|v| self.bounded_json(b, v, "`request.body`"))
                .map(|v| Spanned::new(v, b.span.clone()))
        });
        let raw = fields.get("raw").map(|r| {
            let raw = self.string(r, "`request.raw`")?;
            if raw.value.len() > limits::MAX_BODY_BYTES {
                self.error(
                    raw.span,
                    format!(
                        "`request.raw` is {} bytes, more than the limit of {} bytes",
                        raw.value.len(),
                        limits::MAX_BODY_BYTES
                    ),
                );
                return None;
            }
            Some(raw)
        });
        let raw_hex = fields.get("raw-hex").map(|r| self.hex(r));
        let bodies: Vec<&Key> = ["body", "raw", "raw-hex"]
            .iter()
            .filter_map(|k| fields.key(k))
            .collect();
        match bodies.as_slice() {
            [first, second, ..] => self.error_help(
                second.span.clone(),
                format!("`{}` and `{}` are both set", first.text, second.text),
                "`body` is JSON built from YAML, `raw` is text and `raw-hex` bytes sent as they are: keep one",
            ),
            [] => self.error_help(
                head(node),
                "a request needs a `body` or a `raw` body",
                "add `body: {...}` (JSON) or `raw: \"...\"` (sent as is)",
            ),
            _ => {}
        }
        let auth = match fields.get("auth") {
            None => Some(AuthMode::Signed),
            Some(a) => self.auth(a),
        };
        let headers = match fields.get("headers") {
            None => Some(Vec::new()),
            Some(h) => self.headers(h, auth.as_ref()),
        };
        let secret_headers = match fields.get("secret-headers") {
            None => Some(Vec::new()),
            Some(n) => self.secret_headers(n, headers.as_deref()),
        };
        Some(RequestSpec {
            body: optional(body)?,
            raw: optional(raw)?,
            raw_hex: optional(raw_hex)?,
            headers: headers?,
            auth: auth?,
            secret_headers: secret_headers?,
        })
    }

    /// Bytes written as a hex string (`raw-hex`).
    fn hex(&mut self, node: &Node) -> Option<Spanned<Vec<u8>>> {
        let text = self.string(node, "`request.raw-hex`")?;
        match hex::decode(text.value.trim()) {
            Ok(bytes) => Some(Spanned::new(bytes, text.span)),
            Err(e) => {
                self.error_help(
                    text.span,
                    format!("`request.raw-hex` is not hex: {e}"),
                    "write two hex digits per byte, e.g. `7b ff` as `7bff`",
                );
                None
            }
        }
    }

    /// `secret-headers: [X-Foo]`: headers of this request whose values are redacted like a
    /// credential. A name that is not among the request's headers is a typo that would leave a
    /// secret in the reports, so it is an error.
    fn secret_headers(
        &mut self,
        node: &Node,
        headers: Option<&[(String, String)]>,
    ) -> Option<Vec<String>> {
        let names = self.strings(node, "`request.secret-headers`")?;
        let mut ok = true;
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let known = headers.is_none_or(|hs| {
                name.value.eq_ignore_ascii_case("authorization")
                    || hs.iter().any(|(k, _)| k.eq_ignore_ascii_case(&name.value))
            });
            if !known {
                let sent: Vec<&str> = headers
                    .unwrap_or_default()
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect();
                let help = match suggest(&name.value, sent.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None if sent.is_empty() => {
                        "list the header and its value in `request.headers`".to_string()
                    }
                    None => format!("headers of this request: {}", backticked(&sent)),
                };
                self.error_help(
                    name.span,
                    format!("`{}` is not a header of this request", name.value),
                    help,
                );
                ok = false;
                continue;
            }
            out.push(name.value);
        }
        ok.then_some(out)
    }

    fn auth(&mut self, node: &Node) -> Option<AuthMode> {
        let mode = self.string(node, "`request.auth`")?;
        match mode.value.as_str() {
            "signed" => Some(AuthMode::Signed),
            "missing" => Some(AuthMode::Missing),
            "wrong-signature" => Some(AuthMode::WrongSignature),
            "appid-mismatch" => Some(AuthMode::AppidMismatch),
            "signature-of-other-body" => Some(AuthMode::SignatureOfOtherBody),
            "signature-of-other-operation" => Some(AuthMode::SignatureOfOtherOperation),
            other => {
                let help = choice_help(other, AUTH_MODES, "auth modes");
                self.error_help(mode.span, format!("unknown auth mode `{other}`"), help);
                None
            }
        }
    }

    fn headers(&mut self, node: &Node, auth: Option<&AuthMode>) -> Option<Vec<(String, String)>> {
        let NodeKind::Map(entries) = &node.kind else {
            self.type_error(
                node,
                "`request.headers`",
                "a mapping of header names to values",
            );
            return None;
        };
        let mut out = Vec::with_capacity(entries.len());
        let mut ok = true;
        for (key, value) in entries {
            if HeaderName::from_bytes(key.text.as_bytes()).is_err() {
                self.error(
                    key.span.clone(),
                    format!("`{}` is not a valid HTTP header name", key.text),
                );
                ok = false;
                continue;
            }
            if key.text.eq_ignore_ascii_case("authorization") && auth != Some(&AuthMode::Missing) {
                self.error_help(
                    key.span.clone(),
                    "the Authorization header is built by `request.auth`",
                    "use `auth: missing` together with this header to send a hand-written Authorization value",
                );
                ok = false;
                continue;
            }
            let text = match &value.kind {
                NodeKind::Str(s) => self.subst(s, &value.span),
                NodeKind::Number(n) => Some(n.to_string()),
                _ => {
                    self.type_error(value, &format!("header `{}`", key.text), "a string");
                    None
                }
            };
            match text {
                Some(t) if HeaderValue::from_str(&t).is_ok() => out.push((key.text.clone(), t)),
                Some(_) => {
                    self.error(
                        value.span.clone(),
                        format!("invalid value for header `{}`", key.text),
                    );
                    ok = false;
                }
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn expect(&mut self, node: &Node) -> Option<Expect> {
        let fields = self.fields(node, "`expect`", EXPECT_KEYS)?;
        let mut ok = true;
        let mut expect = Expect {
            schema_enabled: true,
            ..Expect::default()
        };
        if let Some(s) = fields.get("status") {
            match self.uint(s, "`expect.status`") {
                Some(code @ 100..=599) => {
                    expect.status = Some(Spanned::new(code as u16, s.span.clone()))
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

    fn assertion(&mut self, node: &Node) -> Option<Assertion> {
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

    fn json_path(&mut self, node: &Node) -> Option<(String, JsonPath)> {
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
    fn json_path_parts(&mut self, node: &Node, path: &str) -> bool {
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

    fn assert_op(&mut self, key: &str, node: &Node) -> Option<AssertOp> {
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

    fn snapshot(&mut self, node: &Node) -> Option<Option<SnapshotSpec>> {
        match &node.kind {
            NodeKind::Bool(true) => return Some(Some(SnapshotSpec::default())),
            NodeKind::Bool(false) => return Some(None),
            NodeKind::Map(_) => {}
            _ => {
                self.type_error(
                    node,
                    "`snapshot`",
                    "`true`, `false` or a mapping with `redact` and `sort`",
                );
                return None;
            }
        }
        let fields = self.fields(node, "`snapshot`", SNAPSHOT_KEYS)?;
        let mut lists = [Vec::new(), Vec::new()];
        let mut ok = true;
        for (slot, key) in lists.iter_mut().zip(SNAPSHOT_KEYS) {
            let Some(n) = fields.get(key) else { continue };
            match self.strings(n, &format!("`snapshot.{key}`")) {
                Some(items) => {
                    for s in items {
                        if let Err(problem) = check_selector(&s.value) {
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
        ok.then_some(Some(SnapshotSpec { redact, sort }))
    }

    fn walk(&mut self, node: &Node) -> Option<WalkCase> {
        let fields = self.fields(node, "`walk`", WALK_KEYS)?;
        let body = self
            .require(&fields, "body", node, "`walk`")
            .and_then(|b| self.object(b, "`walk.body`"));
        let sizes = self
            .require(&fields, "sizes", node, "`walk`")
            .and_then(|s| self.sizes(s));
        let repeat = self.bool(fields.get("repeat"), "`walk.repeat`");
        let ownership = self.bool(fields.get("ownership"), "`walk.ownership`");
        let max_pages = match fields.get("max-pages") {
            None => Some(None),
            Some(m) => self
                .bounded(m, "`walk.max-pages`", limits::MAX_WALK_PAGES)
                .map(Some),
        };
        let cursor = match fields.get("cursor") {
            None => Some(CursorRule::default()),
            Some(c) => self.cursor(c),
        };
        Some(WalkCase {
            body: body?,
            sizes: sizes?,
            repeat: repeat?,
            cursor: cursor?,
            max_pages: max_pages?,
            ownership: ownership?,
        })
    }

    fn sizes(&mut self, node: &Node) -> Option<Vec<u64>> {
        let NodeKind::Seq(items) = &node.kind else {
            self.type_error(node, "`walk.sizes`", "a sequence of page sizes");
            return None;
        };
        if items.is_empty() {
            self.error_help(
                node.span.clone(),
                "`walk.sizes` is empty: nothing would be walked",
                "e.g. `sizes: [1, 3, 10]`",
            );
            return None;
        }
        if !self.fits(items, limits::MAX_WALK_SIZES, "`walk.sizes`") {
            return None;
        }
        let sizes: Vec<Option<u64>> = items
            .iter()
            .map(|i| self.bounded(i, "a page size", limits::MAX_PAGE_SIZE))
            .collect();
        sizes.into_iter().collect()
    }

    fn cursor(&mut self, node: &Node) -> Option<CursorRule> {
        let fields = self.fields(node, "`walk.cursor`", CURSOR_KEYS)?;
        match (fields.get("last-record"), fields.get("response")) {
            (Some(p), None) => self
                .pointer(p, "`cursor.last-record`")
                .map(CursorRule::LastRecord),
            (None, Some(p)) => self
                .pointer(p, "`cursor.response`")
                .map(CursorRule::Response),
            (Some(_), Some(_)) => {
                let at = fields
                    .key("response")
                    .map_or_else(|| head(node), |k| k.span.clone());
                self.error(
                    at,
                    "`cursor` takes one of `last-record` and `response`, not both",
                );
                None
            }
            (None, None) => {
                self.error_help(
                    head(node),
                    "`cursor` needs `last-record` or `response`",
                    "e.g. `cursor: { last-record: /mallSn }` or `cursor: { response: /nextCursor }`",
                );
                None
            }
        }
    }

    fn sweep(&mut self, node: &Node) -> Option<SweepCase> {
        let fields = self.fields(node, "`products-sweep`", SWEEP_KEYS)?;
        let list_body = self
            .require(&fields, "list-body", node, "`products-sweep`")
            .and_then(|b| self.object(b, "`list-body`"));
        let seller = self
            .require(&fields, "seller", node, "`products-sweep`")
            .and_then(|s| self.object(s, "`seller`"));
        let other_seller = match fields.get("other-seller") {
            None => Some(None),
            Some(o) => self.object(o, "`other-seller`").map(|v| Some(v.value)),
        };
        let sample = match fields.get("sample") {
            None => Some(None),
            Some(s) => self
                .bounded(s, "`sample`", limits::MAX_SAMPLE)
                .and_then(|n| usize::try_from(n).ok())
                .map(Some),
        };
        let order = self.bool(fields.get("order"), "`order`");
        let tamper_signature = self.bool(fields.get("tamper-signature"), "`tamper-signature`");
        Some(SweepCase {
            list_body: list_body?,
            seller: seller?.value,
            other_seller: other_seller?,
            sample: sample?,
            order: order?,
            tamper_signature: tamper_signature?,
        })
    }
}

/// Turns "absent" (outer `None`) into `Some(None)` and "present but invalid" into `None`.
fn optional<T>(x: Option<Option<T>>) -> Option<Option<T>> {
    match x {
        None => Some(None),
        Some(v) => v.map(Some),
    }
}

/// A zero-width span at the start of a node (where "needs a key" errors point).
fn head(node: &Node) -> Span {
    node.span.start..node.span.start
}

/// Why `p` is not a JSON Pointer (RFC 6901), or `None` when it is one.
fn pointer_problem(p: &str) -> Option<&'static str> {
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

/// What [`scan_json_path`] finds in a JSONPath that parses.
#[derive(Debug, Default, PartialEq)]
struct JsonPathScan {
    /// Byte ranges of the descendant segments' `..`.
    descendants: Vec<std::ops::Range<usize>>,
    /// String literals given as the pattern of `match()` or `search()`.
    patterns: Vec<FilterPattern>,
}

/// A regex literal of a JSONPath filter.
#[derive(Debug, PartialEq)]
struct FilterPattern {
    /// Byte range of the literal (with its quotes) in the path.
    range: std::ops::Range<usize>,
    /// The literal's value, escapes resolved.
    pattern: String,
    /// `match()` (the whole string) rather than `search()`.
    anchored: bool,
}

/// Finds the descendant segments and the regex literals of a well-formed JSONPath (RFC 9535):
/// string literals are skipped as a unit, so `..` or `match(` inside one count for nothing.
fn scan_json_path(path: &str) -> JsonPathScan {
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

/// Bytes of `value` serialized as compact JSON, counted without building the text.
fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
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

/// Checks an insta redaction selector (insta panics on a bad one, so it is checked at load).
///
/// Grammar (insta's `select_grammar.pest`): selectors separated by `,`; each is `.` alone or
/// a run of segments: `.**`, `.*`, `.key`, `["key"]`, `[int]`, `[]`, `[a:b]`, `[:b]`, `[a:]`.
fn check_selector(s: &str) -> Result<(), &'static str> {
    let mut any = false;
    for sel in s.split(',') {
        let sel = sel.trim();
        if sel.is_empty() {
            if any {
                continue;
            }
            return Err("it is empty");
        }
        any = true;
        if sel == "." {
            continue;
        }
        let mut rest = sel;
        while !rest.is_empty() {
            rest = selector_segment(rest)?;
        }
    }
    if any { Ok(()) } else { Err("it is empty") }
}

fn selector_segment(s: &str) -> Result<&str, &'static str> {
    if let Some(rest) = s.strip_prefix(".**") {
        return Ok(rest);
    }
    if let Some(rest) = s.strip_prefix(".*") {
        return Ok(rest);
    }
    if let Some(rest) = s.strip_prefix('.') {
        let mut chars = rest.char_indices();
        match chars.next() {
            Some((_, c)) if c == '_' || c == '$' || c.is_alphabetic() => {}
            _ => return Err("a `.` must be followed by a key, `*` or `**`"),
        }
        let end = chars
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
            .map_or(rest.len(), |(i, _)| i);
        return Ok(&rest[end..]);
    }
    if let Some(rest) = s.strip_prefix('[') {
        let close = rest.find(']').ok_or("`[` without `]`")?;
        let inner = rest[..close].trim();
        let is_int = |t: &str| {
            let t = t.strip_prefix('-').unwrap_or(t);
            !t.is_empty() && t.chars().all(|c| c.is_ascii_digit())
        };
        let ok = inner.is_empty()
            || is_int(inner)
            || (inner.len() >= 2
                && inner.starts_with('"')
                && inner.ends_with('"')
                && !inner[1..inner.len() - 1].contains('"'))
            || inner.split_once(':').is_some_and(|(a, b)| {
                let (a, b) = (a.trim(), b.trim());
                (is_int(a) || a.is_empty())
                    && (is_int(b) || b.is_empty())
                    && !(a.is_empty() && b.is_empty())
            });
        return if ok {
            Ok(&rest[close + 1..])
        } else {
            Err("a subscript is `[]`, `[n]`, `[\"key\"]` or a range `[a:b]`")
        };
    }
    Err("a selector segment starts with `.` or `[`")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMAS: &[&str] = &["mall-list-response", "products-response", "mall"];

    fn vars() -> BTreeMap<String, String> {
        vars::KNOWN_VARS
            .iter()
            .map(|k| (k.to_string(), format!("v-{k}")))
            .collect()
    }

    fn parse(name: &str, text: &str) -> Result<CaseFile, Vec<Diagnostic>> {
        let v = vars();
        let cx = ParseContext {
            vars: &v,
            schema_names: SCHEMAS,
        };
        parse_file(Path::new(name), text.to_string(), &cx)
    }

    fn errors(text: &str) -> Vec<Diagnostic> {
        match parse("cases/t.yaml", text) {
            Ok(_) => panic!("expected errors for:\n{text}"),
            Err(d) => d,
        }
    }

    fn one_error(text: &str) -> Diagnostic {
        let mut d = errors(text);
        assert_eq!(d.len(), 1, "{}", crate::diag::render(&d, false));
        d.remove(0)
    }

    const VALID: &str = r#"
cases:
  - name: first page
    tags: [smoke, mall-list]
    endpoint: mall-list
    request:
      body:
        appid: "${MALLCHECK_APPID}"
        filter: { seller: { merchantId: "${MALLCHECK_MERCHANT_ID}", merchantUserId: "u-${MALLCHECK_ROLE}", role: NO } }
        sort: { sortField: id, sort: DESC }
        cursor: { cursorField: id, endCursor: null, count: 10, code: 007 }
      headers: { X-env-flag: "1" }
      auth: wrong-signature
    expect:
      status: 200
      schema: mall-list-response
      checks: [ownership.merchant]
      no-data: auth.required
      assert:
        - { path: "$.code", equals: "0000" }
        - { path: "$.data[*].mallSn", matches: "^[0-9]+$" }
        - { path: "$.data[*]", count: 10 }
        - { path: "$.data[*].state", one-of: [0, 1, 2] }
        - { path: "$.data[0].topTime", type: string }
        - { path: "$.data[0].nope", exists: false }
    snapshot: { redact: [".data[].orderStatistics"], sort: [] }
  - name: raw body
    endpoint: mall-products
    request: { raw: "not json $${X}", auth: missing }
    expect: { schema: none }
    snapshot: true
  - name: walk
    walk:
      body: { appid: x }
      sizes: [1, 3, 10, 100]
      repeat: true
      cursor: { response: /nextCursor }
      max-pages: 20000
      ownership: true
  - name: sweep
    products-sweep:
      list-body: { appid: x }
      seller: { merchantId: m }
      other-seller: { merchantId: o }
      sample: 5
      order: true
      tamper-signature: true
"#;

    #[test]
    fn valid_file_builds_the_whole_model() {
        let file = match parse("cases/ok.yaml", VALID) {
            Ok(f) => f,
            Err(d) => panic!("{}", crate::diag::render(&d, false)),
        };
        assert_eq!(file.cases.len(), 4);
        let first = &file.cases[0];
        assert_eq!(first.name.value, "first page");
        assert_eq!(first.tags, vec!["smoke", "mall-list"]);
        assert_eq!(file.source.line_col(first.name.span.start), (3, 11));
        let CaseKind::Exchange(x) = &first.kind else {
            panic!("exchange")
        };
        assert_eq!(x.endpoint, Endpoint::MallList);
        let body = &x.request.body.as_ref().expect("body").value;
        assert_eq!(body["appid"], "v-MALLCHECK_APPID");
        assert_eq!(
            body["filter"]["seller"]["merchantUserId"],
            "u-v-MALLCHECK_ROLE"
        );
        assert_eq!(
            body["filter"]["seller"]["role"], "NO",
            "strict booleans keep NO a string"
        );
        assert_eq!(body["cursor"]["code"], "007", "leading zeros stay a string");
        assert_eq!(body["cursor"]["endCursor"], Value::Null);
        assert_eq!(body["cursor"]["count"], 10);
        assert_eq!(
            x.request.headers,
            vec![("X-env-flag".to_string(), "1".to_string())]
        );
        assert_eq!(x.request.auth, AuthMode::WrongSignature);
        assert_eq!(x.expect.status.as_ref().map(|s| s.value), Some(200));
        assert!(x.expect.schema_enabled);
        assert_eq!(
            x.expect.schema.as_ref().map(|s| s.value.as_str()),
            Some("mall-list-response")
        );
        assert_eq!(x.expect.checks[0].check.id, catalog::OWNERSHIP_MERCHANT.id);
        assert_eq!(
            x.expect.no_data.as_ref().map(|c| c.check.id),
            Some(catalog::AUTH_REQUIRED.id)
        );
        let ops: Vec<&str> = x
            .expect
            .asserts
            .iter()
            .map(|a| match &a.op {
                AssertOp::Equals(v) if v == "0000" => "equals",
                AssertOp::Matches(r) if r.as_str() == "^[0-9]+$" => "matches",
                AssertOp::Count(10) => "count",
                AssertOp::OneOf(v) if v.len() == 3 => "one-of",
                AssertOp::Type(t) if t == "string" => "type",
                AssertOp::Exists(false) => "exists",
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(
            ops,
            ["equals", "matches", "count", "one-of", "type", "exists"]
        );
        assert_eq!(
            x.snapshot.as_ref().map(|s| s.redact.clone()),
            Some(vec![".data[].orderStatistics".to_string()])
        );

        let CaseKind::Exchange(raw) = &file.cases[1].kind else {
            panic!("exchange")
        };
        assert_eq!(
            raw.request.raw.as_ref().map(|r| r.value.as_str()),
            Some("not json ${X}")
        );
        assert_eq!(raw.request.auth, AuthMode::Missing);
        assert!(!raw.expect.schema_enabled);
        assert!(raw.snapshot.is_some());
        assert_eq!(file.cases[1].endpoint(), Endpoint::MallProducts);

        let CaseKind::Walk(w) = &file.cases[2].kind else {
            panic!("walk")
        };
        assert_eq!(w.sizes, [1, 3, 10, 100]);
        assert!(w.repeat && w.ownership);
        assert_eq!(w.cursor, CursorRule::Response("/nextCursor".to_string()));
        assert_eq!(w.max_pages, Some(20000));

        let CaseKind::ProductsSweep(s) = &file.cases[3].kind else {
            panic!("sweep")
        };
        assert_eq!(s.seller["merchantId"], "m");
        assert_eq!(
            s.other_seller.as_ref().map(|o| o["merchantId"].clone()),
            Some(Value::from("o"))
        );
        assert_eq!(s.sample, Some(5));
        assert!(s.order && s.tamper_signature);
    }

    #[test]
    fn defaults_apply_when_optional_keys_are_absent() {
        let file = parse(
            "cases/d.yaml",
            "cases:\n  - name: a\n    endpoint: mall-list\n    request: { body: {} }\n  - name: w\n    walk: { body: {}, sizes: [3] }\n",
        )
        .unwrap_or_else(|d| panic!("{}", crate::diag::render(&d, false)));
        let CaseKind::Exchange(x) = &file.cases[0].kind else {
            panic!("exchange")
        };
        assert_eq!(x.request.auth, AuthMode::Signed);
        assert!(x.expect.schema_enabled && x.expect.schema.is_none() && x.expect.status.is_none());
        assert!(x.snapshot.is_none());
        let CaseKind::Walk(w) = &file.cases[1].kind else {
            panic!("walk")
        };
        assert_eq!(w.cursor, CursorRule::LastRecord("/mallSn".to_string()));
        assert!(!w.repeat && !w.ownership && w.max_pages.is_none());
    }

    #[test]
    fn json_case_files_parse_into_the_same_model() {
        let text = r#"{"$schema": "../schemas/case.schema.json", "cases": [
  {"name": "j", "endpoint": "mall-list", "request": {"body": {"appid": "${MALLCHECK_APPID}", "id": "007"}},
   "expect": {"status": 200}}]}"#;
        let file = parse("cases/j.json", text)
            .unwrap_or_else(|d| panic!("{}", crate::diag::render(&d, false)));
        let CaseFile { cases, .. } = file;
        let CaseKind::Exchange(x) = &cases[0].kind else {
            panic!("exchange")
        };
        assert_eq!(
            x.request.body.as_ref().map(|b| b.value["appid"].clone()),
            Some(Value::from("v-MALLCHECK_APPID"))
        );
    }

    /// One row per problem: the file text, the line the diagnostic must point at, a fragment of
    /// its message and (optionally) of its help.
    #[test]
    fn each_problem_is_reported_at_its_line() {
        let base = |body: &str| format!("cases:\n  - name: a\n{body}");
        let rows: &[(&str, String, usize, &str, &str)] = &[
            ("typo in key", base("    endpoint: mall-list\n    request: { body: {} }\n    expcet: {}\n"), 5, "unknown key `expcet`", "did you mean `expect`?"),
            ("far-off key lists valid keys", base("    endpoint: mall-list\n    request: { body: {} }\n    zzzzzz: 1\n"), 5, "unknown key", "valid keys in a case"),
            ("unknown endpoint", base("    endpoint: mall-lists\n    request: { body: {} }\n"), 3, "unknown endpoint", "did you mean `mall-list`?"),
            ("unknown check", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      checks: [ownership.merchnat]\n"), 6, "unknown check id", "did you mean `ownership.merchant`?"),
            ("check not runnable on one exchange", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      checks: [paging.duplicate]\n"), 6, "cannot be used in `expect.checks`", "ownership.merchant"),
            ("unknown no-data check", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      no-data: auth.requird\n"), 6, "unknown check id", "auth.required"),
            ("unknown schema", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      schema: mall-list-respons\n"), 6, "unknown schema", "mall-list-response"),
            ("bad jsonpath", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert:\n        - { path: \"$.data[\", count: 1 }\n"), 7, "invalid JSONPath", ""),
            ("bad regex", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert:\n        - path: $.code\n          matches: \"^[0-9+$\"\n"), 8, "invalid regex", ""),
            ("two operators", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert:\n        - path: $.code\n          equals: 1\n          count: 1\n"), 9, "one operator", ""),
            ("no operator", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert:\n        - path: $.code\n"), 7, "needs an operator", ""),
            ("unknown type", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert:\n        - { path: $.code, type: strng }\n"), 7, "unknown JSON type", "did you mean `string`?"),
            ("status type", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      status: two hundred\n"), 6, "`expect.status` must be a non-negative integer", ""),
            ("status range", base("    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      status: 99\n"), 6, "100-599", ""),
            ("undefined variable", base("    endpoint: mall-list\n    request:\n      body: { appid: \"${MALLCHECK_APPI}\" }\n"), 5, "undefined variable `MALLCHECK_APPI`", "did you mean `MALLCHECK_APPID`?"),
            ("body and raw", base("    endpoint: mall-list\n    request:\n      body: {}\n      raw: x\n"), 6, "`body` and `raw` are both set", ""),
            ("no body", base("    endpoint: mall-list\n    request: { auth: signed }\n"), 4, "needs a `body` or a `raw`", ""),
            ("unknown auth", base("    endpoint: mall-list\n    request: { body: {}, auth: unsigned }\n"), 4, "unknown auth mode", ""),
            ("two kinds", base("    endpoint: mall-list\n    request: { body: {} }\n    walk: { body: {}, sizes: [1] }\n"), 5, "exactly one kind", ""),
            ("no kind", base("    tags: [x]\n"), 2, "needs a kind", ""),
            ("empty sizes", base("    walk: { body: {}, sizes: [] }\n"), 3, "`walk.sizes` is empty", ""),
            ("zero size", base("    walk: { body: {}, sizes: [1, 0] }\n"), 3, "at least 1", ""),
            ("bad pointer", base("    walk: { body: {}, sizes: [1], cursor: { last-record: mallSn } }\n"), 3, "invalid JSON Pointer", ""),
            ("request on a walk", base("    walk: { body: {}, sizes: [1] }\n    request: { body: {} }\n"), 4, "applies only to `endpoint` cases", ""),
            ("bad selector", base("    endpoint: mall-list\n    request: { body: {} }\n    snapshot: { redact: [\"data[]\"] }\n"), 5, "invalid snapshot selector", ""),
            ("zero sample", base("    products-sweep: { list-body: {}, seller: {}, sample: 0 }\n"), 3, "at least 1", ""),
            ("duplicate names", "cases:\n  - name: a\n    walk: { body: {}, sizes: [1] }\n  - name: a\n    walk: { body: {}, sizes: [1] }\n".to_string(), 4, "duplicate case name", "line 2"),
            ("duplicate key", base("    endpoint: mall-list\n    endpoint: mall-list\n"), 4, "duplicate", ""),
            ("syntax error", base("    endpoint: [mall-list\n    request: x\n"), 4, "invalid YAML", ""),
            ("missing cases", "case: []\n".to_string(), 1, "unknown key `case`", "did you mean `cases`?"),
            ("authorization header", base("    endpoint: mall-list\n    request: { body: {}, headers: { Authorization: x } }\n"), 4, "Authorization header", ""),
            ("bad hex", base("    endpoint: mall-list\n    request: { raw-hex: \"7bz\" }\n"), 4, "`request.raw-hex` is not hex", "two hex digits"),
            ("raw and raw-hex", base("    endpoint: mall-list\n    request:\n      raw: x\n      raw-hex: \"7b\"\n"), 6, "`raw` and `raw-hex` are both set", ""),
            ("legacy fuzz regression", "{\"endpoint\": \"mall-list\", \"property\": \"fuzz.timely\", \"body\": {}}\n".to_string(), 1, "fuzz regression in the format of earlier", "run `mallcheck fuzz` once"),
        ];
        for (why, text, line, message, help) in rows {
            let diags = errors(text);
            let hit = diags.iter().find(|d| d.message.contains(message));
            let Some(d) = hit else {
                panic!(
                    "{why}: no diagnostic containing {message:?}:\n{}",
                    crate::diag::render(&diags, false)
                )
            };
            assert_eq!(d.line_col().map(|(l, _)| l), Some(*line), "{why}: {d}");
            assert!(
                d.help.as_deref().unwrap_or("").contains(help),
                "{why}: help {:?}",
                d.help
            );
        }
    }

    /// Each fixture in `tests/fixtures/bad-cases/` holds one problem; its rendered diagnostic
    /// must name the file and the line of the problem.
    #[test]
    fn bad_fixtures_render_a_diagnostic_naming_file_and_line() {
        let rows: &[(&str, usize, &str)] = &[
            (
                "bad-check-id.yaml",
                8,
                "unknown check id `ownership.merchnat`",
            ),
            ("bad-jsonpath.yaml", 9, "invalid JSONPath"),
            ("bad-regex.yaml", 10, "invalid regex"),
            ("duplicate-key.yaml", 9, "duplicate mapping key"),
            (
                "status-type.yaml",
                8,
                "`expect.status` must be a non-negative integer, found the string `two hundred`",
            ),
            ("two-kinds.yaml", 7, "exactly one kind"),
            (
                "undefined-variable.yaml",
                7,
                "undefined variable `MALLCHECK_APPI`",
            ),
            ("unknown-key.yaml", 7, "unknown key `expcet`"),
            ("yaml-syntax.yaml", 5, "invalid YAML"),
        ];
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad-cases");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .expect("fixture directory")
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        on_disk.sort();
        let listed: Vec<&str> = rows.iter().map(|r| r.0).collect();
        assert_eq!(
            on_disk, listed,
            "every fixture has a row and every row a fixture"
        );
        let v = vars();
        let cx = ParseContext {
            vars: &v,
            schema_names: SCHEMAS,
        };
        for (name, line, message) in rows {
            let shown = format!("tests/fixtures/bad-cases/{name}");
            let text = std::fs::read_to_string(dir.join(name)).expect("fixture readable");
            let diags = match parse_file(Path::new(&shown), text, &cx) {
                Ok(_) => panic!("{name}: parsed without error"),
                Err(d) => d,
            };
            let out = crate::diag::render(&diags, false);
            assert_eq!(diags.len(), 1, "{name}: one problem per fixture:\n{out}");
            assert!(
                out.contains(&format!("{shown}:{line}:")),
                "{name}: file and line {line}:\n{out}"
            );
            assert!(out.contains(message), "{name}: message {message:?}:\n{out}");
        }
    }

    #[test]
    fn load_paths_reads_directories_recursively_and_reports_every_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).expect("mkdir");
        let ok = "cases:\n  - name: a\n    walk: { body: {}, sizes: [1] }\n";
        std::fs::write(dir.path().join("b.yaml"), ok).expect("write");
        std::fs::write(sub.join("a.yml"), ok).expect("write");
        std::fs::write(dir.path().join("notes.txt"), "not a case").expect("write");
        let v = vars();
        let cx = ParseContext {
            vars: &v,
            schema_names: SCHEMAS,
        };
        let files = load_paths(&[dir.path().to_path_buf()], &cx)
            .unwrap_or_else(|d| panic!("{}", crate::diag::render(&d, false)));
        let names: Vec<PathBuf> = files
            .iter()
            .map(|f| {
                f.source
                    .path
                    .strip_prefix(dir.path())
                    .expect("under dir")
                    .to_path_buf()
            })
            .collect();
        assert_eq!(names, [PathBuf::from("b.yaml"), PathBuf::from("sub/a.yml")]);

        std::fs::write(dir.path().join("c.json"), "{\"cases\": [{\"name\": 1}]}").expect("write");
        std::fs::write(sub.join("d.yaml"), "cases: [}").expect("write");
        let missing = dir.path().join("missing.yaml");
        let diags =
            load_paths(&[dir.path().to_path_buf(), missing.clone()], &cx).expect_err("errors");
        let paths: Vec<&Path> = diags.iter().map(|d| d.path.as_path()).collect();
        assert!(paths.contains(&missing.as_path()), "{paths:?}");
        assert!(
            paths.contains(&dir.path().join("c.json").as_path()),
            "{paths:?}"
        );
        assert!(paths.contains(&sub.join("d.yaml").as_path()), "{paths:?}");
        let empty = tempfile::tempdir().expect("temp dir");
        let diags = load_paths(&[empty.path().to_path_buf()], &cx).expect_err("no case files");
        assert!(diags[0].message.contains("no case files"), "{}", diags[0]);
    }

    #[test]
    fn every_error_of_a_file_is_reported_in_position_order() {
        let text = "cases:\n  - name: a\n    endpoint: mall-lst\n    request: { body: {} }\n    expect:\n      checks: [nope]\n      statuss: 200\n  - name: b\n    walk: { body: {}, sizes: [] }\n";
        let diags = errors(text);
        let lines: Vec<usize> = diags
            .iter()
            .filter_map(|d| d.line_col().map(|(l, _)| l))
            .collect();
        assert_eq!(
            lines,
            [3, 6, 7, 9],
            "{}",
            crate::diag::render(&diags, false)
        );
    }

    #[test]
    fn undefined_variable_points_inside_the_string_and_lists_known_names() {
        let text = "cases:\n  - name: a\n    endpoint: mall-list\n    request:\n      body: { appid: \"x-${NOPE}\" }\n";
        let d = one_error(text);
        assert_eq!(d.line_col(), Some((5, 25)));
        assert!(
            d.help
                .as_deref()
                .unwrap_or("")
                .contains("MALLCHECK_MALL_SIGNATURE"),
            "{:?}",
            d.help
        );
    }

    #[test]
    fn bad_jsonpath_message_carries_the_parser_reason() {
        let text = "cases:\n  - name: a\n    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert: [{ path: \"$.data[?\", count: 1 }]\n";
        let d = one_error(text);
        assert!(
            d.message.contains("invalid JSONPath `$.data[?`:"),
            "{}",
            d.message
        );
        assert!(d.message.contains("position"), "{}", d.message);
    }

    #[test]
    fn bad_jsonpath_with_non_ascii_text_does_not_panic() {
        let text = "cases:\n  - name: a\n    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert: [{ path: \"$.名前[\", count: 1 }]\n";
        let d = one_error(text);
        assert!(d.message.contains("invalid JSONPath"), "{}", d.message);
    }

    #[test]
    fn pointer_rules_follow_rfc6901() {
        assert_eq!(pointer_problem(""), None);
        assert_eq!(pointer_problem("/mallSn"), None);
        assert_eq!(pointer_problem("/a~1b~0"), None);
        assert!(pointer_problem("mallSn").is_some());
        assert!(pointer_problem("/a~2").is_some());
    }

    #[test]
    fn selector_check_accepts_insta_forms_and_rejects_others() {
        for ok in [
            ".",
            ".data[].orderStatistics",
            ".data[0].ctime",
            ".**",
            ".data[1:3]",
            "[\"a\"].b",
            ".a, .b",
            ".data[-1]",
        ] {
            assert_eq!(check_selector(ok), Ok(()), "{ok}");
        }
        for bad in ["", "data", ".data[", ".data[x]", ".1a", "[:]"] {
            assert!(check_selector(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn suggestions_are_close_matches_only() {
        assert_eq!(
            suggest("expcet", EXPECT_KEYS.iter().copied().chain(["expect"])),
            Some("expect")
        );
        assert_eq!(
            suggest("STATUS", EXPECT_KEYS.iter().copied()),
            Some("status")
        );
        assert_eq!(suggest("banana", EXPECT_KEYS.iter().copied()), None);
    }

    /// One row per limit of `model::limits` and per filter pattern: the file text, the line
    /// the diagnostic must point at and a fragment of its message.
    #[test]
    fn limits_and_filter_regexes_are_load_time_errors_at_their_line() {
        let exchange = |expect: &str| {
            format!(
                "cases:\n  - name: a\n    endpoint: mall-list\n    request: {{ body: {{}} }}\n    expect:\n{expect}"
            )
        };
        let many = |n: usize, item: &str| vec![item; n].join(", ");
        let rows: Vec<(&str, String, usize, String)> = vec![
            ("bad regex in a filter", exchange("      assert:\n        - { path: \"$.data[?search(@.mallSn,'[A-Z')]\", count: 0 }\n"), 7, "invalid regex `[A-Z` in `search()`".into()),
            ("bad regex in match()", exchange("      assert:\n        - path: $.data[?match(@.mallSn, \"(x\")]\n          exists: false\n"), 7, "in `match()`".into()),
            ("too many page sizes", format!("cases:\n  - name: a\n    walk:\n      body: {{}}\n      sizes: [{}]\n", many(10_000, "1")), 5, format!("`walk.sizes` has 10000 entries, more than the limit of {}", limits::MAX_WALK_SIZES)),
            ("page size too large", "cases:\n  - name: a\n    walk: { body: {}, sizes: [1, 10001] }\n".into(), 3, "a page size must be at most 10000, found 10001".into()),
            ("max-pages too large", "cases:\n  - name: a\n    walk: { body: {}, sizes: [1], max-pages: 100000000 }\n".into(), 3, "`walk.max-pages` must be at most".into()),
            ("sample too large", "cases:\n  - name: a\n    products-sweep: { list-body: {}, seller: {}, sample: 1000000 }\n".into(), 3, "`sample` must be at most".into()),
            ("too many assertions", exchange(&format!("      assert: [{}]\n", many(101, "{ path: $.code, exists: true }"))), 6, "`expect.assert` has 101 entries".into()),
            ("one-of too long", exchange(&format!("      assert:\n        - path: $.code\n          one-of: [{}]\n", many(1001, "1"))), 8, "`one-of` has 1001 entries".into()),
            ("regex too long", exchange(&format!("      assert:\n        - path: $.code\n          matches: \"{}\"\n", "a".repeat(1001))), 8, "it is 1001 characters, more than the limit".into()),
            ("regex compiles too large", exchange("      assert:\n        - path: $.code\n          matches: \"\\\\w{1000}\\\\w{1000}\"\n"), 8, "size limit".into()),
            ("filter regex compiles too large", exchange("      assert:\n        - { path: \"$.data[?search(@.mallSn, '\\\\\\\\w{1000}\\\\\\\\w{1000}')]\", count: 0 }\n"), 7, "size limit".into()),
            ("path too long", exchange(&format!("      assert:\n        - {{ path: \"$.{}\", exists: false }}\n", "a".repeat(1000))), 7, "the JSONPath is 1002 characters".into()),
            ("too many descendant segments", exchange("      assert:\n        - { path: \"$..data..x..y\", exists: false }\n"), 7, "3 descendant segments".into()),
            ("body too large", format!("cases:\n  - name: a\n    endpoint: mall-list\n    request:\n      body: {{ x: \"{}\" }}\n", "y".repeat(limits::MAX_BODY_BYTES)), 5, "`request.body` is 1048584 bytes as JSON".into()),
            ("walk body too large", format!("cases:\n  - name: a\n    walk:\n      sizes: [1]\n      body: {{ x: \"{}\" }}\n", "y".repeat(limits::MAX_BODY_BYTES)), 5, "`walk.body` is".into()),
            ("raw too large", format!("cases:\n  - name: a\n    endpoint: mall-list\n    request:\n      raw: \"{}\"\n", "y".repeat(limits::MAX_BODY_BYTES + 1)), 5, "`request.raw` is 1048577 bytes".into()),
            ("control character in a name", "cases:\n  - name: \"a\\x1b[2Jb\"\n    walk: { body: {}, sizes: [1] }\n".into(), 2, "`name` contains the control character U+001B".into()),
            ("bidi override in a tag", "cases:\n  - name: a\n    tags: [ok, \"x\\u202Ey\"]\n    walk: { body: {}, sizes: [1] }\n".into(), 3, "a tag contains the control character U+202E".into()),
            ("name too long", format!("cases:\n  - name: {}\n    walk: {{ body: {{}}, sizes: [1] }}\n", "n".repeat(201)), 2, "`name` is 201 characters".into()),
        ];
        for (why, text, line, message) in &rows {
            let diags = errors(text);
            let Some(d) = diags.iter().find(|d| d.message.contains(message.as_str())) else {
                panic!(
                    "{why}: no diagnostic containing {message:?}:\n{}",
                    crate::diag::render(&diags, false)
                )
            };
            assert_eq!(d.line_col().map(|(l, _)| l), Some(*line), "{why}: {d}");
        }
    }

    #[test]
    fn a_filter_regex_error_points_at_the_pattern() {
        let text = "cases:\n  - name: a\n    endpoint: mall-list\n    request: { body: {} }\n    expect:\n      assert:\n        - { path: \"$.data[?search(@.mallSn,'[A-Z')]\", count: 0 }\n";
        let d = one_error(text);
        let span = d.span.clone().expect("span");
        assert_eq!(&text[span], "'[A-Z'", "{d}");
    }

    #[test]
    fn limits_at_their_maximum_still_load() {
        let sizes = (1..=limits::MAX_WALK_SIZES as u64)
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let text = format!(
            "cases:\n  - name: {}\n    walk: {{ body: {{}}, sizes: [{sizes}, {}], max-pages: {} }}\n  - name: b\n    products-sweep: {{ list-body: {{}}, seller: {{}}, sample: {} }}\n  - name: c\n    endpoint: mall-list\n    request: {{ body: {{}} }}\n    expect:\n      assert:\n        - {{ path: \"$..data..mallSn\", exists: true }}\n        - {{ path: \"$.data[?match(@.mallSn, 'M[0-9]+')]\", count: 3 }}\n        - {{ path: \"$.data[?search(@.x, \\\"a'b\\\")]\", count: 0 }}\n        - {{ path: $.code, matches: \"{}\" }}\n",
            "n".repeat(limits::MAX_NAME_CHARS),
            limits::MAX_PAGE_SIZE,
            limits::MAX_WALK_PAGES,
            limits::MAX_SAMPLE,
            "a".repeat(limits::MAX_REGEX_CHARS),
        )
        .replacen(&format!(", {}]", limits::MAX_PAGE_SIZE), "]", 1)
        .replacen("sizes: [1,", &format!("sizes: [{},", limits::MAX_PAGE_SIZE), 1);
        if let Err(d) = parse("cases/max.yaml", &text) {
            panic!("{}", crate::diag::render(&d, false));
        }
    }

    #[test]
    fn json_path_scan_finds_descendants_and_filter_patterns_outside_strings() {
        type Row<'a> = (&'a str, &'a str, usize, &'a [(&'a str, bool)]);
        let rows: &[Row] = &[
            ("plain path", "$.data[*].mallSn", 0, &[]),
            ("descendants", "$..data..mallSn", 2, &[]),
            (
                "search pattern",
                "$.data[?search(@.mallSn,'[A-Z')]",
                0,
                &[("[A-Z", false)],
            ),
            (
                "match pattern with spaces",
                "$.d[?match( @.a , \"x+\" )]",
                0,
                &[("x+", true)],
            ),
            (
                "escapes resolved",
                r#"$.d[?match(@.a, 'it\'s\u0041\\d')]"#,
                0,
                &[("it'sA\\d", true)],
            ),
            (
                "dots and names inside strings count for nothing",
                "$['..'][?@.b == 'match(x, \"y\")']",
                0,
                &[],
            ),
            (
                "pattern that is a query is not a literal",
                "$.d[?match(@.a, @.b)]",
                0,
                &[],
            ),
            (
                "first argument literal is not a pattern",
                "$.d[?match('x', @.b)]",
                0,
                &[],
            ),
            (
                "nested calls",
                "$.d[?search(@.a, 'p') && match(@.b, 'q')]",
                0,
                &[("p", false), ("q", true)],
            ),
            ("another function", "$.d[?length(@.a) == 2]", 0, &[]),
            ("a name ending in match", "$.d[?rematch(@.a, 'z')]", 0, &[]),
            (
                "a non-ASCII character before a bracket",
                "$.dataé[?search(@.a, 'z')]",
                0,
                &[("z", false)],
            ),
        ];
        for (why, path, descendants, patterns) in rows {
            let scan = scan_json_path(path);
            assert_eq!(scan.descendants.len(), *descendants, "{why}");
            let found: Vec<(&str, bool)> = scan
                .patterns
                .iter()
                .map(|p| (p.pattern.as_str(), p.anchored))
                .collect();
            assert_eq!(found, *patterns, "{why}");
            for p in &scan.patterns {
                assert!(
                    matches!(path.as_bytes()[p.range.start], b'\'' | b'"'),
                    "{why}"
                );
            }
        }
    }

    #[test]
    fn a_byte_order_mark_is_dropped_from_json_and_yaml() {
        for (name, text) in [
            (
                "cases/bom.json",
                "\u{feff}{\"cases\": [{\"name\": \"a\", \"walk\": {\"body\": {}, \"sizes\": [1]}}]}",
            ),
            (
                "cases/bom.yaml",
                "\u{feff}cases:\n  - name: a\n    walk: { body: {}, sizes: [1] }\n",
            ),
        ] {
            if let Err(d) = parse(name, text) {
                panic!("{name}: {}", crate::diag::render(&d, false));
            }
        }
    }

    #[test]
    fn problems_past_the_cap_are_counted_not_listed() {
        let keys: String = (0..80).map(|i| format!("    bad{i}: 1\n")).collect();
        let text = format!("cases:\n  - name: a\n    walk: {{ body: {{}}, sizes: [1] }}\n{keys}");
        let diags = errors(&text);
        assert_eq!(diags.len(), MAX_DIAGNOSTICS_PER_FILE + 1);
        let last = diags.last().expect("the count");
        assert!(
            last.message.contains("30 more problems not shown"),
            "{last}"
        );
    }
}
