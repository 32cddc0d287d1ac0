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
        mall_merchant_into(i, mall, merchant_id, out);
    }
}

/// [`merchant_into`] of one mall, the `i`th of the page: for a page read one record at a time.
pub fn mall_merchant_into(i: usize, mall: &Value, merchant_id: &str, out: &mut Findings) {
    let actual = mall.pointer("/seller/merchantId");
    if actual
        .and_then(Value::as_str)
        .is_some_and(|a| same_id(a, merchant_id))
    {
        return;
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

/// A mall of a merchant's page as the cross-merchant cursor probe remembers it.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedMall {
    /// Its `mallSn`.
    pub sn: String,
    /// Its `signature` (empty when the record has none).
    pub signature: String,
    /// What the mall itself is: its name and creation time, which a copy of it relabelled
    /// with another merchant's id keeps and another merchant's mall of the same number does
    /// not have.
    pub identity: Option<(Value, Value)>,
}

impl ListedMall {
    /// The mall of a record, when it has a `mallSn`.
    pub fn of(record: &Value) -> Option<ListedMall> {
        let text = |k: &str| record.get(k).and_then(Value::as_str).map(str::to_string);
        Some(ListedMall {
            sn: text("mallSn")?,
            signature: text("signature").unwrap_or_default(),
            identity: ListedMall::identity_of(record),
        })
    }

    fn identity_of(record: &Value) -> Option<(Value, Value)> {
        Some((
            record.get("mallName")?.clone(),
            record.get("ctime")?.clone(),
        ))
    }
}

/// The answer to a mall-list request of merchant `requester` whose cursor was taken from the
/// list of merchant `cursor_owner` (a cross-merchant cursor probe): every record is one of
/// the requester's malls, and none is a mall the cursor owner's own page listed (`owner_malls`,
/// `(mallSn, signature)`: §2.2 has the two identify a mall together, so another merchant may
/// have a mall of the same `mallSn`), which catches a leaked mall relabelled with the
/// requester's id too. A refusal
/// (no `data` array) passes: the cursor names no place in the requester's list. One finding
/// per answer, naming the first malls that leaked and counting the rest.
pub fn cursor_merchant(
    body: &Value,
    requester: &str,
    cursor_owner: &str,
    owner_malls: &[ListedMall],
) -> Option<Finding> {
    /// Leaked malls named in the finding; the rest are counted.
    const NAMED: usize = 5;
    let malls = body.get("data").and_then(Value::as_array)?;
    let leaked: Vec<String> = malls
        .iter()
        .enumerate()
        .filter_map(|(i, mall)| {
            let owner = mall.pointer("/seller/merchantId");
            let sn = mall.get("mallSn").and_then(Value::as_str);
            let signature = mall.get("signature").and_then(Value::as_str);
            let foreign_owner = !owner
                .and_then(Value::as_str)
                .is_some_and(|a| same_id(a, requester));
            // A record without its signature is judged by its mallSn alone. A record of the
            // requester that is another mall than the owner's of the same number and
            // signature (its own name and creation time: a service whose numbers and
            // signatures are unique per merchant only) is the requester's own.
            let identity = ListedMall::identity_of(mall);
            let listed_by_owner = sn.is_some_and(|sn| {
                owner_malls.iter().any(|m| {
                    m.sn == sn
                        && signature.is_none_or(|g| g == m.signature)
                        && (foreign_owner
                            || m.identity.is_none()
                            || identity.is_none()
                            || m.identity == identity)
                })
            });
            (foreign_owner || listed_by_owner).then(|| {
                let owner = owner.map_or_else(|| "missing".to_string(), Value::to_string);
                let listed = if listed_by_owner {
                    format!(", listed by {cursor_owner:?}")
                } else {
                    String::new()
                };
                format!(
                    "/data/{i} mall {} of merchant {owner}{listed}",
                    sn.unwrap_or("?")
                )
            })
        })
        .collect();
    let first = leaked.first()?;
    let pointer = first.split(' ').next().unwrap_or("/data").to_string();
    let mut actual = leaked
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if leaked.len() > NAMED {
        actual.push_str(&format!("; {} more", leaked.len() - NAMED));
    }
    Some(Finding::new(
        &catalog::OWNERSHIP_CURSOR_MERCHANT,
        pointer,
        format!(
            "malls of {requester:?} (the requested merchant) only, or a refusal: the cursor came \
             from the list of {cursor_owner:?}"
        ),
        format!("{} mall(s) not the requester's: {actual}", leaked.len()),
    ))
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

    /// Numbers and signatures unique per merchant only: the requester's own mall of the same
    /// number and signature as the owner's (another name, another creation time) passes; a
    /// copy of the owner's mall relabelled with the requester's id does not.
    #[test]
    fn a_mall_of_the_same_number_and_signature_is_the_requesters_when_it_is_another_mall() {
        let owner_malls = vec![ListedMall {
            sn: "200".into(),
            signature: "s".into(),
            identity: Some((json!("Owner's shop"), json!("2024-01-01 00:00:00"))),
        }];
        let check = |name: &str| {
            cursor_merchant(
                &json!({"data": [{"mallSn": "200", "signature": "s", "mallName": name,
                    "ctime": "2024-01-01 00:00:00", "seller": {"merchantId": "a"}}]}),
                "a",
                "b",
                &owner_malls,
            )
        };
        assert!(check("Requester's shop").is_none());
        assert!(check("Owner's shop").is_some());
    }

    #[test]
    fn a_cursor_probe_flags_malls_of_the_cursor_owner_even_relabelled() {
        let mall = |sn: &str| ListedMall {
            sn: sn.to_string(),
            signature: format!("s{sn}"),
            identity: Some((json!(format!("mall {sn}")), json!("2024-01-01 00:00:00"))),
        };
        let owner_malls = vec![mall("200"), mall("201")];
        let check = |body: Value| cursor_merchant(&body, "a", "b", &owner_malls);
        // The requester's own malls, and a refusal, pass: one of them shares a mallSn with a
        // mall of the cursor's owner, under another signature (§2.2: the two identify a mall).
        assert!(
            check(json!({"data": [
                {"mallSn": "100", "seller": {"merchantId": "A"}},
                {"mallSn": "200", "signature": "mine", "seller": {"merchantId": "a"}},
            ]}))
            .is_none()
        );
        assert!(check(json!({"success": false, "code": "4040"})).is_none());
        let f = check(json!({"data": [
            {"mallSn": "100", "seller": {"merchantId": "a"}},
            {"mallSn": "202", "seller": {"merchantId": "b"}},
            {"mallSn": "201", "signature": "s201", "seller": {"merchantId": "a"}},
        ]}))
        .expect("a leak");
        assert_eq!(f.check.id, "ownership.cursor-merchant");
        assert_eq!(f.pointer, "/data/1");
        assert!(f.actual.contains("2 mall(s)"), "{}", f.actual);
        assert!(
            f.actual
                .contains("/data/2 mall 201 of merchant \"a\", listed by \"b\""),
            "{}",
            f.actual
        );
    }

    #[test]
    fn unknown_merchant_must_list_nothing() {
        assert!(unknown_merchant(&json!({"data": []})).is_empty());
        assert_eq!(unknown_merchant(&json!({"data": [{}]})).len(), 1);
    }
}
