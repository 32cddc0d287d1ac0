//! The HTTP surface of the reference server: both operations of spec §4 under the base URL and
//! under `/fault/<name>`, authentication (§5), validation, and where each fault takes effect.
//!
//! Status codes (the spec leaves them open, §7): 200 with the data; 400 (`4000`) for a body that
//! is not JSON or breaks a rule of `schemas/*-request.json` (or a products call whose
//! `X-env-flag` is not digits); 401 (`4010`) for a missing or bad
//! `Authorization` or an appid mismatch; 404 (`4040`) for an unknown path, fault or mall (or a
//! mall of another merchant, or a wrong mall signature) and for an `endCursor` that names no mall
//! of the merchant's list; 405 (`4050`, with `Allow: POST`) for a method other than POST; 413
//! (`4130`) for a body above 1 MiB. Every error is the envelope
//! `{"success":false,"code":"...","msg":"...","data":null}`. A request the request schema accepts
//! is never answered 400 (Schemathesis checks it in `tests/it/openapi.rs`).

use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::server::body::{self, Request, Response};
use crate::server::data::{self, Dataset, MAIN, MallSeed, OTHER, SINGLE, Shape};
use crate::server::echo_forms::EchoForm;
use crate::server::faults::{Echo, Fault, HUGE_HEADER_BYTES, MALL_SN_PREFIX};
use crate::server::pages::{self, UnknownCursor};
use crate::server::request::{self, ListRequest, ProductsRequest, SellerIdentity};
use crate::server::wire::{self, STALL};
use crate::sign::Signer;

/// Path of the mall list operation (spec §4.1).
pub const MALL_LIST_PATH: &str = "/optimus/core/open/mall/queryMallList";

/// Path of the mall products operation (spec §4.2).
pub const MALL_PRODUCTS_PATH: &str = "/optimus/core/open/mall/queryMallProducts";

/// Prefix that selects a fault per request: `/fault/<name>/optimus/...`.
pub const FAULT_PREFIX: &str = "/fault/";

/// `GET` here answers `{"requests": N, "max_in_flight": M}`: how many requests the server
/// answered so far (this one not counted), and the most it was handling at once, so a benchmark
/// or a test can read the cost and the concurrency of a run from the server side.
pub const REQUESTS_PATH: &str = "/_mallcheck/requests";

/// Largest request body read.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// How long the `fuzz-empty-cursor-hang` fault hangs.
const FUZZ_HANG: Duration = Duration::from_secs(60);

/// Everything the handlers share.
pub(crate) struct AppState {
    pub(crate) default_fault: Option<Fault>,
    pub(crate) signer: Signer,
    pub(crate) appid: String,
    pub(crate) shutdown: watch::Receiver<bool>,
    standard: Dataset,
    many_malls: Dataset,
    big_mall: Dataset,
    no_malls: Dataset,
    calls: AtomicU64,
    /// Every request answered (`GET /_mallcheck/requests` reads it, uncounted).
    pub(crate) requests: Arc<AtomicU64>,
    /// Requests being handled now, and the most handled at once so far.
    in_flight: AtomicU64,
    pub(crate) max_in_flight: Arc<AtomicU64>,
    /// Added before every answer (`serve --latency-ms`), like a remote service's.
    pub(crate) latency: Duration,
    /// Largest `cursor.count` served (`serve --max-page-size`).
    pub(crate) max_page_size: u64,
    /// Refusals answered in plain text instead of the JSON envelope (`serve --plain-errors`).
    pub(crate) plain_errors: bool,
    /// Signatures of authenticated requests, for the signature-cache faults.
    seen: std::sync::Mutex<HashSet<(Option<Operation>, String)>>,
    /// Products calls answered so far, by mallSn, for the `products-empty-every-other-read`
    /// fault.
    product_reads: std::sync::Mutex<HashMap<String, u64>>,
    /// The first-call faults whose first call was answered.
    first_calls: std::sync::Mutex<HashSet<Fault>>,
}

/// Most signatures the signature-cache faults remember (then they start over).
const MAX_SEEN_SIGNATURES: usize = 100_000;

impl AppState {
    /// Builds the state with every seed data shape.
    pub(crate) fn new(
        default_fault: Option<Fault>,
        signer: Signer,
        appid: String,
        shutdown: watch::Receiver<bool>,
    ) -> AppState {
        AppState {
            default_fault,
            signer,
            appid,
            shutdown,
            standard: Dataset::new(Shape::Standard),
            many_malls: Dataset::new(Shape::ManyMalls),
            big_mall: Dataset::new(Shape::BigMall),
            no_malls: Dataset::new(Shape::NoMalls),
            calls: AtomicU64::new(0),
            requests: Arc::new(AtomicU64::new(0)),
            in_flight: AtomicU64::new(0),
            max_in_flight: Arc::new(AtomicU64::new(0)),
            latency: Duration::ZERO,
            max_page_size: request::MAX_COUNT,
            plain_errors: false,
            seen: std::sync::Mutex::new(HashSet::new()),
            product_reads: std::sync::Mutex::new(HashMap::new()),
            first_calls: std::sync::Mutex::new(HashSet::new()),
        }
    }

    /// Replaces the standard data (served without a data-shape fault) with MAIN's malls and
    /// their products multiplied by `scale` (see [`Dataset::scaled`]).
    pub(crate) fn with_scale(mut self, scale: u32) -> AppState {
        if scale > 1 {
            self.standard = Dataset::scaled(Shape::Standard, scale);
        }
        self
    }

    /// Replaces the standard data with MAIN holding `malls` malls (`serve --malls`).
    pub(crate) fn with_main_malls(mut self, malls: Option<usize>) -> AppState {
        if let Some(n) = malls {
            self.standard = Dataset::with_main_malls(Shape::Standard, n);
        }
        self
    }

