//! The whole first walk of the mall list, as one snapshot (`snapshot: { walk: true }`): the
//! case's page, then the pages after it at the same size, their malls in one `data`. A release
//! diff then rests on the merchant's whole list (up to [`MAX_PAGES`] pages), not on its first
//! page; `run --snapshots update` records it and `diff` fetches the candidate's the same way.

use serde_json::{Value, json};

use crate::case::model::CursorRule;
use crate::service::client::Client;
use crate::verdict::endpoint::{AuthMode, Endpoint};

/// Most pages one walk snapshot holds: 2,000 malls at the shipped size of 100, a file of about
/// 4 MB; a larger merchant's snapshot stops there and says so.
pub const MAX_PAGES: usize = 20;

/// A walk gathered for a snapshot.
#[derive(Debug)]
pub struct WholeWalk {
    /// The first page's envelope, its `data` holding the malls of every page.
    pub value: Value,
    /// Pages fetched, the first included.
    pub pages: usize,
    /// Malls gathered.
    pub malls: usize,
    /// Whether the walk reached the list's end (a short page).
    pub complete: bool,
}

impl WholeWalk {
    /// What the snapshot covers, for the case's coverage.
    pub fn scope(&self) -> String {
        let pages = match self.pages {
            1 => "1 page".to_string(),
            n => format!("{n} pages"),
        };
        if self.complete {
            format!("the whole first walk, {} malls in {pages}", self.malls)
        } else {
            format!(
                "the first {} malls of the walk ({pages}; a walk snapshot stops at {MAX_PAGES} pages)",
                self.malls
            )
        }
    }
}

/// Follows the cursor from `first` (the answer to `request`, a first mall-list page) at the
/// request's `cursor.count` and gathers the malls of every page. Err says why a later page
/// could not be read (the snapshot is then not compared).
pub async fn whole_walk(
    client: &Client,
    request: &Value,
    first: Value,
    rule: &CursorRule,
    full_page: Option<u64>,
) -> Result<WholeWalk, String> {
    // A page of `full_page` records is a full one when the service serves fewer than asked.
    let count = request
        .pointer("/cursor/count")
        .and_then(Value::as_u64)
        .unwrap_or(0)
        .min(full_page.unwrap_or(u64::MAX));
    let mut value = first;
    let mut malls: Vec<Value> = value
        .get("data")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut page_len = malls.len();
    let mut last_page = value.clone();
    let mut pages = 1;
    let mut seen_cursors: Vec<String> = Vec::new();
    // The pages after the first are held together, within one response's tree budget all told
    // (as the sampled products are): twenty pages of 10 MiB of `{}` would take gigabytes.
    let budget = crate::json::tree::response_tree_budget(client.max_body());
    let mut held = 0usize;
    let complete = loop {
        if count == 0 || (page_len as u64) < count {
            break true;
        }
        if pages >= MAX_PAGES {
            break false;
        }
        let Some(cursor) = next_cursor(&last_page, rule) else {
            return Err(format!(
                "page {pages} of the walk gives no cursor to go on with"
            ));
        };
        if seen_cursors.contains(&cursor) {
            return Err(format!("the walk's cursor {cursor:?} repeats"));
        }
        seen_cursors.push(cursor.clone());
        let mut body = request.clone();
        if let Some(cur) = body.get_mut("cursor").and_then(Value::as_object_mut) {
            cur.insert("endCursor".into(), json!(cursor));
        }
        let sent = client
            .send_json(Endpoint::MallList, &body, &AuthMode::Signed, &[])
            .await;
        let response = sent.result.map_err(|f| {
            format!(
                "page {} of the walk got no answer: {}",
                pages + 1,
                f.headline()
            )
        })?;
        held = held.saturating_add(crate::json::scan::tree_bytes_bound(response.json.bytes()));
        if held > budget {
            return Err(format!(
                "the pages of the walk outgrow mallcheck's bound for one snapshot ({} MiB of \
                 trees, 3 × --max-body + 16 MiB) at page {}: the walk is not kept",
                budget >> 20,
                pages + 1
            ));
        }
        let page = response.json.into_value();
        let Some(data) = page.get("data").and_then(Value::as_array) else {
            return Err(format!(
                "page {} of the walk was not served (HTTP {})",
                pages + 1,
                response.status
            ));
        };
        page_len = data.len();
        malls.extend(data.iter().cloned());
        last_page = page;
        pages += 1;
    };
    let gathered = malls.len();
    if let Some(obj) = value.as_object_mut() {
        obj.insert("data".into(), Value::Array(malls));
    }
    Ok(WholeWalk {
        value,
        pages,
        malls: gathered,
        complete,
    })
}

/// The cursor of the page after `page`.
fn next_cursor(page: &Value, rule: &CursorRule) -> Option<String> {
    let value = match rule {
        CursorRule::LastRecord(pointer) => page
            .get("data")
            .and_then(Value::as_array)?
            .last()?
            .pointer(pointer)?,
        CursorRule::Response(pointer) => page.pointer(pointer)?,
    };
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_cursor_follows_the_rule() {
        let page = json!({"next": 7, "data": [{"mallSn": "9"}, {"mallSn": "8"}]});
        assert_eq!(
            next_cursor(&page, &CursorRule::default()).as_deref(),
            Some("8")
        );
        assert_eq!(
            next_cursor(&page, &CursorRule::Response("/next".into())).as_deref(),
            Some("7")
        );
        assert_eq!(
            next_cursor(&json!({"data": []}), &CursorRule::default()),
            None
        );
    }

    #[test]
    fn the_scope_says_whether_the_walk_is_whole() {
        let whole = WholeWalk {
            value: Value::Null,
            pages: 1,
            malls: 30,
            complete: true,
        };
        assert_eq!(whole.scope(), "the whole first walk, 30 malls in 1 page");
        let cut = WholeWalk {
            pages: MAX_PAGES,
            malls: 2_000,
            complete: false,
            ..whole
        };
        assert!(
            cut.scope()
                .starts_with("the first 2000 malls of the walk (20 pages")
        );
    }
}
