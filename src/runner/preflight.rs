//! The preflight: one known-good signed request (the first mall-list page of the configured
//! merchant) sent before the suite. When the service refuses it, cannot be reached or does not
//! speak the interface at that path, the run stops with one case named `preflight` whose finding
//! names the likely causes, instead of a wall of identical failures.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::Value;

use crate::service::client::{Client, Response, Sent};
use crate::service::lazy_json::{LazyJson, TopMembers};
use crate::spec::catalog;
use crate::spec::schemas::SchemaSet;
use crate::spec::wire::Digest;
use crate::verdict::endpoint::{AuthMode, Endpoint};
use crate::verdict::event::{CaseId, CaseResult, Finding, Outcome, RunSummary};
use crate::verdict::exchange::Exchange;

pub use crate::verdict::event::{DISCOVERY_CASE, PREFLIGHT_CASE};

/// Why the preflight stopped the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// No HTTP answer (refused, DNS, TLS, reset, timeout).
    Unreachable,
    /// An HTTP answer that refuses the signed request (401/403 or an auth failure envelope).
    Refused,
    /// An answer that is not the interface (404/405, a redirect, an HTML page).
    WrongPath,
    /// The configured signer gave no signature (the sign command failed), so nothing was sent.
    Signer,
    /// An answer that breaks the contract (a 5xx, a body that is not JSON or not HTTP, a body
    /// that stalls): the run fails on it, rather than go on without it.
    Broken,
}

/// A preflight that stopped the run: the one message and the case result for the reports.
#[derive(Debug)]
pub struct Stopped {
    /// Which kind of stop.
    pub stop: Stop,
    /// The message for the console (several lines, no secret).
    pub message: String,
    /// The `preflight` case for the reports (outcome Error, or Fail for a broken answer).
    pub result: CaseResult,
}

/// Words of a failure message or code that say the call was not authenticated.
const AUTH_WORDS: &[&str] = &[
    "sign",
    "auth",
    "appid",
    "app id",
    "forbidden",
    "permission",
    "credential",
    "token",
    "签名",
    "认证",
    "鉴权",
    "授权",
    "权限",
];

/// Sends the first mall-list page; `Ok` lets the suite run, saying whether that page listed no
/// mall (an empty merchant, or a mistyped merchant id, which the run must not call tested).
pub async fn check(
    client: &Client,
    body: &Value,
    schemas: &SchemaSet,
    signer: &str,
    appid: &str,
) -> Result<Accepted, Box<Stopped>> {
    let started = Instant::now();
    let (sent, retried) = crate::service::politeness::counting_retries(client.send_json(
        Endpoint::MallList,
        body,
        &AuthMode::Signed,
        &[],
    ))
    .await;
    let url = format!("{}{}", client.base_url(), Endpoint::MallList.path());
    let Some((stop, finding)) = judge(&sent, &url) else {
        let lists_no_mall = lists_no_mall(&sent);
        let malls = sent
            .result
            .as_ref()
            .map(|r| crate::runner::paging::page_states(&r.json))
            .unwrap_or_default();
        let findings = match &sent.result {
            Ok(response) => page_findings(response, body, schemas),
            Err(_) => Vec::new(),
        };
        let broken = (!findings.is_empty())
            .then(|| result_of(PREFLIGHT_CASE, findings, vec![sent.exchange], started));
        return Ok(Accepted {
            lists_no_mall,
            malls,
            broken,
            retried,
        });
    };
    let mut causes = causes(stop, client.base_url(), signer, appid);
    if stop == Stop::Unreachable && finding.actual.contains("(NotValidForName)") {
        causes.insert(0, "the service's TLS certificate is issued for another host name: use the host name it is issued for in the base URL (a trusted CA does not make it valid for another name)".to_string());
    } else if stop == Stop::Unreachable && is_certificate_problem(&finding.actual) {
        causes.insert(0, "the service's TLS certificate is not trusted on this machine (self-signed, or issued by a private CA): pass --cacert FILE with that CA (PEM), add it to the system trust store, or point SSL_CERT_FILE at a PEM bundle holding it".to_string());
    }
    let mut finding = finding.with_detail(format!("likely causes: {}", causes.join("; ")));
    // The message quotes the service: it is cut only once scrubbed.
    finding.seal(client.redactor());
    let mut message = format!(
        "preflight failed: {}\nthe suite did not run. Likely causes:\n",
        headline(stop, &url, &finding)
    );
    for c in &causes {
        message.push_str(&format!("  - {c}\n"));
    }
    message.push_str("fix the setting, or pass --no-preflight to run the suite anyway");
    let Sent { exchange, .. } = sent;
    Err(Box::new(Stopped {
        stop,
        message,
        result: result(finding, exchange, started),
    }))
}

