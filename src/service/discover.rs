//! Run-time discovery of values a case needs but the user did not give: the `mallSn` and
//! `signature` of one mall of the configured merchant, taken from the first mall-list page.
//!
//! Case files are parsed before anything is sent, so such variables are parsed as sentinels
//! and replaced here, once, on first use.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use serde_json::Value;
use tokio::sync::OnceCell;

use crate::service::client::Client;
use crate::spec::wire::{DescribedField, StateCode};
use crate::verdict::endpoint::{AuthMode, Endpoint};

/// Variable naming the target mall's number.
pub const MALL_SN_VAR: &str = "MALLCHECK_MALL_SN";
/// Variable naming the target mall's signature.
pub const MALL_SIGNATURE_VAR: &str = "MALLCHECK_MALL_SIGNATURE";
/// Placeholder parsed in place of [`MALL_SN_VAR`] when the user did not set it.
pub const MALL_SN_SENTINEL: &str = "\u{1}mallcheck:discover:mallSn\u{1}";
/// Placeholder parsed in place of [`MALL_SIGNATURE_VAR`] when the user did not set it.
pub const MALL_SIGNATURE_SENTINEL: &str = "\u{1}mallcheck:discover:signature\u{1}";

/// Discovers a target mall on first use.
#[derive(Debug, Default)]
pub struct Discovery {
    list_body: Option<Value>,
    mall: OnceCell<Result<Target, String>>,
    /// Under `--cursor response:POINTER`, the pointer into a page's answer that gives the next
    /// cursor (a token of the service's own)...
    response_cursor: Option<String>,
    /// ...and the one the first page gave: what a case sends for a continuation page.
    continuation: OnceCell<Result<String, String>>,
    /// A walk or sweep of the configured merchant's list ended with no mall.
    listed_none: std::sync::atomic::AtomicBool,
    /// A read of the configured merchant's list (the preflight's first page, discovery's, a
    /// walk or sweep) listed a mall: with `listed_none`, the same list answered two ways.
    listed_some: std::sync::atomic::AtomicBool,
    /// Products calls of the configured merchant's malls answered with an array...
    products_calls: AtomicU64,
    /// ...and the products those arrays held.
    products_seen: AtomicU64,
    /// The products of each mall (by its seller's merchant id, mallSn and signature) as first
    /// read in the run: how many, and a mark of their spuIds as a set; and the malls already
    /// found answering others.
    products: Mutex<FirstReads<ProductsRead>>,
    /// The description each described value carried first in the run (by field and value),
    /// the value each description was first read with (by field and description), with the
    /// mall each was read on, and the values already reported.
    descriptions: Mutex<Descriptions>,
    /// The state of each mall as first read in the run ([`crate::spec::wire::state_code`]),
    /// and the malls already found in another.
    states: Mutex<(
        HashMap<String, crate::spec::wire::StateCode>,
        HashSet<String>,
    )>,
}

/// The mall discovery chose, and whether the first page showed that another follows it.
#[derive(Debug, Clone)]
struct Target {
    sn: String,
    signature: String,
    /// A record after it on the first page, or a full first page (more may follow).
    followed: bool,
}

/// What the run first read of each mall, and the malls already found read otherwise.
type FirstReads<T> = (HashMap<String, T>, HashSet<String>);

/// What `products.repeatable` remembers of a products answer: how many products, a mark of
/// their spuIds as a set, and the mark of their SKUs when it was read.
type ProductsRead = (usize, u64, Option<crate::spec::wire::SkuMark>);

/// How a products answer differs from the first of its mall, for the finding's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProductsChange {
    /// Another number of products, or other spuIds: how many the first read held.
    Products(usize),
    /// The same products with other SKUs: how many SKUs the first read held.
    Skus(usize),
}

/// What `mall.descriptions` remembers of a run (see [`Discovery::read_descriptions`]).
#[derive(Debug, Default)]
struct Descriptions {
    by_value: HashMap<(DescribedField, i64), (u32, String)>,
    by_text: HashMap<(DescribedField, u32), (i64, String)>,
    told: HashSet<(DescribedField, i64)>,
}

