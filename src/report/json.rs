//! JSON report sink. The format is public API: `format_version` changes on any incompatible
//! change. Fields: `format_version`, `tool`, `version`, `target` (`embedded` for the
//! reference server mallcheck started, else the base URL), `base_url`, `started_at` (RFC 3339,
//! UTC), `strict`, `complete`
//! (false until the run reached its end), `interrupted` (the signal that stopped it, or null),
//! `exit_code` (0 pass, 1 contract broken, 3 could not test; null while the run runs) and
//! `verdict` (`pass`, `contract-broken`, `could-not-test`, `interrupted`, `running`),
//! `shard` (`index`, 1-based, and `total` under `--shard K/N`, with `selected`, the cases
//! selected before sharding, and `selection`, a digest of their ids; or null),
//! `ci_run` (the CI run the report was written in, `github:1234567`, `gitlab:…`; absent
//! outside CI), `warnings` (the run's warnings as the console printed them: edited schemas, a setting with
//! blanks around it; an empty list when there were none),
//! `summary` (`passed`, `warned`, `failed`, `errored`, `skipped`, `duration`: the wall time, or
//! the time elapsed so far when not complete) and `cases` (a planned case not run is a `skip`
//! saying why), each with
//! `id` (`file`, `name`, `endpoint`, `index`, `line`: where the case starts in its file),
//! `outcome`, `findings` (`check`, `pointer`, `expected`, `actual`, `detail`, `location`; the first findings of each check), `omitted`
//! (`check`, `count`: the findings of a check counted beyond those kept), `exchanges`
//! (redacted) and `duration`.

use std::io;

use serde::Serialize;

use crate::report::file::Run;
use crate::verdict::event::{CaseResult, RunSummary};
use crate::verdict::sealed::Sealed;

/// Version of the JSON report format.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Serialize)]
struct Document<'a> {
    format_version: u32,
    tool: &'static str,
    version: &'static str,
    /// `embedded` for the embedded reference server, else the base URL.
    target: &'a str,
    base_url: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    started_at: Option<String>,
    strict: bool,
    complete: bool,
    interrupted: Option<&'a str>,
    exit_code: Option<i32>,
    verdict: &'static str,
    shard: Option<Shard<'a>>,
    /// The CI run the report was written in (`github:1234567`), when one is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    ci_run: Option<String>,
    warnings: &'a [String],
    summary: &'a RunSummary,
    cases: &'a [Sealed<CaseResult>],
}

/// `shard` of the report: this run is shard `index` (1-based) of `total` (`--shard`) of a
/// selection of `selected` cases whose ids hash to `selection`.
#[derive(Serialize)]
struct Shard<'a> {
    index: usize,
    total: usize,
    selected: usize,
    selection: &'a str,
}

/// Renders the JSON report of the run so far.
pub fn render(run: &Run<'_>) -> io::Result<String> {
    let doc = Document {
        format_version: FORMAT_VERSION,
        tool: "mallcheck",
        version: env!("CARGO_PKG_VERSION"),
        target: run.target_name(),
        base_url: run.base_url,
        started_at: run.started_at.map(crate::report::text::rfc3339),
        strict: run.strict,
        complete: run.complete,
        interrupted: run.interrupted,
        exit_code: run.exit_code(),
        verdict: run.verdict(),
        shard: run.shard.map(|s| Shard {
            index: s.index,
            total: s.total,
            selected: s.selected,
            selection: &s.selection,
        }),
        ci_run: crate::report::ci_run::current(),
        warnings: run.warnings,
        summary: run.summary,
        cases: run.results,
    };
    serde_json::to_string_pretty(&doc).map_err(io::Error::other)
}
