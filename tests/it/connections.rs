//! Keep-alive connections a service drops without saying so. A stock FastAPI service on uvicorn
//! answers 500 to a body holding NaN and then closes the connection without `Connection:
//! close`; the reference server's `fuzz-odd-json-crash-closes` does the same (it drops the
//! connection when the next request arrives on it). The next request on that connection must be
//! sent again at once on a new connection: no transport error, no retry of `--retries`.

use serde_json::json;

use crate::common::{Server, fuzz_as_main, output_text};
use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, MAIN};
use mallcheck::server::faults::Fault;
use mallcheck::server::{RunningServer, ServerOptions};
use mallcheck::service::client::{Client, ClientOptions};
use mallcheck::service::politeness::counting_retries;
use mallcheck::sign::{Signer, SignerKind};
use mallcheck::verdict::endpoint::{AuthMode, Endpoint};

fn list_body() -> serde_json::Value {
    json!({
        "appid": DEMO_APPID,
        "filter": {"seller": {"merchantId": MAIN.merchant_id,
                              "merchantUserId": MAIN.merchant_user_id, "role": "super_admin"}},
        "sort": {"sortField": "id", "sort": "DESC"},
        "cursor": {"cursorField": "id", "endCursor": null, "count": 3}
    })
}

/// Sends a NaN body (the service crashes and drops the connection), then a good body on the
/// same client; returns the good body's status or transport finding, and the retries made.
async fn crash_then_ask(server: &RunningServer, retries: u32) -> (Result<u16, String>, u32) {
    let url = format!(
        "{}/fault/{}",
        server.base_url(),
        Fault::FuzzOddJsonCrashCloses.name()
    );
    let signer = Signer::new(SignerKind::Md5, DEMO_SIGN_KEY.to_string());
    let options = ClientOptions {
        retries,
        ..ClientOptions::default()
    };
    let client = Client::new(&url, signer, options, &mallcheck::redact::Redactor::new()).unwrap();
    let nan = br#"{"appid":"mallcheck-demo-app","cursor":{"count":NaN}}"#.to_vec();
    let crashed = client
        .send_raw(Endpoint::MallList, nan, DEMO_APPID, &AuthMode::Signed, &[])
        .await;
    assert_eq!(
        crashed.exchange.response.as_ref().map(|r| r.status),
        Some(500),
        "the fault answers NaN with a 500"
    );
    let (sent, retried) = counting_retries(client.send_json(
        Endpoint::MallList,
        &list_body(),
        &AuthMode::Signed,
        &[],
    ))
    .await;
    let outcome = match sent.result {
        Ok(r) => Ok(r.status),
        Err(f) => Err(format!("{}: {}", f.check.id, f.actual)),
    };
    (outcome, retried)
}

#[test]
fn a_connection_dropped_after_a_500_is_replaced_at_once() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let server = mallcheck::server::start(ServerOptions::default())
            .await
            .unwrap();
        // Without --retries (run's default) the next request is still answered...
        let (outcome, retried) = crash_then_ask(&server, 0).await;
        assert_eq!(outcome, Ok(200), "no transport error after the crash");
        assert_eq!(retried, 0);
        // ...and with them, it is not a retry (no back-off, no flaky case).
        let (outcome, retried) = crash_then_ask(&server, 2).await;
        assert_eq!(outcome, Ok(200));
        assert_eq!(
            retried, 0,
            "a lost keep-alive connection is not a --retries retry"
        );
        server.shutdown().await;
    });
}

#[test]
fn fuzz_reports_the_crash_as_a_500_without_transport_errors() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let url = server.fault_url(Fault::FuzzOddJsonCrashCloses.name());
    let out = fuzz_as_main(&url, dir.path(), "7")
        .args(["--cases", "150"])
        .output()
        .unwrap();
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("HTTP 500"), "{text}");
    assert!(!text.contains("transport.connect"), "{text}");
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(!junit.contains("transport.connect"), "{junit}");
    assert!(!junit.contains("flaky"), "{junit}");
}

