//! Whether a response carries merchant data, whatever its shape (spec §5, §7: the error shape
//! is not shown, so any response without data passes an auth or tampering probe).

use serde_json::Value;

use crate::verdict::check::Check;
use crate::verdict::event::Finding;

/// Where merchant data sits in a response, if anywhere: a top-level array (products, §4.2) or
/// a `data` array or object (mall list, §4.1) holding at least one mall or product record.
/// An error answer may carry details in any shape (§7.2, §7.4: not shown), so an array of
/// error objects or a `data` object of error details is no merchant data.
pub fn merchant_data_pointer(body: &Value) -> Option<&'static str> {
    match body {
        Value::Array(items) if items.iter().any(is_record) => Some(""),
        Value::Object(map) => match map.get("data") {
            Some(Value::Array(items)) if items.iter().any(is_record) => Some("/data"),
            Some(record @ Value::Object(_)) if is_record(record) => Some("/data"),
            _ => None,
        },
        _ => None,
    }
}

/// Field names of a mall (§2.2) and a product (§2.7) that an error detail would not carry.
const RECORD_FIELDS: [&str; 16] = [
    "mallName",
    "signature",
    "state",
    "isDelete",
    "seller",
    "orderStatistics",
    "crossCityPayments",
    "templateId",
    "ctime",
    "tags",
    "title",
    "converImages",
    "productIntroduction",
    "skuResults",
    "mallSn",
    "spuId",
];

/// Whether `item` is a mall or a product: an object with its identifying field (`mallSn`,
/// `spuId`) or at least two of the other fields of a mall or a product.
fn is_record(item: &Value) -> bool {
    let Value::Object(map) = item else {
        return false;
    };
    if map.contains_key("mallSn") || map.contains_key("spuId") {
        return true;
    }
    RECORD_FIELDS
        .iter()
        .filter(|k| map.contains_key(**k))
        .count()
        >= 2
}

/// The response must carry no merchant data; a finding under `check` otherwise.
pub fn no_data(check: &'static Check, body: &Value) -> Vec<Finding> {
    match merchant_data_pointer(body) {
        None => vec![],
        Some(pointer) => {
            let target = if pointer.is_empty() {
                body
            } else {
                body.pointer(pointer).unwrap_or(&Value::Null)
            };
            let n = match target {
                Value::Array(a) => a.iter().filter(|i| is_record(i)).count(),
                _ => 1,
            };
            // What the spec only shows (the appids equal) is no "must" (a warning).
            let detail = match check.severity {
                crate::verdict::check::Severity::Observed => {
                    "observed: data was served to a request the shown calls never make"
                }
                _ => "security: data was served to a request that must be refused",
            };
            vec![
                Finding::new(
                    check,
                    pointer,
                    "no merchant data (any error shape passes)",
                    format!("{n} record(s) of merchant data"),
                )
                .with_detail(detail),
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::catalog;
    use serde_json::json;

    #[test]
    fn error_shapes_without_data_pass() {
        for body in [
            json!({"success": false, "code": "4010", "msg": "no"}),
            json!({"success": false, "data": null}),
            json!({"success": true, "code": "0000", "data": []}),
            json!([]),
            json!("denied"),
            // Error details in the shapes frameworks give them (§7.2, §7.4: not shown).
            json!({"success": false, "code": "4010", "data": {"errorField": "auth", "traceId": "t-1"}}),
            json!([{"field": "seller", "message": "seller must be an object"}]),
            json!({"type": "about:blank", "title": "Bad Request", "status": 400}),
            json!({"success": false, "data": ["appid is required"]}),
        ] {
            assert!(no_data(&catalog::AUTH_REQUIRED, &body).is_empty(), "{body}");
        }
    }

    #[test]
    fn data_served_anyway_is_a_finding() {
        let f = no_data(
            &catalog::AUTH_SIGNATURE,
            &json!({"data": [{"mallSn": "1"}]}),
        );
        assert_eq!(f[0].check.id, "auth.signature");
        assert_eq!(f[0].pointer, "/data");
        assert_eq!(
            no_data(&catalog::AUTH_SIGNATURE, &json!([{"spuId": "1"}])).len(),
            1
        );
        // A record stripped of its id still shows by its other fields.
        let stripped = json!({"success": false, "data": [{"mallName": "m", "seller": {}}]});
        assert_eq!(no_data(&catalog::AUTH_SIGNATURE, &stripped).len(), 1);
        let one = json!({"data": {"title": "t", "skuResults": []}});
        assert_eq!(no_data(&catalog::AUTH_SIGNATURE, &one)[0].pointer, "/data");
    }
}
