//! A generated request body: JSON built by editing a valid baseline body, or raw bytes that are
//! not (or not quite) JSON; how it is serialised, signed, displayed and compared, and the sizes
//! it is kept within.

use std::cell::RefCell;
use std::fmt;
use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use serde_json::{Map, Value};

/// Sizes of what the fuzzer generates. By default they stay within what stock HTTP layers and
/// gateways accept, so that a rejection by the front server (431, 413, nginx's 400) is never
/// taken for a break of the interface; `--oversize` lifts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest run of one character in a generated string, in characters.
    pub max_run: u64,
    /// Deepest nesting of a generated raw body.
    pub max_nesting: u64,
    /// Largest body in bytes; `None` is unlimited.
    pub max_body: Option<usize>,
    /// Longest appid, in bytes, copied from the body into the Authorization header; a longer
    /// one is replaced by the configured appid. `None` copies any.
    pub max_header_appid: Option<usize>,
}

impl Limits {
    /// Within common limits: nginx, Tomcat and Node accept 8 KiB of request headers (so the
    /// appid, with the signature and the other headers, stays under half of it) and Express
    /// accepts 100 KB of JSON body (nginx 1 MiB).
    pub const COMMON: Limits = Limits {
        max_run: 4096,
        max_nesting: 10_000,
        max_body: Some(64 * 1024),
        max_header_appid: Some(4096),
    };

    /// Oversize probes (`--oversize`): strings of up to 70,000 characters, nesting of up to
    /// 100,000 levels, any body size and any appid in the header.
    pub const OVERSIZE: Limits = Limits {
        max_run: 70_000,
        max_nesting: 100_000,
        max_body: None,
        max_header_appid: None,
    };

    /// The limits for `--oversize` on or off.
    pub fn new(oversize: bool) -> Limits {
        if oversize {
            Limits::OVERSIZE
        } else {
            Limits::COMMON
        }
    }

    /// Whether `body` is small enough.
    pub fn admits(&self, body: &FuzzBody) -> bool {
        self.max_body.is_none_or(|max| body.len() <= max)
    }

    /// Whether a request with this body and this appid in its Authorization header goes
    /// beyond the common limits (a front server may then reject it before the service sees it).
    pub fn beyond_common(body: &FuzzBody, header_appid: &str) -> bool {
        Limits::beyond_common_len(body.len(), header_appid)
    }

    /// [`Limits::beyond_common`] of a body of `len` bytes.
    pub fn beyond_common_len(len: usize, header_appid: &str) -> bool {
        Limits::COMMON.max_body.is_some_and(|max| len > max)
            || Limits::COMMON
                .max_header_appid
                .is_some_and(|max| header_appid.len() > max)
    }
}

/// One change to a baseline body, addressed by a JSON Pointer into it.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Sets (or adds) the member at the pointer.
    Set(&'static str, Value),
    /// Removes the member at the pointer.
    Remove(&'static str),
    /// Adds a member `key` to the object at the pointer.
    Insert(&'static str, String, Value),
}

/// A request body as the fuzzer sends it.
#[derive(Clone, PartialEq)]
pub enum FuzzBody {
    /// A JSON document, serialised compactly.
    Json(Value),
    /// Bytes sent as they are, with a few words on what they are.
    Raw {
        /// What the bytes are (e.g. "truncated JSON").
        label: String,
        /// The bytes.
        bytes: Vec<u8>,
    },
}

impl fmt::Debug for FuzzBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FuzzBody::Json(v) => write!(f, "{v}"),
            FuzzBody::Raw { label, bytes } => {
                write!(f, "raw {label}: {:?}", String::from_utf8_lossy(bytes))
            }
        }
    }
}

/// Seeds of the two halves of a [`FuzzBody::fingerprint`].
const FINGERPRINT_SEEDS: [u64; 2] = [0x6d61_6c6c_6368_6563, 0x6b66_757a_7a62_6f64];