    /// Turns away a `cursor.count` above `max` (a service with a smaller page limit than ours;
    /// §8 states none).
    pub(crate) fn with_max_page_size(mut self, max: Option<u64>) -> AppState {
        if let Some(max) = max {
            self.max_page_size = max.clamp(1, request::MAX_COUNT);
        }
        self
    }

    /// Answers every refusal (400, 401, 404, 405) as plain text, the way many web frameworks
    /// and gateways do; the spec shows no error shape (§7.2-§7.4), so it is still correct.
    pub(crate) fn with_plain_errors(mut self, plain: bool) -> AppState {
        self.plain_errors = plain;
        self
    }

    /// Adds a fixed latency to every answer.
    pub(crate) fn with_latency(mut self, latency: Duration) -> AppState {
        self.latency = latency;
        self
    }

    fn data(&self, fault: Option<Fault>) -> &Dataset {
        match fault {
            Some(Fault::ManyMalls) => &self.many_malls,
            Some(Fault::BigMall) => &self.big_mall,
            Some(Fault::NoMalls) => &self.no_malls,
            _ => &self.standard,
        }
    }
}

/// The two operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Operation {
    MallList,
    MallProducts,
}

/// An answer that is not the operation's data.
#[derive(Debug)]
struct Failure {
    status: StatusCode,
    code: &'static str,
    msg: String,
}

impl Failure {
    fn new(status: StatusCode, code: &'static str, msg: impl Into<String>) -> Failure {
        Failure {
            status,
            code,
            msg: msg.into(),
        }
    }

    fn bad_request(msg: impl Into<String>) -> Failure {
        Failure::new(StatusCode::BAD_REQUEST, "4000", msg)
    }

    fn unauthorized(msg: impl Into<String>) -> Failure {
        Failure::new(StatusCode::UNAUTHORIZED, "4010", msg)
    }

    fn not_found(msg: impl Into<String>) -> Failure {
        Failure::new(StatusCode::NOT_FOUND, "4040", msg)
    }
}

/// A request being handled: counted in flight until it is answered (or dropped).
struct Handling<'s>(&'s AppState);