/// What an accepted first page showed.
#[derive(Debug, Default)]
pub struct Accepted {
    /// A success whose `data` is empty or null.
    pub lists_no_mall: bool,
    /// The identity and state of each mall it listed (`mall.read-only`).
    pub malls: crate::runner::paging::PageStates,
    /// The `preflight` case (outcome Fail) when the page breaks the contract: the suite still
    /// runs, and the run fails.
    pub broken: Option<CaseResult>,
    /// Transport retries (`--retries`) it took: a first page answered only when sent again
    /// is said, as a case that passed so is flaky.
    pub retried: u32,
}

/// The largest preflight answer whose tree the page checks build (a first page of 10 malls is
/// a few KiB).
const WHOLE_PAGE_BYTES: usize = 4 << 20;

/// The contract checks of a first mall-list page on the preflight's accepted answer: it is a
/// page like any other (its schema, at most `cursor.count` malls, each once, each of the
/// requested merchant). A service that breaks the contract only on its first call (a warm-up
/// cache that answers it with another merchant's malls, or with more than asked for) would
/// otherwise pass, since no case sees that answer.
fn page_findings(response: &Response, body: &Value, schemas: &SchemaSet) -> Vec<Finding> {
    if !response.json.success_is_true() {
        return Vec::new();
    }
    let count = body.pointer("/cursor/count").and_then(Value::as_u64);
    // A first page far larger than a page of its size is read whole by no check here: its size
    // is its finding (the cases read such pages record by record, within their bounds).
    if response.body.len() > WHOLE_PAGE_BYTES {
        return crate::fuzz::properties::page_size(response, count)
            .into_iter()
            .collect();
    }
    let mut findings = crate::fuzz::properties::page_contract(response, count, schemas);
    if let Some(merchant) = crate::checks::ownership::requested_merchant(body)
        && !crate::checks::conforming::all_malls_of(response.json.digest(), merchant)
    {
        findings.extend(crate::checks::ownership::merchant(
            response.json.value(),
            merchant,
        ));
    }
    findings
}

/// Whether an accepted first page lists no mall: a success whose `data` is empty or null.
fn lists_no_mall(sent: &Sent) -> bool {
    let Ok(response) = &sent.result else {
        return false;
    };
    match response.json.digest() {
        Some(Digest::Envelope(e)) => e.success && e.malls.as_ref().is_none_or(Vec::is_empty),
        Some(Digest::Products(_)) => false,
        None => {
            response.json.top("success") == Some(&Value::Bool(true))
                && response
                    .json
                    .get("data")
                    .is_none_or(|d| d.is_null() || d.as_array().is_some_and(Vec::is_empty))
        }
    }
}

/// What the run saw of the configured merchant's malls, and whether the user expects none.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmptyMerchant {
    /// The merchant listed no mall (discovery found none, or a walk or sweep listed none).
    pub seen: bool,
    /// Every products call of the merchant's malls (one at least) answered an empty list.
    pub no_products: bool,
    /// `--allow-empty-merchant` (profile key `allow_empty_merchant`): an empty merchant is
    /// expected, and a run that covered only what an empty merchant allows may pass.
    pub allowed: bool,
    /// No signed request of the run was answered a success (a 2xx success envelope or a
    /// products array): every refusal it saw would come from a service that refuses all.
    pub unserved: bool,
    /// No products call of the merchant's malls was answered (a selection without one).
    pub no_products_call: bool,
}

