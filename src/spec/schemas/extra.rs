//! Extra fields: fields the schemas do not list, reported as information (an additive change),
//! found by a walk over shapes derived once from the schema documents.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde_json::Value;
use url::Url;

use super::validate::{Introduction, introductions};
use super::{INTRODUCTION_SCHEMA, MAX_FINDINGS, SchemaSet};
use crate::json::escape_pointer;
use crate::spec::catalog::EXTRA_FIELDS;
use crate::verdict::event::Finding;
use crate::verdict::findings::Findings;

/// Which fields a schema position lists, and where its fields and items lead: the schema
/// documents (through `$ref`, `allOf`, …) reduced once to what the extra-fields walk needs.
#[derive(Debug, Default)]
struct Shape {
    /// Some applicable schema node lists `properties` (so an unlisted field is extra).
    declares: bool,
    /// Listed fields and their shapes, sorted by name (a binary search is cheaper than
    /// hashing each key of every record).
    properties: Vec<(String, usize)>,
    /// Shape of array items, when a node has `items`.
    items: Option<usize>,
}

/// Every shape, and the root shape of each schema by name.
#[derive(Debug, Default)]
pub(super) struct Shapes {
    shapes: Vec<Shape>,
    roots: HashMap<String, usize>,
}

impl SchemaSet {
    /// Every property of `instance` that schema `name` does not list, as an `info.extra-fields`
    /// finding pointing at the field (an additive change, §2).
    ///
    /// Inside an object or a value whose schema declares no properties (open types such as
    /// the always-null fields), nothing is reported.
    pub fn extra_fields(&self, name: &str, instance: &Value) -> Vec<Finding> {
        let mut out = Findings::new(MAX_FINDINGS);
        self.extra_fields_root(name, instance, &mut out);
        let layouts = &mut Layouts::default();
        for intro in introductions(name, instance) {
            self.extra_intro_findings(&Introduction::parse(intro), layouts, &mut out);
        }
        out.into_vec()
    }

    /// Extra fields of the response itself (not of the JSON inside its texts).
    pub(super) fn extra_fields_root(&self, name: &str, instance: &Value, out: &mut Findings) {
        let shapes = self.shapes.get_or_init(|| self.build_shapes());
        let Some(&root) = shapes.roots.get(name) else {
            return;
        };
        shapes.extra_in(
            root,
            instance,
            &mut Vec::new(),
            &mut Layouts::default(),
            out,
        );
    }

    /// Extra fields inside the JSON held by a `productIntroduction` text.
    /// `layouts` may be shared by the introductions of one response.
    pub(super) fn extra_intro_findings(
        &self,
        intro: &Introduction<'_>,
        layouts: &mut Layouts,
        out: &mut Findings,
    ) {
        let shapes = self.shapes.get_or_init(|| self.build_shapes());
        let Some(&root) = shapes.roots.get(INTRODUCTION_SCHEMA) else {
            return;
        };
        let Ok(inner) = &intro.parsed else {
            return;
        };
        let at = intro.pointer.as_str();
        shapes.walk(root, inner, &mut Vec::new(), layouts, &mut |path, key| {
            out.push_with(&EXTRA_FIELDS, || {
                Finding::new(
                    &EXTRA_FIELDS,
                    at,
                    "only fields the spec lists",
                    format!("extra field `{key}`"),
                )
                .with_detail(format!(
                    "inner JSON pointer {}/{} inside the productIntroduction text",
                    pointer_of(path),
                    escape_pointer(key)
                ))
            });
        });
    }

    /// Reduces every schema to its field shapes (memoised by the set of schema nodes, so
    /// shared definitions and reference cycles are built once).
    pub(super) fn build_shapes(&self) -> Shapes {
        let mut shapes = Shapes::default();
        let mut memo: HashMap<Vec<usize>, usize> = HashMap::new();
        for (name, schema) in &self.schemas {
            let root = self.shape_of(
                vec![(schema.uri.clone(), &schema.document)],
                &mut shapes,
                &mut memo,
            );
            shapes.roots.insert(name.clone(), root);
        }
        shapes
    }

    fn shape_of(
        &self,
        nodes: Vec<(Url, &Value)>,
        shapes: &mut Shapes,
        memo: &mut HashMap<Vec<usize>, usize>,
    ) -> usize {
        let facets = self.facets(&nodes);
        let mut key: Vec<usize> = facets
            .iter()
            .map(|(_, n)| *n as *const Value as usize)
            .collect();
        key.sort_unstable();
        if let Some(&id) = memo.get(&key) {
            return id;
        }
        let id = shapes.shapes.len();
        shapes.shapes.push(Shape::default());
        memo.insert(key, id);
        let declares = facets.iter().any(|(_, f)| f.get("properties").is_some());
        let mut children: BTreeMap<&str, Vec<(Url, &Value)>> = BTreeMap::new();
        for (uri, facet) in &facets {
            if let Some(props) = facet.get("properties").and_then(Value::as_object) {
                for (k, child) in props {
                    children
                        .entry(k.as_str())
                        .or_default()
                        .push((uri.clone(), child));
                }
            }
        }
        let item_nodes: Vec<(Url, &Value)> = facets
            .iter()
            .filter_map(|(u, f)| f.get("items").map(|c| (u.clone(), c)))
            .collect();
        // BTreeMap order: sorted by name, as `Shape::field` searches.
        let properties = children
            .into_iter()
            .map(|(k, nodes)| (k.to_string(), self.shape_of(nodes, shapes, memo)))
            .collect();
        let items = (!item_nodes.is_empty()).then(|| self.shape_of(item_nodes, shapes, memo));
        shapes.shapes[id] = Shape {
            declares,
            properties,
            items,
        };
        id
    }
}

