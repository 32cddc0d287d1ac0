//! Executes one case of any kind and collects its findings and exchanges.

use std::time::Instant;

use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::case::model::{CaseKind, CursorRule, ExchangeCase, SweepCase, WalkCase};

use crate::verdict::endpoint::{AuthMode, Endpoint};

use crate::checks::{assert, conforming, http, ownership, payload, products, robustness};
use crate::fuzz::{properties, regressions};
use crate::json::reach::Reach;
use crate::release::{sample, walk};
use crate::runner::paging::{self, Page, PageSource, WalkOptions};
use crate::runner::{PlannedCase, Runner, page_limit, preflight};
use crate::service::client::{Response, Sent};
use crate::service::lazy_json::{LazyJson, TopMembers};
use crate::service::{politeness, request};
use crate::spec::catalog;
use crate::spec::schemas::{StreamOutcome, Streamed};
use crate::spec::wire::Digest;
use crate::verdict::check::Check;
use crate::verdict::event::{
    Actual, CaseId, CaseResult, Coverage, Finding, Outcome, SNAPSHOT_COMPARED, SNAPSHOT_FAILED,
    SNAPSHOT_OFF, SourceLocation,
};
use crate::verdict::exchange::Exchange;
use crate::verdict::findings::Findings;
use crate::verdict::source::Span;

/// Most exchanges kept in a case result (the first ones, then the last).
const MAX_EXCHANGES: usize = 10;

/// Findings and exchanges of a case as it runs.
pub(super) struct Collector<'a> {
    planned: &'a PlannedCase,
    id: CaseId,
    findings: Findings,
    exchanges: Vec<Exchange>,
    dropped_exchanges: usize,
    coverage: Vec<Coverage>,
}

impl<'a> Collector<'a> {
    fn new(planned: &'a PlannedCase, id: CaseId, max_findings_per_check: usize) -> Self {
        Collector {
            planned,
            id,
            findings: Findings::new(max_findings_per_check),
            exchanges: vec![],
            dropped_exchanges: 0,
            coverage: vec![],
        }
    }

    fn location(&self, span: &Span) -> Option<SourceLocation> {
        Some(self.planned.source.location(span))
    }

    /// An empty bounded collection with the case's cap, for a check that may find a lot.
    pub(super) fn bounded(&self) -> Findings {
        Findings::new(self.findings.cap())
    }

    /// Adds findings blamed on `span` when they have no narrower place yet.
    pub(super) fn add(&mut self, findings: Vec<Finding>, span: &Span) {
        for f in findings {
            if !self.findings.wants(f.check) {
                self.findings.omit(f.check, 1);
                continue;
            }
            let located = if f.location.is_some() {
                f
            } else {
                f.at(self.location(span))
            };
            self.findings.push(located);
        }
    }

    /// Adds a bounded collection: its findings as [`Collector::add`] does, its counts as they are.
    pub(super) fn absorb(&mut self, found: Findings, span: &Span) {
        let (kept, omitted) = found.into_parts();
        self.add(kept, span);
        for o in omitted {
            self.findings.omit(o.check, o.count);
        }
    }

    /// States what `check` covered.
    pub(super) fn covered(&mut self, check: impl Into<String>, scope: impl Into<String>) {
        self.coverage.push(Coverage {
            check: check.into(),
            scope: scope.into(),
        });
    }

    /// Adds what a part of the case collected, as if it had been collected here: the case
    /// keeps the same exchanges and findings, in the same order, as a sequential run.
    fn merge(&mut self, part: Part, span: &Span) {
        for exchange in part.exchanges {
            self.record(exchange);
        }
        // A part skips exchanges only after its first MAX_EXCHANGES, which filled this record.
        self.dropped_exchanges += part.skipped;
        if let Some(shown) = part.shown {
            self.record(shown);
        }
        if let Some(last) = part.last {
            self.record(last);
        }
        self.absorb(part.findings, span);
    }

    /// Keeps the first [`MAX_EXCHANGES`] exchanges and the last one, and past them the first
    /// exchange a finding shows in (the page of a walk where a fault shows, which a report
    /// gives as the case's example).
    fn record(&mut self, exchange: Exchange) {
        let first_shown = exchange.shows_finding && !self.exchanges.iter().any(|x| x.shows_finding);
        if self.exchanges.len() < MAX_EXCHANGES || first_shown {
            self.exchanges.push(exchange);
            return;
        }
        // The last place holds the latest exchange, unless it holds the first one shown.
        let (last, earlier) = match self.exchanges.split_last_mut() {
            Some(split) => split,
            None => return self.exchanges.push(exchange),
        };
        if last.shows_finding && !earlier.iter().any(|x| x.shows_finding) {
            self.exchanges.push(exchange);
        } else {
            self.dropped_exchanges += 1;
            *last = exchange;
        }
    }

    /// Records the exchange and returns the response (adding what its parse found: keys
    /// given twice, numbers beyond a double), or adds the transport finding.
    pub(super) fn take(&mut self, sent: Sent, span: &Span) -> Option<Response> {
        self.record(sent.exchange);
        match sent.result {
            Ok(r) => {
                // `response.tree-size` only once a check has read a partial tree.
                self.add(r.json.scan_findings(), span);
                Some(r)
            }
            Err(f) => {
                self.add(vec![*f], span);
                None
            }
        }
    }

    fn finish(
        self,
        runner: &Runner,
        started: Instant,
        skip: Option<String>,
        retries: u32,
    ) -> CaseResult {
        let id = self.id;
        let (findings, omitted) = self.findings.into_parts();
        let outcome = if skip.is_some() {
            Outcome::Skip
        } else {
            Outcome::of(&findings, runner.options.strict)
        };
        CaseResult {
            id,
            outcome,
            findings,
            omitted,
            exchanges: self.exchanges,
            skip_reason: skip,
            flaky: retries > 0 && matches!(outcome, Outcome::Pass | Outcome::Warn),
            duration: started.elapsed(),
            coverage: self.coverage,
        }
    }
}

/// What one part of a case that runs concurrently with the others (a walk, a products call)
/// collected: its first exchanges and its last one, and its findings, merged into the case by
/// [`Collector::merge`] in the planned order whatever order the parts finished in.
struct Part {
    exchanges: Vec<Exchange>,
    /// Exchanges between the first [`MAX_EXCHANGES`] and `last`, counted only.
    skipped: usize,
    last: Option<Exchange>,
    /// The exchange a finding shows in, kept when a later one took its place as `last`.
    shown: Option<Exchange>,
    /// Exchanges recorded so far.
    recorded: usize,
    findings: Findings,
}

impl Part {
    fn new(cap: usize) -> Part {
        Part {
            exchanges: Vec::new(),
            skipped: 0,
            last: None,
            shown: None,
            recorded: 0,
            findings: Findings::new(cap),
        }
    }

    /// Marks the exchange recorded `index`-th (from 0) as the one a finding shows in, when it
    /// is still held and none is marked yet: the first finding's page is the example.
    fn blame(&mut self, index: usize) {
        let marked = self.shown.is_some()
            || self.last.as_ref().is_some_and(|x| x.shows_finding)
            || self.exchanges.iter().any(|x| x.shows_finding);
        if marked {
            return;
        }
        let held = match self.exchanges.get_mut(index) {
            Some(x) => Some(x),
            None if index + 1 == self.recorded => self.last.as_mut(),
            None => None,
        };
        if let Some(x) = held {
            x.shows_finding = true;
        }
    }

    /// [`Part::blame`] of the exchange recorded last.
    fn blame_last(&mut self) {
        if let Some(index) = self.recorded.checked_sub(1) {
            self.blame(index);
        }
    }

    /// An empty bounded collection with the part's cap.
    fn bounded(&self) -> Findings {
        Findings::new(self.findings.cap())
    }

    fn record(&mut self, exchange: Exchange) {
        self.recorded += 1;
        if self.exchanges.len() < MAX_EXCHANGES {
            self.exchanges.push(exchange);
        } else if let Some(previous) = self.last.replace(exchange) {
            if previous.shows_finding && self.shown.is_none() {
                self.shown = Some(previous);
            } else {
                self.skipped += 1;
            }
        }
    }

    fn add(&mut self, findings: Vec<Finding>) {
        self.findings.extend(findings);
    }

    fn absorb(&mut self, found: Findings) {
        self.findings.append(found);
    }

    /// Records the exchange and returns the response (adding what its parse found), or adds
    /// the transport finding.
    fn take(&mut self, sent: Sent) -> Option<Response> {
        self.record(sent.exchange);
        match sent.result {
            Ok(r) => {
                // `response.tree-size` only once a check has read a partial tree.
                self.add(r.json.scan_findings());
                Some(r)
            }
            Err(f) => {
                self.add(vec![*f]);
                None
            }
        }
    }
}

/// Result for a case whose execution panicked (a harness bug, reported, never fatal).
pub(super) fn crashed(id: CaseId, message: String) -> CaseResult {
    CaseResult {
        id,
        outcome: Outcome::Error,
        findings: vec![Finding::new(
            &catalog::HARNESS_INTERNAL,
            "",
            "the case to run to its end",
            message,
        )],
        omitted: vec![],
        exchanges: vec![],
        skip_reason: None,
        flaky: false,
        duration: std::time::Duration::ZERO,
        coverage: vec![],
    }
}

/// Runs one case.
pub(super) async fn case(runner: &Runner, planned: &PlannedCase, id: CaseId) -> CaseResult {
    let started = Instant::now();
    let mut c = Collector::new(planned, id, runner.options.max_findings_per_check);
    let (skip, retries) = politeness::counting_retries(async {
        match &planned.case.kind {
            CaseKind::Exchange(x) => exchange_case(runner, x, &mut c).await,
            CaseKind::Walk(w) => walk_case(runner, w, &mut c).await,
            CaseKind::ProductsSweep(s) => sweep_case(runner, s, &mut c).await,
            CaseKind::CrossMerchantCursor(x) => {
                crate::runner::cross_cursor::run(runner, x, &mut c).await
            }
        }
    })
    .await;
    // A case skipped for a refused discovery was refused itself: never a skip.
    let skip = match skip.err() {
        Some(reason) if preflight::refused_discovery(&reason) => {
            let span = planned.case.name.span.clone();
            let refused = preflight::refused(401, &Value::Null).map(|f| {
                let detail = format!("{}; {reason}", f.detail);
                f.with_detail(detail)
            });
            c.add(refused.into_iter().collect(), &span);
            None
        }
        other => other,
    };
    c.finish(runner, started, skip, retries)
}

/// The response must be a success (the mall list's `success` true, the products operation a
/// 2xx array); a finding under `check` otherwise, quoting the refusal.
fn served(
    check: &'static Check,
    endpoint: crate::verdict::endpoint::Endpoint,
    response: &crate::service::client::Response,
) -> Vec<Finding> {
    if properties::is_success(endpoint, response) {
        return vec![];
    }
    let said = String::from_utf8_lossy(&response.body);
    vec![Finding::new(
        check,
        "",
        "the answer the same body gets in its compact spelling (a success)",
        format!(
            "HTTP {}: {}",
            response.status,
            crate::verdict::event::truncate(said.trim(), 120)
        ),
    )]
}

/// How a robustness finding names a replayed fuzz request with nothing odd about its body.
const SAVED_FUZZ_REQUEST: &str = "the saved fuzz request";

