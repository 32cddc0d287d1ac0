//! Typed request bodies of the two operations (spec §4.1, §4.2), validated by hand so that every
//! problem becomes a 400 message naming the field.

use serde_json::Value;

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

/// The body's `appid`, which must be a string.
pub(crate) fn appid(body: &Value) -> Result<&str, String> {
    string_at(body, "/appid", "appid")
}

/// Validates a mall list body: `filter.seller`, optional `sort` (`id` `DESC` only) and `cursor`
/// with an integer `count` in 1..=1000 and an `endCursor` that is null, absent or a string.
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
    let count = match body.pointer("/cursor/count").map(Value::as_u64) {
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
        Some(other) => Err(format!("{name} must be an object, got {}", kind(other))),
    }
}

fn string_at<'a>(body: &'a Value, ptr: &str, name: &str) -> Result<&'a str, String> {
    match body.pointer(ptr) {
        Some(Value::String(s)) => Ok(s),
        None => Err(format!("{name} is required")),
        Some(other) => Err(format!("{name} must be a string, got {}", kind(other))),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
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
