//! Field-by-field comparison of a recorded response with a new one (a snapshot mismatch, or a
//! candidate release against its baseline), each change classified as breaking, additive or
//! data-only (pure functions, no I/O).
//!
//! Breaking: a field removed, a type changed outside the types the schema allows, a value outside
//! a closed enum, a non-null field now null, a nullable field now null in every record. Additive:
//! a new field, a new value in a list such as `tags`. Data-only: changed values, records added,
//! removed or reordered. Arrays of records are matched by `mallSn`, `spuId` or `skuId` when every
//! record carries one, else by index.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

use crate::json::{escape_pointer, json_type};

use crate::verdict::event::truncate;

/// Fields that identify a record in an array, tried in this order.
pub const RECORD_KEYS: [&str; 3] = ["mallSn", "spuId", "skuId"];

/// String fields whose text is itself JSON (spec §2.7), compared structurally.
const JSON_TEXT_FIELDS: [&str; 1] = ["productIntroduction"];

/// Longest value shown in a change description, in characters.
const VALUE_MAX_CHARS: usize = 60;

/// How much a change matters to a client of the interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// A client written against the baseline can break.
    Breaking,
    /// Something new that a tolerant client ignores (a new field, a new list value).
    Additive,
    /// Different data in the same shape.
    Data,
}

impl Class {
    /// Lower-case label used in reports.
    pub fn label(self) -> &'static str {
        match self {
            Class::Breaking => "breaking",
            Class::Additive => "additive",
            Class::Data => "data",
        }
    }
}

/// What changed at one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChangeKind {
    /// A field of the baseline is gone.
    FieldRemoved,
    /// The JSON type of a value changed.
    TypeChanged,
    /// A value is outside the closed set of values its field allows.
    OutsideClosedSet,
    /// A value that was not null is now null.
    NowNull,
    /// A nullable field that had values is now null in every record.
    NowAlwaysNull,
    /// A field the baseline did not have.
    FieldAdded,
    /// A value in a list of values (e.g. a tag) the baseline did not have.
    ValueAdded,
    /// A value in a list of values the candidate no longer has.
    ValueRemoved,
    /// A value changed within its type.
    ValueChanged,
    /// A record (matched by key or index) the baseline did not have.
    RecordAdded,
    /// A record of the baseline is gone.
    RecordRemoved,
    /// The same records come in another order.
    OrderChanged,
    /// The candidate's answer breaks the spec's schema (whatever the baseline held).
    ContractBroken,
}

impl ChangeKind {
    /// A few words for reports.
    pub fn label(self) -> &'static str {
        match self {
            ChangeKind::FieldRemoved => "field removed",
            ChangeKind::ContractBroken => "breaks the contract",
            ChangeKind::TypeChanged => "type changed",
            ChangeKind::OutsideClosedSet => "value outside the closed set",
            ChangeKind::NowNull => "now null",
            ChangeKind::NowAlwaysNull => "now always null",
            ChangeKind::FieldAdded => "field added",
            ChangeKind::ValueAdded => "value added",
            ChangeKind::ValueRemoved => "value removed",
            ChangeKind::ValueChanged => "value changed",
            ChangeKind::RecordAdded => "record added",
            ChangeKind::RecordRemoved => "record removed",
            ChangeKind::OrderChanged => "order changed",
        }
    }
}

/// One change between the baseline and the candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// JSON Pointer (into the candidate, or the baseline for something removed); text inside a
    /// JSON-text field continues after `#`.
    pub pointer: String,
    /// The record the change is in, e.g. `mallSn 1000277165`.
    pub record: Option<String>,
    /// What changed.
    pub kind: ChangeKind,
    /// How much it matters.
    pub class: Class,
    /// The baseline value, when there is one.
    pub before: Option<Value>,
    /// The candidate value, when there is one.
    pub after: Option<Value>,
    /// Why it is classified so, when that is not obvious from the kind.
    pub note: String,
}

