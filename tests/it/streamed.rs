//! Memory that does not grow with the body (issue 14, item 4): a 5,000-product response is
//! received and checked as a run's products sweep does — the client keeps the bytes and checks
//! they are JSON without building a tree, the check reads one record at a time — so the peak
//! memory added stays within a small multiple of the body (a tree of the whole body cost 8×).

use std::process::Command;

use crate::common::{Server, bin};

/// The probe's `name=value` field.
fn field(line: &str, name: &str) -> Option<String> {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
        .map(str::to_string)
}

#[test]
fn a_large_products_response_is_checked_without_a_tree_of_the_body() {
    let server = Server::start(&[]);
    let out = Command::new(bin())
        .args(["bench", "--memory-probe", &server.base_url])
        .output()
        .expect("run the memory probe");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("memory-probe "))
        .unwrap_or_else(|| panic!("no probe line: {stdout}"));
    let num = |name: &str| -> u64 {
        field(line, name)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {line}"))
    };
    assert_eq!(num("products"), 5_000, "{line}");
    assert_eq!(
        num("findings"),
        0,
        "the reference products are clean: {line}"
    );
    if field(line, "reset").as_deref() != Some("true") {
        eprintln!("skipped the memory bound: /proc/self/clear_refs cannot reset the peak here");
        return;
    }
    let (body, added) = (num("body"), num("peak").saturating_sub(num("baseline")));
    assert!(
        added < 4 * body,
        "peak memory added {added} bytes for a body of {body} bytes: {line}"
    );
}
