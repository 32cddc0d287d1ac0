//! Loads and compiles the JSON Schemas in `schemas/` and turns violations into findings.
//! Each violation is blamed on the nearest `x-check` annotation on its path through the schemas.

mod attribute;
mod extra;
mod load;
mod stream;
mod validate;

pub use load::{
    INTEGER_LITERAL_EXPECTED, is_datetime, is_decimal_text, is_digit_string, is_zero_time_stand_in,
};
pub use stream::{StreamOutcome, Streamed};

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mallcheck_schema_engine::CompiledSchema;
use serde_json::Value;
use url::Url;

use crate::spec::catalog;
use crate::verdict::check::Check;
use extra::Shapes;

/// Base URI of the schema files; a file without `$id` is registered as `BASE_URI` + file name.
pub const BASE_URI: &str = "https://mallcheck.invalid/schemas/";

/// Annotation keyword naming the catalogue check a schema rule enforces.
pub const CHECK_KEYWORD: &str = "x-check";

/// Most findings one [`SchemaSet::validate`] call returns; a last finding notes the cut.
pub const MAX_FINDINGS: usize = 200;

/// Names (file stems) of the schemas mallcheck ships and [`SchemaSet::load_dir`] reads, in the
/// order of the shipped files.
pub const SCHEMA_NAMES: [&str; EMBEDDED.len()] = {
    let mut names = [""; EMBEDDED.len()];
    let mut i = 0;
    while i < EMBEDDED.len() {
        names[i] = EMBEDDED[i].0;
        i += 1;
    }
    names
};

const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";
const INTRODUCTION_SCHEMA: &str = "product-introduction";

macro_rules! embedded {
    ($($name:literal),* $(,)?) => {
        [$(($name, include_str!(concat!("../../schemas/", $name, ".json")))),*]
    };
}

/// The shipped schema files: name (file stem) and text, in compile-friendly order.
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
    /// A member of a schema object names no keyword (a typo checks nothing).
    #[error("{0}")]
    UnknownKeyword(Box<UnknownKeyword>),
    /// A `format` names no format mallcheck checks (the key of the `UnknownKeyword` is the
    /// format's name).
    #[error(
        "`\"format\": {:?}` at {:?}{} is no format mallcheck checks (those of JSON \
         Schema 2020-12 but `idn-email` and `idn-hostname`, and `digit-string`, `decimal-text`, \
         `datetime`){}",
        .0.key, .0.pointer, .0.at, .0.hint
    )]
    UnknownFormat(Box<UnknownKeyword>),
    /// A copy of a shipped schema holds no rule, so its checks would pass anything.
    #[error(
        "the file holds no rule, so {0} would pass any answer (the shipped schema has rules): \
         restore it with `mallcheck init`, or edit the rules rather than remove them"
    )]
    NoRules(String),
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
    /// A `$ref` of this file points into no file of the set.
    #[error(
        "`$ref` {reference:?}{at} refers to {target}, which is the `$id` of no schema file \
         (nothing is fetched over the network){hint}"
    )]
    MissingReference {
        /// The reference as written.
        reference: String,
        /// ` at line L, column C` when it was found in the file's text.
        at: String,
        /// The document it resolves to.
        target: String,
        /// Which file would be it, when the target sits beside the file's own `$id`.
        hint: String,
    },
    /// A `$ref` of this file names a JSON Pointer its document does not hold.
    #[error("{0}")]
    MissingPointer(Box<MissingPointer>),
    /// The schema does not compile.
    #[error("the schema does not compile: {0}")]
    Compile(String),
}

/// A member of a schema object that names no keyword (boxed, as [`MissingPointer`]).
#[derive(Debug, thiserror::Error)]
#[error(
    "`{key}` at {pointer:?}{at} is no keyword of JSON Schema 2020-12 nor of mallcheck's: a rule \
     spelt wrong checks nothing{hint}"
)]
pub struct UnknownKeyword {
    /// The member's name.
    pub key: String,
    /// JSON Pointer of the schema object holding it.
    pub pointer: String,
    /// ` (line L, column C)` when found in the text.
    pub at: String,
    /// `; did you mean …?`, or empty.
    pub hint: String,
}

/// A `$ref` whose JSON Pointer names nothing in its document (boxed: a fifth variant of four
/// strings would make every usage error larger).
#[derive(Debug, thiserror::Error)]
#[error("`$ref` {reference:?}{at} points at {pointer:?}, which {holder} does not hold")]
pub struct MissingPointer {
    /// The reference as written.
    pub reference: String,
    /// ` at line L, column C` when it was found in the file's text.
    pub at: String,
    /// The pointer, decoded.
    pub pointer: String,
    /// The file of the document it points into.
    pub holder: String,
}

impl SchemaError {
    fn new(file: impl Into<PathBuf>, kind: SchemaErrorKind) -> Self {
        SchemaError {
            file: file.into(),
            kind,
        }
    }
}

/// One schema file, compiled when first needed (see [`SchemaSet::compiled`]).
struct Schema {
    file: PathBuf,
    uri: Url,
    document: Value,
    compiled: OnceLock<Compiled>,
}

/// What a schema document compiles to.
struct Compiled {
    validator: CompiledSchema,
    /// The same rules split at the document's record arrays, when it has any.
    split: Option<Split>,
}

/// A schema document split at its record arrays, so that a response of many records is
/// validated one record at a time: jsonschema collects every error of a call before it returns
/// any, and one call over a million broken records would hold tens of millions of errors.
struct Split {
    /// The document with the `items` of every record array replaced by `true`.
    shallow: CompiledSchema,
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
        validator: CompiledSchema,
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
    /// The documents are the shipped ones ([`SchemaSet::is_shipped`]).
    shipped: bool,
}

impl fmt::Debug for SchemaSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaSet")
            .field("names", &self.names())
            .finish_non_exhaustive()
    }
}

impl SchemaSet {
    /// Schema names (file stems), sorted: `"mall"`, `"mall-list-response"`, ….
    pub fn names(&self) -> Vec<&str> {
        self.schemas.keys().map(String::as_str).collect()
    }

    /// Whether a schema of this name is loaded.
    pub fn has(&self, name: &str) -> bool {
        self.schemas.contains_key(name)
    }

    /// The files of the set whose document is not the shipped one of their name (a user's
    /// edited copies), in name order.
    pub fn edited_files(&self) -> Vec<&Path> {
        if self.shipped {
            return Vec::new();
        }
        self.schemas
            .iter()
            .filter(|(name, schema)| {
                EMBEDDED
                    .iter()
                    .find(|(n, _)| n == name)
                    .and_then(|(_, text)| serde_json::from_str::<Value>(text).ok())
                    .is_none_or(|shipped| shipped != schema.document)
            })
            .map(|(_, schema)| schema.file.as_path())
            .collect()
    }

    /// Whether the loaded documents are exactly the shipped ones, which the typed fast path
    /// ([`crate::spec::wire`]) mirrors: only then may a digest stand for a check.
    pub fn is_shipped(&self) -> bool {
        self.shipped
    }

    /// Whether a check of schema `name` (schema, extra fields, introductions) is known to find
    /// nothing in a body of this digest: the schemas are the shipped ones and the digest was
    /// read as a body of that schema.
    pub fn conforms(&self, name: &str, digest: Option<&crate::spec::wire::Digest>) -> bool {
        self.shipped && digest.is_some_and(|d| d.schema() == name)
    }

    /// The JSON document of a schema.
    pub fn document(&self, name: &str) -> Option<&Value> {
        self.schemas.get(name).map(|s| &s.document)
    }
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
mod tests;
