//! Robustness findings: a 5xx on an odd or generated request is reported as what it is (no
//! spec section, not `[contract]`, not §7), in fuzz, in its JUnit report and when `run`
//! replays the saved regression; `--robustness warn` makes it a warning in both.

use crate::common::{Server, assert_exit, fuzz_as_main, output_text, run_as_main};
use mallcheck::server::faults::Fault;

#[test]
fn a_crash_on_odd_json_is_a_robustness_finding_everywhere() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let url = server.fault_url(Fault::FuzzOddJsonCrashCloses.name());
    let fuzz = |extra: &[&str]| {
        fuzz_as_main(&url, dir.path(), "7")
            .args(["--cases", "150"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = fuzz(&[]);
    assert_exit(&out, 1);
    let text = output_text(&out);
    assert!(
        text.contains("[robustness]")
            && text.contains("broke: robustness.server-error: expected a 4xx refusal or an answer, got HTTP 500 for a request holding "),
        "{text}"
    );
    assert!(
        !text.contains("§7") && !text.contains("http.server-error"),
        "{text}"
    );
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        junit.contains("<failure") && junit.contains("robustness.server-error"),
        "{junit}"
    );

    // `run` replays the saved body and says the same.
    let run = |extra: &[&str]| {
        run_as_main(&url, dir.path())
            .args(["--cases", "regs", "--color", "never"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert_exit(&out, 1);
    let text = output_text(&out);
    assert!(
        text.contains("[robustness] robustness.server-error: expected a 4xx refusal or an answer, got HTTP 500 for a request holding "),
        "{text}"
    );
    assert!(
        !text.contains("[contract]") && !text.contains("§7"),
        "{text}"
    );

    // A team that gates on the contract alone: a warning in both.
    let out = run(&["--robustness", "warn"]);
    assert_exit(&out, 0);
    assert!(output_text(&out).contains("WARN"), "{}", output_text(&out));
    let out = fuzz(&["--robustness", "warn"]);
    assert_exit(&out, 0);
    let text = output_text(&out);
    assert!(text.contains("WARN fuzz.no-server-error"), "{text}");
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(!junit.contains("<failure"), "{junit}");
}
