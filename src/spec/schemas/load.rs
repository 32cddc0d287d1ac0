//! Loading: schema files (shipped or from a directory) parsed, their `x-check` annotations
//! checked, compiled with the formats the interface uses, and split at their record arrays.
//!
//! A user's schemas (`--schemas DIR`, `./schemas`) are checked against the meta-schema and
//! compiled at load, so that a broken file stops the command before anything is sent (exit 2).
//! The shipped ones are built into the binary and checked by this crate's tests, so they are
//! compiled one document at a time on first use: most answers are vouched for by the typed
//! read (`spec::wire`) and never reach jsonschema, and jsonschema (built at opt-level 0 for the
//! sake of the release build) took about 45 ms of every command's start compiling them all.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, Registry, ValidationError, ValidationOptions};
use mallcheck_schema_engine::CompiledSchema;
use serde_json::Value;
use url::Url;

use crate::local_file::{self, Kind};

use super::{
    BASE_URI, CHECK_KEYWORD, Compiled, DRAFT_2020_12, EMBEDDED, Items, MissingPointer, RecordArray,
    SCHEMA_NAMES, Schema, SchemaError, SchemaErrorKind, SchemaSet, Source, Split, check_of,
    percent_decode,
};
use crate::json::escape_pointer;
use crate::spec::catalog;
use crate::verdict::check::Check;

impl SchemaSet {
    /// The schemas shipped inside the binary (the files of `schemas/` at build time).
    pub fn embedded() -> Result<SchemaSet, SchemaError> {
        let sources = EMBEDDED
            .iter()
            .map(|(name, text)| {
                let file = Path::new("schemas").join(format!("{name}.json"));
                parse_source(file, name, text, Origin::Shipped)
            })
            .collect::<Result<Vec<_>, _>>()?;
        build(Path::new("schemas"), sources, Origin::Shipped)
    }

    /// The schemas of a command: `dir` (`--schemas DIR`) when given, else `./schemas` when it
    /// holds schema files of mallcheck's (editable copies, see `mallcheck init`), else the
    /// ones built in.
    pub fn load_default(dir: Option<&Path>) -> Result<SchemaSet, SchemaError> {
        let local = Path::new(crate::shipped::SCHEMAS_DIR);
        let local_holds_schemas = SCHEMA_NAMES
            .iter()
            .any(|name| local.join(format!("{name}.json")).is_file());
        match dir {
            Some(d) => SchemaSet::load_dir(d),
            None if local_holds_schemas => SchemaSet::load_dir(local),
            None => SchemaSet::embedded(),
        }
    }

