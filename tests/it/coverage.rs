//! Green means tested: the exit code tells a broken contract (1) from a service that could not
//! be tested (3), and a run that covered nothing is not a pass. The whole shipped suite runs
//! against the reference server (with faults), as a CI gate would run it.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{Server, assert_exit, bin, closed_port, output_text, repo, run_against};
use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, EMPTY, MAIN};

/// The JSON report of a run in `dir`.
fn report(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("report.json")).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_default()
}

/// Runs the shipped suite against `base_url` with every report in `dir`.
fn gate(base_url: &str, dir: &Path, extra: &[&str]) -> Output {
    run_against(base_url, dir)
        .args(["--markdown", "summary.md", "--html", "report.html"])
        .args(["--snapshots", "off"])
        .args(extra)
        .output()
        .unwrap()
}

/// [`gate`] as another merchant of the reference server, set as a pipeline sets it: by
/// `MALLCHECK_MERCHANT_ID` and `MALLCHECK_MERCHANT_USER_ID`.
fn gate_as(base_url: &str, dir: &Path, merchant: (&str, &str), extra: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .env("MALLCHECK_MERCHANT_ID", merchant.0)
        .env("MALLCHECK_MERCHANT_USER_ID", merchant.1)
        .args(["run", "--base-url", base_url, "--appid", DEMO_APPID])
        .arg("--cases")
        .arg(repo().join("cases"))
        .args([
            "--junit",
            "junit.xml",
            "--json",
            "report.json",
            "--color",
            "never",
        ])
        .args(["--markdown", "summary.md", "--html", "report.html"])
        .args(["--snapshots", "off"])
        .args(extra)
        .output()
        .unwrap()
}

/// The exit code and verdict the JSON report and the JUnit report give.
fn assert_reported(dir: &Path, code: i64, verdict: &str) {
    let json = report(dir);
    assert_eq!(json["exit_code"], code, "{json}");
    assert_eq!(json["verdict"], verdict, "{json}");
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert!(
        junit.contains(&format!(
            "<property name=\"mallcheck.exit-code\" value=\"{code}\"/>"
        )),
        "{junit}"
    );
    assert!(
        junit.contains(&format!(
            "<property name=\"mallcheck.verdict\" value=\"{verdict}\"/>"
        )),
        "{junit}"
    );
}

#[test]
fn a_correct_service_passes_and_every_report_says_what_was_covered() {
    let server = Server::start(&["--malls", "23"]);
    let dir = tempfile::tempdir().unwrap();
    let out = gate(&server.base_url, dir.path(), &[]);
    assert_exit(&out, 0);
    assert_reported(dir.path(), 0, "pass");
    let markdown = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    // A merchant of 23 malls fits the sweep's budget: every listed mall's products are checked.
    let swept = "every one of 23 listed malls";
    assert!(output_text(&out).contains(swept), "{}", output_text(&out));
    assert!(markdown.contains("Coverage"), "{markdown}");
    assert!(markdown.contains(swept), "{markdown}");
    assert!(html.contains("covered: products.listed-mall"), "{html}");
    assert!(html.contains(swept), "{html}");
}

#[test]
fn a_server_error_is_a_broken_contract() {
    let server = Server::start(&["--fault", "http-500-html"]);
    let dir = tempfile::tempdir().unwrap();
    let out = gate(&server.base_url, dir.path(), &[]);
    assert_exit(&out, 1);
    assert_reported(dir.path(), 1, "contract-broken");
}

#[test]
fn a_merchant_without_malls_is_not_a_pass_unless_expected() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    // A merchant id the service does not know (a mistyped CI variable).
    let unknown = "00000000-0000-4000-8000-00000000d00d";
    let out = gate_as(
        &server.base_url,
        dir.path(),
        (unknown, MAIN.merchant_user_id),
        &[],
    );
    assert_exit(&out, 3);
    assert_reported(dir.path(), 3, "could-not-test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("lists no mall"), "{stdout}");
    let markdown = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(markdown.contains("lists no mall"), "{markdown}");
    assert!(markdown.contains("--allow-empty-merchant"), "{markdown}");
    assert!(markdown.contains("### Skipped"), "skip reasons: {markdown}");
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("0 malls checked"), "{html}");

    // The same run, told an empty merchant is expected: the known-empty merchant passes.
    let dir = tempfile::tempdir().unwrap();
    let out = gate_as(
        &server.base_url,
        dir.path(),
        (EMPTY.merchant_id, EMPTY.merchant_user_id),
        &["--allow-empty-merchant"],
    );
    assert_exit(&out, 0);
    assert!(
        output_text(&out).contains("expected: --allow-empty-merchant"),
        "{}",
        output_text(&out)
    );
}

