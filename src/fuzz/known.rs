//! What the fuzzer knows about the service before it starts: seller identities to use, and
//! real malls (number, signature, owner) read from first mall-list pages (spec §4.1), so that
//! generated bodies can carry real cursors and mall ids and responses can be checked for
//! ownership.

use std::time::Duration;

use serde_json::{Value, json};

use crate::service::client::Client;
use crate::service::lazy_json::LazyJson;
use crate::spec::catalog;
use crate::spec::wire::Digest;
use crate::verdict::endpoint::{AuthMode, Endpoint};

/// A seller identity object (spec §2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// `merchantId`.
    pub merchant_id: String,
    /// `merchantUserId`.
    pub merchant_user_id: String,
    /// `role`.
    pub role: String,
}

impl Identity {
    /// The identity as the JSON seller object.
    pub fn to_json(&self) -> Value {
        json!({
            "merchantId": self.merchant_id,
            "merchantUserId": self.merchant_user_id,
            "role": self.role,
        })
    }
}

/// A mall seen in a real mall-list page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownMall {
    /// `mallSn`.
    pub mall_sn: String,
    /// `signature`.
    pub signature: String,
    /// `seller.merchantId` of the mall.
    pub owner: String,
    /// Not deleted (`isDelete` 0): the spec does not say a deleted mall answers its products.
    pub live: bool,
}

/// Identities and malls known before fuzzing.
#[derive(Debug, Clone)]
pub struct Known {
    /// The application id of the target.
    pub appid: String,
    /// The configured identity first, then others the service knows.
    pub identities: Vec<Identity>,
    /// Merchant ids no service should know.
    pub unknown_merchant_ids: Vec<String>,
    /// Malls of every identity, the configured merchant's first.
    pub malls: Vec<KnownMall>,
    /// The mall the products baseline asks for (user-given or the first known one).
    pub target_mall: Option<(String, String)>,
    /// Problems met while discovering (shown as notes, never fatal).
    pub notes: Vec<String>,
    /// The configured merchant's first mall-list page was a success that listed no mall (not
    /// a page that failed): what a mistyped merchant id looks like.
    pub lists_no_mall: bool,
}

impl Known {
    /// The configured identity.
    pub fn me(&self) -> &Identity {
        self.identities
            .first()
            .expect("discover always puts the configured identity first")
    }

    /// The known mall with this number.
    pub fn mall(&self, mall_sn: &str) -> Option<&KnownMall> {
        self.malls.iter().find(|m| m.mall_sn == mall_sn)
    }

    /// A first-page mall-list body (spec §4.1) for `identity`.
    pub fn list_body(&self, identity: &Identity, count: u64) -> Value {
        json!({
            "appid": self.appid,
            "filter": {"seller": identity.to_json()},
            "sort": {"sortField": "id", "sort": "DESC"},
            "cursor": {"cursorField": "id", "endCursor": null, "count": count},
        })
    }
}

/// Most malls whose products discovery asks for while looking for one that has some.
const MALLS_PROBED: usize = 10;

/// The first of `candidates` (the configured merchant's malls, live ones first) whose products
/// call, signed, answers a non-empty list; the first when none does, or when an answer is no
/// list. The products baseline asks for this mall: a generated body the service should refuse
/// is told from the baseline only by the data it leaks, and a mall without products leaks
/// none (a mall just created, often the first of a page ordered by id, has none yet).
async fn with_products(
    client: &Client,
    known: &Known,
    candidates: Vec<(String, String)>,
) -> Option<(String, String)> {
    for (sn, signature) in &candidates {
        let body = json!({
            "appid": known.appid,
            "seller": known.me().to_json(),
            "mallID": {"mallSn": sn, "signature": signature},
        });
        let sent = client
            .send_json(Endpoint::MallProducts, &body, &AuthMode::Signed, &[])
            .await;
        match &sent.result {
            Ok(r) if r.status < 300 && r.json.array_len().is_some_and(|n| n > 0) => {
                return Some((sn.clone(), signature.clone()));
            }
            Ok(r) if r.status < 300 && r.json.array_len() == Some(0) => {}
            _ => break,
        }
    }
    candidates.into_iter().next()
}

/// Page sizes of the discovery requests: 50 first, then the spec's example size (§4.1, §8 state
/// no maximum, so a service may turn 50 away).
const DISCOVERY_COUNTS: [u64; 2] = [50, crate::verdict::endpoint::EXAMPLE_PAGE_SIZE];

