//! The fuzzing loop: replay saved failures, then per endpoint alternate the single-field edge
//! sweep with random bodies drawn from a seeded proptest [`TestRunner`], send each one (signed, paced by `--rate`), check every property, and shrink
//! the first failure of each property to a minimal body. Runs on a blocking thread and drives
//! HTTP through a tokio [`Handle`]; reports through events and never prints.
//!
//! Generated cases are sent with up to `jobs` requests in flight: generation never depends on
//! a response, so the cases are drawn in the same order as one at a time, sent and checked on
//! the runtime, and their outcomes taken back in generation order. Shrinking runs one request
//! at a time, at the point of the first failure, so a seed finds and reports the same failures
//! whatever `jobs` is.
//!
//! Two things end a run early, and both are errors of the run, never property failures: a
//! request the service turns away for longer than `--max-retry-wait` (`transport.rate-limited`:
//! nothing later could be judged), and an [`Interrupt`] raised from outside (a signal). The run
//! then stops generating and shrinking, and reports what it found so far with the [`Halt`].

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::time::{Duration, Instant};

use proptest::strategy::{Just, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestRng, TestRunner};
use tokio::runtime::Handle;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinHandle;

use crate::checks::robustness::RobustnessGate;
use crate::fuzz::body::{FuzzBody, Limits};
use crate::fuzz::dedup;
use crate::fuzz::known::Known;
use crate::fuzz::properties::{self, Violation};
use crate::fuzz::regressions::{Regression, Saver};
use crate::fuzz::shrink::{ShrinkEnd, Verdict, minimise};
use crate::fuzz::strategies::{self, Gen};
use crate::redact::Redactor;
use crate::service::client::Client;
use crate::spec::catalog;
use crate::spec::schemas::SchemaSet;
use crate::verdict::check::Check;
use crate::verdict::endpoint::{AuthMode, Endpoint};
use crate::verdict::event::Finding;
use crate::verdict::exchange::Exchange;
use crate::verdict::sealed::{self, Sealable, Sealed};

/// How a fuzz run behaves, free of CLI types.
#[derive(Debug, Clone)]
pub struct FuzzOptions {
    /// Operations to fuzz, in order.
    pub endpoints: Vec<Endpoint>,
    /// Generated bodies per endpoint.
    pub cases: u32,
    /// Seed of every random choice.
    pub seed: u64,
    /// Time after which no new body is generated (shrinking also stops).
    pub max_time: Duration,
    /// Requests per second; 0 is unlimited.
    pub rate: f64,
    /// Candidates tried while shrinking one failure.
    pub max_shrink_tries: u32,
    /// Where minimal failing bodies are saved as case files; `None` saves nothing.
    pub save: Option<Saver>,
    /// Sizes of generated values (common limits unless `--oversize`).
    pub limits: Limits,
    /// Generated cases in flight at once (at least 1); shrinking is one at a time.
    pub jobs: usize,
    /// Whether a 5xx, a hang or a dropped connection fails the run or warns.
    pub robustness: RobustnessGate,
}

/// Where a reported failure comes from.
#[derive(Debug, Clone)]
pub enum Origin {
    /// A generated body, shrunk.
    Generated {
        /// 1-based number of the generated case that failed first.
        case: u32,
        /// Simplifications accepted while shrinking.
        steps: u32,
        /// Candidates sent while shrinking.
        tries: u32,
        /// Why shrinking stopped.
        end: ShrinkEnd,
    },
    /// A body replayed from the regressions directory.
    Replayed {
        /// The regression file.
        path: PathBuf,
    },
}

/// One property of one endpoint that failed, with its minimal reproducer.
#[derive(Debug, Clone)]
pub struct FuzzFailure {
    /// The operation.
    pub endpoint: Endpoint,
    /// The property that failed.
    pub property: &'static Check,
    /// The minimal failing body.
    pub body: FuzzBody,
    /// What the response to the minimal body broke.
    pub findings: Vec<Finding>,
    /// The exchange of the minimal body (redacted).
    pub exchange: Exchange,
    /// Generated and shrunk, or replayed.
    pub origin: Origin,
    /// Where the body was saved (or why it could not be).
    pub saved: Option<Result<PathBuf, String>>,
}

impl Sealable for FuzzFailure {
    fn seal_texts(&mut self, redactor: &Redactor) {
        for finding in &mut self.findings {
            finding.seal(redactor);
        }
        self.exchange.seal(redactor);
    }
}

impl FuzzFailure {
    /// Whether this failure fails the run: not when every finding only warns (a robustness
    /// finding under `--robustness warn`).
    pub fn fails(&self) -> bool {
        self.findings.is_empty()
            || self
                .findings
                .iter()
                .any(|f| f.outcome(false) != crate::verdict::event::Outcome::Warn)
    }
}

