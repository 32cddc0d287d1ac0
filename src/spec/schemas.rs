//! Loads and compiles the JSON Schemas in `schemas/` and turns violations into findings.
//! Each violation is blamed on the nearest `x-check` annotation on its path through the schemas.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::{self, Write as _};
use std::hash::Hasher as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, Registry, ValidationError, ValidationOptions, Validator};
use serde_json::Value;
use url::Url;

use crate::spec::catalog::{self, EXTRA_FIELDS, PRODUCT_INTRODUCTION};
use crate::verdict::check::Check;
use crate::verdict::event::Finding;
use crate::verdict::findings::Findings;

/// Base URI of the schema files; a file without `$id` is registered as `BASE_URI` + file name.
pub const BASE_URI: &str = "https://mallcheck.invalid/schemas/";

/// Annotation keyword naming the catalogue check a schema rule enforces.
pub const CHECK_KEYWORD: &str = "x-check";

/// Most findings one [`SchemaSet::validate`] call returns; a last finding notes the cut.
pub const MAX_FINDINGS: usize = 200;

/// Names (file stems) of the schemas mallcheck ships and [`SchemaSet::load_dir`] reads.
pub const SCHEMA_NAMES: [&str; 15] = [
    "common",
    "seller-identity",
    "mall",
    "seller",
    "order-statistics",
    "seller-statistics",
    "cross-city-payment",
    "mall-list-request",
    "mall-list-response",
    "product",
    "sku",
    "content-block",
    "product-introduction",
    "products-request",
    "products-response",
];

const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";
const INTRODUCTION_SCHEMA: &str = "product-introduction";

macro_rules! embedded {
    ($($name:literal),* $(,)?) => {
        [$(($name, include_str!(concat!("../../schemas/", $name, ".json")))),*]
    };
}

/// The shipped schema files, in the order of [`SCHEMA_NAMES`].
const EMBEDDED: [(&str, &str); 15] = embedded![
    "common",
    "seller-identity",
    "mall",
    "seller",
    "order-statistics",
    "seller-statistics",
    "cross-city-payment",
    "mall-list-request",
    "mall-list-response",
    "product",
    "sku",
    "content-block",
    "product-introduction",
    "products-request",
    "products-response",
];

/// A schema file that could not be loaded, parsed or compiled.
#[derive(Debug, thiserror::Error)]
#[error("cannot load schema {}", .file.display())]
pub struct SchemaError {
    /// The schema file (or the directory, for problems of the whole set).
    pub file: PathBuf,
    /// What went wrong.
    #[source]
    pub kind: SchemaErrorKind,
}

/// Why a schema file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SchemaErrorKind {
    /// The file does not exist.
    #[error("the file is missing")]
    Missing,
    /// The file exists but cannot be read.
    #[error("the file cannot be read")]
    Read(#[source] std::io::Error),
    /// The file is not JSON.
    #[error("the file is not valid JSON")]
    Json(#[source] serde_json::Error),
    /// The top level is not a JSON object.
    #[error("the top level is not a JSON object")]
    NotAnObject,
    /// `$schema` names a draft other than 2020-12.
    #[error("`$schema` is {0}, expected {DRAFT_2020_12}")]
    UnsupportedDraft(String),
    /// `$id` is not an absolute URI without fragment.
    #[error("`$id` {0:?} is not an absolute URI without fragment")]
    BadId(String),
    /// Two files claim the same `$id`.
    #[error("`$id` {0} is also used by another schema file")]
    DuplicateId(String),
    /// The document violates the draft 2020-12 meta-schema.
    #[error("the schema violates the draft 2020-12 meta-schema: {0}")]
    MetaSchema(String),
    /// An `x-check` annotation is not a string naming a catalogue check.
    #[error("`x-check` at {pointer:?} names no check of the catalogue: {value}")]
    UnknownCheck {
        /// JSON Pointer of the annotated schema.
        pointer: String,
        /// The annotation's value.
        value: String,
    },
    /// The top level holds rules but no `x-check`, so a violation could not be attributed.
    #[error("the top level has rules but no `x-check` annotation to attribute them to")]
    MissingCheck,
    /// A `$ref` cannot be resolved from the local files (nothing is fetched over the network).
    #[error("a reference cannot be resolved locally: {0}")]
    Reference(String),
    /// The schema does not compile.
    #[error("the schema does not compile: {0}")]
    Compile(String),
}

impl SchemaError {
    fn new(file: impl Into<PathBuf>, kind: SchemaErrorKind) -> Self {
        SchemaError {
            file: file.into(),
            kind,
        }
    }
}

/// One compiled schema file.
struct Schema {
    uri: Url,
    document: Value,
    validator: Validator,
    /// The same rules split at the document's record arrays, when it has any.
    split: Option<Split>,
}

/// A schema document split at its record arrays, so that a response of many records is
/// validated one record at a time: jsonschema collects every error of a call before it returns
/// any, and one call over a million broken records would hold tens of millions of errors.
struct Split {
    /// The document with the `items` of every record array replaced by `true`.
    shallow: Validator,
    /// The record arrays.
    arrays: Vec<RecordArray>,
}

/// An array reached from the document root through `properties` only, whose items are
/// validated one at a time.
struct RecordArray {
    /// Property names from the root to the array (empty: the root is the array).
    path: Vec<String>,
    /// The last `x-check` below the root down to the array node, if any.
    array_check: Option<&'static Check>,
    /// The `x-check` of the `items` node, if any.
    items_check: Option<&'static Check>,
    /// How one item is validated.
    items: Items,
}

impl RecordArray {
    /// The array in `instance`, when the instance has one there.
    fn locate<'v>(&self, instance: &'v Value) -> Option<&'v Vec<Value>> {
        let mut value = instance;
        for key in &self.path {
            value = value.as_object()?.get(key)?;
        }
        value.as_array()
    }
}

/// How the items of a record array are validated.
enum Items {
    /// `items` only refers to the root of this loaded schema (which may be split in turn).
    Document(String),
    /// Any other item schema, compiled on its own as a `$ref` to it.
    Inline {
        /// The compiled `{"$ref": …}`.
        validator: Validator,
        /// The `{"$ref": …}` document, where attributing its errors starts.
        wrapper: Value,
    },
}

/// A parsed schema file waiting to be compiled.
struct Source {
    file: PathBuf,
    name: String,
    uri: Url,
    document: Value,
}

/// The compiled schemas of one `schemas/` directory (or the shipped copy), built once and shared.
pub struct SchemaSet {
    schemas: BTreeMap<String, Schema>,
    names_by_uri: HashMap<String, String>,
    /// Field shapes for [`SchemaSet::extra_fields`], derived from the documents on first use.
    shapes: OnceLock<Shapes>,
}

/// Which fields a schema position lists, and where its fields and items lead: the schema
/// documents (through `$ref`, `allOf`, …) reduced once to what the extra-fields walk needs.
#[derive(Debug, Default)]
struct Shape {
    /// Some applicable schema node lists `properties` (so an unlisted field is extra).
    declares: bool,
    /// Listed fields and their shapes.
    properties: HashMap<String, usize>,
    /// Shape of array items, when a node has `items`.
    items: Option<usize>,
}

/// Every shape, and the root shape of each schema by name.
#[derive(Debug, Default)]
struct Shapes {
    shapes: Vec<Shape>,
    roots: HashMap<String, usize>,
}

impl fmt::Debug for SchemaSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaSet")
            .field("names", &self.names())
            .finish_non_exhaustive()
    }
}

impl SchemaSet {
    /// The schemas shipped inside the binary (the files of `schemas/` at build time).
    pub fn embedded() -> Result<SchemaSet, SchemaError> {
        let sources = EMBEDDED
            .iter()
            .map(|(name, text)| {
                let file = Path::new("schemas").join(format!("{name}.json"));
                parse_source(file, name, text)
            })
            .collect::<Result<Vec<_>, _>>()?;
        build(Path::new("schemas"), sources)
    }

    /// Loads the schema files named in [`SCHEMA_NAMES`] from `dir` (other files are ignored).
    pub fn load_dir(dir: &Path) -> Result<SchemaSet, SchemaError> {
        let sources = SCHEMA_NAMES
            .iter()
            .map(|name| {
                let file = dir.join(format!("{name}.json"));
                let text = std::fs::read_to_string(&file).map_err(|e| {
                    let kind = if e.kind() == std::io::ErrorKind::NotFound {
                        SchemaErrorKind::Missing
                    } else {
                        SchemaErrorKind::Read(e)
                    };
                    SchemaError::new(&file, kind)
                })?;
                parse_source(file, name, &text)
            })
            .collect::<Result<Vec<_>, _>>()?;
        build(dir, sources)
    }

    /// Schema names (file stems), sorted: `"mall"`, `"mall-list-response"`, ….
    pub fn names(&self) -> Vec<&str> {
        self.schemas.keys().map(String::as_str).collect()
    }

    /// Whether a schema of this name is loaded.
    pub fn has(&self, name: &str) -> bool {
        self.schemas.contains_key(name)
    }

    /// The JSON document of a schema.
    pub fn document(&self, name: &str) -> Option<&Value> {
        self.schemas.get(name).map(|s| &s.document)
    }

    /// One finding per violation of schema `name` by `instance`: at most [`MAX_FINDINGS`] of
    /// each check, then one finding per check saying how many more there were.
    ///
    /// For `products-response` and `product`, each `productIntroduction` text is also parsed
    /// and checked against `product-introduction` (§2.7). An unknown name yields no finding:
    /// callers check [`SchemaSet::has`] first (case files are validated at load time).
    pub fn validate(&self, name: &str, instance: &Value) -> Vec<Finding> {
        let mut out = Findings::new(MAX_FINDINGS);
        self.validate_into(name, instance, &mut out);
        out.into_vec()
    }

    /// [`SchemaSet::validate`] into a bounded collection: findings past its cap are counted,
    /// never built. Records of an array are validated one at a time, so memory does not grow
    /// with the number of broken records.
    pub fn validate_into(&self, name: &str, instance: &Value, out: &mut Findings) {
        let mut attributions = Attributions::default();
        self.validate_root(name, instance, &mut attributions, out);
        for intro in introductions(name, instance) {
            self.introduction_findings(&Introduction::parse(intro), &mut attributions, out);
        }
    }

    /// Schema findings of the response itself (not of the JSON inside its texts).
    fn validate_root(
        &self,
        name: &str,
        instance: &Value,
        attributions: &mut Attributions,
        out: &mut Findings,
    ) {
        let Some(schema) = self.schemas.get(name) else {
            return;
        };
        if schema.validator.is_valid(instance) {
            return;
        }
        let mut pointer = String::new();
        let mut cx = Violations::new(attributions, out, Place::Response);
        self.violations(schema, &EXTRA_FIELDS, instance, &mut pointer, &mut cx);
    }