/// Reads the first mall-list page of every identity, at most one request per `pause`. Err only
/// when the service cannot be reached at all (the configured identity's request gets no HTTP
/// answer).
pub async fn discover(
    client: &Client,
    appid: &str,
    identities: Vec<Identity>,
    unknown_merchant_ids: Vec<String>,
    given_mall: Option<(String, String)>,
    pause: Duration,
) -> Result<Known, String> {
    let mut known = Known {
        appid: appid.to_string(),
        identities,
        unknown_merchant_ids,
        malls: Vec::new(),
        target_mall: given_mall,
        notes: Vec::new(),
        lists_no_mall: false,
    };
    for (i, identity) in known.identities.clone().iter().enumerate() {
        if i > 0 && !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        let mut page = None;
        for count in DISCOVERY_COUNTS {
            let body = known.list_body(identity, count);
            let sent = client
                .send_json(Endpoint::MallList, &body, &AuthMode::Signed, &[])
                .await;
            let response = match sent.result {
                Ok(r) => r,
                Err(f) if i == 0 && f.check.id == catalog::TRANSPORT_CONNECT.id => {
                    return Err(format!("cannot reach {}: {}", client.base_url(), f.actual));
                }
                // No generated request could fare better: stop instead of failing every one.
                Err(f)
                    if i == 0
                        && (f.check.id == catalog::HARNESS_SIGNER.id
                            || f.check.id == catalog::TRANSPORT_RATE_LIMITED.id) =>
                {
                    return Err(format!(
                        "cannot fuzz {}: {} ({})",
                        client.base_url(),
                        f.actual,
                        f.check.id
                    ));
                }
                Err(f) => {
                    page = Some(Err(format!(
                        "the first mall-list page of merchant {} failed: {}",
                        identity.merchant_id,
                        f.headline()
                    )));
                    continue;
                }
            };
            match listed_malls(&response.json) {
                Some(malls) => {
                    page = Some(Ok(malls));
                    break;
                }
                None => {
                    page = Some(Err(format!(
                        "the first mall-list page of merchant {} has no data array (HTTP {})",
                        identity.merchant_id, response.status
                    )));
                }
            }
        }
        let malls = match page {
            Some(Ok((records, malls))) => {
                known.lists_no_mall |= i == 0 && records == 0;
                malls
            }
            Some(Err(note)) => {
                known.notes.push(note);
                continue;
            }
            None => continue,
        };
        for mall in malls {
            if known.mall(&mall.sn).is_none() {
                known.malls.push(KnownMall {
                    mall_sn: mall.sn,
                    signature: mall.signature,
                    owner: mall.owner.unwrap_or_else(|| identity.merchant_id.clone()),
                    live: mall.live,
                });
            }
        }
    }
    if known.target_mall.is_none() {
        let me = known.me().merchant_id.clone();
        let mine = || known.malls.iter().filter(|m| m.owner == me);
        let candidates: Vec<(String, String)> = mine()
            .filter(|m| m.live)
            .chain(mine().filter(|m| !m.live))
            .take(MALLS_PROBED)
            .map(|m| (m.mall_sn.clone(), m.signature.clone()))
            .collect();
        known.target_mall = with_products(client, &known, candidates).await;
    }
    if known.target_mall.is_none() {
        known.notes.push(
            "no mall of the configured merchant is known: the products baseline uses a made-up mall"
                .to_string(),
        );
    }
    Ok(known)
}

/// A fixture for unit tests: appid `app`, merchant `m1` (user `u1`, role `r`), the unknown
/// merchant `m0`, and mall 7 (signature `s7`) of merchant `m2`.
/// What discovery keeps of one listed mall.
struct Listed {
    sn: String,
    signature: String,
    owner: Option<String>,
    live: bool,
}

/// The number of records of a mall-list page with a `data` array (`None` without one) and the
/// malls among them (those with a `mallSn` and a `signature`), read from the digest of a
/// conforming page, else one record at a time within the body's tree budget: a hostile page of
/// millions of records is never held whole, nor copied.
fn listed_malls(json: &LazyJson) -> Option<(usize, Vec<Listed>)> {
    let records = json.data_len()?;
    if let Some(Digest::Envelope(e)) = json.digest() {
        let malls = e.malls.as_deref().unwrap_or_default();
        let listed = malls
            .iter()
            .map(|m| Listed {
                sn: m.sn.clone(),
                signature: m.signature.clone(),
                owner: Some(m.merchant_id.clone()),
                live: !m.deleted,
            })
            .collect();
        return Some((records, listed));
    }
    let mut malls = Vec::new();
    json.for_each_record(&mut |_, mall| {
        let text = |p: &str| mall.pointer(p).and_then(Value::as_str).map(str::to_string);
        if let (Some(sn), Some(signature)) = (text("/mallSn"), text("/signature")) {
            malls.push(Listed {
                sn,
                signature,
                owner: text("/seller/merchantId"),
                live: mall.get("isDelete").and_then(Value::as_i64) == Some(0),
            });
        }
    });
    Some((records, malls))
}

#[cfg(test)]
pub(crate) fn example() -> Known {
    Known {
        appid: "app".into(),
        identities: vec![Identity {
            merchant_id: "m1".into(),
            merchant_user_id: "u1".into(),
            role: "r".into(),
        }],
        unknown_merchant_ids: vec!["m0".into()],
        malls: vec![KnownMall {
            mall_sn: "7".into(),
            signature: "s7".into(),
            owner: "m2".into(),
            live: true,
        }],
        target_mall: None,
        notes: vec![],
        lists_no_mall: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_body_is_the_spec_shape() {
        let known = Known {
            appid: "app".into(),
            identities: vec![Identity {
                merchant_id: "m".into(),
                merchant_user_id: "u".into(),
                role: "super_admin".into(),
            }],
            unknown_merchant_ids: vec![],
            malls: vec![],
            target_mall: None,
            notes: vec![],
            lists_no_mall: false,
        };
        let body = known.list_body(known.me(), 10);
        assert_eq!(body["filter"]["seller"]["merchantUserId"], "u");
        assert_eq!(body["cursor"]["count"], 10);
        assert!(body["cursor"]["endCursor"].is_null());
    }
}
