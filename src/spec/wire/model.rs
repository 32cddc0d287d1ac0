//! The shipped schemas as typed structs, each field as strict as its schema or stricter.
//!
//! Every struct denies unknown fields (an extra field is an `info.extra-fields` finding, so
//! the tree path must report it) and serde's derive refuses a field given twice. Integers are
//! `i64`/`u8`, which serde_json fills only from an integer literal: `1.0`, `1e5`, `-0` and a
//! literal beyond the type are refused (the tree path judges them). Open fields (the 15
//! always-null mall fields, a SKU's `quantity`) must be `null`, and cover images strings:
//! anything else is left to the tree path. A required field that may be null is read through
//! `deserialize_any`, so that a missing one is an error rather than a silent `None`.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::{EnvelopeDigest, MallKey};
use crate::spec::schemas::{is_datetime, is_decimal_text, is_digit_string};

/// A JSON string, borrowed from the body unless it holds escapes.
#[derive(Debug)]
pub(super) struct Text<'a>(Cow<'a, str>);

impl Text<'_> {
    fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(TextVisitor(std::marker::PhantomData))
    }
}

struct TextVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for TextVisitor<'a> {
    type Value = Text<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'a>, E> {
        Ok(Text(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Text<'a>, E> {
        Ok(Text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Text<'a>, E> {
        Ok(Text(Cow::Owned(v)))
    }
}

/// A required field that is a string or `null` (read through `deserialize_any`, which fails
/// for a missing field where `deserialize_option` would give `None`).
#[derive(Debug)]
pub(super) struct TextOrNull<'a>(Option<Text<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for TextOrNull<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextOrNullVisitor(std::marker::PhantomData))
    }
}

struct TextOrNullVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for TextOrNullVisitor<'a> {
    type Value = TextOrNull<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or null")
    }

    fn visit_unit<E>(self) -> Result<TextOrNull<'a>, E> {
        Ok(TextOrNull(None))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<TextOrNull<'a>, E> {
        Ok(TextOrNull(Some(Text(Cow::Borrowed(v)))))
    }

    fn visit_str<E>(self, v: &str) -> Result<TextOrNull<'a>, E> {
        Ok(TextOrNull(Some(Text(Cow::Owned(v.to_owned())))))
    }

    fn visit_string<E>(self, v: String) -> Result<TextOrNull<'a>, E> {
        Ok(TextOrNull(Some(Text(Cow::Owned(v)))))
    }
}

/// A required field that must be `null` here (its type is open in the spec; any other value
/// goes to the tree path).
#[derive(Debug)]
pub(super) struct Null;

impl<'de> Deserialize<'de> for Null {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NullVisitor)
    }
}

struct NullVisitor;

impl<'de> Visitor<'de> for NullVisitor {
    type Value = Null;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("null")
    }

    fn visit_unit<E>(self) -> Result<Null, E> {
        Ok(Null)
    }
}

/// A string or any number that fits a double (`["string", "number"]`), as the reader tells
/// them apart for `wire::Content`.
#[derive(Debug)]
pub(super) enum TextOrNumber {
    Text(String),
    Int(i64),
    Other,
}

impl<'de> Deserialize<'de> for TextOrNumber {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextOrNumberVisitor)
    }
}

struct TextOrNumberVisitor;

impl<'de> Visitor<'de> for TextOrNumberVisitor {
    type Value = TextOrNumber;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or a number")
    }

    fn visit_str<E>(self, v: &str) -> Result<TextOrNumber, E> {
        Ok(TextOrNumber::Text(v.to_string()))
    }

    fn visit_i64<E>(self, v: i64) -> Result<TextOrNumber, E> {
        Ok(TextOrNumber::Int(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<TextOrNumber, E> {
        Ok(i64::try_from(v).map_or(TextOrNumber::Other, TextOrNumber::Int))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<TextOrNumber, E> {
        if v.is_finite() {
            Ok(TextOrNumber::Other)
        } else {
            Err(E::custom("not a finite number"))
        }
    }
}

/// A required field that is an object of `T` or `null`.
#[derive(Debug)]
pub(super) struct ObjectOrNull<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOrNull<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjectOrNullVisitor(std::marker::PhantomData))
    }
}

struct ObjectOrNullVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectOrNullVisitor<T> {
    type Value = ObjectOrNull<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object or null")
    }

    fn visit_unit<E>(self) -> Result<ObjectOrNull<T>, E> {
        Ok(ObjectOrNull(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ObjectOrNull<T>, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| ObjectOrNull(Some(t)))
    }
}

