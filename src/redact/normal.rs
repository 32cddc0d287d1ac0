//! The normalised view of a text, where an echo of a secret looks the same however it was
//! spelt: per-character escapes decoded (JSON `\uXXXX` with surrogate pairs, `\n \r \t \/ \" \\`;
//! `%XX`; HTML `&#NN;`, `&#xHH;`, `&amp; &lt; &gt; &quot; &apos;`), white space and NUL dropped
//! (a line break inside a key, base64 wrapped at any width, UTF-16 read as bytes) and ASCII
//! letters lower-cased. Each byte of
//! the view knows the range of the text it came from, so a match in the view is replaced in the
//! text.
//!
//! Escapes are decoded once, left to right, as the text reads: `\\u0041` is a backslash and
//! `u0041`. A secret is registered as the view of each form it can take, so a form that itself
//! escapes (`%25` of a key holding `%`) is found too.

use std::ops::Range;

/// A text's normalised bytes, each with the range of the text it came from.
pub(super) struct View {
    /// The normalised bytes.
    pub bytes: Vec<u8>,
    /// Where in the text each byte's escape (or byte) starts.
    starts: Vec<u32>,
    /// Where it ends.
    ends: Vec<u32>,
}

impl View {
    /// The view of `text` (at most `u32::MAX` bytes: callers work in chunks).
    pub fn of(text: &[u8]) -> View {
        let mut view = View {
            bytes: Vec::with_capacity(text.len()),
            starts: Vec::with_capacity(text.len()),
            ends: Vec::with_capacity(text.len()),
        };
        let mut i = 0;
        while i < text.len() {
            let (decoded, len) = decode_at(text, i);
            match decoded {
                Decoded::Byte(b) => view.push(b, i, i + len),
                Decoded::Char(c) => {
                    let mut buf = [0u8; 4];
                    for &b in folded(c, &mut buf) {
                        view.push(b, i, i + len);
                    }
                }
            }
            i += len;
        }
        view
    }

    /// Only the normalised bytes of `text`, without the map back to it: what a search needs
    /// to learn that nothing matches (nearly always), at a third of the writes.
    pub fn bytes_of(text: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(text.len());
        let mut i = 0;
        while i < text.len() {
            // A run of bytes that stand for themselves is copied lower-cased in one go (the
            // copy vectorises); escapes and white space, rare in an answer, go one at a time.
            let run = text[i..]
                .iter()
                .position(|&b| !PLAIN[usize::from(b)])
                .unwrap_or(text.len() - i);
            let from = bytes.len();
            bytes.extend_from_slice(&text[i..i + run]);
            bytes[from..].make_ascii_lowercase();
            i += run;
            if i == text.len() {
                break;
            }
            if is_space(text[i]) {
                i += 1;
                continue;
            }
            let (decoded, len) = decode_at(text, i);
            match decoded {
                Decoded::Byte(b) => {
                    if !is_space(b) {
                        bytes.push(b.to_ascii_lowercase());
                    }
                }
                Decoded::Char(c) => {
                    let mut buf = [0u8; 4];
                    for &b in folded(c, &mut buf) {
                        if !is_space(b) {
                            bytes.push(b.to_ascii_lowercase());
                        }
                    }
                }
            }
            i += len;
        }
        bytes
    }

    fn push(&mut self, b: u8, start: usize, end: usize) {
        if is_space(b) {
            return;
        }
        self.bytes.push(b.to_ascii_lowercase());
        self.starts.push(start as u32);
        self.ends.push(end as u32);
    }

    /// The range of the text that the view's `range` (not empty) came from.
    pub fn source(&self, range: Range<usize>) -> Range<usize> {
        self.starts[range.start] as usize..self.ends[range.end - 1] as usize
    }

    /// Where in the text the view's byte `at` starts (the text's length past the end).
    pub fn source_start(&self, at: usize, text_len: usize) -> usize {
        self.starts.get(at).map_or(text_len, |&s| s as usize)
    }
}

/// Longest escape the view decodes as one character (a JSON surrogate pair, `\uD83D\uDE00`).
pub(super) const ESCAPE_MAX: usize = 12;

