//! Deterministic seed data of the reference server: merchants, malls and products that exercise
//! every value and nullability variant of spec §2, rendered as the JSON the endpoints return.

use std::cmp::Reverse;
use std::collections::HashMap;

use md5::{Digest, Md5};
use serde_json::{Map, Value, json};

/// The application id the reference server accepts by default.
pub const DEMO_APPID: &str = "mallcheck-demo-app";

/// The md5 signing key the reference server verifies with by default.
pub const DEMO_SIGN_KEY: &str = "mallcheck-demo-key";

/// A seller identity (spec §2.1) the reference server knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// Merchant id (`seller.merchantId`).
    pub merchant_id: &'static str,
    /// Merchant user id (`seller.merchantUserId`).
    pub merchant_user_id: &'static str,
    /// Role (`seller.role`).
    pub role: &'static str,
}

/// The merchant with many malls: the default identity of `mallcheck run`.
pub const MAIN: Identity = Identity {
    merchant_id: "5f3c9a1e-7b42-4d8e-9c61-2a8f0e4b7d13",
    merchant_user_id: "b7e2d4a9-1c36-4f5b-8e90-3d7a6c2f1e48",
    role: "super_admin",
};

/// A merchant with exactly one mall.
pub const SINGLE: Identity = Identity {
    merchant_id: "a1d8f6b3-2e5c-4a97-8b14-6f3e9d2c7a05",
    merchant_user_id: "c4f1a7e2-9d3b-4e68-a5c2-1b8d7f6e3a90",
    role: "super_admin",
};

/// A merchant that exists and has no malls.
pub const EMPTY: Identity = Identity {
    merchant_id: "e9b2c5d8-4f1a-4b3e-9d76-8a5c2e1f4b37",
    merchant_user_id: "d2a6e9f1-7c4b-4d85-b3a1-5e9c8f2d6b14",
    role: "super_admin",
};

/// Another merchant with a few malls, for ownership and seller-bound probes.
pub const OTHER: Identity = Identity {
    merchant_id: "3c7e1b9d-6a2f-4e58-8d43-9f1b5c7a2e66",
    merchant_user_id: "f8d3b6a2-5e9c-4a17-9b62-4c1e7d3a8f25",
    role: "super_admin",
};

/// A merchant of the seed data: identity plus the seller fields of its malls.
#[derive(Debug)]
pub struct Merchant {
    /// Who the merchant is.
    pub identity: Identity,
    /// `seller.merchantSn` of its malls.
    pub merchant_sn: &'static str,
    /// `seller.merchantName` of its malls.
    pub name: &'static str,
}

/// Every merchant the reference server knows, in the order their malls are interleaved.
pub static MERCHANTS: [Merchant; 4] = [
    Merchant {
        identity: MAIN,
        merchant_sn: "1680001234501",
        name: "杭州示例餐饮管理有限公司",
    },
    Merchant {
        identity: SINGLE,
        merchant_sn: "1680001234502",
        name: "上海单店便利店",
    },
    Merchant {
        identity: EMPTY,
        merchant_sn: "1680001234503",
        name: "北京空商户科技有限公司",
    },
    Merchant {
        identity: OTHER,
        merchant_sn: "1680001234504",
        name: "深圳另一家零售有限公司",
    },
];

/// Which variant of the seed data to build (the large and empty ones back tolerated variations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// MAIN has [`MAIN_MALLS`] malls; its first mall has [`FIRST_MALL_PRODUCTS`] products.
    Standard,
    /// MAIN has 2,000 malls.
    ManyMalls,
    /// The first mall of MAIN has 5,000 products.
    BigMall,
    /// MAIN has no malls.
    NoMalls,
}

/// Number of malls of MAIN in the standard data.
pub const MAIN_MALLS: usize = 30;

/// Number of products of MAIN's first mall (id DESC order) in the standard data.
pub const FIRST_MALL_PRODUCTS: u32 = 60;

/// Product counts of the other malls, picked by position in the merchant's list.
const PRODUCT_PATTERN: [u32; 5] = [0, 2, 3, 7, 12];