/// A described value that disagrees with an earlier read of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DescriptionProblem {
    /// The value carries the description another value carried (on `mall`).
    Shared {
        /// The field.
        field: DescribedField,
        /// The value read now.
        value: i64,
        /// The other value.
        other: i64,
        /// The mall the other value was read on.
        mall: String,
    },
    /// The value carries another description than it did (on `mall`).
    Varies {
        /// The field.
        field: DescribedField,
        /// The value.
        value: i64,
        /// The mall it was first read on.
        mall: String,
    },
}

/// A mall as `mall.read-only` knows it: its merchant's (hashed) id and its `mallSn`.
pub fn mall_key(owner: u64, key: &str) -> String {
    format!("{owner:016x} {key}")
}

impl Discovery {
    /// `list_body` is a signed first-page mall-list request for the configured merchant.
    pub fn new(list_body: Value) -> Discovery {
        Discovery {
            list_body: Some(list_body),
            mall: OnceCell::new(),
            response_cursor: None,
            continuation: OnceCell::new(),
            listed_none: Default::default(),
            listed_some: Default::default(),
            products_calls: AtomicU64::new(0),
            products_seen: AtomicU64::new(0),
            products: Mutex::default(),
            descriptions: Mutex::default(),
            states: Mutex::default(),
        }
    }

    /// Notes the state each mall of a page was read in (`(mall, state)`, by index); gives, for
    /// each mall read in another state than it was first read in, its index and that first
    /// state (once per mall): §3 says the two operations never move a mall between states, so
    /// two reads of one run must agree, whichever cases made them. One lock a page.
    pub fn read_states(
        &self,
        malls: impl Iterator<Item = (usize, String, StateCode)>,
    ) -> Vec<(usize, StateCode)> {
        let mut guard = self.states.lock().unwrap_or_else(PoisonError::into_inner);
        let (first, moved) = &mut *guard;
        let mut found = Vec::new();
        for (i, mall, state) in malls {
            match first.get(&mall) {
                None => {
                    first.insert(mall, state);
                }
                Some(&before) if before != state && moved.insert(mall) => {
                    found.push((i, before));
                }
                Some(_) => {}
            }
        }
        found
    }

    /// Notes the state each mall of a page was read in when no earlier read of it was noted,
    /// comparing nothing: a read made before the cases (the preflight, a page-size probe) is
    /// where the cases' reads are held to, and a move it saw is reported by the next read of a
    /// case, which differs from the first.
    pub fn first_read(&self, keys: &[String], states: &[Option<crate::spec::wire::MallState>]) {
        let mut guard = self.states.lock().unwrap_or_else(PoisonError::into_inner);
        for (key, state) in keys.iter().zip(states) {
            if let Some(state) = state {
                guard
                    .0
                    .entry(mall_key(state.owner, key))
                    .or_insert(state.code);
            }
        }
    }

    /// Records a products call of one of the merchant's malls answered with `count` products.
    pub fn saw_products(&self, count: usize) {
        self.products_calls.fetch_add(1, Ordering::Relaxed);
        self.products_seen
            .fetch_add(count as u64, Ordering::Relaxed);
    }

    /// Notes the described values of a page's malls (`(index, mallSn, state code)`), and gives
    /// each one that disagrees with what the run read before (once per field and value): two
    /// values with one description, or one value with two.
    pub fn read_descriptions<'a>(
        &self,
        malls: impl Iterator<Item = (usize, &'a str, StateCode)>,
    ) -> Vec<(usize, DescriptionProblem)> {
        let mut guard = self
            .descriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let d = &mut *guard;
        let mut found = Vec::new();
        for (i, sn, code) in malls {
            // A state out of its range breaks `mall.state` already: its text describes nothing
            // the spec lists.
            let listed = |field: DescribedField, value: i64| match field {
                DescribedField::State => (0..=2).contains(&value),
                DescribedField::InternalState => (0..=1).contains(&value),
                _ => true,
            };
            for (field, value, text) in code.described() {
                if !listed(field, value) {
                    continue;
                }
                // Looked up before inserting: a value read before (nearly every one) costs no
                // allocation; only a new value or text keeps the mall number.
                let first = d.by_value.get(&(field, value));
                let owner = d.by_text.get(&(field, text));
                let problem = match (first, owner) {
                    (_, Some((other, mall))) if *other != value => {
                        Some(DescriptionProblem::Shared {
                            field,
                            value,
                            other: *other,
                            mall: mall.clone(),
                        })
                    }
                    (Some((before, mall)), _) if *before != text => {
                        Some(DescriptionProblem::Varies {
                            field,
                            value,
                            mall: mall.clone(),
                        })
                    }
                    _ => None,
                };
                let (new_value, new_text) = (first.is_none(), owner.is_none());
                if new_value {
                    d.by_value.insert((field, value), (text, sn.to_string()));
                }
                if new_text {
                    d.by_text.insert((field, text), (value, sn.to_string()));
                }
                if let Some(problem) = problem
                    && d.told.insert((field, value))
                {
                    found.push((i, problem));
                }
            }
        }
        found
    }