impl Change {
    /// The pointer with array indexes replaced by `*`, to group the same change across records.
    pub fn pattern(&self) -> String {
        let (main, inner) = match self.pointer.split_once('#') {
            Some((m, i)) => (m, Some(i)),
            None => (self.pointer.as_str(), None),
        };
        let star = |p: &str| {
            p.split('/')
                .map(|s| {
                    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
                        "*"
                    } else {
                        s
                    }
                })
                .collect::<Vec<_>>()
                .join("/")
        };
        match inner {
            Some(i) => format!("{}#{}", star(main), star(i)),
            None => star(main),
        }
    }

    /// One line: what changed, with the values.
    pub fn describe(&self) -> String {
        let show = |v: &Option<Value>| v.as_ref().map_or_else(|| "-".to_string(), short);
        let mut out = match self.kind {
            ChangeKind::FieldRemoved | ChangeKind::ValueRemoved | ChangeKind::RecordRemoved => {
                format!("{} (was {})", self.kind.label(), show(&self.before))
            }
            ChangeKind::FieldAdded | ChangeKind::ValueAdded | ChangeKind::RecordAdded => {
                format!("{} ({})", self.kind.label(), show(&self.after))
            }
            ChangeKind::TypeChanged => format!(
                "type changed from {} to {} ({} → {})",
                self.before.as_ref().map_or("-", json_type),
                self.after.as_ref().map_or("-", json_type),
                show(&self.before),
                show(&self.after)
            ),
            ChangeKind::OrderChanged | ChangeKind::NowAlwaysNull | ChangeKind::ContractBroken => {
                self.kind.label().to_string()
            }
            _ => format!(
                "{}: {} → {}",
                self.kind.label(),
                show(&self.before),
                show(&self.after)
            ),
        };
        if !self.note.is_empty() {
            out.push_str(&format!("; {}", self.note));
        }
        out
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        match &self.record {
            Some(r) => write!(
                f,
                "[{}] {at} ({r}): {}",
                self.class.label(),
                self.describe()
            ),
            None => write!(f, "[{}] {at}: {}", self.class.label(), self.describe()),
        }
    }
}

/// A value shortened for a report.
fn short(v: &Value) -> String {
    truncate(&v.to_string(), VALUE_MAX_CHARS)
}

/// What the schemas say about fields, by field name: closed value sets, allowed types and
/// fields whose type is open.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Contract {
    /// Field name → the only values it may take (`enum` in the schemas).
    pub closed: BTreeMap<String, Vec<Value>>,
    /// Field name → JSON types it may take (`type` in the schemas), e.g. `["string", "null"]`.
    pub types: BTreeMap<String, BTreeSet<String>>,
    /// Fields declared without any type or value constraint (e.g. the always-null fields).
    pub open: BTreeSet<String>,
}

impl Contract {
    /// Collects the top-level `properties` of each schema document: `enum` gives a closed set,
    /// `type` the allowed types, and a property with neither `type`, `enum`, `const` nor `$ref`
    /// is open. A name declared differently by two documents keeps the union of what they allow.
    pub fn from_schema_documents<'a>(documents: impl IntoIterator<Item = &'a Value>) -> Contract {
        let mut c = Contract::default();
        for doc in documents {
            let Some(props) = doc.get("properties").and_then(Value::as_object) else {
                continue;
            };
            for (name, prop) in props {
                if let Some(values) = prop.get("enum").and_then(Value::as_array) {
                    let set = c.closed.entry(name.clone()).or_default();
                    for v in values {
                        if !set.contains(v) {
                            set.push(v.clone());
                        }
                    }
                }
                match prop.get("type") {
                    Some(Value::String(t)) => {
                        c.types.entry(name.clone()).or_default().insert(t.clone());
                    }
                    Some(Value::Array(ts)) => {
                        let set = c.types.entry(name.clone()).or_default();
                        set.extend(ts.iter().filter_map(Value::as_str).map(str::to_string));
                    }
                    _ => {}
                }
                let constrained = ["type", "enum", "const", "$ref", "anyOf", "oneOf", "allOf"]
                    .iter()
                    .any(|k| prop.get(*k).is_some());
                if !constrained {
                    c.open.insert(name.clone());
                }
            }
        }
        c
    }

    fn is_nullable(&self, field: Option<&str>) -> bool {
        field.is_some_and(|f| self.types.get(f).is_some_and(|t| t.contains("null")))
    }

    fn is_open(&self, field: Option<&str>) -> bool {
        field.is_some_and(|f| self.open.contains(f))
    }

    /// Whether the schemas allow `value`'s type for the field (false when they say nothing).
    fn allows_type(&self, field: Option<&str>, value: &Value) -> bool {
        let Some(types) = field.and_then(|f| self.types.get(f)) else {
            return false;
        };
        match json_type(value) {
            "integer" => types.contains("integer") || types.contains("number"),
            t => types.contains(t),
        }
    }

    /// The closed set of the field when `value` is outside it.
    fn outside(&self, field: Option<&str>, value: &Value) -> Option<&[Value]> {
        let set = self.closed.get(field?)?;
        (!set.iter().any(|v| same_value(v, value))).then_some(set.as_slice())
    }
}

