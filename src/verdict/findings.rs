//! Findings kept up to a cap per check, the rest only counted: a broken response of a million
//! records costs a counter per check, not a million findings. Checks that look at every record
//! write into a [`Findings`] so nothing past the cap is ever built.

use serde::Serialize;

use crate::verdict::check::Check;
use crate::verdict::event::Finding;

/// Findings of one check that were counted but not kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Omitted {
    /// The check.
    #[serde(serialize_with = "serialize_check_id")]
    pub check: &'static Check,
    /// How many of its findings were left out.
    pub count: usize,
}

fn serialize_check_id<S: serde::Serializer>(c: &&'static Check, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(c.id)
}

/// Kept and left-out findings of one check.
#[derive(Debug, Clone)]
struct Tally {
    check: &'static Check,
    kept: usize,
    omitted: usize,
}

/// A bounded collection of findings: the first `cap` of each check are kept, the others are
/// counted per check.
#[derive(Debug, Clone)]
pub struct Findings {
    cap: usize,
    kept: Vec<Finding>,
    tallies: Vec<Tally>,
}

impl Findings {
    /// An empty collection keeping at most `cap_per_check` findings of each check (at least
    /// one, so every check that found something is shown).
    pub fn new(cap_per_check: usize) -> Self {
        Findings {
            cap: cap_per_check.max(1),
            kept: Vec::new(),
            tallies: Vec::new(),
        }
    }

    /// The most findings kept per check.
    pub fn cap(&self) -> usize {
        self.cap
    }

    fn tally(&mut self, check: &'static Check) -> &mut Tally {
        let i = match self
            .tallies
            .iter()
            .position(|t| std::ptr::eq(t.check, check) || t.check.id == check.id)
        {
            Some(i) => i,
            None => {
                self.tallies.push(Tally {
                    check,
                    kept: 0,
                    omitted: 0,
                });
                self.tallies.len() - 1
            }
        };
        &mut self.tallies[i]
    }

    /// Whether a finding of `check` would be kept now.
    pub fn wants(&self, check: &'static Check) -> bool {
        self.tallies
            .iter()
            .find(|t| std::ptr::eq(t.check, check) || t.check.id == check.id)
            .is_none_or(|t| t.kept < self.cap)
    }

    /// Adds a finding of `check`, built by `make` only when it is kept.
    pub fn push_with(&mut self, check: &'static Check, make: impl FnOnce() -> Finding) {
        let cap = self.cap;
        let tally = self.tally(check);
        if tally.kept < cap {
            tally.kept += 1;
            let finding = make();
            self.kept.push(finding);
        } else {
            tally.omitted += 1;
        }
    }

    /// Adds a finding (counted only, when its check is full).
    pub fn push(&mut self, finding: Finding) {
        let check = finding.check;
        self.push_with(check, || finding);
    }

    /// Counts `count` findings of `check` without keeping any.
    pub fn omit(&mut self, check: &'static Check, count: usize) {
        if count > 0 {
            self.tally(check).omitted += count;
        }
    }

    /// Moves every finding of `other` in (kept ones through the cap), with its counts.
    pub fn append(&mut self, other: Findings) {
        let (kept, omitted) = other.into_parts();
        for f in kept {
            self.push(f);
        }
        for o in omitted {
            self.omit(o.check, o.count);
        }
    }

    /// Adds every finding of a list.
    pub fn extend(&mut self, findings: impl IntoIterator<Item = Finding>) {
        for f in findings {
            self.push(f);
        }
    }

    /// The kept findings, to reword (never to add or remove one).
    pub fn kept_mut(&mut self) -> &mut [Finding] {
        &mut self.kept
    }

    /// The kept findings, in the order they came.
    pub fn kept(&self) -> &[Finding] {
        &self.kept
    }

    /// Whether nothing was found (kept or counted).
    pub fn is_empty(&self) -> bool {
        self.tallies.is_empty()
    }

    /// Every finding seen, kept or not.
    pub fn total(&self) -> usize {
        self.tallies.iter().map(|t| t.kept + t.omitted).sum()
    }

    /// The counts of left-out findings, per check in first-seen order.
    pub fn omitted(&self) -> Vec<Omitted> {
        self.tallies
            .iter()
            .filter(|t| t.omitted > 0)
            .map(|t| Omitted {
                check: t.check,
                count: t.omitted,
            })
            .collect()
    }

    /// The kept findings and the counts of the others.
    pub fn into_parts(self) -> (Vec<Finding>, Vec<Omitted>) {
        let omitted = self.omitted();
        (self.kept, omitted)
    }

    /// The kept findings, plus one finding per check that lost some, saying how many (for
    /// callers that only take a list).
    pub fn into_vec(self) -> Vec<Finding> {
        let cap = self.cap;
        let (mut kept, omitted) = self.into_parts();
        for o in omitted {
            kept.push(Finding::new(
                o.check,
                "",
                format!("at most {cap} findings of this check listed"),
                format!("{} more not shown", o.count),
            ));
        }
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::catalog;

    fn state(i: usize) -> Finding {
        Finding::new(&catalog::MALL_STATE, format!("/data/{i}/state"), "x", "y")
    }

    #[test]
    fn keeps_the_first_of_each_check_and_counts_the_rest() {
        let mut f = Findings::new(2);
        let mut built = 0;
        for i in 0..5 {
            f.push_with(&catalog::MALL_STATE, || {
                built += 1;
                state(i)
            });
        }
        f.push(Finding::new(&catalog::MALL_FIELDS, "/data/0", "x", "y"));
        assert_eq!(built, 2, "nothing past the cap is built");
        assert_eq!(f.kept().len(), 3);
        assert_eq!(f.total(), 6);
        assert_eq!(
            f.omitted(),
            vec![Omitted {
                check: &catalog::MALL_STATE,
                count: 3
            }]
        );
    }

    #[test]
    fn appending_keeps_the_cap_and_adds_the_counts() {
        let mut a = Findings::new(2);
        a.push(state(0));
        let mut b = Findings::new(10);
        for i in 1..5 {
            b.push(state(i));
        }
        b.omit(&catalog::MALL_STATE, 100);
        a.append(b);
        assert_eq!(a.kept().len(), 2);
        assert_eq!(a.omitted()[0].count, 103);
        let listed = a.into_vec();
        assert_eq!(listed.len(), 3);
        assert_eq!(listed[2].actual, "103 more not shown");
    }
}
