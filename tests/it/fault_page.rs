//! A paging failure's example exchange is the page where the fault shows, not the first page
//! (issue 23 item 8): the reference server's paging faults show on page 2 and later.

use std::path::Path;

use crate::common::{Server, output_text, run_as_main};

/// The request of the exchange the HTML report opens for the first failing case, and the
/// summary above it, after a run of the spec-size walk case against `fault`.
fn shown_exchange(server: &Server, fault: &str, dir: &Path) -> (String, String) {
    let html = dir.join(format!("{fault}.html"));
    let out = run_as_main(&server.fault_url(fault), dir)
        .args(["--snapshots", "off", "--color", "never"])
        .args(["--filter", "walk at the spec's page size is repeatable"])
        .arg("--html")
        .arg(&html)
        .output()
        .expect("run mallcheck");
    assert_eq!(out.status.code(), Some(1), "{}", output_text(&out));
    let html = std::fs::read_to_string(&html).expect("the HTML report");
    let open = html
        .find("<details open><summary>Request and response")
        .unwrap_or_else(|| panic!("an open exchange: {html}"));
    let block = &html[open..];
    let summary = block[..block.find("</summary>").expect("summary end")].to_string();
    let request = block[..block.find("</pre>").expect("request end")].to_string();
    (summary, request)
}

#[test]
fn a_duplicate_shows_the_page_it_is_on() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let (summary, request) = shown_exchange(&server, "paging-overlap", dir.path());
    assert!(
        summary.contains("where it shows (exchange 2 of"),
        "{summary}"
    );
    assert!(
        !request.contains("&quot;endCursor&quot;:null"),
        "not the first page: {request}"
    );
    assert!(
        request.contains("&quot;endCursor&quot;:&quot;"),
        "a page after a cursor: {request}"
    );
}

#[test]
fn a_walk_that_differs_shows_the_page_of_the_first_difference() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let (summary, request) = shown_exchange(&server, "paging-skip-record", dir.path());
    assert!(summary.contains("where it shows (exchange"), "{summary}");
    assert!(
        request.contains("&quot;endCursor&quot;:&quot;"),
        "a page after a cursor: {request}"
    );
}
