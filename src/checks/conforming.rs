//! What the checks of one response say of a body the typed fast path read
//! ([`crate::spec::wire`]), without its tree. Each function answers only when the answer is
//! "nothing to report"; any other answer sends the caller to the check over the tree, whose
//! findings (pointers, expected and actual) are the only ones reported.

use crate::checks::ownership::same_id;
use crate::spec::wire::Digest;

/// The body carries no mall or product record: `payload::no_data` and
/// `ownership::unknown_merchant` have nothing to say.
pub fn carries_no_records(digest: Option<&Digest>) -> bool {
    digest.is_some_and(|d| d.records() == 0)
}

/// Every listed mall's `seller.merchantId` is `merchant` (or the body lists none):
/// `ownership::merchant` has nothing to say.
pub fn all_malls_of(digest: Option<&Digest>, merchant: &str) -> bool {
    match digest {
        Some(Digest::Envelope(e)) => e
            .malls
            .iter()
            .flatten()
            .all(|m| same_id(&m.merchant_id, merchant)),
        Some(Digest::Products(_)) => true,
        None => false,
    }
}

/// The mark of a products body's SKUs (`SkuMark::of_products` of its tree).
pub fn sku_mark(digest: Option<&Digest>) -> Option<crate::spec::wire::SkuMark> {
    match digest {
        Some(Digest::Products(p)) => Some(p.skus),
        _ => None,
    }
}

/// The spuIds of a products body, in order (`products::spu_ids` of its tree).
pub fn spu_ids(digest: Option<&Digest>) -> Option<&[String]> {
    match digest {
        Some(Digest::Products(p)) => Some(&p.ids),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::wire::{EnvelopeDigest, MallKey};

    fn page(merchants: &[&str]) -> Digest {
        Digest::Envelope(EnvelopeDigest {
            success: true,
            code: "0000".into(),
            malls: Some(
                merchants
                    .iter()
                    .map(|m| MallKey {
                        sn: "1".into(),
                        signature: "s".into(),
                        merchant_id: (*m).into(),
                        deleted: false,
                        state: crate::spec::wire::StateCode::default(),
                    })
                    .collect(),
            ),
        })
    }

    #[test]
    fn only_a_clean_answer_is_answered_without_the_tree() {
        assert!(!carries_no_records(None));
        assert!(carries_no_records(Some(&page(&[]))));
        assert!(!carries_no_records(Some(&page(&["a"]))));
        assert!(all_malls_of(Some(&page(&["AB ", "ab"])), "ab"));
        assert!(!all_malls_of(Some(&page(&["ab", "cd"])), "ab"));
        assert!(!all_malls_of(None, "ab"));
        let ids = Digest::Products(crate::spec::wire::ProductsDigest {
            ids: vec!["2".into(), "1".into()],
            skus: crate::spec::wire::SkuMark::default(),
        });
        assert_eq!(
            spu_ids(Some(&ids)),
            Some(&["2".to_string(), "1".to_string()][..])
        );
        assert_eq!(spu_ids(Some(&page(&[]))), None);
    }
}
