//! The fast path's reader: one pass over an answer's bytes, each value judged against the type
//! of its field as it is read, with no tree and no serde visitor per value.
//!
//! It reads exactly the types of the typed model the fast path had before it (`model.rs`,
//! kept for the tests as this reader's oracle), as serde_json read them, and is stricter
//! wherever the two could differ: every answer it accepts, serde_json into that model accepts
//! too, with the same digest. Any doubt is `None` and the caller takes the tree path: an unknown
//! field, a field given twice (also spelt with escapes), a missing required field, an integer
//! field written `1.0`, `1e5` or `-0` or beyond its type, an escape that is not a pair where a
//! surrogate needs one, a control character in a string, anything after the document.
//!
//! Strings are found by a word-at-a-time search for a quote, a backslash or a control byte (as
//! serde_json's own reader does); a string without escapes is borrowed from the body.

use std::borrow::Cow;

use super::{Content, EnvelopeDigest, MallKey, PaymentStatus};
use crate::spec::schemas::{is_datetime, is_decimal_text, is_digit_string};

/// Each byte of a word, set to `b`.
const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

const HIGHS: u64 = splat(0x80);

/// The high bit of each byte of `word` that is below `n` (exact for the lowest such byte; a
/// byte above it may be flagged too, by the borrow).
const fn below(word: u64, n: u8) -> u64 {
    word.wrapping_sub(splat(n)) & !word & HIGHS
}

/// The high bit of each byte of `word` equal to `b` (exact for the lowest such byte).
const fn equal(word: u64, b: u8) -> u64 {
    below(word ^ splat(b), 1)
}

/// A JSON number literal, as the integer and double types of the model take it.
enum Number {
    /// An integer literal within `i64` (not `-0`, which serde_json reads as a double).
    Int(i64),
    /// An integer literal beyond `u64` or negative beyond `i64`, a fraction or an exponent:
    /// the double it reads as, when finite.
    Other(Option<f64>),
    /// An integer literal within `u64` and above `i64`.
    Large,
}

