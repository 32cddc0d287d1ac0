//! Robustness findings: what a service did with an odd or generated request (a 5xx, a hang, a
//! dropped connection). The spec has no rule on it (§7 shows no status), so the findings cite
//! no section, and their words say what happened: "HTTP 500 for a request holding NaN".

use serde_json::Value;

use crate::json::a_json_type;
use crate::spec::catalog;
use crate::verdict::check::Check;
use crate::verdict::event::Finding;

/// Whether robustness findings fail the run (the default) or only warn (`--robustness warn`,
/// for teams that gate on the contract alone).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RobustnessGate {
    /// A robustness finding fails the run.
    #[default]
    Fail,
    /// A robustness finding is a warning (it fails only under `--strict`).
    Warn,
}

impl RobustnessGate {
    fn server_error(self) -> &'static Check {
        match self {
            RobustnessGate::Fail => &catalog::ROBUSTNESS_SERVER_ERROR,
            RobustnessGate::Warn => &catalog::ROBUSTNESS_SERVER_ERROR_WARNING,
        }
    }

    fn hang(self) -> &'static Check {
        match self {
            RobustnessGate::Fail => &catalog::ROBUSTNESS_HANG,
            RobustnessGate::Warn => &catalog::ROBUSTNESS_HANG_WARNING,
        }
    }
}

/// Strings longer than this are worth naming as the oddity of a request.
const LONG_STRING: usize = 4096;
/// Nesting deeper than this is worth naming.
const DEEP: usize = 32;

/// What is odd about a request body, as the end of "a request …": "holding NaN", "holding the
/// number 1e999 (out of range)", "holding a lone surrogate (\ud800)", "holding arrays nested
/// 1000 deep", "whose body is not JSON". `None` for an ordinary JSON body.
pub fn oddity(body: &[u8]) -> Option<String> {
    let Ok(text) = std::str::from_utf8(body) else {
        return Some("holding bytes that are not UTF-8".to_string());
    };
    let scan = Scan::of(text);
    if let Some(word) = scan.words.iter().find(|w| {
        matches!(
            w.as_str(),
            "NaN" | "Infinity" | "-Infinity" | "undefined" | "None"
        )
    }) {
        return Some(format!("holding {word}"));
    }
    if let Some(n) = scan
        .numbers
        .iter()
        .find(|n| n.parse::<f64>().is_ok_and(|f| f.is_infinite()))
    {
        return Some(format!("holding the number {n} (out of range)"));
    }
    if let Some(s) = &scan.lone_surrogate {
        return Some(format!("holding a lone surrogate ({s})"));
    }
    if scan.depth > DEEP {
        return Some(format!("holding values nested {} deep", scan.depth));
    }
    if scan.longest > LONG_STRING {
        return Some(format!("holding a string of {} characters", scan.longest));
    }
    if scan.nul {
        return Some("holding a NUL character (\\u0000)".to_string());
    }
    match serde_json::from_str::<Value>(text) {
        Err(_) if text.trim().is_empty() => Some("with an empty body".to_string()),
        Err(_) => Some("whose body is not JSON".to_string()),
        Ok(Value::Object(_)) => None,
        Ok(other) => Some(format!(
            "whose body is {}, not an object",
            a_json_type(&other)
        )),
    }
}

/// "a request holding NaN", or `ordinary` when nothing about the body is odd.
fn request(body: &[u8], ordinary: &str) -> String {
    oddity(body).map_or_else(|| ordinary.to_string(), |o| format!("a request {o}"))
}

/// A 5xx answer to an odd or generated request.
pub fn server_error(gate: RobustnessGate, status: u16, body: &[u8], ordinary: &str) -> Finding {
    Finding::new(
        gate.server_error(),
        "",
        "a 4xx refusal or an answer",
        format!("HTTP {status} for {}", request(body, ordinary)),
    )
}