impl FuzzBody {
    /// The bytes put on the wire.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            FuzzBody::Json(v) => {
                serde_json::to_vec(v).expect("a serde_json::Value always serializes")
            }
            FuzzBody::Raw { bytes, .. } => bytes.clone(),
        }
    }

    /// Length of the body in bytes (counted as it is written, nothing kept).
    pub fn len(&self) -> usize {
        match self {
            FuzzBody::Json(v) => crate::json::json_size(v),
            FuzzBody::Raw { bytes, .. } => bytes.len(),
        }
    }

    /// Whether the body has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The appid for the Authorization header: the body's own appid when it is a string that
    /// fits in a header within `limits` (spec §5.1: the first part equals the body's appid),
    /// else `fallback`.
    pub fn header_appid<'a>(&'a self, fallback: &'a str, limits: &Limits) -> &'a str {
        match self {
            FuzzBody::Json(v) => v
                .get("appid")
                .and_then(Value::as_str)
                .filter(|a| fits_header(a))
                .filter(|a| limits.max_header_appid.is_none_or(|max| a.len() <= max))
                .unwrap_or(fallback),
            FuzzBody::Raw { .. } => fallback,
        }
    }

    /// The JSON document, when the body is one.
    pub fn json(&self) -> Option<&Value> {
        match self {
            FuzzBody::Json(v) => Some(v),
            FuzzBody::Raw { .. } => None,
        }
    }

    /// A fingerprint of the bytes sent, the same for equal bytes within a process (duplicates
    /// are not sent twice): two 64-bit foldhash hashes of them under fixed seeds, written into
    /// one buffer per thread. (An MD5 of a fresh serialization cost about 8,000 instructions a
    /// draw, for a set that is never written anywhere.)
    pub fn fingerprint(&self) -> [u8; 16] {
        thread_local! {
            static BYTES: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
        }
        match self {
            FuzzBody::Json(v) => BYTES.with_borrow_mut(|bytes| {
                bytes.clear();
                serde_json::to_writer(&mut *bytes, v)
                    .expect("a serde_json::Value always serializes");
                FuzzBody::fingerprint_of(bytes)
            }),
            FuzzBody::Raw { bytes, .. } => FuzzBody::fingerprint_of(bytes),
        }
    }

    /// [`FuzzBody::fingerprint`] of a body whose bytes ([`FuzzBody::to_bytes`]) are at hand.
    pub fn fingerprint_of(bytes: &[u8]) -> [u8; 16] {
        let [a, b] = FINGERPRINT_SEEDS.map(|seed| FixedState::with_seed(seed).hash_one(bytes));
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&a.to_le_bytes());
        out[8..].copy_from_slice(&b.to_le_bytes());
        out
    }

    /// Multi-line text for a human: pretty JSON, or the raw bytes escaped.
    pub fn display(&self) -> String {
        match self {
            FuzzBody::Json(v) => {
                serde_json::to_string_pretty(v).expect("a serde_json::Value always serializes")
            }
            FuzzBody::Raw { label, bytes } => format!(
                "({label}, {} bytes) {}",
                bytes.len(),
                escape_bytes(bytes, 2000)
            ),
        }
    }
}

/// Whether `s` can be the appid part of an Authorization header value.
fn fits_header(s: &str) -> bool {
    !s.is_empty() && !s.contains(' ') && s.bytes().all(|b| b > b' ' && b != 0x7f)
}

/// `bytes` as text with non-printable bytes and invalid UTF-8 escaped, cut after `max` chars.
pub fn escape_bytes(bytes: &[u8], max: usize) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() {
                out.extend(c.escape_default());
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    crate::verdict::event::truncate(&out, max)
}

/// Applies edits to a copy of `base`, in order; an edit whose parent is not an object is
/// skipped (an earlier edit replaced or removed it).
pub fn apply(base: &Value, edits: impl IntoIterator<Item = Edit>) -> Value {
    // The edits are moved in: a generated value (up to a long run of text) is not copied.
    let mut body = base.clone();
    for edit in edits {
        match edit {
            Edit::Set(pointer, value) => {
                if let Some((map, key)) = parent_of(&mut body, pointer) {
                    map.insert(key.to_string(), value);
                }
            }
            Edit::Remove(pointer) => {
                if let Some((map, key)) = parent_of(&mut body, pointer) {
                    map.shift_remove(key);
                }
            }
            Edit::Insert(parent, key, value) => {
                if let Some(Value::Object(map)) = body.pointer_mut(parent) {
                    map.insert(key, value);
                }
            }
        }
    }
    body
}