/// How many bytes of `text` its view needs to give `wanted` bytes (all of `text` if it gives
/// fewer): escapes and white space take more text than the bytes they give.
pub(super) fn text_for(text: &[u8], wanted: usize) -> usize {
    let (mut given, mut i) = (0, 0);
    while i < text.len() && given < wanted {
        let b = text[i];
        if PLAIN[usize::from(b)] || is_space(b) {
            given += usize::from(!is_space(b));
            i += 1;
            continue;
        }
        let (decoded, len) = decode_at(text, i);
        given += match decoded {
            Decoded::Byte(b) => usize::from(!is_space(b)),
            Decoded::Char(c) => {
                let mut buf = [0u8; 4];
                folded(c, &mut buf)
                    .iter()
                    .filter(|&&b| !is_space(b))
                    .count()
            }
        };
        i += len;
    }
    i
}

/// The normalised bytes of `text` (how a secret's form is registered).
pub(super) fn normalise(text: &str) -> Vec<u8> {
    View::bytes_of(text.as_bytes())
}

/// White space, dropped from the view.
const fn is_space(b: u8) -> bool {
    // NUL too: UTF-16 read as bytes puts one after every ASCII character of a key.
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c | 0)
}

/// Lead bytes of the UTF-8 characters the view folds ([`folded`]): U+0080-U+00BF (the
/// no-break space, the soft hyphen), U+0300-U+037F (the grapheme joiner), U+1000-U+3FFF (spaces,
/// zero-width and direction marks, word joiners, the ideographic space, the Hangul filler),
/// U+F000-U+FFFF (variation selectors, the byte-order mark, full-width ASCII) and
/// U+C0000-U+FFFFF (tag characters).
const fn folds_from(b: u8) -> bool {
    matches!(b, 0xC2 | 0xCD | 0xE1 | 0xE2 | 0xE3 | 0xEF | 0xF3)
}

/// Bytes that stand for themselves in the view: neither white space nor the start of an escape
/// or of a character the view folds.
const PLAIN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] =
            !is_space(b as u8) && !matches!(b as u8, b'\\' | b'%' | b'&') && !folds_from(b as u8);
        b += 1;
    }
    table
};

/// A character as the view reads it: nothing for one that shows nothing (zero-width spaces and
/// joiners, direction marks, the soft hyphen, variation selectors, the byte-order mark: put
/// between a key's letters, they leave it looking whole), the ASCII character for a full-width
/// one (`Ｚ` is `Z`), else itself; as UTF-8 in `buf`.
fn folded(c: char, buf: &mut [u8; 4]) -> &[u8] {
    let shown = match u32::from(c) {
        0x00A0 | 0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180E => None,
        0x2000..=0x200F | 0x2028..=0x202F | 0x205F..=0x206F => None,
        0x3000 | 0x3164 | 0xFE00..=0xFE0F | 0xFEFF | 0xFFA0 | 0xE0000..=0xE007F => None,
        full @ 0xFF01..=0xFF5E => char::from_u32(full - 0xFEE0),
        // Dashes that look like `-` (HTML's `&hyphen;` and `&dash;` are U+2010).
        0x2010..=0x2013 | 0x2212 | 0xFE63 => Some('-'),
        _ => Some(c),
    };
    match shown {
        Some(c) => c.encode_utf8(buf).as_bytes(),
        None => &[],
    }
}

enum Decoded {
    Byte(u8),
    Char(char),
}

/// What the text at `i` stands for, and how many bytes of it that takes.
fn decode_at(text: &[u8], i: usize) -> (Decoded, usize) {
    let rest = &text[i..];
    let decoded = match rest[0] {
        b'\\' => json_escape(rest),
        b'%' => hex_digits(rest.get(1..3)).map(|v| (Decoded::Byte(v as u8), 3)),
        b'&' => entity(rest),
        b if folds_from(b) => utf8_char(rest),
        _ => None,
    };
    decoded.unwrap_or((Decoded::Byte(rest[0]), 1))
}

/// The UTF-8 character at the start of `rest`, when whole.
fn utf8_char(rest: &[u8]) -> Option<(Decoded, usize)> {
    let width = match rest[0] {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => return None,
    };
    let c = std::str::from_utf8(rest.get(..width)?)
        .ok()?
        .chars()
        .next()?;
    Some((Decoded::Char(c), width))
}

