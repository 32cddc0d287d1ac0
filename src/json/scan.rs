//! One pass over the bytes of a JSON document, building no tree: what a tree cannot tell
//! (a key given twice in one object, where `serde_json` keeps the last; the literal as written,
//! `1e5` or `105112.0`; a number beyond a double's range, which `serde_json` refuses outright)
//! handed to a [`Visit`] with the JSON Pointer where it is.
//!
//! The grammar is RFC 8259's; nesting is limited as `serde_json`'s is, so the scan never
//! accepts a body that a tree parse would refuse for its depth.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};
use std::ops::Range;

use crate::json::escape_pointer;

/// Deepest nesting scanned: `serde_json`'s recursion limit refuses a 128th level.
pub const MAX_DEPTH: usize = 127;

/// Why the bytes are not one JSON document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// What is wrong there.
    pub what: &'static str,
}

/// One step of the path to a value: an object member (its key's bytes, escapes undecoded) or
/// an array index.
#[derive(Debug, Clone)]
enum Step {
    Key(Range<usize>),
    Index(usize),
}

/// Where a value is: rendered as a JSON Pointer only when asked.
pub struct Path<'a> {
    bytes: &'a [u8],
    steps: &'a [Step],
}

impl Path<'_> {
    /// The JSON Pointer (RFC 6901) of the value.
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        for step in self.steps {
            out.push('/');
            match step {
                Step::Key(span) => {
                    out.push_str(&escape_pointer(&key_text(&self.bytes[span.clone()])))
                }
                Step::Index(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }

    /// How deep the value is (0: the root).
    pub fn depth(&self) -> usize {
        self.steps.len()
    }
}

/// The text of a key's bytes (between the quotes): escapes decoded when it has any.
fn key_text(raw: &[u8]) -> String {
    if raw.contains(&b'\\') {
        let mut quoted = Vec::with_capacity(raw.len() + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(raw);
        quoted.push(b'"');
        serde_json::from_slice(&quoted).unwrap_or_else(|_| String::from_utf8_lossy(raw).into())
    } else {
        String::from_utf8_lossy(raw).into_owned()
    }
}

/// What a scan reports.
pub trait Visit {
    /// Whether to look for keys given twice in one object (it costs a set per open object).
    fn wants_duplicates(&self) -> bool {
        false
    }

    /// A number token, as written, at `path`; `span` is where it is in the bytes.
    fn number(&mut self, _path: &Path<'_>, _literal: &str, _span: Range<usize>) {}

    /// A key given a second (third, …) time in the object at `path`.
    fn duplicate(&mut self, _path: &Path<'_>, _key: &str) {}

    /// At the end of a scan: what a `serde_json::Value` tree of the document would take on
    /// the heap, by the [`cost`] model.
    fn tree_bytes(&mut self, _bytes: usize) {}
}

/// What a `serde_json::Value` tree takes on the heap, counted alike by the scan (before any
/// tree is built) and by the bounded tree builder (while one is). Each figure is an upper bound
/// of what the allocator hands out for that part of a tree, so a count within a budget means
/// the tree is within it, whatever the body's shape: a growing `Vec` or `IndexMap` holds up to
/// twice its length, and while it grows its old block and the new one twice as large are both
/// held (three times its length); a non-empty one holds at least 4 entries; a key or string
/// takes an allocator chunk of at least 32 bytes.
pub mod cost {
    use serde_json::Value;
    use std::mem::size_of;

    /// A value's place in its array or object (the root's too): one `Value`, three times over.
    pub const SLOT: usize = 3 * size_of::<Value>();
    /// An object member besides its value's slot: the entry's key `String` and hash, three
    /// times over, and its share of the hash table (an index and a control byte, which grows
    /// the same way).
    pub const MEMBER: usize = 3 * (size_of::<String>() + 8) + 3 * 9 + 5;
    /// An array or object with at least one element: its first allocations (4 entries of an
    /// object, the smallest hash table) and the allocator's headers.
    pub const CONTAINER: usize = 4 * (size_of::<Value>() + size_of::<String>() + 8) + 64 + 32;

    /// The heap text of a string or key of `len` bytes: the allocator's chunk.
    pub const fn text(len: usize) -> usize {
        if len == 0 {
            return 0;
        }
        let chunk = (len + 8).div_ceil(16) * 16;
        if chunk < 32 { 32 } else { chunk }
    }
}

/// An upper bound of what a tree of `bytes` would take, as [`Anomalies::tree_bytes`] counts
/// it, from a few byte counts and no parse: every value is the root or follows a `[`, a `,`
/// or a `:`, every member follows a `:`, every container opens with `[` or `{`, and the texts
/// of keys and strings lie between pairs of quotes within the body. Bytes inside strings only
/// add to the counts, so it never falls short.
pub fn tree_bytes_bound(bytes: &[u8]) -> usize {
    let mut counts = [0usize; 256];
    for &b in bytes {
        counts[b as usize] += 1;
    }
    let members = counts[b':' as usize];
    let values = 1 + counts[b'[' as usize] + counts[b',' as usize] + members;
    let containers = counts[b'[' as usize] + counts[b'{' as usize];
    // `cost::text(len) <= len + 32`, one string per pair of quotes.
    let texts = bytes.len() + 32 * counts[b'"' as usize].div_ceil(2);
    values * cost::SLOT + members * cost::MEMBER + containers * cost::CONTAINER + texts
}

/// Scans `bytes` as one JSON document, reporting to `visit`.
pub fn scan(bytes: &[u8], visit: &mut dyn Visit) -> Result<(), ScanError> {
    if std::str::from_utf8(bytes).is_err() {
        let offset = std::str::from_utf8(bytes)
            .err()
            .map_or(0, |e| e.valid_up_to());
        return Err(ScanError {
            offset,
            what: "bytes that are not UTF-8",
        });
    }
    let hasher = std::collections::hash_map::RandomState::new();
    let mut s = Scanner {
        bytes,
        at: 0,
        steps: Vec::new(),
        duplicates: visit.wants_duplicates(),
        sets: Vec::new(),
        hasher,
        tree: 0,
        visit,
    };
    s.ws();
    s.value()?;
    s.ws();
    if s.at != bytes.len() {
        return Err(s.error("trailing characters"));
    }
    let tree = s.tree;
    s.visit.tree_bytes(tree);
    Ok(())
}

struct Scanner<'b, 'v> {
    bytes: &'b [u8],
    at: usize,
    steps: Vec<Step>,
    duplicates: bool,
    /// Key hashes of each open object (reused allocations below the current depth).
    sets: Vec<HashSet<u64>>,
    hasher: std::collections::hash_map::RandomState,
    /// What a tree of the values so far would take.
    tree: usize,
    visit: &'v mut dyn Visit,
}

impl Scanner<'_, '_> {
    fn error(&self, what: &'static str) -> ScanError {
        ScanError {
            offset: self.at,
            what,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Result<(), ScanError> {
        self.tree += cost::SLOT;
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self
                .string()
                .map(|span| self.tree += cost::text(span.len())),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.word(b"true"),
            Some(b'f') => self.word(b"false"),
            Some(b'n') => self.word(b"null"),
            Some(_) => Err(self.error("a character that starts no JSON value")),
            None => Err(self.error("the end of the body where a value was expected")),
        }
    }

    fn word(&mut self, word: &[u8]) -> Result<(), ScanError> {
        if self.bytes[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(self.error("a word that is not true, false or null"))
        }
    }

    fn enter(&mut self) -> Result<(), ScanError> {
        if self.steps.len() >= MAX_DEPTH {
            return Err(self.error("nesting of 128 levels or more"));
        }
        self.at += 1;
        self.ws();
        Ok(())
    }

    fn object(&mut self) -> Result<(), ScanError> {
        self.enter()?;
        let depth = self.steps.len();
        if self.duplicates {
            if self.sets.len() <= depth {
                self.sets.resize_with(depth + 1, HashSet::new);
            }
            self.sets[depth].clear();
        }
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        self.tree += cost::CONTAINER;
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.error("a member that does not start with a quoted key"));
            }
            let key = self.string()?;
            if self.duplicates {
                let raw = &self.bytes[key.clone()];
                let mut h = self.hasher.build_hasher();
                if raw.contains(&b'\\') {
                    h.write(key_text(raw).as_bytes());
                } else {
                    h.write(raw);
                }
                if !self.sets[depth].insert(h.finish()) {
                    let text = key_text(raw);
                    let path = Path {
                        bytes: self.bytes,
                        steps: &self.steps,
                    };
                    self.visit.duplicate(&path, &text);
                }
            }
            self.ws();
            if self.peek() != Some(b':') {
                return Err(self.error("a key without a colon"));
            }
            self.at += 1;
            self.ws();
            self.tree += cost::MEMBER + cost::text(key.len());
            self.steps.push(Step::Key(key));
            let value = self.value();
            self.steps.pop();
            value?;
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.ws();
                }
                Some(b'}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.error("an object member followed by neither , nor }")),
            }
        }
    }

    fn array(&mut self) -> Result<(), ScanError> {
        self.enter()?;
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(());
        }
        self.tree += cost::CONTAINER;
        let mut i = 0;
        loop {
            self.steps.push(Step::Index(i));
            let value = self.value();
            self.steps.pop();
            value?;
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.ws();
                    i += 1;
                }
                Some(b']') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.error("an array element followed by neither , nor ]")),
            }
        }
    }

    /// A string; gives the span of its content (between the quotes).
    fn string(&mut self) -> Result<Range<usize>, ScanError> {
        self.at += 1;
        let start = self.at;
        loop {
            // Jump to the next byte that matters.
            let rest = &self.bytes[self.at..];
            let Some(n) = rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            else {
                self.at = self.bytes.len();
                return Err(self.error("a string that does not end"));
            };
            self.at += n;
            match self.bytes[self.at] {
                b'"' => {
                    let span = start..self.at;
                    self.at += 1;
                    return Ok(span);
                }
                b'\\' => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.at += 1;
                        }
                        Some(b'u') => {
                            let hex = self.bytes.get(self.at + 1..self.at + 5);
                            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                                return Err(self.error("a \\u escape without four hex digits"));
                            }
                            self.at += 5;
                        }
                        _ => return Err(self.error("an unknown escape in a string")),
                    }
                }
                _ => return Err(self.error("a control character in a string")),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<(), ScanError> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.at += 1;
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return Err(self.error("a number with a leading zero"));
                }
            }
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("a minus sign without digits")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(self.error("a decimal point without digits after it"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("an exponent without digits"));
            }
        }
        let span = start..self.at;
        // The bytes were checked to be UTF-8 and a number is ASCII.
        let literal = std::str::from_utf8(&self.bytes[span.clone()]).unwrap_or_default();
        let path = Path {
            bytes: self.bytes,
            steps: &self.steps,
        };
        self.visit.number(&path, literal, span);
        Ok(())
    }
}

