//! The files of `schemas/` are valid draft 2020-12 schemas, and every rule of the spec schemas
//! can be attributed to a check of the catalogue.

use std::path::{Path, PathBuf};

use mallcheck::spec::catalog;
use mallcheck::spec::schemas::{CHECK_KEYWORD, SCHEMA_NAMES, SchemaSet};
use serde_json::Value;

/// Keywords that constrain an instance (as opposed to applicators and annotations).
const CONSTRAINTS: &[&str] = &[
    "type",
    "enum",
    "const",
    "required",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "additionalProperties",
];

/// Keywords whose values are instance data, not subschemas.
const DATA_KEYWORDS: &[&str] = &["enum", "const", "examples", "default", "required"];

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas")
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("schema file is readable");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn spec_files() -> Vec<(String, Value)> {
    SCHEMA_NAMES
        .iter()
        .map(|name| {
            let path = schemas_dir().join(format!("{name}.json"));
            (name.to_string(), read(&path))
        })
        .collect()
}

/// Calls `visit(pointer, node, nearest_check)` for every subschema of `node`.
fn walk<'a>(
    node: &'a Value,
    pointer: &str,
    inherited: Option<&'a str>,
    visit: &mut dyn FnMut(&str, &'a Value, Option<&'a str>),
) {
    let Value::Object(map) = node else {
        if let Value::Array(items) = node {
            for (i, item) in items.iter().enumerate() {
                walk(item, &format!("{pointer}/{i}"), inherited, visit);
            }
        }
        return;
    };
    let nearest = map.get(CHECK_KEYWORD).and_then(Value::as_str).or(inherited);
    visit(pointer, node, nearest);
    for (key, value) in map {
        if DATA_KEYWORDS.contains(&key.as_str()) || key == CHECK_KEYWORD {
            continue;
        }
        let here = format!("{pointer}/{key}");
        match (key.as_str(), value) {
            ("properties" | "patternProperties" | "$defs", Value::Object(members)) => {
                for (member, schema) in members {
                    walk(schema, &format!("{here}/{member}"), nearest, visit);
                }
            }
            _ => walk(value, &here, nearest, visit),
        }
    }
}

#[test]
fn every_schema_file_is_valid_against_the_2020_12_meta_schema() {
    let mut checked = 0;
    for entry in std::fs::read_dir(schemas_dir()).expect("schemas/ exists") {
        let path = entry.expect("directory entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let document = read(&path);
        assert_eq!(
            document.get("$schema").and_then(Value::as_str),
            Some("https://json-schema.org/draft/2020-12/schema"),
            "{} declares draft 2020-12",
            path.display()
        );
        if let Err(e) = jsonschema::meta::validate(&document) {
            panic!(
                "{} violates the meta-schema at {}: {e}",
                path.display(),
                e.instance_path()
            );
        }
        checked += 1;
    }
    assert!(
        checked >= SCHEMA_NAMES.len(),
        "only {checked} files checked"
    );
}

#[test]
fn every_x_check_names_a_catalogue_entry() {
    for (name, document) in spec_files() {
        walk(&document, "", None, &mut |pointer, node, _| {
            if let Some(id) = node.get(CHECK_KEYWORD) {
                let id = id.as_str().unwrap_or_default();
                assert!(
                    catalog::find(id).is_some(),
                    "{name}.json{pointer}: x-check {id:?} is not in the catalogue"
                );
            }
        });
    }
}

#[test]
fn every_constraint_is_attributable_to_a_check() {
    let files = spec_files();
    for (name, document) in &files {
        let shared = name == "common";
        walk(document, "", None, &mut |pointer, node, nearest| {
            let constrained = CONSTRAINTS.iter().any(|k| node.get(*k).is_some());
            if shared {
                assert!(
                    node.get(CHECK_KEYWORD).is_none(),
                    "common.json{pointer}: shared definitions carry no x-check (the user decides)"
                );
            } else if constrained {
                assert!(
                    nearest.is_some(),
                    "{name}.json{pointer}: a rule without an x-check above it"
                );
            }
        });
    }
    // A shared definition is attributed where it is used: every reference to common.json sits
    // under an x-check.
    for (name, document) in &files {
        walk(document, "", None, &mut |pointer, node, nearest| {
            let refers = node
                .get("$ref")
                .and_then(Value::as_str)
                .is_some_and(|r| r.starts_with("common.json"));
            if refers {
                assert!(nearest.is_some(), "{name}.json{pointer}: unattributed $ref");
            }
        });
    }
}

#[test]
fn every_property_description_cites_its_spec_section() {
    for (name, document) in spec_files() {
        walk(&document, "", None, &mut |pointer, node, _| {
            // Conditions under `if` only test values; they declare no field.
            let Some(properties) = node.get("properties").and_then(Value::as_object) else {
                return;
            };
            if pointer.split('/').any(|segment| segment == "if") {
                return;
            }
            for (field, schema) in properties {
                let description = schema
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                assert!(
                    description.contains('§'),
                    "{name}.json{pointer}/properties/{field}: description must cite a spec section"
                );
            }
        });
    }
}

#[test]
fn every_file_has_an_id_under_the_shared_base() {
    for (name, document) in spec_files() {
        assert_eq!(
            document.get("$id").and_then(Value::as_str),
            Some(format!("https://mallcheck.invalid/schemas/{name}.json").as_str()),
            "{name}.json"
        );
    }
}

#[test]
fn the_directory_loads_like_the_embedded_copy() {
    let from_dir = SchemaSet::load_dir(&schemas_dir()).expect("schemas/ loads");
    let embedded = SchemaSet::embedded().expect("embedded schemas load");
    assert_eq!(from_dir.names(), embedded.names());
    for name in embedded.names() {
        assert_eq!(from_dir.document(name), embedded.document(name), "{name}");
    }
}
