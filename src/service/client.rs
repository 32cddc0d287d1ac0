//! HTTP client: signs requests, bounds every read (time, size, nesting) and never follows a
//! redirect silently. It turns whatever the server does into an [`Exchange`] record plus either a
//! decoded JSON body or a transport finding.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, LOCATION};
use serde_json::Value;

use crate::redact::{Redactor, Secret};
use crate::service::lazy_json::LazyJson;
use crate::service::politeness::{
    self, Backoff, Before, DEFAULT_MAX_RETRY_WAIT, InFlight, MAX_THROTTLED_RETRIES, RateLimiter,
    Throttle,
};
use crate::service::read_memo::ReadMemo;
use crate::service::replay;
use crate::service::transport::{BodyEnd, Target, Transport, TransportError, TransportOptions};
use crate::sign::Signer;
use crate::spec::catalog;
use crate::verdict::endpoint::{AuthMode, Endpoint};
use crate::verdict::event::{Finding, truncate};
use crate::verdict::exchange::{EXCERPT_BYTES, Excerpt, Exchange, RequestRecord, ResponseRecord};

/// Limits and behaviour of the client.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Deadline for one whole exchange: connect, first byte and complete body.
    pub timeout: Duration,
    /// Largest body accepted, in bytes (after decompression).
    pub max_body: usize,
    /// Follow same-origin redirects (at most 5); a redirect to another origin is never
    /// followed.
    pub follow_redirects: bool,
    /// Requests per second across the run; `None` = unlimited.
    pub rate: Option<f64>,
    /// Retries of a request that failed to connect or was reset.
    pub retries: u32,
    /// Longest total wait for `Retry-After` (429, or 503 with it) of one request; a longer
    /// one is not waited for and the request is reported as `transport.rate-limited`.
    pub max_retry_wait: Duration,
    /// PEM bundle of certificate authorities trusted besides the system's (`--cacert`).
    pub cacert: Option<Vec<u8>>,
    /// The HTTP proxy of every request to the base URL (`service::proxy_route`), a secret for
    /// its userinfo; `None` sends them directly.
    pub proxy: Option<Secret>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            timeout: Duration::from_secs(10),
            max_body: 16 * 1024 * 1024,
            follow_redirects: false,
            rate: None,
            retries: 0,
            max_retry_wait: DEFAULT_MAX_RETRY_WAIT,
            cacert: None,
            proxy: None,
        }
    }
}

/// A decoded response.
#[derive(Debug, Clone)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// Response headers.
    pub headers: HeaderMap,
    /// Raw body bytes (decompressed).
    pub body: Bytes,
    /// The body as JSON: well-formed, its tree built only when a check reads it (a streamed
    /// check of the bytes never does). `null` for a refusal whose body is not JSON.
    pub json: LazyJson,
    /// Whether the body was JSON. Only a 4xx refusal may have another body: the spec shows
    /// neither the error shape nor the statuses (§7.2-§7.4), so such a body is a refusal
    /// without merchant data, not a broken answer.
    pub body_is_json: bool,
}

/// What one send produced: always a record, and a decoded body or the finding that explains
/// why there is none.
#[derive(Debug)]
pub struct Sent {
    /// The redacted record.
    pub exchange: Exchange,
    /// The decoded response, or the transport/decoding finding.
    pub result: Result<Response, Box<Finding>>,
}

impl Sent {
    /// For a products call that must get no data: a 2xx answer with no body at all (a
    /// framework's `ResponseEntity.ok(null)` for a refused call) is a refusal without JSON, as
    /// a 4xx one is (§7.4 shows no error shape of the products operation, §7.3 no statuses),
    /// not a `response.json` finding. An empty 2xx answer to a call that must get data still
    /// is one, and so is any answer with bytes that are not JSON (a body cut short may hold
    /// records).
    pub fn empty_body_as_refusal(mut self) -> Sent {
        let empty_2xx = self
            .exchange
            .response
            .as_ref()
            .filter(|r| (200..300).contains(&r.status) && r.body_len == 0)
            .map(|r| r.status);
        if let (Some(status), Err(f)) = (empty_2xx, &self.result)
            && f.check.id == catalog::RESPONSE_JSON.id
        {
            self.result = Ok(Response {
                status,
                headers: HeaderMap::new(),
                body: Bytes::new(),
                json: LazyJson::from(Value::Null),
                body_is_json: false,
            });
        }
        self
    }
}

/// The signing client for one base URL.
#[derive(Debug, Clone)]
pub struct Client {
    /// How requests go out: a request that lost its reused keep-alive connection is sent
    /// again at once on a new one.
    transport: Transport,
    base_url: String,
    /// The URL of each endpoint, parsed once.
    targets: Arc<[Target; 2]>,
    signer: Signer,
    options: ClientOptions,
    /// The session's redactor: every record and finding is scrubbed with it.
    redactor: Redactor,
    limiter: Option<Arc<RateLimiter>>,
    backoff: Arc<Backoff>,
    in_flight: Arc<InFlight>,
    /// The digests of the answers read, so that the same bytes are read once.
    reads: Arc<ReadMemo>,
    /// Whether a signed request was answered a success (a 2xx success envelope or a JSON
    /// array): until one is, a refusal proves nothing (a service that refuses everything).
    served: Arc<std::sync::atomic::AtomicBool>,
}