/// Whether a number literal is beyond what a double holds (`1e999`, ten thousand digits):
/// `serde_json` refuses such a body whole ("number out of range").
pub fn out_of_range(literal: &str) -> bool {
    literal.parse::<f64>().is_ok_and(f64::is_infinite)
}

/// Whether a literal is written as an integer: no fraction, no exponent.
pub fn is_integer_literal(literal: &str) -> bool {
    !literal.contains(['.', 'e', 'E'])
}

/// A literal as a finding quotes it: whole when short, else its start and its length.
pub fn quote_literal(literal: &str) -> String {
    const SHOWN: usize = 40;
    if literal.len() <= SHOWN {
        literal.to_string()
    } else {
        format!("{}… ({} characters)", &literal[..SHOWN], literal.len())
    }
}

/// What a scan found that a tree hides: keys given twice and numbers beyond a double.
#[derive(Debug, Clone, Default)]
pub struct Anomalies {
    /// The first duplicate keys: (pointer of the member, key).
    pub duplicates: Vec<(String, String)>,
    /// How many duplicate keys in all.
    pub duplicate_count: usize,
    /// The first numbers beyond a double's range: (pointer, literal as quoted).
    pub out_of_range: Vec<(String, String)>,
    /// Where every such number is in the bytes.
    pub out_of_range_spans: Vec<Range<usize>>,
    /// What a tree of the document would take ([`Visit::tree_bytes`]).
    pub tree_bytes: usize,
}

