//! The syntax step: case-file text to a tree of positioned YAML nodes (serde-saphyr, strict).
//!
//! JSON case files go through the same YAML parser (JSON is YAML 1.2 flow syntax) after a
//! serde_json syntax check, so both formats get byte spans and the same strict scalars.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;
use serde_saphyr::{Location, MessageFormatter, UserMessageFormatter};

use crate::verdict::source::Span;

/// A YAML node with the byte span it covers (collections reach to the end of their last child).
#[derive(Debug, Clone)]
pub struct Node {
    /// What the node holds.
    pub kind: NodeKind,
    /// Where it is written.
    pub span: Span,
}

/// The value of a [`Node`].
#[derive(Debug, Clone)]
pub enum NodeKind {
    /// `null`, `~` or an empty value.
    Null,
    /// `true` or `false` (strict: `yes`, `NO`, `on` stay strings).
    Bool(bool),
    /// An integer or a finite float.
    Number(Number),
    /// A string scalar.
    Str(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in file order (duplicate keys are rejected by the parser).
    Map(Vec<(Key, Node)>),
}

/// A mapping key and its span.
#[derive(Debug, Clone)]
pub struct Key {
    /// The key text.
    pub text: String,
    /// Where it is written.
    pub span: Span,
}

/// A syntax error: message and byte span.
#[derive(Debug, Clone)]
pub struct SyntaxError {
    /// What the parser says, without a location suffix.
    pub message: String,
    /// Where, when known.
    pub span: Option<Span>,
}

impl NodeKind {
    /// How the value reads in a "found ..." message.
    pub fn describe(&self) -> String {
        match self {
            NodeKind::Null => "null".to_string(),
            NodeKind::Bool(b) => format!("the boolean `{b}`"),
            NodeKind::Number(n) => format!("the number `{n}`"),
            NodeKind::Str(s) => {
                let shown: String = s.chars().take(40).collect();
                let more = if s.chars().count() > 40 { "..." } else { "" };
                format!("the string `{shown}{more}`")
            }
            NodeKind::Seq(_) => "a sequence".to_string(),
            NodeKind::Map(_) => "a mapping".to_string(),
        }
    }
}

/// A case file whose bytes are not text we can read.
#[derive(Debug, Clone)]
pub struct DecodeError {
    /// What is wrong, naming the byte offset in the file.
    pub message: String,
    /// The file as text with every unreadable sequence replaced by U+FFFD, for quoting.
    pub text: String,
    /// Where in `text` the problem is.
    pub span: Span,
}

/// The text of a case file: UTF-8, or UTF-16 with a byte-order mark; a UTF-8 byte-order mark
/// is dropped. Anything else is an error at the first byte that cannot be read.
pub fn decode(bytes: Vec<u8>) -> Result<String, DecodeError> {
    match bytes.as_slice() {
        [0xef, 0xbb, 0xbf, ..] => utf8(bytes, 3),
        [0x00, 0x00, 0xfe, 0xff, ..] | [0xff, 0xfe, 0x00, 0x00, ..] => Err(DecodeError {
            message: "the file is UTF-32 (byte-order mark at byte 0), which case files cannot be"
                .to_string(),
            text: String::new(),
            span: 0..0,
        }),
        [0xff, 0xfe, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xfe, 0xff, rest @ ..] => utf16(rest, u16::from_be_bytes),
        _ => utf8(bytes, 0),
    }
}

fn utf8(mut bytes: Vec<u8>, bom: usize) -> Result<String, DecodeError> {
    bytes.drain(..bom);
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.into_bytes();
        let bad: Vec<String> = bytes[at..]
            .iter()
            .take(4)
            .map(|b| format!("0x{b:02X}"))
            .collect();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let end = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
        DecodeError {
            message: format!(
                "the file is not valid UTF-8: byte {} at byte offset {}",
                bad.first().map_or("?", String::as_str),
                at + bom
            ),
            text,
            span: at..end,
        }
    })
}

