//! Text of the fuzzer's console lines and JUnit report: the reproducer of a failure (minimal
//! body, response, curl command, how to re-sign, seed) and the summary. Pure string building;
//! the caller decides where it goes.

use std::fmt::Write as _;
use std::io;

use quick_junit::TestCase;

use crate::diag::{escape_controls, escape_controls_by_line};
use crate::fuzz::body::FuzzBody;
use crate::fuzz::engine::{EndpointStats, FuzzEvent, FuzzFailure, FuzzReport, Halt, Origin};
use crate::fuzz::properties::PROPERTIES;
use crate::fuzz::shrink::ShrinkEnd;
use crate::report::junit::xml_safe;
use crate::report::style::{self, Palette};
use crate::report::text::plural;
use crate::sign::Signer;
use crate::verdict::check::Family;
use crate::verdict::event::{CaseResult, RunSummary, truncate};
use crate::verdict::exchange::Exchange;
use crate::verdict::sealed::Sealed;

/// Console styling (plain unless colour was asked for).
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Use ANSI colours.
    pub color: bool,
}

impl Style {
    fn fail(self) -> String {
        Palette::new(self.color).paint(style::FAIL, "FAIL")
    }

    fn warn(self) -> String {
        Palette::new(self.color).paint(style::WARN, "WARN")
    }

    /// FAIL, or WARN for a failure that only warns (`--robustness warn`).
    fn verdict(self, f: &FuzzFailure) -> String {
        if f.fails() { self.fail() } else { self.warn() }
    }

    fn pass(self) -> String {
        Palette::new(self.color).paint(style::PASS, "pass")
    }
}

/// Most response body characters shown.
const EXCERPT_CHARS: usize = 300;

/// The response part of a reproducer: status and body excerpt, or the transport problem.
pub fn response_seen(exchange: &Exchange) -> String {
    match (&exchange.response, &exchange.transport_error) {
        (Some(r), _) => {
            let body = if r.body_len == 0 {
                "empty body".to_string()
            } else {
                format!(
                    "{} bytes: {}",
                    r.body_len,
                    truncate(r.body_excerpt.as_str(), EXCERPT_CHARS)
                )
            };
            let extra = exchange
                .transport_error
                .as_ref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default();
            format!(
                "HTTP {} after {:.2} s, {body}{extra}",
                r.status,
                exchange.duration.as_secs_f64()
            )
        }
        (None, Some(e)) => format!(
            "no response after {:.2} s: {e}",
            exchange.duration.as_secs_f64()
        ),
        (None, None) => "no response".to_string(),
    }
}

fn quote(s: &str) -> String {
    shell_escape::unix::escape(s.into()).into_owned()
}

/// A curl command sending exactly `body` as recorded in `exchange` (Authorization stays
/// redacted). Bodies that are not plain UTF-8 text go through `printf` on stdin.
pub fn curl(exchange: &Exchange, body: &FuzzBody) -> String {
    let bytes = body.to_bytes();
    let mut cmd = format!(
        "curl -sS -X {} {}",
        exchange.request.method,
        quote(&exchange.request.url)
    );
    for (k, v) in &exchange.request.headers {
        let _ = write!(cmd, " -H {}", quote(&format!("{k}: {v}")));
    }
    match std::str::from_utf8(&bytes) {
        Ok(text) if !text.contains('\0') => {
            let _ = write!(cmd, " --data-raw {}", quote(text));
            cmd
        }
        _ => {
            let mut escaped = String::new();
            for &b in &bytes {
                match b {
                    b'\\' => escaped.push_str("\\\\"),
                    0x20..=0x7e => escaped.push(char::from(b)),
                    _ => {
                        let _ = write!(escaped, "\\0{b:03o}");
                    }
                }
            }
            format!("printf '%b' {} | {cmd} --data-binary @-", quote(&escaped))
        }
    }
}

