//! The cross-merchant cursor probe (spec §1, §4.1): a cursor taken from one merchant's mall
//! list, sent in a mall-list request of another merchant, must not list the first merchant's
//! malls. A service that looks the cursor up across all merchants, or reads the merchant from
//! the cursor instead of `filter.seller`, hands one merchant's malls to another.
//!
//! The probe needs a second merchant: without one configured (the made-up default identity of a
//! remote target) it is skipped, saying so; it never makes a run green or red by itself.

use serde_json::{Value, json};

use crate::case::model::{CrossCursorCase, CursorRule};
use crate::case::vars::PLACEHOLDER_OTHER_MERCHANT_ID;
use crate::checks::{http, ownership};
use crate::runner::Runner;
use crate::runner::execute::Collector;
use crate::runner::preflight;
use crate::spec::catalog;
use crate::verdict::endpoint::{AuthMode, Endpoint};
use crate::verdict::event::Finding;
use crate::verdict::source::Span;

/// One merchant's side of the probe: its request body and what its own first page gave.
struct Side {
    /// How coverage names it.
    label: &'static str,
    merchant: String,
    body: Value,
    /// The cursor taken from its first page, if it listed a mall.
    cursor: Option<String>,
    /// Each mall of its first page.
    malls: Vec<ownership::ListedMall>,
    /// The status of its first page when that was not a success.
    not_served: Option<u16>,
}

