//! Generic generators: magnitudes, text and characters, near-misses of a real string,
//! integers, floats, member keys and any JSON value.

use std::sync::Arc;

use proptest::char as pchar;
use proptest::collection::vec;
use proptest::num::u64::BinarySearch;
use proptest::prelude::RngExt;
use proptest::sample::select;
use proptest::strategy::{BoxedStrategy, Just, NewTree, Strategy};
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value, json};

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
        let rng = runner.rng();
        let common = self.common.clamp(self.lo, self.hi);
        let value = match rng.random_range(0..10u32) {
            0..=4 => rng.random_range(self.lo..=common),
            5..=7 => log_uniform(rng, self.lo, common),
            _ => log_uniform(rng, common.saturating_add(1).min(self.hi), self.hi),
        };
        Ok(BinarySearch::new_above(self.lo, value))
    }
}

/// A value in `lo..=hi` whose bit length is uniform.
pub(super) fn log_uniform(rng: &mut proptest::test_runner::TestRng, lo: u64, hi: u64) -> u64 {
    let bits = |n: u64| 64 - n.leading_zeros();
    let b = rng.random_range(bits(lo)..=bits(hi));
    let start = if b == 0 { 0 } else { 1u64 << (b - 1) };
    let end = if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
    rng.random_range(start.max(lo)..=end.min(hi))
}

/// One of `arms`, chosen by weight; it shrinks to earlier arms ([`super::weighted`]).
pub(super) fn weighted<T: std::fmt::Debug + 'static>(
    arms: Vec<(u32, BoxedStrategy<T>)>,
) -> BoxedStrategy<T> {
    super::weighted::Weighted::new(arms).boxed()
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
pub fn text_char() -> BoxedStrategy<char> {
    weighted(vec![
        (8, pchar::range('a', 'z').boxed()),
        (3, pchar::range('0', '9').boxed()),
        (2, pchar::range('A', 'Z').boxed()),
        (3, Just(' ').boxed()),
        (2, select(PUNCTUATION).boxed()),
        (1, select(ODD_CHARS).boxed()),
        (2, pchar::range('\u{4e00}', '\u{9fa5}').boxed()),
        (1, pchar::range('\u{1f300}', '\u{1f64f}').boxed()),
        (1, pchar::any().boxed()),
    ])
}

/// Text of 1 to `max` characters of [`text_char`].
pub fn text(max: usize) -> BoxedStrategy<String> {
    vec(text_char(), 1..=max.max(1))
        .prop_map(|chars| chars.into_iter().collect())
        .boxed()
}

/// Long runs of one character (up to `max_run`), shrinking to the shortest still failing.
pub fn long_text(max_run: u64) -> BoxedStrategy<String> {
    let fill = select(&['a', '9', ' ', '商', 'é', '\u{1f600}'][..]);
    (
        Magnitude {
            lo: 1,
            common: 512,
            hi: max_run.max(512),
        },
        fill,
    )
        .prop_map(|(n, c)| c.to_string().repeat(usize::try_from(n).unwrap_or(70_000)))
        .boxed()
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
pub fn near(base: &str) -> BoxedStrategy<String> {
    let s = base.to_string();
    let chars: Arc<Vec<char>> = Arc::new(s.chars().collect());
    let n = chars.len();
    let (c1, c2, c3) = (Arc::clone(&chars), Arc::clone(&chars), chars);
    weighted(vec![
        (2, Just(format!("{s} ")).boxed()),
        (2, Just(format!(" {s}")).boxed()),
        (1, Just(format!(" {s} ")).boxed()),
        (1, Just(s.to_uppercase()).boxed()),
        (1, Just(format!("{s}{s}")).boxed()),
        (1, Just(format!("{s}\n")).boxed()),
        (1, Just(format!("{s}\u{0}")).boxed()),
        (
            2,
            (0..n.max(1))
                .prop_map(move |k| c1.iter().take(k).collect())
                .boxed(),
        ),
        (
            2,
            (0..n.max(1), text_char())
                .prop_map(move |(k, c)| {
                    let mut v = c2.to_vec();
                    if let Some(slot) = v.get_mut(k) {
                        *slot = c;
                    }
                    v.into_iter().collect()
                })
                .boxed(),
        ),
        (
            2,
            (0..=n, text_char())
                .prop_map(move |(k, c)| {
                    let mut v = c3.to_vec();
                    v.insert(k.min(v.len()), c);
                    v.into_iter().collect()
                })
                .boxed(),
        ),
    ])
}

/// Integers of every size and sign, as JSON numbers.
pub fn int_value() -> BoxedStrategy<Value> {
    let max = i64::MAX.unsigned_abs();
    weighted(vec![
        (
            3,
            Magnitude {
                lo: 1,
                common: 1000,
                hi: max,
            }
            .prop_map(Value::from)
            .boxed(),
        ),
        (
            1,
            select(&[0i64, -1, i64::MIN, i64::MAX][..])
                .prop_map(Value::from)
                .boxed(),
        ),
        (
            1,
            Magnitude {
                lo: 1,
                common: 1000,
                hi: max,
            }
            .prop_map(|n| Value::from(-i64::try_from(n).unwrap_or(i64::MAX)))
            .boxed(),
        ),
        (1, Just(Value::from(u64::MAX)).boxed()),
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

pub(super) fn float_value() -> BoxedStrategy<Value> {
    select(FLOATS)
        .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number))
        .boxed()
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

pub(super) fn key() -> BoxedStrategy<String> {
    weighted(vec![
        (3, select(EXTRA_KEYS).prop_map(str::to_string).boxed()),
        (2, text(12)),
    ])
}

/// Any JSON value, up to three levels deep.
pub fn json_any() -> BoxedStrategy<Value> {
    let leaf = weighted(vec![
        (1, Just(Value::Null).boxed()),
        (1, proptest::bool::ANY.prop_map(Value::Bool).boxed()),
        (2, int_value()),
        (1, float_value()),
        (1, Just(json!("")).boxed()),
        (3, text(12).prop_map(Value::String).boxed()),
    ]);
    leaf.prop_recursive(3, 24, 4, |inner| {
        weighted(vec![
            (1, vec(inner.clone(), 0..4).prop_map(Value::Array).boxed()),
            (
                1,
                vec((key(), inner), 0..4)
                    .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>()))
                    .boxed(),
            ),
        ])
    })
    .boxed()
}

/// Values of a type other than string.
pub fn non_string() -> BoxedStrategy<Value> {
    weighted(vec![
        (2, int_value()),
        (1, float_value()),
        (1, proptest::bool::ANY.prop_map(Value::Bool).boxed()),
        (1, Just(json!([])).boxed()),
        (1, Just(json!({})).boxed()),
        (1, json_any()),
    ])
}
