//! proptest's shrinking loop, driven by hand so that the property that failed first is the one
//! kept failing while the body gets smaller, and so that shrinking stops at a time limit.

use proptest::strategy::ValueTree;

/// Why shrinking stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShrinkEnd {
    /// No simpler value fails: the result is minimal.
    Minimal,
    /// The iteration limit was reached.
    Iterations,
    /// The caller asked to stop (e.g. `--max-time` ran out).
    Stopped,
    /// The run is ending early (a rate limit or a signal): no candidate is tried any more.
    Halted,
}

/// The smallest failing value found, with what the test said about it.
#[derive(Debug)]
pub struct Shrunk<V, R> {
    /// The smallest value that still failed.
    pub value: V,
    /// The test's evidence for that value.
    pub evidence: R,
    /// Accepted simplifications.
    pub steps: u32,
    /// Values tried.
    pub tries: u32,
    /// Why shrinking stopped.
    pub end: ShrinkEnd,
}

/// What a test says about one candidate.
#[derive(Debug)]
pub enum Verdict<R> {
    /// It still fails, with this evidence.
    Fails(R),
    /// It passes.
    Passes,
    /// Stop shrinking now.
    Stop,
    /// Stop shrinking now: the whole run is ending.
    Halt,
}

/// Shrinks `tree` (whose current value failed with `evidence`) to the smallest value for which
/// `test` still says [`Verdict::Fails`], trying at most `max_tries` candidates.
pub fn minimise<T: ValueTree, R>(
    mut tree: T,
    evidence: R,
    max_tries: u32,
    mut test: impl FnMut(&T::Value) -> Verdict<R>,
) -> Shrunk<T::Value, R> {
    let mut best = Shrunk {
        value: tree.current(),
        evidence,
        steps: 0,
        tries: 0,
        end: ShrinkEnd::Minimal,
    };
    if !tree.simplify() {
        return best;
    }
    loop {
        if best.tries >= max_tries {
            best.end = ShrinkEnd::Iterations;
            return best;
        }
        best.tries += 1;
        let candidate = tree.current();
        let more = match test(&candidate) {
            Verdict::Fails(evidence) => {
                best.value = candidate;
                best.evidence = evidence;
                best.steps += 1;
                tree.simplify()
            }
            Verdict::Passes => tree.complicate(),
            Verdict::Stop => {
                best.end = ShrinkEnd::Stopped;
                return best;
            }
            Verdict::Halt => {
                best.end = ShrinkEnd::Halted;
                return best;
            }
        };
        if !more {
            return best;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::num::u64::BinarySearch;

    #[test]
    fn minimise_finds_the_boundary_and_counts_steps() {
        let tree = BinarySearch::new_above(1, 900);
        let out = minimise(tree, "first", 100, |&v| {
            if v > 80 {
                Verdict::Fails("again")
            } else {
                Verdict::Passes
            }
        });
        assert_eq!(out.value, 81);
        assert_eq!(out.evidence, "again");
        assert_eq!(out.end, ShrinkEnd::Minimal);
        assert!(out.steps > 0 && out.tries >= out.steps);
    }

    #[test]
    fn minimise_respects_the_try_limit_and_stop() {
        let out = minimise(BinarySearch::new_above(1, 900), (), 2, |_| {
            Verdict::Fails(())
        });
        assert_eq!(out.end, ShrinkEnd::Iterations);
        assert_eq!(out.tries, 2);
        let out = minimise(BinarySearch::new_above(1, 900), (), 50, |_| {
            Verdict::<()>::Stop
        });
        assert_eq!((out.value, out.end), (900, ShrinkEnd::Stopped));
        let out = minimise(BinarySearch::new_above(1, 900), (), 50, |_| {
            Verdict::<()>::Halt
        });
        assert_eq!((out.value, out.end, out.tries), (900, ShrinkEnd::Halted, 1));
    }
}