/// One mall of the seed data, before it is rendered as JSON.
#[derive(Debug, Clone)]
pub struct MallSeed {
    /// Internal id; the mall list is ordered by it, descending.
    pub id: u64,
    /// Creation order (1-based, unique); every varying field is derived from it.
    pub seq: u32,
    /// Owner.
    pub merchant: &'static Merchant,
    /// `mallSn`, a digit string.
    pub mall_sn: String,
    /// `signature`, lowercase hex derived from the mallSn.
    pub signature: String,
    /// How many products the mall has.
    pub product_count: u32,
}

/// The whole seed data of one [`Shape`], with lookups by merchant and by mallSn.
#[derive(Debug)]
pub struct Dataset {
    malls: Vec<MallSeed>,
    by_merchant: HashMap<&'static str, Vec<usize>>,
    by_sn: HashMap<String, usize>,
}

impl Dataset {
    /// Builds the seed data; the same shape always gives the same data.
    pub fn new(shape: Shape) -> Dataset {
        Dataset::scaled(shape, 1)
    }

    /// Builds the seed data with MAIN's mall count and the product count of each of MAIN's
    /// malls multiplied by `scale` (0 counts as 1), for benchmarks of how cost grows with the
    /// data. The other merchants are unchanged; `scaled(shape, 1)` is `new(shape)`. Past a
    /// factor of about 300 the spuIds of different malls may coincide (they stay unique and
    /// ordered within a mall).
    pub fn scaled(shape: Shape, scale: u32) -> Dataset {
        let factor = scale.max(1);
        let base_malls = match shape {
            Shape::Standard | Shape::BigMall => MAIN_MALLS,
            Shape::ManyMalls => 2_000,
            Shape::NoMalls => 0,
        };
        Dataset::build(shape, base_malls.saturating_mul(factor as usize), factor)
    }

    /// Builds the seed data of `shape` with exactly `main_malls` malls for MAIN and the
    /// shipped product counts (`serve --malls N`: a merchant as large as a real one).
    pub fn with_main_malls(shape: Shape, main_malls: usize) -> Dataset {
        Dataset::build(shape, main_malls, 1)
    }

    fn build(shape: Shape, main_malls: usize, factor: u32) -> Dataset {
        let mut remaining = [main_malls, 1, 0, 4];
        let mut owners = Vec::new();
        while remaining.iter().any(|&n| n > 0) {
            for (i, left) in remaining.iter_mut().enumerate() {
                if *left > 0 {
                    *left -= 1;
                    owners.push(i);
                }
            }
        }
        let mut malls: Vec<MallSeed> = owners
            .iter()
            .enumerate()
            .map(|(i, &owner)| {
                let seq = u32::try_from(i + 1).expect("seed data holds far fewer than 2^32 malls");
                let mall_sn = mall_sn_of(seq);
                MallSeed {
                    id: 10_000 + u64::from(seq) * 3,
                    seq,
                    merchant: &MERCHANTS[owner],
                    signature: signature_of(&mall_sn),
                    mall_sn,
                    product_count: 0,
                }
            })
            .collect();
        malls.sort_by_key(|m| Reverse(m.id));
        let mut by_merchant: HashMap<&'static str, Vec<usize>> = HashMap::new();
        for (i, mall) in malls.iter().enumerate() {
            by_merchant
                .entry(mall.merchant.identity.merchant_id)
                .or_default()
                .push(i);
        }
        for indexes in by_merchant.values() {
            for (pos, &i) in indexes.iter().enumerate() {
                let is_main = malls[i].merchant.identity == MAIN;
                let count = match pos {
                    0 if is_main => match shape {
                        Shape::BigMall => 5_000,
                        _ => FIRST_MALL_PRODUCTS,
                    },
                    0 => 4,
                    // The newest live mall of OTHER (its first is deleted) has no products yet,
                    // as a mall just created: a harness that targets a merchant's first live
                    // mall probes a list no refusal can be told from.
                    1 if malls[i].merchant.identity == OTHER => 0,
                    _ => PRODUCT_PATTERN[pos % PRODUCT_PATTERN.len()],
                };
                malls[i].product_count = if is_main {
                    count.saturating_mul(factor)
                } else {
                    count
                };
            }
        }
        let by_sn = malls
            .iter()
            .enumerate()
            .map(|(i, m)| (m.mall_sn.clone(), i))
            .collect();
        Dataset {
            malls,
            by_merchant,
            by_sn,
        }
    }