fn utf16(body: &[u8], unit: fn([u8; 2]) -> u16) -> Result<String, DecodeError> {
    let units = body.chunks_exact(2).map(|p| unit([p[0], p[1]]));
    let mut text = String::with_capacity(body.len() / 2);
    let mut problem = None;
    let mut at = 2;
    for c in char::decode_utf16(units) {
        match c {
            Ok(c) => {
                text.push(c);
                at += 2 * c.len_utf16();
            }
            Err(e) => {
                if problem.is_none() {
                    problem = Some((
                        format!(
                            "the file is not valid UTF-16: unpaired surrogate 0x{:04X} at byte offset {at}",
                            e.unpaired_surrogate()
                        ),
                        text.len(),
                    ));
                }
                text.push(char::REPLACEMENT_CHARACTER);
                at += 2;
            }
        }
    }
    if problem.is_none() && body.len() % 2 == 1 {
        problem = Some((
            format!(
                "the file is not valid UTF-16: it ends in half a character at byte offset {}",
                body.len() + 1
            ),
            text.len(),
        ));
    }
    match problem {
        None => Ok(text),
        Some((message, offset)) => {
            let end = text[offset..]
                .chars()
                .next()
                .map_or(offset, |c| offset + c.len_utf8());
            Err(DecodeError {
                message,
                text,
                span: offset..end,
            })
        }
    }
}

