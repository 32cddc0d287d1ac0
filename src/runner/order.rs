//! The order in which a run starts its cases.
//!
//! A case that sends its requests one after another (a walk follows its cursor page by page)
//! takes as long as its chain of requests, however many places `--jobs` gives. Started in file
//! order, the shipped suite's walks and sweeps come last and run on alone at the end while the
//! other places stay empty (the paging walk, 66 ms of a 102 ms run against the embedded
//! server, was the 42nd of 46 cases). Started first, the one-request cases fill the places
//! around them: longest-first scheduling, with the request count known from the case's kind.

use crate::case::model::{Case, CaseKind};

/// Indices into `cases` in the order to start them: the cases that send several requests
/// first, then the others, each group in file order. With one place (`jobs` 1) the order is
/// the files' (it changes nothing in the run's length and keeps a sequential run readable).
/// `snapshots` says whether snapshots are on: only then does an exchange case that snapshots
/// a whole walk or a sample of malls send more than its one request.
pub(super) fn launch_order(cases: &[&Case], jobs: usize, snapshots: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..cases.len()).collect();
    if jobs > 1 {
        // A stable sort: the file order holds within each group.
        order.sort_by_key(|&i| !sends_several(cases[i], snapshots));
    }
    order
}

/// Whether the case sends more than one request (a chain of pages, or one call per mall).
fn sends_several(case: &Case, snapshots: bool) -> bool {
    match &case.kind {
        CaseKind::Walk(_) | CaseKind::ProductsSweep(_) | CaseKind::CrossMerchantCursor(_) => true,
        CaseKind::Exchange(x) => {
            snapshots
                && x.snapshot
                    .as_ref()
                    .is_some_and(|s| s.walk || s.malls.is_some())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::parse::{ParseContext, parse_file};
    use std::collections::BTreeMap;
    use std::path::Path;

    fn cases(yaml: &str) -> Vec<Case> {
        let vars = BTreeMap::new();
        let cx = ParseContext {
            vars: &vars,
            schema_names: &[],
        };
        parse_file(Path::new("order.yaml"), yaml.to_string(), &cx)
            .expect("the cases parse")
            .cases
    }

    const FILE: &str = r#"
cases:
  - name: one page
    endpoint: mall-list
    request:
      body: {merchantId: m, merchantUserId: u, role: super_admin, size: 10}
  - name: first page snapshot
    endpoint: mall-list
    request:
      body: {merchantId: m, merchantUserId: u, role: super_admin, size: 10}
    snapshot:
      walk: true
  - name: another page
    endpoint: mall-list
    request:
      body: {merchantId: m, merchantUserId: u, role: super_admin, size: 3}
  - name: the walk
    walk:
      body: {merchantId: m, merchantUserId: u, role: super_admin}
      sizes: [1, 3]
"#;

    #[test]
    fn the_cases_that_send_several_requests_start_first_in_file_order() {
        let parsed = cases(FILE);
        let refs: Vec<&Case> = parsed.iter().collect();
        assert_eq!(launch_order(&refs, 4, true), vec![1, 3, 0, 2]);
        // Without snapshots the snapshot case sends its one request.
        assert_eq!(launch_order(&refs, 4, false), vec![3, 0, 1, 2]);
    }

    #[test]
    fn one_place_keeps_the_file_order() {
        let parsed = cases(FILE);
        let refs: Vec<&Case> = parsed.iter().collect();
        assert_eq!(launch_order(&refs, 1, true), vec![0, 1, 2, 3]);
    }
}
