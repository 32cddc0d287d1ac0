//! The bodies of a strategy that are within the size limits: proptest's `Filter`, shrinking
//! exactly as it does, but each body made once per state of its tree. `Filter` made a body to
//! judge it, and `current()` made it again for the caller: a generated body is a baseline
//! cloned and edited, about a twentieth of a fuzz run's instructions made twice.

use proptest::strategy::{BoxedStrategy, NewTree, Strategy, ValueTree};
use proptest::test_runner::TestRunner;

use super::draw::Gen;
use crate::fuzz::body::{FuzzBody, Limits};

/// Why a draw is rejected.
const WHENCE: &str = "a body within the size limits";

/// The bodies of `source` that `limits` admits.
#[derive(Debug)]
pub(super) struct Admitted {
    pub(super) source: BoxedStrategy<FuzzBody>,
    pub(super) limits: Limits,
}

/// [`Admitted`] as a [`Gen`]: the value-only draw rejects the same draws, as locally.
pub(super) fn admitted(source: Gen<FuzzBody>, limits: Limits) -> Gen<FuzzBody> {
    let strategy = Admitted {
        source: source.strategy().clone(),
        limits,
    };
    Gen::pair(strategy, move |runner| {
        loop {
            let body = source.draw(runner)?;
            if limits.admits(&body) {
                return Ok(body);
            }
            runner.reject_local(WHENCE)?;
        }
    })
}

impl Strategy for Admitted {
    type Tree = AdmittedTree;
    type Value = FuzzBody;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        loop {
            let source = self.source.new_tree(runner)?;
            let current = source.current();
            if self.limits.admits(&current) {
                return Ok(AdmittedTree {
                    source,
                    limits: self.limits,
                    current,
                });
            }
            runner.reject_local(WHENCE)?;
        }
    }
}

/// The tree of [`Admitted`], with the body of its current state.
pub(super) struct AdmittedTree {
    source: Box<dyn ValueTree<Value = FuzzBody>>,
    limits: Limits,
    current: FuzzBody,
}

impl AdmittedTree {
    /// Complicates the source until its body is admitted again (as `Filter` does), keeping
    /// the body.
    fn ensure_admitted(&mut self) {
        loop {
            let current = self.source.current();
            if self.limits.admits(&current) {
                self.current = current;
                return;
            }
            assert!(
                self.source.complicate(),
                "Unable to complicate filtered strategy back into acceptable value"
            );
        }
    }
}

impl ValueTree for AdmittedTree {
    type Value = FuzzBody;

    fn current(&self) -> FuzzBody {
        self.current.clone()
    }

    fn simplify(&mut self) -> bool {
        if self.source.simplify() {
            self.ensure_admitted();
            true
        } else {
            false
        }
    }

    fn complicate(&mut self) -> bool {
        if self.source.complicate() {
            self.ensure_admitted();
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::strategy::Strategy;
    use proptest::test_runner::{Config, RngSeed, TestRunner};

    use super::*;

    /// Raw bodies of 1 to 40 characters, of which `limits` below admits those of 24 bytes or
    /// fewer.
    fn source() -> BoxedStrategy<FuzzBody> {
        crate::fuzz::strategies::text(40)
            .prop_map(|t| FuzzBody::Raw {
                label: "text".to_string(),
                bytes: t.into_bytes(),
            })
            .boxed()
    }

    fn runner(seed: u64) -> TestRunner {
        TestRunner::new(Config {
            rng_seed: RngSeed::Fixed(seed),
            ..Config::default()
        })
    }

    #[test]
    fn draws_and_shrinks_as_proptests_filter_does() {
        let limits = Limits {
            max_body: Some(24),
            ..Limits::COMMON
        };
        let admitted = Admitted {
            source: source(),
            limits,
        };
        let filtered = source().prop_filter(WHENCE, move |b| limits.admits(b));
        let mut steps = 0;
        for seed in 0..40 {
            let mut a = admitted.new_tree(&mut runner(seed)).expect("a draw");
            let mut f = filtered.new_tree(&mut runner(seed)).expect("a draw");
            assert_eq!(a.current(), f.current(), "seed {seed}");
            // Shrink with a fixed pattern of verdicts: every third simplification is refused.
            for step in 0..200 {
                let (sa, sf) = (a.simplify(), f.simplify());
                assert_eq!(sa, sf, "seed {seed} step {step}");
                if !sa {
                    break;
                }
                if step % 3 == 2 {
                    assert_eq!(a.complicate(), f.complicate(), "seed {seed} step {step}");
                }
                assert_eq!(a.current(), f.current(), "seed {seed} step {step}");
                assert!(limits.admits(&a.current()));
                steps += 1;
            }
        }
        assert!(steps > 100, "{steps} steps compared");
    }
}