/// Why the client could not be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the HTTP client: {0}")]
pub struct ClientBuildError(String);

impl Client {
    /// Builds a client; `base_url` may carry a path prefix. Records are scrubbed with
    /// `redactor` (the session's), which learns each Authorization value as it is sent.
    pub fn new(
        base_url: &str,
        signer: Signer,
        options: ClientOptions,
        redactor: &Redactor,
    ) -> Result<Client, ClientBuildError> {
        let build = |idle: usize, policy: reqwest::redirect::Policy| {
            let mut builder = crate::tls::client_builder_for(base_url);
            if let Some(pem) = &options.cacert {
                builder = crate::tls::trust(builder, pem)?;
            }
            // Only the proxy decided for this base URL, never reqwest's own reading of the
            // environment (which would proxy a loopback service).
            builder = match &options.proxy {
                Some(proxy) => {
                    let proxy = proxy.expose();
                    builder.proxy(reqwest::Proxy::all(proxy).map_err(|e| {
                        format!("the proxy {}: {e}", crate::redact::url_for_display(proxy))
                    })?)
                }
                None => builder.no_proxy(),
            };
            builder
                .redirect(policy)
                .timeout(options.timeout)
                .connect_timeout(options.timeout)
                .pool_max_idle_per_host(idle)
                .build()
                .map_err(|e| e.to_string())
        };
        let transport = Transport::new(
            base_url,
            TransportOptions {
                timeout: options.timeout,
                follow_redirects: options.follow_redirects,
                proxied: options.proxy.is_some(),
            },
            build,
        )
        .map_err(ClientBuildError)?;
        let limiter = options
            .rate
            .filter(|r| *r > 0.0)
            .map(|r| Arc::new(RateLimiter::new(r)));
        let base_url = base_url.trim_end_matches('/').to_string();
        let targets = Arc::new(ENDPOINTS.map(|e| Target::new(format!("{base_url}{}", e.path()))));
        Ok(Client {
            transport,
            base_url,
            targets,
            signer,
            options,
            redactor: redactor.clone(),
            limiter,
            backoff: Arc::default(),
            in_flight: Arc::default(),
            reads: Arc::default(),
            served: Arc::default(),
        })
    }

    /// The base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Allows at most `n` requests in flight through this client and its clones (a run's
    /// `--jobs`); the first limit set stays.
    pub fn limit_in_flight(&self, n: usize) {
        self.in_flight.limit(n);
    }

    /// The largest body a response may have (`--max-body`).
    pub fn max_body(&self) -> usize {
        self.options.max_body
    }

    /// The session's redactor this client scrubs with.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Whether the signer has a keyless form for `unkeyed-signature` probes (see
    /// [`Signer::unkeyed`]).
    pub fn signs_unkeyed(&self) -> bool {
        self.signer.unkeyed().is_some()
    }

    /// The signer.
    pub fn signer(&self) -> &Signer {
        &self.signer
    }

    /// The signer's secrets, for scrubbing free text.
    pub fn secrets(&self) -> Vec<&Secret> {
        self.signer.secrets()
    }

    /// Sends a JSON body to an endpoint.
    pub async fn send_json(
        &self,
        endpoint: Endpoint,
        body: &Value,
        auth: &AuthMode,
        extra_headers: &[(String, String)],
    ) -> Sent {
        let bytes = serde_json::to_vec(body).expect("a serde_json::Value always serializes");
        let appid = body.get("appid").and_then(Value::as_str).unwrap_or("");
        self.send_raw(endpoint, bytes, appid, auth, extra_headers)
            .await
    }

