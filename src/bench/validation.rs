//! Line (c): checking a large body as a run does against parsing it alone, and the sample
//! bodies of lines (c) and (d), shared with `cargo bench`.

use std::fmt;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::bench::harness::BenchOptions;
use crate::bench::measure::{Goal, Measurement, median, mib, ms, ratio, skipped};
use crate::checks::{ownership, products};
use crate::server::data::{self, Dataset, MAIN, Shape};
use crate::spec::schemas::{MAX_FINDINGS, SchemaSet};
use crate::verdict::endpoint::Endpoint;
use crate::verdict::findings::Findings;

/// (c) Time to parse and check a body over the time to parse it alone.
const VALIDATION_TARGET: Goal = Goal::AtMost(2.0);

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
    pub bytes: Vec<u8>,
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
        bytes: serde_json::to_vec(&page).expect("a serde_json::Value always serializes"),
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
        bytes: serde_json::to_vec(&list).expect("a serde_json::Value always serializes"),
    }
}

/// Parses a body alone: the floor any check of it pays.
pub fn parse_only(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice(bytes)
}

/// Time spent in each stage of checking one body.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stages {
    /// `serde_json` parse of the whole tree (zero when the body is streamed).
    pub parse: Duration,
    /// `SchemaSet::validate` on the tree.
    pub schema: Duration,
    /// `SchemaSet::extra_fields` on the tree.
    pub extra: Duration,
    /// A streamed body: parse, schema, extra fields and introductions, record by record from
    /// the bytes (`SchemaSet::check_bytes_into`), as a run's products sweep does.
    pub streamed: Duration,
    /// The semantic checks of the runner (ownership, product order).
    pub semantic: Duration,
    /// Findings produced (0 for the reference data).
    pub findings: usize,
}

impl Stages {
    /// The whole check.
    pub fn total(&self) -> Duration {
        self.parse + self.schema + self.extra + self.streamed + self.semantic
    }
}

/// Parses and checks a body as a run does, timing each stage: a mall page as a tree (schema,
/// extra fields, ownership), a products response streamed from its bytes (schema, extra fields
/// and introductions record by record, keeping the spuIds for order and distinctness).
pub fn check_body(
    schemas: &SchemaSet,
    kind: BodyKind,
    bytes: &[u8],
) -> Result<Stages, serde_json::Error> {
    let schema_name = kind.schema();
    if kind == BodyKind::Products {
        let t = Instant::now();
        let mut found = Findings::new(MAX_FINDINGS);
        let mut ids = Vec::new();
        let mut each = |_: usize, p: &Value| ids.extend(products::spu_id(p));
        schemas.check_bytes_into(schema_name, bytes, &mut found, &mut each)?;
        let streamed = t.elapsed();
        let t = Instant::now();
        let findings = found.total()
            + products::order_of_ids(&ids).len()
            + products::distinct(&[(String::new(), ids)]).len();
        return Ok(Stages {
            streamed,
            semantic: t.elapsed(),
            findings,
            ..Stages::default()
        });
    }
    let t = Instant::now();
    let json = parse_only(bytes)?;
    let parse = t.elapsed();
    let t = Instant::now();
    let mut findings = schemas.validate(schema_name, &json).len();
    let schema = t.elapsed();
    let t = Instant::now();
    findings += schemas.extra_fields(schema_name, &json).len();
    let extra = t.elapsed();
    let t = Instant::now();
    findings += ownership::merchant(&json, MAIN.merchant_id).len();
    let semantic = t.elapsed();
    Ok(Stages {
        parse,
        schema,
        extra,
        streamed: Duration::ZERO,
        semantic,
        findings,
    })
}

pub(crate) fn median_by(stages: &[Stages], f: impl Fn(&Stages) -> Duration) -> Duration {
    median(&stages.iter().map(f).collect::<Vec<_>>())
}

/// Line (c) for one body: rounds of parse-alone and parse-and-check, interleaved.
pub fn validation_line(schemas: &SchemaSet, body: &SampleBody, rounds: usize) -> Measurement {
    let mut parse = Vec::new();
    let mut checks = Vec::new();
    for _ in 0..rounds + 1 {
        let t = Instant::now();
        let parsed = parse_only(&body.bytes);
        parse.push(t.elapsed());
        drop(parsed);
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
    }
    // The first round warms caches and the allocator.
    parse.remove(0);
    checks.remove(0);
    let p = median(&parse);
    let c = median_by(&checks, Stages::total);
    let size = body.bytes.len() as f64;
    let rate = |d: Duration| size / (1024.0 * 1024.0) / d.as_secs_f64().max(1e-9);
    let findings = checks.first().map_or(0, |s| s.findings);
    Measurement {
        item: "(c) validation",
        figures: format!(
            "{} ({}): check {:.0} MiB/s ({}) vs parse alone {:.0} MiB/s ({})",
            body.label,
            mib(size),
            rate(c),
            ms(c),
            rate(p),
            ms(p)
        ),
        ratio: ratio(c, p),
        goal: VALIDATION_TARGET,
        details: vec![match body.kind {
            BodyKind::Products => format!(
                "check = streamed record by record (parse + schema + extra fields + introductions) {} + semantic {}; no tree of the body; {findings} findings; median of {rounds}",
                ms(median_by(&checks, |s| s.streamed)),
                ms(median_by(&checks, |s| s.semantic)),
            ),
            BodyKind::MallPage => format!(
                "check = parse {} + schema {} + extra fields {} + semantic {}; {findings} findings; median of {rounds}",
                ms(median_by(&checks, |s| s.parse)),
                ms(median_by(&checks, |s| s.schema)),
                ms(median_by(&checks, |s| s.extra)),
                ms(median_by(&checks, |s| s.semantic)),
            ),
        }],
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
    fn sample_bodies_check_clean_and_the_check_costs_more_than_the_parse() {
        let schemas = SchemaSet::embedded().unwrap();
        for body in [mall_page(12), products_response(9)] {
            let stages = check_body(&schemas, body.kind, &body.bytes).unwrap();
            assert_eq!(stages.findings, 0, "{}", body.label);
            assert!(stages.total() >= stages.parse);
            let tree_path = body.kind == BodyKind::MallPage;
            assert_eq!(stages.parse.is_zero(), !tree_path, "{}", body.label);
            let line = validation_line(&schemas, &body, 1);
            assert!(line.ratio.is_some_and(|r| r > 0.0), "{}", line.render());
        }
        let page: Value = serde_json::from_slice(&mall_page(12).bytes).unwrap();
        assert_eq!(page["data"].as_array().map(Vec::len), Some(12));
        let list: Value = serde_json::from_slice(&products_response(9).bytes).unwrap();
        assert_eq!(list.as_array().map(Vec::len), Some(9));
    }
}
