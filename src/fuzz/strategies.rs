//! proptest strategies for the request bodies of spec §4.1 and §4.2.
//!
//! A body is a valid baseline (the configured identity, a real mall) with edits, drawn in four
//! modes: exactly one field mutated (the most likely, so every single-field mutation turns up
//! within a modest budget), several fields varied among valid values, several fields mutated,
//! and whole bodies that are not the expected object (other JSON, raw text, broken JSON). Every
//! alternative list starts with its simplest member and every edit can shrink back to "no
//! edit", so a failure shrinks to the baseline plus the one change that matters.

use std::sync::Arc;

use proptest::char as pchar;
use proptest::collection::vec;
use proptest::num::u64::BinarySearch;
use proptest::prelude::RngExt;
use proptest::sample::select;
use proptest::strategy::{BoxedStrategy, Just, NewTree, Strategy, Union};
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value, json};

use crate::fuzz::body::{Edit, FuzzBody, Limits, apply, splice};
use crate::fuzz::known::Known;
use crate::verdict::endpoint::Endpoint;

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
fn log_uniform(rng: &mut proptest::test_runner::TestRng, lo: u64, hi: u64) -> u64 {
    let bits = |n: u64| 64 - n.leading_zeros();
    let b = rng.random_range(bits(lo)..=bits(hi));
    let start = if b == 0 { 0 } else { 1u64 << (b - 1) };
    let end = if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
    rng.random_range(start.max(lo)..=end.min(hi))
}

fn weighted<T: std::fmt::Debug + 'static>(arms: Vec<(u32, BoxedStrategy<T>)>) -> BoxedStrategy<T> {
    Union::new_weighted(arms).boxed()
}

/// Printable punctuation, including quote and escape characters.
const PUNCTUATION: &[char] = &[
    '-', '_', '.', ':', '/', '@', '#', '%', '&', '*', '+', '=', '?', '!', '\'', '"', '\\', '<',
    '>', '{', '}', '[', ']', '(', ')', '$', ',', ';', '~', '^', '`', '|',
];

/// Whitespace other than the space, control characters and invisible characters.
const ODD_CHARS: &[char] = &[
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
const SPECIAL_STRINGS: &[&str] = &[
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
const FLOATS: &[f64] = &[
    0.5,
    -1.5,
    10.0,
    10.5,
    1e3,
    1e20,
    -0.0,
    1.797_693_134_862_315_7e308,
];

fn float_value() -> BoxedStrategy<Value> {
    select(FLOATS)
        .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number))
        .boxed()
}

