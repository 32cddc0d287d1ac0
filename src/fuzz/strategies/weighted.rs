//! A weighted choice among strategies that shrinks as proptest's `Union` does (the chosen arm
//! first, then to earlier arms, which hold the simpler values), without a copy of the test
//! runner for every arm before the chosen one.
//!
//! proptest's `Union` keeps, for each arm before the one it draws, a partial clone of the
//! runner (its configuration and a new ChaCha generator seeded from the runner's), so that the
//! arm can be drawn if shrinking ever reaches it. Nearly every draw of a fuzz run is sent once
//! and never shrunk, and the unions are deep (a character of generated text is one): a fuzz
//! run of 2,000 requests made 46,574 such clones, 80 M instructions with their drops. Here an
//! earlier arm keeps a 16-byte seed instead, drawn from the runner's generator, and is drawn
//! from it, with its own generator, only when shrinking reaches it.
//!
//! One change to how it shrinks: proptest tries the arm before the failing one with one draw
//! and, when that draw passes, tries no earlier arm again, so a failure that a simpler arm
//! could also show stays in a later one by the luck of one draw of the arm in between (a count
//! drawn among the special floats stopped at `1000.0`, because the negative integers just
//! before them pass, instead of going on to the integer `81`: about 1.5 % of the failures).
//! Here an arm whose draw passes is drawn again, from the next seed, up to [`DRAWS`] times,
//! then passed over, and the arms before it are still tried.

use std::sync::Arc;

use proptest::prelude::RngExt;
use proptest::strategy::{BoxedStrategy, NewTree, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use super::draw::Gen;

/// How many times shrinking draws an earlier arm before it gives the arm up.
const DRAWS: u8 = 4;

/// One of `arms`, chosen with probability proportional to its weight.
#[derive(Debug)]
pub(super) struct Weighted<T> {
    arms: Arc<[(u32, BoxedStrategy<T>)]>,
    total: u32,
}

impl<T> Weighted<T> {
    /// The choice among `arms`; their weights must not all be 0.
    pub(super) fn new(arms: Vec<(u32, BoxedStrategy<T>)>) -> Self {
        let total = arms.iter().map(|(w, _)| *w).sum();
        assert!(
            total > 0,
            "a weighted choice needs an arm of weight above 0"
        );
        Weighted {
            arms: arms.into(),
            total,
        }
    }
}

/// The arm of `weights` that `at` (below their sum) falls in.
fn arm_at(weights: impl Iterator<Item = u32>, mut at: u32) -> usize {
    for (pick, weight) in weights.enumerate() {
        if at < weight {
            return pick;
        }
        at -= weight;
    }
    unreachable!("the draw is below the sum of the weights")
}

/// One of `arms`, chosen by weight, as a [`Gen`]: the value-only draw takes the same numbers
/// as [`Weighted::new_tree`] (the pick, a seed for each arm before it, the arm's draw).
pub(super) fn weighted<T: std::fmt::Debug + 'static>(arms: Vec<(u32, Gen<T>)>) -> Gen<T> {
    let draws: Arc<[(u32, Gen<T>)]> = arms.iter().cloned().collect();
    let strategy = Weighted::new(
        arms.into_iter()
            .map(|(w, g)| (w, g.strategy().clone()))
            .collect(),
    );
    let total = strategy.total;
    Gen::pair(strategy, move |runner| {
        let at = runner.rng().random_range(0..total);
        let pick = arm_at(draws.iter().map(|(w, _)| *w), at);
        for _ in 0..pick {
            runner.rng().random::<u128>();
        }
        draws[pick].1.draw(runner)
    })
}

impl<T: std::fmt::Debug + 'static> Strategy for Weighted<T> {
    type Tree = WeightedTree<T>;
    type Value = T;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let at = runner.rng().random_range(0..self.total);
        let pick = arm_at(self.arms.iter().map(|(w, _)| *w), at);
        let mut options = Vec::with_capacity(pick + 1);
        for _ in 0..pick {
            options.push(Arm::Later {
                seed: runner.rng().random::<u128>(),
                draws: 0,
            });
        }
        options.push(Arm::Drawn {
            tree: self.arms[pick].1.new_tree(runner)?,
            seed: 0,
            draws: DRAWS,
        });
        Ok(WeightedTree {
            arms: Arc::clone(&self.arms),
            options,
            pick,
            prev_pick: None,
        })
    }
}

/// An arm of a drawn choice: not drawn yet (the seed of its next draw, and how many draws it
/// had), drawn (with what the next draw would need), or failed to draw.
enum Arm<T> {
    Later {
        seed: u128,
        draws: u8,
    },
    Drawn {
        tree: Box<dyn ValueTree<Value = T>>,
        seed: u128,
        draws: u8,
    },
    Failed,
}

/// The seed of the draw after the one from `seed`.
fn next_seed(seed: u128) -> u128 {
    seed.wrapping_mul(0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645)
        .wrapping_add(0x5851_F42D_4C95_7F2D_1405_7B7E_F767_814F)
}

impl<T> Arm<T> {
    fn tree(&mut self) -> &mut Box<dyn ValueTree<Value = T>> {
        match self {
            Arm::Drawn { tree, .. } => tree,
            _ => unreachable!("the current arm is always drawn"),
        }
    }
}