/// Whether a finished run must not pass because it could not test what it exists for, and if
/// so the console message and the `discovery` case (outcome Error, exit 3) for the reports.
/// `failure` is [`Discovery::failure`](crate::service::discover::Discovery::failure).
///
/// Only a run that would otherwise pass is concerned. A service that could not be reached or
/// did not answer the first page with a success could not be tested, whatever else passed
/// (with `--no-preflight` nothing else may have looked at it). A merchant that lists no mall
/// leaves the mall and products checks nothing to check: the run does not pass unless the
/// user said an empty merchant is expected. A run whose every case was skipped tested nothing.
pub fn discovery_stop(
    failure: Option<(&str, bool)>,
    empty: EmptyMerchant,
    summary: &RunSummary,
) -> Option<(String, CaseResult)> {
    if matches!(summary.outcome(), Outcome::Fail | Outcome::Error) {
        // The run fails already; the skip reasons say why those cases did not run.
        return None;
    }
    let nothing_ran = summary.total() > 0 && summary.skipped == summary.total();
    let service = failure.is_some_and(|(_, service)| service);
    let empty_merchant = empty.seen || failure.is_some_and(|(_, service)| !service);
    let (headline, reason, hint) = if service {
        (
            "the service failed the discovery of a mall to target (it could not be tested)",
            failure.map_or(String::new(), |(r, _)| r.to_string()),
            "",
        )
    } else if empty_merchant && !empty.allowed {
        (
            "nothing covered: no mall record or products call was checked",
            "the configured merchant lists no mall".to_string(),
            EMPTY_MERCHANT_HINT,
        )
    } else if empty.no_products && !empty.allowed {
        (
            "nothing covered: no product or SKU record was checked",
            "every products call of the merchant's malls answered an empty list".to_string(),
            NO_PRODUCTS_HINT,
        )
    } else if nothing_ran && !empty_merchant {
        (
            "no case ran",
            "every selected case was skipped".to_string(),
            "see the skip reason of each case",
        )
    } else if empty.unserved {
        (
            "nothing showed the service serves a signed request (it could not be tested)",
            "no signed request of the run was answered a success: the refusals it passed \
             would pass against a service that refuses everything"
                .to_string(),
            "run the preflight (without --no-preflight) or select a case that sends a valid \
             signed request",
        )
    } else {
        return None;
    };
    let skipped = match summary.skipped {
        0 => String::new(),
        1 => "1 case was skipped".to_string(),
        n => format!("{n} cases were skipped"),
    };
    let detail = [skipped.as_str(), hint]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    // The service that failed discovery is the preflight's; a run that covered nothing is the
    // run's own could-not-test.
    let (check, expected) = if service {
        (
            &catalog::PREFLIGHT,
            "a mall of the configured merchant to test, from its mall list",
        )
    } else {
        (
            &catalog::HARNESS_COVERAGE,
            "a run that tested something: a signed request served, and records checked",
        )
    };
    let finding = Finding::new(check, "", expected, reason.clone()).with_detail(detail.clone());
    let message = format!("{headline}: {reason}\n  {detail}");
    Some((
        message,
        result_named(DISCOVERY_CASE, finding, vec![], Instant::now()),
    ))
}

/// The `discovery` case (outcome Fail) of a run that read the configured merchant's list
/// with malls once and with none another time (see
/// [`Discovery::lists_two_ways`](crate::service::discover::Discovery::lists_two_ways)).
pub fn two_ways_case() -> CaseResult {
    let finding = Finding::new(
        &catalog::PAGING_REPEATABLE,
        "/data",
        "the configured merchant's mall list the same on every read (§1: both operations only \
         read)",
        "one read of the list gave malls and another gave none",
    )
    .with_detail(
        "the preflight's first page, the discovery of a mall to target, the walks and the \
         products sweep each read the list; a cache that answers its first call empty, or a \
         read that removes what it returns, answers so",
    );
    result_named(DISCOVERY_CASE, finding, vec![], Instant::now())
}

