use super::*;
use crate::server::data::{self, Dataset, MAIN, Shape};
use serde_json::{Value, json};

fn page(malls: usize) -> Value {
    let dataset = Dataset::new(Shape::Standard);
    let records: Vec<Value> = dataset
        .malls_of(MAIN.merchant_id)
        .into_iter()
        .take(malls)
        .map(data::mall_record)
        .collect();
    json!({"success": true, "code": "0000", "msg": "ok", "data": records})
}

fn products(count: u32) -> Value {
    let dataset = Dataset::new(Shape::Standard);
    let mut mall = dataset.malls_of(MAIN.merchant_id)[0].clone();
    mall.product_count = count;
    Value::Array(data::products(&mall))
}

fn digest(v: &Value) -> Option<Digest> {
    read(&serde_json::to_vec(v).unwrap())
}

#[test]
fn the_reference_answers_take_the_fast_path() {
    let page = page(20);
    let Some(Digest::Envelope(e)) = digest(&page) else {
        panic!("the reference page is read as a conforming envelope");
    };
    assert!(e.success);
    let malls = e.malls.unwrap();
    assert_eq!(malls.len(), 20);
    assert_eq!(malls[0].sn, page["data"][0]["mallSn"].as_str().unwrap());
    assert_eq!(malls[0].merchant_id, MAIN.merchant_id);
    let list = products(12);
    let Some(Digest::Products(ids)) = digest(&list) else {
        panic!("the reference products are read as a conforming array");
    };
    assert_eq!(ids, crate::checks::products::spu_ids(&list));
    let error = json!({"success": false, "code": "4001", "msg": "bad", "data": null});
    assert_eq!(digest(&error).map(|d| d.records()), Some(0));
    // Escaped strings are read too (owned, not borrowed).
    let escaped = br#"{"success":false,"code":"40\u00301","msg":"\u00e9\n"}"#;
    assert!(read(escaped).is_some());
}

#[test]
fn every_doubt_takes_the_tree_path() {
    let base = page(2);
    let doubts: Vec<(&str, Box<dyn Fn(&mut Value)>)> = vec![
        ("extra field", Box::new(|v| v["data"][0]["x"] = json!(1))),
        ("extra envelope field", Box::new(|v| v["extra"] = json!(1))),
        (
            "missing always-null",
            Box::new(|v| {
                v["data"][0].as_object_mut().unwrap().shift_remove("taskId");
            }),
        ),
        (
            "always-null set",
            Box::new(|v| v["data"][0]["taskId"] = json!(0)),
        ),
        (
            "missing topTime",
            Box::new(|v| {
                v["data"][0]
                    .as_object_mut()
                    .unwrap()
                    .shift_remove("topTime");
            }),
        ),
        ("state 3", Box::new(|v| v["data"][0]["state"] = json!(3))),
        (
            "state 1.0",
            Box::new(|v| v["data"][0]["state"] = json!(1.0)),
        ),
        (
            "long as float",
            Box::new(|v| v["data"][0]["orderStatistics"]["totalNum"] = json!(5.0)),
        ),
        (
            "bad date",
            Box::new(|v| v["data"][0]["ctime"] = json!("2024-02-30 10:00:00")),
        ),
        (
            "success without 0000",
            Box::new(|v| v["code"] = json!("0001")),
        ),
        (
            "failure with malls",
            Box::new(|v| v["success"] = json!(false)),
        ),
        (
            "data null on success",
            Box::new(|v| v["data"] = Value::Null),
        ),
        (
            "msg missing",
            Box::new(|v| {
                v.as_object_mut().unwrap().shift_remove("msg");
            }),
        ),
    ];
    for (what, mutate) in doubts {
        let mut v = base.clone();
        mutate(&mut v);
        assert_eq!(digest(&v), None, "{what}");
    }
    for raw in [
        &br#"{"success":false,"code":"1","msg":"","msg":""}"#[..],
        br#"{"success":false,"code":"1","msg":"","data":[]} x"#,
        br#"{"success":false,"code":"1","msg":"","data":[],"n":1e999}"#,
        br#"[{"spuId":"1","converImages":[],"productIntroduction":"[{\"type\":\"text\"}]","title":"t","skuResults":[]}]"#,
        br#"[{"spuId":"1","converImages":[],"productIntroduction":"[{\"type\":\"bigImg\",\"img_list\":[],\"text\":null}]","title":"t","skuResults":[]}]"#,
        b"12",
        b"",
    ] {
        assert_eq!(read(raw), None, "{}", String::from_utf8_lossy(raw));
    }
    let ok = br#"[{"spuId":"1","converImages":[],"productIntroduction":"[{\"type\":\"bigImg\",\"img_list\":[]}]","title":"t","skuResults":[]}]"#;
    assert!(read(ok).is_some());
}
