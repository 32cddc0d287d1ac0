//! Whole bodies that are not the expected object: other JSON, raw text, broken or spliced
//! JSON, deep nesting, renamed keys.

use serde_json::{Value, json};

use super::draw::{Gen, below, just, select, zip};
use super::shapes::Shape;
use super::values::{Magnitude, json_any, magnitude, weighted};
use crate::fuzz::body::{FuzzBody, Limits, splice};

/// Raw texts that are not JSON objects.
pub(super) const RAW_TEXTS: &[&str] = &[
    "{",
    "}",
    "[",
    "not json",
    "   ",
    "{}}",
    "{,}",
    "\"",
    "{\"appid\":}",
    "{'appid':'x'}",
    "<xml/>",
    "appid=x&count=10",
    "null\u{0}",
];

/// Raw tokens spliced where a value belongs: JSON that many parsers reject or misread.
/// [`token_label`] tells what each is: not JSON, a number out of range, or unusual JSON.
pub(super) const RAW_TOKENS: &[&str] = &[
    "1e999",
    "-1e999",
    MANY_DIGITS,
    "1E2",
    "01",
    "-0",
    "1.0e1",
    "100000000000000000000000000000",
    "NaN",
    "Infinity",
    "0x10",
    "\"\\ud800\"",
    "\"\\udfff\"",
    "\"\\u0000\"",
    "\"a\\u0000b\"",
    "undefined",
    "'x'",
    "\"\u{ff}\"",
];

/// Stands for a number of ten thousand digits in [`RAW_TOKENS`] (spelt out by [`token_text`]).
const MANY_DIGITS: &str = "<10000 digits>";

/// The text a raw token is spliced as.
fn token_text(token: &str) -> String {
    if token == MANY_DIGITS {
        format!("1{}", "0".repeat(9_999))
    } else {
        token.to_string()
    }
}

/// What a raw token is: JSON's grammar refuses it (`NaN`, `Infinity`, `0x10`, `01`, quotes
/// other than double), it is JSON but no parser of a number type holds it (`1e999`, ten
/// thousand digits), or it is JSON that parsers read differently (`-0`, `1E2`, lone
/// surrogates, NUL).
pub(super) fn token_label(token: &str) -> &'static str {
    let text = token_text(token);
    let out_of_range = text.parse::<f64>().is_ok_and(f64::is_infinite);
    if out_of_range && crate::json::scan::anomalies(text.as_bytes()).is_ok() {
        "JSON number out of range"
    } else if serde_json::from_str::<serde_json::Value>(&text).is_err()
        && crate::json::scan::anomalies(text.as_bytes()).is_err()
    {
        "not JSON"
    } else {
        "unusual JSON"
    }
}

pub(super) fn raw(label: &str, bytes: Vec<u8>) -> FuzzBody {
    FuzzBody::Raw {
        label: label.to_string(),
        bytes,
    }
}