/// Keys for extra members: common names, names of real fields, prototype pollution, empty.
const EXTRA_KEYS: &[&str] = &[
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

fn key() -> BoxedStrategy<String> {
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

/// A string member: the empty string, domain alternatives, random text, near-misses of the
/// baseline, long runs, special strings, other types, null.
pub fn string_value(base: &str, alternatives: &[String], limits: Limits) -> BoxedStrategy<Value> {
    let mut arms = vec![(5, Just(json!("")).boxed())];
    let others: Vec<String> = alternatives
        .iter()
        .filter(|a| *a != base)
        .cloned()
        .collect();
    if !others.is_empty() {
        arms.push((4, select(others).prop_map(Value::String).boxed()));
    }
    arms.extend([
        (5, text(24).prop_map(Value::String).boxed()),
        (4, near(base).prop_map(Value::String).boxed()),
        (1, long_text(limits.max_run).prop_map(Value::String).boxed()),
        (2, select(SPECIAL_STRINGS).prop_map(|s| json!(s)).boxed()),
        (2, non_string()),
        (1, Just(Value::Null).boxed()),
    ]);
    weighted(arms)
}

/// Page sizes: positive integers (mostly 1..=1000, shrinking to the smallest that fails),
/// boundaries, zero and negatives, fractions, numeric strings, other types.
pub fn count_value() -> BoxedStrategy<Value> {
    const NON_POSITIVE: &[i64] = &[0, -1, -2_147_483_648, i64::MIN];
    const TEXTS: &[&str] = &[
        "10", "0", "-1", "100", "1000", "1001", "1e2", "10.0", " 10", "0x0A", "ten", "",
    ];
    weighted(vec![
        (
            10,
            Magnitude {
                lo: 1,
                common: 1000,
                hi: 1_000_000_000_000_000,
            }
            .prop_map(Value::from)
            .boxed(),
        ),
        (
            2,
            // Fractions and integral floats (`81.0`): they shrink like the integers above.
            (
                Magnitude {
                    lo: 1,
                    common: 1000,
                    hi: 1_000_000_000_000,
                },
                select(&[0.0, 0.5][..]),
            )
                .prop_map(|(n, frac)| json!(u32::try_from(n).map_or(1e12, f64::from) + frac))
                .boxed(),
        ),
        (
            1,
            // Every bit length up to u64::MAX (overflow boundaries), still shrinking to 1.
            Magnitude {
                lo: 1,
                common: 1,
                hi: u64::MAX,
            }
            .prop_map(Value::from)
            .boxed(),
        ),
        (1, select(NON_POSITIVE).prop_map(Value::from).boxed()),
        (
            1,
            Magnitude {
                lo: 1,
                common: 1000,
                hi: 1_000_000_000,
            }
            .prop_map(|n| Value::from(-i64::try_from(n).unwrap_or(i64::MAX)))
            .boxed(),
        ),
        (1, float_value()),
        (2, select(TEXTS).prop_map(|s| json!(s)).boxed()),
        (1, proptest::bool::ANY.prop_map(Value::Bool).boxed()),
        (1, Just(json!([10])).boxed()),
        (1, Just(json!({"value": 10})).boxed()),
        (1, Just(Value::Null).boxed()),
    ])
}

/// Mall numbers and cursors: real ones, their neighbours, digit strings, empty, numbers.
pub fn mall_sn_value(real: &[String], limits: Limits) -> BoxedStrategy<Value> {
    let digits = vec(pchar::range('0', '9'), 1..=20)
        .prop_map(|d| Value::String(d.into_iter().collect()))
        .boxed();
    let mut arms: Vec<(u32, BoxedStrategy<Value>)> = Vec::new();
    if !real.is_empty() {
        let r = real.to_vec();
        arms.push((4, select(r.clone()).prop_map(Value::String).boxed()));
        arms.push((
            3,
            (select(r.clone()), -3i64..=3)
                .prop_map(|(sn, d)| match sn.parse::<i64>() {
                    Ok(n) => json!(n.saturating_add(d).to_string()),
                    Err(_) => json!(format!("{sn}{d}")),
                })
                .boxed(),
        ));
        arms.push((
            2,
            select(r.clone())
                .prop_map(|sn| sn.parse::<u64>().map_or(Value::String(sn), Value::from))
                .boxed(),
        ));
        arms.push((
            2,
            select(r)
                .prop_flat_map(|sn| near(&sn))
                .prop_map(Value::String)
                .boxed(),
        ));
    }
    arms.extend([
        (5, Just(json!("")).boxed()),
        (3, digits),
        (
            2,
            select(
                &[
                    "0",
                    "-1",
                    "00",
                    " ",
                    "null",
                    "1.5",
                    "99999999999999999999999",
                ][..],
            )
            .prop_map(|s| json!(s))
            .boxed(),
        ),
        (3, text(24).prop_map(Value::String).boxed()),
        (1, long_text(limits.max_run).prop_map(Value::String).boxed()),
        (1, non_string()),
    ]);
    weighted(arms)
}

/// A whole object member: null, empty, the wrong type, the object wrapped in an array, any
/// object, or a full alternative object (another identity, another mall).
pub fn object_value(base: &Value, alternatives: &[Value]) -> BoxedStrategy<Value> {
    let mut arms = vec![(2, Just(Value::Null).boxed()), (2, Just(json!({})).boxed())];
    if !alternatives.is_empty() {
        arms.push((4, select(alternatives.to_vec()).boxed()));
    }
    arms.extend([
        (1, Just(json!([base])).boxed()),
        (1, Just(json!([])).boxed()),
        (
            1,
            select(&["", "x", "{}"][..]).prop_map(|s| json!(s)).boxed(),
        ),
        (1, int_value()),
        (1, proptest::bool::ANY.prop_map(Value::Bool).boxed()),
        (1, json_any()),
    ]);
    weighted(arms)
}

/// A fixed starting value that still shrinks by binary search towards `lo`.
#[derive(Debug, Clone, Copy)]
pub struct Shrinking {
    /// Shrink target.
    pub lo: u64,
    /// The value drawn.
    pub start: u64,
}

impl Strategy for Shrinking {
    type Tree = BinarySearch;
    type Value = u64;

    fn new_tree(&self, _runner: &mut TestRunner) -> NewTree<Self> {
        Ok(BinarySearch::new_above(self.lo, self.start.max(self.lo)))
    }
}

fn just(v: Value) -> BoxedStrategy<Value> {
    Just(v).boxed()
}

fn shrinking_int(start: u64) -> BoxedStrategy<Value> {
    Shrinking { lo: 1, start }.prop_map(Value::from).boxed()
}

/// Most domain alternatives swept per field (the rest come up at random).
const SWEPT_ALTERNATIVES: usize = 6;

/// Edge values of a string member: empty, null, blank, other types, padded, long, non-ASCII,
/// injection-like, interleaved with the first domain alternatives.
fn string_edges(base: &str, alternatives: &[String]) -> Vec<BoxedStrategy<Value>> {
    let long = Shrinking { lo: 1, start: 300 }
        .prop_map(|n| Value::String("a".repeat(usize::try_from(n).unwrap_or(300))))
        .boxed();
    let mut generic = vec![
        just(json!("")),
        just(Value::Null),
        just(json!(" ")),
        just(json!(0)),
        just(json!(format!("{base} "))),
        long,
        just(json!(true)),
        just(json!({})),
        just(json!(format!("{base}\n"))),
        just(json!([])),
        just(json!("\u{0}")),
        just(json!("商户🙂")),
        just(json!("' OR '1'='1")),
        just(json!(format!(" {base}"))),
    ]
    .into_iter();
    let alts = alternatives
        .iter()
        .filter(|a| *a != base)
        .take(SWEPT_ALTERNATIVES)
        .map(|a| just(json!(a)));
    let mut out: Vec<BoxedStrategy<Value>> = generic.by_ref().take(3).collect();
    for alt in alts {
        out.push(alt);
        out.extend(generic.next());
    }
    out.extend(generic);
    out
}

/// Edge values of `cursor.count`: null, zero, negatives, boundaries (shrinkable), fractions,
/// strings, other types.
fn count_edges() -> Vec<BoxedStrategy<Value>> {
    vec![
        just(Value::Null),
        just(json!(0)),
        just(json!(-1)),
        shrinking_int(1),
        shrinking_int(1000),
        shrinking_int(1001),
        just(json!("10")),
        just(json!(10.5)),
        shrinking_int(u64::MAX),
        just(json!(i64::MIN)),
        just(json!(true)),
        just(json!([10])),
        just(json!({})),
        just(json!("")),
    ]
}

/// Edge values of a mall number or cursor: empty, null, zero, negative, real ones (first,
/// last, another merchant's), as a number, padded, with a leading zero, letters, very long.
fn sn_edges(real: &[String]) -> Vec<BoxedStrategy<Value>> {
    let mut out = vec![
        just(json!("")),
        just(Value::Null),
        just(json!("0")),
        just(json!("-1")),
    ];
    if let Some(first) = real.first() {
        out.push(just(json!(first)));
        out.extend(real.last().filter(|l| *l != first).map(|l| just(json!(l))));
        out.extend(first.parse::<u64>().ok().map(|n| just(json!(n))));
        out.push(just(json!(format!("{first} "))));
        out.push(just(json!(format!("0{first}"))));
        out.extend(
            first
                .parse::<u64>()
                .ok()
                .map(|n| just(json!((n + 1).to_string()))),
        );
    }
    out.extend([
        just(json!("abc")),
        just(json!("9".repeat(30))),
        just(json!(0)),
        just(json!(true)),
    ]);
    out
}

/// Edge values of an object member: null, empty, the wrong type, wrapped, full alternatives.
fn object_edges(base: &Value, alternatives: &[Value]) -> Vec<BoxedStrategy<Value>> {
    let mut out = vec![
        just(Value::Null),
        just(json!({})),
        just(json!([])),
        just(json!([base])),
        just(json!("x")),
        just(json!(1)),
    ];
    out.extend(alternatives.iter().take(3).map(|a| just(a.clone())));
    out
}

/// How one field of the body is mutated and varied.
struct Field {
    /// Where it is.
    pointer: &'static str,
    /// Weight among the single-field mutations.
    weight: u32,
    /// Invalid or unusual values.
    mutation: BoxedStrategy<Value>,
    /// Other valid values, if any.
    valid: Option<BoxedStrategy<Value>>,
    /// Edge values swept one by one (after removing the field), most generic first.
    edges: Vec<BoxedStrategy<Value>>,
}

impl Field {
    fn edit(&self) -> BoxedStrategy<Edit> {
        let p = self.pointer;
        weighted(vec![
            (
                9,
                self.mutation
                    .clone()
                    .prop_map(move |v| Edit::Set(p, v))
                    .boxed(),
            ),
            (1, Just(Edit::Remove(p)).boxed()),
        ])
    }

    fn valid_edit(&self) -> Option<BoxedStrategy<Edit>> {
        let p = self.pointer;
        self.valid
            .clone()
            .map(|s| s.prop_map(move |v| Edit::Set(p, v)).boxed())
    }
}

/// Roles other than the one used in the spec's calls.
const ROLES: &[&str] = &[
    "super_admin",
    "admin",
    "SUPER_ADMIN",
    "Super_Admin",
    "superadmin",
    "super-admin",
    "staff",
    "cashier",
    "owner",
    "merchant",
    "guest",
    "root",
    "超级管理员",
];

const SORT_FIELDS: &[&str] = &[
    "id",
    "ctime",
    "mallSn",
    "mallName",
    "state",
    "createTime",
    "ID",
    "-id",
    "id DESC",
    "*",
];

const DIRECTIONS: &[&str] = &[
    "DESC",
    "desc",
    "ASC",
    "asc",
    "Desc",
    "descending",
    "random",
    "0",
    "-1",
];

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn text_at<'a>(base: &'a Value, pointer: &str) -> &'a str {
    base.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn seller_fields(
    known: &Known,
    base: &Value,
    at: &'static [&'static str; 4],
    limits: Limits,
) -> Vec<Field> {
    let identities: Vec<Value> = known
        .identities
        .iter()
        .skip(1)
        .map(|i| i.to_json())
        .collect();
    let mut merchant_ids: Vec<String> = known
        .identities
        .iter()
        .map(|i| i.merchant_id.clone())
        .collect();
    merchant_ids.extend(known.unknown_merchant_ids.iter().cloned());
    let user_ids: Vec<String> = known
        .identities
        .iter()
        .map(|i| i.merchant_user_id.clone())
        .collect();
    let [seller, merchant_id, user_id, role] = *at;
    let seller_base = base.pointer(seller).cloned().unwrap_or(Value::Null);
    vec![
        Field {
            pointer: seller,
            weight: 2,
            mutation: object_value(&seller_base, &identities),
            edges: object_edges(&seller_base, &identities),
            valid: (!identities.is_empty()).then(|| select(identities.clone()).boxed()),
        },
        Field {
            pointer: merchant_id,
            weight: 3,
            mutation: string_value(text_at(base, merchant_id), &merchant_ids, limits),
            edges: string_edges(text_at(base, merchant_id), &merchant_ids),
            valid: Some(select(merchant_ids.clone()).prop_map(Value::String).boxed()),
        },
        Field {
            pointer: user_id,
            weight: 3,
            mutation: string_value(text_at(base, user_id), &user_ids, limits),
            edges: string_edges(text_at(base, user_id), &user_ids),
            valid: Some(select(user_ids.clone()).prop_map(Value::String).boxed()),
        },
        Field {
            pointer: role,
            weight: 3,
            mutation: string_value(text_at(base, role), &strings(ROLES), limits),
            edges: string_edges(text_at(base, role), &strings(ROLES)),
            valid: Some(select(strings(ROLES)).prop_map(Value::String).boxed()),
        },
    ]
}

