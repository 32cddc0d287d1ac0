//! Runs cases against a base URL and emits events; never prints.
//!
//! [`Runner::run`] executes the planned cases concurrently (bounded by `jobs`), reusing one
//! connection pool, and hands every [`Event`] to the caller's callback in arrival order.

mod cross_cursor;
mod execute;
mod order;
pub mod page_limit;
pub mod paging;
pub mod preflight;
#[cfg(test)]
mod wire_diff;

use std::sync::Arc;
use std::time::Instant;

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use tokio::sync::{Semaphore, mpsc};

use crate::case::model::Case;

use crate::service::client::Client;
use crate::service::discover::Discovery;
use crate::spec::schemas::SchemaSet;
use crate::verdict::event::{CaseId, CaseResult, Event, RunSummary};
use crate::verdict::source::SourceFile;

/// How often the runner sends [`Event::Tick`], so that a report file holding back a write
/// never lags far behind the cases that finished.
const TICK: std::time::Duration = std::time::Duration::from_millis(250);

/// How a run behaves, free of CLI types.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Requests in flight at once for the whole run (cases, and the walks and products calls
    /// inside a case).
    pub jobs: usize,
    /// Observed-severity findings fail the run.
    pub strict: bool,
    /// Page limit of a paging walk, unless the case sets one.
    pub max_pages: u64,
    /// `--max-pages` as given: a case's own `max-pages` is lowered to it (a user who bounds
    /// the walks of a run against an endless list bounds them all).
    pub max_pages_cap: Option<u64>,
    /// Cursor convention of walks whose case keeps the default one.
    pub cursor: Option<crate::case::model::CursorRule>,
    /// Products sweeps call at most this many malls, unless the case sets `sample`.
    pub sample: Option<usize>,
    /// Most findings kept per check in one case (the rest are counted).
    pub max_findings_per_check: usize,
    /// Walk every size to the end of the list and sweep every listed mall (`--exhaustive`);
    /// otherwise a run's request count does not grow with the merchant's data.
    pub exhaustive: bool,
    /// Records read by the walks at the smaller sizes of a bounded run (`--walk-prefix`).
    pub walk_prefix: usize,
    /// Requests one products sweep may send, its walk of the list included (`--sweep-budget`).
    pub sweep_budget: usize,
    /// Seed of the sweeps' samples of malls (`--seed`; a new one each run by default).
    pub seed: String,
    /// Whether robustness findings fail the run or warn (`--robustness`).
    pub robustness: crate::checks::robustness::RobustnessGate,
}

/// Records the smaller page sizes of a bounded run walk by default.
pub const DEFAULT_WALK_PREFIX: usize = 200;

/// Page limit of a walk whose case sets none: 10,000 records at page size 1, and the closing
/// short page.
pub const DEFAULT_MAX_PAGES: u64 = 10_001;

/// The fewest malls whose products a bounded sweep calls (first, last, a deleted one, the
/// rest a seeded sample), however large the merchant.
pub const DEFAULT_SWEEP_SAMPLE: usize = 8;

/// Requests one products sweep may send by default, its walk of the list included: a merchant
/// of up to about a hundred malls is swept whole; one of 2,000 gets 90 products calls (the
/// whole shipped run stays under 1,500 requests); one of 10,000, whose list alone takes 100
/// pages, gets the minimal sample.
pub const DEFAULT_SWEEP_BUDGET: usize = 110;

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            jobs: 4,
            strict: false,
            max_pages: DEFAULT_MAX_PAGES,
            max_pages_cap: None,
            cursor: None,
            sample: None,
            max_findings_per_check: 50,
            exhaustive: false,
            walk_prefix: DEFAULT_WALK_PREFIX,
            sweep_budget: DEFAULT_SWEEP_BUDGET,
            seed: "mallcheck".to_string(),
            robustness: Default::default(),
        }
    }
}

/// A case ready to run, with the file it came from.
#[derive(Debug)]
pub struct PlannedCase {
    /// The case file's source (for locations).
    pub source: Arc<SourceFile>,
    /// The case.
    pub case: Case,
}

impl PlannedCase {
    /// The case's identity in reports.
    pub fn id(&self, index: usize) -> CaseId {
        CaseId {
            file: self.source.path.clone(),
            name: self.case.name.value.clone(),
            endpoint: self.case.endpoint().name().to_string(),
            index,
            line: Some(self.source.line_col(self.case.span.start).0),
        }
    }
}

/// Everything a case needs to run.
#[derive(Debug)]
pub struct Runner {
    /// The signing HTTP client.
    pub client: Client,
    /// Compiled schemas.
    pub schemas: Arc<SchemaSet>,
    /// Options.
    pub options: RunOptions,
    /// Values found at run time (a mall to target when the user gave none).
    pub discovery: Discovery,
    /// Snapshot comparison; `None` when snapshots are off.
    pub snapshots: Option<crate::snapshot::Snapshotter>,
    /// The largest page the service serves, found when a walk first asks for more than the
    /// spec's example size.
    pub page_limit: page_limit::PageLimit,
    /// The target as reports name it (the session's: `embedded`, or the base URL).
    pub target: String,
}

