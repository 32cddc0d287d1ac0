//! Duplicate keys in a shrunk body. A raw body such as `{"appid":"x","appid":"…",…}` is one of
//! the generated oddities; when a failure shrinks to it but any body triggers the fault, the
//! duplicate points the reader at the wrong cause. The engine then tries the same body without
//! the duplicate and keeps it when it still fails.

use std::collections::HashSet;
use std::fmt;

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::fuzz::body::FuzzBody;

/// The body without its duplicate keys (the last value of a key kept, as most parsers do), or
/// `None` when it has none or is not JSON.
pub fn without_duplicates(body: &FuzzBody) -> Option<FuzzBody> {
    let FuzzBody::Raw { bytes, .. } = body else {
        return None;
    };
    if !has_duplicate_keys(bytes) {
        return None;
    }
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .map(FuzzBody::Json)
}

/// Whether any object of this JSON text names a key twice.
pub fn has_duplicate_keys(bytes: &[u8]) -> bool {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    Duplicates.deserialize(&mut de).unwrap_or(false)
}

/// Walks a document and answers whether an object repeats a key.
#[derive(Clone, Copy)]
struct Duplicates;

impl<'de> DeserializeSeed<'de> for Duplicates {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Duplicates {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut seen = HashSet::new();
        let mut found = false;
        while let Some(key) = map.next_key::<String>()? {
            found |= !seen.insert(key);
            found |= map.next_value_seed(self)?;
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        let mut found = false;
        while let Some(inner) = seq.next_element_seed(self)? {
            found |= inner;
        }
        Ok(found)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> FuzzBody {
        FuzzBody::Raw {
            label: "duplicate key".into(),
            bytes: text.as_bytes().to_vec(),
        }
    }

    #[test]
    fn duplicate_keys_are_found_at_any_depth() {
        assert!(has_duplicate_keys(br#"{"appid":"x","appid":"y"}"#));
        assert!(has_duplicate_keys(br#"{"a":[{"b":1,"b":2}]}"#));
        assert!(!has_duplicate_keys(br#"{"a":{"b":1},"c":{"b":2}}"#));
        assert!(!has_duplicate_keys(b"not json"));
    }

    #[test]
    fn the_body_without_duplicates_keeps_the_last_value() {
        let body = raw(r#"{"appid":"x","cursor":{"count":1},"appid":"app"}"#);
        let Some(FuzzBody::Json(v)) = without_duplicates(&body) else {
            panic!("expected a JSON body")
        };
        assert_eq!(
            v,
            serde_json::json!({"appid": "app", "cursor": {"count": 1}})
        );
        assert!(without_duplicates(&raw(r#"{"appid":"x"}"#)).is_none());
        assert!(without_duplicates(&FuzzBody::Json(v)).is_none());
    }
}
