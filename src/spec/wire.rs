//! The fast path for answers that conform: a mall-list envelope or a products array read from
//! its bytes by a reader of the shipped schemas' types (`reader.rs`: no `serde_json::Value`
//! tree, no serde visitor), with every rule of the schemas and of the scan of the bytes checked
//! on the way. The serde structs it replaced (`model.rs`) are kept for the tests, as the oracle
//! the reader must agree with, digest for digest.
//!
//! [`read`] says `Some` only when it is sure that the tree path would find nothing at all in
//! the body: no schema violation, no extra field (an `info` finding), no `productIntroduction`
//! problem, no key given twice, no number beyond a double, no integer written `1.0` or `1e5`.
//! At the least doubt (an unknown field, an open field that is not `null`, a duplicate, a
//! float where an integer is typed, an escape the reader cannot judge) it says `None`, and the
//! caller takes the tree path, whose findings are the only ones mallcheck reports. So it is
//! stricter than the schemas, never looser: a body it turns down is still checked exactly.
//!
//! The schemas can be replaced (`--schemas DIR`); [`SchemaSet::is_shipped`] says whether the
//! loaded ones are those this reader mirrors, and only then may a digest stand for a check.
//!
//! [`SchemaSet::is_shipped`]: crate::spec::schemas::SchemaSet::is_shipped

// The serde model the reader replaced: the reader's oracle in the tests.
#[cfg(test)]
mod model;
mod reader;

use serde::Deserialize;

use reader::Reader;

/// What a conforming body holds that later checks ask for, in place of its tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Digest {
    /// A mall-list envelope valid against `mall-list-response`, with nothing to report.
    Envelope(EnvelopeDigest),
    /// A products array valid against `products-response`, with nothing to report: the
    /// spuIds in order, and a mark of the SKUs.
    Products(ProductsDigest),
}

/// A conforming products array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductsDigest {
    /// The spuIds, in order.
    pub ids: Vec<String>,
    /// A mark of which SKUs each product holds.
    pub skus: SkuMark,
}

/// A mark of the SKUs of a products answer: how many, and a sum of one hash per product of its
/// spuId and its SKUs' ids as a set, so that two reads of one mall compare their SKUs
/// (`products.repeatable`) without keeping them, whatever order either lists them in. Both
/// readers of an answer (the fast path's, the tree's) add the same values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SkuMark {
    /// SKUs in all.
    pub count: usize,
    /// The sum of each product's hash.
    pub sum: u64,
}

/// The SKUs of one product as [`SkuMark`] sums them: how many, and the sum of their ids' hashes.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProductSkus {
    count: usize,
    sum: u64,
}

impl ProductSkus {
    /// Adds a SKU by its id.
    pub fn add(&mut self, sku_id: &str) {
        use std::hash::BuildHasher as _;
        self.count += 1;
        self.sum = self
            .sum
            .wrapping_add(foldhash::fast::FixedState::with_seed(0x0073_6b75).hash_one(sku_id));
    }
}

impl SkuMark {
    /// Adds the product `spu_id` with its SKUs.
    pub fn add(&mut self, spu_id: &str, skus: ProductSkus) {
        use std::hash::BuildHasher as _;
        self.count += skus.count;
        let h = foldhash::fast::FixedState::with_seed(0x0073_7075)
            .hash_one((spu_id, skus.count, skus.sum));
        self.sum = self.sum.wrapping_add(h);
    }

    /// Adds one product record read as a tree: its string `spuId` and the string `skuId` of
    /// each of its `skuResults` (anything else is left out).
    pub fn add_product(&mut self, product: &serde_json::Value) {
        use serde_json::Value;
        let Some(spu) = product.get("spuId").and_then(Value::as_str) else {
            return;
        };
        let mut skus = ProductSkus::default();
        for id in product
            .get("skuResults")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|sku| sku.get("skuId").and_then(Value::as_str))
        {
            skus.add(id);
        }
        self.add(spu, skus);
    }

    /// The mark of a products array read as a tree.
    pub fn of_products(products: &serde_json::Value) -> SkuMark {
        let mut mark = SkuMark::default();
        for p in products.as_array().into_iter().flatten() {
            mark.add_product(p);
        }
        mark
    }
}

