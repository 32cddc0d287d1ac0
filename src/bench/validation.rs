//! Line (c): checking a large body as a run does against parsing it alone, and the sample
//! bodies of lines (c) and (d), shared with `cargo bench`.

use std::fmt;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{Value, json};

use crate::bench::harness::BenchOptions;
use crate::bench::measure::{Goal, Measurement, median, median_ratio, mib, ms, skipped};
use crate::checks::{conforming, ownership, products};
use crate::server::data::{self, Dataset, MAIN, Shape};
use crate::service::lazy_json::LazyJson;
use crate::spec::schemas::{MAX_FINDINGS, SchemaSet};
use crate::spec::wire;
use crate::verdict::endpoint::Endpoint;
use crate::verdict::findings::Findings;

/// (c) Time to read and check a body over the time to read it syntax-only (issue 24).
const VALIDATION_TARGET: Goal = Goal::AtMost(4.0);

/// Malls in the page of line (c).
pub const PAGE_MALLS: usize = 2_000;
/// Products in the response of lines (c) and (d).
pub const RESPONSE_PRODUCTS: u32 = 5_000;

/// Which response a body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// A mall-list page (`mall-list-response`).
    MallPage,
    /// A products response (`products-response`).
    Products,
}

impl BodyKind {
    /// The response schema of the body.
    pub fn schema(self) -> &'static str {
        match self {
            BodyKind::MallPage => Endpoint::MallList.response_schema(),
            BodyKind::Products => Endpoint::MallProducts.response_schema(),
        }
    }
}

impl fmt::Display for BodyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BodyKind::MallPage => "mall-page",
            BodyKind::Products => "products",
        })
    }
}

/// A response body of the reference data, as the server sends it.
#[derive(Debug, Clone)]
pub struct SampleBody {
    /// Which response it is.
    pub kind: BodyKind,
    /// What it holds, e.g. `2000-mall page`.
    pub label: String,
    /// The bytes.
    pub bytes: Bytes,
}

/// A mall-list success page holding the first `malls` malls of MAIN.
pub fn mall_page(malls: usize) -> SampleBody {
    let scale = u32::try_from(malls.div_ceil(data::MAIN_MALLS).max(1)).unwrap_or(u32::MAX);
    let dataset = Dataset::scaled(Shape::Standard, scale);
    let records: Vec<Value> = dataset
        .malls_of(MAIN.merchant_id)
        .into_iter()
        .take(malls)
        .map(data::mall_record)
        .collect();
    let page = json!({"success": true, "code": "0000", "msg": "处理成功", "data": records});
    SampleBody {
        kind: BodyKind::MallPage,
        label: format!("{malls}-mall page"),
        bytes: Bytes::from(
            serde_json::to_vec(&page).expect("a serde_json::Value always serializes"),
        ),
    }
}

/// The products response of MAIN's first mall holding `count` products.
pub fn products_response(count: u32) -> SampleBody {
    let dataset = Dataset::new(Shape::Standard);
    let mut mall = dataset.malls_of(MAIN.merchant_id)[0].clone();
    mall.product_count = count;
    let list = Value::Array(data::products(&mall));
    SampleBody {
        kind: BodyKind::Products,
        label: format!("{count}-product response"),
        bytes: Bytes::from(
            serde_json::to_vec(&list).expect("a serde_json::Value always serializes"),
        ),
    }
}

/// Parses a body into a `serde_json::Value` tree: what a check built before the fast path.
pub fn parse_only(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice(bytes)
}

/// Reads a body syntax-only, building nothing: the floor any check of it pays.
pub fn read_only(bytes: &[u8]) -> bool {
    wire::syntax_only(bytes)
}

/// Time spent in each stage of checking one body.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stages {
    /// Reading the body as the client does (`LazyJson::parse`: the typed fast path for a
    /// conforming body, else a tree for a small body and a scan of the bytes).
    pub read: Duration,
    /// The checks of the schema, extra fields and introductions that the fast path could not
    /// vouch for (zero when it read the body).
    pub schema: Duration,
    /// The semantic checks of the runner (ownership, product order and distinctness).
    pub semantic: Duration,
    /// Whether the fast path read the body.
    pub fast: bool,
    /// Findings produced (0 for the reference data).
    pub findings: usize,
}

impl Stages {
    /// The whole check.
    pub fn total(&self) -> Duration {
        self.read + self.schema + self.semantic
    }
}

/// Reads and checks a body as a run does, timing each stage: the client's read (the typed
/// fast path for a conforming body), the schema checks it could not vouch for (a mall page
/// over its tree, a products response streamed record by record from the bytes), then
/// ownership, or product order and distinctness.
pub fn check_body(
    schemas: &SchemaSet,
    kind: BodyKind,
    bytes: &Bytes,
) -> Result<Stages, serde_json::Error> {
    let name = kind.schema();
    let t = Instant::now();
    let json = LazyJson::parse(bytes.clone())?;
    let read = t.elapsed();
    let t = Instant::now();
    let mut found = Findings::new(MAX_FINDINGS);
    let mut ids = Vec::new();
    let fast = schemas.conforms(name, json.digest());
    if fast {
        ids = conforming::spu_ids(json.digest())
            .map(<[String]>::to_vec)
            .unwrap_or_default();
    } else {
        found.extend(json.findings());
        match kind {
            BodyKind::MallPage => schemas.check_into(name, &json, &mut found),
            BodyKind::Products => {
                let mut each = |_: usize, p: &Value| ids.extend(products::spu_id(p));
                schemas.check_bytes_into(name, json.bytes(), &mut found, &mut each)?;
            }
        }
    }
    let schema = t.elapsed();
    let t = Instant::now();
    let mut findings = found.total();
    match kind {
        BodyKind::MallPage if !conforming::all_malls_of(json.digest(), MAIN.merchant_id) => {
            findings += ownership::merchant(&json, MAIN.merchant_id).len();
        }
        BodyKind::MallPage => {}
        BodyKind::Products => {
            findings += products::order_of_ids(&ids).len()
                + products::distinct(&[(String::new(), ids)]).len();
        }
    }
    Ok(Stages {
        read,
        schema,
        semantic: t.elapsed(),
        fast,
        findings,
    })
}

