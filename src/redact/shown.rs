//! Text from outside as it may be shown: the one way a value the service, a user's file or the
//! environment controls reaches a report or the console. A [`Shown`] is made only by a
//! [`Redactor`], in this order: scrubbed first (so that a cut can never leave part of a secret
//! that no redactor would recognise any more), bidi and control characters escaped
//! (`\u{202e}`; line breaks and tabs kept), then cut to a cap with "… N bytes more", leaving out
//! what the cut may have left of a secret at the edge.

use std::fmt::{self, Write as _};

use serde::Serialize;

use super::Redactor;

/// Text from outside, scrubbed, escaped and capped (see the module doc). Only
/// [`Redactor::show`] and [`Redactor::show_part`] make one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Shown(String);

impl Shown {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Redactor {
    /// `text` as it may be shown, at most `cap` bytes of it (plus its escapes and the mark of
    /// the cut).
    pub fn show(&self, text: &str, cap: usize) -> Shown {
        self.show_part(text, cap, text.len())
    }

    /// The first `max` bytes of `body` as shown text: cut and scrubbed as
    /// [`Redactor::excerpt`] does (once: the cut judges the bytes with the registry as it is
    /// now, as a second scrub would), then control and bidirectional characters escaped.
    pub fn show_excerpt(&self, body: &[u8], max: usize, whole: bool) -> Shown {
        Shown(escape_unsafe(&self.excerpt(body, max, whole)))
    }

    /// [`Redactor::show`] of `text`, the first bytes of a value `total` bytes long (kept
    /// bounded where it was read): when `text` is not all of it, its end is a cut too.
    pub fn show_part(&self, text: &str, cap: usize, total: usize) -> Shown {
        let whole = text.len() >= total;
        let cap = floor_char_boundary(text, cap);
        let (kept, end) = self.cut(text.as_bytes(), cap, whole);
        let mut out = escape_unsafe(&kept);
        let more = total.max(text.len()) - end;
        if more > 0 {
            let _ = write!(out, "… {more} bytes more");
        }
        Shown(out)
    }
}

/// The largest character boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    (0..=at)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// Whether `c` must not be shown as is: a C0 or C1 control character, DEL, or a bidi mark,
/// override or isolate (the same set as `diag` escapes on the console).
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with bidi and control characters written as `\u{…}`, line breaks and tabs kept.
fn escape_unsafe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // Printable ASCII, line breaks and tabs are copied a run at a time; other characters are
    // decoded one by one.
    let bytes = text.as_bytes();
    let (mut at, mut copied) = (0, 0);
    while at < bytes.len() {
        let b = bytes[at];
        if (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\t' {
            at += 1;
            continue;
        }
        let Some(c) = text[at..].chars().next() else {
            break;
        };
        if is_unsafe(c) {
            out.push_str(&text[copied..at]);
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            copied = at + c.len_utf8();
        }
        at += c.len_utf8();
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        })]

        /// The run-at-a-time copy writes what a character-by-character one writes.
        #[test]
        fn escaping_a_run_at_a_time_is_escaping_each_character(
            text in "[ -~\t\n\r\u{0}-\u{1f}\u{7f}-\u{9f}\u{61c}\u{200e}\u{202a}-\u{202e}\u{2066}-\u{2069}éあ😀]{0,64}"
        ) {
            let mut each = String::new();
            for c in text.chars() {
                if c != '\n' && c != '\t' && is_unsafe(c) {
                    let _ = write!(each, "\\u{{{:x}}}", u32::from(c));
                } else {
                    each.push(c);
                }
            }
            proptest::prop_assert_eq!(escape_unsafe(&text), each);
        }
    }

    const KEY: &str = "Zq7Xw2Lp9Rt4Vb8Nc3Mk6Hj1Gf5Ds0Ay";

    #[test]
    fn a_value_is_scrubbed_before_it_is_cut() {
        let r = Redactor::new();
        r.add_secret(KEY);
        let msg = format!(r#"{{"msg":"the request signature did not match: {KEY}"}}"#);
        for cap in 10..msg.len() + 5 {
            let shown = r.show(&msg, cap);
            let lower = shown.as_str().to_ascii_lowercase();
            for i in 0..=KEY.len() - 8 {
                let w = KEY[i..i + 8].to_ascii_lowercase();
                assert!(!lower.contains(&w), "cap {cap}: {shown}");
            }
        }
        assert_eq!(
            r.show(&msg, 200).as_str(),
            r#"{"msg":"the request signature did not match: <redacted>"}"#
        );
    }

    #[test]
    fn a_long_value_is_capped_and_says_how_much_is_left_out() {
        let r = Redactor::new();
        let long = "x".repeat(8 * 1024 * 1024);
        let shown = r.show(&long, 100);
        assert_eq!(
            shown.as_str(),
            format!("{}… 8388508 bytes more", "x".repeat(100))
        );
        let part = r.show_part(&long[..1000], 2000, long.len());
        assert!(part.as_str().ends_with("… 8387608 bytes more"), "{part}");
        // A cut never splits a character.
        assert_eq!(r.show("ééé", 3).as_str(), "é… 4 bytes more");
    }

    #[test]
    fn an_excerpt_is_shown_scrubbed_cut_and_escaped_as_its_text_would_be() {
        let r = Redactor::new();
        r.add_secret(KEY);
        let body = format!("\u{1b}[31m{KEY}\u{202e} then {}", "x".repeat(100));
        for max in [5, 20, 40, 60, body.len()] {
            let shown = r.show_excerpt(body.as_bytes(), max, true);
            let text = r.excerpt(body.as_bytes(), max, true);
            assert_eq!(shown, r.show(&text, usize::MAX), "max {max}");
            assert!(!shown.as_str().contains(&KEY[..8]), "max {max}: {shown}");
            assert!(!shown.as_str().contains('\u{1b}'), "max {max}: {shown}");
        }
    }

    #[test]
    fn bidi_and_control_characters_are_escaped_line_breaks_kept() {
        let r = Redactor::new();
        let shown = r.show("a\u{202e}b\u{200f}\u{2066}c\u{1b}[31m\r\n\td\u{9b}", 100);
        assert_eq!(
            shown.as_str(),
            "a\\u{202e}b\\u{200f}\\u{2066}c\\u{1b}[31m\\u{d}\n\td\\u{9b}"
        );
    }

    #[test]
    fn a_part_cut_inside_a_key_leaves_nothing_of_it() {
        let r = Redactor::new();
        r.add_secret(KEY);
        let value = format!("{}{}", "p".repeat(50), KEY.to_ascii_uppercase());
        for end in 51..value.len() {
            let shown = r.show_part(&value[..end], 4096, value.len());
            assert!(shown.as_str().starts_with(&"p".repeat(48)), "{shown}");
            assert!(!shown.as_str().contains("ZQ7X"), "end {end}: {shown}");
        }
    }
}