/// A conforming mall-list envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvelopeDigest {
    /// `success`.
    pub success: bool,
    /// `code`.
    pub code: String,
    /// The malls of `data`; `None` when `data` is absent or null.
    pub malls: Option<Vec<MallKey>>,
}

/// What the paging walk, the ownership checks and the products sweep read of one mall.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MallKey {
    /// `mallSn`.
    pub sn: String,
    /// `signature`.
    pub signature: String,
    /// `seller.merchantId`.
    pub merchant_id: String,
    /// `isDelete` is 1.
    pub deleted: bool,
    /// `state`, `internalState`, `isDelete`, `topTime` and `ctime`, and the [`Content`] mark
    /// of the other fields ([`state_code`]).
    pub state: StateCode,
}

/// A mark of what a read must leave of a mall beyond [`state_code`]'s own fields (§1: neither
/// operation changes any resource; §3: the cross-city statuses are states too): every other
/// field but the order statistics (counters an order placed meanwhile may move), the mall's
/// `signature` (a service may sign afresh) and the always-null fields (of open type). A sum of
/// one hash per value, so that neither the order in which a reader meets the fields nor the
/// order of a set's members (`tags`, `crossCityPayments`: a service may list them from a hash
/// set) changes it. Each reader of a mall (the fast path's, the tree's) adds the same values.
#[derive(Debug, Default, Clone, Copy)]
pub struct Content {
    /// The sum of every value's hash.
    total: u64,
    /// The same sums by [`GROUPS`], shorter: which group changed, for the finding's words.
    groups: [u16; GROUPS.len()],
    /// The descriptions met on the way, for `mall.descriptions` (not compared: the marks
    /// above hold them already).
    described: Described,
}

impl PartialEq for Content {
    fn eq(&self, other: &Content) -> bool {
        (self.total, self.groups) == (other.total, other.groups)
    }
}

impl Eq for Content {}

impl std::hash::Hash for Content {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.total, self.groups).hash(state);
    }
}

/// A field of §2.2 or §2.6 that comes with a text description of its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DescribedField {
    /// `state` (`stateDesc`).
    State,
    /// `internalState` (`internalStateDesc`).
    InternalState,
    /// `crossCityPaymentStatus` (`crossCityPaymentStatusDesc`).
    CrossCityPaymentStatus,
    /// A cross-city payment's `payToolCode` (`payToolCodeDesc`).
    PayToolCode,
    /// A cross-city payment's `status` (`statusDesc`).
    PaymentStatus,
}

impl DescribedField {
    /// The value's field and its description's, as a record names them.
    pub fn names(self) -> (&'static str, &'static str) {
        match self {
            DescribedField::State => ("state", "stateDesc"),
            DescribedField::InternalState => ("internalState", "internalStateDesc"),
            DescribedField::CrossCityPaymentStatus => {
                ("crossCityPaymentStatus", "crossCityPaymentStatusDesc")
            }
            DescribedField::PayToolCode => ("crossCityPayments[].payToolCode", "payToolCodeDesc"),
            DescribedField::PaymentStatus => ("crossCityPayments[].status", "statusDesc"),
        }
    }
}

/// Most cross-city payments of a mall whose descriptions are kept.
const PAYMENTS_DESCRIBED: usize = 4;

/// Hashes of the descriptions of one mall's described values (see [`StateCode::described`]).
#[derive(Debug, Default, Clone, Copy)]
struct Described {
    state: Option<u32>,
    internal_state: Option<u32>,
    cross_city: Option<u32>,
    cross_city_value: Option<i64>,
    /// The first cross-city payments.
    payments: [Option<DescribedPayment>; PAYMENTS_DESCRIBED],
}

/// `(payToolCode, its description, status, its description)`; a status that is no integer is
/// left out.
type DescribedPayment = (i64, u32, Option<i64>, u32);

/// A short hash of a description.
fn desc_hash(text: &str) -> u32 {
    use std::hash::BuildHasher as _;
    foldhash::fast::FixedState::with_seed(0x6465_7363).hash_one(text) as u32
}

/// The groups of fields a [`Content`] mark tells apart in words.
const GROUPS: [&str; 8] = [
    "mallName, appType, industryCode or templateId",
    "a *Desc description",
    "deleteTime",
    "a cross-city status",
    "tags",
    "isShowBills or isNeedSkipPushComplainToRisk",
    "edition",
    "seller",
];