/// The `discovery` case and message of a fuzz run whose configured merchant lists no mall
/// (and no mall was named): what the fuzzer would send to the products operation has no real
/// mall, and nothing it gets back could show another merchant's data. Exit 3 unless expected.
pub fn empty_merchant_stop() -> (String, CaseResult) {
    let finding = Finding::new(
        &catalog::PREFLIGHT,
        "",
        "a mall of the configured merchant to test, from its mall list",
        "the configured merchant lists no mall",
    )
    .with_detail(EMPTY_MERCHANT_HINT);
    let message =
        format!("nothing covered: the configured merchant lists no mall\n  {EMPTY_MERCHANT_HINT}");
    (
        message,
        result_named(DISCOVERY_CASE, finding, vec![], Instant::now()),
    )
}

/// The `discovery` case and message of a fuzz run whose preflight and discovery of malls
/// outlasted `--max-time`: nothing was fuzzed (exit 3).
pub fn out_of_time(max_time: std::time::Duration) -> (String, CaseResult) {
    let finding = Finding::new(
        &catalog::PREFLIGHT,
        "",
        format!(
            "the preflight and the discovery of malls within --max-time ({} s)",
            max_time.as_secs()
        ),
        "still waiting for the service when the time ran out",
    )
    .with_detail("the service answers slowly (see --timeout), or --max-time is too short");
    let message = format!(
        "the preflight and the discovery of malls took longer than --max-time ({} s): nothing was fuzzed",
        max_time.as_secs()
    );
    (
        message,
        result_named(DISCOVERY_CASE, finding, vec![], Instant::now()),
    )
}

/// What to check when the configured merchant lists no mall.
const EMPTY_MERCHANT_HINT: &str = "if the merchant should have malls, check \
     MALLCHECK_MERCHANT_ID (and MALLCHECK_MERCHANT_USER_ID) or name a mall with \
     MALLCHECK_MALL_SN and MALLCHECK_MALL_SIGNATURE; if an empty merchant is expected, pass \
     --allow-empty-merchant (profile key allow_empty_merchant = true)";

/// What to check when every products call answered an empty list.
const NO_PRODUCTS_HINT: &str = "if the malls should have products, check the merchant \
     (MALLCHECK_MERCHANT_ID, MALLCHECK_MERCHANT_USER_ID) and the products operation; if malls \
     without products are expected, pass --allow-empty-merchant (profile key \
     allow_empty_merchant = true)";

/// A note for a run that passes although the configured merchant lists no mall (or its malls
/// no product), because the user said that is expected: the log still says what was not
/// covered.
pub fn discovery_note(empty: EmptyMerchant, summary: &RunSummary) -> Option<String> {
    // A selection (`--filter`, a case file of its own) tests what it selects, as nextest
    // runs what it is given; a pass without any products record says so, so that a gate
    // built on it is not taken for the whole contract.
    let passed = !matches!(summary.outcome(), Outcome::Fail | Outcome::Error);
    if passed && !empty.seen && empty.no_products_call && summary.total() > summary.skipped {
        return Some(
            "no case of this run called the products operation of a listed mall: no product \
             or SKU record was checked (the shipped suite checks them)"
                .to_string(),
        );
    }
    if !empty.allowed {
        return None;
    }
    if !empty.seen && empty.no_products {
        return Some(
            "every products call answered an empty list (expected: --allow-empty-merchant): no \
             product or SKU record was checked"
                .to_string(),
        );
    }
    if !empty.seen {
        return None;
    }
    let skipped = match summary.skipped {
        0 => String::new(),
        1 => ", and 1 case needing one was skipped".to_string(),
        n => format!(", and {n} cases needing one were skipped"),
    };
    Some(format!(
        "the configured merchant lists no mall (expected: --allow-empty-merchant): no mall record \
         or products call was checked{skipped}"
    ))
}

fn result(finding: Finding, exchange: Exchange, started: Instant) -> CaseResult {
    result_named(PREFLIGHT_CASE, finding, vec![exchange], started)
}