/// An optional field that, when present, must be a `T` (never `null`): `#[serde(default)]`
/// gives `Absent` for a missing field, where an `Option` would also take `null` for absent.
#[derive(Debug, Default)]
pub(super) enum Optional<T> {
    #[default]
    Absent,
    Present(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Optional<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Optional::Present)
    }
}

/// The mall-list envelope (`mall-list-response.json`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Envelope<'a> {
    success: bool,
    #[serde(borrow)]
    code: Text<'a>,
    #[serde(borrow)]
    #[allow(dead_code)]
    msg: Text<'a>,
    /// Absent and `null` alike (`["array", "null"]`, not required).
    #[serde(default)]
    data: Option<MallKeys>,
}

/// The keys of a `data` array whose malls all conform, read one mall at a time (no vector of
/// malls is built); the first mall that does not conform ends the read.
#[derive(Debug)]
pub(super) struct MallKeys(Vec<MallKey>);

impl<'de> Deserialize<'de> for MallKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(Conforming::<Mall<'de>, MallKey>::new(|mall| {
            mall.conforms().then(|| mall.key())
        }))
        .map(MallKeys)
    }
}

/// The spuIds of a products array whose products all conform, read one product at a time.
#[derive(Debug)]
pub(super) struct ProductIds(pub(super) Vec<String>);

impl<'de> Deserialize<'de> for ProductIds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(Conforming::<Product<'de>, String>::new(|product| {
            product.conforms().then(|| product.spu_id())
        }))
        .map(ProductIds)
    }
}

/// An array whose every element reads as a `T` that conforms; nothing of it is kept (no
/// vector is built: each element is judged and dropped as it is read).
pub(super) struct All<T>(std::marker::PhantomData<T>);

impl<T> fmt::Debug for All<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("All")
    }
}

/// What an element of an [`All`] must satisfy beyond its type.
pub(super) trait Conforms {
    fn conforms(&self) -> bool;
}

impl Conforms for Text<'_> {
    fn conforms(&self) -> bool {
        true
    }
}

impl<'de, T: Deserialize<'de> + Conforms> Deserialize<'de> for All<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(Conforming::<T, ()>::new(|t| t.conforms().then_some(())))?;
        Ok(All(std::marker::PhantomData))
    }
}

/// A sequence visitor that reads each element as a `T` and keeps what `keep` makes of it;
/// `keep` saying `None` (the element does not conform) fails the read.
struct Conforming<T, K> {
    keep: fn(T) -> Option<K>,
}

impl<T, K> Conforming<T, K> {
    fn new(keep: fn(T) -> Option<K>) -> Self {
        Conforming { keep }
    }
}

impl<'de, T: Deserialize<'de>, K> Visitor<'de> for Conforming<T, K> {
    type Value = Vec<K>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<K>, A::Error> {
        let mut kept = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        // `()` takes no room: a vector of them never allocates.
        while let Some(element) = seq.next_element::<T>()? {
            kept.push((self.keep)(element).ok_or_else(|| de::Error::custom("does not conform"))?);
        }
        Ok(kept)
    }
}

impl Envelope<'_> {
    /// The digest, when the envelope and every mall conform.
    pub(super) fn digest(self) -> Option<EnvelopeDigest> {
        let code = self.code.as_str();
        let coherent = match (self.success, &self.data) {
            // §7.1: success true comes with code 0000 and a data array.
            (true, data) => code == "0000" && data.is_some(),
            // §7.1: code 0000 comes with success true; §7: a failure carries no malls.
            (false, data) => code != "0000" && data.as_ref().is_none_or(|keys| keys.0.is_empty()),
        };
        if !coherent {
            return None;
        }
        Some(EnvelopeDigest {
            success: self.success,
            code: code.to_string(),
            malls: self.data.map(|keys| keys.0),
        })
    }
}