/// The robustness form of a transport finding on an odd or generated request: a 5xx (whatever
/// its body), a connection dropped without an answer, or a hang. `None` for anything else.
pub fn recast(
    gate: RobustnessGate,
    finding: &Finding,
    status: Option<u16>,
    body: &[u8],
    ordinary: &str,
) -> Option<Finding> {
    let id = finding.check.id;
    let what = if let Some(s) = status.filter(|s| *s >= 500) {
        return Some(server_error(gate, s, body, ordinary).with_detail(finding.actual.clone()));
    } else if (id == catalog::TRANSPORT_CONNECT.id || id == catalog::TRANSPORT_DROPPED.id)
        && status.is_none()
    {
        (gate.server_error(), "no answer: the connection was dropped")
    } else if id == catalog::TRANSPORT_TIMEOUT.id {
        (gate.hang(), "no answer in time")
    } else {
        return None;
    };
    let (check, happened) = what;
    Some(
        Finding::new(
            check,
            "",
            finding.expected.clone(),
            format!("{happened} for {}", request(body, ordinary)),
        )
        .with_detail(finding.actual.clone()),
    )
}

/// What a pass over a JSON-like text finds outside and inside its strings.
#[derive(Default)]
struct Scan {
    /// Bare words outside strings (`true`, `NaN`, `Infinity`, ...), a leading minus kept.
    words: Vec<String>,
    /// Number literals outside strings.
    numbers: Vec<String>,
    /// The first `\uXXXX` escape that is half of a surrogate pair without its other half.
    lone_surrogate: Option<String>,
    /// Deepest nesting of `[` and `{`.
    depth: usize,
    /// Characters of the longest string.
    longest: usize,
    /// A string holds `\u0000` or a raw NUL.
    nul: bool,
}

