//! Streamed checking: a body whose root is a record array (the products response) is checked
//! record by record as it is parsed — schema, extra fields, the JSON inside each
//! `productIntroduction` — each record parsed to a small tree, checked, handed to the caller
//! (which keeps what later checks need, such as spuIds) and dropped. No tree of the whole body
//! is ever built; the findings are exactly those of [`SchemaSet::check_into`] on the tree.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde_json::Value;

use super::attribute::{Attributions, Start};
use super::extra::{Layouts, Step};
use super::validate::{Introduction, Place, Repeats, Violations};
use super::{RecordArray, Schema, SchemaSet, check_of};
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

/// What a streamed check saw of the body besides its findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streamed {
    /// The root is an array of this many records, each handed to the caller.
    Records(usize),
    /// The root is not an array, or the schema is not streamable: the body was checked as one
    /// tree (held only for the check); the items of a root array were still handed to the
    /// caller.
    Tree,
}

impl SchemaSet {
    /// [`SchemaSet::check_into`] of schema `name` on a JSON body given as bytes. When the
    /// schema's root is a record array and the body's root is an array, the records are parsed
    /// and checked one at a time and each is passed to `each(index, record)` before it is
    /// dropped; otherwise the body is parsed whole and checked as a tree (and the items of a
    /// root array are passed to `each` all the same).
    pub fn check_bytes_into(
        &self,
        name: &str,
        bytes: &[u8],
        out: &mut Findings,
        each: &mut dyn FnMut(usize, &Value),
    ) -> Result<Streamed, serde_json::Error> {
        let root_array = bytes
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'[');
        let Some((schema, array)) = self.streamable(name).filter(|_| root_array) else {
            let tree: Value = serde_json::from_slice(bytes)?;
            self.check_into(name, &tree, out);
            if let Some(items) = tree.as_array() {
                items.iter().enumerate().for_each(|(i, r)| each(i, r));
            }
            return Ok(Streamed::Tree);
        };
        let shapes = self.shapes.get_or_init(|| self.build_shapes());
        let cap = out.cap();
        let mut state = Stream {
            set: self,
            schema,
            array,
            items_shape: shapes.root_items(name),
            intro: name == "products-response",
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
        };
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let records = (&mut de).deserialize_seq(RecordsVisitor(&mut state))?;
        de.end()?;
        // The order of the tree path: schema findings, then extra fields, then introductions.
        let Stream {
            schema_found,
            extra_found,
            intro_found,
            ..
        } = state;
        out.append(schema_found);
        out.append(extra_found);
        out.append(intro_found);
        Ok(Streamed::Records(records))
    }

    /// The schema and its one record array at the root, when schema `name` can be streamed.
    fn streamable(&self, name: &str) -> Option<(&Schema, &RecordArray)> {
        let schema = self.schemas.get(name)?;
        let split = schema.split.as_ref()?;
        let [array] = split.arrays.as_slice() else {
            return None;
        };
        let keys = schema.document.as_object()?;
        let plain = array.path.is_empty()
            && keys
                .keys()
                .all(|k| STREAMABLE_ROOT_KEYWORDS.contains(&k.as_str()))
            && schema.document.get("type") == Some(&Value::String("array".to_string()));
        plain.then_some((schema, array))
    }
}

/// The state of one streamed check.
struct Stream<'s, 'e> {
    set: &'s SchemaSet,
    schema: &'s Schema,
    array: &'s RecordArray,
    /// The extra-fields shape of one record.
    items_shape: Option<usize>,
    /// Whether records carry a `productIntroduction` to check.
    intro: bool,
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

impl Stream<'_, '_> {
    fn record(&mut self, i: usize, record: Value) {
        (self.each)(i, &record);
        let set = self.set;
        if let Some(shape) = self.items_shape {
            let shapes = set.shapes.get_or_init(|| set.build_shapes());
            let mut path = vec![Step::Index(i)];
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
            let intro = Introduction::parse((format!("/{i}/productIntroduction"), text));
            set.introduction_findings(&intro, &mut self.intro_attributions, &mut self.intro_found);
            set.extra_intro_findings(&intro, &mut self.intro_layouts, &mut self.intro_found);
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
        set.record_violations(
            self.schema,
            self.array,
            start,
            (i, record),
            &mut String::new(),
            &mut self.repeats,
            &mut cx,
        );
        self.counts = std::mem::take(&mut cx.counts);
    }
}

/// Visits the root array, one record at a time.
struct RecordsVisitor<'a, 's, 'e>(&'a mut Stream<'s, 'e>);

impl<'de> Visitor<'de> for RecordsVisitor<'_, '_, '_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON array of records")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut i = 0;
        while let Some(record) = seq.next_element_seed(OneRecord)? {
            self.0.record(i, record);
            i += 1;
        }
        Ok(i)
    }
}

/// One record, parsed to its own small tree.
struct OneRecord;

impl<'de> DeserializeSeed<'de> for OneRecord {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        serde::Deserialize::deserialize(deserializer)
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
        }
    }

    #[test]
    fn non_array_roots_and_other_schemas_take_the_tree_path() {
        for (name, body) in [
            ("products-response", &br#"{"code":"9999"}"#[..]),
            ("products-response", b" 12 "),
            (
                "mall-list-response",
                br#"{"success":true,"code":"0000","msg":"","data":[{}]}"#,
            ),
        ] {
            let (streamed, tree, _) = both(name, body, 5);
            assert_eq!(said(&streamed), said(&tree), "{name}");
            let mut out = Findings::new(5);
            let how = SCHEMAS.check_bytes_into(name, body, &mut out, &mut |_, _| {});
            assert_eq!(how.unwrap(), Streamed::Tree);
        }
        let mut out = Findings::new(5);
        let how =
            SCHEMAS.check_bytes_into("products-response", b"[{}, {}]", &mut out, &mut |_, _| {});
        assert_eq!(how.unwrap(), Streamed::Records(2));
        assert!(!out.is_empty());
        assert!(
            SCHEMAS
                .check_bytes_into("products-response", b"[{}, ", &mut out, &mut |_, _| {})
                .is_err()
        );
        assert!(
            SCHEMAS
                .check_bytes_into("products-response", b"[] x", &mut out, &mut |_, _| {})
                .is_err()
        );
    }
}

#[cfg(test)]
mod timing {
    use super::*;
    use std::time::Instant;

    /// Where the time of a streamed check goes (run by hand: `-- --ignored --nocapture`).
    #[test]
    #[ignore = "prints timings; not a test of behaviour"]
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
                .filter(|r| schemas.schemas["product"].validator.is_valid(r))
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
