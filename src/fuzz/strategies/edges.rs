//! The edge values of each kind of member, swept one by one before random generation.

use serde_json::{Value, json};

use super::draw::{Gen, just};
use super::members::{Shrinking, shrinking, shrinking_int};

/// Most domain alternatives swept per field (the rest come up at random).
pub(super) const SWEPT_ALTERNATIVES: usize = 6;

/// Edge values of a string member: empty, null, blank, other types, padded, long, non-ASCII,
/// injection-like, interleaved with the first domain alternatives.
pub(super) fn string_edges(base: &str, alternatives: &[String]) -> Vec<Gen<Value>> {
    let long = shrinking(Shrinking { lo: 1, start: 300 })
        .map(|n| Value::String("a".repeat(usize::try_from(n).unwrap_or(300))));
    let mut generic = vec![
        just(json!("")),
        just(Value::Null),
        just(json!(" ")),
        // SQL LIKE's wildcard: `merchant_id LIKE ?` lists every merchant's malls for it.
        just(json!("%")),
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
    let mut out: Vec<Gen<Value>> = generic.by_ref().take(3).collect();
    for alt in alts {
        out.push(alt);
        out.extend(generic.next());
    }
    out.extend(generic);
    out
}

/// Edge values of `cursor.count`: null, zero, negatives, boundaries (shrinkable), fractions,
/// strings, other types.
pub(super) fn count_edges() -> Vec<Gen<Value>> {
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
/// last, another merchant's), as a number, padded, with a leading zero, with a quote after it,
/// letters, very long.
pub(super) fn sn_edges(real: &[String]) -> Vec<Gen<Value>> {
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
    // A quote after a real number: a cursor pasted into SQL unescaped fails on it.
    if let Some(first) = real.first() {
        out.push(just(json!(format!("{first}'"))));
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
pub(super) fn object_edges(base: &Value, alternatives: &[Value]) -> Vec<Gen<Value>> {
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
