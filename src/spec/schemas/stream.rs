//! Streamed checking: a body whose record array is the root (the products response) or one
//! member of a root object (a mall-list page, `{"success",…,"data":[…]}`) is checked record by
//! record as it is parsed — schema, extra fields, the JSON inside each `productIntroduction` —
//! each record parsed to a small tree, checked, handed to the caller (which keeps what later
//! checks need, such as spuIds) and dropped. No tree of the whole body is ever built; the
//! findings are those of [`SchemaSet::check_into`] on the tree (see [`SchemaSet::
//! check_bytes_into`] for the one corner where they may not be). Every tree built from the
//! bytes — a record, the envelope around the records, the whole body when it cannot be
//! streamed — is built within [`tree_budget`] of the body's size ([`Bounded`]).

use std::cell::Cell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::attribute::{Attributions, Start};
use super::extra::{Layouts, Step};
use super::validate::{Introduction, Place, Repeats, Violations};
use super::{RecordArray, Schema, SchemaSet, Split, check_of};
use crate::json::escape_pointer;
use crate::json::scan::cost;
use crate::json::tree::{Bounded, tree_budget};
use crate::spec::catalog::EXTRA_FIELDS;
use crate::verdict::findings::Findings;

/// Keywords a streamed root array may carry: anything else (`minItems`, `uniqueItems`,
/// `contains`, …) needs the whole array, and the body is then checked as one tree.
const STREAMABLE_ROOT_KEYWORDS: [&str; 8] = [
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "x-check",
    "type",
    "items",
];

/// Keywords that say nothing of an instance.
const ANNOTATIONS: [&str; 13] = [
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "definitions",
    "title",
    "description",
    "x-check",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// A record repeated later is replayed from memory ([`Repeats`]) only when its tree took at
/// most this much: a few large broken records must not be held all at once.
const REMEMBERED_RECORD_BYTES: usize = 64 * 1024;

/// The longest stand-in array an envelope is validated with to learn whether its counting
/// keywords (`minItems`, `maxItems`) decide anything (see [`SchemaSet::shallow_holds`]).
const STAND_IN_ITEMS: usize = 4096;

/// What a streamed check saw of the body besides its findings.
#[derive(Debug, Clone, PartialEq)]
pub enum Streamed {
    /// The root is an array of this many records, each handed to the caller.
    Records(usize),
    /// The root is an object around the schema's record array (a mall-list page).
    Envelope {
        /// How many records the record array held (each handed to the caller); `None` when
        /// the member is missing or not an array.
        records: Option<usize>,
        /// The root object with the record array replaced by an empty array; with its
        /// member as read when that is not an array.
        envelope: Value,
    },
    /// The body was checked as one tree (its root is not the shape the schema streams, or
    /// the schema cannot be streamed): the tree, within its budget. The records of the
    /// schema's record array (or the items of a root array) were handed to the caller.
    Tree(Value),
}

/// What [`SchemaSet::check_bytes_into`] returns besides its findings.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamOutcome {
    /// How the body was read.
    pub shape: Streamed,
    /// Some tree (the body, the envelope or a record) ran out of its [`tree_budget`]: values
    /// past it were skipped, not checked.
    pub partial: bool,
}

/// How a schema's body can be streamed.
enum Plan<'s> {
    /// The schema's root is its record array.
    Root(&'s Schema, &'s RecordArray),
    /// The record array is one member of a root object.
    Envelope(EnvelopePlan<'s>),
}

/// A record array that is one member of a root object, whose other rules are checked on the
/// object with that member emptied.
struct EnvelopePlan<'s> {
    schema: &'s Schema,
    split: &'s Split,
    array: &'s RecordArray,
    /// The member's name.
    key: &'s str,
    /// The largest `minItems` / `maxItems` bound on the member, if any (those rules count the
    /// records).
    limit: Option<u64>,
}

impl SchemaSet {
    /// [`SchemaSet::check_into`] of schema `name` on a JSON body given as bytes.
    ///
    /// When the schema's root is a record array and the body's root is an array, or the
    /// schema's one record array is a member of a root object (a mall-list page) and the
    /// body's root is an object, the records are parsed and checked one at a time and each is
    /// passed to `each(index, record)` before it is dropped; the rest of an envelope is read
    /// as a small tree. Otherwise the body is parsed whole (within its budget) and checked as
    /// a tree, and the records of its record array are passed to `each` all the same.
    ///
    /// The findings, their order and the per-check caps and counts are those of
    /// [`SchemaSet::check_into`] on the tree, with one corner: when the record member of an
    /// envelope is given twice, the tree keeps the last one (at the first one's place) and so
    /// do the findings, but `each` has seen the records of every occurrence, its index
    /// starting over at 0 for each. A tree that ran out of its budget (`partial`) is checked
    /// as far as it was read.
    pub fn check_bytes_into(
        &self,
        name: &str,
        bytes: &[u8],
        out: &mut Findings,
        each: &mut dyn FnMut(usize, &Value),
    ) -> Result<StreamOutcome, serde_json::Error> {
        let budget = tree_budget(bytes.len());
        self.read_bytes_into(name, bytes, out, each, true, budget)
    }

    /// [`SchemaSet::check_bytes_into`] with each tree allowed `budget` (a response's: the
    /// room its `LazyJson` has, so that the two agree on what a whole tree is).
    pub fn check_bytes_within(
        &self,
        name: &str,
        bytes: &[u8],
        budget: usize,
        out: &mut Findings,
        each: &mut dyn FnMut(usize, &Value),
    ) -> Result<StreamOutcome, serde_json::Error> {
        self.read_bytes_into(name, bytes, out, each, true, budget)
    }