/// The value of exactly the hex digits of `digits` (all of them must be hex).
fn hex_digits(digits: Option<&[u8]>) -> Option<u32> {
    let digits = digits?;
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

/// A JSON escape at the start of `rest` (which starts with `\`).
fn json_escape(rest: &[u8]) -> Option<(Decoded, usize)> {
    let simple = |b: u8| Some((Decoded::Byte(b), 2));
    match rest.get(1)? {
        b'n' => simple(b'\n'),
        b'r' => simple(b'\r'),
        b't' => simple(b'\t'),
        b'/' => simple(b'/'),
        b'"' => simple(b'"'),
        b'\\' => simple(b'\\'),
        b'u' => {
            let unit = hex_digits(rest.get(2..6))?;
            if (0xD800..0xDC00).contains(&unit) {
                // A high surrogate is a character only with the low one after it.
                let low = rest
                    .get(6..8)
                    .filter(|p| *p == b"\\u")
                    .and_then(|_| hex_digits(rest.get(8..12)))
                    .filter(|low| (0xDC00..0xE000).contains(low))?;
                let c = char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))?;
                return Some((Decoded::Char(c), 12));
            }
            Some((Decoded::Char(char::from_u32(unit)?), 6))
        }
        _ => None,
    }
}

/// Longest numeric character reference read, digits included (`&#x10FFFF;` and some zeros).
const ENTITY_MAX: usize = 12;

/// An HTML character reference at the start of `rest` (which starts with `&`).
fn entity(rest: &[u8]) -> Option<(Decoded, usize)> {
    for (name, b) in [
        (&b"&amp;"[..], b'&'),
        (b"&lt;", b'<'),
        (b"&gt;", b'>'),
        (b"&quot;", b'"'),
        (b"&apos;", b'\''),
    ] {
        if rest.starts_with(name) {
            return Some((Decoded::Byte(b), name.len()));
        }
    }
    if rest.get(1) != Some(&b'#') {
        return NAMED
            .iter()
            .find(|(name, _)| rest.starts_with(name.as_bytes()))
            .map(|(name, c)| (Decoded::Char(*c), name.len()));
    }
    let hex = matches!(rest.get(2), Some(b'x' | b'X'));
    let from = if hex { 3 } else { 2 };
    // The digits, up to `;` or, as HTML5 reads a reference without it, the first other byte.
    let digits_end = rest
        .iter()
        .take(ENTITY_MAX)
        .skip(from)
        .position(|b| !(b.is_ascii_digit() || (hex && b.is_ascii_hexdigit())))
        .map_or(rest.len().min(ENTITY_MAX), |p| from + p);
    let digits = &rest[from..digits_end];
    if digits.is_empty() {
        return None;
    }
    let value =
        u32::from_str_radix(std::str::from_utf8(digits).ok()?, if hex { 16 } else { 10 }).ok()?;
    let end = if rest.get(digits_end) == Some(&b';') {
        digits_end + 1
    } else {
        digits_end
    };
    Some((Decoded::Char(char::from_u32(value)?), end))
}