fn result_named(
    name: &str,
    finding: Finding,
    exchanges: Vec<Exchange>,
    started: Instant,
) -> CaseResult {
    result_of(name, vec![finding], exchanges, started)
}

fn result_of(
    name: &str,
    findings: Vec<Finding>,
    exchanges: Vec<Exchange>,
    started: Instant,
) -> CaseResult {
    // A refusal, no connection or a failed signer could not test the service (Error); an
    // answer that is broken (a redirect, not JSON, too slow) fails (Fail).
    let outcome = Outcome::of(&findings, false);
    CaseResult {
        id: CaseId {
            file: PathBuf::from(name),
            name: name.to_string(),
            endpoint: Endpoint::MallList.name().to_string(),
            index: 0,
            line: None,
        },
        outcome,
        findings,
        omitted: vec![],
        coverage: vec![],
        exchanges,
        skip_reason: None,
        flaky: false,
        duration: started.elapsed(),
    }
}

/// Whether a transport error says the TLS handshake rejected the service's certificate.
fn is_certificate_problem(error: &str) -> bool {
    let e = error.to_ascii_lowercase();
    [
        "certificate",
        "unknownissuer",
        "unknown issuer",
        "badsignature",
        "notvalidforname",
    ]
    .iter()
    .any(|w| e.contains(w))
}

fn headline(stop: Stop, url: &str, f: &Finding) -> String {
    match stop {
        Stop::Unreachable => format!("cannot reach {url}: {}", f.actual),
        Stop::Refused => format!(
            "the service refused a signed first mall-list page of the configured merchant ({})",
            f.actual
        ),
        Stop::WrongPath => format!("{url} does not answer as the interface: {}", f.actual),
        Stop::Signer => format!("the signer gave no signature: {}", f.actual),
        Stop::Broken => format!(
            "the service answered a signed first mall-list page of the configured merchant with a broken answer: {}",
            f.actual
        ),
    }
}

fn causes(stop: Stop, base_url: &str, signer: &str, appid: &str) -> Vec<String> {
    match stop {
        Stop::Unreachable => vec![
            format!("the host or port of the base URL {base_url} is wrong, or nothing listens there"),
            "the scheme is wrong (http:// against a TLS port, or https:// against plain HTTP)".to_string(),
            "a proxy or firewall is in the way, or the proxy is wrong (--proxy URL, or curl's http_proxy / HTTPS_PROXY / NO_PROXY; a loopback host is never proxied by them)".to_string(),
            "the service answers more slowly than --timeout".to_string(),
        ],
        Stop::Refused => vec![
            "the signing key (MALLCHECK_SIGN_KEY or --sign-key-file) is not the one the service expects".to_string(),
            format!("the signer `{signer}` is not the service's scheme (--signer md5|hmac-sha256|static|command)"),
            format!("the appid `{appid}` is not registered with the service, or the merchant ids do not belong to it"),
            format!("the base URL {base_url} (or its path prefix) points at another deployment"),
        ],
        Stop::WrongPath => vec![
            format!("the base URL {base_url} is wrong, or misses (or repeats) a path prefix: mallcheck appends {}", Endpoint::MallList.path()),
            "a gateway or web server answers in place of the service at that path".to_string(),
        ],
        Stop::Signer => vec![
            format!("the sign command (MALLCHECK_SIGN_COMMAND, signer `{signer}`) exits non-zero, prints no signature or runs past --timeout: run it by hand with a request body on its stdin"),
            "a program or file the command needs is missing on this machine (PATH, working directory)".to_string(),
        ],
        Stop::Broken => vec![
            "the service fails on a valid signed request: the answer breaks the contract (see the finding)".to_string(),
            "a gateway or proxy in front of the service answers in its place, or cuts or changes its answers".to_string(),
        ],
    }
}