/// A reader over the bytes of a document already checked to be UTF-8.
pub(super) struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Reader { text, at: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// The next byte that is not white space, not taken.
    fn peek(&mut self) -> Option<u8> {
        let bytes = self.bytes();
        // Most answers are compact: the next byte is the token.
        if let Some(&b) = bytes.get(self.at)
            && b > b' '
        {
            return Some(b);
        }
        while let Some(&b) = bytes.get(self.at) {
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                return Some(b);
            }
            self.at += 1;
        }
        None
    }

    /// Takes the next byte that is not white space if it is `b`.
    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.at += 1)
    }

    /// Nothing but white space is left.
    pub(super) fn end(&mut self) -> Option<()> {
        self.peek().is_none().then_some(())
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        self.peek()?;
        let rest = &self.bytes()[self.at..];
        rest.starts_with(word.as_bytes())
            .then(|| self.at += word.len())
    }

    fn null(&mut self) -> Option<()> {
        self.literal("null")
    }

    fn boolean(&mut self) -> Option<bool> {
        match self.peek()? {
            b't' => self.literal("true").map(|()| true),
            b'f' => self.literal("false").map(|()| false),
            _ => None,
        }
    }

    /// A string: borrowed when it holds no escape.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        let bytes = self.bytes();
        let start = self.at;
        let mut i = self.stop(start)?;
        if bytes[i] == b'"' {
            self.at = i + 1;
            return Some(Cow::Borrowed(&self.text[start..i]));
        }
        // Room for the rest of a short string at once (the escaped text of a content block
        // is a few hundred bytes).
        let mut out = String::with_capacity((i - start + 16).max(256));
        let mut from = start;
        loop {
            match bytes[i] {
                b'"' => {
                    out.push_str(&self.text[from..i]);
                    self.at = i + 1;
                    return Some(Cow::Owned(out));
                }
                b'\\' => {
                    out.push_str(&self.text[from..i]);
                    i = escape(bytes, i, Some(&mut out))?;
                    from = i;
                }
                // A control character: JSON allows none unescaped.
                _ => return None,
            }
            i = self.stop(i)?;
        }
    }

    /// A string, judged and passed over: nothing is made of it (most strings of an answer
    /// are only checked to be strings).
    fn skip_string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        let bytes = self.bytes();
        let mut i = self.stop(self.at)?;
        loop {
            match bytes[i] {
                b'"' => {
                    self.at = i + 1;
                    return Some(());
                }
                b'\\' => i = escape(bytes, i, None)?,
                _ => return None,
            }
            i = self.stop(i)?;
        }
    }

    /// Where the next quote, backslash or control byte is, from `from`.
    fn stop(&self, from: usize) -> Option<usize> {
        let bytes = self.bytes();
        let mut i = from;
        while let Some(chunk) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(chunk.try_into().ok()?);
            let hits = equal(word, b'"') | equal(word, b'\\') | below(word, 0x20);
            if hits != 0 {
                return Some(i + (hits.trailing_zeros() / 8) as usize);
            }
            i += 8;
        }
        bytes[i..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .map(|p| i + p)
    }

    /// A number literal (JSON's grammar exactly).
    fn number(&mut self) -> Option<Number> {
        self.peek()?;
        let bytes = self.bytes();
        let start = self.at;
        let mut i = start;
        let negative = bytes.get(i) == Some(&b'-');
        i += usize::from(negative);
        let digits = i;
        match bytes.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => {
                while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return None,
        }
        let int_end = i;
        let mut integer = true;
        if bytes.get(i) == Some(&b'.') {
            integer = false;
            i += 1;
            let from = i;
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == from {
                return None;
            }
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            integer = false;
            i += 1;
            if matches!(bytes.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let from = i;
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == from {
                return None;
            }
        }
        self.at = i;
        let literal = &self.text[start..i];
        let double = || literal.parse::<f64>().ok().filter(|d| d.is_finite());
        if !integer {
            return Some(Number::Other(double()));
        }
        let magnitude: Option<u64> = self.text[digits..int_end].parse().ok();
        Some(match (negative, magnitude) {
            (false, Some(m)) => match i64::try_from(m) {
                Ok(v) => Number::Int(v),
                Err(_) => Number::Large,
            },
            // serde_json reads `-0` as the double -0.0.
            (true, Some(0)) => Number::Other(Some(-0.0)),
            (true, Some(m)) if m <= i64::MAX as u64 + 1 => {
                Number::Int(0i64.wrapping_sub_unsigned(m))
            }
            _ => Number::Other(double()),
        })
    }

    /// An `i64` field: an integer literal within it.
    fn int(&mut self) -> Option<i64> {
        match self.number()? {
            Number::Int(v) => Some(v),
            _ => None,
        }
    }

    /// A `u8` field: a non-negative integer literal up to 255.
    fn small(&mut self) -> Option<u8> {
        u8::try_from(self.int()?).ok()
    }

    /// A field of the spec's Byte type (-128 to 127).
    fn byte(&mut self) -> Option<i8> {
        i8::try_from(self.int()?).ok()
    }

    /// A field of the spec's Integer type (32 bits).
    fn integer(&mut self) -> Option<i32> {
        i32::try_from(self.int()?).ok()
    }

    /// A string, or `null`.
    fn text_or_null(&mut self) -> Option<Option<Cow<'a, str>>> {
        match self.peek()? {
            b'n' => self.null().map(|()| None),
            _ => self.string().map(Some),
        }
    }

    /// A string, or `null`, passed over.
    fn skip_text_or_null(&mut self) -> Option<()> {
        match self.peek()? {
            b'n' => self.null(),
            _ => self.skip_string(),
        }
    }

    /// A string, or a number that fits a double.
    fn text_or_number(&mut self) -> Option<StatusRead<'a>> {
        match self.peek()? {
            b'"' => self.string().map(StatusRead::Text),
            _ => match self.number()? {
                Number::Int(n) => Some(StatusRead::Int(n)),
                Number::Large => Some(StatusRead::Other),
                Number::Other(d) => d.map(|_| StatusRead::Other),
            },
        }
    }

    /// An object whose members `member` reads, given the index of each key in `keys`. A key
    /// not among them, or given twice, or a key of `required` missing, is `None`.
    fn object(
        &mut self,
        keys: &[&str],
        required: u64,
        mut member: impl FnMut(&mut Self, usize) -> Option<()>,
    ) -> Option<()> {
        self.eat(b'{')?;
        let mut seen = 0u64;
        // Members nearly always come in the schema's order: the key after the last one read
        // is tried first.
        let mut next = 0;
        if self.peek()? == b'}' {
            self.at += 1;
        } else {
            loop {
                let index = match self.expected_key(keys.get(next).copied()) {
                    Some(()) => next,
                    None => {
                        let key = self.string()?;
                        keys.iter().position(|k| *k == key)?
                    }
                };
                next = index + 1;
                let bit = 1u64 << index;
                if seen & bit != 0 {
                    return None;
                }
                seen |= bit;
                self.eat(b':')?;
                member(self, index)?;
                match self.peek()? {
                    b',' => self.at += 1,
                    b'}' => {
                        self.at += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        (seen & required == required).then_some(())
    }

    /// Takes the key `key` when it is written next as it is spelt (no escape, nothing around
    /// it): the common case, compared as bytes. Anything else is read as a string.
    fn expected_key(&mut self, key: Option<&str>) -> Option<()> {
        let key = key?;
        self.peek()?;
        let rest = &self.bytes()[self.at..];
        let end = key.len() + 2;
        let spelt = rest.len() > end
            && rest[0] == b'"'
            && rest[end - 1] == b'"'
            && &rest[1..end - 1] == key.as_bytes();
        spelt.then(|| self.at += end)
    }

    /// An array whose elements `element` reads.
    fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        if self.peek()? == b']' {
            self.at += 1;
            return Some(());
        }
        loop {
            element(self)?;
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An array of strings.
    fn texts(&mut self) -> Option<()> {
        self.array(Self::skip_string)
    }
}

/// Decodes the escape at `bytes[at]` (a backslash) into `out` (or only checks it); where the
/// text goes on.
fn escape(bytes: &[u8], at: usize, out: Option<&mut String>) -> Option<usize> {
    let c = match bytes.get(at + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = hex4(bytes.get(at + 2..at + 6)?)?;
            let (c, len) = match unit {
                0xD800..=0xDBFF => {
                    // A leading surrogate must be followed by the escape of a trailing one.
                    if bytes.get(at + 6..at + 8)? != b"\\u" {
                        return None;
                    }
                    let low = hex4(bytes.get(at + 8..at + 12)?)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    (char::from_u32(code)?, 12)
                }
                0xDC00..=0xDFFF => return None,
                _ => (char::from_u32(unit)?, 6),
            };
            if let Some(out) = out {
                out.push(c);
            }
            return Some(at + len);
        }
        _ => return None,
    };
    if let Some(out) = out {
        out.push(c);
    }
    Some(at + 2)
}

/// The value of four hex digits.
fn hex4(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |v, &d| {
        let d = char::from(d).to_digit(16)?;
        Some(v * 16 + d)
    })
}

/// The bits of the first `n` fields.
const fn all(n: usize) -> u64 {
    (1u64 << n) - 1
}

const ENVELOPE: &[&str] = &["success", "code", "msg", "data"];

/// The mall-list envelope (`mall-list-response.json`) and the keys of its malls, when it and
/// every mall conform.
pub(super) fn envelope(r: &mut Reader<'_>) -> Option<EnvelopeDigest> {
    let mut success = None;
    let mut code = None;
    let mut malls = None;
    r.object(ENVELOPE, all(3), |r, field| {
        match field {
            0 => success = Some(r.boolean()?),
            1 => code = Some(r.string()?),
            2 => r.skip_string()?,
            // Absent and `null` alike (`["array", "null"]`, not required).
            _ => {
                if r.peek()? == b'n' {
                    r.null()?;
                } else {
                    let mut keys = Vec::new();
                    r.array(|r| {
                        keys.push(mall(r)?);
                        Some(())
                    })?;
                    malls = Some(keys);
                }
            }
        }
        Some(())
    })?;
    let (success, code) = (success?, code?);
    let coherent = match (success, &malls) {
        // §7.1: success true comes with code 0000 and a data array.
        (true, malls) => code == "0000" && malls.is_some(),
        // §7.1: code 0000 comes with success true; §7: a failure carries no malls.
        (false, malls) => code != "0000" && malls.as_ref().is_none_or(Vec::is_empty),
    };
    coherent.then(|| EnvelopeDigest {
        success,
        code: code.into_owned(),
        malls,
    })
}

pub(super) const MALL: &[&str] = &[
    "mallSn",
    "signature",
    "mallName",
    "state",
    "stateDesc",
    "internalState",
    "internalStateDesc",
    "isDelete",
    "deleteTime",
    "crossCityPaymentStatus",
    "crossCityPaymentStatusDesc",
    "appType",
    "industryCode",
    "crossCityPayments",
    "isShowBills",
    "templateId",
    "edition",
    "tags",
    "isNeedSkipPushComplainToRisk",
    "seller",
    "orderStatistics",
    "sellerStatisticsModel",
    "ctime",
    "topTime",
    // The always-null fields: their type is open in the spec; anything but null goes to the
    // tree path.
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

/// Where the always-null fields begin in [`MALL`].
pub(super) const ALWAYS_NULL_FROM: usize = 24;

/// A mall (`mall.json`), with the rules its types do not carry: enums, formats, `deleteTime`
/// when not deleted.
fn mall(r: &mut Reader<'_>) -> Option<MallKey> {
    let mut sn = None;
    let mut signature = None;
    let mut merchant_id = None;
    let mut deleted = 0u8;
    let (mut state, mut internal_state) = (0u8, 0u8);
    let mut delete_time_empty = false;
    let mut top_time = None;
    let mut ctime = None;
    let mut ok = true;
    // What a read must leave as it was beyond the fields of the state code (`wire::Content`).
    let mut content = Content::default();
    r.object(MALL, all(MALL.len()), |r, field| {
        match field {
            0 => {
                let s = r.string()?;
                ok &= is_digit_string(&s);
                sn = Some(s.into_owned());
            }
            1 => signature = Some(r.string()?.into_owned()),
            3 => {
                state = r.small()?;
                ok &= state <= 2;
            }
            5 => {
                internal_state = r.small()?;
                ok &= internal_state <= 1;
            }
            7 => {
                deleted = r.small()?;
                ok &= deleted <= 1;
            }
            8 => {
                let time = r.string()?;
                delete_time_empty = time.is_empty();
                content.text(MALL[8], &time);
            }
            9 | 11 => content.int(MALL[field], i64::from(r.byte()?)),
            16 => content.int(MALL[16], i64::from(r.integer()?)),
            13 => r.array(|r| cross_city_payment(r, &mut content))?,
            14 | 18 => content.boolean(MALL[field], r.boolean()?),
            15 => {
                let id = r.string()?;
                ok &= is_digit_string(&id);
                content.text(MALL[15], &id);
            }
            17 => r.array(|r| {
                content.text(MALL[17], &r.string()?);
                Some(())
            })?,
            19 => merchant_id = Some(seller(r, &mut content)?),
            20 => ok &= order_statistics(r)?,
            21 => {
                if r.peek()? == b'n' {
                    r.null()?;
                } else {
                    r.object(SELLER_STATISTICS, 1, |r, _| r.int().map(drop))?;
                }
            }
            22 => {
                let time = r.string()?;
                ok &= is_datetime(&time);
                ctime = Some(time.into_owned());
            }
            23 => {
                let time = r.text_or_null()?;
                ok &= time.as_ref().is_none_or(|t| is_datetime(t));
                top_time = time.map(|t| t.into_owned());
            }
            ALWAYS_NULL_FROM.. => r.null()?,
            // mallName, stateDesc, internalStateDesc, crossCityPaymentStatusDesc, industryCode.
            _ => content.text(MALL[field], &r.string()?),
        }
        Some(())
    })?;
    // No zero time stands for null (`mall.top-time`).
    let pinned_in_order = match (&top_time, &ctime) {
        (Some(top), Some(created)) => !crate::spec::schemas::is_zero_time_stand_in(created, top),
        _ => true,
    };
    (ok && pinned_in_order && (deleted != 0 || delete_time_empty)).then_some(())?;
    Some(MallKey {
        sn: sn?,
        signature: signature?,
        merchant_id: merchant_id?,
        deleted: deleted == 1,
        state: super::state_code(
            state,
            internal_state,
            deleted,
            top_time.as_deref(),
            &ctime?,
            content,
        ),
    })
}

pub(super) const SELLER: &[&str] = &[
    "merchantSn",
    "merchantId",
    "merchantName",
    "storeSn",
    "storeId",
    "storeName",
    "terminalSn",
    "crossCityTerminalSn",
];

/// `seller.json`; its `merchantId`.
fn seller(r: &mut Reader<'_>, content: &mut Content) -> Option<String> {
    let mut merchant_id = None;
    r.object(SELLER, all(SELLER.len()), |r, field| {
        let name = SELLER_FIELDS[field];
        match field {
            1 => {
                let id = r.string()?;
                content.text(name, &id);
                merchant_id = Some(id.into_owned());
            }
            5 | 7 => content.text_or_null(name, r.text_or_null()?.as_deref()),
            _ => content.text(name, &r.string()?),
        }
        Some(())
    })?;
    merchant_id
}

/// [`SELLER`]'s fields as [`Content`] names them (`seller.` before each).
const SELLER_FIELDS: [&str; 8] = [
    "seller.merchantSn",
    "seller.merchantId",
    "seller.merchantName",
    "seller.storeSn",
    "seller.storeId",
    "seller.storeName",
    "seller.terminalSn",
    "seller.crossCityTerminalSn",
];

const SELLER_STATISTICS: &[&str] = &["orderFailNum"];
const ORDER_STATISTICS: &[&str] = &["totalNum", "totalQuantity", "totalAmount"];
const CROSS_CITY_PAYMENT: &[&str] = &["payToolCode", "payToolCodeDesc", "status", "statusDesc"];
const SKU: &[&str] = &[
    "skuId",
    "skuName",
    "skuTitle",
    "price",
    "stockType",
    "quantity",
];
const CONTENT_BLOCK: &[&str] = &["type", "text", "img_list"];

/// `order-statistics.json`: two Longs and decimal text; whether the text is decimal.
fn order_statistics(r: &mut Reader<'_>) -> Option<bool> {
    let mut decimal = false;
    r.object(ORDER_STATISTICS, all(3), |r, field| {
        match field {
            1 => decimal = is_decimal_text(&r.string()?),
            _ => drop(r.int()?),
        }
        Some(())
    })?;
    Some(decimal)
}

/// `cross-city-payment.json`.
fn cross_city_payment(r: &mut Reader<'_>, content: &mut Content) -> Option<()> {
    let mut tool = 0;
    let (mut tool_desc, mut desc) = (Cow::Borrowed(""), Cow::Borrowed(""));
    let mut status = StatusRead::Other;
    r.object(CROSS_CITY_PAYMENT, all(4), |r, field| {
        match field {
            0 => tool = r.byte()?,
            1 => tool_desc = r.string()?,
            2 => status = r.text_or_number()?,
            _ => desc = r.string()?,
        }
        Some(())
    })?;
    let status = match &status {
        StatusRead::Text(t) => PaymentStatus::Text(t),
        StatusRead::Int(n) => PaymentStatus::Int(*n),
        StatusRead::Other => PaymentStatus::Other,
    };
    content.payment(i64::from(tool), &tool_desc, status, &desc);
    Some(())
}

/// A cross-city payment's `status` as read (see [`PaymentStatus`]).
enum StatusRead<'a> {
    Text(Cow<'a, str>),
    Int(i64),
    Other,
}

const PRODUCT: &[&str] = &[
    "spuId",
    "converImages",
    "productIntroduction",
    "title",
    "skuResults",
];

/// A products array (`products-response.json`): the spuIds and the mark of the SKUs, when every
/// product conforms.
pub(super) fn products(r: &mut Reader<'_>) -> Option<super::ProductsDigest> {
    let mut ids = Vec::new();
    let mut mark = super::SkuMark::default();
    // A SKU belongs to one product: a skuId met twice is for the tree path to report.
    let mut skus = std::collections::HashSet::new();
    r.array(|r| {
        let mut own = super::ProductSkus::default();
        let id = product(r, &mut skus, &mut own)?;
        mark.add(&id, own);
        ids.push(id);
        Some(())
    })?;
    Some(super::ProductsDigest { ids, skus: mark })
}

/// A product (`product.json`): its spuId, when it conforms and none of its skuIds is in
/// `skus` (the products read before it) or twice in it; its SKUs are added to `own`.
fn product(
    r: &mut Reader<'_>,
    skus: &mut std::collections::HashSet<String>,
    own: &mut super::ProductSkus,
) -> Option<String> {
    let mut spu_id = None;
    let mut ok = true;
    r.object(PRODUCT, all(PRODUCT.len()), |r, field| {
        match field {
            0 => {
                let id = r.string()?;
                ok &= is_digit_string(&id);
                spu_id = Some(id.into_owned());
            }
            // The items' shape is open; strings here, anything else to the tree path.
            1 => r.texts()?,
            2 => ok &= introduction_conforms(&r.string()?),
            3 => r.skip_string()?,
            _ => r.array(|r| sku(r, skus, own))?,
        }
        Some(())
    })?;
    ok.then_some(spu_id?)
}

/// A SKU (`sku.json`) whose skuId is not in `skus` yet (then added, and to `own`).
fn sku(
    r: &mut Reader<'_>,
    skus: &mut std::collections::HashSet<String>,
    own: &mut super::ProductSkus,
) -> Option<()> {
    let mut ok = true;
    r.object(SKU, all(SKU.len()), |r, field| {
        match field {
            0 => {
                let id = r.string()?;
                own.add(&id);
                ok &= is_digit_string(&id) && skus.insert(id.into_owned());
            }
            1 | 2 => r.skip_text_or_null()?,
            3 | 4 => drop(r.integer()?),
            // `quantity`: open in the spec; null here, anything else to the tree path.
            _ => r.null()?,
        }
        Some(())
    })?;
    ok.then_some(())
}

/// Whether the text of a `productIntroduction` is a JSON array of conforming content blocks
/// (`product-introduction.json`).
fn introduction_conforms(text: &str) -> bool {
    let mut r = Reader::new(text);
    r.array(block).is_some() && r.end().is_some()
}

/// A content block (`content-block.json`): `type` `text` with a `text`, or `bigImg` with an
/// `img_list`.
fn block(r: &mut Reader<'_>) -> Option<()> {
    let mut kind = None;
    let (mut text, mut images) = (false, false);
    r.object(CONTENT_BLOCK, 1, |r, field| {
        match field {
            0 => kind = Some(r.string()?),
            1 => {
                r.skip_string()?;
                text = true;
            }
            _ => {
                r.texts()?;
                images = true;
            }
        }
        Some(())
    })?;
    match kind?.as_ref() {
        "text" => text.then_some(()),
        "bigImg" => images.then_some(()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each object the reader reads, as (schema file, its keys in the reader, how many of
    /// them, from the first, are required).
    const OBJECTS: &[(&str, &[&str], usize)] = &[
        ("mall-list-response.json", ENVELOPE, 3),
        ("mall.json", MALL, MALL.len()),
        ("seller.json", SELLER, SELLER.len()),
        ("order-statistics.json", ORDER_STATISTICS, 3),
        ("seller-statistics.json", SELLER_STATISTICS, 1),
        ("cross-city-payment.json", CROSS_CITY_PAYMENT, 4),
        ("product.json", PRODUCT, PRODUCT.len()),
        ("sku.json", SKU, SKU.len()),
        ("content-block.json", CONTENT_BLOCK, 1),
    ];

    #[test]
    fn the_keys_read_are_the_shipped_schemas_properties_in_their_order() {
        for (file, keys, required) in OBJECTS {
            let text = crate::shipped::SCHEMA_FILES
                .iter()
                .find(|(name, _)| name == file)
                .map(|(_, text)| *text)
                .expect("a shipped schema");
            let schema: serde_json::Value = serde_json::from_str(text).expect("JSON");
            let properties: Vec<&str> = schema["properties"]
                .as_object()
                .expect("properties")
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(&properties, keys, "{file}");
            // Required at the top, or by a part of `allOf` (not under an `if`).
            let parts = schema["allOf"].as_array().cloned().unwrap_or_default();
            let mut wanted: Vec<&str> = std::iter::once(&schema)
                .chain(parts.iter())
                .filter_map(|part| part["required"].as_array())
                .flatten()
                .filter_map(serde_json::Value::as_str)
                .collect();
            wanted.sort_unstable();
            let mut read: Vec<&str> = keys[..*required].to_vec();
            read.sort_unstable();
            assert_eq!(read, wanted, "{file}");
        }
    }
}
