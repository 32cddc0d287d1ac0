//! An OpenAPI 3.1 document of the interface built from the schemas, so other tools (Schemathesis, Prism, client generators) use the same contract as mallcheck.
//!
//! Every schema file becomes `components.schemas.<name>` with its `$schema` and `$id` dropped
//! and its `$ref`s rewritten to `#/components/schemas/<name>…`; the two POST operations of
//! spec §4 reference the request and response schemas; §5's Authorization header is an
//! `apiKey` security scheme. Each schema is then reshaped for client generators and linters
//! without changing what it accepts (see [`typed`]): `required` at object level, `items` on
//! every array.

mod typed;

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use url::Url;

use crate::spec::schemas::{BASE_URI, SchemaSet};

/// Path of the mall list operation (spec §4.1).
pub const MALL_LIST_PATH: &str = "/optimus/core/open/mall/queryMallList";
/// Path of the mall products operation (spec §4.2).
pub const MALL_PRODUCTS_PATH: &str = "/optimus/core/open/mall/queryMallProducts";
/// Name of the security scheme for the Authorization header.
pub const SECURITY_SCHEME: &str = "appSignature";

const COMPONENTS: &str = "#/components/schemas/";

/// What the reference server answers instead of the data; the spec shows none of it (§7).
const REFERENCE_FAILURES: &str = "Failure codes, messages and HTTP statuses are not shown (§7.2, §7.3). \
    The reference server answers the envelope {success: false, code, msg, data: null} with 400 (code 4000) \
    for a body that is not JSON or breaks the request schema, 401 (4010) for a missing or wrong Authorization \
    or an appid that differs from it, 404 (4040) for a mall or cursor that names nothing of the merchant's, \
    405 (4050, with Allow: POST) for another method and 413 (4130) for a body above 1 MiB.";

/// Why the document cannot be built: what it is about (a schema, `--schemas`) and why.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {message}")]
pub struct OpenapiError {
    /// The schema or setting at fault.
    pub what: String,
    /// What is wrong, a lowercase fragment.
    pub message: String,
}

fn problem(what: impl Into<String>, message: impl Into<String>) -> OpenapiError {
    OpenapiError {
        what: what.into(),
        message: message.into(),
    }
}

/// The URI a schema file is known by: its `$id`, else [`BASE_URI`] + file name.
fn schema_uri(name: &str, doc: &Value) -> Option<Url> {
    match doc.get("$id").and_then(Value::as_str) {
        Some(id) => Url::parse(id).ok(),
        None => Url::parse(&format!("{BASE_URI}{name}.json")).ok(),
    }
}