/// What happened on one endpoint.
#[derive(Debug, Clone)]
pub struct EndpointStats {
    /// The operation.
    pub endpoint: Endpoint,
    /// Generated cases asked for.
    pub planned: u32,
    /// Generated cases sent and judged (not those a halt left unjudged).
    pub run: u32,
    /// Generated bodies not sent because the same bytes were already sent.
    pub duplicates: u32,
    /// Generation stopped at `--max-time`.
    pub stopped_by_time: bool,
    /// Responses that broke each property (by check id), shrinking excluded.
    pub violations: BTreeMap<&'static str, u32>,
    /// Requests beyond the common size limits that the HTTP layer refused, by status (not
    /// contract findings), shrinking excluded.
    pub rejected: BTreeMap<u16, u32>,
    /// Generated cases the service answered as a success (§4: `success` true on the mall
    /// list, a JSON array from the products operation): the properties on contract and
    /// ownership were checked on these.
    pub served: u32,
    /// Whether the endpoint had a valid body to send (the products operation has none when
    /// discovery found no mall and none was given): only then must a case be served.
    pub valid_body: bool,
    /// The products operation had no mall to ask for though the merchant was not seen empty
    /// (discovery failed): nothing of it could be tested.
    pub no_mall_known: bool,
    /// The other answers to generated cases, by status (0: no answer): shown when none was
    /// served, to say what stood in front of the service.
    pub refused: BTreeMap<u16, u32>,
    /// Why generation on this endpoint ended early, if the run halted here.
    pub halted: Option<Halt>,
    /// Wall time spent on this endpoint.
    pub duration: Duration,
}

impl EndpointStats {
    /// Whether the endpoint got cases planned and the run could not test it (exit 3): none
    /// was sent before `--max-time` ran out, or none of those sent was served. The valid
    /// body is among the first cases of each endpoint, so a service that answers anything
    /// serves it; a proxy or a firewall that turns every generated request away (an HTML
    /// 403 or 413) leaves the properties holding on refusals alone. A halted endpoint is the
    /// halt's (an error already), and one whose answers broke a property was tested enough to
    /// fail.
    pub fn untested(&self) -> bool {
        self.planned > 0
            && self.halted.is_none()
            && (self.run == 0
                || (self.served == 0
                    && self.violations.is_empty()
                    && (self.valid_body || self.no_mall_known)))
    }

    /// Why the endpoint is untested, in a few words (see [`EndpointStats::untested`]).
    pub fn untested_reason(&self) -> String {
        if self.run == 0 {
            return "no case was sent before --max-time ran out".to_string();
        }
        if !self.valid_body {
            return "no mall of the merchant was found (discovery failed), so no products call \
                    could be a valid one, and none was served"
                .to_string();
        }
        let statuses: Vec<String> = self
            .refused
            .iter()
            .map(|(status, n)| match status {
                0 => format!("no answer ×{n}"),
                s => format!("{s} ×{n}"),
            })
            .collect();
        format!(
            "none of its {} case{} was served, the valid body included: every answer was a \
             refusal or an error ({}), so its properties hold on refusals alone",
            self.run,
            if self.run == 1 { "" } else { "s" },
            statuses.join(", ")
        )
    }
}

/// Why a fuzz run ended before its budget: an error of the run, never a property failure.
#[derive(Debug, Clone)]
pub enum Halt {
    /// The service turned a request away for longer than `--max-retry-wait` (429, or 503 with
    /// `Retry-After`): every later request would be turned away too, or not sent at all.
    RateLimited {
        /// The operation of the request turned away.
        endpoint: Endpoint,
        /// The `transport.rate-limited` finding.
        finding: Box<Finding>,
        /// What was sent and received (redacted).
        exchange: Box<Exchange>,
    },
    /// The run was interrupted from outside.
    Interrupted {
        /// What interrupted it (`SIGTERM`, ...).
        cause: &'static str,
    },
}