/// How to recompute the redacted signature for the configured signer (spec §5).
pub fn resign_hint(signer: &Signer) -> String {
    let how = match signer {
        Signer::Md5 { .. } => {
            "lowercase hex md5 of the exact body bytes followed by the key: printf %s \"$BODY$MALLCHECK_SIGN_KEY\" | md5sum"
        }
        Signer::HmacSha256 { .. } => {
            "lowercase hex HMAC-SHA256 of the exact body bytes with the key: printf %s \"$BODY\" | openssl dgst -sha256 -hmac \"$MALLCHECK_SIGN_KEY\""
        }
        Signer::Static { .. } => {
            "the static signature (MALLCHECK_SIGN_KEY or --sign-key-file) as is"
        }
        Signer::Command { .. } => {
            "the output of the sign command on the body: printf %s \"$BODY\" | sh -c \"$MALLCHECK_SIGN_COMMAND\""
        }
    };
    format!("re-sign: replace <redacted> with the {how} (BODY = the --data-raw text)")
}

fn origin(failure: &FuzzFailure) -> String {
    match &failure.origin {
        Origin::Generated {
            case,
            steps,
            tries,
            end,
        } => {
            let note = match end {
                ShrinkEnd::Minimal => "",
                ShrinkEnd::Iterations => "; shrink limit reached, the body may not be minimal",
                ShrinkEnd::Stopped => {
                    "; shrinking stopped at --max-time, the body may not be minimal"
                }
                ShrinkEnd::Halted => {
                    "; shrinking stopped with the run, the body may not be minimal"
                }
            };
            format!(
                "generated case {case}, shrunk in {} ({} sent){note}",
                plural(usize::try_from(*steps).unwrap_or(usize::MAX), "step"),
                plural(usize::try_from(*tries).unwrap_or(usize::MAX), "candidate"),
            )
        }
        Origin::Replayed { path } => format!("replayed from {}", path.display()),
    }
}