/// Runs the probe; Err is a skip reason.
pub(super) async fn run(
    runner: &Runner,
    x: &CrossCursorCase,
    c: &mut Collector<'_>,
) -> Result<(), String> {
    let span = x.body.span.clone();
    let mut body = x.body.value.clone();
    runner.discovery.resolve(&runner.client, &mut body).await?;
    let merchant = ownership::requested_merchant(&body)
        .unwrap_or_default()
        .to_string();
    let other_merchant = x
        .other_seller
        .get("merchantId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if other_merchant.is_empty()
        || ownership::same_id(&other_merchant, PLACEHOLDER_OTHER_MERCHANT_ID)
        || ownership::same_id(&other_merchant, &merchant)
    {
        return Err(NO_SECOND_MERCHANT.to_string());
    }
    let mut other_body = body.clone();
    if let Some(seller) = other_body.pointer_mut("/filter/seller") {
        *seller = x.other_seller.clone();
    }
    let count = body
        .pointer("/cursor/count")
        .and_then(Value::as_u64)
        .unwrap_or(10);
    let count = super::execute::served_size(runner, &body, count).await;
    let rule = match &runner.options.cursor {
        Some(rule) if x.cursor == CursorRule::default() => rule.clone(),
        _ => x.cursor.clone(),
    };

    // The first page of each merchant: a refusal of the configured one means nothing could be
    // tested; the other merchant not served (unknown to the service, another application's)
    // leaves nothing to probe.
    let mine = match first_page(runner, c, &span, &body, count).await {
        First::Served(page) => side("the configured merchant", merchant, body, &page, &rule),
        First::NotServed(status) => Side {
            not_served: Some(status),
            ..side(
                "the configured merchant",
                merchant,
                body,
                &Value::Null,
                &rule,
            )
        },
        First::Refused(finding, _) => {
            c.add(vec![*finding], &span);
            return Ok(());
        }
        First::NoAnswer => return Ok(()),
    };
    let theirs = match first_page(runner, c, &span, &other_body, count).await {
        First::Served(page) => side(
            "the other merchant",
            other_merchant,
            other_body,
            &page,
            &rule,
        ),
        First::NotServed(status) | First::Refused(_, status) => {
            return Err(format!(
                "the other merchant's first page was not served (HTTP {status}): a cursor of its \
                 list cannot be taken, nor its identity used (MALLCHECK_OTHER_MERCHANT_ID)"
            ));
        }
        First::NoAnswer => return Ok(()),
    };
    if mine.cursor.is_none() && theirs.cursor.is_none() {
        return Err(
            "neither merchant's first page lists a mall: there is no cursor to move between them"
                .to_string(),
        );
    }

    let mut said = Vec::new();
    for (from, to) in [(&mine, &theirs), (&theirs, &mine)] {
        let Some(cursor) = &from.cursor else {
            said.push(match from.not_served {
                Some(status) => format!(
                    "{}'s first page was not served (HTTP {status}): no cursor to take",
                    from.label
                ),
                None => format!("{} lists no mall to take a cursor from", from.label),
            });
            continue;
        };
        let mut request = to.body.clone();
        set_cursor(&mut request, Some(cursor), count);
        let sent = runner
            .client
            .send_json(Endpoint::MallList, &request, &AuthMode::Signed, &[])
            .await;
        let Some(response) = c.take(sent, &span) else {
            said.push(format!(
                "{}'s cursor in a request of {} got no answer",
                from.label, to.label
            ));
            continue;
        };
        c.add(http::server_error(response.status), &span);
        let records = response
            .json
            .get("data")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let leak =
            ownership::cursor_merchant(&response.json, &to.merchant, &from.merchant, &from.malls);
        if let Some(f) = response.json.tree_finding(false) {
            c.add(vec![f], &span);
        }
        c.add(leak.into_iter().collect(), &span);
        said.push(format!(
            "{}'s cursor in a request of {}: HTTP {}, {records} mall(s) checked",
            from.label, to.label, response.status
        ));
    }
    c.covered(catalog::OWNERSHIP_CURSOR_MERCHANT.id, said.join("; "));
    Ok(())
}

/// Why the probe is skipped without a second merchant.
const NO_SECOND_MERCHANT: &str = "no second merchant is configured (MALLCHECK_OTHER_MERCHANT_ID \
     and MALLCHECK_OTHER_MERCHANT_USER_ID, or the profile's other_merchant_id and \
     other_merchant_user_id): a cursor of one merchant cannot be sent with another";

/// How a merchant's first page was answered.
enum First {
    /// A success envelope with a data array.
    Served(Value),
    /// Refused for its credentials (401/403, an auth-failure envelope): the finding to add.
    Refused(Box<Finding>, u16),
    /// Another answer (its status).
    NotServed(u16),
    /// No answer (the transport finding is added).
    NoAnswer,
}

/// The first page of `body` at `count`.
async fn first_page(
    runner: &Runner,
    c: &mut Collector<'_>,
    span: &Span,
    body: &Value,
    count: u64,
) -> First {
    let mut request = body.clone();
    set_cursor(&mut request, None, count);
    let sent = runner
        .client
        .send_json(Endpoint::MallList, &request, &AuthMode::Signed, &[])
        .await;
    let Some(response) = c.take(sent, span) else {
        return First::NoAnswer;
    };
    c.add(http::server_error(response.status), span);
    let status = response.status;
    if let Some(refused) = preflight::refused(status, &response.json) {
        return First::Refused(Box::new(refused), status);
    }
    let success = response.json.get("success") == Some(&Value::Bool(true))
        && response.json.get("data").is_some_and(Value::is_array);
    if let Some(f) = response.json.tree_finding(false) {
        c.add(vec![f], span);
    }
    if success {
        First::Served(response.json.into_value())
    } else {
        First::NotServed(status)
    }
}

/// A side of the probe from its first page (`Null` when it was not served).
fn side(
    label: &'static str,
    merchant: String,
    body: Value,
    page: &Value,
    rule: &CursorRule,
) -> Side {
    let records = page
        .get("data")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let malls = records
        .iter()
        .filter_map(ownership::ListedMall::of)
        .collect();
    Side {
        label,
        merchant,
        body,
        cursor: cursor_of(page, records, rule),
        malls,
        not_served: None,
    }
}

/// The cursor a page gives. With the last-record rule it is taken from the page's first
/// record, the mall with the most of its merchant's malls after it: a service that continues
/// the cursor's own list then has the most to leak.
fn cursor_of(page: &Value, records: &[Value], rule: &CursorRule) -> Option<String> {
    let value = match rule {
        CursorRule::LastRecord(pointer) => records.first()?.pointer(pointer)?,
        CursorRule::Response(pointer) => page.pointer(pointer)?,
    };
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Sets `cursor.endCursor` and `cursor.count` of a mall-list body (a walk's page, a probe).
pub(super) fn set_cursor(body: &mut Value, cursor: Option<&str>, count: u64) {
    if let Some(obj) = body.as_object_mut() {
        let cur = obj
            .entry("cursor")
            .or_insert_with(|| json!({"cursorField": "id"}));
        if let Some(cur) = cur.as_object_mut() {
            cur.insert(
                "endCursor".into(),
                cursor.map_or(Value::Null, |c| Value::String(c.to_string())),
            );
            cur.insert("count".into(), json!(count));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_is_the_first_record_or_the_response_field() {
        let page = json!({"next": "n1", "data": [{"mallSn": "9"}, {"mallSn": "8"}]});
        let records = page["data"].as_array().unwrap().clone();
        assert_eq!(
            cursor_of(&page, &records, &CursorRule::default()).as_deref(),
            Some("9")
        );
        assert_eq!(
            cursor_of(&page, &records, &CursorRule::Response("/next".into())).as_deref(),
            Some("n1")
        );
        assert_eq!(cursor_of(&page, &[], &CursorRule::default()), None);
    }

    #[test]
    fn set_cursor_replaces_the_cursor_and_count() {
        let mut body = json!({"cursor": {"cursorField": "id", "endCursor": null, "count": 10}});
        set_cursor(&mut body, Some("42"), 3);
        assert_eq!(
            body["cursor"],
            json!({"cursorField": "id", "endCursor": "42", "count": 3})
        );
    }
}
