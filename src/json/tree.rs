//! A `serde_json::Value` tree built within a budget of heap, as the [`cost`] model counts it:
//! what every tree of a response body is built with, so memory stays bounded for every body
//! shape.

use std::cell::Cell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::json::scan::cost;

/// A tree may take this many times the size of its body, plus [`TREE_ALLOWANCE`], as the
/// [`cost`] model counts it (an upper bound of the heap it takes): with the body itself, a
/// response then holds at most 4 times `--max-body` (16 MiB: 64 MiB). A page of ten malls
/// fits many times over; a page of hundreds of malls takes about 12 times its size, tiny
/// values (`[0,0,0,…]`) about 26 times, deep objects about 70 times. Past the bound the tree
/// holds the values read so far and the rest are skipped (reported by
/// `LazyJson::findings`), so memory stays bounded for every body shape. Checks that read
/// records one at a time (a mall-list page's, a products response's) never build the tree.
pub const TREE_FACTOR: usize = 2;
/// See [`TREE_FACTOR`].
pub const TREE_ALLOWANCE: usize = 16 * 1024 * 1024;

/// The most the tree of a response may take when the client accepts bodies of up to
/// `max_body` bytes: three times that plus [`TREE_ALLOWANCE`], so that a response in flight
/// holds at most about 4 × `--max-body` (its body and its tree) whatever its size, and an
/// ordinary large answer (5,000 products in 3 MB: 45 MiB as a tree) is read whole.
pub fn response_tree_budget(max_body: usize) -> usize {
    max_body.saturating_mul(3).saturating_add(TREE_ALLOWANCE)
}

/// The most a tree of a body of `len` bytes may take.
pub fn tree_budget(len: usize) -> usize {
    len.saturating_mul(TREE_FACTOR)
        .saturating_add(TREE_ALLOWANCE)
}

/// A tree built up to a budget (bytes a tree takes, as the scan counts them): once spent,
/// the rest of each array and object is read and dropped. The cell holds what is left of the
/// budget: 0 once it ran out (the tree is then partial). A seed: `Bounded(&left)
/// .deserialize(&mut de)`, or `next_element_seed(Bounded(&left))` for one value of a stream.
pub struct Bounded<'b>(pub &'b Cell<usize>);

impl Bounded<'_> {
    fn charge(&self, bytes: usize) {
        self.0.set(self.0.get().saturating_sub(bytes));
    }

    fn spent(&self) -> bool {
        self.0.get() == 0
    }
}

impl<'de> DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.charge(cost::SLOT);
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        self.charge(cost::text(v.len()));
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        self.charge(cost::text(v.len()));
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        loop {
            if self.spent() {
                if seq.next_element::<IgnoredAny>()?.is_none() {
                    break;
                }
                continue;
            }
            match seq.next_element_seed(Bounded(self.0))? {
                Some(v) => {
                    if out.is_empty() {
                        self.charge(cost::CONTAINER);
                    }
                    out.push(v);
                }
                None => break,
            }
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        loop {
            if self.spent() {
                if map.next_key::<IgnoredAny>()?.is_none() {
                    break;
                }
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let Some(key) = map.next_key::<String>()? else {
                break;
            };
            if out.is_empty() {
                self.charge(cost::CONTAINER);
            }
            self.charge(cost::MEMBER + cost::text(key.len()));
            let value = map.next_value_seed(Bounded(self.0))?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}