impl<'s> Handling<'s> {
    fn enter(state: &'s AppState) -> Handling<'s> {
        let now = state.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        state.max_in_flight.fetch_max(now, Ordering::Relaxed);
        Handling(state)
    }
}

impl Drop for Handling<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What a request asked for and how it is answered.
struct Call {
    fault: Option<Fault>,
    accepts_gzip: bool,
    /// The request, under the echo faults.
    echo: Option<Echo>,
}

/// Answers one request: the one handler of every path, which dispatches on the path itself.
pub(crate) async fn handle(state: Arc<AppState>, req: Request) -> Response {
    if req.method() == Method::GET && req.uri().path() == REQUESTS_PATH {
        let count = state.requests.load(Ordering::Relaxed);
        let most = state.max_in_flight.load(Ordering::Relaxed);
        return http::Response::builder()
            .header(header::CONTENT_TYPE, "application/json")
            .body(body::full(
                json!({ "requests": count, "max_in_flight": most }).to_string(),
            ))
            .unwrap_or_default();
    }
    state.requests.fetch_add(1, Ordering::Relaxed);
    let _handling = Handling::enter(&state);
    if !state.latency.is_zero() {
        tokio::time::sleep(state.latency).await;
    }
    let accepts_gzip = req
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("gzip"));
    let path = req.uri().path().to_string();
    let (fault, rest) = match path.strip_prefix(FAULT_PREFIX) {
        Some(tail) => {
            let (name, rest) = tail.split_at(tail.find('/').unwrap_or(tail.len()));
            match Fault::from_name(name) {
                Some(f) => (Some(f), rest.to_string()),
                None => {
                    let call = Call {
                        fault: None,
                        accepts_gzip,
                        echo: None,
                    };
                    let msg = format!("unknown fault `{name}`");
                    return fail(&state, &call, Failure::not_found(msg));
                }
            }
        }
        None => (state.default_fault, path.clone()),
    };
    if fault == Some(Fault::EchoSignature) {
        return echo_signature(req, &rest).await;
    }
    let (req, echo) = match fault {
        Some(Fault::EchoRequest | Fault::EchoErrorPage) => {
            let (parts, body) = req.into_parts();
            let bytes = body::to_bytes(body, MAX_REQUEST_BYTES)
                .await
                .unwrap_or_default();
            let headers = parts
                .headers
                .iter()
                .map(|(k, v)| {
                    let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
                    (k.as_str().to_string(), value)
                })
                .collect();
            let echo = Echo::new(headers, &bytes);
            (Request::from_parts(parts, body::full(bytes)), Some(echo))
        }
        _ => (req, None),
    };
    let call = Call {
        fault,
        accepts_gzip,
        echo,
    };
    let op = match rest.as_str() {
        MALL_LIST_PATH => Operation::MallList,
        MALL_PRODUCTS_PATH => Operation::MallProducts,
        _ => {
            return fail(
                &state,
                &call,
                Failure::not_found(format!("no operation at {rest}")),
            );
        }
    };
    if req.method() != Method::POST {
        let failure = Failure::new(StatusCode::METHOD_NOT_ALLOWED, "4050", "use POST");
        let mut response = fail(&state, &call, failure);
        // RFC 9110 §15.5.6: a 405 lists the methods the resource supports.
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    match fault {
        Some(Fault::RedirectLoop) => {
            let target = req
                .uri()
                .path_and_query()
                .map_or(path.as_str(), |pq| pq.as_str());
            return wire::redirect(target);
        }
        Some(Fault::RedirectOtherHost) => {
            return wire::redirect(&format!("http://example.invalid{rest}"));
        }
        Some(Fault::RedirectOtherPort) => {
            return wire::redirect(&format!("http://{}{rest}", other_port(req.headers())));
        }
        Some(Fault::RateLimited) => {
            let failure = Failure::new(StatusCode::TOO_MANY_REQUESTS, "4290", "too many requests");
            let mut resp = fail(&state, &call, failure);
            resp.headers_mut()
                .insert(header::RETRY_AFTER, RATE_LIMITED_RETRY_AFTER.into());
            return resp;
        }
        Some(Fault::Http500Html) => return wire::html(StatusCode::INTERNAL_SERVER_ERROR),
        Some(Fault::EchoErrorPage) => return echo_error_page(&call),
        Some(Fault::Html200) => return wire::html(StatusCode::OK),
        Some(Fault::DeepNesting) => return wire::deep_nesting(),
        Some(Fault::HugeBody) => return wire::huge_body(),
        Some(Fault::SlowFirstByte) => wire::pause(&state.shutdown, STALL).await,
        _ => {}
    }
    let (parts, body) = req.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let too_large = || {
        let msg = format!("request body exceeds {MAX_REQUEST_BYTES} bytes or could not be read");
        Failure::new(StatusCode::PAYLOAD_TOO_LARGE, "4130", msg)
    };
    if declared.is_some_and(|n| n > MAX_REQUEST_BYTES as u64) {
        return fail(&state, &call, too_large());
    }
    let Some(bytes) = body::to_bytes(body, MAX_REQUEST_BYTES).await else {
        return fail(&state, &call, too_large());
    };
    if fault.is_some_and(|f| f.crashes_on(&bytes)) {
        return wire::crash_and_close();
    }
    if call.fault == Some(Fault::ProductsDropOneMall)
        && op == Operation::MallProducts
        && names_late_mall(&state, &bytes)
    {
        let mut response = Response::new(body::full(String::new()));
        response
            .extensions_mut()
            .insert(crate::server::conn::DropConnection);
        return response;
    }
    let answered = answer(&state, &call, op, &parts.headers, bytes.clone()).await;
    if call.fault == Some(Fault::AuthRefusalEmptySuccess)
        && let Err(refused) = &answered
        && refused.status == StatusCode::UNAUTHORIZED
    {
        let empty = match op {
            Operation::MallList => {
                json!({"success": true, "code": "0000", "msg": "处理成功", "data": []})
            }
            Operation::MallProducts => json!([]),
        };
        return respond(&state, &call, StatusCode::OK, empty);
    }
    if call.fault == Some(Fault::AuthRefusalThenData)
        && let Err(refused) = &answered
        && refused.status == StatusCode::UNAUTHORIZED
    {
        return refusal_then_data(&state, op, &parts.headers, bytes, refused).await;
    }
    // `ResponseEntity.ok(null)`: a products call answered 200 with no body, when refused or
    // always.
    let empty_200 = match fault {
        Some(Fault::ProductsRefusedEmpty200) => answered.is_err(),
        Some(Fault::ProductsEmpty200) => true,
        _ => false,
    };
    if op == Operation::MallProducts && empty_200 {
        let mut response = Response::new(body::full(String::new()));
        let json = HeaderValue::from_static("application/json");
        response.headers_mut().insert(header::CONTENT_TYPE, json);
        return response;
    }
    match answered {
        Ok(mut value) if call.fault == Some(Fault::CursorTokenInHeader) => {
            let next = value
                .as_object_mut()
                .and_then(|env| env.shift_remove(HEADER_CURSOR));
            let mut response = respond(&state, &call, StatusCode::OK, value);
            if let Some(Value::String(next)) = next {
                add_headers(&mut response, vec![("x-next-cursor".to_string(), next)]);
            }
            response
        }
        Ok(value) => respond(&state, &call, StatusCode::OK, value),
        Err(failure) => fail(&state, &call, failure),
    }
}

/// Whether a products body names the mall of MAIN a one-mall fault breaks
/// ([`data::late_mall`]).
fn names_late_mall(state: &AppState, bytes: &[u8]) -> bool {
    let Ok(body) = serde_json::from_slice::<Value>(bytes) else {
        return false;
    };
    let data = state.data(Some(Fault::ProductsDropOneMall));
    let malls = data.malls_of(MAIN.merchant_id);
    data::late_mall(&malls).is_some_and(|m| {
        body.pointer("/mallID/mallSn").and_then(Value::as_str) == Some(m.mall_sn.as_str())
    })
}

/// The `auth-refusal-then-data` answer: the refusal's JSON, then the answer the request would
/// get were it authenticated (a handler that wrote its error and did not return).
async fn refusal_then_data(
    state: &AppState,
    op: Operation,
    headers: &HeaderMap,
    bytes: Bytes,
    refused: &Failure,
) -> Response {
    let mut text = wire::error_envelope(refused.code, &refused.msg).to_string();
    for lax in [Fault::AuthAnySignature, Fault::AuthIgnored] {
        let call = Call {
            fault: Some(lax),
            accepts_gzip: false,
            echo: None,
        };
        if let Ok(data) = answer(state, &call, op, headers, bytes.clone()).await {
            text.push_str(&data.to_string());
            break;
        }
    }
    let mut response = Response::new(body::full(text));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    let json = HeaderValue::from_static("application/json");
    response.headers_mut().insert(header::CONTENT_TYPE, json);
    response
}

/// Where the `cursor-token-in-header` fault's page keeps its next cursor on its way to the
/// `X-Next-Cursor` header.
const HEADER_CURSOR: &str = "__mallcheck_next_cursor";

/// `Retry-After` of the `rate-limited` fault, in seconds (longer than the default ceiling).
const RATE_LIMITED_RETRY_AFTER: u32 = 30;

/// The request's host with the next port: another origin on the same machine.
fn other_port(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("127.0.0.1:80");
    let (name, port) = host.rsplit_once(':').unwrap_or((host, "80"));
    let port: u16 = port.parse().unwrap_or(80);
    format!("{name}:{}", port.checked_add(1).unwrap_or(port - 1))
}

fn fail(state: &AppState, call: &Call, failure: Failure) -> Response {
    if state.plain_errors && call.echo.is_none() {
        let mut response = Response::new(body::full(format!("{}\n", failure.msg)));
        *response.status_mut() = failure.status;
        let text = HeaderValue::from_static("text/plain; charset=utf-8");
        response.headers_mut().insert(header::CONTENT_TYPE, text);
        return response;
    }
    let code = match call.fault {
        Some(Fault::RefusalSuccessCode) => "0000",
        _ => failure.code,
    };
    let mut body = wire::error_envelope(code, &failure.msg);
    if call.fault == Some(Fault::RefusalCodeNumber)
        && let Ok(number) = code.parse::<u64>()
    {
        body["code"] = Value::from(number);
    }
    respond(state, call, failure.status, body)
}

/// A JSON answer; under `echo-request` it echoes the request in its body and headers.
fn respond(state: &AppState, call: &Call, status: StatusCode, mut value: Value) -> Response {
    if let Some(echo) = &call.echo {
        echo.attach(&mut value);
    }
    let mut response = wire::json_response(
        status,
        &value,
        call.fault,
        call.accepts_gzip,
        &state.shutdown,
    );
    if let Some(echo) = &call.echo {
        add_headers(&mut response, echo.response_headers());
    }
    if call.fault == Some(Fault::HugeHeader) {
        add_headers(
            &mut response,
            vec![("x-padding".to_string(), "p".repeat(HUGE_HEADER_BYTES))],
        );
    }
    response
}

/// The `echo-error-page` answer: HTTP 500 with an HTML page quoting the request.
fn echo_error_page(call: &Call) -> Response {
    let page = call.echo.as_ref().map(Echo::error_page).unwrap_or_default();
    let mut response = Response::new(body::full(page));
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    let html = HeaderValue::from_static("text/html; charset=utf-8");
    response.headers_mut().insert(header::CONTENT_TYPE, html);
    if let Some(echo) = &call.echo {
        add_headers(&mut response, echo.response_headers());
    }
    response
}

/// The `echo-signature` answer: 401 quoting the signature, spelt as the first segment of `rest`
/// says (`/upper/mall/list`; plain when it names no form).
async fn echo_signature(req: Request, rest: &str) -> Response {
    let segment = rest.trim_start_matches('/').split('/').next().unwrap_or("");
    let form = EchoForm::from_name(segment).unwrap_or(EchoForm::Plain);
    let authorization = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    let body = body::to_bytes(req.into_body(), MAX_REQUEST_BYTES)
        .await
        .unwrap_or_default();
    let (content_type, text) = form.refusal(&authorization, &body);
    let mut response = Response::new(body::full(text));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// Appends headers, skipping any that are not valid on the wire.
fn add_headers(response: &mut Response, headers: Vec<(String, String)>) {
    for (k, v) in headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_str(&v),
        ) {
            response.headers_mut().append(name, value);
        }
    }
}

