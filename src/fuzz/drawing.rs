//! Drawing an endpoint's cases ahead, on a thread of their own, while the fuzzing thread sends
//! and judges the ones drawn before: generation never depends on an answer, so the cases and
//! their order are those of drawing one at a time. Cases go over in batches (one hand-over
//! between the threads per batch, not per case), each bounded in count and in bytes.

use std::collections::HashSet;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};

use proptest::test_runner::{Config, TestRng, TestRunner};

use crate::fuzz::body::{FuzzBody, Limits};
use crate::fuzz::known::Known;
use crate::fuzz::strategies::{self, Gen};
use crate::redact::Redactor;
use crate::verdict::endpoint::Endpoint;

/// Cases in a batch at most: the first batches are smaller, so that the first request goes
/// out as soon as its case is drawn.
const BATCH_CASES: usize = 64;

/// Bytes of serialised bodies in a batch at most (a larger body goes alone): what is drawn
/// ahead stays small beside what is in flight, whatever `--oversize` draws.
const BATCH_BYTES: usize = 1024 * 1024;

/// Batches drawn and not yet taken at most.
const BATCHES_AHEAD: usize = 2;

/// Which generator drew a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The single-field edge case of this index in the sweep.
    Sweep(usize),
    /// The random body generator.
    Random,
}

/// An endpoint's generators: the random one and the sweep of edge cases.
pub struct Generators {
    random: Gen<FuzzBody>,
    sweep: Vec<Gen<FuzzBody>>,
}

impl Generators {
    pub fn new(endpoint: Endpoint, known: &Known, limits: Limits) -> Generators {
        Generators {
            random: strategies::body(endpoint, known, limits),
            sweep: strategies::sweep(endpoint, known),
        }
    }

    /// The generator that drew a case.
    pub fn get(&self, source: Source) -> &Gen<FuzzBody> {
        match source {
            Source::Sweep(i) => &self.sweep[i],
            Source::Random => &self.random,
        }
    }
}

/// A case drawn, serialised and not yet sent.
pub struct Drawn {
    pub source: Source,
    /// The generator's state before the draw: a body that fails is drawn again from it, as a
    /// tree to shrink (bodies are drawn without their trees, see `strategies::draw`).
    pub rng_before: TestRng,
    pub body: FuzzBody,
    /// Its serialisation (its fingerprint was taken from these bytes).
    pub bytes: Vec<u8>,
    /// Bodies drawn just before it and skipped as already sent.
    pub skipped: u32,
}

/// What an endpoint's drawing is asked for.
pub struct Plan<'a> {
    pub endpoint: Endpoint,
    pub known: &'a Known,
    pub limits: Limits,
    pub config: Config,
    /// Fingerprints of the bodies already sent (saved failures replayed): not drawn again.
    pub sent: HashSet<[u8; 16]>,
    /// The run's redactor: between batches, the drawing thread registers the signatures the
    /// fuzzing thread has sent meanwhile (its forms are a third of a request's work), which
    /// the fuzzing thread would otherwise register at its next search.
    pub redactor: &'a Redactor,
}

