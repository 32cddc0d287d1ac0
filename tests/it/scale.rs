//! Bounded runs (issue 14, item 1): against a merchant with many malls the default run's
//! request count stays bounded, says what each check covered, and still catches the paging
//! faults that only show deep in the list.

use std::sync::Mutex;
use std::thread;

use crate::common::{Server, run_against};

/// Requests the reference server has answered, read from its counter.
fn served(server: &Server) -> u64 {
    server.counters()["requests"].as_u64().unwrap()
}

#[test]
fn a_default_run_against_many_malls_is_bounded_and_states_its_coverage() {
    let server = Server::start(&["--malls", "1500"]);
    let dir = tempfile::tempdir().unwrap();
    let before = served(&server);
    let out = run_against(&server.base_url, dir.path())
        .args(["--jobs", "4"])
        .output()
        .unwrap();
    let requests = served(&server) - before;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    // Walks at sizes 1, 3 and 10 over the whole list alone would be 2,000+ requests.
    assert!(requests <= 1_000, "{requests} requests for 1,500 malls");
    assert!(
        stdout.contains(
            "covered: paging.size-consistency: first 200 of 1,500 malls at sizes 1, 3, 10 \
             against the whole list at size 100"
        ),
        "{stdout}"
    );
    let report = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&report).unwrap();
    let scopes: Vec<String> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["coverage"].as_array().cloned().unwrap_or_default())
        .map(|c| {
            format!(
                "{}: {}",
                c["check"].as_str().unwrap(),
                c["scope"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        scopes.iter().any(|s| s.starts_with("products.listed-mall")
            && s.contains(" of 1,500 listed malls: the first, the last")),
        "{scopes:?}"
    );
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(junit.contains("covered: paging.repeatable"), "{junit}");
    assert!(
        junit.contains("the whole list (1,500 malls) twice at size 100"),
        "{junit}"
    );
}

#[test]
fn exhaustive_walks_every_size_to_the_end() {
    let server = Server::start(&["--malls", "300"]);
    let dir = tempfile::tempdir().unwrap();
    let before = served(&server);
    let out = run_against(&server.base_url, dir.path())
        .args([
            "--exhaustive",
            "--filter",
            "paging walk agrees at every page size",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    // Two walks of 300 malls at size 1 alone are 602 requests.
    assert!(served(&server) - before > 600);
    assert!(
        stdout
            .contains("paging.size-consistency: the whole list (300 malls) at sizes 1, 3, 10, 100"),
        "{stdout}"
    );
}

#[test]
fn paging_faults_deep_in_a_long_list_are_still_caught() {
    let server = Server::start(&["--malls", "1000"]);
    let faults = Mutex::new(vec![
        ("paging-skip-record", "paging.size-consistency"),
        ("paging-overlap", "paging.duplicate"),
        ("paging-endless", "paging.endless"),
        ("paging-unstable-order", "paging.size-consistency"),
        ("paging-nondeterministic", "paging.repeatable"),
        ("paging-page-over-count", "paging.page-size"),
    ]);
    let wrong = Mutex::new(Vec::new());
    thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                while let Some((fault, check)) = faults.lock().unwrap().pop() {
                    let dir = tempfile::tempdir().unwrap();
                    let out = run_against(&server.fault_url(fault), dir.path())
                        .args(["--quiet", "--jobs", "4", "--filter", "tag:paging"])
                        .output()
                        .unwrap();
                    let junit =
                        std::fs::read_to_string(dir.path().join("junit.xml")).unwrap_or_default();
                    if out.status.code() != Some(1) || !junit.contains(check) {
                        wrong
                            .lock()
                            .unwrap()
                            .push(format!("{fault}: exit {:?}, no {check}", out.status.code()));
                    }
                }
            });
        }
    });
    let wrong = wrong.into_inner().unwrap();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// §8 states no maximum page size: a service that turns away the cases' size 100 but serves
/// the spec's size 10 passes, its walks run at the largest size it serves (found once per
/// run) and the coverage says so; the paging checks keep their power at that size; a service
/// that turns away the spec's own size 10 still fails.
#[test]
fn a_service_with_a_smaller_page_limit_passes_at_its_limit_and_faults_still_show() {
    let server = Server::start(&["--max-page-size", "40"]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&server.base_url, dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "covered: paging.page-size: the service turns away pages of more than 40 records \
             (§8 states no maximum page size): size 100 walked at 40"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("at sizes 1, 3, 10 against the whole list at size 40"),
        "{stdout}"
    );

    let faulty = Server::start(&["--max-page-size", "40", "--fault", "paging-skip-record"]);
    let out = run_against(&faulty.base_url, dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("paging.size-consistency"), "{stdout}");

    let tiny = Server::start(&["--max-page-size", "5"]);
    let out = run_against(&tiny.base_url, dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("paging.page-failed"), "{stdout}");
}