/// Authenticates, validates and answers one call with its JSON data.
async fn answer(
    state: &AppState,
    call: &Call,
    op: Operation,
    headers: &HeaderMap,
    bytes: Bytes,
) -> Result<Value, Failure> {
    let header_appid = authenticate(state, call.fault, op, headers, &bytes).await?;
    let body: Value = serde_json::from_slice(&bytes)
        .map_err(|e| Failure::bad_request(format!("the body is not valid JSON: {e}")))?;
    let appid = request::appid(&body).map_err(Failure::bad_request)?;
    if call.fault != Some(Fault::AuthAppidIgnored)
        && header_appid.is_some_and(|header_appid| header_appid != appid)
    {
        let msg = "the appid of Authorization differs from the body's appid";
        return Err(Failure::unauthorized(msg));
    }
    fuzz_triggers(state, call.fault, &body).await?;
    match op {
        Operation::MallList => {
            let body = match call.fault {
                Some(Fault::FuzzListMerchantOptional) => merchant_dropped(body),
                _ => body,
            };
            let req = request::parse_list(&body).map_err(Failure::bad_request)?;
            if req.count as u64 > state.max_page_size {
                let max = state.max_page_size;
                return Err(Failure::bad_request(format!(
                    "cursor.count must be an integer from 1 to {max}"
                )));
            }
            if call.fault == Some(Fault::PageSizesFrom10) && req.count < 10 {
                return Err(Failure::bad_request(
                    "cursor.count must be 10, 20, 50 or 100",
                ));
            }
            mall_list(state, call.fault, &req)
        }
        Operation::MallProducts => {
            let flags = headers.get_all(request::ENV_FLAG).into_iter();
            request::env_flag(flags.map(|v| v.as_bytes())).map_err(Failure::bad_request)?;
            let body = match call.fault {
                Some(Fault::FuzzProductsSellerOptional) => seller_filled_in(state, body),
                _ => body,
            };
            let req = request::parse_products(&body).map_err(Failure::bad_request)?;
            let flagged = headers.get(request::ENV_FLAG).is_some();
            mall_products(state, call.fault, &req, flagged)
        }
    }
}