/// The [`GROUPS`] index of a field.
fn group_of(field: &str) -> usize {
    match field {
        "stateDesc" | "internalStateDesc" | "crossCityPaymentStatusDesc" => 1,
        "deleteTime" => 2,
        "crossCityPaymentStatus" | "crossCityPayments" => 3,
        "tags" => 4,
        "isShowBills" | "isNeedSkipPushComplainToRisk" => 5,
        "edition" => 6,
        f if f.starts_with("seller") => 7,
        _ => 0,
    }
}

/// A mall's state code ([`state_code`]): what two reads of one mall must agree on.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StateCode {
    /// `state`, `internalState`, `isDelete`, a mark of `topTime` and one of `ctime`.
    own: u64,
    /// The other fields.
    content: Content,
}

/// The `status` of a cross-city payment (§2.6 declares a string and shows a number).
#[derive(Debug, Clone, Copy)]
pub enum PaymentStatus<'a> {
    /// A string.
    Text(&'a str),
    /// An integer literal within `i64`.
    Int(i64),
    /// Any other number.
    Other,
}

impl Content {
    fn add(&mut self, field: &str, value: impl std::hash::Hash) {
        use std::hash::BuildHasher as _;
        let h = foldhash::fast::FixedState::with_seed(0x6d61_6c6c).hash_one((field, value));
        self.total = self.total.wrapping_add(h);
        let group = &mut self.groups[group_of(field)];
        *group = group.wrapping_add((h >> 48) as u16);
    }

    /// A string field.
    pub fn text(&mut self, field: &str, value: &str) {
        self.add(field, (0u8, value));
        let slot = match field {
            "stateDesc" => &mut self.described.state,
            "internalStateDesc" => &mut self.described.internal_state,
            "crossCityPaymentStatusDesc" => &mut self.described.cross_city,
            _ => return,
        };
        // An empty text describes nothing, and two values that both leave it empty share no
        // description (a service that does not fill it).
        if !value.trim().is_empty() {
            *slot = Some(desc_hash(value));
        }
    }

    /// An integer field.
    pub fn int(&mut self, field: &str, value: i64) {
        self.add(field, (1u8, value));
        if field == "crossCityPaymentStatus" {
            self.described.cross_city_value = Some(value);
        }
    }

    /// A boolean field.
    pub fn boolean(&mut self, field: &str, value: bool) {
        self.add(field, (2u8, value));
    }

    /// A string field that may be null.
    pub fn text_or_null(&mut self, field: &str, value: Option<&str>) {
        match value {
            Some(v) => self.text(field, v),
            None => self.add(field, 3u8),
        }
    }

    /// One cross-city payment, as one value.
    pub fn payment(&mut self, tool: i64, tool_desc: &str, status: PaymentStatus<'_>, desc: &str) {
        let (kind, text, number) = match status {
            PaymentStatus::Text(t) => (0u8, t, 0),
            PaymentStatus::Int(n) => (1u8, "", n),
            PaymentStatus::Other => (2u8, "", 0),
        };
        self.add(
            "crossCityPayments",
            (tool, tool_desc, kind, text, number, desc),
        );
        let status = match status {
            PaymentStatus::Int(n) => Some(n),
            PaymentStatus::Text(t) => t.trim().parse().ok(),
            PaymentStatus::Other => None,
        };
        if !tool_desc.trim().is_empty()
            && !desc.trim().is_empty()
            && let Some(slot) = self.described.payments.iter_mut().find(|p| p.is_none())
        {
            *slot = Some((tool, desc_hash(tool_desc), status, desc_hash(desc)));
        }
    }

    /// A value the fast path never vouches for (a field of another type than its schema's), by
    /// its JSON text: only the tree path meets it, so both reads of such a mall take it.
    fn odd(&mut self, field: &str, value: &serde_json::Value) {
        self.add(field, (9u8, value.to_string()));
    }

