//! Long range checks are exact on both sides (spec §2.4, §2.5): integers just below -2^63,
//! which a float reads as -2^63, fail `validate` and `run`.

use std::process::Command;

use mallcheck::server::data::{Dataset, MAIN, Shape, mall_record};
use serde_json::json;

use crate::common::{Server, assert_exit, bin, finding_ids, run_against};

/// A mall-list response whose `field` is written as `literal`.
fn body_with(field: &str, literal: &str) -> String {
    let data = Dataset::new(Shape::Standard);
    let mut mall = mall_record(data.malls_of(MAIN.merchant_id)[0]);
    mall["orderStatistics"]["totalNum"] = json!(1);
    mall["orderStatistics"]["totalAmount"] = json!(2);
    mall["sellerStatisticsModel"] = json!({"orderFailNum": 3});
    let text = json!({"success": true, "code": "0000", "msg": "ok", "data": [mall]}).to_string();
    let (key, placeholder) = match field {
        "totalNum" => ("\"totalNum\":", "1"),
        "totalAmount" => ("\"totalAmount\":", "2"),
        _ => ("\"orderFailNum\":", "3"),
    };
    text.replace(&format!("{key}{placeholder}"), &format!("{key}{literal}"))
}

#[test]
fn validate_rejects_integers_just_below_the_long_range() {
    let dir = tempfile::tempdir().unwrap();
    for (field, check) in [
        ("totalNum", "mall.order-statistics"),
        ("totalAmount", "mall.order-statistics"),
        ("orderFailNum", "mall.seller-statistics"),
    ] {
        for (literal, passes) in [
            ("-9223372036854775809", false),
            ("-9223372036854776832", false),
            ("-9223372036854775808", true),
            ("9223372036854775807", true),
        ] {
            let file = dir.path().join(format!("{field}{literal}.json"));
            std::fs::write(&file, body_with(field, literal)).unwrap();
            let out = Command::new(bin())
                .args([
                    "validate",
                    "--schema",
                    "mall-list-response",
                    "--color",
                    "never",
                ])
                .arg(&file)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            if passes {
                assert_eq!(out.status.code(), Some(0), "{field} = {literal}: {stdout}");
            } else {
                assert_eq!(out.status.code(), Some(1), "{field} = {literal}: {stdout}");
                assert!(stdout.contains(check), "{field} = {literal}: {stdout}");
                assert!(stdout.contains(field), "{field} = {literal}: {stdout}");
            }
        }
    }
}

#[test]
fn run_catches_a_service_writing_one_below_the_long_range() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&server.fault_url("order-total-num-below-long"), dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let ids = finding_ids(&dir.path().join("report.json"));
    assert!(
        ids.contains(&"mall.order-statistics".to_string()),
        "{ids:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&server.fault_url("long-min"), dir.path())
        .output()
        .unwrap();
    assert_exit(&out, 0);
}