    /// [`SchemaSet::validate_bytes_into`] with each tree allowed `budget` (see
    /// [`SchemaSet::check_bytes_within`]).
    pub fn validate_bytes_within(
        &self,
        name: &str,
        bytes: &[u8],
        budget: usize,
        out: &mut Findings,
        each: &mut dyn FnMut(usize, &Value),
    ) -> Result<StreamOutcome, serde_json::Error> {
        self.read_bytes_into(name, bytes, out, each, false, budget)
    }

    /// [`SchemaSet::validate_into`] of schema `name` on a JSON body given as bytes: as
    /// [`SchemaSet::check_bytes_into`], without the extra fields.
    pub fn validate_bytes_into(
        &self,
        name: &str,
        bytes: &[u8],
        out: &mut Findings,
        each: &mut dyn FnMut(usize, &Value),
    ) -> Result<StreamOutcome, serde_json::Error> {
        let budget = tree_budget(bytes.len());
        self.read_bytes_into(name, bytes, out, each, false, budget)
    }

    /// Both of the above: `extra` says whether extra fields are looked for; `budget` is what
    /// each tree may take.
    fn read_bytes_into(
        &self,
        name: &str,
        bytes: &[u8],
        out: &mut Findings,
        each: &mut dyn FnMut(usize, &Value),
        extra: bool,
        budget: usize,
    ) -> Result<StreamOutcome, serde_json::Error> {
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace()).copied();
        match (self.plan(name), first) {
            (Some(Plan::Root(schema, array)), Some(b'[')) => {
                let mut state = Stream::new(self, name, schema, array, out.cap(), each, extra);
                state.budget = budget;
                let mut de = serde_json::Deserializer::from_slice(bytes);
                let records = (&mut de).deserialize_seq(RecordsVisitor(&mut state))?;
                de.end()?;
                let partial = state.partial;
                state.finish_records(out);
                Ok(StreamOutcome {
                    shape: Streamed::Records(records),
                    partial,
                })
            }
            (Some(Plan::Envelope(plan)), Some(b'{')) => {
                self.envelope_into(name, &plan, bytes, out, each, extra, budget)
            }
            _ => {
                let (tree, partial) = bounded_tree(bytes, budget)?;
                without_absences_if(partial, out, |out| {
                    self.tree_into(name, &tree, out, extra);
                });
                if let Some(records) = self.records_of(name, &tree) {
                    records.iter().enumerate().for_each(|(i, r)| each(i, r));
                }
                Ok(StreamOutcome {
                    shape: Streamed::Tree(tree),
                    partial,
                })
            }
        }
    }

    /// A root object around the record array of `plan` (see [`SchemaSet::check_bytes_into`]).
    #[allow(clippy::too_many_arguments)]
    fn envelope_into(
        &self,
        name: &str,
        plan: &EnvelopePlan<'_>,
        bytes: &[u8],
        out: &mut Findings,
        each: &mut dyn FnMut(usize, &Value),
        extra: bool,
        budget: usize,
    ) -> Result<StreamOutcome, serde_json::Error> {
        let &EnvelopePlan {
            schema,
            split,
            array,
            key,
            limit,
        } = plan;
        let mut state = Stream::new(self, name, schema, array, out.cap(), each, extra);
        state.budget = budget;
        state.key = Some(key);
        state.prefix = format!("/{}", escape_pointer(key));
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let read = (&mut de).deserialize_map(EnvelopeVisitor {
            stream: &mut state,
            key,
        })?;
        de.end()?;
        let partial = read.partial || state.partial;
        let mut envelope = Value::Object(read.members);
        let Some(n) = read.records else {
            // No record array: the envelope as read is the whole tree.
            without_absences_if(read.partial, out, |out| {
                self.tree_into(name, &envelope, out, extra);
            });
            return Ok(StreamOutcome {
                shape: Streamed::Envelope {
                    records: None,
                    envelope,
                },
                partial,
            });
        };
        if !shallow_holds(split, &mut envelope, key, n, limit) {
            // The envelope's rules count the records here: checked on the whole
            // tree (the records were handed to `each` already).
            let (tree, cut) = bounded_tree(bytes, budget)?;
            without_absences_if(cut, out, |out| {
                self.tree_into(name, &tree, out, extra);
            });
            return Ok(StreamOutcome {
                shape: Streamed::Envelope {
                    records: Some(n),
                    envelope,
                },
                partial: partial || cut,
            });
        }
        without_absences_if(read.partial, out, |out| {
            state.finish_envelope(split, &envelope, out);
        });
        Ok(StreamOutcome {
            shape: Streamed::Envelope {
                records: Some(n),
                envelope,
            },
            partial,
        })
    }

    /// The check (or validation) of a whole tree.
    fn tree_into(&self, name: &str, tree: &Value, out: &mut Findings, extra: bool) {
        if extra {
            self.check_into(name, tree, out);
        } else {
            self.validate_into(name, tree, out);
        }
    }

    /// The records of a tree: those of the schema's one record array, or the items of a root
    /// array.
    fn records_of<'v>(&self, name: &str, tree: &'v Value) -> Option<&'v Vec<Value>> {
        let split = self
            .schemas
            .get(name)
            .and_then(|s| self.compiled(s).split.as_ref());
        match split.map(|s| s.arrays.as_slice()) {
            Some([array]) => array.locate(tree),
            _ => tree.as_array(),
        }
    }

    /// How schema `name` can be streamed, if it can.
    fn plan(&self, name: &str) -> Option<Plan<'_>> {
        let schema = self.schemas.get(name)?;
        let split = self.compiled(schema).split.as_ref()?;
        let [array] = split.arrays.as_slice() else {
            return None;
        };
        match array.path.as_slice() {
            [] => {
                let keys = schema.document.as_object()?;
                let plain = keys
                    .keys()
                    .all(|k| STREAMABLE_ROOT_KEYWORDS.contains(&k.as_str()))
                    && schema.document.get("type") == Some(&Value::String("array".to_string()));
                plain.then_some(Plan::Root(schema, array))
            }
            [key] => {
                let limit = envelope_limit(&schema.document, key)?;
                Some(Plan::Envelope(EnvelopePlan {
                    schema,
                    split,
                    array,
                    key,
                    limit,
                }))
            }
            _ => None,
        }
    }
}

