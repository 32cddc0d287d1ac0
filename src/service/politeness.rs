//! Politeness toward shared servers: a request-rate limit, `Retry-After` on 429/503 within a
//! ceiling (`--max-retry-wait`), and the count of transport retries that makes a passing case
//! "flaky".

use std::cell::Cell;
use std::sync::{Mutex as SyncMutex, OnceLock};
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, RETRY_AFTER};
use tokio::sync::{Mutex, Semaphore, SemaphorePermit};
use tokio::time::Instant;

/// Default of `--max-retry-wait`: the longest a request waits, in total, for `Retry-After`.
pub const DEFAULT_MAX_RETRY_WAIT: Duration = Duration::from_secs(10);
/// Times one request is retried after a 429 (or a 503 with `Retry-After`).
pub const MAX_THROTTLED_RETRIES: u32 = 3;
/// The wait assumed for a 429 that does not say how long to wait.
const UNSPECIFIED_WAIT: Duration = Duration::from_secs(1);

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

/// Bounds the requests in flight across every task of a run (`--jobs`): the walks and sweeps
/// of a case run concurrently, and all of them together never have more requests out than
/// this. Unbounded until [`InFlight::limit`] sets it (once: the first limit stays).
#[derive(Debug, Default)]
pub struct InFlight {
    permits: OnceLock<Semaphore>,
}

impl InFlight {
    /// Allows at most `n` (at least one) requests in flight from now on; false when a limit
    /// was already set (it stays).
    pub fn limit(&self, n: usize) -> bool {
        self.permits.set(Semaphore::new(n.max(1))).is_ok()
    }

    /// Waits for a free place; `None` when unbounded. The place is held until the permit drops.
    pub async fn enter(&self) -> Option<SemaphorePermit<'_>> {
        self.permits.get()?.acquire().await.ok()
    }
}

/// A request the service turned away for now: a 429, or a 503 that says when to come back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttle {
    /// 429 or 503.
    pub status: u16,
    /// What `Retry-After` asked for; `None` when a 429 did not say.
    pub retry_after: Option<Duration>,
}

impl Throttle {
    /// How long to wait before the next try.
    pub fn wait(&self) -> Duration {
        self.retry_after.unwrap_or(UNSPECIFIED_WAIT)
    }

    /// `rate limited (429, Retry-After 30 s)`, the words reports and skip reasons use.
    pub fn describe(&self) -> String {
        match self.retry_after {
            Some(d) => format!(
                "rate limited ({}, Retry-After {} s)",
                self.status,
                ceil_secs(d)
            ),
            None => format!("rate limited ({}, no Retry-After)", self.status),
        }
    }
}

fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// Whether a response turns the request away for now (RFC 9110 §10.2.3, RFC 6585 §4): every
/// 429, and a 503 with a valid `Retry-After`. `now` resolves the HTTP-date form.
pub fn throttle(status: u16, headers: &HeaderMap, now: SystemTime) -> Option<Throttle> {
    let retry_after = headers
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| parse_retry_after(v, now));
    match status {
        429 => Some(Throttle {
            status,
            retry_after,
        }),
        503 => retry_after.map(|_| Throttle {
            status,
            retry_after,
        }),
        _ => None,
    }
}

/// A `Retry-After` value: delay-seconds (huge ones saturate) or an HTTP-date (a past date is no
/// wait); anything else is `None`.
fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The pause a service asked a client for, shared by every request of a run: while it lasts no
/// request is sent, so that a throttled run does not keep knocking.
#[derive(Debug, Default)]
pub struct Backoff {
    quiet: SyncMutex<Option<(Instant, Throttle)>>,
}

impl Backoff {
    /// Notes a throttled answer received at `now`; the pause ends no earlier than it asks.
    pub fn note(&self, throttle: Throttle, now: Instant) {
        let until = now.checked_add(throttle.wait()).unwrap_or(far_future(now));
        let mut quiet = self.quiet.lock().unwrap_or_else(|e| e.into_inner());
        if quiet.is_none_or(|(current, _)| current < until) {
            *quiet = Some((until, throttle));
        }
    }

    /// What is left of the pause at `now`, and the answer that asked for it.
    pub fn pending(&self, now: Instant) -> Option<(Duration, Throttle)> {
        let quiet = self.quiet.lock().unwrap_or_else(|e| e.into_inner());
        quiet
            .filter(|(until, _)| *until > now)
            .map(|(until, throttle)| (until - now, throttle))
    }
}

/// An instant further than any wait we would honour (`Instant` cannot hold `Duration::MAX`).
fn far_future(now: Instant) -> Instant {
    now + Duration::from_secs(100 * 365 * 24 * 3600)
}

