//! Sends the request an exchange case describes: its raw text, raw bytes or JSON body, with
//! run-time discovered values filled in, signed as the case says.

use serde_json::{Value, json};

use crate::case::model::ExchangeCase;
use crate::service::client::{Client, Sent};
use crate::service::discover::Discovery;
use crate::verdict::endpoint::AuthMode;

/// Sends the case's request; Err is the reason the case cannot run (a value that could not be
/// discovered).
/// `page_size`, when given, replaces the `cursor.count` of a JSON body (a mall-list page the
/// service would turn away at the case's size, see `runner::page_limit`).
pub async fn send(
    client: &Client,
    discovery: &Discovery,
    x: &ExchangeCase,
    page_size: Option<u64>,
) -> Result<Sent, String> {
    send_signed_as(client, discovery, x, page_size, &x.request.auth).await
}

/// Sends the case's request as [`send`] does, signed as `auth` says instead of as the case
/// says (the compact spelling a refused raw-spelling probe is compared with).
pub async fn send_signed_as(
    client: &Client,
    discovery: &Discovery,
    x: &ExchangeCase,
    page_size: Option<u64>,
    auth: &AuthMode,
) -> Result<Sent, String> {
    let request = &x.request;
    if auth.is_replay() && !client.signer().depends_on_body() {
        return Err(format!(
            "the `{}` signer gives every body the same signature, so moving one between requests proves nothing",
            client.signer().kind_name()
        ));
    }
    if *auth == AuthMode::SignedOtherSpelling && !client.signer().depends_on_body() {
        return Err(format!(
            "the `{}` signer does not sign the body, so a body in another spelling proves nothing about how signatures are checked",
            client.signer().kind_name()
        ));
    }
    if let Some(bytes) = &request.raw_hex {
        let appid = appid_of(&bytes.value);
        return Ok(client
            .send_raw(
                x.endpoint,
                bytes.value.clone(),
                &appid,
                auth,
                &request.headers,
            )
            .await);
    }
    client
        .redactor()
        .mark_secret_headers(&request.secret_headers);
    if let Some(raw) = &request.raw {
        let mut text = Value::String(raw.value.clone());
        discovery.resolve(client, &mut text).await?;
        let text = text.as_str().unwrap_or_default().to_string();
        // A raw body is signed with its own appid when it has one.
        let appid = appid_of(text.as_bytes());
        return Ok(client
            .send_raw(
                x.endpoint,
                text.into_bytes(),
                &appid,
                auth,
                &request.headers,
            )
            .await);
    }
    let mut body = request.body.as_ref().map_or(json!({}), |b| b.value.clone());
    discovery
        .continue_after_first_page(client, &mut body)
        .await?;
    discovery.resolve(client, &mut body).await?;
    if let (Some(n), Some(count)) = (page_size, body.pointer_mut("/cursor/count")) {
        *count = json!(n);
    }
    Ok(client
        .send_json(x.endpoint, &body, auth, &request.headers)
        .await)
}

/// The `appid` of a JSON body, which signs a raw body; empty when it has none.
fn appid_of(body: &[u8]) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("appid").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_default()
}
