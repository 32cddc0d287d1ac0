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

/// `products.unique`: the first spuId listed twice in one response, with where it first was.
pub fn duplicate_ids(ids: &[String]) -> Vec<Finding> {
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, id) in ids.iter().enumerate() {
        if let Some(&at) = first.get(id.as_str()) {
            return vec![Finding::new(
                &catalog::PRODUCTS_UNIQUE,
                format!("/{i}/spuId"),
                format!(
                    "each product once (spuId {id} is product #{} already)",
                    at + 1
                ),
                format!("spuId {id} again as product #{}", i + 1),
            )];
        }
        first.insert(id, i);
    }
    vec![]
}

/// The `(product index, skuId)` of every SKU of a products response read as a tree.
pub fn sku_ids(body: &Value) -> Vec<(usize, String)> {
    body.as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .flat_map(|(i, p)| sku_ids_of(p).into_iter().map(move |id| (i, id)))
        .collect()
}

/// The skuIds of one product record that has string ones.
pub fn sku_ids_of(product: &Value) -> Vec<String> {
    product
        .get("skuResults")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("skuId")?.as_str().map(str::to_string))
        .collect()
}

/// `products.unique` of SKUs: the first skuId listed twice in one response (under two
/// products, or twice under one), with where it first was. A SKU is one of its product's.
pub fn duplicate_sku_ids(skus: &[(usize, String)]) -> Vec<Finding> {
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (product, id) in skus {
        if let Some(&at) = first.get(id.as_str()) {
            let again = if at == *product {
                format!("skuId {id} twice in product #{}", product + 1)
            } else {
                format!("skuId {id} again in product #{}", product + 1)
            };
            return vec![Finding::new(
                &catalog::PRODUCTS_UNIQUE,
                format!("/{product}/skuResults"),
                format!(
                    "each SKU once, under its one product (skuId {id} is in product #{} already)",
                    at + 1
                ),
                again,
            )];
        }
        first.insert(id, *product);
    }
    vec![]
}

/// Fewest malls with products that must all return the same list before the service is taken
/// to ignore `mallSn`: two malls may share a catalogue (a chain's one menu), as the spec does
/// not make products unique to a mall.
pub const MIN_MALLS_ALIKE: usize = 3;

/// The products call answers for the mall asked (§1: "the products of one mall"): when every
/// mall with products (at least [`MIN_MALLS_ALIKE`]) returns the same list, `mallSn` is
/// ignored. `lists` holds (mallSn, spuIds) per mall.
pub fn distinct(lists: &[(String, Vec<String>)]) -> Vec<Finding> {
    let filled: Vec<&(String, Vec<String>)> =
        lists.iter().filter(|(_, ids)| !ids.is_empty()).collect();
    let Some((_, first)) = filled.first() else {
        return vec![];
    };
    if filled.len() < MIN_MALLS_ALIKE || filled.iter().any(|(_, ids)| ids != first) {
        return vec![];
    }
    const NAMED: usize = 3;
    let mut named: Vec<&str> = filled
        .iter()
        .take(NAMED)
        .map(|(sn, _)| sn.as_str())
        .collect();
    let more = filled.len().saturating_sub(NAMED);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let last = named.pop().unwrap_or_default();
    vec![Finding::new(
        &catalog::PRODUCTS_DISTINCT,
        "",
        "the products of each mall asked: not one list for every mall",
        format!(
            "the same {} product(s) for all {} malls with products (mallSn {}, {last}{more})",
            first.len(),
            filled.len(),
            named.join(", ")
        ),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sku_under_two_products_or_twice_under_one_is_found() {
        let body = serde_json::json!([
            {"spuId": "2", "skuResults": [{"skuId": "20"}, {"skuId": "21"}]},
            {"spuId": "1", "skuResults": [{"skuId": "10"}]},
        ]);
        assert!(duplicate_sku_ids(&sku_ids(&body)).is_empty());
        let shared = serde_json::json!([
            {"spuId": "2", "skuResults": [{"skuId": "20"}]},
            {"spuId": "1", "skuResults": [{"skuId": "20"}]},
        ]);
        let f = duplicate_sku_ids(&sku_ids(&shared));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].pointer, "/1/skuResults");
        assert!(
            f[0].actual.contains("again in product #2"),
            "{}",
            f[0].actual
        );
        let twice =
            serde_json::json!([{"spuId": "2", "skuResults": [{"skuId": "20"}, {"skuId": "20"}]}]);
        assert!(
            duplicate_sku_ids(&sku_ids(&twice))[0]
                .actual
                .contains("twice in product #1")
        );
    }
    use serde_json::json;

    #[test]
    fn numeric_order_differs_from_string_order() {
        let ok = json!([{"spuId": "100"}, {"spuId": "99"}, {"spuId": "9"}]);
        assert!(order(&ok).is_empty());
        let bad = json!([{"spuId": "99"}, {"spuId": "100"}]);
        assert_eq!(order(&bad)[0].pointer, "/1/spuId");
    }

    #[test]
    fn one_list_for_every_mall_is_reported_once_and_a_shared_catalogue_is_not() {
        let list = |pairs: &[(&str, &[&str])]| -> Vec<(String, Vec<String>)> {
            pairs
                .iter()
                .map(|(sn, ids)| (sn.to_string(), ids.iter().map(|i| i.to_string()).collect()))
                .collect()
        };
        let same = list(&[("1", &["5"]), ("2", &["5"]), ("3", &[]), ("4", &["5"])]);
        let found = distinct(&same);
        assert_eq!(found.len(), 1);
        assert!(
            found[0]
                .actual
                .contains("for all 3 malls with products (mallSn 1, 2, 4)"),
            "{}",
            found[0].actual
        );
        // Two malls of one catalogue beside others, or only two malls: no finding.
        let shared = list(&[("1", &["5"]), ("2", &["5"]), ("3", &["6"])]);
        assert!(distinct(&shared).is_empty());
        let two = list(&[("1", &["5"]), ("2", &["5"]), ("3", &[])]);
        assert!(distinct(&two).is_empty());
    }
}
