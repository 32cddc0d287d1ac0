//! The products of sampled malls, as one snapshot (`snapshot: { malls: N }` on a mall-products
//! case): up to N malls of the configured merchant's first mall-list page that are not
//! deleted, spread over the page (the first and the last always), and the products of each,
//! as `[{"mallSn": ..., "products": [...]}, ...]` in list order. The sample is fixed by the
//! list (no seed), so `run --snapshots update` against the baseline and `diff` against the
//! candidate pick the same malls while the list is the same, and a release verdict rests on
//! the products of many malls, not of one.

use serde_json::{Value, json};

use crate::service::client::Client;
use crate::verdict::endpoint::{AuthMode, Endpoint};

/// Largest `snapshot.malls`.
pub const MAX_MALLS: u64 = 50;

/// Malls of the first page the sample is drawn from.
const LIST_PAGE: u64 = 100;

/// Products of sampled malls gathered for a snapshot.
#[derive(Debug)]
pub struct Sampled {
    /// `[{"mallSn", "products"}]`.
    pub value: Value,
    /// Malls sampled.
    pub malls: usize,
    /// Malls of the first page that were not deleted (the population).
    pub listed: usize,
    /// Products gathered.
    pub products: usize,
}

impl Sampled {
    /// What the snapshot covers, for the case's coverage.
    pub fn scope(&self) -> String {
        format!(
            "the products of {} of the {} malls (not deleted) of the first page, {} products",
            self.malls, self.listed, self.products
        )
    }
}

/// Lists the first page of `list_body`'s merchant, samples `n` malls and fetches the products
/// of each with `request` (a products body; its `mallID` is replaced) and `headers`. Err says
/// why the sample could not be gathered (the snapshot is then not compared).
pub async fn sampled_products(
    client: &Client,
    list_body: &Value,
    request: &Value,
    headers: &[(String, String)],
    n: usize,
) -> Result<Sampled, String> {
    let mut list = list_body.clone();
    if let Some(cur) = list.get_mut("cursor").and_then(Value::as_object_mut) {
        cur.insert("endCursor".into(), Value::Null);
        cur.insert("count".into(), json!(LIST_PAGE));
    }
    let sent = client
        .send_json(Endpoint::MallList, &list, &AuthMode::Signed, &[])
        .await;
    let response = sent
        .result
        .map_err(|f| format!("the mall list got no answer: {}", f.headline()))?;
    let page = response.json.into_value();
    let listed = malls_of(&page);
    if listed.is_empty() {
        return Err(format!(
            "the first mall-list page (HTTP {}) lists no mall that is not deleted",
            response.status
        ));
    }
    let mut out = Vec::new();
    let mut products = 0;
    // The trees of every sampled mall are held together: within one response's tree budget
    // all told, as the cost model counts them (ten malls of 10 MiB of `{}` each took 1.4 GB).
    let budget = crate::json::tree::response_tree_budget(client.max_body());
    let mut held = 0usize;
    for i in spread(listed.len(), n) {
        let (sn, signature) = &listed[i];
        let mut body = request.clone();
        if let Some(obj) = body.as_object_mut() {
            obj.insert(
                "mallID".into(),
                json!({"mallSn": sn, "signature": signature}),
            );
        }
        let sent = client
            .send_json(Endpoint::MallProducts, &body, &AuthMode::Signed, headers)
            .await;
        let response = sent
            .result
            .map_err(|f| format!("the products of mall {sn} got no answer: {}", f.headline()))?;
        let status = response.status;
        held = held.saturating_add(crate::json::scan::tree_bytes_bound(response.json.bytes()));
        if held > budget {
            return Err(format!(
                "the products of the {} sampled malls outgrow mallcheck's bound for one \
                 snapshot ({} MiB of trees, 3 × --max-body + 16 MiB): the sample is not kept",
                out.len() + 1,
                budget >> 20
            ));
        }
        let value = response.json.into_value();
        let Some(items) = value.as_array().filter(|_| (200..300).contains(&status)) else {
            return Err(format!(
                "the products of mall {sn} were not served (HTTP {status})"
            ));
        };
        products += items.len();
        out.push(json!({"mallSn": sn, "products": value}));
    }
    Ok(Sampled {
        malls: out.len(),
        value: Value::Array(out),
        listed: listed.len(),
        products,
    })
}

/// `(mallSn, signature)` of the malls of a page that are not deleted, in list order.
fn malls_of(page: &Value) -> Vec<(String, String)> {
    page.get("data")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|m| m.get("isDelete").and_then(Value::as_i64) != Some(1))
        .filter_map(|m| {
            Some((
                m.get("mallSn").and_then(Value::as_str)?.to_string(),
                m.get("signature").and_then(Value::as_str)?.to_string(),
            ))
        })
        .collect()
}

/// `n` indexes of `0..len` spread evenly, the first and the last included (every index when
/// `n >= len`), ascending and distinct.
fn spread(len: usize, n: usize) -> Vec<usize> {
    if n >= len {
        return (0..len).collect();
    }
    if n <= 1 {
        return vec![0];
    }
    let mut out: Vec<usize> = (0..n).map(|i| i * (len - 1) / (n - 1)).collect();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_spreads_over_the_list_with_its_ends() {
        assert_eq!(spread(30, 4), [0, 9, 19, 29]);
        assert_eq!(spread(3, 8), [0, 1, 2]);
        assert_eq!(spread(10, 1), [0]);
        assert_eq!(spread(0, 3), Vec::<usize>::new());
    }

    #[test]
    fn deleted_malls_are_not_sampled() {
        let page = json!({"data": [
            {"mallSn": "1", "signature": "a", "isDelete": 0},
            {"mallSn": "2", "signature": "b", "isDelete": 1},
            {"mallSn": "3", "signature": "c", "isDelete": 0},
        ]});
        assert_eq!(
            malls_of(&page),
            [("1".into(), "a".into()), ("3".into(), "c".into())]
        );
    }
}
