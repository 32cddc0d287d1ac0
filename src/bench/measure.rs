//! What a bench line is: figures, a ratio, its target and the verdict, and the units they are
//! printed in.

use std::fmt;
use std::io::{self, Write};
use std::time::Duration;

/// Which way a ratio must go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    /// The ratio must not exceed this.
    AtMost(f64),
    /// The ratio must reach this.
    AtLeast(f64),
    /// No target: the line informs.
    Informative,
}

impl Goal {
    /// PASS or MISS for a ratio; a ratio that could not be measured is SKIP.
    pub fn verdict(self, ratio: Option<f64>) -> Verdict {
        match (self, ratio) {
            (_, None) => Verdict::Skip,
            (Goal::Informative, Some(_)) => Verdict::Info,
            (Goal::AtMost(t), Some(r)) if r <= t => Verdict::Pass,
            (Goal::AtLeast(t), Some(r)) if r >= t => Verdict::Pass,
            (_, Some(_)) => Verdict::Miss,
        }
    }
}

impl fmt::Display for Goal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Goal::AtMost(t) => write!(f, "<= {t:.2}"),
            Goal::AtLeast(t) => write!(f, ">= {t:.2}"),
            Goal::Informative => f.write_str("none"),
        }
    }
}

/// The outcome of one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The target holds.
    Pass,
    /// The target does not hold.
    Miss,
    /// Not measured (the note says why).
    Skip,
    /// Measured, with no target.
    Info,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Pass => "PASS",
            Verdict::Miss => "MISS",
            Verdict::Skip => "SKIP",
            Verdict::Info => "INFO",
        })
    }
}

/// One line of the report: figures, the ratio they give, its target and detail lines.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Item label, e.g. `(a) suite overhead`.
    pub item: &'static str,
    /// The measured figures, side by side.
    pub figures: String,
    /// The ratio compared with the target (`None` when not measured).
    pub ratio: Option<f64>,
    /// The target.
    pub goal: Goal,
    /// Breakdowns and notes printed under the line.
    pub details: Vec<String>,
}

impl Measurement {
    /// PASS, MISS or SKIP.
    pub fn verdict(&self) -> Verdict {
        self.goal.verdict(self.ratio)
    }

    /// The line and its details, as printed.
    pub fn render(&self) -> String {
        let ratio = self
            .ratio
            .map_or_else(|| "-".to_string(), |r| format!("{r:.2}"));
        let mut out = format!(
            "{:<22} {}\n{:<22} ratio {ratio}  target {}  {}\n",
            self.item,
            self.figures,
            "",
            self.goal,
            self.verdict()
        );
        for d in &self.details {
            out.push_str(&format!("{:<24}{d}\n", ""));
        }
        out
    }
}

/// `N CPUs (model)` from the standard library and /proc/cpuinfo.
pub fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown model".to_string());
    format!("{cpus} CPUs ({model})")
}

pub(crate) fn skipped(item: &'static str, goal: Goal, why: String) -> Measurement {
    Measurement {
        item,
        figures: "not measured".to_string(),
        ratio: None,
        goal,
        details: vec![format!("note: {why}")],
    }
}

pub(crate) fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms >= 10_000.0 {
        format!("{:.1} s", ms / 1e3)
    } else if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

pub(crate) fn mib(bytes: f64) -> String {
    format!("{:.1} MiB", bytes / (1024.0 * 1024.0))
}

/// The median of some durations (the upper one of an even count); zero for none.
pub fn median(values: &[Duration]) -> Duration {
    let mut sorted = values.to_vec();
    sorted.sort();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

pub(crate) fn ratio(a: Duration, b: Duration) -> Option<f64> {
    let b = b.as_secs_f64();
    (b > 0.0).then(|| a.as_secs_f64() / b)
}

/// The median of the ratios of rounds taken side by side (`a[i]` over `b[i]`): a neighbour on
/// a shared host that slows a few rounds of one side moves the ratio of the medians, not this.
pub(crate) fn median_ratio(a: &[Duration], b: &[Duration]) -> Option<f64> {
    let mut ratios: Vec<f64> = a.iter().zip(b).filter_map(|(&a, &b)| ratio(a, b)).collect();
    ratios.sort_by(f64::total_cmp);
    ratios.get(ratios.len() / 2).copied()
}

/// CPU time (user and system) this process has used so far, all threads; zero where the
/// system does not say. Less disturbed than wall time by other work on a shared machine.
pub fn cpu_time() -> Duration {
    let usage = usage_of(libc::RUSAGE_SELF);
    usage.user + usage.system
}

/// CPU time spent in user space and in the kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuUse {
    pub user: Duration,
    pub system: Duration,
}