/// The `fuzz-products-seller-optional` fault: a products body whose `seller.merchantId` is no
/// string (left out, `null`, an object) gets the owner of the mall it names, as an ORM that
/// drops an undefined filter member would answer: the seller check is skipped.
fn seller_filled_in(state: &AppState, mut body: Value) -> Value {
    if body
        .pointer("/seller/merchantId")
        .is_some_and(Value::is_string)
    {
        return body;
    }
    let owner = body
        .pointer("/mallID/mallSn")
        .and_then(Value::as_str)
        .and_then(|sn| state.data(None).mall_by_sn(sn))
        .map(|m| m.merchant.identity.merchant_id);
    if let (Some(owner), Some(seller)) =
        (owner, body.get_mut("seller").and_then(Value::as_object_mut))
    {
        seller.insert("merchantId".into(), Value::from(owner));
    }
    body
}

/// What the `fuzz-list-merchant-optional` fault lists for a body whose merchant id is no
/// string: every merchant's malls (see [`mall_list`]).
const EVERY_MERCHANT: &str = "*";

/// The `fuzz-list-merchant-optional` fault: a list body whose `filter.seller.merchantId` is no
/// string (left out, `null`, an object) lists every merchant's malls, as an ORM that drops an
/// undefined filter member would answer.
fn merchant_dropped(mut body: Value) -> Value {
    if body
        .pointer("/filter/seller/merchantId")
        .is_some_and(Value::is_string)
    {
        return body;
    }
    if let Some(seller) = body
        .pointer_mut("/filter/seller")
        .and_then(Value::as_object_mut)
    {
        seller.insert("merchantId".into(), Value::from(EVERY_MERCHANT));
    }
    body
}

/// Checks `Authorization: <appid> <signature>` (spec §5): the appid must be the configured one
/// and the signature the signer's over the raw body. Returns the header's appid (none when the
/// `auth-ignored` fault let a request without the header through).
async fn authenticate(
    state: &AppState,
    fault: Option<Fault>,
    op: Operation,
    headers: &HeaderMap,
    bytes: &Bytes,
) -> Result<Option<String>, Failure> {
    // Authentication skipped for some calls: continuation pages of the mall list (a gateway
    // that trusts a cursor), or products calls without the optional X-env-flag.
    let skipped = match fault {
        Some(Fault::AuthSkippedOnContinuation) => {
            op == Operation::MallList
                && serde_json::from_slice::<Value>(bytes)
                    .ok()
                    .and_then(|b| b.pointer("/cursor/endCursor").cloned())
                    .is_some_and(|c| !c.is_null())
        }
        Some(Fault::AuthSkippedWithoutEnvFlag) => {
            op == Operation::MallProducts && headers.get(request::ENV_FLAG).is_none()
        }
        _ => false,
    };
    if skipped {
        return Ok(None);
    }
    let continuation_unverified = matches!(
        fault,
        Some(Fault::AuthContinuationUnsigned | Fault::CursorTokenContinuationUnverified)
    ) && op == Operation::MallList
        && serde_json::from_slice::<Value>(bytes)
            .ok()
            .and_then(|b| b.pointer("/cursor/endCursor").cloned())
            .is_some_and(|c| !c.is_null());
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        if fault == Some(Fault::AuthIgnored) {
            return Ok(None);
        }
        return Err(Failure::unauthorized("the Authorization header is missing"));
    };
    let text = value
        .to_str()
        .map_err(|_| Failure::unauthorized("the Authorization header is not visible ASCII"))?;
    if text.is_empty() && fault == Some(Fault::AuthEmptyHeaderAccepted) {
        return Ok(None);
    }
    let (appid, signature) = match text.split_once(' ') {
        Some(parts) => parts,
        None if fault == Some(Fault::AuthEmptySignatureAccepted) => (text, ""),
        None => {
            return Err(Failure::unauthorized(
                "Authorization must be `<appid> <signature>`",
            ));
        }
    };
    // An appid it has no key for: its signature is not checked at all.
    if fault == Some(Fault::AuthUnknownAppidUnverified) && appid != state.appid {
        return Ok(None);
    }
    if fault != Some(Fault::AuthAppidIgnored) && appid != state.appid {
        return Err(Failure::unauthorized("unknown appid"));
    }
    let unflagged_products = fault == Some(Fault::AuthUnflaggedProductsUnsigned)
        && op == Operation::MallProducts
        && !headers.contains_key("x-env-flag");
    if fault == Some(Fault::AuthAnySignature)
        || continuation_unverified
        || unflagged_products
        || (signature.is_empty() && fault == Some(Fault::AuthEmptySignatureAccepted))
    {
        return Ok(Some(appid.to_string()));
    }
    // The signature-cache faults remember valid signatures: globally, or per operation.
    let cache_key = match fault {
        Some(Fault::AuthSignatureCache) => Some((None, signature.to_string())),
        Some(Fault::AuthSignatureCachePerOperation) => Some((Some(op), signature.to_string())),
        _ => None,
    };
    let seen = |key: &(Option<Operation>, String)| {
        state
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(key)
    };
    if cache_key.as_ref().is_some_and(seen) {
        return Ok(Some(appid.to_string()));
    }
    // The key left out of the check: a signature anyone can compute is accepted too.
    if fault == Some(Fault::AuthUnkeyedSignature)
        && let Some(unkeyed) = state.signer.unkeyed()
        && unkeyed.sign(bytes).await.is_ok_and(|s| s == signature)
    {
        return Ok(Some(appid.to_string()));
    }
    match state.signer.sign(&Fault::signed_bytes(fault, bytes)).await {
        Ok(expected) if expected == signature => {
            if let Some(key) = cache_key {
                let mut seen = state
                    .seen
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if seen.len() >= MAX_SEEN_SIGNATURES {
                    seen.clear();
                }
                seen.insert(key);
            }
            Ok(Some(appid.to_string()))
        }
        // Only the first 8 characters compared: a signature wrong inside is accepted.
        Ok(expected)
            if fault == Some(Fault::AuthSignaturePrefix)
                && expected.len() == signature.len()
                && expected
                    .get(..8)
                    .is_some_and(|head| signature.starts_with(head)) =>
        {
            Ok(Some(appid.to_string()))
        }
        // `given.startsWith(valid)`: anything after the valid signature passes.
        Ok(expected)
            if fault == Some(Fault::AuthSignatureSuffixIgnored)
                && signature.len() > expected.len()
                && signature.starts_with(expected.as_str()) =>
        {
            Ok(Some(appid.to_string()))
        }
        // `valid.startsWith(given)`, the wrong way round: any prefix of the signature passes.
        Ok(expected)
            if fault == Some(Fault::AuthSignatureStartsWith)
                && !signature.is_empty()
                && expected.starts_with(signature) =>
        {
            Ok(Some(appid.to_string()))
        }
        Ok(expected) if fault == Some(Fault::EchoExpectedSignature) => Err(Failure::unauthorized(
            format!("signature mismatch: expected {expected}"),
        )),
        Ok(_) => Err(Failure::unauthorized(
            "the signature does not match the body",
        )),
        Err(_) => Err(Failure::unauthorized("the signature could not be verified")),
    }
}

