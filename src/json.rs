//! JSON value helpers shared by the checks and the release diff.

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