/// Whether the rules of a document on a root object hold alike whatever the items of its
/// member `key` (with that member's `items` out of the way, as in the split's shallow
/// validator): `Some(limit)` then, `limit` being the largest `minItems` / `maxItems` bound on
/// the member (those count the items), `None` when some rule might look at the items, at the
/// whole object (`enum`, `anyOf`, … whose findings would show it) or take a path this does
/// not follow (`$ref`).
///
/// The rules on the root are followed through `allOf`, `if`, `then` and `else`; those on the
/// member likewise, from every `properties` of the root's rules.
fn envelope_limit(document: &Value, key: &str) -> Option<Option<u64>> {
    let primary = document.get("properties")?.get(key)?;
    let mut roots = vec![document];
    let mut members = Vec::new();
    while let Some(node) = roots.pop() {
        let Some(map) = node.as_object() else {
            (node == &Value::Bool(true)).then_some(())?;
            continue;
        };
        for (k, v) in map {
            match k.as_str() {
                k if ANNOTATIONS.contains(&k) => {}
                "required" => {}
                "type" => type_allows(v, "object").then_some(())?,
                "properties" => members.extend(v.as_object()?.get(key)),
                "allOf" => roots.extend(v.as_array()?),
                "if" | "then" | "else" => roots.push(v),
                _ => return None,
            }
        }
    }
    let mut limit: Option<u64> = None;
    while let Some(node) = members.pop() {
        let Some(map) = node.as_object() else {
            (node == &Value::Bool(true)).then_some(())?;
            continue;
        };
        for (k, v) in map {
            match k.as_str() {
                k if ANNOTATIONS.contains(&k) => {}
                "type" => type_allows(v, "array").then_some(())?,
                "items" if std::ptr::eq(node, primary) => {}
                "minItems" | "maxItems" => limit = Some(limit.unwrap_or(0).max(v.as_u64()?)),
                "allOf" => members.extend(v.as_array()?),
                "if" | "then" | "else" => members.push(v),
                _ => return None,
            }
        }
    }
    Some(limit)
}

/// Whether a `type` keyword admits JSON values of type `wanted`.
fn type_allows(kind: &Value, wanted: &str) -> bool {
    match kind {
        Value::String(t) => t == wanted,
        Value::Array(types) => types.iter().any(|t| t == wanted),
        _ => false,
    }
}

/// Whether the split's shallow validator finds the same in `envelope` (whose member `key`
/// is an empty array standing for `n` records) as in the body: always, unless counting rules
/// (`limit`, see [`envelope_limit`]) are met by some records. Then the envelope is also
/// validated with `min(n, limit + 1)` nulls in the member (every counting rule up to `limit`
/// decides alike for them and for the `n` records): the same errors, none of them on the
/// member itself (a finding on the member shows its items), mean the empty member holds.
fn shallow_holds(
    split: &Split,
    envelope: &mut Value,
    key: &str,
    n: usize,
    limit: Option<u64>,
) -> bool {
    let Some(limit) = limit else {
        return true;
    };
    if n == 0 {
        return true;
    }
    let len = usize::try_from(limit.saturating_add(1)).map_or(n, |l| l.min(n));
    if len > STAND_IN_ITEMS {
        return false;
    }
    let errors = |v: &Value| -> Vec<(String, String)> {
        split
            .shallow
            .iter_errors(v)
            .map(|e| {
                (
                    e.instance_path().as_str().to_string(),
                    e.evaluation_path().as_str().to_string(),
                )
            })
            .collect()
    };
    let empty = errors(envelope);
    envelope[key] = Value::Array(vec![Value::Null; len]);
    let counted = errors(envelope);
    envelope[key] = Value::Array(Vec::new());
    let member = format!("/{}", escape_pointer(key));
    counted == empty && !counted.iter().any(|(at, _)| *at == member)
}

/// Runs `check` into `out`; over a tree cut at its budget (`cut`), a member the cut left out
/// is no finding: "required field missing" is dropped there, since the service may well have
/// sent it past the cut (the `response.tree-size` error says what was not checked).
fn without_absences_if(cut: bool, out: &mut Findings, check: impl FnOnce(&mut Findings)) {
    if !cut {
        check(out);
        return;
    }
    let mut found = Findings::new(out.cap());
    check(&mut found);
    let (kept, omitted) = found.into_parts();
    for f in kept {
        if !(f.actual == "missing" && f.expected.starts_with("required field")) {
            out.push(f);
        }
    }
    for o in omitted {
        out.omit(o.check, o.count);
    }
}

/// The whole body as a tree within its budget, and whether the budget ran out.
fn bounded_tree(bytes: &[u8], budget: usize) -> Result<(Value, bool), serde_json::Error> {
    let left = Cell::new(budget);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let tree = Bounded(&left).deserialize(&mut de)?;
    de.end()?;
    Ok((tree, left.get() == 0))
}

