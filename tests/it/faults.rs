//! Self-verification: the shipped cases, run by the real binary, catch every contract fault of
//! the reference server with the expected check id, and pass every tolerated variation.

use std::sync::Mutex;
use std::thread;

use crate::common::{Server, run_against};
use mallcheck::server::data::OTHER;
use mallcheck::server::faults::Fault;

/// Runs at once; each run is a separate process.
const PARALLEL: usize = 4;

struct Verdict {
    fault: &'static str,
    expected: Option<&'static str>,
    exit: i32,
    code: Option<i32>,
    junit: String,
    stdout: String,
}

fn verify(server: &Server, fault: Fault) -> Verdict {
    let dir = tempfile::tempdir().unwrap();
    // Faults that hang only need a short deadline to be caught; the rest get the default.
    let timeout = if fault.expected_check() == Some("transport.timeout") {
        "1"
    } else {
        "10"
    };
    let mut run = run_against(&server.fault_url(fault.name()), dir.path());
    run.args(["--timeout", timeout, "--jobs", "8", "--quiet"]);
    // The reference server's second merchant, for the probes that need one (a cross-merchant
    // cursor); without it they are skipped.
    run.env("MALLCHECK_OTHER_MERCHANT_ID", OTHER.merchant_id)
        .env("MALLCHECK_OTHER_MERCHANT_USER_ID", OTHER.merchant_user_id);
    // A merchant without malls passes only when the user expects one (else: nothing
    // covered, exit 3; see tests/it/coverage.rs).
    if matches!(fault, Fault::NoMalls | Fault::NoProducts) {
        run.arg("--allow-empty-merchant");
    }
    // A service whose cursors are tokens of its own is run with the rule that reads them.
    if fault == Fault::CursorTokenContinuationUnverified {
        run.args(["--cursor", "response:/endCursor"]);
    }
    // A contract fault runs only the shipped cases that can report its check (`--filter
    // check:ID` keeps every case that can produce a finding of that id), so the verdict is the
    // one the whole suite gives, at a fraction of the cost; a variation runs the whole suite.
    if let Some(id) = fault.expected_check() {
        run.args(["--filter", &format!("check:{id}")]);
    }
    let out = run.output().unwrap();
    Verdict {
        fault: fault.name(),
        expected: fault.expected_check(),
        exit: fault.expected_exit(),
        code: out.status.code(),
        junit: std::fs::read_to_string(dir.path().join("junit.xml")).unwrap_or_default(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    }
}

#[test]
fn every_fault_is_caught_with_its_check_id_and_every_variation_passes() {
    let server = Server::start(&[]);
    let queue: Mutex<Vec<Fault>> = Mutex::new(
        Fault::all()
            .iter()
            .copied()
            // huge-header is tested on its own (secrets.rs): each of its 380 KB answers is slow
            // to read on a busy machine, and the whole suite against it would time out.
            .filter(|f| !f.is_fuzz_trigger() && !f.is_secret_echo() && *f != Fault::HugeHeader)
            .collect(),
    );
    let verdicts: Mutex<Vec<Verdict>> = Mutex::new(Vec::new());
    thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| {
                while let Some(fault) = queue.lock().unwrap().pop() {
                    let v = verify(&server, fault);
                    verdicts.lock().unwrap().push(v);
                }
            });
        }
    });
    let verdicts = verdicts.into_inner().unwrap();
    let contract = verdicts.iter().filter(|v| v.expected.is_some()).count();
    let tolerated = verdicts.len() - contract;
    assert!(contract >= 40, "only {contract} contract faults");
    assert!(tolerated >= 10, "only {tolerated} tolerated variations");
    let mut wrong = Vec::new();
    for v in &verdicts {
        let ok = match v.expected {
            // The id appears in the failure/error type or text of the JUnit report.
            // Exit 1 for a broken contract, 3 for a service that could not be tested.
            Some(id) => v.code == Some(v.exit) && v.junit.contains(id),
            None => v.code == Some(0),
        };
        if !ok {
            wrong.push(format!(
                "{} (expected {}): exit {:?}\n{}",
                v.fault,
                v.expected.unwrap_or("a pass"),
                v.code,
                v.stdout.lines().take(12).collect::<Vec<_>>().join("\n")
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong verdicts:\n{}",
        wrong.len(),
        wrong.join("\n\n")
    );
}

/// A run of `args` against `base_url`: its exit code, its findings' check ids and its stdout.
fn verdict_of(base_url: &str, args: &[&str]) -> (Option<i32>, Vec<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(base_url, dir.path())
        .args(args)
        .arg("--quiet")
        .output()
        .unwrap();
    let ids = crate::common::finding_ids(&dir.path().join("report.json"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code(), ids, stdout)
}

/// `mall.read-only` holds the pages single exchanges read, not only the walks' pages: two
/// cases that each read the first page (no walk among them) catch a service whose reads move a
/// mall, and pass against the reference server.
#[test]
fn two_single_page_cases_catch_a_read_that_moves_a_mall() {
    let server = Server::start(&[]);
    let only = [
        "--filter",
        "first page is a success envelope",
        "--filter",
        "state, internal state and deletion are enums",
    ];
    let (code, ids, stdout) = verdict_of(&server.fault_url("mall-state-flips"), &only);
    assert_eq!(
        (code, ids.as_slice()),
        (Some(1), &["mall.read-only".to_string()][..]),
        "{stdout}"
    );
    assert!(
        stdout.contains("2 cases"),
        "only the two single-page cases ran: {stdout}"
    );
    let (code, _, stdout) = verdict_of(&server.base_url, &only);
    assert_eq!(code, Some(0), "{stdout}");
}

/// The preflight's first page is the run's first read of its malls: a single case that reads
/// the page once more catches a service whose first read moved a mall.
#[test]
fn the_preflight_page_is_the_first_read_of_mall_read_only() {
    let server = Server::start(&[]);
    let only = ["--filter", "first page is a success envelope"];
    let (code, ids, stdout) = verdict_of(&server.fault_url("mall-state-flips"), &only);
    assert_eq!(
        (code, ids.as_slice()),
        (Some(1), &["mall.read-only".to_string()][..]),
        "{stdout}"
    );
}
