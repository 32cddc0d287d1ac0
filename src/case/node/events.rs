//! The common part of YAML built straight from the parser's events: block and flow mappings and
//! sequences of plain and quoted scalars, as case files are written. serde-saphyr's serde layer
//! (a `Spanned` struct around every node, visited field by field) cost about half of loading the
//! shipped cases; this builds the same tree from the events of the same parser (granit, which
//! serde-saphyr re-exports) in one pass.
//!
//! It answers only where the answer is certain, and says `None` for anything else: an anchor,
//! an alias, a tag, a merge key, a duplicate or non-text key, a second document, a block scalar,
//! a plain scalar whose type takes more than the simplest rules (`007`, `1_000`, `0x1F`, `1e5`,
//! `.inf`, `True`, `yes`, `~`, a date), a document near the parser's limits, and any syntax
//! error. Then [`super::parse_yaml`] parses the text with serde-saphyr as before, so its
//! messages, strictness and limits stay the only ones a user meets. A test holds the two to the
//! same tree, spans included, on every case file of the project and on generated documents.

use serde_json::Number;
use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle, Span as EventSpan};

use super::{Key, Node, NodeKind};
use crate::verdict::source::Span;

/// Deeper than this, serde-saphyr's budget (64 levels) decides.
const MAX_DEPTH: usize = 56;
/// More nodes than this, serde-saphyr's budget (250,000) decides.
const MAX_NODES: usize = 200_000;

/// A collection being built.
enum Open {
    Seq {
        span: Span,
        items: Vec<Node>,
    },
    Map {
        span: Span,
        entries: Vec<(Key, Node)>,
        /// The key read, waiting for its value.
        key: Option<Key>,
    },
}

/// The tree of `text` when it is in the common part of YAML (see the module's comment).
pub fn parse(text: &str) -> Option<Node> {
    let mut open: Vec<Open> = Vec::new();
    let mut root: Option<Node> = None;
    let (mut documents, mut nodes) = (0usize, 0usize);
    for item in Parser::new_from_str(text) {
        let (event, span) = item.ok()?;
        match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    return None;
                }
            }
            Event::Scalar(value, style, anchor, tag) => {
                nodes += 1;
                if anchor != 0 || tag.is_some() || nodes > MAX_NODES {
                    return None;
                }
                let span = byte_span(&span)?;
                if let Some(Open::Map { entries, key, .. }) = open.last_mut()
                    && key.is_none()
                {
                    let text = key_text(&value, style)?;
                    if entries.iter().any(|(k, _)| k.text == text) {
                        return None;
                    }
                    *key = Some(Key { text, span });
                    continue;
                }
                let kind = match style {
                    ScalarStyle::Plain => plain(&value)?,
                    ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
                        NodeKind::Str(value.into_owned())
                    }
                    _ => return None,
                };
                add(&mut open, &mut root, Node { kind, span })?;
            }
            Event::SequenceStart(_, anchor, ref tag) | Event::MappingStart(_, anchor, ref tag) => {
                nodes += 1;
                if anchor != 0 || tag.is_some() || nodes > MAX_NODES || open.len() >= MAX_DEPTH {
                    return None;
                }
                // A collection as a key is not text.
                if let Some(Open::Map { key: None, .. }) = open.last() {
                    return None;
                }
                let span = byte_span(&span)?;
                open.push(if matches!(event, Event::SequenceStart(..)) {
                    Open::Seq {
                        span,
                        items: Vec::new(),
                    }
                } else {
                    Open::Map {
                        span,
                        entries: Vec::new(),
                        key: None,
                    }
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let node = match open.pop()? {
                    Open::Seq { span, items } => {
                        let end = items.iter().map(|i| i.span.end).fold(span.end, usize::max);
                        Node {
                            kind: NodeKind::Seq(items),
                            span: span.start..end,
                        }
                    }
                    Open::Map {
                        span,
                        entries,
                        key: None,
                    } => {
                        let end = entries
                            .iter()
                            .map(|(k, v)| k.span.end.max(v.span.end))
                            .fold(span.end, usize::max);
                        Node {
                            kind: NodeKind::Map(entries),
                            span: span.start..end,
                        }
                    }
                    Open::Map { key: Some(_), .. } => return None,
                };
                add(&mut open, &mut root, node)?;
            }
            _ => return None,
        }
    }
    if open.is_empty() { root } else { None }
}