/// The narrow-trigger faults only the fuzzer is expected to find.
async fn fuzz_triggers(
    state: &AppState,
    fault: Option<Fault>,
    body: &Value,
) -> Result<(), Failure> {
    let seller_field = |key: &str| {
        body.pointer(&format!("/filter/seller/{key}"))
            .or_else(|| body.pointer(&format!("/seller/{key}")))
            .and_then(Value::as_str)
    };
    let server_error = match fault {
        Some(Fault::FuzzCountOver80) => {
            let count = body.pointer("/cursor/count").and_then(Value::as_f64);
            count.is_some_and(|c| c > 80.0)
        }
        Some(Fault::FuzzUserIdSpace) => {
            seller_field("merchantUserId").is_some_and(|u| u.contains(' '))
        }
        Some(Fault::FuzzEmptyRole) => seller_field("role") == Some(""),
        Some(Fault::FuzzCursorQuote) => body
            .pointer("/cursor/endCursor")
            .and_then(Value::as_str)
            .is_some_and(|c| c.contains('\'')),
        _ => false,
    };
    if server_error {
        return Err(Failure::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "5000",
            "系统异常",
        ));
    }
    if fault == Some(Fault::FuzzEmptyCursorHang)
        && body.pointer("/cursor/endCursor").and_then(Value::as_str) == Some("")
    {
        wire::pause(&state.shutdown, FUZZ_HANG).await;
    }
    Ok(())
}

/// Strips the letter prefix the `mall-sn-not-digits` fault adds, so its cursors still work.
fn real_mall_sn(fault: Option<Fault>, sn: &str) -> String {
    match fault {
        Some(Fault::MallSnNotDigits) => sn.strip_prefix(MALL_SN_PREFIX).unwrap_or(sn).to_string(),
        _ => sn.to_string(),
    }
}