/// Equality that treats `1` and `1.0` as the same number.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || (x.as_f64().is_some() && x.as_f64() == y.as_f64())
        }
        _ => a == b,
    }
}

/// Every change from `baseline` to `candidate`, classified with what `contract` says.
pub fn compare(baseline: &Value, candidate: &Value, contract: &Contract) -> Vec<Change> {
    let mut w = Walker {
        contract,
        out: Vec::new(),
    };
    w.value(
        baseline,
        candidate,
        &Place {
            pointer: String::new(),
            field: None,
            record: None,
        },
    );
    w.out
}

/// Whether any change is breaking.
pub fn is_breaking(changes: &[Change]) -> bool {
    changes.iter().any(|c| c.class == Class::Breaking)
}

/// The same change in several records, reported once.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// Pointer pattern with `*` for array indexes.
    pub pattern: String,
    /// What changed.
    pub kind: ChangeKind,
    /// How much it matters.
    pub class: Class,
    /// How many changes the group holds.
    pub count: usize,
    /// The first change of the group.
    pub example: Change,
}

/// Groups changes by pattern, kind and class: breaking first, then additive, then data, each in
/// order of first appearance.
pub fn group(changes: &[Change]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for c in changes {
        let pattern = c.pattern();
        match groups
            .iter_mut()
            .find(|g| g.pattern == pattern && g.kind == c.kind && g.class == c.class)
        {
            Some(g) => g.count += 1,
            None => groups.push(Group {
                pattern,
                kind: c.kind,
                class: c.class,
                count: 1,
                example: c.clone(),
            }),
        }
    }
    groups.sort_by_key(|g| g.class);
    groups
}

/// Where the walker is.
#[derive(Debug, Clone)]
struct Place<'a> {
    pointer: String,
    field: Option<&'a str>,
    record: Option<String>,
}

impl<'a> Place<'a> {
    fn key(&self, key: &'a str) -> Place<'a> {
        Place {
            pointer: format!("{}/{}", self.pointer, escape_pointer(key)),
            field: Some(key),
            record: self.record.clone(),
        }
    }

    fn index(&self, i: usize, record: Option<String>) -> Place<'a> {
        let record = match (&self.record, record) {
            (Some(outer), Some(inner)) => Some(format!("{outer} / {inner}")),
            (outer, inner) => inner.or_else(|| outer.clone()),
        };
        Place {
            pointer: format!("{}/{i}", self.pointer),
            field: self.field,
            record,
        }
    }

    fn inner_json(&self) -> Place<'a> {
        Place {
            pointer: format!("{}#", self.pointer),
            field: None,
            record: self.record.clone(),
        }
    }
}

struct Walker<'c> {
    contract: &'c Contract,
    out: Vec<Change>,
}

