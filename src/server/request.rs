//! Typed request bodies of the two operations (spec §4.1, §4.2), validated by hand so that every
//! problem becomes a 400 message naming the field.

use serde_json::Value;

use crate::json::a_json_type;

/// Largest accepted `cursor.count`.
pub(crate) const MAX_COUNT: u64 = 1_000;

/// The seller identity object of spec §2.1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SellerIdentity {
    pub(crate) merchant_id: String,
    pub(crate) merchant_user_id: String,
    pub(crate) role: String,
}

/// A validated mall list request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListRequest {
    pub(crate) seller: SellerIdentity,
    /// `None` asks for the first page.
    pub(crate) end_cursor: Option<String>,
    pub(crate) count: usize,
}

/// A validated mall products request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProductsRequest {
    pub(crate) seller: SellerIdentity,
    pub(crate) mall_sn: String,
    pub(crate) signature: String,
}

/// Name of the optional header of the products call (spec §5.3).
pub(crate) const ENV_FLAG: &str = "x-env-flag";

/// Validates the optional `X-env-flag` header of the products call: when present, each value
/// is digits only (spec §5.3: "value of digits"; the OpenAPI export says `^[0-9]+$`).
pub(crate) fn env_flag<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Result<(), String> {
    for value in values {
        if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
            return Err("the X-env-flag header must be digits".into());
        }
    }
    Ok(())
}

/// The body's `appid`, which must be a string.
pub(crate) fn appid(body: &Value) -> Result<&str, String> {
    string_at(body, "/appid", "appid")
}

/// Validates a mall list body: `filter.seller`, optional `sort` (`id` `DESC` only) and `cursor`
/// with an integer `count` in 1..=1000 and an `endCursor` that is null, absent or a string.
/// `schemas/mall-list-request.json` states the same rules for other tools (`mallcheck openapi`).
pub(crate) fn parse_list(body: &Value) -> Result<ListRequest, String> {
    object_at(body, "", "the body")?;
    object_at(body, "/filter", "filter")?;
    let seller = seller_at(body, "/filter/seller", "filter.seller")?;
    if body.get("sort").is_some_and(|s| !s.is_null()) {
        object_at(body, "/sort", "sort")?;
        if let Some(field) = body.pointer("/sort/sortField")
            && field.as_str() != Some("id")
        {
            return Err(format!("sort.sortField must be \"id\", got {field}"));
        }
        if let Some(dir) = body.pointer("/sort/sort")
            && !dir.as_str().is_some_and(|d| d.eq_ignore_ascii_case("desc"))
        {
            return Err(format!("sort.sort must be \"DESC\", got {dir}"));
        }
    }
    object_at(body, "/cursor", "cursor")?;
    if let Some(field) = body.pointer("/cursor/cursorField")
        && !field.is_null()
        && field.as_str() != Some("id")
    {
        return Err(format!("cursor.cursorField must be \"id\", got {field}"));
    }
    let count = match body.pointer("/cursor/count").map(whole_number) {
        None => return Err("cursor.count is required".into()),
        Some(Some(n)) if (1..=MAX_COUNT).contains(&n) => n,
        Some(_) => {
            return Err(format!(
                "cursor.count must be an integer from 1 to {MAX_COUNT}"
            ));
        }
    };
    let end_cursor = match body.pointer("/cursor/endCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(format!(
                "cursor.endCursor must be a string or null, got {other}"
            ));
        }
    };
    Ok(ListRequest {
        seller,
        end_cursor,
        count: usize::try_from(count).expect("count is at most 1000"),
    })
}

/// Validates a mall products body: top-level `seller` and `mallID` with `mallSn` and `signature`.
pub(crate) fn parse_products(body: &Value) -> Result<ProductsRequest, String> {
    object_at(body, "", "the body")?;
    let seller = seller_at(body, "/seller", "seller")?;
    object_at(body, "/mallID", "mallID")?;
    Ok(ProductsRequest {
        seller,
        mall_sn: string_at(body, "/mallID/mallSn", "mallID.mallSn")?.to_string(),
        signature: string_at(body, "/mallID/signature", "mallID.signature")?.to_string(),
    })
}

/// A `cursor.count` that JSON Schema's `integer` accepts: `10` and `10.0` alike. `None` for
/// anything else; a whole number above [`MAX_COUNT`] written with a fraction part is `None` too
/// (it is rejected either way).
fn whole_number(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && (0.0..=MAX_COUNT as f64).contains(f))
            .map(|f| f as u64)
    })
}

fn seller_at(body: &Value, ptr: &str, name: &str) -> Result<SellerIdentity, String> {
    object_at(body, ptr, name)?;
    let field = |key: &str| {
        string_at(body, &format!("{ptr}/{key}"), &format!("{name}.{key}")).map(str::to_string)
    };
    Ok(SellerIdentity {
        merchant_id: field("merchantId")?,
        merchant_user_id: field("merchantUserId")?,
        role: field("role")?,
    })
}

fn object_at(body: &Value, ptr: &str, name: &str) -> Result<(), String> {
    match body.pointer(ptr) {
        Some(Value::Object(_)) => Ok(()),
        None => Err(format!("{name} is required")),
        Some(other) => Err(format!(
            "{name} must be an object, got {}",
            a_json_type(other)
        )),
    }
}

