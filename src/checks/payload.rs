//! Whether a response carries merchant data, whatever its shape (spec §5, §7: the error shape
//! is not shown, so any response without data passes an auth or tampering probe).

use serde_json::Value;

use crate::verdict::check::Check;
use crate::verdict::event::Finding;

/// Where merchant data sits in a response, if anywhere: a non-empty top-level array (products,
/// §4.2) or a non-empty `data` array or object (mall list, §4.1).
pub fn merchant_data_pointer(body: &Value) -> Option<&'static str> {
    match body {
        Value::Array(items) if !items.is_empty() => Some(""),
        Value::Object(map) => match map.get("data") {
            Some(Value::Array(items)) if !items.is_empty() => Some("/data"),
            Some(Value::Object(o)) if !o.is_empty() => Some("/data"),
            _ => None,
        },
        _ => None,
    }
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
                Value::Array(a) => a.len(),
                _ => 1,
            };
            vec![
                Finding::new(
                    check,
                    pointer,
                    "no merchant data (any error shape passes)",
                    format!("{n} record(s) of merchant data"),
                )
                .with_detail("security: data was served to a request that must be refused"),
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
    }
}