/// HTML5's named references of printable ASCII characters and white space (and the dashes
/// that look like `-`), at most [`ESCAPE_MAX`] bytes long: how an HTML page or an escaping
/// template may write a key's punctuation (`mallcheck&hyphen;demo&hyphen;key`).
const NAMED: &[(&str, char)] = &[
    ("&excl;", '!'),
    ("&QUOT;", '"'),
    ("&num;", '#'),
    ("&dollar;", '$'),
    ("&percnt;", '%'),
    ("&AMP;", '&'),
    ("&lpar;", '('),
    ("&rpar;", ')'),
    ("&ast;", '*'),
    ("&midast;", '*'),
    ("&plus;", '+'),
    ("&comma;", ','),
    ("&period;", '.'),
    ("&sol;", '/'),
    ("&colon;", ':'),
    ("&semi;", ';'),
    ("&LT;", '<'),
    ("&equals;", '='),
    ("&GT;", '>'),
    ("&quest;", '?'),
    ("&commat;", '@'),
    ("&lsqb;", '['),
    ("&lbrack;", '['),
    ("&bsol;", '\\'),
    ("&rsqb;", ']'),
    ("&rbrack;", ']'),
    ("&Hat;", '^'),
    ("&lowbar;", '_'),
    ("&UnderBar;", '_'),
    ("&grave;", '`'),
    ("&lcub;", '{'),
    ("&lbrace;", '{'),
    ("&verbar;", '|'),
    ("&vert;", '|'),
    ("&rcub;", '}'),
    ("&rbrace;", '}'),
    ("&hyphen;", '\u{2010}'),
    ("&dash;", '\u{2010}'),
    ("&ndash;", '\u{2013}'),
    ("&minus;", '\u{2212}'),
    ("&nbsp;", '\u{a0}'),
    ("&Tab;", '\t'),
    ("&NewLine;", '\n'),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn view(text: &str) -> String {
        String::from_utf8(View::of(text.as_bytes()).bytes).unwrap()
    }

    #[test]
    fn escapes_case_and_white_space_fall_away() {
        for (text, normal) in [
            ("AbC", "abc"),
            ("a b\r\n\tc", "abc"),
            (r#"\u0041\u00e9\n\/\"\\x"#, "aé/\"\\x"),
            (r"\ud83d\ude00!", "😀!"),
            (r"\ud83d!", r"\ud83d!"),
            ("%41%2f%2F%zz%4", "a//%zz%4"),
            (
                "&#65;&#x42;&#X43;&amp;&lt;&gt;&quot;&apos;&#;&#x;&bogus;",
                "abc&<>\"'&#;&#x;&bogus;",
            ),
            // HTML5 reads a numeric reference without `;`, and names ASCII punctuation.
            ("&#109&#97x&#x6C&#x6cy", "maxlly"),
            ("a&hyphen;b&dash;c&sol;d&period;e&lowbar;f", "a-b-c/d.e_f"),
            ("a\u{2010}b\u{2212}c", "a-b-c"),
            (r"\\u0041", r"\u0041"),
            (r"a\u000ab", "ab"),
            // Characters that show nothing fall away; full-width ASCII is ASCII.
            ("a\u{200b}b\u{200d}c\u{ad}d\u{feff}e\u{2060}f", "abcdef"),
            (
                "a\u{3000}b\u{34f}c\u{3164}d\u{e0020}e\u{a0}f\u{202f}g",
                "abcdefg",
            ),
            ("「中文。」", "「中文。」"),
            (r"a\u200bb&#x200d;c", "abc"),
            ("ＡＢｃ１２", "abc12"),
            ("—中文…", "—中文…"),
        ] {
            assert_eq!(view(text), normal, "{text}");
        }
    }

    #[test]
    fn the_bytes_alone_are_those_of_the_view() {
        for text in [
            "AbC a b\r\n\tc",
            r#"\u0041\u00e9\n\/\"\\x \ud83d\ude00! \ud83d!"#,
            "%41%2f%2F%zz%4 &#65;&#x42;&#X43;&amp;&lt;&gt;&quot;&apos;&#;&#x;&bogus;",
            r"\\u0041 a\u000ab %20%0A &#32;&#10; é É",
            "a\u{200b}b\u{ad}ＡＢ—中文 \u{c2}x",
        ] {
            assert_eq!(
                View::bytes_of(text.as_bytes()),
                View::of(text.as_bytes()).bytes
            );
        }
    }

    proptest::proptest! {
        /// Texts made of the bytes that matter (escape starts, hex digits, white space, upper
        /// case, multi-byte characters) read the same through both.
        #[test]
        fn the_bytes_alone_are_those_of_the_view_for_any_text(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "\\", "u", "00", "41", "D8", "3d", "dc", "&", "#", "x", ";", "amp", "%",
                    "2F", "z", " ", "\n", "A", "é", "É", "n", "/", "\"",
                    "\u{200b}", "\u{ad}", "Ｚ", "—", "\u{feff}", "\u{3000}", "\u{e0020}", "。",
                ]),
                0..40,
            )
        ) {
            let text = parts.concat();
            proptest::prop_assert_eq!(
                View::bytes_of(text.as_bytes()),
                View::of(text.as_bytes()).bytes
            );
        }
    }

    #[test]
    fn each_byte_maps_back_to_its_escape() {
        let text = "x \\u0041%42&#67; d";
        let v = View::of(text.as_bytes());
        assert_eq!(v.bytes, b"xabcd");
        assert_eq!(&text[v.source(1..4)], "\\u0041%42&#67;");
        assert_eq!(&text[v.source(4..5)], "d");
        assert_eq!(v.source_start(5, text.len()), text.len());
    }
}
