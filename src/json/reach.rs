//! What part of a JSON document a JSONPath query (RFC 9535) can look at, read from the
//! query's text, and a tree of a body holding only that part.
//!
//! A case's `assert:` paths read a few members of each record (`$.data[*].mallSn`,
//! `$.data[?!@.tags]`); a tree of only those members is built from the bytes at a fraction of
//! the cost of the whole tree, and every query of the case selects the same nodes in it, at
//! the same places. The reading is conservative: a part of a query it does not model
//! (a descendant segment, a quoted name with an escape, an absolute query inside a filter,
//! anything it does not recognise) reaches the whole node it applies to.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What of a node a query can look at: the whole node, or some of its members and elements
/// (nothing of them: the node itself is kept, empty if it is an array or an object).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reach {
    whole: bool,
    /// Members by name, each with what is reached in it.
    members: BTreeMap<String, Reach>,
    /// What is reached in every member (a wildcard or a filter).
    every_member: Option<Box<Reach>>,
    /// What is reached in every element of an array (an index, a slice, a wildcard, a
    /// filter: every element is kept so that positions stay what they are).
    every_element: Option<Box<Reach>>,
}

impl Reach {
    /// The whole node.
    pub fn whole() -> Reach {
        Reach {
            whole: true,
            ..Reach::default()
        }
    }

    /// The node itself, nothing in it: what a query whose nodes are only counted needs at
    /// its end.
    pub fn node() -> Reach {
        Reach::default()
    }

    /// Whether it reaches the whole node.
    pub fn is_whole(&self) -> bool {
        self.whole
    }

    /// What `query` reaches from the root of a document when `end` is what is needed of each
    /// node it selects. A query it cannot read (or not well-formed) reaches the whole root.
    pub fn of_query(query: &str, end: &Reach) -> Reach {
        let mut p = Reader {
            text: query.as_bytes(),
            at: 0,
        };
        if p.peek() != Some(b'$') {
            return Reach::whole();
        }
        p.at += 1;
        match p.segments() {
            Some(steps) if p.at == p.text.len() => reach_of(&steps, end),
            _ => Reach::whole(),
        }
    }

    /// Adds what `other` reaches.
    pub fn merge(&mut self, other: &Reach) {
        if self.whole {
            return;
        }
        if other.whole {
            *self = Reach::whole();
            return;
        }
        for (name, reach) in &other.members {
            match self.members.get_mut(name) {
                Some(mine) => mine.merge(reach),
                None => {
                    self.members.insert(name.clone(), reach.clone());
                }
            }
        }
        merge_every(&mut self.every_member, &other.every_member);
        merge_every(&mut self.every_element, &other.every_element);
    }

    /// What is reached in the member `name`; `None` when it is not reached at all.
    fn member(&self, name: &str) -> Option<MemberReach<'_>> {
        match (self.members.get(name), self.every_member.as_deref()) {
            (None, None) => None,
            (Some(one), None) | (None, Some(one)) => Some(MemberReach::One(one)),
            (Some(named), Some(every)) => {
                let mut both = named.clone();
                both.merge(every);
                Some(MemberReach::Merged(both))
            }
        }
    }
}

fn merge_every(mine: &mut Option<Box<Reach>>, other: &Option<Box<Reach>>) {
    if let Some(other) = other {
        match mine {
            Some(mine) => mine.merge(other),
            None => *mine = Some(other.clone()),
        }
    }
}

enum MemberReach<'r> {
    One(&'r Reach),
    Merged(Reach),
}

impl MemberReach<'_> {
    fn get(&self) -> &Reach {
        match self {
            MemberReach::One(r) => r,
            MemberReach::Merged(r) => r,
        }
    }
}

/// One selector of a segment, as far as what it reaches goes.
#[derive(Debug)]
enum Step {
    /// A member by name.
    Name(String),
    /// Every member and every element.
    Wildcard,
    /// Some elements of an array (an index or a slice).
    Elements,
    /// The members and elements for which a filter holds; the filter looks at this much of
    /// each of them.
    Filter(Reach),
    /// Several selectors of one bracketed segment.
    Union(Vec<Step>),
    /// Something not modelled: the whole node.
    Whole,
}

/// What `steps` reach from the node they start at, when `end` is needed of each node the
/// last one selects.
fn reach_of(steps: &[Step], end: &Reach) -> Reach {
    let mut reach = end.clone();
    for step in steps.iter().rev() {
        reach = step.reach(&reach);
    }
    reach
}

impl Step {
    /// What this step reaches in the node it applies to, when `next` is reached in each node
    /// it selects.
    fn reach(&self, next: &Reach) -> Reach {
        match self {
            Step::Name(name) => Reach {
                members: BTreeMap::from([(name.clone(), next.clone())]),
                ..Reach::default()
            },
            Step::Wildcard => Reach {
                every_member: Some(Box::new(next.clone())),
                every_element: Some(Box::new(next.clone())),
                ..Reach::default()
            },
            Step::Elements => Reach {
                every_element: Some(Box::new(next.clone())),
                ..Reach::default()
            },
            Step::Filter(looked_at) => {
                let mut each = looked_at.clone();
                each.merge(next);
                Reach {
                    every_member: Some(Box::new(each.clone())),
                    every_element: Some(Box::new(each)),
                    ..Reach::default()
                }
            }
            Step::Union(steps) => {
                let mut all = Reach::default();
                for s in steps {
                    all.merge(&s.reach(next));
                }
                all
            }
            Step::Whole => Reach::whole(),
        }
    }
}

/// A reader of a query's text. Its methods return `None` for what they do not model.
struct Reader<'t> {
    text: &'t [u8],
    at: usize,
}

