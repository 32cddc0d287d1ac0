//! Reshapes the exported schemas for tools that read OpenAPI as types (client generators,
//! linters) without changing what they accept: the schema files keep `required` split per check
//! inside `allOf` (so a missing field is blamed on the right check), which openapi-typescript
//! and its kind read as "every field optional".

use serde_json::{Map, Value};

use crate::spec::schemas::CHECK_KEYWORD;

/// Keywords an `allOf` member may hold besides `required` and still be folded into its parent:
/// annotations, which constrain nothing.
const ANNOTATIONS: &[&str] = &["description", "title", "$comment", CHECK_KEYWORD];

/// Applies [`hoist_required`] and [`give_arrays_items`] to every schema under `node`.
pub fn for_typed_clients(node: &mut Value) {
    match node {
        Value::Object(map) => {
            hoist_required(map);
            give_arrays_items(map);
            for (key, value) in map.iter_mut() {
                if !matches!(key.as_str(), "enum" | "const" | "examples" | "default") {
                    for_typed_clients(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(for_typed_clients),
        _ => {}
    }
}

/// Moves the `required` of unconditional `allOf` members (holding nothing else but annotations)
/// into the schema's own `required`, and drops the members so emptied. The same instances are
/// valid before and after: `allOf: [{required: A}, {required: B}]` is `required: A ∪ B`. The
/// checks of the dropped members are listed in `x-required-checks`, so the document still says
/// which check demands which field.
fn hoist_required(map: &mut Map<String, Value>) {
    let Some(Value::Array(members)) = map.get_mut("allOf") else {
        return;
    };
    let mut hoisted: Vec<Value> = Vec::new();
    let mut checks = Map::new();
    members.retain(|member| {
        let Some(m) = member.as_object() else {
            return true;
        };
        let foldable = m.get("required").is_some_and(Value::is_array)
            && m.keys()
                .all(|k| k == "required" || ANNOTATIONS.contains(&k.as_str()));
        if !foldable {
            return true;
        }
        let names = m["required"].as_array().cloned().unwrap_or_default();
        if let Some(check) = m.get(CHECK_KEYWORD).and_then(Value::as_str) {
            checks.insert(check.to_string(), Value::Array(names.clone()));
        }
        hoisted.extend(names);
        false
    });
    if hoisted.is_empty() {
        return;
    }
    if members.is_empty() {
        map.remove("allOf");
    }
    let required = map
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(existing) = required {
        for name in hoisted {
            if !existing.contains(&name) {
                existing.push(name);
            }
        }
    }
    if !checks.is_empty() {
        map.insert("x-required-checks".into(), Value::Object(checks));
    }
}

/// Gives an array schema without `items` (element shape left open, or constrained elsewhere)
/// the explicit `items: {}` that OpenAPI linters ask for; `{}` accepts every element, as the
/// missing keyword did.
fn give_arrays_items(map: &mut Map<String, Value>) {
    let is_array = match map.get("type") {
        Some(Value::String(t)) => t == "array",
        Some(Value::Array(types)) => types.iter().any(|t| t == "array"),
        _ => false,
    };
    if is_array && !map.contains_key("items") && !map.contains_key("prefixItems") {
        map.insert("items".into(), Value::Object(Map::new()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unconditional_required_members_fold_into_the_object() {
        let mut schema = json!({
            "type": "object",
            "required": ["a"],
            "allOf": [
                {"description": "x", "x-check": "mall.fields", "required": ["a", "b"]},
                {"if": {"required": ["c"]}, "then": {"required": ["d"]}},
                {"x-check": "mall.always-null-fields", "required": ["e"]}
            ]
        });
        for_typed_clients(&mut schema);
        assert_eq!(schema["required"], json!(["a", "b", "e"]));
        assert_eq!(
            schema["allOf"],
            json!([{"if": {"required": ["c"]}, "then": {"required": ["d"]}}]),
            "a conditional member stays"
        );
        assert_eq!(
            schema["x-required-checks"]["mall.fields"],
            json!(["a", "b"])
        );
        assert_eq!(
            schema["x-required-checks"]["mall.always-null-fields"],
            json!(["e"])
        );
    }

    #[test]
    fn a_member_with_a_rule_besides_required_stays() {
        let original = json!({"allOf": [{"required": ["a"], "minProperties": 2}]});
        let mut schema = original.clone();
        for_typed_clients(&mut schema);
        assert_eq!(schema, original);
    }

    #[test]
    fn arrays_get_items_and_data_is_left_alone() {
        let mut schema = json!({
            "properties": {
                "open": {"type": "array"},
                "nullable": {"type": ["array", "null"], "maxItems": 0},
                "typed": {"type": "array", "items": {"type": "string"}},
                "literal": {"const": {"type": "array"}}
            }
        });
        for_typed_clients(&mut schema);
        assert_eq!(schema["properties"]["open"]["items"], json!({}));
        assert_eq!(schema["properties"]["nullable"]["items"], json!({}));
        assert_eq!(
            schema["properties"]["typed"]["items"],
            json!({"type": "string"})
        );
        assert_eq!(
            schema["properties"]["literal"],
            json!({"const": {"type": "array"}})
        );
    }
}
