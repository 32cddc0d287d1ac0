//! Tests of the schema set: loading, validation, attribution and extra fields.

use std::path::Path;

use super::attribute::{Attributions, Start};
use super::load::{is_datetime, is_decimal_text, is_digit_string};
use super::validate::describe;
use super::*;
use crate::spec::catalog::*;
use crate::verdict::event::Finding;
use crate::verdict::findings::Findings;
use serde_json::json;

fn set() -> SchemaSet {
    SchemaSet::embedded().expect("shipped schemas load")
}

/// A mall record with every field of §2.2 (incl. the 15 always-null ones), built from the
/// spec's tables.
fn mall() -> Value {
    json!({
        "mallSn": "1001234567",
        "signature": "c2lnbmF0dXJl",
        "mallName": "南京路店",
        "state": 1,
        "stateDesc": "online",
        "internalState": 1,
        "internalStateDesc": "enabled",
        "isDelete": 0,
        "deleteTime": "",
        "crossCityPaymentStatus": 0,
        "crossCityPaymentStatusDesc": "pending activation",
        "appType": 0,
        "industryCode": "retail",
        "crossCityPayments": [
            {"payToolCode": 2, "payToolCodeDesc": "Alipay-type wallet", "status": 0, "statusDesc": "pending activation"}
        ],
        "isShowBills": true,
        "templateId": "42",
        "edition": 1,
        "tags": ["bill", "onlineStore"],
        "isNeedSkipPushComplainToRisk": false,
        "seller": {
            "merchantSn": "M0001",
            "merchantId": "8f9e7c1a-0000-4000-8000-000000000001",
            "merchantName": "Merchant One",
            "storeSn": "S0001",
            "storeId": "store-1",
            "storeName": null,
            "terminalSn": "T0001",
            "crossCityTerminalSn": null
        },
        "orderStatistics": {"totalNum": 12, "totalQuantity": "3.50", "totalAmount": 125000},
        "sellerStatisticsModel": null,
        "ctime": "2024-02-29 23:59:59",
        "topTime": null,
        "riskDisableTags": null,
        "riskDisableReasons": null,
        "riskDisableParams": null,
        "supportedFeatureCodes": null,
        "customChargeItemEnabled": null,
        "productNameVoiceBroadcastEnabled": null,
        "serviceResourceNameVoiceBroadcastEnabled": null,
        "voucherRedeemEnabled": null,
        "scanGunEnabled": null,
        "supportedServiceResourceSnList": null,
        "preSetReopenTime": null,
        "mallBillSplittingEnabled": null,
        "serialConfigState": null,
        "serialConfigId": null,
        "taskId": null
    })
}

fn envelope(malls: Vec<Value>) -> Value {
    json!({"success": true, "code": "0000", "msg": "processed successfully", "data": malls})
}

fn introduction() -> String {
    json!([
        {"text": "Fresh tea", "type": "text"},
        {"type": "bigImg", "img_list": ["https://img.invalid/a.png", "https://img.invalid/b.png"]}
    ])
    .to_string()
}

fn product() -> Value {
    json!({
        "spuId": "9007199254740993",
        "converImages": [],
        "productIntroduction": introduction(),
        "title": "Tea",
        "skuResults": [
            {"skuId": "1", "skuName": null, "skuTitle": "Large", "price": 1200, "stockType": 0, "quantity": null},
            {"skuId": "2", "skuName": "small", "skuTitle": null, "price": 800, "stockType": 1, "quantity": null}
        ]
    })
}

/// Applies `edit` to a copy of `base` at the JSON Pointer `at` (`None` removes the field).
fn with(base: &Value, at: &str, edit: Option<Value>) -> Value {
    let mut value = base.clone();
    let (parent, key) = at.rsplit_once('/').expect("pointer has a parent");
    let target = value.pointer_mut(parent).expect("parent exists");
    match (target, edit) {
        (Value::Object(map), Some(v)) => {
            map.insert(key.to_string(), v);
        }
        (Value::Object(map), None) => {
            map.shift_remove(key);
        }
        (Value::Array(items), Some(v)) => items[key.parse::<usize>().expect("index")] = v,
        (Value::Array(items), None) => {
            items.remove(key.parse::<usize>().expect("index"));
        }
        _ => panic!("parent of {at} is not a container"),
    }
    value
}

fn ids(findings: &[Finding]) -> Vec<&'static str> {
    findings.iter().map(|f| f.check.id).collect()
}

#[test]
fn shipped_schemas_load_with_every_name() {
    let set = set();
    assert_eq!(set.names().len(), SCHEMA_NAMES.len());
    for name in SCHEMA_NAMES {
        assert!(set.has(name), "{name}");
        assert!(set.document(name).is_some(), "{name}");
    }
    assert!(!set.has("nope"));
}

#[test]
fn schema_set_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SchemaSet>();
}

#[test]
fn conformant_mall_list_and_products_pass() {
    let set = set();
    let list = envelope(vec![mall()]);
    assert!(
        set.validate("mall-list-response", &list).is_empty(),
        "{:#?}",
        set.validate("mall-list-response", &list)
    );
    assert!(set.extra_fields("mall-list-response", &list).is_empty());
    let products = json!([product()]);
    assert!(
        set.validate("products-response", &products).is_empty(),
        "{:#?}",
        set.validate("products-response", &products)
    );
    assert!(set.extra_fields("products-response", &products).is_empty());
    assert!(set.validate("product", &product()).is_empty());
}