/// Sends the request of an exchange case and runs its checks. Err is a skip reason.
async fn exchange_case(
    runner: &Runner,
    x: &ExchangeCase,
    c: &mut Collector<'_>,
) -> Result<(), String> {
    let case_span = c.planned.case.name.span.clone();
    // A saved fuzz regression is sent as the fuzzer sent it and judged by the fuzz properties.
    let properties = regressions::properties_of(x);
    // Under `--cursor response:`, a continuation page is sent with the first page's own next
    // cursor instead of the discovered mallSn (see `Discovery::continue_after_first_page`).
    let response_rule = matches!(&runner.options.cursor, Some(CursorRule::Response(_)));
    if x.expect.no_data.is_some()
        && !response_rule
        && discovered_end_cursor(x)
        && nothing_follows_discovered_mall(runner).await
    {
        return Err(
            "the merchant lists no mall after the discovered one (the first page ends with it): \
             the page after it is empty whether or not the request is refused, so a refusal \
             cannot be told from it (set MALLCHECK_MALL_SN to a mall another follows)"
                .to_string(),
        );
    }
    if x.request.auth == AuthMode::UnkeyedSignature && !runner.client.signs_unkeyed() {
        return Err(
            "an unkeyed-signature probe needs the md5 or hmac-sha256 signer with a key \
                    (the static and command signers' algorithm is not mallcheck's to run \
                    without its key): nothing to send"
                .to_string(),
        );
    }
    let mut page_size = None;
    let (sent, fuzz_body) = if properties.is_empty() {
        page_size = exchange_page_size(runner, x, c).await;
        (
            request::send(&runner.client, &runner.discovery, x, page_size).await?,
            None,
        )
    } else {
        let (sent, body) = regressions::send(&runner.client, &runner.discovery, x).await?;
        (sent, Some(body))
    };
    let request_body: Value =
        serde_json::from_str(&sent.exchange.request.body).unwrap_or(Value::Null);
    // A saved fuzz request, or a case's odd body (NaN, not JSON, deep nesting): a 5xx, a hang
    // or a dropped connection on it is a robustness finding, not a broken contract.
    let odd = match &fuzz_body {
        Some(body) => Some(body.to_bytes()),
        None => {
            let bytes = sent.exchange.request.body.as_bytes();
            robustness::oddity(bytes).map(|_| bytes.to_vec())
        }
    };
    let gate = runner.options.robustness;
    // A products call that must get no data, or a respelled one judged against its compact
    // spelling when refused, may be refused with an empty 2xx answer.
    let may_refuse = x.expect.no_data.is_some() || x.request.auth == AuthMode::SignedOtherSpelling;
    let mut sent = if x.endpoint == Endpoint::MallProducts && may_refuse {
        sent.empty_body_as_refusal()
    } else {
        sent
    };
    if let (Some(bytes), Err(f)) = (&odd, &mut sent.result) {
        let status = sent.exchange.response.as_ref().map(|r| r.status);
        if let Some(recast) = robustness::recast(gate, f, status, bytes, SAVED_FUZZ_REQUEST) {
            **f = recast;
        }
    }
    let Some(response) = c.take(sent, &case_span) else {
        return Ok(());
    };
    if let Some(asked) = small_page_turned_away(runner, x, &response).await {
        return Err(format!(
            "the service turns away the page size {asked} while it serves the spec's example \
             size {} (§8 states no page size limits): nothing to check at this size",
            page_limit::SPEC_PAGE_SIZE
        ));
    }
    if expects_acceptance(x)
        && let Some(refused) = preflight::refused_json(response.status, &response.json)
    {
        c.add(vec![refused], &case_span);
        return Ok(());
    }
    if expects_acceptance(x)
        && x.endpoint == Endpoint::MallProducts
        && (200..300).contains(&response.status)
        && let Some(count) = response.json.array_len()
    {
        runner.discovery.saw_products(count);
        let read = match (
            conforming::spu_ids(response.json.digest()),
            response.json.tree(),
        ) {
            (Some(ids), _) => Some((ids.to_vec(), conforming::sku_mark(response.json.digest()))),
            (None, Some(tree)) if !response.json.is_partial() => Some((
                products::spu_ids(tree),
                Some(crate::spec::wire::SkuMark::of_products(tree)),
            )),
            (None, Some(tree)) => Some((products::spu_ids(tree), None)),
            // A large body in doubt is read record by record: its ids are not kept here.
            (None, None) => None,
        };
        if let Some((ids, skus)) = read {
            let env_flag = x
                .request
                .headers
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("x-env-flag"))
                .map(|(_, value)| value.as_str());
            c.add(
                products_repeatable(&runner.discovery, &request_body, env_flag, &ids, skus),
                &case_span,
            );
        }
    }
    // A page of malls read by a single exchange is held to `mall.read-only` too (not only the
    // walks' pages): a products call or an auth probe that moves a mall shows in whichever
    // case reads it next.
    if x.endpoint == Endpoint::MallList && (200..300).contains(&response.status) {
        let (keys, states) = paging::page_states(&response.json);
        c.add(read_only(&runner.discovery, &keys, &states), &case_span);
    }
    // A refused raw-spelling probe is held against the same request in its compact spelling:
    // refused too, it is the configured credentials that are refused (could not test).
    let mut compact_refusal = None;
    if x.request.auth == AuthMode::SignedOtherSpelling
        && !properties::is_success(x.endpoint, &response)
    {
        let sent = request::send_signed_as(
            &runner.client,
            &runner.discovery,
            x,
            page_size,
            &AuthMode::Signed,
        )
        .await?;
        let Some(compact) = c.take(sent, &case_span) else {
            return Ok(());
        };
        if let Some(refused) = preflight::refused(compact.status, &compact.json) {
            c.add(vec![refused], &case_span);
            return Ok(());
        }
        if !properties::is_success(x.endpoint, &compact) {
            compact_refusal = Some(compact.status);
        }
    }
    if let Some(body) = &fuzz_body {
        let schemas = &runner.schemas;
        c.add(
            crate::cpu::cpu_bound(response.body.len(), || {
                regressions::judge(x.endpoint, body, &response, schemas, &properties)
            }),
            &case_span,
        );
    }
    let expect = &x.expect;
    let expects_server_error = expect
        .status
        .as_ref()
        .is_some_and(|s| s.value.lowest() >= 500);
    if !expects_server_error {
        let found = match &odd {
            Some(bytes) if response.status >= 500 => vec![robustness::server_error(
                gate,
                response.status,
                bytes,
                SAVED_FUZZ_REQUEST,
            )],
            Some(_) => vec![],
            None => http::server_error(response.status),
        };
        c.add(found, &case_span);
    }
    if let Some(status) = &expect.status {
        c.add(
            http::expected_status(response.status, status.value),
            &status.span,
        );
    }
    if response.body_is_json {
        c.add(http::content_type(&response.headers), &case_span);
    }
    if let Some(no_data) = &expect.no_data {
        c.add(no_data_of(no_data.check, &response), &no_data.span);
        // Only an Authorization probe: a user the merchant does not have may well be shown
        // an empty list (ownership probes pass any answer without data).
        if x.endpoint == Endpoint::MallList && no_data.check.id.starts_with("auth.") {
            c.add(
                empty_success_contradicts(runner, no_data.check, &request_body, &response).await,
                &no_data.span,
            );
        }
        // A refusal of any shape passes, but a mall-list envelope is §7.1's whatever the
        // answer: `success` false with the success code `0000` is no refusal a client can read.
        if x.endpoint == Endpoint::MallList && !expect.schema_enabled {
            c.add(success_code_disagrees(&response.json), &case_span);
        }
    }
    // Whether a check that read the body a value at a time met a value past its tree budget.
    let mut streamed_partial = false;
    // The error shape of the products operation is not shown (§7.4): only a 2xx with a JSON
    // body is validated (an empty 2xx refusal has none).
    let schema_applies = expect.schema_enabled
        && (x.endpoint != Endpoint::MallProducts
            || ((200..300).contains(&response.status) && response.body_is_json));
    if schema_applies {
        let (name, span) = match &expect.schema {
            Some(s) => (s.value.as_str(), s.span.clone()),
            None => (x.endpoint.response_schema(), case_span.clone()),
        };
        let mut found = c.bounded();
        let json = &response.json;
        if !runner.schemas.conforms(name, json.digest()) {
            crate::cpu::cpu_bound(json.bytes().len(), || {
                // A tree cut at its budget may end in a record cut in its middle: a body whose
                // tree broke the budget is checked from its bytes, a whole record at a time.
                if json.is_built() && !json.is_partial() {
                    runner.schemas.check_into(name, json, &mut found);
                } else {
                    // A large body: its records are checked one at a time, no tree built.
                    let outcome = runner.schemas.check_bytes_within(
                        name,
                        json.bytes(),
                        json.budget(),
                        &mut found,
                        &mut |_, _| {},
                    );
                    streamed_partial |= outcome.is_ok_and(|o| o.partial);
                }
                json.spell(found.kept_mut());
            });
        }
        c.absorb(found, &span);
        if x.endpoint == Endpoint::MallProducts {
            let ids = match conforming::spu_ids(response.json.digest()) {
                Some(ids) => ids.to_vec(),
                None => response
                    .json
                    .tree()
                    .map(products::spu_ids)
                    .unwrap_or_default(),
            };
            c.add(products::duplicate_ids(&ids), &case_span);
            // A digest vouches that no SKU is listed twice; a tree is read for it.
            if response.json.digest().is_none()
                && let Some(tree) = response.json.tree()
                && !response.json.is_partial()
            {
                c.add(
                    products::duplicate_sku_ids(&products::sku_ids(tree)),
                    &case_span,
                );
            }
        }
    }
    for check in &expect.checks {
        let findings = match check.check.id {
            id if id == catalog::OWNERSHIP_MERCHANT.id => {
                let merchant = ownership::requested_merchant(&request_body).unwrap_or_default();
                let mut found = c.bounded();
                streamed_partial |= merchant_of(&response.json, merchant, &mut found);
                c.absorb(found, &check.span);
                continue;
            }
            id if id == catalog::OWNERSHIP_UNKNOWN_MERCHANT.id => {
                if conforming::carries_no_records(response.json.digest()) {
                    vec![]
                } else {
                    ownership::unknown_merchant(&response.json)
                }
            }
            id if id == catalog::PRODUCTS_ORDER.id => {
                match conforming::spu_ids(response.json.digest()) {
                    Some(ids) => products::order_of_ids(ids),
                    None => products::order(&response.json),
                }
            }
            // The compact spelling not served either: the service answers both spellings
            // alike, so the signature's bytes are not what it turns away; the cases that send
            // the compact spelling report what is wrong with the answer.
            id if id == catalog::AUTH_SIGNATURE_RAW_BYTES.id => match compact_refusal {
                Some(_) => vec![],
                None => served(&catalog::AUTH_SIGNATURE_RAW_BYTES, x.endpoint, &response),
            },
            // Parsing accepted the id; checks that need several responses run in walks and sweeps.
            _ => vec![],
        };
        c.add(findings, &check.span);
    }
    // The assertions read a tree of only what their paths reach when the body conforms; an
    // assertion that fails there is evaluated again on the whole tree, so that its finding is
    // the whole tree's.
    // A tree cut at its budget misses records, and the last one kept may miss its fields: an
    // assertion over it would blame the service for what it did send. Such a body's
    // `response.tree-size` error (below) says what was not checked.
    let asserts = if !expect.asserts.is_empty() && response.json.is_partial() {
        let what = format!("the case's {} assertion(s)", expect.asserts.len());
        c.add(vec![response.json.unchecked_finding(&what)], &case_span);
        &[][..]
    } else {
        &expect.asserts[..]
    };
    let reached = if asserts.is_empty() {
        None
    } else {
        let mut reach = Reach::node();
        for a in asserts {
            reach.merge(&a.reach());
        }
        response.json.reached(&reach)
    };
    for a in asserts {
        let found = match &reached {
            Some(tree) => match assert::evaluate(a, tree) {
                found if found.is_empty() => found,
                _ => assert::evaluate(a, &response.json),
            },
            None => assert::evaluate(a, &response.json),
        };
        c.add(found, &a.span);
    }
    // A snapshot of the answer alone reads its tree too.
    if x.snapshot
        .as_ref()
        .is_some_and(|s| !s.walk && s.malls.is_none())
        && runner.snapshots.is_some()
    {
        let _ = response.json.value();
    }
    if let Some(f) = response.json.tree_finding(streamed_partial) {
        c.add(vec![f], &case_span);
    }
    // Said in the coverage either way, so that a report never calls an uncompared snapshot
    // a pass.
    match (&x.snapshot, &runner.snapshots) {
        (Some(spec), Some(snapshots)) => {
            // A walk snapshot holds the pages after this one too (the whole first walk); a
            // sampled one the products of several malls.
            let gathered = gather_snapshot(runner, x, spec, &request_body, &response).await;
            let (body, walked) = match gathered {
                None => (Value::Null, None),
                Some(Ok((value, scope))) => (value, Some(scope)),
                Some(Err(why)) => {
                    c.covered(catalog::SNAPSHOT_MATCH.id, format!("not compared: {why}"));
                    return Ok(());
                }
            };
            let body = if walked.is_some() {
                &body
            } else {
                response.json.value()
            };
            let found = snapshots.check(&c.id, spec, body);
            let scope = if found
                .iter()
                .any(|f| f.check.id == catalog::HARNESS_SNAPSHOT.id)
            {
                SNAPSHOT_FAILED.to_string()
            } else {
                match walked {
                    Some(w) => format!("{SNAPSHOT_COMPARED}: {w}"),
                    None => SNAPSHOT_COMPARED.to_string(),
                }
            };
            c.add(found, &case_span);
            c.covered(catalog::SNAPSHOT_MATCH.id, scope);
        }
        (Some(_), None) => c.covered(catalog::SNAPSHOT_MATCH.id, SNAPSHOT_OFF),
        (None, _) => {}
    }
    Ok(())
}