/// Blank space as RFC 9535 allows it between segments and inside brackets.
fn blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// A character that may continue a member-name shorthand (`.name`).
fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn skip_blank(&mut self) {
        while self.peek().is_some_and(blank) {
            self.at += 1;
        }
    }

    /// The segments after a `$` or an `@`, up to the first byte that begins none.
    fn segments(&mut self) -> Option<Vec<Step>> {
        let mut steps = Vec::new();
        loop {
            let before = self.at;
            self.skip_blank();
            match (self.peek(), self.text.get(self.at + 1).copied()) {
                (Some(b'.'), Some(b'.')) => {
                    // A descendant segment reaches everything below.
                    return Some(vec![Step::Whole]);
                }
                (Some(b'.'), Some(b'*')) => {
                    self.at += 2;
                    steps.push(Step::Wildcard);
                }
                (Some(b'.'), Some(b)) if name_byte(b) && !b.is_ascii_digit() => {
                    self.at += 1;
                    let start = self.at;
                    while self.peek().is_some_and(name_byte) {
                        self.at += 1;
                    }
                    let name = std::str::from_utf8(&self.text[start..self.at]).ok()?;
                    steps.push(Step::Name(name.to_string()));
                }
                (Some(b'['), _) => {
                    self.at += 1;
                    steps.push(self.bracket()?);
                }
                _ => {
                    self.at = before;
                    return Some(steps);
                }
            }
        }
    }

    /// The selectors of a bracketed segment, after its `[`, up to and past its `]`.
    fn bracket(&mut self) -> Option<Step> {
        let mut selectors = Vec::new();
        loop {
            self.skip_blank();
            selectors.push(self.selector()?);
            self.skip_blank();
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    break;
                }
                _ => return None,
            }
        }
        Some(match selectors.len() {
            1 => selectors.pop()?,
            _ => Step::Union(selectors),
        })
    }

    fn selector(&mut self) -> Option<Step> {
        match self.peek()? {
            b'*' => {
                self.at += 1;
                Some(Step::Wildcard)
            }
            quote @ (b'\'' | b'"') => {
                let start = self.at + 1;
                let end = start + self.text[start..].iter().position(|&b| b == quote)?;
                let name = &self.text[start..end];
                self.at = end + 1;
                if name.contains(&b'\\') {
                    // An escape: what it spells is not read here.
                    return Some(Step::Whole);
                }
                Some(Step::Name(std::str::from_utf8(name).ok()?.to_string()))
            }
            b'-' | b'0'..=b'9' | b':' => {
                while self
                    .peek()
                    .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'-' | b':') || blank(b))
                {
                    self.at += 1;
                }
                Some(Step::Elements)
            }
            b'?' => {
                self.at += 1;
                self.filter()
            }
            _ => None,
        }
    }

    /// A filter expression, after its `?`, up to (not past) the `,` or `]` that ends it: what
    /// its relative queries (`@…`) look at in each candidate.
    fn filter(&mut self) -> Option<Step> {
        let mut looked_at = Reach::default();
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'\'' | b'"' => self.skip_string()?,
                b'(' | b'[' => {
                    depth += 1;
                    self.at += 1;
                }
                b')' => {
                    depth = depth.checked_sub(1)?;
                    self.at += 1;
                }
                b']' | b',' if depth == 0 => return Some(Step::Filter(looked_at)),
                b']' => {
                    depth = depth.checked_sub(1)?;
                    self.at += 1;
                }
                // An absolute query inside a filter reaches from the root: not modelled.
                b'$' => return Some(Step::Whole),
                b'@' => {
                    self.at += 1;
                    let steps = self.segments()?;
                    // The value a relative query selects is compared, tested or measured:
                    // all of it.
                    looked_at.merge(&reach_of(&steps, &Reach::whole()));
                }
                _ => self.at += 1,
            }
        }
    }

    /// Past a string literal (escapes included) that begins at the current byte.
    fn skip_string(&mut self) -> Option<()> {
        let quote = self.peek()?;
        self.at += 1;
        loop {
            match self.peek()? {
                b'\\' => self.at += 2,
                b if b == quote => {
                    self.at += 1;
                    return Some(());
                }
                _ => self.at += 1,
            }
        }
    }
}

/// Builds the tree of a JSON document holding what `reach` reaches: a seed,
/// `Pruned(&reach).deserialize(&mut de)`. The values it keeps are what a
/// `serde_json::Value` parse gives; the rest is read and dropped.
pub struct Pruned<'r>(pub &'r Reach);

impl<'de> DeserializeSeed<'de> for Pruned<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        if self.0.whole {
            return serde::Deserialize::deserialize(deserializer);
        }
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Pruned<'_> {
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
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
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
        match self.0.every_element.as_deref() {
            Some(each) => {
                while let Some(v) = seq.next_element_seed(Pruned(each))? {
                    out.push(v);
                }
            }
            None => while seq.next_element::<IgnoredAny>()?.is_some() {},
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match self.0.member(key.as_str()) {
                Some(reach) => {
                    let value = map.next_value_seed(Pruned(reach.get()))?;
                    out.insert(key.into_owned(), value);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }
}

/// A member's name, borrowed from the bytes unless it has escapes: most names are not
/// kept, and are not copied.
enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }

    fn into_owned(self) -> String {
        match self {
            Key::Borrowed(s) => s.to_string(),
            Key::Owned(s) => s,
        }
    }
}

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }

            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(v))
            }

            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v.to_string()))
            }

            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The tree of `bytes` holding what `reach` reaches.
pub fn pruned_tree(bytes: &[u8], reach: &Reach) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Pruned(reach).deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

#[cfg(test)]
mod tests;