/// Decides whether the answer stops the run, and with which finding.
fn judge(sent: &Sent, url: &str) -> Option<(Stop, Finding)> {
    let status = sent.exchange.response.as_ref().map(|r| r.status);
    let response = match &sent.result {
        Ok(r) => r,
        Err(f) => {
            let f = (**f).clone();
            let id = f.check.id;
            let wrong_path = id == catalog::TRANSPORT_REDIRECT.id
                || (id == catalog::RESPONSE_JSON.id && is_html(sent))
                || matches!(status, Some(404 | 405));
            return if id == catalog::HARNESS_SIGNER.id {
                Some((Stop::Signer, f))
            } else if (id == catalog::TRANSPORT_CONNECT.id || id == catalog::TRANSPORT_TIMEOUT.id)
                // A proxy's 407 is an answer that never reached the service.
                && (status.is_none() || status == Some(407))
            {
                Some((Stop::Unreachable, f))
            } else if wrong_path {
                Some((Stop::WrongPath, f))
            } else if id == catalog::TRANSPORT_RATE_LIMITED.id
                || id == catalog::RESPONSE_TREE_SIZE.id
            {
                // Errors of the run, not of the answer: the suite meets them in its own cases.
                None
            } else {
                // Any other finding on the answer (a body that stalls after the status line,
                // not JSON, not HTTP, too large, a 5xx) is a broken answer the run must not
                // leave behind: a suite that passed after it would drop the failure it saw.
                Some((Stop::Broken, f))
            };
        }
    };
    let refused = |actual: String| {
        Finding::new(
            &catalog::PREFLIGHT,
            "",
            "the first mall-list page of the configured merchant, accepted",
            actual,
        )
    };
    let msg = envelope_text(&response.json);
    match response.status {
        status @ 500.. => Some((
            Stop::Broken,
            Finding::new(
                &catalog::HTTP_SERVER_ERROR,
                "",
                "a status below 500",
                format!("HTTP {status}{msg}"),
            ),
        )),
        401 | 403 => Some((
            Stop::Refused,
            refused(format!("HTTP {}{msg}", response.status)),
        )),
        404 | 405 => Some((
            Stop::WrongPath,
            Finding::new(
                &catalog::PREFLIGHT,
                "",
                format!("the mall list operation at {url}"),
                format!("HTTP {}{msg}", response.status),
            ),
        )),
        status if is_auth_failure(status, &response.json) => {
            Some((Stop::Refused, refused(format!("HTTP {status}{msg}"))))
        }
        _ => None,
    }
}

/// The finding of a signed call of the configured credentials that the service refused
/// (401/403, or an auth-failure envelope) where the case expects an answer: nothing of the
/// case was tested (could not test, exit 3), never a pass or a skip. It matters under
/// `--no-preflight`, where no preflight stopped the run first.
pub fn refused(status: u16, json: &impl TopMembers) -> Option<Finding> {
    if !(matches!(status, 401 | 403) || is_auth_failure(status, json)) {
        return None;
    }
    Some(refusal(status, json))
}

/// [`refused`] of a response body, answered from its digest when the fast path read it: a
/// conforming envelope with `success` true, or a products array, is no auth failure.
pub fn refused_json(status: u16, json: &LazyJson) -> Option<Finding> {
    let accepted = match json.digest() {
        Some(Digest::Envelope(e)) => e.success,
        Some(Digest::Products(_)) => true,
        None => false,
    };
    if accepted && !matches!(status, 401 | 403) {
        return None;
    }
    refused(status, json)
}

fn refusal(status: u16, json: &impl TopMembers) -> Finding {
    Finding::new(
        &catalog::PREFLIGHT,
        "",
        "a signed call of the configured credentials, accepted",
        format!("HTTP {status}{}", envelope_text(json)),
    )
    .with_detail(
        "the service refused the configured credentials (signing key, signer, appid or \
             merchant ids): nothing of this case was tested",
    )
}

/// Whether a discovery failure (a skip reason) is a refusal of the configured credentials.
pub fn refused_discovery(reason: &str) -> bool {
    reason.contains("first mall-list page answered HTTP 401")
        || reason.contains("first mall-list page answered HTTP 403")
}