    /// Every mall, ordered by internal id descending.
    pub fn malls(&self) -> &[MallSeed] {
        &self.malls
    }

    /// The malls of a merchant, ordered by internal id descending (empty for an unknown one).
    pub fn malls_of(&self, merchant_id: &str) -> Vec<&MallSeed> {
        self.by_merchant
            .get(merchant_id)
            .map(|idx| idx.iter().map(|&i| &self.malls[i]).collect())
            .unwrap_or_default()
    }

    /// Whether the merchant exists (a merchant may exist and have no malls).
    pub fn is_known_merchant(&self, merchant_id: &str) -> bool {
        MERCHANTS
            .iter()
            .any(|m| m.identity.merchant_id == merchant_id)
    }

    /// Finds a mall by its mallSn.
    pub fn mall_by_sn(&self, mall_sn: &str) -> Option<&MallSeed> {
        self.by_sn.get(mall_sn).map(|&i| &self.malls[i])
    }
}

/// A digit-string mallSn whose order differs from the creation order.
fn mall_sn_of(seq: u32) -> String {
    (1_000_000_000 + (u64::from(seq) * 7_919) % 100_000_000).to_string()
}

/// The mall signature: lowercase hex md5 of a fixed prefix and the mallSn.
pub fn signature_of(mall_sn: &str) -> String {
    let mut h = Md5::new();
    h.update(b"mallcheck-mall:");
    h.update(mall_sn.as_bytes());
    hex::encode(h.finalize())
}

/// The 15 fields present in every mall record and null in every returned one (spec §2.2).
pub const ALWAYS_NULL_FIELDS: [&str; 15] = [
    "riskDisableTags",
    "riskDisableReasons",
    "riskDisableParams",
    "supportedFeatureCodes",
    "customChargeItemEnabled",
    "productNameVoiceBroadcastEnabled",
    "serviceResourceNameVoiceBroadcastEnabled",
    "voucherRedeemEnabled",
    "scanGunEnabled",
    "supportedServiceResourceSnList",
    "preSetReopenTime",
    "mallBillSplittingEnabled",
    "serialConfigState",
    "serialConfigId",
    "taskId",
];

/// A calendar-valid `YYYY-MM-DD HH:MM:SS` derived from `n`.
fn datetime(year: u32, n: u32) -> String {
    format!(
        "{year}-{:02}-{:02} {:02}:{:02}:{:02}",
        1 + n % 12,
        1 + (n * 5) % 28,
        n % 24,
        (n * 7) % 60,
        (n * 13) % 60
    )
}

/// The mall of a merchant's list a one-mall fault breaks: the last one with products that is
/// neither the first, the last nor deleted (the malls a bounded sweep always calls).
pub fn late_mall<'a>(malls: &[&'a MallSeed]) -> Option<&'a MallSeed> {
    let inner = malls.get(1..malls.len().saturating_sub(1))?;
    inner
        .iter()
        .rev()
        .find(|m| m.product_count > 0 && !is_deleted(m))
        .copied()
}

/// Whether a mall is deleted (`isDelete` 1).
pub fn is_deleted(mall: &MallSeed) -> bool {
    mall.seq % 5 == 4
}