/// What a snapshot beyond the case's own answer holds, and its scope: the whole first walk
/// (`walk`), the products of sampled malls (`malls`); `None` for the answer alone, Err for
/// why it could not be gathered.
async fn gather_snapshot(
    runner: &Runner,
    x: &ExchangeCase,
    spec: &crate::case::model::SnapshotSpec,
    request_body: &Value,
    response: &Response,
) -> Option<Result<(Value, String), String>> {
    if spec.walk {
        let rule = runner.options.cursor.clone().unwrap_or_default();
        let first = response.json.value().clone();
        let count = request_body
            .pointer("/cursor/count")
            .and_then(Value::as_u64);
        let full_page = count.and_then(|n| runner.page_limit.full_page(n));
        let walked = walk::whole_walk(&runner.client, request_body, first, &rule, full_page).await;
        return Some(walked.map(|w| {
            let scope = w.scope();
            (w.value, scope)
        }));
    }
    let n = spec.malls?;
    let Some(list) = runner.discovery.list_body() else {
        return Some(Err(
            "there is no mall-list request to sample malls from".into()
        ));
    };
    let sampled =
        sample::sampled_products(&runner.client, list, request_body, &x.request.headers, n).await;
    Some(sampled.map(|s| {
        let scope = s.scope();
        (s.value, scope)
    }))
}

/// Whether the case's `cursor.endCursor` is the discovered mall's `mallSn`
/// (`${MALLCHECK_MALL_SN}` left to discovery): a cursor by the spec's last-record convention.
fn discovered_end_cursor(x: &ExchangeCase) -> bool {
    x.request
        .body
        .as_ref()
        .and_then(|b| b.value.pointer("/cursor/endCursor"))
        .and_then(Value::as_str)
        .is_some_and(|c| c.contains(crate::service::discover::MALL_SN_SENTINEL))
}

/// Whether discovery's mall is the merchant's last as its first page shows (discovery runs
/// here if no case ran it yet; a failure of it is left to the case's own sending).
async fn nothing_follows_discovered_mall(runner: &Runner) -> bool {
    let mut probe = Value::String(crate::service::discover::MALL_SN_SENTINEL.to_string());
    let _ = runner.discovery.resolve(&runner.client, &mut probe).await;
    runner.discovery.nothing_follows_target()
}

/// `payload::no_data`, answered without the tree when the fast path read a body without
/// records.
///
/// A refusal whose body is no one JSON document (the client gives it no tree) is searched piece
/// by piece: an error written before the data still serves the data.
fn no_data_of(check: &'static Check, response: &Response) -> Vec<Finding> {
    if !response.body_is_json {
        return payload::no_data_in_pieces(check, &response.body);
    }
    let json = &response.json;
    if conforming::carries_no_records(json.digest()) {
        return vec![];
    }
    payload::no_data(check, json)
}

/// A probe that must get no data, answered `success` true with an empty `data` for the first
/// page of the configured merchant, whose signed first page lists malls: no refusal (§7.1 calls
/// it a success), and no true answer either (it says the merchant has no mall). A service
/// that answers an unauthenticated call with an empty success hides the refusal a client
/// must see.
async fn empty_success_contradicts(
    runner: &Runner,
    check: &'static Check,
    request_body: &Value,
    response: &Response,
) -> Vec<Finding> {
    let first_page = request_body
        .pointer("/cursor/endCursor")
        .is_some_and(Value::is_null);
    let merchant = |body: &Value| {
        body.pointer("/filter/seller/merchantId")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let configured = runner.discovery.list_body().and_then(merchant);
    // Whatever the status (the spec shows none): the envelope itself claims the success.
    let empty_success = response.json.top("success") == Some(&Value::Bool(true))
        && response.json.data_len() == Some(0);
    if !first_page || !empty_success || configured.is_none() || merchant(request_body) != configured
    {
        return vec![];
    }
    // Discovery reads the signed first page (once a run): it lists malls when it found one.
    let mut probe = Value::String(crate::service::discover::MALL_SN_SENTINEL.to_string());
    if runner
        .discovery
        .resolve(&runner.client, &mut probe)
        .await
        .is_err()
    {
        return vec![];
    }
    vec![
        Finding::new(
            check,
            "/data",
            "a refusal (no merchant data, in any error shape)",
            "success true with an empty data array, where the signed first page of this \
             merchant lists malls",
        )
        .with_detail(
            "the answer claims the call succeeded and the merchant has no mall: a refusal hidden \
             as an empty success (§7.1: success is success true with code 0000)",
        ),
    ]
}

/// An envelope whose `success` and `code` disagree (§7.1: success is `success` true with code
/// `0000`), read from the root's members only.
fn success_code_disagrees(json: &LazyJson) -> Vec<Finding> {
    let success = json.top("success").and_then(Value::as_bool);
    let code = match json.top("code") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let mut out = match (success, &code) {
        (Some(success), Some(code)) if success != (code == "0000") => vec![Finding::new(
            &catalog::LIST_SUCCESS_CODE,
            "/code",
            "success true exactly when code is \"0000\" (§7.1)",
            format!("success {success} with code {code:?}"),
        )],
        _ => vec![],
    };
    // The envelope's code is a String (§4.1) in a failure too (§7.1: the mall list response
    // carries success, code and msg): a number is another type, whatever its digits.
    if success.is_some()
        && let Some(number @ Value::Number(_)) = json.top("code")
    {
        out.push(Finding::new(
            &catalog::LIST_ENVELOPE,
            "/code",
            "code a string (§4.1), in a failure envelope too",
            format!("the number {number}"),
        ));
    }
    out
}

/// `ownership::merchant_into`, skipped when the fast path read every mall's merchant as the
/// requested one; the malls are read one at a time when the page's tree is not built.
/// Returns whether a mall broke its tree budget (see [`LazyJson::tree_finding`]).
fn merchant_of(json: &LazyJson, merchant: &str, out: &mut Findings) -> bool {
    if conforming::all_malls_of(json.digest(), merchant) {
        return false;
    }
    crate::cpu::cpu_bound(json.bytes().len(), || {
        json.for_each_record(&mut |i, mall| {
            ownership::mall_merchant_into(i, mall, merchant, out);
        })
    })
}

/// Whether the case sends a signed call of the configured credentials and expects it served:
/// a refusal then means the case could not be tested. Probes that expect no data (an unknown
/// merchant, another seller) or a 4xx may be refused with any status.
fn expects_acceptance(x: &ExchangeCase) -> bool {
    x.request.auth == AuthMode::Signed
        && x.expect.no_data.is_none()
        && x.expect
            .status
            .as_ref()
            .is_none_or(|s| s.value.lowest() < 400)
        && !x
            .expect
            .checks
            .iter()
            .any(|c| c.check.id == catalog::OWNERSHIP_UNKNOWN_MERCHANT.id)
        && regressions::properties_of(x).is_empty()
}

/// Pages of the mall list fetched through the runner's client.
struct ClientPages<'r> {
    runner: &'r Runner,
    body: Value,
    /// The walk's exchanges and the findings of its pages.
    part: Part,
    merchant: Option<String>,
    /// When set, every listed mall is kept here (a products sweep's list).
    listed: Option<ListedMalls>,
    /// The walk reads only each record's `mallSn` (the default cursor rule): a page the fast
    /// path read is handed on as the `mallSn`s alone, and its tree is never built.
    slim: bool,
    /// A member of the first page's envelope that holds a cursor of the service's own
    /// ([`CURSOR_MEMBERS`]), under the default rule.
    cursor_member: Option<&'static str>,
    /// A response header of the first page that looks like a cursor (`X-Next-Cursor`), under
    /// the default rule: mallcheck reads cursors from the body only.
    cursor_header: Option<String>,
}

/// Names under which services give their next cursor in the envelope (the spec does not show
/// how the cursor comes back, §4.1).
const CURSOR_MEMBERS: [&str; 7] = [
    "endCursor",
    "nextCursor",
    "cursor",
    "next",
    "nextToken",
    "nextPageToken",
    "continuationToken",
];

/// A listed mall a products sweep may call.
#[derive(Debug, Clone)]
struct Listed {
    sn: String,
    signature: String,
    deleted: bool,
}

/// Bytes of mall numbers and signatures a sweep keeps of its list: a service whose list never
/// ends, its mall numbers a digit longer each time, made a sweep keep gigabytes.
const LISTED_BYTES: usize = 64 * 1024 * 1024;

/// The malls a sweep's walk listed, within [`LISTED_BYTES`].
#[derive(Debug, Default)]
struct ListedMalls {
    malls: Vec<Listed>,
    bytes: usize,
    /// A mall was left out: the list outgrew the bound.
    full: bool,
}