    /// Sends a raw body; `appid` is used for the Authorization header.
    pub async fn send_raw(
        &self,
        endpoint: Endpoint,
        body: Vec<u8>,
        appid: &str,
        auth: &AuthMode,
        extra_headers: &[(String, String)],
    ) -> Sent {
        // The same JSON in another spelling, signed as sent: the signature covers raw bytes.
        let (body, auth) = match auth {
            AuthMode::SignedOtherSpelling => (
                crate::service::spelling::respell(&body).unwrap_or(body),
                &AuthMode::Signed,
            ),
            other => (body, other),
        };
        let target = &self.targets[endpoint_index(endpoint)];
        let url = target.text.as_str();
        let mut headers: Vec<(String, String)> =
            vec![("Content-Type".to_string(), "application/json".to_string())];
        let mut secret_header: Option<Secret> = None;
        // An Authorization value of a refusal probe that holds no credential: sent and shown as
        // it is (registered as a secret, the appid alone would be redacted from every report).
        let plain_authorization = match auth {
            AuthMode::EmptySignature => Some(appid),
            AuthMode::EmptyAuthorization => Some(""),
            _ => None,
        };
        // A refusal probe whose body's valid signature is neither sent nor registered by its
        // own arm below: a service may quote that signature ("expected …"), so it is
        // registered with the redactor as a value sent is.
        let quotable = match auth {
            AuthMode::Signed
            | AuthMode::SignedOtherSpelling
            | AuthMode::AppidMismatch
            | AuthMode::AlteredSignature
            | AuthMode::TruncatedSignature
            | AuthMode::ExtendedSignature => false,
            AuthMode::Missing
            | AuthMode::WrongSignature
            | AuthMode::UnknownAppid
            | AuthMode::UnkeyedSignature
            | AuthMode::EmptySignature
            | AuthMode::EmptyAuthorization
            | AuthMode::SignatureOfOtherBody
            | AuthMode::SignatureOfOtherOperation => true,
        };
        if quotable && let Ok(valid) = self.sign(appid, &body).await {
            self.redactor.record_header("Authorization", valid.expose());
        }
        let authorization = match auth {
            AuthMode::Missing | AuthMode::EmptySignature | AuthMode::EmptyAuthorization => Ok(None),
            AuthMode::Signed | AuthMode::SignedOtherSpelling => {
                self.sign(appid, &body).await.map(Some)
            }
            AuthMode::WrongSignature => {
                Ok(Some(Secret::new(format!("{appid} {}", "0".repeat(32)))))
            }
            AuthMode::UnknownAppid => Ok(Some(Secret::new(format!(
                "{appid}-unknown {}",
                "0".repeat(32)
            )))),
            AuthMode::AppidMismatch => self.sign(&format!("{appid}-other"), &body).await.map(Some),
            // The valid value is never sent, but a service may echo it ("expected …"): it is
            // registered with the redactor as the value sent is.
            AuthMode::AlteredSignature => self.sign(appid, &body).await.map(|value| {
                self.redactor.record_header("Authorization", value.expose());
                Some(self.near_signature(altered_signature(value.expose())))
            }),
            AuthMode::ExtendedSignature => self.sign(appid, &body).await.map(|value| {
                self.redactor.record_header("Authorization", value.expose());
                Some(self.near_signature(extended_signature(value.expose())))
            }),
            AuthMode::TruncatedSignature => self.sign(appid, &body).await.map(|value| {
                self.redactor.record_header("Authorization", value.expose());
                Some(self.near_signature(truncated_signature(value.expose())))
            }),
            // The runner skips the case when the signer has no keyless form
            // (`Client::signs_unkeyed`); sent anyway, it is a signature that cannot be valid.
            AuthMode::UnkeyedSignature => match self.signer.unkeyed() {
                Some(unkeyed) => {
                    let _place = self.in_flight.enter().await;
                    unkeyed.authorization(appid, &body).await.map(Some)
                }
                None => Ok(Some(Secret::new(format!("{appid} {}", "0".repeat(32))))),
            },
            AuthMode::SignatureOfOtherBody | AuthMode::SignatureOfOtherOperation => {
                // The donor goes first, signed, so that the service has seen its signature.
                let (to, donor) = replay::donor(endpoint, auth, &body);
                let _ = Box::pin(self.send_raw(
                    to,
                    donor.clone(),
                    appid,
                    &AuthMode::Signed,
                    extra_headers,
                ))
                .await;
                self.sign(appid, &donor).await.map(Some)
            }
        };
        let started = Instant::now();
        let record_body = String::from_utf8_lossy(&body).into_owned();
        match authorization {
            Ok(Some(value)) => secret_header = Some(value),
            Ok(None) => {}
            Err(e) => {
                let request = self.record(url, &headers, None, record_body);
                // The error may quote the sign command: the redactor names it instead.
                let finding = Finding::new(
                    &catalog::HARNESS_SIGNER,
                    "",
                    "a signature from the configured signer",
                    self.redactor.scrub_sign_error(&e.to_string()),
                );
                return self.failed(request, started, finding);
            }
        }
        for (k, v) in extra_headers {
            headers.push((k.clone(), v.clone()));
        }
        let mut request = self.record(url, &headers, secret_header.as_ref(), record_body);
        if let Some(value) = plain_authorization {
            request
                .headers
                .push(("Authorization".to_string(), value.to_string()));
        }

        let body = Bytes::from(body);
        let mut sent_headers = HeaderMap::with_capacity(headers.len() + 1);
        for (k, v) in &headers {
            let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(k.as_bytes()),
                HeaderValue::from_str(v),
            ) else {
                let f = Finding::new(
                    &catalog::TRANSPORT_CONNECT,
                    "",
                    "valid HTTP header names and values",
                    format!("{k}: {}", self.redactor.header_value(k, v)),
                );
                return self.failed(request, started, f);
            };
            sent_headers.append(name, value);
        }
        // The signed value is sensitive (hyper keeps it out of its debug output); a probe's
        // plain one holds no credential.
        let authorization = match (&secret_header, plain_authorization) {
            (Some(secret), _) => Some((
                secret.expose(),
                true,
                "a signature that is a valid header value",
                "the signature holds characters not allowed in a header (a control character \
                 or a line break: of the sign command's output, or of the static signer's key)",
            )),
            (None, Some(value)) => Some((
                value,
                false,
                "an appid that is a valid header value",
                "the appid holds characters not allowed in a header",
            )),
            (None, None) => None,
        };
        if let Some((value, sensitive, expected, actual)) = authorization {
            let Ok(mut value) = HeaderValue::from_str(value) else {
                // Nothing was sent: a signature no header can carry is the signer's (a control
                // character or a line break in a key file of the static signer), never the
                // service's unreachability.
                let check = if sensitive {
                    &catalog::HARNESS_SIGNER
                } else {
                    &catalog::TRANSPORT_CONNECT
                };
                let f = Finding::new(check, "", expected, actual);
                return self.failed(request, started, f);
            };
            value.set_sensitive(sensitive);
            sent_headers.append(reqwest::header::AUTHORIZATION, value);
        }

