//! Ownership (spec §1, §4.1): the mall list returns the malls that belong to the requested
//! merchant, and nothing for a merchant that does not exist.

use serde_json::Value;

use crate::spec::catalog;
use crate::verdict::event::Finding;
use crate::verdict::findings::Findings;

/// Every listed mall's `seller.merchantId` equals the requested merchant id.
pub fn merchant(body: &Value, merchant_id: &str) -> Vec<Finding> {
    let mut out = Findings::new(usize::MAX);
    merchant_into(body, merchant_id, &mut out);
    out.into_vec()
}

/// [`merchant`] into a bounded collection: past its cap, a mall of another merchant costs a
/// count, not a finding.
pub fn merchant_into(body: &Value, merchant_id: &str, out: &mut Findings) {
    let Some(malls) = body.get("data").and_then(Value::as_array) else {
        return;
    };
    for (i, mall) in malls.iter().enumerate() {
        let actual = mall.pointer("/seller/merchantId");
        if actual
            .and_then(Value::as_str)
            .is_some_and(|a| same_id(a, merchant_id))
        {
            continue;
        }
        out.push_with(&catalog::OWNERSHIP_MERCHANT, || {
            Finding::new(
                &catalog::OWNERSHIP_MERCHANT,
                format!("/data/{i}/seller/merchantId"),
                format!("{merchant_id:?} (the requested merchant)"),
                actual.map_or_else(|| "missing".to_string(), Value::to_string),
            )
        });
    }
}

/// A merchant that does not exist lists no malls.
pub fn unknown_merchant(body: &Value) -> Vec<Finding> {
    match body.get("data").and_then(Value::as_array) {
        Some(malls) if !malls.is_empty() => vec![Finding::new(
            &catalog::OWNERSHIP_UNKNOWN_MERCHANT,
            "/data",
            "no malls for a merchant that does not exist",
            format!("{} mall(s)", malls.len()),
        )],
        _ => vec![],
    }
}

/// Whether two ids name the same merchant or mall. Ids are UUID-like text (§2.1) and the spec
/// gives no comparison rule, so a service may read them as UUIDs are read (letter case
/// ignored) and without surrounding blanks: such a reading is no other merchant.
pub fn same_id(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// The merchant id of a mall list request body (`filter.seller.merchantId`, §4.1).
pub fn requested_merchant(body: &Value) -> Option<&str> {
    body.pointer("/filter/seller/merchantId")
        .and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_mall_of_another_merchant_is_reported_with_its_pointer() {
        let body = json!({"data": [
            {"seller": {"merchantId": "m1"}},
            {"seller": {"merchantId": "m2"}},
        ]});
        let f = merchant(&body, "m1");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].pointer, "/data/1/seller/merchantId");
    }

    #[test]
    fn past_the_cap_malls_of_another_merchant_are_counted() {
        let malls: Vec<Value> = (0..1000)
            .map(|_| json!({"seller": {"merchantId": "m2"}}))
            .collect();
        let mut found = Findings::new(3);
        merchant_into(&json!({ "data": malls }), "m1", &mut found);
        assert_eq!(found.kept().len(), 3);
        assert_eq!(found.kept()[2].pointer, "/data/2/seller/merchantId");
        assert_eq!(found.omitted()[0].count, 997);
    }

    #[test]
    fn ids_differing_in_letter_case_or_blanks_are_the_same_merchant() {
        let body = json!({"data": [
            {"seller": {"merchantId": "5F3C9A1E-7B42"}},
            {"seller": {"merchantId": " 5f3c9a1e-7b42 "}},
            {"seller": {"merchantId": "5f3c9a1e-7b43"}},
        ]});
        let f = merchant(&body, "5f3c9a1e-7b42");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].pointer, "/data/2/seller/merchantId");
    }

    #[test]
    fn unknown_merchant_must_list_nothing() {
        assert!(unknown_merchant(&json!({"data": []})).is_empty());
        assert_eq!(unknown_merchant(&json!({"data": [{}]})).len(), 1);
    }
}