fn string_at<'a>(body: &'a Value, ptr: &str, name: &str) -> Result<&'a str, String> {
    match body.pointer(ptr) {
        Some(Value::String(s)) => Ok(s),
        None => Err(format!("{name} is required")),
        Some(other) => Err(format!(
            "{name} must be a string, got {}",
            a_json_type(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list_body() -> Value {
        json!({
            "appid": "a",
            "filter": {"seller": {"merchantId": "m", "merchantUserId": "u", "role": "super_admin"}},
            "sort": {"sortField": "id", "sort": "DESC"},
            "cursor": {"cursorField": "id", "endCursor": null, "count": 10},
        })
    }

    #[test]
    fn a_spec_shaped_list_body_is_accepted() {
        let req = parse_list(&list_body()).unwrap();
        assert_eq!(req.count, 10);
        assert_eq!(req.end_cursor, None);
        assert_eq!(req.seller.merchant_id, "m");
    }

    #[test]
    fn list_body_problems_name_the_field() {
        let cases: &[(&str, Value, &str)] = &[
            ("count zero", json!(0), "cursor.count"),
            ("count too big", json!(1001), "cursor.count"),
            ("count fraction", json!(2.5), "cursor.count"),
            ("count string", json!("10"), "cursor.count"),
            ("count negative", json!(-1), "cursor.count"),
            (
                "count fraction over the maximum",
                json!(1000.5),
                "cursor.count",
            ),
        ];
        for (why, count, field) in cases {
            let mut body = list_body();
            body["cursor"]["count"] = count.clone();
            let err = parse_list(&body).unwrap_err();
            assert!(err.contains(field), "{why}: {err}");
        }
        let mut body = list_body();
        body["filter"]["seller"]["role"] = json!(7);
        assert!(
            parse_list(&body)
                .unwrap_err()
                .contains("filter.seller.role")
        );
        let mut body = list_body();
        body["sort"]["sort"] = json!("ASC");
        assert!(parse_list(&body).unwrap_err().contains("sort.sort"));
        assert!(parse_list(&json!([1])).is_err());
    }

    #[test]
    fn a_whole_count_written_as_a_float_is_an_integer() {
        for (count, expected) in [(json!(10.0), 10), (json!(1e3), 1000), (json!(1), 1)] {
            let mut body = list_body();
            body["cursor"]["count"] = count.clone();
            assert_eq!(parse_list(&body).map(|r| r.count), Ok(expected), "{count}");
        }
    }

    /// Every body made from a valid one by dropping a member, or setting it to null, a value of
    /// another type or a value of its own type that the spec does not show.
    fn variants(valid: &Value) -> Vec<(String, Value)> {
        fn pointers(node: &Value, at: &str, out: &mut Vec<String>) {
            if let Value::Object(map) = node {
                for (key, value) in map {
                    let here = format!("{at}/{key}");
                    out.push(here.clone());
                    pointers(value, &here, out);
                }
            }
        }
        let mut all = Vec::new();
        pointers(valid, "", &mut all);
        let replacements = [
            json!(null),
            json!(true),
            json!(0),
            json!(1),
            json!(10.0),
            json!(1000),
            json!(1001),
            json!(-5),
            json!(2.5),
            json!(""),
            json!("id"),
            json!("desc"),
            json!("ASC"),
            json!("ctime"),
            json!([]),
            json!({}),
        ];
        let mut out = vec![("the valid body".to_string(), valid.clone())];
        for pointer in &all {
            let (parent, key) = pointer.rsplit_once('/').expect("a member pointer");
            let mut dropped = valid.clone();
            if let Some(Value::Object(map)) = dropped.pointer_mut(parent) {
                map.shift_remove(key);
            }
            out.push((format!("without {pointer}"), dropped));
            for r in &replacements {
                let mut changed = valid.clone();
                if let Some(slot) = changed.pointer_mut(pointer) {
                    *slot = r.clone();
                }
                out.push((format!("{pointer} = {r}"), changed));
            }
        }
        out.push(("an array".to_string(), json!([valid])));
        out
    }

    /// The request schemas (and so `mallcheck openapi`) and the reference server agree: a body
    /// is accepted by one exactly when it is accepted by the other.
    #[test]
    fn the_request_schemas_accept_exactly_what_the_server_accepts() {
        let schemas = crate::spec::schemas::SchemaSet::embedded().expect("embedded schemas");
        let products_body = json!({
            "appid": "a",
            "seller": {"merchantId": "m", "merchantUserId": "u", "role": "r"},
            "mallID": {"mallSn": "1", "signature": "s"},
        });
        let mut checked = 0;
        for (schema, valid, parse) in [
            (
                "mall-list-request",
                list_body(),
                (|b: &Value| parse_list(b).map(drop)) as fn(&Value) -> Result<(), String>,
            ),
            ("products-request", products_body, |b: &Value| {
                parse_products(b).map(drop)
            }),
        ] {
            for (why, body) in variants(&valid) {
                let findings = schemas.validate(schema, &body);
                let server = parse(&body).and_then(|()| appid(&body).map(drop));
                assert_eq!(
                    findings.is_empty(),
                    server.is_ok(),
                    "{schema}, {why}: schema {findings:?}, server {server:?}"
                );
                checked += 1;
            }
        }
        assert!(checked > 300, "{checked}");
    }

    #[test]
    fn env_flag_is_digits_when_present() {
        assert_eq!(env_flag([]), Ok(()));
        assert_eq!(env_flag([&b"1"[..], b"0042"]), Ok(()));
        for bad in [&b""[..], b"1a", b" 1", b"-1", "\u{0661}".as_bytes()] {
            assert!(env_flag([bad]).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn products_body_needs_mall_id() {
        let body = json!({
            "appid": "a",
            "seller": {"merchantId": "m", "merchantUserId": "u", "role": "r"},
            "mallID": {"mallSn": "1", "signature": "s"},
        });
        assert_eq!(parse_products(&body).unwrap().mall_sn, "1");
        let mut broken = body.clone();
        broken["mallID"] = json!("1");
        assert!(parse_products(&broken).unwrap_err().contains("mallID"));
    }
}