        // The transport's own deadline already covers the body; the outer one is a second fence.
        let deadline = self.options.timeout + Duration::from_millis(500);
        let mut retries = 0u32;
        let mut throttled = 0u32;
        let mut waited = Duration::ZERO;
        let mut turned_away: Option<ResponseRecord> = None;
        let mut reconnect = false;
        // When the attempt that got the answer was sent: its time is the answer's.
        let mut sent_at = started;
        let attempt = loop {
            // A place among the requests in flight, then a slot of the rate, then the pause
            // check: a pause noted while this request waited for its slot still holds it back.
            let place = self.in_flight.enter().await;
            if let Some(limiter) = &self.limiter {
                limiter.wait().await;
            }
            // A pause the service asked for (of this request or another) is waited for only
            // while the whole wait stays within --max-retry-wait.
            let pending = self.backoff.pending(tokio::time::Instant::now());
            match politeness::before_sending(pending, waited, self.options.max_retry_wait) {
                Before::Send => {}
                Before::Wait(wait) => {
                    waited += wait;
                    tokio::time::sleep(wait).await;
                    continue;
                }
                Before::GiveUp(throttle) => {
                    break Attempt::RateLimited(throttle, turned_away.take());
                }
            }
            sent_at = Instant::now();
            let outcome = tokio::time::timeout(
                deadline,
                self.receive(target, &sent_headers, &body, reconnect),
            )
            .await;
            match &outcome {
                // A keep-alive connection the service closed while it sat in the pool (uvicorn
                // after a 500 does, without `Connection: close`): the request never reached
                // the service, so it goes again at once on a new connection, once, and it is
                // neither a retry of --retries nor waited for.
                Ok(Err(failed))
                    if failed.lost_connection && !reconnect && !failed.new_connection =>
                {
                    reconnect = true;
                    drop(place);
                    continue;
                }
                // Only a failed connection or a reset is retried: a timeout or a bad body is
                // the service's answer, and retrying would hide it.
                Ok(Err(Failed {
                    partial: None,
                    finding: f,
                    ..
                })) if f.check.id == catalog::TRANSPORT_CONNECT.id
                    && retries < self.options.retries =>
                {
                    retries += 1;
                    politeness::note_retry();
                    drop(place);
                    tokio::time::sleep(Duration::from_millis(200 << retries.min(5))).await;
                    continue;
                }
                Ok(Ok((record, raw))) => {
                    if let Some(throttle) =
                        politeness::throttle(raw.status, &raw.headers, SystemTime::now())
                    {
                        self.backoff.note(throttle, tokio::time::Instant::now());
                        if throttled == MAX_THROTTLED_RETRIES {
                            break Attempt::RateLimited(throttle, Some(record.clone()));
                        }
                        throttled += 1;
                        turned_away = Some(record.clone());
                        continue;
                    }
                }
                _ => {}
            }
            break Attempt::Answer(outcome);
        };
        let outcome = match attempt {
            Attempt::Answer(outcome) => outcome,
            Attempt::RateLimited(throttle, response) => {
                let f = self.rate_limited(throttle, response.is_some(), throttled);
                return Sent {
                    exchange: Exchange {
                        request,
                        response,
                        transport_error: Some(f.actual.clone()),
                        duration: started.elapsed(),
                        shows_finding: false,
                    },
                    result: Err(Box::new(f)),
                };
            }
        };
        let duration = sent_at.elapsed();
        match outcome {
            Err(_) => {
                let f = timeout_finding(self.options.timeout);
                self.failed(request, sent_at, f)
            }
            Ok(Err(Failed {
                partial,
                finding: mut f,
                lost_connection,
                new_connection,
            })) => {
                // Lost again on a fresh connection, from a service that answers others: it
                // failed on this request (a crash that closes the socket), it is no
                // unreachable service. So too a connection lost on this request after which
                // the service refused to connect at all (whatever the request's
                // Authorization): its process went down on it (Node ends on an unhandled
                // rejection, and a supervisor brings it back for the next cases).
                let went_down = reconnect
                    && !lost_connection
                    && f.actual.to_ascii_lowercase().contains("connection refused");
                // A connection that had brought no answer is no keep-alive race either: the
                // request was not sent again, and its loss is the service's as much.
                let lost_twice = lost_connection && (reconnect || new_connection);
                if ((lost_twice && *auth == AuthMode::Signed) || went_down)
                    && f.check.id == catalog::TRANSPORT_CONNECT.id
                    && self.served_a_signed_request()
                {
                    let then = if went_down {
                        "then the service refused a new connection: it went down while this request was out"
                    } else if !reconnect {
                        "and it was the connection's first request (a new connection, not one \
                         kept alive from an earlier answer, so not sent again)"
                    } else {
                        "on a fresh connection too"
                    };
                    f = Finding::new(
                        &catalog::TRANSPORT_DROPPED,
                        "",
                        "an answer (the service accepts connections and answers other requests)",
                        format!(
                            "no answer: the connection was closed before any byte of it, {then} \
                             ({})",
                            f.actual
                        ),
                    );
                }
                self.scrub_finding(&mut f);
                Sent {
                    exchange: Exchange {
                        request,
                        response: partial,
                        transport_error: Some(f.actual.clone()),
                        duration,
                        shows_finding: false,
                    },
                    result: Err(Box::new(f)),
                }
            }
            Ok(Ok((record, response))) => {
                let following = self.options.follow_redirects;
                let decoded = crate::cpu::cpu_bound(response.body.len(), || {
                    decode(
                        response,
                        &record,
                        &self.reads,
                        &self.redactor,
                        following,
                        self.options.max_body,
                    )
                })
                .map_err(|mut f| {
                    self.scrub_finding(&mut f);
                    f
                });
                if *auth == AuthMode::Signed
                    && let Ok(r) = &decoded
                    && (200..300).contains(&r.status)
                    && (r.json.success_is_true() || r.json.is_array())
                {
                    self.served
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                }
                Sent {
                    exchange: Exchange {
                        request,
                        response: Some(record),
                        transport_error: decoded.as_ref().err().map(|f| f.actual.clone()),
                        duration,
                        shows_finding: false,
                    },
                    result: decoded,
                }
            }
        }
    }

    /// Whether a signed request of this client was answered a success so far.
    pub fn served_a_signed_request(&self) -> bool {
        self.served.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Signs a body in one of the places of the requests in flight, so that `--jobs` also
    /// bounds the sign commands running at once.
    /// An Authorization value one character off the valid one. With the `static` signer the
    /// signature is the key itself, so the value is nearly the key: it is registered in every
    /// spelling the key is (reversed, base32, …), not only as the header sent.
    fn near_signature(&self, value: String) -> Secret {
        if self.signer.kind_name() == "static"
            && let Some((_, signature)) = value.rsplit_once(' ')
        {
            self.redactor.add_secret(signature);
        }
        Secret::new(value)
    }

    async fn sign(&self, appid: &str, body: &[u8]) -> Result<Secret, crate::sign::SignError> {
        let _place = self.in_flight.enter().await;
        self.signer.authorization(appid, body).await
    }

    /// Sends the request (on a new connection when `fresh`) and reads its answer.
    async fn receive(
        &self,
        target: &Target,
        headers: &HeaderMap,
        body: &Bytes,
        fresh: bool,
    ) -> Received {
        let answer = self
            .transport
            .post(target, headers, body, fresh)
            .await
            .map_err(|e| Failed {
                partial: None,
                finding: self.transport_finding(&e),
                lost_connection: e.is_lost_connection(),
                new_connection: e.on_new_connection(),
            })?;
        let limit = self.options.max_body;
        let (status, headers, end) = answer.read(limit).await;
        let body = match end {
            BodyEnd::Complete(body) => body,
            BodyEnd::TooLong(body) => {
                let record = response_record(&self.redactor, status, &headers, &body, false);
                let f = Finding::new(
                    &catalog::TRANSPORT_BODY_SIZE,
                    "",
                    format!("a body of at most {limit} bytes (--max-body)"),
                    format!("more than {limit} bytes"),
                );
                return Err(Failed::after_answer(record, f));
            }
            BodyEnd::Failed(body, e) => {
                let record = response_record(&self.redactor, status, &headers, &body, false);
                let mut f = self.transport_finding(&e);
                f.detail = format!("after {} bytes of body", body.len());
                return Err(Failed::after_answer(record, f));
            }
        };
        let excerpt = Excerpt::of_shared(&body, &self.redactor);
        let record = record_with(&self.redactor, status, &headers, excerpt, body.len());
        Ok((
            record,
            RawResponse {
                status,
                headers,
                body,
            },
        ))
    }

    fn record(
        &self,
        url: &str,
        headers: &[(String, String)],
        authorization: Option<&Secret>,
        body: String,
    ) -> RequestRecord {
        // Credential headers (and the Authorization value, signature by signature) are
        // registered with the run's redactor here, before anything is sent, and replaced; the
        // other texts are scrubbed when the exchange is sealed, as the response's are (most
        // exchanges are never shown: a scrub of each cost the fuzzer a tenth of a request).
        let mut recorded: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.clone(), self.redactor.record_header(k, v)))
            .collect();
        if let Some(secret) = authorization {
            recorded.push((
                "Authorization".to_string(),
                self.redactor
                    .record_header("Authorization", secret.expose()),
            ));
        }
        RequestRecord {
            method: "POST".to_string(),
            url: url.to_string(),
            headers: recorded,
            body,
        }
    }

    fn failed(&self, request: RequestRecord, started: Instant, mut finding: Finding) -> Sent {
        self.scrub_finding(&mut finding);
        Sent {
            exchange: Exchange {
                request,
                response: None,
                transport_error: Some(self.scrub(&finding.actual)),
                duration: started.elapsed(),
                shows_finding: false,
            },
            result: Err(Box::new(finding)),
        }
    }

    /// The finding for a request the service kept turning away.
    fn rate_limited(&self, throttle: Throttle, answered: bool, retries: u32) -> Finding {
        let ceiling = self.options.max_retry_wait.as_secs_f64();
        let why = if !answered {
            "not sent: the service asked the run to pause longer than that".to_string()
        } else if retries == MAX_THROTTLED_RETRIES {
            format!("still turned away after {retries} retries")
        } else {
            "not waited for: the wait would pass --max-retry-wait".to_string()
        };
        Finding::new(
            &catalog::TRANSPORT_RATE_LIMITED,
            "",
            format!("an answer within {ceiling} s of waiting for Retry-After (--max-retry-wait)"),
            throttle.describe(),
        )
        .with_detail(why)
    }

    fn scrub(&self, text: &str) -> String {
        self.redactor.scrub_with(text, &self.secrets())
    }

    /// A finding about the exchange quotes what the service sent (a Location, a body excerpt).
    fn scrub_finding(&self, f: &mut Finding) {
        f.actual = self.scrub(&f.actual);
        f.detail = self.scrub(&f.detail);
    }

    fn transport_finding(&self, e: &TransportError) -> Finding {
        if e.is_timeout() {
            return timeout_finding(self.options.timeout);
        }
        let chain = self.scrub(&super::transport_words::in_words(
            &e.chain(),
            self.options.proxy.is_some(),
        ));
        if let Some((read, first)) = e.cut_head().filter(|_| !e.is_malformed_answer()) {
            // The service was reached and began an answer: a broken answer, not a service
            // that could not be reached.
            // Its whole lines scrubbed, and the line the close cut short cut as an excerpt is:
            // a secret the service cut off (an echoed Authorization value, the key) ends the
            // text without its beginning.
            let lines = first.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let (whole, cut) = first.split_at(lines);
            let mut text = self.redactor.excerpt(whole, whole.len(), true);
            let tail = self.redactor.excerpt(cut, cut.len(), false);
            let cut_short = tail.len() < cut.len() || read > first.len();
            text.push_str(&tail);
            let shown: String = text.escape_debug().collect();
            let more = if cut_short { " ..." } else { "" };
            Finding::new(
                &catalog::RESPONSE_JSON,
                "",
                "a well-formed HTTP/1.1 answer (status line, headers, one body length)",
                self.scrub(&format!(
                    "the connection was closed after {read} bytes of an answer, before its \
                     head was complete: \"{shown}{more}\" ({chain})"
                )),
            )
        } else if e.is_redirect() {
            Finding::new(&catalog::TRANSPORT_REDIRECT, "", "no redirect loop", chain)
        } else if e.is_body() {
            Finding::new(
                &catalog::RESPONSE_JSON,
                "",
                "a complete, decodable response body",
                chain,
            )
        } else if e.is_malformed_answer() {
            Finding::new(
                &catalog::RESPONSE_JSON,
                "",
                "a well-formed HTTP/1.1 answer (status line, headers, one body length)",
                chain,
            )
        } else {
            Finding::new(&catalog::TRANSPORT_CONNECT, "", "an HTTP response", chain)
        }
    }
}