    /// [`SchemaSet::validate`] then [`SchemaSet::extra_fields`], parsing the JSON held in each
    /// `productIntroduction` once for both.
    pub fn check(&self, name: &str, instance: &Value) -> Vec<Finding> {
        let mut out = Findings::new(MAX_FINDINGS);
        self.check_into(name, instance, &mut out);
        out.into_vec()
    }

    /// [`SchemaSet::check`] into a bounded collection.
    pub fn check_into(&self, name: &str, instance: &Value, out: &mut Findings) {
        let mut attributions = Attributions::default();
        self.validate_root(name, instance, &mut attributions, out);
        self.extra_fields_root(name, instance, out);
        // One introduction at a time: each parsed tree is dropped before the next is built.
        for (pointer, text) in introductions(name, instance) {
            let intro = Introduction::parse((pointer, text));
            self.introduction_findings(&intro, &mut attributions, out);
            self.extra_intro_findings(&intro, out);
        }
    }

    /// Every property of `instance` that schema `name` does not list, as an `info.extra-fields`
    /// finding pointing at the field (an additive change, §2).
    ///
    /// Inside an object or a value whose schema declares no properties (open types such as
    /// the always-null fields), nothing is reported.
    pub fn extra_fields(&self, name: &str, instance: &Value) -> Vec<Finding> {
        let mut out = Findings::new(MAX_FINDINGS);
        self.extra_fields_root(name, instance, &mut out);
        for intro in introductions(name, instance) {
            self.extra_intro_findings(&Introduction::parse(intro), &mut out);
        }
        out.into_vec()
    }

    /// Extra fields of the response itself (not of the JSON inside its texts).
    fn extra_fields_root(&self, name: &str, instance: &Value, out: &mut Findings) {
        let shapes = self.shapes.get_or_init(|| self.build_shapes());
        let Some(&root) = shapes.roots.get(name) else {
            return;
        };
        let mut pointer = String::new();
        shapes.walk(root, instance, &mut pointer, &mut |pointer, key| {
            out.push_with(&EXTRA_FIELDS, || {
                Finding::new(
                    &EXTRA_FIELDS,
                    format!("{pointer}/{}", escape_pointer(key)),
                    "only fields the spec lists",
                    format!("extra field `{key}`"),
                )
            });
        });
    }

    /// Extra fields inside the JSON held by a `productIntroduction` text.
    fn extra_intro_findings(&self, intro: &Introduction<'_>, out: &mut Findings) {
        let shapes = self.shapes.get_or_init(|| self.build_shapes());
        let Some(&root) = shapes.roots.get(INTRODUCTION_SCHEMA) else {
            return;
        };
        let Ok(inner) = &intro.parsed else {
            return;
        };
        let at = intro.pointer.as_str();
        shapes.walk(root, inner, &mut String::new(), &mut |pointer, key| {
            out.push_with(&EXTRA_FIELDS, || {
                Finding::new(
                    &EXTRA_FIELDS,
                    at,
                    "only fields the spec lists",
                    format!("extra field `{key}`"),
                )
                .with_detail(format!(
                    "inner JSON pointer {pointer}/{} inside the productIntroduction text",
                    escape_pointer(key)
                ))
            });
        });
    }

    /// Every violation of `schema` by `instance` into `cx`. A schema split at its record
    /// arrays is checked without them first, then one record at a time; `default` is the
    /// check in force where the schema was entered. `pointer` is the instance location so far
    /// (a reused buffer).
    fn violations(
        &self,
        schema: &Schema,
        default: &'static Check,
        instance: &Value,
        pointer: &mut String,
        cx: &mut Violations<'_>,
    ) {
        let start = Start {
            uri: &schema.uri,
            node: &schema.document,
            check: check_of(&schema.document).unwrap_or(default),
        };
        let Some(split) = &schema.split else {
            self.errors(&schema.validator, start, instance, pointer, cx);
            return;
        };
        self.errors(&split.shallow, start, instance, pointer, cx);
        for array in &split.arrays {
            let Some(records) = array.locate(instance) else {
                continue;
            };
            let len = pointer.len();
            for key in &array.path {
                pointer.push('/');
                pointer.push_str(&escape_pointer(key));
            }
            let base = pointer.len();
            let array_check = array.array_check.unwrap_or(start.check);
            let items_check = array.items_check.unwrap_or(array_check);
            let mut repeats = Repeats::default();
            for (i, record) in records.iter().enumerate() {
                let fingerprint = fingerprint(record);
                if repeats.replay(fingerprint, record, cx) {
                    continue;
                }
                let before = cx.counts.clone();
                pointer.truncate(base);
                let _ = write!(pointer, "/{i}");
                match &array.items {
                    Items::Document(name) => {
                        if let Some(target) = self.schemas.get(name)
                            && !target.validator.is_valid(record)
                        {
                            self.violations(target, items_check, record, pointer, cx);
                        }
                    }
                    Items::Inline { validator, wrapper } => {
                        let start = Start {
                            uri: &schema.uri,
                            node: wrapper,
                            check: array_check,
                        };
                        self.errors(validator, start, record, pointer, cx);
                    }
                }
                repeats.remember(fingerprint, record, &before, &cx.counts);
            }
            pointer.truncate(len);
        }
    }

    /// The errors of one validator on one value, each attributed to its check and handed to
    /// `cx` (which builds a finding only while the check is under its cap).
    fn errors(
        &self,
        validator: &Validator,
        start: Start<'_>,
        instance: &Value,
        pointer: &str,
        cx: &mut Violations<'_>,
    ) {
        if validator.is_valid(instance) {
            return;
        }
        for error in validator.iter_errors(instance) {
            // A custom keyword's evaluation path starts inside the document that defines it,
            // so it says nothing of the field: attribute it along the instance path instead.
            let check = if matches!(error.kind(), ValidationErrorKind::Custom { .. }) {
                self.attribute_at(start, error.instance_path().as_str())
            } else {
                cx.attributions
                    .get_or(start, error.evaluation_path().as_str(), || {
                        self.attribute(start, &error)
                    })
            };
            cx.push(check, &error, pointer);
        }
    }

    /// Reduces every schema to its field shapes (memoised by the set of schema nodes, so
    /// shared definitions and reference cycles are built once).
    fn build_shapes(&self) -> Shapes {
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

    /// Follows the error's evaluation path from `start` through the documents (and their
    /// `$ref`s) and returns the last `x-check` met before the failing keyword.
    fn attribute(&self, start: Start<'_>, error: &ValidationError<'_>) -> &'static Check {
        let mut best = start.check;
        let mut uri = start.uri.clone();
        let mut node = start.node;
        let path = error.evaluation_path().as_str();
        let segments: Vec<String> = pointer_segments(path).collect();
        let Some((_keyword, parents)) = segments.split_last() else {
            return best;
        };
        for segment in parents {
            let next = if segment == "$ref" || segment == "$dynamicRef" {
                node.get(segment)
                    .and_then(Value::as_str)
                    .and_then(|r| self.resolve(&uri, r))
            } else {
                child(node, segment).map(|n| (uri.clone(), n))
            };
            let Some((next_uri, next_node)) = next else {
                break;
            };
            uri = next_uri;
            node = next_node;
            if let Some(check) = check_of(node) {
                best = check;
            }
        }
        best
    }

    /// The last `x-check` met walking the schema along an instance pointer: for errors of
    /// keywords whose schema path does not show the `$ref`s that led to them (custom keywords).
    fn attribute_at(&self, start: Start<'_>, instance_path: &str) -> &'static Check {
        let mut best = start.check;
        let mut at = Some((start.uri.clone(), start.node));
        for segment in pointer_segments(instance_path) {
            let Some((uri, node)) = at else {
                break;
            };
            at = self.descend(&uri, node, &segment, &mut best, 0);
        }
        if let Some((uri, node)) = at {
            self.follow_refs(uri, node, &mut best);
        }
        best
    }

    /// Follows the `$ref`s of `node`, noting every `x-check` met.
    fn follow_refs<'s>(
        &'s self,
        mut uri: Url,
        mut node: &'s Value,
        best: &mut &'static Check,
    ) -> (Url, &'s Value) {
        for _ in 0..16 {
            if let Some(check) = check_of(node) {
                *best = check;
            }
            let Some((next_uri, next)) = node
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| self.resolve(&uri, r))
            else {
                break;
            };
            uri = next_uri;
            node = next;
        }
        (uri, node)
    }

    /// The subschema of `node` (after its `$ref`s) that applies to the member or item `segment`,
    /// looking into `allOf`/`anyOf`/`oneOf`/`then`/`else` branches.
    fn descend<'s>(
        &'s self,
        uri: &Url,
        node: &'s Value,
        segment: &str,
        best: &mut &'static Check,
        depth: usize,
    ) -> Option<(Url, &'s Value)> {
        if depth > 8 {
            return None;
        }
        let mut found = *best;
        let (uri, node) = self.follow_refs(uri.clone(), node, &mut found);
        let direct = node
            .get("properties")
            .and_then(|p| p.get(segment))
            .or_else(|| segment.parse::<usize>().ok().and(node.get("items")));
        if let Some(next) = direct {
            *best = check_of(next).unwrap_or(found);
            return Some((uri, next));
        }
        let branches = ["allOf", "anyOf", "oneOf"]
            .iter()
            .filter_map(|k| node.get(*k).and_then(Value::as_array))
            .flatten()
            .chain(["then", "else"].iter().filter_map(|k| node.get(*k)));
        for branch in branches {
            let mut inner = found;
            if let Some(hit) = self.descend(&uri, branch, segment, &mut inner, depth + 1) {
                *best = inner;
                return Some(hit);
            }
        }
        None
    }

    /// Resolves `reference` against `base` to a loaded document and the node it points at.
    fn resolve(&self, base: &Url, reference: &str) -> Option<(Url, &Value)> {
        let mut target = base.join(reference).ok()?;
        let fragment = percent_decode(target.fragment().unwrap_or(""));
        target.set_fragment(None);
        let name = self.names_by_uri.get(target.as_str())?;
        let document = &self.schemas.get(name)?.document;
        let node = if fragment.is_empty() {
            document
        } else {
            document.pointer(&fragment)?
        };
        Some((target, node))
    }

    /// Findings of the JSON held by one `productIntroduction` text: not JSON, or not valid
    /// against `product-introduction`.
    fn introduction_findings(
        &self,
        intro: &Introduction<'_>,
        attributions: &mut Attributions,
        out: &mut Findings,
    ) {
        let Some(schema) = self.schemas.get(INTRODUCTION_SCHEMA) else {
            return;
        };
        let pointer = intro.pointer.as_str();
        let inner = match &intro.parsed {
            Ok(inner) => inner,
            Err(e) => {
                out.push_with(&PRODUCT_INTRODUCTION, || {
                    Finding::new(
                        &PRODUCT_INTRODUCTION,
                        pointer,
                        "a JSON array of content blocks",
                        compact(&Value::String(intro.text.to_string())),
                    )
                    .with_detail(format!("the text is not JSON: {e}"))
                });
                return;
            }
        };
        if schema.validator.is_valid(inner) {
            return;
        }
        let mut cx = Violations::new(attributions, out, Place::Introduction(pointer));
        self.violations(schema, &EXTRA_FIELDS, inner, &mut String::new(), &mut cx);
    }

    /// Every schema node that applies alongside `nodes`: through `$ref`, `allOf`, `anyOf`,
    /// `oneOf`, `then` and `else` (each node once, so reference cycles end).
    fn facets<'a>(&'a self, nodes: &[(Url, &'a Value)]) -> Vec<(Url, &'a Value)> {
        let mut seen: HashSet<*const Value> = HashSet::new();
        let mut stack: Vec<(Url, &'a Value)> = nodes.to_vec();
        let mut facets = Vec::new();
        while let Some((uri, node)) = stack.pop() {
            if !node.is_object() || !seen.insert(node as *const Value) {
                continue;
            }
            if let Some(target) = node
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| self.resolve(&uri, r))
            {
                stack.push(target);
            }
            for key in ["allOf", "anyOf", "oneOf"] {
                if let Some(list) = node.get(key).and_then(Value::as_array) {
                    stack.extend(list.iter().map(|s| (uri.clone(), s)));
                }
            }
            for key in ["then", "else"] {
                if let Some(sub) = node.get(key) {
                    stack.push((uri.clone(), sub));
                }
            }
            facets.push((uri, node));
        }
        facets
    }
}

