//! JSON value helpers shared by the checks, the schemas and the change classifier: type names
//! as JSON Schema spells them, and JSON Pointer (RFC 6901) tokens.

#[cfg(test)]
pub mod heap_probe;
pub mod reach;
pub mod scan;
pub mod selector;
pub mod tree;

use serde_json::Value;

/// Bytes of `value` serialized as compact JSON, counted without building the text
/// (`usize::MAX` if it could not be serialized).
pub fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

/// What a value is, as a sentence names it ("a string", "null").
pub fn a_json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

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

/// The JSON Pointer of `node` within `root` (the very value, found by its address), or
/// `None` when it is not in that tree. Depth-first, with one path of tokens: finding the
/// location of one node costs no allocation per node visited.
pub fn pointer_to(root: &Value, node: &Value) -> Option<String> {
    fn walk(v: &Value, node: &Value, path: &mut Vec<String>) -> bool {
        if std::ptr::eq(v, node) {
            return true;
        }
        match v {
            Value::Array(items) => items.iter().enumerate().any(|(i, item)| {
                path.push(i.to_string());
                let found = walk(item, node, path);
                if !found {
                    path.pop();
                }
                found
            }),
            Value::Object(map) => map.iter().any(|(k, item)| {
                path.push(escape_pointer(k));
                let found = walk(item, node, path);
                if !found {
                    path.pop();
                }
                found
            }),
            _ => false,
        }
    }
    let mut path = Vec::new();
    walk(root, node, &mut path).then(|| path.iter().map(|t| format!("/{t}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pointer_of_a_node_is_found_by_its_address() {
        let root = serde_json::json!({"data": [{"a/b": 1}, {"a/b": 1}], "x": 1});
        let second = &root["data"][1]["a/b"];
        assert_eq!(pointer_to(&root, second).as_deref(), Some("/data/1/a~1b"));
        assert_eq!(pointer_to(&root, &root).as_deref(), Some(""));
        assert_eq!(pointer_to(&root, &serde_json::json!(1)), None);
    }

    #[test]
    fn pointer_tokens_escape_and_unescape() {
        assert_eq!(escape_pointer("a/b~c"), "a~1b~0c");
        let tokens: Vec<String> = pointer_segments("/a~1b~0c/0").collect();
        assert_eq!(tokens, ["a/b~c", "0"]);
    }
}
