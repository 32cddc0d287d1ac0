//! Case-file text to [`super::model`], collecting every error with its position.
//!
//! Parsing runs in two steps: the syntax step ([`super::node`]) builds a positioned tree with
//! serde-saphyr's strict options, then lowering checks keys, types, names, paths and patterns
//! and builds the typed model. Every problem of a file is reported, sorted by position.

mod expect;
pub mod files;
mod lower;
pub(crate) use lower::suggest;
mod request;
mod walk;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::case::model::CaseFile;
use crate::case::node;
use crate::diag::Diagnostic;
use crate::spec::catalog;
use crate::verdict::check::Check;
use crate::verdict::source::SourceFile;
use lower::Lower;

/// What lowering needs from the application: variable values and the known schema names.
pub struct ParseContext<'a> {
    /// Values of `${NAME}` variables.
    pub vars: &'a BTreeMap<String, String>,
    /// Valid `expect.schema` values (besides `none`).
    pub schema_names: &'a [&'a str],
}

/// Checks an exchange case may switch on in `expect.checks` (they judge one response): the
/// ownership and order checks, and the fuzz properties, which a saved fuzz regression case
/// applies to its response.
pub static EXCHANGE_CHECKS: &[&Check] = &concat::<10>(
    &[
        &catalog::OWNERSHIP_MERCHANT,
        &catalog::OWNERSHIP_UNKNOWN_MERCHANT,
        &catalog::PRODUCTS_ORDER,
        &catalog::AUTH_SIGNATURE_RAW_BYTES,
    ],
    &catalog::FUZZ_PROPERTIES,
);

/// Two lists of checks as one (`N` is the sum of their lengths, checked at compile time).
const fn concat<const N: usize>(a: &[&'static Check], b: &[&'static Check]) -> [&'static Check; N] {
    assert!(a.len() + b.len() == N, "N is the length of both lists");
    let mut all = [&catalog::HARNESS_INTERNAL; N];
    let mut i = 0;
    while i < N {
        all[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    all
}

/// Checks `expect.no-data` may report under (each says "this response carries no merchant data").
pub static NO_DATA_CHECKS: &[&Check] = &[
    &catalog::AUTH_REQUIRED,
    &catalog::AUTH_SIGNATURE,
    &catalog::AUTH_APPID_MATCH,
    &catalog::AUTH_SIGNATURE_REPLAY,
    &catalog::AUTH_SIGNATURE_OTHER_OPERATION,
    &catalog::PRODUCTS_SELLER_BOUND,
    &catalog::PRODUCTS_SIGNATURE_BOUND,
    &catalog::PRODUCTS_MALLSN_BOUND,
    &catalog::OWNERSHIP_UNKNOWN_MERCHANT,
    &catalog::LIST_FAILURE_NO_DATA,
];

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
    "cross-merchant-cursor",
];
const KIND_KEYS: &[&str] = &[
    "endpoint",
    "walk",
    "products-sweep",
    "cross-merchant-cursor",
];
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
const SNAPSHOT_KEYS: &[&str] = &["redact", "sort", "walk", "malls"];
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
const CROSS_CURSOR_KEYS: &[&str] = &["body", "other-seller", "cursor"];
const ENDPOINTS: &[&str] = &["mall-list", "mall-products"];
const AUTH_MODES: &[&str] = &[
    "signed",
    "missing",
    "wrong-signature",
    "altered-signature",
    "truncated-signature",
    "extended-signature",
    "unkeyed-signature",
    "empty-signature",
    "empty-authorization",
    "appid-mismatch",
    "unknown-appid",
    "signature-of-other-body",
    "signature-of-other-operation",
    "signed-other-spelling",
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

#[cfg(test)]
mod tests;