    /// The mark of a mall record read as a tree.
    pub fn of(mall: &serde_json::Value) -> Content {
        use serde_json::Value;
        let mut c = Content::default();
        let Some(fields) = mall.as_object() else {
            return c;
        };
        for (name, value) in fields {
            let name = name.as_str();
            // A field the spec does not name is tolerated whatever it holds, and may differ
            // from read to read (a trace id): only §2.2's fields are marked.
            if !reader::MALL.contains(&name) {
                continue;
            }
            match (name, value) {
                (
                    "mallSn"
                    | "signature"
                    | "state"
                    | "internalState"
                    | "isDelete"
                    | "ctime"
                    | "topTime"
                    | "orderStatistics"
                    | "sellerStatisticsModel",
                    _,
                ) => {}
                (n, _) if ALWAYS_NULL.contains(&n) => {}
                ("tags", Value::Array(tags)) if tags.iter().all(Value::is_string) => {
                    for t in tags.iter().filter_map(Value::as_str) {
                        c.text("tags", t);
                    }
                }
                ("crossCityPayments", Value::Array(payments)) => {
                    for p in payments {
                        c.payment_of(p);
                    }
                }
                ("seller", Value::Object(seller)) => {
                    for (k, v) in seller
                        .iter()
                        .filter(|(k, _)| reader::SELLER.contains(&k.as_str()))
                    {
                        let field = format!("seller.{k}");
                        match v {
                            Value::String(t) => c.text(&field, t),
                            Value::Null => c.text_or_null(&field, None),
                            other => c.odd(&field, other),
                        }
                    }
                }
                (n, Value::String(t)) => c.text(n, t),
                (n, Value::Bool(b)) => c.boolean(n, *b),
                (n, Value::Number(num)) if num.as_i64().is_some() => {
                    c.int(n, num.as_i64().unwrap_or_default());
                }
                (n, other) => c.odd(n, other),
            }
        }
        c
    }

    fn payment_of(&mut self, p: &serde_json::Value) {
        use serde_json::Value;
        let tool = p.get("payToolCode").and_then(Value::as_i64);
        let tool_desc = p.get("payToolCodeDesc").and_then(Value::as_str);
        let desc = p.get("statusDesc").and_then(Value::as_str);
        let status = match p.get("status") {
            Some(Value::String(t)) => Some(PaymentStatus::Text(t)),
            Some(Value::Number(n)) => {
                Some(n.as_i64().map_or(PaymentStatus::Other, PaymentStatus::Int))
            }
            _ => None,
        };
        // Members beyond §2.6's four are tolerated, and not marked.
        match (tool, tool_desc, status, desc) {
            (Some(tool), Some(tool_desc), Some(status), Some(desc)) => {
                self.payment(tool, tool_desc, status, desc);
            }
            _ => self.odd("crossCityPayments", p),
        }
    }
}

/// The always-null fields of §2.2 (their type is open: not marked), as the reader names them.
const ALWAYS_NULL: &[&str] = reader::MALL.split_at(reader::ALWAYS_NULL_FROM).1;

/// Bits of a time's mark in a [`state_code`].
const MARK_BITS: u32 = 20;

/// A mark of a time (`MARK_BITS` bits of its hash), never 0, so that a time never reads as
/// none.
fn time_mark(time: &str) -> u64 {
    use std::hash::BuildHasher as _;
    foldhash::fast::FixedState::with_seed(0).hash_one(time) & ((1 << MARK_BITS) - 1) | 1
}

/// A mall's place among the states of §3 (`state`, `internalState`, `isDelete`), its pin
/// (`topTime`: null, or a mark of the time) and a mark of its creation time (`ctime`) as one
/// number, to compare two reads of the same mall: §1 says neither operation changes any
/// resource, so a read that pins a mall changes it, and a mall's creation time is one.
pub fn state_code(
    state: u8,
    internal_state: u8,
    is_delete: u8,
    top_time: Option<&str>,
    ctime: &str,
    content: Content,
) -> StateCode {
    let own = time_mark(ctime) << (24 + MARK_BITS)
        | top_time.map_or(0, time_mark) << 24
        | u64::from(state) << 16
        | u64::from(internal_state) << 8
        | u64::from(is_delete);
    StateCode { own, content }
}

/// [`state_code`] of a mall record read as a tree; `None` when a field is not a small integer,
/// `topTime` is neither text nor null, or `ctime` is no text.
pub fn state_code_of(mall: &serde_json::Value) -> Option<StateCode> {
    let field = |name: &str| {
        mall.get(name)
            .and_then(serde_json::Value::as_u64)
            .and_then(|n| u8::try_from(n).ok())
    };
    let top_time = match mall.get("topTime") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(t)) => Some(t.as_str()),
        Some(_) => return None,
    };
    Some(state_code(
        field("state")?,
        field("internalState")?,
        field("isDelete")?,
        top_time,
        mall.get("ctime")?.as_str()?,
        Content::of(mall),
    ))
}