    /// Loads the schema files named in [`SCHEMA_NAMES`] from `dir` (other files are ignored).
    ///
    /// A file whose text is the shipped one (an untouched copy from `mallcheck init`, or this
    /// repository's `schemas/`) is taken as the shipped schema: the tests vouch for it, so it is
    /// not checked against the meta-schema, and when every file is such a copy nothing is
    /// compiled before its first use, as with the built-in set (measured with callgrind:
    /// `mallcheck list` 114 M instructions beside a `schemas/` copy, 36 M without one).
    pub fn load_dir(dir: &Path) -> Result<SchemaSet, SchemaError> {
        let mut all_shipped = true;
        let sources = SCHEMA_NAMES
            .iter()
            .map(|name| {
                let file = dir.join(format!("{name}.json"));
                let text = local_file::read_text(&file, Kind::Schema).map_err(|e| {
                    let kind = if e.is_not_found() {
                        SchemaErrorKind::Missing
                    } else {
                        SchemaErrorKind::Read(std::io::Error::other(e.reason()))
                    };
                    SchemaError::new(&file, kind)
                })?;
                let shipped = EMBEDDED.iter().any(|(n, t)| n == name && *t == text);
                all_shipped &= shipped;
                let origin = if shipped {
                    Origin::Shipped
                } else {
                    Origin::User
                };
                parse_source(file, name, &text, origin)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let origin = if all_shipped {
            Origin::Shipped
        } else {
            Origin::User
        };
        build(dir, sources, origin)
    }

    /// The compiled form of `schema`, compiling it now if this is its first use.
    pub(super) fn compiled<'s>(&'s self, schema: &'s Schema) -> &'s Compiled {
        schema.compiled.get_or_init(|| {
            // Only the shipped schemas are left to compile here (a user's were compiled at
            // load), and every one of them compiles: the test
            // `every_shipped_schema_passes_the_meta_schema_and_compiles` says so.
            self.registry()
                .map_err(|kind| SchemaError::new(&schema.file, kind))
                .and_then(|registry| self.compile(&registry, schema))
                .unwrap_or_else(|e| panic!("the shipped schema {} compiles: {e}", schema.uri))
        })
    }

    /// Compiles every schema not compiled yet (the bench, so that no line pays a first use).
    ///
    /// One at a time, as a first use would: measured with callgrind, compiling `mall` alone
    /// for a `validate` costs about 49 M instructions, all 15 documents through one registry
    /// about 75 M (they refer to each other), and a slow path usually needs one or two.
    pub fn compile_all(&self) {
        for schema in self.schemas.values() {
            self.compiled(schema);
        }
    }

    /// Every document of the set, for resolving references between them.
    pub(super) fn registry(&self) -> Result<Registry<'_>, SchemaErrorKind> {
        Registry::new()
            .extend(self.schemas.values().map(|s| (s.uri.as_str(), &s.document)))
            .and_then(|b| b.prepare())
            .map_err(|e| SchemaErrorKind::Reference(e.to_string()))
    }

    /// Compiles one document of the set and splits it at its record arrays.
    pub(super) fn compile(
        &self,
        registry: &Registry<'_>,
        schema: &Schema,
    ) -> Result<Compiled, SchemaError> {
        let options = options(registry).with_base_uri(schema.uri.as_str());
        let validator = CompiledSchema::build(&options, &schema.document).map_err(|e| {
            let kind = match e.kind() {
                ValidationErrorKind::Referencing(r) => {
                    if let Some(missing) = self.unresolved_pointer(schema) {
                        return missing;
                    }
                    SchemaErrorKind::Reference(r.to_string())
                }
                _ => SchemaErrorKind::Compile(e.to_string()),
            };
            SchemaError::new(&schema.file, kind)
        })?;
        let split = build_split(registry, &schema.uri, &schema.document, &self.names_by_uri);
        Ok(Compiled { validator, split })
    }
}

/// Where a schema file comes from, and so how much of it is checked at load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// Built into the binary from `schemas/`: checked by the tests, compiled on first use.
    Shipped,
    /// A user's file: checked against the meta-schema and compiled at load.
    User,
}