fn appid_field(known: &Known, limits: Limits) -> Field {
    Field {
        pointer: "/appid",
        weight: 1,
        mutation: string_value(&known.appid, &[], limits),
        edges: string_edges(&known.appid, &[]),
        valid: None,
    }
}

/// The baseline of an endpoint and how each of its fields varies.
struct Shape {
    baseline: Value,
    fields: Vec<Field>,
    /// Objects extra members can be added to.
    parents: Vec<&'static str>,
}

fn list_shape(known: &Known, limits: Limits) -> Shape {
    let baseline = known.list_body(known.me(), 10);
    let sns: Vec<String> = known.malls.iter().map(|m| m.mall_sn.clone()).collect();
    let mut fields = vec![
        appid_field(known, limits),
        Field {
            pointer: "/filter",
            weight: 1,
            mutation: object_value(&baseline["filter"], &[]),
            edges: object_edges(&baseline["filter"], &[]),
            valid: None,
        },
    ];
    fields.extend(seller_fields(
        known,
        &baseline,
        &[
            "/filter/seller",
            "/filter/seller/merchantId",
            "/filter/seller/merchantUserId",
            "/filter/seller/role",
        ],
        limits,
    ));
    let cursor_valid = if sns.is_empty() {
        Just(Value::Null).boxed()
    } else {
        weighted(vec![
            (1, Just(Value::Null).boxed()),
            (2, select(sns.clone()).prop_map(Value::String).boxed()),
        ])
    };
    fields.extend([
        Field {
            pointer: "/sort",
            weight: 1,
            mutation: object_value(&baseline["sort"], &[]),
            edges: object_edges(&baseline["sort"], &[]),
            valid: None,
        },
        Field {
            pointer: "/sort/sortField",
            weight: 2,
            mutation: string_value("id", &strings(SORT_FIELDS), limits),
            edges: string_edges("id", &strings(SORT_FIELDS)),
            valid: None,
        },
        Field {
            pointer: "/sort/sort",
            weight: 2,
            mutation: string_value("DESC", &strings(DIRECTIONS), limits),
            edges: string_edges("DESC", &strings(DIRECTIONS)),
            valid: Some(select(&["DESC", "desc"][..]).prop_map(|s| json!(s)).boxed()),
        },
        Field {
            pointer: "/cursor",
            weight: 1,
            mutation: object_value(&baseline["cursor"], &[]),
            edges: object_edges(&baseline["cursor"], &[]),
            valid: None,
        },
        Field {
            pointer: "/cursor/cursorField",
            weight: 2,
            mutation: string_value("id", &strings(SORT_FIELDS), limits),
            edges: string_edges("id", &strings(SORT_FIELDS)),
            valid: Some(Just(Value::Null).boxed()),
        },
        Field {
            pointer: "/cursor/endCursor",
            weight: 3,
            mutation: mall_sn_value(&sns, limits),
            edges: sn_edges(&sns),
            valid: Some(cursor_valid),
        },
        Field {
            pointer: "/cursor/count",
            weight: 3,
            mutation: count_value(),
            edges: count_edges(),
            valid: Some(
                Magnitude {
                    lo: 1,
                    common: 1000,
                    hi: 1000,
                }
                .prop_map(Value::from)
                .boxed(),
            ),
        },
    ]);
    Shape {
        baseline,
        fields,
        parents: vec!["", "/filter", "/filter/seller", "/sort", "/cursor"],
    }
}

