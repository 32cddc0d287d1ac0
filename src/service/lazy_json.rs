//! A response body as JSON without holding its tree: the bytes are checked to be well-formed
//! JSON as they arrive (no tree built), and the tree is built only when a check asks for it.
//! A streamed check (the products sweep) reads the bytes record by record and never builds it.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use std::cell::Cell;
use std::collections::HashSet;

use bytes::Bytes;
use serde::de::{
    Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::{Map, Value};

use crate::json::reach::Reach;
use crate::json::scan::{self, Anomalies};
pub use crate::json::tree::{
    Bounded, TREE_ALLOWANCE, TREE_FACTOR, response_tree_budget, tree_budget,
};
use crate::spec::catalog::{RESPONSE_DUPLICATE_KEY, RESPONSE_NUMBER_RANGE, RESPONSE_TREE_SIZE};
use crate::spec::schemas::INTEGER_LITERAL_EXPECTED;
use crate::spec::wire::{self, Digest};
use crate::verdict::event::Finding;

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
/// It also holds what a tree hides (keys given twice, numbers beyond a double), found by one
/// scan of the bytes when it was parsed.
#[derive(Clone, Default)]
pub struct LazyJson {
    bytes: Bytes,
    tree: OnceLock<Value>,
    anomalies: Anomalies,
    /// The most its tree may take ([`tree_budget`]; `usize::MAX` for a whole tree).
    budget: usize,
    /// What the typed fast path read of a body that conforms beyond doubt ([`wire::read`]):
    /// no tree was built, no scan was needed, and checks that have nothing to say of such a
    /// body skip it. `None`: the body took the tree path.
    digest: Option<Arc<Digest>>,
    /// What its tree takes by the [`cost`] model: from the scan of the tree path, else
    /// counted when first asked.
    tree_bytes: OnceLock<usize>,
    /// The scalar members at its root and the length of its `data` array, read without the
    /// tree when first asked (and the tree is not built).
    head: Arc<OnceLock<Head>>,
}

/// What a check of the envelope reads of a body, without its tree: the members at the root
/// that are neither arrays nor objects (`success`, `code`, `msg`), and how many items its
/// `data` member holds when that is an array.
#[derive(Debug, Clone, Default)]
pub struct Head {
    scalars: Map<String, Value>,
    data_len: Option<usize>,
}

impl Head {
    fn of_tree(tree: &Value) -> Head {
        let Some(root) = tree.as_object() else {
            return Head::default();
        };
        Head {
            scalars: root
                .iter()
                .filter(|(_, v)| !v.is_array() && !v.is_object())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            data_len: root.get("data").and_then(Value::as_array).map(Vec::len),
        }
    }

    fn of_bytes(bytes: &[u8]) -> Head {
        if !root_is_object(bytes) {
            return Head::default();
        }
        let mut de = serde_json::Deserializer::from_slice(bytes);
        HeadSeed.deserialize(&mut de).unwrap_or_default()
    }
}

/// The root members a body's envelope is judged by, read without its tree.
pub trait TopMembers {
    /// The member `key` at the root when it is neither an array nor an object.
    fn top(&self, key: &str) -> Option<&Value>;
}

impl TopMembers for Value {
    fn top(&self, key: &str) -> Option<&Value> {
        self.get(key).filter(|v| !v.is_array() && !v.is_object())
    }
}

impl TopMembers for LazyJson {
    fn top(&self, key: &str) -> Option<&Value> {
        match self.tree.get() {
            Some(tree) => tree.top(key),
            None => self.head().scalars.get(key),
        }
    }
}

impl LazyJson {
    /// The body `bytes`, already known to be well-formed JSON ([`well_formed`]).
    pub fn from_checked_bytes(bytes: Bytes) -> Self {
        LazyJson {
            budget: tree_budget(bytes.len()),
            bytes,
            tree: OnceLock::new(),
            anomalies: Anomalies::default(),
            digest: None,
            tree_bytes: OnceLock::new(),
            head: Arc::default(),
        }
    }

    /// [`LazyJson::parse`] with no bound on the tree (for a file checked offline, one at a
    /// time, where every record should be checked).
    pub fn parse_whole(bytes: Bytes) -> Result<Self, serde_json::Error> {
        let mut json = Self::parse(bytes)?;
        json.budget = usize::MAX;
        Ok(json)
    }

    /// The body of a response of a client that accepts bodies of up to `max_body` bytes: its
    /// tree may take [`response_tree_budget`] (when that is more than its own budget).
    pub fn with_room(mut self, max_body: usize) -> Self {
        self.budget = self.budget.max(response_tree_budget(max_body));
        self
    }

    /// The most its tree may take (what a streamed check of its bytes allows each tree too).
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Whether the tree breaks its budget: values past it are not in the tree.
    pub fn is_partial(&self) -> bool {
        self.tree_bytes() > self.budget
    }

    /// What the tree takes by the [`cost`] model (an upper bound of its heap). A body read by
    /// the fast path is counted only when asked: by a few byte counts, and by a scan when
    /// those do not settle it.
    fn tree_bytes(&self) -> usize {
        *self.tree_bytes.get_or_init(|| {
            let bound = scan::tree_bytes_bound(&self.bytes);
            if bound <= self.budget {
                return bound;
            }
            scan::anomalies(&self.bytes).map_or(bound, |a| a.tree_bytes)
        })
    }

    /// The body `bytes` if they are one JSON value (the error is a `Value` parse's): a body of
    /// at most [`EAGER_TREE_BYTES`] is parsed to its tree at once, a larger one only checked.
    ///
    /// The bytes are scanned once more for what a tree hides: keys given twice in an object
    /// and numbers beyond a double (`1e999`, ten thousand digits). Such numbers make a `Value`
    /// parse fail, yet the body is JSON: they are read as 0 (the bytes kept are those with the
    /// zeros) and reported by [`LazyJson::findings`], and the rest of the body is checked.
    pub fn parse(bytes: Bytes) -> Result<Self, serde_json::Error> {
        if let Some(json) = Self::parse_fast(&bytes) {
            return Ok(json);
        }
        Self::parse_tree(bytes)
    }

    /// The fast path of [`LazyJson::parse`]: a body the typed reader finds conforming beyond
    /// doubt is kept as bytes and a digest. Such a body has no duplicate key, no number beyond
    /// a double and no odd integer literal (the reader refuses them), so the scan would find
    /// nothing; what its tree would take is counted only if a check asks for the tree.
    fn parse_fast(bytes: &Bytes) -> Option<Self> {
        let digest = wire::read(bytes)?;
        Some(Self::read_fast(bytes.clone(), Arc::new(digest)))
    }

    /// The body `bytes` that the fast path read as `digest` ([`wire::read`] of these very
    /// bytes: the client's [`crate::service::read_memo::ReadMemo`] keeps the digests of the
    /// answers it read).
    pub(crate) fn read_fast(bytes: Bytes, digest: Arc<Digest>) -> Self {
        LazyJson {
            budget: tree_budget(bytes.len()),
            bytes,
            tree: OnceLock::new(),
            anomalies: Anomalies::default(),
            digest: Some(digest),
            tree_bytes: OnceLock::new(),
            head: Arc::default(),
        }
    }

    /// [`LazyJson::parse`] without the fast path: the tree path every body took before it, and
    /// the one a body in doubt takes.
    pub fn parse_tree(bytes: Bytes) -> Result<Self, serde_json::Error> {
        match Self::parse_plain(bytes.clone()) {
            Ok(mut json) => {
                if let Ok(found) = scan::anomalies(&json.bytes) {
                    json.tree_bytes = OnceLock::from(found.tree_bytes);
                    json.anomalies = found;
                }
                Ok(json)
            }
            Err(e) if e.to_string().starts_with("number out of range") => {
                let found = match scan::anomalies(&bytes) {
                    Ok(found) if !found.out_of_range_spans.is_empty() => found,
                    _ => return Err(e),
                };
                let zeroed = Bytes::from(scan::zero_numbers(&bytes, &found.out_of_range_spans));
                let mut json = Self::parse_plain(zeroed)?;
                json.tree_bytes = OnceLock::from(found.tree_bytes);
                json.anomalies = found;
                Ok(json)
            }
            Err(e) => Err(e),
        }
    }

    fn parse_plain(bytes: Bytes) -> Result<Self, serde_json::Error> {
        if bytes.len() <= EAGER_TREE_BYTES {
            let tree: Value = serde_json::from_slice(&bytes)?;
            return Ok(LazyJson {
                budget: tree_budget(bytes.len()),
                bytes,
                tree: OnceLock::from(tree),
                anomalies: Anomalies::default(),
                digest: None,
                tree_bytes: OnceLock::new(),
                head: Arc::default(),
            });
        }
        well_formed(&bytes)?;
        Ok(LazyJson::from_checked_bytes(bytes))
    }

    /// The findings of what the scan found: each key given twice (`response.duplicate-key`)
    /// and each number beyond a double (`response.number-range`), the first
    /// [`Anomalies::KEPT`] of each with their pointer, the rest counted in the last one; and
    /// `response.tree-size` when the tree would break its budget.
    pub fn findings(&self) -> Vec<Finding> {
        self.findings_with(self.is_partial())
    }

    /// [`LazyJson::findings`] but `response.tree-size`, which [`LazyJson::tree_finding`] gives
    /// once it is known that a check read a partial tree.
    pub fn scan_findings(&self) -> Vec<Finding> {
        self.findings_with(false)
    }

    /// `response.tree-size` when a check read a tree that broke its budget (the tree is built
    /// and partial) or `streamed_partial` says a check that read the body a value at a time
    /// ran out of it.
    pub fn tree_finding(&self, streamed_partial: bool) -> Option<Finding> {
        let read_partial = self.tree.get().is_some() && self.is_partial();
        (read_partial || streamed_partial).then(|| self.tree_size_finding())
    }

    /// `response.tree-size` for checks that need the whole tree (a case's assertions) and were
    /// not run because it would break its budget: said, so that a case whose assertions were
    /// not evaluated does not pass.
    pub fn unchecked_finding(&self, what: &str) -> Finding {
        Finding::new(
            &crate::spec::catalog::HARNESS_UNCHECKED,
            "",
            format!(
                "{what} evaluated over the whole tree, within {} MiB (3 × --max-body + {} MiB)",
                self.budget >> 20,
                TREE_ALLOWANCE >> 20
            ),
            format!(
                "a body of {} bytes whose tree would take {} MiB: not evaluated",
                self.bytes.len(),
                self.tree_bytes() >> 20
            ),
        )
        .with_detail(
            "a tree cut at the bound would miss records and could end in one cut in its \
             middle, and an assertion over it would blame the service for what it sent (a \
             larger --max-body gives trees more room)",
        )
    }

    fn tree_size_finding(&self) -> Finding {
        Finding::new(
            &RESPONSE_TREE_SIZE,
            "",
            format!(
                "a body whose tree takes at most {} MiB (3 × --max-body + {} MiB, or {TREE_FACTOR} times its size plus that)",
                self.budget >> 20,
                TREE_ALLOWANCE >> 20
            ),
            format!(
                "a body of {} bytes whose tree would take {} MiB",
                self.bytes.len(),
                self.tree_bytes() >> 20
            ),
        )
        .with_detail(format!(
            "values past the first {} MiB of tree were skipped, not checked: a body of millions of tiny values, deep objects or keys (a larger --max-body gives trees more room)",
            self.budget >> 20
        ))
    }

    fn findings_with(&self, partial: bool) -> Vec<Finding> {
        let a = &self.anomalies;
        let mut out = Vec::new();
        for (pointer, key) in &a.duplicates {
            out.push(
                Finding::new(
                    &RESPONSE_DUPLICATE_KEY,
                    pointer,
                    "each member name once per object (RFC 8259 §4)",
                    format!("`{key}` given more than once in the same object"),
                )
                .with_detail(
                    "readers disagree on which value counts (serde_json, JavaScript and Python keep the last, others the first or refuse the body): checks here saw the last",
                ),
            );
        }
        if a.duplicate_count > a.duplicates.len()
            && let Some(last) = out.last_mut()
        {
            last.detail = format!(
                "{}; {} more duplicate keys in the body",
                last.detail,
                a.duplicate_count - a.duplicates.len()
            );
        }
        if partial {
            out.push(self.tree_size_finding());
        }
        let total = a.out_of_range_spans.len();
        for (i, (pointer, literal)) in a.out_of_range.iter().enumerate() {
            let mut f = Finding::new(
                &RESPONSE_NUMBER_RANGE,
                pointer,
                "a number the spec's types can carry (Byte, Integer, Long)",
                literal.clone(),
            )
            .with_detail(
                "the number is beyond a double's range: JSON in its grammar, but no parser of a Byte, Integer or Long reads it (it was read as 0 to check the rest)",
            );
            if i + 1 == a.out_of_range.len() && total > a.out_of_range.len() {
                f.detail = format!("{}; {} more such numbers", f.detail, total - i - 1);
            }
            out.push(f);
        }
        out
    }

    /// Gives each integer-literal finding (a whole number written `1e5` or `105112.0` where
    /// the spec types an integer) the literal as the body wrote it, in place of the value as
    /// the tree renders it (`100000.0`).
    pub fn spell(&self, findings: &mut [Finding]) {
        let pointers: HashSet<String> = findings
            .iter()
            .filter(|f| f.expected.starts_with(INTEGER_LITERAL_EXPECTED))
            .map(|f| f.pointer.clone())
            .collect();
        if pointers.is_empty() {
            return;
        }
        let written = scan::literals_at(&self.bytes, &pointers);
        for f in findings
            .iter_mut()
            .filter(|f| f.expected.starts_with(INTEGER_LITERAL_EXPECTED))
        {
            if let Some((_, literal)) = written.iter().find(|(p, _)| *p == f.pointer) {
                f.actual = literal.clone();
            }
        }
    }

    /// What the fast path read of a conforming body ([`wire::read`]), if it took that path.
    pub fn digest(&self) -> Option<&Digest> {
        self.digest.as_deref()
    }

    /// Whether `success` is `true` (`json.get("success") == Some(&true)`), from the digest
    /// when there is one.
    pub fn success_is_true(&self) -> bool {
        match self.digest() {
            Some(Digest::Envelope(e)) => e.success,
            Some(Digest::Products(_)) => false,
            None => self.top("success") == Some(&Value::Bool(true)),
        }
    }

    /// The root's scalar members and the `data` array's length, from the tree when it is
    /// built, else read from the bytes (once) without building it.
    fn head(&self) -> &Head {
        self.head.get_or_init(|| match self.tree.get() {
            Some(tree) => Head::of_tree(tree),
            None => Head::of_bytes(&self.bytes),
        })
    }

    /// The length of the `data` array (`json.get("data").and_then(Value::as_array)`), from
    /// the digest when there is one.
    pub fn data_len(&self) -> Option<usize> {
        match self.digest() {
            Some(Digest::Envelope(e)) => e.malls.as_ref().map(Vec::len),
            Some(Digest::Products(_)) => None,
            None => match self.tree.get() {
                Some(tree) => tree.get("data").and_then(Value::as_array).map(Vec::len),
                None => self.head().data_len,
            },
        }
    }

    /// The length of the body when it is an array (`json.as_array()`), from the digest when
    /// there is one.
    pub fn array_len(&self) -> Option<usize> {
        match self.digest() {
            Some(Digest::Envelope(_)) => None,
            Some(Digest::Products(p)) => Some(p.ids.len()),
            // Counted from the bytes when the tree is not built: building it for a count
            // would cut a large body's tree at its budget, for a check to read after.
            None => match self.tree.get() {
                Some(tree) => tree.as_array().map(Vec::len),
                None if self.is_array() => array_items(&self.bytes),
                None => None,
            },
        }
    }

    /// The tree, if it has been built.
    pub fn tree(&self) -> Option<&Value> {
        self.tree.get()
    }

    /// The tree (built now if it was not yet).
    pub fn value(&self) -> &Value {
        self.tree.get_or_init(|| self.build())
    }

    /// A tree of the parts of a body that conforms (the typed fast path read it) which `reach`
    /// reaches, built from the bytes; `None` when the whole tree is built already, or the body
    /// took the tree path (its tree may be partial or its bytes hold what a tree hides), or
    /// `reach` is the whole body: then the whole tree is the one to use. It needs no budget of
    /// its own: it is built only when the whole tree is within the budget, and it holds part
    /// of what the whole tree would.
    pub fn reached(&self, reach: &Reach) -> Option<Value> {
        if reach.is_whole() || self.is_built() || self.digest.is_none() || self.is_partial() {
            return None;
        }
        crate::json::reach::pruned_tree(&self.bytes, reach).ok()
    }

    /// The tree of the bytes: whole, or up to the budget when the whole would break it.
    fn build(&self) -> Value {
        if !self.is_partial() {
            return serde_json::from_slice(&self.bytes).unwrap_or(Value::Null);
        }
        let left = Cell::new(self.budget);
        let mut de = serde_json::Deserializer::from_slice(&self.bytes);
        Bounded(&left).deserialize(&mut de).unwrap_or(Value::Null)
    }

    /// Hands each item of the root's `data` array to `each`, one at a time: from the tree when
    /// it is built, else each read from the bytes as its own tree (within the body's budget)
    /// and dropped. Returns whether some item broke its budget (values past it skipped).
    pub fn for_each_record(&self, each: &mut dyn FnMut(usize, &Value)) -> bool {
        if let Some(tree) = self.tree.get() {
            let records = tree.get("data").and_then(Value::as_array);
            records
                .into_iter()
                .flatten()
                .enumerate()
                .for_each(|(i, r)| each(i, r));
            return false;
        }
        if !root_is_object(&self.bytes) {
            return false;
        }
        let mut de = serde_json::Deserializer::from_slice(&self.bytes);
        let mut partial = false;
        let _ = RecordsOf {
            key: "data",
            budget: self.budget,
            each,
            partial: &mut partial,
        }
        .deserialize(&mut de);
        partial
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
        match self.tree.get() {
            Some(_) => self.tree.into_inner().unwrap_or(Value::Null),
            None => self.build(),
        }
    }
}

impl From<Value> for LazyJson {
    fn from(value: Value) -> Self {
        LazyJson {
            bytes: Bytes::from(serde_json::to_vec(&value).unwrap_or_default()),
            tree: OnceLock::from(value),
            anomalies: Anomalies::default(),
            budget: usize::MAX,
            digest: None,
            tree_bytes: OnceLock::new(),
            head: Arc::default(),
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

/// Whether the body's root is an object, from its first byte. Checked before a root is read
/// as a map: the error serde_json gives for another root would quote all of it (a 16 MiB
/// string).
fn root_is_object(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

/// Reads the items of the array at member `key` of a root object one at a time, each as its
/// own bounded tree handed to `each` and dropped; everything else is skipped.
struct RecordsOf<'e> {
    key: &'static str,
    budget: usize,
    each: &'e mut dyn FnMut(usize, &Value),
    partial: &'e mut bool,
}

impl<'de> DeserializeSeed<'de> for RecordsOf<'_> {
    type Value = ();

    /// Called on an object root only ([`root_is_object`]).
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RecordsOf<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let RecordsOf {
            key,
            budget,
            each,
            partial,
        } = self;
        // A `data` given twice (reported on its own, `response.duplicate-key`): the tree
        // keeps the last, but the records of each are handed on here.
        while let Some(k) = map.next_key::<String>()? {
            if k != key {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            map.next_value_seed(Items {
                budget,
                each: &mut *each,
                partial: &mut *partial,
            })?;
        }
        Ok(())
    }
}

/// The items of one array, each as a bounded tree handed on and dropped.
struct Items<'e> {
    budget: usize,
    each: &'e mut dyn FnMut(usize, &Value),
    partial: &'e mut bool,
}

impl<'de> DeserializeSeed<'de> for Items<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Items<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            let left = Cell::new(self.budget);
            let Some(record) = seq.next_element_seed(Bounded(&left))? else {
                break;
            };
            if left.get() == 0 {
                *self.partial = true;
            }
            (self.each)(i, &record);
            i += 1;
        }
        Ok(())
    }
}