/// Puts a finished node where it belongs: the root, the next item, or the value of the key read.
fn add(open: &mut [Open], root: &mut Option<Node>, node: Node) -> Option<()> {
    match open.last_mut() {
        None => {
            if root.is_some() {
                return None;
            }
            *root = Some(node);
        }
        Some(Open::Seq { items, .. }) => items.push(node),
        Some(Open::Map { entries, key, .. }) => entries.push((key.take()?, node)),
    }
    Some(())
}

/// The byte range of an event.
fn byte_span(span: &EventSpan) -> Option<Span> {
    Some(span.start.byte_offset()?..span.end.byte_offset()?)
}

/// A key's text: quoted, or plain and read as text by every rule (not a merge key, not a null,
/// a boolean or a number).
fn key_text(value: &str, style: ScalarStyle) -> Option<String> {
    match style {
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => Some(value.to_string()),
        ScalarStyle::Plain if value != "<<" && matches!(plain(value)?, NodeKind::Str(_)) => {
            Some(value.to_string())
        }
        _ => None,
    }
}

/// A plain scalar's value by the simplest rules, or `None` where serde-saphyr's options decide.
fn plain(value: &str) -> Option<NodeKind> {
    match value {
        "null" => return Some(NodeKind::Null),
        "true" => return Some(NodeKind::Bool(true)),
        "false" => return Some(NodeKind::Bool(false)),
        _ => {}
    }
    let &first = value.as_bytes().first()?;
    if first.is_ascii_digit() || first == b'-' {
        if let Some(n) = simple_number(value) {
            return Some(NodeKind::Number(n));
        }
        // Text that starts like a number (an id such as `5f3c9a1e-…`) only when no rule could
        // read it as one: a letter other than an exponent's, and nothing of a date or a time.
        let unsigned = value.strip_prefix('-').unwrap_or(value).as_bytes();
        let radix = unsigned.len() > 1 && unsigned[0] == b'0' && unsigned[1].is_ascii_alphabetic();
        let text_like = !radix
            && unsigned.first() != Some(&b'.')
            && !value.contains([':', '_'])
            && value.parse::<f64>().is_err()
            && value
                .bytes()
                .any(|b| b.is_ascii_alphabetic() && !matches!(b, b'e' | b'E'));
        return text_like.then(|| NodeKind::Str(value.to_string()));
    }
    let lower = value.to_ascii_lowercase();
    let reserved = matches!(
        lower.as_str(),
        "null" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n"
    );
    if reserved || !(first.is_ascii_alphabetic() || first == b'_' || first == b'/' || first >= 0x80)
    {
        return None;
    }
    Some(NodeKind::Str(value.to_string()))
}