struct RawResponse {
    status: u16,
    headers: HeaderMap,
    body: Bytes,
}

/// How the retry loop of one request ended.
enum Attempt {
    /// The last answer (or transport failure, or the outer timeout).
    Answer(Result<Received, tokio::time::error::Elapsed>),
    /// Turned away (429/503 + Retry-After) past the ceiling; the last such answer, if any.
    RateLimited(Throttle, Option<ResponseRecord>),
}

type Received = Result<(ResponseRecord, RawResponse), Failed>;

/// A request that got no usable answer.
struct Failed {
    /// What came of the answer before it failed, if anything.
    partial: Option<ResponseRecord>,
    /// The transport or decoding finding.
    finding: Finding,
    /// The connection was lost after it was established and before any byte of the answer
    /// (reset, or closed by the service): a keep-alive connection the service had closed.
    lost_connection: bool,
    /// The connection had brought no answer before this request: not a keep-alive race.
    new_connection: bool,
}

impl Failed {
    fn after_answer(record: ResponseRecord, finding: Finding) -> Failed {
        Failed {
            partial: Some(record),
            finding,
            lost_connection: false,
            new_connection: false,
        }
    }
}

fn timeout_finding(timeout: Duration) -> Finding {
    Finding::new(
        &catalog::TRANSPORT_TIMEOUT,
        "",
        format!(
            "a complete response within {} s (--timeout)",
            timeout.as_secs_f64()
        ),
        "no complete response in time",
    )
}

