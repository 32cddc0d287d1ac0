//! `cargo bench`: the in-process part of the benchmarks — parsing a large response alone against
//! parsing and checking it as a run does (schema, extra fields, semantic checks), with the
//! bytes each allocates. The end-to-end ratios are printed by `mallcheck bench`.

use std::sync::LazyLock;

use divan::{AllocProfiler, Bencher, black_box};
use mallcheck::bench::validation::{
    self, BodyKind, PAGE_MALLS, RESPONSE_PRODUCTS, SampleBody, check_body, parse_only,
};
use mallcheck::spec::schemas::SchemaSet;

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

static SCHEMAS: LazyLock<SchemaSet> =
    LazyLock::new(|| SchemaSet::embedded().expect("the embedded schemas compile"));
static PAGE: LazyLock<SampleBody> = LazyLock::new(|| validation::mall_page(PAGE_MALLS));
static PRODUCTS: LazyLock<SampleBody> =
    LazyLock::new(|| validation::products_response(RESPONSE_PRODUCTS));

fn body(kind: BodyKind) -> &'static SampleBody {
    match kind {
        BodyKind::MallPage => &PAGE,
        BodyKind::Products => &PRODUCTS,
    }
}

fn main() {
    divan::main();
}

/// The floor: `serde_json` parsing the bytes alone.
#[divan::bench(args = [BodyKind::MallPage, BodyKind::Products], sample_count = 20)]
fn parse(bencher: Bencher, kind: BodyKind) {
    let body = body(kind);
    bencher
        .counter(divan::counter::BytesCount::new(body.bytes.len()))
        .bench(|| parse_only(black_box(&body.bytes)).map(|v| v.is_null()));
}

/// Parse plus every check a run makes on such a body.
#[divan::bench(args = [BodyKind::MallPage, BodyKind::Products], sample_count = 10)]
fn check(bencher: Bencher, kind: BodyKind) {
    let body = body(kind);
    let schemas = &*SCHEMAS;
    bencher
        .counter(divan::counter::BytesCount::new(body.bytes.len()))
        .bench(|| check_body(schemas, kind, black_box(&body.bytes)).map(|s| s.findings));
}

/// The schema validation alone, on an already parsed body.
#[divan::bench(args = [BodyKind::MallPage, BodyKind::Products], sample_count = 10)]
fn schema_only(bencher: Bencher, kind: BodyKind) {
    let body = body(kind);
    let json = parse_only(&body.bytes).expect("the sample body is JSON");
    let name = kind.schema();
    bencher.bench(|| SCHEMAS.validate(name, black_box(&json)).len());
}

/// The extra-fields walk alone, on an already parsed body.
#[divan::bench(args = [BodyKind::MallPage, BodyKind::Products], sample_count = 10)]
fn extra_fields_only(bencher: Bencher, kind: BodyKind) {
    let body = body(kind);
    let json = parse_only(&body.bytes).expect("the sample body is JSON");
    let name = kind.schema();
    bencher.bench(|| SCHEMAS.extra_fields(name, black_box(&json)).len());
}