/// One step of the path to a value: a field or an array index.
#[derive(Debug, Clone, Copy)]
pub(super) enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The JSON Pointer of a path (built only for a finding).
pub(super) fn pointer_of(path: &[Step<'_>]) -> String {
    let mut pointer = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                pointer.push('/');
                pointer.push_str(&escape_pointer(k));
            }
            Step::Index(i) => {
                let _ = write!(pointer, "/{i}");
            }
        }
    }
    pointer
}

impl Shape {
    fn field(&self, key: &str) -> Option<usize> {
        self.properties
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()
            .map(|i| self.properties[i].1)
    }
}

impl Shapes {
    /// The root shape of schema `name`.
    pub(super) fn root(&self, name: &str) -> Option<usize> {
        self.roots.get(name).copied()
    }

    /// The shape of one record of the array at `path` (property names from the root; empty:
    /// the root array) of schema `name`.
    pub(super) fn record_items(&self, name: &str, path: &[String]) -> Option<usize> {
        let mut id = self.root(name)?;
        for key in path {
            id = self.shapes.get(id)?.field(key)?;
        }
        self.shapes.get(id).and_then(|s| s.items)
    }

    /// Extra fields of some members of a root object of shape `id`, in the order given: the
    /// object step of [`Shapes::walk`] over part of an object (a streamed envelope walks the
    /// members before its record array and those after it apart).
    pub(super) fn extra_members<'v>(
        &self,
        id: usize,
        members: impl Iterator<Item = (&'v String, &'v Value)>,
        layouts: &mut Layouts,
        out: &mut Findings,
    ) {
        let shape = &self.shapes[id];
        let mut path = Vec::new();
        for (key, value) in members {
            match shape.field(key) {
                // Scalars of a listed field have nothing to walk.
                Some(child) if value.is_object() || value.is_array() => {
                    path.push(Step::Key(key));
                    self.extra_in(child, value, &mut path, layouts, out);
                    path.pop();
                }
                Some(_) => {}
                None if shape.declares => out.push_with(&EXTRA_FIELDS, || {
                    Finding::new(
                        &EXTRA_FIELDS,
                        format!("/{}", escape_pointer(key)),
                        "only fields the spec lists",
                        format!("extra field `{key}`"),
                    )
                }),
                None => {}
            }
        }
    }

    /// Extra fields of `instance` (of shape `id`, at `path`) into `out`.
    pub(super) fn extra_in<'v>(
        &self,
        id: usize,
        instance: &'v Value,
        path: &mut Vec<Step<'v>>,
        layouts: &mut Layouts,
        out: &mut Findings,
    ) {
        self.walk(id, instance, path, layouts, &mut |path, key| {
            out.push_with(&EXTRA_FIELDS, || {
                Finding::new(
                    &EXTRA_FIELDS,
                    format!("{}/{}", pointer_of(path), escape_pointer(key)),
                    "only fields the spec lists",
                    format!("extra field `{key}`"),
                )
            });
        });
    }

    /// Calls `extra(path, key)` for every field of `instance` that its shape does not list.
    /// `path` is a reused stack of steps: a pointer string is only built for a finding.
    fn walk<'v>(
        &self,
        id: usize,
        instance: &'v Value,
        path: &mut Vec<Step<'v>>,
        layouts: &mut Layouts,
        extra: &mut dyn FnMut(&[Step<'v>], &str),
    ) {
        let shape = &self.shapes[id];
        match instance {
            Value::Object(map) => {
                // Records of one array mostly repeat one key order: once an object of this
                // shape had only listed fields, an object with the same keys in the same order
                // is known clean field by field (one comparison a key, no search).
                if let Some(layout) = layouts.take(id) {
                    let same = layout.len() == map.len()
                        && map.keys().zip(&layout).all(|(k, (l, _))| k == l);
                    if same {
                        for ((key, value), (_, child)) in map.iter().zip(&layout) {
                            if value.is_object() || value.is_array() {
                                path.push(Step::Key(key));
                                self.walk(*child, value, path, layouts, extra);
                                path.pop();
                            }
                        }
                        layouts.put(id, layout);
                        return;
                    }
                }
                let mut layout = Vec::with_capacity(map.len());
                let mut clean = true;
                for (key, value) in map {
                    match shape.field(key) {
                        Some(child) => {
                            layout.push((key.clone(), child));
                            // Scalars of a listed field have nothing to walk.
                            if value.is_object() || value.is_array() {
                                path.push(Step::Key(key));
                                self.walk(child, value, path, layouts, extra);
                                path.pop();
                            }
                        }
                        None => {
                            clean = false;
                            if shape.declares {
                                extra(path, key);
                            }
                        }
                    }
                }
                if clean {
                    layouts.put(id, layout);
                }
            }
            Value::Array(items) => {
                if let Some(child) = shape.items {
                    for (i, item) in items.iter().enumerate() {
                        if item.is_object() || item.is_array() {
                            path.push(Step::Index(i));
                            self.walk(child, item, path, layouts, extra);
                            path.pop();
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// The last all-listed key order seen per shape, with the shape of each field (see
/// [`Shapes::walk`]); kept for one walk, or across the records of one streamed body.
#[derive(Debug, Default)]
pub(super) struct Layouts(Vec<Option<Vec<(String, usize)>>>);

impl Layouts {
    fn take(&mut self, id: usize) -> Option<Vec<(String, usize)>> {
        self.0.get_mut(id).and_then(Option::take)
    }

    fn put(&mut self, id: usize, layout: Vec<(String, usize)>) {
        if self.0.len() <= id {
            self.0.resize_with(id + 1, || None);
        }
        self.0[id] = Some(layout);
    }
}