/// The response as recorded: a service, a proxy or an error page may echo the request, so
/// credential headers are redacted by name and every header value and the body excerpt are
/// scrubbed of the run's secrets. `whole` says whether `body` is all of the body (not when
/// `--max-body` or a transport error cut it short).
fn response_record(
    redactor: &Redactor,
    status: u16,
    headers: &HeaderMap,
    body: &[u8],
    whole: bool,
) -> ResponseRecord {
    record_with(
        redactor,
        status,
        headers,
        Excerpt::of(body, whole, redactor),
        body.len(),
    )
}

/// [`response_record`] with its excerpt made.
fn record_with(
    redactor: &Redactor,
    status: u16,
    headers: &HeaderMap,
    body_excerpt: Excerpt,
    body_len: usize,
) -> ResponseRecord {
    ResponseRecord {
        status,
        headers: headers
            .iter()
            .map(|(k, v)| {
                let value = String::from_utf8_lossy(v.as_bytes());
                (k.to_string(), redactor.record_header(k.as_str(), &value))
            })
            .collect(),
        body_excerpt,
        body_len,
    }
}

/// Turns a complete response into JSON, or into the finding that says why it is not usable.
fn decode(
    raw: RawResponse,
    record: &ResponseRecord,
    reads: &ReadMemo,
    redactor: &Redactor,
    following: bool,
    max_body: usize,
) -> Result<Response, Box<Finding>> {
    // 407 is a proxy's word (RFC 9110 §15.5.8): the request never reached the service, which
    // could not be tested, whatever the proxy's page says.
    if raw.status == 407 {
        return Err(Box::new(Finding::new(
            &catalog::TRANSPORT_CONNECT,
            "",
            "an answer from the service",
            "HTTP 407 Proxy Authentication Required: a proxy refused the request (its user and \
             password: --proxy, or HTTP(S)_PROXY)",
        )));
    }
    if (300..400).contains(&raw.status) {
        let location = raw
            .headers
            .get(LOCATION)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_else(|| "no Location header".to_string());
        let expected = if following {
            "no redirect to another origin (scheme, host and port), at most 5 within it"
        } else {
            "a direct answer (redirects are not followed; --follow-redirects allows same-origin ones)"
        };
        return Err(Box::new(Finding::new(
            &catalog::TRANSPORT_REDIRECT,
            "",
            expected,
            format!("HTTP {} to {location}", raw.status),
        )));
    }
    match reads.parse(raw.body.clone()) {
        Ok(json) => Ok(Response {
            status: raw.status,
            headers: raw.headers,
            json: json.with_room(max_body),
            body: raw.body,
            body_is_json: true,
        }),
        // A refusal in plain text, HTML or with no body at all (a framework's 400 for a body
        // that is not JSON, a gateway's 401): its shape is not shown, and it carries no data.
        Err(_) if (400..500).contains(&raw.status) => Ok(Response {
            status: raw.status,
            headers: raw.headers,
            json: LazyJson::from(Value::Null),
            body: raw.body,
            body_is_json: false,
        }),
        Err(e) => {
            let what = if e.to_string().contains("recursion limit") {
                "JSON nested 128 levels deep or more (127 at most are read)".to_string()
            } else if raw.body.is_empty() {
                "an empty body".to_string()
            } else {
                format!("not JSON ({e})")
            };
            let content_type = raw
                .headers
                .get(CONTENT_TYPE)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_else(|| "none".to_string());
            // A 5xx is first of all a server error; the body only explains it.
            let (check, expected) = if raw.status >= 500 {
                (
                    &catalog::HTTP_SERVER_ERROR,
                    "a status below 500 with a JSON body",
                )
            } else {
                (&catalog::RESPONSE_JSON, "a JSON body")
            };
            Err(Box::new(
                Finding::new(check, "", expected, format!("HTTP {}, {what}", raw.status))
                    .with_detail(format!(
                        "content-type: {content_type}; {} bytes; body starts: {}",
                        record.body_len,
                        truncate(&redactor.excerpt(&raw.body, EXCERPT_BYTES, true), 300)
                    )),
            ))
        }
    }
}