/// Reads a [`Head`]: the root object's scalar members and its `data` array's length, every
/// array and object skipped without a tree.
struct HeadSeed;

impl<'de> DeserializeSeed<'de> for HeadSeed {
    type Value = Head;

    /// Called on an object root only ([`root_is_object`]).
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Head, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for HeadSeed {
    type Value = Head;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let mut head = Head::default();
        while let Some(key) = map.next_key::<String>()? {
            // A key given twice counts as the tree's does: the last one.
            let member = map.next_value_seed(ScalarOrLength)?;
            if key == "data" {
                head.data_len = match member {
                    Member::Container(len) => len,
                    Member::Scalar(_) => None,
                };
            }
            match member {
                Member::Scalar(v) => {
                    head.scalars.insert(key, v);
                }
                Member::Container(_) => {
                    head.scalars.shift_remove(&key);
                }
            }
        }
        Ok(head)
    }
}

/// A root member as [`HeadSeed`] keeps it.
enum Member {
    Scalar(Value),
    /// An array (with its length) or an object (`None`), skipped.
    Container(Option<usize>),
}

/// Reads one member: a scalar as a value, an array or object skipped (an array counted).
struct ScalarOrLength;

impl<'de> DeserializeSeed<'de> for ScalarOrLength {
    type Value = Member;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Member, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScalarOrLength {
    type Value = Member;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Member, E> {
        Ok(Member::Scalar(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Member, E> {
        Ok(Member::Scalar(Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Member, E> {
        Ok(Member::Scalar(Value::from(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Member, E> {
        Ok(Member::Scalar(
            serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number),
        ))
    }

    fn visit_str<E>(self, v: &str) -> Result<Member, E> {
        Ok(Member::Scalar(Value::String(v.to_owned())))
    }

    fn visit_unit<E>(self) -> Result<Member, E> {
        Ok(Member::Scalar(Value::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Member, A::Error> {
        let mut n = 0;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            n += 1;
        }
        Ok(Member::Container(Some(n)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Member, A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value::<IgnoredAny>()?;
        }
        Ok(Member::Container(None))
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

/// How many items the JSON array `bytes` holds, read without a tree (`None` when they are no
/// array).
fn array_items(bytes: &[u8]) -> Option<usize> {
    struct Count;
    impl<'de> serde::de::Visitor<'de> for Count {
        type Value = usize;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an array")
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
            let mut n = 0;
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                n += 1;
            }
            Ok(n)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    serde::Deserializer::deserialize_seq(&mut de, Count).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_tree_stays_within_its_budget_for_every_body_shape() {
        let budget = 300 * 1024;
        for (shape, body) in crate::json::heap_probe::shapes(1024 * 1024) {
            let left = Cell::new(budget);
            let (tree, peak) = crate::json::heap_probe::peak_during(|| {
                let mut de = serde_json::Deserializer::from_slice(&body);
                Bounded(&left).deserialize(&mut de).unwrap()
            });
            let whole: Value = serde_json::from_slice(&body).unwrap();
            // The budget may be overrun by the last string or key read before it ran out.
            let longest = if shape == "one long string" {
                body.len()
            } else {
                64 * 1024
            };
            assert!(
                peak <= budget + longest,
                "{shape}: a tree of budget {budget} took {peak} bytes"
            );
            let counted = scan::anomalies(&body).unwrap().tree_bytes;
            assert_eq!(left.get() == 0, counted > budget, "{shape}");
            // Within the budget by the count, the tree is whole (past it, one value that
            // was already being read, such as one long string, may still be whole).
            assert!(counted > budget || tree == whole, "{shape}");
        }
    }

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