#[test]
fn each_broken_mall_rule_is_attributed_to_its_check() {
    let set = set();
    let m = mall();
    let stats = json!({"orderFailNum": 3});
    let rows: Vec<(&str, Value, &str, &Check)> = vec![
        (
            "state out of range",
            with(&m, "/state", Some(json!(3))),
            "/data/0/state",
            &MALL_STATE,
        ),
        (
            "state as string",
            with(&m, "/state", Some(json!("1"))),
            "/data/0/state",
            &MALL_STATE,
        ),
        (
            "internalState 2",
            with(&m, "/internalState", Some(json!(2))),
            "/data/0/internalState",
            &MALL_INTERNAL_STATE,
        ),
        (
            "isDelete 2",
            with(&m, "/isDelete", Some(json!(2))),
            "/data/0/isDelete",
            &MALL_IS_DELETE,
        ),
        (
            "deleteTime set while not deleted",
            with(&m, "/deleteTime", Some(json!("2024-01-01 00:00:00"))),
            "/data/0/deleteTime",
            &MALL_DELETE_TIME,
        ),
        (
            "mallSn with letters",
            with(&m, "/mallSn", Some(json!("10a1"))),
            "/data/0/mallSn",
            &MALL_DIGIT_STRINGS,
        ),
        (
            "mallSn empty",
            with(&m, "/mallSn", Some(json!(""))),
            "/data/0/mallSn",
            &MALL_DIGIT_STRINGS,
        ),
        (
            "mallSn as number",
            with(&m, "/mallSn", Some(json!(1001))),
            "/data/0/mallSn",
            &MALL_DIGIT_STRINGS,
        ),
        (
            "templateId with space",
            with(&m, "/templateId", Some(json!("4 2"))),
            "/data/0/templateId",
            &MALL_DIGIT_STRINGS,
        ),
        (
            "ctime impossible date",
            with(&m, "/ctime", Some(json!("2024-13-32 25:61:61"))),
            "/data/0/ctime",
            &MALL_DATETIME,
        ),
        (
            "ctime ISO form",
            with(&m, "/ctime", Some(json!("2024-01-01T10:00:00Z"))),
            "/data/0/ctime",
            &MALL_DATETIME,
        ),
        (
            "ctime not a leap day",
            with(&m, "/ctime", Some(json!("2023-02-29 10:00:00"))),
            "/data/0/ctime",
            &MALL_DATETIME,
        ),
        (
            "topTime with zone",
            with(&m, "/topTime", Some(json!("2024-01-01 10:00:00+08:00"))),
            "/data/0/topTime",
            &MALL_DATETIME,
        ),
        (
            "always-null field missing",
            with(&m, "/taskId", None),
            "/data/0",
            &MALL_ALWAYS_NULL_FIELDS,
        ),
        (
            "tags not an array",
            with(&m, "/tags", Some(json!("bill"))),
            "/data/0/tags",
            &MALL_TAGS,
        ),
        (
            "tag not a string",
            with(&m, "/tags", Some(json!(["bill", 7]))),
            "/data/0/tags/1",
            &MALL_TAGS,
        ),
        (
            "cross-city status boolean",
            with(&m, "/crossCityPayments/0/status", Some(json!(false))),
            "/data/0/crossCityPayments/0/status",
            &MALL_CROSS_CITY,
        ),
        (
            "cross-city payToolCode missing",
            with(&m, "/crossCityPayments/0/payToolCode", None),
            "/data/0/crossCityPayments/0",
            &MALL_CROSS_CITY,
        ),
        (
            "crossCityPayments an object",
            with(&m, "/crossCityPayments", Some(json!({}))),
            "/data/0/crossCityPayments",
            &MALL_CROSS_CITY,
        ),
        (
            "seller storeSn null",
            with(&m, "/seller/storeSn", Some(Value::Null)),
            "/data/0/seller/storeSn",
            &MALL_SELLER,
        ),
        (
            "seller missing terminalSn",
            with(&m, "/seller/terminalSn", None),
            "/data/0/seller",
            &MALL_SELLER,
        ),
        (
            "seller null",
            with(&m, "/seller", Some(Value::Null)),
            "/data/0/seller",
            &MALL_SELLER,
        ),
        (
            "totalNum as string",
            with(&m, "/orderStatistics/totalNum", Some(json!("12"))),
            "/data/0/orderStatistics/totalNum",
            &MALL_ORDER_STATISTICS,
        ),
        (
            "totalNum fraction",
            with(&m, "/orderStatistics/totalNum", Some(json!(1.5))),
            "/data/0/orderStatistics/totalNum",
            &MALL_ORDER_STATISTICS,
        ),
        (
            "totalAmount above i64",
            with(
                &m,
                "/orderStatistics/totalAmount",
                Some(json!(9223372036854775808u64)),
            ),
            "/data/0/orderStatistics/totalAmount",
            &MALL_ORDER_STATISTICS,
        ),
        (
            "totalQuantity not decimal",
            with(&m, "/orderStatistics/totalQuantity", Some(json!("3,50"))),
            "/data/0/orderStatistics/totalQuantity",
            &MALL_ORDER_STATISTICS,
        ),
        (
            "totalQuantity as number",
            with(&m, "/orderStatistics/totalQuantity", Some(json!(3.5))),
            "/data/0/orderStatistics/totalQuantity",
            &MALL_ORDER_STATISTICS,
        ),
        (
            "sellerStatisticsModel a string",
            with(&m, "/sellerStatisticsModel", Some(json!("x"))),
            "/data/0/sellerStatisticsModel",
            &MALL_SELLER_STATISTICS,
        ),
        (
            "orderFailNum missing",
            with(&m, "/sellerStatisticsModel", Some(json!({}))),
            "/data/0/sellerStatisticsModel",
            &MALL_SELLER_STATISTICS,
        ),
        (
            "orderFailNum as string",
            with(
                &with(&m, "/sellerStatisticsModel", Some(stats)),
                "/sellerStatisticsModel/orderFailNum",
                Some(json!("3")),
            ),
            "/data/0/sellerStatisticsModel/orderFailNum",
            &MALL_SELLER_STATISTICS,
        ),
        (
            "mallName missing",
            with(&m, "/mallName", None),
            "/data/0",
            &MALL_FIELDS,
        ),
        (
            "appType as string",
            with(&m, "/appType", Some(json!("0"))),
            "/data/0/appType",
            &MALL_FIELDS,
        ),
        (
            "isShowBills as number",
            with(&m, "/isShowBills", Some(json!(1))),
            "/data/0/isShowBills",
            &MALL_FIELDS,
        ),
        ("mall is not an object", json!(7), "/data/0", &MALL_FIELDS),
    ];
    for (why, broken, pointer, check) in rows {
        let findings = set.validate("mall-list-response", &envelope(vec![broken]));
        assert_eq!(findings.len(), 1, "{why}: {findings:#?}");
        assert_eq!(findings[0].check.id, check.id, "{why}: {findings:#?}");
        assert_eq!(findings[0].pointer, pointer, "{why}");
    }
}

#[test]
fn each_broken_envelope_rule_is_attributed_to_its_check() {
    let set = set();
    let ok = envelope(vec![mall()]);
    let rows: Vec<(&str, Value, &Check)> = vec![
        ("not an object", json!([]), &LIST_ENVELOPE),
        ("msg missing", with(&ok, "/msg", None), &LIST_ENVELOPE),
        (
            "success as string",
            json!({"success": "false", "code": "E1", "msg": "x"}),
            &LIST_ENVELOPE,
        ),
        (
            "msg as number",
            with(&ok, "/msg", Some(json!(0))),
            &LIST_ENVELOPE,
        ),
        (
            "success with another code",
            with(&ok, "/code", Some(json!("0001"))),
            &LIST_SUCCESS_CODE,
        ),
        (
            "success without data",
            with(&ok, "/data", None),
            &LIST_SUCCESS_CODE,
        ),
        (
            "success with null data",
            with(&ok, "/data", Some(Value::Null)),
            &LIST_SUCCESS_CODE,
        ),
        (
            "code 0000 with success false",
            json!({"success": false, "code": "0000", "msg": "x"}),
            &LIST_SUCCESS_CODE,
        ),
        (
            "failure with records",
            json!({"success": false, "code": "E1", "msg": "x", "data": [mall()]}),
            &LIST_FAILURE_NO_DATA,
        ),
    ];
    for (why, broken, check) in rows {
        let findings = set.validate("mall-list-response", &broken);
        assert_eq!(ids(&findings), vec![check.id], "{why}: {findings:#?}");
    }
}