/// A mall (`mall.json`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(super) struct Mall<'a> {
    #[serde(borrow)]
    mall_sn: Text<'a>,
    #[serde(borrow)]
    signature: Text<'a>,
    #[serde(borrow)]
    mall_name: Text<'a>,
    state: u8,
    #[serde(borrow)]
    state_desc: Text<'a>,
    internal_state: u8,
    #[serde(borrow)]
    internal_state_desc: Text<'a>,
    is_delete: u8,
    #[serde(borrow)]
    delete_time: Text<'a>,
    // Byte, Integer: a value beyond the type fails the typed read (the tree path reports it).
    cross_city_payment_status: i8,
    #[serde(borrow)]
    cross_city_payment_status_desc: Text<'a>,
    app_type: i8,
    #[serde(borrow)]
    industry_code: Text<'a>,
    #[serde(borrow)]
    cross_city_payments: Vec<CrossCityPayment<'a>>,
    is_show_bills: bool,
    #[serde(borrow)]
    template_id: Text<'a>,
    edition: i32,
    #[serde(borrow)]
    tags: Vec<Text<'a>>,
    is_need_skip_push_complain_to_risk: bool,
    #[serde(borrow)]
    seller: Seller<'a>,
    #[serde(borrow)]
    order_statistics: OrderStatistics<'a>,
    seller_statistics_model: ObjectOrNull<SellerStatistics>,
    #[serde(borrow)]
    ctime: Text<'a>,
    #[serde(borrow)]
    top_time: TextOrNull<'a>,
    risk_disable_tags: Null,
    risk_disable_reasons: Null,
    risk_disable_params: Null,
    supported_feature_codes: Null,
    custom_charge_item_enabled: Null,
    product_name_voice_broadcast_enabled: Null,
    service_resource_name_voice_broadcast_enabled: Null,
    voucher_redeem_enabled: Null,
    scan_gun_enabled: Null,
    supported_service_resource_sn_list: Null,
    pre_set_reopen_time: Null,
    mall_bill_splitting_enabled: Null,
    serial_config_state: Null,
    serial_config_id: Null,
    task_id: Null,
}

impl Mall<'_> {
    /// The rules the types above do not carry: enums, formats, `deleteTime` when not deleted.
    fn conforms(&self) -> bool {
        self.state <= 2
            && self.internal_state <= 1
            && self.is_delete <= 1
            && (self.is_delete != 0 || self.delete_time.as_str().is_empty())
            && is_digit_string(self.mall_sn.as_str())
            && is_digit_string(self.template_id.as_str())
            && is_datetime(self.ctime.as_str())
            && self.top_time.0.as_ref().is_none_or(|t| {
                is_datetime(t.as_str())
                    && !crate::spec::schemas::is_zero_time_stand_in(self.ctime.as_str(), t.as_str())
            })
            && is_decimal_text(self.order_statistics.total_quantity.as_str())
    }

    /// `wire::Content` of the fields the reader marks.
    fn content(&self) -> super::Content {
        use super::PaymentStatus;
        let mut c = super::Content::default();
        c.text("mallName", self.mall_name.as_str());
        c.text("stateDesc", self.state_desc.as_str());
        c.text("internalStateDesc", self.internal_state_desc.as_str());
        c.text("deleteTime", self.delete_time.as_str());
        c.int(
            "crossCityPaymentStatus",
            i64::from(self.cross_city_payment_status),
        );
        c.text(
            "crossCityPaymentStatusDesc",
            self.cross_city_payment_status_desc.as_str(),
        );
        c.int("appType", i64::from(self.app_type));
        c.text("industryCode", self.industry_code.as_str());
        for p in &self.cross_city_payments {
            let status = match &p.status {
                TextOrNumber::Text(t) => PaymentStatus::Text(t),
                TextOrNumber::Int(n) => PaymentStatus::Int(*n),
                TextOrNumber::Other => PaymentStatus::Other,
            };
            c.payment(
                i64::from(p.pay_tool_code),
                p.pay_tool_code_desc.as_str(),
                status,
                p.status_desc.as_str(),
            );
        }
        c.boolean("isShowBills", self.is_show_bills);
        c.text("templateId", self.template_id.as_str());
        c.int("edition", i64::from(self.edition));
        for t in &self.tags {
            c.text("tags", t.as_str());
        }
        c.boolean(
            "isNeedSkipPushComplainToRisk",
            self.is_need_skip_push_complain_to_risk,
        );
        let s = &self.seller;
        c.text("seller.merchantSn", s.merchant_sn.as_str());
        c.text("seller.merchantId", s.merchant_id.as_str());
        c.text("seller.merchantName", s.merchant_name.as_str());
        c.text("seller.storeSn", s.store_sn.as_str());
        c.text("seller.storeId", s.store_id.as_str());
        c.text_or_null(
            "seller.storeName",
            s.store_name.0.as_ref().map(Text::as_str),
        );
        c.text("seller.terminalSn", s.terminal_sn.as_str());
        c.text_or_null(
            "seller.crossCityTerminalSn",
            s.cross_city_terminal_sn.0.as_ref().map(Text::as_str),
        );
        c
    }

    fn key(self) -> MallKey {
        let state = super::state_code(
            self.state,
            self.internal_state,
            self.is_delete,
            self.top_time.0.as_ref().map(Text::as_str),
            self.ctime.as_str(),
            self.content(),
        );
        MallKey {
            sn: self.mall_sn.0.into_owned(),
            signature: self.signature.0.into_owned(),
            merchant_id: self.seller.merchant_id.0.into_owned(),
            deleted: self.is_delete == 1,
            state,
        }
    }
}