/// Rewrites every `$ref` under `node` from a file reference into a components reference.
fn rewrite_refs(
    node: &mut Value,
    base: &Url,
    names: &HashMap<String, String>,
) -> Result<(), String> {
    match node {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get_mut("$ref") {
                let mut target = base
                    .join(reference)
                    .map_err(|e| format!("bad $ref {reference:?}: {e}"))?;
                let fragment = target.fragment().unwrap_or("").to_string();
                target.set_fragment(None);
                let name = names
                    .get(target.as_str())
                    .ok_or_else(|| format!("$ref {reference:?} names no schema file"))?;
                *reference = format!("{COMPONENTS}{name}{fragment}");
            }
            for value in map.values_mut() {
                rewrite_refs(value, base, names)?;
            }
        }
        Value::Array(items) => {
            for value in items {
                rewrite_refs(value, base, names)?;
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
    Ok(())
}

/// `components.schemas`: every schema of the set, references rewritten.
fn components(schemas: &SchemaSet) -> Result<Map<String, Value>, OpenapiError> {
    let mut names = HashMap::new();
    for name in schemas.names() {
        if let Some(uri) = schemas.document(name).and_then(|d| schema_uri(name, d)) {
            names.insert(uri.to_string(), name.to_string());
        }
    }
    let mut out = Map::new();
    for name in schemas.names() {
        let Some(doc) = schemas.document(name) else {
            continue;
        };
        let base = schema_uri(name, doc)
            .ok_or_else(|| problem(format!("schema {name}"), "`$id` is not an absolute URI"))?;
        let mut doc = doc.clone();
        if let Some(map) = doc.as_object_mut() {
            map.remove("$schema");
            map.remove("$id");
        }
        rewrite_refs(&mut doc, &base, &names).map_err(|e| problem(format!("schema {name}"), e))?;
        typed::for_typed_clients(&mut doc);
        out.insert(name.to_string(), doc);
    }
    // §2.7: productIntroduction is a string holding JSON; say so in JSON Schema's own words.
    if out.contains_key("product-introduction")
        && let Some(intro) = out
            .get_mut("product")
            .and_then(|p| p.pointer_mut("/properties/productIntroduction"))
            .and_then(Value::as_object_mut)
    {
        intro.insert("contentMediaType".into(), json!("application/json"));
        intro.insert(
            "contentSchema".into(),
            json!({ "$ref": format!("{COMPONENTS}product-introduction") }),
        );
    }
    Ok(out)
}

fn json_body(schema: &str, description: &str) -> Value {
    json!({
        "description": description,
        "content": { "application/json": { "schema": { "$ref": format!("{COMPONENTS}{schema}") } } }
    })
}

fn required_schema(schemas: &SchemaSet, name: &str) -> Result<(), OpenapiError> {
    if schemas.has(name) {
        Ok(())
    } else {
        Err(problem(
            "--schemas",
            format!("the schema {name} is missing; the OpenAPI document needs it"),
        ))
    }
}

/// The OpenAPI 3.1 document for a schema set.
pub fn document(schemas: &SchemaSet) -> Result<Value, OpenapiError> {
    for name in [
        "mall-list-request",
        "mall-list-response",
        "products-request",
        "products-response",
    ] {
        required_schema(schemas, name)?;
    }
    let components = components(schemas)?;
    Ok(json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Mall Query Interface",
            "version": env!("CARGO_PKG_VERSION"),
            "summary": "Mall list and mall products: two read-only JSON-over-HTTP operations of a merchant mall service.",
            "description": "Generated by `mallcheck openapi` from the JSON Schemas mallcheck validates responses with. \
                Section numbers (§) refer to the Mall Query Interface specification. `x-check` annotations name the \
                mallcheck check that enforces a rule. Where the specification leaves the request open (which fields \
                are required, values besides the shown ones, the page size limit, the next-page cursor), the request \
                schemas state what the reference server (`mallcheck serve`) accepts, and say so in their descriptions: \
                a request they accept is never answered 400 by it. Failure codes, HTTP statuses and the signature \
                scheme stay open (§5.2, §7).",
        },
        "servers": [{
            "url": "{base_url}",
            "description": "The service under test; both paths are appended to the base URL (§4).",
            "variables": { "base_url": {
                "default": "http://127.0.0.1:8080",
                "description": "Base URL, possibly with a path prefix (the default is `mallcheck serve`)."
            } }
        }],
        "security": [{ SECURITY_SCHEME: [] }],
        "paths": {
            MALL_LIST_PATH: { "post": {
                "operationId": "queryMallList",
                "summary": "List the malls of a merchant (§4.1)",
                "description": "Returns a page of the malls that belong to the merchant of `filter.seller`, \
                    with status, settings, seller identity and order statistics for each mall. Read-only (§1). \
                    How the next-page cursor is returned is not shown (§4.1).",
                "requestBody": {
                    "required": true,
                    "description": "§4.1 request body. Which fields are required is not shown (§4); the schema \
                        requires what the reference server requires.",
                    "content": { "application/json": { "schema": { "$ref": format!("{COMPONENTS}mall-list-request") } } }
                },
                "responses": {
                    "200": json_body("mall-list-response", "§4.1 envelope with success, code, msg and data; success is true with code 0000 (§7.1)."),
                    "default": { "description": REFERENCE_FAILURES }
                }
            } },
            MALL_PRODUCTS_PATH: { "post": {
                "operationId": "queryMallProducts",
                "summary": "List the products of one mall (§4.2)",
                "description": "Returns all products (SPU with SKUs) of the mall named by `mallID` (mallSn and \
                    signature as returned by the mall list), for the merchant user of `seller`. Read-only (§1).",
                "parameters": [{
                    "name": "X-env-flag",
                    "in": "header",
                    "required": false,
                    "description": "§5.3 optional header of digits seen on the products call; its purpose is not shown.",
                    "schema": { "type": "string", "pattern": "^[0-9]+$" }
                }],
                "requestBody": {
                    "required": true,
                    "description": "§4.2 request body. Which fields are required is not shown (§4); the schema \
                        requires what the reference server requires.",
                    "content": { "application/json": { "schema": { "$ref": format!("{COMPONENTS}products-request") } } }
                },
                "responses": {
                    "200": json_body("products-response", "§4.2 a JSON array of products with no envelope."),
                    "default": { "description": format!("The error response shape of this operation is not shown (§7.4). {REFERENCE_FAILURES}") }
                }
            } }
        },
        "components": {
            "schemas": components,
            "securitySchemes": { SECURITY_SCHEME: {
                "type": "apiKey",
                "in": "header",
                "name": "Authorization",
                "description": "§5.1: `<appid> <SIGNATURE>`, two parts separated by one space; the first part equals \
                    the body's appid. How the signature is computed is not shown (§5.2)."
            } }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        let schemas = SchemaSet::embedded().expect("embedded schemas");
        document(&schemas).expect("document")
    }

    fn refs<'a>(node: &'a Value, out: &mut Vec<&'a str>) {
        match node {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r);
                }
                m.values().for_each(|v| refs(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }

    #[test]
    fn every_ref_points_into_the_document() {
        let d = doc();
        let mut found = Vec::new();
        refs(&d, &mut found);
        assert!(found.len() > 10, "{found:?}");
        for r in found {
            let pointer = r
                .strip_prefix('#')
                .unwrap_or_else(|| panic!("external ref {r}"));
            assert!(d.pointer(pointer).is_some(), "dangling ref {r}");
        }
    }

    #[test]
    fn components_hold_every_schema_without_ids() {
        let d = doc();
        let schemas = SchemaSet::embedded().expect("embedded schemas");
        let components = d["components"]["schemas"].as_object().expect("schemas");
        let names: Vec<&str> = components.keys().map(String::as_str).collect();
        assert_eq!(names, schemas.names());
        for (name, c) in components {
            assert!(
                c.get("$id").is_none() && c.get("$schema").is_none(),
                "{name}"
            );
        }
        assert_eq!(
            d["components"]["schemas"]["mall"]["properties"]["mallSn"]["$ref"],
            "#/components/schemas/common/$defs/digit-string"
        );
    }

    #[test]
    fn both_operations_and_the_security_scheme_are_described() {
        let d = doc();
        assert_eq!(d["openapi"], "3.1.0");
        let list = &d["paths"][MALL_LIST_PATH]["post"];
        assert_eq!(
            list["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/mall-list-request"
        );
        assert_eq!(
            list["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/mall-list-response"
        );
        let products = &d["paths"][MALL_PRODUCTS_PATH]["post"];
        assert_eq!(
            products["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/products-response"
        );
        let scheme = &d["components"]["securitySchemes"][SECURITY_SCHEME];
        assert_eq!(
            (&scheme["type"], &scheme["in"], &scheme["name"]),
            (&json!("apiKey"), &json!("header"), &json!("Authorization"))
        );
        assert_eq!(d["security"][0][SECURITY_SCHEME], json!([]));
    }

    #[test]
    fn the_mall_requires_its_fields_at_object_level() {
        let d = doc();
        let mall = &d["components"]["schemas"]["mall"];
        let required = mall["required"].as_array().expect("object-level required");
        for field in ["mallSn", "signature", "seller", "taskId"] {
            assert!(required.contains(&json!(field)), "{field}: {required:?}");
        }
        assert_eq!(
            mall["x-required-checks"]["mall.always-null-fields"][0],
            "riskDisableTags"
        );
    }

    #[test]
    fn rewriting_resolves_relative_and_internal_refs() {
        let names = HashMap::from([
            (format!("{BASE_URI}common.json"), "common".to_string()),
            (format!("{BASE_URI}mall.json"), "mall".to_string()),
        ]);
        let base = Url::parse(&format!("{BASE_URI}mall.json")).expect("url");
        let mut node =
            json!({"a": {"$ref": "common.json#/$defs/long"}, "b": [{"$ref": "#/$defs/x"}]});
        rewrite_refs(&mut node, &base, &names).expect("rewrite");
        assert_eq!(node["a"]["$ref"], "#/components/schemas/common/$defs/long");
        assert_eq!(node["b"][0]["$ref"], "#/components/schemas/mall/$defs/x");
        let mut bad = json!({"$ref": "other.json"});
        assert!(rewrite_refs(&mut bad, &base, &names).is_err());
    }
}