/// The state of one streamed check.
struct Stream<'s, 'e> {
    set: &'s SchemaSet,
    name: &'s str,
    schema: &'s Schema,
    array: &'s RecordArray,
    /// The extra-fields shape of one record.
    items_shape: Option<usize>,
    /// Whether extra fields are looked for (a check, not a validation).
    extra: bool,
    /// Whether records carry a `productIntroduction` to check.
    intro: bool,
    /// The member holding the records (`None`: the root array).
    key: Option<&'s str>,
    /// The JSON Pointer of the record array.
    prefix: String,
    /// The most one record's tree may take.
    budget: usize,
    /// Some record's tree ran out of its budget.
    partial: bool,
    schema_found: Findings,
    extra_found: Findings,
    intro_found: Findings,
    attributions: Attributions,
    intro_attributions: Attributions,
    repeats: Repeats<Value>,
    /// Key orders of clean records, kept across records for the extra-fields walk.
    layouts: Layouts,
    intro_layouts: Layouts,
    /// Violations per check so far (what `Repeats` learns from).
    counts: Vec<(&'static crate::verdict::check::Check, usize)>,
    each: &'e mut dyn FnMut(usize, &Value),
}

impl<'s, 'e> Stream<'s, 'e> {
    fn new(
        set: &'s SchemaSet,
        name: &'s str,
        schema: &'s Schema,
        array: &'s RecordArray,
        cap: usize,
        each: &'e mut dyn FnMut(usize, &Value),
        extra: bool,
    ) -> Self {
        let shapes = set.shapes.get_or_init(|| set.build_shapes());
        Stream {
            set,
            name,
            schema,
            array,
            items_shape: shapes.record_items(name, &array.path),
            extra,
            intro: name == "products-response",
            key: None,
            prefix: String::new(),
            budget: usize::MAX,
            partial: false,
            schema_found: Findings::new(cap),
            extra_found: Findings::new(cap),
            intro_found: Findings::new(cap),
            attributions: Attributions::default(),
            intro_attributions: Attributions::default(),
            repeats: Repeats::default(),
            layouts: Layouts::default(),
            intro_layouts: Layouts::default(),
            counts: Vec::new(),
            each,
        }
    }

    /// Forgets the records read so far: the record member was given again, and the tree
    /// keeps the last one.
    fn restart(&mut self) {
        let cap = self.schema_found.cap();
        self.schema_found = Findings::new(cap);
        self.extra_found = Findings::new(cap);
        self.intro_found = Findings::new(cap);
        self.repeats = Repeats::default();
        self.counts.clear();
    }

    /// Reads the records of an array one at a time, each within its own budget.
    fn records<'de, A: SeqAccess<'de>>(&mut self, mut seq: A) -> Result<usize, A::Error> {
        let mut i = 0;
        loop {
            let left = Cell::new(self.budget);
            let Some(record) = seq.next_element_seed(Bounded(&left))? else {
                return Ok(i);
            };
            self.partial |= left.get() == 0;
            let cost = self.budget - left.get();
            self.record(i, record, cost);
            i += 1;
        }
    }

    fn record(&mut self, i: usize, record: Value, cost: usize) {
        (self.each)(i, &record);
        let set = self.set;
        if self.extra
            && let Some(shape) = self.items_shape
        {
            let shapes = set.shapes.get_or_init(|| set.build_shapes());
            let mut path = Vec::with_capacity(2);
            path.extend(self.key.map(Step::Key));
            path.push(Step::Index(i));
            shapes.extra_in(
                shape,
                &record,
                &mut path,
                &mut self.layouts,
                &mut self.extra_found,
            );
        }
        if self.intro
            && let Some(text) = record.get("productIntroduction").and_then(Value::as_str)
        {
            let pointer = format!("{}/{i}/productIntroduction", self.prefix);
            let intro = Introduction::parse((pointer, text));
            set.introduction_findings(&intro, &mut self.intro_attributions, &mut self.intro_found);
            if self.extra {
                set.extra_intro_findings(&intro, &mut self.intro_layouts, &mut self.intro_found);
            }
        }
        // A valid record has nothing to say (the tree path skips a valid body whole); only
        // broken records go through the attribution and the memory of repeated records.
        if set.record_is_valid(self.array, &record) {
            return;
        }
        let start = Start {
            uri: &self.schema.uri,
            node: &self.schema.document,
            check: check_of(&self.schema.document).unwrap_or(&EXTRA_FIELDS),
        };
        let mut cx = Violations::new(
            &mut self.attributions,
            &mut self.schema_found,
            Place::Response,
        );
        cx.counts = std::mem::take(&mut self.counts);
        // A large record is not remembered (replaying is only a shortcut).
        let mut forget = Repeats::default();
        let repeats = if cost <= REMEMBERED_RECORD_BYTES {
            &mut self.repeats
        } else {
            &mut forget
        };
        set.record_violations(
            self.schema,
            self.array,
            start,
            (i, record),
            &mut self.prefix,
            repeats,
            &mut cx,
        );
        self.counts = std::mem::take(&mut cx.counts);
    }

    /// The findings of a root array, in the order of the tree path: schema, extra fields,
    /// introductions.
    fn finish_records(self, out: &mut Findings) {
        out.append(self.schema_found);
        out.append(self.extra_found);
        out.append(self.intro_found);
    }

    /// The findings of an envelope whose records were read, in the order of the tree path:
    /// the schema's rules on the envelope (the record member empty), the records' schema
    /// findings, then extra fields in member order, the records' at the member's place.
    fn finish_envelope(mut self, split: &Split, envelope: &Value, out: &mut Findings) {
        let start = Start {
            uri: &self.schema.uri,
            node: &self.schema.document,
            check: check_of(&self.schema.document).unwrap_or(&EXTRA_FIELDS),
        };
        let mut shallow = Findings::new(out.cap());
        let mut cx = Violations::new(&mut self.attributions, &mut shallow, Place::Response);
        self.set
            .errors(&split.shallow, start, envelope, "", &mut cx);
        out.append(shallow);
        out.append(self.schema_found);
        if !self.extra {
            return;
        }
        let set = self.set;
        let shapes = set.shapes.get_or_init(|| set.build_shapes());
        let (Some(root), Some(members), Some(key)) =
            (shapes.root(self.name), envelope.as_object(), self.key)
        else {
            out.append(self.extra_found);
            return;
        };
        let at = members
            .keys()
            .position(|k| k == key)
            .unwrap_or(members.len());
        let layouts = &mut Layouts::default();
        shapes.extra_members(root, members.iter().take(at), layouts, out);
        out.append(self.extra_found);
        shapes.extra_members(root, members.iter().skip(at + 1), layouts, out);
    }
}

/// Visits the root array, one record at a time.
struct RecordsVisitor<'a, 's, 'e>(&'a mut Stream<'s, 'e>);

