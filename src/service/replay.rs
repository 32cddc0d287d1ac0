//! The donor of a replay probe (spec §5): another request, of the same operation or of the
//! other one, whose valid signature is moved onto the request under test. The donor is sent
//! first, signed, so that a service that remembers the signatures it has seen knows it.

use serde_json::{Value, json};

use crate::verdict::endpoint::{AuthMode, Endpoint};

/// The donor request for a replay onto `body` of `endpoint`: its endpoint and its bytes, which
/// always differ from `body`.
pub fn donor(endpoint: Endpoint, mode: &AuthMode, body: &[u8]) -> (Endpoint, Vec<u8>) {
    let to = match mode {
        AuthMode::SignatureOfOtherOperation => endpoint.other(),
        _ => endpoint,
    };
    let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(body) else {
        // Not a JSON object: other bytes all the same.
        let mut bytes = body.to_vec();
        bytes.extend_from_slice(b" ");
        return (to, bytes);
    };
    let appid = obj.get("appid").cloned().unwrap_or(Value::Null);
    let seller = obj
        .get("seller")
        .or_else(|| obj.get("filter").and_then(|f| f.get("seller")))
        .cloned()
        .unwrap_or(Value::Null);
    let donor = match (endpoint, to) {
        (Endpoint::MallList, Endpoint::MallList) => {
            // Another page size: an ordinary request of the same operation.
            let mut d = Value::Object(obj);
            let count = d.pointer("/cursor/count").and_then(Value::as_u64);
            let other = if count == Some(1) { 2 } else { 1 };
            match d.get_mut("cursor").and_then(Value::as_object_mut) {
                Some(cursor) => {
                    cursor.insert("count".into(), json!(other));
                }
                None => {
                    d["cursor"] = json!({"cursorField": "id", "endCursor": null, "count": other});
                }
            }
            d
        }
        (Endpoint::MallProducts, Endpoint::MallProducts) => {
            // Another mall signature: a request for what the caller may not see.
            let mut d = Value::Object(obj);
            let sig = d
                .pointer("/mallID/signature")
                .and_then(Value::as_str)
                .map(other_text)
                .unwrap_or_else(|| "0".to_string());
            match d.get_mut("mallID").and_then(Value::as_object_mut) {
                Some(mall) => {
                    mall.insert("signature".into(), json!(sig));
                }
                None => d["mallID"] = json!({"mallSn": "0", "signature": sig}),
            }
            d
        }
        (_, Endpoint::MallList) => json!({
            "appid": appid,
            "filter": {"seller": seller},
            "sort": {"sortField": "id", "sort": "DESC"},
            "cursor": {"cursorField": "id", "endCursor": null, "count": 10},
        }),
        (_, Endpoint::MallProducts) => json!({
            "appid": appid,
            "seller": seller,
            "mallID": {"mallSn": "0", "signature": "0"},
        }),
    };
    let bytes = serde_json::to_vec(&donor).expect("a serde_json::Value always serializes");
    (to, bytes)
}

/// The text with its last character changed.
fn other_text(s: &str) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    match chars.last_mut() {
        Some(last) => *last = if *last == '0' { '1' } else { '0' },
        None => chars.push('0'),
    }
    chars.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> Vec<u8> {
        serde_json::to_vec(&json!({
            "appid": "a", "filter": {"seller": {"merchantId": "m"}},
            "sort": {"sortField": "id", "sort": "DESC"},
            "cursor": {"cursorField": "id", "endCursor": null, "count": 10},
        }))
        .unwrap()
    }

    #[test]
    fn a_same_operation_donor_is_another_body_of_that_operation() {
        let (to, d) = donor(Endpoint::MallList, &AuthMode::SignatureOfOtherBody, &list());
        assert_eq!(to, Endpoint::MallList);
        assert_ne!(d, list());
        let v: Value = serde_json::from_slice(&d).unwrap();
        assert_eq!(v["cursor"]["count"], 1);
        let products = serde_json::to_vec(
            &json!({"appid": "a", "seller": {}, "mallID": {"mallSn": "1", "signature": "s"}}),
        )
        .unwrap();
        let (_, d) = donor(
            Endpoint::MallProducts,
            &AuthMode::SignatureOfOtherBody,
            &products,
        );
        let v: Value = serde_json::from_slice(&d).unwrap();
        assert_eq!(v["mallID"]["signature"], "0");
    }

    #[test]
    fn an_other_operation_donor_keeps_appid_and_seller() {
        let (to, d) = donor(
            Endpoint::MallList,
            &AuthMode::SignatureOfOtherOperation,
            &list(),
        );
        assert_eq!(to, Endpoint::MallProducts);
        let v: Value = serde_json::from_slice(&d).unwrap();
        assert_eq!(v["appid"], "a");
        assert_eq!(v["seller"]["merchantId"], "m");
        let (to, d) = donor(
            Endpoint::MallProducts,
            &AuthMode::SignatureOfOtherOperation,
            &d,
        );
        assert_eq!(to, Endpoint::MallList);
        let v: Value = serde_json::from_slice(&d).unwrap();
        assert_eq!(v["filter"]["seller"]["merchantId"], "m");
    }
}