fn parse_source(
    file: PathBuf,
    name: &str,
    text: &str,
    origin: Origin,
) -> Result<Source, SchemaError> {
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
    if origin == Origin::User
        && let Err(e) = jsonschema::meta::validate(&document)
    {
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
    if origin == Origin::User {
        if let Some((pointer, key)) = unknown_keyword(&document, "") {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let at = key_position(&text, &key, None)
                .map(|(line, column)| format!(" (line {line}, column {column})"))
                .unwrap_or_default();
            let hint = did_you_mean(&key, KEYWORDS);
            return Err(SchemaError::new(
                &file,
                SchemaErrorKind::UnknownKeyword(Box::new(super::UnknownKeyword {
                    key,
                    pointer,
                    at,
                    hint,
                })),
            ));
        }
        if let Some((pointer, format)) = unknown_format(&document, "") {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let at = key_position(&text, "format", Some(&format))
                .map(|(line, column)| format!(" (line {line}, column {column})"))
                .unwrap_or_default();
            let hint = did_you_mean(&format, FORMATS);
            return Err(SchemaError::new(
                &file,
                SchemaErrorKind::UnknownFormat(Box::new(super::UnknownKeyword {
                    key: format,
                    pointer,
                    at,
                    hint,
                })),
            ));
        }
        // A copy emptied of its rules (`{}`) would pass every answer under the checks the
        // shipped file carries.
        if !has_rules(root)
            && let Some(shipped) = shipped_document(name)
            && let Some(check) = shipped
                .as_object()
                .filter(|r| has_rules(r))
                .and(check_of(&shipped))
        {
            return Err(SchemaError::new(
                &file,
                SchemaErrorKind::NoRules(check.id.to_string()),
            ));
        }
    }
    if has_rules(root) && check_of(&document).is_none() {
        return Err(SchemaError::new(&file, SchemaErrorKind::MissingCheck));
    }
    Ok(Source {
        file,
        name: name.to_string(),
        uri,
        document,
    })
}

/// Whether a schema's top level holds a rule (anything but identification, definitions and
/// annotations).
fn has_rules(root: &serde_json::Map<String, Value>) -> bool {
    root.keys().any(|k| {
        !matches!(
            k.as_str(),
            "$schema" | "$id" | "$defs" | "$comment" | "title" | "description" | CHECK_KEYWORD
        )
    })
}

/// The shipped document of the schema `name`.
fn shipped_document(name: &str) -> Option<Value> {
    EMBEDDED
        .iter()
        .find(|(n, _)| *n == name)
        .and_then(|(_, text)| serde_json::from_str(text).ok())
}

/// Every keyword a schema object of mallcheck's may hold: draft 2020-12's (with the spellings
/// of earlier drafts its meta-schema still describes) and mallcheck's own annotations.
const KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "$defs",
    "definitions",
    "$recursiveRef",
    "$recursiveAnchor",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
    "prefixItems",
    "items",
    "additionalItems",
    "contains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "type",
    "const",
    "enum",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    CHECK_KEYWORD,
    EXACT_LONG_KEYWORD,
    INTEGER_LITERAL_KEYWORD,
    ZERO_TIME_KEYWORD,
];

/// What [`find_in_schemas`] asks of each schema object (its members, its pointer).
type SchemaVisit<'v, T> = dyn FnMut(&serde_json::Map<String, Value>, &str) -> Option<T> + 'v;