/// A mall's state as one read saw it ([`state_code`]), with whose mall it is: two merchants'
/// malls of one `mallSn` are two malls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MallState {
    /// [`state_code`].
    pub code: StateCode,
    /// [`owner_of`] the mall's `seller.merchantId`.
    pub owner: u64,
}

/// A merchant id as a number, read as ids are compared (letter case and blanks aside).
pub fn owner_of(merchant_id: &str) -> u64 {
    use std::hash::BuildHasher as _;
    foldhash::fast::FixedState::with_seed(0).hash_one(merchant_id.trim().to_ascii_lowercase())
}

/// [`MallState`] of a mall record read as a tree.
pub fn mall_state_of(mall: &serde_json::Value) -> Option<MallState> {
    let merchant = mall
        .pointer("/seller/merchantId")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    Some(MallState {
        code: state_code_of(mall)?,
        owner: owner_of(merchant),
    })
}

/// How [`state_code`] reads to a person.
pub fn state_text(code: StateCode) -> String {
    let own = code.own;
    let mask = (1 << MARK_BITS) - 1;
    let pin = match (own >> 24) & mask {
        0 => "null".to_string(),
        mark => format!("a time (mark {mark:05x})"),
    };
    format!(
        "state {}, internalState {}, isDelete {}, topTime {pin}, ctime mark {:05x}",
        (own >> 16) & 0xff,
        (own >> 8) & 0xff,
        own & 0xff,
        (own >> (24 + MARK_BITS)) & mask,
    )
}

impl StateCode {
    /// Each described value of the mall with a hash of its description: `state`,
    /// `internalState`, `crossCityPaymentStatus`, and the tool and status of the first
    /// cross-city payments.
    pub fn described(&self) -> Vec<(DescribedField, i64, u32)> {
        let d = &self.content.described;
        let mut out = Vec::new();
        let own = |shift: u32| i64::from(((self.own >> shift) & 0xff) as u8);
        if let Some(h) = d.state {
            out.push((DescribedField::State, own(16), h));
        }
        if let Some(h) = d.internal_state {
            out.push((DescribedField::InternalState, own(8), h));
        }
        if let (Some(h), Some(v)) = (d.cross_city, d.cross_city_value) {
            out.push((DescribedField::CrossCityPaymentStatus, v, h));
        }
        for &(tool, tool_desc, status, status_desc) in d.payments.iter().flatten() {
            out.push((DescribedField::PayToolCode, tool, tool_desc));
            if let Some(status) = status {
                out.push((DescribedField::PaymentStatus, status, status_desc));
            }
        }
        out
    }

    /// A code of these own bits and no other field (for tests).
    #[cfg(test)]
    pub fn of_own(own: u64) -> StateCode {
        StateCode {
            own,
            content: Content::default(),
        }
    }
}

/// What of a mall's other fields ([`Content`]) changed from `before` to `now`, in words; empty
/// when nothing did.
pub fn content_change(before: StateCode, now: StateCode) -> String {
    let (b, n) = (before.content, now.content);
    if b == n {
        return String::new();
    }
    let groups: Vec<&str> = (0..GROUPS.len())
        .filter(|&g| b.groups[g] != n.groups[g])
        .map(|g| GROUPS[g])
        .collect();
    if groups.is_empty() {
        "another field".to_string()
    } else {
        groups.join("; ")
    }
}

impl Digest {
    /// The schema this body conforms to.
    pub fn schema(&self) -> &'static str {
        match self {
            Digest::Envelope(_) => "mall-list-response",
            Digest::Products(_) => "products-response",
        }
    }

    /// How many mall or product records the body holds: every record of a conforming body
    /// carries its `mallSn` or `spuId`.
    pub fn records(&self) -> usize {
        match self {
            Digest::Envelope(e) => e.malls.as_ref().map_or(0, Vec::len),
            Digest::Products(p) => p.ids.len(),
        }
    }
}

