//! The properties every response to a generated body must have (spec §4, §7): no 5xx, an
//! answer in time, a JSON body, a success that passes the contract, an error without data, and
//! no mall or product of another merchant. Pure functions of the body and what came back.

use serde_json::Value;

use crate::checks::robustness::{self, RobustnessGate};
use crate::checks::{conforming, ownership, payload};
use crate::fuzz::body::FuzzBody;
use crate::fuzz::known::Known;
use crate::service::client::{Response, Sent};
use crate::service::lazy_json::LazyJson;
use crate::spec::catalog;
use crate::verdict::check::Check;
use crate::verdict::endpoint::Endpoint;
use crate::verdict::event::{Finding, Outcome};

/// Every property, in the order they are reported.
pub use crate::spec::catalog::FUZZ_PROPERTIES as PROPERTIES;

/// One property broken by one response, with the findings that show it.
#[derive(Debug, Clone)]
pub struct Violation {
    /// The property (a `fuzz.*` catalogue entry).
    pub property: &'static Check,
    /// What was found, under the checks that found it.
    pub findings: Vec<Finding>,
}

/// Statuses with which an HTTP layer refuses a request for its size: content too large, URI
/// too long, header fields too large.
const SIZE_REJECTIONS: [u16; 3] = [413, 414, 431];

/// The status of an HTTP-layer rejection of a request that goes beyond the common size limits:
/// 413, 414 or 431, or a 400 whose body is not JSON (nginx answers "Request Header Or Cookie
/// Too Large" so). Such an answer comes from the server in front of the service, so it breaks
/// no property; it is reported apart. A request within the common limits is never excused.
pub fn http_layer_rejection(sent: &Sent, beyond_common: bool) -> Option<u16> {
    if !beyond_common {
        return None;
    }
    let status = sent.exchange.response.as_ref()?.status;
    let not_json = match &sent.result {
        Ok(response) => !response.body_is_json,
        Err(f) => f.check.id == catalog::RESPONSE_JSON.id,
    };
    (SIZE_REJECTIONS.contains(&status) || (status == 400 && not_json)).then_some(status)
}

/// Checks every property on what one body got back.
pub fn evaluate(
    endpoint: Endpoint,
    body: &FuzzBody,
    sent: &Sent,
    schemas: &crate::spec::schemas::SchemaSet,
    known: &Known,
    gate: RobustnessGate,
) -> Vec<Violation> {
    match &sent.result {
        Ok(response) => evaluate_response(endpoint, body, response, schemas, known, gate),
        Err(finding) => {
            let status = sent.exchange.response.as_ref().map(|r| r.status);
            let property = transport_property(finding, status);
            // A 5xx, a dropped connection or a hang is said as what it is: robustness.
            let finding = robustness::recast(gate, finding, status, &body.to_bytes(), GENERATED)
                .unwrap_or_else(|| (**finding).clone());
            vec![Violation {
                property,
                findings: vec![finding],
            }]
        }
    }
}

/// How a robustness finding names a generated request with nothing odd about its body.
const GENERATED: &str = "a generated request";

/// Checks every property on a decoded JSON response.
pub fn evaluate_response(
    endpoint: Endpoint,
    body: &FuzzBody,
    response: &Response,
    schemas: &crate::spec::schemas::SchemaSet,
    known: &Known,
    gate: RobustnessGate,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut add = |property: &'static Check, findings: Vec<Finding>| {
        if !findings.is_empty() {
            out.push(Violation { property, findings });
        }
    };
    if response.status >= 500 {
        let f = robustness::server_error(gate, response.status, &body.to_bytes(), GENERATED);
        add(&catalog::FUZZ_NO_SERVER_ERROR, vec![f]);
    }
    if is_success(endpoint, response) {
        add(
            &catalog::FUZZ_CONTRACT,
            contract(endpoint, body, response, schemas),
        );
    } else {
        let found = if conforming::carries_no_records(response.json.digest()) {
            vec![]
        } else {
            payload::no_data(&catalog::FUZZ_ERROR_NO_DATA, &response.json)
        };
        add(&catalog::FUZZ_ERROR_NO_DATA, found);
    }
    let foreign = match endpoint {
        Endpoint::MallList => foreign_malls(body, &response.json, known),
        Endpoint::MallProducts => foreign_products(body, response, known),
    };
    add(&catalog::FUZZ_OWNERSHIP, foreign);
    out
}