fn products_shape(known: &Known, limits: Limits) -> Shape {
    let (mall_sn, signature) = known
        .target_mall
        .clone()
        .unwrap_or_else(|| ("0".to_string(), String::new()));
    let baseline = json!({
        "appid": known.appid,
        "seller": known.me().to_json(),
        "mallID": {"mallSn": mall_sn, "signature": signature},
    });
    let sns: Vec<String> = known.malls.iter().map(|m| m.mall_sn.clone()).collect();
    let signatures: Vec<String> = known.malls.iter().map(|m| m.signature.clone()).collect();
    let pairs: Vec<Value> = known
        .malls
        .iter()
        .filter(|m| m.mall_sn != mall_sn)
        .map(|m| json!({"mallSn": m.mall_sn, "signature": m.signature}))
        .collect();
    let mut fields = vec![appid_field(known, limits)];
    fields.extend(seller_fields(
        known,
        &baseline,
        &[
            "/seller",
            "/seller/merchantId",
            "/seller/merchantUserId",
            "/seller/role",
        ],
        limits,
    ));
    fields.extend([
        Field {
            pointer: "/mallID",
            weight: 3,
            mutation: object_value(&baseline["mallID"], &pairs),
            edges: object_edges(&baseline["mallID"], &pairs),
            valid: (!pairs.is_empty()).then(|| select(pairs.clone()).boxed()),
        },
        Field {
            pointer: "/mallID/mallSn",
            weight: 3,
            mutation: mall_sn_value(&sns, limits),
            edges: sn_edges(&sns),
            valid: None,
        },
        Field {
            pointer: "/mallID/signature",
            weight: 3,
            mutation: string_value(&signature, &signatures, limits),
            edges: string_edges(&signature, &signatures),
            valid: None,
        },
    ]);
    Shape {
        baseline,
        fields,
        parents: vec!["", "/seller", "/mallID"],
    }
}

