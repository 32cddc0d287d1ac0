//! The largest page the service serves.
//!
//! §8 states no maximum page size: its only figure is the example size 10 of `cursor.count`.
//! A service may therefore turn away a page size the cases ask for (a walk at 100) without
//! breaking the contract, and reporting that as a failed page would fail a correct service.
//! Before a walk uses a size above the spec's example, the first page at that size is asked
//! for once per run; if the service turns it away while it serves the example size, the
//! largest size it serves is found by bisection (a few first-page requests, once per run)
//! and walks use that size instead, saying so in their coverage. A size the service fails on
//! in any other way (a 5xx, no answer) is walked as asked, so the walk reports it.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Mutex;

/// The page size of the spec's example (§4.1, §8): the one size a service must serve.
pub const SPEC_PAGE_SIZE: u64 = crate::verdict::endpoint::EXAMPLE_PAGE_SIZE;

/// How the service answered a first page at some size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// A success envelope with a data array.
    Served,
    /// An answer without data that is no server error: the size was turned away.
    TurnedAway,
    /// Anything else (no answer, a 5xx): says nothing about the size.
    Failed,
}

/// What the run knows of the service's page sizes.
#[derive(Debug, Default)]
pub struct PageLimit {
    known: Mutex<Known>,
    /// Records a page holds at most when the service serves fewer than asked without a word
    /// (0 while none was seen): a first page shorter than asked, at least the spec's size,
    /// followed by more malls on the next page.
    cap: AtomicU64,
}

#[derive(Debug, Default, Clone, Copy)]
struct Known {
    /// Largest size served so far.
    served: u64,
    /// Smallest size turned away so far (after the bisection, `served + 1`).
    turned_away: Option<u64>,
}

impl PageLimit {
    /// The size to walk at when a case asks for `asked`: `asked` itself, or the largest size
    /// the service serves when it turns `asked` away but serves [`SPEC_PAGE_SIZE`]. `probe`
    /// fetches a first page at a size.
    pub async fn size_for<F, Fut>(&self, asked: u64, probe: F) -> u64
    where
        F: Fn(u64) -> Fut,
        Fut: Future<Output = Probe>,
    {
        if asked <= SPEC_PAGE_SIZE {
            return asked;
        }
        // One walk probes at a time, so concurrent walks reuse what it found.
        let mut known = self.known.lock().await;
        if asked <= known.served {
            return asked;
        }
        if known.turned_away.is_some_and(|t| asked >= t) {
            return known.served;
        }
        match probe(asked).await {
            Probe::Served => {
                known.served = asked;
                return asked;
            }
            Probe::Failed => return asked,
            Probe::TurnedAway => {}
        }
        let mut low = known.served;
        if low < SPEC_PAGE_SIZE {
            if probe(SPEC_PAGE_SIZE).await != Probe::Served {
                // Not even the spec's size: the walk at `asked` reports the failed page.
                return asked;
            }
            low = SPEC_PAGE_SIZE;
        }
        let mut high = known.turned_away.map_or(asked, |t| t.min(asked));
        while high - low > 1 {
            let mid = low + (high - low) / 2;
            match probe(mid).await {
                Probe::Served => low = mid,
                Probe::TurnedAway => high = mid,
                Probe::Failed => return asked,
            }
        }
        known.served = low;
        known.turned_away = Some(high);
        low
    }

    /// Notes that the service served `records` records a page when asked for more, and more
    /// malls followed: pages of that length are full ones (§8 states no limit).
    pub fn saw_cap(&self, records: u64) {
        let _ = self
            .cap
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |cap| {
                (cap == 0 || records < cap).then_some(records)
            });
    }

    /// The records of a full page at `size` when the service caps pages below it.
    pub fn full_page(&self, size: u64) -> Option<u64> {
        let cap = self.cap.load(Ordering::Relaxed);
        (cap != 0 && cap < size).then_some(cap)
    }

    /// The largest size served when the service turned a larger one away.
    pub async fn limit(&self) -> Option<u64> {
        let known = *self.known.lock().await;
        known.turned_away.map(|_| known.served)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn service(max: u64, calls: &AtomicU32) -> impl Fn(u64) -> std::future::Ready<Probe> + '_ {
        move |n| {
            calls.fetch_add(1, Ordering::Relaxed);
            std::future::ready(if n <= max {
                Probe::Served
            } else {
                Probe::TurnedAway
            })
        }
    }

    #[tokio::test]
    async fn a_served_size_costs_one_probe_per_run_and_the_example_size_none() {
        let (limit, calls) = (PageLimit::default(), AtomicU32::new(0));
        assert_eq!(limit.size_for(3, service(1000, &calls)).await, 3);
        assert_eq!(limit.size_for(100, service(1000, &calls)).await, 100);
        assert_eq!(limit.size_for(100, service(1000, &calls)).await, 100);
        assert_eq!(limit.size_for(50, service(1000, &calls)).await, 50);
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        assert_eq!(limit.limit().await, None);
    }

    #[tokio::test]
    async fn a_turned_away_size_becomes_the_largest_served_one_found_once() {
        let (limit, calls) = (PageLimit::default(), AtomicU32::new(0));
        assert_eq!(limit.size_for(100, service(50, &calls)).await, 50);
        let first = calls.load(Ordering::Relaxed);
        assert!(first <= 9, "{first} probes");
        assert_eq!(limit.size_for(100, service(50, &calls)).await, 50);
        assert_eq!(limit.size_for(40, service(50, &calls)).await, 40);
        assert_eq!(limit.size_for(10, service(50, &calls)).await, 10);
        assert_eq!(calls.load(Ordering::Relaxed), first);
        assert_eq!(limit.limit().await, Some(50));
    }

    #[tokio::test]
    async fn a_service_that_turns_away_the_example_size_or_fails_is_walked_as_asked() {
        let calls = AtomicU32::new(0);
        assert_eq!(
            PageLimit::default().size_for(100, service(5, &calls)).await,
            100
        );
        let failing = |_| std::future::ready(Probe::Failed);
        assert_eq!(PageLimit::default().size_for(100, failing).await, 100);
    }
}