/// A request to stop a fuzz run early, raised from outside while it runs (by a signal): the run
/// stops generating and shrinking, drops the requests in flight and reports what it found.
#[derive(Debug, Clone)]
pub struct Interrupt(Arc<watch::Sender<Option<&'static str>>>);

impl Default for Interrupt {
    fn default() -> Self {
        Interrupt(Arc::new(watch::Sender::new(None)))
    }
}

impl Interrupt {
    /// Asks the run to stop; `cause` names why (`SIGTERM`). The first cause is kept.
    pub fn raise(&self, cause: &'static str) {
        self.0.send_if_modified(|current| {
            let first = current.is_none();
            if first {
                *current = Some(cause);
            }
            first
        });
    }

    /// The cause, once raised.
    pub fn raised(&self) -> Option<&'static str> {
        *self.0.borrow()
    }

    /// Resolves once raised.
    async fn wait(&self) {
        let mut raised = self.0.subscribe();
        if raised.wait_for(Option::is_some).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// What the fuzzer reports as it goes.
#[derive(Debug, Clone)]
pub enum FuzzEvent {
    /// A saved body was replayed.
    Replayed {
        /// The regression file.
        path: PathBuf,
        /// The operation.
        endpoint: Endpoint,
        /// Properties it still breaks.
        failing: Vec<&'static Check>,
    },
    /// Generation on an endpoint begins.
    EndpointStarted {
        /// The operation.
        endpoint: Endpoint,
        /// Cases planned.
        cases: u32,
    },
    /// A property failed; the body is minimal.
    Failure(Box<Sealed<FuzzFailure>>),
    /// Generation on an endpoint ended.
    EndpointFinished(EndpointStats),
}

/// The outcome of a whole run.
#[derive(Debug, Clone)]
pub struct FuzzReport {
    /// The seed used.
    pub seed: u64,
    /// Endpoints fuzzed, in order.
    pub endpoints: Vec<EndpointStats>,
    /// Every property that failed, first failure each.
    pub failures: Vec<Sealed<FuzzFailure>>,
    /// Saved bodies replayed.
    pub replayed: usize,
    /// Requests that went out, replay and shrinking included (not those a rate limit kept
    /// back, nor those dropped in flight by an interrupt).
    pub requests: u64,
    /// Wall time.
    pub duration: Duration,
    /// Why the run ended early, if it did.
    pub halt: Option<Halt>,
}

impl FuzzReport {
    /// Whether any property failed (a robustness finding under `--robustness warn` only
    /// warns).
    pub fn failed(&self) -> bool {
        self.failures.iter().any(|f| f.fails())
    }

    /// Whether the run passes: no property failed, it was not halted (exit 0), and every
    /// endpoint got a case.
    pub fn passed(&self) -> bool {
        !self.failed() && self.halt.is_none() && self.untested().next().is_none()
    }

    /// The endpoints that got cases planned and sent none (`--max-time` spent before them) or
    /// had none served: their properties hold on nothing, so the run could not test them
    /// (exit 3).
    pub fn untested(&self) -> impl Iterator<Item = &EndpointStats> {
        self.endpoints.iter().filter(|s| s.untested())
    }

    /// The endpoints `--max-time` stopped before their budget: their properties were checked
    /// on fewer cases than asked for.
    pub fn cut_short(&self) -> impl Iterator<Item = &EndpointStats> {
        self.endpoints
            .iter()
            .filter(|s| s.stopped_by_time && s.run < s.planned)
    }

    /// The failure of one property on one endpoint.
    pub fn failure(&self, endpoint: Endpoint, property: &Check) -> Option<&FuzzFailure> {
        self.failures
            .iter()
            .find(|f| f.endpoint == endpoint && f.property.id == property.id)
            .map(|f| &**f)
    }
}

/// A fuzzer ready to run.
#[derive(Debug)]
pub struct Fuzzer {
    /// The signing client.
    pub client: Client,
    /// Compiled schemas.
    pub schemas: Arc<SchemaSet>,
    /// Identities and malls.
    pub known: Known,
    /// Options.
    pub options: FuzzOptions,
    /// Saved failures, replayed first.
    pub regressions: Vec<Regression>,
    /// Raised from outside to stop the run early.
    pub interrupt: Interrupt,
}

/// What one body got.
#[derive(Debug, Clone)]
struct Probe {
    exchange: Exchange,
    violations: Vec<Violation>,
    /// The status with which the HTTP layer refused a request beyond the common limits.
    rejected: Option<u16>,
    /// The `transport.rate-limited` finding of a request the service turned away: it is
    /// checked against no property and halts the run.
    limited: Option<Box<Finding>>,
    /// Whether the request went out (a rate limit in force keeps it back).
    sent: bool,
    /// The service answered it as a success (see [`EndpointStats::served`]).
    served: bool,
}

impl Probe {
    fn breaks(&self, property: &Check) -> Option<&Violation> {
        self.violations
            .iter()
            .find(|v| v.property.id == property.id)
    }
}

/// A seed of its own for each endpoint (splitmix64), so one endpoint's cases do not depend on
/// which others are fuzzed.
pub fn endpoint_seed(seed: u64, endpoint: Endpoint) -> u64 {
    let salt: u64 = match endpoint {
        Endpoint::MallList => 1,
        Endpoint::MallProducts => 2,
    };
    let mut z = seed.wrapping_add(salt.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The proptest configuration of one endpoint: fixed seed, no failure persistence (minimal
/// bodies are saved as JSON instead), our own case and shrink limits.
pub fn config(options: &FuzzOptions, endpoint: Endpoint) -> Config {
    Config {
        cases: options.cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(endpoint_seed(options.seed, endpoint)),
        rng_algorithm: RngAlgorithm::ChaCha,
        max_shrink_iters: options.max_shrink_tries,
        max_global_rejects: options.cases.saturating_mul(10),
        verbose: 0,
        ..Config::default()
    }
}

/// What sending and checking one body needs, shared with the tasks in flight.
#[derive(Debug)]
struct Prober {
    client: Client,
    schemas: Arc<SchemaSet>,
    known: Known,
    /// The valid products body, serialised: the one generated products body that must get
    /// data (see [`Prober::probe`]).
    products_baseline: Vec<u8>,
    limits: Limits,
    robustness: RobustnessGate,
}

impl Prober {
    /// Sends one body (signed) as `bytes`, its serialisation, and checks the response against
    /// every property.
    async fn probe(&self, endpoint: Endpoint, body: &FuzzBody, bytes: Vec<u8>) -> Probe {
        let appid = body
            .header_appid(&self.known.appid, &self.limits)
            .to_string();
        let len = bytes.len();
        // A generated products body other than the valid one is nearly always one to refuse,
        // and an empty 2xx answer is a refusal of the products operation's unshown error
        // shape (§7.4); the valid body must get JSON.
        let may_refuse = endpoint == Endpoint::MallProducts && bytes != self.products_baseline;
        let sent = self
            .client
            .send_raw(endpoint, bytes, &appid, &AuthMode::Signed, &[])
            .await;
        let sent = if may_refuse {
            sent.empty_body_as_refusal()
        } else {
            sent
        };
        if let Err(finding) = &sent.result
            && finding.check.id == catalog::TRANSPORT_RATE_LIMITED.id
        {
            // With no answer recorded, the client gave up before sending: a pause asked for
            // by an earlier answer was still in force.
            return Probe {
                sent: sent.exchange.response.is_some(),
                served: false,
                limited: Some(finding.clone()),
                exchange: sent.exchange,
                violations: Vec::new(),
                rejected: None,
            };
        }
        let rejected =
            properties::http_layer_rejection(&sent, Limits::beyond_common_len(len, &appid));
        let mut violations = if rejected.is_some() {
            Vec::new()
        } else {
            properties::evaluate(
                endpoint,
                body,
                &sent,
                &self.schemas,
                &self.known,
                self.robustness,
            )
        };
        // The valid products body answered 2xx with something else than the array §4.2
        // shows (a paginated object, `{"count":…,"results":[…]}`): no refusal, a broken
        // contract.
        if endpoint == Endpoint::MallProducts
            && !may_refuse
            && let Ok(response) = &sent.result
            && (200..300).contains(&response.status)
            && response.body_is_json
            && !properties::is_success(endpoint, response)
            && !violations
                .iter()
                .any(|v| v.property.id == catalog::FUZZ_CONTRACT.id)
        {
            let findings = properties::schema_findings(endpoint, response, &self.schemas);
            if !findings.is_empty() {
                violations.push(properties::Violation {
                    property: &catalog::FUZZ_CONTRACT,
                    findings,
                });
            }
        }
        let served = sent
            .result
            .as_ref()
            .is_ok_and(|r| properties::is_success(endpoint, r));
        Probe {
            exchange: sent.exchange,
            violations,
            rejected,
            limited: None,
            sent: true,
            served,
        }
    }
}

/// The running state of one fuzz run.
struct Session<'a> {
    fuzzer: &'a Fuzzer,
    prober: Arc<Prober>,
    handle: Handle,
    requests: u64,
    next_slot: Instant,
    deadline: Instant,
    /// Why the run is ending early, once it is.
    halt: Option<Halt>,
    /// A place for each request that may be out at once (`--jobs`): every probe holds one
    /// while it is sent and checked. Cases are started ahead of their places (see
    /// [`Session::window`]), so when an answer comes back the next body queued goes out on
    /// the runtime at once, not after the generating thread has woken and drawn it.
    places: Arc<Semaphore>,
    /// Raised with `halt`: a case started ahead and still waiting for its place is not sent.
    stopping: Arc<AtomicBool>,
    /// The end of the current endpoint's share of `--max-time`: a case that gets its place
    /// later is not sent (so the run overruns by at most one answer's time, as when no case
    /// was started ahead).
    not_after: Instant,
}

impl Session<'_> {
    /// How many cases are started and not yet taken back at most: twice the requests that may
    /// be out, so that a place that frees finds a body ready while the generating thread
    /// judges the oldest outcome and draws the next.
    fn window(&self) -> usize {
        self.fuzzer.options.jobs.max(1) * 2
    }

    fn set_halt(&mut self, halt: Halt) {
        self.stopping.store(true, AtomicOrdering::Release);
        self.halt = Some(halt);
    }

    fn pace(&mut self) {
        if self.fuzzer.options.rate > 0.0 {
            let now = Instant::now();
            if self.next_slot > now {
                std::thread::sleep(self.next_slot - now);
            }
            let interval = Duration::from_secs_f64(1.0 / self.fuzzer.options.rate);
            self.next_slot = self.next_slot.max(Instant::now()) + interval;
        }
    }

    /// Whether the run is ending early: a rate limit was met or the run was interrupted.
    fn halted(&mut self) -> bool {
        if self.halt.is_none()
            && let Some(cause) = self.fuzzer.interrupt.raised()
        {
            self.set_halt(Halt::Interrupted { cause });
        }
        self.halt.is_some()
    }

    /// Waits for `work` on the runtime, or for an interrupt (then `None`, and the run halts).
    fn wait<T>(&mut self, work: impl Future<Output = T>) -> Option<T> {
        let interrupt = self.fuzzer.interrupt.clone();
        let done = self.handle.block_on(async {
            tokio::select! {
                // Work that is done is taken even once a signal is raised: a finished case
                // still counts as a request that went out.
                biased;
                done = work => Some(done),
                () = interrupt.wait() => None,
            }
        });
        if done.is_none() {
            self.halted();
        }
        done
    }

    /// Counts a request that went out, and halts the run on a rate-limited one (then `None`).
    fn take(&mut self, endpoint: Endpoint, mut probe: Probe) -> Option<Probe> {
        if probe.sent {
            self.requests += 1;
        }
        let Some(finding) = probe.limited.take() else {
            return Some(probe);
        };
        if self.halt.is_none() {
            // The halt's exchange is shown as it is (its excerpt made from the body now).
            let mut exchange = probe.exchange;
            exchange.seal(self.prober.client.redactor());
            self.set_halt(Halt::RateLimited {
                endpoint,
                finding,
                exchange: Box::new(exchange),
            });
        }
        None
    }

    /// Sends one body and waits for its outcome; `None` once the run halts.
    fn probe(&mut self, endpoint: Endpoint, body: &FuzzBody) -> Option<Probe> {
        if self.halted() {
            return None;
        }
        self.pace();
        let (prober, places) = (Arc::clone(&self.prober), Arc::clone(&self.places));
        let probe = self.wait(async move {
            let _place = places.acquire().await;
            prober.probe(endpoint, body, body.to_bytes()).await
        })?;
        self.take(endpoint, probe)
    }

    /// Sends one body, serialised as `bytes`, on the runtime as soon as it has a place,
    /// without waiting (paced like [`Session::probe`]); `None` from the task when the run
    /// halted, or the endpoint's time ran out, before it had one.
    fn start(
        &mut self,
        endpoint: Endpoint,
        body: Arc<FuzzBody>,
        bytes: Vec<u8>,
    ) -> JoinHandle<Option<Probe>> {
        self.pace();
        let prober = Arc::clone(&self.prober);
        let (places, stopping) = (Arc::clone(&self.places), Arc::clone(&self.stopping));
        let interrupt = self.fuzzer.interrupt.clone();
        let not_after = self.not_after;
        // Held back once the run is stopping (a signal, or a rate limit met by this case or
        // any other: the generating thread may not have judged it yet) or out of time.
        let held_back = move |stopping: &AtomicBool| {
            stopping.load(AtomicOrdering::Acquire)
                || interrupt.raised().is_some()
                || Instant::now() >= not_after
        };
        self.handle.spawn(async move {
            if held_back(&stopping) {
                return None;
            }
            let _place = places.acquire_owned().await;
            if held_back(&stopping) {
                return None;
            }
            let probe = prober.probe(endpoint, &body, bytes).await;
            if probe.limited.is_some() {
                stopping.store(true, AtomicOrdering::Release);
            }
            Some(probe)
        })
    }

    /// The outcome of a body sent with [`Session::start`]; should its task have died, the body
    /// is sent again and waited for. `None` once the run halts.
    fn finish(
        &mut self,
        endpoint: Endpoint,
        body: &FuzzBody,
        mut task: JoinHandle<Option<Probe>>,
    ) -> Option<Probe> {
        let Some(joined) = self.wait(&mut task) else {
            task.abort();
            return None;
        };
        match joined {
            Ok(Some(probe)) => self.take(endpoint, probe),
            // Held back by a signal, or by a rate limit that a case drawn later met first: then
            // the body goes now, in turn, and meets the same pause (the halt is this case's).
            Ok(None) if self.halted() || Instant::now() >= self.not_after => None,
            Ok(None) => self.probe(endpoint, body),
            Err(_) => self.probe(endpoint, body),
        }
    }

    /// Ends the cases still in flight when the run halts, unjudged: after a rate limit each is
    /// waited for and counted if it went out; after an interrupt they are dropped. Returns how
    /// many there were.
    fn drain(&mut self, in_flight: VecDeque<InFlight<'_>>) -> u32 {
        let unjudged = u32::try_from(in_flight.len()).unwrap_or(u32::MAX);
        for mut sent in in_flight {
            match self.wait(&mut sent.task) {
                Some(Ok(Some(probe))) => self.requests += u64::from(probe.sent),
                Some(Ok(None) | Err(_)) => {}
                None => sent.task.abort(),
            }
        }
        unjudged
    }

    /// Shrinks a failing tree while `property` keeps failing.
    fn shrink(
        &mut self,
        endpoint: Endpoint,
        tree: impl ValueTree<Value = FuzzBody>,
        first: Probe,
        property: &'static Check,
        case: u32,
    ) -> FuzzFailure {
        let mut tried: HashMap<[u8; 16], Option<Probe>> = HashMap::new();
        let deadline = self.deadline;
        let shrunk = minimise(
            tree,
            first,
            self.fuzzer.options.max_shrink_tries,
            |candidate| {
                if Instant::now() >= deadline {
                    return Verdict::Stop;
                }
                let key = candidate.fingerprint();
                let probe = match tried.get(&key) {
                    Some(known) => known.clone(),
                    None => {
                        let Some(probe) = self.probe(endpoint, candidate) else {
                            return Verdict::Halt;
                        };
                        let kept = probe.breaks(property).is_some().then_some(probe);
                        tried.insert(key, kept.clone());
                        kept
                    }
                };
                probe.map_or(Verdict::Passes, Verdict::Fails)
            },
        );
        // A duplicate key left in the minimal body is kept only when it is what fails.
        let mut shrunk = shrunk;
        if let Some(plain) = dedup::without_duplicates(&shrunk.value)
            && Instant::now() < deadline
            && let Some(probe) = self.probe(endpoint, &plain)
        {
            shrunk.tries += 1;
            if probe.breaks(property).is_some() {
                shrunk.value = plain;
                shrunk.evidence = probe;
                shrunk.steps += 1;
            }
        }
        let findings = shrunk
            .evidence
            .breaks(property)
            .map(|v| v.findings.clone())
            .unwrap_or_default();
        let saved = self
            .fuzzer
            .options
            .save
            .as_ref()
            .map(|saver| saver.save(endpoint, property, &shrunk.value, &self.fuzzer.known));
        FuzzFailure {
            endpoint,
            property,
            body: shrunk.value,
            findings,
            exchange: shrunk.evidence.exchange,
            origin: Origin::Generated {
                case,
                steps: shrunk.steps,
                tries: shrunk.tries,
                end: shrunk.end,
            },
            saved,
        }
    }
}

/// Collects the report and forwards every event.
struct Out<'e> {
    on_event: &'e mut dyn FnMut(&FuzzEvent),
    report: FuzzReport,
    /// The run's redactor: a failure's findings and exchange are sealed with it (scrubbed, then
    /// escaped, then capped) before anything shows them.
    redactor: crate::redact::Redactor,
}

impl Out<'_> {
    fn event(&mut self, event: FuzzEvent) {
        (self.on_event)(&event);
    }

    fn failure(&mut self, failure: FuzzFailure) {
        let failure = sealed::seal(failure, &self.redactor);
        (self.on_event)(&FuzzEvent::Failure(Box::new(failure.clone())));
        self.report.failures.push(failure);
    }
}

impl Fuzzer {
    /// Replays the saved failures, then fuzzes every endpoint; call from a blocking thread
    /// (not from async code) with a handle of the runtime the client lives on.
    pub fn run(&self, handle: Handle, on_event: &mut dyn FnMut(&FuzzEvent)) -> FuzzReport {
        let started = Instant::now();
        let mut session = Session {
            fuzzer: self,
            prober: Arc::new(Prober {
                client: self.client.clone(),
                schemas: Arc::clone(&self.schemas),
                known: self.known.clone(),
                products_baseline: serde_json::to_vec(&strategies::baseline(
                    Endpoint::MallProducts,
                    &self.known,
                ))
                .expect("a serde_json::Value always serializes"),
                limits: self.options.limits,
                robustness: self.options.robustness,
            }),
            handle,
            requests: 0,
            next_slot: started,
            deadline: started + self.options.max_time,
            halt: None,
            places: Arc::new(Semaphore::new(self.options.jobs.max(1))),
            stopping: Arc::new(AtomicBool::new(false)),
            not_after: started + self.options.max_time,
        };
        let mut out = Out {
            on_event,
            report: FuzzReport {
                seed: self.options.seed,
                endpoints: Vec::new(),
                failures: Vec::new(),
                replayed: 0,
                requests: 0,
                duration: Duration::ZERO,
                halt: None,
            },
            redactor: self.client.redactor().clone(),
        };
        let mut found: BTreeMap<&'static str, BTreeSet<&'static str>> = BTreeMap::new();
        let mut sent: BTreeMap<&'static str, HashSet<[u8; 16]>> = BTreeMap::new();
        for regression in self
            .regressions
            .iter()
            .filter(|r| self.options.endpoints.contains(&r.endpoint))
        {
            let Some(probe) = session.probe(regression.endpoint, &regression.body) else {
                break;
            };
            out.report.replayed += 1;
            sent.entry(regression.endpoint.name())
                .or_default()
                .insert(regression.body.fingerprint());
            let violations: Vec<&Violation> = probe
                .violations
                .iter()
                .filter(|v| regression.properties.iter().any(|p| p.id == v.property.id))
                .collect();
            out.event(FuzzEvent::Replayed {
                path: regression.path.clone(),
                endpoint: regression.endpoint,
                failing: violations.iter().map(|v| v.property).collect(),
            });
            let seen = found.entry(regression.endpoint.name()).or_default();
            for v in violations {
                if seen.insert(v.property.id) {
                    out.failure(FuzzFailure {
                        endpoint: regression.endpoint,
                        property: v.property,
                        body: regression.body.clone(),
                        findings: v.findings.clone(),
                        exchange: probe.exchange.clone(),
                        origin: Origin::Replayed {
                            path: regression.path.clone(),
                        },
                        saved: None,
                    });
                }
            }
        }
        let endpoints = &self.options.endpoints;
        for (i, &endpoint) in endpoints.iter().enumerate() {
            if session.halted() {
                break;
            }
            let now = Instant::now();
            let remaining = u32::try_from(endpoints.len() - i).unwrap_or(1);
            let slice_end = now + session.deadline.saturating_duration_since(now) / remaining;
            let mut run = EndpointRun {
                endpoint,
                slice_end,
                found: found.remove(endpoint.name()).unwrap_or_default(),
                sent: sent.remove(endpoint.name()).unwrap_or_default(),
            };
            let mut stats = run.fuzz(&mut session, &mut out);
            stats.duration = now.elapsed();
            out.event(FuzzEvent::EndpointFinished(stats.clone()));
            out.report.endpoints.push(stats);
        }
        out.report.requests = session.requests;
        out.report.halt = session.halt.take();
        out.report.duration = started.elapsed();
        out.report
    }
}

/// A generated case sent and not yet taken back.
struct InFlight<'s> {
    /// 1-based number of the case.
    case: u32,
    /// The generator it was drawn from.
    strategy: &'s Gen<FuzzBody>,
    /// The generator's state before the draw: a body that fails is drawn again from it, as a
    /// tree to shrink (bodies are drawn without their trees, see `strategies::draw`).
    rng_before: TestRng,
    /// The body sent (shared with its task).
    body: Arc<FuzzBody>,
    /// Its outcome (`None` when it was held back: a halt, or its place came too late).
    task: JoinHandle<Option<Probe>>,
}