/// Renders one mall record exactly as the mall list returns it (spec §2.2 to §2.6).
pub fn mall_record(mall: &MallSeed) -> Value {
    let s = mall.seq;
    let merchant = mall.merchant;
    let state = s % 3;
    let internal_state = u32::from(s % 4 != 3);
    let is_delete = u32::from(is_deleted(mall));
    let payments = if s % 6 == 5 {
        json!([])
    } else {
        json!([
            {"payToolCode": 2, "payToolCodeDesc": "支付宝", "status": 0, "statusDesc": "待开通"},
            {"payToolCode": 3, "payToolCodeDesc": "微信支付", "status": 0, "statusDesc": "待开通"},
        ])
    };
    let tags = match s % 4 {
        0 => json!([]),
        1 => json!(["bill"]),
        2 => json!(["onlineStore"]),
        _ => json!(["bill", "onlineStore"]),
    };
    let total_quantity = if s.is_multiple_of(2) {
        format!("{}", (s * 37) % 5_000)
    } else {
        format!("{}.{}", (s * 11) % 900, s % 10)
    };
    let mut record = Map::new();
    let mut put = |k: &str, v: Value| {
        record.insert(k.to_string(), v);
    };
    put("mallSn", json!(mall.mall_sn));
    put("signature", json!(mall.signature));
    put("mallName", json!(format!("示例商城{s}号店")));
    put("state", json!(state));
    put(
        "stateDesc",
        json!(["待上线", "已上线", "已下线"][state as usize]),
    );
    put("internalState", json!(internal_state));
    put(
        "internalStateDesc",
        json!(if internal_state == 1 {
            "启用"
        } else {
            "禁用"
        }),
    );
    put("isDelete", json!(is_delete));
    put(
        "deleteTime",
        json!(if is_delete == 1 {
            datetime(2024, s + 3)
        } else {
            String::new()
        }),
    );
    put("crossCityPaymentStatus", json!(0));
    put("crossCityPaymentStatusDesc", json!("待开通"));
    put("appType", json!(u32::from(s % 7 == 6)));
    put(
        "industryCode",
        json!(["5812", "5411", "5999"][(s % 3) as usize]),
    );
    put("crossCityPayments", payments);
    put("isShowBills", json!(s.is_multiple_of(2)));
    put("templateId", json!(format!("{}", 3_000 + s % 5)));
    put("edition", json!(1 + s % 3));
    put("tags", tags);
    put("isNeedSkipPushComplainToRisk", json!(s.is_multiple_of(3)));
    put(
        "seller",
        json!({
            "merchantSn": merchant.merchant_sn,
            "merchantId": merchant.identity.merchant_id,
            "merchantName": merchant.name,
            "storeSn": format!("2100{:06}", s),
            "storeId": format!("st-{:08x}", u64::from(s) * 2_654_435),
            "storeName": if s % 5 == 1 { Value::Null } else { json!(format!("示例门店{s}")) },
            "terminalSn": format!("1009{:08}", s * 13),
            "crossCityTerminalSn": if s % 2 == 1 { Value::Null } else { json!(format!("1019{:08}", s * 17)) },
        }),
    );
    put(
        "orderStatistics",
        json!({
            "totalNum": (u64::from(s) * 17) % 1_000,
            "totalQuantity": total_quantity,
            "totalAmount": u64::from(s) * 12_345,
        }),
    );
    put(
        "sellerStatisticsModel",
        if s % 3 == 1 {
            Value::Null
        } else {
            json!({"orderFailNum": s % 4})
        },
    );
    put("ctime", json!(datetime(2023, s)));
    put(
        "topTime",
        if s.is_multiple_of(4) {
            json!(datetime(2024, s + 1))
        } else {
            Value::Null
        },
    );
    for field in ALWAYS_NULL_FIELDS {
        put(field, Value::Null);
    }
    Value::Object(record)
}

/// The spuId of the `k`-th product (0-based, creation order) of a mall: numeric and string order
/// differ once `k` reaches 2 (`"90003"` vs `"100003"`).
fn spu_id(mall: &MallSeed, k: u32) -> u64 {
    (u64::from(k) + 8) * 10_000 + u64::from(mall.seq)
}

/// Renders the products of a mall as the products endpoint returns them: spuId descending,
/// compared as numbers (spec §2.7, §2.8, §4.2).
pub fn products(mall: &MallSeed) -> Vec<Value> {
    (0..mall.product_count)
        .rev()
        .map(|k| product(mall, k))
        .collect()
}