impl ListedMalls {
    fn push(&mut self, mall: Listed) {
        let bytes = mall.sn.len() + mall.signature.len();
        if self.full || self.bytes + bytes > LISTED_BYTES {
            self.full = true;
            return;
        }
        self.bytes += bytes;
        self.malls.push(mall);
    }
}

impl Extend<Listed> for ListedMalls {
    fn extend<I: IntoIterator<Item = Listed>>(&mut self, malls: I) {
        for mall in malls {
            self.push(mall);
        }
    }
}

impl PageSource for ClientPages<'_> {
    fn blame_last_page(&mut self) {
        self.part.blame_last();
    }

    fn read_states(&mut self, records: &paging::Records) -> Vec<Finding> {
        read_only(&self.runner.discovery, &records.keys, &records.states)
    }

    async fn fetch(&mut self, cursor: Option<&str>, count: u64) -> Page {
        let mut body = self.body.clone();
        super::cross_cursor::set_cursor(&mut body, cursor, count);
        let sent = self
            .runner
            .client
            .send_json(Endpoint::MallList, &body, &AuthMode::Signed, &[])
            .await;
        self.part.record(sent.exchange);
        let response = match sent.result {
            Ok(r) => r,
            Err(f) => return Page::Stop(vec![*f]),
        };
        let mut stop = http::server_error(response.status);
        if !stop.is_empty() {
            self.part.blame_last();
            return Page::Stop(stop);
        }
        if let Some(refused) = preflight::refused_json(response.status, &response.json) {
            self.part.blame_last();
            return Page::Stop(vec![refused]);
        }
        let schemas = &self.runner.schemas;
        let mut found = self.part.bounded();
        // A page after the first turned away with an error status (a framework's 404 `{"detail":
        // ...}` past the list's end): no success envelope is owed there (§7.2, §7.3 leave
        // failures open, as for refusals); `paging.page-failed` below judges the page.
        let turned_away = cursor.is_some() && !(200..300).contains(&response.status);
        let streamed = if turned_away {
            None
        } else if response.json.digest().is_none() && !response.json.is_built() {
            Some(self.stream_page(&response, count, &mut found))
        } else {
            if !schemas.conforms("mall-list-response", response.json.digest()) {
                found.extend(response.json.findings());
                crate::cpu::cpu_bound(response.json.bytes().len(), || {
                    schemas.validate_into("mall-list-response", &response.json, &mut found);
                    response.json.spell(found.kept_mut());
                });
            }
            if let Some(merchant) = &self.merchant {
                merchant_of(&response.json, merchant, &mut found);
            }
            None
        };
        if !found.is_empty() {
            self.part.blame_last();
        }
        self.part.absorb(found);
        let success = response.json.success_is_true();
        let has_data = response.json.data_len().is_some();
        if !success || !has_data {
            self.part.blame_last();
            let mut failed = Finding::new(
                &catalog::PAGING_PAGE_FAILED,
                "",
                "a success envelope with a data array",
                format!(
                    "HTTP {}, success {}, code {}",
                    response.status,
                    response
                        .json
                        .top("success")
                        .map_or("missing".into(), Value::to_string),
                    response
                        .json
                        .top("code")
                        .map_or("missing".into(), Value::to_string)
                ),
            );
            // A page after the first, turned away, under the default rule (the last record's
            // mallSn as the next endCursor), while the first page gave a cursor of its own: the
            // service pages another way (the spec does not show how the cursor goes back), and
            // the list could not be walked by this rule: an error of the run, not the service's.
            if cursor.is_some()
                && self.slim
                && let Some(member) = self.cursor_member
            {
                failed = Finding::new(
                    &catalog::HARNESS_CURSOR_RULE,
                    "/cursor/endCursor",
                    "the next page by the cursor rule in force (the last record's mallSn)",
                    format!(
                        "{}; the first page gave a cursor of its own in `{member}`: is the \
                         cursor rule right (--cursor response:/{member})?",
                        failed.actual
                    ),
                );
            } else if cursor.is_some()
                && self.slim
                && let Some(header) = &self.cursor_header
            {
                failed = Finding::new(
                    &catalog::HARNESS_CURSOR_RULE,
                    "/cursor/endCursor",
                    "the next page by the cursor rule in force (the last record's mallSn)",
                    format!(
                        "{}; the first page gave what looks like a cursor in its response header \
                         `{header}`, and mallcheck reads cursors from the body only: the list \
                         could not be walked",
                        failed.actual
                    ),
                );
            } else if cursor.is_some() && self.slim {
                failed = failed.with_detail(
                    "the next page was asked for with the last record's mallSn as \
                     cursor.endCursor (the default cursor rule): if the service gives its next \
                     cursor another way, say so with --cursor (e.g. response:/nextCursor)",
                );
            }
            stop.push(failed);
            return Page::Stop(stop);
        }
        if cursor.is_none() && self.slim {
            self.cursor_header = response
                .headers
                .iter()
                .find(|(name, value)| {
                    let name = name.as_str();
                    (name.contains("cursor")
                        || name.contains("continuation")
                        || name.contains("page-token")
                        || name.contains("next"))
                        && !value.is_empty()
                })
                .map(|(name, _)| name.to_string());
            self.cursor_member = CURSOR_MEMBERS.iter().copied().find(|m| {
                response
                    .json
                    .top(m)
                    .and_then(Value::as_str)
                    .is_some_and(|v| !v.is_empty())
            });
        }
        if let Some(page) = streamed {
            return Page::Records(page);
        }
        if let Some(listed) = &mut self.listed
            && let Some(Digest::Envelope(e)) = response.json.digest()
        {
            listed.extend(e.malls.iter().flatten().map(|m| Listed {
                sn: m.sn.clone(),
                signature: m.signature.clone(),
                deleted: m.deleted,
            }));
        } else if let Some(listed) = &mut self.listed {
            let malls = response.json.get("data").and_then(Value::as_array);
            listed.extend(malls.into_iter().flatten().filter_map(Listed::of));
        }
        if self.slim
            && let Some(Digest::Envelope(e)) = response.json.digest()
        {
            // All the walk reads of a page under the default cursor rule (`paging::walk`).
            let malls = e.malls.as_deref().unwrap_or_default();
            return Page::Records(paging::Records {
                len: malls.len(),
                keys: malls
                    .iter()
                    .enumerate()
                    .take_while(|(i, _)| paging::Records::keeps(*i, count))
                    .map(|(_, m)| paging::key_of(&m.sn))
                    .collect(),
                states: malls
                    .iter()
                    .enumerate()
                    .take_while(|(i, _)| paging::Records::keeps(*i, count))
                    .map(|(_, m)| {
                        Some(crate::spec::wire::MallState {
                            code: m.state,
                            owner: crate::spec::wire::owner_of(&m.merchant_id),
                        })
                    })
                    .collect(),
                last: malls.last().map(|m| json!({"mallSn": m.sn})),
                envelope: json!({"success": e.success, "code": e.code, "data": []}),
            });
        }
        Page::Body(response.json.into_value())
    }
}

/// `mall.read-only` of one mall-list page: each record's state (`keys` and `states` by index
/// in `data`) held to the state the run first read its mall in, whichever case read it.
fn read_only(
    discovery: &crate::service::discover::Discovery,
    keys: &[String],
    states: &[Option<crate::spec::wire::MallState>],
) -> Vec<Finding> {
    // A mall is its merchant's `mallSn`.
    let read = keys
        .iter()
        .zip(states)
        .enumerate()
        .filter_map(|(i, (key, state))| {
            let state = (*state)?;
            Some((
                i,
                crate::service::discover::mall_key(state.owner, key),
                state.code,
            ))
        });
    let mut found: Vec<Finding> = discovery
        .read_descriptions(
            keys.iter()
                .zip(states)
                .enumerate()
                .filter_map(|(i, (key, state))| Some((i, key.as_str(), (*state)?.code))),
        )
        .into_iter()
        .map(|(i, problem)| description_finding(i, &keys[i], &problem))
        .collect();
    let moved = discovery.read_states(read).into_iter().map(|(i, before)| {
        let now = states[i].map_or(before, |s| s.code);
        let changed = crate::spec::wire::content_change(before, now);
        let changed = if changed.is_empty() {
            String::new()
        } else {
            format!("; changed: {changed}")
        };
        Finding::new(
            &catalog::MALL_READ_ONLY,
            format!("/data/{i}"),
            format!(
                "mallSn {} as an earlier read of this run saw it: {}",
                keys[i],
                crate::spec::wire::state_text(before)
            ),
            format!("{}{changed}", crate::spec::wire::state_text(now)),
        )
    });
    found.extend(moved);
    found
}

/// The finding of a described value that disagrees with an earlier read of the run: two of
/// §2.2's listed values with one description breaks `mall.descriptions`; anything else (one
/// value with two descriptions, a cross-city status other than 0 described as 0) is observed.
fn description_finding(
    i: usize,
    sn: &str,
    problem: &crate::service::discover::DescriptionProblem,
) -> Finding {
    use crate::service::discover::DescriptionProblem;
    use crate::spec::wire::DescribedField;
    match problem {
        DescriptionProblem::Shared {
            field,
            value,
            other,
            mall,
        } => {
            let (name, desc) = field.names();
            let listed = |v: i64| match field {
                DescribedField::State => (0..=2).contains(&v),
                DescribedField::InternalState => (0..=1).contains(&v),
                DescribedField::PayToolCode => (2..=3).contains(&v),
                DescribedField::CrossCityPaymentStatus | DescribedField::PaymentStatus => false,
            };
            let check = if listed(*value) && listed(*other) {
                &catalog::MALL_DESCRIPTIONS
            } else {
                &catalog::MALL_DESCRIPTIONS_STABLE
            };
            Finding::new(
                check,
                format!("/data/{i}"),
                format!(
                    "a {desc} of {name} {value} unlike that of {name} {other} (mall {mall} \
                     of this run): each describes its own value"
                ),
                format!("mall {sn}: {name} {value} carries the {desc} of {name} {other}"),
            )
        }
        DescriptionProblem::Varies { field, value, mall } => {
            let (name, desc) = field.names();
            Finding::new(
                &catalog::MALL_DESCRIPTIONS_STABLE,
                format!("/data/{i}"),
                format!("the {desc} {name} {value} carried on mall {mall} of this run"),
                format!("mall {sn}: another {desc} for {name} {value}"),
            )
        }
    }
}

impl<'a> ClientPages<'a> {
    /// The pages of `body`'s list, walked by `cursor`, their findings kept up to `cap` a check;
    /// each mall held to `merchant` when given.
    fn new(
        runner: &'a Runner,
        body: &Value,
        cap: usize,
        merchant: Option<String>,
        cursor: &CursorRule,
    ) -> ClientPages<'a> {
        ClientPages {
            runner,
            body: body.clone(),
            part: Part::new(cap),
            merchant,
            listed: None,
            slim: *cursor == CursorRule::default(),
            cursor_member: None,
            cursor_header: None,
        }
    }

    /// Pages of `body`'s list fetched outside any case's record (a page-size probe): their
    /// exchanges and findings are not reported. `slim` under the default cursor rule.
    fn probe(runner: &'a Runner, body: &Value, slim: bool) -> ClientPages<'a> {
        ClientPages {
            slim,
            ..ClientPages::new(runner, body, 1, None, &CursorRule::default())
        }
    }
}

