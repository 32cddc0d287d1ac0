//! JSON value helpers shared by the checks, the schemas and the change classifier: type names
//! as JSON Schema spells them, and JSON Pointer (RFC 6901) tokens.

pub mod scan;

use serde_json::Value;

/// The JSON type of a value, with integers told apart from other numbers (as JSON Schema does).
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A key as one JSON Pointer token: `~` becomes `~0` and `/` becomes `~1` (RFC 6901).
pub fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The unescaped tokens of a JSON Pointer (`/a~1b/0` gives `a/b`, `0`).
pub fn pointer_segments(pointer: &str) -> impl Iterator<Item = String> + '_ {
    pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_tokens_escape_and_unescape() {
        assert_eq!(escape_pointer("a/b~c"), "a~1b~0c");
        let tokens: Vec<String> = pointer_segments("/a~1b~0c/0").collect();
        assert_eq!(tokens, ["a/b~c", "0"]);
    }
}
