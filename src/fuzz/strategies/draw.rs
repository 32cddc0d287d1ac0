//! Generators that can draw a value without building its value tree.
//!
//! A fuzz run sends nearly every body once and never shrinks it, yet a proptest strategy builds
//! a value tree for every draw (a boxed tree per character of generated text, per arm of every
//! choice) only to read its `current()` value and drop it: about a fifth of a fuzz run's
//! instructions. A [`Gen`] is a proptest strategy (used when a body must shrink) paired with a
//! draw of its value alone that takes exactly the same numbers from the runner's generator.
//! So the engine draws values, keeps the generator's state before each draw, and builds the
//! tree from that state only for a body that failed: it gets the same body, and shrinks it as
//! before.
//!
//! Each combinator here mirrors the proptest strategy it stands for, number for number (the
//! sampling functions are proptest's own where it exposes them); a differential test draws
//! every generator of both endpoints both ways and requires the same values and the same
//! generator state after each draw.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use proptest::char as pchar;
use proptest::collection::{SizeRange, vec as pvec};
use proptest::num::sample_uniform_incl;
use proptest::prelude::RngExt;
use proptest::sample::select as pselect;
use proptest::strategy::{BoxedStrategy, Just, NewTree, Strategy, ValueTree, float_to_weight};
use proptest::test_runner::{Reason, TestRunner};

/// Draws a value as the paired strategy's `new_tree(..).current()` would.
type Draw<T> = Arc<dyn Fn(&mut TestRunner) -> Result<T, Reason>>;

/// A strategy and a draw of its values alone that uses the runner's generator the same way.
pub struct Gen<T> {
    strategy: BoxedStrategy<T>,
    draw: Draw<T>,
}

impl<T> Clone for Gen<T> {
    fn clone(&self) -> Self {
        Gen {
            strategy: self.strategy.clone(),
            draw: Arc::clone(&self.draw),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Gen<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gen")
            .field("strategy", &self.strategy)
            .finish_non_exhaustive()
    }
}

impl<T: fmt::Debug + 'static> Strategy for Gen<T> {
    type Tree = Box<dyn ValueTree<Value = T>>;
    type Value = T;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        self.strategy.new_tree(runner)
    }
}

impl<T: fmt::Debug + 'static> Gen<T> {
    /// A generator from a strategy and its value-only draw; the two must use the runner's
    /// generator the same way.
    pub fn pair(
        strategy: impl Strategy<Value = T> + 'static,
        draw: impl Fn(&mut TestRunner) -> Result<T, Reason> + 'static,
    ) -> Gen<T> {
        Gen {
            strategy: strategy.boxed(),
            draw: Arc::new(draw),
        }
    }

    /// The value `self.new_tree(runner)?.current()` would give, without the tree.
    pub fn draw(&self, runner: &mut TestRunner) -> Result<T, Reason> {
        (self.draw)(runner)
    }

    /// The strategy alone.
    pub fn strategy(&self) -> &BoxedStrategy<T> {
        &self.strategy
    }

    /// `prop_map`.
    pub fn map<U: fmt::Debug + 'static>(self, f: impl Fn(T) -> U + 'static) -> Gen<U> {
        let f = Arc::new(f);
        let g = Arc::clone(&f);
        let draw = self.draw;
        Gen::pair(self.strategy.prop_map(move |v| f(v)), move |r| {
            Ok(g(draw(r)?))
        })
    }

    /// `prop_flat_map`: the value drawn, then one from the generator made of it (then, as
    /// proptest's flattening tree keeps a runner of its own, a generator split off the runner).
    pub fn flat_map<U: fmt::Debug + 'static>(self, f: impl Fn(T) -> Gen<U> + 'static) -> Gen<U> {
        let f = Arc::new(f);
        let g = Arc::clone(&f);
        let draw = self.draw;
        Gen::pair(self.strategy.prop_flat_map(move |v| f(v)), move |r| {
            let inner = g(draw(r)?).draw(r)?;
            drop(r.new_rng());
            Ok(inner)
        })
    }
}

/// `Just(value)`.
pub fn just<T: Clone + fmt::Debug + 'static>(value: T) -> Gen<T> {
    let v = value.clone();
    Gen::pair(Just(value), move |_| Ok(v.clone()))
}

/// An index below `n` as proptest's `0..n` draws it (a `u64` uniform).
fn index_below(runner: &mut TestRunner, n: usize) -> usize {
    assert!(n > 0, "an index below 0");
    let n = u64::try_from(n).expect("a length fits in u64");
    usize::try_from(sample_uniform_incl::<u64>(runner, 0, n - 1)).expect("below a usize")
}

/// `proptest::sample::select(values)`.
pub fn select<T: Clone + fmt::Debug + 'static>(values: impl Into<Cow<'static, [T]>>) -> Gen<T> {
    let values: Cow<'static, [T]> = values.into();
    let shared: Arc<[T]> = values.iter().cloned().collect();
    Gen::pair(pselect(values), move |r| {
        Ok(shared[index_below(r, shared.len())].clone())
    })
}

/// `0..n` (`n` at least 1).
pub fn below(n: usize) -> Gen<usize> {
    Gen::pair(0..n, move |r| Ok(index_below(r, n)))
}