/// The mall list (spec §4.1): one page of the merchant's malls in the success envelope.
fn mall_list(state: &AppState, fault: Option<Fault>, req: &ListRequest) -> Result<Value, Failure> {
    let data = state.data(fault);
    let merchant_id = req.seller.merchant_id.as_str();
    let mut listing = data.malls_of(merchant_id);
    if (fault == Some(Fault::FuzzListMerchantOptional) && merchant_id == EVERY_MERCHANT)
        || (fault == Some(Fault::FuzzListMerchantLike) && merchant_id == "%")
    {
        listing = data.malls().iter().collect();
        listing.sort_by_key(|m| Reverse(m.id));
    }
    let mut relabel = false;
    match fault {
        Some(Fault::OwnershipForeignMall) if merchant_id == MAIN.merchant_id => {
            listing.extend(data.malls_of(OTHER.merchant_id).first());
            listing.sort_by_key(|m| Reverse(m.id));
        }
        Some(Fault::OwnershipUnknownMerchant) if !data.is_known_merchant(merchant_id) => {
            listing = data.malls_of(SINGLE.merchant_id);
            relabel = true;
        }
        Some(Fault::PagingUnstableOrder) => pages::unstable_order(&mut listing, req.count),
        Some(f @ (Fault::FirstCallForeign | Fault::FirstCallEmpty))
            if merchant_id == MAIN.merchant_id
                && req.end_cursor.is_none()
                && state
                    .first_calls
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(f) =>
        {
            listing = match f {
                Fault::FirstCallForeign => data.malls_of(OTHER.merchant_id),
                _ => Vec::new(),
            };
        }
        _ => {}
    }
    // A cursor of the service's own: `tk-` and a mall's number, given in the envelope.
    let tokens = matches!(
        fault,
        Some(
            Fault::CursorTokenInEnvelope
                | Fault::CursorTokenInHeader
                | Fault::CursorTokenContinuationUnverified
        )
    );
    let cursor = match req.end_cursor.as_deref() {
        Some(c) if tokens => Some(c.strip_prefix("tk-").map(str::to_string).ok_or_else(|| {
            Failure::bad_request("cursor.endCursor is not a cursor this service gave")
        })?),
        c => c.map(|c| real_mall_sn(fault, c)),
    };
    // A cursor read as a place in every merchant's malls, not in the requested list: the page
    // continues the list of the merchant that owns the cursor mall.
    if fault == Some(Fault::PagingCursorAnyMerchant)
        && let Some(owner) = cursor.as_deref().and_then(|sn| data.mall_by_sn(sn))
    {
        listing = data.malls_of(owner.merchant.identity.merchant_id);
    }
    let call = state.calls.fetch_add(1, Ordering::Relaxed);
    let count = match fault {
        Some(Fault::PageCap20) => req.count.min(20),
        _ => req.count,
    };
    let mut page = pages::select(&listing, cursor.as_deref(), count, fault, call).map_err(
        |UnknownCursor| Failure::not_found("cursor.endCursor names no mall of this list"),
    )?;
    // The page past the end of the list (after its last mall) answered as a failure, "no more
    // data", as many platforms end a list.
    if fault == Some(Fault::ListEndFailure) && cursor.is_some() && page.is_empty() {
        return Err(Failure::new(StatusCode::OK, "2001", "没有更多数据"));
    }
    if fault == Some(Fault::ListEndNotFound) && cursor.is_some() && page.is_empty() {
        return Err(Failure::new(StatusCode::NOT_FOUND, "2001", "没有更多数据"));
    }
    // The last page of the list, exactly full, loses its last mall (an off-by-one in a "more
    // follow" test that fetches count + 1).
    if fault == Some(Fault::PagingLastFullPageShort)
        && count > 1
        && page.len() == count
        && page
            .last()
            .is_some_and(|last| listing.last().is_some_and(|end| end.id == last.id))
    {
        page.pop();
    }
    let records: Vec<Value> = page
        .into_iter()
        .map(|mall| {
            let mut record = data::mall_record(mall);
            if let Some(map) = record.as_object_mut() {
                if let Some(f) = fault {
                    f.mutate_mall(map);
                }
                if relabel && let Some(Value::Object(seller)) = map.get_mut("seller") {
                    seller.insert("merchantId".into(), json!(merchant_id));
                }
                // A read that moves a mall: every other call shows the newest mall online if
                // it was not, else offline.
                if fault == Some(Fault::MallStateFlips)
                    && call % 2 == 1
                    && listing.first().is_some_and(|first| first.id == mall.id)
                {
                    let online = map.get("state") == Some(&json!(1));
                    let (state, desc) = if online {
                        (2, "已下线")
                    } else {
                        (1, "已上线")
                    };
                    map.insert("state".into(), json!(state));
                    map.insert("stateDesc".into(), json!(desc));
                }
                if fault == Some(Fault::MallCtimeDrifts)
                    && call % 2 == 1
                    && listing.first().is_some_and(|first| first.id == mall.id)
                {
                    map.insert("ctime".into(), json!("2019-07-01 00:00:00"));
                }
                // Reads that change another field of the newest mall: its cross-city
                // status activated, a tag added, its edition bumped.
                if call % 2 == 1 && listing.first().is_some_and(|first| first.id == mall.id) {
                    match fault {
                        Some(Fault::MallCrossCityActivatedOnRead) => {
                            map.insert("crossCityPaymentStatus".into(), json!(1));
                            map.insert("crossCityPaymentStatusDesc".into(), json!("已开通"));
                        }
                        Some(Fault::MallTagAddedOnRead) => {
                            if let Some(Value::Array(tags)) = map.get_mut("tags") {
                                tags.push(json!("visited"));
                            }
                        }
                        Some(Fault::MallEditionBumpedOnRead) => {
                            let edition = map.get("edition").and_then(Value::as_i64).unwrap_or(0);
                            map.insert("edition".into(), json!(edition + 1));
                        }
                        _ => {}
                    }
                }
                // Unknown fields that differ on every read (a trace id), in the mall, its
                // seller and its payments: tolerated, and no change of the mall.
                if fault == Some(Fault::ExtraFields) {
                    map.insert("traceId".into(), json!(format!("{call:016x}")));
                    if let Some(Value::Object(seller)) = map.get_mut("seller") {
                        seller.insert("readNo".into(), json!(call));
                    }
                    if let Some(Value::Array(payments)) = map.get_mut("crossCityPayments") {
                        for p in payments.iter_mut().filter_map(Value::as_object_mut) {
                            p.insert("readNo".into(), json!(call));
                        }
                    }
                }
                if fault == Some(Fault::MallPinnedOnRead)
                    && call % 2 == 1
                    && listing.first().is_some_and(|first| first.id == mall.id)
                {
                    let pinned = map.get("topTime").is_some_and(|t| !t.is_null());
                    let time = if pinned {
                        Value::Null
                    } else {
                        json!("2026-11-28 10:00:00")
                    };
                    map.insert("topTime".into(), time);
                }
            }
            record
        })
        .collect();
    let mut records = records;
    if fault == Some(Fault::FuzzPageOver100RepeatsAMall)
        && count > 100
        && let Some(first) = records.first().cloned()
    {
        records.push(first);
    }
    let next = (tokens && records.len() >= count)
        .then(|| {
            records
                .last()?
                .get("mallSn")?
                .as_str()
                .map(|sn| format!("tk-{sn}"))
        })
        .flatten();
    let mut env = envelope(fault, Value::Array(records));
    if fault == Some(Fault::CursorTokenInHeader) {
        // Moved into a response header by [`handle`].
        env[HEADER_CURSOR] = json!(next);
    } else if tokens {
        env["endCursor"] = json!(next);
    }
    Ok(env)
}

