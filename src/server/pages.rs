//! Cursor paging of the mall list, the convention the spec leaves open (§4.1), and the paging
//! faults that break it.
//!
//! The convention: malls are ordered by internal id, descending. `cursor.endCursor` null (or
//! absent) asks for the first page; otherwise it is the `mallSn` of the last mall of the previous
//! page, and the next page starts right after that mall. A page holds at most `cursor.count`
//! records; a page shorter than `count` (possibly empty) ends the list. A cursor that is not the
//! mallSn of one of the merchant's malls names nothing to continue from and is answered HTTP 404
//! (a schema-valid string, so not a 400: `schemas/mall-list-request.json`).

use crate::server::data::MallSeed;
use crate::server::faults::Fault;

/// Why a page could not be selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnknownCursor;

/// Orders a listing as the `paging-unstable-order` fault does: by a key mixed from the id and
/// the page size, so each page size gives a different (but complete) order.
pub(crate) fn unstable_order(listing: &mut [&MallSeed], count: usize) {
    listing.sort_by_key(|m| splitmix(m.id ^ (count as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Selects the page after `cursor` (a mallSn, `None` for the first page) of `listing`.
///
/// `call` is a per-server call counter; only `paging-nondeterministic` uses it, to rotate the
/// records within a page differently on every call.
pub(crate) fn select<'a>(
    listing: &[&'a MallSeed],
    cursor: Option<&str>,
    count: usize,
    fault: Option<Fault>,
    call: u64,
) -> Result<Vec<&'a MallSeed>, UnknownCursor> {
    let n = listing.len();
    let pos = match cursor {
        None => None,
        Some(sn) => Some(
            listing
                .iter()
                .position(|m| m.mall_sn == sn)
                .ok_or(UnknownCursor)?,
        ),
    };
    let mut start = pos.map_or(0, |p| p + 1);
    let mut len = count;
    match fault {
        Some(Fault::PagingPageOverCount) => len = count + 1,
        Some(Fault::PagingOverlap) => start = pos.unwrap_or(0),
        Some(Fault::PagingSkipRecord) if pos.is_some() && count > 1 => start += 1,
        Some(Fault::PagingEndless) if n - start.min(n) < count => start = n.saturating_sub(count),
        Some(Fault::PagingNondeterministic) => start = pos.map_or(0, |p| (p / count + 1) * count),
        _ => {}
    }
    let start = start.min(n);
    let end = start.saturating_add(len).min(n);
    let mut page = listing[start..end].to_vec();
    if fault == Some(Fault::PagingNondeterministic) && !page.is_empty() {
        let by = usize::try_from(call % page.len() as u64).expect("below the page length");
        page.rotate_left(by);
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::data::{Dataset, MAIN, Shape};
    use std::collections::HashSet;

    fn walk(listing: &[&MallSeed], count: usize, fault: Option<Fault>, seed: u64) -> Vec<String> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        for call in 0..200 {
            let page = select(listing, cursor.as_deref(), count, fault, seed + call).unwrap();
            out.extend(page.iter().map(|m| m.mall_sn.clone()));
            if page.len() < count {
                return out;
            }
            cursor = page.last().map(|m| m.mall_sn.clone());
        }
        panic!("walk did not end");
    }

    #[test]
    fn a_walk_returns_every_mall_once_in_order() {
        let d = Dataset::new(Shape::Standard);
        let listing = d.malls_of(MAIN.merchant_id);
        let expected: Vec<String> = listing.iter().map(|m| m.mall_sn.clone()).collect();
        for count in [1, 7, 10, 30, 50] {
            assert_eq!(walk(&listing, count, None, 0), expected, "count {count}");
        }
    }

    #[test]
    fn an_unknown_cursor_is_rejected() {
        let d = Dataset::new(Shape::Standard);
        let listing = d.malls_of(MAIN.merchant_id);
        assert_eq!(
            select(&listing, Some("42"), 10, None, 0).err(),
            Some(UnknownCursor)
        );
        assert_eq!(
            select(&listing, Some(""), 10, None, 0).err(),
            Some(UnknownCursor)
        );
    }

    #[test]
    fn faulty_walks_break_what_they_promise() {
        let d = Dataset::new(Shape::Standard);
        let listing = d.malls_of(MAIN.merchant_id);
        let good = walk(&listing, 10, None, 0);
        let first = select(&listing, None, 10, Some(Fault::PagingPageOverCount), 0).unwrap();
        assert_eq!(first.len(), 11);
        let overlap = walk(&listing, 10, Some(Fault::PagingOverlap), 0);
        assert!(overlap.iter().collect::<HashSet<_>>().len() < overlap.len());
        let skip = walk(&listing, 10, Some(Fault::PagingSkipRecord), 0);
        assert!(skip.len() < good.len());
        let unstable = |count| {
            let mut l = listing.clone();
            unstable_order(&mut l, count);
            walk(&l, count, None, 0)
        };
        assert_ne!(unstable(7), unstable(10));
        assert_eq!(unstable(7).iter().collect::<HashSet<_>>().len(), good.len());
        let a = walk(&listing, 10, Some(Fault::PagingNondeterministic), 0);
        let b = walk(&listing, 10, Some(Fault::PagingNondeterministic), 1);
        assert_ne!(a, b);
        assert_eq!(a.iter().collect::<HashSet<_>>().len(), good.len());
    }

    #[test]
    fn the_endless_fault_repeats_the_last_cursor() {
        let d = Dataset::new(Shape::Standard);
        let listing = d.malls_of(MAIN.merchant_id);
        let last = listing.last().map(|m| m.mall_sn.as_str());
        let page = select(&listing, last, 10, Some(Fault::PagingEndless), 0).unwrap();
        assert_eq!(page.len(), 10);
        assert_eq!(page.last().map(|m| m.mall_sn.as_str()), last);
    }
}