#[test]
fn failure_envelopes_without_records_pass() {
    let set = set();
    for data in [None, Some(Value::Null), Some(json!([]))] {
        let mut body = json!({"success": false, "code": "E401", "msg": "unauthorized"});
        if let Some(d) = data {
            body["data"] = d;
        }
        assert!(
            set.validate("mall-list-response", &body).is_empty(),
            "{body}"
        );
    }
}

#[test]
fn each_broken_product_rule_is_attributed_to_its_check() {
    let set = set();
    let p = product();
    let rows: Vec<(&str, Value, &str, &Check)> = vec![
        ("not an array", json!({"data": []}), "", &PRODUCTS_SHAPE),
        (
            "spuId with letters",
            json!([with(&p, "/spuId", Some(json!("12x")))]),
            "/0/spuId",
            &PRODUCT_DIGIT_STRINGS,
        ),
        (
            "skuId empty",
            json!([with(&p, "/skuResults/0/skuId", Some(json!("")))]),
            "/0/skuResults/0/skuId",
            &PRODUCT_DIGIT_STRINGS,
        ),
        (
            "title missing",
            json!([with(&p, "/title", None)]),
            "/0",
            &PRODUCT_FIELDS,
        ),
        (
            "converImages null",
            json!([with(&p, "/converImages", Some(Value::Null))]),
            "/0/converImages",
            &PRODUCT_FIELDS,
        ),
        (
            "skuResults missing",
            json!([with(&p, "/skuResults", None)]),
            "/0",
            &PRODUCT_FIELDS,
        ),
        ("product not an object", json!(["x"]), "/0", &PRODUCT_FIELDS),
        (
            "productIntroduction an array",
            json!([with(&p, "/productIntroduction", Some(json!([])))]),
            "/0/productIntroduction",
            &PRODUCT_INTRODUCTION,
        ),
        (
            "productIntroduction not JSON",
            json!([with(&p, "/productIntroduction", Some(json!("<p>hi</p>")))]),
            "/0/productIntroduction",
            &PRODUCT_INTRODUCTION,
        ),
        (
            "productIntroduction not an array",
            json!([with(&p, "/productIntroduction", Some(json!("{}")))]),
            "/0/productIntroduction",
            &PRODUCT_INTRODUCTION,
        ),
        (
            "unknown block type",
            json!([with(
                &p,
                "/productIntroduction",
                Some(json!(r#"[{"type":"video"}]"#))
            )]),
            "/0/productIntroduction",
            &PRODUCT_INTRODUCTION,
        ),
        (
            "text block without text",
            json!([with(
                &p,
                "/productIntroduction",
                Some(json!(r#"[{"type":"text"}]"#))
            )]),
            "/0/productIntroduction",
            &PRODUCT_INTRODUCTION,
        ),
        (
            "bigImg block without img_list",
            json!([with(
                &p,
                "/productIntroduction",
                Some(json!(r#"[{"type":"bigImg"}]"#))
            )]),
            "/0/productIntroduction",
            &PRODUCT_INTRODUCTION,
        ),
        (
            "img_list with a number",
            json!([with(
                &p,
                "/productIntroduction",
                Some(json!(r#"[{"type":"bigImg","img_list":[1]}]"#))
            )]),
            "/0/productIntroduction",
            &PRODUCT_INTRODUCTION,
        ),
        (
            "block without type",
            json!([with(
                &p,
                "/productIntroduction",
                Some(json!(r#"[{"text":"x"}]"#))
            )]),
            "/0/productIntroduction",
            &PRODUCT_INTRODUCTION,
        ),
        (
            "price as string",
            json!([with(&p, "/skuResults/0/price", Some(json!("12")))]),
            "/0/skuResults/0/price",
            &SKU_FIELDS,
        ),
        (
            "stockType missing",
            json!([with(&p, "/skuResults/0/stockType", None)]),
            "/0/skuResults/0",
            &SKU_FIELDS,
        ),
        (
            "quantity missing",
            json!([with(&p, "/skuResults/0/quantity", None)]),
            "/0/skuResults/0",
            &SKU_FIELDS,
        ),
        (
            "skuName a number",
            json!([with(&p, "/skuResults/0/skuName", Some(json!(1)))]),
            "/0/skuResults/0/skuName",
            &SKU_FIELDS,
        ),
    ];
    for (why, broken, pointer, check) in rows {
        let findings = set.validate("products-response", &broken);
        assert_eq!(findings.len(), 1, "{why}: {findings:#?}");
        assert_eq!(findings[0].check.id, check.id, "{why}: {findings:#?}");
        assert_eq!(findings[0].pointer, pointer, "{why}");
    }
}

#[test]
fn inner_introduction_findings_name_the_inner_pointer() {
    let set = set();
    let broken = with(
        &product(),
        "/productIntroduction",
        Some(json!(r#"[{"type":"text","text":"a"},{"type":"video"}]"#)),
    );
    let findings = set.validate("product", &broken);
    assert_eq!(ids(&findings), vec![PRODUCT_INTRODUCTION.id]);
    assert_eq!(findings[0].pointer, "/productIntroduction");
    assert!(
        findings[0].expected.contains("/1/type"),
        "{}",
        findings[0].expected
    );
    assert!(
        findings[0].detail.contains("/1/type"),
        "{}",
        findings[0].detail
    );
}

#[test]
fn tolerated_variations_give_no_contract_finding() {
    let set = set();
    let m = mall();
    let rows: Vec<(&str, Value)> = vec![
        (
            "unknown tag",
            with(&m, "/tags", Some(json!(["bill", "brandNew"]))),
        ),
        ("no tags", with(&m, "/tags", Some(json!([])))),
        (
            "status as string",
            with(&m, "/crossCityPayments/0/status", Some(json!("0"))),
        ),
        (
            "status 7",
            with(&m, "/crossCityPayments/0/status", Some(json!(7))),
        ),
        (
            "crossCityPaymentStatus 5",
            with(&m, "/crossCityPaymentStatus", Some(json!(5))),
        ),
        (
            "payToolCode 9",
            with(&m, "/crossCityPayments/0/payToolCode", Some(json!(9))),
        ),
        (
            "payToolCode 3",
            with(&m, "/crossCityPayments/0/payToolCode", Some(json!(3))),
        ),
        ("appType 1", with(&m, "/appType", Some(json!(1)))),
        (
            "always-null field with a value",
            with(&m, "/taskId", Some(json!({"id": 5}))),
        ),
        (
            "always-null field with a list",
            with(&m, "/riskDisableTags", Some(json!(["a"]))),
        ),
        (
            "totalNum above 2^53",
            with(
                &m,
                "/orderStatistics/totalNum",
                Some(json!(9007199254740993u64)),
            ),
        ),
        (
            "totalAmount i64 max",
            with(&m, "/orderStatistics/totalAmount", Some(json!(i64::MAX))),
        ),
        (
            "negative decimal quantity",
            with(&m, "/orderStatistics/totalQuantity", Some(json!("-12"))),
        ),
        (
            "seller statistics set",
            with(
                &m,
                "/sellerStatisticsModel",
                Some(json!({"orderFailNum": 0})),
            ),
        ),
        (
            "pinned",
            with(&m, "/topTime", Some(json!("2024-05-01 08:00:00"))),
        ),
        (
            "store names set",
            with(
                &with(&m, "/seller/storeName", Some(json!("店"))),
                "/seller/crossCityTerminalSn",
                Some(json!("CT1")),
            ),
        ),
        (
            "deleted with a time",
            with(
                &with(&m, "/isDelete", Some(json!(1))),
                "/deleteTime",
                Some(json!("2024-01-01 00:00:00")),
            ),
        ),
        (
            "deleted without a time",
            with(&m, "/isDelete", Some(json!(1))),
        ),
        (
            "state 0 offline 2",
            with(
                &with(&m, "/state", Some(json!(0))),
                "/internalState",
                Some(json!(0)),
            ),
        ),
        (
            "no cross-city payments",
            with(&m, "/crossCityPayments", Some(json!([]))),
        ),
    ];
    for (why, variant) in rows {
        let body = envelope(vec![variant]);
        let findings = set.validate("mall-list-response", &body);
        assert!(findings.is_empty(), "{why}: {findings:#?}");
        let extra = set.extra_fields("mall-list-response", &body);
        assert!(extra.is_empty(), "{why}: {extra:#?}");
    }
}

#[test]
fn extra_fields_are_only_info_findings() {
    let set = set();
    let m = with(&mall(), "/newField", Some(json!(1)));
    let m = with(&m, "/seller/region", Some(json!("east")));
    let m = with(&m, "/crossCityPayments/0/limit", Some(json!(5)));
    let mut body = envelope(vec![m]);
    body["traceId"] = json!("abc");
    assert!(set.validate("mall-list-response", &body).is_empty());
    let extra = set.extra_fields("mall-list-response", &body);
    let pointers: Vec<&str> = extra.iter().map(|f| f.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        vec![
            "/data/0/crossCityPayments/0/limit",
            "/data/0/seller/region",
            "/data/0/newField",
            "/traceId"
        ]
    );
    assert!(extra.iter().all(|f| f.check.id == EXTRA_FIELDS.id));
}

#[test]
fn extra_fields_inside_open_values_and_blocks() {
    let set = set();
    let p = with(&product(), "/skuResults/0/quantity", Some(json!({"n": 1})));
    let p = with(&p, "/converImages", Some(json!([{"url": "x"}])));
    let p = with(
        &p,
        "/productIntroduction",
        Some(json!(r#"[{"type":"text","text":"a","style":"b"}]"#)),
    );
    let body = json!([p]);
    assert!(set.validate("products-response", &body).is_empty());
    let extra = set.extra_fields("products-response", &body);
    assert_eq!(extra.len(), 1, "{extra:#?}");
    assert_eq!(extra[0].pointer, "/0/productIntroduction");
    assert!(extra[0].detail.contains("/0/style"), "{}", extra[0].detail);
}

#[test]
fn expected_and_actual_phrases_read_well() {
    let set = set();
    let m = with(&with(&mall(), "/state", Some(json!(9))), "/ctime", None);
    let m = with(&m, "/topTime", Some(json!("2024-13-32 25:61:61")));
    let findings = set.validate("mall", &m);
    let phrases: Vec<(&str, &str)> = findings
        .iter()
        .map(|f| (f.expected.as_str(), f.actual.as_str()))
        .collect();
    assert!(phrases.contains(&("one of [0, 1, 2]", "9")), "{phrases:?}");
    assert!(
        phrases.contains(&("required field `ctime`", "missing")),
        "{phrases:?}"
    );
    assert!(
        phrases.contains(&(
            "format datetime YYYY-MM-DD HH:MM:SS",
            "\"2024-13-32 25:61:61\""
        )),
        "{phrases:?}"
    );
    let typed = set.validate("sku", &json!({"skuId": "1", "skuName": 1, "skuTitle": null, "price": 1, "stockType": 1, "quantity": null}));
    assert_eq!(typed[0].expected, "type string or null");
}

#[test]
fn long_ranges_are_exact_on_both_sides() {
    let set = set();
    // The literal text matters: read as a float, these round to -2^63.
    let at = |field: &str, literal: &str| -> Value {
        let mut m = mall();
        m["sellerStatisticsModel"] = json!({"orderFailNum": 0});
        let text = envelope(vec![m]).to_string();
        let needle = match field {
            "orderFailNum" => "\"orderFailNum\":0",
            "totalNum" => "\"totalNum\":",
            _ => "\"totalAmount\":",
        };
        let start = text.find(needle).expect("field in the text") + needle.len()
            - usize::from(field == "orderFailNum");
        let end = start + text[start..].find([',', '}']).expect("the number ends");
        serde_json::from_str(&format!("{}{literal}{}", &text[..start], &text[end..]))
            .expect("valid JSON")
    };
    for (field, check) in [
        ("totalNum", &MALL_ORDER_STATISTICS),
        ("totalAmount", &MALL_ORDER_STATISTICS),
        ("orderFailNum", &MALL_SELLER_STATISTICS),
    ] {
        for below in [
            "-9223372036854775809",
            "-9223372036854776832",
            "-9223372036854776833",
        ] {
            let f = set.validate("mall-list-response", &at(field, below));
            assert_eq!(f.len(), 1, "{field} = {below}: {f:?}");
            assert_eq!(f[0].check.id, check.id, "{field} = {below}");
            assert!(f[0].pointer.ends_with(field), "{}", f[0].pointer);
        }
        for above in ["9223372036854775808", "18446744073709551616"] {
            let f = set.validate("mall-list-response", &at(field, above));
            assert_eq!(f.len(), 1, "{field} = {above}: {f:?}");
        }
        for inside in ["-9223372036854775808", "9223372036854775807", "0"] {
            let f = set.validate("mall-list-response", &at(field, inside));
            assert!(f.is_empty(), "{field} = {inside}: {f:?}");
        }
    }
}

#[test]
fn findings_are_capped_with_a_note() {
    let set = set();
    let broken = with(&mall(), "/state", Some(json!(9)));
    let body = envelope(vec![broken; MAX_FINDINGS + 5]);
    let findings = set.validate("mall-list-response", &body);
    assert_eq!(findings.len(), MAX_FINDINGS + 1);
    assert_eq!(findings[MAX_FINDINGS].actual, "5 more not shown");
}

/// Every violation as (check, pointer, expected, actual), from one call over the whole
/// instance: what validation gave before records were validated one at a time.
fn whole(set: &SchemaSet, name: &str, instance: &Value) -> Vec<(String, String, String)> {
    let schema = &set.schemas[name];
    let start = Start {
        uri: &schema.uri,
        node: &schema.document,
        check: check_of(&schema.document).unwrap_or(&EXTRA_FIELDS),
    };
    let mut out: Vec<(String, String, String)> = set
        .compiled(schema)
        .validator
        .iter_errors(instance)
        .map(|e| {
            let (expected, actual) = describe(&e);
            let f = Finding::new(
                set.attribute(start, &e),
                e.instance_path().as_str(),
                expected,
                actual,
            );
            (
                f.check.id.to_string(),
                f.pointer,
                format!("{} / {}", f.expected, f.actual),
            )
        })
        .collect();
    out.sort();
    out
}

fn split(set: &SchemaSet, name: &str, instance: &Value) -> Vec<(String, String, String)> {
    let mut found = Findings::new(usize::MAX);
    let mut attributions = Attributions::default();
    set.validate_root(name, instance, &mut attributions, &mut found);
    let mut out: Vec<(String, String, String)> = found
        .kept()
        .iter()
        .map(|f| {
            (
                f.check.id.to_string(),
                f.pointer.clone(),
                format!("{} / {}", f.expected, f.actual),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn record_by_record_validation_finds_what_one_call_finds() {
    let set = set();
    for name in ["mall-list-response", "mall", "products-response", "product"] {
        let schema = &set.schemas[name];
        assert!(set.compiled(schema).split.is_some(), "{name} is split");
    }
    let m = mall();
    let broken_malls = vec![
        m.clone(),
        json!({}),
        json!(7),
        with(&m, "/state", Some(json!(9))),
        with(&m, "/tags", Some(json!([1, "bill", null]))),
        with(&m, "/crossCityPayments/0/payToolCode", None),
        with(&m, "/crossCityPayments", Some(json!([{}, 3]))),
        with(&m, "/seller/merchantId", Some(json!(5))),
        with(&m, "/templateId", Some(json!("x1"))),
        with(
            &with(&m, "/isDelete", Some(json!(1))),
            "/deleteTime",
            Some(json!("")),
        ),
        json!({}),
    ];
    let p = product();
    let broken_products = vec![
        p.clone(),
        json!({}),
        with(&p, "/spuId", Some(json!("abc"))),
        with(&p, "/skuResults/0/price", Some(json!("1"))),
        with(&p, "/skuResults", Some(json!([{}, 2]))),
        with(&p, "/converImages", Some(json!([1]))),
    ];
    let bodies: Vec<(&str, Value)> = vec![
        ("mall-list-response", envelope(broken_malls.clone())),
        (
            "mall-list-response",
            json!({"success": false, "data": broken_malls}),
        ),
        (
            "mall-list-response",
            json!({"success": true, "code": "1", "data": {}}),
        ),
        ("mall", with(&m, "/tags", Some(json!([1, 2])))),
        ("products-response", json!(broken_products)),
        ("products-response", json!({"data": []})),
        ("product", with(&p, "/skuResults", Some(json!([{}, 2])))),
    ];
    for (name, body) in bodies {
        let expected = whole(&set, name, &body);
        assert!(!expected.is_empty(), "{name}: {body}");
        assert_eq!(split(&set, name, &body), expected, "{name}: {body}");
    }
}

#[test]
fn many_broken_records_are_counted_and_only_the_first_kept() {
    let set = set();
    let mut distinct: Vec<Value> = (0..300)
        .map(|i| json!({"mallSn": i.to_string(), "state": 9}))
        .collect();
    distinct.extend(std::iter::repeat_n(json!({}), 200_000));
    let body = envelope(distinct);
    let mut found = Findings::new(50);
    set.validate_into("mall-list-response", &body, &mut found);
    let mut per_check: BTreeMap<&str, usize> = BTreeMap::new();
    for f in found.kept() {
        *per_check.entry(f.check.id).or_default() += 1;
    }
    assert!(per_check.values().all(|&n| n <= 50), "{per_check:?}");
    let total = |id: &str| {
        per_check.get(id).copied().unwrap_or(0)
            + found
                .omitted()
                .iter()
                .find(|o| o.check.id == id)
                .map_or(0, |o| o.count)
    };
    // Each record misses 24 (22 with mallSn and state) §2.2 fields and the 15 always-null
    // ones.
    assert_eq!(total(MALL_FIELDS.id), 300 * 22 + 200_000 * 24);
    assert_eq!(total(MALL_ALWAYS_NULL_FIELDS.id), 200_300 * 15);
    assert_eq!(total(MALL_STATE.id), 300);
    assert!(found.kept()[0].pointer.starts_with("/data/0/"));
}

#[test]
fn unknown_schema_name_yields_nothing() {
    let set = set();
    assert!(set.validate("nope", &json!(1)).is_empty());
    assert!(set.extra_fields("nope", &json!({"a": 1})).is_empty());
}

#[test]
fn datetime_format_accepts_only_real_calendar_seconds() {
    let rows = [
        ("2024-02-29 23:59:59", true),
        ("2024-01-01 00:00:00", true),
        ("2023-02-29 00:00:00", false),
        ("2024-13-32 25:61:61", false),
        ("2024-01-01T00:00:00", false),
        ("2024-01-01 00:00:00Z", false),
        ("2024-01-01 00:00:60", false),
        ("2024-1-01 00:00:00", false),
        ("+024-01-01 00:00:00", false),
        ("２０２４-01-01 00:00", false),
        ("", false),
    ];
    for (text, ok) in rows {
        assert_eq!(is_datetime(text), ok, "{text}");
    }
}

#[test]
fn decimal_and_digit_formats() {
    for (text, ok) in [
        ("12", true),
        ("3.50", true),
        ("-1.5", true),
        ("", false),
        ("1.", false),
        (".5", false),
        ("1e3", false),
        ("--1", false),
        ("+1", false),
    ] {
        assert_eq!(is_decimal_text(text), ok, "{text}");
    }
    for (text, ok) in [
        ("0", true),
        ("007", true),
        ("", false),
        ("1 2", false),
        ("١٢", false),
        ("-1", false),
    ] {
        assert_eq!(is_digit_string(text), ok, "{text}");
    }
}

fn write_set(dir: &Path, edit: impl Fn(&str, &mut Value)) {
    for (name, text) in EMBEDDED {
        let mut doc: Value = serde_json::from_str(text).expect("embedded JSON");
        edit(name, &mut doc);
        std::fs::write(dir.join(format!("{name}.json")), doc.to_string())
            .expect("write temp schema");
    }
}

#[test]
fn load_dir_reads_a_user_copy() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_set(dir.path(), |name, doc| {
        if name == "mall" {
            doc["properties"]["state"]["enum"] = json!([0, 1, 2, 3]);
        }
    });
    let set = SchemaSet::load_dir(dir.path()).expect("user schemas load");
    let body = envelope(vec![with(&mall(), "/state", Some(json!(3)))]);
    assert!(set.validate("mall-list-response", &body).is_empty());
}

/// A user's copy with a keyword spelt wrong (at the top, deep inside, or one of mallcheck's
/// own) or emptied of its rules would check less in silence: it is refused, naming the key,
/// its line and the keyword meant (ajv's strict mode). Every shipped schema, loaded as a
/// user's copy, passes (`load_dir_reads_a_user_copy`).
#[test]
fn a_users_schema_with_an_unknown_keyword_or_no_rule_is_refused() {
    type Edit = Box<dyn Fn(&str, &mut Value)>;
    let rows: Vec<(&str, Edit, &str)> = vec![
        (
            "required",
            Box::new(|n, d| {
                if n == "sku" {
                    let o = d.as_object_mut().expect("object");
                    let required = o.shift_remove("required").expect("sku requires");
                    o.insert("requried".into(), required);
                }
            }),
            "`requried` at \"\" (line 1, column",
        ),
        (
            "maxLength",
            Box::new(|n, d| {
                if n == "mall" {
                    d["properties"]["mallName"] = json!({"type": "string", "maxLenght": 3});
                }
            }),
            "`maxLenght` at \"/properties/mallName\"",
        ),
        (
            "x-exact-long",
            Box::new(|n, d| {
                if n == "mall" {
                    d["properties"]["templateId"] = json!({"x-exact-lng": true});
                }
            }),
            "`x-exact-lng`",
        ),
        // A format spelt wrong in common.json, named at its file and line (the validator
        // named mall.json, which reaches it through a `$ref`, and no line).
        (
            "digit-string",
            Box::new(|n, d| {
                if n == "common" {
                    d["$defs"]["digit-string"]["format"] = json!("digit_string");
                }
            }),
            "`\"format\": \"digit_string\"` at \"/$defs/digit-string\" (line 1, column",
        ),
    ];
    for (meant, edit, says) in rows {
        let dir = tempfile::tempdir().expect("temp dir");
        write_set(dir.path(), edit);
        let err = SchemaSet::load_dir(dir.path()).expect_err(meant);
        let message = err.kind.to_string();
        if meant == "digit-string" {
            assert!(err.file.ends_with("common.json"), "{}", err.file.display());
        }
        assert!(message.contains(says), "{meant}: {message}");
        assert!(
            message.contains(&format!("did you mean `{meant}`?")),
            "{meant}: {message}"
        );
    }
    // A format of 2020-12 the validator does not check is refused the same way (h29 F10).
    let dir = tempfile::tempdir().expect("temp dir");
    write_set(dir.path(), |n, d| {
        if n == "seller" {
            d["properties"]["merchantSn"]["format"] = json!("idn-email");
        }
    });
    let err = SchemaSet::load_dir(dir.path()).expect_err("idn-email");
    assert!(err.file.ends_with("seller.json"), "{}", err.file.display());
    assert!(
        err.kind
            .to_string()
            .contains("`\"format\": \"idn-email\"` at \"/properties/merchantSn\""),
        "{}",
        err.kind
    );
    let dir = tempfile::tempdir().expect("temp dir");
    write_set(dir.path(), |n, d| {
        if n == "mall" {
            *d = json!({});
        }
    });
    let err = SchemaSet::load_dir(dir.path()).expect_err("no rule");
    assert!(err.file.ends_with("mall.json"), "{}", err.file.display());
    assert!(
        err.kind
            .to_string()
            .contains("mall.fields would pass any answer"),
        "{}",
        err.kind
    );
    // A file that has no rule when shipped (definitions only) may stay so.
    let dir = tempfile::tempdir().expect("temp dir");
    write_set(dir.path(), |n, d| {
        if n == "common" {
            d["description"] = json!("edited");
        }
    });
    SchemaSet::load_dir(dir.path()).expect("definitions only");
}

#[test]
fn load_dir_errors_name_the_file_and_the_problem() {
    type Edit = fn(&str, &mut Value);
    let rows: Vec<(&str, Edit, &str)> = vec![
        (
            "unknown x-check",
            |n, d| {
                if n == "seller" {
                    d["x-check"] = json!("mall.nope")
                }
            },
            "seller.json",
        ),
        (
            "bad meta-schema",
            |n, d| {
                if n == "sku" {
                    d["type"] = json!("integr")
                }
            },
            "sku.json",
        ),
        (
            "unresolvable ref",
            |n, d| {
                if n == "product" {
                    d["properties"]["title"] = json!({"$ref": "missing.json"})
                }
            },
            "product.json",
        ),
        (
            "network ref",
            |n, d| {
                if n == "product" {
                    d["properties"]["title"] = json!({"$ref": "https://example.com/x.json"})
                }
            },
            "product.json",
        ),
        (
            "unknown format",
            |n, d| {
                if n == "sku" {
                    d["properties"]["price"] = json!({"format": "datetme"})
                }
            },
            "sku.json",
        ),
        (
            "rules without x-check",
            |n, d| {
                if n == "sku" {
                    d.as_object_mut().expect("object").shift_remove("x-check");
                }
            },
            "sku.json",
        ),
        (
            "other draft",
            |n, d| {
                if n == "mall" {
                    d["$schema"] = json!("http://json-schema.org/draft-07/schema#")
                }
            },
            "mall.json",
        ),
    ];
    for (why, edit, file) in rows {
        let dir = tempfile::tempdir().expect("temp dir");
        write_set(dir.path(), edit);
        let err = SchemaSet::load_dir(dir.path()).expect_err(why);
        let message = format!("{err}: {}", err.kind);
        assert!(
            err.file.ends_with(file) || err.file == dir.path(),
            "{why}: {message} ({})",
            err.file.display()
        );
        assert!(
            message.starts_with("cannot load schema"),
            "{why}: {message}"
        );
        assert!(!message.ends_with('.'), "{why}: {message}");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let err = SchemaSet::load_dir(dir.path()).expect_err("empty dir");
    assert!(matches!(err.kind, SchemaErrorKind::Missing), "{err:?}");
    std::fs::write(dir.path().join("common.json"), "{").expect("write");
    let err = SchemaSet::load_dir(dir.path()).expect_err("broken JSON");
    assert!(matches!(err.kind, SchemaErrorKind::Json(_)), "{err:?}");
}

#[test]
fn integer_fields_written_as_floats_are_findings_naming_the_field() {
    let set = set();
    let mut m = mall();
    m["sellerStatisticsModel"] = json!({"orderFailNum": 0});
    let list = envelope(vec![m]).to_string();
    let products = Value::Array(vec![product()]).to_string();
    // (schema, text, field as written, literal, check, pointer)
    let cases = [
        (
            "mall-list-response",
            &list,
            "\"state\":1",
            "1.0",
            &MALL_STATE,
            "/data/0/state",
        ),
        (
            "mall-list-response",
            &list,
            "\"internalState\":1",
            "1e0",
            &MALL_INTERNAL_STATE,
            "/data/0/internalState",
        ),
        (
            "mall-list-response",
            &list,
            "\"isDelete\":0",
            "0.0",
            &MALL_IS_DELETE,
            "/data/0/isDelete",
        ),
        (
            "mall-list-response",
            &list,
            "\"appType\":0",
            "0.0",
            &MALL_FIELDS,
            "/data/0/appType",
        ),
        (
            "mall-list-response",
            &list,
            "\"edition\":1",
            "1.0",
            &MALL_FIELDS,
            "/data/0/edition",
        ),
        (
            "mall-list-response",
            &list,
            "\"payToolCode\":2",
            "2.0",
            &MALL_CROSS_CITY,
            "/data/0/crossCityPayments/0/payToolCode",
        ),
        (
            "mall-list-response",
            &list,
            "\"totalNum\":12",
            "105112.0",
            &MALL_ORDER_STATISTICS,
            "/data/0/orderStatistics/totalNum",
        ),
        (
            "mall-list-response",
            &list,
            "\"totalAmount\":125000",
            "1e5",
            &MALL_ORDER_STATISTICS,
            "/data/0/orderStatistics/totalAmount",
        ),
        (
            "mall-list-response",
            &list,
            "\"orderFailNum\":0",
            "0E+2",
            &MALL_SELLER_STATISTICS,
            "/data/0/sellerStatisticsModel/orderFailNum",
        ),
        (
            "products-response",
            &products,
            "\"price\":1200",
            "3800.0",
            &SKU_FIELDS,
            "/0/skuResults/0/price",
        ),
        (
            "products-response",
            &products,
            "\"stockType\":0",
            "0.0",
            &SKU_FIELDS,
            "/0/skuResults/0/stockType",
        ),
    ];
    for (schema, text, field, literal, check, pointer) in cases {
        assert_eq!(text.matches(field).count(), 1, "{field}");
        let name = field.split(':').next().unwrap_or_default();
        let broken = text.replace(field, &format!("{name}:{literal}"));
        let value: Value = serde_json::from_str(&broken).expect("valid JSON");
        let f = set.validate(schema, &value);
        assert_eq!(f.len(), 1, "{field} as {literal}: {f:?}");
        assert_eq!(f[0].check.id, check.id, "{field} as {literal}");
        assert_eq!(f[0].pointer, pointer);
        assert!(
            f[0].expected
                .contains("integer literal, without fraction or exponent"),
            "{}",
            f[0].expected
        );
        let mut out = Findings::new(MAX_FINDINGS);
        let _ = set.check_bytes_into(schema, broken.as_bytes(), &mut out, &mut |_, _| {});
        assert!(
            out.into_vec()
                .iter()
                .any(|g| g.pointer == pointer && g.check.id == check.id),
            "streamed: {field} as {literal}"
        );
    }
    // Integer literals pass, even far beyond 2^53; a fraction stays a type finding only.
    let big = list.replace("\"totalNum\":12", "\"totalNum\":9007199254740993");
    assert!(
        set.validate("mall-list-response", &serde_json::from_str(&big).unwrap())
            .is_empty()
    );
    // `-0` is an integer literal (serde_json reads it as a float), in the tree and streamed.
    let zero = list.replace("\"totalNum\":12", "\"totalNum\":-0");
    assert!(
        set.validate("mall-list-response", &serde_json::from_str(&zero).unwrap())
            .is_empty()
    );
    let mut out = Findings::new(MAX_FINDINGS);
    let _ = set.check_bytes_into(
        "mall-list-response",
        zero.as_bytes(),
        &mut out,
        &mut |_, _| {},
    );
    assert!(out.into_vec().is_empty(), "streamed -0");
    let half = products.replace("\"price\":1200", "\"price\":1200.5");
    let f = set.validate("products-response", &serde_json::from_str(&half).unwrap());
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0].expected.contains("type integer"), "{}", f[0].expected);
    // An Integer beyond any integer type is out of range, whatever its spelling.
    let huge = products.replace("\"price\":1200", "\"price\":100000000000000000000");
    let f = set.validate("products-response", &serde_json::from_str(&huge).unwrap());
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].expected.contains("within the Integer range"),
        "{}",
        f[0].expected
    );
}

#[test]
fn datetime_format_agrees_with_chrono_on_every_edge_of_each_field() {
    for year in [
        "0000", "0001", "1900", "2000", "2023", "2024", "2100", "9999",
    ] {
        for month in 0..=13 {
            for day in [0, 1, 28, 29, 30, 31, 32] {
                for (hour, minute, second) in [(0, 0, 0), (23, 59, 59), (24, 0, 0), (0, 60, 0)] {
                    let text =
                        format!("{year}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}");
                    let chrono_says =
                        chrono::NaiveDateTime::parse_from_str(&text, "%Y-%m-%d %H:%M:%S").is_ok();
                    assert_eq!(is_datetime(&text), chrono_says, "{text}");
                }
            }
        }
    }
}

#[test]
fn every_shipped_schema_passes_the_meta_schema_and_compiles() {
    // What the load skips for the shipped files, held here instead.
    for (name, text) in EMBEDDED {
        let document: Value = serde_json::from_str(text).expect("shipped JSON");
        if let Err(e) = jsonschema::meta::validate(&document) {
            panic!("{name}: {e}");
        }
    }
    let set = set();
    assert!(set.is_shipped());
    let registry = set.registry().expect("the shipped references resolve");
    for (name, schema) in &set.schemas {
        if let Err(e) = set.compile(&registry, schema) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn shipped_schemas_compile_on_first_use_and_a_users_at_load() {
    let shipped = set();
    assert!(shipped.schemas.values().all(|s| s.compiled.get().is_none()));
    assert!(shipped.validate("mall", &mall()).is_empty());
    assert!(shipped.schemas["mall"].compiled.get().is_some());
    assert!(
        shipped.schemas["products-response"]
            .compiled
            .get()
            .is_none()
    );
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in EMBEDDED {
        std::fs::write(dir.path().join(format!("{name}.json")), text).unwrap();
    }
    // An untouched copy (`mallcheck init`) is the shipped set: compiled on first use, and the
    // typed read may vouch for answers.
    let copy = SchemaSet::load_dir(dir.path()).expect("a copy loads");
    assert!(copy.schemas.values().all(|s| s.compiled.get().is_none()));
    assert!(copy.is_shipped());
    // One edited file makes the set a user's: checked and compiled at load.
    let common = dir.path().join("common.json");
    let edited =
        std::fs::read_to_string(&common)
            .unwrap()
            .replacen('{', "{\"$comment\": \"edited\",", 1);
    std::fs::write(&common, edited).unwrap();
    let user = SchemaSet::load_dir(dir.path()).expect("user schemas load");
    assert!(user.schemas.values().all(|s| s.compiled.get().is_some()));
    assert!(!user.is_shipped());
}

#[test]
fn a_reference_to_a_missing_file_names_the_file_its_line_and_the_file_it_wants() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in EMBEDDED {
        std::fs::write(dir.path().join(format!("{name}.json")), text).unwrap();
    }
    let mall = dir.path().join("mall.json");
    let text = std::fs::read_to_string(&mall).unwrap();
    assert!(
        text.contains("\"common.json#"),
        "the shipped mall refers to common.json"
    );
    std::fs::write(&mall, text.replace("\"common.json#", "\"commn.json#")).unwrap();
    let err = SchemaSet::load_dir(dir.path()).expect_err("a reference to no file");
    assert_eq!(err.file, mall);
    let SchemaErrorKind::MissingReference { at, target, .. } = &err.kind else {
        panic!("{err}: {}", err.kind);
    };
    let first = text.find("\"common.json#").unwrap();
    let line = text[..first].matches('\n').count() + 1;
    assert!(at.starts_with(&format!(" at line {line}, column ")), "{at}");
    assert!(target.ends_with("/commn.json"), "{target}");
    let message = err.kind.to_string();
    let wanted = dir.path().join("commn.json");
    assert!(
        message.ends_with(&format!("is {} missing?", wanted.display())),
        "{message}"
    );
}

#[test]
fn a_reference_to_a_missing_pointer_names_the_file_its_line_and_the_pointer() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in EMBEDDED {
        std::fs::write(dir.path().join(format!("{name}.json")), text).unwrap();
    }
    let mall = dir.path().join("mall.json");
    let text = std::fs::read_to_string(&mall).unwrap();
    let first = text
        .find("\"common.json#/$defs/")
        .expect("a pointer into common.json");
    let broken = format!(
        "{}\"common.json#/$defs/nosuch{}",
        &text[..first],
        &text[first + "\"common.json#/$defs/".len()..]
    );
    std::fs::write(&mall, broken).unwrap();
    let err = SchemaSet::load_dir(dir.path()).expect_err("a pointer to nothing");
    assert_eq!(err.file, mall);
    let SchemaErrorKind::MissingPointer(missing) = &err.kind else {
        panic!("{err}: {}", err.kind);
    };
    let MissingPointer {
        at,
        pointer,
        holder,
        ..
    } = missing.as_ref();
    let line = text[..first].matches('\n').count() + 1;
    assert!(at.starts_with(&format!(" at line {line}, column ")), "{at}");
    assert!(pointer.starts_with("/$defs/nosuch"), "{pointer}");
    assert_eq!(
        holder,
        &dir.path().join("common.json").display().to_string()
    );
}

/// Byte and Integer fields hold values of those types (Java's: 8 and 32 bits, signed), as a
/// Long holds a Long: beyond, a finding naming the range, on the tree and streamed; and the
/// typed fast paths (reader and model) never call such a body conforming.
#[test]
fn byte_and_integer_fields_beyond_their_types_are_findings() {
    let set = set();
    let list = envelope(vec![mall()]).to_string();
    let products = Value::Array(vec![product()]).to_string();
    // (schema, text, field as written, value, within the type)
    let cases = [
        ("mall-list-response", &list, "\"appType\":0", "128", false),
        ("mall-list-response", &list, "\"appType\":0", "127", true),
        ("mall-list-response", &list, "\"appType\":0", "-129", false),
        ("mall-list-response", &list, "\"appType\":0", "-128", true),
        (
            "mall-list-response",
            &list,
            "\"payToolCode\":2",
            "300",
            false,
        ),
        (
            "mall-list-response",
            &list,
            "\"edition\":1",
            "2147483648",
            false,
        ),
        (
            "mall-list-response",
            &list,
            "\"edition\":1",
            "2147483647",
            true,
        ),
        (
            "products-response",
            &products,
            "\"price\":1200",
            "2147483648",
            false,
        ),
        (
            "products-response",
            &products,
            "\"stockType\":0",
            "-2147483649",
            false,
        ),
        (
            "products-response",
            &products,
            "\"stockType\":0",
            "-2147483648",
            true,
        ),
    ];
    for (schema, text, field, value, within) in cases {
        assert_eq!(text.matches(field).count(), 1, "{field}");
        let name = field.split(':').next().unwrap_or_default();
        let changed = text.replace(field, &format!("{name}:{value}"));
        let tree = set.validate(schema, &serde_json::from_str(&changed).unwrap());
        let mut streamed = Findings::new(MAX_FINDINGS);
        let _ = set.check_bytes_into(schema, changed.as_bytes(), &mut streamed, &mut |_, _| {});
        let streamed = streamed.into_vec();
        let fast = crate::spec::wire::read(changed.as_bytes()).is_some();
        let model = crate::spec::wire::read_with_model(changed.as_bytes()).is_some();
        if within {
            assert!(
                tree.is_empty() && streamed.is_empty(),
                "{name} {value}: {tree:?}"
            );
            assert!(fast && model, "{name} {value}: the fast paths");
        } else {
            assert_eq!(tree.len(), 1, "{name} {value}: {tree:?}");
            assert!(tree[0].expected.contains("range"), "{}", tree[0].expected);
            assert_eq!(streamed.len(), 1, "{name} {value} streamed: {streamed:?}");
            assert!(
                !fast && !model,
                "{name} {value}: a fast path took it as conforming"
            );
        }
    }
}