/// Draws `plan.config.cases` distinct bodies (at most `max_global_rejects` draws), every other
/// one the next edge case of the sweep until it is done, and hands them over in batches until
/// the receiver is dropped.
pub fn draw(plan: Plan<'_>, out: &SyncSender<Batch>) {
    let Plan {
        endpoint,
        known,
        limits,
        config,
        mut sent,
        redactor,
    } = plan;
    let generators = Generators::new(endpoint, known, limits);
    let mut runner = TestRunner::new(config.clone());
    let most_draws = config.max_global_rejects.max(config.cases);
    let (mut run, mut draws, mut swept, mut skipped) = (0u32, 0u32, 0usize, 0u32);
    let mut batch: Vec<Drawn> = Vec::new();
    let mut batch_bytes = 0;
    let mut batch_cases = 1;
    while run < config.cases && draws < most_draws {
        draws += 1;
        let source = if swept < generators.sweep.len() && run.is_multiple_of(2) {
            swept += 1;
            Source::Sweep(swept - 1)
        } else {
            Source::Random
        };
        let rng_before = runner.rng().clone();
        let Ok(body) = generators.get(source).draw(&mut runner) else {
            continue;
        };
        let bytes = body.to_bytes();
        if !sent.insert(FuzzBody::fingerprint_of(&bytes)) {
            skipped += 1;
            continue;
        }
        run += 1;
        batch_bytes += bytes.len();
        batch.push(Drawn {
            source,
            rng_before,
            body,
            bytes,
            skipped: std::mem::take(&mut skipped),
        });
        if batch.len() >= batch_cases || batch_bytes >= BATCH_BYTES {
            let full = Batch {
                cases: std::mem::take(&mut batch),
                skipped_after: 0,
            };
            if out.send(full).is_err() {
                return;
            }
            redactor.register_noted();
            batch_bytes = 0;
            batch_cases = (batch_cases * 2).min(BATCH_CASES);
        }
    }
    // Bodies skipped after the last case drawn go over as a case-less batch's last `skipped`:
    // counted once every case is taken.
    if !batch.is_empty() || skipped > 0 {
        let _ = out.send(Batch {
            cases: batch,
            skipped_after: skipped,
        });
    }
}

/// Cases handed over at once.
pub struct Batch {
    cases: Vec<Drawn>,
    /// Bodies skipped as already sent after the batch's last case (in the last batch only).
    skipped_after: u32,
}

/// The fuzzing thread's end of the hand-over.
pub struct Cases {
    from: Receiver<Batch>,
    ready: std::collections::VecDeque<Drawn>,
    /// Bodies skipped after the last case drawn.
    skipped_after: u32,
    /// Whether the drawing has ended and every case drawn has been taken.
    done: bool,
}

/// Why [`Cases::next`] gave no case.
pub enum NoCase {
    /// None drawn yet (only when asked not to wait).
    NotYet,
    /// Every case drawn has been taken.
    Done,
}

/// A channel for [`draw`] and its receiving end.
pub fn channel() -> (SyncSender<Batch>, Cases) {
    let (to, from) = sync_channel(BATCHES_AHEAD);
    (
        to,
        Cases {
            from,
            ready: std::collections::VecDeque::new(),
            skipped_after: 0,
            done: false,
        },
    )
}

impl Cases {
    /// The next case drawn; waits for the drawing thread when `wait`.
    pub fn next(&mut self, wait: bool) -> Result<Drawn, NoCase> {
        if self.ready.is_empty() && !self.done {
            let batch = if wait {
                self.from.recv().ok()
            } else {
                match self.from.try_recv() {
                    Ok(batch) => Some(batch),
                    Err(TryRecvError::Empty) => return Err(NoCase::NotYet),
                    Err(TryRecvError::Disconnected) => None,
                }
            };
            match batch {
                Some(batch) => {
                    self.ready.extend(batch.cases);
                    self.skipped_after += batch.skipped_after;
                }
                None => self.done = true,
            }
        }
        match self.ready.pop_front() {
            Some(case) => Ok(case),
            // A batch of no case (the last one's skipped bodies only): look again.
            None if !self.done => self.next(wait),
            None => Err(NoCase::Done),
        }
    }

    /// Bodies the drawing skipped as already sent after its last case; known once
    /// [`Cases::next`] gave [`NoCase::Done`].
    pub fn skipped_after(&self) -> u32 {
        self.skipped_after
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::strategies::tests::known;
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{RngAlgorithm, RngSeed};

    fn plan(known: &Known, endpoint: Endpoint, cases: u32, sent: HashSet<[u8; 16]>) -> Plan<'_> {
        Plan {
            endpoint,
            known,
            limits: Limits::COMMON,
            config: Config {
                cases,
                failure_persistence: None,
                rng_seed: RngSeed::Fixed(7),
                rng_algorithm: RngAlgorithm::ChaCha,
                max_global_rejects: cases * 10,
                ..Config::default()
            },
            sent,
            redactor: Box::leak(Box::new(Redactor::new())),
        }
    }