fn parent_of<'v, 'p>(
    body: &'v mut Value,
    pointer: &'p str,
) -> Option<(&'v mut Map<String, Value>, &'p str)> {
    let (parent, key) = pointer.rsplit_once('/')?;
    match body.pointer_mut(parent) {
        Some(Value::Object(map)) => Some((map, key)),
        _ => None,
    }
}

/// The compact serialisation of `base` with the value at `pointer` replaced by `token`, a piece
/// of raw text that need not be valid JSON (e.g. `1e999` or a lone surrogate escape).
pub fn splice(base: &Value, pointer: &'static str, token: &str) -> Option<Vec<u8>> {
    const MARK: &str = "\u{1}mallcheck-splice\u{1}";
    let marked = apply(base, [Edit::Set(pointer, Value::String(MARK.into()))]);
    let text = serde_json::to_string(&marked).ok()?;
    let quoted = serde_json::to_string(MARK).ok()?;
    text.contains(&quoted)
        .then(|| text.replacen(&quoted, token, 1).into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({"appid": "a", "filter": {"seller": {"role": "r"}}, "cursor": {"count": 10}})
    }

    #[test]
    fn edits_set_remove_and_insert_in_place() {
        let body = apply(
            &base(),
            [
                Edit::Set("/cursor/count", json!(81)),
                Edit::Remove("/filter/seller/role"),
                Edit::Insert("", "extra".into(), json!(true)),
            ],
        );
        assert_eq!(
            body,
            json!({"appid": "a", "filter": {"seller": {}}, "cursor": {"count": 81}, "extra": true})
        );
    }

    #[test]
    fn an_edit_under_a_replaced_parent_is_skipped() {
        let body = apply(
            &base(),
            [
                Edit::Set("/filter", json!(null)),
                Edit::Set("/filter/seller/role", json!("")),
            ],
        );
        assert_eq!(body["filter"], json!(null));
    }

    #[test]
    fn splice_puts_raw_text_where_the_value_was() {
        let raw = splice(&base(), "/cursor/count", "1e999").unwrap();
        assert_eq!(
            String::from_utf8(raw).unwrap(),
            r#"{"appid":"a","filter":{"seller":{"role":"r"}},"cursor":{"count":1e999}}"#
        );
        assert!(splice(&base(), "/missing/count", "1").is_none());
    }

    #[test]
    fn header_appid_falls_back_when_the_body_appid_cannot_be_a_header() {
        let ok = FuzzBody::Json(json!({"appid": "app"}));
        assert_eq!(ok.header_appid("cfg", &Limits::COMMON), "app");
        for bad in [
            json!({"appid": 7}),
            json!({"appid": "a b"}),
            json!({"appid": "a\u{1}"}),
            json!([]),
        ] {
            assert_eq!(
                FuzzBody::Json(bad).header_appid("cfg", &Limits::COMMON),
                "cfg"
            );
        }
    }

    #[test]
    fn a_long_appid_stays_out_of_the_header_unless_oversize() {
        let long = "商".repeat(2000);
        let body = FuzzBody::Json(json!({ "appid": long }));
        assert_eq!(body.header_appid("cfg", &Limits::COMMON), "cfg");
        assert_eq!(body.header_appid("cfg", &Limits::OVERSIZE), long);
        assert!(Limits::beyond_common(&body, &long));
        assert!(!Limits::beyond_common(&body, "cfg"));
        let big = FuzzBody::Raw {
            label: "x".into(),
            bytes: vec![b'['; 64 * 1024 + 1],
        };
        assert!(!Limits::COMMON.admits(&big) && Limits::OVERSIZE.admits(&big));
        assert!(Limits::beyond_common(&big, "cfg"));
    }

    #[test]
    fn raw_display_escapes_invalid_utf8_and_controls() {
        let raw = FuzzBody::Raw {
            label: "bytes".into(),
            bytes: vec![b'{', 0xff, 0, b'}'],
        };
        assert_eq!(raw.display(), "(bytes, 4 bytes) {\\xff\\u{0}}");
    }
}
