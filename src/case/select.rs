//! Which cases a run selects: `--filter` by name, file, endpoint, tag or a check the case
//! exercises.

use crate::case::model::{Case, CaseFile, CaseKind};
use crate::spec::catalog;
use crate::verdict::check::Family;
use crate::verdict::endpoint::Endpoint;

/// Whether a case selects under `--filter`: `tag:NAME`, `check:ID`, or text found in the case
/// name, file path, endpoint, a tag, or a check id the case exercises.
pub fn selected(filters: &[String], file: &CaseFile, case: &Case) -> bool {
    if filters.is_empty() {
        return true;
    }
    let path = file.source.path.display().to_string();
    filters.iter().any(|f| {
        let f = f.as_str();
        if let Some(tag) = f.strip_prefix("tag:") {
            return case.tags.iter().any(|t| t == tag);
        }
        if let Some(id) = f.strip_prefix("check:") {
            return exercises(case, id);
        }
        case.name.value.contains(f)
            || path.contains(f)
            || case.endpoint().name() == f
            || case.tags.iter().any(|t| t == f)
            || (catalog::find(f).is_some() && exercises(case, f))
    })
}

/// Whether running `case` can produce a finding of check `id`.
pub fn exercises(case: &Case, id: &str) -> bool {
    let Some(check) = catalog::find(id) else {
        return false;
    };
    if id.starts_with("fuzz.") {
        // Only saved fuzz regressions apply the fuzz properties.
        return matches!(&case.kind, CaseKind::Exchange(x) if x.expect.checks.iter().any(|c| c.check.id == id));
    }
    if id == catalog::PAGING_PAGE_FAILED.id {
        return matches!(case.kind, CaseKind::Walk(_));
    }
    // Transport and decoding problems can come from any request.
    if check.family == Family::Transport
        || id == catalog::HTTP_SERVER_ERROR.id
        || id == catalog::RESPONSE_CONTENT_TYPE.id
    {
        return true;
    }
    let list_schema = |id: &str| id.starts_with("mall") || id == catalog::EXTRA_FIELDS.id;
    let products_schema = |id: &str| {
        id.starts_with("product.")
            || id.starts_with("sku.")
            || id == catalog::PRODUCTS_SHAPE.id
            || id == catalog::EXTRA_FIELDS.id
    };
    match &case.kind {
        CaseKind::Exchange(x) => {
            let e = &x.expect;
            e.checks.iter().any(|c| c.check.id == id)
                || e.no_data.as_ref().is_some_and(|c| c.check.id == id)
                || (id == catalog::CASE_ASSERT.id && !e.asserts.is_empty())
                || (id == catalog::HTTP_STATUS.id && e.status.is_some())
                || (id == catalog::SNAPSHOT_MATCH.id && x.snapshot.is_some())
                || (e.schema_enabled
                    && match x.endpoint {
                        Endpoint::MallList => list_schema(id),
                        Endpoint::MallProducts => products_schema(id),
                    })
        }
        CaseKind::Walk(w) => {
            id.starts_with("paging.")
                || list_schema(id)
                || (w.ownership && id == catalog::OWNERSHIP_MERCHANT.id)
        }
        CaseKind::ProductsSweep(_) => id.starts_with("products.") || products_schema(id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::parse::ParseContext;
    use crate::case::parse::files::load_paths;
    use crate::profile::Profile;
    use crate::settings::{self, Env, Flags};
    use crate::spec::schemas::SchemaSet;

    #[test]
    fn check_filters_select_the_cases_that_exercise_the_check() {
        let target =
            settings::resolve(&Flags::default(), &Env::default(), Profile::default()).unwrap();
        let schemas = SchemaSet::embedded().unwrap();
        let names = schemas.names();
        let cx = ParseContext {
            vars: &target.vars,
            schema_names: &names,
        };
        let cases = concat!(env!("CARGO_MANIFEST_DIR"), "/cases");
        let files = load_paths(&[cases.into()], &cx).unwrap();
        let pick = |filter: &str| -> Vec<String> {
            let mut names = vec![];
            for f in &files {
                for c in &f.cases {
                    if selected(&[filter.to_string()], f, c) {
                        names.push(c.name.value.clone());
                    }
                }
            }
            names
        };
        let paging = pick("check:paging.duplicate");
        assert!(
            !paging.is_empty() && paging.iter().all(|n| n.contains("walk")),
            "{paging:?}"
        );
        let auth = pick("auth.signature");
        assert_eq!(auth.len(), 2, "{auth:?}");
        assert!(pick("check:fuzz.timely").is_empty());
        assert_eq!(
            pick("check:transport.timeout").len(),
            files.iter().map(|f| f.cases.len()).sum::<usize>()
        );
    }
}
