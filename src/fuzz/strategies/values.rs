//! Generic generators: magnitudes, text and characters, near-misses of a real string,
//! integers, floats, member keys and any JSON value.

use std::sync::Arc;

use proptest::num::u64::BinarySearch;
use proptest::prelude::RngExt;
use proptest::strategy::{NewTree, Strategy};
use proptest::test_runner::{TestRng, TestRunner};
use serde_json::{Map, Value, json};

use super::draw::{
    Gen, any_bool, any_char, below, char_range, just, recursive, select, up_to, vec, zip,
};
pub(super) use super::weighted::weighted;

/// The generator `make()` builds, made once per thread and shared: a generator holds no state
/// of its draws, and those without parameters are part of every field's (hundreds per
/// endpoint: a character of text, any JSON value).
macro_rules! shared {
    ($make:ident: $t:ty) => {{
        thread_local! {
            static SHARED: Gen<$t> = $make();
        }
        SHARED.with(Gen::clone)
    }};
}

/// Positive integers from `lo`, mostly up to `common`, sometimes far beyond (up to `hi`); they
/// shrink by binary search towards `lo`, so a threshold is found exactly.
#[derive(Debug, Clone, Copy)]
pub struct Magnitude {
    /// Smallest value, and the shrink target.
    pub lo: u64,
    /// Upper end of the usual values.
    pub common: u64,
    /// Largest value.
    pub hi: u64,
}

impl Strategy for Magnitude {
    type Tree = BinarySearch;
    type Value = u64;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        Ok(BinarySearch::new_above(self.lo, self.value(runner.rng())))
    }
}

impl Magnitude {
    /// The value a tree starts from.
    fn value(&self, rng: &mut TestRng) -> u64 {
        let common = self.common.clamp(self.lo, self.hi);
        match rng.random_range(0..10u32) {
            0..=4 => rng.random_range(self.lo..=common),
            5..=7 => log_uniform(rng, self.lo, common),
            _ => log_uniform(rng, common.saturating_add(1).min(self.hi), self.hi),
        }
    }
}

/// `magnitude` as a [`Gen`].
pub fn magnitude(magnitude: Magnitude) -> Gen<u64> {
    Gen::pair(magnitude, move |r| Ok(magnitude.value(r.rng())))
}

/// A value in `lo..=hi` whose bit length is uniform.
pub(super) fn log_uniform(rng: &mut proptest::test_runner::TestRng, lo: u64, hi: u64) -> u64 {
    let bits = |n: u64| 64 - n.leading_zeros();
    let b = rng.random_range(bits(lo)..=bits(hi));
    let start = if b == 0 { 0 } else { 1u64 << (b - 1) };
    let end = if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
    rng.random_range(start.max(lo)..=end.min(hi))
}

/// Printable punctuation, including quote and escape characters.
pub(super) const PUNCTUATION: &[char] = &[
    '-', '_', '.', ':', '/', '@', '#', '%', '&', '*', '+', '=', '?', '!', '\'', '"', '\\', '<',
    '>', '{', '}', '[', ']', '(', ')', '$', ',', ';', '~', '^', '`', '|',
];

/// Whitespace other than the space, control characters and invisible characters.
pub(super) const ODD_CHARS: &[char] = &[
    '\t', '\n', '\r', '\u{0}', '\u{1b}', '\u{7f}', '\u{85}', '\u{a0}', '\u{2028}', '\u{200b}',
    '\u{202e}', '\u{feff}', '\u{3000}', '\u{fffd}', '\u{301}',
];

/// One character of generated text: mostly ASCII letters and digits, often a space, sometimes
/// punctuation, CJK, emoji, controls or any Unicode scalar.
pub fn text_char() -> Gen<char> {
    shared!(new_text_char: char)
}

fn new_text_char() -> Gen<char> {
    weighted(vec![
        (8, char_range('a', 'z')),
        (3, char_range('0', '9')),
        (2, char_range('A', 'Z')),
        (3, just(' ')),
        (2, select(PUNCTUATION)),
        (1, select(ODD_CHARS)),
        (2, char_range('\u{4e00}', '\u{9fa5}')),
        (1, char_range('\u{1f300}', '\u{1f64f}')),
        (1, any_char()),
    ])
}

/// Text of 1 to `max` characters of [`text_char`].
pub fn text(max: usize) -> Gen<String> {
    vec(text_char(), 1..=max.max(1)).map(|chars| chars.into_iter().collect())
}

/// Long runs of one character (up to `max_run`), shrinking to the shortest still failing.
pub fn long_text(max_run: u64) -> Gen<String> {
    let fill = select(&['a', '9', ' ', '商', 'é', '\u{1f600}'][..]);
    zip(
        magnitude(Magnitude {
            lo: 1,
            common: 512,
            hi: max_run.max(512),
        }),
        fill,
    )
    .map(|(n, c)| c.to_string().repeat(usize::try_from(n).unwrap_or(70_000)))
}