/// The endpoints in the order of `Client::targets`.
const ENDPOINTS: [Endpoint; 2] = [Endpoint::MallList, Endpoint::MallProducts];

fn endpoint_index(endpoint: Endpoint) -> usize {
    match endpoint {
        Endpoint::MallList => 0,
        Endpoint::MallProducts => 1,
    }
}

/// An Authorization value `<appid> <signature>` with the signature's middle character changed
/// to another of its kind (a digit, a hex or other letter in the same case): the same length and
/// alphabet, wrong only inside, where a comparison of the first or last characters alone does
/// not look.
pub fn altered_signature(value: &str) -> String {
    let (head, signature) = match value.rsplit_once(' ') {
        Some((appid, signature)) => (format!("{appid} "), signature),
        None => (String::new(), value),
    };
    let mut chars: Vec<char> = signature.chars().collect();
    let middle = chars.len() / 2;
    if let Some(c) = chars.get_mut(middle) {
        *c = match *c {
            '0'..='8' | 'a'..='e' | 'A'..='E' | 'g'..='y' | 'G'..='Y' => {
                char::from_u32(u32::from(*c) + 1).unwrap_or('0')
            }
            '9' => '0',
            'f' => 'a',
            'F' => 'A',
            'z' => 'a',
            'Z' => 'A',
            _ => 'A',
        };
    }
    format!("{head}{}", chars.into_iter().collect::<String>())
}