impl Walker<'_> {
    fn push(
        &mut self,
        at: &Place<'_>,
        kind: ChangeKind,
        class: Class,
        before: Option<&Value>,
        after: Option<&Value>,
        note: String,
    ) {
        self.out.push(Change {
            pointer: at.pointer.clone(),
            record: at.record.clone(),
            kind,
            class,
            before: before.cloned(),
            after: after.cloned(),
            note,
        });
    }

    /// A value only the baseline has (a field, record or list element).
    fn removed(&mut self, at: &Place<'_>, kind: ChangeKind, class: Class, before: &Value) {
        self.push(at, kind, class, Some(before), None, String::new());
    }

    /// A field or record only the candidate has; its closed-set values are checked too.
    fn added(&mut self, at: &Place<'_>, kind: ChangeKind, class: Class, after: &Value) {
        self.push(at, kind, class, None, Some(after), String::new());
        self.closed_sets(after, at);
    }

    fn value<'v>(&mut self, b: &'v Value, c: &'v Value, at: &Place<'v>) {
        match (b, c) {
            (Value::Object(bo), Value::Object(co)) => {
                for (k, bv) in bo {
                    match co.get(k) {
                        Some(cv) => self.value(bv, cv, &at.key(k)),
                        None => {
                            self.removed(&at.key(k), ChangeKind::FieldRemoved, Class::Breaking, bv)
                        }
                    }
                }
                for (k, cv) in co {
                    if !bo.contains_key(k) {
                        let place = at.key(k);
                        self.added(&place, ChangeKind::FieldAdded, Class::Additive, cv);
                    }
                }
            }
            (Value::Array(ba), Value::Array(ca)) => self.array(ba, ca, at),
            (Value::String(bs), Value::String(cs))
                if bs != cs && at.field.is_some_and(|f| JSON_TEXT_FIELDS.contains(&f)) =>
            {
                match (
                    serde_json::from_str::<Value>(bs),
                    serde_json::from_str::<Value>(cs),
                ) {
                    (Ok(bj), Ok(cj)) if !bj.is_string() && !cj.is_string() => {
                        let inner = at.inner_json();
                        self.value_owned(bj, cj, &inner);
                    }
                    _ => self.scalar(b, c, at),
                }
            }
            _ => self.scalar(b, c, at),
        }
    }

    /// Compares values parsed from JSON text (they do not live as long as the documents).
    fn value_owned(&mut self, b: Value, c: Value, at: &Place<'_>) {
        let mut inner = Walker {
            contract: self.contract,
            out: Vec::new(),
        };
        let place = Place {
            pointer: at.pointer.clone(),
            field: None,
            record: at.record.clone(),
        };
        inner.value(&b, &c, &place);
        self.out.extend(inner.out);
    }

    fn scalar(&mut self, b: &Value, c: &Value, at: &Place<'_>) {
        // `3` now written `3.0` or `3e0` is the same number but no longer an integer
        // literal: a type change (strict clients refuse it in an integer field).
        if same_value(b, c) && json_type(b) == json_type(c) {
            return;
        }
        let field = at.field;
        match (b, c) {
            (_, Value::Null) => {
                let (class, note) = if self.contract.is_nullable(field) {
                    (Class::Data, "the field may be null".to_string())
                } else if self.contract.is_open(field) {
                    (Class::Data, "the field's type is open".to_string())
                } else {
                    (Class::Breaking, "the field is not nullable".to_string())
                };
                self.push(at, ChangeKind::NowNull, class, Some(b), Some(c), note);
            }
            (Value::Null, _) => {
                if let Some(set) = self.contract.outside(field, c) {
                    self.push(
                        at,
                        ChangeKind::OutsideClosedSet,
                        Class::Breaking,
                        Some(b),
                        Some(c),
                        allowed(set),
                    );
                } else {
                    self.push(
                        at,
                        ChangeKind::ValueChanged,
                        Class::Data,
                        Some(b),
                        Some(c),
                        String::new(),
                    );
                    self.closed_sets(c, at);
                }
            }
            // An integer field now carrying a fraction is a type change too.
            _ if json_type(b) != json_type(c) => {
                if self.contract.is_open(field) || self.contract.allows_type(field, c) {
                    let note = "the new type is one the field allows".to_string();
                    self.push(
                        at,
                        ChangeKind::ValueChanged,
                        Class::Data,
                        Some(b),
                        Some(c),
                        note,
                    );
                } else {
                    self.push(
                        at,
                        ChangeKind::TypeChanged,
                        Class::Breaking,
                        Some(b),
                        Some(c),
                        String::new(),
                    );
                }
            }
            _ => match self.contract.outside(field, c) {
                Some(set) => {
                    let note = allowed(set);
                    self.push(
                        at,
                        ChangeKind::OutsideClosedSet,
                        Class::Breaking,
                        Some(b),
                        Some(c),
                        note,
                    );
                }
                None => self.push(
                    at,
                    ChangeKind::ValueChanged,
                    Class::Data,
                    Some(b),
                    Some(c),
                    String::new(),
                ),
            },
        }
    }

    fn array<'v>(&mut self, ba: &'v [Value], ca: &'v [Value], at: &Place<'v>) {
        let scalars = |a: &[Value]| a.iter().all(|v| !v.is_object() && !v.is_array());
        if scalars(ba) && scalars(ca) && !(ba.is_empty() && ca.is_empty()) {
            self.scalar_list(ba, ca, at);
            return;
        }
        match record_key(ba, ca) {
            Some(key) => self.keyed(ba, ca, key, at),
            None => {
                for (i, (bv, cv)) in ba.iter().zip(ca).enumerate() {
                    self.value(bv, cv, &at.index(i, None));
                }
                for (i, bv) in ba.iter().enumerate().skip(ca.len()) {
                    self.removed(
                        &at.index(i, None),
                        ChangeKind::RecordRemoved,
                        Class::Data,
                        bv,
                    );
                }
                for (i, cv) in ca.iter().enumerate().skip(ba.len()) {
                    let place = at.index(i, None);
                    self.added(&place, ChangeKind::RecordAdded, Class::Data, cv);
                }
            }
        }
        self.always_null(ba, ca, at);
    }

    /// A list of plain values (e.g. `tags`): compared as a multiset, with a type check.
    fn scalar_list(&mut self, ba: &[Value], ca: &[Value], at: &Place<'_>) {
        let b_types: BTreeSet<&str> = ba.iter().map(json_type).collect();
        let new_types: BTreeSet<&str> = ca
            .iter()
            .map(json_type)
            .filter(|t| !b_types.contains(t))
            .collect();
        if !ba.is_empty() && !new_types.is_empty() {
            let before = Value::Array(ba.to_vec());
            let after = Value::Array(ca.to_vec());
            let note = format!(
                "elements were {}",
                b_types.into_iter().collect::<Vec<_>>().join("/")
            );
            self.push(
                at,
                ChangeKind::TypeChanged,
                Class::Breaking,
                Some(&before),
                Some(&after),
                note,
            );
            return;
        }
        let mut remaining: Vec<&Value> = ca.iter().collect();
        let mut removed: Vec<&Value> = Vec::new();
        for bv in ba {
            match remaining.iter().position(|cv| same_value(bv, cv)) {
                Some(i) => {
                    remaining.remove(i);
                }
                None => removed.push(bv),
            }
        }
        for bv in removed {
            self.removed(at, ChangeKind::ValueRemoved, Class::Data, bv);
        }
        for cv in remaining {
            match self.contract.outside(at.field, cv) {
                Some(set) => {
                    let note = allowed(set);
                    self.push(
                        at,
                        ChangeKind::OutsideClosedSet,
                        Class::Breaking,
                        None,
                        Some(cv),
                        note,
                    );
                }
                None => self.push(
                    at,
                    ChangeKind::ValueAdded,
                    Class::Additive,
                    None,
                    Some(cv),
                    String::new(),
                ),
            }
        }
    }

    fn keyed<'v>(&mut self, ba: &'v [Value], ca: &'v [Value], key: &str, at: &Place<'v>) {
        let id = |v: &Value| v.get(key).map(key_text).unwrap_or_default();
        let c_index: BTreeMap<String, usize> =
            ca.iter().enumerate().map(|(i, v)| (id(v), i)).collect();
        let b_ids: BTreeSet<String> = ba.iter().map(id).collect();
        let mut common_b: Vec<String> = Vec::new();
        for (i, bv) in ba.iter().enumerate() {
            let k = id(bv);
            let label = Some(format!("{key} {k}"));
            match c_index.get(&k) {
                Some(&ci) => {
                    common_b.push(k.clone());
                    self.value(bv, &ca[ci], &at.index(ci, label));
                }
                None => self.removed(
                    &at.index(i, label),
                    ChangeKind::RecordRemoved,
                    Class::Data,
                    bv,
                ),
            }
        }
        for (i, cv) in ca.iter().enumerate() {
            let k = id(cv);
            if !b_ids.contains(&k) {
                let place = at.index(i, Some(format!("{key} {k}")));
                self.added(&place, ChangeKind::RecordAdded, Class::Data, cv);
            }
        }
        let common_c: Vec<String> = ca.iter().map(id).filter(|k| b_ids.contains(k)).collect();
        if common_b != common_c {
            let note = format!("records matched by {key}");
            self.push(at, ChangeKind::OrderChanged, Class::Data, None, None, note);
        }
    }

    /// Reports a nullable field that had a value in some baseline record and is null in every
    /// candidate record (looking through nested objects of the records, not nested arrays).
    fn always_null(&mut self, ba: &[Value], ca: &[Value], at: &Place<'_>) {
        if ca.is_empty() || !ca.iter().all(Value::is_object) {
            return;
        }
        let mut b_stats: BTreeMap<String, (bool, bool)> = BTreeMap::new();
        let mut c_stats: BTreeMap<String, (bool, bool)> = BTreeMap::new();
        for v in ba {
            self.null_stats(v, "", &mut b_stats);
        }
        for v in ca {
            self.null_stats(v, "", &mut c_stats);
        }
        for (path, &(b_any_value, _)) in &b_stats {
            let Some(&(c_any_value, c_all_null)) = c_stats.get(path) else {
                continue;
            };
            let missing_somewhere = ca.iter().any(|r| r.pointer(path).is_none());
            if b_any_value && !c_any_value && c_all_null && !missing_somewhere {
                let place = Place {
                    pointer: format!("{}/*{path}", at.pointer),
                    field: None,
                    record: None,
                };
                let note = format!(
                    "the field may be null, but it had values in the baseline and has none in {} record(s)",
                    ca.len()
                );
                self.push(
                    &place,
                    ChangeKind::NowAlwaysNull,
                    Class::Breaking,
                    None,
                    Some(&Value::Null),
                    note,
                );
            }
        }
    }

    /// For each nullable field inside `v` (through objects): (some value is not null, every value
    /// is null).
    fn null_stats(&self, v: &Value, prefix: &str, stats: &mut BTreeMap<String, (bool, bool)>) {
        let Some(obj) = v.as_object() else {
            return;
        };
        for (k, fv) in obj {
            let path = format!("{prefix}/{}", escape_pointer(k));
            if self.contract.is_nullable(Some(k)) {
                let e = stats.entry(path.clone()).or_insert((false, true));
                e.0 |= !fv.is_null();
                e.1 &= fv.is_null();
            }
            if fv.is_object() {
                self.null_stats(fv, &path, stats);
            }
        }
    }

    /// Reports every value inside `v` (new to the candidate) that is outside its closed set.
    fn closed_sets(&mut self, v: &Value, at: &Place<'_>) {
        match v {
            Value::Object(o) => {
                for (k, fv) in o {
                    let place = Place {
                        pointer: format!("{}/{}", at.pointer, escape_pointer(k)),
                        field: Some(k),
                        record: at.record.clone(),
                    };
                    self.closed_sets(fv, &place);
                }
            }
            Value::Array(a) => {
                for (i, item) in a.iter().enumerate() {
                    let place = Place {
                        pointer: format!("{}/{i}", at.pointer),
                        field: at.field,
                        record: at.record.clone(),
                    };
                    self.closed_sets(item, &place);
                }
            }
            Value::String(s) if at.field.is_some_and(|f| JSON_TEXT_FIELDS.contains(&f)) => {
                if let Ok(inner) = serde_json::from_str::<Value>(s) {
                    let place = at.inner_json();
                    let mut w = Walker {
                        contract: self.contract,
                        out: Vec::new(),
                    };
                    w.closed_sets(&inner, &place);
                    self.out.extend(w.out);
                }
            }
            _ => {
                if let Some(set) = self.contract.outside(at.field, v) {
                    let note = allowed(set);
                    self.push(
                        at,
                        ChangeKind::OutsideClosedSet,
                        Class::Breaking,
                        None,
                        Some(v),
                        note,
                    );
                }
            }
        }
    }
}