impl Scan {
    fn of(text: &str) -> Scan {
        let mut scan = Scan::default();
        let chars: Vec<char> = text.chars().collect();
        let mut depth = 0usize;
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            match c {
                '"' => i = scan.string(&chars, i + 1),
                '[' | '{' => {
                    depth += 1;
                    scan.depth = scan.depth.max(depth);
                    i += 1;
                }
                ']' | '}' => {
                    depth = depth.saturating_sub(1);
                    i += 1;
                }
                c if c == '-' || c.is_ascii_alphanumeric() || c == '.' || c == '+' => {
                    let start = i;
                    while i < chars.len()
                        && (chars[i].is_ascii_alphanumeric() || matches!(chars[i], '-' | '+' | '.'))
                    {
                        i += 1;
                    }
                    let token: String = chars[start..i].iter().collect();
                    let digits = token.trim_start_matches('-');
                    if digits.starts_with(|d: char| d.is_ascii_digit() || d == '.') {
                        scan.numbers.push(token);
                    } else {
                        scan.words.push(token);
                    }
                }
                _ => i += 1,
            }
        }
        scan
    }

    /// Reads a string from `i` (after its quote); returns the index after its closing quote.
    fn string(&mut self, chars: &[char], mut i: usize) -> usize {
        let mut len = 0usize;
        let mut pending_high: Option<String> = None;
        while i < chars.len() && chars[i] != '"' {
            len += 1;
            if chars[i] == '\0' {
                self.nul = true;
            }
            if chars[i] != '\\' {
                self.lone(pending_high.take());
                i += 1;
                continue;
            }
            let escaped = chars.get(i + 1).copied();
            if escaped != Some('u') {
                self.lone(pending_high.take());
                i += 2;
                continue;
            }
            let hex: String = chars.iter().skip(i + 2).take(4).collect();
            let code = u16::from_str_radix(&hex, 16).ok();
            let escape = format!("\\u{hex}");
            match code {
                Some(0) => self.nul = true,
                Some(0xD800..=0xDBFF) => {
                    self.lone(pending_high.take());
                    pending_high = Some(escape);
                    i += 6;
                    continue;
                }
                Some(0xDC00..=0xDFFF) if pending_high.take().is_none() => {
                    self.lone(Some(escape));
                }
                _ => {}
            }
            self.lone(pending_high.take());
            i += 6;
        }
        self.lone(pending_high);
        self.longest = self.longest.max(len);
        i + 1
    }

    fn lone(&mut self, escape: Option<String>) {
        if self.lone_surrogate.is_none() {
            self.lone_surrogate = escape;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn odd(body: &str) -> Option<String> {
        oddity(body.as_bytes())
    }

    #[test]
    fn odd_requests_are_named_by_their_oddity() {
        assert_eq!(odd(r#"{"count":NaN}"#).as_deref(), Some("holding NaN"));
        assert_eq!(
            odd(r#"{"count":-Infinity}"#).as_deref(),
            Some("holding -Infinity")
        );
        assert_eq!(
            odd(r#"{"count":1e999}"#).as_deref(),
            Some("holding the number 1e999 (out of range)")
        );
        assert_eq!(
            odd(r#"{"role":"a\ud800"}"#).as_deref(),
            Some(r"holding a lone surrogate (\ud800)")
        );
        assert_eq!(
            odd(r#"{"role":"\udfff"}"#).as_deref(),
            Some(r"holding a lone surrogate (\udfff)")
        );
        let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        assert_eq!(
            odd(&deep).as_deref(),
            Some("holding values nested 1000 deep")
        );
        assert_eq!(odd("{").as_deref(), Some("whose body is not JSON"));
        assert_eq!(
            odd("[]").as_deref(),
            Some("whose body is an array, not an object")
        );
        assert_eq!(
            odd(r#"{"a":"\u0000"}"#).as_deref(),
            Some(r"holding a NUL character (\u0000)")
        );
    }

    #[test]
    fn ordinary_bodies_and_odd_looking_strings_are_not_odd() {
        assert_eq!(
            odd(r#"{"role":"NaN","n":1e308,"e":"😀\ud83d\ude00"}"#),
            None
        );
        assert_eq!(odd(r#"{"a":[{"b":true,"c":null,"d":-1.5e3}]}"#), None);
    }

    #[test]
    fn a_5xx_says_what_the_request_held() {
        let f = server_error(
            RobustnessGate::Fail,
            500,
            br#"{"a":NaN}"#,
            "a generated request",
        );
        assert_eq!(f.check.id, "robustness.server-error");
        assert_eq!(f.actual, "HTTP 500 for a request holding NaN");
        assert!(!f.headline().contains('§'), "{}", f.headline());
        let plain = server_error(RobustnessGate::Fail, 503, b"{}", "a generated request");
        assert_eq!(plain.actual, "HTTP 503 for a generated request");
        let warn = server_error(RobustnessGate::Warn, 500, b"{}", "x");
        assert_eq!(warn.outcome(false), crate::verdict::event::Outcome::Warn);
        assert_eq!(f.outcome(false), crate::verdict::event::Outcome::Fail);
    }

    #[test]
    fn dropped_connections_and_hangs_are_recast() {
        let reset = Finding::new(&catalog::TRANSPORT_CONNECT, "", "an HTTP response", "reset");
        let f = recast(RobustnessGate::Fail, &reset, None, br#"{"a":NaN}"#, "x").unwrap();
        assert_eq!(
            f.actual,
            "no answer: the connection was dropped for a request holding NaN"
        );
        let late = Finding::new(&catalog::TRANSPORT_TIMEOUT, "", "in time", "late");
        let f = recast(
            RobustnessGate::Fail,
            &late,
            None,
            b"{}",
            "a generated request",
        )
        .unwrap();
        assert_eq!(f.check.id, "robustness.hang");
        let json = Finding::new(&catalog::RESPONSE_JSON, "", "JSON", "html");
        assert!(recast(RobustnessGate::Fail, &json, Some(200), b"{}", "x").is_none());
    }
}
