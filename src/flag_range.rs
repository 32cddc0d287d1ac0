//! The accepted range of every numeric flag (and of the same setting in a profile): a value
//! outside it is a usage error (exit 2) naming the flag and the range, never a panic or a
//! server that listens and serves nobody. `cli.rs` hands these to clap as value parsers.

use std::ops::RangeInclusive;

use clap::builder::RangedU64ValueParser;

/// Requests in flight at once (`--jobs`), and sign commands running at once.
pub const JOBS: RangeInclusive<u64> = 1..=1024;
/// Connections the reference server serves at once (`serve --max-connections`).
pub const CONNECTIONS: RangeInclusive<u64> = 1..=65_536;
/// Retries of a request that failed in transport (`--retries`).
pub const RETRIES: RangeInclusive<u64> = 0..=10;
/// Pages of one cursor walk (`--max-pages`).
pub const PAGES: RangeInclusive<u64> = 1..=1_000_000;
/// Records or malls of a bounded run (`--sample`, `--walk-prefix`).
pub const RECORDS: RangeInclusive<u64> = 1..=1_000_000;
/// Malls of the reference server's default merchant (`serve --malls`).
pub const MALLS: RangeInclusive<u64> = 0..=1_000_000;
/// Added latency of the reference server, in milliseconds (`serve --latency-ms`).
pub const LATENCY_MS: RangeInclusive<u64> = 0..=60_000;
/// Largest response body accepted, in bytes (`--max-body`): 1 KiB to 1 GiB.
pub const MAX_BODY: RangeInclusive<u64> = 1024..=(1 << 30);
/// Generated request bodies per endpoint (`fuzz --count`, `bench --fuzz-cases` from 0).
pub const FUZZ_CASES: RangeInclusive<u64> = 1..=1_000_000;
/// Seconds a fuzz run generates (`fuzz --max-time`): up to a week.
pub const FUZZ_SECONDS: RangeInclusive<u64> = 1..=604_800;
/// Timed rounds of the bench (`bench --rounds`).
pub const ROUNDS: RangeInclusive<u64> = 1..=1_000;
/// Longest timeout or wait, in seconds (`--timeout`, `--max-retry-wait`, the server's).
pub const MAX_SECONDS: f64 = 3600.0;
/// Shortest timeout, in seconds: a millisecond (`--timeout 1e-300` timed every request out
/// before a byte could come back, and the run blamed the service).
pub const MIN_SECONDS: f64 = 0.001;
/// Requests per second (`--rate`): from one every 1,000 s to a million.
pub const RATE: RangeInclusive<f64> = 0.001..=1_000_000.0;

/// A clap parser of an integer flag of type `T` within `range`.
pub fn int<T>(range: RangeInclusive<u64>) -> RangedU64ValueParser<T>
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
    <T as TryFrom<u64>>::Error: std::error::Error + Send + Sync + 'static,
{
    RangedU64ValueParser::<T>::new().range(range)
}

/// A number in a message: `1e-300`, not three hundred zeros.
pub(crate) fn show(v: f64) -> String {
    if v != 0.0 && !(1e-3..1e9).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

fn number(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("`{text}` is not a number"))
}

/// Seconds in [0.001, 3600] (`--timeout`, `serve --header-timeout`).
pub fn seconds(text: &str) -> Result<f64, String> {
    let v = number(text)?;
    if (MIN_SECONDS..=MAX_SECONDS).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{} is not a number of seconds in [{MIN_SECONDS}, {MAX_SECONDS}]",
            show(v)
        ))
    }
}

/// Seconds in [0, 3600] (`--max-retry-wait`).
pub fn seconds_or_zero(text: &str) -> Result<f64, String> {
    let v = number(text)?;
    if (0.0..=MAX_SECONDS).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{} is not a number of seconds in [0, {MAX_SECONDS}]",
            show(v)
        ))
    }
}

/// Requests per second within [`RATE`] (`run --rate`).
pub fn rate(text: &str) -> Result<f64, String> {
    let v = number(text)?;
    check_rate(v)
}

/// Requests per second within [`RATE`], or 0 for unlimited (`fuzz --rate`).
pub fn rate_or_zero(text: &str) -> Result<f64, String> {
    let v = number(text)?;
    if v == 0.0 { Ok(v) } else { check_rate(v) }
}

/// Checks a rate from another source than a flag (a profile's `rate`).
pub fn check_rate(v: f64) -> Result<f64, String> {
    if RATE.contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{} is not a number of requests per second in [{}, {}]",
            show(v),
            RATE.start(),
            RATE.end()
        ))
    }
}

/// Checks a count from another source than a flag (a profile's `jobs`, `walk_prefix`).
pub fn check(v: u64, range: &RangeInclusive<u64>) -> Result<u64, String> {
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not in {}..={}", range.start(), range.end()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_outside_their_range_are_refused() {
        assert_eq!(seconds("10").unwrap(), 10.0);
        assert_eq!(seconds("0.001").unwrap(), 0.001);
        for bad in [
            "0", "-1", "3601", "inf", "NaN", "1e999", "x", "1e-300", "0.0009",
        ] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(rate_or_zero("0").unwrap(), 0.0);
        for bad in ["1e-300", "0", "2e6", "inf"] {
            assert!(rate(bad).is_err(), "{bad}");
        }
        assert!(check(2305843009213693952, &JOBS).is_err());
        assert!(rate("1e-300").unwrap_err().starts_with("1e-300 is not"));
    }
}