impl Anomalies {
    /// Most anomalies of each kind kept with their pointer (the rest are counted).
    pub const KEPT: usize = 50;

    /// Whether the scan found nothing.
    pub fn is_empty(&self) -> bool {
        self.duplicate_count == 0 && self.out_of_range_spans.is_empty()
    }
}

impl Visit for Anomalies {
    fn wants_duplicates(&self) -> bool {
        true
    }

    fn number(&mut self, path: &Path<'_>, literal: &str, span: Range<usize>) {
        // A double holds every literal of at most 308 digits without exponent.
        if (literal.len() > 300 || literal.contains(['e', 'E'])) && out_of_range(literal) {
            if self.out_of_range.len() < Self::KEPT {
                self.out_of_range
                    .push((path.pointer(), quote_literal(literal)));
            }
            self.out_of_range_spans.push(span);
        }
    }

    fn tree_bytes(&mut self, bytes: usize) {
        self.tree_bytes = bytes;
    }

    fn duplicate(&mut self, path: &Path<'_>, key: &str) {
        self.duplicate_count += 1;
        if self.duplicates.len() < Self::KEPT {
            let pointer = format!("{}/{}", path.pointer(), escape_pointer(key));
            self.duplicates.push((pointer, key.to_string()));
        }
    }
}

/// The anomalies of `bytes`.
pub fn anomalies(bytes: &[u8]) -> Result<Anomalies, ScanError> {
    let mut found = Anomalies::default();
    scan(bytes, &mut found)?;
    Ok(found)
}

/// `bytes` with each number at `spans` replaced by `0` and spaces (same length, so every
/// other offset stays), for a parser that refuses the numbers themselves.
pub fn zero_numbers(bytes: &[u8], spans: &[Range<usize>]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for span in spans {
        if let Some(slot) = out.get_mut(span.clone()) {
            slot.fill(b' ');
            slot[0] = b'0';
        }
    }
    out
}

