//! Loads and compiles the JSON Schemas in `schemas/` and turns violations into findings.
//! Each violation is blamed on the nearest `x-check` annotation on its path through the schemas.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, Registry, ValidationError, ValidationOptions, Validator};
use serde_json::Value;
use url::Url;

use crate::spec::catalog::{self, EXTRA_FIELDS, PRODUCT_INTRODUCTION};

use crate::verdict::check::Check;
use crate::verdict::event::Finding;

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

    /// One finding per violation of schema `name` by `instance`, at most [`MAX_FINDINGS`] (+1
    /// noting the cut).
    ///
    /// For `products-response` and `product`, each `productIntroduction` text is also parsed
    /// and checked against `product-introduction` (§2.7). An unknown name yields no finding:
    /// callers check [`SchemaSet::has`] first (case files are validated at load time).
    pub fn validate(&self, name: &str, instance: &Value) -> Vec<Finding> {
        let mut out = self.validate_root(name, instance);
        let mut inner = Capped::default();
        for intro in introductions(name, instance) {
            self.introduction_findings(&[Introduction::parse(intro)], &mut inner);
        }
        out.extend(inner.finish(&PRODUCT_INTRODUCTION));
        out
    }

    /// Schema findings of the response itself (not of the JSON inside its texts).
    fn validate_root(&self, name: &str, instance: &Value) -> Vec<Finding> {
        let Some(schema) = self.schemas.get(name) else {
            return Vec::new();
        };
        let mut out = Capped::default();
        if !schema.validator.is_valid(instance) {
            for error in schema.validator.iter_errors(instance) {
                out.push_with(|| self.finding(schema, &error));
            }
        }
        out.finish(self.root_check(schema))
    }

    /// [`SchemaSet::validate`] then [`SchemaSet::extra_fields`], parsing the JSON held in each
    /// `productIntroduction` once for both.
    pub fn check(&self, name: &str, instance: &Value) -> Vec<Finding> {
        let mut out = self.validate_root(name, instance);
        out.extend(self.extra_fields_root(name, instance));
        // One introduction at a time: each parsed tree is dropped before the next is built.
        let mut inner = Capped::default();
        for (pointer, text) in introductions(name, instance) {
            let intro = [Introduction::parse((pointer, text))];
            self.introduction_findings(&intro, &mut inner);
            out.extend(self.extra_intro_findings(&intro));
        }
        out.extend(inner.finish(&PRODUCT_INTRODUCTION));
        out
    }

    /// Every property of `instance` that schema `name` does not list, as an `info.extra-fields`
    /// finding pointing at the field (an additive change, §2).
    ///
    /// Inside an object or a value whose schema declares no properties (open types such as
    /// the always-null fields), nothing is reported.
    pub fn extra_fields(&self, name: &str, instance: &Value) -> Vec<Finding> {
        let mut out = self.extra_fields_root(name, instance);
        for intro in introductions(name, instance) {
            out.extend(self.extra_intro_findings(&[Introduction::parse(intro)]));
        }
        out
    }

    /// Extra fields of the response itself (not of the JSON inside its texts).
    fn extra_fields_root(&self, name: &str, instance: &Value) -> Vec<Finding> {
        let shapes = self.shapes.get_or_init(|| self.build_shapes());
        let Some(&root) = shapes.roots.get(name) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut pointer = String::new();
        shapes.walk(root, instance, &mut pointer, &mut out);
        out
    }

    /// Extra fields inside the JSON held by each `productIntroduction` text.
    fn extra_intro_findings(&self, intros: &[Introduction<'_>]) -> Vec<Finding> {
        let shapes = self.shapes.get_or_init(|| self.build_shapes());
        let mut out = Vec::new();
        if let Some(&intro) = shapes.roots.get(INTRODUCTION_SCHEMA) {
            for Introduction {
                pointer, parsed, ..
            } in intros
            {
                let Ok(inner) = parsed else {
                    continue;
                };
                let mut found = Vec::new();
                shapes.walk(intro, inner, &mut String::new(), &mut found);
                out.extend(found.into_iter().map(|f| {
                    Finding::new(f.check, pointer.as_str(), f.expected, f.actual).with_detail(
                        format!(
                            "inner JSON pointer {} inside the productIntroduction text",
                            f.pointer
                        ),
                    )
                }));
            }
        }
        out
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

    fn finding(&self, schema: &Schema, error: &ValidationError<'_>) -> Finding {
        let (expected, actual) = describe(error);
        // A custom keyword's path starts inside the document that defines it, not at the root.
        let check = match error.kind() {
            ValidationErrorKind::Custom { .. } => {
                self.attribute_at(schema, error.instance_path().as_str())
            }
            _ => self.attribute(schema, error),
        };
        Finding::new(check, error.instance_path().as_str(), expected, actual)
    }

    /// The x-check of the root of `schema`; load-time checks make it present for any schema
    /// with rules, so the fallback is never used for a failing instance.
    fn root_check(&self, schema: &Schema) -> &'static Check {
        check_of(&schema.document).unwrap_or(&EXTRA_FIELDS)
    }

    /// Follows the error's evaluation path through the documents (and their `$ref`s) and
    /// returns the last `x-check` met before the failing keyword.
    fn attribute(&self, schema: &Schema, error: &ValidationError<'_>) -> &'static Check {
        let mut best = self.root_check(schema);
        let mut uri = schema.uri.clone();
        let mut node = &schema.document;
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
    fn attribute_at(&self, schema: &Schema, instance_path: &str) -> &'static Check {
        let mut best = self.root_check(schema);
        let mut at = Some((schema.uri.clone(), &schema.document));
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

    fn introduction_findings(&self, intros: &[Introduction<'_>], out: &mut Capped) {
        let Some(intro) = self.schemas.get(INTRODUCTION_SCHEMA) else {
            return;
        };
        for Introduction {
            pointer,
            text,
            parsed,
        } in intros
        {
            let pointer = pointer.as_str();
            let text = *text;
            let inner = match parsed {
                Ok(inner) => inner,
                Err(e) => {
                    out.push_with(|| {
                        Finding::new(
                            &PRODUCT_INTRODUCTION,
                            pointer,
                            "a JSON array of content blocks",
                            compact(&Value::String(text.to_string())),
                        )
                        .with_detail(format!("the text is not JSON: {e}"))
                    });
                    continue;
                }
            };
            if intro.validator.is_valid(inner) {
                continue;
            }
            for error in intro.validator.iter_errors(inner) {
                out.push_with(|| {
                    let (expected, actual) = describe(&error);
                    let inner_pointer = error.instance_path().as_str();
                    let at = if inner_pointer.is_empty() {
                        "the root"
                    } else {
                        inner_pointer
                    };
                    Finding::new(
                        self.attribute(intro, &error),
                        pointer,
                        format!("{expected} at inner {at}"),
                        actual,
                    )
                    .with_detail(format!(
                        "inner JSON pointer {at} inside the productIntroduction text"
                    ))
                });
            }
        }
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
    /// Reports every field of `instance` that its shape does not list. `pointer` is a reused
    /// buffer: a pointer string is only built for a finding.
    fn walk(&self, id: usize, instance: &Value, pointer: &mut String, out: &mut Vec<Finding>) {
        let shape = &self.shapes[id];
        let len = pointer.len();
        match instance {
            Value::Object(map) => {
                for (key, value) in map {
                    match shape.properties.get(key) {
                        Some(&child) => {
                            pointer.push('/');
                            pointer.push_str(&escape_pointer(key));
                            self.walk(child, value, pointer, out);
                            pointer.truncate(len);
                        }
                        None if shape.declares => out.push(Finding::new(
                            &EXTRA_FIELDS,
                            format!("{pointer}/{}", escape_pointer(key)),
                            "only fields the spec lists",
                            format!("extra field `{key}`"),
                        )),
                        None => {}
                    }
                }
            }
            Value::Array(items) => {
                if let Some(child) = shape.items {
                    for (i, item) in items.iter().enumerate() {
                        pointer.push('/');
                        pointer.push_str(&i.to_string());
                        self.walk(child, item, pointer, out);
                        pointer.truncate(len);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Findings gathered up to [`MAX_FINDINGS`], counting the rest.
#[derive(Default)]
struct Capped {
    findings: Vec<Finding>,
    dropped: usize,
}

impl Capped {
    fn push_with(&mut self, make: impl FnOnce() -> Finding) {
        if self.findings.len() < MAX_FINDINGS {
            self.findings.push(make());
        } else {
            self.dropped += 1;
        }
    }

    fn finish(mut self, check: &'static Check) -> Vec<Finding> {
        if self.dropped > 0 {
            self.findings.push(Finding::new(
                check,
                "",
                format!("at most {MAX_FINDINGS} findings listed per response"),
                format!("{} more not shown", self.dropped),
            ));
        }
        self.findings
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
        let mut compiled: BTreeMap<usize, Validator> = BTreeMap::new();
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
            compiled.insert(i, validator);
        }
        compiled
    };
    let schemas = sources
        .into_iter()
        .zip(validators.into_values())
        .map(|(s, validator)| {
            let schema = Schema {
                uri: s.uri,
                document: s.document,
                validator,
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