fn product(mall: &MallSeed, k: u32) -> Value {
    let spu = spu_id(mall, k);
    let title = format!("示例商城{}号店·招牌商品{}", mall.seq, k + 1);
    let mut blocks =
        vec![json!({"text": format!("{title}：精选食材，现点现做。"), "type": "text"})];
    if k % 3 != 1 {
        blocks.push(json!({
            "type": "bigImg",
            "img_list": [
                format!("https://img.example.com/mall/{}/spu/{spu}/1.jpg", mall.mall_sn),
                format!("https://img.example.com/mall/{}/spu/{spu}/2.jpg", mall.mall_sn),
            ],
        }));
    }
    let introduction = Value::Array(blocks).to_string();
    let skus: Vec<Value> = (0..1 + k % 3)
        .map(|j| {
            json!({
                "skuId": (spu * 10 + u64::from(j)).to_string(),
                "skuName": if (k + j).is_multiple_of(3) { Value::Null } else { json!(["小份", "中份", "大份"][j as usize]) },
                "skuTitle": if (k + j) % 4 == 1 { Value::Null } else { json!(format!("{title}（规格{}）", j + 1)) },
                "price": 100 * ((u64::from(k) * 37 + u64::from(mall.seq) * 13 + u64::from(j) * 7) % 500 + 1),
                "stockType": (k + j) % 2,
                "quantity": null,
            })
        })
        .collect();
    json!({
        "spuId": spu.to_string(),
        "converImages": [],
        "productIntroduction": introduction,
        "title": title,
        "skuResults": skus,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn identities_have_the_promised_mall_counts() {
        let d = Dataset::new(Shape::Standard);
        assert_eq!(d.malls_of(MAIN.merchant_id).len(), MAIN_MALLS);
        assert_eq!(d.malls_of(SINGLE.merchant_id).len(), 1);
        assert!(d.malls_of(EMPTY.merchant_id).is_empty());
        assert!(d.is_known_merchant(EMPTY.merchant_id));
        assert!(!d.malls_of(OTHER.merchant_id).is_empty());
        assert!(!d.is_known_merchant("no-such-merchant"));
    }

    #[test]
    fn malls_are_unique_and_ordered_by_id_desc() {
        let d = Dataset::new(Shape::Standard);
        let ids: Vec<u64> = d.malls().iter().map(|m| m.id).collect();
        assert!(ids.windows(2).all(|w| w[0] > w[1]));
        let sns: HashSet<&str> = d.malls().iter().map(|m| m.mall_sn.as_str()).collect();
        assert_eq!(sns.len(), d.malls().len());
        assert!(
            d.malls()
                .iter()
                .all(|m| m.mall_sn.bytes().all(|b| b.is_ascii_digit()))
        );
        assert!(
            d.mall_by_sn(&d.malls()[3].mall_sn)
                .is_some_and(|m| m.id == d.malls()[3].id)
        );
    }

    #[test]
    fn data_is_deterministic() {
        let a = Dataset::new(Shape::Standard);
        let b = Dataset::new(Shape::Standard);
        let render = |d: &Dataset| -> Vec<Value> { d.malls().iter().map(mall_record).collect() };
        assert_eq!(render(&a), render(&b));
    }

    #[test]
    fn main_malls_cover_every_variant_of_section_2() {
        let d = Dataset::new(Shape::Standard);
        let recs: Vec<Value> = d
            .malls_of(MAIN.merchant_id)
            .into_iter()
            .map(mall_record)
            .collect();
        let values = |ptr: &str| -> HashSet<String> {
            recs.iter()
                .map(|r| r.pointer(ptr).map(Value::to_string).unwrap_or_default())
                .collect()
        };
        assert_eq!(
            values("/state"),
            HashSet::from(["0".into(), "1".into(), "2".into()])
        );
        assert_eq!(values("/internalState").len(), 2);
        assert_eq!(values("/isDelete").len(), 2);
        assert_eq!(values("/appType").len(), 2);
        assert!(values("/sellerStatisticsModel").contains("null"));
        assert!(values("/sellerStatisticsModel").len() > 1);
        assert!(values("/topTime").contains("null") && values("/topTime").len() > 1);
        assert!(values("/seller/storeName").contains("null"));
        assert!(values("/seller/crossCityTerminalSn").contains("null"));
        assert_eq!(values("/tags").len(), 4);
        assert!(values("/crossCityPayments/1/payToolCode").contains("3"));
        assert!(values("/crossCityPayments/0/status").contains("0"));
        for r in &recs {
            let deleted = r["isDelete"] == json!(1);
            assert_eq!(r["deleteTime"] == json!(""), !deleted, "{r}");
            for f in ALWAYS_NULL_FIELDS {
                assert_eq!(r.get(f), Some(&Value::Null));
            }
        }
    }

    #[test]
    fn product_counts_include_none_few_and_many() {
        let d = Dataset::new(Shape::Standard);
        let counts: HashSet<u32> = d
            .malls_of(MAIN.merchant_id)
            .iter()
            .map(|m| m.product_count)
            .collect();
        assert!(counts.contains(&0));
        assert!(counts.contains(&3));
        assert!(counts.iter().any(|&c| c >= 50));
        assert_eq!(
            d.malls_of(MAIN.merchant_id)[0].product_count,
            FIRST_MALL_PRODUCTS
        );
    }

    #[test]
    fn products_are_numeric_spu_desc_and_string_order_differs() {
        let d = Dataset::new(Shape::Standard);
        let first = d.malls_of(MAIN.merchant_id)[0];
        let ps = products(first);
        let ids: Vec<u64> = ps
            .iter()
            .filter_map(|p| p["spuId"].as_str()?.parse().ok())
            .collect();
        assert_eq!(ids.len(), ps.len());
        assert!(ids.windows(2).all(|w| w[0] > w[1]));
        let strs: Vec<&str> = ps.iter().filter_map(|p| p["spuId"].as_str()).collect();
        assert!(
            strs.windows(2).any(|w| w[0] < w[1]),
            "string order must differ"
        );
    }

    #[test]
    fn product_introduction_holds_text_and_big_img_blocks() {
        let d = Dataset::new(Shape::Standard);
        let ps = products(d.malls_of(MAIN.merchant_id)[0]);
        let mut kinds = HashSet::new();
        let mut sku_names = HashSet::new();
        for p in &ps {
            let intro: Value =
                serde_json::from_str(p["productIntroduction"].as_str().unwrap_or("")).unwrap();
            for b in intro.as_array().unwrap() {
                kinds.insert(b["type"].as_str().unwrap().to_string());
            }
            assert_eq!(p["converImages"], json!([]));
            for s in p["skuResults"].as_array().unwrap() {
                sku_names.insert(s["skuName"].is_null());
                assert!(s["quantity"].is_null());
            }
        }
        assert_eq!(
            kinds,
            HashSet::from(["text".to_string(), "bigImg".to_string()])
        );
        assert_eq!(sku_names.len(), 2, "skuName must be both null and set");
    }

    #[test]
    fn every_shape_renders_and_the_big_mall_fits_the_default_body_cap() {
        for shape in [
            Shape::Standard,
            Shape::ManyMalls,
            Shape::BigMall,
            Shape::NoMalls,
        ] {
            let d = Dataset::new(shape);
            for m in d.malls() {
                assert!(mall_record(m).is_object());
            }
        }
        let big = Dataset::new(Shape::BigMall);
        let body = Value::Array(products(big.malls_of(MAIN.merchant_id)[0])).to_string();
        assert!(body.len() < 16 * 1024 * 1024, "{} bytes", body.len());
    }

    #[test]
    fn scale_multiplies_main_malls_and_their_products_only() {
        let one = Dataset::new(Shape::Standard);
        let ten = Dataset::scaled(Shape::Standard, 10);
        assert_eq!(ten.malls_of(MAIN.merchant_id).len(), MAIN_MALLS * 10);
        assert_eq!(
            ten.malls_of(MAIN.merchant_id)[0].product_count,
            FIRST_MALL_PRODUCTS * 10
        );
        let products_of = |d: &Dataset, id: &str| -> Vec<u32> {
            d.malls_of(id).iter().map(|m| m.product_count).collect()
        };
        assert_eq!(
            products_of(&ten, OTHER.merchant_id),
            products_of(&one, OTHER.merchant_id)
        );
        assert_eq!(ten.malls_of(SINGLE.merchant_id).len(), 1);
        let ids: HashSet<u64> = ten.malls().iter().map(|m| m.id).collect();
        assert_eq!(ids.len(), ten.malls().len());
        let render = |d: &Dataset| -> Vec<Value> { d.malls().iter().map(mall_record).collect() };
        assert_eq!(render(&Dataset::scaled(Shape::Standard, 1)), render(&one));
        assert_eq!(render(&Dataset::scaled(Shape::Standard, 0)), render(&one));
    }

    #[test]
    fn shapes_change_only_what_they_promise() {
        let many = Dataset::new(Shape::ManyMalls);
        assert_eq!(many.malls_of(MAIN.merchant_id).len(), 2_000);
        let big = Dataset::new(Shape::BigMall);
        assert_eq!(big.malls_of(MAIN.merchant_id)[0].product_count, 5_000);
        let none = Dataset::new(Shape::NoMalls);
        assert!(none.malls_of(MAIN.merchant_id).is_empty());
        assert!(none.is_known_merchant(MAIN.merchant_id));
    }
}