/// The digest of `bytes` when they are one JSON document that conforms beyond doubt: a
/// mall-list envelope (object root) or a products array (array root). `None` otherwise.
pub fn read(bytes: &[u8]) -> Option<Digest> {
    // Checked as UTF-8 once, as a whole (a body that is not is left to the tree path), by
    // simdutf8: the standard check went byte by byte through the Chinese text of names and
    // tags (4.5 % of a fuzz run).
    let text = simdutf8::basic::from_utf8(bytes).ok()?;
    let mut r = Reader::new(text);
    let digest = match bytes.iter().find(|b| !b.is_ascii_whitespace())? {
        b'{' => Digest::Envelope(reader::envelope(&mut r)?),
        b'[' => Digest::Products(reader::products(&mut r)?),
        _ => return None,
    };
    r.end()?;
    Some(digest)
}

/// [`read`] through the serde model the reader replaced (`model.rs`): the oracle the reader
/// is held to.
#[cfg(test)]
pub(crate) fn read_with_model(bytes: &[u8]) -> Option<Digest> {
    use model::{Envelope, ProductIds};
    match bytes.iter().find(|b| !b.is_ascii_whitespace())? {
        b'{' => whole::<Envelope<'_>>(bytes)?.digest().map(Digest::Envelope),
        b'[' => whole::<ProductIds>(bytes)
            .filter(|_| skus_unique(bytes))
            .map(|ids| {
                let tree: serde_json::Value =
                    serde_json::from_slice(bytes).expect("a conforming array is JSON");
                Digest::Products(ProductsDigest {
                    ids: ids.0,
                    skus: SkuMark::of_products(&tree),
                })
            }),
        _ => None,
    }
}

/// Whether `bytes` are one JSON value, read with no tree and no check (the floor a check of
/// the same bytes is measured against).
pub fn syntax_only(bytes: &[u8]) -> bool {
    // Straight from the bytes: serde_json skips a string without checking its UTF-8, the
    // fastest read of the parser.
    let mut de = serde_json::Deserializer::from_slice(bytes);
    serde::de::IgnoredAny::deserialize(&mut de).is_ok() && de.end().is_ok()
}

/// Whether no skuId of a products array is listed twice (the oracle's read of the rule the
/// reader keeps on the way).
#[cfg(test)]
fn skus_unique(bytes: &[u8]) -> bool {
    let Ok(serde_json::Value::Array(products)) = serde_json::from_slice(bytes) else {
        return true;
    };
    let mut seen = std::collections::HashSet::new();
    products
        .iter()
        .filter_map(|p| p.get("skuResults")?.as_array())
        .flatten()
        .filter_map(|s| s.get("skuId")?.as_str())
        .all(|id| seen.insert(id.to_string()))
}