/// The tree as serde-saphyr hands it over, with its native locations.
enum Raw {
    Null,
    Bool(bool),
    Number(Number),
    Float(f64),
    Str(String),
    Seq(Vec<serde_saphyr::Spanned<Raw>>),
    Map(Vec<(serde_saphyr::Spanned<String>, serde_saphyr::Spanned<Raw>)>),
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_unit<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }

    fn visit_none<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
        Raw::deserialize(d)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Raw, E> {
        Ok(Raw::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
        Ok(Raw::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::Str(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Raw, E> {
        Ok(Raw::Str(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Raw::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key()? {
            let value = map.next_value()?;
            entries.push((key, value));
        }
        Ok(Raw::Map(entries))
    }
}

mod events;

/// Parses YAML text with the strict options (crates.md §5) into a positioned tree: the common
/// part of YAML straight from the parser's events, anything else (and every error) through
/// serde-saphyr.
pub fn parse_yaml(text: &str) -> Result<Node, SyntaxError> {
    match events::parse(text) {
        Some(node) => Ok(node),
        None => parse_with_serde(text),
    }
}

/// [`parse_yaml`] through serde-saphyr alone.
fn parse_with_serde(text: &str) -> Result<Node, SyntaxError> {
    let options = serde_saphyr::options! {
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::Error,
        with_snippet: false,
    };
    match serde_saphyr::from_str_with_options::<serde_saphyr::Spanned<Raw>>(text, options) {
        Ok(root) => convert(root, text),
        Err(e) => Err(SyntaxError {
            message: UserMessageFormatter.format_message(&e).into_owned(),
            span: e.location().map(|l| span_of(&l, text)),
        }),
    }
}

/// Parses a JSON case file: serde_json reports syntax errors, then the YAML parser gives spans.
pub fn parse_json(text: &str) -> Result<Node, SyntaxError> {
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        let message = e.to_string();
        let message = match message.rfind(" at line ") {
            Some(i) => message[..i].to_string(),
            None => message,
        };
        let offset = offset_of(text, e.line(), e.column().saturating_sub(1));
        return Err(SyntaxError {
            message,
            span: Some(offset..offset),
        });
    }
    parse_yaml(text)
}

fn convert(raw: serde_saphyr::Spanned<Raw>, text: &str) -> Result<Node, SyntaxError> {
    let span = span_of(&raw.referenced, text);
    let kind = match raw.value {
        Raw::Null => NodeKind::Null,
        Raw::Bool(b) => NodeKind::Bool(b),
        Raw::Number(n) => NodeKind::Number(n),
        Raw::Float(f) => match Number::from_f64(f) {
            Some(n) => NodeKind::Number(n),
            None => {
                return Err(SyntaxError {
                    message: format!("non-finite number `{f}`"),
                    span: Some(span),
                });
            }
        },
        Raw::Str(s) => NodeKind::Str(s),
        Raw::Seq(items) => NodeKind::Seq(
            items
                .into_iter()
                .map(|i| convert(i, text))
                .collect::<Result<_, _>>()?,
        ),
        Raw::Map(entries) => {
            let mut out = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                let key = Key {
                    span: span_of(&k.referenced, text),
                    text: k.value,
                };
                out.push((key, convert(v, text)?));
            }
            NodeKind::Map(out)
        }
    };
    let end = match &kind {
        NodeKind::Seq(items) => items.iter().map(|i| i.span.end).fold(span.end, usize::max),
        NodeKind::Map(entries) => entries
            .iter()
            .map(|(_, v)| v.span.end)
            .fold(span.end, usize::max),
        _ => span.end,
    };
    Ok(Node {
        kind,
        span: span.start..end,
    })
}

/// Byte span of a serde-saphyr location (byte offsets exist for string input; otherwise the
/// character line and column are converted).
fn span_of(loc: &Location, text: &str) -> Span {
    let s = loc.span();
    match (s.byte_offset(), s.byte_len()) {
        (Some(off), Some(len)) => {
            let start = usize::try_from(off).unwrap_or(usize::MAX).min(text.len());
            let end = start
                .saturating_add(usize::try_from(len).unwrap_or(0))
                .min(text.len());
            start..end
        }
        _ => {
            let line = usize::try_from(loc.line()).unwrap_or(1);
            let col = usize::try_from(loc.column()).unwrap_or(1).saturating_sub(1);
            let start = offset_of(text, line, col);
            let end = text[start..]
                .chars()
                .next()
                .map_or(start, |c| start + c.len_utf8());
            start..end
        }
    }
}

/// Byte offset of a 1-based line and a 0-based character column, clamped to the text.
fn offset_of(text: &str, line: usize, col: usize) -> usize {
    let line_start = if line <= 1 {
        0
    } else {
        text.match_indices('\n')
            .nth(line - 2)
            .map_or(text.len(), |(i, _)| i + 1)
    };
    let rest = &text[line_start..];
    let line_len = rest.find('\n').unwrap_or(rest.len());
    rest[..line_len]
        .char_indices()
        .nth(col)
        .map_or(line_start + line_len, |(i, _)| line_start + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map_get<'a>(node: &'a Node, key: &str) -> &'a Node {
        match &node.kind {
            NodeKind::Map(entries) => entries
                .iter()
                .find(|(k, _)| k.text == key)
                .map(|(_, v)| v)
                .expect("key in test"),
            other => panic!("not a map: {other:?}"),
        }
    }

    #[test]
    fn strict_scalars_keep_yaml11_lookalikes_as_strings() {
        let root = parse_yaml("country: NO\nflag: yes\nid: 007\nn: 1_000\nok: true\nx: 5\n")
            .expect("parses");
        for (key, want) in [
            ("country", "NO"),
            ("flag", "yes"),
            ("id", "007"),
            ("n", "1_000"),
        ] {
            assert!(
                matches!(&map_get(&root, key).kind, NodeKind::Str(s) if s == want),
                "{key}"
            );
        }
        assert!(matches!(map_get(&root, "ok").kind, NodeKind::Bool(true)));
        assert!(matches!(&map_get(&root, "x").kind, NodeKind::Number(n) if n.as_u64() == Some(5)));
    }

    #[test]
    fn scalar_spans_are_byte_ranges_of_the_text() {
        let text = "a: héllo\nb: [1, \"x\"]\n";
        let root = parse_yaml(text).expect("parses");
        let b = map_get(&root, "b");
        assert_eq!(&text[map_get(&root, "a").span.clone()], "héllo");
        match &b.kind {
            NodeKind::Seq(items) => assert_eq!(&text[items[1].span.clone()], "\"x\""),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            b.span.end,
            text.find("\"]").map(|i| i + 1).expect("in text")
        );
    }

    #[test]
    fn duplicate_keys_are_syntax_errors_at_the_second_key() {
        let text = "a: 1\nb:\n  c: 2\n  c: 3\n";
        let err = parse_yaml(text).expect_err("duplicate");
        assert!(err.message.contains("duplicate"), "{}", err.message);
        assert_eq!(
            err.span.map(|s| s.start),
            Some(text.rfind("c:").expect("in text"))
        );
    }

    #[test]
    fn syntax_error_position_is_converted_to_a_byte_offset() {
        let text = "a: 1\nb: [1, 2\nc: 3\n";
        let err = parse_yaml(text).expect_err("unclosed flow sequence");
        assert!(err.span.as_ref().is_some_and(|s| s.start > 5), "{err:?}");
    }

    #[test]
    fn json_syntax_error_carries_its_position() {
        let text = "{\n  \"cases\": [\n    {\"name\": }\n  ]\n}\n";
        let err = parse_json(text).expect_err("bad json");
        let start = err.span.as_ref().expect("span").start;
        assert_eq!(text[..start].matches('\n').count() + 1, 3, "{err:?}");
    }

    #[test]
    fn tab_indented_json_parses() {
        let text = "{\n\t\"cases\": [\n\t\t{\"name\": \"a\"}\n\t]\n}\n";
        let root = parse_json(text).expect("parses");
        assert_eq!(&text[map_get(&root, "cases").span.clone()][..1], "[");
    }

    #[test]
    fn json_text_parses_with_spans() {
        let text = "{\"cases\": [{\"name\": \"a\"}]}";
        let root = parse_json(text).expect("parses");
        assert_eq!(&text[map_get(&root, "cases").span.clone()][..1], "[");
    }

    fn utf16(text: &str, big_endian: bool) -> Vec<u8> {
        let mut out = if big_endian {
            vec![0xfe, 0xff]
        } else {
            vec![0xff, 0xfe]
        };
        for unit in text.encode_utf16() {
            let pair = if big_endian {
                unit.to_be_bytes()
            } else {
                unit.to_le_bytes()
            };
            out.extend(pair);
        }
        out
    }

    #[test]
    fn decode_reads_utf8_with_or_without_a_byte_order_mark_and_utf16_with_one() {
        let text = "cases:\n  - name: é😀\n";
        let rows: &[(&str, Vec<u8>)] = &[
            ("utf-8", text.as_bytes().to_vec()),
            (
                "utf-8 with bom",
                [&[0xef, 0xbb, 0xbf], text.as_bytes()].concat(),
            ),
            ("utf-16le", utf16(text, false)),
            ("utf-16be", utf16(text, true)),
        ];
        for (why, bytes) in rows {
            match decode(bytes.clone()) {
                Ok(t) => assert_eq!(t, text, "{why}"),
                Err(e) => panic!("{why}: {e:?}"),
            }
        }
    }

    #[test]
    fn decode_errors_name_the_byte_offset_and_point_at_the_character() {
        let bad = b"cases:\n  - name: a\xff\xfeb\n".to_vec();
        let e = decode(bad).expect_err("invalid utf-8");
        assert!(e.message.contains("byte 0xFF at byte offset 18"), "{e:?}");
        assert_eq!(&e.text[e.span.clone()], "\u{fffd}");
        assert_eq!(e.text[..e.span.start].matches('\n').count(), 1);

        let with_bom = [&[0xef, 0xbb, 0xbf][..], b"a\xc3"].concat();
        let e = decode(with_bom).expect_err("truncated utf-8");
        assert!(e.message.contains("byte offset 4"), "{e:?}");

        let mut lone = utf16("ab\ncd", false);
        lone.splice(8..8, [0x00, 0xd8]);
        let e = decode(lone).expect_err("unpaired surrogate");
        assert!(e.message.contains("0xD800 at byte offset 8"), "{e:?}");
        assert_eq!(&e.text[e.span.clone()], "\u{fffd}");
        assert_eq!(&e.text[..e.span.start], "ab\n");

        let mut odd = utf16("ab", true);
        odd.push(0x00);
        let e = decode(odd).expect_err("odd length");
        assert!(
            e.message.contains("half a character at byte offset 6"),
            "{e:?}"
        );

        let e = decode(vec![0xff, 0xfe, 0, 0, b'a', 0, 0, 0]).expect_err("utf-32");
        assert!(e.message.contains("UTF-32"), "{e:?}");
    }
}