/// Generation on one endpoint.
struct EndpointRun {
    endpoint: Endpoint,
    /// No new case after this.
    slice_end: Instant,
    /// Properties already reported (not shrunk again).
    found: BTreeSet<&'static str>,
    /// Fingerprints of bodies already sent.
    sent: HashSet<[u8; 16]>,
}

impl EndpointRun {
    fn fuzz(&mut self, session: &mut Session<'_>, out: &mut Out<'_>) -> EndpointStats {
        let fuzzer = session.fuzzer;
        session.not_after = self.slice_end;
        let config = config(&fuzzer.options, self.endpoint);
        let random = strategies::body(self.endpoint, &fuzzer.known, fuzzer.options.limits);
        let sweep = strategies::sweep(self.endpoint, &fuzzer.known);
        let mut swept = 0;
        let mut runner = TestRunner::new(config.clone());
        let mut stats = EndpointStats {
            endpoint: self.endpoint,
            planned: config.cases,
            run: 0,
            duplicates: 0,
            stopped_by_time: false,
            violations: BTreeMap::new(),
            rejected: BTreeMap::new(),
            served: 0,
            valid_body: self.endpoint == Endpoint::MallList || fuzzer.known.target_mall.is_some(),
            // No mall to ask for, and the merchant was not seen empty: discovery failed (a
            // firewall turned its page away), so no products call could be a valid one.
            no_mall_known: self.endpoint == Endpoint::MallProducts
                && fuzzer.known.target_mall.is_none()
                && !fuzzer.known.lists_no_mall,
            refused: BTreeMap::new(),
            halted: None,
            duration: Duration::ZERO,
        };
        out.event(FuzzEvent::EndpointStarted {
            endpoint: self.endpoint,
            cases: config.cases,
        });
        let window = session.window();
        let mut in_flight: VecDeque<InFlight<'_>> = VecDeque::new();
        let mut generating = true;
        let mut draws: u32 = 0;
        loop {
            // Draw and start cases until the window is full or generation ends.
            while generating && in_flight.len() < window {
                if session.halted() {
                    generating = false;
                    break;
                }
                if stats.run >= config.cases || draws >= config.max_global_rejects.max(config.cases)
                {
                    generating = false;
                    break;
                }
                if Instant::now() >= self.slice_end {
                    stats.stopped_by_time = true;
                    generating = false;
                    break;
                }
                draws += 1;
                // Every other case is the next single-field edge case until the sweep is done.
                let strategy = match sweep.get(swept) {
                    Some(edge) if stats.run.is_multiple_of(2) => {
                        swept += 1;
                        edge
                    }
                    _ => &random,
                };
                let rng_before = runner.rng().clone();
                let Ok(body) = strategy.draw(&mut runner) else {
                    continue;
                };
                let body = Arc::new(body);
                // Serialised once: for the fingerprint, then sent.
                let bytes = body.to_bytes();
                if !self.sent.insert(FuzzBody::fingerprint_of(&bytes)) {
                    stats.duplicates += 1;
                    continue;
                }
                stats.run += 1;
                let task = session.start(self.endpoint, Arc::clone(&body), bytes);
                in_flight.push_back(InFlight {
                    case: stats.run,
                    strategy,
                    rng_before,
                    body,
                    task,
                });
            }
            // Cases left unjudged when the run halts are not counted as run.
            if session.halted() {
                stats.run -= session.drain(std::mem::take(&mut in_flight));
                break;
            }
            // Take the oldest outcome back: outcomes are handled in generation order.
            let Some(sent) = in_flight.pop_front() else {
                break;
            };
            let Some(probe) = session.finish(self.endpoint, &sent.body, sent.task) else {
                // Without a halt, the case was held back because its place came too late.
                stats.stopped_by_time |= session.halt.is_none();
                stats.run -= 1 + session.drain(std::mem::take(&mut in_flight));
                break;
            };
            if let Some(status) = probe.rejected {
                *stats.rejected.entry(status).or_default() += 1;
            }
            if probe.served {
                stats.served += 1;
            } else {
                let status = probe.exchange.response.as_ref().map_or(0, |r| r.status);
                *stats.refused.entry(status).or_default() += 1;
            }
            for v in &probe.violations {
                *stats.violations.entry(v.property.id).or_default() += 1;
            }
            let fresh: Vec<&'static Check> = probe
                .violations
                .iter()
                .map(|v| v.property)
                .filter(|p| !self.found.contains(p.id))
                .collect();
            for property in fresh {
                self.found.insert(property.id);
                // The tree of the body sent, drawn again from the same state of the generator
                // (and again for each property: a shrink consumes its tree).
                let mut again = TestRunner::new_with_rng(config.clone(), sent.rng_before.clone());
                let redrawn = sent
                    .strategy
                    .new_tree(&mut again)
                    .ok()
                    .filter(|tree| tree.current() == *sent.body);
                // Cannot fail while each draw mirrors its strategy (tests hold them to it);
                // should it, the body sent is reported as it is, unshrunk.
                debug_assert!(redrawn.is_some(), "the tree of a drawn body is not its own");
                let tree: Box<dyn ValueTree<Value = FuzzBody>> = match redrawn {
                    Some(tree) => tree,
                    None => Box::new(Just((*sent.body).clone())),
                };
                let failure =
                    session.shrink(self.endpoint, tree, probe.clone(), property, sent.case);
                out.failure(failure);
            }
        }
        stats.halted.clone_from(&session.halt);
        stats
    }
}
