//! Loopback tests of the reference server: a real server on `127.0.0.1:0` called with reqwest.

use std::collections::HashSet;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::data::{self, DEMO_APPID, DEMO_SIGN_KEY, Dataset, EMPTY, Identity, MAIN, OTHER, Shape};
use super::faults::Fault;
use super::routes::{MALL_LIST_PATH, MALL_PRODUCTS_PATH};
use super::{RunningServer, ServerOptions, start};
use crate::sign::{Signer, SignerKind};

fn client() -> reqwest::Client {
    crate::tls::client_builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

fn list_body(who: Identity, cursor: Option<&str>, count: u64) -> Value {
    json!({
        "appid": DEMO_APPID,
        "filter": {"seller": {"merchantId": who.merchant_id, "merchantUserId": who.merchant_user_id, "role": who.role}},
        "sort": {"sortField": "id", "sort": "DESC"},
        "cursor": {"cursorField": "id", "endCursor": cursor, "count": count},
    })
}

fn products_body(who: Identity, mall_sn: &str, signature: &str) -> Value {
    json!({
        "appid": DEMO_APPID,
        "seller": {"merchantId": who.merchant_id, "merchantUserId": who.merchant_user_id, "role": who.role},
        "mallID": {"mallSn": mall_sn, "signature": signature},
    })
}

/// Sends a body signed with the demo key; returns status, headers and raw body.
async fn post(
    client: &reqwest::Client,
    url: &str,
    body: &Value,
    auth: Option<String>,
) -> reqwest::Result<(StatusCode, reqwest::header::HeaderMap, Vec<u8>)> {
    let raw = serde_json::to_vec(body).unwrap();
    let mut req = client.post(url).header("Content-Type", "application/json");
    if let Some(auth) = auth {
        req = req.header("Authorization", auth);
    }
    let resp = req.body(raw).send().await?;
    let status = resp.status();
    let headers = resp.headers().clone();
    Ok((status, headers, resp.bytes().await?.to_vec()))
}

async fn sign(body: &Value) -> String {
    let raw = serde_json::to_vec(body).unwrap();
    let sig = Signer::new(SignerKind::Md5, DEMO_SIGN_KEY.into())
        .sign(&raw)
        .await
        .unwrap();
    format!("{DEMO_APPID} {sig}")
}

async fn call(base: &str, path: &str, body: &Value) -> (StatusCode, Value) {
    let (status, _, raw) = post(
        &client(),
        &format!("{base}{path}"),
        body,
        Some(sign(body).await),
    )
    .await
    .unwrap();
    (status, serde_json::from_slice(&raw).unwrap_or(Value::Null))
}

async fn server() -> RunningServer {
    start(ServerOptions::default()).await.unwrap()
}

fn main_sns(shape: Shape) -> Vec<String> {
    Dataset::new(shape)
        .malls_of(MAIN.merchant_id)
        .iter()
        .map(|m| m.mall_sn.clone())
        .collect()
}

async fn walk(base: &str, count: u64) -> Vec<String> {
    let mut sns = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let (status, v) = call(
            base,
            MALL_LIST_PATH,
            &list_body(MAIN, cursor.as_deref(), count),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        let page = v["data"].as_array().unwrap().clone();
        assert!(page.len() <= count as usize);
        sns.extend(
            page.iter()
                .map(|m| m["mallSn"].as_str().unwrap().to_string()),
        );
        if page.len() < count as usize {
            return sns;
        }
        cursor = page
            .last()
            .map(|m| m["mallSn"].as_str().unwrap().to_string());
    }
    panic!("walk did not end");
}

#[tokio::test]
async fn signed_first_page_is_a_success_envelope() {
    let s = server().await;
    let (status, v) = call(&s.base_url(), MALL_LIST_PATH, &list_body(MAIN, None, 10)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["success"], json!(true));
    assert_eq!(v["code"], json!("0000"));
    assert_eq!(v["msg"], json!("处理成功"));
    let page = v["data"].as_array().unwrap();
    assert_eq!(page.len(), 10);
    assert_eq!(page[0]["mallSn"], json!(main_sns(Shape::Standard)[0]));
    assert!(
        page.iter()
            .all(|m| m["seller"]["merchantId"] == json!(MAIN.merchant_id))
    );
    s.shutdown().await;
}

#[tokio::test]
async fn paging_walk_reconstructs_all_main_malls_in_order() {
    let s = server().await;
    let expected = main_sns(Shape::Standard);
    for count in [1, 7, 10, 50] {
        let got = walk(&s.base_url(), count).await;
        assert_eq!(got, expected, "count {count}");
        assert_eq!(got.iter().collect::<HashSet<_>>().len(), got.len());
    }
    s.shutdown().await;
}

#[tokio::test]
async fn unsigned_or_badly_signed_requests_get_401_and_no_data() {
    let s = server().await;
    let url = format!("{}{MALL_LIST_PATH}", s.base_url());
    let body = list_body(MAIN, None, 10);
    let good = sign(&body).await;
    let (_, good_sig) = good.split_once(' ').unwrap();
    for (why, auth) in [
        ("missing", None),
        (
            "wrong signature",
            Some(format!("{DEMO_APPID} 0123456789abcdef")),
        ),
        ("wrong appid", Some(format!("other-app {good_sig}"))),
        ("no signature part", Some(DEMO_APPID.to_string())),
    ] {
        let (status, _, raw) = post(&client(), &url, &body, auth).await.unwrap();
        let v: Value = serde_json::from_slice(&raw).unwrap();
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{why}");
        assert_eq!(
            v,
            json!({"success": false, "code": "4010", "msg": v["msg"], "data": null}),
            "{why}"
        );
    }
    let mut other_appid = body.clone();
    other_appid["appid"] = json!("other-app");
    let (status, _) = call(&s.base_url(), MALL_LIST_PATH, &other_appid).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "body appid differs from the header's"
    );
    let products = products_body(MAIN, "1", "x");
    let purl = format!("{}{MALL_PRODUCTS_PATH}", s.base_url());
    let (status, _, _) = post(&client(), &purl, &products, None).await.unwrap();
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    s.shutdown().await;
}