/// The success envelope of the mall list, with the envelope faults applied.
fn envelope(fault: Option<Fault>, data: Value) -> Value {
    let mut env = json!({"success": true, "code": "0000", "msg": "处理成功", "data": data});
    match fault {
        Some(Fault::EnvelopeSuccessWithErrorCode) => env["code"] = json!("9999"),
        Some(Fault::EnvelopeFailureWithData) => {
            env["success"] = json!(false);
            env["code"] = json!("5001");
            env["msg"] = json!("系统繁忙，请稍后重试");
        }
        Some(Fault::EnvelopeCodeMissing) => {
            if let Some(map) = env.as_object_mut() {
                map.shift_remove("code");
            }
        }
        Some(Fault::EnvelopeDataNotArray) => env["data"] = json!({"list": env["data"].take()}),
        Some(Fault::ExtraFields) => {
            env["traceId"] = json!("0af7651916cd43dd8448eb211c80319c");
            env["timestamp"] = json!(1_700_000_000_000_u64);
        }
        _ => {}
    }
    env
}

/// The mall products (spec §4.2): a bare array, numeric spuId descending.
fn mall_products(
    state: &AppState,
    fault: Option<Fault>,
    req: &ProductsRequest,
    env_flagged: bool,
) -> Result<Value, Failure> {
    let data = state.data(fault);
    let sn = real_mall_sn(fault, &req.mall_sn);
    let not_found = || Failure::not_found("no such mall for this seller");
    let mall = match fault {
        Some(Fault::ProductsFoundBySignature) => data
            .malls()
            .iter()
            .find(|m| m.signature == req.signature)
            .ok_or_else(not_found)?,
        _ => data.mall_by_sn(&sn).ok_or_else(not_found)?,
    };
    let unchecked = fault == Some(Fault::ProductsSignatureIgnored)
        || (fault == Some(Fault::ProductsSignatureOfAnyMall)
            && data.malls().iter().any(|m| {
                m.merchant.identity.merchant_id == mall.merchant.identity.merchant_id
                    && m.signature == req.signature
            }))
        || (fault == Some(Fault::ProductsEmptySignature) && req.signature.is_empty())
        || (fault == Some(Fault::ProductsSignaturePrefix)
            && !req.signature.is_empty()
            && mall.signature.starts_with(&req.signature));
    if !unchecked && mall.signature != req.signature {
        return Err(not_found());
    }
    if fault != Some(Fault::ProductsSellerIgnored) && !owns(&req.seller, mall) {
        return Err(not_found());
    }
    let source = match fault {
        Some(Fault::ProductsSameForEveryMall) => data
            .malls_of(MAIN.merchant_id)
            .into_iter()
            .find(|m| m.product_count > 0)
            .unwrap_or(mall),
        _ => mall,
    };
    // Every other read of a mall's products loses their SKUs (a lazy relation not loaded
    // when the products come from a cache).
    let mut skus_dropped = false;
    if fault == Some(Fault::ProductsSkusDroppedOnReread) {
        let mut reads = state
            .product_reads
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = reads.entry(mall.mall_sn.clone()).or_default();
        *n += 1;
        skus_dropped = n.is_multiple_of(2);
    }
    if fault == Some(Fault::ProductsEmptyEveryOtherRead) {
        let mut reads = state
            .product_reads
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = reads.entry(mall.mall_sn.clone()).or_default();
        *n += 1;
        if n.is_multiple_of(2) {
            return Ok(json!([]));
        }
    }
    let mut products = data::products(source);
    if skus_dropped {
        for p in products.iter_mut().filter_map(Value::as_object_mut) {
            p.insert("skuResults".into(), json!([]));
        }
    }
    if let Some(f) = fault {
        for p in products.iter_mut().filter_map(Value::as_object_mut) {
            f.mutate_product(p);
        }
    }
    if fault == Some(Fault::ProductsSkusOfTheFirst)
        && let Some(first) = products.first().and_then(|p| p.get("skuResults")).cloned()
    {
        for p in products.iter_mut().filter_map(Value::as_object_mut) {
            p.insert("skuResults".into(), first.clone());
        }
    }
    // The catalogue of the environment `X-env-flag` names holds one more product.
    if fault == Some(Fault::ProductsEnvFlagCatalogue)
        && env_flagged
        && let Some(Value::Object(mut extra)) = products.first().cloned()
    {
        let spu = extra.get("spuId").and_then(Value::as_str).unwrap_or("1");
        extra.insert("spuId".into(), json!(format!("9{spu}")));
        if let Some(Value::Array(skus)) = extra.get_mut("skuResults") {
            for sku in skus.iter_mut().filter_map(Value::as_object_mut) {
                let id = sku.get("skuId").and_then(Value::as_str).unwrap_or("1");
                sku.insert("skuId".into(), json!(format!("9{id}")));
            }
        }
        products.insert(0, Value::Object(extra));
    }
    if fault == Some(Fault::ProductsDuplicateSpu)
        && let Some(first) = products.first().cloned()
    {
        products.push(first);
    }
    if fault == Some(Fault::ProductsAscending) {
        products.reverse();
    }
    if fault == Some(Fault::NoProducts) {
        products.clear();
    }
    if fault == Some(Fault::SkuPriceStringInOneMall)
        && data::late_mall(&data.malls_of(MAIN.merchant_id)).is_some_and(|m| m.seq == mall.seq)
        && let Some(price) = products
            .first_mut()
            .and_then(|p| p.pointer_mut("/skuResults/0/price"))
    {
        *price = json!(price.to_string());
    }
    let list = Value::Array(products);
    Ok(match fault {
        Some(Fault::ProductsEnveloped) => {
            json!({"success": true, "code": "0000", "msg": "处理成功", "data": list})
        }
        _ => list,
    })
}

fn owns(seller: &SellerIdentity, mall: &MallSeed) -> bool {
    seller.merchant_id == mall.merchant.identity.merchant_id
}