/// A filter that keeps only single-page mall-list cases (no walk, no discovered mall) still
/// learns from the preflight that the merchant lists no mall: nothing was covered.
#[test]
fn a_filtered_run_of_a_merchant_without_malls_is_not_a_pass() {
    let server = Server::start(&[]);
    let unknown = "00000000-0000-4000-8000-00000000d00d";
    for filter in ["tag:mall", "tag:mall-list"] {
        let dir = tempfile::tempdir().unwrap();
        let out = gate_as(
            &server.base_url,
            dir.path(),
            (unknown, MAIN.merchant_user_id),
            &["--filter", filter],
        );
        assert_exit(&out, 3);
        let text = output_text(&out);
        assert!(text.contains("lists no mall"), "{filter}: {text}");
        assert!(!text.contains("0 cases were skipped"), "{filter}: {text}");
    }
}

/// Malls whose every products call answers an empty list leave the product and SKU checks
/// nothing to check: not a pass unless expected.
#[test]
fn malls_without_a_single_product_are_not_a_pass_unless_expected() {
    let server = Server::start(&[]);
    let url = server.fault_url("no-products");
    let dir = tempfile::tempdir().unwrap();
    let out = gate(&url, dir.path(), &[]);
    assert_exit(&out, 3);
    assert_reported(dir.path(), 3, "could-not-test");
    let text = output_text(&out);
    assert!(
        text.contains("no product or SKU record was checked"),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = gate(&url, dir.path(), &["--allow-empty-merchant"]);
    assert_exit(&out, 0);
    assert!(
        output_text(&out).contains("every products call answered an empty list (expected"),
        "{}",
        output_text(&out)
    );
}

#[test]
fn an_unreachable_port_could_not_be_tested() {
    let port = closed_port();
    let dir = tempfile::tempdir().unwrap();
    let out = gate(&format!("http://127.0.0.1:{port}"), dir.path(), &[]);
    assert_exit(&out, 3);
    assert_reported(dir.path(), 3, "could-not-test");
}

#[test]
fn a_bad_price_in_a_later_mall_of_23_fails_every_run() {
    let server = Server::start(&["--malls", "23", "--fault", "sku-price-string-in-one-mall"]);
    for run in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let out = gate(&server.base_url, dir.path(), &[]);
        assert_exit(&out, 1);
        assert_reported(dir.path(), 1, "contract-broken");
        let json = report(dir.path());
        let sweep = json["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"]["name"] == "products of every listed mall")
            .unwrap_or_else(|| panic!("run {run}: {json}"));
        assert_eq!(sweep["outcome"], "fail", "run {run}: {sweep}");
        assert!(
            sweep["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["check"] == "sku.fields"),
            "run {run}: {sweep}"
        );
    }
}

/// Beyond the budget the sweep samples with a seed that changes from run to run, says so,
/// and `--seed` replays a run's sample.
#[test]
fn a_large_merchant_is_sampled_with_a_printed_seed_that_replays() {
    let server = Server::start(&["--malls", "300"]);
    let sweep = |seed: Option<&str>| {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = run_against(&server.base_url, dir.path());
        cmd.args(["--filter", "products of every listed mall"]);
        if let Some(seed) = seed {
            cmd.args(["--seed", seed]);
        }
        let out = cmd.output().unwrap();
        assert_exit(&out, 0);
        let text = output_text(&out);
        let covered = text
            .lines()
            .find(|l| l.contains("covered: products.listed-mall"))
            .unwrap_or_else(|| panic!("{text}"))
            .trim()
            .to_string();
        (covered, text)
    };
    let (first, text) = sweep(Some("replay-me"));
    assert!(first.contains("of 300 listed malls"), "{first}");
    assert!(first.contains("seed \"replay-me\""), "{first}");
    assert!(
        text.contains("--seed replay-me replays this sample"),
        "{text}"
    );
    let (again, _) = sweep(Some("replay-me"));
    assert_eq!(first, again, "the same seed draws the same sample");
    let (other, text) = sweep(None);
    assert!(!other.contains("replay-me"), "{other}");
    assert!(
        text.contains("sampled the merchant's malls with seed"),
        "{text}"
    );
}

