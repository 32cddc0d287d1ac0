//! Integers written as floats (issue 22, item 1): a field the spec types Integer, Long or Byte
//! written `3800.0`, `105112.0`, `1e5` or `1.0` is a contract finding naming the field and the
//! literal, in `run` and in `validate` of a captured response.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;

use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, MAIN};
use mallcheck::server::routes::{MALL_LIST_PATH, MALL_PRODUCTS_PATH};
use md5::{Digest, Md5};
use serde_json::{Value, json};

use crate::common::{Server, bin, run_against};

/// (fault, check, pointer suffix, literal as served)
const FAULTS: [(&str, &str, &str, &str); 4] = [
    ("sku-price-float", "sku.fields", "/price", "3800.0"),
    (
        "order-total-num-float",
        "mall.order-statistics",
        "/orderStatistics/totalNum",
        "105112.0",
    ),
    (
        "order-total-num-exponent",
        "mall.order-statistics",
        "/orderStatistics/totalNum",
        "1e5",
    ),
    ("mall-state-float", "mall.state", "/state", "1.0"),
];

/// The findings of a JSON report, each as (check, pointer, expected, actual).
fn findings(report: &Path) -> Vec<(String, String, String, String)> {
    let text = std::fs::read_to_string(report).unwrap_or_default();
    let v: Value = serde_json::from_str(&text).unwrap_or_default();
    let field = |f: &Value, k: &str| f[k].as_str().unwrap_or_default().to_string();
    v["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["findings"].as_array().cloned().unwrap_or_default())
        .map(|f| {
            (
                field(&f, "check"),
                field(&f, "pointer"),
                field(&f, "expected"),
                field(&f, "actual"),
            )
        })
        .collect()
}

#[test]
fn run_catches_each_integer_written_as_a_float_naming_field_and_literal() {
    let server = Server::start(&[]);
    for (fault, check, suffix, literal) in FAULTS {
        let dir = tempfile::tempdir().unwrap();
        let out = run_against(&server.fault_url(fault), dir.path())
            .args(["--filter", &format!("check:{check}"), "--quiet"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{fault}");
        let found = findings(&dir.path().join("report.json"));
        assert!(
            found.iter().any(|(c, p, e, a)| c == check
                && p.ends_with(suffix)
                && e.contains("integer literal, without fraction or exponent")
                && a == literal),
            "{fault}: {found:#?}"
        );
    }
}

/// The body of a signed POST to the reference server (the demo key and the md5 signer).
fn post(base_url: &str, path: &str, body: &Value) -> Vec<u8> {
    let body = body.to_string();
    let signature = hex::encode(Md5::digest(format!("{body}{DEMO_SIGN_KEY}").as_bytes()));
    let rest = base_url.trim_start_matches("http://");
    let (addr, prefix) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(addr).expect("connect to the server");
    write!(
        stream,
        "POST {prefix}{path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAuthorization: {DEMO_APPID} {signature}\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("send the request");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read the answer");
    let at = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&answer[..at]).to_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("content-length"), "{head}");
    answer[at + 4..].to_vec()
}

fn seller() -> Value {
    json!({"merchantId": MAIN.merchant_id, "merchantUserId": MAIN.merchant_user_id, "role": MAIN.role})
}

fn list_page(base_url: &str) -> Vec<u8> {
    let body = json!({
        "appid": DEMO_APPID,
        "filter": {"seller": seller()},
        "sort": {"sortField": "id", "sort": "DESC"},
        "cursor": {"cursorField": "id", "endCursor": null, "count": 10},
    });
    post(base_url, MALL_LIST_PATH, &body)
}

fn validate(schema: &str, file: &Path) -> (Option<i32>, String) {
    let out = Command::new(bin())
        .args(["validate", "--schema", schema, "--color", "never"])
        .arg(file)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn validate_flags_the_float_literals_of_a_captured_response() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for (fault, check, suffix, literal) in FAULTS {
        let base = server.fault_url(fault);
        let page = list_page(&base);
        let (schema, captured) = if check == "sku.fields" {
            let list: Value = serde_json::from_slice(&page).unwrap();
            let mall = &list["data"][0];
            let body = json!({
                "appid": DEMO_APPID,
                "seller": seller(),
                "mallID": {"mallSn": mall["mallSn"], "signature": mall["signature"]},
            });
            ("products-response", post(&base, MALL_PRODUCTS_PATH, &body))
        } else {
            ("mall-list-response", page)
        };
        assert!(
            String::from_utf8_lossy(&captured).contains(literal),
            "{fault} serves {literal}"
        );
        let file = dir.path().join(format!("{fault}.json"));
        std::fs::write(&file, &captured).unwrap();
        let (code, stdout) = validate(schema, &file);
        assert_eq!(code, Some(1), "{fault}: {stdout}");
        assert!(stdout.contains(check), "{fault}: {stdout}");
        assert!(stdout.contains(suffix), "{fault}: {stdout}");
        assert!(stdout.contains(literal), "{fault}: {stdout}");
        // The same response with the integers written as integers passes.
        let key = suffix.rsplit('/').next().unwrap_or_default();
        let fixed = String::from_utf8_lossy(&captured)
            .replace(&format!("\"{key}\":{literal}"), &format!("\"{key}\":1"));
        std::fs::write(&file, fixed).unwrap();
        let (code, stdout) = validate(schema, &file);
        assert_eq!(code, Some(0), "{fault} fixed: {stdout}");
    }
}