/// The number literals written at `pointers`, as written (for a finding that quotes one).
pub fn literals_at(bytes: &[u8], pointers: &HashSet<String>) -> Vec<(String, String)> {
    struct At<'p> {
        pointers: &'p HashSet<String>,
        found: Vec<(String, String)>,
    }
    impl Visit for At<'_> {
        fn number(&mut self, path: &Path<'_>, literal: &str, _span: Range<usize>) {
            // Only a literal with a fraction or an exponent can differ from its rendering.
            if !is_integer_literal(literal) && self.found.len() < self.pointers.len() {
                let pointer = path.pointer();
                if self.pointers.contains(&pointer) {
                    self.found.push((pointer, quote_literal(literal)));
                }
            }
        }
    }
    let mut at = At {
        pointers,
        found: Vec::new(),
    };
    let _ = scan(bytes, &mut at);
    at.found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_model_bounds_the_heap_of_a_tree_of_every_shape() {
        for (shape, body) in crate::json::heap_probe::shapes(256 * 1024) {
            let counted = anomalies(&body).unwrap().tree_bytes;
            let bound = tree_bytes_bound(&body);
            let (tree, peak) = crate::json::heap_probe::peak_during(|| {
                serde_json::from_slice::<serde_json::Value>(&body).unwrap()
            });
            drop(tree);
            assert!(
                peak <= counted,
                "{shape}: the tree took {peak} bytes at its peak, the model counts {counted}"
            );
            assert!(
                counted <= bound,
                "{shape}: {counted} > the quick bound {bound}"
            );
            // An upper bound, but not a wild one: the budget of a body must still fit the
            // trees of ordinary bodies.
            assert!(
                counted <= 4 * peak + 4096,
                "{shape}: the model counts {counted}, the tree took {peak}"
            );
        }
    }

    #[test]
    fn duplicate_keys_are_found_with_their_pointer_escapes_decoded() {
        let body = br#"{"data":[],"data":[1],"s":{"merchantId":"x","merchant\u0049d":"y"},"a":{"k":1},"b":{"k":2}}"#;
        let found = anomalies(body).unwrap();
        assert_eq!(found.duplicate_count, 2);
        assert_eq!(
            found.duplicates,
            [
                ("/data".to_string(), "data".to_string()),
                ("/s/merchantId".to_string(), "merchantId".to_string())
            ]
        );
    }

    #[test]
    fn numbers_beyond_a_double_are_found_and_zeroed() {
        let long = "9".repeat(10_000);
        let body = format!(r#"{{"a":[1e999,-1E+400,1e308,0.5],"b":{long},"c":1e-999}}"#);
        let found = anomalies(body.as_bytes()).unwrap();
        let pointers: Vec<&str> = found.out_of_range.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(pointers, ["/a/0", "/a/1", "/b"]);
        assert_eq!(found.out_of_range[0].1, "1e999");
        assert!(found.out_of_range[2].1.ends_with("(10000 characters)"));
        let zeroed = zero_numbers(body.as_bytes(), &found.out_of_range_spans);
        let value: serde_json::Value = serde_json::from_slice(&zeroed).unwrap();
        assert_eq!(value["a"], serde_json::json!([0, 0, 1e308, 0.5]));
        assert!(serde_json::from_slice::<serde_json::Value>(body.as_bytes()).is_err());
    }

    #[test]
    fn literals_are_given_as_written() {
        let body = br#"{"n":[1e5, 105112.0, 7],"m":{"x/y":2.0}}"#;
        let want: HashSet<String> = ["/n/0", "/n/1", "/m/x~1y", "/n/2"]
            .into_iter()
            .map(String::from)
            .collect();
        let mut got = literals_at(body, &want);
        got.sort();
        assert_eq!(
            got,
            [
                ("/m/x~1y".to_string(), "2.0".to_string()),
                ("/n/0".to_string(), "1e5".to_string()),
                ("/n/1".to_string(), "105112.0".to_string())
            ]
        );
    }

    #[test]
    fn what_is_not_json_is_an_error() {
        for body in [
            &b"NaN"[..],
            b"[Infinity]",
            b"{\"a\":1,}",
            b"[1,]",
            b"// c\n{}",
            b"[01]",
            b"[1.]",
            b"\"\x01\"",
            b"{} x",
            b"",
            b"[\"\xff\"]",
        ] {
            assert!(
                anomalies(body).is_err(),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        // Nesting is limited where a tree parse's is.
        for depth in [127, 128, 129] {
            let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let tree = serde_json::from_slice::<serde_json::Value>(deep.as_bytes()).is_ok();
            assert_eq!(anomalies(deep.as_bytes()).is_ok(), tree, "{depth}");
        }
    }
}