#[tokio::test]
async fn unknown_and_empty_merchants_list_nothing() {
    let s = server().await;
    let unknown = Identity {
        merchant_id: "00000000-0000-0000-0000-000000000000",
        ..MAIN
    };
    for who in [unknown, EMPTY] {
        let (status, v) = call(&s.base_url(), MALL_LIST_PATH, &list_body(who, None, 10)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(v["data"], json!([]));
        assert_eq!(v["success"], json!(true));
    }
    s.shutdown().await;
}

#[tokio::test]
async fn bad_requests_get_400() {
    let s = server().await;
    for (why, body) in [
        ("count 0", list_body(MAIN, None, 0)),
        ("count 1001", list_body(MAIN, None, 1001)),
        ("not an object", json!([1, 2])),
        (
            "no seller",
            json!({"appid": DEMO_APPID, "filter": {}, "cursor": {"count": 10}}),
        ),
    ] {
        let (status, v) = call(&s.base_url(), MALL_LIST_PATH, &body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{why}: {v}");
        assert_eq!(v["code"], json!("4000"), "{why}");
        assert_eq!(v["data"], Value::Null, "{why}");
    }
    let url = format!("{}{MALL_LIST_PATH}", s.base_url());
    let raw = b"{not json".to_vec();
    let sig = Signer::new(SignerKind::Md5, DEMO_SIGN_KEY.into())
        .sign(&raw)
        .await
        .unwrap();
    let resp = client()
        .post(&url)
        .header("Authorization", format!("{DEMO_APPID} {sig}"))
        .body(raw)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let huge = vec![b' '; 2 * 1024 * 1024];
    let resp = client().post(&url).body(huge).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    for method in [reqwest::Method::GET, reqwest::Method::TRACE] {
        let resp = client().request(method.clone(), &url).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED, "{method}");
        let allow = resp.headers().get(reqwest::header::ALLOW);
        assert_eq!(
            allow.and_then(|v| v.to_str().ok()),
            Some("POST"),
            "{method}"
        );
    }
    s.shutdown().await;
}

/// A cursor is a string the request schema accepts, so one that names no mall of the list is
/// not a bad request: there is nothing to continue from (404).
#[tokio::test]
async fn a_cursor_that_names_no_mall_of_the_list_gets_404() {
    let s = server().await;
    let d = Dataset::new(Shape::Standard);
    let others = d.malls_of(OTHER.merchant_id)[0].mall_sn.clone();
    for (why, cursor) in [("unknown", "999"), ("another merchant's", others.as_str())] {
        let body = list_body(MAIN, Some(cursor), 10);
        let (status, v) = call(&s.base_url(), MALL_LIST_PATH, &body).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{why}: {v}");
        assert_eq!(v["code"], json!("4040"), "{why}");
        assert_eq!(v["data"], Value::Null, "{why}");
    }
    s.shutdown().await;
}

#[tokio::test]
async fn products_come_in_numeric_spu_id_descending_order() {
    let s = server().await;
    let d = Dataset::new(Shape::Standard);
    let first = d.malls_of(MAIN.merchant_id)[0];
    let body = products_body(MAIN, &first.mall_sn, &first.signature);
    let (status, v) = call(&s.base_url(), MALL_PRODUCTS_PATH, &body).await;
    assert_eq!(status, StatusCode::OK);
    let products = v.as_array().unwrap();
    assert_eq!(products.len(), data::FIRST_MALL_PRODUCTS as usize);
    let ids: Vec<u64> = products
        .iter()
        .map(|p| p["spuId"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]));
    s.shutdown().await;
}