/// Which property a response without a usable JSON body breaks.
fn transport_property(finding: &Finding, status: Option<u16>) -> &'static Check {
    let id = finding.check.id;
    if id == catalog::TRANSPORT_TIMEOUT.id {
        &catalog::FUZZ_TIMELY
    } else if status.is_some_and(|s| s >= 500) || id == catalog::HTTP_SERVER_ERROR.id {
        &catalog::FUZZ_NO_SERVER_ERROR
    } else if status.is_none()
        && (id == catalog::TRANSPORT_CONNECT.id || id == catalog::TRANSPORT_DROPPED.id)
    {
        // No HTTP answer at all (connection reset or closed): the server failed on the body.
        &catalog::FUZZ_NO_SERVER_ERROR
    } else {
        &catalog::FUZZ_JSON
    }
}

/// A success response: the mall list's `success` is true (§4.1, §7.1); the products operation
/// answers 2xx with an array (§4.2). Everything else is an error response.
pub fn is_success(endpoint: Endpoint, response: &Response) -> bool {
    match endpoint {
        Endpoint::MallList => response.json.success_is_true(),
        Endpoint::MallProducts => {
            (200..300).contains(&response.status)
                && response.json.is_array()
                // An array of error objects (`[{"error":"bad signature"}]`, no field of a
                // product in any) is a refusal in a shape §7.4 leaves open, as `run` takes it;
                // a body that conforms, or an empty array, is a success.
                && (response.json.digest().is_some()
                    || match response.json.value() {
                        Value::Array(items) => {
                            items.is_empty() || payload::merchant_data_pointer(response.json.value()).is_some()
                        }
                        _ => true,
                    })
        }
    }
}

/// The contract checks of `run` on a success response: the response schema (envelope, malls,
/// products) and, for the mall list, the page size against `cursor.count`.
fn contract(
    endpoint: Endpoint,
    body: &FuzzBody,
    response: &Response,
    schemas: &crate::spec::schemas::SchemaSet,
) -> Vec<Finding> {
    match endpoint {
        Endpoint::MallList => {
            let count = body
                .json()
                .and_then(|b| b.pointer("/cursor/count"))
                .and_then(Value::as_u64);
            page_contract(response, count, schemas)
        }
        Endpoint::MallProducts => schema_findings(endpoint, response, schemas),
    }
}

/// The contract checks of a success mall-list page (also the preflight's): its schema, at
/// most `count` (the request's `cursor.count`) malls, each once.
pub fn page_contract(
    response: &Response,
    count: Option<u64>,
    schemas: &crate::spec::schemas::SchemaSet,
) -> Vec<Finding> {
    let mut findings = schema_findings(Endpoint::MallList, response, schemas);
    findings.extend(page_size(response, count));
    findings.extend(mall_twice(&response.json));
    findings
}

/// `paging.page-size`: more malls than `count` asked for (read from the bytes, no tree).
pub fn page_size(response: &Response, count: Option<u64>) -> Option<Finding> {
    // A count below 1 asks for no page at all: a service may refuse it or serve its default
    // size (§4.1 gives no rule for it), so only a positive count bounds the page.
    let count = count.filter(|&c| c >= 1)?;
    let len = response.json.data_len()?;
    (u64::try_from(len).unwrap_or(u64::MAX) > count).then(|| {
        Finding::new(
            &catalog::PAGING_PAGE_SIZE,
            "/data",
            format!("at most {count} malls (cursor.count)"),
            format!("{len} malls"),
        )
    })
}

/// The response schema's failing findings, spelled as the body spells its values.
pub(crate) fn schema_findings(
    endpoint: Endpoint,
    response: &Response,
    schemas: &crate::spec::schemas::SchemaSet,
) -> Vec<Finding> {
    let mut findings: Vec<Finding> =
        if schemas.conforms(endpoint.response_schema(), response.json.digest()) {
            Vec::new()
        } else {
            response
                .json
                .findings()
                .into_iter()
                .chain(schemas.validate(endpoint.response_schema(), &response.json))
                .filter(|f| matches!(f.outcome(false), Outcome::Fail | Outcome::Error))
                .collect()
        };
    response.json.spell(&mut findings);
    findings
}

