//! The paging walker of the mall list (spec §4.1): follows the cursor from `endCursor` null to
//! a short page, bounded by a page limit, and reports oversize pages, duplicates and walks
//! that do not end. Comparing walks (page sizes, repeats) is done by [`compare_walks`].

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde_json::Value;

use crate::case::model::CursorRule;
use crate::spec::catalog;
use crate::spec::wire;
use crate::verdict::check::Check;
use crate::verdict::event::Finding;
use crate::verdict::findings::Findings;

/// One page as the walker sees it: the response body, what was kept of it while its records
/// were checked one at a time, or the findings that stopped the walk.
#[derive(Debug)]
pub enum Page {
    /// A decoded response body.
    Body(Value),
    /// What the walk reads of a page whose records were read one at a time.
    Records(Records),
    /// The page could not be fetched or used; these findings explain why.
    Stop(Vec<Finding>),
}

/// What the walk reads of a page: how many records it holds, the identity of each (of the
/// first [`Records::KEPT_PAST_COUNT`] past `cursor.count` on a page that holds more), and what a
/// cursor rule may read (the last record, the envelope without its records).
#[derive(Debug, Default)]
pub struct Records {
    /// Records in the page.
    pub len: usize,
    /// Identity of each record ([`record_key`]), in order; fewer than `len` on an oversize
    /// page.
    pub keys: Vec<String>,
    /// The state of each record whose identity is kept, read by `mall.read-only`
    /// ([`PageSource::read_states`]; `None` when it holds no small integers there).
    pub states: Vec<Option<wire::MallState>>,
    /// The last record, whole.
    pub last: Option<Value>,
    /// The response without its records (`data` empty).
    pub envelope: Value,
}

impl Records {
    /// Records of an oversize page past `cursor.count` whose identity is kept: the page is
    /// reported (`paging.page-size`) and these are still compared for repeats; the rest are
    /// not, so a page of millions of records costs no more than this.
    pub const KEPT_PAST_COUNT: usize = 1000;

    /// Whether the identity of the record at `index` of a page of `count` records is kept.
    pub fn keeps(index: usize, count: u64) -> bool {
        (index as u64) < count.saturating_add(Self::KEPT_PAST_COUNT as u64)
    }

    /// The view of a whole page: `None` when its `data` is not an array.
    pub fn of_body(body: Value, count: u64) -> Option<Records> {
        let Value::Object(mut root) = body else {
            return None;
        };
        let Some(Value::Array(records)) = root.get_mut("data").map(std::mem::take) else {
            return None;
        };
        root.insert("data".to_string(), Value::Array(Vec::new()));
        let kept = || {
            records
                .iter()
                .enumerate()
                .take_while(|(i, _)| Records::keeps(*i, count))
                .map(|(_, r)| r)
        };
        let keys = kept().map(record_key).collect();
        let states = kept().map(wire::mall_state_of).collect();
        Some(Records {
            len: records.len(),
            keys,
            states,
            last: records.last().cloned(),
            envelope: Value::Object(root),
        })
    }
}

/// Where pages come from (the HTTP client in a run, a vector in tests).
pub trait PageSource {
    /// Fetches the page after `cursor` (None = first page) holding at most `count` records.
    fn fetch(&mut self, cursor: Option<&str>, count: u64) -> impl Future<Output = Page> + Send;

    /// A finding shows in the page fetched last (a duplicate, an oversize page, a walk that
    /// does not end there): a report shows that page, not the first.
    fn blame_last_page(&mut self) {}

    /// Findings on the states of a page's records against earlier reads (`mall.read-only`).
    fn read_states(&mut self, _records: &Records) -> Vec<Finding> {
        Vec::new()
    }
}

/// Settings of one walk.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Page size (`cursor.count`).
    pub count: u64,
    /// Most pages fetched before the walk is declared endless.
    pub max_pages: u64,
    /// How the next cursor is derived.
    pub cursor: CursorRule,
    /// Most findings of one check kept (the rest are counted).
    pub max_findings_per_check: usize,
    /// Stop after the page that brings the walk to this many records (a prefix walk of a
    /// bounded run); `None` walks to the end of the list.
    pub max_records: Option<usize>,
    /// Records that make a full page when the service serves fewer than `count` a page without
    /// a word (a limit §8 leaves open); `None`: `count`. A shorter page ends the list.
    pub full_page: Option<u64>,
}

/// One step of the trail: the cursor sent and how many records came back.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Cursor sent (None for the first page), as [`key_of`] keeps it.
    pub cursor: Option<String>,
    /// Records in the page.
    pub records: usize,
}

/// Record keys in walk order, stored end to end in one buffer: a page of a million records
/// costs a few bytes of bookkeeping per record, not an allocation each.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Keys {
    text: String,
    ends: Vec<usize>,
}

