//! Lowering of an exchange case's endpoint and request: body, raw or hex body, headers, secret
//! headers and how it is signed.

use reqwest::header::{HeaderName, HeaderValue};

use super::lower::{Fields, Lower, backticked, choice_help, head, optional, suggest};
use super::{AUTH_MODES, ENDPOINTS, REQUEST_KEYS};
use crate::case::model::{CaseKind, ExchangeCase, Expect, RequestSpec, limits};
use crate::case::node::{Key, Node, NodeKind};
use crate::verdict::endpoint::{AuthMode, Endpoint};
use crate::verdict::source::Spanned;

impl Lower<'_> {
    pub(super) fn exchange(&mut self, fields: &Fields) -> Option<CaseKind> {
        let endpoint = fields.get("endpoint").and_then(|e| self.endpoint(e));
        let request = match fields.get("request") {
            Some(r) => self.request(r),
            None => {
                let at = fields.key("endpoint").map_or(0..0, |k| k.span.clone());
                self.error_help(
                    at,
                    "an `endpoint` case needs a `request`",
                    "add `request: { body: {...} }`",
                );
                None
            }
        };
        let expect = match fields.get("expect") {
            Some(e) => self.expect(e),
            None => Some(Expect {
                schema_enabled: true,
                ..Expect::default()
            }),
        };
        let snapshot = match fields.get("snapshot") {
            Some(s) => self.snapshot(s),
            None => Some(None),
        };
        // Only the mall list has pages to walk; only the products operation has malls to sample.
        if let (Some(Some(spec)), Some(e), Some(node)) =
            (&snapshot, &endpoint, fields.get("snapshot"))
        {
            if spec.walk && *e != Endpoint::MallList {
                self.error_help(
                    node.span.clone(),
                    "`snapshot.walk` applies to `endpoint: mall-list` cases only",
                    "remove `walk: true`, or snapshot a mall-list case",
                );
            }
            if spec.malls.is_some() && *e != Endpoint::MallProducts {
                self.error_help(
                    node.span.clone(),
                    "`snapshot.malls` applies to `endpoint: mall-products` cases only",
                    "remove `malls`, or snapshot a mall-products case",
                );
            }
        }
        Some(CaseKind::Exchange(ExchangeCase {
            endpoint: endpoint?,
            request: request?,
            expect: expect?,
            snapshot: snapshot?,
        }))
    }

    pub(super) fn endpoint(&mut self, node: &Node) -> Option<Endpoint> {
        let name = self.string(node, "`endpoint`")?;
        match name.value.as_str() {
            "mall-list" => Some(Endpoint::MallList),
            "mall-products" => Some(Endpoint::MallProducts),
            other => {
                let help = choice_help(other, ENDPOINTS, "endpoints");
                self.error_help(name.span, format!("unknown endpoint `{other}`"), help);
                None
            }
        }
    }

    pub(super) fn request(&mut self, node: &Node) -> Option<RequestSpec> {
        let fields = self.fields(node, "`request`", REQUEST_KEYS)?;
        let body = fields.get("body").map(|b| {
            self.value(b)
                .and_then(|v| self.bounded_json(b, v, "`request.body`"))
                .map(|v| Spanned::new(v, b.span.clone()))
        });
        let raw = fields.get("raw").map(|r| {
            let raw = self.string(r, "`request.raw`")?;
            if raw.value.len() > limits::MAX_BODY_BYTES {
                self.error(
                    raw.span,
                    format!(
                        "`request.raw` is {} bytes, more than the limit of {} bytes",
                        raw.value.len(),
                        limits::MAX_BODY_BYTES
                    ),
                );
                return None;
            }
            Some(raw)
        });
        let raw_hex = fields.get("raw-hex").map(|r| self.hex(r));
        let bodies: Vec<&Key> = ["body", "raw", "raw-hex"]
            .iter()
            .filter_map(|k| fields.key(k))
            .collect();
        match bodies.as_slice() {
            [first, second, ..] => self.error_help(
                second.span.clone(),
                format!("`{}` and `{}` are both set", first.text, second.text),
                "`body` is JSON built from YAML, `raw` is text and `raw-hex` bytes sent as they are: keep one",
            ),
            [] => self.error_help(
                head(node),
                "a request needs a `body` or a `raw` body",
                "add `body: {...}` (JSON) or `raw: \"...\"` (sent as is)",
            ),
            _ => {}
        }
        let auth = match fields.get("auth") {
            None => Some(AuthMode::Signed),
            Some(a) => self.auth(a),
        };
        let headers = match fields.get("headers") {
            None => Some(Vec::new()),
            Some(h) => self.headers(h, auth.as_ref()),
        };
        let secret_headers = match fields.get("secret-headers") {
            None => Some(Vec::new()),
            Some(n) => self.secret_headers(n, headers.as_deref()),
        };
        Some(RequestSpec {
            body: optional(body)?,
            raw: optional(raw)?,
            raw_hex: optional(raw_hex)?,
            headers: headers?,
            auth: auth?,
            secret_headers: secret_headers?,
        })
    }

    /// Bytes written as a hex string (`raw-hex`).
    pub(super) fn hex(&mut self, node: &Node) -> Option<Spanned<Vec<u8>>> {
        let text = self.string(node, "`request.raw-hex`")?;
        match hex::decode(text.value.trim()) {
            Ok(bytes) => Some(Spanned::new(bytes, text.span)),
            Err(e) => {
                self.error_help(
                    text.span,
                    format!("`request.raw-hex` is not hex: {e}"),
                    "write two hex digits per byte, e.g. `7b ff` as `7bff`",
                );
                None
            }
        }
    }

    /// `secret-headers: [X-Foo]`: headers of this request whose values are redacted like a
    /// credential. A name that is not among the request's headers is a typo that would leave a
    /// secret in the reports, so it is an error.
    pub(super) fn secret_headers(
        &mut self,
        node: &Node,
        headers: Option<&[(String, String)]>,
    ) -> Option<Vec<String>> {
        let names = self.strings(node, "`request.secret-headers`")?;
        let mut ok = true;
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let known = headers.is_none_or(|hs| {
                name.value.eq_ignore_ascii_case("authorization")
                    || hs.iter().any(|(k, _)| k.eq_ignore_ascii_case(&name.value))
            });
            if !known {
                let sent: Vec<&str> = headers
                    .unwrap_or_default()
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect();
                let help = match suggest(&name.value, sent.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None if sent.is_empty() => {
                        "list the header and its value in `request.headers`".to_string()
                    }
                    None => format!("headers of this request: {}", backticked(&sent)),
                };
                self.error_help(
                    name.span,
                    format!("`{}` is not a header of this request", name.value),
                    help,
                );
                ok = false;
                continue;
            }
            out.push(name.value);
        }
        ok.then_some(out)
    }

    pub(super) fn auth(&mut self, node: &Node) -> Option<AuthMode> {
        let mode = self.string(node, "`request.auth`")?;
        match mode.value.as_str() {
            "signed" => Some(AuthMode::Signed),
            "missing" => Some(AuthMode::Missing),
            "wrong-signature" => Some(AuthMode::WrongSignature),
            "altered-signature" => Some(AuthMode::AlteredSignature),
            "truncated-signature" => Some(AuthMode::TruncatedSignature),
            "extended-signature" => Some(AuthMode::ExtendedSignature),
            "unkeyed-signature" => Some(AuthMode::UnkeyedSignature),
            "empty-signature" => Some(AuthMode::EmptySignature),
            "empty-authorization" => Some(AuthMode::EmptyAuthorization),
            "appid-mismatch" => Some(AuthMode::AppidMismatch),
            "unknown-appid" => Some(AuthMode::UnknownAppid),
            "signature-of-other-body" => Some(AuthMode::SignatureOfOtherBody),
            "signature-of-other-operation" => Some(AuthMode::SignatureOfOtherOperation),
            "signed-other-spelling" => Some(AuthMode::SignedOtherSpelling),
            other => {
                let help = choice_help(other, AUTH_MODES, "auth modes");
                self.error_help(mode.span, format!("unknown auth mode `{other}`"), help);
                None
            }
        }
    }

    pub(super) fn headers(
        &mut self,
        node: &Node,
        auth: Option<&AuthMode>,
    ) -> Option<Vec<(String, String)>> {
        let NodeKind::Map(entries) = &node.kind else {
            self.type_error(
                node,
                "`request.headers`",
                "a mapping of header names to values",
            );
            return None;
        };
        let mut out = Vec::with_capacity(entries.len());
        let mut ok = true;
        for (key, value) in entries {
            if HeaderName::from_bytes(key.text.as_bytes()).is_err() {
                self.error(
                    key.span.clone(),
                    format!("`{}` is not a valid HTTP header name", key.text),
                );
                ok = false;
                continue;
            }
            if key.text.eq_ignore_ascii_case("authorization") && auth != Some(&AuthMode::Missing) {
                self.error_help(
                    key.span.clone(),
                    "the Authorization header is built by `request.auth`",
                    "use `auth: missing` together with this header to send a hand-written Authorization value",
                );
                ok = false;
                continue;
            }
            let text = match &value.kind {
                NodeKind::Str(s) => self.subst(s, &value.span),
                NodeKind::Number(n) => Some(n.to_string()),
                _ => {
                    self.type_error(value, &format!("header `{}`", key.text), "a string");
                    None
                }
            };
            match text {
                Some(t) if HeaderValue::from_str(&t).is_ok() => out.push((key.text.clone(), t)),
                Some(_) => {
                    self.error(
                        value.span.clone(),
                        format!("invalid value for header `{}`", key.text),
                    );
                    ok = false;
                }
                None => ok = false,
            }
        }
        ok.then_some(out)
    }
}
