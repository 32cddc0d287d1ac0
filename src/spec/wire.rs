//! The fast path for answers that conform: a mall-list envelope or a products array read from
//! its bytes into typed, borrowing structs (no `serde_json::Value` tree), with every rule of
//! the shipped schemas and of the scan of the bytes checked on the way.
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

mod model;

use serde::Deserialize;

use model::{Envelope, Product};

/// What a conforming body holds that later checks ask for, in place of its tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Digest {
    /// A mall-list envelope valid against `mall-list-response`, with nothing to report.
    Envelope(EnvelopeDigest),
    /// A products array valid against `products-response`, with nothing to report: the
    /// spuIds in order.
    Products(Vec<String>),
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
            Digest::Products(ids) => ids.len(),
        }
    }
}

/// The digest of `bytes` when they are one JSON document that conforms beyond doubt: a
/// mall-list envelope (object root) or a products array (array root). `None` otherwise.
pub fn read(bytes: &[u8]) -> Option<Digest> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace())? {
        b'{' => whole::<Envelope<'_>>(bytes)?.digest().map(Digest::Envelope),
        b'[' => {
            let products = whole::<Vec<Product<'_>>>(bytes)?;
            products
                .iter()
                .all(Product::conforms)
                .then(|| Digest::Products(products.iter().map(|p| p.spu_id()).collect()))
        }
        _ => None,
    }
}

/// Whether `bytes` are one JSON value, read with no tree and no check (the floor a check of
/// the same bytes is measured against).
pub fn syntax_only(bytes: &[u8]) -> bool {
    whole::<serde::de::IgnoredAny>(bytes).is_some()
}

/// `bytes` as one `T` and nothing after it.
fn whole<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Option<T> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = T::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

#[cfg(test)]
mod tests;