/// `fuzz` as `run`: a merchant that lists no mall (a mistyped id looks just like it) stops the
/// run before anything is generated, exit 3 with a `discovery` error in the JUnit report;
/// `--allow-empty-merchant` fuzzes it all the same.
#[test]
fn fuzz_against_a_merchant_with_no_mall_does_not_pass_unless_expected() {
    let server = Server::start(&[]);
    let url = server.fault_url("no-malls");
    let dir = tempfile::tempdir().unwrap();
    let fuzz = |extra: &[&str]| {
        crate::common::fuzz_as_main(&url, dir.path(), "3")
            .args(["--count", "5", "--max-time", "30"])
            .args(extra)
            .output()
            .unwrap()
    };
    let stopped = fuzz(&[]);
    assert_exit(&stopped, 3);
    let text = output_text(&stopped);
    assert!(text.contains("lists no mall"), "{text}");
    assert!(text.contains("--allow-empty-merchant"), "{text}");
    assert!(!text.contains("sent "), "nothing fuzzed: {text}");
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        junit.contains("discovery") && junit.contains("<error"),
        "{junit}"
    );
    let allowed = fuzz(&["--allow-empty-merchant"]);
    assert_exit(&allowed, 0);
    assert!(
        output_text(&allowed).contains("sent "),
        "{}",
        output_text(&allowed)
    );
}

/// The continuation-page refusal case is vacuous for a merchant with one mall: the page after
/// its only mall is empty whether or not the request is refused. It is skipped, saying why,
/// where a merchant with more malls runs it.
#[test]
fn a_refusal_on_the_page_after_the_last_mall_is_skipped_not_passed() {
    use mallcheck::server::data::SINGLE;
    const CASE: &str = "mall list continuation page with a wrong signature gets no data";
    let server = Server::start(&[]);
    let case = |dir: &Path| {
        report(dir)["cases"]
            .as_array()
            .and_then(|cases| cases.iter().find(|c| c["id"]["name"] == CASE).cloned())
            .unwrap_or_default()
    };
    let dir = tempfile::tempdir().unwrap();
    let out = gate_as(
        &server.base_url,
        dir.path(),
        (SINGLE.merchant_id, SINGLE.merchant_user_id),
        &["--filter", "tag:auth"],
    );
    assert_exit(&out, 0);
    let single = case(dir.path());
    assert_eq!(single["outcome"], "skip", "{single}");
    let reason = single["skip_reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("no mall after the discovered one"),
        "{reason}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = gate_as(
        &server.base_url,
        dir.path(),
        (MAIN.merchant_id, MAIN.merchant_user_id),
        &["--filter", "tag:auth"],
    );
    assert_exit(&out, 0);
    assert_eq!(case(dir.path())["outcome"], "pass");
}

/// A products refusal probe of a mall with no products tells nothing (its answer is empty,
/// refused or not): discovery targets a mall whose products call answers a list with products.
/// OTHER's newest live mall has none; a service that serves products without Authorization
/// when `X-env-flag` is absent is caught through the next mall.
#[test]
fn products_refusal_probes_target_a_mall_that_has_products() {
    use mallcheck::server::data::OTHER;
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .env("MALLCHECK_OTHER_MERCHANT_ID", MAIN.merchant_id)
        .env("MALLCHECK_OTHER_MERCHANT_USER_ID", MAIN.merchant_user_id)
        .args(["run", "--base-url"])
        .arg(server.fault_url("auth-skipped-without-env-flag"))
        .args(["--appid", DEMO_APPID, "--merchant-id", OTHER.merchant_id])
        .args(["--merchant-user-id", OTHER.merchant_user_id])
        .args([
            "--json",
            "report.json",
            "--snapshots",
            "off",
            "--color",
            "never",
        ])
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let ids = crate::common::finding_ids(&dir.path().join("report.json"));
    assert!(ids.iter().any(|id| id == "auth.required"), "{ids:?}");
}

/// An off-by-one at the list's end (the last page, exactly full, loses its last mall) shows
/// only at a size the list's length is a multiple of: OTHER's four malls are walked at 1, 3, 10
/// and 100, none of which makes its last page full, so the list is walked once more in one
/// page of four.
#[test]
fn a_list_whose_exactly_full_last_page_loses_a_mall_is_caught_at_the_lists_length() {
    use mallcheck::server::data::OTHER;
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .env("MALLCHECK_OTHER_MERCHANT_ID", MAIN.merchant_id)
        .env("MALLCHECK_OTHER_MERCHANT_USER_ID", MAIN.merchant_user_id)
        .args(["run", "--base-url"])
        .arg(server.fault_url("paging-last-full-page-short"))
        .args(["--appid", DEMO_APPID, "--merchant-id", OTHER.merchant_id])
        .args(["--merchant-user-id", OTHER.merchant_user_id])
        .args(["--filter", "tag:walk"])
        .args([
            "--json",
            "report.json",
            "--snapshots",
            "off",
            "--color",
            "never",
        ])
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let text = output_text(&out);
    assert!(text.contains("walk at size 4 (the list's length"), "{text}");
    let ids = crate::common::finding_ids(&dir.path().join("report.json"));
    assert!(
        ids.iter().any(|id| id == "paging.size-consistency"),
        "{ids:?}"
    );
}