/// What to do before sending a request, given the pause in force and the waiting done so far.
#[derive(Debug, PartialEq, Eq)]
pub enum Before {
    /// Send now.
    Send,
    /// Sleep this long first (it fits in the ceiling).
    Wait(Duration),
    /// Do not send: the wait would pass `--max-retry-wait`.
    GiveUp(Throttle),
}

/// Decides whether a request waits, goes, or gives up; `waited` is what it already slept.
pub fn before_sending(
    pending: Option<(Duration, Throttle)>,
    waited: Duration,
    ceiling: Duration,
) -> Before {
    match pending {
        None => Before::Send,
        Some((left, throttle)) if waited.saturating_add(left) > ceiling => Before::GiveUp(throttle),
        Some((left, _)) => Before::Wait(left),
    }
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

    fn headers(retry_after: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_str(retry_after).unwrap());
        h
    }

    #[test]
    fn every_429_and_a_503_with_retry_after_are_throttled() {
        let now = SystemTime::now();
        let t = |status, h: &HeaderMap| throttle(status, h, now);
        let secs = |n| Some(Duration::from_secs(n));
        assert_eq!(t(429, &headers("2")).unwrap().retry_after, secs(2));
        assert_eq!(t(503, &headers("3600")).unwrap().retry_after, secs(3600));
        assert_eq!(
            t(429, &HeaderMap::new()).unwrap().retry_after,
            None,
            "429 says enough"
        );
        assert_eq!(
            t(503, &HeaderMap::new()),
            None,
            "a bare 503 is a server error"
        );
        assert_eq!(t(500, &headers("2")), None);
        assert_eq!(t(200, &headers("2")), None);
        assert_eq!(
            t(429, &headers("soon")).unwrap().retry_after,
            None,
            "invalid value"
        );
        let huge = t(429, &headers("99999999999999999999999")).unwrap();
        assert_eq!(huge.retry_after, secs(u64::MAX), "saturates, never wraps");
    }

    #[test]
    fn retry_after_accepts_the_http_date_form() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let later = httpdate::fmt_http_date(now + Duration::from_secs(90));
        assert_eq!(
            parse_retry_after(&later, now),
            Some(Duration::from_secs(90))
        );
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(90));
        assert_eq!(parse_retry_after(&earlier, now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("Tuesday", now), None);
    }

    #[test]
    fn throttles_are_described_in_whole_seconds() {
        let t = Throttle {
            status: 429,
            retry_after: Some(Duration::from_millis(999_999_001)),
        };
        assert_eq!(t.describe(), "rate limited (429, Retry-After 1000000 s)");
        let t = Throttle {
            status: 429,
            retry_after: None,
        };
        assert_eq!(t.describe(), "rate limited (429, no Retry-After)");
    }

    #[test]
    fn the_whole_wait_stays_under_the_ceiling() {
        let throttle = Throttle {
            status: 429,
            retry_after: Some(Duration::from_secs(30)),
        };
        let ceiling = Duration::from_secs(10);
        let s = Duration::from_secs;
        for (pending, waited, expected, why) in [
            (None, s(0), Before::Send, "no pause"),
            (
                Some(s(2)),
                s(0),
                Before::Wait(s(2)),
                "a short pause is waited for",
            ),
            (
                Some(s(2)),
                s(8),
                Before::Wait(s(2)),
                "exactly at the ceiling",
            ),
            (
                Some(s(2)),
                s(9),
                Before::GiveUp(throttle),
                "the sum passes the ceiling",
            ),
            (
                Some(s(30)),
                s(0),
                Before::GiveUp(throttle),
                "too long: not waited at all",
            ),
            (
                Some(Duration::MAX),
                s(0),
                Before::GiveUp(throttle),
                "no overflow",
            ),
        ] {
            let got = before_sending(pending.map(|p| (p, throttle)), waited, ceiling);
            assert_eq!(got, expected, "{why}");
        }
    }

    #[tokio::test]
    async fn a_pause_is_shared_and_only_lengthened() {
        let backoff = Backoff::default();
        let now = Instant::now();
        assert_eq!(backoff.pending(now), None);
        let long = Throttle {
            status: 429,
            retry_after: Some(Duration::from_secs(30)),
        };
        backoff.note(long, now);
        let short = Throttle {
            status: 429,
            retry_after: Some(Duration::from_secs(1)),
        };
        backoff.note(short, now);
        assert_eq!(backoff.pending(now), Some((Duration::from_secs(30), long)));
        assert_eq!(backoff.pending(now + Duration::from_secs(31)), None);
        let endless = Throttle {
            status: 429,
            retry_after: Some(Duration::MAX),
        };
        backoff.note(endless, now);
        assert!(
            backoff
                .pending(now)
                .is_some_and(|(left, _)| left > Duration::from_secs(3600))
        );
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
