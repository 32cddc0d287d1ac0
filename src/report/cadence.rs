//! When a report file is rewritten during a run. Rewriting the whole file after every case
//! costs time quadratic in the number of cases (2,000 cases took 73 s); instead a file is
//! rewritten when something changed and the last write is old enough: at least
//! [`MIN_INTERVAL`] ago, and at least [`COST_FACTOR`] times as long ago as that write took, so
//! writing takes a bounded share of the run however large the report grows. The finished
//! report is always written (on finish and on interrupt), and every write is atomic.

use std::time::{Duration, Instant};

/// Shortest time between two writes of one file during a run.
pub const MIN_INTERVAL: Duration = Duration::from_millis(250);

/// A write must be at least this many times as old as it was long.
pub const COST_FACTOR: u32 = 10;

/// The write schedule of one report file.
#[derive(Debug, Default)]
pub struct Cadence {
    last: Option<Instant>,
    cost: Duration,
    dirty: bool,
}

impl Cadence {
    /// Notes a change; true when the file should be written now.
    pub fn changed(&mut self) -> bool {
        self.dirty = true;
        self.due()
    }

    /// True when a change is waiting and the last write is old enough.
    pub fn due(&self) -> bool {
        self.dirty
            && self.last.is_none_or(|last| {
                last.elapsed() >= MIN_INTERVAL.max(self.cost.saturating_mul(COST_FACTOR))
            })
    }

    /// Records a write that began at `started`.
    pub fn wrote(&mut self, started: Instant) {
        let now = Instant::now();
        self.cost = now.saturating_duration_since(started);
        self.last = Some(now);
        self.dirty = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_change_is_written_at_once_and_the_next_ones_wait() {
        let mut c = Cadence::default();
        assert!(!c.due(), "nothing changed");
        assert!(c.changed(), "the first change");
        c.wrote(Instant::now());
        assert!(!c.changed(), "a change right after a write waits");
        assert!(!c.due());
        c.last = Instant::now().checked_sub(MIN_INTERVAL);
        assert!(
            c.due(),
            "the waiting change is due once the interval passed"
        );
    }

    #[test]
    fn slow_writes_are_spaced_further_apart() {
        let mut c = Cadence::default();
        let long_ago = Instant::now()
            .checked_sub(Duration::from_secs(2))
            .expect("the clock is past two seconds");
        c.wrote(long_ago);
        assert!(c.cost >= Duration::from_secs(2));
        c.last = Instant::now().checked_sub(Duration::from_secs(5));
        assert!(!c.changed(), "a 2 s write waits 20 s");
        c.last = Instant::now().checked_sub(Duration::from_secs(21));
        assert!(c.due());
    }
}