/// `paging.duplicate` within one page: the first mall (its merchant's `mallSn`) listed twice,
/// at any page size (a page of a size no walk of `run` asks for may repeat one).
fn mall_twice(json: &LazyJson) -> Option<Finding> {
    let mut keys: Vec<(String, String)> = Vec::new();
    match json.digest() {
        Some(crate::spec::wire::Digest::Envelope(e)) => keys.extend(
            e.malls
                .iter()
                .flatten()
                .map(|m| (m.merchant_id.clone(), m.sn.clone())),
        ),
        _ => {
            json.for_each_record(&mut |_, mall| {
                let text = |p: &str| mall.pointer(p).and_then(Value::as_str).map(str::to_string);
                if let (Some(merchant), Some(sn)) = (text("/seller/merchantId"), text("/mallSn")) {
                    keys.push((merchant, sn));
                }
            });
        }
    }
    let mut first = std::collections::HashMap::new();
    for (i, key) in keys.iter().enumerate() {
        if let Some(at) = first.insert(key, i) {
            return Some(Finding::new(
                &catalog::PAGING_DUPLICATE,
                format!("/data/{i}/mallSn"),
                format!(
                    "each mall once in a page (mallSn {} is mall #{} already)",
                    key.1,
                    at + 1
                ),
                format!("mallSn {} again as mall #{}", key.1, i + 1),
            ));
        }
    }
    None
}

/// Malls of a merchant other than the one in `filter.seller.merchantId`, or any mall for a
/// merchant id known not to exist (§4.1).
fn foreign_malls(body: &FuzzBody, json: &LazyJson, known: &Known) -> Vec<Finding> {
    let Some(request) = body.json() else {
        return Vec::new();
    };
    let Some(merchant) = ownership::requested_merchant(request) else {
        return unnamed_merchant_malls(request, json, known);
    };
    let unknown = known
        .unknown_merchant_ids
        .iter()
        .any(|u| ownership::same_id(u, merchant));
    // A body the fast path read answers without its tree when it has nothing to report.
    let findings = if unknown {
        if conforming::carries_no_records(json.digest()) {
            return Vec::new();
        }
        ownership::unknown_merchant(json)
    } else {
        if conforming::all_malls_of(json.digest(), merchant) {
            return Vec::new();
        }
        ownership::merchant(json, merchant)
    };
    findings
        .into_iter()
        .map(|mut f| {
            f.check = &catalog::FUZZ_OWNERSHIP;
            f
        })
        .collect()
}

/// Malls listed for a body that names no merchant (`merchantId` left out, `null`, a number, an
/// object: an ORM that drops an undefined filter member lists every merchant's malls): they
/// may only be those of the merchant whose user the body names (a service may find the
/// merchant from its user), or, when it names no known user, of one merchant at most.
fn unnamed_merchant_malls(request: &Value, json: &LazyJson, known: &Known) -> Vec<Finding> {
    if conforming::carries_no_records(json.digest()) {
        return Vec::new();
    }
    let user = request
        .pointer("/filter/seller/merchantUserId")
        .and_then(Value::as_str);
    let owner = user.and_then(|u| {
        known
            .identities
            .iter()
            .find(|i| ownership::same_id(&i.merchant_user_id, u))
    });
    if let Some(owner) = owner {
        if conforming::all_malls_of(json.digest(), &owner.merchant_id) {
            return Vec::new();
        }
        return ownership::merchant(json, &owner.merchant_id)
            .into_iter()
            .map(|mut f| {
                f.check = &catalog::FUZZ_OWNERSHIP;
                f.expected = format!(
                    "{:?}, the merchant of merchantUserId {:?} (the body names no merchantId)",
                    owner.merchant_id, owner.merchant_user_id
                );
                f
            })
            .collect();
    }
    let mut merchants: Vec<String> = json
        .get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.pointer("/seller/merchantId").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    merchants.sort();
    merchants.dedup();
    if merchants.len() < 2 {
        return Vec::new();
    }
    vec![Finding::new(
        &catalog::FUZZ_OWNERSHIP,
        "/data",
        "malls of one merchant at most (the body names no merchantId)",
        format!(
            "malls of {} merchants: {}",
            merchants.len(),
            merchants.join(", ")
        ),
    )]
}