/// `seller.json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(super) struct Seller<'a> {
    #[serde(borrow)]
    merchant_sn: Text<'a>,
    #[serde(borrow)]
    merchant_id: Text<'a>,
    #[serde(borrow)]
    merchant_name: Text<'a>,
    #[serde(borrow)]
    store_sn: Text<'a>,
    #[serde(borrow)]
    store_id: Text<'a>,
    #[serde(borrow)]
    store_name: TextOrNull<'a>,
    #[serde(borrow)]
    terminal_sn: Text<'a>,
    #[serde(borrow)]
    cross_city_terminal_sn: TextOrNull<'a>,
}

/// `order-statistics.json`: two Longs (an `i64` is exactly the Long range) and decimal text.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(super) struct OrderStatistics<'a> {
    total_num: i64,
    #[serde(borrow)]
    total_quantity: Text<'a>,
    total_amount: i64,
}

/// `seller-statistics.json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(super) struct SellerStatistics {
    order_fail_num: i64,
}

/// `cross-city-payment.json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(super) struct CrossCityPayment<'a> {
    pay_tool_code: i8,
    #[serde(borrow)]
    pay_tool_code_desc: Text<'a>,
    status: TextOrNumber,
    #[serde(borrow)]
    status_desc: Text<'a>,
}

impl Conforms for CrossCityPayment<'_> {
    fn conforms(&self) -> bool {
        true
    }
}

/// A product (`product.json`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(super) struct Product<'a> {
    #[serde(borrow)]
    spu_id: Text<'a>,
    /// The items' shape is open; strings here, anything else to the tree path.
    #[serde(borrow)]
    conver_images: All<Text<'a>>,
    #[serde(borrow)]
    product_introduction: Text<'a>,
    #[serde(borrow)]
    title: Text<'a>,
    #[serde(borrow)]
    sku_results: All<Sku<'a>>,
}

impl Product<'_> {
    fn conforms(&self) -> bool {
        // Each SKU conformed as it was read (`All<Sku>`).
        is_digit_string(self.spu_id.as_str())
            && introduction_conforms(self.product_introduction.as_str())
    }

    fn spu_id(&self) -> String {
        self.spu_id.as_str().to_string()
    }
}

/// A SKU (`sku.json`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(super) struct Sku<'a> {
    #[serde(borrow)]
    sku_id: Text<'a>,
    #[serde(borrow)]
    sku_name: TextOrNull<'a>,
    #[serde(borrow)]
    sku_title: TextOrNull<'a>,
    price: i32,
    stock_type: i32,
    quantity: Null,
}

impl Conforms for Sku<'_> {
    fn conforms(&self) -> bool {
        is_digit_string(self.sku_id.as_str())
    }
}

/// A content block of a `productIntroduction` (`content-block.json`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Text<'a>,
    #[serde(default, borrow)]
    text: Optional<Text<'a>>,
    #[serde(default, borrow)]
    img_list: Optional<All<Text<'a>>>,
}

impl Conforms for Block<'_> {
    fn conforms(&self) -> bool {
        match self.kind.as_str() {
            "text" => matches!(self.text, Optional::Present(_)),
            "bigImg" => matches!(self.img_list, Optional::Present(_)),
            _ => false,
        }
    }
}

/// Whether the text of a `productIntroduction` is a JSON array of conforming content blocks
/// (`product-introduction.json`).
fn introduction_conforms(text: &str) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    All::<Block<'_>>::deserialize(&mut de).is_ok() && de.end().is_ok()
}