/// An Authorization value `<appid> <signature>` with the signature's last character left out:
/// a prefix of the valid signature, which a service that checks `valid.startsWith(given)`
/// serves. Base64 padding (`=`) goes with it: without its padding a base64 signature still
/// decodes to the same bytes, and a lenient decoder rightly accepts it.
/// The Authorization value `value` (`<appid> <signature>`) with one character more at the end
/// of its signature (after any base64 padding, a `0`; else a copy of its last character's
/// kind: `0` after a digit or a hex letter, `A` otherwise).
pub fn extended_signature(value: &str) -> String {
    let extra = match value.chars().last() {
        Some(c) if c.is_ascii_hexdigit() || c == '=' => '0',
        _ => 'A',
    };
    format!("{value}{extra}")
}

pub fn truncated_signature(value: &str) -> String {
    let (head, signature) = match value.rsplit_once(' ') {
        Some((appid, signature)) => (format!("{appid} "), signature),
        None => (String::new(), value),
    };
    let mut chars = signature.trim_end_matches('=').chars();
    chars.next_back();
    format!("{head}{}", chars.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_truncated_signature_is_the_valid_one_without_its_last_character_and_padding() {
        for (value, truncated) in [
            ("app 0123456789abcdef", "app 0123456789abcde"),
            ("my app x-y+z/=", "my app x-y+z"),
            ("sig9", "sig"),
            ("app 签名", "app 签"),
            ("app q83vEjRWeJA=", "app q83vEjRWeJ"),
            ("app q83vEjRWeA==", "app q83vEjRWe"),
        ] {
            assert_eq!(truncated_signature(value), truncated, "{value}");
        }
    }

    #[test]
    fn an_altered_signature_is_wrong_in_its_middle_character_only() {
        for (value, altered) in [
            ("app 0123456789abcdef", "app 0123456799abcdef"),
            ("app 01234567f9ABCDEF", "app 01234567a9ABCDEF"),
            ("app abcDEFzhij", "app abcDEAzhij"),
            ("app x-y+z/=", "app x-yAz/="),
            ("sig9", "sih9"),
        ] {
            assert_eq!(altered_signature(value), altered, "{value}");
        }
    }

    fn raw(status: u16, body: &'static [u8]) -> (RawResponse, ResponseRecord) {
        let headers = HeaderMap::new();
        let record = response_record(&Redactor::new(), status, &headers, body, true);
        (
            RawResponse {
                status,
                headers,
                body: Bytes::from_static(body),
            },
            record,
        )
    }

    /// `decode` as a client with the default options does it (nothing read before).
    fn decoded(r: RawResponse, rec: &ResponseRecord) -> Result<Response, Box<Finding>> {
        decode(
            r,
            rec,
            &ReadMemo::default(),
            &Redactor::new(),
            false,
            16 << 20,
        )
    }

    #[test]
    fn html_body_is_a_json_finding_with_an_excerpt() {
        let (r, rec) = raw(200, b"<html>oops</html>");
        let f = decoded(r, &rec).unwrap_err();
        assert_eq!(f.check.id, "response.json");
        let (r, rec) = raw(500, b"<html>oops</html>");
        let f = decoded(r, &rec).unwrap_err();
        assert_eq!(f.check.id, "http.server-error");
        assert!(f.detail.contains("<html>oops"), "{}", f.detail);
        assert!(f.actual.contains("HTTP 500"));
    }

    #[test]
    fn deep_nesting_is_reported_not_crashed() {
        let deep: &'static [u8] = Box::leak(
            format!("{}{}", "[".repeat(10_000), "]".repeat(10_000))
                .into_bytes()
                .into_boxed_slice(),
        );
        let (r, rec) = raw(200, deep);
        let f = decoded(r, &rec).unwrap_err();
        assert!(f.actual.contains("nested 128 levels deep"), "{}", f.actual);
        // The limit as the message says it: 127 levels are read, 128 are not.
        for (depth, read) in [(127, true), (128, false)] {
            let nested: &'static [u8] = Box::leak(
                format!("{}{}", "[".repeat(depth), "]".repeat(depth))
                    .into_bytes()
                    .into_boxed_slice(),
            );
            let (r, rec) = raw(200, nested);
            assert_eq!(decoded(r, &rec).is_ok(), read, "{depth} levels");
        }
    }

    #[test]
    fn redirect_is_a_finding() {
        let (r, rec) = raw(302, b"");
        let f = decoded(r, &rec).unwrap_err();
        assert_eq!(f.check.id, "transport.redirect");
    }

    #[test]
    fn truncated_json_is_a_finding() {
        let (r, rec) = raw(200, b"{\"success\": tr");
        assert_eq!(decoded(r, &rec).unwrap_err().check.id, "response.json");
    }
}