/// `: code 4010, <msg>` of an envelope, or nothing. Read from the root's scalar members
/// only: a body's tree is never built for it.
fn envelope_text(json: &impl TopMembers) -> String {
    let code = json.top("code").map(|c| match c {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    let msg = json.top("msg").and_then(Value::as_str);
    match (code, msg) {
        (Some(c), Some(m)) => format!(": code {c}, {m}"),
        (Some(c), None) => format!(": code {c}"),
        (None, Some(m)) => format!(": {m}"),
        (None, None) => String::new(),
    }
}

/// An envelope that is clearly an authentication failure: `success` false with a message about
/// signatures, appids or permissions, or, in an answer whose HTTP status says nothing (2xx), a
/// 401/403 code. Under another 4xx status a code such as `4010` is the service's own (a page
/// size out of range), not HTTP's.
fn is_auth_failure(status: u16, json: &impl TopMembers) -> bool {
    if json.top("success") != Some(&Value::Bool(false)) {
        return false;
    }
    let code = match json.top("code") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    if (200..300).contains(&status) && (code.starts_with("401") || code.starts_with("403")) {
        return true;
    }
    let text = json
        .top("msg")
        .or_else(|| json.top("message"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_lowercase();
    AUTH_WORDS.iter().any(|w| text.contains(w))
}

/// Whether the answer is labelled as an HTML page.
fn is_html(sent: &Sent) -> bool {
    sent.exchange.response.as_ref().is_some_and(|r| {
        r.headers.iter().any(|(k, v)| {
            k.eq_ignore_ascii_case("content-type") && v.to_ascii_lowercase().contains("html")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_errors_are_told_apart_from_other_connect_errors() {
        for e in [
            "client error (Connect): invalid peer certificate: UnknownIssuer",
            "invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))",
            "invalid peer certificate: NotValidForName",
        ] {
            assert!(is_certificate_problem(e), "{e}");
        }
        for e in [
            "Connection refused (os error 111)",
            "dns error: failed to lookup",
        ] {
            assert!(!is_certificate_problem(e), "{e}");
        }
    }
    use serde_json::json;

    #[test]
    fn an_allowed_empty_merchant_gets_a_note() {
        let summary = RunSummary {
            passed: 27,
            skipped: 15,
            ..RunSummary::default()
        };
        let allowed = EmptyMerchant {
            seen: true,
            allowed: true,
            ..EmptyMerchant::default()
        };
        let note = discovery_note(allowed, &summary).expect("a note");
        assert!(note.contains("15 cases needing one were skipped"), "{note}");
        assert!(
            discovery_note(EmptyMerchant::default(), &summary).is_none(),
            "a mall was found"
        );
        // A selection that passed without a products call says so.
        let no_call = EmptyMerchant {
            no_products_call: true,
            ..EmptyMerchant::default()
        };
        let note = discovery_note(no_call, &summary).expect("a note");
        assert!(
            note.contains("no product or SKU record was checked"),
            "{note}"
        );
        let failed = RunSummary {
            failed: 1,
            ..summary.clone()
        };
        assert!(
            discovery_note(no_call, &failed).is_none(),
            "it failed already"
        );
    }

    #[test]
    fn an_auth_envelope_is_recognised_and_an_empty_list_is_not() {
        assert!(is_auth_failure(
            200,
            &json!({"success": false, "code": "4010", "msg": "x"})
        ));
        // Under a 400 the code is the service's own: a page size out of range.
        assert!(!is_auth_failure(
            400,
            &json!({"success": false, "code": "4010", "msg": "count out of range"})
        ));
        assert!(is_auth_failure(
            400,
            &json!({"success": false, "code": "E1", "msg": "Signature mismatch"})
        ));
        assert!(is_auth_failure(
            200,
            &json!({"success": false, "code": "E1", "msg": "签名错误"})
        ));
        assert!(!is_auth_failure(
            200,
            &json!({"success": false, "code": "5001", "msg": "busy"})
        ));
        assert!(!is_auth_failure(
            200,
            &json!({"success": true, "code": "0000", "msg": "auth ok", "data": []})
        ));
    }

    #[test]
    fn a_failed_discovery_fails_a_run_that_would_pass() {
        let summary = |passed, skipped, errored| RunSummary {
            passed,
            skipped,
            errored,
            ..RunSummary::default()
        };
        let broken = Some(("discovery failed: refused", true));
        let no_mall = Some(("the configured merchant lists no mall to target", false));
        let rows = [
            (
                "broken service, all skipped",
                broken,
                summary(0, 3, 0),
                true,
            ),
            (
                "broken service, others passed",
                broken,
                summary(5, 3, 0),
                true,
            ),
            ("the run fails already", broken, summary(0, 3, 1), false),
            ("no mall, all skipped", no_mall, summary(0, 3, 0), true),
            ("no mall, others passed", no_mall, summary(5, 3, 0), true),
            ("all skipped otherwise", None, summary(0, 3, 0), true),
        ];
        for (why, failure, summary, stops) in rows {
            let stop = discovery_stop(failure, EmptyMerchant::default(), &summary);
            assert_eq!(stop.is_some(), stops, "{why}");
            if let Some((message, case)) = stop {
                assert_eq!(case.outcome, Outcome::Error, "{why}");
                assert_eq!(case.id.name, DISCOVERY_CASE, "{why}");
                assert!(message.contains("3 cases were skipped"), "{why}: {message}");
            }
        }
        let allowed = EmptyMerchant {
            seen: true,
            allowed: true,
            ..EmptyMerchant::default()
        };
        assert!(
            discovery_stop(no_mall, allowed, &summary(5, 3, 0)).is_none(),
            "an expected empty merchant passes"
        );
        assert!(
            discovery_stop(None, allowed, &summary(0, 3, 0)).is_none(),
            "every case skipped for an expected empty merchant"
        );
        let seen = EmptyMerchant {
            seen: true,
            ..EmptyMerchant::default()
        };
        let (message, _) =
            discovery_stop(None, seen, &summary(5, 0, 0)).expect("a walk listed no mall");
        assert!(!message.contains("0 cases"), "{message}");
        // Malls without a single product: nothing of the products records was checked.
        let no_products = EmptyMerchant {
            no_products: true,
            ..EmptyMerchant::default()
        };
        let (message, case) =
            discovery_stop(None, no_products, &summary(5, 0, 0)).expect("no product checked");
        assert_eq!(case.outcome, Outcome::Error);
        assert!(message.contains("no product or SKU record"), "{message}");
        let allowed = EmptyMerchant {
            allowed: true,
            ..no_products
        };
        assert!(discovery_stop(None, allowed, &summary(5, 0, 0)).is_none());
        let note = discovery_note(allowed, &summary(5, 0, 0)).expect("a note");
        assert!(note.contains("no product or SKU record"), "{note}");
        // Refusals alone, with no signed request served: they prove nothing.
        let unserved = EmptyMerchant {
            unserved: true,
            ..EmptyMerchant::default()
        };
        let (message, case) =
            discovery_stop(None, unserved, &summary(5, 0, 0)).expect("nothing served");
        assert_eq!(case.outcome, Outcome::Error);
        assert!(message.contains("serves a signed request"), "{message}");
        assert!(
            discovery_stop(None, unserved, &summary(4, 0, 1)).is_none(),
            "failed already"
        );
    }

    #[test]
    fn causes_name_the_settings_to_look_at() {
        let refused = causes(Stop::Refused, "http://h", "md5", "app").join(" ");
        for word in ["key", "signer", "appid", "base URL"] {
            assert!(refused.contains(word), "{word}: {refused}");
        }
        let unreachable = causes(Stop::Unreachable, "http://h", "md5", "app").join(" ");
        for word in ["host", "port", "scheme", "proxy"] {
            assert!(unreachable.contains(word), "{word}: {unreachable}");
        }
        assert!(
            causes(Stop::WrongPath, "http://h", "md5", "app")
                .join(" ")
                .contains("path prefix")
        );
    }
}