/// §5.3: X-env-flag is "a value of digits"; the products call takes it and refuses another.
#[tokio::test]
async fn products_take_a_digit_env_flag_and_refuse_another() {
    let s = server().await;
    let d = Dataset::new(Shape::Standard);
    let first = d.malls_of(MAIN.merchant_id)[0];
    let body = products_body(MAIN, &first.mall_sn, &first.signature);
    let url = format!("{}{MALL_PRODUCTS_PATH}", s.base_url());
    for (flag, expected) in [
        ("1", StatusCode::OK),
        ("", StatusCode::BAD_REQUEST),
        ("on", StatusCode::BAD_REQUEST),
    ] {
        let resp = client()
            .post(&url)
            .header("Authorization", sign(&body).await)
            .header("X-env-flag", flag)
            .body(serde_json::to_vec(&body).unwrap())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), expected, "X-env-flag {flag:?}");
    }
    s.shutdown().await;
}

#[tokio::test]
async fn wrong_mall_signature_or_seller_gets_no_products() {
    let s = server().await;
    let d = Dataset::new(Shape::Standard);
    let first = d.malls_of(MAIN.merchant_id)[0];
    for (why, body) in [
        (
            "tampered signature",
            products_body(MAIN, &first.mall_sn, "0000"),
        ),
        (
            "another merchant",
            products_body(OTHER, &first.mall_sn, &first.signature),
        ),
        ("unknown mall", products_body(MAIN, "123", &first.signature)),
    ] {
        let (status, v) = call(&s.base_url(), MALL_PRODUCTS_PATH, &body).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{why}");
        assert_eq!(v["success"], json!(false), "{why}");
        assert_eq!(v["data"], Value::Null, "{why}");
    }
    s.shutdown().await;
}