/// A service whose process goes down on one request (Node ends on an unhandled rejection of an
/// unguarded `authorization.split`): the connection is closed with no answer and the next one
/// is refused. Once the service has served a signed request, that request's finding is
/// `transport.dropped` (a failure), whatever its Authorization, not an unreachable service.
#[test]
fn a_service_that_goes_down_on_a_request_dropped_it() {
    use tokio::io::AsyncWriteExt;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        // One connection: the first request is answered (a products array), the second is
        // read and the connection closed; the listener goes with it.
        let server = tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            assert!(read_request(&mut conn).await, "the client closed first");
            conn.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n[]",
            )
            .await
            .unwrap();
            assert!(read_request(&mut conn).await, "the client closed first");
            drop(conn);
            drop(listener);
        });
        let signer = Signer::new(SignerKind::Md5, DEMO_SIGN_KEY.to_string());
        let client = Client::new(
            &url,
            signer,
            ClientOptions::default(),
            &mallcheck::redact::Redactor::new(),
        )
        .unwrap();
        let products = json!({"appid": DEMO_APPID, "seller": {"merchantId": MAIN.merchant_id},
            "mallID": {"mallSn": "1", "signature": "s"}});
        let served = client
            .send_json(Endpoint::MallProducts, &products, &AuthMode::Signed, &[])
            .await;
        assert_eq!(served.result.map(|r| r.status).ok(), Some(200));
        let crashed = client
            .send_json(Endpoint::MallList, &list_body(), &AuthMode::Missing, &[])
            .await;
        let f = crashed.result.expect_err("no answer");
        assert_eq!(f.check.id, "transport.dropped", "{}", f.actual);
        assert!(
            f.actual.contains("went down while this request was out"),
            "{}",
            f.actual
        );
        server.await.unwrap();
    });
}

/// Reads one whole request (head and `content-length` body) from `conn`; false when the client
/// closed the connection first.
async fn read_request(conn: &mut tokio::net::TcpStream) -> bool {
    use tokio::io::AsyncReadExt;
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = conn.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            return false;
        }
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen).to_string();
        let Some(head_end) = text.find("\r\n\r\n") else {
            continue;
        };
        let length: usize = text[..head_end]
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse().ok())?
            })
            .unwrap_or(0);
        if seen.len() >= head_end + 4 + length {
            return true;
        }
    }
}

/// A service that closes a new connection on its first request without answering (h26c F8:
/// 2 or 3 connections a run). That is no keep-alive race (the connection brought no answer
/// before), so the request is not sent again silently: with `--retries 0` it is
/// `transport.dropped`, and with `--retries 1` it goes again as a retry (a flaky case).
#[test]
fn a_new_connection_closed_on_its_first_request_is_not_sent_again_silently() {
    use tokio::io::AsyncWriteExt;
    async fn ask(retries: u32) -> (Result<u16, String>, u32, usize) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        // Connection 1 answers and closes (`connection: close`); connection 2 is closed on
        // its request; any later one is answered.
        let server = tokio::spawn(async move {
            let mut connections = 0;
            while let Ok(Ok((mut conn, _))) =
                tokio::time::timeout(std::time::Duration::from_secs(2), listener.accept()).await
            {
                connections += 1;
                if !read_request(&mut conn).await {
                    continue;
                }
                if connections == 2 {
                    drop(conn);
                    continue;
                }
                conn.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: 2\r\n\r\n[]",
                )
                .await
                .unwrap();
            }
            connections
        });
        let signer = Signer::new(SignerKind::Md5, DEMO_SIGN_KEY.to_string());
        let options = ClientOptions {
            retries,
            ..ClientOptions::default()
        };
        let client =
            Client::new(&url, signer, options, &mallcheck::redact::Redactor::new()).unwrap();
        let products = json!({"appid": DEMO_APPID, "seller": {"merchantId": MAIN.merchant_id},
            "mallID": {"mallSn": "1", "signature": "s"}});
        let served = client
            .send_json(Endpoint::MallProducts, &products, &AuthMode::Signed, &[])
            .await;
        assert_eq!(served.result.map(|r| r.status).ok(), Some(200));
        let (sent, retried) = counting_retries(client.send_json(
            Endpoint::MallProducts,
            &products,
            &AuthMode::Signed,
            &[],
        ))
        .await;
        let outcome = match sent.result {
            Ok(r) => Ok(r.status),
            Err(f) => Err(format!("{}: {}", f.check.id, f.actual)),
        };
        drop(client);
        (outcome, retried, server.await.unwrap())
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (outcome, retried, connections) = ask(0).await;
        let actual = outcome.expect_err("no answer, and not sent again");
        assert!(actual.starts_with("transport.dropped"), "{actual}");
        assert!(actual.contains("connection's first request"), "{actual}");
        assert_eq!(
            (retried, connections),
            (0, 2),
            "not sent on a third connection"
        );
        let (outcome, retried, connections) = ask(1).await;
        assert_eq!(outcome, Ok(200), "answered on the retry");
        assert_eq!(
            (retried, connections),
            (1, 3),
            "a --retries retry (a flaky case)"
        );
    });
}