impl ClientPages<'_> {
    /// Checks a page one record at a time (schema, each mall's merchant when asked) into
    /// `found`, keeping what the walk reads of each record and, for a sweep, each listed mall.
    fn stream_page(
        &mut self,
        response: &Response,
        count: u64,
        found: &mut Findings,
    ) -> paging::Records {
        let json = &response.json;
        found.extend(json.scan_findings());
        let mut owned = self.part.bounded();
        let mut page = paging::Records::default();
        let mut listed = Vec::new();
        let keep_listed = self.listed.is_some();
        let merchant = self.merchant.as_deref();
        let last_index = json.data_len().and_then(|n| n.checked_sub(1));
        let outcome = {
            let mut each = |i: usize, mall: &Value| {
                if i == 0 {
                    // A `data` given twice: the tree keeps the last, so does the walk.
                    page.keys.clear();
                    page.states.clear();
                    listed.clear();
                }
                page.len = i + 1;
                if paging::Records::keeps(i, count) {
                    page.keys.push(paging::record_key(mall));
                    page.states.push(crate::spec::wire::mall_state_of(mall));
                }
                if Some(i) == last_index {
                    page.last = Some(mall.clone());
                }
                if keep_listed && let Some(l) = Listed::of(mall) {
                    listed.push(l);
                }
                if let Some(m) = merchant {
                    ownership::mall_merchant_into(i, mall, m, &mut owned);
                }
            };
            crate::cpu::cpu_bound(json.bytes().len(), || {
                self.runner.schemas.validate_bytes_within(
                    "mall-list-response",
                    json.bytes(),
                    json.budget(),
                    found,
                    &mut each,
                )
            })
        };
        json.spell(found.kept_mut());
        found.append(owned);
        let partial = outcome.as_ref().is_ok_and(|o| o.partial);
        if let Some(f) = json.tree_finding(partial) {
            found.push(f);
        }
        if let Ok(StreamOutcome {
            shape: Streamed::Envelope { envelope, .. },
            ..
        }) = outcome
        {
            page.envelope = envelope;
        }
        if let Some(all) = &mut self.listed {
            all.extend(listed);
        }
        page
    }
}

impl Listed {
    /// The listed mall of a mall-list record, when it has a number and a signature.
    fn of(mall: &Value) -> Option<Listed> {
        Some(Listed {
            sn: mall.get("mallSn").and_then(Value::as_str)?.to_string(),
            signature: mall.get("signature").and_then(Value::as_str)?.to_string(),
            deleted: mall.get("isDelete").and_then(Value::as_i64) == Some(1),
        })
    }
}

/// Walks the cursor at every size (twice when `repeat`) and compares the walks.
///
/// A bounded run (the default) walks the whole list at the largest size only and the first
/// [`RunOptions::walk_prefix`](crate::runner::RunOptions) records at the smaller sizes (at
/// least one record past the first page of the largest size, so that a record lost at a page
/// boundary shows), and compares each prefix with the same prefix of the whole walk. Every
/// page fetched is under the record checks (and ownership when asked).
async fn walk_case(runner: &Runner, w: &WalkCase, c: &mut Collector<'_>) -> Result<(), String> {
    let span = w.body.span.clone();
    let mut body = w.body.value.clone();
    runner.discovery.resolve(&runner.client, &mut body).await?;
    let merchant = w.ownership.then(|| {
        ownership::requested_merchant(&body)
            .unwrap_or_default()
            .to_string()
    });
    let max_pages = match (w.max_pages, runner.options.max_pages_cap) {
        (Some(own), Some(cap)) => own.min(cap),
        (Some(own), None) => own,
        (None, _) => runner.options.max_pages,
    };
    let exhaustive = runner.options.exhaustive;
    let sizes = served_sizes(runner, &body, &w.sizes, c).await;
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let prefix = runner.options.walk_prefix.max(
        usize::try_from(largest)
            .unwrap_or(usize::MAX)
            .saturating_add(1),
    );
    // Every walk (each size, and the repeat) runs at once: pages of one walk follow each
    // other's cursor, but walks are independent. The client bounds the requests in flight
    // (--jobs) and the rate of the whole run; the results are merged below in the planned
    // order, so the case reads the same whatever order the walks finished in.
    let rounds = if w.repeat { 2 } else { 1 };
    let mut planned: Vec<(u64, u32, bool, WalkOptions)> = Vec::new();
    for &size in &sizes {
        let bounded = !exhaustive && size != largest;
        let full_page = runner.page_limit.full_page(size);
        if let Some(served) = full_page {
            c.covered(
                catalog::PAGING_PAGE_SIZE.id,
                format!(
                    "the service serves {served} records a page when asked for more, and more \
                     malls follow (§8 states no maximum page size): the walk at size {size} \
                     takes pages of {served} records as full"
                ),
            );
        }
        let options = WalkOptions {
            count: size,
            max_pages: pages_for(max_pages, size, full_page),
            cursor: match &runner.options.cursor {
                Some(rule) if w.cursor == CursorRule::default() => rule.clone(),
                _ => w.cursor.clone(),
            },
            max_findings_per_check: runner.options.max_findings_per_check,
            max_records: bounded.then_some(prefix),
            full_page,
        };
        for round in 0..rounds {
            planned.push((size, round, bounded, options.clone()));
        }
    }
    let cap = c.findings.cap();
    let done = futures_util::future::join_all(planned.iter().map(|(_, _, _, options)| {
        let mut source = ClientPages::new(runner, &body, cap, merchant.clone(), &options.cursor);
        async move {
            let walk = paging::walk(&mut source, options).await;
            (source.part, walk)
        }
    }))
    .await;
    let mut done = done;
    // A wrong `response:` rule cuts every walk short at its first full page: the case could
    // not be tested, and walks cut short are not compared.
    if let Some((_, _, _, options)) = planned.first()
        && let Some(problem) = paging::cursor_rule_problem(
            &options.cursor,
            &done.iter().map(|(_, walk)| walk).collect::<Vec<_>>(),
        )
    {
        for (part, _) in done {
            c.merge(part, &span);
        }
        c.add(vec![problem], &span);
        return Ok(());
    }
    // §8 states no page size limits: a walk below the spec's example size whose first page was
    // turned away, while a walk at the example size or above read pages, is left out (said in
    // the coverage), not failed.
    let turned_away: Vec<u64> = planned
        .iter()
        .zip(&done)
        .filter(|((size, ..), (_, walk))| {
            *size < page_limit::SPEC_PAGE_SIZE && first_page_turned_away(walk)
        })
        .map(|((size, ..), _)| *size)
        .collect();
    let served_large = planned.iter().zip(&done).any(|((size, ..), (_, walk))| {
        *size >= page_limit::SPEC_PAGE_SIZE && !walk.steps.is_empty()
    });
    let mut sizes = sizes;
    if served_large && !turned_away.is_empty() {
        let keep: Vec<bool> = planned
            .iter()
            .map(|(size, ..)| !turned_away.contains(size))
            .collect();
        let mut keeps = keep.iter();
        planned.retain(|_| *keeps.next().unwrap_or(&true));
        let mut keeps = keep.iter();
        done.retain(|_| *keeps.next().unwrap_or(&true));
        sizes.retain(|s| !turned_away.contains(s));
        let mut list: Vec<String> = turned_away.iter().map(u64::to_string).collect();
        list.dedup();
        c.covered(
            catalog::PAGING_PAGE_SIZE.id,
            format!(
                "the service turns away pages of fewer than {} records (§8 states no page size \
                 limits): size {} not walked",
                page_limit::SPEC_PAGE_SIZE,
                list.join(", ")
            ),
        );
    }
    // The reference of size-consistency: the first walk, or in a bounded run the whole walk.
    let reference = if exhaustive {
        0
    } else {
        sizes.iter().position(|&s| s == largest).unwrap_or(0)
    };
    blame_differences(&planned, &mut done, reference);
    let planned_options: Vec<(u64, u32, bool, WalkOptions)> =
        planned.iter().take(1).cloned().collect();
    // The whole list as a walk read it to a short page, for the walks that ended at a failure
    // on the page after a full one: having read it all, that failure is how the service ends
    // its list (the spec does not show how; "no more data" as a failure code is common).
    let whole_list = sizes.get(reference).and_then(|&reference_size| {
        let at = planned
            .iter()
            .position(|(size, round, ..)| *size == reference_size && *round == 0)?;
        let (_, walk) = done.get(at)?;
        (walk.complete && !walk.truncated && !walk.failed_after_full_page)
            .then(|| walk.keys.clone())
    });
    let mut walks: Vec<(String, paging::Walk)> = Vec::new();
    let mut pages = 0usize;
    for ((size, round, bounded, _), (part, mut walk)) in planned.into_iter().zip(done) {
        c.merge(part, &span);
        pages += walk.steps.len();
        end_failure_observed(&mut walk, whole_list.as_ref());
        let what = if bounded {
            format!("size {size} (first {prefix} records)")
        } else {
            format!("size {size}")
        };
        let label = if round == 0 {
            format!("walk at {what}")
        } else {
            format!("second walk at {what}")
        };
        let found = std::mem::replace(&mut walk.findings, c.bounded());
        c.absorb(found, &span);
        if round == 1 {
            if let Some((first_label, first)) = walks.last() {
                let f = paging::compare_walks(
                    &catalog::PAGING_REPEATABLE,
                    (first_label, first),
                    (&label, &walk),
                );
                c.add(f, &span);
            }
        } else {
            walks.push((label, walk));
        }
    }

    if let Some((label_a, a)) = walks.get(reference) {
        for (i, (label_b, b)) in walks.iter().enumerate() {
            if i == reference {
                continue;
            }
            c.add(
                paging::compare_walks(
                    &catalog::PAGING_SIZE_CONSISTENCY,
                    (label_a, a),
                    (label_b, b),
                ),
                &span,
            );
        }
    }
    // An off-by-one at the list's end shows only at a size its length is a multiple of (the
    // last page exactly full): when no size walked is one, the whole list is walked once more
    // in one page of its length, and held to the reference.
    if let Some((label_a, a)) = walks.get(reference)
        && a.complete
        && !a.truncated
        && let Ok(n) = u64::try_from(a.keys.len())
        && n > 1
        && n <= largest
        && !sizes.iter().any(|&s| s > 1 && n.is_multiple_of(s))
        && let Some((_, _, _, first)) = planned_options.first()
    {
        let full_page = runner.page_limit.full_page(n);
        let options = WalkOptions {
            count: n,
            max_pages: pages_for(max_pages, n, full_page),
            max_records: None,
            full_page,
            ..first.clone()
        };
        let mut source = ClientPages::new(runner, &body, cap, merchant.clone(), &options.cursor);
        let mut walk = paging::walk(&mut source, &options).await;
        if first_page_turned_away(&walk) {
            // §8 states no page sizes: a service may take only 10, 20, 50 or 100.
            c.covered(
                catalog::PAGING_PAGE_SIZE.id,
                format!("the service turns away a page of {n} records (the list's length): not walked at it"),
            );
        } else {
            end_failure_observed(&mut walk, Some(&a.keys));
            c.merge(source.part, &span);
            let found = std::mem::replace(&mut walk.findings, c.bounded());
            c.absorb(found, &span);
            let label = format!("walk at size {n} (the list's length: its last page exactly full)");
            c.add(
                paging::compare_walks(
                    &catalog::PAGING_SIZE_CONSISTENCY,
                    (label_a, a),
                    (&label, &walk),
                ),
                &span,
            );
        }
    }
    match walks.get(reference) {
        // A whole list without a mall: the record checks had nothing to check.
        Some((_, w)) if w.complete && w.keys.is_empty() => runner.discovery.saw_empty_list(),
        Some((_, w)) if w.complete && runner.discovery.is_configured_list(&body) => {
            runner.discovery.saw_malls()
        }
        _ => {}
    }
    walk_coverage(c, w, &sizes, &walks, reference, prefix, pages, exhaustive);
    Ok(())
}