#[tokio::test]
async fn faults_are_reachable_by_path_prefix() {
    let s = server().await;
    let base = s.base_url();
    let prefixed = |f: &str| format!("{base}/fault/{f}");
    let (_, v) = call(
        &prefixed("mall-state-out-of-range"),
        MALL_LIST_PATH,
        &list_body(MAIN, None, 5),
    )
    .await;
    assert!(
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["state"] == json!(3))
    );
    let (_, clean) = call(&base, MALL_LIST_PATH, &list_body(MAIN, None, 5)).await;
    assert!(
        clean["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["state"] != json!(3))
    );

    let url = format!("{}{MALL_LIST_PATH}", prefixed("http-500-html"));
    let (status, headers, _) = post(&client(), &url, &list_body(MAIN, None, 5), None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );

    let url = format!("{}{MALL_LIST_PATH}", prefixed("auth-ignored"));
    let (status, _, raw) = post(&client(), &url, &list_body(MAIN, None, 5), None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    let v: Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(v["data"].as_array().map(Vec::len), Some(5));

    let url = format!("{}{MALL_LIST_PATH}", prefixed("redirect-loop"));
    let (status, headers, _) = post(&client(), &url, &json!({}), None).await.unwrap();
    assert_eq!(status, StatusCode::FOUND);
    assert_eq!(
        headers["location"],
        format!("/fault/redirect-loop{MALL_LIST_PATH}").as_str()
    );

    let (_, v) = call(
        &prefixed("paging-page-over-count"),
        MALL_LIST_PATH,
        &list_body(MAIN, None, 5),
    )
    .await;
    assert_eq!(v["data"].as_array().map(Vec::len), Some(6));

    let (status, v) = call(
        &prefixed("no-such-fault"),
        MALL_LIST_PATH,
        &list_body(MAIN, None, 5),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(v["success"], json!(false));
    s.shutdown().await;
}

#[tokio::test]
async fn fuzz_triggers_stay_quiet_for_normal_requests() {
    let s = server().await;
    let base = format!("{}/fault/fuzz-count-over-80", s.base_url());
    let (status, _) = call(&base, MALL_LIST_PATH, &list_body(MAIN, None, 50)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = call(&base, MALL_LIST_PATH, &list_body(MAIN, None, 81)).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);

    let base = format!("{}/fault/fuzz-empty-role", s.base_url());
    let (status, _) = call(&base, MALL_LIST_PATH, &list_body(MAIN, None, 10)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = call(
        &base,
        MALL_LIST_PATH,
        &list_body(Identity { role: "", ..MAIN }, None, 10),
    )
    .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);

    let base = format!("{}/fault/fuzz-user-id-space", s.base_url());
    let who = Identity {
        merchant_user_id: "a b",
        ..MAIN
    };
    let (status, _) = call(&base, MALL_LIST_PATH, &list_body(who, None, 10)).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);

    let url = format!(
        "{}/fault/fuzz-empty-cursor-hang{MALL_LIST_PATH}",
        s.base_url()
    );
    let quick = crate::tls::client_builder()
        .no_proxy()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let body = list_body(MAIN, Some(""), 10);
    let err = post(&quick, &url, &body, Some(sign(&body).await))
        .await
        .unwrap_err();
    assert!(err.is_timeout());
    s.shutdown().await;
}

#[tokio::test]
async fn default_fault_applies_to_unprefixed_paths() {
    let opts = ServerOptions {
        fault: Some(Fault::NoMalls),
        ..ServerOptions::default()
    };
    let s = start(opts).await.unwrap();
    let (_, v) = call(&s.base_url(), MALL_LIST_PATH, &list_body(MAIN, None, 10)).await;
    assert_eq!(v["data"], json!([]));
    s.shutdown().await;
}

#[tokio::test]
async fn gzip_variation_compresses_when_accepted() {
    let s = server().await;
    let url = format!("{}/fault/gzip{MALL_LIST_PATH}", s.base_url());
    let body = list_body(MAIN, None, 3);
    let raw_client = crate::tls::client_builder()
        .no_proxy()
        .no_gzip()
        .build()
        .unwrap();
    let resp = raw_client
        .post(&url)
        .header("Authorization", sign(&body).await)
        .header("Accept-Encoding", "gzip")
        .body(serde_json::to_vec(&body).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-encoding"], "gzip");
    let (status, v) = call(
        &format!("{}/fault/gzip", s.base_url()),
        MALL_LIST_PATH,
        &body,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["data"].as_array().map(Vec::len), Some(3));
    s.shutdown().await;
}

#[tokio::test]
async fn every_fault_answers_without_crashing_the_server() {
    let s = server().await;
    let client = |timeout| {
        crate::tls::client_builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .build()
            .unwrap()
    };
    // The slow faults are expected to time out, so they get a short deadline; every other fault
    // must answer, however loaded the machine (a big body takes a while on two busy cores), so
    // its deadline only guards against a hang: this test asserts no crash, not speed.
    let quick = client(Duration::from_secs(1));
    let patient = client(Duration::from_secs(120));
    let d = Dataset::new(Shape::Standard);
    let first = d.malls_of(MAIN.merchant_id)[0];
    for f in Fault::all() {
        let base = format!("{}/fault/{}", s.base_url(), f.name());
        let list = list_body(MAIN, None, 10);
        let products = products_body(MAIN, &first.mall_sn, &first.signature);
        let slow = matches!(f, Fault::SlowFirstByte | Fault::StalledBody);
        let http = if slow { &quick } else { &patient };
        for (path, body) in [(MALL_LIST_PATH, &list), (MALL_PRODUCTS_PATH, &products)] {
            let res = post(http, &format!("{base}{path}"), body, Some(sign(body).await)).await;
            match res {
                Ok((status, _, _)) => assert!(
                    !status.is_server_error()
                        || matches!(f, Fault::Http500Html | Fault::EchoErrorPage),
                    "{}: {status}",
                    f.name()
                ),
                Err(e) => assert!(slow && e.is_timeout(), "{}: {e}", f.name()),
            }
        }
    }
    let (status, _) = call(&s.base_url(), MALL_LIST_PATH, &list_body(MAIN, None, 10)).await;
    assert_eq!(status, StatusCode::OK);
    s.shutdown().await;
}

#[tokio::test]
async fn stalled_body_sends_headers_and_half_the_body_first() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = server().await;
    let body = serde_json::to_vec(&list_body(MAIN, None, 10)).unwrap();
    let auth = sign(&list_body(MAIN, None, 10)).await;
    let head = format!(
        "POST /fault/stalled-body{MALL_LIST_PATH} HTTP/1.1\r\nHost: x\r\nAuthorization: {auth}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(s.addr()).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    while let Ok(Ok(n)) =
        tokio::time::timeout(Duration::from_millis(500), stream.read(&mut buf)).await
    {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got);
    let (headers, partial) = text.split_once("\r\n\r\n").unwrap();
    assert!(headers.starts_with("HTTP/1.1 200"), "{headers}");
    let declared: usize = headers
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(str::to_string)
        })
        .unwrap()
        .parse()
        .unwrap();
    let received = got.len() - headers.len() - 4;
    assert!(
        received > 0 && received < declared,
        "{received} of {declared}"
    );
    assert!(!partial.is_empty());
    s.shutdown().await;
}

#[tokio::test]
async fn shutdown_ends_hanging_requests() {
    let s = start(ServerOptions {
        fault: Some(Fault::SlowFirstByte),
        ..ServerOptions::default()
    })
    .await
    .unwrap();
    let url = format!("{}{MALL_LIST_PATH}", s.base_url());
    let body = list_body(MAIN, None, 10);
    let pending =
        tokio::spawn(async move { post(&client(), &url, &body, Some(sign(&body).await)).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    tokio::time::timeout(Duration::from_secs(10), s.shutdown())
        .await
        .unwrap();
    let _ = pending.await;
}
