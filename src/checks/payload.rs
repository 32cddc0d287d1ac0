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

/// Bodies of at most this many bytes that are no one JSON document are searched piece by piece
/// ([`no_data_in_pieces`]).
const PIECES_MAX_BYTES: usize = 4 << 20;

/// Most JSON values tried in one body by [`no_data_in_pieces`].
const PIECES_MAX_TRIES: usize = 64;

/// [`no_data`] of each JSON value that begins in `bytes`, a body that is no one JSON document:
/// an error written and then the data after it (a handler that did not return after refusing,
/// or a text line before the JSON) still serves the data.
pub fn no_data_in_pieces(check: &'static Check, bytes: &[u8]) -> Vec<Finding> {
    if bytes.len() > PIECES_MAX_BYTES {
        return vec![];
    }
    let mut at = 0;
    for _ in 0..PIECES_MAX_TRIES {
        let Some(start) = bytes[at..]
            .iter()
            .position(|&b| b == b'{' || b == b'[')
            .map(|i| at + i)
        else {
            break;
        };
        let mut values = serde_json::Deserializer::from_slice(&bytes[start..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(value)) => {
                let found = no_data(check, &value);
                if !found.is_empty() {
                    return found;
                }
                at = start + values.byte_offset().max(1);
            }
            _ => at = start + 1,
        }
    }
    vec![]
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
    fn data_after_a_refusal_in_one_body_is_a_finding() {
        let check = &catalog::AUTH_SIGNATURE;
        let error = r#"{"success":false,"code":"4010","msg":"bad signature"}"#;
        let data = r#"{"success":true,"code":"0000","data":[{"mallSn":"1"}]}"#;
        for body in [
            format!("{error}{data}"),
            format!("{error}\n{data}\n"),
            format!("Unauthorized\n{data}"),
            format!("[\"denied\"]{}", r#"[{"spuId":"7"}]"#),
        ] {
            assert_eq!(no_data_in_pieces(check, body.as_bytes()).len(), 1, "{body}");
        }
        for body in [
            format!("{error}{error}"),
            "Unauthorized {not json} [".to_string(),
            format!("{error} trailing"),
        ] {
            assert!(
                no_data_in_pieces(check, body.as_bytes()).is_empty(),
                "{body}"
            );
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