/// `-?(0|[1-9][0-9]*)` within 64 bits, or the same with a fraction of decimal digits.
fn simple_number(value: &str) -> Option<Number> {
    let digits = value.strip_prefix('-').unwrap_or(value);
    let (whole, fraction) = match digits.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (digits, None),
    };
    let decimal = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !decimal(whole) || (whole.len() > 1 && whole.starts_with('0')) {
        return None;
    }
    match fraction {
        None => {
            if let Ok(n) = value.parse::<i64>() {
                Some(n.into())
            } else {
                value.parse::<u64>().ok().map(Into::into)
            }
        }
        Some(f) if decimal(f) => Number::from_f64(value.parse().ok()?),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Whether the events path took `text`; when it did, serde-saphyr gives the same tree.
    fn agree(text: &str, what: &str) -> bool {
        let Some(fast) = parse(text) else {
            return false;
        };
        match super::super::parse_with_serde(text) {
            Ok(serde) => assert_eq!(format!("{fast:?}"), format!("{serde:?}"), "{what}:\n{text}"),
            Err(e) => {
                panic!("{what}: serde-saphyr rejects what the events path took ({e:?}):\n{text}")
            }
        }
        true
    }

    fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                files(&path, out);
            } else if path
                .extension()
                .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
            {
                out.push(path);
            }
        }
    }

    #[test]
    fn the_projects_case_files_parse_alike_and_the_shipped_ones_from_events() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths = Vec::new();
        for dir in ["cases", "tests/fixtures", "examples", "schemas"] {
            files(&root.join(dir), &mut paths);
        }
        assert!(paths.len() >= 10, "{paths:?}");
        for path in paths {
            let Ok(text) = super::super::decode(std::fs::read(&path).unwrap()) else {
                continue;
            };
            let took = agree(&text, &path.display().to_string());
            if path.starts_with(root.join("cases")) && path.extension().is_some_and(|e| e == "yaml")
            {
                assert!(took, "{} does not take the events path", path.display());
            }
        }
    }

    /// Every test of the YAML test suite (vendored in `tests/data/yaml-test-suite`: anchors,
    /// tags, block scalars, flow forms, odd indentation, comments in odd places, and the
    /// documents the suite expects to fail): what the events path takes, serde-saphyr reads
    /// to the same tree, spans included.
    #[test]
    fn the_yaml_test_suite_parses_alike() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/yaml-test-suite/tests.json");
        let corpus: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let tests = corpus["tests"].as_object().unwrap();
        assert!(tests.len() >= 400, "{}", tests.len());
        let (mut took, mut lenient) = (0, Vec::new());
        for (id, test) in tests {
            let text = test["in.yaml"].as_str().unwrap();
            if agree(text, &format!("yaml-test-suite {id}")) {
                took += 1;
                if test["error"] == true {
                    lenient.push(id.as_str());
                }
            }
        }
        // The suite is mostly what case files never are; the common part is still there.
        assert!(took >= 40, "{took} of {}", tests.len());
        // Of the documents the suite expects to fail, the parser (serde-saphyr's too) reads
        // one: a flow sequence in a block mapping continued at column 0. Both paths read it
        // alike; a new one here means the events path or the parser changed.
        assert_eq!(lenient, ["9C9N"], "documents the suite expects to fail");
    }

    /// A small deterministic generator of YAML documents in the shapes case files take, with
    /// the scalars whose type is in doubt and the features the events path leaves to serde-saphyr.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        fn scalar(&mut self) -> String {
            const SCALARS: &[&str] = &[
                "x",
                "mall list",
                "007",
                "1_000",
                "0x1F",
                "0o17",
                "1e5",
                "1.5e3",
                ".5",
                "+5",
                ".inf",
                "-.inf",
                ".nan",
                "True",
                "TRUE",
                "yes",
                "No",
                "on",
                "~",
                "null",
                "Null",
                "NULL",
                "true",
                "false",
                "0",
                "-0",
                "42",
                "-42",
                "1.50",
                "0.0",
                "-1.25",
                "9223372036854775807",
                "9223372036854775808",
                "18446744073709551615",
                "18446744073709551616",
                "-9223372036854775809",
                "2026-11-27",
                "12:30",
                "5f3c9a1e-7b42-4d8e-9c61-2a8f0e4b7d13",
                "1a",
                "-abc",
                "é",
                "_x",
                "/p/q",
                "'single'",
                "'it''s'",
                "\"double\"",
                "\"esc \\u00e9 \\n\"",
                "\"\"",
                "''",
                "\"${MALLCHECK_MERCHANT_ID}\"",
                "\"^[0-9]+$\"",
                "$.data[*].x",
                "a b c",
                "*alias",
                "&anchor x",
                "!!str 5",
                "!custom x",
                "<<",
                "inf",
                "NaN",
                "0b101",
                "1.",
                "00",
                "0.5.1",
                "1-2",
                "e5",
            ];
            // Half the time a scalar as most case files write them, so that many documents
            // are in the events path's part and their trees are compared.
            const COMMON: &[&str] = &[
                "x", "200", "10", "-1", "0.5", "true", "null", "'s'", "\"d\"", "a b", "$.data",
            ];
            if self.next(2) == 0 {
                return COMMON[self.next(COMMON.len())].to_string();
            }
            SCALARS[self.next(SCALARS.len())].to_string()
        }

        fn key(&mut self) -> String {
            const KEYS: &[&str] = &[
                "name", "path", "expect", "status", "body", "a", "b", "'quoted'", "\"dq\"", "200",
                "true", "null", "~", "<<", "k e y", "é", "x-y",
            ];
            KEYS[self.next(KEYS.len())].to_string()
        }

        fn flow(&mut self, depth: usize) -> String {
            match if depth > 2 { 0 } else { self.next(4) } {
                0 | 1 => self.scalar(),
                2 => {
                    let items: Vec<String> =
                        (0..self.next(4)).map(|_| self.flow(depth + 1)).collect();
                    format!("[{}]", items.join(", "))
                }
                _ => {
                    let entries: Vec<String> = (0..self.next(4))
                        .map(|_| format!("{}: {}", self.key(), self.flow(depth + 1)))
                        .collect();
                    format!("{{ {} }}", entries.join(", "))
                }
            }
        }

        fn block_map(&mut self, indent: usize, depth: usize, out: &mut String) {
            let pad = " ".repeat(indent);
            for _ in 0..=self.next(4) {
                let key = self.key();
                match if depth > 3 { 0 } else { self.next(6) } {
                    0 | 1 => out.push_str(&format!("{pad}{key}: {}\n", self.scalar())),
                    2 => out.push_str(&format!("{pad}{key}: {}\n", self.flow(0))),
                    3 => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        self.block_map(indent + 2, depth + 1, out);
                    }
                    4 => {
                        out.push_str(&format!("{pad}{key}:  # a comment\n"));
                        self.block_seq(indent + 2, depth + 1, out);
                    }
                    _ => out.push_str(&format!(
                        "{pad}{key}: |\n{pad}  line one\n{pad}  line two\n"
                    )),
                }
            }
        }

        fn block_seq(&mut self, indent: usize, depth: usize, out: &mut String) {
            let pad = " ".repeat(indent);
            for _ in 0..=self.next(3) {
                match self.next(3) {
                    0 => out.push_str(&format!("{pad}- {}\n", self.scalar())),
                    1 => out.push_str(&format!("{pad}- {}\n", self.flow(0))),
                    _ => {
                        // A compact mapping as an item, as a list of cases is written.
                        let mut item = String::new();
                        self.block_map(indent + 2, depth + 1, &mut item);
                        out.push_str(&format!("{pad}- {}", &item[indent + 2..]));
                    }
                }
            }
        }
    }

    #[test]
    fn generated_documents_parse_alike() {
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        let (mut took, mut total) = (0, 0);
        for i in 0..6_000 {
            let mut text = String::new();
            match g.next(5) {
                0 => text = g.flow(0),
                1 => g.block_seq(0, 0, &mut text),
                _ => g.block_map(0, 0, &mut text),
            }
            if g.next(8) == 0 {
                text = format!("# leading comment\n---\n{text}");
            }
            // A file saved on Windows.
            if g.next(4) == 0 {
                text = text.replace('\n', "\r\n");
            }
            total += 1;
            took += usize::from(agree(&text, &format!("document {i}")));
        }
        // The generator is not so odd that the events path seldom answers.
        assert!(took * 6 > total, "{took} of {total}");
    }
}