/// A walk that read the whole list (`whole`, as a walk that ended at a short page read it) and
/// then met a failure envelope answered 2xx, or a 404 or 410, on the page after its last full
/// page: that answer is how the service ends its list (the spec shows neither how a list ends
/// nor any status code), observed, not `paging.page-failed`.
fn end_failure_observed(walk: &mut paging::Walk, whole: Option<&paging::Keys>) {
    if !walk.failed_after_full_page || whole != Some(&walk.keys) {
        return;
    }
    for f in walk.findings.kept_mut() {
        // A 2xx answer (a business code such as "no more data") or a 404 or 410 (no such
        // page) says the list ended; any other 4xx refuses the cursor of the service's own
        // last record, and a 5xx fails on it.
        let ends = ["HTTP 2", "HTTP 404", "HTTP 410"]
            .iter()
            .any(|status| f.actual.starts_with(status));
        if f.check.id == catalog::PAGING_PAGE_FAILED.id && ends {
            *f = Finding::new(
                &catalog::PAGING_END_SIGNAL,
                f.pointer.clone(),
                "an empty success page after the last mall",
                format!("{}, after a walk that read the whole list", f.actual),
            )
            .with_detail(f.detail.clone());
        }
    }
}

/// Whether a walk stopped at its first page, turned away (`paging.page-failed` or a refusal,
/// without a server error: see [`turned_away_or_failed`]).
fn first_page_turned_away(walk: &paging::Walk) -> bool {
    walk.steps.is_empty()
        && turned_away_or_failed(walk.findings.kept()) == page_limit::Probe::TurnedAway
}

/// A walk's page bound (`--max-pages`, counted in pages of `size`) for pages of `full_page`
/// records: a service that serves fewer a page needs more pages for the same list.
fn pages_for(max_pages: u64, size: u64, full_page: Option<u64>) -> u64 {
    match full_page {
        Some(n) if n > 0 => max_pages.saturating_mul(size.div_ceil(n)),
        _ => max_pages,
    }
}

/// Marks, in the walk that differs, the page where a walk comparison of [`walk_case`] finds
/// its first difference (the second walk of a size against the first, each size's first walk
/// against the `reference`-th), so that a report shows that page.
fn blame_differences(
    planned: &[(u64, u32, bool, WalkOptions)],
    done: &mut [(Part, paging::Walk)],
    reference: usize,
) {
    let mut blame = |a: usize, b: usize| {
        let page = paging::first_difference(&done[a].1, &done[b].1)
            .and_then(|index| done[b].1.page_of(index));
        if let Some(page) = page {
            done[b].0.blame(page);
        }
    };
    let firsts: Vec<usize> = (0..planned.len()).filter(|&i| planned[i].1 == 0).collect();
    for (i, (_, round, _, _)) in planned.iter().enumerate().skip(1) {
        if *round == 1 {
            blame(i - 1, i);
        }
    }
    if let Some(&a) = firsts.get(reference) {
        for &b in firsts.iter().filter(|&&b| b != a) {
            blame(a, b);
        }
    }
}

/// The sizes to walk at: each size the case asks for, or the largest size the service
/// serves when it turns a larger one away (§8 states no maximum); said in the coverage.
async fn served_sizes(
    runner: &Runner,
    body: &Value,
    asked: &[u64],
    c: &mut Collector<'_>,
) -> Vec<u64> {
    let mut sizes: Vec<u64> = Vec::with_capacity(asked.len());
    let mut capped: Vec<u64> = Vec::new();
    for &size in asked {
        let served = served_size(runner, body, size).await;
        if served != size {
            capped.push(size);
        }
        if !sizes.contains(&served) {
            sizes.push(served);
        }
    }
    if !capped.is_empty()
        && let Some(limit) = runner.page_limit.limit().await
    {
        let list: Vec<String> = capped.iter().map(u64::to_string).collect();
        c.covered(
            catalog::PAGING_PAGE_SIZE.id,
            format!(
                "the service turns away pages of more than {limit} records (§8 states no \
                 maximum page size): size {} walked at {limit}",
                list.join(", ")
            ),
        );
    }
    sizes
}

/// The size to fetch pages at when `asked` is wanted (see [`page_limit`]). The first pages
/// asked for are the configured merchant's (else `body`'s), signed as the run signs.
pub(super) async fn served_size(runner: &Runner, body: &Value, asked: u64) -> u64 {
    let body = runner.discovery.list_body().unwrap_or(body);
    runner
        .page_limit
        .size_for(asked, |count| first_page(runner, body, count))
        .await
}

/// The body and `cursor.count` of a signed mall-list exchange case sent as JSON (the cases whose
/// page size the service may turn away); `None` for any other case.
fn signed_list_count(x: &ExchangeCase) -> Option<(&Value, u64)> {
    let request = &x.request;
    if x.endpoint != Endpoint::MallList
        || request.auth != AuthMode::Signed
        || request.raw.is_some()
        || request.raw_hex.is_some()
    {
        return None;
    }
    let body = &request.body.as_ref()?.value;
    Some((body, body.pointer("/cursor/count").and_then(Value::as_u64)?))
}

/// The `cursor.count` of a signed mall-list exchange case asking for fewer records than the
/// spec's example size, when the service turned that page away (a 4xx, or a 2xx that is no
/// success) while it serves a first page at the example size (asked for now, once): §8 states
/// no page size limits, so a service may refuse small pages too. `None` otherwise.
async fn small_page_turned_away(
    runner: &Runner,
    x: &ExchangeCase,
    response: &Response,
) -> Option<u64> {
    let (body, asked) = signed_list_count(x)?;
    let refused = (400..500).contains(&response.status)
        || ((200..300).contains(&response.status) && !response.json.success_is_true());
    if asked >= page_limit::SPEC_PAGE_SIZE || !refused {
        return None;
    }
    let list = runner.discovery.list_body().unwrap_or(body);
    (first_page(runner, list, page_limit::SPEC_PAGE_SIZE).await == page_limit::Probe::Served)
        .then_some(asked)
}

/// The page size a signed mall-list exchange case is sent at when the service turns its
/// `cursor.count` away (said in the coverage); `None` to send the case as written.
async fn exchange_page_size(
    runner: &Runner,
    x: &ExchangeCase,
    c: &mut Collector<'_>,
) -> Option<u64> {
    let (body, asked) = signed_list_count(x)?;
    let served = served_size(runner, body, asked).await;
    if served == asked {
        return None;
    }
    c.covered(
        catalog::PAGING_PAGE_SIZE.id,
        format!(
            "the service turns away pages of more than {served} records (§8 states no maximum \
             page size): size {asked} asked at {served}"
        ),
    );
    Some(served)
}

/// How the service answers the first page at `count` (an exchange outside the case's own).
async fn first_page(runner: &Runner, body: &Value, count: u64) -> page_limit::Probe {
    let mut source = ClientPages::probe(runner, body, true);
    let page = match source.fetch(None, count).await {
        Page::Body(page) => paging::Records::of_body(page, count),
        Page::Records(page) => Some(page),
        Page::Stop(findings) => return turned_away_or_failed(&findings),
    };
    if let Some(page) = page {
        // Its malls are a read of the run like any other (`mall.read-only`).
        runner.discovery.first_read(&page.keys, &page.states);
        note_silent_cap(runner, body, count, &page).await;
    }
    page_limit::Probe::Served
}

/// Whether the service serves fewer records a page than asked without a word (§8 states no
/// limit): a first page at `count` shorter than asked, of at least the spec's size, after
/// which the next page (by the run's last-record cursor rule) lists more malls. Then pages of
/// that length are full ones for every walk of the run ([`PageLimit::full_page`]). One request
/// more, once per size probed, and only when the first page is that short.
async fn note_silent_cap(runner: &Runner, body: &Value, count: u64, first: &paging::Records) {
    let records = first.len as u64;
    if !(page_limit::SPEC_PAGE_SIZE..count).contains(&records) {
        return;
    }
    // Under a `response:` rule the cursor says whether more follows, whatever the length.
    let CursorRule::LastRecord(pointer) = runner.options.cursor.clone().unwrap_or_default() else {
        return;
    };
    let Some(cursor) = first
        .last
        .as_ref()
        .and_then(|r| r.pointer(&pointer))
        .and_then(paging::cursor_text)
    else {
        return;
    };
    let mut source = ClientPages::probe(runner, body, pointer == "/mallSn");
    let next = match source.fetch(Some(&cursor), count).await {
        Page::Body(page) => paging::Records::of_body(page, count),
        Page::Records(page) => Some(page),
        Page::Stop(_) => None,
    };
    if let Some(next) = next
        && next.keys.iter().any(|k| !first.keys.contains(k))
    {
        runner.page_limit.saw_cap(records);
    }
}

/// A first page at some size that was not served: turned away (a refusal) or failed.
fn turned_away_or_failed(findings: &[Finding]) -> page_limit::Probe {
    let is = |id: &str| findings.iter().any(|f| f.check.id == id);
    // A refusal (a 401 or 403, or words of authentication: "unauthorized page size") is a size
    // turned away too: the bisection goes on only once the spec's size 10 is served with the
    // same credentials, so refused credentials stay refused.
    if (is(catalog::PAGING_PAGE_FAILED.id) || is(catalog::PREFLIGHT.id))
        && !is(catalog::HTTP_SERVER_ERROR.id)
    {
        page_limit::Probe::TurnedAway
    } else {
        page_limit::Probe::Failed
    }
}