impl CpuUse {
    /// What was used between `earlier` and `self`.
    pub fn since(self, earlier: CpuUse) -> CpuUse {
        CpuUse {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
        }
    }

    pub fn total(self) -> Duration {
        self.user + self.system
    }
}

/// The CPU time of the child processes ended and waited for so far (all of them, and theirs).
pub fn children_cpu() -> CpuUse {
    usage_of(libc::RUSAGE_CHILDREN)
}

fn usage_of(who: libc::c_int) -> CpuUse {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole `rusage` into the pointer it is given, which points to
    // one; on failure (it returns non-zero) the zeroed value is not read.
    let ok = unsafe { libc::getrusage(who, usage.as_mut_ptr()) } == 0;
    if !ok {
        return CpuUse::default();
    }
    // SAFETY: getrusage succeeded, so the value is initialised.
    let usage = unsafe { usage.assume_init() };
    let time = |t: libc::timeval| {
        Duration::new(
            u64::try_from(t.tv_sec).unwrap_or(0),
            u32::try_from(t.tv_usec).unwrap_or(0).saturating_mul(1_000),
        )
    };
    CpuUse {
        user: time(usage.ru_utime),
        system: time(usage.ru_stime),
    }
}

/// Prints a piece of the report at once (the bench runs for a while).
pub fn print(text: &str) {
    let mut out = io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goals_give_pass_miss_and_skip() {
        assert_eq!(Goal::AtMost(1.3).verdict(Some(1.2)), Verdict::Pass);
        assert_eq!(Goal::AtMost(1.3).verdict(Some(1.4)), Verdict::Miss);
        assert_eq!(Goal::AtLeast(0.5).verdict(Some(0.4)), Verdict::Miss);
        assert_eq!(Goal::AtLeast(0.5).verdict(Some(0.5)), Verdict::Pass);
        assert_eq!(Goal::AtLeast(0.5).verdict(None), Verdict::Skip);
        assert_eq!(Goal::Informative.verdict(Some(0.1)), Verdict::Info);
    }

    #[test]
    fn a_rendered_line_holds_figures_ratio_target_and_verdict() {
        let line = Measurement {
            item: "(a) suite overhead",
            figures: "suite 1 ms vs bare 1 ms".to_string(),
            ratio: Some(1.5),
            goal: Goal::AtMost(1.3),
            details: vec!["why".to_string()],
        };
        let text = line.render();
        assert!(text.contains("suite 1 ms vs bare 1 ms"), "{text}");
        assert!(text.contains("ratio 1.50  target <= 1.30  MISS"), "{text}");
        assert!(text.contains("why"), "{text}");
    }

    #[test]
    fn cpu_time_grows_with_work() {
        let before = cpu_time();
        let mut x = 0u64;
        let started = std::time::Instant::now();
        while started.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(cpu_time() > before, "{x}");
    }

    #[test]
    fn a_child_that_works_shows_in_the_children_cpu() {
        let before = children_cpu();
        // A child that spins for a while in user space, waited for.
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(status.success());
        let used = children_cpu().since(before);
        assert!(used.user > Duration::ZERO, "{used:?}");
        assert!(used.total() >= used.user);
    }

    #[test]
    fn the_median_ratio_is_that_of_the_middle_pair() {
        let d = |ms| Duration::from_millis(ms);
        // A neighbour slowed the last three rounds of one side and the last two of the other:
        // the medians come from a slowed round of one side and a quiet one of the other
        // (60 / 11), the rounds side by side still say 2.
        let a = [d(20), d(21), d(60), d(61), d(62)];
        let b = [d(10), d(10), d(11), d(60), d(61)];
        assert_eq!(median_ratio(&a, &b), Some(2.0));
        assert!(ratio(median(&a), median(&b)).is_some_and(|r| r > 5.0));
        assert_eq!(median_ratio(&[], &[]), None);
    }

    #[test]
    fn median_takes_the_middle_value() {
        let d = |ms| Duration::from_millis(ms);
        assert_eq!(median(&[d(5), d(1), d(3)]), d(3));
        assert_eq!(median(&[]), Duration::ZERO);
    }
}