impl Shapes {
    /// Calls `extra(pointer, key)` for every field of `instance` that its shape does not
    /// list. `pointer` is a reused buffer: a pointer string is only built for a finding.
    fn walk(
        &self,
        id: usize,
        instance: &Value,
        pointer: &mut String,
        extra: &mut dyn FnMut(&str, &str),
    ) {
        let shape = &self.shapes[id];
        let len = pointer.len();
        match instance {
            Value::Object(map) => {
                for (key, value) in map {
                    match shape.properties.get(key) {
                        Some(&child) => {
                            pointer.push('/');
                            pointer.push_str(&escape_pointer(key));
                            self.walk(child, value, pointer, extra);
                            pointer.truncate(len);
                        }
                        None if shape.declares => extra(pointer, key),
                        None => {}
                    }
                }
            }
            Value::Array(items) => {
                if let Some(child) = shape.items {
                    for (i, item) in items.iter().enumerate() {
                        let _ = write!(pointer, "/{i}");
                        self.walk(child, item, pointer, extra);
                        pointer.truncate(len);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Where attributing an error starts: the schema node the validator was built from and the
/// check in force there.
#[derive(Clone, Copy)]
struct Start<'s> {
    uri: &'s Url,
    node: &'s Value,
    check: &'static Check,
}

/// Checks already attributed during one validation, by start and evaluation path: a million
/// records breaking the same rule are attributed once.
#[derive(Default)]
struct Attributions {
    by_start: HashMap<(usize, usize), HashMap<String, &'static Check>>,
    /// The last attribution: errors of one keyword come in a row.
    last: Option<((usize, usize), String, &'static Check)>,
}

impl Attributions {
    fn get_or(
        &mut self,
        start: Start<'_>,
        path: &str,
        attribute: impl FnOnce() -> &'static Check,
    ) -> &'static Check {
        let key = (
            std::ptr::from_ref(start.node) as usize,
            std::ptr::from_ref(start.check) as usize,
        );
        if let Some((k, p, check)) = &self.last
            && *k == key
            && p == path
        {
            return check;
        }
        let paths = self.by_start.entry(key).or_default();
        let check = match paths.get(path) {
            Some(check) => *check,
            None => {
                let check = attribute();
                paths.insert(path.to_string(), check);
                check
            }
        };
        self.last = Some((key, path.to_string(), check));
        check
    }
}

/// Records of one array already validated, with the violations each produced: a record equal
/// to one of them breaks the same rules, so once those checks keep no more findings it is only
/// counted (a broken record repeated a million times is validated once). The last
/// [`Repeats::MAX`] distinct records validated are remembered.
#[derive(Default)]
struct Repeats<'v> {
    seen: Vec<(u64, &'v Value, CheckCounts)>,
    /// The entry replaced next once `seen` is full.
    next: usize,
}

impl<'v> Repeats<'v> {
    const MAX: usize = 8;

    /// Counts the violations of `record` without validating it, when it repeats a remembered
    /// record whose checks are all full; false when it must be validated.
    fn replay(&self, fingerprint: u64, record: &Value, cx: &mut Violations<'_>) -> bool {
        let Some((_, _, counts)) = self
            .seen
            .iter()
            .find(|(f, seen, _)| *f == fingerprint && *seen == record)
        else {
            return false;
        };
        if counts.iter().any(|(check, _)| cx.out.wants(check)) {
            return false;
        }
        for &(check, n) in counts {
            cx.omit(check, n);
        }
        true
    }

    /// Remembers what `record` produced: the growth of the counts from `before` to `after`.
    fn remember(
        &mut self,
        fingerprint: u64,
        record: &'v Value,
        before: &[(&'static Check, usize)],
        after: &[(&'static Check, usize)],
    ) {
        if self
            .seen
            .iter()
            .any(|(f, seen, _)| *f == fingerprint && *seen == record)
        {
            return;
        }
        let produced = after
            .iter()
            .filter_map(|&(check, n)| {
                let was = before
                    .iter()
                    .find(|(c, _)| std::ptr::eq(*c, check))
                    .map_or(0, |(_, n)| *n);
                (n > was).then_some((check, n - was))
            })
            .collect();
        let entry = (fingerprint, record, produced);
        if self.seen.len() < Self::MAX {
            self.seen.push(entry);
        } else {
            self.seen[self.next] = entry;
            self.next = (self.next + 1) % Self::MAX;
        }
    }
}

/// A hash of a JSON value's content (key order included), to find repeated records cheaply.
fn fingerprint(value: &Value) -> u64 {
    fn feed(value: &Value, h: &mut std::collections::hash_map::DefaultHasher) {
        match value {
            Value::Null => h.write_u8(0),
            Value::Bool(b) => {
                h.write_u8(1);
                h.write_u8(u8::from(*b));
            }
            Value::Number(n) => {
                h.write_u8(2);
                h.write(n.to_string().as_bytes());
            }
            Value::String(s) => {
                h.write_u8(3);
                h.write(s.as_bytes());
                h.write_u8(0xff);
            }
            Value::Array(items) => {
                h.write_u8(4);
                h.write_usize(items.len());
                items.iter().for_each(|v| feed(v, h));
            }
            Value::Object(map) => {
                h.write_u8(5);
                h.write_usize(map.len());
                for (k, v) in map {
                    h.write(k.as_bytes());
                    h.write_u8(0xff);
                    feed(v, h);
                }
            }
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    feed(value, &mut h);
    h.finish()
}

/// Where the validated value sits: the response itself, or the JSON inside the
/// `productIntroduction` text at this pointer of the response.
#[derive(Clone, Copy)]
enum Place<'p> {
    Response,
    Introduction(&'p str),
}

/// A number per check.
type CheckCounts = Vec<(&'static Check, usize)>;

/// Where violations go while one value is validated.
struct Violations<'a> {
    attributions: &'a mut Attributions,
    out: &'a mut Findings,
    place: Place<'a>,
    /// Violations so far per check (kept or not), to learn what one record produced.
    counts: CheckCounts,
}

impl<'a> Violations<'a> {
    fn new(attributions: &'a mut Attributions, out: &'a mut Findings, place: Place<'a>) -> Self {
        Violations {
            attributions,
            out,
            place,
            counts: Vec::new(),
        }
    }

    fn count(&mut self, check: &'static Check, n: usize) {
        match self
            .counts
            .iter_mut()
            .find(|(c, _)| std::ptr::eq(*c, check))
        {
            Some((_, total)) => *total += n,
            None => self.counts.push((check, n)),
        }
    }

    /// Counts `n` violations of `check` that are not kept.
    fn omit(&mut self, check: &'static Check, n: usize) {
        self.count(check, n);
        self.out.omit(check, n);
    }

    /// Adds the finding of `error` under `check`; `prefix` locates the validated value.
    fn push(&mut self, check: &'static Check, error: &ValidationError<'_>, prefix: &str) {
        self.count(check, 1);
        let place = self.place;
        self.out.push_with(check, || {
            let (expected, actual) = describe(error);
            let at = format!("{prefix}{}", error.instance_path().as_str());
            match place {
                Place::Response => Finding::new(check, at, expected, actual),
                Place::Introduction(pointer) => {
                    let at = if at.is_empty() {
                        "the root".to_string()
                    } else {
                        at
                    };
                    Finding::new(check, pointer, format!("{expected} at inner {at}"), actual)
                        .with_detail(format!(
                            "inner JSON pointer {at} inside the productIntroduction text"
                        ))
                }
            }
        });
    }
}

fn parse_source(file: PathBuf, name: &str, text: &str) -> Result<Source, SchemaError> {
    let document: Value = serde_json::from_str(text)
        .map_err(|e| SchemaError::new(&file, SchemaErrorKind::Json(e)))?;
    let Some(root) = document.as_object() else {
        return Err(SchemaError::new(&file, SchemaErrorKind::NotAnObject));
    };
    if let Some(draft) = root.get("$schema")
        && draft.as_str().map(|d| d.trim_end_matches('#')) != Some(DRAFT_2020_12)
    {
        return Err(SchemaError::new(
            &file,
            SchemaErrorKind::UnsupportedDraft(draft.to_string()),
        ));
    }
    let base = Url::parse(BASE_URI).expect("BASE_URI is an absolute URL");
    let uri = match root.get("$id") {
        None => base
            .join(&format!("{name}.json"))
            .expect("a schema name is a valid relative URL"),
        Some(id) => id
            .as_str()
            .and_then(|s| Url::parse(s).ok())
            .filter(|u| u.fragment().is_none_or(str::is_empty))
            .map(|mut u| {
                u.set_fragment(None);
                u
            })
            .ok_or_else(|| SchemaError::new(&file, SchemaErrorKind::BadId(id.to_string())))?,
    };
    if let Err(e) = jsonschema::meta::validate(&document) {
        let at = e.instance_path().as_str().to_string();
        let message = if at.is_empty() {
            e.to_string()
        } else {
            format!("{e} at {at}")
        };
        return Err(SchemaError::new(
            &file,
            SchemaErrorKind::MetaSchema(message),
        ));
    }
    check_annotations(&document, "").map_err(|kind| SchemaError::new(&file, kind))?;
    let has_rules = root.keys().any(|k| {
        !matches!(
            k.as_str(),
            "$schema" | "$id" | "$defs" | "$comment" | "title" | "description" | CHECK_KEYWORD
        )
    });
    if has_rules && check_of(&document).is_none() {
        return Err(SchemaError::new(&file, SchemaErrorKind::MissingCheck));
    }
    Ok(Source {
        file,
        name: name.to_string(),
        uri,
        document,
    })
}

/// Every `x-check` in `node` must be a string naming a catalogue check.
fn check_annotations(node: &Value, pointer: &str) -> Result<(), SchemaErrorKind> {
    match node {
        Value::Object(map) => {
            for (key, value) in map {
                if key == CHECK_KEYWORD {
                    if value.as_str().and_then(catalog::find).is_none() {
                        return Err(SchemaErrorKind::UnknownCheck {
                            pointer: pointer.to_string(),
                            value: value.to_string(),
                        });
                    }
                } else if !is_data_keyword(key) {
                    check_annotations(value, &format!("{pointer}/{}", escape_pointer(key)))?;
                }
            }
            Ok(())
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, item)| check_annotations(item, &format!("{pointer}/{i}"))),
        _ => Ok(()),
    }
}

/// Keywords whose values are instance data, not subschemas.
fn is_data_keyword(key: &str) -> bool {
    matches!(key, "enum" | "const" | "examples" | "default")
}

fn build(origin: &Path, sources: Vec<Source>) -> Result<SchemaSet, SchemaError> {
    let mut names_by_uri = HashMap::new();
    for source in &sources {
        if names_by_uri
            .insert(source.uri.to_string(), source.name.clone())
            .is_some()
        {
            return Err(SchemaError::new(
                &source.file,
                SchemaErrorKind::DuplicateId(source.uri.to_string()),
            ));
        }
    }
    let validators = {
        let registry = Registry::new()
            .extend(sources.iter().map(|s| (s.uri.as_str(), &s.document)))
            .and_then(|b| b.prepare())
            .map_err(|e| SchemaError::new(origin, SchemaErrorKind::Reference(e.to_string())))?;
        let mut compiled: BTreeMap<usize, (Validator, Option<Split>)> = BTreeMap::new();
        for i in compile_order(&sources, &names_by_uri) {
            let s = &sources[i];
            let validator = options(&registry)
                .with_base_uri(s.uri.as_str())
                .build(&s.document)
                .map_err(|e| {
                    let kind = match e.kind() {
                        ValidationErrorKind::Referencing(r) => {
                            SchemaErrorKind::Reference(r.to_string())
                        }
                        _ => SchemaErrorKind::Compile(e.to_string()),
                    };
                    SchemaError::new(&s.file, kind)
                })?;
            let split = build_split(&registry, s, &names_by_uri);
            compiled.insert(i, (validator, split));
        }
        compiled
    };
    let schemas = sources
        .into_iter()
        .zip(validators.into_values())
        .map(|(s, (validator, split))| {
            let schema = Schema {
                uri: s.uri,
                document: s.document,
                validator,
                split,
            };
            (s.name, schema)
        })
        .collect();
    Ok(SchemaSet {
        shapes: OnceLock::new(),
        schemas,
        names_by_uri,
    })
}

/// Splits a document at its record arrays (see [`Split`]); `None` when it has none, or when
/// the split cannot be built (the whole document is then validated at once, as before).
fn build_split(
    registry: &Registry<'_>,
    source: &Source,
    names_by_uri: &HashMap<String, String>,
) -> Option<Split> {
    let mut found = Vec::new();
    record_arrays(
        &source.document,
        &mut Vec::new(),
        &mut String::new(),
        None,
        &mut found,
    );
    // A reference into an `items` node from inside the document would meet `true` instead.
    let mut refs = Vec::new();
    collect_refs(&source.document, &mut refs);
    found.retain(|(_, items_pointer, _)| {
        !refs.iter().any(|r| {
            r.strip_prefix('#')
                .is_some_and(|f| percent_decode(f).starts_with(items_pointer.as_str()))
        })
    });
    if found.is_empty() {
        return None;
    }
    let mut shallow = source.document.clone();
    let mut arrays = Vec::new();
    for (path, items_pointer, array_check) in found {
        let node = source.document.pointer(&items_pointer)?;
        let items = match document_target(&source.uri, node, names_by_uri) {
            Some(name) => Items::Document(name),
            None => {
                let wrapper = serde_json::json!({
                    "$ref": format!("{}#{}", source.uri, fragment_encode(&items_pointer))
                });
                let validator = options(registry).build(&wrapper).ok()?;
                Items::Inline { validator, wrapper }
            }
        };
        *shallow.pointer_mut(&items_pointer)? = Value::Bool(true);
        arrays.push(RecordArray {
            path,
            array_check,
            items_check: check_of(node),
            items,
        });
    }
    // Beside the original (same directory, so relative references still resolve), under a
    // name of its own so that it does not clash with the original in the registry.
    let mut uri = source.uri.clone();
    uri.set_path(&format!("{}.records", source.uri.path()));
    shallow
        .as_object_mut()?
        .insert("$id".to_string(), Value::String(uri.to_string()));
    let shallow = options(registry)
        .with_base_uri(uri.as_str())
        .build(&shallow)
        .ok()?;
    Some(Split { shallow, arrays })
}

/// Every array of `node` reached through `properties` only whose `items` is a schema object
/// that applies to every item alike (no `prefixItems`, no `unevaluatedItems`): its property
/// path, the pointer of its `items` node and the last `x-check` on the way (below the root).
fn record_arrays(
    node: &Value,
    path: &mut Vec<String>,
    pointer: &mut String,
    check: Option<&'static Check>,
    out: &mut Vec<(Vec<String>, String, Option<&'static Check>)>,
) {
    let Some(map) = node.as_object() else {
        return;
    };
    let check = if pointer.is_empty() {
        check
    } else {
        check_of(node).or(check)
    };
    if map.get("items").is_some_and(Value::is_object)
        && !map.contains_key("prefixItems")
        && !map.contains_key("unevaluatedItems")
    {
        out.push((path.clone(), format!("{pointer}/items"), check));
    }
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        for (key, child) in properties {
            let len = pointer.len();
            pointer.push_str("/properties/");
            pointer.push_str(&escape_pointer(key));
            path.push(key.clone());
            record_arrays(child, path, pointer, check, out);
            path.pop();
            pointer.truncate(len);
        }
    }
}

/// The loaded schema whose root `items_node` refers to, when the node holds nothing but that
/// reference and annotations.
fn document_target(
    base: &Url,
    items_node: &Value,
    names_by_uri: &HashMap<String, String>,
) -> Option<String> {
    let map = items_node.as_object()?;
    let annotations_only = map.keys().all(|k| {
        matches!(
            k.as_str(),
            "$ref" | "description" | "title" | "$comment" | CHECK_KEYWORD
        )
    });
    if !annotations_only {
        return None;
    }
    let mut target = base.join(map.get("$ref")?.as_str()?).ok()?;
    if target.fragment().is_some_and(|f| !f.is_empty()) {
        return None;
    }
    target.set_fragment(None);
    names_by_uri.get(target.as_str()).cloned()
}

/// Percent-encodes a JSON Pointer for a URI fragment.
fn fragment_encode(pointer: &str) -> String {
    let mut out = String::with_capacity(pointer.len());
    for b in pointer.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Source indexes ordered so that a file comes after the files it references (cycles are cut),
/// which makes a compile error name the file that holds the mistake.
fn compile_order(sources: &[Source], names_by_uri: &HashMap<String, String>) -> Vec<usize> {
    let index: HashMap<&str, usize> = sources
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let dependencies: Vec<Vec<usize>> = sources
        .iter()
        .map(|s| {
            let mut refs = Vec::new();
            collect_refs(&s.document, &mut refs);
            refs.iter()
                .filter_map(|r| {
                    let mut target = s.uri.join(r).ok()?;
                    target.set_fragment(None);
                    let name = names_by_uri.get(target.as_str())?;
                    index.get(name.as_str()).copied()
                })
                .collect()
        })
        .collect();
    fn visit(i: usize, deps: &[Vec<usize>], seen: &mut [bool], order: &mut Vec<usize>) {
        if seen[i] {
            return;
        }
        seen[i] = true;
        for &d in &deps[i] {
            visit(d, deps, seen, order);
        }
        order.push(i);
    }
    let mut seen = vec![false; sources.len()];
    let mut order = Vec::with_capacity(sources.len());
    for i in 0..sources.len() {
        visit(i, &dependencies, &mut seen, &mut order);
    }
    order
}

/// Every `$ref` string under `node`.
fn collect_refs<'a>(node: &'a Value, out: &mut Vec<&'a str>) {
    match node {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(r)) => out.push(r),
                    (k, _) if is_data_keyword(k) => {}
                    _ => collect_refs(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_refs(item, out)),
        _ => {}
    }
}

fn options<'a>(registry: &'a Registry<'a>) -> ValidationOptions<'a> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .with_registry(registry)
        .with_format("datetime", is_datetime)
        .with_format("digit-string", is_digit_string)
        .with_format("decimal-text", is_decimal_text)
        .with_keyword(EXACT_LONG_KEYWORD, exact_long_factory)
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
}

/// Keyword of `common.json#/$defs/long`: the value is a Long exactly, on both sides.
pub const EXACT_LONG_KEYWORD: &str = "x-exact-long";

/// 2^63 as a float; negated, the float that every integer from -2^63 - 1 down to
/// -2^63 - 1024 rounds to.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// Whether a JSON number passes the one place `minimum` cannot judge exactly. An integer
/// literal within the range is read as an i64 or u64 and compared exactly by `minimum` and
/// `maximum`, and so is every float but one: -2^63 read as a float. The literal
/// `-9223372036854775808` is read as an i64, so a float -2^63 stands for a literal below the
/// range (`-9223372036854775809` … `-9223372036854776832` all round to it) or a float notation
/// whose exact value is lost.
pub fn is_exact_long(value: &Value) -> bool {
    match value {
        Value::Number(n) if n.is_f64() => n.as_f64() != Some(-TWO_POW_63),
        _ => true,
    }
}

struct ExactLong;

impl<'i> jsonschema::Keyword<'i> for ExactLong {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        if is_exact_long(instance) {
            Ok(())
        } else {
            Err(ValidationError::custom(
                "an integer from -9223372036854775808 to 9223372036854775807 (Long), exactly",
            ))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        is_exact_long(instance)
    }
}

fn exact_long_factory<'a>(
    _parent: &'a serde_json::Map<String, Value>,
    value: &'a Value,
    _path: jsonschema::paths::Location,
) -> Result<Box<dyn for<'i> jsonschema::Keyword<'i>>, ValidationError<'a>> {
    if value.as_bool() == Some(true) {
        Ok(Box::new(ExactLong))
    } else {
        Err(ValidationError::schema(format!(
            "the '{EXACT_LONG_KEYWORD}' keyword must be true"
        )))
    }
}

/// `YYYY-MM-DD HH:MM:SS` naming a real calendar second (§2.2 ctime, topTime); no `T`, zone
/// or leap second.
pub fn is_datetime(s: &str) -> bool {
    let bytes = s.as_bytes();
    let shape_ok = bytes.len() == 19
        && bytes.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            10 => *b == b' ',
            13 | 16 => *b == b':',
            _ => b.is_ascii_digit(),
        });
    shape_ok
        && s[17..] < *"60"
        && chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").is_ok()
}

/// A non-empty string of ASCII digits (§2.2 mallSn, templateId; §2.7 spuId; §2.8 skuId).
pub fn is_digit_string(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Decimal text such as `12`, `3.50` or `-1.5` (§2.4 totalQuantity).
pub fn is_decimal_text(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let (whole, fraction) = match digits.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (digits, None),
    };
    is_digit_string(whole) && fraction.is_none_or(is_digit_string)
}

/// The catalogue check named by a node's `x-check`.
fn check_of(node: &Value) -> Option<&'static Check> {
    node.get(CHECK_KEYWORD)
        .and_then(Value::as_str)
        .and_then(catalog::find)
}

fn child<'a>(node: &'a Value, segment: &str) -> Option<&'a Value> {
    match node {
        Value::Object(map) => map.get(segment),
        Value::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    }
}

/// The `(pointer, text)` of each string `productIntroduction` of a product or products list.
/// One `productIntroduction` text of a response, parsed once.
struct Introduction<'a> {
    pointer: String,
    text: &'a str,
    parsed: Result<Value, serde_json::Error>,
}

