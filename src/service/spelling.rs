//! The same JSON in another spelling: whitespace, the keys of every object in reverse order,
//! and escaped characters (`\u0061` for the first letter of every string, `\uXXXX` for every
//! character outside ASCII, emoji as surrogate pairs). A service must check the signature over
//! the raw bytes it received (spec §5), so a correctly signed body in this spelling is served
//! like the compact one; a service that checks it over re-serialized JSON
//! (`JSON.stringify(parsedBody)`) turns it away.

use std::fmt::Write as _;

use serde_json::Value;

/// `body` respelled, or `None` when it is not JSON (a raw body is sent as it is).
pub fn respell(body: &[u8]) -> Option<Vec<u8>> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let mut out = String::new();
    write_value(&value, 0, &mut out);
    out.push('\n');
    Some(out.into_bytes())
}

fn write_value(v: &Value, depth: usize, out: &mut String) {
    match v {
        Value::Object(map) if map.is_empty() => out.push_str("{ }"),
        Value::Object(map) => {
            out.push_str("{\n");
            let inner = "  ".repeat(depth + 1);
            for (i, (k, v)) in map.iter().rev().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                out.push_str(&inner);
                write_string(k, out);
                out.push_str(" : ");
                write_value(v, depth + 1, out);
            }
            out.push('\n');
            out.push_str(&"  ".repeat(depth));
            out.push('}');
        }
        Value::Array(items) => {
            out.push_str("[ ");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(" , ");
                }
                write_value(item, depth, out);
            }
            out.push_str(" ]");
        }
        Value::String(s) => write_string(s, out),
        other => out.push_str(&other.to_string()),
    }
}

/// A JSON string with its first ASCII letter and every non-ASCII character escaped.
fn write_string(s: &str, out: &mut String) {
    out.push('"');
    let mut letter_escaped = false;
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str("\\/"),
            c if c.is_ascii_alphabetic() && !letter_escaped => {
                letter_escaped = true;
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_respelled_body_is_the_same_json_in_other_bytes() {
        let body = r#"{"appid":"app","filter":{"seller":{"merchantId":"m-1","role":"super_admin"}},"tags":["a/b","店😀",""],"n":-1.5,"z":null,"e":{},"t":true}"#;
        let respelled = respell(body.as_bytes()).unwrap();
        let text = String::from_utf8(respelled.clone()).unwrap();
        assert_ne!(respelled, body.as_bytes());
        let a: Value = serde_json::from_str(body).unwrap();
        let b: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(a, b, "{text}");
        assert!(text.contains("\\u0061pp"), "first letter escaped: {text}");
        assert!(
            text.contains("\\u5e97\\ud83d\\ude00"),
            "emoji as a pair: {text}"
        );
        assert!(text.is_ascii());
        let first_key = text.split('"').nth(1).unwrap();
        assert_eq!(first_key, "\\u0074", "keys in reverse order: {text}");
        // Re-serializing the parsed body gives back the compact spelling, not these bytes.
        assert_ne!(serde_json::to_vec(&b).unwrap(), respelled);
    }

    #[test]
    fn a_body_that_is_not_json_is_left_alone() {
        assert_eq!(respell(b"not json"), None);
    }
}