impl Keys {
    /// Appends a key.
    pub fn push(&mut self, key: &str) {
        self.text.push_str(key);
        self.ends.push(self.text.len());
    }

    /// The key at `index`.
    pub fn get(&self, index: usize) -> Option<&str> {
        let end = *self.ends.get(index)?;
        let start = match index {
            0 => 0,
            i => self.ends[i - 1],
        };
        self.text.get(start..end)
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The keys in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

/// The result of one walk.
#[derive(Debug)]
pub struct Walk {
    /// Record keys (mallSn) in walk order, duplicates included.
    pub keys: Keys,
    /// Cursor trail.
    pub steps: Vec<Step>,
    /// Problems found (the first of each check; the rest counted).
    pub findings: Findings,
    /// The walk reached a short page normally (or, by a `response:` cursor rule, a page whose
    /// next cursor is missing, null or empty).
    pub complete: bool,
    /// The walk stopped normally at [`WalkOptions::max_records`] before the end of the list.
    pub truncated: bool,
    /// The cursor rule found a cursor on some page.
    pub found_cursor: bool,
    /// The walk ended at a full page whose cursor (by a `response:` rule) was missing, null
    /// or empty.
    pub ended_by_rule: bool,
    /// The walk ended because the page after a full page was not a success envelope
    /// (`paging.page-failed`): a service may answer the page past the end of its list so.
    pub failed_after_full_page: bool,
}

/// Most duplicate findings kept for one walk (the rest are counted).
const MAX_DUPLICATE_FINDINGS: usize = 5;

/// Renders the trail compactly: `null→10, "123"→10, "113"→4`, eliding the middle.
pub fn render_trail(steps: &[Step]) -> String {
    let fmt = |s: &Step| match &s.cursor {
        None => format!("null→{}", s.records),
        Some(c) => format!("{c:?}→{}", s.records),
    };
    let mut out = String::from("cursor trail (cursor→records): ");
    if steps.len() <= 12 {
        out.push_str(&steps.iter().map(fmt).collect::<Vec<_>>().join(", "));
    } else {
        let head: Vec<String> = steps[..6].iter().map(fmt).collect();
        let tail: Vec<String> = steps[steps.len() - 5..].iter().map(fmt).collect();
        let _ = write!(
            out,
            "{}, … {} pages …, {}",
            head.join(", "),
            steps.len() - 11,
            tail.join(", ")
        );
    }
    out
}

/// Longest identity kept whole; a longer one is kept as its length and a hash of it.
const KEY_KEPT_BYTES: usize = 96;

/// Identity of a record across pages: its `mallSn`, else its whole JSON text; a long one (a
/// service may send megabytes) as its length and a hash of it, so that a walk's memory does
/// not grow with what the service puts in a key. Never a cut of it: a key is shown in
/// findings, and a cut made before the redactor sees the text could leave part of a secret
/// the redactor no longer recognises.
pub fn record_key(record: &Value) -> String {
    match record.get("mallSn") {
        Some(Value::String(s)) => key_of(s),
        Some(other) => key_of(&other.to_string()),
        None => key_of(&record.to_string()),
    }
}

/// The identity kept of a record whose key is `key` (see [`record_key`]).
pub fn key_of(key: &str) -> String {
    if key.len() <= KEY_KEPT_BYTES {
        return key.to_string();
    }
    let hash = {
        use std::hash::{BuildHasher, BuildHasherDefault};
        BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
            .hash_one(key.as_bytes())
    };
    format!("(a key of {} bytes, #{hash:016x})", key.len())
}

pub fn cursor_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Empty pages in a row that end a list under a `response:` cursor rule (see [`walk`]).
const EMPTY_PAGES_END: usize = 20;

/// Walks the cursor to its end.
pub async fn walk<S: PageSource>(source: &mut S, options: &WalkOptions) -> Walk {
    let mut out = Walk {
        keys: Keys::default(),
        steps: Vec::new(),
        findings: Findings::new(options.max_findings_per_check),
        complete: false,
        truncated: false,
        found_cursor: false,
        ended_by_rule: false,
        failed_after_full_page: false,
    };
    let mut cursor: Option<String> = None;
    let mut seen_cursors: HashSet<String> = HashSet::new();
    let mut seen_keys: HashMap<String, usize> = HashMap::new();
    let mut duplicates = 0usize;
    let mut empty_in_a_row = 0usize;
    let count = options.count;
    let endless = |why: String, expected: &str, steps: &[Step]| {
        Finding::new(&catalog::PAGING_ENDLESS, "/cursor/endCursor", expected, why)
            .with_detail(render_trail(steps))
    };
    loop {
        if out.steps.len() as u64 >= options.max_pages {
            source.blame_last_page();
            let f = endless(
                format!("{} pages without a short page", out.steps.len()),
                &format!(
                    "a short page within {} pages (--max-pages)",
                    options.max_pages
                ),
                &out.steps,
            );
            out.findings.push(f);
            break;
        }
        let page = match source.fetch(cursor.as_deref(), count).await {
            Page::Body(v) => Records::of_body(v, count),
            Page::Records(r) => Some(r),
            Page::Stop(findings) => {
                let full = options.full_page.unwrap_or(count);
                out.failed_after_full_page = cursor.is_some()
                    && out.steps.last().is_some_and(|s| s.records as u64 >= full)
                    && findings
                        .iter()
                        .any(|f| f.check.id == catalog::PAGING_PAGE_FAILED.id);
                out.findings.extend(findings);
                break;
            }
        };
        let Some(records) = page else {
            // The envelope check of the page reports the shape; the walk cannot go on.
            break;
        };
        let page_no = out.steps.len();
        // The trail and the set of cursors seen keep a bounded identity of each cursor: a
        // service whose cursors grow page by page (a key one digit longer each time) made
        // them hold the square of the walk's length.
        out.steps.push(Step {
            cursor: cursor.as_deref().map(key_of),
            records: records.len,
        });
        if records.len as u64 > count {
            source.blame_last_page();
            let steps = &out.steps;
            out.findings.push_with(&catalog::PAGING_PAGE_SIZE, || {
                Finding::new(
                    &catalog::PAGING_PAGE_SIZE,
                    "/data",
                    format!("at most {count} records (cursor.count)"),
                    format!("{} records on page {}", records.len, page_no + 1),
                )
                .with_detail(if records.keys.len() < records.len {
                    format!(
                        "{}; only the first {} records of the page were compared with the rest of the walk",
                        render_trail(steps),
                        records.keys.len()
                    )
                } else {
                    render_trail(steps)
                })
            });
        }
        let moved = source.read_states(&records);
        if !moved.is_empty() {
            source.blame_last_page();
            out.findings.extend(moved);
        }
        let mut fresh = 0usize;
        for (i, key) in records.keys.iter().enumerate() {
            if let Some(first_page) = seen_keys.get(key.as_str()) {
                if duplicates == 0 {
                    source.blame_last_page();
                }
                duplicates += 1;
                if duplicates <= MAX_DUPLICATE_FINDINGS {
                    out.findings.push(
                        Finding::new(
                            &catalog::PAGING_DUPLICATE,
                            format!("/data/{i}/mallSn"),
                            "each mall once per walk",
                            format!(
                                "mallSn {key} on page {} again (first on page {})",
                                page_no + 1,
                                first_page + 1
                            ),
                        )
                        .with_detail(render_trail(&out.steps)),
                    );
                } else {
                    out.findings.omit(&catalog::PAGING_DUPLICATE, 1);
                }
            } else {
                seen_keys.insert(key.clone(), page_no);
                fresh += 1;
            }
            out.keys.push(key);
        }
        // A short page ends the list, unless the cursor comes in the response: then the cursor
        // says whether more follows (a service that filters after it pages, as DynamoDB's
        // `Limit` does, gives short and even empty pages in the middle of the list).
        let short = (records.len as u64) < options.full_page.map_or(count, |n| n.min(count));
        let by_response = matches!(options.cursor, CursorRule::Response(_));
        if short && !by_response {
            out.complete = true;
            break;
        }
        // Under a `response:` rule an empty page may sit in the middle of a list (above), but
        // a run of them that goes on handing out fresh cursors is a list whose end the service
        // writes as an empty page with a cursor all the same (one freshly encrypted each
        // time): the list ended at the first of them (the spec does not show how a list ends).
        empty_in_a_row = if records.len == 0 {
            empty_in_a_row + 1
        } else {
            0
        };
        if by_response && empty_in_a_row >= EMPTY_PAGES_END {
            out.complete = true;
            out.ended_by_rule = true;
            break;
        }
        if options.max_records.is_some_and(|m| out.keys.len() >= m) {
            out.truncated = true;
            break;
        }
        if fresh == 0 && records.len > 0 {
            source.blame_last_page();
            let f = endless(
                format!("page {} holds only records already seen", page_no + 1),
                "every full page brings new records",
                &out.steps,
            );
            out.findings.push(f);
            break;
        }
        let next = match &options.cursor {
            CursorRule::LastRecord(pointer) => records
                .last
                .as_ref()
                .and_then(|r| r.pointer(pointer))
                .and_then(cursor_text),
            CursorRule::Response(pointer) => match records.envelope.pointer(pointer) {
                // A next cursor left out, or given as null or empty, says the list ends here:
                // a full last page of a list whose length the page size divides (the spec does
                // not show how the cursor comes back). A service that ends the list too soon
                // this way is caught by the walks at other sizes; a rule that never finds a
                // cursor, by [`cursor_rule_problem`].
                None | Some(Value::Null) => {
                    out.complete = true;
                    out.ended_by_rule = !short;
                    break;
                }
                Some(Value::String(s)) if s.is_empty() => {
                    out.complete = true;
                    out.ended_by_rule = !short;
                    break;
                }
                // An empty page that hands back the cursor it was asked with (a service whose
                // next cursor is always there: the last record's id) is the end of the list.
                found
                    if records.len == 0
                        && found.and_then(cursor_text).as_deref() == cursor.as_deref() =>
                {
                    out.complete = true;
                    break;
                }
                found => found.and_then(cursor_text),
            },
        };
        let Some(next) = next else {
            // A short page under a `response:` rule whose next cursor is no string or number
            // (`false`, an object) is the end of the list, as one without a cursor is.
            if short {
                out.complete = true;
                break;
            }
            source.blame_last_page();
            let where_ = match &options.cursor {
                CursorRule::LastRecord(p) => format!("the last record's {p}"),
                CursorRule::Response(p) => format!("the response's {p}"),
            };
            // A rule of the user's that finds nothing on the very first full page is far more
            // likely wrong than the service (the spec does not show how the cursor comes
            // back): the walk could not be tested, which is never green. The default rule
            // reads `mallSn`, which every record must hold.
            let finding = if page_no == 0 && options.cursor != CursorRule::default() {
                Finding::new(
                    &catalog::HARNESS_CURSOR_RULE,
                    "/cursor/endCursor",
                    "a next cursor after the first full page, by the cursor rule in force",
                    format!(
                        "no cursor value at {where_}: is the cursor rule right (--cursor, \
                         MALLCHECK_CURSOR, the profile's or the case's `cursor`)?"
                    ),
                )
                .with_detail(render_trail(&out.steps))
            } else {
                endless(
                    format!("no cursor value at {where_}"),
                    "a next cursor after a full page",
                    &out.steps,
                )
            };
            out.findings.push(finding);
            break;
        };
        out.found_cursor = true;
        if !seen_cursors.insert(key_of(&next)) {
            source.blame_last_page();
            out.findings.push(endless(
                format!("cursor {next:?} repeats"),
                "a new cursor for every page",
                &out.steps,
            ));
            break;
        }
        cursor = Some(next);
    }
    out
}

impl Walk {
    /// The page (0-based) of this walk that holds the record at `index` of the walk.
    pub fn page_of(&self, index: usize) -> Option<usize> {
        let mut seen = 0usize;
        self.steps.iter().position(|step| {
            seen += step.records;
            index < seen
        })
    }
}

/// The identity and state of each mall of a mall-list page read outside a walk (a single
/// exchange, the preflight, a page-size probe), for `mall.read-only`: from the fast path's
/// digest, else from a tree already built (a large body that took neither is not read again
/// for this).
pub fn page_states(json: &crate::service::lazy_json::LazyJson) -> PageStates {
    use crate::spec::wire::{MallState, owner_of};
    match json.digest() {
        Some(crate::spec::wire::Digest::Envelope(e)) => e
            .malls
            .iter()
            .flatten()
            .map(|m| {
                let state = MallState {
                    code: m.state,
                    owner: owner_of(&m.merchant_id),
                };
                (key_of(&m.sn), Some(state))
            })
            .unzip(),
        Some(crate::spec::wire::Digest::Products(_)) => Default::default(),
        None => json.tree().map(tree_states).unwrap_or_default(),
    }
}

/// The identity and state of each mall of a mall-list page read as a tree.
pub fn tree_states(page: &Value) -> PageStates {
    page.get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|record| (record_key(record), wire::mall_state_of(record)))
        .unzip()
}

/// The identity ([`record_key`]) and state of each mall of a page, by index in `data`.
pub type PageStates = (Vec<String>, Vec<Option<wire::MallState>>);

/// A `response:` cursor rule that found no cursor in any walk of a case, while a walk it ended
/// at a full page read fewer records than another walk: the rule is wrong (a typo of the
/// pointer), not the list short. The case could not be tested (an error of the run); its walks,
/// cut short by the rule, are not compared. Walks that all read the same list (a list the page
/// size divides, or of one mall) are no problem.
pub fn cursor_rule_problem(rule: &CursorRule, walks: &[&Walk]) -> Option<Finding> {
    let CursorRule::Response(pointer) = rule else {
        return None;
    };
    if walks.iter().any(|w| w.found_cursor) {
        return None;
    }
    let longest = walks.iter().map(|w| w.keys.len()).max().unwrap_or(0);
    let cut = walks
        .iter()
        .find(|w| w.ended_by_rule && w.keys.len() < longest)?;
    Some(
        Finding::new(
            &catalog::HARNESS_CURSOR_RULE,
            "/cursor/endCursor",
            format!("a next cursor at the response's {pointer} after a full page"),
            format!(
                "none in any walk: a walk ended after {} record(s) where another read {longest}; \
                 is the cursor rule right (--cursor, MALLCHECK_CURSOR, the profile's or the \
                 case's `cursor`)?",
                cut.keys.len()
            ),
        )
        .with_detail(render_trail(&cut.steps)),
    )
}

/// Where two walks that ended normally first differ (the index of a record), as
/// [`compare_walks`] judges them; `None` when they agree or cannot be compared.
pub fn first_difference(a: &Walk, b: &Walk) -> Option<usize> {
    let usable = |w: &Walk| w.complete || w.truncated;
    if !usable(a) || !usable(b) {
        return None;
    }
    let first_diff = a.keys.iter().zip(b.keys.iter()).position(|(x, y)| x != y);
    match first_diff {
        Some(i) => Some(i),
        None if a.keys.len() == b.keys.len() => None,
        None => {
            let shorter = if a.keys.len() < b.keys.len() { a } else { b };
            if !shorter.complete {
                // Only a prefix was read: nothing past it is compared.
                return None;
            }
            Some(a.keys.len().min(b.keys.len()))
        }
    }
}

/// Compares two walks that ended normally: the same records in the same order. A prefix
/// walk ([`Walk::truncated`]) is compared with the same prefix of the other walk, and a list
/// that ended inside the other walk's prefix is a difference. `check` is
/// `paging.size-consistency` (different sizes) or `paging.repeatable` (same size twice).
pub fn compare_walks(
    check: &'static Check,
    (label_a, a): (&str, &Walk),
    (label_b, b): (&str, &Walk),
) -> Vec<Finding> {
    let Some(index) = first_difference(a, b) else {
        return vec![];
    };
    let show = |w: &Walk, i: usize| {
        w.keys
            .get(i)
            .unwrap_or(if w.complete {
                "end of list"
            } else {
                "end of prefix"
            })
            .to_string()
    };
    let (expected, actual) = (show(a, index), show(b, index));
    vec![
        Finding::new(
            check,
            format!("/data/{index}"),
            format!(
                "record #{} = mallSn {expected} (as in {label_a})",
                index + 1
            ),
            format!("mallSn {actual} in {label_b}"),
        )
        .with_detail(format!(
            "{label_a}: {} records; {label_b}: {} records",
            a.keys.len(),
            b.keys.len()
        )),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_key_is_kept_as_its_length_and_hash_never_as_a_cut_of_it() {
        let secret = "Zq7Xw2Lp9Rt4Vb8Nc3Mk6HjYf5Gd1Sa0";
        let long = format!("{}{secret}{}", "x".repeat(80), "y".repeat(40));
        let kept = key_of(&long);
        assert!(kept.starts_with("(a key of 152 bytes, #"), "{kept}");
        assert!(!kept.contains("Zq7X") && !kept.contains("xxxx"), "{kept}");
        assert_eq!(kept, key_of(&long));
        assert_ne!(kept, key_of(&format!("{long}z")));
        assert_eq!(key_of("1000277165"), "1000277165");
    }
    use serde_json::json;

    /// A list of mallSns served by a cursor convention, with optional misbehaviour.
    struct Fake {
        sns: Vec<u32>,
        ignore_cursor: bool,
        extra: usize,
        fetches: u64,
        /// The fetches (from 1) whose page the walker blamed.
        blamed: Vec<u64>,
        /// Pages (from 1) whose response carries `next` (the mallSn of its last record).
        next_on: Vec<u64>,
        /// `next` on the other pages, when given.
        next_at_end: Option<Value>,
        /// Most records a page holds, whatever `count` asks.
        cap: usize,
        /// Pages past the end carry a fresh `next` each (`t1`, `t2`, ...: past the end too).
        fresh_at_end: bool,
    }

    impl PageSource for Fake {
        fn blame_last_page(&mut self) {
            self.blamed.push(self.fetches);
        }

        async fn fetch(&mut self, cursor: Option<&str>, count: u64) -> Page {
            self.fetches += 1;
            let start = match cursor {
                Some(c) if self.fresh_at_end && c.starts_with('t') => self.sns.len(),
                Some(c) if !self.ignore_cursor => self
                    .sns
                    .iter()
                    .position(|s| s.to_string() == c)
                    .map_or(0, |p| p + 1),
                _ => 0,
            };
            let end = (start + (count as usize).min(self.cap) + self.extra).min(self.sns.len());
            let data: Vec<Value> = self.sns[start..end]
                .iter()
                .map(|s| json!({"mallSn": s.to_string()}))
                .collect();
            let mut body = json!({"success": true, "code": "0000", "msg": "ok", "data": data});
            if self.next_on.contains(&self.fetches)
                && let Some(last) = self.sns[start..end].last()
            {
                body["next"] = json!(last.to_string());
            } else if let Some(end) = &self.next_at_end {
                body["next"] = end.clone();
            } else if self.fresh_at_end && start == end {
                body["next"] = json!(format!("t{}", self.fetches));
            }
            Page::Body(body)
        }
    }

    fn fake(n: u32) -> Fake {
        Fake {
            sns: (1..=n).rev().collect(),
            ignore_cursor: false,
            extra: 0,
            fetches: 0,
            blamed: Vec::new(),
            next_on: Vec::new(),
            next_at_end: None,
            cap: usize::MAX,
            fresh_at_end: false,
        }
    }

    /// A service that hands out a fresh cursor on every page, empty ones too, and ends its
    /// list with empty pages: the walk ends after a run of them, complete, without
    /// `paging.endless` (it walked to `--max-pages` before).
    #[tokio::test]
    async fn a_run_of_empty_pages_with_fresh_cursors_ends_the_list() {
        let mut f = fake(23);
        f.next_on = vec![1, 2, 3];
        f.fresh_at_end = true;
        let options = WalkOptions {
            cursor: CursorRule::Response("/next".into()),
            ..opts(10)
        };
        let w = walk(&mut f, &options).await;
        assert!(
            w.complete && w.findings.is_empty(),
            "{:?}",
            w.findings.kept()
        );
        assert_eq!(w.keys.len(), 23);
        assert_eq!(f.fetches, 3 + EMPTY_PAGES_END as u64);
    }

    #[tokio::test]
    async fn a_page_of_the_full_page_length_goes_on_and_a_shorter_one_ends_the_list() {
        // 23 malls served at most 5 a page while 10 are asked for: the walk stops after the
        // first page, unless pages of 5 are taken as full: then it goes on to the end.
        let capped = || Fake { cap: 5, ..fake(23) };
        let walk_at = |full_page| WalkOptions {
            full_page,
            ..opts(10)
        };
        let first = walk(&mut capped(), &walk_at(None)).await;
        assert_eq!((first.keys.len(), first.complete), (5, true));
        let all = walk(&mut capped(), &walk_at(Some(5))).await;
        assert_eq!(all.keys.len(), 23);
        assert!(all.complete);
        assert_eq!(
            all.steps.iter().map(|s| s.records).collect::<Vec<_>>(),
            [5, 5, 5, 5, 3]
        );
        // A full page longer than count changes nothing: count bounds it.
        let w = walk(&mut fake(23), &walk_at(Some(50))).await;
        assert_eq!((w.keys.len(), w.steps.len()), (23, 3));
    }

    #[tokio::test]
    async fn under_a_response_rule_a_short_page_with_a_next_cursor_goes_on() {
        // Pages of 4 while 10 are asked for, each with its next cursor but the last: the
        // cursor, not the page's length, says whether more follows.
        let mut source = Fake {
            cap: 4,
            next_on: (1..=5).collect(),
            ..fake(23)
        };
        let options = WalkOptions {
            cursor: CursorRule::Response("/next".into()),
            ..opts(10)
        };
        let w = walk(&mut source, &options).await;
        assert!(w.findings.is_empty(), "{:?}", w.findings.kept());
        assert_eq!((w.keys.len(), w.complete), (23, true));
        assert_eq!(
            w.steps.iter().map(|s| s.records).collect::<Vec<_>>(),
            [4, 4, 4, 4, 4, 3]
        );
        // Under the last-record rule the first short page ends the list.
        let w = walk(&mut Fake { cap: 4, ..fake(23) }, &opts(10)).await;
        assert_eq!((w.keys.len(), w.complete), (4, true));
        // A short last page whose next cursor is no string or number (`false`) ends it too.
        let mut source = Fake {
            next_on: vec![1, 2],
            next_at_end: Some(json!(false)),
            ..fake(23)
        };
        let w = walk(&mut source, &options).await;
        assert!(w.findings.is_empty(), "{:?}", w.findings.kept());
        assert_eq!((w.keys.len(), w.complete), (23, true));
    }

    fn opts(count: u64) -> WalkOptions {
        WalkOptions {
            count,
            max_pages: 1000,
            cursor: CursorRule::default(),
            max_findings_per_check: 50,
            max_records: None,
            full_page: None,
        }
    }

    /// A `last-record:` rule of the user's that finds no cursor on the first full page is taken
    /// for a wrong rule (the walk could not be tested); one that worked and then finds none is
    /// the service's. A `response:` rule's missing, null or empty cursor ends the list; a rule
    /// that found none in any walk, while the walks read different lists, is a wrong rule.
    #[tokio::test]
    async fn a_cursor_rule_that_finds_nothing_at_once_is_the_runs_error() {
        let ids =
            |w: &Walk| -> Vec<&str> { w.findings.kept().iter().map(|f| f.check.id).collect() };
        let rule = |cursor: CursorRule| WalkOptions { cursor, ..opts(10) };
        let w = walk(
            &mut fake(23),
            &rule(CursorRule::LastRecord("/wrong".into())),
        )
        .await;
        assert_eq!(ids(&w), ["harness.cursor-rule"]);
        let f = &w.findings.kept()[0];
        assert!(
            f.actual.contains("the last record's /wrong"),
            "{}",
            f.actual
        );
        assert!(f.actual.contains("--cursor"), "{}", f.actual);
        let next = CursorRule::Response("/next".into());
        let typo = walk(&mut fake(23), &rule(next.clone())).await;
        assert!(typo.complete && typo.findings.is_empty() && typo.ended_by_rule);
        assert_eq!(typo.keys.len(), 10);
        let whole = walk(
            &mut fake(23),
            &WalkOptions {
                cursor: next.clone(),
                ..opts(100)
            },
        )
        .await;
        assert_eq!(whole.keys.len(), 23);
        let problem = cursor_rule_problem(&next, &[&typo, &whole]).expect("a wrong rule");
        assert_eq!(problem.check.id, "harness.cursor-rule");
        assert!(
            problem
                .actual
                .contains("ended after 10 record(s) where another read 23")
        );
        // Walks that read the same list, or a rule that found a cursor somewhere: no problem.
        assert!(cursor_rule_problem(&next, &[&typo, &typo]).is_none());
        assert!(cursor_rule_problem(&CursorRule::default(), &[&typo, &whole]).is_none());
        // The same rule, given a cursor on the first page only: the list ends at page 2.
        let mut f = fake(23);
        f.next_on = vec![1];
        let w = walk(&mut f, &rule(next.clone())).await;
        assert!(w.complete && w.findings.is_empty() && w.found_cursor);
        assert_eq!(w.keys.len(), 20);
        assert!(cursor_rule_problem(&next, &[&w, &whole]).is_none());
        // A missing, null or empty cursor after a full page ends the list (20 malls at size 10).
        let mut f = fake(20);
        f.next_on = vec![1];
        let w = walk(&mut f, &rule(next.clone())).await;
        assert!(w.complete && w.findings.is_empty());
        assert_eq!((w.keys.len(), f.fetches), (20, 2));
        for end in [json!(null), json!("")] {
            let mut f = fake(20);
            f.next_on = vec![1];
            f.next_at_end = Some(end.clone());
            let w = walk(&mut f, &rule(CursorRule::Response("/next".into()))).await;
            assert!(w.complete, "{end}: {:?}", w.findings.kept());
            assert!(w.findings.is_empty(), "{end}: {:?}", w.findings.kept());
            assert_eq!((w.keys.len(), f.fetches), (20, 2), "{end}");
        }
        // On every page, it walks to the end.
        let mut f = fake(23);
        f.next_on = vec![1, 2, 3];
        let w = walk(&mut f, &rule(CursorRule::Response("/next".into()))).await;
        assert!(
            w.complete && w.findings.is_empty(),
            "{:?}",
            w.findings.kept()
        );
        assert_eq!(w.keys.len(), 23);
    }

    #[tokio::test]
    async fn walker_reads_every_record_once_at_any_size() {
        for (n, size, why) in [
            (23, 10, "short last page"),
            (20, 10, "empty last page"),
            (0, 3, "no records"),
            (5, 1, "size one"),
        ] {
            let w = walk(&mut fake(n), &opts(size)).await;
            assert!(w.complete, "{why}");
            assert!(w.findings.is_empty(), "{why}: {:?}", w.findings.kept());
            assert_eq!(w.keys.len(), n as usize, "{why}");
        }
    }

    #[tokio::test]
    async fn the_walker_blames_the_page_a_fault_shows_on() {
        // A clean walk blames no page.
        let mut f = fake(23);
        walk(&mut f, &opts(10)).await;
        assert!(f.blamed.is_empty(), "{:?}", f.blamed);
        // One record too many on every page: the first page is oversize.
        let mut f = fake(23);
        f.extra = 1;
        walk(&mut f, &opts(10)).await;
        assert_eq!(f.blamed.first(), Some(&1), "{:?}", f.blamed);
        // A cursor ignored: page 2 repeats page 1, and is where it shows.
        let mut f = fake(50);
        f.ignore_cursor = true;
        walk(&mut f, &opts(10)).await;
        assert_eq!(f.blamed.first(), Some(&2), "{:?}", f.blamed);
    }

    #[tokio::test]
    async fn a_difference_of_two_walks_is_placed_on_its_page() {
        let whole = walk(&mut fake(23), &opts(10)).await;
        let mut skipping = fake(23);
        skipping.sns.remove(12);
        let other = walk(&mut skipping, &opts(5)).await;
        // Record #13 differs: on page 3 of the walk at size 5 (records 10 to 14).
        assert_eq!(first_difference(&whole, &other), Some(12));
        assert_eq!(other.page_of(12), Some(2));
        assert_eq!(whole.page_of(12), Some(1));
        assert_eq!(other.page_of(22), None, "past the end");
        assert_eq!(first_difference(&whole, &whole), None);
    }

    #[tokio::test]
    async fn walker_stops_on_repeated_cursor_without_hanging() {
        let mut f = fake(50);
        f.ignore_cursor = true;
        let w = walk(&mut f, &opts(10)).await;
        assert!(!w.complete);
        assert!(
            w.findings
                .kept()
                .iter()
                .any(|f| f.check.id == "paging.endless")
        );
        assert!(
            w.findings
                .kept()
                .iter()
                .any(|f| f.check.id == "paging.duplicate")
        );
        assert!(f.fetches <= 2);
    }

    #[tokio::test]
    async fn duplicates_past_the_first_five_are_counted() {
        let mut f = fake(50);
        f.ignore_cursor = true;
        let w = walk(&mut f, &opts(10)).await;
        let kept = w
            .findings
            .kept()
            .iter()
            .filter(|f| f.check.id == "paging.duplicate")
            .count();
        assert_eq!(kept, MAX_DUPLICATE_FINDINGS);
        let omitted = w.findings.omitted();
        assert_eq!(omitted.len(), 1, "{omitted:?}");
        assert_eq!(omitted[0].check.id, "paging.duplicate");
        assert_eq!(omitted[0].count, 10 - MAX_DUPLICATE_FINDINGS);
    }

    #[tokio::test]
    async fn walker_respects_the_page_limit() {
        let w = walk(
            &mut fake(100),
            &WalkOptions {
                max_pages: 3,
                ..opts(1)
            },
        )
        .await;
        assert_eq!(w.steps.len(), 3);
        assert!(
            w.findings
                .kept()
                .iter()
                .any(|f| f.check.id == "paging.endless" && f.expected.contains("--max-pages"))
        );
    }

    #[tokio::test]
    async fn oversize_pages_are_reported() {
        let mut f = fake(30);
        f.extra = 1;
        let w = walk(&mut f, &opts(10)).await;
        assert!(
            w.findings
                .kept()
                .iter()
                .any(|f| f.check.id == "paging.page-size")
        );
    }

    #[tokio::test]
    async fn walks_of_different_sizes_must_agree() {
        let a = walk(&mut fake(12), &opts(5)).await;
        let mut skipping = fake(12);
        skipping.sns.remove(4);
        let b = walk(&mut skipping, &opts(3)).await;
        let f = compare_walks(
            &catalog::PAGING_SIZE_CONSISTENCY,
            ("size 5", &a),
            ("size 3", &b),
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].pointer, "/data/4");
        assert!(
            compare_walks(
                &catalog::PAGING_SIZE_CONSISTENCY,
                ("a", &a),
                ("a again", &a)
            )
            .is_empty()
        );
    }

    #[tokio::test]
    async fn a_prefix_walk_stops_at_its_records_and_compares_with_the_same_prefix() {
        let prefix = |size| WalkOptions {
            max_records: Some(7),
            ..opts(size)
        };
        let mut f = fake(100);
        let p = walk(&mut f, &prefix(3)).await;
        assert!(p.truncated && !p.complete);
        assert_eq!(p.keys.len(), 9, "three pages of three");
        assert_eq!(f.fetches, 3);
        let full = walk(&mut fake(100), &opts(10)).await;
        let check = &catalog::PAGING_SIZE_CONSISTENCY;
        assert!(compare_walks(check, ("full", &full), ("prefix", &p)).is_empty());
        // A record skipped inside the prefix is a difference.
        let mut skipping = fake(100);
        skipping.sns.remove(5);
        let q = walk(&mut skipping, &prefix(1)).await;
        let found = compare_walks(check, ("full", &full), ("prefix", &q));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pointer, "/data/5");
        // A list that ends inside the prefix of the other is a difference too.
        let short = walk(&mut fake(4), &opts(10)).await;
        assert_eq!(
            compare_walks(check, ("short", &short), ("prefix", &p)).len(),
            1
        );
        // A list shorter than the prefix is walked to its end.
        let whole = walk(&mut fake(5), &prefix(1)).await;
        assert!(whole.complete && !whole.truncated);
    }

    #[test]
    fn trail_is_elided_in_the_middle() {
        let steps: Vec<Step> = (0..30)
            .map(|i| Step {
                cursor: Some(i.to_string()),
                records: 1,
            })
            .collect();
        let t = render_trail(&steps);
        assert!(t.contains("19 pages"), "{t}");
    }
}