impl<'a> Introduction<'a> {
    fn parse((pointer, text): (String, &'a str)) -> Self {
        Introduction {
            pointer,
            text,
            parsed: serde_json::from_str(text),
        }
    }
}

fn introductions<'a>(name: &str, instance: &'a Value) -> Vec<(String, &'a str)> {
    let intro = |product: &'a Value| product.get("productIntroduction").and_then(Value::as_str);
    match name {
        "product" => intro(instance)
            .map(|t| vec![("/productIntroduction".to_string(), t)])
            .unwrap_or_default(),
        "products-response" => instance
            .as_array()
            .map(|products| {
                products
                    .iter()
                    .enumerate()
                    .filter_map(|(i, p)| intro(p).map(|t| (format!("/{i}/productIntroduction"), t)))
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The expected phrase and the actual value of a violation.
fn describe(error: &ValidationError<'_>) -> (String, String) {
    let actual = || compact(error.instance());
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let field = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            (format!("required field `{field}`"), "missing".to_string())
        }
        ValidationErrorKind::Enum { options } => (format!("one of {}", list(options)), actual()),
        ValidationErrorKind::Constant { expected_value } => {
            (format!("equal to {}", compact(expected_value)), actual())
        }
        ValidationErrorKind::Type { kind } => (format!("type {}", types(kind)), actual()),
        ValidationErrorKind::Format { format } => {
            (format!("format {}", format_phrase(format)), actual())
        }
        ValidationErrorKind::Minimum { limit } => (format!("at least {limit}"), actual()),
        ValidationErrorKind::Maximum { limit } => (format!("at most {limit}"), actual()),
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            (format!("greater than {limit}"), actual())
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => (format!("less than {limit}"), actual()),
        ValidationErrorKind::MaxItems { limit } => (format!("at most {limit} items"), actual()),
        ValidationErrorKind::MinItems { limit } => (format!("at least {limit} items"), actual()),
        ValidationErrorKind::MaxLength { limit } => {
            (format!("at most {limit} characters"), actual())
        }
        ValidationErrorKind::MinLength { limit } => {
            (format!("at least {limit} characters"), actual())
        }
        ValidationErrorKind::Pattern { pattern } => (format!("matching {pattern}"), actual()),
        ValidationErrorKind::Custom { message, .. } => (message.clone(), actual()),
        ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. } => {
            ("one of the allowed shapes".to_string(), actual())
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            ("exactly one of the allowed shapes".to_string(), actual())
        }
        _ => (error.to_string(), actual()),
    }
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| value.to_string())
}

