//! Politeness toward shared servers: a request-rate limit, `Retry-After` on 429/503, and the
//! count of transport retries that makes a passing case "flaky".

use std::cell::Cell;
use std::time::Duration;

use reqwest::header::{HeaderMap, RETRY_AFTER};
use tokio::sync::Mutex;
use tokio::time::Instant;

/// Longest `Retry-After` honoured; a longer one is reported instead of waited for.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);
/// Times a 429/503 with `Retry-After` is retried.
pub const MAX_THROTTLED_RETRIES: u32 = 3;

/// Spaces request starts at least `1/rate` seconds apart, across every task of a run.
#[derive(Debug)]
pub struct RateLimiter {
    interval: Duration,
    next: Mutex<Instant>,
}

impl RateLimiter {
    /// A limiter of `rate` requests per second (must be positive).
    pub fn new(rate: f64) -> RateLimiter {
        RateLimiter {
            interval: Duration::from_secs_f64(1.0 / rate),
            next: Mutex::new(Instant::now()),
        }
    }

    /// Waits for the next free slot.
    pub async fn wait(&self) {
        let slot = {
            let mut next = self.next.lock().await;
            reserve(&mut next, Instant::now(), self.interval)
        };
        tokio::time::sleep_until(slot).await;
    }
}

/// Takes the next slot (no earlier than `now`) and moves `next` one interval on.
fn reserve(next: &mut Instant, now: Instant, interval: Duration) -> Instant {
    let slot = (*next).max(now);
    *next = slot + interval;
    slot
}

/// The delay a 429 or 503 asks for, when it says so in seconds and within reason.
pub fn retry_after(status: u16, headers: &HeaderMap) -> Option<Duration> {
    if status != 429 && status != 503 {
        return None;
    }
    let secs: u64 = headers
        .get(RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let wait = Duration::from_secs(secs);
    (wait <= MAX_RETRY_AFTER).then_some(wait)
}

tokio::task_local! {
    static RETRIES: Cell<u32>;
}

/// Runs `fut` counting the transport retries made inside it; returns its output and the count.
pub async fn counting_retries<F: Future>(fut: F) -> (F::Output, u32) {
    RETRIES
        .scope(Cell::new(0), async {
            let out = fut.await;
            (out, RETRIES.with(Cell::get))
        })
        .await
}

/// Notes one transport retry for the case running on this task (if any is counting).
pub fn note_retry() {
    let _ = RETRIES.try_with(|c| c.set(c.get() + 1));
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn slots_are_one_interval_apart_even_for_a_burst() {
        let start = Instant::now();
        let mut next = start;
        let interval = Duration::from_millis(50);
        let slots: Vec<Instant> = (0..21)
            .map(|_| reserve(&mut next, start, interval))
            .collect();
        assert_eq!(slots[20] - slots[0], Duration::from_secs(1));
        // After a quiet period the next request goes at once, not in a burst of saved slots.
        let later = start + Duration::from_secs(10);
        assert_eq!(reserve(&mut next, later, interval), later);
        assert_eq!(reserve(&mut next, later, interval), later + interval);
    }

    #[test]
    fn retry_after_only_for_429_and_503_in_seconds() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(429, &h), Some(Duration::from_secs(2)));
        assert_eq!(retry_after(500, &h), None);
        h.insert(RETRY_AFTER, HeaderValue::from_static("3600"));
        assert_eq!(retry_after(503, &h), None);
    }

    #[tokio::test]
    async fn retries_are_counted_per_scope() {
        let ((), n) = counting_retries(async {
            note_retry();
            note_retry();
        })
        .await;
        assert_eq!(n, 2);
        note_retry();
    }
}
