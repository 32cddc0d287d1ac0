//! A response body as JSON without holding its tree: the bytes are checked to be well-formed
//! JSON as they arrive (no tree built), and the tree is built only when a check asks for it.
//! A streamed check (the products sweep) reads the bytes record by record and never builds it.

use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

use bytes::Bytes;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Whether `bytes` are one JSON value, with exactly the error a `serde_json::Value` parse
/// would give (same deserializer, same nesting limit), but building nothing.
pub fn well_formed(bytes: &[u8]) -> Result<(), serde_json::Error> {
    serde_json::from_slice::<Discard>(bytes).map(|_| ())
}

/// Bodies up to this size get their tree at once, in the one pass that checks them: almost
/// every such body is read as a tree anyway (a mall-list page, an error envelope, a fuzz
/// answer), and one parse costs less than a well-formedness pass followed by a tree parse.
/// Larger bodies (a products response can be any size) keep only their bytes.
pub const EAGER_TREE_BYTES: usize = 64 * 1024;

/// A JSON body: its bytes, and its tree once something needed it. Dereferences to the tree.
#[derive(Clone, Default)]
pub struct LazyJson {
    bytes: Bytes,
    tree: OnceLock<Value>,
}

impl LazyJson {
    /// The body `bytes`, already known to be well-formed JSON ([`well_formed`]).
    pub fn from_checked_bytes(bytes: Bytes) -> Self {
        LazyJson {
            bytes,
            tree: OnceLock::new(),
        }
    }

    /// The body `bytes` if they are one JSON value (the error is a `Value` parse's): a body of
    /// at most [`EAGER_TREE_BYTES`] is parsed to its tree at once, a larger one only checked.
    pub fn parse(bytes: Bytes) -> Result<Self, serde_json::Error> {
        if bytes.len() <= EAGER_TREE_BYTES {
            let tree: Value = serde_json::from_slice(&bytes)?;
            return Ok(LazyJson {
                bytes,
                tree: OnceLock::from(tree),
            });
        }
        well_formed(&bytes)?;
        Ok(LazyJson::from_checked_bytes(bytes))
    }

    /// The tree, if it has been built.
    pub fn tree(&self) -> Option<&Value> {
        self.tree.get()
    }

    /// The tree (built now if it was not yet).
    pub fn value(&self) -> &Value {
        self.tree
            .get_or_init(|| serde_json::from_slice(&self.bytes).unwrap_or(Value::Null))
    }

    /// Whether the body is a JSON array, read from its first byte (the tree is not built).
    /// Shadows `Value::is_array` on purpose: same answer, no tree.
    pub fn is_array(&self) -> bool {
        match self.tree.get() {
            Some(tree) => tree.is_array(),
            None => self
                .bytes
                .iter()
                .find(|b| !b.is_ascii_whitespace())
                .is_some_and(|&b| b == b'['),
        }
    }

    /// The body's bytes.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// Whether the tree has been built.
    pub fn is_built(&self) -> bool {
        self.tree.get().is_some()
    }

    /// The tree, owned.
    pub fn into_value(self) -> Value {
        match self.tree.into_inner() {
            Some(tree) => tree,
            None => serde_json::from_slice(&self.bytes).unwrap_or(Value::Null),
        }
    }
}

impl From<Value> for LazyJson {
    fn from(value: Value) -> Self {
        LazyJson {
            bytes: Bytes::from(serde_json::to_vec(&value).unwrap_or_default()),
            tree: OnceLock::from(value),
        }
    }
}

impl Deref for LazyJson {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.value()
    }
}

impl fmt::Display for LazyJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.value(), f)
    }
}

impl fmt::Debug for LazyJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.tree.get() {
            Some(tree) => fmt::Debug::fmt(tree, f),
            None => write!(f, "LazyJson({} bytes, not parsed)", self.bytes.len()),
        }
    }
}

/// Any JSON value, parsed through `deserialize_any` (as a `Value` is) and dropped.
struct Discard;

impl<'de> Deserialize<'de> for Discard {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DiscardVisitor)
    }
}

struct DiscardVisitor;

impl<'de> Visitor<'de> for DiscardVisitor {
    type Value = Discard;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Discard, E> {
        Ok(Discard)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Discard, E> {
        Ok(Discard)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Discard, E> {
        Ok(Discard)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Discard, E> {
        Ok(Discard)
    }

    fn visit_str<E>(self, _: &str) -> Result<Discard, E> {
        Ok(Discard)
    }

    fn visit_unit<E>(self) -> Result<Discard, E> {
        Ok(Discard)
    }

    fn visit_none<E>(self) -> Result<Discard, E> {
        Ok(Discard)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Discard, A::Error> {
        while seq.next_element::<Discard>()?.is_some() {}
        Ok(Discard)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Discard, A::Error> {
        while map.next_key::<Discard>()?.is_some() {
            map.next_value::<Discard>()?;
        }
        Ok(Discard)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_errors_are_those_of_a_value_parse() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for body in [
            &b"{\"a\":[1,2,{\"b\":null}]}"[..],
            b"",
            b"<html>",
            b"{\"a\":1,}",
            b"[1, 2",
            b"\"\xff\xfe\"",
            b"1e999",
            b"{\"a\":1} x",
            b"{1:2}",
            deep.as_bytes(),
        ] {
            let want = serde_json::from_slice::<Value>(body)
                .map(|_| ())
                .map_err(|e| e.to_string());
            let got = well_formed(body).map_err(|e| e.to_string());
            assert_eq!(got, want, "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn the_tree_is_built_on_first_use_only() {
        let json = LazyJson::from_checked_bytes(Bytes::from_static(b"[{\"spuId\":\"1\"}]"));
        assert!(json.is_array() && !json.is_built());
        assert_eq!(json[0]["spuId"], "1");
        assert!(json.is_built());
        assert_eq!(json.to_string(), "[{\"spuId\":\"1\"}]");
        let value = serde_json::json!({"a": 1});
        assert_eq!(LazyJson::from(value.clone()).into_value(), value);
    }

    #[test]
    fn parse_builds_the_tree_of_a_small_body_only_and_fails_as_a_value_parse() {
        let small = LazyJson::parse(Bytes::from_static(b"{\"a\": [1, 2]}")).unwrap();
        assert_eq!(small.tree(), Some(&serde_json::json!({"a": [1, 2]})));
        let big = format!("[{}1]", "1, ".repeat(EAGER_TREE_BYTES / 3));
        let big = LazyJson::parse(Bytes::from(big)).unwrap();
        assert!(!big.is_built() && big.is_array());
        let broken = format!("[{}", "1, ".repeat(EAGER_TREE_BYTES / 3));
        for body in [b"{\"a\":1,}".to_vec(), broken.into_bytes()] {
            let want = serde_json::from_slice::<Value>(&body)
                .unwrap_err()
                .to_string();
            let got = LazyJson::parse(Bytes::from(body)).unwrap_err().to_string();
            assert_eq!(got, want);
        }
    }
}