/// `[0, 1, 2]` for an enum's options.
fn list(options: &Value) -> String {
    match options.as_array() {
        Some(items) => {
            let parts: Vec<String> = items.iter().map(compact).collect();
            format!("[{}]", parts.join(", "))
        }
        None => compact(options),
    }
}

fn types(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => t.to_string(),
        TypeKind::Multiple(set) => {
            let (null, mut names): (Vec<String>, Vec<String>) =
                set.iter().map(|t| t.to_string()).partition(|t| t == "null");
            names.extend(null);
            names.join(" or ")
        }
    }
}

fn format_phrase(format: &str) -> String {
    match format {
        "datetime" => "datetime YYYY-MM-DD HH:MM:SS".to_string(),
        "digit-string" => "digit-string (non-empty ASCII digits)".to_string(),
        "decimal-text" => "decimal-text (e.g. 12 or 3.50)".to_string(),
        other => other.to_string(),
    }
}

/// Unescaped segments of a JSON Pointer.
fn pointer_segments(pointer: &str) -> impl Iterator<Item = String> + '_ {
    pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Decodes `%XX` escapes of a URI fragment; malformed escapes are kept as they are.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::catalog::*;
    use serde_json::json;

    fn set() -> SchemaSet {
        SchemaSet::embedded().expect("shipped schemas load")
    }

    /// A mall record with every field of §2.2 (incl. the 15 always-null ones), built from the
    /// spec's tables.
    fn mall() -> Value {
        json!({
            "mallSn": "1001234567",
            "signature": "c2lnbmF0dXJl",
            "mallName": "南京路店",
            "state": 1,
            "stateDesc": "online",
            "internalState": 1,
            "internalStateDesc": "enabled",
            "isDelete": 0,
            "deleteTime": "",
            "crossCityPaymentStatus": 0,
            "crossCityPaymentStatusDesc": "pending activation",
            "appType": 0,
            "industryCode": "retail",
            "crossCityPayments": [
                {"payToolCode": 2, "payToolCodeDesc": "Alipay-type wallet", "status": 0, "statusDesc": "pending activation"}
            ],
            "isShowBills": true,
            "templateId": "42",
            "edition": 1,
            "tags": ["bill", "onlineStore"],
            "isNeedSkipPushComplainToRisk": false,
            "seller": {
                "merchantSn": "M0001",
                "merchantId": "8f9e7c1a-0000-4000-8000-000000000001",
                "merchantName": "Merchant One",
                "storeSn": "S0001",
                "storeId": "store-1",
                "storeName": null,
                "terminalSn": "T0001",
                "crossCityTerminalSn": null
            },
            "orderStatistics": {"totalNum": 12, "totalQuantity": "3.50", "totalAmount": 125000},
            "sellerStatisticsModel": null,
            "ctime": "2024-02-29 23:59:59",
            "topTime": null,
            "riskDisableTags": null,
            "riskDisableReasons": null,
            "riskDisableParams": null,
            "supportedFeatureCodes": null,
            "customChargeItemEnabled": null,
            "productNameVoiceBroadcastEnabled": null,
            "serviceResourceNameVoiceBroadcastEnabled": null,
            "voucherRedeemEnabled": null,
            "scanGunEnabled": null,
            "supportedServiceResourceSnList": null,
            "preSetReopenTime": null,
            "mallBillSplittingEnabled": null,
            "serialConfigState": null,
            "serialConfigId": null,
            "taskId": null
        })
    }

    fn envelope(malls: Vec<Value>) -> Value {
        json!({"success": true, "code": "0000", "msg": "processed successfully", "data": malls})
    }

    fn introduction() -> String {
        json!([
            {"text": "Fresh tea", "type": "text"},
            {"type": "bigImg", "img_list": ["https://img.invalid/a.png", "https://img.invalid/b.png"]}
        ])
        .to_string()
    }

    fn product() -> Value {
        json!({
            "spuId": "9007199254740993",
            "converImages": [],
            "productIntroduction": introduction(),
            "title": "Tea",
            "skuResults": [
                {"skuId": "1", "skuName": null, "skuTitle": "Large", "price": 1200, "stockType": 0, "quantity": null},
                {"skuId": "2", "skuName": "small", "skuTitle": null, "price": 800, "stockType": 1, "quantity": null}
            ]
        })
    }

    /// Applies `edit` to a copy of `base` at the JSON Pointer `at` (`None` removes the field).
    fn with(base: &Value, at: &str, edit: Option<Value>) -> Value {
        let mut value = base.clone();
        let (parent, key) = at.rsplit_once('/').expect("pointer has a parent");
        let target = value.pointer_mut(parent).expect("parent exists");
        match (target, edit) {
            (Value::Object(map), Some(v)) => {
                map.insert(key.to_string(), v);
            }
            (Value::Object(map), None) => {
                map.shift_remove(key);
            }
            (Value::Array(items), Some(v)) => items[key.parse::<usize>().expect("index")] = v,
            (Value::Array(items), None) => {
                items.remove(key.parse::<usize>().expect("index"));
            }
            _ => panic!("parent of {at} is not a container"),
        }
        value
    }

    fn ids(findings: &[Finding]) -> Vec<&'static str> {
        findings.iter().map(|f| f.check.id).collect()
    }

    #[test]
    fn shipped_schemas_load_with_every_name() {
        let set = set();
        assert_eq!(set.names().len(), SCHEMA_NAMES.len());
        for name in SCHEMA_NAMES {
            assert!(set.has(name), "{name}");
            assert!(set.document(name).is_some(), "{name}");
        }
        assert!(!set.has("nope"));
    }

    #[test]
    fn schema_set_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<SchemaSet>();
    }

    #[test]
    fn conformant_mall_list_and_products_pass() {
        let set = set();
        let list = envelope(vec![mall()]);
        assert!(
            set.validate("mall-list-response", &list).is_empty(),
            "{:#?}",
            set.validate("mall-list-response", &list)
        );
        assert!(set.extra_fields("mall-list-response", &list).is_empty());
        let products = json!([product()]);
        assert!(
            set.validate("products-response", &products).is_empty(),
            "{:#?}",
            set.validate("products-response", &products)
        );
        assert!(set.extra_fields("products-response", &products).is_empty());
        assert!(set.validate("product", &product()).is_empty());
    }

    #[test]
    fn each_broken_mall_rule_is_attributed_to_its_check() {
        let set = set();
        let m = mall();
        let stats = json!({"orderFailNum": 3});
        let rows: Vec<(&str, Value, &str, &Check)> = vec![
            (
                "state out of range",
                with(&m, "/state", Some(json!(3))),
                "/data/0/state",
                &MALL_STATE,
            ),
            (
                "state as string",
                with(&m, "/state", Some(json!("1"))),
                "/data/0/state",
                &MALL_STATE,
            ),
            (
                "internalState 2",
                with(&m, "/internalState", Some(json!(2))),
                "/data/0/internalState",
                &MALL_INTERNAL_STATE,
            ),
            (
                "isDelete 2",
                with(&m, "/isDelete", Some(json!(2))),
                "/data/0/isDelete",
                &MALL_IS_DELETE,
            ),
            (
                "deleteTime set while not deleted",
                with(&m, "/deleteTime", Some(json!("2024-01-01 00:00:00"))),
                "/data/0/deleteTime",
                &MALL_DELETE_TIME,
            ),
            (
                "mallSn with letters",
                with(&m, "/mallSn", Some(json!("10a1"))),
                "/data/0/mallSn",
                &MALL_DIGIT_STRINGS,
            ),
            (
                "mallSn empty",
                with(&m, "/mallSn", Some(json!(""))),
                "/data/0/mallSn",
                &MALL_DIGIT_STRINGS,
            ),
            (
                "mallSn as number",
                with(&m, "/mallSn", Some(json!(1001))),
                "/data/0/mallSn",
                &MALL_DIGIT_STRINGS,
            ),
            (
                "templateId with space",
                with(&m, "/templateId", Some(json!("4 2"))),
                "/data/0/templateId",
                &MALL_DIGIT_STRINGS,
            ),
            (
                "ctime impossible date",
                with(&m, "/ctime", Some(json!("2024-13-32 25:61:61"))),
                "/data/0/ctime",
                &MALL_DATETIME,
            ),
            (
                "ctime ISO form",
                with(&m, "/ctime", Some(json!("2024-01-01T10:00:00Z"))),
                "/data/0/ctime",
                &MALL_DATETIME,
            ),
            (
                "ctime not a leap day",
                with(&m, "/ctime", Some(json!("2023-02-29 10:00:00"))),
                "/data/0/ctime",
                &MALL_DATETIME,
            ),
            (
                "topTime with zone",
                with(&m, "/topTime", Some(json!("2024-01-01 10:00:00+08:00"))),
                "/data/0/topTime",
                &MALL_DATETIME,
            ),
            (
                "always-null field missing",
                with(&m, "/taskId", None),
                "/data/0",
                &MALL_ALWAYS_NULL_FIELDS,
            ),
            (
                "tags not an array",
                with(&m, "/tags", Some(json!("bill"))),
                "/data/0/tags",
                &MALL_TAGS,
            ),
            (
                "tag not a string",
                with(&m, "/tags", Some(json!(["bill", 7]))),
                "/data/0/tags/1",
                &MALL_TAGS,
            ),
            (
                "cross-city status boolean",
                with(&m, "/crossCityPayments/0/status", Some(json!(false))),
                "/data/0/crossCityPayments/0/status",
                &MALL_CROSS_CITY,
            ),
            (
                "cross-city payToolCode missing",
                with(&m, "/crossCityPayments/0/payToolCode", None),
                "/data/0/crossCityPayments/0",
                &MALL_CROSS_CITY,
            ),
            (
                "crossCityPayments an object",
                with(&m, "/crossCityPayments", Some(json!({}))),
                "/data/0/crossCityPayments",
                &MALL_CROSS_CITY,
            ),
            (
                "seller storeSn null",
                with(&m, "/seller/storeSn", Some(Value::Null)),
                "/data/0/seller/storeSn",
                &MALL_SELLER,
            ),
            (
                "seller missing terminalSn",
                with(&m, "/seller/terminalSn", None),
                "/data/0/seller",
                &MALL_SELLER,
            ),
            (
                "seller null",
                with(&m, "/seller", Some(Value::Null)),
                "/data/0/seller",
                &MALL_SELLER,
            ),
            (
                "totalNum as string",
                with(&m, "/orderStatistics/totalNum", Some(json!("12"))),
                "/data/0/orderStatistics/totalNum",
                &MALL_ORDER_STATISTICS,
            ),
            (
                "totalNum fraction",
                with(&m, "/orderStatistics/totalNum", Some(json!(1.5))),
                "/data/0/orderStatistics/totalNum",
                &MALL_ORDER_STATISTICS,
            ),
            (
                "totalAmount above i64",
                with(
                    &m,
                    "/orderStatistics/totalAmount",
                    Some(json!(9223372036854775808u64)),
                ),
                "/data/0/orderStatistics/totalAmount",
                &MALL_ORDER_STATISTICS,
            ),
            (
                "totalQuantity not decimal",
                with(&m, "/orderStatistics/totalQuantity", Some(json!("3,50"))),
                "/data/0/orderStatistics/totalQuantity",
                &MALL_ORDER_STATISTICS,
            ),
            (
                "totalQuantity as number",
                with(&m, "/orderStatistics/totalQuantity", Some(json!(3.5))),
                "/data/0/orderStatistics/totalQuantity",
                &MALL_ORDER_STATISTICS,
            ),
            (
                "sellerStatisticsModel a string",
                with(&m, "/sellerStatisticsModel", Some(json!("x"))),
                "/data/0/sellerStatisticsModel",
                &MALL_SELLER_STATISTICS,
            ),
            (
                "orderFailNum missing",
                with(&m, "/sellerStatisticsModel", Some(json!({}))),
                "/data/0/sellerStatisticsModel",
                &MALL_SELLER_STATISTICS,
            ),
            (
                "orderFailNum as string",
                with(
                    &with(&m, "/sellerStatisticsModel", Some(stats)),
                    "/sellerStatisticsModel/orderFailNum",
                    Some(json!("3")),
                ),
                "/data/0/sellerStatisticsModel/orderFailNum",
                &MALL_SELLER_STATISTICS,
            ),
            (
                "mallName missing",
                with(&m, "/mallName", None),
                "/data/0",
                &MALL_FIELDS,
            ),
            (
                "appType as string",
                with(&m, "/appType", Some(json!("0"))),
                "/data/0/appType",
                &MALL_FIELDS,
            ),
            (
                "isShowBills as number",
                with(&m, "/isShowBills", Some(json!(1))),
                "/data/0/isShowBills",
                &MALL_FIELDS,
            ),
            ("mall is not an object", json!(7), "/data/0", &MALL_FIELDS),
        ];
        for (why, broken, pointer, check) in rows {
            let findings = set.validate("mall-list-response", &envelope(vec![broken]));
            assert_eq!(findings.len(), 1, "{why}: {findings:#?}");
            assert_eq!(findings[0].check.id, check.id, "{why}: {findings:#?}");
            assert_eq!(findings[0].pointer, pointer, "{why}");
        }
    }

    #[test]
    fn each_broken_envelope_rule_is_attributed_to_its_check() {
        let set = set();
        let ok = envelope(vec![mall()]);
        let rows: Vec<(&str, Value, &Check)> = vec![
            ("not an object", json!([]), &LIST_ENVELOPE),
            ("msg missing", with(&ok, "/msg", None), &LIST_ENVELOPE),
            (
                "success as string",
                json!({"success": "false", "code": "E1", "msg": "x"}),
                &LIST_ENVELOPE,
            ),
            (
                "msg as number",
                with(&ok, "/msg", Some(json!(0))),
                &LIST_ENVELOPE,
            ),
            (
                "success with another code",
                with(&ok, "/code", Some(json!("0001"))),
                &LIST_SUCCESS_CODE,
            ),
            (
                "success without data",
                with(&ok, "/data", None),
                &LIST_SUCCESS_CODE,
            ),
            (
                "success with null data",
                with(&ok, "/data", Some(Value::Null)),
                &LIST_SUCCESS_CODE,
            ),
            (
                "code 0000 with success false",
                json!({"success": false, "code": "0000", "msg": "x"}),
                &LIST_SUCCESS_CODE,
            ),
            (
                "failure with records",
                json!({"success": false, "code": "E1", "msg": "x", "data": [mall()]}),
                &LIST_FAILURE_NO_DATA,
            ),
        ];
        for (why, broken, check) in rows {
            let findings = set.validate("mall-list-response", &broken);
            assert_eq!(ids(&findings), vec![check.id], "{why}: {findings:#?}");
        }
    }

    #[test]
    fn failure_envelopes_without_records_pass() {
        let set = set();
        for data in [None, Some(Value::Null), Some(json!([]))] {
            let mut body = json!({"success": false, "code": "E401", "msg": "unauthorized"});
            if let Some(d) = data {
                body["data"] = d;
            }
            assert!(
                set.validate("mall-list-response", &body).is_empty(),
                "{body}"
            );
        }
    }

    #[test]
    fn each_broken_product_rule_is_attributed_to_its_check() {
        let set = set();
        let p = product();
        let rows: Vec<(&str, Value, &str, &Check)> = vec![
            ("not an array", json!({"data": []}), "", &PRODUCTS_SHAPE),
            (
                "spuId with letters",
                json!([with(&p, "/spuId", Some(json!("12x")))]),
                "/0/spuId",
                &PRODUCT_DIGIT_STRINGS,
            ),
            (
                "skuId empty",
                json!([with(&p, "/skuResults/0/skuId", Some(json!("")))]),
                "/0/skuResults/0/skuId",
                &PRODUCT_DIGIT_STRINGS,
            ),
            (
                "title missing",
                json!([with(&p, "/title", None)]),
                "/0",
                &PRODUCT_FIELDS,
            ),
            (
                "converImages null",
                json!([with(&p, "/converImages", Some(Value::Null))]),
                "/0/converImages",
                &PRODUCT_FIELDS,
            ),
            (
                "skuResults missing",
                json!([with(&p, "/skuResults", None)]),
                "/0",
                &PRODUCT_FIELDS,
            ),
            ("product not an object", json!(["x"]), "/0", &PRODUCT_FIELDS),
            (
                "productIntroduction an array",
                json!([with(&p, "/productIntroduction", Some(json!([])))]),
                "/0/productIntroduction",
                &PRODUCT_INTRODUCTION,
            ),
            (
                "productIntroduction not JSON",
                json!([with(&p, "/productIntroduction", Some(json!("<p>hi</p>")))]),
                "/0/productIntroduction",
                &PRODUCT_INTRODUCTION,
            ),
            (
                "productIntroduction not an array",
                json!([with(&p, "/productIntroduction", Some(json!("{}")))]),
                "/0/productIntroduction",
                &PRODUCT_INTRODUCTION,
            ),
            (
                "unknown block type",
                json!([with(
                    &p,
                    "/productIntroduction",
                    Some(json!(r#"[{"type":"video"}]"#))
                )]),
                "/0/productIntroduction",
                &PRODUCT_INTRODUCTION,
            ),
            (
                "text block without text",
                json!([with(
                    &p,
                    "/productIntroduction",
                    Some(json!(r#"[{"type":"text"}]"#))
                )]),
                "/0/productIntroduction",
                &PRODUCT_INTRODUCTION,
            ),
            (
                "bigImg block without img_list",
                json!([with(
                    &p,
                    "/productIntroduction",
                    Some(json!(r#"[{"type":"bigImg"}]"#))
                )]),
                "/0/productIntroduction",
                &PRODUCT_INTRODUCTION,
            ),
            (
                "img_list with a number",
                json!([with(
                    &p,
                    "/productIntroduction",
                    Some(json!(r#"[{"type":"bigImg","img_list":[1]}]"#))
                )]),
                "/0/productIntroduction",
                &PRODUCT_INTRODUCTION,
            ),
            (
                "block without type",
                json!([with(
                    &p,
                    "/productIntroduction",
                    Some(json!(r#"[{"text":"x"}]"#))
                )]),
                "/0/productIntroduction",
                &PRODUCT_INTRODUCTION,
            ),
            (
                "price as string",
                json!([with(&p, "/skuResults/0/price", Some(json!("12")))]),
                "/0/skuResults/0/price",
                &SKU_FIELDS,
            ),
            (
                "stockType missing",
                json!([with(&p, "/skuResults/0/stockType", None)]),
                "/0/skuResults/0",
                &SKU_FIELDS,
            ),
            (
                "quantity missing",
                json!([with(&p, "/skuResults/0/quantity", None)]),
                "/0/skuResults/0",
                &SKU_FIELDS,
            ),
            (
                "skuName a number",
                json!([with(&p, "/skuResults/0/skuName", Some(json!(1)))]),
                "/0/skuResults/0/skuName",
                &SKU_FIELDS,
            ),
        ];
        for (why, broken, pointer, check) in rows {
            let findings = set.validate("products-response", &broken);
            assert_eq!(findings.len(), 1, "{why}: {findings:#?}");
            assert_eq!(findings[0].check.id, check.id, "{why}: {findings:#?}");
            assert_eq!(findings[0].pointer, pointer, "{why}");
        }
    }

    #[test]
    fn inner_introduction_findings_name_the_inner_pointer() {
        let set = set();
        let broken = with(
            &product(),
            "/productIntroduction",
            Some(json!(r#"[{"type":"text","text":"a"},{"type":"video"}]"#)),
        );
        let findings = set.validate("product", &broken);
        assert_eq!(ids(&findings), vec![PRODUCT_INTRODUCTION.id]);
        assert_eq!(findings[0].pointer, "/productIntroduction");
        assert!(
            findings[0].expected.contains("/1/type"),
            "{}",
            findings[0].expected
        );
        assert!(
            findings[0].detail.contains("/1/type"),
            "{}",
            findings[0].detail
        );
    }

    #[test]
    fn tolerated_variations_give_no_contract_finding() {
        let set = set();
        let m = mall();
        let rows: Vec<(&str, Value)> = vec![
            (
                "unknown tag",
                with(&m, "/tags", Some(json!(["bill", "brandNew"]))),
            ),
            ("no tags", with(&m, "/tags", Some(json!([])))),
            (
                "status as string",
                with(&m, "/crossCityPayments/0/status", Some(json!("0"))),
            ),
            (
                "status 7",
                with(&m, "/crossCityPayments/0/status", Some(json!(7))),
            ),
            (
                "crossCityPaymentStatus 5",
                with(&m, "/crossCityPaymentStatus", Some(json!(5))),
            ),
            (
                "payToolCode 9",
                with(&m, "/crossCityPayments/0/payToolCode", Some(json!(9))),
            ),
            (
                "payToolCode 3",
                with(&m, "/crossCityPayments/0/payToolCode", Some(json!(3))),
            ),
            ("appType 1", with(&m, "/appType", Some(json!(1)))),
            (
                "always-null field with a value",
                with(&m, "/taskId", Some(json!({"id": 5}))),
            ),
            (
                "always-null field with a list",
                with(&m, "/riskDisableTags", Some(json!(["a"]))),
            ),
            (
                "totalNum above 2^53",
                with(
                    &m,
                    "/orderStatistics/totalNum",
                    Some(json!(9007199254740993u64)),
                ),
            ),
            (
                "totalAmount i64 max",
                with(&m, "/orderStatistics/totalAmount", Some(json!(i64::MAX))),
            ),
            (
                "negative decimal quantity",
                with(&m, "/orderStatistics/totalQuantity", Some(json!("-12"))),
            ),
            (
                "seller statistics set",
                with(
                    &m,
                    "/sellerStatisticsModel",
                    Some(json!({"orderFailNum": 0})),
                ),
            ),
            (
                "pinned",
                with(&m, "/topTime", Some(json!("2024-05-01 08:00:00"))),
            ),
            (
                "store names set",
                with(
                    &with(&m, "/seller/storeName", Some(json!("店"))),
                    "/seller/crossCityTerminalSn",
                    Some(json!("CT1")),
                ),
            ),
            (
                "deleted with a time",
                with(
                    &with(&m, "/isDelete", Some(json!(1))),
                    "/deleteTime",
                    Some(json!("2024-01-01 00:00:00")),
                ),
            ),
            (
                "deleted without a time",
                with(&m, "/isDelete", Some(json!(1))),
            ),
            (
                "state 0 offline 2",
                with(
                    &with(&m, "/state", Some(json!(0))),
                    "/internalState",
                    Some(json!(0)),
                ),
            ),
            (
                "no cross-city payments",
                with(&m, "/crossCityPayments", Some(json!([]))),
            ),
        ];
        for (why, variant) in rows {
            let body = envelope(vec![variant]);
            let findings = set.validate("mall-list-response", &body);
            assert!(findings.is_empty(), "{why}: {findings:#?}");
            let extra = set.extra_fields("mall-list-response", &body);
            assert!(extra.is_empty(), "{why}: {extra:#?}");
        }
    }

    #[test]
    fn extra_fields_are_only_info_findings() {
        let set = set();
        let m = with(&mall(), "/newField", Some(json!(1)));
        let m = with(&m, "/seller/region", Some(json!("east")));
        let m = with(&m, "/crossCityPayments/0/limit", Some(json!(5)));
        let mut body = envelope(vec![m]);
        body["traceId"] = json!("abc");
        assert!(set.validate("mall-list-response", &body).is_empty());
        let extra = set.extra_fields("mall-list-response", &body);
        let pointers: Vec<&str> = extra.iter().map(|f| f.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            vec![
                "/data/0/crossCityPayments/0/limit",
                "/data/0/seller/region",
                "/data/0/newField",
                "/traceId"
            ]
        );
        assert!(extra.iter().all(|f| f.check.id == EXTRA_FIELDS.id));
    }

    #[test]
    fn extra_fields_inside_open_values_and_blocks() {
        let set = set();
        let p = with(&product(), "/skuResults/0/quantity", Some(json!({"n": 1})));
        let p = with(&p, "/converImages", Some(json!([{"url": "x"}])));
        let p = with(
            &p,
            "/productIntroduction",
            Some(json!(r#"[{"type":"text","text":"a","style":"b"}]"#)),
        );
        let body = json!([p]);
        assert!(set.validate("products-response", &body).is_empty());
        let extra = set.extra_fields("products-response", &body);
        assert_eq!(extra.len(), 1, "{extra:#?}");
        assert_eq!(extra[0].pointer, "/0/productIntroduction");
        assert!(extra[0].detail.contains("/0/style"), "{}", extra[0].detail);
    }

    #[test]
    fn expected_and_actual_phrases_read_well() {
        let set = set();
        let m = with(&with(&mall(), "/state", Some(json!(9))), "/ctime", None);
        let m = with(&m, "/topTime", Some(json!("2024-13-32 25:61:61")));
        let findings = set.validate("mall", &m);
        let phrases: Vec<(&str, &str)> = findings
            .iter()
            .map(|f| (f.expected.as_str(), f.actual.as_str()))
            .collect();
        assert!(phrases.contains(&("one of [0, 1, 2]", "9")), "{phrases:?}");
        assert!(
            phrases.contains(&("required field `ctime`", "missing")),
            "{phrases:?}"
        );
        assert!(
            phrases.contains(&(
                "format datetime YYYY-MM-DD HH:MM:SS",
                "\"2024-13-32 25:61:61\""
            )),
            "{phrases:?}"
        );
        let typed = set.validate("sku", &json!({"skuId": "1", "skuName": 1, "skuTitle": null, "price": 1, "stockType": 1, "quantity": null}));
        assert_eq!(typed[0].expected, "type string or null");
    }

    #[test]
    fn long_ranges_are_exact_on_both_sides() {
        let set = set();
        // The literal text matters: read as a float, these round to -2^63.
        let at = |field: &str, literal: &str| -> Value {
            let mut m = mall();
            m["sellerStatisticsModel"] = json!({"orderFailNum": 0});
            let text = envelope(vec![m]).to_string();
            let needle = match field {
                "orderFailNum" => "\"orderFailNum\":0",
                "totalNum" => "\"totalNum\":",
                _ => "\"totalAmount\":",
            };
            let start = text.find(needle).expect("field in the text") + needle.len()
                - usize::from(field == "orderFailNum");
            let end = start + text[start..].find([',', '}']).expect("the number ends");
            serde_json::from_str(&format!("{}{literal}{}", &text[..start], &text[end..]))
                .expect("valid JSON")
        };
        for (field, check) in [
            ("totalNum", &MALL_ORDER_STATISTICS),
            ("totalAmount", &MALL_ORDER_STATISTICS),
            ("orderFailNum", &MALL_SELLER_STATISTICS),
        ] {
            for below in [
                "-9223372036854775809",
                "-9223372036854776832",
                "-9223372036854776833",
            ] {
                let f = set.validate("mall-list-response", &at(field, below));
                assert_eq!(f.len(), 1, "{field} = {below}: {f:?}");
                assert_eq!(f[0].check.id, check.id, "{field} = {below}");
                assert!(f[0].pointer.ends_with(field), "{}", f[0].pointer);
            }
            for above in ["9223372036854775808", "18446744073709551616"] {
                let f = set.validate("mall-list-response", &at(field, above));
                assert_eq!(f.len(), 1, "{field} = {above}: {f:?}");
            }
            for inside in ["-9223372036854775808", "9223372036854775807", "0"] {
                let f = set.validate("mall-list-response", &at(field, inside));
                assert!(f.is_empty(), "{field} = {inside}: {f:?}");
            }
        }
    }

    #[test]
    fn findings_are_capped_with_a_note() {
        let set = set();
        let broken = with(&mall(), "/state", Some(json!(9)));
        let body = envelope(vec![broken; MAX_FINDINGS + 5]);
        let findings = set.validate("mall-list-response", &body);
        assert_eq!(findings.len(), MAX_FINDINGS + 1);
        assert_eq!(findings[MAX_FINDINGS].actual, "5 more not shown");
    }

    /// Every violation as (check, pointer, expected, actual), from one call over the whole
    /// instance: what validation gave before records were validated one at a time.
    fn whole(set: &SchemaSet, name: &str, instance: &Value) -> Vec<(String, String, String)> {
        let schema = &set.schemas[name];
        let start = Start {
            uri: &schema.uri,
            node: &schema.document,
            check: check_of(&schema.document).unwrap_or(&EXTRA_FIELDS),
        };
        let mut out: Vec<(String, String, String)> = schema
            .validator
            .iter_errors(instance)
            .map(|e| {
                let (expected, actual) = describe(&e);
                let f = Finding::new(
                    set.attribute(start, &e),
                    e.instance_path().as_str(),
                    expected,
                    actual,
                );
                (
                    f.check.id.to_string(),
                    f.pointer,
                    format!("{} / {}", f.expected, f.actual),
                )
            })
            .collect();
        out.sort();
        out
    }

    fn split(set: &SchemaSet, name: &str, instance: &Value) -> Vec<(String, String, String)> {
        let mut found = Findings::new(usize::MAX);
        let mut attributions = Attributions::default();
        set.validate_root(name, instance, &mut attributions, &mut found);
        let mut out: Vec<(String, String, String)> = found
            .kept()
            .iter()
            .map(|f| {
                (
                    f.check.id.to_string(),
                    f.pointer.clone(),
                    format!("{} / {}", f.expected, f.actual),
                )
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn record_by_record_validation_finds_what_one_call_finds() {
        let set = set();
        for name in ["mall-list-response", "mall", "products-response", "product"] {
            assert!(set.schemas[name].split.is_some(), "{name} is split");
        }
        let m = mall();
        let broken_malls = vec![
            m.clone(),
            json!({}),
            json!(7),
            with(&m, "/state", Some(json!(9))),
            with(&m, "/tags", Some(json!([1, "bill", null]))),
            with(&m, "/crossCityPayments/0/payToolCode", None),
            with(&m, "/crossCityPayments", Some(json!([{}, 3]))),
            with(&m, "/seller/merchantId", Some(json!(5))),
            with(&m, "/templateId", Some(json!("x1"))),
            with(
                &with(&m, "/isDelete", Some(json!(1))),
                "/deleteTime",
                Some(json!("")),
            ),
            json!({}),
        ];
        let p = product();
        let broken_products = vec![
            p.clone(),
            json!({}),
            with(&p, "/spuId", Some(json!("abc"))),
            with(&p, "/skuResults/0/price", Some(json!("1"))),
            with(&p, "/skuResults", Some(json!([{}, 2]))),
            with(&p, "/converImages", Some(json!([1]))),
        ];
        let bodies: Vec<(&str, Value)> = vec![
            ("mall-list-response", envelope(broken_malls.clone())),
            (
                "mall-list-response",
                json!({"success": false, "data": broken_malls}),
            ),
            (
                "mall-list-response",
                json!({"success": true, "code": "1", "data": {}}),
            ),
            ("mall", with(&m, "/tags", Some(json!([1, 2])))),
            ("products-response", json!(broken_products)),
            ("products-response", json!({"data": []})),
            ("product", with(&p, "/skuResults", Some(json!([{}, 2])))),
        ];
        for (name, body) in bodies {
            let expected = whole(&set, name, &body);
            assert!(!expected.is_empty(), "{name}: {body}");
            assert_eq!(split(&set, name, &body), expected, "{name}: {body}");
        }
    }

    #[test]
    fn many_broken_records_are_counted_and_only_the_first_kept() {
        let set = set();
        let mut distinct: Vec<Value> = (0..300)
            .map(|i| json!({"mallSn": i.to_string(), "state": 9}))
            .collect();
        distinct.extend(std::iter::repeat_n(json!({}), 200_000));
        let body = envelope(distinct);
        let mut found = Findings::new(50);
        set.validate_into("mall-list-response", &body, &mut found);
        let mut per_check: BTreeMap<&str, usize> = BTreeMap::new();
        for f in found.kept() {
            *per_check.entry(f.check.id).or_default() += 1;
        }
        assert!(per_check.values().all(|&n| n <= 50), "{per_check:?}");
        let total = |id: &str| {
            per_check.get(id).copied().unwrap_or(0)
                + found
                    .omitted()
                    .iter()
                    .find(|o| o.check.id == id)
                    .map_or(0, |o| o.count)
        };
        // Each record misses 24 (22 with mallSn and state) §2.2 fields and the 15 always-null
        // ones.
        assert_eq!(total(MALL_FIELDS.id), 300 * 22 + 200_000 * 24);
        assert_eq!(total(MALL_ALWAYS_NULL_FIELDS.id), 200_300 * 15);
        assert_eq!(total(MALL_STATE.id), 300);
        assert!(found.kept()[0].pointer.starts_with("/data/0/"));
    }

    #[test]
    fn unknown_schema_name_yields_nothing() {
        let set = set();
        assert!(set.validate("nope", &json!(1)).is_empty());
        assert!(set.extra_fields("nope", &json!({"a": 1})).is_empty());
    }

    #[test]
    fn datetime_format_accepts_only_real_calendar_seconds() {
        let rows = [
            ("2024-02-29 23:59:59", true),
            ("2024-01-01 00:00:00", true),
            ("2023-02-29 00:00:00", false),
            ("2024-13-32 25:61:61", false),
            ("2024-01-01T00:00:00", false),
            ("2024-01-01 00:00:00Z", false),
            ("2024-01-01 00:00:60", false),
            ("2024-1-01 00:00:00", false),
            ("+024-01-01 00:00:00", false),
            ("２０２４-01-01 00:00", false),
            ("", false),
        ];
        for (text, ok) in rows {
            assert_eq!(is_datetime(text), ok, "{text}");
        }
    }

    #[test]
    fn decimal_and_digit_formats() {
        for (text, ok) in [
            ("12", true),
            ("3.50", true),
            ("-1.5", true),
            ("", false),
            ("1.", false),
            (".5", false),
            ("1e3", false),
            ("--1", false),
            ("+1", false),
        ] {
            assert_eq!(is_decimal_text(text), ok, "{text}");
        }
        for (text, ok) in [
            ("0", true),
            ("007", true),
            ("", false),
            ("1 2", false),
            ("١٢", false),
            ("-1", false),
        ] {
            assert_eq!(is_digit_string(text), ok, "{text}");
        }
    }

    fn write_set(dir: &Path, edit: impl Fn(&str, &mut Value)) {
        for (name, text) in EMBEDDED {
            let mut doc: Value = serde_json::from_str(text).expect("embedded JSON");
            edit(name, &mut doc);
            std::fs::write(dir.join(format!("{name}.json")), doc.to_string())
                .expect("write temp schema");
        }
    }

    #[test]
    fn load_dir_reads_a_user_copy() {
        let dir = tempfile::tempdir().expect("temp dir");
        write_set(dir.path(), |name, doc| {
            if name == "mall" {
                doc["properties"]["state"]["enum"] = json!([0, 1, 2, 3]);
            }
        });
        let set = SchemaSet::load_dir(dir.path()).expect("user schemas load");
        let body = envelope(vec![with(&mall(), "/state", Some(json!(3)))]);
        assert!(set.validate("mall-list-response", &body).is_empty());
    }

    #[test]
    fn load_dir_errors_name_the_file_and_the_problem() {
        type Edit = fn(&str, &mut Value);
        let rows: Vec<(&str, Edit, &str)> = vec![
            (
                "unknown x-check",
                |n, d| {
                    if n == "seller" {
                        d["x-check"] = json!("mall.nope")
                    }
                },
                "seller.json",
            ),
            (
                "bad meta-schema",
                |n, d| {
                    if n == "sku" {
                        d["type"] = json!("integr")
                    }
                },
                "sku.json",
            ),
            (
                "unresolvable ref",
                |n, d| {
                    if n == "product" {
                        d["properties"]["title"] = json!({"$ref": "missing.json"})
                    }
                },
                "product.json",
            ),
            (
                "network ref",
                |n, d| {
                    if n == "product" {
                        d["properties"]["title"] = json!({"$ref": "https://example.com/x.json"})
                    }
                },
                "product.json",
            ),
            (
                "unknown format",
                |n, d| {
                    if n == "sku" {
                        d["properties"]["price"] = json!({"format": "datetme"})
                    }
                },
                "sku.json",
            ),
            (
                "rules without x-check",
                |n, d| {
                    if n == "sku" {
                        d.as_object_mut().expect("object").shift_remove("x-check");
                    }
                },
                "sku.json",
            ),
            (
                "other draft",
                |n, d| {
                    if n == "mall" {
                        d["$schema"] = json!("http://json-schema.org/draft-07/schema#")
                    }
                },
                "mall.json",
            ),
        ];
        for (why, edit, file) in rows {
            let dir = tempfile::tempdir().expect("temp dir");
            write_set(dir.path(), edit);
            let err = SchemaSet::load_dir(dir.path()).expect_err(why);
            let message = format!("{err}: {}", err.kind);
            assert!(
                err.file.ends_with(file) || err.file == dir.path(),
                "{why}: {message} ({})",
                err.file.display()
            );
            assert!(
                message.starts_with("cannot load schema"),
                "{why}: {message}"
            );
            assert!(!message.ends_with('.'), "{why}: {message}");
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let err = SchemaSet::load_dir(dir.path()).expect_err("empty dir");
        assert!(matches!(err.kind, SchemaErrorKind::Missing), "{err:?}");
        std::fs::write(dir.path().join("common.json"), "{").expect("write");
        let err = SchemaSet::load_dir(dir.path()).expect_err("broken JSON");
        assert!(matches!(err.kind, SchemaErrorKind::Json(_)), "{err:?}");
    }
}