    /// Notes the products of `mall` (its key: seller, mallSn, signature, X-env-flag) as read
    /// now: their spuIds and, when read, the mark of their SKUs. Gives how the answer differs
    /// from the first read of the same mall in the run, once per mall.
    pub fn read_products<'a>(
        &self,
        mall: &str,
        ids: impl Iterator<Item = &'a str>,
        skus: Option<crate::spec::wire::SkuMark>,
    ) -> Option<ProductsChange> {
        use std::hash::BuildHasher as _;
        let hasher = foldhash::fast::FixedState::with_seed(0x0073_7075);
        let (mut count, mut mark) = (0usize, 0u64);
        for id in ids {
            count += 1;
            mark = mark.wrapping_add(hasher.hash_one(id));
        }
        let mut guard = self.products.lock().unwrap_or_else(PoisonError::into_inner);
        let (first, told) = &mut *guard;
        let Some(&(before, before_mark, before_skus)) = first.get(mall) else {
            first.insert(mall.to_string(), (count, mark, skus));
            return None;
        };
        let change = if (before, before_mark) != (count, mark) {
            ProductsChange::Products(before)
        } else {
            match (before_skus, skus) {
                (Some(b), Some(n)) if b != n => ProductsChange::Skus(b.count),
                // A first read without its SKUs' mark takes this one's.
                (None, Some(_)) => {
                    first.insert(mall.to_string(), (count, mark, skus));
                    return None;
                }
                _ => return None,
            }
        };
        told.insert(mall.to_string()).then_some(change)
    }

    /// Whether a products call of one of the merchant's malls was answered (empty or not).
    pub fn products_called(&self) -> bool {
        self.products_calls.load(Ordering::Relaxed) > 0
    }

    /// Whether every products call of the merchant's malls (one at least) answered an empty
    /// list: no product or SKU record was checked.
    pub fn products_none(&self) -> bool {
        self.products_calls.load(Ordering::Relaxed) > 0
            && self.products_seen.load(Ordering::Relaxed) == 0
    }

    /// The signed first-page mall-list request of the configured merchant, when there is one.
    pub fn list_body(&self) -> Option<&Value> {
        self.list_body.as_ref()
    }

    /// The configured appid (of the first-page request), empty when there is none.
    pub fn appid(&self) -> &str {
        self.list_body
            .as_ref()
            .and_then(|b| b.get("appid"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// Why discovery failed, when a case needed it and it failed, and whether the service is
    /// to blame (`true`: it could not be reached or did not answer the first page with a
    /// success; `false`: the merchant lists no mall, or there was no first page to send).
    pub fn failure(&self) -> Option<(&str, bool)> {
        match self.mall.get() {
            Some(Err(reason)) => Some((reason.as_str(), reason.starts_with("discovery failed"))),
            _ => None,
        }
    }

    /// Records that a whole walk of the merchant's mall list found no mall.
    pub fn saw_empty_list(&self) {
        self.listed_none
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether `body`, a mall-list request, asks for the configured merchant's list (the
    /// merchant of the first page discovery reads).
    pub fn is_configured_list(&self, body: &Value) -> bool {
        let merchant = |b: &Value| b.pointer("/filter/seller/merchantId").cloned();
        self.list_body
            .as_ref()
            .is_some_and(|mine| merchant(mine).is_some() && merchant(mine) == merchant(body))
    }

    /// Records that a read of the configured merchant's list listed a mall.
    pub fn saw_malls(&self) {
        self.listed_some
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether some read of the configured merchant's list found no mall: discovery found
    /// none on its first page, or the preflight's first page or a whole walk listed none.
    fn listed_no_mall(&self) -> bool {
        self.listed_none.load(std::sync::atomic::Ordering::Relaxed)
            || matches!(self.mall.get(), Some(Err(r)) if r.contains("lists no mall"))
    }

    /// Whether the configured merchant lists no mall, as far as the run saw: some read found
    /// none and none found any (see [`Discovery::lists_two_ways`]).
    pub fn merchant_empty(&self) -> bool {
        self.listed_no_mall() && !self.listed_some.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the configured merchant's list was read with malls once and with none another
    /// time: §1 has both operations only read, so the same list answered two ways (a cache
    /// that loads on the first call and answers it empty, a read that consumes what it
    /// returns) is a broken contract, not an empty merchant.
    pub fn lists_two_ways(&self) -> bool {
        self.listed_no_mall() && self.listed_some.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Takes the service's next cursor from `pointer` into a page's answer (`--cursor
    /// response:POINTER`): a case's continuation page (an `endCursor` of the discovered
    /// mallSn, the spec's last-record cursor) is then sent with the cursor the first page
    /// gave instead.
    pub fn with_response_cursor(mut self, pointer: Option<String>) -> Discovery {
        self.response_cursor = pointer;
        self
    }

    /// Under `--cursor response:POINTER`, puts the first page's next cursor in a body whose
    /// `cursor.endCursor` is the discovered mallSn; Err is why the case cannot run (the first
    /// page gives none, or nothing follows it).
    pub async fn continue_after_first_page(
        &self,
        client: &Client,
        body: &mut Value,
    ) -> Result<(), String> {
        let Some(pointer) = &self.response_cursor else {
            return Ok(());
        };
        let continued = body
            .pointer("/cursor/endCursor")
            .and_then(Value::as_str)
            .is_some_and(|c| c.contains(MALL_SN_SENTINEL));
        if !continued {
            return Ok(());
        }
        let token = self
            .continuation
            .get_or_init(|| async {
                let Some(list) = &self.list_body else {
                    return Err("no first page to continue from".to_string());
                };
                let sent = client
                    .send_json(Endpoint::MallList, list, &AuthMode::Signed, &[])
                    .await;
                let response = sent.result.map_err(|f| {
                    format!(
                        "the first mall-list page, whose next cursor this case continues from, \
                         failed: {} ({})",
                        f.actual, f.check.id
                    )
                })?;
                let tree = response.json.value();
                let count = list
                    .pointer("/cursor/count")
                    .and_then(Value::as_u64)
                    .unwrap_or(u64::MAX);
                let listed = tree
                    .get("data")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                if (listed as u64) < count {
                    return Err(format!(
                        "the merchant's first page lists {listed} of {count} malls asked for: \
                         nothing follows it, so the page after it is empty whether or not the \
                         request is refused"
                    ));
                }
                match tree.pointer(pointer) {
                    Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
                    Some(Value::Number(n)) => Ok(n.to_string()),
                    _ => Err(format!(
                        "the first mall-list page gives no next cursor at response:{pointer}"
                    )),
                }
            })
            .await
            .clone()?;
        if let Some(end) = body.pointer_mut("/cursor/endCursor") {
            *end = Value::String(token);
        }
        Ok(())
    }

    /// Whether a value holds a sentinel anywhere.
    pub fn needs(value: &Value) -> bool {
        match value {
            Value::String(s) => s.contains(MALL_SN_SENTINEL) || s.contains(MALL_SIGNATURE_SENTINEL),
            Value::Array(a) => a.iter().any(Discovery::needs),
            Value::Object(o) => o.values().any(Discovery::needs),
            _ => false,
        }
    }

    /// Replaces the sentinels in `value`; Err is the reason the case must be skipped.
    pub async fn resolve(&self, client: &Client, value: &mut Value) -> Result<(), String> {
        if !Discovery::needs(value) {
            return Ok(());
        }
        let target = self.mall(client).await?;
        replace(value, &target.sn, &target.signature);
        Ok(())
    }

    /// Whether the discovered mall is, as far as the first page shows, the merchant's last: no
    /// record after it, on a page shorter than was asked for. `false` until discovery ran, or
    /// when it failed.
    pub fn nothing_follows_target(&self) -> bool {
        matches!(self.mall.get(), Some(Ok(target)) if !target.followed)
    }

    async fn mall(&self, client: &Client) -> Result<Target, String> {
        self.mall
            .get_or_init(|| async {
                let Some(body) = &self.list_body else {
                    return Err(format!("no mall to target: set {MALL_SN_VAR} and {MALL_SIGNATURE_VAR}"));
                };
                let sent = client.send_json(Endpoint::MallList, body, &AuthMode::Signed, &[]).await;
                let count = body
                    .pointer("/cursor/count")
                    .and_then(Value::as_u64)
                    .unwrap_or(u64::MAX);
                let candidates = match sent.result {
                    Ok(response) => candidates(response.status, &response.json, count)?,
                    Err(f) => {
                        return Err(format!(
                            "discovery failed: {} ({} on the first mall-list page); or set {MALL_SN_VAR} and {MALL_SIGNATURE_VAR}",
                            f.actual, f.check.id
                        ))
                    }
                };
                self.saw_malls();
                Ok(with_products(client, body, candidates).await)
            })
            .await
            .clone()
    }
}

/// The first of `candidates` (in order, none empty) whose products call, signed, answers a
/// non-empty list; the first when none does. A products case of the target that expects no
/// data (a refusal probe) tells nothing when the mall's list is empty anyway: a newly created
/// mall, often the first of a page ordered by id, has no products yet. Stops at the first
/// answer that is no list (the cases will meet and judge it).
async fn with_products(client: &Client, list_body: &Value, mut candidates: Vec<Target>) -> Target {
    let seller = list_body
        .pointer("/filter/seller")
        .cloned()
        .unwrap_or(Value::Null);
    let appid = list_body.get("appid").cloned().unwrap_or(Value::Null);
    let mut chosen = 0;
    for (i, target) in candidates.iter().enumerate() {
        let body = serde_json::json!({
            "appid": appid,
            "seller": seller,
            "mallID": {"mallSn": target.sn, "signature": target.signature},
        });
        let sent = client
            .send_json(Endpoint::MallProducts, &body, &AuthMode::Signed, &[])
            .await;
        let listed = match &sent.result {
            Ok(response) if response.status < 300 => response.json.array_len(),
            _ => None,
        };
        match listed {
            Some(0) => {}
            Some(_) => {
                chosen = i;
                break;
            }
            None => break,
        }
    }
    candidates.swap_remove(chosen)
}

/// The malls of a first mall-list page asked for `count` records that discovery may target,
/// in the order it tries them, or why there is none: an answer that is not a success says so
/// instead of "lists no mall".
fn candidates(status: u16, json: &Value, count: u64) -> Result<Vec<Target>, String> {
    let hint = format!("set {MALL_SN_VAR} and {MALL_SIGNATURE_VAR}");
    if json.get("success") != Some(&Value::Bool(true)) {
        let field = |name: &str| json.get(name).map_or("missing".into(), Value::to_string);
        return Err(format!(
            "discovery failed: the first mall-list page answered HTTP {status}, success {}, code {}; or {hint}",
            field("success"),
            field("code")
        ));
    }
    let all = json
        .get("data")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let ids = |m: &Value| {
        let field = |name: &str| m.get(name).and_then(Value::as_str).map(str::to_string);
        field("mallSn").zip(field("signature"))
    };
    // Malls that are not deleted first: the spec does not say a deleted mall still answers its
    // products (§4.2), so the products cases target a live one when the page has one.
    let live = |m: &Value| m.get("isDelete").and_then(Value::as_i64) == Some(0);
    let target = |(i, (sn, signature)): (usize, (String, String))| Target {
        sn,
        signature,
        followed: i + 1 < all.len() || all.len() as u64 >= count,
    };
    let in_order: Vec<Target> = [true, false]
        .into_iter()
        .flat_map(|want_live| {
            all.iter()
                .enumerate()
                .filter(move |(_, m)| live(m) == want_live)
                .filter_map(|(i, m)| ids(m).map(|x| (i, x)))
                .map(target)
        })
        .collect();
    if in_order.is_empty() {
        return Err(format!(
            "the configured merchant lists no mall to target; {hint}"
        ));
    }
    Ok(in_order)
}

/// The mall discovery targets when no products call is made: the first of [`candidates`].
#[cfg(test)]
fn target_mall(status: u16, json: &Value, count: u64) -> Result<Target, String> {
    candidates(status, json, count).map(|mut c| c.swap_remove(0))
}

/// Replaces the sentinels in `value` with a mall's number and signature.
pub fn replace(value: &mut Value, sn: &str, sig: &str) {
    match value {
        Value::String(s) if s.contains(MALL_SN_SENTINEL) || s.contains(MALL_SIGNATURE_SENTINEL) => {
            *s = s
                .replace(MALL_SN_SENTINEL, sn)
                .replace(MALL_SIGNATURE_SENTINEL, sig);
        }
        Value::Array(a) => a.iter_mut().for_each(|v| replace(v, sn, sig)),
        Value::Object(o) => o.values_mut().for_each(|v| replace(v, sn, sig)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A mall read in another state than at its first read is told once, with that first
    /// state; reads that agree, and other malls, are not.
    #[test]
    fn a_mall_read_in_another_state_is_told_once_with_its_first_state() {
        let d = Discovery::default();
        let code = crate::spec::wire::StateCode::of_own;
        let read = |malls: &[(&str, u64)]| {
            d.read_states(
                malls
                    .iter()
                    .enumerate()
                    .map(|(i, (m, s))| (i, m.to_string(), code(*s))),
            )
        };
        assert!(read(&[("1", 7), ("2", 7), ("1", 7)]).is_empty());
        assert_eq!(read(&[("2", 7), ("1", 8)]), [(1, code(7))]);
        assert!(read(&[("1", 9), ("2", 7)]).is_empty(), "told once");
    }

    /// The number and signature discovery targets, and whether another mall follows it.
    fn picked(status: u16, json: &Value, count: u64) -> Result<(String, String, bool), String> {
        target_mall(status, json, count).map(|t| (t.sn, t.signature, t.followed))
    }

    #[test]
    fn discovery_gives_the_true_reason_when_there_is_no_mall() {
        let ok =
            json!({"success": true, "code": "0000", "data": [{"mallSn": "1", "signature": "s"}]});
        assert_eq!(picked(200, &ok, 10), Ok(("1".into(), "s".into(), false)));
        assert_eq!(
            picked(200, &ok, 1),
            Ok(("1".into(), "s".into(), true)),
            "a full page: more may follow"
        );
        let deleted_first = json!({"success": true, "code": "0000", "data": [
            {"mallSn": "1", "signature": "s", "isDelete": 1},
            {"mallSn": "2", "signature": "t", "isDelete": 0},
        ]});
        assert_eq!(
            picked(200, &deleted_first, 10),
            Ok(("2".into(), "t".into(), false)),
            "a live mall is targeted before a deleted one"
        );
        let live_first = json!({"success": true, "code": "0000", "data": [
            {"mallSn": "2", "signature": "t", "isDelete": 0},
            {"mallSn": "1", "signature": "s", "isDelete": 1},
        ]});
        assert_eq!(
            picked(200, &live_first, 10),
            Ok(("2".into(), "t".into(), true))
        );
        let all_deleted = json!({"success": true, "code": "0000",
            "data": [{"mallSn": "1", "signature": "s", "isDelete": 1}]});
        assert_eq!(
            picked(200, &all_deleted, 10),
            Ok(("1".into(), "s".into(), false))
        );
        let empty = json!({"success": true, "code": "0000", "data": []});
        assert!(
            picked(200, &empty, 10)
                .unwrap_err()
                .contains("lists no mall")
        );
        let refused = json!({"success": false, "code": "4010", "msg": "bad signature"});
        let why = picked(401, &refused, 10).unwrap_err();
        assert!(why.starts_with("discovery failed: the first mall-list page answered HTTP 401, success false, code \"4010\""), "{why}");
    }

    #[test]
    fn sentinels_are_found_and_replaced_deep_in_a_body() {
        let mut v =
            json!({"mallID": {"mallSn": MALL_SN_SENTINEL, "signature": MALL_SIGNATURE_SENTINEL}});
        assert!(Discovery::needs(&v));
        replace(&mut v, "123", "abc");
        assert_eq!(v, json!({"mallID": {"mallSn": "123", "signature": "abc"}}));
        assert!(!Discovery::needs(&v));
    }
}