fn extra_member(parents: Vec<&'static str>) -> BoxedStrategy<Edit> {
    (select(parents), key(), json_any())
        .prop_map(|(parent, key, value)| Edit::Insert(parent, key, value))
        .boxed()
}

/// Edits of several fields at once: each field keeps its baseline value with weight `keep`.
fn several(edits: Vec<BoxedStrategy<Edit>>, keep: u32) -> BoxedStrategy<Vec<Edit>> {
    edits
        .into_iter()
        .map(|e| {
            weighted(vec![
                (keep, Just(None).boxed()),
                (1, e.prop_map(Some).boxed()),
            ])
        })
        .collect::<Vec<_>>()
        .prop_map(|edits| edits.into_iter().flatten().collect())
        .boxed()
}

/// Raw texts that are not JSON objects.
const RAW_TEXTS: &[&str] = &[
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
const RAW_TOKENS: &[&str] = &[
    "1e999",
    "-1e999",
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

fn raw(label: &str, bytes: Vec<u8>) -> FuzzBody {
    FuzzBody::Raw {
        label: label.to_string(),
        bytes,
    }
}

/// Bodies that are not the expected object at all.
fn whole_bodies(shape: &Shape, other: Value, limits: Limits) -> BoxedStrategy<FuzzBody> {
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
    weighted(vec![
        (2, select(scalars).prop_map(FuzzBody::Json).boxed()),
        (1, Just(FuzzBody::Json(json!([base]))).boxed()),
        (1, Just(FuzzBody::Json(other)).boxed()),
        (1, Just(FuzzBody::Json(upper_keys)).boxed()),
        (2, json_any().prop_map(FuzzBody::Json).boxed()),
        (1, Just(raw("empty body", Vec::new())).boxed()),
        (
            2,
            select(RAW_TEXTS)
                .prop_map(|t| raw("not JSON", t.as_bytes().to_vec()))
                .boxed(),
        ),
        (
            2,
            (0..len.max(1))
                .prop_map(move |n| raw("truncated JSON", bytes[..n].to_vec()))
                .boxed(),
        ),
        (
            1,
            Just(raw(
                "byte order mark",
                format!("\u{feff}{text}").into_bytes(),
            ))
            .boxed(),
        ),
        (
            1,
            select(&[" x", "}", "{}", "\u{0}", "\n\n", ",", "]"][..])
                .prop_map(move |t| raw("trailing bytes", format!("{text}{t}").into_bytes()))
                .boxed(),
        ),
        (
            1,
            Just(raw("duplicate key", duplicate.into_bytes())).boxed(),
        ),
        (
            1,
            Just(raw("trailing comma", trailing_comma.into_bytes())).boxed(),
        ),
        (
            2,
            Magnitude {
                lo: 1,
                common: 200,
                hi: limits.max_nesting,
            }
            .prop_map(|n| raw("deeply nested arrays", nested(n)))
            .boxed(),
        ),
        (
            2,
            (select(leaves.clone()), select(RAW_TOKENS))
                .prop_map(move |(p, token)| {
                    let bytes = splice(&b1, p, token).unwrap_or_default();
                    raw(&format!("non-standard JSON at {p}"), bytes)
                })
                .boxed(),
        ),
        (
            1,
            (
                select(leaves.clone()),
                Magnitude {
                    lo: 1,
                    common: 200,
                    hi: limits.max_nesting,
                },
            )
                .prop_map(move |(p, n)| {
                    let token = String::from_utf8(nested(n)).unwrap_or_default();
                    raw(
                        &format!("deeply nested value at {p}"),
                        splice(&b2, p, &token).unwrap_or_default(),
                    )
                })
                .boxed(),
        ),
        (
            1,
            select(leaves)
                .prop_map(move |p| {
                    let marked = splice(&b3, p, "\"\u{1}\"").unwrap_or_default();
                    let bytes = replace_bytes(&marked, &[1], &[0xff, 0xfe]);
                    raw(&format!("invalid UTF-8 at {p}"), bytes)
                })
                .boxed(),
        ),
        (
            1,
            Just(FuzzBody::Json(Value::Object(
                b4.as_object()
                    .map(|m| {
                        m.iter()
                            .rev()
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect()
                    })
                    .unwrap_or_default(),
            )))
            .boxed(),
        ),
    ])
}

fn nested(depth: u64) -> Vec<u8> {
    let n = usize::try_from(depth).unwrap_or(100_000);
    let mut out = vec![b'['; n];
    out.extend(std::iter::repeat_n(b']', n));
    out
}

fn replace_bytes(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    match haystack.windows(needle.len()).position(|w| w == needle) {
        Some(i) => [&haystack[..i], with, &haystack[i + needle.len()..]].concat(),
        None => haystack.to_vec(),
    }
}

/// The body with every key's first letter upper-cased (`Appid`, `Filter`, ...).
fn rename_keys(v: &Value) -> Value {
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

/// The baseline (valid) body of an endpoint.
pub fn baseline(endpoint: Endpoint, known: &Known) -> Value {
    match endpoint {
        Endpoint::MallList => list_shape(known, Limits::COMMON).baseline,
        Endpoint::MallProducts => products_shape(known, Limits::COMMON).baseline,
    }
}

/// Single-field edge cases of `endpoint`, one body each, swept in rounds (every field's first
/// edge, then every field's second, ...) so that a truncated sweep still covers every field.
/// Removing the field comes first; numbers and long strings in it still shrink.
pub fn sweep(endpoint: Endpoint, known: &Known) -> Vec<BoxedStrategy<FuzzBody>> {
    let shape = match endpoint {
        Endpoint::MallList => list_shape(known, Limits::COMMON),
        Endpoint::MallProducts => products_shape(known, Limits::COMMON),
    };
    // Edge strategies are fixed values (or shrinkable numbers): any runner reads them.
    let mut values = TestRunner::deterministic();
    let mut per_field: Vec<Vec<BoxedStrategy<Edit>>> = shape
        .fields
        .iter()
        .map(|f| {
            let p = f.pointer;
            let current = shape.baseline.pointer(p);
            let mut edits = vec![Just(Edit::Remove(p)).boxed()];
            edits.extend(
                f.edges
                    .iter()
                    .filter(|e| {
                        e.new_tree(&mut values).ok().map(|t| t.current()).as_ref() != current
                    })
                    .map(|e| e.clone().prop_map(move |v| Edit::Set(p, v)).boxed()),
            );
            edits
        })
        .collect();
    per_field.push(
        shape
            .parents
            .iter()
            .map(|&parent| Just(Edit::Insert(parent, "extra".into(), json!(1))).boxed())
            .chain([Just(Edit::Insert(
                "",
                "__proto__".into(),
                json!({"polluted": true}),
            ))
            .boxed()])
            .collect(),
    );
    let base = Arc::new(shape.baseline);
    let rounds = per_field.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::new();
    for rank in 0..rounds {
        for edits in &per_field {
            if let Some(edit) = edits.get(rank) {
                let base = Arc::clone(&base);
                out.push(
                    edit.clone()
                        .prop_map(move |e| FuzzBody::Json(apply(&base, &[e])))
                        .boxed(),
                );
            }
        }
    }
    out
}

/// Every generated body of `endpoint`, in four modes (see the module doc), within `limits`.
pub fn body(endpoint: Endpoint, known: &Known, limits: Limits) -> BoxedStrategy<FuzzBody> {
    let (shape, other) = match endpoint {
        Endpoint::MallList => (
            list_shape(known, limits),
            products_shape(known, limits).baseline,
        ),
        Endpoint::MallProducts => (
            products_shape(known, limits),
            list_shape(known, limits).baseline,
        ),
    };
    let base = Arc::new(shape.baseline.clone());
    let json_of = |edits: BoxedStrategy<Vec<Edit>>| {
        let base = Arc::clone(&base);
        edits
            .prop_map(move |e| FuzzBody::Json(apply(&base, &e)))
            .boxed()
    };
    let extra = extra_member(shape.parents.clone());
    let mut single: Vec<(u32, BoxedStrategy<Vec<Edit>>)> = shape
        .fields
        .iter()
        .map(|f| (f.weight, f.edit().prop_map(|e| vec![e]).boxed()))
        .collect();
    single.push((2, extra.clone().prop_map(|e| vec![e]).boxed()));
    let valid: Vec<BoxedStrategy<Edit>> =
        shape.fields.iter().filter_map(Field::valid_edit).collect();
    let mut mutations: Vec<BoxedStrategy<Edit>> = shape.fields.iter().map(Field::edit).collect();
    mutations.push(extra);
    weighted(vec![
        (11, json_of(weighted(single))),
        (4, json_of(several(valid, 2))),
        (5, json_of(several(mutations, 5))),
        (3, whole_bodies(&shape, other, limits)),
    ])
    .prop_filter("a body within the size limits", move |b| limits.admits(b))
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::known::{Identity, KnownMall};
    use crate::fuzz::shrink::{Verdict, minimise};
    use md5::{Digest, Md5};
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngSeed};

    fn known() -> Known {
        let id = |m: &str, u: &str| Identity {
            merchant_id: m.into(),
            merchant_user_id: u.into(),
            role: "super_admin".into(),
        };
        Known {
            appid: "app".into(),
            identities: vec![id("m-main", "u-main"), id("m-other", "u-other")],
            unknown_merchant_ids: vec!["m-unknown".into()],
            malls: vec![
                KnownMall {
                    mall_sn: "1000007919".into(),
                    signature: "sig-a".into(),
                    owner: "m-main".into(),
                },
                KnownMall {
                    mall_sn: "1000007918".into(),
                    signature: "sig-b".into(),
                    owner: "m-other".into(),
                },
            ],
            target_mall: Some(("1000007919".into(), "sig-a".into())),
            notes: vec![],
        }
    }

    fn runner(seed: u64) -> TestRunner {
        TestRunner::new(Config {
            rng_seed: RngSeed::Fixed(seed),
            failure_persistence: None,
            ..Config::default()
        })
    }

    fn sample(endpoint: Endpoint, seed: u64, n: usize) -> Vec<FuzzBody> {
        let strategy = body(endpoint, &known(), Limits::COMMON);
        let mut r = runner(seed);
        (0..n)
            .map(|_| strategy.new_tree(&mut r).unwrap().current())
            .collect()
    }

    /// The bodies a seed gives are pinned: a move of the generators (e.g. a split of this
    /// module) must not change what `fuzz --seed N` sends.
    #[test]
    fn each_seed_gives_the_same_bodies_as_before() {
        let mut all = Md5::new();
        for endpoint in [Endpoint::MallList, Endpoint::MallProducts] {
            for seed in [1, 2, 3] {
                for b in sample(endpoint, seed, 200) {
                    all.update(b.fingerprint());
                }
                let mut r = runner(seed);
                for s in sweep(endpoint, &known()) {
                    all.update(s.new_tree(&mut r).unwrap().current().fingerprint());
                }
            }
        }
        assert_eq!(
            hex::encode(all.finalize()),
            "38bd6f692c7904436bd546ed563239c0"
        );
    }

    #[test]
    fn magnitude_shrinks_to_the_exact_threshold() {
        let mut r = runner(7);
        let s = Magnitude {
            lo: 1,
            common: 1000,
            hi: 1000,
        };
        let mut found = 0;
        for _ in 0..50 {
            let mut tree = s.new_tree(&mut r).unwrap();
            if tree.current() <= 80 {
                continue;
            }
            while if tree.current() > 80 {
                tree.simplify()
            } else {
                tree.complicate()
            } {}
            let mut last = tree.current();
            if last <= 80 {
                last += 1;
            }
            assert_eq!(last, 81);
            found += 1;
        }
        assert!(found > 10);
    }

    #[test]
    fn the_same_seed_gives_the_same_bodies() {
        assert_eq!(
            sample(Endpoint::MallList, 3, 50),
            sample(Endpoint::MallList, 3, 50)
        );
        assert_ne!(
            sample(Endpoint::MallList, 3, 50),
            sample(Endpoint::MallList, 4, 50)
        );
    }

    #[test]
    fn common_single_field_edge_cases_turn_up_within_500_bodies() {
        let bodies = sample(Endpoint::MallList, 1, 500);
        let count = |f: &dyn Fn(&Value) -> bool| {
            bodies
                .iter()
                .filter_map(FuzzBody::json)
                .filter(|v| f(v))
                .count()
        };
        let seller = |v: &Value, k: &str| v.pointer(&format!("/filter/seller/{k}")).cloned();
        let tallies = [
            (
                "count above 80",
                count(&|v| {
                    v.pointer("/cursor/count")
                        .and_then(Value::as_f64)
                        .is_some_and(|c| c > 80.0)
                }),
            ),
            (
                "empty role",
                count(&|v| seller(v, "role") == Some(json!(""))),
            ),
            (
                "user id with a space",
                count(&|v| {
                    seller(v, "merchantUserId").and_then(|u| u.as_str().map(|u| u.contains(' ')))
                        == Some(true)
                }),
            ),
            (
                "empty cursor",
                count(&|v| v.pointer("/cursor/endCursor") == Some(&json!(""))),
            ),
            (
                "missing count",
                count(&|v| {
                    v.get("cursor")
                        .is_some_and(|c| c.is_object() && c.get("count").is_none())
                }),
            ),
            (
                "unknown merchant",
                count(&|v| seller(v, "merchantId") == Some(json!("m-unknown"))),
            ),
            (
                "real cursor",
                count(&|v| v.pointer("/cursor/endCursor") == Some(&json!("1000007919"))),
            ),
        ];
        for (what, n) in tallies {
            assert!(n >= 2, "{what}: only {n} of 500");
        }
        let raw = bodies.iter().filter(|b| b.json().is_none()).count();
        assert!(raw >= 10, "raw bodies: {raw}");
    }

    fn count_over_80(b: &FuzzBody) -> bool {
        b.json()
            .and_then(|v| v.pointer("/cursor/count"))
            .and_then(Value::as_f64)
            .is_some_and(|c| c > 80.0)
    }

    fn minimal(tree: impl ValueTree<Value = FuzzBody>) -> FuzzBody {
        minimise(tree, (), 1000, |b| {
            if count_over_80(b) {
                Verdict::Fails(())
            } else {
                Verdict::Passes
            }
        })
        .value
    }

    fn baseline_with_count(count: u64) -> FuzzBody {
        let mut expected = baseline(Endpoint::MallList, &known());
        expected["cursor"]["count"] = json!(count);
        FuzzBody::Json(expected)
    }

    #[test]
    fn a_failing_body_shrinks_to_the_baseline_plus_the_one_change() {
        let strategy = body(Endpoint::MallList, &known(), Limits::COMMON);
        let mut r = runner(11);
        let mut shrunk = 0;
        for _ in 0..400 {
            let tree = strategy.new_tree(&mut r).unwrap();
            if count_over_80(&tree.current()) {
                let FuzzBody::Json(mut min) = minimal(tree) else {
                    panic!("a JSON body shrinks to JSON")
                };
                let count = min["cursor"]["count"].take();
                assert!(
                    count.as_f64().is_some_and(|c| c > 80.0 && c <= 81.0),
                    "{count}"
                );
                min["cursor"]["count"] = json!(81);
                assert_eq!(FuzzBody::Json(min), baseline_with_count(81));
                shrunk += 1;
            }
        }
        assert!(shrunk >= 5, "{shrunk}");
    }

    #[test]
    fn the_sweep_covers_every_field_and_its_numbers_still_shrink() {
        let sweep = sweep(Endpoint::MallList, &known());
        let mut r = runner(1);
        let bodies: Vec<FuzzBody> = sweep
            .iter()
            .map(|s| s.new_tree(&mut r).unwrap().current())
            .collect();
        let base = baseline(Endpoint::MallList, &known());
        for pointer in [
            "/appid",
            "/filter/seller/role",
            "/sort/sort",
            "/cursor/endCursor",
            "/cursor/count",
        ] {
            let (parent, key) = pointer.rsplit_once('/').unwrap();
            let removed = bodies.iter().any(|b| {
                b.json()
                    .and_then(|v| v.pointer(parent))
                    .is_some_and(|p| p.get(key).is_none())
            });
            assert!(removed, "{pointer} is never removed");
            assert!(
                bodies
                    .iter()
                    .any(|b| b.json().and_then(|v| v.pointer(pointer)) == Some(&json!(""))),
                "{pointer} is never empty"
            );
        }
        assert!(
            bodies
                .iter()
                .any(|b| b.json().and_then(|v| v.pointer("/cursor/count")) == Some(&json!(0)))
        );
        assert!(
            bodies.iter().all(|b| b.json().is_some_and(|v| v != &base)),
            "every sweep body changes something"
        );
        let over: Vec<usize> = (0..sweep.len())
            .filter(|&i| count_over_80(&bodies[i]))
            .collect();
        assert!(!over.is_empty());
        for i in over {
            assert_eq!(
                minimal(sweep[i].new_tree(&mut r).unwrap()),
                baseline_with_count(81)
            );
        }
    }

    #[test]
    fn bodies_stay_within_common_limits_unless_oversize() {
        let beyond = |limits: Limits| {
            let mut n = 0;
            for endpoint in [Endpoint::MallList, Endpoint::MallProducts] {
                let strategy = body(endpoint, &known(), limits);
                let mut r = runner(5);
                for _ in 0..1500 {
                    let b = strategy.new_tree(&mut r).unwrap().current();
                    let appid = b.header_appid("app", &limits);
                    if Limits::beyond_common(&b, appid) {
                        n += 1;
                    }
                }
            }
            n
        };
        assert_eq!(beyond(Limits::COMMON), 0);
        assert!(
            beyond(Limits::OVERSIZE) > 0,
            "oversize probes are generated"
        );
    }

    #[test]
    fn products_bodies_use_real_malls_and_stay_small() {
        let bodies = sample(Endpoint::MallProducts, 2, 300);
        assert!(
            bodies
                .iter()
                .any(|b| b.json().and_then(|v| v.pointer("/mallID/mallSn"))
                    == Some(&json!("1000007918")))
        );
        assert!(bodies.iter().all(|b| b.to_bytes().len() < 512 * 1024));
    }
}