fn indent(text: &str, by: &str) -> String {
    text.lines()
        .map(|l| format!("{by}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The full reproducer of a failure, several lines, ending with a newline.
pub fn failure(f: &FuzzFailure, seed: u64, signer: &Signer, style: Style) -> String {
    // A robustness property says so: it is no rule of the spec.
    let kind = if f.property.family == Family::Robustness {
        " [robustness]"
    } else {
        ""
    };
    let mut out = format!(
        "{} {} on {}{kind} ({})\n",
        style.verdict(f),
        f.property.id,
        f.endpoint.name(),
        f.property.summary
    );
    for finding in f.findings.iter().take(5) {
        let _ = writeln!(out, "  broke: {}", escape_controls(&finding.headline()));
    }
    if f.findings.len() > 5 {
        let _ = writeln!(out, "  broke: … and {} more", f.findings.len() - 5);
    }
    let _ = writeln!(out, "  minimal body ({}):", origin(f));
    // What the service sent (and a generated body) may hold terminal control characters: they
    // are printed escaped, never raw.
    let body = escape_controls_by_line(&f.body.display());
    let _ = writeln!(out, "{}", indent(&body, "    "));
    let _ = writeln!(
        out,
        "  response: {}",
        escape_controls(&response_seen(&f.exchange))
    );
    let _ = writeln!(out, "  reproduce:\n    {}", curl(&f.exchange, &f.body));
    let _ = writeln!(out, "    # {}", resign_hint(signer));
    match &f.saved {
        Some(Ok(path)) => {
            let _ = writeln!(
                out,
                "  saved: {} (replayed first on every later run)",
                path.display()
            );
        }
        Some(Err(e)) => {
            let _ = writeln!(out, "  not saved: {e}");
        }
        None => {}
    }
    let _ = writeln!(
        out,
        "  seed: {seed} (mallcheck fuzz --seed {seed} --endpoint {})",
        f.endpoint.name()
    );
    out
}

/// One console block per event.
pub fn event(e: &FuzzEvent, seed: u64, signer: &Signer, style: Style) -> String {
    match e {
        FuzzEvent::Replayed {
            path,
            endpoint,
            failing,
        } => {
            let verdict = if failing.is_empty() {
                "passes now".to_string()
            } else {
                format!(
                    "still fails {}",
                    failing.iter().map(|c| c.id).collect::<Vec<_>>().join(", ")
                )
            };
            format!(
                "replayed {} on {}: {verdict}\n",
                path.display(),
                endpoint.name()
            )
        }
        FuzzEvent::EndpointStarted { endpoint, cases } => {
            format!(
                "{}: fuzzing {}\n",
                endpoint.name(),
                plural(usize::try_from(*cases).unwrap_or(usize::MAX), "case")
            )
        }
        FuzzEvent::Failure(f) => failure(f, seed, signer, style),
        FuzzEvent::EndpointFinished(stats) => endpoint_finished(stats),
    }
}

/// "HTTP 431 ×3, HTTP 400 ×1" for the rejections of an endpoint; empty when there are none.
fn rejections(s: &EndpointStats) -> String {
    s.rejected
        .iter()
        .map(|(status, n)| format!("HTTP {status} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The note on requests the HTTP layer refused for their size, or nothing.
fn rejected_note(s: &EndpointStats) -> String {
    let n: u32 = s.rejected.values().sum();
    if n == 0 {
        return String::new();
    }
    format!(
        "{}: {} beyond common size limits refused by the HTTP layer ({}): not contract findings\n",
        s.endpoint.name(),
        plural(usize::try_from(n).unwrap_or(usize::MAX), "request"),
        rejections(s)
    )
}

fn endpoint_finished(s: &EndpointStats) -> String {
    format!("{}{}", endpoint_sent(s), rejected_note(s))
}

fn endpoint_sent(s: &EndpointStats) -> String {
    let dup = if s.duplicates > 0 {
        format!(" ({} skipped as duplicates)", s.duplicates)
    } else {
        String::new()
    };
    let ran = plural(usize::try_from(s.run).unwrap_or(usize::MAX), "case");
    if let Some(halt) = &s.halted {
        format!(
            "{}: stopped after {ran} of {}: {}{dup}\n",
            s.endpoint.name(),
            s.planned,
            halt_reason(halt)
        )
    } else if s.stopped_by_time {
        format!(
            "{}: stopped by --max-time after {ran} of {}{dup}\n",
            s.endpoint.name(),
            s.planned
        )
    } else if s.run < s.planned {
        format!(
            "{}: only {ran} of {} generated: the strategy ran out of new bodies{dup}\n",
            s.endpoint.name(),
            s.planned
        )
    } else {
        format!("{}: {ran} sent{dup}\n", s.endpoint.name())
    }
}

/// What `--max-time` left untested, for the summary: the cases the properties were checked on
/// when it stopped an endpoint before its budget, and the endpoints it left with none (the
/// run could not test them: exit 3). Empty when every budget was spent.
pub fn coverage_note(report: &FuzzReport) -> String {
    let short: Vec<String> = report
        .cut_short()
        .filter(|s| s.run > 0)
        .map(|s| format!("{} {} of {}", s.endpoint.name(), s.run, s.planned))
        .collect();
    let mut out = String::new();
    if !short.is_empty() {
        let _ = writeln!(
            out,
            "note: stopped by --max-time: the properties hold on the cases sent only ({}); a \
             longer --max-time or a smaller --count covers the whole budget",
            short.join(", ")
        );
    }
    for s in report.untested() {
        let _ = writeln!(
            out,
            "nothing tested on {}: {}{} (could not test, exit 3)",
            s.endpoint.name(),
            s.untested_reason(),
            if s.run == 0 {
                ", so its properties hold on nothing"
            } else {
                ""
            }
        );
    }
    out
}

/// Why a run halted, in a few words.
pub fn halt_reason(halt: &Halt) -> String {
    match halt {
        Halt::RateLimited { finding, .. } => format!("{}: {}", finding.check.id, finding.actual),
        Halt::Interrupted { cause } => format!("interrupted by {cause}"),
    }
}

/// Why a run halted, several lines without a trailing newline (for standard error, after
/// `error: ` when [`Halt::RateLimited`], and for the JUnit report). A rate limit is reported the
/// way `run` reports `transport.rate-limited`: an error of the run, with what was sent and
/// received.
pub fn halt_message(halt: &Halt) -> String {
    match halt {
        Halt::RateLimited {
            endpoint,
            finding,
            exchange,
        } => {
            let mut out = format!(
                "the fuzz run stopped on {}: {}",
                endpoint.name(),
                escape_controls(&finding.headline())
            );
            if !finding.detail.is_empty() {
                let _ = write!(out, "\n  {}", escape_controls(&finding.detail));
            }
            let _ = write!(
                out,
                "\n  response: {}\n  a rate limit is an error of the run, not a property failure: nothing was \
                 shrunk or saved for it; lower --rate, raise --max-retry-wait, or fuzz when the \
                 service allows the load",
                escape_controls(&response_seen(exchange))
            );
            out
        }
        Halt::Interrupted { cause } => {
            format!("interrupted by {cause}: the report holds what was found so far")
        }
    }
}

/// The closing summary: one line per property per endpoint, the verdict, the request rate.
pub fn summary(report: &FuzzReport, style: Style) -> String {
    let mut out = String::from("\nproperties:\n");
    let mut failed = 0;
    let mut total = 0;
    for stats in &report.endpoints {
        for property in PROPERTIES {
            total += 1;
            let broken = stats.violations.get(property.id).copied().unwrap_or(0);
            let verdict = if let Some(f) = report.failure(stats.endpoint, property) {
                if f.fails() {
                    failed += 1;
                }
                let times = if broken > 0 {
                    format!(
                        " ({} while generating)",
                        plural(usize::try_from(broken).unwrap_or(usize::MAX), "response")
                    )
                } else {
                    String::new()
                };
                format!("{}{times}", style.verdict(f))
            } else if stats.untested() || (stats.planned > 0 && stats.run == 0) {
                // Nothing was sent (before --max-time ran out, or a halt: h29 F12), or nothing
                // served: the property was not tested, it did not pass.
                "not tested".to_string()
            } else {
                style.pass()
            };
            let _ = writeln!(
                out,
                "  {:<14} {:<22} {verdict}",
                stats.endpoint.name(),
                property.id
            );
        }
    }
    let refused: u32 = report
        .endpoints
        .iter()
        .flat_map(|s| s.rejected.values())
        .sum();
    if refused > 0 {
        let _ = writeln!(
            out,
            "\nrefused by the HTTP layer (requests beyond common size limits, from --oversize; not contract findings):"
        );
        for stats in report.endpoints.iter().filter(|s| !s.rejected.is_empty()) {
            let _ = writeln!(out, "  {:<14} {}", stats.endpoint.name(), rejections(stats));
        }
    }
    let cases: u32 = report.endpoints.iter().map(|s| s.run).sum();
    let _ = writeln!(
        out,
        "\n{failed} of {total} {} failed; {} generated, {} replayed",
        if total == 1 { "property" } else { "properties" },
        plural(usize::try_from(cases).unwrap_or(usize::MAX), "case"),
        report.replayed,
    );
    out.push_str(&coverage_note(report));
    let secs = report.duration.as_secs_f64();
    let rate = if secs > 0.0 {
        f64::from(u32::try_from(report.requests).unwrap_or(u32::MAX)) / secs
    } else {
        0.0
    };
    let _ = writeln!(
        out,
        "sent {} in {secs:.1} s ({rate:.1} req/s)",
        plural(
            usize::try_from(report.requests).unwrap_or(usize::MAX),
            "request"
        )
    );
    if let Some(halt) = &report.halt {
        let _ = writeln!(
            out,
            "stopped early: {}; the verdicts above cover only what was sent before",
            halt_reason(halt)
        );
    }
    out
}

/// JUnit XML of a fuzz run stopped by its preflight: the `preflight` case exactly as `run`
/// reports it.
pub fn preflight_junit(preflight: &Sealed<CaseResult>) -> io::Result<String> {
    let mut summary = RunSummary::default();
    summary.add(preflight.outcome);
    summary.duration = preflight.duration;
    let run = crate::report::file::Run {
        base_url: "",
        target: "",
        strict: false,
        complete: true,
        interrupted: None,
        not_run: 0,
        summary: &summary,
        results: std::slice::from_ref(preflight),
        shard: None,
        embedded: false,
        started_at: None,
        warnings: &[],
    };
    crate::report::junit::render_named("mallcheck fuzz", &run)
}

/// The `<error>` test case of a halted run.
fn halt_testcase(halt: &Halt) -> TestCase {
    use crate::report::junit::{self, Verdict};
    let (name, classname, message) = match halt {
        Halt::RateLimited {
            endpoint, finding, ..
        } => (
            finding.check.id,
            format!("fuzz.{}", endpoint.name()),
            finding.headline(),
        ),
        Halt::Interrupted { cause } => (
            "interrupted",
            "fuzz".to_string(),
            format!("interrupted by {cause}: the report holds what was found so far"),
        ),
    };
    junit::testcase(
        name,
        &classname,
        std::time::Duration::ZERO,
        Verdict::Error {
            ty: name.to_string(),
            message,
            detail: halt_message(halt),
        },
    )
}

/// JUnit XML: one suite per endpoint, one test case per property; the total time is the
/// session's wall time.
pub fn junit(report: &FuzzReport, signer: &Signer) -> io::Result<String> {
    use crate::report::junit::{self, Verdict};
    let mut suites = Vec::new();
    for stats in &report.endpoints {
        let mut cases = Vec::new();
        for property in PROPERTIES {
            let name = property.id;
            let (verdict, out) = match report.failure(stats.endpoint, property) {
                // Only a warning (`--robustness warn`): the test passes and says what was seen.
                Some(f) if !f.fails() => {
                    let seen = f.findings.first().map(|x| x.headline()).unwrap_or_default();
                    (
                        Verdict::Pass,
                        Some(format!("warning (--robustness warn): {seen}")),
                    )
                }
                Some(f) => {
                    let message = f
                        .findings
                        .first()
                        .map_or_else(|| property.summary.to_string(), |x| x.headline());
                    let detail = failure(f, report.seed, signer, Style { color: false });
                    let ty = name.to_string();
                    let verdict = match property.family {
                        Family::Contract | Family::Robustness => Verdict::Failure {
                            ty,
                            message,
                            detail,
                        },
                        Family::Transport | Family::Harness => Verdict::Error {
                            ty,
                            message,
                            detail,
                        },
                    };
                    (verdict, None)
                }
                // Planned cases and none sent: nothing was judged.
                None if stats.untested() => (
                    Verdict::Skipped {
                        reason: stats.untested_reason(),
                    },
                    None,
                ),
                None => {
                    let short = if stats.stopped_by_time && stats.run < stats.planned {
                        format!(
                            " of {} planned: stopped by --max-time, the property holds on \
                             these only",
                            stats.planned
                        )
                    } else {
                        String::new()
                    };
                    let refused = if stats.rejected.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; refused by the HTTP layer for their size (not contract findings): {}",
                            rejections(stats)
                        )
                    };
                    let out = format!(
                        "{} generated cases{short}; seed {}{refused}",
                        stats.run, report.seed
                    );
                    (Verdict::Pass, Some(out))
                }
            };
            // Every property is judged on every response of the endpoint's session: each
            // testcase takes the session's time.
            let mut case = junit::testcase(
                name,
                &format!("fuzz.{}", stats.endpoint.name()),
                stats.duration,
                verdict,
            );
            if let Some(out) = out {
                case.set_system_out(xml_safe(&out));
            }
            cases.push(case);
        }
        let mut suite = junit::suite(&format!("fuzz {}", stats.endpoint.name()), None, cases);
        suite.set_time(stats.duration);
        suites.push(suite);
    }
    if let Some(halt) = &report.halt {
        suites.push(junit::suite("fuzz run", None, vec![halt_testcase(halt)]));
    }
    junit::document_timed("mallcheck fuzz", suites, report.duration)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::SignerKind;
    use crate::spec::catalog;
    use crate::verdict::endpoint::Endpoint;
    use crate::verdict::event::Finding;
    use crate::verdict::exchange::{RequestRecord, ResponseRecord};
    use serde_json::json;
    use std::path::PathBuf;
    use std::time::Duration;

    fn exchange() -> Exchange {
        Exchange {
            request: RequestRecord {
                method: "POST".into(),
                url: "http://h/p".into(),
                headers: vec![("Authorization".into(), "app <redacted>".into())],
                body: String::new(),
            },
            response: Some(ResponseRecord {
                status: 500,
                headers: vec![],
                body_excerpt: crate::verdict::exchange::Excerpt::text("{\"code\":\"5000\"}"),
                body_len: 15,
            }),
            transport_error: None,
            duration: Duration::from_millis(3),
            shows_finding: false,
        }
    }

    #[test]
    fn curl_quotes_json_and_pipes_binary_bodies() {
        let text = curl(&exchange(), &FuzzBody::Json(json!({"role": "it's"})));
        assert_eq!(
            text,
            "curl -sS -X POST 'http://h/p' -H 'Authorization: app <redacted>' --data-raw '{\"role\":\"it'\\''s\"}'"
        );
        let raw = curl(
            &exchange(),
            &FuzzBody::Raw {
                label: "x".into(),
                bytes: vec![b'{', 0xff, b'\\'],
            },
        );
        assert!(raw.starts_with("printf '%b' '{\\0377\\\\' | curl"), "{raw}");
        assert!(raw.ends_with("--data-binary @-"));
    }

    #[test]
    fn control_characters_of_the_service_are_printed_escaped() {
        let mut exchange = exchange();
        if let Some(r) = exchange.response.as_mut() {
            r.body_excerpt =
                crate::verdict::exchange::Excerpt::text("{\"msg\":\"\u{1b}[2J\u{7}boom\r\"}");
        }
        let f = FuzzFailure {
            endpoint: Endpoint::MallList,
            property: &catalog::FUZZ_NO_SERVER_ERROR,
            body: FuzzBody::Raw {
                label: "x".into(),
                bytes: b"\x1b]0;title\x07".to_vec(),
            },
            findings: vec![],
            exchange,
            origin: Origin::Generated {
                case: 1,
                steps: 0,
                tries: 0,
                end: ShrinkEnd::Minimal,
            },
            saved: None,
        };
        let signer = Signer::new(SignerKind::Md5, "k".into());
        let text = failure(&f, 1, &signer, Style { color: false });
        let shown: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("printf") && !l.contains("curl"))
            .collect();
        assert!(
            !shown.chars().any(|c| c.is_control() && c != '\t'),
            "{shown:?}"
        );
        assert!(text.contains("\\u{1b}[2J"), "{text}");
    }

    #[test]
    fn a_failure_block_has_body_response_curl_resign_and_seed() {
        let f = FuzzFailure {
            endpoint: Endpoint::MallList,
            property: &catalog::FUZZ_NO_SERVER_ERROR,
            body: FuzzBody::Json(json!({"cursor": {"count": 81}})),
            findings: vec![],
            exchange: exchange(),
            origin: Origin::Generated {
                case: 3,
                steps: 4,
                tries: 9,
                end: ShrinkEnd::Minimal,
            },
            saved: Some(Ok(PathBuf::from("dir/x.json"))),
        };
        let signer = Signer::new(SignerKind::Md5, "k".into());
        let text = failure(&f, 42, &signer, Style { color: false });
        for needle in [
            "FAIL fuzz.no-server-error on mall-list",
            "\"count\": 81",
            "HTTP 500",
            "curl -sS",
            "md5",
            "seed: 42",
            "dir/x.json",
            "shrunk in 4 steps",
        ] {
            assert!(text.contains(needle), "{needle} missing from\n{text}");
        }
        assert!(!text.contains("\"k\""));
    }

    #[test]
    fn junit_has_one_case_per_property_per_endpoint() {
        let report = FuzzReport {
            seed: 1,
            endpoints: vec![EndpointStats {
                endpoint: Endpoint::MallProducts,
                planned: 5,
                run: 5,
                duplicates: 0,
                stopped_by_time: false,
                violations: Default::default(),
                rejected: [(431, 2)].into_iter().collect(),
                served: 3,
                valid_body: true,
                no_mall_known: false,
                refused: Default::default(),
                halted: None,
                duration: Duration::from_secs(1),
            }],
            failures: vec![],
            replayed: 0,
            requests: 5,
            duration: Duration::from_secs(1),
            halt: None,
        };
        let xml = junit(&report, &Signer::new(SignerKind::Md5, "k".into())).unwrap();
        assert_eq!(xml.matches("<testcase").count(), PROPERTIES.len());
        assert!(xml.contains("fuzz.mall-products"));
        assert!(xml.contains("not contract findings): HTTP 431 ×2"), "{xml}");
        let text = summary(&report, Style { color: false });
        assert!(text.contains("mall-products  HTTP 431 ×2"), "{text}");
        assert!(text.contains("0 of 6 properties failed"), "{text}");
    }
    /// `--max-time` cut an endpoint short: the summary and the JUnit say on how many cases the
    /// properties hold; an endpoint it left without a case is untested (skipped, exit 3).
    #[test]
    fn max_time_coverage_is_part_of_the_verdict() {
        let stats = |endpoint, run| EndpointStats {
            endpoint,
            planned: 500,
            run,
            duplicates: 0,
            stopped_by_time: true,
            violations: Default::default(),
            rejected: Default::default(),
            served: run,
            valid_body: true,
            no_mall_known: false,
            refused: Default::default(),
            halted: None,
            duration: Duration::from_secs(7),
        };
        let mut report = FuzzReport {
            seed: 1,
            endpoints: vec![
                stats(Endpoint::MallList, 4),
                stats(Endpoint::MallProducts, 4),
            ],
            failures: vec![],
            replayed: 0,
            requests: 8,
            duration: Duration::from_secs(14),
            halt: None,
        };
        let signer = Signer::new(SignerKind::Md5, "k".into());
        assert!(report.passed(), "cut short, but every endpoint was tested");
        let text = summary(&report, Style { color: false });
        assert!(
            text.contains(
                "hold on the cases sent only (mall-list 4 of 500, mall-products 4 of 500)"
            ),
            "{text}"
        );
        let xml = junit(&report, &signer).unwrap();
        assert!(
            xml.contains("4 generated cases of 500 planned: stopped by --max-time"),
            "{xml}"
        );
        assert!(!xml.contains("<skipped"), "{xml}");
        report.endpoints[1].run = 0;
        assert!(!report.passed(), "mall-products was not tested");
        let text = summary(&report, Style { color: false });
        assert!(text.contains("nothing tested on mall-products"), "{text}");
        assert!(
            text.contains("mall-products  fuzz.ownership         not tested"),
            "{text}"
        );
        assert!(!text.contains("mall-products 0 of 500"), "{text}");
        let xml = junit(&report, &signer).unwrap();
        assert_eq!(xml.matches("<skipped").count(), PROPERTIES.len(), "{xml}");
        // A whole budget says nothing.
        for s in &mut report.endpoints {
            (s.run, s.served, s.stopped_by_time) = (500, 500, false);
        }
        assert_eq!(coverage_note(&report), "");
        assert!(report.passed());
        // A whole budget sent and nothing served (a firewall turned every case away): the
        // properties held on refusals alone, so the endpoint is untested.
        report.endpoints[0].served = 0;
        report.endpoints[0].refused = [(413, 499), (0, 1)].into_iter().collect();
        assert!(!report.passed(), "mall-list was not served");
        let text = summary(&report, Style { color: false });
        assert!(
            text.contains(
                "nothing tested on mall-list: none of its 500 cases was served, the valid \
                 body included: every answer was a refusal or an error (no answer ×1, 413 ×499)"
            ),
            "{text}"
        );
        assert!(
            text.contains("mall-list      fuzz.ownership         not tested"),
            "{text}"
        );
        let xml = junit(&report, &signer).unwrap();
        assert_eq!(xml.matches("<skipped").count(), PROPERTIES.len(), "{xml}");
        assert!(xml.contains("none of its 500 cases was served"), "{xml}");
    }

    #[test]
    fn a_halted_run_is_an_error_of_the_run_in_the_summary_and_the_junit() {
        let stats = |halted| EndpointStats {
            endpoint: Endpoint::MallList,
            planned: 100,
            run: 7,
            duplicates: 0,
            stopped_by_time: false,
            violations: Default::default(),
            rejected: Default::default(),
            served: 7,
            valid_body: true,
            no_mall_known: false,
            refused: Default::default(),
            halted,
            duration: Duration::ZERO,
        };
        let limited = Halt::RateLimited {
            endpoint: Endpoint::MallList,
            finding: Box::new(Finding::new(
                &catalog::TRANSPORT_RATE_LIMITED,
                "",
                "an answer within 10 s",
                "rate limited (429, Retry-After 30 s)",
            )),
            exchange: Box::new(exchange()),
        };
        let signer = Signer::new(SignerKind::Md5, "k".into());
        for (why, halt, ty, words) in [
            (
                "rate limit",
                limited,
                "transport.rate-limited",
                [
                    "transport.rate-limited: rate limited",
                    "not a property failure",
                ],
            ),
            (
                "signal",
                Halt::Interrupted { cause: "SIGTERM" },
                "interrupted",
                ["interrupted by SIGTERM", "found so far"],
            ),
        ] {
            let report = FuzzReport {
                seed: 1,
                endpoints: vec![stats(Some(halt.clone()))],
                failures: vec![],
                replayed: 0,
                requests: 7,
                duration: Duration::from_secs(1),
                halt: Some(halt.clone()),
            };
            assert!(!report.passed(), "{why}");
            let line = endpoint_sent(&report.endpoints[0]);
            assert!(
                line.contains("stopped after 7 cases of 100"),
                "{why}: {line}"
            );
            let text = summary(&report, Style { color: false });
            assert!(text.contains("0 of 6 properties failed"), "{why}: {text}");
            assert!(text.contains("stopped early: "), "{why}: {text}");
            assert!(!text.contains("FAIL"), "{why}: {text}");
            let message = halt_message(&halt);
            let xml = junit(&report, &signer).unwrap();
            assert!(!xml.contains("<failure"), "{why}: {xml}");
            assert_eq!(xml.matches("<error").count(), 1, "{why}: {xml}");
            assert!(xml.contains(&format!("type=\"{ty}\"")), "{why}: {xml}");
            for w in words {
                assert!(
                    message.contains(w) || text.contains(w),
                    "{why}: `{w}` in {message} / {text}"
                );
            }
            // Halted before its first case: its properties were not tested (h29 F12).
            let mut before = report.clone();
            before.endpoints[0].run = 0;
            let text = summary(&before, Style { color: false });
            assert!(
                text.contains("mall-list      fuzz.ownership         not tested"),
                "{why}: {text}"
            );
        }
    }
}