/// Bodies that are not the expected object at all.
pub(super) fn whole_bodies(shape: &Shape, other: Value, limits: Limits) -> Gen<FuzzBody> {
    let base = shape.baseline.clone();
    let text = serde_json::to_string(&base).expect("a serde_json::Value always serializes");
    let bytes = text.clone().into_bytes();
    let leaves: Vec<&'static str> = shape.fields.iter().map(|f| f.pointer).collect();
    let scalars = vec![
        json!(null),
        json!(true),
        json!(0),
        json!(""),
        json!([]),
        json!({}),
    ];
    let upper_keys = rename_keys(&base);
    let (b1, b2, b3, b4) = (base.clone(), base.clone(), base.clone(), base.clone());
    let len = bytes.len();
    let duplicate = format!("{{\"appid\":\"x\",{}", text.get(1..).unwrap_or_default());
    let trailing_comma = format!(
        "{},}}",
        text.get(..text.len().saturating_sub(1)).unwrap_or_default()
    );
    let nesting = Magnitude {
        lo: 1,
        common: 200,
        hi: limits.max_nesting,
    };
    weighted(vec![
        (2, select(scalars).map(FuzzBody::Json)),
        (1, just(FuzzBody::Json(json!([base])))),
        (1, just(FuzzBody::Json(other))),
        (1, just(FuzzBody::Json(upper_keys))),
        (2, json_any().map(FuzzBody::Json)),
        (1, just(raw("empty body", Vec::new()))),
        (
            2,
            select(RAW_TEXTS).map(|t| raw("not JSON", t.as_bytes().to_vec())),
        ),
        (
            2,
            below(len.max(1)).map(move |n| raw("truncated JSON", bytes[..n].to_vec())),
        ),
        (
            1,
            just(raw(
                "byte order mark",
                format!("\u{feff}{text}").into_bytes(),
            )),
        ),
        (
            1,
            select(&[" x", "}", "{}", "\u{0}", "\n\n", ",", "]"][..])
                .map(move |t| raw("trailing bytes", format!("{text}{t}").into_bytes())),
        ),
        (1, just(raw("duplicate key", duplicate.into_bytes()))),
        (1, just(raw("trailing comma", trailing_comma.into_bytes()))),
        (
            2,
            magnitude(nesting).map(|n| raw("deeply nested arrays", nested(n))),
        ),
        (
            2,
            zip(select(leaves.clone()), select(RAW_TOKENS)).map(move |(p, token)| {
                let bytes = splice(&b1, p, &token_text(token)).unwrap_or_default();
                raw(&format!("{} at {p}", token_label(token)), bytes)
            }),
        ),
        (
            1,
            zip(select(leaves.clone()), magnitude(nesting)).map(move |(p, n)| {
                let token = String::from_utf8(nested(n)).unwrap_or_default();
                raw(
                    &format!("deeply nested value at {p}"),
                    splice(&b2, p, &token).unwrap_or_default(),
                )
            }),
        ),
        (
            1,
            select(leaves).map(move |p| {
                let marked = splice(&b3, p, "\"\u{1}\"").unwrap_or_default();
                let bytes = replace_bytes(&marked, &[1], &[0xff, 0xfe]);
                raw(&format!("invalid UTF-8 at {p}"), bytes)
            }),
        ),
        (
            1,
            just(FuzzBody::Json(Value::Object(
                b4.as_object()
                    .map(|m| {
                        m.iter()
                            .rev()
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect()
                    })
                    .unwrap_or_default(),
            ))),
        ),
    ])
}

pub(super) fn nested(depth: u64) -> Vec<u8> {
    let n = usize::try_from(depth).unwrap_or(100_000);
    let mut out = vec![b'['; n];
    out.extend(std::iter::repeat_n(b']', n));
    out
}

pub(super) fn replace_bytes(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    match haystack.windows(needle.len()).position(|w| w == needle) {
        Some(i) => [&haystack[..i], with, &haystack[i + needle.len()..]].concat(),
        None => haystack.to_vec(),
    }
}

/// The body with every key's first letter upper-cased (`Appid`, `Filter`, ...).
pub(super) fn rename_keys(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let mut cs = k.chars();
                    let renamed = cs
                        .next()
                        .map(|c| c.to_uppercase().chain(cs).collect())
                        .unwrap_or_default();
                    (renamed, rename_keys(v))
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_tokens_are_labelled_by_what_they_are() {
        let label = |t: &str| token_label(t);
        for t in ["1e999", "-1e999", MANY_DIGITS] {
            assert_eq!(label(t), "JSON number out of range", "{t}");
        }
        for t in ["NaN", "Infinity", "0x10", "01", "undefined", "'x'"] {
            assert_eq!(label(t), "not JSON", "{t}");
        }
        for t in ["1E2", "-0", "1.0e1", "\"\\ud800\"", "\"\\u0000\""] {
            assert_eq!(label(t), "unusual JSON", "{t}");
        }
        assert_eq!(token_text(MANY_DIGITS).len(), 10_000);
    }
}