/// Products of a known mall served to another merchant's seller or for a wrong signature
/// (§4.2: mallSn and signature identify a mall of the seller).
fn foreign_products(body: &FuzzBody, response: &Response, known: &Known) -> Vec<Finding> {
    let Some(json) = body.json() else {
        return Vec::new();
    };
    // An array of error objects is a refusal (see [`is_success`]), no products served.
    let served = is_success(Endpoint::MallProducts, response)
        && response.json.array_len().is_some_and(|n| n > 0);
    let Some(mall) = json
        .pointer("/mallID/mallSn")
        .and_then(Value::as_str)
        .and_then(|sn| known.mall(sn))
    else {
        return Vec::new();
    };
    if !served {
        return Vec::new();
    }
    let seller = json.pointer("/seller/merchantId").and_then(Value::as_str);
    let signature = json.pointer("/mallID/signature").and_then(Value::as_str);
    let n = response.json.array_len().unwrap_or(0);
    let mut out = Vec::new();
    if !seller.is_some_and(|s| ownership::same_id(s, &mall.owner)) {
        out.push(Finding::new(
            &catalog::FUZZ_OWNERSHIP,
            "",
            format!(
                "no products of mall {} (merchant {}) for seller {}",
                mall.mall_sn,
                mall.owner,
                describe(seller)
            ),
            format!("{n} product(s)"),
        ));
    } else if !signature.is_some_and(|s| ownership::same_id(s, &mall.signature)) {
        out.push(Finding::new(
            &catalog::FUZZ_OWNERSHIP,
            "",
            format!(
                "no products of mall {} for a signature other than its own",
                mall.mall_sn
            ),
            format!("{n} product(s) for signature {}", describe(signature)),
        ));
    }
    out
}