/// `0..=n`.
pub fn up_to(n: usize) -> Gen<usize> {
    let top = u64::try_from(n).expect("a length fits in u64");
    Gen::pair(0..=n, move |r| {
        Ok(usize::try_from(sample_uniform_incl::<u64>(r, 0, top)).expect("below a usize"))
    })
}

/// `lo..=hi` of `i64`.
pub fn i64_in(lo: i64, hi: i64) -> Gen<i64> {
    Gen::pair(lo..=hi, move |r| Ok(sample_uniform_incl::<i64>(r, lo, hi)))
}

/// `proptest::bool::ANY`.
pub fn any_bool() -> Gen<bool> {
    Gen::pair(proptest::bool::ANY, |r| Ok(r.rng().random::<bool>()))
}

/// `proptest::char::range(start, end)`.
pub fn char_range(start: char, end: char) -> Gen<char> {
    let ranges = [start..=end];
    Gen::pair(pchar::range(start, end), move |r| {
        Ok(pchar::select_char(
            r.rng(),
            pchar::DEFAULT_SPECIAL_CHARS,
            pchar::DEFAULT_PREFERRED_RANGES,
            &ranges,
        ))
    })
}

/// `proptest::char::any()`.
pub fn any_char() -> Gen<char> {
    Gen::pair(pchar::any(), |r| {
        Ok(pchar::select_char(
            r.rng(),
            pchar::DEFAULT_SPECIAL_CHARS,
            pchar::DEFAULT_PREFERRED_RANGES,
            &['\0'..=char::MAX],
        ))
    })
}

/// `proptest::collection::vec(element, size)`.
pub fn vec<T: fmt::Debug + 'static>(element: Gen<T>, size: impl Into<SizeRange>) -> Gen<Vec<T>> {
    let size: SizeRange = size.into();
    let (lo, hi) = size.start_end_incl();
    let draw = Arc::clone(&element.draw);
    Gen::pair(pvec(element.strategy, size), move |r| {
        let n = sample_uniform_incl(r, lo, hi);
        (0..n).map(|_| draw(r)).collect()
    })
}

/// The pair `(a, b)` as a tuple strategy draws it: `a` first.
pub fn zip<A: fmt::Debug + 'static, B: fmt::Debug + 'static>(a: Gen<A>, b: Gen<B>) -> Gen<(A, B)> {
    let (da, db) = (Arc::clone(&a.draw), Arc::clone(&b.draw));
    Gen::pair((a.strategy, b.strategy), move |r| Ok((da(r)?, db(r)?)))
}

/// `leaf.prop_recursive(depth, desired_size, expected_branch_size, recurse)`. proptest makes
/// the layers of choices again for every draw; they depend on nothing drawn, so they are made
/// once here, the same layers in the same order.
pub fn recursive<T: fmt::Debug + 'static>(
    leaf: Gen<T>,
    depth: u32,
    desired_size: u32,
    expected_branch_size: u32,
    recurse: impl Fn(Gen<T>) -> Gen<T>,
) -> Gen<T> {
    let mut branch_probabilities = Vec::new();
    let mut k2 = u64::from(expected_branch_size) * 2;
    for _ in 0..depth {
        #[allow(clippy::cast_precision_loss)] // as proptest computes it
        branch_probabilities.push(f64::from(desired_size) / k2 as f64);
        k2 = k2.saturating_mul(u64::from(expected_branch_size) * 2);
    }
    let mut layer = leaf;
    while let Some(p) = branch_probabilities.pop() {
        let deeper = recurse(layer.clone());
        let (weight_branch, weight_leaf) = float_to_weight(p.min(0.9));
        layer = one_of_two((weight_leaf, layer), (weight_branch, deeper));
    }
    layer
}

/// `prop_oneof![wa => a, wb => b]`: the pick, then for an arm before it the generator split
/// off the runner that its lazy tree keeps, then the arm picked.
fn one_of_two<T: fmt::Debug + 'static>((wa, a): (u32, Gen<T>), (wb, b): (u32, Gen<T>)) -> Gen<T> {
    let (da, db) = (Arc::clone(&a.draw), Arc::clone(&b.draw));
    let strategy = proptest::prop_oneof![wa => a.strategy, wb => b.strategy];
    Gen::pair(strategy, move |r| {
        let sum = u64::from(wa) + u64::from(wb);
        let at = sample_uniform_incl::<u64>(r, 0, sum - 1);
        if at < u64::from(wa) {
            da(r)
        } else {
            drop(r.new_rng());
            db(r)
        }
    })
}

/// A value of each generator, in order (proptest's strategy for a `Vec` of strategies).
pub fn each<T: fmt::Debug + 'static>(gens: Vec<Gen<T>>) -> Gen<Vec<T>> {
    let draws: Vec<Draw<T>> = gens.iter().map(|g| Arc::clone(&g.draw)).collect();
    let strategies: Vec<BoxedStrategy<T>> = gens.into_iter().map(|g| g.strategy).collect();
    Gen::pair(strategies, move |r| draws.iter().map(|d| d(r)).collect())
}