pub(crate) fn median_by(stages: &[Stages], f: impl Fn(&Stages) -> Duration) -> Duration {
    median(&stages.iter().map(f).collect::<Vec<_>>())
}

/// Line (c) for one body: rounds of the syntax-only read, the check and the tree parse,
/// interleaved.
pub fn validation_line(schemas: &SchemaSet, body: &SampleBody, rounds: usize) -> Measurement {
    let mut floor = Vec::new();
    let mut trees = Vec::new();
    let mut checks = Vec::new();
    for _ in 0..rounds + 1 {
        let t = Instant::now();
        let read = read_only(&body.bytes);
        floor.push(t.elapsed());
        std::hint::black_box(read);
        match check_body(schemas, body.kind, &body.bytes) {
            Ok(stages) => checks.push(stages),
            Err(e) => {
                return skipped(
                    "(c) validation",
                    VALIDATION_TARGET,
                    format!("the {} is not JSON: {e}", body.label),
                );
            }
        }
        let t = Instant::now();
        let parsed = parse_only(&body.bytes);
        trees.push(t.elapsed());
        drop(parsed);
    }
    // The first round warms caches and the allocator.
    floor.remove(0);
    trees.remove(0);
    checks.remove(0);
    let p = median(&floor);
    let tree = median(&trees);
    let c = median_by(&checks, Stages::total);
    let size = body.bytes.len() as f64;
    let rate = |d: Duration| size / (1024.0 * 1024.0) / d.as_secs_f64().max(1e-9);
    let findings = checks.first().map_or(0, |s| s.findings);
    let path = if checks.first().is_some_and(|s| s.fast) {
        "typed fast path, no tree"
    } else {
        "tree path"
    };
    Measurement {
        item: "(c) validation",
        figures: format!(
            "{} ({}): check {:.0} MiB/s ({}) vs syntax-only read {:.0} MiB/s ({}); serde_json tree {:.0} MiB/s ({})",
            body.label,
            mib(size),
            rate(c),
            ms(c),
            rate(p),
            ms(p),
            rate(tree),
            ms(tree),
        ),
        ratio: median_ratio(
            &checks.iter().map(Stages::total).collect::<Vec<_>>(),
            &floor,
        ),
        goal: VALIDATION_TARGET,
        details: vec![format!(
            "check = read ({path}) {} + schema {} + semantic {}; {findings} findings; the tree alone is {:.2}x the syntax-only read; medians of {rounds}, the ratio the median of the rounds side by side",
            ms(median_by(&checks, |s| s.read)),
            ms(median_by(&checks, |s| s.schema)),
            ms(median_by(&checks, |s| s.semantic)),
            tree.as_secs_f64() / p.as_secs_f64().max(1e-9),
        )],
    }
}

pub(crate) fn validation(schemas: &SchemaSet, options: &BenchOptions) -> Vec<Measurement> {
    let rounds = options.rounds.max(3);
    [
        mall_page(options.page_malls),
        products_response(options.response_products),
    ]
    .iter()
    .map(|body| validation_line(schemas, body, rounds))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_bodies_check_clean_on_the_fast_path_and_a_broken_one_on_the_tree() {
        let schemas = SchemaSet::embedded().unwrap();
        for body in [mall_page(12), products_response(9)] {
            let stages = check_body(&schemas, body.kind, &body.bytes).unwrap();
            assert_eq!(stages.findings, 0, "{}", body.label);
            assert!(stages.total() >= stages.read);
            // The reference data conforms: the fast path reads it.
            assert!(stages.fast, "{}", body.label);
            assert!(read_only(&body.bytes));
            let line = validation_line(&schemas, &body, 1);
            assert!(line.ratio.is_some_and(|r| r > 0.0), "{}", line.render());
        }
        let mut broken = mall_page(3);
        broken.bytes = Bytes::from(String::from_utf8_lossy(&broken.bytes).replacen(
            "\"state\":1",
            "\"state\":7",
            1,
        ));
        let stages = check_body(&schemas, broken.kind, &broken.bytes).unwrap();
        assert!(!stages.fast && stages.findings > 0);
        assert!(!read_only(b"{\"a\":"));
        let page: Value = serde_json::from_slice(&mall_page(12).bytes).unwrap();
        assert_eq!(page["data"].as_array().map(Vec::len), Some(12));
        let list: Value = serde_json::from_slice(&products_response(9).bytes).unwrap();
        assert_eq!(list.as_array().map(Vec::len), Some(9));
    }
}
