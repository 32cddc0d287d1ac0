//! Typed case model; every value a diagnostic or finding can blame keeps its span.
//!
//! A case file holds one or more cases. A case is one of three kinds: a single `exchange`
//! (one request, its expectations), a paging `walk` of the mall list, or a `products-sweep`
//! that calls the products operation for the listed malls. Variables (`${MALLCHECK_APPID}`)
//! are already substituted when the model is built.

use std::fmt;
use std::sync::Arc;

use regex::Regex;
use serde_json::Value;
use serde_json_path::JsonPath;

use crate::json::reach::Reach;

use crate::redact::{REDACTED, is_secret_header_name};
use crate::verdict::check::Check;
use crate::verdict::endpoint::{AuthMode, Endpoint};
use crate::verdict::source::{SourceFile, Span, Spanned};

/// A parsed case file.
#[derive(Debug)]
pub struct CaseFile {
    /// The file's text and path.
    pub source: Arc<SourceFile>,
    /// Its cases in file order.
    pub cases: Vec<Case>,
}

/// One case.
#[derive(Debug)]
pub struct Case {
    /// Name, unique within the file.
    pub name: Spanned<String>,
    /// Free tags for `--filter tag:NAME`.
    pub tags: Vec<String>,
    /// What the case does.
    pub kind: CaseKind,
    /// Span of the whole case, for findings without a narrower place.
    pub span: Span,
}

impl Case {
    /// The endpoint the case targets (a walk targets the mall list, a sweep the products).
    pub fn endpoint(&self) -> Endpoint {
        match &self.kind {
            CaseKind::Exchange(x) => x.endpoint,
            CaseKind::Walk(_) => Endpoint::MallList,
            CaseKind::ProductsSweep(_) => Endpoint::MallProducts,
            CaseKind::CrossMerchantCursor(_) => Endpoint::MallList,
        }
    }
}

/// What a case does.
#[derive(Debug)]
pub enum CaseKind {
    /// One request and its expectations.
    Exchange(ExchangeCase),
    /// Walk the mall list cursor to its end at several page sizes.
    Walk(WalkCase),
    /// Call the products operation for the malls of the list.
    ProductsSweep(SweepCase),
    /// Present a cursor of one merchant's list in a request of another merchant, both ways.
    CrossMerchantCursor(CrossCursorCase),
}

/// The request of an exchange case. `Debug` shows the value of a credential header (by name
/// or marked in `secret-headers`) as `<redacted>`.
pub struct RequestSpec {
    /// JSON body after variable substitution; `raw` wins when set.
    pub body: Option<Spanned<Value>>,
    /// A raw body text sent as is (for malformed-body cases).
    pub raw: Option<Spanned<String>>,
    /// Raw body bytes written in hex (`raw-hex`), for bodies that are not UTF-8 text.
    pub raw_hex: Option<Spanned<Vec<u8>>>,
    /// Extra headers (e.g. `X-env-flag`).
    pub headers: Vec<(String, String)>,
    /// Authorization mode.
    pub auth: AuthMode,
    /// Headers the case marks secret (`secret-headers`): redacted like credentials, whatever
    /// their name.
    pub secret_headers: Vec<String>,
}

impl fmt::Debug for RequestSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(name, value)| {
                let marked = self
                    .secret_headers
                    .iter()
                    .any(|m| m.eq_ignore_ascii_case(name));
                if marked || is_secret_header_name(name) {
                    (name.as_str(), REDACTED)
                } else {
                    (name.as_str(), value.as_str())
                }
            })
            .collect();
        f.debug_struct("RequestSpec")
            .field("body", &self.body)
            .field("raw", &self.raw)
            .field("raw_hex", &self.raw_hex)
            .field("headers", &headers)
            .field("auth", &self.auth)
            .field("secret_headers", &self.secret_headers)
            .finish()
    }
}

/// A named check switched on by a case, with its spans.
#[derive(Debug, Clone)]
pub struct CheckRef {
    /// The catalogue entry.
    pub check: &'static Check,
    /// Where the case names it.
    pub span: Span,
}

/// One exchange case.
#[derive(Debug)]
pub struct ExchangeCase {
    /// Which operation.
    pub endpoint: Endpoint,
    /// What to send.
    pub request: RequestSpec,
    /// What to expect.
    pub expect: Expect,
    /// Snapshot settings; `None` when the case takes no snapshot.
    pub snapshot: Option<SnapshotSpec>,
}

/// An expected HTTP status: one code (`200`) or a class (`2xx`; the spec shows no status, §7.3,
/// so the shipped cases ask for a success of any code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectedStatus {
    /// Exactly this code.
    Code(u16),
    /// Any code of this hundred (`2` for `2xx`).
    Class(u16),
}