/// States what the walks of a case covered.
#[allow(clippy::too_many_arguments)]
fn walk_coverage(
    c: &mut Collector<'_>,
    w: &WalkCase,
    walked: &[u64],
    walks: &[(String, paging::Walk)],
    reference: usize,
    prefix: usize,
    pages: usize,
    exhaustive: bool,
) {
    let Some((_, full)) = walks.get(reference) else {
        return;
    };
    let largest = walked.get(reference).copied().unwrap_or(0);
    let list = if full.complete {
        format!("{} malls", thousands(full.keys.len()))
    } else {
        format!(
            "a list that did not end normally ({} malls read)",
            thousands(full.keys.len())
        )
    };
    let sizes = |pick: &dyn Fn(u64) -> bool| {
        let picked: Vec<String> = walked
            .iter()
            .filter(|&&s| pick(s))
            .map(u64::to_string)
            .collect();
        let noun = if picked.len() == 1 { "size" } else { "sizes" };
        format!("{noun} {}", picked.join(", "))
    };
    let small = sizes(&|s| s != largest);
    let mut record_checks =
        "paging.page-size, paging.duplicate, paging.endless, schema".to_string();
    if w.ownership {
        record_checks.push_str(", ownership.merchant");
    }
    c.covered(
        record_checks,
        format!("every page fetched ({} pages)", thousands(pages)),
    );
    let prefix_read = |small: &str| {
        let n = full.keys.len();
        if full.complete && n <= prefix {
            format!("the whole list ({list}) at {small}")
        } else {
            format!("first {} of {list} at {small}", thousands(prefix))
        }
    };
    if walked.len() > 1 {
        let scope = if exhaustive {
            format!("the whole list ({list}) at {}", sizes(&|_| true))
        } else {
            format!(
                "{} against the whole list at size {largest}",
                prefix_read(&small)
            )
        };
        c.covered(catalog::PAGING_SIZE_CONSISTENCY.id, scope);
    }
    if w.repeat {
        let scope = if exhaustive || small.is_empty() {
            format!("the whole list ({list}) twice at {}", sizes(&|_| true))
        } else {
            format!(
                "the whole list ({list}) twice at size {largest}; {} twice",
                prefix_read(&small)
            )
        };
        c.covered(catalog::PAGING_REPEATABLE.id, scope);
    }
    c.covered(
        catalog::MALL_READ_ONLY.id,
        "the state of each mall read, against every other read of it in the run",
    );
}

/// `10000` as `10,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// Changes a signature so that it cannot be valid, keeping its length and alphabet.
fn tamper(signature: &str) -> String {
    let mut chars: Vec<char> = signature.chars().collect();
    match chars.last_mut() {
        Some(last) => *last = if *last == '0' { '1' } else { '0' },
        None => chars.push('0'),
    }
    chars.into_iter().collect()
}

/// `signature` without its last character (a signature of one character stays itself: it has
/// no shorter beginning that is not empty, and an empty one is probed apart).
fn shortened(signature: &str) -> &str {
    match signature.char_indices().last() {
        Some((at, _)) if at > 0 => &signature[..at],
        _ => signature,
    }
}

/// A mallSn that is no listed mall's: `sn` behind `9`s (still a digit string, and a different
/// number to a service that reads it as one). With a listed mall's signature it identifies no
/// mall (§2.2: the signature identifies a mall together with its mallSn); the spec does not
/// make signatures unique, so a listed mall that is `9` and `sn` would rightly answer.
fn no_mall_sn(sn: &str, listed: &[Listed]) -> String {
    let mut candidate = format!("9{sn}");
    while listed.iter().any(|m| m.sn == candidate) {
        candidate.insert(0, '9');
    }
    candidate
}

/// Page size of a products sweep's walk of the list (or the list body's, when larger).
const SWEEP_LIST_SIZE: u64 = 100;

/// How many malls a products sweep calls within `budget` requests when its walk of the list
/// took `pages` requests and its probes take `probes`: every request left, but never fewer
/// than [`DEFAULT_SWEEP_SAMPLE`](crate::runner::DEFAULT_SWEEP_SAMPLE) (the first, the last, a
/// deleted one and a few sampled), so that a merchant of any size is sampled.
fn sweep_calls(budget: usize, pages: usize, probes: usize) -> usize {
    budget
        .saturating_sub(pages + probes)
        .max(crate::runner::DEFAULT_SWEEP_SAMPLE)
}

/// Picks `n` of the listed malls: the first and the last of the list, the first deleted one
/// when there is one, then malls ranked by md5(seed ++ mallSn): the same list and seed give
/// the same sample, and a new seed (each run's) another, so that repeated runs cover the whole
/// merchant over time. Returns indexes in list order.
fn sample_malls(listed: &[Listed], n: usize, seed: &str) -> Vec<usize> {
    use md5::{Digest, Md5};
    if n >= listed.len() {
        return (0..listed.len()).collect();
    }
    let mut chosen: Vec<usize> = Vec::with_capacity(n);
    let fixed = [
        Some(0),
        listed.len().checked_sub(1),
        listed.iter().position(|m| m.deleted),
    ];
    for i in fixed.into_iter().flatten() {
        if chosen.len() < n && !chosen.contains(&i) {
            chosen.push(i);
        }
    }
    let mut ranked: Vec<(Vec<u8>, usize)> = (0..listed.len())
        .filter(|i| !chosen.contains(i))
        .map(|i| {
            let mut h = Md5::new();
            h.update(seed.as_bytes());
            h.update(listed[i].sn.as_bytes());
            (h.finalize().to_vec(), i)
        })
        .collect();
    ranked.sort();
    chosen.extend(ranked.into_iter().map(|(_, i)| i).take(n - chosen.len()));
    chosen.sort_unstable();
    chosen
}