impl Runner {
    /// Runs every case and reports through `on_event`; returns the summary (also sent as the
    /// last event).
    pub async fn run(
        self: Arc<Self>,
        cases: Vec<PlannedCase>,
        on_event: &mut dyn FnMut(Event),
    ) -> RunSummary {
        let started = Instant::now();
        on_event(Event::RunStarted {
            base_url: self.client.base_url().to_string(),
            target: self.target.clone(),
            planned: cases.iter().enumerate().map(|(i, c)| c.id(i)).collect(),
        });
        // --jobs bounds the requests in flight of the whole run: cases, and the walks and
        // products calls inside a case, share the places.
        self.client.limit_in_flight(self.options.jobs);
        let (tx, mut rx) = mpsc::unbounded_channel::<Event>();
        let permits = Arc::new(Semaphore::new(self.options.jobs.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        // Each case keeps its index in the plan (its id); the walks and sweeps start first.
        let order = {
            let kinds: Vec<&Case> = cases.iter().map(|c| &c.case).collect();
            order::launch_order(&kinds, self.options.jobs, self.snapshots.is_some())
        };
        let mut slots: Vec<Option<PlannedCase>> = cases.into_iter().map(Some).collect();
        for index in order {
            let Some(planned) = slots[index].take() else {
                continue;
            };
            let runner = Arc::clone(&self);
            let tx = tx.clone();
            let permits = Arc::clone(&permits);
            tasks.spawn(async move {
                let Ok(_permit) = permits.acquire_owned().await else {
                    return;
                };
                let id = planned.id(index);
                let _ = tx.send(Event::CaseStarted(id.clone()));
                // Boxed: the case's future is large (~140 KB), and a task's future is moved
                // into the runtime's task cell when spawned; boxed here, it is built in place.
                let guarded =
                    AssertUnwindSafe(Box::pin(execute::case(&runner, &planned, id.clone())));
                let result = match guarded.catch_unwind().await {
                    Ok(result) => result,
                    Err(panic) => execute::crashed(id, panic_message(&*panic)),
                };
                let result = result.seal(runner.client.redactor());
                let _ = tx.send(Event::CaseFinished(Box::new(result)));
            });
        }
        drop(tx);
        let mut summary = RunSummary::default();
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let event = tokio::select! {
                event = rx.recv() => match event {
                    Some(event) => event,
                    None => break,
                },
                _ = tick.tick() => Event::Tick,
            };
            if let Event::CaseFinished(result) = &event {
                summary.add(result.outcome);
            }
            on_event(event);
        }
        while tasks.join_next().await.is_some() {}
        summary.duration = started.elapsed();
        on_event(Event::RunFinished(summary.clone()));
        summary
    }
}

/// How the preflight ended.
#[derive(Debug)]
pub enum Preflight {
    /// It stopped the run: the message for the console and the exit code.
    Stopped(String, i32),
    /// The suite runs; with the `preflight` case (outcome Fail, not sealed yet: it is
    /// numbered after the planned cases first) when the accepted first page breaks the
    /// contract.
    Passed {
        /// The failed case, for the reports.
        broken: Option<Box<CaseResult>>,
        /// Transport retries the preflight took.
        retried: u32,
    },
}

impl Runner {
    /// Sends the preflight request; when it stops the run, reports the `preflight` case through
    /// `on_event` (a whole run of one case) and returns the message for the console with the
    /// exit code (3 could not test, 1 a broken answer).
    pub async fn preflight(
        &self,
        body: &serde_json::Value,
        signer: &str,
        appid: &str,
        on_event: &mut dyn FnMut(Event),
    ) -> Preflight {
        let stopped = match preflight::check(&self.client, body, &self.schemas, signer, appid).await
        {
            Ok(accepted) => {
                if accepted.lists_no_mall {
                    self.discovery.saw_empty_list();
                } else if !accepted.malls.0.is_empty() {
                    self.discovery.saw_malls();
                }
                // The run's first read of these malls: the cases' reads are held to it.
                let (keys, states) = &accepted.malls;
                self.discovery.first_read(keys, states);
                return Preflight::Passed {
                    broken: accepted.broken.map(Box::new),
                    retried: accepted.retried,
                };
            }
            Err(stopped) => stopped,
        };
        let result = stopped.result.seal(self.client.redactor());
        on_event(Event::RunStarted {
            base_url: self.client.base_url().to_string(),
            target: self.target.clone(),
            planned: vec![result.id.clone()],
        });
        on_event(Event::CaseStarted(result.id.clone()));
        let code = crate::exit::for_outcome(result.outcome);
        let mut summary = RunSummary::default();
        summary.add(result.outcome);
        summary.duration = result.duration;
        on_event(Event::CaseFinished(Box::new(result)));
        on_event(Event::RunFinished(summary));
        Preflight::Stopped(stopped.message, code)
    }
}

/// The text of a caught panic payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    crate::verdict::event::panic_message(payload)
        .unwrap_or_else(|| "panic without a message".to_string())
}