impl ExpectedStatus {
    /// Whether `status` is expected.
    pub fn admits(self, status: u16) -> bool {
        match self {
            ExpectedStatus::Code(code) => status == code,
            ExpectedStatus::Class(class) => status / 100 == class,
        }
    }

    /// The lowest code expected.
    pub fn lowest(self) -> u16 {
        match self {
            ExpectedStatus::Code(code) => code,
            ExpectedStatus::Class(class) => class * 100,
        }
    }

    /// `Nxx` read as a class (any letter case), `None` for anything else.
    pub fn class(text: &str) -> Option<ExpectedStatus> {
        match text.as_bytes() {
            [d @ b'1'..=b'5', x, y]
                if x.eq_ignore_ascii_case(&b'x') && y.eq_ignore_ascii_case(&b'x') =>
            {
                Some(ExpectedStatus::Class(u16::from(d - b'0')))
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for ExpectedStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExpectedStatus::Code(code) => write!(f, "{code}"),
            ExpectedStatus::Class(class) => write!(f, "{class}xx"),
        }
    }
}

/// Expectations of an exchange case.
#[derive(Debug, Default)]
pub struct Expect {
    /// Expected HTTP status (`http.status`).
    pub status: Option<Spanned<ExpectedStatus>>,
    /// Response schema by name (default: the endpoint's response schema); `none` switches it off.
    pub schema: Option<Spanned<String>>,
    /// Whether schema validation runs (false after `schema: none`).
    pub schema_enabled: bool,
    /// Semantic checks switched on for this response (e.g. `ownership.merchant`,
    /// `products.order`, `auth.signature`): the response must satisfy them.
    pub checks: Vec<CheckRef>,
    /// The response must carry no merchant data (auth and tampering probes); reported under
    /// the check named here.
    pub no_data: Option<CheckRef>,
    /// JSONPath assertions (`case.assert`).
    pub asserts: Vec<Assertion>,
}

/// An ad hoc JSONPath assertion.
#[derive(Debug)]
pub struct Assertion {
    /// The path as written (for messages).
    pub path_text: String,
    /// The compiled path.
    pub path: JsonPath,
    /// What must hold for the nodes it selects.
    pub op: AssertOp,
    /// Where the assertion is written.
    pub span: Span,
}

impl Assertion {
    /// What of a body its path can look at: all of each node it selects, or for `count` and
    /// `exists` only the nodes themselves (how many there are).
    pub fn reach(&self) -> Reach {
        let end = match self.op {
            AssertOp::Count(_) | AssertOp::Exists(_) => Reach::node(),
            _ => Reach::whole(),
        };
        Reach::of_query(&self.path_text, &end)
    }
}

/// The operator of an assertion.
#[derive(Debug)]
pub enum AssertOp {
    /// Exactly one node, equal to the value.
    Equals(Value),
    /// Every selected node is a string matching the regex (at least one node).
    Matches(Regex),
    /// Every selected node is one of the values (at least one node unless `count: 0`).
    OneOf(Vec<Value>),
    /// The number of selected nodes.
    Count(usize),
    /// At least one node (true) or none (false).
    Exists(bool),
    /// Every selected node has this JSON type (`string`, `number`, `integer`, `boolean`,
    /// `null`, `array`, `object`).
    Type(String),
}

/// Snapshot settings of a case.
#[derive(Debug, Default, Clone)]
pub struct SnapshotSpec {
    /// insta selectors replaced by a placeholder (e.g. `.data[].orderStatistics`).
    pub redact: Vec<String>,
    /// insta selectors whose arrays are sorted before comparing.
    pub sort: Vec<String>,
    /// A mall-list case: the snapshot holds the whole first walk (the case's page, then the
    /// pages after it at the same size, their malls in one `data`), not the first page alone.
    pub walk: bool,
    /// A mall-products case: the snapshot holds the products of this many malls of the
    /// configured merchant's first page, spread over it (see `release::sample`).
    pub malls: Option<usize>,
}

/// How the next page's `endCursor` is taken from a page (spec §4.1 leaves it open).
#[derive(Debug, Clone, PartialEq)]
pub enum CursorRule {
    /// A JSON Pointer into the last record of the previous page (default `/mallSn`).
    LastRecord(String),
    /// A JSON Pointer into the previous page's whole response body (e.g. `/nextCursor`).
    Response(String),
}

impl Default for CursorRule {
    fn default() -> Self {
        CursorRule::LastRecord("/mallSn".to_string())
    }
}

/// A paging walk case.
#[derive(Debug)]
pub struct WalkCase {
    /// Base request body (its `cursor.count` and `cursor.endCursor` are replaced per page).
    pub body: Spanned<Value>,
    /// Page sizes to walk with (at least one); the walks must agree.
    pub sizes: Vec<u64>,
    /// Walk each size twice and compare (`paging.repeatable`).
    pub repeat: bool,
    /// How the next cursor is derived.
    pub cursor: CursorRule,
    /// Page limit per walk; `None` uses the run's `--max-pages`.
    pub max_pages: Option<u64>,
    /// Run `ownership.merchant` on every record.
    pub ownership: bool,
}

/// A products sweep case: list malls, call products for each.
#[derive(Debug)]
pub struct SweepCase {
    /// Body of the mall list request used to find malls (first page, size from it).
    pub list_body: Spanned<Value>,
    /// Seller identity object sent to the products call.
    pub seller: Value,
    /// Another merchant's seller identity for `products.seller-bound`; `None` skips that probe.
    pub other_seller: Option<Value>,
    /// Only the first N malls; `None` = all malls of the first page.
    pub sample: Option<usize>,
    /// Check `products.order` (observed).
    pub order: bool,
    /// Probe `products.signature-bound` with a tampered signature, and `products.mallsn-bound`
    /// with the signature and a mallSn that is no mall's.
    pub tamper_signature: bool,
}

/// A cross-merchant cursor probe: the first pages of the merchant of `body` and of
/// `other_seller` give each a cursor, which is sent in a request of the other merchant.
#[derive(Debug)]
pub struct CrossCursorCase {
    /// Mall list request body of the configured merchant (first page; its `cursor.count` is
    /// the page size of every request of the probe).
    pub body: Spanned<Value>,
    /// The other merchant's seller identity (spec §2.1), put in place of `filter.seller`.
    pub other_seller: Value,
    /// How a cursor is taken from a page.
    pub cursor: CursorRule,
}

/// What one case file may ask for. A value past a limit is a load-time error (exit 2 with its
/// position): each would make a run explode in time, memory or output rather than test more.
pub mod limits {
    /// Largest case file read, in bytes.
    pub const MAX_FILE_BYTES: u64 = crate::local_file::Kind::CaseFile.limit();
    /// Longest case name, in characters (names appear on every report line of the case).
    pub const MAX_NAME_CHARS: usize = 200;
    /// Page sizes of one walk (each is a full walk of the list, twice with `repeat`).
    pub const MAX_WALK_SIZES: usize = 32;
    /// Largest page size of a walk.
    pub const MAX_PAGE_SIZE: u64 = 10_000;
    /// Largest `walk.max-pages`.
    pub const MAX_WALK_PAGES: u64 = 100_000;
    /// Largest `products-sweep.sample` (each sampled mall costs a few requests).
    pub const MAX_SAMPLE: u64 = 1_000;
    /// Largest `snapshot.malls` (one products call each, on every run and diff).
    pub const MAX_SNAPSHOT_MALLS: u64 = 50;
    /// Largest request body (`body` as JSON, or `raw`) and other JSON objects of a case, in
    /// bytes (the reference server takes 1 MiB).
    pub const MAX_BODY_BYTES: usize = 1024 * 1024;
    /// Assertions of one case.
    pub const MAX_ASSERTIONS: usize = 100;
    /// Values of one `one-of` list.
    pub const MAX_ONE_OF: usize = 1_000;
    /// Longest JSONPath, in characters.
    pub const MAX_JSON_PATH_CHARS: usize = 1_000;
    /// Descendant segments (`..`) of one JSONPath: each multiplies the nodes visited by the
    /// depth of the response.
    pub const MAX_DESCENDANT_SEGMENTS: usize = 2;
    /// Longest regex (`matches`, or the pattern of `match()`/`search()` in a JSONPath filter),
    /// in characters.
    pub const MAX_REGEX_CHARS: usize = 1_000;
    /// Largest compiled pattern of `match()`/`search()` in a JSONPath filter, in bytes (the
    /// regex crate's `size_limit`): the filter compiles its pattern again for every node it
    /// tests, and a short pattern such as `\w{50}` compiles to megabytes.
    pub const MAX_FILTER_REGEX_COMPILED_BYTES: usize = 64 * 1024;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_of_a_request_hides_credential_header_values() {
        let spec = RequestSpec {
            body: None,
            raw: None,
            raw_hex: None,
            headers: vec![
                ("X-Api-Key".into(), "k3y-in-header".into()),
                ("X-Tenant".into(), "tenant-s3cret".into()),
                ("X-env-flag".into(), "1".into()),
            ],
            auth: AuthMode::Signed,
            secret_headers: vec!["x-tenant".into()],
        };
        let text = format!("{spec:?}");
        assert!(!text.contains("k3y-in-header"), "{text}");
        assert!(!text.contains("tenant-s3cret"), "{text}");
        assert!(text.contains("X-env-flag"), "{text}");
    }
}