/// Walks the mall list, calls products for a sample of the listed malls (every one in an
/// exhaustive run), and probes tampered signatures and other sellers.
async fn sweep_case(runner: &Runner, s: &SweepCase, c: &mut Collector<'_>) -> Result<(), String> {
    let span = s.list_body.span.clone();
    let mut list_body = s.list_body.value.clone();
    runner
        .discovery
        .resolve(&runner.client, &mut list_body)
        .await?;
    let body_count = list_body
        .pointer("/cursor/count")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let count = served_size(runner, &list_body, body_count.max(SWEEP_LIST_SIZE)).await;
    let full_page = runner.page_limit.full_page(count);
    let options = WalkOptions {
        count,
        max_pages: pages_for(runner.options.max_pages, count, full_page),
        cursor: runner.options.cursor.clone().unwrap_or_default(),
        max_findings_per_check: runner.options.max_findings_per_check,
        max_records: None,
        full_page,
    };
    let mut source = ClientPages {
        listed: Some(ListedMalls::default()),
        ..ClientPages::new(runner, &list_body, c.findings.cap(), None, &options.cursor)
    };
    let mut walk = paging::walk(&mut source, &options).await;
    // (mallSn, signature, deleted): the spec does not say a deleted mall still answers its
    // products, so only live malls must (a deleted one must still not leak another's data).
    let ListedMalls {
        malls: listed,
        full,
        ..
    } = source.listed.take().unwrap_or_default();
    c.merge(source.part, &span);
    let found = std::mem::replace(&mut walk.findings, c.bounded());
    c.absorb(found, &span);
    if listed.is_empty() {
        if !walk.complete {
            // The list could not be read: its findings say why.
            return Ok(());
        }
        runner.discovery.saw_empty_list();
        return Err("the merchant lists no mall with mallSn and signature to sweep".to_string());
    }
    if runner.discovery.is_configured_list(&list_body) {
        runner.discovery.saw_malls();
    }
    let explicit = s.sample.or(runner.options.sample);
    // A tampered signature, a shortened one, an empty one and another mallSn; another seller.
    let probes = 5 * usize::from(s.tamper_signature) + usize::from(s.other_seller.is_some());
    let n = match explicit {
        Some(n) => n,
        None if runner.options.exhaustive => usize::MAX,
        None => sweep_calls(runner.options.sweep_budget, walk.steps.len(), probes),
    };
    let seed = runner.options.seed.as_str();
    let picked = sample_malls(&listed, n, seed);
    let malls: Vec<(String, String)> = picked
        .iter()
        .map(|&i| (listed[i].sn.clone(), listed[i].signature.clone()))
        .collect();
    let deleted = |sn: &str| listed.iter().any(|m| m.sn == sn && m.deleted);
    c.covered(
        "products.listed-mall, products.distinct-per-mall, schema",
        sweep_scope(&listed, &picked, walk.complete, full, seed),
    );
    let appid = list_body.get("appid").cloned().unwrap_or(Value::Null);
    let products_body = |seller: &Value, sn: &str, sig: &str| json!({"appid": appid, "seller": seller, "mallID": {"mallSn": sn, "signature": sig}});
    // The products calls run at once (the client bounds the requests in flight and the rate);
    // their results are taken in the malls' order, so the case reads the same whatever order
    // the answers came in.
    let cap = c.findings.cap();
    let mut lists: Vec<(String, Vec<String>)> = Vec::new();
    let mut answers = futures_util::stream::iter(0..malls.len())
        .map(|i| {
            let (sn, sig) = &malls[i];
            let body = products_body(&s.seller, sn, sig);
            products_call(runner, s, body, sn, deleted(sn), cap)
        })
        .buffered(runner.options.jobs.max(1));
    while let Some((part, list)) = answers.next().await {
        c.merge(part, &span);
        lists.extend(list);
    }
    drop(answers);
    c.add(products::distinct(&lists), &span);
    // Probe with the mall that has products, so that "no data" proves something.
    let target = lists
        .iter()
        .find(|(_, ids)| !ids.is_empty())
        .and_then(|(sn, _)| malls.iter().find(|(m, _)| m == sn))
        .or(malls.first());
    if let Some((sn, sig)) = target {
        let mut probes: Vec<(Value, &'static Check)> = Vec::new();
        if s.tamper_signature {
            probes.push((
                products_body(&s.seller, sn, &tamper(sig)),
                &catalog::PRODUCTS_SIGNATURE_BOUND,
            ));
            // The signature without its last character: a service that compares with
            // `startsWith` (or a prefix index) serves any beginning of it.
            probes.push((
                products_body(&s.seller, sn, shortened(sig)),
                &catalog::PRODUCTS_SIGNATURE_BOUND,
            ));
            // An empty signature is no signature: a service that checks one only when it is
            // given finds the mall by its mallSn alone.
            probes.push((
                products_body(&s.seller, sn, ""),
                &catalog::PRODUCTS_SIGNATURE_BOUND,
            ));
            probes.push((
                products_body(&s.seller, &no_mall_sn(sn, &listed), sig),
                &catalog::PRODUCTS_MALLSN_BOUND,
            ));
            // The signature of another listed mall (another number, another signature): the
            // pair identifies no mall (§2.2), but a lookup of "a mall of this merchant with
            // this signature" beside the mallSn (an ORM join across the merchant's malls)
            // serves this mall's products for it.
            if let Some(other) = listed
                .iter()
                .find(|m| m.sn != *sn && m.signature != *sig && !m.signature.is_empty())
            {
                probes.push((
                    products_body(&s.seller, sn, &other.signature),
                    &catalog::PRODUCTS_SIGNATURE_BOUND,
                ));
            }
        }
        if let Some(other) = &s.other_seller {
            probes.push((
                products_body(other, sn, sig),
                &catalog::PRODUCTS_SELLER_BOUND,
            ));
        }
        // Each probe must be refused: any answer without product data passes. The probes
        // run at once and are taken in order.
        let refusals = probes.into_iter().map(|(body, check)| async move {
            let mut part = Part::new(cap);
            let sent = runner
                .client
                .send_json(Endpoint::MallProducts, &body, &AuthMode::Signed, &[])
                .await
                .empty_body_as_refusal();
            if let Some(r) = part.take(sent) {
                part.add(http::server_error(r.status));
                part.add(no_data_of(check, &r));
            }
            part
        });
        for part in futures_util::future::join_all(refusals).await {
            c.merge(part, &span);
        }
    }
    Ok(())
}

/// `products.repeatable` of one products answer of the request `body`: its spuIds held to the
/// first answer of the same request's mall in the run, whichever case made it, sent with the
/// same `X-env-flag` (§5.3 leaves its purpose open: a call with it may read another
/// environment's catalogue).
fn products_repeatable(
    discovery: &crate::service::discover::Discovery,
    body: &Value,
    env_flag: Option<&str>,
    ids: &[String],
    skus: Option<crate::spec::wire::SkuMark>,
) -> Vec<Finding> {
    let text = |pointer: &str| body.pointer(pointer).and_then(Value::as_str);
    let (Some(merchant), Some(sn), Some(signature)) = (
        text("/seller/merchantId"),
        text("/mallID/mallSn"),
        text("/mallID/signature"),
    ) else {
        return vec![];
    };
    let mall = format!(
        "{}\u{0}{sn}\u{0}{signature}\u{0}{}",
        merchant.trim().to_ascii_lowercase(),
        env_flag.map_or("-".to_string(), |f| format!("flag {}", f.trim()))
    );
    use crate::service::discover::ProductsChange;
    let Some(change) = discovery.read_products(&mall, ids.iter().map(String::as_str), skus) else {
        return vec![];
    };
    let (before, now) = match change {
        ProductsChange::Products(before) if ids.len() == before => (
            format!("{before} products"),
            format!("{} products, not the same ones", ids.len()),
        ),
        ProductsChange::Products(before) => (
            format!("{before} products"),
            format!("{} products", ids.len()),
        ),
        ProductsChange::Skus(before) => {
            let now = skus.map_or(0, |s| s.count);
            let what = if now == before {
                format!("the same products with {now} SKUs, not the same ones")
            } else {
                format!("the same products with {now} SKUs")
            };
            (format!("{} products with {before} SKUs", ids.len()), what)
        }
    };
    vec![Finding::new(
        &catalog::PRODUCTS_REPEATABLE,
        "",
        format!("the products of mall {sn} an earlier read of this run answered ({before})"),
        now,
    )]
}

/// Calls the products of one listed mall of a sweep and checks the answer; gives the mall's
/// product ids when it answered a products array.
async fn products_call(
    runner: &Runner,
    s: &SweepCase,
    body: Value,
    sn: &str,
    deleted: bool,
    cap: usize,
) -> (Part, Option<(String, Vec<String>)>) {
    let mut part = Part::new(cap);
    let sent = runner
        .client
        .send_json(Endpoint::MallProducts, &body, &AuthMode::Signed, &[])
        .await;
    let Some(r) = part.take(sent) else {
        return (part, None);
    };
    if !deleted && let Some(refused) = preflight::refused_json(r.status, &r.json) {
        part.add(vec![refused]);
        return (part, None);
    }
    part.add(http::server_error(r.status));
    if !(200..300).contains(&r.status) || !r.json.is_array() {
        if !deleted {
            part.add(vec![Finding::new(
                &catalog::PRODUCTS_LISTED_MALL,
                "",
                format!("a products array for listed mall {sn}"),
                Actual::with_body(&format!("HTTP {}, ", r.status), r.json.bytes()),
            )]);
        }
        return (part, None);
    }
    if !deleted && let Some(count) = r.json.array_len() {
        runner.discovery.saw_products(count);
    }
    // A small body came with its tree: checked on it. A larger one is checked record by
    // record from the bytes, and its tree is never built (same findings either way).
    let mut found = part.bounded();
    let mut ids = Vec::new();
    // `(product index, skuId)`: none when the fast path vouched for the answer.
    let mut skus = Vec::new();
    let mut sku_mark = crate::spec::wire::SkuMark::default();
    let mut partial = false;
    crate::cpu::cpu_bound(r.json.bytes().len(), || match r.json.tree() {
        // The fast path read a conforming products array: nothing to check, its ids kept.
        _ if runner
            .schemas
            .conforms("products-response", r.json.digest()) =>
        {
            ids = conforming::spu_ids(r.json.digest())
                .map(<[String]>::to_vec)
                .unwrap_or_default();
            sku_mark = conforming::sku_mark(r.json.digest()).unwrap_or_default();
        }
        Some(tree) if !r.json.is_partial() => {
            runner
                .schemas
                .check_into("products-response", tree, &mut found);
            ids = products::spu_ids(tree);
            skus = products::sku_ids(tree);
            sku_mark = crate::spec::wire::SkuMark::of_products(tree);
        }
        // No tree, or one cut at its budget (its last record may be cut in its middle).
        _ => {
            let mut each = |i: usize, p: &Value| {
                ids.extend(products::spu_id(p));
                skus.extend(products::sku_ids_of(p).into_iter().map(|id| (i, id)));
                sku_mark.add_product(p);
            };
            // The bytes are well-formed JSON (the client checked them), so this cannot fail.
            let outcome = runner.schemas.check_bytes_within(
                "products-response",
                r.json.bytes(),
                r.json.budget(),
                &mut found,
                &mut each,
            );
            partial = outcome.is_ok_and(|o| o.partial);
        }
    });
    r.json.spell(found.kept_mut());
    if let Some(f) = r.json.tree_finding(partial) {
        found.push(f);
    }
    part.absorb(found);
    part.add(products::duplicate_ids(&ids));
    part.add(products::duplicate_sku_ids(&skus));
    if !deleted && !partial {
        part.add(products_repeatable(
            &runner.discovery,
            &body,
            None,
            &ids,
            Some(sku_mark),
        ));
    }
    if s.order {
        part.add(products::order_of_ids(&ids));
    }
    (part, Some((sn.to_string(), ids)))
}

/// `8 of 10,000 listed malls: the first, the last, a deleted one and 5 sampled`.
fn sweep_scope(
    listed: &[Listed],
    picked: &[usize],
    complete: bool,
    full: bool,
    seed: &str,
) -> String {
    let total = thousands(listed.len());
    let list = if full {
        format!(
            "{total} malls kept of a list that outgrew mallcheck's bound ({} MiB of mall numbers and signatures)",
            LISTED_BYTES / (1024 * 1024)
        )
    } else if complete {
        format!("{total} listed malls")
    } else {
        format!("{total} malls listed before the list stopped")
    };
    if picked.len() == listed.len() {
        return format!("every one of {list}");
    }
    let mut named = vec!["the first"];
    if picked.len() > 1 {
        named.push("the last");
    }
    let deleted = listed.iter().position(|m| m.deleted);
    if deleted.is_some_and(|d| picked.contains(&d) && d != 0 && d + 1 != listed.len()) {
        named.push("a deleted one");
    }
    let sampled = picked.len().saturating_sub(named.len());
    format!(
        "{} of {list}: {}{}",
        picked.len(),
        named.join(", "),
        if sampled > 0 {
            format!(" and {sampled} sampled (seed {seed:?}; --seed {seed} replays it)")
        } else {
            String::new()
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::text::fixtures::exchange;

    fn page(n: usize) -> Exchange {
        exchange(&format!("page {n}"))
    }

    fn body(x: &Exchange) -> &str {
        x.response
            .as_ref()
            .expect("a response")
            .body_excerpt
            .as_str()
    }

    #[test]
    fn a_part_keeps_the_page_a_finding_shows_on_past_its_cap() {
        let mut part = Part::new(5);
        for n in 0..30 {
            part.record(page(n));
            if n == 14 {
                // The walker blames page 14 while it is the latest.
                part.blame_last();
            }
            if n == 20 {
                part.blame_last();
            }
        }
        let kept: Vec<&str> = part.exchanges.iter().map(body).collect();
        assert_eq!(kept.len(), MAX_EXCHANGES);
        assert!(part.exchanges.iter().all(|x| !x.shows_finding));
        let shown = part.shown.as_ref().expect("page 14 kept");
        assert_eq!(body(shown), "page 14");
        assert!(shown.shows_finding);
        let last = part.last.as_ref().expect("the last page");
        assert_eq!(body(last), "page 29");
        assert!(!last.shows_finding, "only the first page blamed is marked");
        assert_eq!(part.skipped, 30 - MAX_EXCHANGES - 2);
        // A page still held is marked where it is; one gone is not.
        let mut part = Part::new(5);
        for n in 0..30 {
            part.record(page(n));
        }
        part.blame(15);
        assert!(part.exchanges.iter().all(|x| !x.shows_finding), "gone");
        part.blame(3);
        assert!(part.exchanges[3].shows_finding);
    }

    fn listed(n: usize, deleted: Option<usize>) -> Vec<Listed> {
        (0..n)
            .map(|i| Listed {
                sn: format!("{}", 1000 + i),
                signature: String::new(),
                deleted: deleted == Some(i),
            })
            .collect()
    }

    #[test]
    fn the_sample_holds_the_first_the_last_and_a_deleted_mall_and_is_stable() {
        let malls = listed(10_000, Some(4_321));
        let picked = sample_malls(&malls, 8, "s1");
        assert_eq!(picked.len(), 8);
        for must in [0, 4_321, 9_999] {
            assert!(picked.contains(&must), "{must} in {picked:?}");
        }
        assert_eq!(
            picked,
            sample_malls(&malls, 8, "s1"),
            "same seed, same sample"
        );
        assert_ne!(
            picked,
            sample_malls(&malls, 8, "s2"),
            "another seed, another sample"
        );
        assert_eq!(sample_malls(&malls[..5], 8, "s1"), vec![0, 1, 2, 3, 4]);
        assert_eq!(sample_malls(&malls, 2, "s1"), vec![0, 9_999]);
        let scope = sweep_scope(&malls, &picked, true, false, "s1");
        assert!(
            scope.starts_with(
                "8 of 10,000 listed malls: the first, the last, a deleted one and 5 sampled"
            ),
            "{scope}"
        );
    }

    #[test]
    fn a_sweep_keeps_its_list_within_its_bound() {
        // Mall numbers a digit longer each time (a hostile list): kept until the bound.
        let mut kept = ListedMalls::default();
        let mut given = 0usize;
        for i in 0..20_000 {
            kept.push(Listed {
                sn: format!("1{}", "0".repeat(i)),
                signature: "0".repeat(32),
                deleted: false,
            });
            given += 1;
        }
        assert!(
            kept.full,
            "{} malls, {} bytes",
            kept.malls.len(),
            kept.bytes
        );
        assert!(kept.bytes <= LISTED_BYTES && kept.malls.len() < given);
        let bytes: usize = kept.malls.iter().map(|m| m.sn.len() + 32).sum();
        assert_eq!(bytes, kept.bytes);
        let scope = sweep_scope(&kept.malls, &[0, 1], false, true, "s1");
        assert!(
            scope.contains("outgrew mallcheck's bound (64 MiB"),
            "{scope}"
        );
    }

    #[test]
    fn the_budget_sweeps_a_small_merchant_whole_and_samples_a_large_one() {
        // 23 malls: one page of the list, every mall fits.
        assert!(sweep_calls(110, 1, 0) >= 23);
        // 2,000 malls at 100 a page: what is left of the budget.
        assert_eq!(sweep_calls(110, 20, 0), 90);
        // 10,000 malls: the list alone is near the budget; the minimal sample stays.
        assert_eq!(sweep_calls(110, 100, 2), 8);
    }

    #[test]
    fn shortened_drops_the_last_character() {
        assert_eq!(shortened("abcd"), "abc");
        assert_eq!(shortened("签名"), "签");
        assert_eq!(shortened("a"), "a");
    }

    #[test]
    fn tamper_changes_the_last_character_only() {
        assert_eq!(tamper("abc0"), "abc1");
        assert_eq!(tamper("abcd"), "abc0");
        assert_eq!(tamper(""), "0");
    }
}