    /// Every case of a drawing on its own thread, in the order handed over.
    fn drawn(plan: Plan<'_>) -> (Vec<Drawn>, u32) {
        std::thread::scope(|scope| {
            let (to, mut cases) = channel();
            scope.spawn(move || draw(plan, &to));
            let mut all = Vec::new();
            loop {
                match cases.next(true) {
                    Ok(case) => all.push(case),
                    Err(NoCase::NotYet) => unreachable!("a waiting take is never early"),
                    Err(NoCase::Done) => return (all, cases.skipped_after()),
                }
            }
        })
    }

    #[test]
    fn the_cases_are_distinct_each_drawn_again_from_its_state_and_the_sweep_every_other() {
        let known = known();
        for endpoint in [Endpoint::MallList, Endpoint::MallProducts] {
            let generators = Generators::new(endpoint, &known, Limits::COMMON);
            let plan = plan(&known, endpoint, 300, HashSet::new());
            let config = plan.config.clone();
            let (cases, _) = drawn(plan);
            assert_eq!(cases.len(), 300, "{endpoint:?}");
            let mut seen = HashSet::new();
            for (i, case) in cases.iter().enumerate() {
                assert_eq!(case.bytes, case.body.to_bytes());
                assert!(
                    seen.insert(FuzzBody::fingerprint_of(&case.bytes)),
                    "case {i} twice"
                );
                // The state before the draw gives the same body as a tree: what shrinking
                // draws again from.
                let mut again = TestRunner::new_with_rng(config.clone(), case.rng_before.clone());
                let tree = generators.get(case.source).new_tree(&mut again).unwrap();
                assert_eq!(tree.current(), case.body, "case {i}");
            }
            // Every other case is the sweep's next edge case (one drawn again is skipped)
            // until it is done.
            let mut last = None;
            for (i, case) in cases.iter().enumerate() {
                match case.source {
                    Source::Sweep(k) => {
                        assert_eq!(i % 2, 0, "{endpoint:?} case {i}");
                        assert!(last.is_none_or(|l| k > l), "{endpoint:?} case {i}");
                        last = Some(k);
                    }
                    Source::Random => assert!(
                        i % 2 == 1 || last.is_some_and(|l| l + 1 >= generators.sweep.len()),
                        "{endpoint:?} case {i}: random before the sweep is done"
                    ),
                }
            }
            assert!(last.is_some(), "{endpoint:?}: no edge case");
        }
    }

    #[test]
    fn a_body_already_sent_is_skipped_and_counted() {
        let known = known();
        let (first, _) = drawn(plan(&known, Endpoint::MallList, 40, HashSet::new()));
        // The first ten bodies were sent already (saved failures replayed).
        let sent: HashSet<[u8; 16]> = first[..10]
            .iter()
            .map(|c| FuzzBody::fingerprint_of(&c.bytes))
            .collect();
        let (again, after) = drawn(plan(&known, Endpoint::MallList, 40, sent.clone()));
        assert_eq!(again.len(), 40);
        assert!(
            again
                .iter()
                .all(|c| !sent.contains(&FuzzBody::fingerprint_of(&c.bytes)))
        );
        let skipped: u32 = again.iter().map(|c| c.skipped).sum::<u32>() + after;
        assert!(skipped >= 10, "{skipped} skipped");
    }

    #[test]
    fn a_dropped_receiver_ends_the_drawing() {
        let known = known();
        let plan = plan(&known, Endpoint::MallList, 100_000, HashSet::new());
        std::thread::scope(|scope| {
            let (to, mut cases) = channel();
            let drawing = scope.spawn(move || draw(plan, &to));
            assert!(cases.next(true).is_ok());
            drop(cases);
            // It ends at its next hand-over, long before 100,000 cases are drawn.
            let waited = std::time::Instant::now();
            while !drawing.is_finished() {
                assert!(
                    waited.elapsed() < std::time::Duration::from_secs(20),
                    "the drawing went on without a receiver"
                );
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        });
    }
}