/// Calls `visit` on every schema object of `node` (the root, then each subschema, depth
/// first) with its JSON Pointer, until it gives something: only subschemas are walked, never a
/// `const`, `enum`, `default` or `examples` value that happens to hold a member of the same
/// name.
fn find_in_schemas<T>(node: &Value, pointer: &str, visit: &mut SchemaVisit<'_, T>) -> Option<T> {
    let Value::Object(map) = node else {
        return None;
    };
    if let Some(found) = visit(map, pointer) {
        return Some(found);
    }
    let at = |key: &str| format!("{pointer}/{}", escape_pointer(key));
    for (key, value) in map {
        let found = match key.as_str() {
            // Maps of subschemas.
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
            | "dependencies" => value.as_object().and_then(|m| {
                m.iter().find_map(|(name, sub)| {
                    find_in_schemas(sub, &format!("{}/{}", at(key), escape_pointer(name)), visit)
                })
            }),
            // Arrays of subschemas (`items` of earlier drafts too).
            "allOf" | "anyOf" | "oneOf" | "prefixItems" | "items" if value.is_array() => {
                value.as_array().and_then(|a| {
                    a.iter().enumerate().find_map(|(i, sub)| {
                        find_in_schemas(sub, &format!("{}/{i}", at(key)), visit)
                    })
                })
            }
            // One subschema.
            "not"
            | "if"
            | "then"
            | "else"
            | "items"
            | "additionalItems"
            | "contains"
            | "additionalProperties"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "contentSchema" => find_in_schemas(value, &at(key), visit),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The first member of a schema object in `node` that names no keyword ([`KEYWORDS`]), with
/// the pointer of its schema: a rule spelt wrong (`requried`) is ignored by every validator
/// and checks nothing, so a user's schema with one is refused, as ajv's strict mode does.
fn unknown_keyword(node: &Value, pointer: &str) -> Option<(String, String)> {
    find_in_schemas(node, pointer, &mut |map, at| {
        map.keys()
            .find(|key| !KEYWORDS.contains(&key.as_str()))
            .map(|key| (at.to_string(), key.clone()))
    })
}

/// Every `format` a schema may name: those of draft 2020-12 the validator checks (not
/// `idn-email` nor `idn-hostname`) and mallcheck's own (see [`options`]).
const FORMATS: &[&str] = &[
    "date",
    "date-time",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
    "datetime",
    "digit-string",
    "decimal-text",
];

/// The first `format` of a schema object in `node` that names no format ([`FORMATS`]), with
/// the pointer of its schema. The validator refuses one only when it compiles a schema that
/// reaches it, and names that schema, not the file the typo is in.
fn unknown_format(node: &Value, pointer: &str) -> Option<(String, String)> {
    find_in_schemas(node, pointer, &mut |map, at| {
        map.get("format")
            .and_then(Value::as_str)
            .filter(|f| !FORMATS.contains(f))
            .map(|f| (at.to_string(), f.to_string()))
    })
}

/// The closest of `names` to `word`, as `; did you mean `NAME`?`, when one is close.
fn did_you_mean(word: &str, names: &[&str]) -> String {
    names
        .iter()
        .map(|k| (strsim::jaro_winkler(word, k), *k))
        .filter(|(score, _)| *score >= 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| format!("; did you mean `{k}`?"))
        .unwrap_or_default()
}

/// Line and column (1-based, the column in characters) of byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    (line, column)
}

/// Line and column of the first member named `key` in a schema's text (whose value is
/// `value`, when given).
fn key_position(text: &str, key: &str, value: Option<&str>) -> Option<(usize, usize)> {
    let quoted = serde_json::to_string(key).ok()?;
    let value = value.and_then(|v| serde_json::to_string(v).ok());
    let offset = text.match_indices(&quoted).map(|(i, _)| i).find(|&i| {
        let rest = text[i + quoted.len()..].trim_start();
        rest.strip_prefix(':').is_some_and(|rest| {
            value
                .as_deref()
                .is_none_or(|v| rest.trim_start().starts_with(v))
        })
    })?;
    Some(line_column(text, offset))
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

fn build(dir: &Path, sources: Vec<Source>, origin: Origin) -> Result<SchemaSet, SchemaError> {
    let shipped = origin == Origin::Shipped || is_shipped(&sources);
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
    // Referenced documents first, so that a broken one is reported under its own name.
    let order: Vec<String> = compile_order(&sources, &names_by_uri)
        .into_iter()
        .map(|i| sources[i].name.clone())
        .collect();
    let schemas = sources
        .into_iter()
        .map(|s| {
            let schema = Schema {
                file: s.file,
                uri: s.uri,
                document: s.document,
                compiled: OnceLock::new(),
            };
            (s.name, schema)
        })
        .collect();
    let set = SchemaSet {
        shapes: OnceLock::new(),
        schemas,
        names_by_uri,
        shipped,
    };
    if origin == Origin::User {
        let registry = set.registry().map_err(|kind| {
            unresolved_reference(&set).unwrap_or_else(|| SchemaError::new(dir, kind))
        })?;
        for name in &order {
            let schema = &set.schemas[name];
            let compiled = set.compile(&registry, schema)?;
            let _ = schema.compiled.set(compiled);
        }
    }
    Ok(set)
}

/// The first `$ref` of the set that resolves to no document of it, named with its file, line
/// and the file it would be; asked once the registry failed (jsonschema's own error names
/// neither file).
fn unresolved_reference(set: &SchemaSet) -> Option<SchemaError> {
    for schema in set.schemas.values() {
        let mut refs = Vec::new();
        collect_refs(&schema.document, &mut refs);
        for reference in refs {
            let Ok(mut target) = schema.uri.join(reference) else {
                continue;
            };
            target.set_fragment(None);
            let known = target == schema.uri
                || set.names_by_uri.contains_key(target.as_str())
                // The drafts' meta-schemas are in every registry.
                || target.host_str() == Some("json-schema.org");
            if known {
                continue;
            }
            let at = reference_position(&schema.file, reference)
                .map(|(line, column)| format!(" at line {line}, column {column}"))
                .unwrap_or_default();
            let beside = schema
                .uri
                .join(".")
                .ok()
                .and_then(|base| base.make_relative(&target))
                .filter(|rest| !rest.is_empty() && !rest.contains('/'));
            let hint = match (beside, schema.file.parent()) {
                (Some(name), Some(dir)) => format!(
                    "; is {} missing?",
                    dir.join(percent_decode(&name)).display()
                ),
                _ => String::new(),
            };
            return Some(SchemaError::new(
                &schema.file,
                SchemaErrorKind::MissingReference {
                    reference: reference.to_string(),
                    at,
                    target: target.to_string(),
                    hint,
                },
            ));
        }
    }
    None
}

impl SchemaSet {
    /// The first `$ref` of `schema` whose JSON Pointer names nothing in the document it points
    /// into, named with its file, line and column; asked once a compile failed on a reference
    /// (jsonschema's own error names neither file nor line).
    fn unresolved_pointer(&self, schema: &Schema) -> Option<SchemaError> {
        let mut refs = Vec::new();
        collect_refs(&schema.document, &mut refs);
        refs.into_iter().find_map(|reference| {
            let mut target = schema.uri.join(reference).ok()?;
            let pointer = percent_decode(target.fragment().unwrap_or_default());
            // An anchor (`#name`) is not a pointer: left to jsonschema's own words.
            if !pointer.is_empty() && !pointer.starts_with('/') {
                return None;
            }
            target.set_fragment(None);
            let holder = if target == schema.uri {
                schema
            } else {
                let name = self.names_by_uri.get(target.as_str())?;
                self.schemas.get(name)?
            };
            if holder.document.pointer(&pointer).is_some() {
                return None;
            }
            let at = reference_position(&schema.file, reference)
                .map(|(line, column)| format!(" at line {line}, column {column}"))
                .unwrap_or_default();
            Some(SchemaError::new(
                &schema.file,
                SchemaErrorKind::MissingPointer(Box::new(MissingPointer {
                    reference: reference.to_string(),
                    at,
                    pointer,
                    holder: holder.file.display().to_string(),
                })),
            ))
        })
    }
}

/// Line and column (1-based) of `reference` as a JSON string in the text of `file`.
fn reference_position(file: &Path, reference: &str) -> Option<(usize, usize)> {
    let text = std::fs::read_to_string(file).ok()?;
    let quoted = serde_json::to_string(reference).ok()?;
    Some(line_column(&text, text.find(&quoted)?))
}

/// Whether every document equals the shipped one of its name (the typed fast path,
/// `spec::wire`, mirrors those and no others).
fn is_shipped(sources: &[Source]) -> bool {
    sources.len() == EMBEDDED.len()
        && sources.iter().all(|s| {
            EMBEDDED.iter().any(|(name, text)| {
                *name == s.name
                    && serde_json::from_str::<Value>(text).is_ok_and(|d| d == s.document)
            })
        })
}

/// Splits a document at its record arrays (see [`Split`]); `None` when it has none, or when
/// the split cannot be built (the whole document is then validated at once, as before).
fn build_split(
    registry: &Registry<'_>,
    uri: &Url,
    document: &Value,
    names_by_uri: &HashMap<String, String>,
) -> Option<Split> {
    let mut found = Vec::new();
    record_arrays(
        document,
        &mut Vec::new(),
        &mut String::new(),
        None,
        &mut found,
    );
    // A reference into an `items` node from inside the document would meet `true` instead.
    let mut refs = Vec::new();
    collect_refs(document, &mut refs);
    found.retain(|(_, items_pointer, _)| {
        !refs.iter().any(|r| {
            r.strip_prefix('#')
                .is_some_and(|f| percent_decode(f).starts_with(items_pointer.as_str()))
        })
    });
    if found.is_empty() {
        return None;
    }
    let mut shallow = document.clone();
    let mut arrays = Vec::new();
    for (path, items_pointer, array_check) in found {
        let node = document.pointer(&items_pointer)?;
        let items = match document_target(uri, node, names_by_uri) {
            Some(name) => Items::Document(name),
            None => {
                let wrapper = serde_json::json!({
                    "$ref": format!("{}#{}", uri, fragment_encode(&items_pointer))
                });
                let validator = CompiledSchema::build(&options(registry), &wrapper).ok()?;
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
    let mut records_uri = uri.clone();
    records_uri.set_path(&format!("{}.records", uri.path()));
    shallow
        .as_object_mut()?
        .insert("$id".to_string(), Value::String(records_uri.to_string()));
    let options = options(registry).with_base_uri(records_uri.as_str());
    let shallow = CompiledSchema::build(&options, &shallow).ok()?;
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
        .with_keyword(INTEGER_LITERAL_KEYWORD, integer_literal_factory)
        .with_keyword(ZERO_TIME_KEYWORD, zero_time_factory)
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

/// Keyword of every field the spec types Integer, Long or Byte, its value the type's name:
/// the number is written as an integer literal, without fraction or exponent. JSON Schema's
/// `integer` accepts `3800.0` and `1e5` (a number whose value is whole), but strict clients
/// (Go's `encoding/json` into an int, serde's `i64`, System.Text.Json) refuse those literals.
/// serde_json reads a literal with a fraction or an exponent as a float and one without as an
/// integer, so the tree still tells them apart (and so does a re-serialized snapshot).
pub const INTEGER_LITERAL_KEYWORD: &str = "x-integer-literal";

/// How the expected phrase of an integer-literal finding starts: its `actual` is the value
/// as serde_json renders it (`100000.0`), which a caller holding the bytes replaces with the
/// literal as written (`1e5`).
pub const INTEGER_LITERAL_EXPECTED: &str = "an integer literal, without fraction or exponent";

/// The spec's integer types the keyword names.
const INTEGER_TYPES: [&str; 3] = ["Integer", "Long", "Byte"];

/// What an integer field's value breaks of the integer-literal rule, if anything. Only a whole
/// number read as a float is this rule's business: a fraction is `type: integer`'s, another
/// type the field's own. A whole float beyond 2^63 may be an integer literal too long for an
/// i64 (serde_json reads those as floats): for a Long that is the range checks' finding, for
/// an Integer or a Byte it is out of range either way.
pub fn integer_literal_problem(kind: &str, value: &Value) -> Option<String> {
    let Value::Number(n) = value else {
        return None;
    };
    // An integer literal beyond its type: Byte and Integer are Java's (8 and 32 bits, signed),
    // as Long (64 bits) is; a Long beyond it is the range checks' finding.
    if !n.is_f64() {
        let (lo, hi) = match kind {
            "Byte" => (i64::from(i8::MIN), i64::from(i8::MAX)),
            "Integer" => (i64::from(i32::MIN), i64::from(i32::MAX)),
            _ => return None,
        };
        return match n.as_i64() {
            Some(v) if (lo..=hi).contains(&v) => None,
            _ => Some(format!(
                "an integer literal within the {kind} range ({lo} to {hi})"
            )),
        };
    }
    let x = n.as_f64().filter(|_| n.is_f64())?;
    // `-0` is an integer literal of JSON's grammar, which serde_json reads as a float (so a
    // `-0.0` literal passes too).
    if x.fract() != 0.0 || x.is_nan() || x == 0.0 && x.is_sign_negative() {
        return None;
    }
    if x.abs() < TWO_POW_63 {
        Some(format!("{INTEGER_LITERAL_EXPECTED} ({kind})"))
    } else if kind == "Long" {
        None
    } else {
        Some(format!("an integer literal within the {kind} range"))
    }
}

struct IntegerLiteral {
    kind: &'static str,
}

impl<'i> jsonschema::Keyword<'i> for IntegerLiteral {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        match integer_literal_problem(self.kind, instance) {
            None => Ok(()),
            Some(message) => Err(ValidationError::custom(message)),
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        integer_literal_problem(self.kind, instance).is_none()
    }
}

fn integer_literal_factory<'a>(
    _parent: &'a serde_json::Map<String, Value>,
    value: &'a Value,
    _path: jsonschema::paths::Location,
) -> Result<Box<dyn for<'i> jsonschema::Keyword<'i>>, ValidationError<'a>> {
    match INTEGER_TYPES.iter().find(|t| value.as_str() == Some(t)) {
        Some(kind) => Ok(Box::new(IntegerLiteral { kind })),
        None => Err(ValidationError::schema(format!(
            "the '{INTEGER_LITERAL_KEYWORD}' keyword must name one of {}",
            INTEGER_TYPES.join(", ")
        ))),
    }
}

/// Keyword of an object, its value two member names `[reference, field]`: `field`, when it is a
/// time of `datetime` (`YYYY-MM-DD HH:MM:SS`), is no zero time standing for null, as a
/// language's zero date writes one (Go's `0001-01-01`, SQL Server's `1900-01-01`, the Unix
/// epoch `1970-01-01` in any zone): a time before [`ZERO_TIMES_BEFORE`] that also precedes
/// `reference` (§2.2: `topTime` is null when the mall is not pinned, and a mall is pinned after
/// it is created). Only such a time: the spec sets no order between the two, and test data
/// that pins a mall before its creation passes.
pub const ZERO_TIME_KEYWORD: &str = "x-zero-time";

/// What every message of [`ZERO_TIME_KEYWORD`] holds, by which its error is told from other
/// custom keywords' (see `validate.rs`).
pub const ZERO_TIME_MARK: &str = " not a zero time ";

/// Times before this are zero times of some language or database when they precede the time
/// they are held to.
pub const ZERO_TIMES_BEFORE: &str = "1980-01-01 00:00:00";

/// Whether `field` is a zero time standing for null: a `datetime` before
/// [`ZERO_TIMES_BEFORE`] that precedes `reference` (also a `datetime`).
pub fn is_zero_time_stand_in(reference: &str, field: &str) -> bool {
    is_datetime(reference) && is_datetime(field) && field < reference && field < ZERO_TIMES_BEFORE
}

/// Whether `object`'s member `field` is a zero time standing for null, as its member
/// `reference` shows ([`is_zero_time_stand_in`]).
pub fn zero_time_broken(object: &Value, reference: &str, field: &str) -> bool {
    let time = |name: &str| object.get(name).and_then(Value::as_str);
    matches!((time(reference), time(field)), (Some(r), Some(f)) if is_zero_time_stand_in(r, f))
}

struct ZeroTime {
    earlier: String,
    later: String,
}

impl<'i> jsonschema::Keyword<'i> for ZeroTime {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        if zero_time_broken(instance, &self.earlier, &self.later) {
            Err(ValidationError::custom(format!(
                "{} a real time or null,{ZERO_TIME_MARK}standing for null ({} {}, {} {})",
                self.later,
                self.earlier,
                instance.get(&self.earlier).unwrap_or(&Value::Null),
                self.later,
                instance.get(&self.later).unwrap_or(&Value::Null)
            )))
        } else {
            Ok(())
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        !zero_time_broken(instance, &self.earlier, &self.later)
    }
}

fn zero_time_factory<'a>(
    _parent: &'a serde_json::Map<String, Value>,
    value: &'a Value,
    _path: jsonschema::paths::Location,
) -> Result<Box<dyn for<'i> jsonschema::Keyword<'i>>, ValidationError<'a>> {
    match value.as_array().map(Vec::as_slice) {
        Some([Value::String(earlier), Value::String(later)]) => Ok(Box::new(ZeroTime {
            earlier: earlier.clone(),
            later: later.clone(),
        })),
        _ => Err(ValidationError::schema(format!(
            "the '{ZERO_TIME_KEYWORD}' keyword must be two member names [reference, field]"
        ))),
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
    if !shape_ok {
        return false;
    }
    // Digits only from here: read the fields and let the calendar judge the date (what
    // `parse_from_str(s, "%Y-%m-%d %H:%M:%S")` does, without interpreting a format per call).
    let field = |range: std::ops::Range<usize>| {
        bytes[range]
            .iter()
            .fold(0u32, |n, b| n * 10 + u32::from(b - b'0'))
    };
    let (hour, minute, second) = (field(11..13), field(14..16), field(17..19));
    hour < 24
        && minute < 60
        && second < 60
        && i32::try_from(field(0..4))
            .ok()
            .and_then(|year| chrono::NaiveDate::from_ymd_opt(year, field(5..7), field(8..10)))
            .is_some()
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