/// Strings that often trip parsers, templating, SQL and number conversion.
pub(super) const SPECIAL_STRINGS: &[&str] = &[
    " ",
    "  ",
    "\t",
    "\n",
    "null",
    "undefined",
    "true",
    "false",
    "0",
    "-1",
    "NaN",
    "1e309",
    "9223372036854775808",
    "0x10",
    "' OR '1'='1",
    "\"; DROP TABLE mall; --",
    "%s%s%n",
    "%00",
    // SQL LIKE's wildcards: a filter written `merchant_id LIKE ?` lists every merchant's malls
    // for `%`.
    "%",
    "_",
    "{{7*7}}",
    "${jndi:ldap://x/a}",
    "<script>alert(1)</script>",
    "../../etc/passwd",
    "\\",
    "\"",
    "'",
    "\u{0}",
    "\u{3000}",
    "管理员",
    "ａｄｍｉｎ",
    "e\u{301}",
    "\u{202e}nimda",
    "🙂",
];

/// Small variations of a real value: padded, upper-cased, doubled, truncated, one character
/// replaced or inserted.
pub fn near(base: &str) -> Gen<String> {
    let s = base.to_string();
    let chars: Arc<Vec<char>> = Arc::new(s.chars().collect());
    let n = chars.len();
    let (c1, c2, c3) = (Arc::clone(&chars), Arc::clone(&chars), chars);
    weighted(vec![
        (2, just(format!("{s} "))),
        (2, just(format!(" {s}"))),
        (1, just(format!(" {s} "))),
        (1, just(s.to_uppercase())),
        (1, just(format!("{s}{s}"))),
        (1, just(format!("{s}\n"))),
        (1, just(format!("{s}\u{0}"))),
        (2, below(n.max(1)).map(move |k| c1.iter().take(k).collect())),
        (
            2,
            zip(below(n.max(1)), text_char()).map(move |(k, c)| {
                let mut v = c2.to_vec();
                if let Some(slot) = v.get_mut(k) {
                    *slot = c;
                }
                v.into_iter().collect()
            }),
        ),
        (
            2,
            zip(up_to(n), text_char()).map(move |(k, c)| {
                let mut v = c3.to_vec();
                v.insert(k.min(v.len()), c);
                v.into_iter().collect()
            }),
        ),
    ])
}

/// Integers of every size and sign, as JSON numbers.
pub fn int_value() -> Gen<Value> {
    shared!(new_int_value: Value)
}

fn new_int_value() -> Gen<Value> {
    let max = i64::MAX.unsigned_abs();
    let up_to_max = Magnitude {
        lo: 1,
        common: 1000,
        hi: max,
    };
    weighted(vec![
        (3, magnitude(up_to_max).map(Value::from)),
        (
            1,
            select(&[0i64, -1, i64::MIN, i64::MAX][..]).map(Value::from),
        ),
        (
            1,
            magnitude(up_to_max).map(|n| Value::from(-i64::try_from(n).unwrap_or(i64::MAX))),
        ),
        (1, just(Value::from(u64::MAX))),
    ])
}

/// Fractions, negative zero and extreme floats.
pub(super) const FLOATS: &[f64] = &[
    0.5,
    -1.5,
    10.0,
    10.5,
    1e3,
    1e20,
    -0.0,
    1.797_693_134_862_315_7e308,
];

pub(super) fn float_value() -> Gen<Value> {
    shared!(new_float_value: Value)
}

fn new_float_value() -> Gen<Value> {
    select(FLOATS).map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number))
}

/// Keys for extra members: common names, names of real fields, prototype pollution, empty.
pub(super) const EXTRA_KEYS: &[&str] = &[
    "extra",
    "id",
    "",
    " ",
    "__proto__",
    "constructor",
    "$where",
    "$gt",
    "null",
    "appid",
    "filter",
    "seller",
    "sort",
    "cursor",
    "count",
    "endCursor",
    "merchantId",
    "mallID",
    "mallSn",
    "data",
    "success",
];

pub(super) fn key() -> Gen<String> {
    shared!(new_key: String)
}

fn new_key() -> Gen<String> {
    weighted(vec![
        (3, select(EXTRA_KEYS).map(str::to_string)),
        (2, text(12)),
    ])
}

/// Any JSON value, up to three levels deep.
pub fn json_any() -> Gen<Value> {
    shared!(new_json_any: Value)
}

fn new_json_any() -> Gen<Value> {
    let leaf = weighted(vec![
        (1, just(Value::Null)),
        (1, any_bool().map(Value::Bool)),
        (2, int_value()),
        (1, float_value()),
        (1, just(json!(""))),
        (3, text(12).map(Value::String)),
    ]);
    recursive(leaf, 3, 24, 4, |inner| {
        weighted(vec![
            (1, vec(inner.clone(), 0..4).map(Value::Array)),
            (
                1,
                vec(zip(key(), inner), 0..4)
                    .map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
            ),
        ])
    })
}

/// Values of a type other than string.
pub fn non_string() -> Gen<Value> {
    shared!(new_non_string: Value)
}

fn new_non_string() -> Gen<Value> {
    weighted(vec![
        (2, int_value()),
        (1, float_value()),
        (1, any_bool().map(Value::Bool)),
        (1, just(json!([]))),
        (1, just(json!({}))),
        (1, json_any()),
    ])
}