/// The value tree of [`Weighted`]; `pick` and `prev_pick` (when set) are always drawn arms,
/// and an arm given up on is `Failed`.
pub(super) struct WeightedTree<T> {
    arms: Arc<[(u32, BoxedStrategy<T>)]>,
    options: Vec<Arm<T>>,
    pick: usize,
    prev_pick: Option<usize>,
}

impl<T: std::fmt::Debug> WeightedTree<T> {
    /// Draws arm `i` from its seed if it is not drawn yet; whether it is drawn.
    fn draw(&mut self, i: usize) -> bool {
        if let Arm::Later { seed, draws } = self.options[i] {
            let rng = TestRng::from_seed(RngAlgorithm::XorShift, &seed.to_le_bytes());
            let mut runner = TestRunner::new_with_rng(Config::default(), rng);
            self.options[i] = match self.arms[i].1.new_tree(&mut runner) {
                Ok(tree) => Arm::Drawn {
                    tree,
                    seed: next_seed(seed),
                    draws: draws + 1,
                },
                Err(_) => Arm::Failed,
            };
        }
        matches!(self.options[i], Arm::Drawn { .. })
    }

    /// Makes arm `i`, whose draw was just rejected, drawable again if it has draws left.
    fn redraw(&mut self, i: usize) -> bool {
        match self.options[i] {
            Arm::Drawn { seed, draws, .. } if draws < DRAWS => {
                self.options[i] = Arm::Later { seed, draws };
                true
            }
            _ => false,
        }
    }
}

impl<T: std::fmt::Debug> ValueTree for WeightedTree<T> {
    type Value = T;

    fn current(&self) -> T {
        match &self.options[self.pick] {
            Arm::Drawn { tree, .. } => tree.current(),
            _ => unreachable!("the current arm is always drawn"),
        }
    }

    fn simplify(&mut self) -> bool {
        if self.options[self.pick].tree().simplify() {
            self.prev_pick = None;
            return true;
        }
        let from = self.pick;
        for next in (0..from).rev() {
            if self.draw(next) {
                self.prev_pick = Some(from);
                self.pick = next;
                return true;
            }
        }
        self.prev_pick = None;
        false
    }

    fn complicate(&mut self) -> bool {
        match self.prev_pick.take() {
            Some(pick) => {
                // The earlier arm's draw passed: back to the arm that fails; the earlier one is
                // drawn again on the next simplification while it has draws left, then passed
                // over for the arms before it.
                if !self.redraw(self.pick) {
                    self.options[self.pick] = Arm::Failed;
                }
                self.pick = pick;
                true
            }
            None => self.options[self.pick].tree().complicate(),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::strategy::Just;

    use super::*;

    fn choice() -> Weighted<u32> {
        Weighted::new(vec![
            (1, Just(0).boxed()),
            (0, Just(1).boxed()),
            (3, (10u32..20).boxed()),
            (6, (100u32..200).boxed()),
        ])
    }

    #[test]
    fn every_arm_is_drawn_as_often_as_its_weight_says_and_none_of_weight_zero() {
        let mut runner = TestRunner::deterministic();
        let mut seen = [0u32; 4];
        for _ in 0..10_000 {
            let v = choice().new_tree(&mut runner).expect("a draw").current();
            seen[match v {
                0 => 0,
                1 => 1,
                10..20 => 2,
                _ => 3,
            }] += 1;
        }
        assert_eq!(seen[1], 0, "{seen:?}");
        for (i, expected) in [(0, 1_000), (2, 3_000), (3, 6_000)] {
            assert!(
                seen[i].abs_diff(expected) < expected / 5,
                "arm {i}: {seen:?}"
            );
        }
    }

    #[test]
    fn an_arm_that_passes_in_between_does_not_close_the_simpler_ones() {
        // Values of 50 and above fail; the arm in between (5) always passes.
        let choice = Weighted::new(vec![
            (1, (50u32..60).boxed()),
            (1, Just(5).boxed()),
            (1, (100u32..200).boxed()),
        ]);
        let mut runner = TestRunner::deterministic();
        for _ in 0..20 {
            let tree = choice.new_tree(&mut runner).expect("a draw");
            if tree.current() < 100 {
                continue;
            }
            let out = crate::fuzz::shrink::minimise(tree, (), 1000, |&v| {
                if v >= 50 {
                    crate::fuzz::shrink::Verdict::Fails(())
                } else {
                    crate::fuzz::shrink::Verdict::Passes
                }
            });
            assert_eq!(
                out.value, 50,
                "the simplest arm that fails, at its simplest value"
            );
        }
    }

    #[test]
    fn a_value_shrinks_within_its_arm_then_to_the_simplest_earlier_arm() {
        let mut runner = TestRunner::deterministic();
        let mut tree = loop {
            let tree = choice().new_tree(&mut runner).expect("a draw");
            if tree.current() >= 100 {
                break tree;
            }
        };
        // Accept every simplification: it ends at the first arm's value.
        while tree.simplify() {}
        assert_eq!(tree.current(), 0);
        // Reject every one: the value stays in its arm, at the simplest value there.
        let mut tree = loop {
            let tree = choice().new_tree(&mut runner).expect("a draw");
            if tree.current() >= 100 {
                break tree;
            }
        };
        let mut steps = 0;
        while tree.simplify() {
            steps += 1;
            assert!(steps < 1_000, "shrinking ends");
            if tree.current() < 100 {
                assert!(tree.complicate(), "back to the failing arm");
                assert!(tree.current() >= 100);
            }
        }
        assert_eq!(
            tree.current(),
            100,
            "the simplest value of the arm that fails"
        );
    }
}
