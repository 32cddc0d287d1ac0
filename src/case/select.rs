//! Which cases a run selects: `--filter` by name, file, endpoint, tag or a check the case
//! exercises.

use std::collections::BTreeSet;

use crate::case::model::{Case, CaseFile, CaseKind};
use crate::case::parse::suggest;
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

/// A `--filter` that names a tag no case has or a check the catalogue does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterProblem {
    /// What is wrong, e.g. "no case has tag `smok`".
    pub message: String,
    /// "did you mean …?" or the valid values.
    pub help: String,
}

/// Checks every `tag:NAME` and `check:ID` filter against the loaded cases and the catalogue,
/// also when another filter selects cases: a typo must never silently narrow a run.
pub fn check_filters(filters: &[String], files: &[CaseFile]) -> Result<(), FilterProblem> {
    let tags: BTreeSet<&str> = files
        .iter()
        .flat_map(|f| &f.cases)
        .flat_map(|c| c.tags.iter().map(String::as_str))
        .collect();
    let exercised = |id: &str| {
        files
            .iter()
            .any(|file| file.cases.iter().any(|case| exercises(case, id)))
    };
    for f in filters {
        if f.trim().is_empty() {
            // An unset CI variable (`--filter "$SUITE"`) would otherwise select every case.
            return Err(FilterProblem {
                message: "an empty filter".to_string(),
                help: "give a text of a case's name or file, tag:NAME or check:ID".to_string(),
            });
        }
        if let Some(tag) = f.strip_prefix("tag:") {
            if !tags.contains(tag) {
                return Err(FilterProblem {
                    message: format!("no case has tag `{tag}`"),
                    help: closest(tag, tags.iter().copied(), "tag:", "tags"),
                });
            }
        } else if let Some(id) = f.strip_prefix("check:") {
            if catalog::find(id).is_none() {
                return Err(FilterProblem {
                    message: format!("`{id}` is not a check id"),
                    help: closest(
                        id,
                        catalog::CATALOG.iter().map(|c| c.id),
                        "check:",
                        "check ids (see `mallcheck checks`)",
                    ),
                });
            }
            if !exercised(id) {
                return Err(FilterProblem {
                    message: format!("no case exercises check `{id}`"),
                    help: "the loaded case files never report it (see `mallcheck checks`)"
                        .to_string(),
                });
            }
        } else if !files.iter().any(|file| {
            file.cases
                .iter()
                .any(|case| selected(std::slice::from_ref(f), file, case))
        }) {
            // A text filter beside others that select cases would narrow nothing, silently.
            let stems: BTreeSet<String> = files
                .iter()
                .filter_map(|file| file.source.path.file_stem())
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            let words = tags
                .iter()
                .copied()
                .chain(stems.iter().map(String::as_str))
                .chain(["mall-list", "mall-products"]);
            return Err(FilterProblem {
                message: format!("`{f}` matches no case name, file, endpoint, tag or check id"),
                help: closest(f, words, "", "tags and files"),
            });
        }
    }
    Ok(())
}

/// "did you mean `tag:smoke`?" for a typo or a prefix of one value, else the valid values.
fn closest<'c>(
    word: &str,
    valid: impl Iterator<Item = &'c str> + Clone,
    prefix: &str,
    what: &str,
) -> String {
    let mut by_prefix = valid
        .clone()
        .filter(|v| !word.is_empty() && v.starts_with(word));
    let unique_prefix = match (by_prefix.next(), by_prefix.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    };
    // A shortened word (`paging.dupe`) is far in edits but close in Jaro-Winkler.
    let similar = || {
        valid
            .clone()
            .map(|v| (strsim::jaro_winkler(word, v), v))
            .filter(|(score, _)| *score >= 0.9)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, v)| v)
    };
    match unique_prefix
        .or_else(|| suggest(word, valid.clone()))
        .or_else(similar)
    {
        Some(s) => format!("did you mean `{prefix}{s}`?"),
        None => {
            let all: Vec<String> = valid.map(|v| format!("`{v}`")).collect();
            format!("valid {what}: {}", all.join(", "))
        }
    }
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
    if matches!(
        check.family,
        Family::Transport | Family::Harness | Family::Robustness
    ) || id == catalog::HTTP_SERVER_ERROR.id
        || id == catalog::RESPONSE_CONTENT_TYPE.id
        || id == catalog::RESPONSE_DUPLICATE_KEY.id
        || id == catalog::RESPONSE_NUMBER_RANGE.id
    {
        return true;
    }
    let list_schema = |id: &str| id.starts_with("mall") || id == catalog::EXTRA_FIELDS.id;
    let products_schema = |id: &str| {
        id.starts_with("product.")
            || id.starts_with("sku.")
            || id == catalog::PRODUCTS_SHAPE.id
            || id == catalog::PRODUCTS_UNIQUE.id
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
                // Every page of malls read is held to the states the run first read.
                || (id == catalog::MALL_READ_ONLY.id && x.endpoint == Endpoint::MallList)
                // A refusal's envelope is held to §7.1 (and its code to §4.1's String) when no
                // schema judges it.
                || ((id == catalog::LIST_SUCCESS_CODE.id || id == catalog::LIST_ENVELOPE.id)
                    && e.no_data.is_some()
                    && !e.schema_enabled
                    && x.endpoint == Endpoint::MallList)
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
        CaseKind::CrossMerchantCursor(_) => id == catalog::OWNERSHIP_CURSOR_MERCHANT.id,
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
        let target = settings::resolve(
            &Flags::default(),
            &Env::default(),
            Profile::default(),
            &crate::redact::Redactor::new(),
        )
        .unwrap();
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
        // A wrong signature, one wrong in a character, one cut short, one made without the key,
        // and the appid alone, on each operation; a wrong one on a continuation page, a wrong
        // one with an unknown appid, one a character too long, and wrong ones on products
        // without X-env-flag and with another value of it.
        let auth = pick("auth.signature");
        assert_eq!(auth.len(), 15, "{auth:?}");
        assert!(pick("check:fuzz.timely").is_empty());
        // Beside a filter that selects, one that selects nothing (or an empty one) is refused.
        for (filters, said) in [
            (
                ["check:fuzz.timely", "tag:smoke"],
                "no case exercises check `fuzz.timely`",
            ),
            (["", "tag:smoke"], "an empty filter"),
            (["ownershp", "tag:smoke"], "`ownershp` matches no case name"),
        ] {
            let filters: Vec<String> = filters.iter().map(|f| f.to_string()).collect();
            let problem = check_filters(&filters, &files).expect_err(said);
            assert!(problem.message.contains(said), "{}", problem.message);
        }
        assert_eq!(
            pick("check:transport.timeout").len(),
            files.iter().map(|f| f.cases.len()).sum::<usize>()
        );
    }
}
