//! The values of one member of a body: a string, a page size, a mall number or cursor, an
//! object; and [`Shrinking`], a fixed start that still shrinks.

use proptest::num::u64::BinarySearch;
use proptest::strategy::{NewTree, Strategy};
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};

use super::draw::{Gen, any_bool, char_range, i64_in, just, select, vec, zip};
use super::values::{
    Magnitude, SPECIAL_STRINGS, float_value, int_value, json_any, long_text, magnitude, near,
    non_string, text, weighted,
};
use crate::fuzz::body::Limits;

/// A string member: the empty string, domain alternatives, random text, near-misses of the
/// baseline, long runs, special strings, other types, null.
pub fn string_value(base: &str, alternatives: &[String], limits: Limits) -> Gen<Value> {
    let mut arms = vec![(5, just(json!("")))];
    let others: Vec<String> = alternatives
        .iter()
        .filter(|a| *a != base)
        .cloned()
        .collect();
    if !others.is_empty() {
        arms.push((4, select(others).map(Value::String)));
    }
    arms.extend([
        (5, text(24).map(Value::String)),
        (4, near(base).map(Value::String)),
        (1, long_text(limits.max_run).map(Value::String)),
        (2, select(SPECIAL_STRINGS).map(|s| json!(s))),
        (2, non_string()),
        (1, just(Value::Null)),
    ]);
    weighted(arms)
}

/// Page sizes: positive integers (mostly 1..=1000, shrinking to the smallest that fails),
/// boundaries, zero and negatives, fractions, numeric strings, other types.
pub fn count_value() -> Gen<Value> {
    const NON_POSITIVE: &[i64] = &[0, -1, -2_147_483_648, i64::MIN];
    const TEXTS: &[&str] = &[
        "10", "0", "-1", "100", "1000", "1001", "1e2", "10.0", " 10", "0x0A", "ten", "",
    ];
    weighted(vec![
        (
            10,
            magnitude(Magnitude {
                lo: 1,
                common: 1000,
                hi: 1_000_000_000_000_000,
            })
            .map(Value::from),
        ),
        (
            2,
            // Fractions and integral floats (`81.0`): they shrink like the integers above.
            zip(
                magnitude(Magnitude {
                    lo: 1,
                    common: 1000,
                    hi: 1_000_000_000_000,
                }),
                select(&[0.0, 0.5][..]),
            )
            .map(|(n, frac)| json!(u32::try_from(n).map_or(1e12, f64::from) + frac)),
        ),
        (
            1,
            // Every bit length up to u64::MAX (overflow boundaries), still shrinking to 1.
            magnitude(Magnitude {
                lo: 1,
                common: 1,
                hi: u64::MAX,
            })
            .map(Value::from),
        ),
        (1, select(NON_POSITIVE).map(Value::from)),
        (
            1,
            magnitude(Magnitude {
                lo: 1,
                common: 1000,
                hi: 1_000_000_000,
            })
            .map(|n| Value::from(-i64::try_from(n).unwrap_or(i64::MAX))),
        ),
        (1, float_value()),
        (2, select(TEXTS).map(|s| json!(s))),
        (1, any_bool().map(Value::Bool)),
        (1, just(json!([10]))),
        (1, just(json!({"value": 10}))),
        (1, just(Value::Null)),
    ])
}

/// Mall numbers and cursors: real ones, their neighbours, digit strings, empty, numbers.
pub fn mall_sn_value(real: &[String], limits: Limits) -> Gen<Value> {
    let digits = vec(char_range('0', '9'), 1..=20).map(|d| Value::String(d.into_iter().collect()));
    let mut arms: Vec<(u32, Gen<Value>)> = Vec::new();
    if !real.is_empty() {
        let r = real.to_vec();
        arms.push((4, select(r.clone()).map(Value::String)));
        arms.push((
            3,
            zip(select(r.clone()), i64_in(-3, 3)).map(|(sn, d)| match sn.parse::<i64>() {
                Ok(n) => json!(n.saturating_add(d).to_string()),
                Err(_) => json!(format!("{sn}{d}")),
            }),
        ));
        arms.push((
            2,
            select(r.clone()).map(|sn| sn.parse::<u64>().map_or(Value::String(sn), Value::from)),
        ));
        arms.push((2, select(r).flat_map(|sn| near(&sn)).map(Value::String)));
    }
    arms.extend([
        (5, just(json!(""))),
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
            .map(|s| json!(s)),
        ),
        (3, text(24).map(Value::String)),
        (1, long_text(limits.max_run).map(Value::String)),
        (1, non_string()),
    ]);
    weighted(arms)
}

/// A whole object member: null, empty, the wrong type, the object wrapped in an array, any
/// object, or a full alternative object (another identity, another mall).
pub fn object_value(base: &Value, alternatives: &[Value]) -> Gen<Value> {
    let mut arms = vec![(2, just(Value::Null)), (2, just(json!({})))];
    if !alternatives.is_empty() {
        arms.push((4, select(alternatives.to_vec())));
    }
    arms.extend([
        (1, just(json!([base]))),
        (1, just(json!([]))),
        (1, select(&["", "x", "{}"][..]).map(|s| json!(s))),
        (1, int_value()),
        (1, any_bool().map(Value::Bool)),
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

/// `shrinking` as a [`Gen`] (it draws nothing).
pub(super) fn shrinking(shrinking: Shrinking) -> Gen<u64> {
    Gen::pair(shrinking, move |_| Ok(shrinking.start.max(shrinking.lo)))
}

pub(super) fn shrinking_int(start: u64) -> Gen<Value> {
    shrinking(Shrinking { lo: 1, start }).map(Value::from)
}