fn describe(v: Option<&str>) -> String {
    v.map_or_else(|| "(not a string)".to_string(), |s| format!("{s:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::schemas::SchemaSet;
    use crate::verdict::exchange::{Exchange, RequestRecord, ResponseRecord};
    use bytes::Bytes;
    use reqwest::header::HeaderMap;
    use serde_json::json;
    use std::time::Duration;

    fn known() -> Known {
        crate::fuzz::known::example()
    }

    fn exchange(status: Option<u16>) -> Exchange {
        Exchange {
            request: RequestRecord {
                method: "POST".into(),
                url: "u".into(),
                headers: vec![],
                body: String::new(),
            },
            response: status.map(|status| ResponseRecord {
                status,
                headers: vec![],
                body_excerpt: crate::verdict::exchange::Excerpt::text(""),
                body_len: 0,
            }),
            transport_error: None,
            duration: Duration::ZERO,
            shows_finding: false,
        }
    }

    fn ok(status: u16, json: Value) -> Sent {
        Sent {
            exchange: exchange(Some(status)),
            result: Ok(Response {
                status,
                headers: HeaderMap::new(),
                body: Bytes::new(),
                json: json.into(),
                body_is_json: true,
            }),
        }
    }

    fn err(status: Option<u16>, check: &'static Check) -> Sent {
        Sent {
            exchange: exchange(status),
            result: Err(Box::new(Finding::new(check, "", "e", "a"))),
        }
    }

    fn ids(endpoint: Endpoint, body: Value, sent: &Sent) -> Vec<&'static str> {
        let schemas = SchemaSet::embedded().unwrap();
        evaluate(
            endpoint,
            &FuzzBody::Json(body),
            sent,
            &schemas,
            &known(),
            RobustnessGate::Fail,
        )
        .iter()
        .map(|v| v.property.id)
        .collect()
    }

    #[test]
    fn transport_problems_map_to_their_property() {
        let b = json!({});
        assert_eq!(
            ids(
                Endpoint::MallList,
                b.clone(),
                &err(None, &catalog::TRANSPORT_TIMEOUT)
            ),
            ["fuzz.timely"]
        );
        assert_eq!(
            ids(
                Endpoint::MallList,
                b.clone(),
                &err(Some(502), &catalog::HTTP_SERVER_ERROR)
            ),
            ["fuzz.no-server-error"]
        );
        assert_eq!(
            ids(
                Endpoint::MallList,
                b.clone(),
                &err(None, &catalog::TRANSPORT_CONNECT)
            ),
            ["fuzz.no-server-error"]
        );
        assert_eq!(
            ids(
                Endpoint::MallList,
                b,
                &err(Some(200), &catalog::RESPONSE_JSON)
            ),
            ["fuzz.json-body"]
        );
    }

    #[test]
    fn only_requests_beyond_common_limits_are_excused_as_http_layer_rejections() {
        let html = |status| err(Some(status), &catalog::RESPONSE_JSON);
        assert_eq!(http_layer_rejection(&html(431), true), Some(431));
        assert_eq!(http_layer_rejection(&html(400), true), Some(400));
        assert_eq!(http_layer_rejection(&ok(413, json!({})), true), Some(413));
        assert_eq!(http_layer_rejection(&html(400), false), None, "small");
        assert_eq!(
            http_layer_rejection(&ok(400, json!({})), true),
            None,
            "JSON 400"
        );
        assert_eq!(http_layer_rejection(&html(500), true), None);
        assert_eq!(
            http_layer_rejection(&err(None, &catalog::TRANSPORT_CONNECT), true),
            None
        );
    }

    #[test]
    fn a_json_500_breaks_only_no_server_error() {
        let sent = ok(
            500,
            json!({"success": false, "code": "5000", "msg": "x", "data": null}),
        );
        assert_eq!(
            ids(Endpoint::MallList, json!({}), &sent),
            ["fuzz.no-server-error"]
        );
    }

    #[test]
    fn error_responses_must_carry_no_data_and_success_must_pass_the_schema() {
        let sent = ok(
            400,
            json!({"success": false, "code": "4000", "msg": "x", "data": [{"mallSn": "1"}]}),
        );
        assert_eq!(
            ids(Endpoint::MallList, json!({}), &sent),
            ["fuzz.error-no-data"]
        );
        let sent = ok(
            200,
            json!({"success": true, "code": "0000", "msg": "ok", "data": [{"mallSn": "1"}]}),
        );
        assert_eq!(
            ids(Endpoint::MallList, json!({}), &sent),
            ["fuzz.success-contract"]
        );
        let sent = ok(
            200,
            json!({"success": true, "code": "0000", "msg": "ok", "data": []}),
        );
        assert!(ids(Endpoint::MallList, json!({"cursor": {"count": 0}}), &sent).is_empty());
    }

    #[test]
    fn only_a_positive_count_bounds_the_page() {
        let schemas = SchemaSet::embedded().unwrap();
        let page = ok(
            200,
            json!({"success": true, "code": "0000", "msg": "ok", "data": [{"mallSn": "1"}, {"mallSn": "2"}]}),
        );
        let Ok(response) = &page.result else {
            unreachable!()
        };
        let page_size = |count: Value| {
            let body = FuzzBody::Json(json!({"cursor": {"count": count}}));
            contract(Endpoint::MallList, &body, response, &schemas)
                .iter()
                .filter(|f| f.check.id == catalog::PAGING_PAGE_SIZE.id)
                .count()
        };
        assert_eq!(page_size(json!(1)), 1, "two malls for count 1");
        assert_eq!(page_size(json!(2)), 0);
        assert_eq!(
            page_size(json!(0)),
            0,
            "count 0 may be served the default size"
        );
    }

    #[test]
    fn malls_of_another_merchant_break_ownership() {
        let sent = ok(
            400,
            json!({"success": false, "data": [{"mallSn": "9", "seller": {"merchantId": "m2"}}]}),
        );
        let body = json!({"filter": {"seller": {"merchantId": "m1"}}});
        assert_eq!(
            ids(Endpoint::MallList, body, &sent),
            ["fuzz.error-no-data", "fuzz.ownership"]
        );
    }

    #[test]
    fn malls_for_a_merchant_known_not_to_exist_break_ownership() {
        let sent = ok(
            200,
            json!({"success": true, "code": "0000", "msg": "ok", "data": [{"seller": {"merchantId": "m0"}}]}),
        );
        let body = json!({"filter": {"seller": {"merchantId": "m0"}}});
        assert!(ids(Endpoint::MallList, body, &sent).contains(&"fuzz.ownership"));
    }

    #[test]
    fn products_of_another_merchants_mall_break_ownership() {
        let products = ok(200, json!([]));
        let body = |seller: &str, sig: &str| json!({"seller": {"merchantId": seller}, "mallID": {"mallSn": "7", "signature": sig}});
        assert!(
            ids(Endpoint::MallProducts, body("m1", "s7"), &products).is_empty(),
            "an empty list is no leak"
        );
        let served = Sent {
            result: Ok(Response {
                status: 200,
                headers: HeaderMap::new(),
                body: Bytes::new(),
                json: json!([{"spuId": 1, "title": "a product"}]).into(),
                body_is_json: true,
            }),
            exchange: exchange(Some(200)),
        };
        let found = |b| {
            let schemas = SchemaSet::embedded().unwrap();
            evaluate(
                Endpoint::MallProducts,
                &FuzzBody::Json(b),
                &served,
                &schemas,
                &known(),
                RobustnessGate::Fail,
            )
            .into_iter()
            .filter(|v| v.property.id == "fuzz.ownership")
            .count()
        };
        assert_eq!(found(body("m1", "s7")), 1, "seller m1 does not own mall 7");
        assert_eq!(found(body("m2", "bad")), 1, "wrong signature");
        assert_eq!(
            found(body("m2", "s7")),
            0,
            "the owner with the right signature"
        );
    }
}