impl<'de> Visitor<'de> for RecordsVisitor<'_, '_, '_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON array of records")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<usize, A::Error> {
        self.0.records(seq)
    }
}

/// What was read of a root object around a record array.
struct EnvelopeRead {
    /// The members, the record member (if an array) emptied.
    members: Map<String, Value>,
    /// How many records the last record member held, if it was an array.
    records: Option<usize>,
    /// The envelope ran out of its budget.
    partial: bool,
}

/// Visits a root object: its record member one record at a time, the other members as one
/// tree within one budget.
struct EnvelopeVisitor<'a, 's, 'e> {
    stream: &'a mut Stream<'s, 'e>,
    key: &'s str,
}

impl<'de> Visitor<'de> for EnvelopeVisitor<'_, '_, '_> {
    type Value = EnvelopeRead;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EnvelopeRead, A::Error> {
        // Charged as `Bounded` charges an object: the root's slot, its first allocations,
        // each member and its key (and each value's slot, by `Bounded` or here).
        let left = Cell::new(self.stream.budget);
        let charge = |bytes: usize| left.set(left.get().saturating_sub(bytes));
        charge(cost::SLOT);
        let mut members = Map::new();
        let mut records = None;
        while let Some(key) = map.next_key::<String>()? {
            if members.is_empty() {
                charge(cost::CONTAINER);
            }
            if key == self.key {
                charge(cost::SLOT + cost::MEMBER + cost::text(key.len()));
                self.stream.restart();
                let read = map.next_value_seed(Member {
                    stream: self.stream,
                    left: &left,
                })?;
                let value = match read {
                    MemberRead::Records(n) => {
                        records = Some(n);
                        Value::Array(Vec::new())
                    }
                    MemberRead::Other(value) => {
                        records = None;
                        value
                    }
                };
                members.insert(key, value);
            } else if left.get() == 0 {
                map.next_value::<IgnoredAny>()?;
            } else {
                charge(cost::MEMBER + cost::text(key.len()));
                let value = map.next_value_seed(Bounded(&left))?;
                members.insert(key, value);
            }
        }
        Ok(EnvelopeRead {
            members,
            records,
            partial: left.get() == 0,
        })
    }
}

/// The record member of an envelope: its records if it is an array, else its value.
enum MemberRead {
    Records(usize),
    Other(Value),
}

/// Reads the record member of an envelope: an array record by record, anything else as a
/// tree within what is left of the envelope's budget.
struct Member<'a, 's, 'e> {
    stream: &'a mut Stream<'s, 'e>,
    left: &'a Cell<usize>,
}