fn allowed(set: &[Value]) -> String {
    let values: Vec<String> = set.iter().map(Value::to_string).collect();
    format!("allowed: {}", values.join(", "))
}

fn key_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The first of [`RECORD_KEYS`] that every record of both arrays carries as a string or number,
/// unique within each array.
fn record_key(ba: &[Value], ca: &[Value]) -> Option<&'static str> {
    if ba.is_empty() && ca.is_empty() {
        return None;
    }
    RECORD_KEYS.into_iter().find(|key| {
        [ba, ca].iter().all(|a| {
            let mut seen = BTreeSet::new();
            a.iter().all(|v| match v.get(*key) {
                Some(k @ (Value::String(_) | Value::Number(_))) => seen.insert(key_text(k)),
                _ => false,
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contract() -> Contract {
        let mall = json!({"properties": {
            "state": {"enum": [0, 1, 2]},
            "mallName": {"type": "string"},
            "edition": {"type": "integer"},
            "topTime": {"type": ["string", "null"]},
            "tags": {"type": "array"},
            "riskDisableTags": {"description": "open"},
        }});
        let seller = json!({"properties": {"storeName": {"type": ["string", "null"]}, "storeId": {"type": "string"}}});
        let payment = json!({"properties": {"status": {"type": ["string", "number"]}}});
        let block = json!({"properties": {"type": {"enum": ["text", "bigImg"]}}});
        Contract::from_schema_documents([&mall, &seller, &payment, &block])
    }

    fn kinds(changes: &[Change]) -> Vec<(ChangeKind, Class, String)> {
        changes
            .iter()
            .map(|c| (c.kind, c.class, c.pointer.clone()))
            .collect()
    }

    #[test]
    fn contract_reads_enums_types_and_open_fields_from_schemas() {
        let c = contract();
        assert_eq!(c.closed["state"], vec![json!(0), json!(1), json!(2)]);
        assert!(c.types["topTime"].contains("null"));
        assert!(c.open.contains("riskDisableTags"));
        assert!(!c.open.contains("mallName"));
    }

    #[test]
    fn identical_documents_have_no_change() {
        let v = json!({"data": [{"mallSn": "1", "state": 1, "tags": ["bill"]}]});
        assert!(compare(&v, &v, &contract()).is_empty());
    }

    #[test]
    fn removed_field_is_breaking_and_names_the_record() {
        let b = json!({"data": [{"mallSn": "7", "mallName": "x"}]});
        let c = json!({"data": [{"mallSn": "7"}]});
        let changes = compare(&b, &c, &contract());
        assert_eq!(
            kinds(&changes),
            vec![(
                ChangeKind::FieldRemoved,
                Class::Breaking,
                "/data/0/mallName".into()
            )]
        );
        assert_eq!(changes[0].record.as_deref(), Some("mallSn 7"));
    }

    #[test]
    fn retyped_field_is_breaking() {
        let b = json!({"data": [{"mallSn": "7", "edition": 3}]});
        let c = json!({"data": [{"mallSn": "7", "edition": "3"}]});
        let changes = compare(&b, &c, &contract());
        assert_eq!(
            kinds(&changes),
            vec![(
                ChangeKind::TypeChanged,
                Class::Breaking,
                "/data/0/edition".into()
            )]
        );
        assert!(
            changes[0].describe().contains("integer to string"),
            "{}",
            changes[0].describe()
        );
    }

    #[test]
    fn integer_now_written_as_a_float_is_a_type_change() {
        for written in ["3.0", "3e0"] {
            let candidate: Value =
                serde_json::from_str(&format!("{{\"edition\": {written}}}")).unwrap();
            let changes = compare(&json!({"edition": 3}), &candidate, &contract());
            assert_eq!(changes.len(), 1, "{written}");
            assert_eq!(changes[0].kind, ChangeKind::TypeChanged, "{written}");
            assert_eq!(changes[0].class, Class::Breaking, "{written}");
        }
    }

    #[test]
    fn integer_now_fractional_is_a_type_change() {
        let changes = compare(
            &json!({"edition": 3}),
            &json!({"edition": 3.5}),
            &contract(),
        );
        assert_eq!(changes[0].kind, ChangeKind::TypeChanged);
    }

    #[test]
    fn type_change_within_declared_types_is_data() {
        let b = json!({"status": 0});
        let c = json!({"status": "0"});
        let changes = compare(&b, &c, &contract());
        assert_eq!(
            kinds(&changes),
            vec![(ChangeKind::ValueChanged, Class::Data, "/status".into())]
        );
    }

    #[test]
    fn value_outside_closed_set_is_breaking_inside_it_data() {
        let b = json!({"data": [{"mallSn": "1", "state": 1}, {"mallSn": "2", "state": 1}]});
        let c = json!({"data": [{"mallSn": "1", "state": 3}, {"mallSn": "2", "state": 2}]});
        let changes = compare(&b, &c, &contract());
        assert_eq!(
            kinds(&changes),
            vec![
                (
                    ChangeKind::OutsideClosedSet,
                    Class::Breaking,
                    "/data/0/state".into()
                ),
                (
                    ChangeKind::ValueChanged,
                    Class::Data,
                    "/data/1/state".into()
                ),
            ]
        );
    }

    #[test]
    fn new_field_and_new_tag_are_additive() {
        let b = json!({"data": [{"mallSn": "1", "tags": ["bill"]}]});
        let c = json!({"data": [{"mallSn": "1", "tags": ["bill", "vipOnly"], "mallLogoUrl": "u"}]});
        let changes = compare(&b, &c, &contract());
        assert_eq!(
            kinds(&changes),
            vec![
                (
                    ChangeKind::ValueAdded,
                    Class::Additive,
                    "/data/0/tags".into()
                ),
                (
                    ChangeKind::FieldAdded,
                    Class::Additive,
                    "/data/0/mallLogoUrl".into()
                ),
            ]
        );
        assert!(!is_breaking(&changes));
    }

    #[test]
    fn tags_turning_into_numbers_is_a_type_change() {
        let changes = compare(
            &json!({"tags": ["bill"]}),
            &json!({"tags": [1, 2]}),
            &contract(),
        );
        assert_eq!(
            kinds(&changes),
            vec![(ChangeKind::TypeChanged, Class::Breaking, "/tags".into())]
        );
    }

    #[test]
    fn non_null_field_now_null_is_breaking() {
        let changes = compare(
            &json!({"mallName": "x"}),
            &json!({"mallName": null}),
            &contract(),
        );
        assert_eq!(
            kinds(&changes),
            vec![(ChangeKind::NowNull, Class::Breaking, "/mallName".into())]
        );
    }

    #[test]
    fn nullable_field_null_in_one_record_is_data_but_in_every_record_breaking() {
        let b = json!([
            {"mallSn": "1", "seller": {"storeName": "a"}},
            {"mallSn": "2", "seller": {"storeName": "b"}}
        ]);
        let one = json!([
            {"mallSn": "1", "seller": {"storeName": null}},
            {"mallSn": "2", "seller": {"storeName": "b"}}
        ]);
        let changes = compare(&b, &one, &contract());
        assert_eq!(
            kinds(&changes),
            vec![(
                ChangeKind::NowNull,
                Class::Data,
                "/0/seller/storeName".into()
            )]
        );
        let all = json!([
            {"mallSn": "1", "seller": {"storeName": null}},
            {"mallSn": "2", "seller": {"storeName": null}}
        ]);
        let changes = compare(&b, &all, &contract());
        assert!(changes.iter().any(|c| c.kind == ChangeKind::NowAlwaysNull
            && c.class == Class::Breaking
            && c.pointer == "/*/seller/storeName"));
    }

    #[test]
    fn records_are_matched_by_key_not_position() {
        let b = json!([{"spuId": "9", "title": "a"}, {"spuId": "8", "title": "b"}]);
        let c = json!([{"spuId": "8", "title": "b"}, {"spuId": "9", "title": "a"}]);
        let changes = compare(&b, &c, &contract());
        assert_eq!(
            kinds(&changes),
            vec![(ChangeKind::OrderChanged, Class::Data, "".into())]
        );
    }

    #[test]
    fn added_and_removed_records_are_data_unless_the_new_one_breaks_a_closed_set() {
        let b = json!([{"mallSn": "1", "state": 1}, {"mallSn": "2", "state": 1}]);
        let c = json!([{"mallSn": "1", "state": 1}, {"mallSn": "3", "state": 9}]);
        let changes = compare(&b, &c, &contract());
        assert_eq!(
            kinds(&changes),
            vec![
                (ChangeKind::RecordRemoved, Class::Data, "/1".into()),
                (ChangeKind::RecordAdded, Class::Data, "/1".into()),
                (
                    ChangeKind::OutsideClosedSet,
                    Class::Breaking,
                    "/1/state".into()
                ),
            ]
        );
    }

    #[test]
    fn arrays_without_record_keys_are_compared_by_index() {
        let b = json!({"xs": [{"a": 1}, {"a": 2}]});
        let c = json!({"xs": [{"a": 1}, {"a": 5}, {"a": 6}]});
        let changes = compare(&b, &c, &contract());
        assert_eq!(
            kinds(&changes),
            vec![
                (ChangeKind::ValueChanged, Class::Data, "/xs/1/a".into()),
                (ChangeKind::RecordAdded, Class::Data, "/xs/2".into()),
            ]
        );
    }

    #[test]
    fn content_block_type_inside_introduction_text_is_checked() {
        let b = json!({"productIntroduction": "[{\"type\":\"text\",\"text\":\"hi\"}]"});
        let c = json!({"productIntroduction": "[{\"type\":\"video\",\"text\":\"hi\"}]"});
        let changes = compare(&b, &c, &contract());
        assert_eq!(
            kinds(&changes),
            vec![(
                ChangeKind::OutsideClosedSet,
                Class::Breaking,
                "/productIntroduction#/0/type".into()
            )]
        );
    }

    #[test]
    fn open_typed_field_may_change_type() {
        let changes = compare(
            &json!({"riskDisableTags": null}),
            &json!({"riskDisableTags": ["x"]}),
            &contract(),
        );
        assert_eq!(
            kinds(&changes),
            vec![(
                ChangeKind::ValueChanged,
                Class::Data,
                "/riskDisableTags".into()
            )]
        );
    }

    #[test]
    fn groups_collapse_the_same_change_across_records_breaking_first() {
        let b = json!({"data": [{"mallSn": "1", "mallName": "a", "x": 1}, {"mallSn": "2", "mallName": "b", "x": 1}]});
        let c = json!({"data": [{"mallSn": "1", "x": 2}, {"mallSn": "2", "x": 2}], "extra": true});
        let groups = group(&compare(&b, &c, &contract()));
        let summary: Vec<(String, usize, Class)> = groups
            .iter()
            .map(|g| (g.pattern.clone(), g.count, g.class))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("/data/*/mallName".to_string(), 2, Class::Breaking),
                ("/extra".to_string(), 1, Class::Additive),
                ("/data/*/x".to_string(), 2, Class::Data),
            ]
        );
    }

    #[test]
    fn pointer_keys_are_escaped() {
        let changes = compare(&json!({"a/b": 1}), &json!({}), &contract());
        assert_eq!(changes[0].pointer, "/a~1b");
    }
}