/// `bytes` as one `T` and nothing after it (the oracle's read).
#[cfg(test)]
fn whole<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Option<T> {
    let text = simdutf8::basic::from_utf8(bytes).ok()?;
    let mut de = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::data::{self, Dataset, MAIN, Shape};
    use serde_json::{Value, json};

    fn page(malls: usize) -> Value {
        let dataset = Dataset::new(Shape::Standard);
        let records: Vec<Value> = dataset
            .malls_of(MAIN.merchant_id)
            .into_iter()
            .take(malls)
            .map(data::mall_record)
            .collect();
        json!({"success": true, "code": "0000", "msg": "ok", "data": records})
    }

    fn products(count: u32) -> Value {
        let dataset = Dataset::new(Shape::Standard);
        let mut mall = dataset.malls_of(MAIN.merchant_id)[0].clone();
        mall.product_count = count;
        Value::Array(data::products(&mall))
    }

    fn digest(v: &Value) -> Option<Digest> {
        read(&serde_json::to_vec(v).unwrap())
    }

    #[test]
    fn the_reference_answers_take_the_fast_path() {
        let page = page(20);
        let Some(Digest::Envelope(e)) = digest(&page) else {
            panic!("the reference page is read as a conforming envelope");
        };
        assert!(e.success);
        let malls = e.malls.unwrap();
        assert_eq!(malls.len(), 20);
        assert_eq!(malls[0].sn, page["data"][0]["mallSn"].as_str().unwrap());
        assert_eq!(malls[0].merchant_id, MAIN.merchant_id);
        let list = products(12);
        let Some(Digest::Products(ProductsDigest { ids, .. })) = digest(&list) else {
            panic!("the reference products are read as a conforming array");
        };
        assert_eq!(ids, crate::checks::products::spu_ids(&list));
        let error = json!({"success": false, "code": "4001", "msg": "bad", "data": null});
        assert_eq!(digest(&error).map(|d| d.records()), Some(0));
        // Escaped strings are read too (owned, not borrowed).
        let escaped = br#"{"success":false,"code":"40\u00301","msg":"\u00e9\n"}"#;
        assert!(read(escaped).is_some());
    }

    #[test]
    fn every_doubt_takes_the_tree_path() {
        let base = page(2);
        type Mutation = Box<dyn Fn(&mut Value)>;
        let doubts: Vec<(&str, Mutation)> = vec![
            ("extra field", Box::new(|v| v["data"][0]["x"] = json!(1))),
            ("extra envelope field", Box::new(|v| v["extra"] = json!(1))),
            (
                "missing always-null",
                Box::new(|v| {
                    v["data"][0].as_object_mut().unwrap().shift_remove("taskId");
                }),
            ),
            (
                "always-null set",
                Box::new(|v| v["data"][0]["taskId"] = json!(0)),
            ),
            (
                "missing topTime",
                Box::new(|v| {
                    v["data"][0]
                        .as_object_mut()
                        .unwrap()
                        .shift_remove("topTime");
                }),
            ),
            ("state 3", Box::new(|v| v["data"][0]["state"] = json!(3))),
            (
                "state 1.0",
                Box::new(|v| v["data"][0]["state"] = json!(1.0)),
            ),
            (
                "long as float",
                Box::new(|v| v["data"][0]["orderStatistics"]["totalNum"] = json!(5.0)),
            ),
            (
                "bad date",
                Box::new(|v| v["data"][0]["ctime"] = json!("2024-02-30 10:00:00")),
            ),
            (
                "success without 0000",
                Box::new(|v| v["code"] = json!("0001")),
            ),
            (
                "failure with malls",
                Box::new(|v| v["success"] = json!(false)),
            ),
            (
                "data null on success",
                Box::new(|v| v["data"] = Value::Null),
            ),
            (
                "msg missing",
                Box::new(|v| {
                    v.as_object_mut().unwrap().shift_remove("msg");
                }),
            ),
        ];
        for (what, mutate) in doubts {
            let mut v = base.clone();
            mutate(&mut v);
            assert_eq!(digest(&v), None, "{what}");
        }
        for raw in [
            &br#"{"success":false,"code":"1","msg":"","msg":""}"#[..],
            br#"{"success":false,"code":"1","msg":"","data":[]} x"#,
            br#"{"success":false,"code":"1","msg":"","data":[],"n":1e999}"#,
            br#"[{"spuId":"1","converImages":[],"productIntroduction":"[{\"type\":\"text\"}]","title":"t","skuResults":[]}]"#,
            br#"[{"spuId":"1","converImages":[],"productIntroduction":"[{\"type\":\"bigImg\",\"img_list\":[],\"text\":null}]","title":"t","skuResults":[]}]"#,
            b"12",
            b"",
        ] {
            assert_eq!(read(raw), None, "{}", String::from_utf8_lossy(raw));
        }
        let ok = br#"[{"spuId":"1","converImages":[],"productIntroduction":"[{\"type\":\"bigImg\",\"img_list\":[]}]","title":"t","skuResults":[]}]"#;
        assert!(read(ok).is_some());
    }

    #[test]
    fn a_cut_or_hostile_body_is_a_doubt_never_a_panic() {
        for doc in [
            serde_json::to_vec(&page(2)).unwrap(),
            serde_json::to_vec(&products(3)).unwrap(),
        ] {
            assert!(read(&doc).is_some());
            // Every body cut short, and every body with one byte changed to a quote, a
            // backslash or a control byte, is judged without a panic as the model judges it.
            for end in 0..doc.len() {
                assert_eq!(read(&doc[..end]), None, "cut at {end}");
            }
            for at in 0..doc.len() {
                for b in [b'"', b'\\', 0x01, b'{', b']'] {
                    let mut changed = doc.clone();
                    changed[at] = b;
                    assert_eq!(read(&changed), read_with_model(&changed), "{b} at {at}");
                }
            }
        }
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let long_number = format!("[{{\"spuId\":{}}}]", "9".repeat(1_000_000));
        let backslashes = format!(
            "{{\"success\":false,\"code\":\"{}\"}}",
            "\\".repeat(100_001)
        );
        for hostile in [deep, long_number, backslashes] {
            assert_eq!(read(hostile.as_bytes()), None);
        }
    }

    #[test]
    fn the_reader_reads_every_spelling_as_the_serde_model_did() {
        let page = serde_json::to_string(&page(2)).unwrap();
        let list = serde_json::to_string(&products(3)).unwrap();
        let sku = r#""price":"#;
        // (what to replace, with what, in which document)
        let spellings: &[(&str, &str, &str)] = &[
            ("\"mallSn\"", "\"mall\\u0053n\"", &page),
            ("\"mallSn\"", "\"mallsn\"", &page),
            ("\"state\":", "\"state\" : ", &page),
            ("\"state\":", "\"state\":\t\r\n", &page),
            ("\"state\":", "\"state\":-0,\"x\":", &page),
            ("\"isDelete\":", "\"isDelete\":0,\"isDelete\":", &page),
            ("\"edition\":", "\"edition\":-0,\"y\":", &page),
            ("\"success\":", "\"success\" :", &page),
            ("\"code\":\"0000\"", "\"code\":\"\\u0030000\"", &page),
            ("\"msg\":\"ok\"", "\"msg\":\"\\ud83d\\ude00\"", &page),
            ("\"msg\":\"ok\"", "\"msg\":\"\\ud83d\"", &page),
            ("\"msg\":\"ok\"", "\"msg\":\"\\ude00\"", &page),
            ("\"msg\":\"ok\"", "\"msg\":\"a\u{1}b\"", &page),
            ("\"msg\":\"ok\"", "\"msg\":\"\\x\"", &page),
            ("\"msg\":\"ok\"", "\"msg\":\"\\u00e9\\/\\b\\f\"", &page),
            ("\"msg\":\"ok\"", "\"msg\":\"\u{7f}\u{e9}\u{4e2d}\"", &page),
            (sku, "\"price\":9223372036854775807,\"z\":", &list),
            (sku, "\"price\":9223372036854775808,\"z\":", &list),
            (sku, "\"price\":-9223372036854775808,\"z\":", &list),
            (sku, "\"price\":-9223372036854775809,\"z\":", &list),
            (sku, "\"price\":1e2,\"z\":", &list),
            (sku, "\"price\":01,\"z\":", &list),
            (sku, "\"price\":1.,\"z\":", &list),
            (sku, "\"price\":-,\"z\":", &list),
            ("\"quantity\":null", "\"quantity\":nul", &list),
            ("\"quantity\":null", "\"quantity\":null ", &list),
            ("\"title\":", "\"title\":\"\",\"title\":", &list),
        ];
        let (mut checked, mut read_fast) = (0, 0);
        for (from, to, doc) in spellings {
            assert!(doc.contains(from), "{from} is in the document");
            for text in [doc.replacen(from, to, 1), doc.replace(from, to)] {
                let digest = read(text.as_bytes());
                assert_eq!(digest, read_with_model(text.as_bytes()), "{text}");
                checked += 1;
                read_fast += usize::from(digest.is_some());
            }
        }
        // Status numbers in a cross-city payment: a string, or any number that fits a double.
        let status = "\"status\":";
        assert!(page.contains(status));
        for number in [
            "1",
            "-1",
            "1.5",
            "-0",
            "1e308",
            "1e309",
            "18446744073709551616",
            "\"x\"",
        ] {
            let text = page.replace(status, &format!("\"status\":{number},\"w\":"));
            assert_eq!(
                read(text.as_bytes()),
                read_with_model(text.as_bytes()),
                "{number}"
            );
            let text = page.replacen(status, &format!("{status}{number},\"statusX\":"), 1);
            assert_eq!(
                read(text.as_bytes()),
                read_with_model(text.as_bytes()),
                "{number}"
            );
            checked += 2;
        }
        // The documents as they are, with white space around and after them.
        for text in [
            format!(" \n{page}\t"),
            format!("{list}\r\n"),
            format!("{page}x"),
        ] {
            assert_eq!(read(text.as_bytes()), read_with_model(text.as_bytes()));
            checked += 1;
        }
        assert!(read(page.as_bytes()).is_some() && read(list.as_bytes()).is_some());
        assert!(checked > 50);
        // Escaped keys and values, white space and the largest Long read; the rest are doubts.
        assert!(
            (14..checked / 2).contains(&read_fast),
            "{read_fast} of {checked}"
        );
    }
}