impl<'de> DeserializeSeed<'de> for Member<'_, '_, '_> {
    type Value = MemberRead;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<MemberRead, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Member<'_, '_, '_> {
    type Value = MemberRead;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<MemberRead, A::Error> {
        self.stream.records(seq).map(MemberRead::Records)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<MemberRead, A::Error> {
        Bounded(self.left).visit_map(map).map(MemberRead::Other)
    }

    fn visit_bool<E>(self, v: bool) -> Result<MemberRead, E> {
        Ok(MemberRead::Other(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<MemberRead, E> {
        Ok(MemberRead::Other(Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<MemberRead, E> {
        Ok(MemberRead::Other(Value::from(v)))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<MemberRead, E> {
        Bounded(self.left).visit_f64(v).map(MemberRead::Other)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<MemberRead, E> {
        Bounded(self.left).visit_str(v).map(MemberRead::Other)
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<MemberRead, E> {
        Bounded(self.left).visit_string(v).map(MemberRead::Other)
    }

    fn visit_unit<E>(self) -> Result<MemberRead, E> {
        Ok(MemberRead::Other(Value::Null))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::data::{self, Dataset, MAIN, Shape};
    use crate::verdict::event::Finding;
    use proptest::prelude::*;
    use std::sync::LazyLock;

    static SCHEMAS: LazyLock<SchemaSet> =
        LazyLock::new(|| SchemaSet::embedded().expect("the embedded schemas compile"));

    /// Products of the reference data, clean.
    fn clean(count: u32) -> Vec<Value> {
        let dataset = Dataset::new(Shape::Standard);
        let mut mall = dataset.malls_of(MAIN.merchant_id)[0].clone();
        mall.product_count = count;
        data::products(&mall)
    }

    /// Everything a finding says, for comparing two lists exactly.
    fn said(findings: &Findings) -> (Vec<String>, Vec<(String, usize)>) {
        let kept = findings
            .kept()
            .iter()
            .map(|f: &Finding| {
                format!(
                    "{} {} | {} | {} | {:?}",
                    f.check.id, f.pointer, f.expected, f.actual, f.detail
                )
            })
            .collect();
        let omitted = findings
            .omitted()
            .iter()
            .map(|o| (o.check.id.to_string(), o.count))
            .collect();
        (kept, omitted)
    }

    /// The streamed check and the tree check of the same bytes.
    fn both(name: &str, bytes: &[u8], cap: usize) -> (Findings, Findings, Vec<String>) {
        let mut streamed = Findings::new(cap);
        let mut ids = Vec::new();
        let mut each = |_: usize, r: &Value| {
            ids.extend(r.get("spuId").and_then(Value::as_str).map(str::to_string));
        };
        let _ = SCHEMAS.check_bytes_into(name, bytes, &mut streamed, &mut each);
        let mut tree = Findings::new(cap);
        if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
            SCHEMAS.check_into(name, &value, &mut tree);
        }
        (streamed, tree, ids)
    }

    /// One way to break a product.
    fn mutate(product: &mut Value, how: u8, key: usize) {
        let Some(map) = product.as_object_mut() else {
            return;
        };
        let field = map.keys().nth(key % map.len().max(1)).cloned();
        match (how % 7, field) {
            (0, Some(f)) => {
                map.shift_remove(&f);
            }
            (1, Some(f)) => {
                map.insert(f, json!(12.5));
            }
            (2, Some(f)) => {
                map.insert(f, Value::Null);
            }
            (3, _) => {
                map.insert(format!("extra{key}"), json!({"a": 1}));
            }
            (4, _) => {
                map.insert(
                    "productIntroduction".to_string(),
                    json!(
                        [
                            "{not json",
                            "[{\"type\":\"text\"}]",
                            "[{\"type\":\"video\",\"x\":1}]"
                        ][key % 3]
                    ),
                );
            }
            (5, Some(f)) => {
                map.insert(f, json!({"nested": [1, {"deep": true}]}));
            }
            _ => {}
        }
    }

    use serde_json::json;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn streamed_findings_equal_tree_findings(
            count in 0u32..12,
            breaks in proptest::collection::vec((0usize..12, any::<u8>(), 0usize..40), 0..10),
            repeat in 0usize..4,
            cap in 1usize..6,
        ) {
            let mut products = clean(count);
            for (at, how, key) in breaks {
                if let Some(p) = products.get_mut(at) {
                    mutate(p, how, key);
                }
            }
            // Repeated broken records exercise the replay of remembered records.
            if let Some(first) = products.first().cloned() {
                products.extend(std::iter::repeat_n(first, repeat * 3));
            }
            let bytes = serde_json::to_vec(&products).unwrap();
            let (streamed, tree, ids) = both("products-response", &bytes, cap);
            prop_assert_eq!(said(&streamed), said(&tree));
            let tree_ids = crate::checks::products::spu_ids(&Value::Array(products));
            prop_assert_eq!(ids, tree_ids);
            let mut streamed = Findings::new(cap);
            let how = SCHEMAS.validate_bytes_into("products-response", &bytes, &mut streamed, &mut |_, _| {});
            prop_assert!(matches!(how.unwrap().shape, Streamed::Records(_)));
            let mut tree = Findings::new(cap);
            SCHEMAS.validate_into("products-response", &serde_json::from_slice(&bytes).unwrap(), &mut tree);
            prop_assert_eq!(said(&streamed), said(&tree));
        }
    }

    #[test]
    fn non_array_roots_and_other_schemas_take_the_tree_path() {
        for (name, body) in [
            ("products-response", &br#"{"code":"9999"}"#[..]),
            ("products-response", b" 12 "),
            ("mall-list-response", b"[{}, 3]"),
            ("mall", br#"{"mallSn":3}"#),
        ] {
            let (streamed, tree, _) = both(name, body, 5);
            assert_eq!(said(&streamed), said(&tree), "{name}");
            let mut out = Findings::new(5);
            let how = SCHEMAS.check_bytes_into(name, body, &mut out, &mut |_, _| {});
            let tree: Value = serde_json::from_slice(body).unwrap();
            assert_eq!(how.unwrap().shape, Streamed::Tree(tree));
        }
        let mut out = Findings::new(5);
        let how =
            SCHEMAS.check_bytes_into("products-response", b"[{}, {}]", &mut out, &mut |_, _| {});
        assert_eq!(how.unwrap().shape, Streamed::Records(2));
        assert!(!out.is_empty());
        for name in ["products-response", "mall-list-response"] {
            for broken in [
                &b"[{}, "[..],
                b"[] x",
                br#"{"data":[{}, "#,
                br#"{"data":[]} x"#,
            ] {
                let mut out = Findings::new(5);
                let got = SCHEMAS.check_bytes_into(name, broken, &mut out, &mut |_, _| {});
                let want = serde_json::from_slice::<Value>(broken).unwrap_err();
                assert_eq!(got.unwrap_err().to_string(), want.to_string());
            }
        }
    }

    /// A page of malls of the reference data, clean.
    fn page(count: usize) -> Value {
        let dataset = Dataset::new(Shape::Standard);
        let malls: Vec<Value> = dataset
            .malls_of(MAIN.merchant_id)
            .into_iter()
            .cycle()
            .take(count)
            .map(data::mall_record)
            .collect();
        json!({"success": true, "code": "0000", "msg": "ok", "data": malls})
    }

    /// One way to break a page's envelope (`at` places an extra member before `data`).
    fn break_envelope(page: &mut Value, how: u8, at: usize) {
        let Some(map) = page.as_object_mut() else {
            return;
        };
        match how % 12 {
            0 => {
                map.insert("success".into(), json!(false));
            }
            1 => {
                map.insert("success".into(), json!("true"));
            }
            2 => {
                map.shift_remove("success");
            }
            3 => {
                map.insert(
                    "code".into(),
                    [json!("9999"), json!(0), json!(null)][at % 3].clone(),
                );
            }
            4 => {
                map.shift_remove("msg");
            }
            5 => {
                map.insert(
                    "data".into(),
                    [json!(null), json!({"a": [1]}), json!("x"), json!(3)][at % 4].clone(),
                );
            }
            6 => {
                map.shift_remove("data");
            }
            7 | 8 => {
                // An extra member, before or after `data`.
                let name = format!("extra{at}");
                map.shift_remove(&name);
                map.shift_insert(at % (map.len() + 1), name, json!({"x": [1]}));
            }
            9 => {
                map.insert("success".into(), json!(false));
                map.insert("code".into(), json!("5001"));
            }
            _ => {}
        }
    }

    /// The records of the tree's `data`, and those `each` saw, for both streamed calls.
    fn page_both(
        bytes: &[u8],
        cap: usize,
        check: bool,
    ) -> (Findings, Findings, Vec<Value>, StreamOutcome) {
        let mut streamed = Findings::new(cap);
        let mut seen = Vec::new();
        let mut each = |i: usize, r: &Value| {
            // A record member given again starts over at 0.
            if i == 0 {
                seen.clear();
            }
            assert_eq!(i, seen.len(), "records in order");
            seen.push(r.clone());
        };
        let name = "mall-list-response";
        let how = if check {
            SCHEMAS.check_bytes_into(name, bytes, &mut streamed, &mut each)
        } else {
            SCHEMAS.validate_bytes_into(name, bytes, &mut streamed, &mut each)
        };
        let tree: Value = serde_json::from_slice(bytes).unwrap();
        let mut want = Findings::new(cap);
        if check {
            SCHEMAS.check_into(name, &tree, &mut want);
        } else {
            SCHEMAS.validate_into(name, &tree, &mut want);
        }
        (streamed, want, seen, how.unwrap())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

        #[test]
        fn streamed_page_findings_equal_tree_findings(
            count in 0usize..8,
            breaks in proptest::collection::vec((0usize..8, any::<u8>(), 0usize..40), 0..8),
            envelope in proptest::collection::vec((any::<u8>(), 0usize..12), 0..3),
            repeat in 0usize..3,
            cap in 1usize..5,
        ) {
            let mut page = page(count);
            if let Some(malls) = page["data"].as_array_mut() {
                for (at, how, key) in breaks {
                    if let Some(m) = malls.get_mut(at) {
                        mutate(m, how, key);
                    }
                }
                if let Some(first) = malls.first().cloned() {
                    malls.extend(std::iter::repeat_n(first, repeat * 2));
                }
            }
            for (how, at) in envelope {
                break_envelope(&mut page, how, at);
            }
            let bytes = serde_json::to_vec(&page).unwrap();
            for check in [true, false] {
                let (streamed, tree, seen, how) = page_both(&bytes, cap, check);
                prop_assert_eq!(said(&streamed), said(&tree), "check {}", check);
                prop_assert!(!how.partial);
                let records = page.get("data").and_then(Value::as_array);
                prop_assert_eq!(&seen, &records.cloned().unwrap_or_default());
                let Streamed::Envelope { records: n, envelope } = how.shape else {
                    panic!("a page is read as an envelope: {:?}", how.shape);
                };
                prop_assert_eq!(n, records.map(Vec::len));
                let mut emptied = page.clone();
                if records.is_some() {
                    emptied["data"] = json!([]);
                }
                prop_assert_eq!(envelope, emptied);
            }
        }
    }

    #[test]
    fn a_record_member_given_twice_is_checked_as_the_tree_keeps_it() {
        let malls = page(2)["data"].to_string();
        for body in [
            format!(r#"{{"success":true,"data":[{{}}],"code":"0000","msg":"","data":{malls}}}"#),
            format!(
                r#"{{"success":true,"data":{malls},"code":"0000","msg":"","data":[{{"x":1}}]}}"#
            ),
            format!(r#"{{"success":true,"data":{malls},"code":"0000","msg":"","data":null}}"#),
            format!(
                r#"{{"data":null,"success":false,"extra":1,"code":"1","msg":"","data":{malls}}}"#
            ),
        ] {
            let tree: Value = serde_json::from_str(&body).unwrap();
            for check in [true, false] {
                let (streamed, want, seen, how) = page_both(body.as_bytes(), 3, check);
                assert_eq!(said(&streamed), said(&want), "{body}");
                let records = tree["data"].as_array();
                if let Some(records) = records {
                    assert_eq!(&seen, records);
                }
                let Streamed::Envelope { records: n, .. } = how.shape else {
                    panic!("{:?}", how.shape);
                };
                assert_eq!(n, records.map(Vec::len));
            }
        }
    }

    #[test]
    fn a_failed_page_with_records_is_checked_as_a_tree() {
        // `maxItems: 0` on failure counts the records: the envelope cannot stand for them.
        let mut page = page(3);
        page["success"] = json!(false);
        page["code"] = json!("5001");
        let bytes = serde_json::to_vec(&page).unwrap();
        let (streamed, tree, seen, how) = page_both(&bytes, 5, true);
        assert_eq!(said(&streamed), said(&tree));
        assert!(
            said(&tree).0.iter().any(|f| f.contains(" /data |")),
            "{:?}",
            said(&tree)
        );
        assert_eq!(seen.len(), 3);
        assert!(matches!(
            how.shape,
            Streamed::Envelope {
                records: Some(3),
                ..
            }
        ));
    }

    #[test]
    fn the_shipped_page_schema_streams_and_item_rules_do_not() {
        assert!(matches!(
            SCHEMAS.plan("mall-list-response"),
            Some(Plan::Envelope(EnvelopePlan {
                key: "data",
                limit: Some(0),
                ..
            }))
        ));
        assert!(matches!(
            SCHEMAS.plan("products-response"),
            Some(Plan::Root(..))
        ));
        let doc = |data: Value| json!({"type": "object", "properties": {"data": data}});
        let items = json!({"type": "array", "items": {"type": "object"}});
        assert_eq!(envelope_limit(&doc(items.clone()), "data"), Some(None));
        for rule in [
            json!({"uniqueItems": true}),
            json!({"contains": {"type": "object"}}),
            json!({"enum": [[]]}),
            json!({"$ref": "#/$defs/x"}),
            json!({"type": "object"}),
        ] {
            let mut data = items.clone();
            data.as_object_mut()
                .unwrap()
                .extend(rule.as_object().unwrap().clone());
            assert_eq!(envelope_limit(&doc(data), "data"), None, "{rule}");
        }
        let mut counted = doc(items);
        counted["allOf"] = json!([{"then": {"properties": {"data": {"minItems": 2}}}}]);
        assert_eq!(envelope_limit(&counted, "data"), Some(Some(2)));
        counted["anyOf"] = json!([true]);
        assert_eq!(envelope_limit(&counted, "data"), None);
    }

    #[test]
    fn many_tiny_values_in_an_envelope_member_leave_the_tree_partial() {
        // 1 MB of zeros takes tens of MB as a tree, past 2 × 1 MB + 16 MB.
        let zeros = 500_000;
        let mut body = br#"{"success":true,"code":"0000","msg":"ok","data":[],"x":["#.to_vec();
        body.extend(std::iter::repeat_n(&b"0,"[..], zeros).flatten());
        body.extend(b"0]}");
        let mut out = Findings::new(5);
        let how = SCHEMAS
            .check_bytes_into("mall-list-response", &body, &mut out, &mut |_, _| {})
            .unwrap();
        assert!(how.partial);
        let Streamed::Envelope {
            records: Some(0),
            envelope,
        } = how.shape
        else {
            panic!("{:?}", how.shape);
        };
        let kept = envelope["x"].as_array().map_or(0, Vec::len);
        assert!(kept > 0 && kept < zeros, "{kept} of {zeros} values held");
        assert_eq!(
            said(&out).0,
            [
                "info.extra-fields /x | only fields the spec lists | extra field `x` | \"\""
                    .to_string()
            ]
        );
    }

    /// Members the budget's cut left out are no "required field missing" finding: the
    /// service sent `success`, `code` and `msg` after a large member, past the cut.
    #[test]
    fn members_past_the_cut_are_not_reported_missing() {
        let zeros = 500_000;
        let mut body = br#"{"x":["#.to_vec();
        body.extend(std::iter::repeat_n(&b"0,"[..], zeros).flatten());
        body.extend(br#"0],"success":true,"code":"0000","msg":"ok","data":[]}"#);
        let mut out = Findings::new(5);
        let how = SCHEMAS
            .check_bytes_into("mall-list-response", &body, &mut out, &mut |_, _| {})
            .unwrap();
        assert!(how.partial);
        let (said, _) = said(&out);
        assert!(said.iter().all(|f| !f.contains("missing")), "{said:?}");
        // Within the budget, a member that is missing is still said.
        let mut out = Findings::new(5);
        SCHEMAS
            .check_bytes_into(
                "mall-list-response",
                br#"{"x":[0],"code":"0000","msg":"ok","data":[]}"#,
                &mut out,
                &mut |_, _| {},
            )
            .unwrap();
        let (said, _) = self::said(&out);
        assert!(
            said.iter().any(|f| f.contains("required field `success`")),
            "{said:?}"
        );
    }

    #[test]
    fn one_record_of_many_keys_is_read_within_its_budget() {
        let keys = 20_000;
        let record: String = (0..keys).map(|i| format!(r#""k{i}":0,"#)).collect();
        let body = format!(
            r#"{{"success":true,"code":"0000","msg":"ok","data":[{{{record}"mallSn":"1"}}]}}"#
        );
        let budget = body.len();
        for (name, body) in [
            ("mall-list-response", body.clone()),
            (
                "products-response",
                format!("[{{{record}\"spuId\":\"1\"}}]"),
            ),
        ] {
            let mut held = 0;
            let mut out = Findings::new(5);
            let how = SCHEMAS
                .read_bytes_into(
                    name,
                    body.as_bytes(),
                    &mut out,
                    &mut |_, r| held = r.as_object().map_or(0, |m| m.len()),
                    true,
                    budget,
                )
                .unwrap();
            assert!(how.partial, "{name}");
            assert!(
                held > 0 && held < keys,
                "{name}: {held} of {keys} keys held"
            );
        }
        // Within the budget, nothing is partial.
        let mut out = Findings::new(5);
        let how = SCHEMAS
            .read_bytes_into(
                "mall-list-response",
                body.as_bytes(),
                &mut out,
                &mut |_, _| {},
                true,
                100 * budget,
            )
            .unwrap();
        assert!(!how.partial);
    }
}

#[cfg(test)]
mod timing {
    use super::*;
    use std::time::Instant;

    /// Where the time of a streamed check goes (run by hand: `-- --ignored --nocapture`).
    #[test]
    #[ignore = "prints timings; not a test of behaviour"]
    #[allow(clippy::disallowed_macros)]
    fn print_stage_timings() {
        let schemas = SchemaSet::embedded().unwrap();
        let body = crate::bench::validation::products_response(5_000);
        for _ in 0..3 {
            let t = Instant::now();
            let tree: Value = serde_json::from_slice(&body.bytes).unwrap();
            let parse = t.elapsed();
            let t = Instant::now();
            let mut out = Findings::new(200);
            schemas.check_into("products-response", &tree, &mut out);
            let tree_check = t.elapsed();
            let t = Instant::now();
            let records: Vec<Value> = tree.as_array().unwrap().clone();
            let valid = records
                .iter()
                .filter(|r| {
                    let product = &schemas.schemas["product"];
                    schemas.compiled(product).validator.is_valid(r)
                })
                .count();
            let per_record_valid = t.elapsed();
            let t = Instant::now();
            let mut out = Findings::new(200);
            schemas.extra_fields_root("products-response", &tree, &mut out);
            let extra = t.elapsed();
            let t = Instant::now();
            let intros: Vec<_> = super::super::validate::introductions("products-response", &tree)
                .into_iter()
                .map(super::super::validate::Introduction::parse)
                .filter(|i| i.parsed.is_ok())
                .count()
                .to_string()
                .into_bytes();
            let intro_parse = t.elapsed();
            let t = Instant::now();
            let mut out = Findings::new(200);
            schemas
                .check_bytes_into("products-response", &body.bytes, &mut out, &mut |_, _| {})
                .unwrap();
            let streamed = t.elapsed();
            println!(
                "parse {parse:?} tree-check {tree_check:?} (per-record valid {per_record_valid:?} {valid}, extra {extra:?}, intro parse {intro_parse:?} {}) streamed {streamed:?}",
                String::from_utf8_lossy(&intros)
            );
        }
    }
}
