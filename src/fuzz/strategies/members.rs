//! The values of one member of a body: a string, a page size, a mall number or cursor, an
//! object; and [`Shrinking`], a fixed start that still shrinks.

use proptest::char as pchar;
use proptest::collection::vec;
use proptest::num::u64::BinarySearch;
use proptest::sample::select;
use proptest::strategy::{BoxedStrategy, Just, NewTree, Strategy};
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};

use super::values::{
    Magnitude, SPECIAL_STRINGS, float_value, int_value, json_any, long_text, near, non_string,
    text, weighted,
};
use crate::fuzz::body::Limits;

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

pub(super) fn just(v: Value) -> BoxedStrategy<Value> {
    Just(v).boxed()
}

pub(super) fn shrinking_int(start: u64) -> BoxedStrategy<Value> {
    Shrinking { lo: 1, start }.prop_map(Value::from).boxed()
}
