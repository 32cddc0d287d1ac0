//! Product-list checks across responses (spec §4.2): observed spuId order, and that different
//! malls do not all answer with the same products.

use serde_json::Value;

use crate::spec::catalog;
use crate::verdict::event::Finding;

/// The spuIds of a products response, in order.
pub fn spu_ids(body: &Value) -> Vec<String> {
    body.as_array()
        .map(|items| items.iter().filter_map(spu_id).collect())
        .unwrap_or_default()
}

/// The spuId of one product record, when it has a string one.
pub fn spu_id(product: &Value) -> Option<String> {
    product
        .get("spuId")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Compares digit strings as numbers without overflow: longer is larger, then lexicographic.
fn numeric_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let a = a.trim_start_matches('0');
    let b = b.trim_start_matches('0');
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// Products ordered by spuId descending, compared as numbers (§4.2: shown, not stated).
pub fn order(body: &Value) -> Vec<Finding> {
    order_of_ids(&spu_ids(body))
}

/// [`order`] on the spuIds of a response, collected while it was streamed.
pub fn order_of_ids(ids: &[String]) -> Vec<Finding> {
    let digits = |s: &String| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    for (i, pair) in ids.windows(2).enumerate() {
        if digits(&pair[0])
            && digits(&pair[1])
            && numeric_cmp(&pair[0], &pair[1]) == std::cmp::Ordering::Less
        {
            return vec![Finding::new(
                &catalog::PRODUCTS_ORDER,
                format!("/{}/spuId", i + 1),
                format!("a spuId below {} (descending numeric order)", pair[0]),
                pair[1].clone(),
            )];
        }
    }
    vec![]
}

/// Different malls must not return the same non-empty product list (spuIds are per mall).
/// `lists` holds (mallSn, spuIds) per mall.
pub fn distinct(lists: &[(String, Vec<String>)]) -> Vec<Finding> {
    let mut findings = vec![];
    for (i, (sn_a, a)) in lists.iter().enumerate() {
        if a.is_empty() {
            continue;
        }
        if let Some((sn_b, _)) = lists[..i].iter().find(|(_, b)| b == a) {
            findings.push(Finding::new(
                &catalog::PRODUCTS_DISTINCT,
                "",
                format!("products of mall {sn_a} different from those of mall {sn_b}"),
                format!("the same {} product(s) for both", a.len()),
            ));
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numeric_order_differs_from_string_order() {
        let ok = json!([{"spuId": "100"}, {"spuId": "99"}, {"spuId": "9"}]);
        assert!(order(&ok).is_empty());
        let bad = json!([{"spuId": "99"}, {"spuId": "100"}]);
        assert_eq!(order(&bad)[0].pointer, "/1/spuId");
    }

    #[test]
    fn identical_lists_for_two_malls_are_reported_once() {
        let l = vec![
            ("1".to_string(), vec!["5".to_string()]),
            ("2".to_string(), vec!["5".to_string()]),
            ("3".to_string(), vec![]),
            ("4".to_string(), vec![]),
        ];
        assert_eq!(distinct(&l).len(), 1);
    }
}
