//! The only code that knows what a secret looks like.
//!
//! A command has one [`Redactor`], owned by its `Session` and passed to whatever builds a record
//! or writes output (there is no process-wide one). Every secret the run learns is registered there as
//! soon as it is known: the signing key and the sign command when the settings are resolved,
//! each Authorization value and signature as its request is signed (noted then, and registered
//! before the next search of any text: see [`Pending`]), the userinfo of a base URL, the values
//! of credential headers. Each is registered in every form an echo can take (raw, JSON-escaped
//! as the common encoders write it, percent-encoded, HTML/XML-escaped, shell-quoted, base64 at
//! any alignment, a hex value in either case). Exchange records are scrubbed when they are
//! sealed, from both sides of the exchange (sinks take only sealed records); report files and
//! console lines are scrubbed once more where they are written.
//! An excerpt is cut in the text it quotes, never in scrubbed text, and leaves out what the cut
//! may have left of a secret.
//!
//! Each form is also registered normalised ([`normal`]: per-character escapes decoded, white
//! space dropped, ASCII lower-cased) and searched in the normalised view of each text, the
//! matches mapped back to the text: a secret echoed in another letter case, escaped character
//! by character (JSON `\u`, `%XX`, HTML numeric and named entities), with a line break inside
//! or as base64 wrapped at any width is found too. The view is built a chunk of text at a time,
//! so its offset map stays small whatever the text's length.
//!
//! Matching stays linear however many requests a run signs. Forms made only of token bytes
//! (letters, digits, `-_.~+/=`: every form of a hex signature) sit in a set looked up with each
//! window of each run of token bytes, so registering one costs O(log n) (it is also kept in a
//! sorted set, for the end of an excerpt). The other forms go into Aho-Corasick automata, merged
//! like a binary counter.
//!
//! A secret shorter than [`MIN_SECRET_LEN`] characters is not scrubbed from free text: a
//! one-letter key would erase that letter from every report. Header values are still redacted by
//! header name whatever their length, and the settings warn about a short signing key.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::{self, Write as _};
use std::hash::BuildHasher as _;
use std::io::{self, Write};
use std::ops::{Bound, Range};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, RwLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use base64::Engine as _;
use base64::engine::GeneralPurpose;
use base64::engine::general_purpose::{STANDARD_NO_PAD, STANDARD_PAD_INDIFFERENT, URL_SAFE_NO_PAD};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

mod normal;
mod shown;

pub use shown::Shown;

/// Placeholder written wherever a secret was.
pub const REDACTED: &str = "<redacted>";

/// The placeholder in HTML and XML files, where a bare `<redacted>` would be markup.
const REDACTED_MARKUP: &str = "&lt;redacted&gt;";

/// Shortest secret scrubbed from free text, in characters. Signatures (32 or 64 hex digits) and
/// real keys are far longer; shorter values would destroy reports (every `a` of a report for a
/// one-letter key) while hiding little.
pub const MIN_SECRET_LEN: usize = 8;

/// What replaces the sign command: the report says that a command signer ran, not which.
pub const SIGN_COMMAND_LABEL: &str = "<the sign command>";

const SIGN_COMMAND_MARKUP: &str = "&lt;the sign command&gt;";

/// A secret string (signing key, Authorization signature). `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret itself; call only where it must leave the process (signing, the wire).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// Headers whose value is `<scheme or appid> <credential>`: the first word stays visible.
const AUTHORIZATION_HEADERS: &[&str] = &["authorization", "proxy-authorization"];

/// `Set-Cookie` attributes: what they hold is no credential.
const COOKIE_ATTRIBUTES: &[&str] = &[
    "path",
    "domain",
    "expires",
    "max-age",
    "samesite",
    "secure",
    "httponly",
    "priority",
    "partitioned",
];

/// A header whose name contains one of these carries a credential.
const SECRET_NAME_PARTS: &[&str] = &[
    "auth",
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "session",
    "cookie",
    "signature",
    "credential",
    "ticket",
    "csrf",
    "xsrf",
    "jwt",
    "bearer",
];

/// Whether a header's name says it carries a credential (`Authorization`, `Cookie`,
/// `X-Api-Key`, `X-Auth-Token`, `X-Session-Id`, ...). `WWW-Authenticate` and the CORS
/// `Access-Control-*` headers describe, they do not carry.
pub fn is_secret_header_name(name: &str) -> bool {
    const CORS: &str = "access-control-";
    if name.eq_ignore_ascii_case("www-authenticate")
        || name
            .get(..CORS.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(CORS))
    {
        return false;
    }
    // One automaton over every part, case-insensitive: every header of every exchange is
    // asked, and a `str::contains` per part (a searcher built each time) cost ~3,500
    // instructions a header.
    static PARTS: LazyLock<AhoCorasick> = LazyLock::new(|| {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(SECRET_NAME_PARTS)
            .expect("a handful of literal parts")
    });
    PARTS.is_match(name)
}

/// What a match is replaced with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Label {
    Secret,
    SignCommand,
}

impl Label {
    fn text(self, markup: bool) -> &'static str {
        match (self, markup) {
            (Label::Secret, false) => REDACTED,
            (Label::Secret, true) => REDACTED_MARKUP,
            (Label::SignCommand, false) => SIGN_COMMAND_LABEL,
            (Label::SignCommand, true) => SIGN_COMMAND_MARKUP,
        }
    }
}

/// Patterns of a tier searched by a DFA (more by the noncontiguous NFA).
const DFA_PATTERNS: usize = 512;

/// One automaton over a set of patterns.
struct Tier {
    patterns: Vec<String>,
    labels: Vec<Label>,
    /// `None` only if the automaton could not be built (absurdly many patterns): then each
    /// pattern is searched on its own.
    automaton: Option<AhoCorasick>,
}

impl Tier {
    fn new(patterns: Vec<String>, labels: Vec<Label>) -> Tier {
        // Tiers are rebuilt as the run goes, each O(log n) times: a DFA (a table lookup a
        // byte) while it is small enough to build in a blink, then the noncontiguous NFA, the
        // cheapest to build. No prefilter: the rare bytes of escaped key forms (`%`, `\`,
        // digits) are common in JSON, and the prefilter's false starts cost more than the scan.
        let kind = if patterns.len() <= DFA_PATTERNS {
            AhoCorasickKind::DFA
        } else {
            AhoCorasickKind::NoncontiguousNFA
        };
        let automaton = AhoCorasick::builder()
            .kind(Some(kind))
            .prefilter(false)
            .match_kind(MatchKind::Standard)
            .build(&patterns)
            .ok();
        Tier {
            patterns,
            labels,
            automaton,
        }
    }

    fn find(&self, text: &[u8], out: &mut Vec<(Range<usize>, Label)>) {
        match &self.automaton {
            Some(ac) => {
                for m in ac.find_overlapping_iter(text) {
                    out.push((m.range(), self.labels[m.pattern().as_usize()]));
                }
            }
            None => {
                for (p, label) in self.patterns.iter().zip(&self.labels) {
                    let p = p.as_bytes();
                    for start in 0..text.len().saturating_sub(p.len() - 1) {
                        if &text[start..start + p.len()] == p {
                            out.push((start..start + p.len(), *label));
                        }
                    }
                }
            }
        }
    }
}

/// A set hashed with foldhash (seeded per process).
type FastSet<T> = HashSet<T, foldhash::fast::RandomState>;

/// Whether a byte can be part of a token (hex, base64, base64url, JWT, most API keys).
const fn token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'+' | b'/' | b'=')
}

const TOKEN_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = token_byte(b as u8);
        b += 1;
    }
    table
};

/// Bits of the filter of one token length: a window whose bit is clear is no secret.
const FILTER_BITS: u32 = 18;

/// Token patterns of one length, kept end to end in one buffer and found through a table of
/// their offsets: a run registers every form of every signature it sends (about nine each),
/// where a boxed pattern per entry made an allocation of each and a rehash that hashed every
/// pattern again.
struct TokenSet {
    len: usize,
    filter: Vec<u64>,
    /// The patterns, `len` bytes each.
    bytes: Vec<u8>,
    /// The hash and the offset in `bytes` of each pattern (the hash kept so that growing the
    /// table hashes no pattern again).
    table: hashbrown::HashTable<(u64, usize)>,
    hasher: foldhash::fast::RandomState,
}

impl TokenSet {
    fn new(len: usize) -> TokenSet {
        TokenSet {
            len,
            filter: vec![0; 1 << (FILTER_BITS - 6)],
            bytes: Vec::new(),
            table: hashbrown::HashTable::new(),
            hasher: foldhash::fast::RandomState::default(),
        }
    }

    /// A cheap hash of a window of at least 8 bytes: its first and last 8 bytes.
    fn bit(window: &[u8]) -> usize {
        let mut head = [0u8; 8];
        let mut tail = [0u8; 8];
        head.copy_from_slice(&window[..8]);
        tail.copy_from_slice(&window[window.len() - 8..]);
        let mixed = (u64::from_le_bytes(head) ^ u64::from_le_bytes(tail).rotate_left(29))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed >> (64 - FILTER_BITS)) as usize
    }

    /// Whether the pattern at `at` is `window`.
    fn holds(&self, at: usize, window: &[u8]) -> bool {
        &self.bytes[at..at + self.len] == window
    }

    /// Adds `pattern` (`len` bytes) unless it is in already.
    fn insert(&mut self, pattern: &[u8]) {
        debug_assert_eq!(pattern.len(), self.len);
        let bit = TokenSet::bit(pattern);
        self.filter[bit / 64] |= 1 << (bit % 64);
        let hash = self.hasher.hash_one(pattern);
        if self
            .table
            .find(hash, |&(h, at)| h == hash && self.holds(at, pattern))
            .is_some()
        {
            return;
        }
        let at = self.bytes.len();
        self.bytes.extend_from_slice(pattern);
        self.table.insert_unique(hash, (hash, at), |&(h, _)| h);
    }

    fn contains(&self, window: &[u8]) -> bool {
        let bit = TokenSet::bit(window);
        if self.filter[bit / 64] & (1 << (bit % 64)) == 0 {
            return false;
        }
        let hash = self.hasher.hash_one(window);
        self.table
            .find(hash, |&(h, at)| h == hash && self.holds(at, window))
            .is_some()
    }

    /// Every pattern, in the order added (for tests).
    #[cfg(test)]
    fn patterns(&self) -> impl Iterator<Item = &[u8]> {
        self.bytes.chunks(self.len)
    }
}

/// Bits of the filter of the first 8 bytes of every token pattern.
const START_BITS: u32 = 20;

/// Every registered pattern made only of token bytes, by length. A token pattern can only occur
/// inside a run of token bytes, so a scan looks at each position of each run long enough: a
/// position whose next 8 bytes begin no pattern (one filter lookup, whatever the number of
/// lengths) is passed; at another, each length's window is looked up.
#[derive(Default)]
struct Tokens {
    by_len: BTreeMap<usize, TokenSet>,
    /// A filter of the first 8 bytes of every pattern (every one is at least
    /// [`MIN_SECRET_LEN`] = 8 bytes long); empty until a pattern is added.
    starts: Vec<u64>,
}

impl Tokens {
    fn is_token(pattern: &str) -> bool {
        pattern.len() >= MIN_SECRET_LEN && pattern.bytes().all(|b| TOKEN_BYTES[usize::from(b)])
    }

    /// The bit of the first 8 bytes of `window` in [`Tokens::starts`].
    fn start_bit(window: &[u8]) -> usize {
        let mut head = [0u8; 8];
        head.copy_from_slice(&window[..8]);
        (u64::from_le_bytes(head).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - START_BITS)) as usize
    }

    fn insert(&mut self, pattern: &[u8]) {
        if self.starts.is_empty() {
            self.starts = vec![0; 1 << (START_BITS - 6)];
        }
        let bit = Tokens::start_bit(pattern);
        self.starts[bit / 64] |= 1 << (bit % 64);
        self.by_len
            .entry(pattern.len())
            .or_insert_with(|| TokenSet::new(pattern.len()))
            .insert(pattern);
    }

    fn find(&self, text: &[u8], out: &mut Vec<(Range<usize>, Label)>) {
        let Some(&shortest) = self.by_len.keys().next() else {
            return;
        };
        let mut i = 0;
        while i < text.len() {
            if !TOKEN_BYTES[usize::from(text[i])] {
                i += 1;
                continue;
            }
            let start = i;
            while i < text.len() && TOKEN_BYTES[usize::from(text[i])] {
                i += 1;
            }
            let run = &text[start..i];
            if run.len() < shortest {
                continue;
            }
            for at in 0..=run.len() - shortest {
                let bit = Tokens::start_bit(&run[at..]);
                if self.starts[bit / 64] & (1 << (bit % 64)) == 0 {
                    continue;
                }
                for (&len, set) in self.by_len.range(..=run.len() - at) {
                    if set.contains(&run[at..at + len]) {
                        out.push((start + at..start + at + len, Label::Secret));
                    }
                }
            }
        }
    }
}

/// Patterns, sorted: those that begin with given bytes are a range.
#[derive(Default)]
struct Sorted {
    patterns: BTreeSet<Vec<u8>>,
    /// Length in bytes of the longest.
    longest: usize,
    /// A bit for the first two bytes of every pattern (every one is at least
    /// [`MIN_SECRET_LEN`] long), and one for its first byte: the end of an excerpt is looked
    /// up in the sorted set only where a pattern may begin (a set lookup at each of the last
    /// hundred bytes of every excerpt cost more than scrubbing it).
    pairs: Vec<u64>,
    firsts: [u64; 4],
}

impl Sorted {
    fn insert(&mut self, pattern: &str) {
        let bytes = pattern.as_bytes();
        self.longest = self.longest.max(bytes.len());
        if self.pairs.is_empty() {
            self.pairs = vec![0; 1 << 10];
        }
        if let [a, b, ..] = bytes {
            let pair = usize::from(*a) << 8 | usize::from(*b);
            self.pairs[pair / 64] |= 1 << (pair % 64);
        }
        if let Some(&a) = bytes.first() {
            self.firsts[usize::from(a) / 64] |= 1 << (a % 64);
        }
        self.patterns.insert(bytes.to_vec());
    }

    /// Whether some pattern begins with `bytes`: then the first pattern not below `bytes` does.
    fn begins(&self, bytes: &[u8]) -> bool {
        let may = match bytes {
            [] => true,
            [a] => self.firsts[usize::from(*a) / 64] & (1 << (a % 64)) != 0,
            [a, b, ..] => {
                let pair = usize::from(*a) << 8 | usize::from(*b);
                self.pairs
                    .get(pair / 64)
                    .is_some_and(|w| w & (1 << (pair % 64)) != 0)
            }
        };
        may && self
            .patterns
            .range::<[u8], _>((Bound::Included(bytes), Bound::Unbounded))
            .next()
            .is_some_and(|p| p.starts_with(bytes))
    }
}

/// How long a secret lives: the whole run (a key, a password: known before anything is
/// sent), or one request (the signature in its Authorization value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Lifetime {
    Run,
    Request,
}

/// Whether a byte can be part of a per-request token's form (hex, base64, base64url).
const fn request_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'+' | b'/')
}

/// One set of patterns, searched in one spelling of a text (as written, or normalised).
#[derive(Default)]
struct Patterns {
    /// Every pattern registered made only of token bytes.
    seen_tokens: Sorted,
    /// Every other pattern registered.
    seen_others: Sorted,
    /// Patterns made only of token bytes (every form of a hex signature).
    tokens: Tokens,
    /// Automata over the other patterns, of decreasing size: a new batch merges with every
    /// smaller tier (a binary counter), so each pattern is compiled O(log n) times over a run
    /// and a scrub runs O(log n) automata.
    tiers: Vec<Tier>,
    /// Length in bytes of the longest pattern.
    longest: usize,
    /// Length in bytes of the longest token form of a per-request secret: a cut leaves out
    /// that much of the token run it ends in, whichever signatures are registered by then.
    request_longest: usize,
}

impl Patterns {
    fn add(&mut self, forms: Vec<String>, label: Label, lifetime: Lifetime) {
        let mut patterns = Vec::new();
        for form in forms {
            if lifetime == Lifetime::Request
                && label == Label::Secret
                && form.bytes().all(request_token_byte)
            {
                // Not kept in `seen_tokens`: the end of an excerpt is judged by its shape (see
                // `partial_start`), so a run's thousands of signatures cost no sorted set. Nor
                // looked up there first: a token set holds a pattern once however often it
                // is inserted.
                self.add_request_token(form.as_bytes());
                continue;
            }
            let bytes = form.as_bytes();
            if self.seen_tokens.patterns.contains(bytes)
                || self.seen_others.patterns.contains(bytes)
            {
                continue;
            }
            self.longest = self.longest.max(form.len());
            if label == Label::Secret && Tokens::is_token(&form) {
                self.seen_tokens.insert(&form);
                self.tokens.insert(form.as_bytes());
            } else {
                self.seen_others.insert(&form);
                patterns.push(form);
            }
        }
        if patterns.is_empty() {
            return;
        }
        let mut labels = vec![label; patterns.len()];
        // A run's own secrets make a few small batches: one automaton over them all (each
        // tier is a pass over every scrubbed byte).
        let total: usize = self.tiers.iter().map(|t| t.patterns.len()).sum();
        let merge_all = total + patterns.len() <= DFA_PATTERNS;
        while let Some(last) = self.tiers.last()
            && (merge_all || last.patterns.len() <= patterns.len())
        {
            if let Some(last) = self.tiers.pop() {
                patterns.extend(last.patterns);
                labels.extend(last.labels);
            }
        }
        self.tiers.push(Tier::new(patterns, labels));
    }

    /// Adds a form of a per-request secret made only of [`request_token_byte`]s.
    fn add_request_token(&mut self, form: &[u8]) {
        self.longest = self.longest.max(form.len());
        self.request_longest = self.request_longest.max(form.len());
        self.tokens.insert(form);
    }

    /// Every match in `bytes`, unsorted, overlapping.
    fn find(&self, bytes: &[u8], out: &mut Vec<(Range<usize>, Label)>) {
        if bytes.len() < MIN_SECRET_LEN || self.longest == 0 {
            return;
        }
        self.tokens.find(bytes, out);
        for tier in &self.tiers {
            tier.find(bytes, out);
        }
    }

    /// Where the longest end of `text` that begins a registered pattern starts (`text.len()`
    /// when none does). Per-request secrets are judged by shape, not by value: the run of
    /// their token bytes that ends the text, up to their longest form, is left out whether or
    /// not it begins one of them. Which signatures are registered when a cut is made depends
    /// on what else is in flight; a rule on values would cut the same answer differently at
    /// `--jobs 1` and `--jobs 8`.
    fn partial_start(&self, text: &[u8]) -> usize {
        let request_run = text
            .iter()
            .rev()
            .take_while(|&&b| request_token_byte(b))
            .count()
            .min(self.request_longest);
        self.run_partial_start(text).min(text.len() - request_run)
    }

    /// [`Patterns::partial_start`] of the run-long secrets, by value.
    fn run_partial_start(&self, text: &[u8]) -> usize {
        // The beginning of a token pattern is in the run of token bytes that ends the text.
        let run = text
            .iter()
            .rev()
            .take_while(|&&b| TOKEN_BYTES[usize::from(b)])
            .count();
        let tokens_from = text.len() - run.min(self.seen_tokens.longest);
        let others_from = text.len().saturating_sub(self.seen_others.longest);
        (tokens_from.min(others_from)..text.len())
            .find(|&at| {
                (at >= tokens_from && self.seen_tokens.begins(&text[at..]))
                    || (at >= others_from && self.seen_others.begins(&text[at..]))
            })
            .unwrap_or(text.len())
    }
}

/// Bytes of text whose normalised view is built at once: a long text is searched in chunks,
/// so the view's offset map stays small.
const NORMAL_CHUNK: usize = 256 * 1024;

/// How much text the echo of a normalised pattern of `longest` bytes may take: escapes of up
/// to 12 bytes per character, and some white space.
fn normal_reach(longest: usize) -> usize {
    if longest == 0 { 0 } else { longest * 12 + 4096 }
}

/// At least [`Registry::reach`] once a credential value of `len` bytes is registered: no form
/// of it is longer than 6 bytes per byte of it (`\u00XX`, `&#x27;`), normalised or not.
fn request_reach_bound(len: usize) -> usize {
    normal_reach(len.saturating_mul(6))
}

#[derive(Default)]
struct Registry {
    /// Every form of every secret, as an echo writes it.
    raw: Patterns,
    /// The same forms normalised ([`normal`]): searched in the normalised view of a text, they
    /// find a secret in any letter case, escaped character by character, or broken by white
    /// space (a line break inside it, base64 wrapped at any width).
    normal: Patterns,
    /// Every secret whose forms are registered, with its label: registering it again (the
    /// signature of a body sent again) computes nothing.
    registered: FastSet<(String, Label, Lifetime)>,
    /// Header names a case file marked secret (lower-cased).
    marked: HashSet<String>,
    /// The sign command as configured, whatever its length, for the errors that quote it.
    sign_command: Option<String>,
    /// Values that are no secret (the configured appid): a credential header holding one alone
    /// (`Authorization: <appid>`, sent by a refusal probe or echoed by the service) registers
    /// nothing, or the appid would be redacted from every report after it.
    public: HashSet<String>,
}

impl Registry {
    fn add_labelled(&mut self, secret: &str, label: Label, lifetime: Lifetime) -> bool {
        if secret.chars().count() < MIN_SECRET_LEN {
            return false;
        }
        if lifetime == Lifetime::Request
            && label == Label::Secret
            && secret.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            self.add_request_signature(secret.as_bytes());
            return true;
        }
        let key = (secret.to_string(), label, lifetime);
        if self.registered.contains(&key) {
            return true;
        }
        self.add(forms(secret), label, lifetime);
        self.registered.insert(key);
        true
    }

    /// A secret of the run's settings (the signing key, a URL's user and password), also in
    /// the separated hex of byte dumps: not every credential a header carries, whose forms
    /// would fill automata (a service that echoes the Authorization header in a header of its
    /// own gives one a request).
    fn add_setting_secret(&mut self, secret: &str) -> bool {
        if !self.add_labelled(secret, Label::Secret, Lifetime::Run) {
            return false;
        }
        // Remembered apart from the secret's own forms (a NUL is in no secret).
        let key = (format!("{secret}\u{0}dumps"), Label::Secret, Lifetime::Run);
        if self.registered.insert(key) {
            self.add(byte_dump_forms(secret), Label::Secret, Lifetime::Run);
        }
        true
    }

    /// The forms of a per-request secret of letters and digits (a hex or base64url signature,
    /// the one secret a run registers thousands of): every form [`forms`] gives it (itself, a
    /// hex value in either case, its base64 fragments) is made of token bytes and its
    /// normalised view is its lower case, so each goes straight to the token sets, with
    /// nothing escaped, sorted or allocated per form. Nor is it remembered in `registered`: a
    /// token set holds a form once however often it comes. A test holds this to the general
    /// path.
    fn add_request_signature(&mut self, secret: &[u8]) {
        let mut form = secret.to_vec();
        self.raw.add_request_token(&form);
        form.make_ascii_lowercase();
        self.normal.add_request_token(&form);
        if secret.iter().all(u8::is_ascii_hexdigit) {
            if form != secret {
                self.raw.add_request_token(&form);
            }
            form.make_ascii_uppercase();
            if form != secret {
                self.raw.add_request_token(&form);
            }
        }
        // A 32-digit hex digest written as a UUID (8-4-4-4-12), as a service that stores it in
        // a UUID column echoes it.
        if secret.len() == 32 && secret.iter().all(u8::is_ascii_hexdigit) {
            form.clear();
            for (i, &b) in secret.iter().enumerate() {
                if matches!(i, 8 | 12 | 16 | 20) {
                    form.push(b'-');
                }
                form.push(b.to_ascii_lowercase());
            }
            self.raw.add_request_token(&form);
            self.normal.add_request_token(&form);
            form.make_ascii_uppercase();
            self.raw.add_request_token(&form);
        }
        // Reversed, as a hostile echo may spell it.
        form.clear();
        form.extend(secret.iter().rev());
        self.raw.add_request_token(&form);
        form.make_ascii_lowercase();
        self.normal.add_request_token(&form);
        // Letters and digits only (checked by the caller).
        let text = std::str::from_utf8(secret).expect("ASCII");
        for spelling in token_spellings(text) {
            if spelling.len() >= MIN_SECRET_LEN {
                self.raw.add_request_token(spelling.as_bytes());
                self.normal
                    .add_request_token(spelling.to_ascii_lowercase().as_bytes());
            }
        }
        // A hex digest's bytes in base64 (standard and URL-safe, unpadded: a padded echo holds
        // it), as a service that decodes the signature and logs its digest writes them.
        if secret.len().is_multiple_of(2)
            && secret.iter().all(u8::is_ascii_hexdigit)
            && let Ok(digest) = hex::decode(secret)
        {
            for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
                let encoded = engine.encode(&digest);
                if encoded.len() < MIN_SECRET_LEN {
                    break;
                }
                self.raw.add_request_token(encoded.as_bytes());
                self.normal
                    .add_request_token(encoded.to_ascii_lowercase().as_bytes());
                // The two alphabets differ only in their last two characters.
                if !encoded.bytes().any(|b| matches!(b, b'+' | b'/')) {
                    break;
                }
            }
        }
        // Its bytes in hex (lower case; its normalised view is the same, and the upper case is
        // found through it).
        form.clear();
        form.resize(secret.len() * 2, 0);
        hex::encode_to_slice(secret, &mut form).expect("twice the length");
        self.raw.add_request_token(&form);
        self.normal.add_request_token(&form);
        let mut padded = Vec::with_capacity(secret.len() + 2);
        padded.extend_from_slice(&[0, 0]);
        padded.extend_from_slice(secret);
        let mut encoded = String::new();
        for offset in 0..3 {
            for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
                let Some(fragment) = base64_fragment(&padded, offset, engine, &mut encoded) else {
                    break;
                };
                if fragment.len() < MIN_SECRET_LEN {
                    break;
                }
                form.clear();
                form.extend_from_slice(fragment.as_bytes());
                self.raw.add_request_token(&form);
                form.make_ascii_lowercase();
                self.normal.add_request_token(&form);
                // The two alphabets differ only in their last two characters: a fragment
                // without them is the same in both.
                if !fragment.bytes().any(|b| matches!(b, b'+' | b'/')) {
                    break;
                }
            }
        }
    }

    /// `<scheme or appid> <credential>` registers the credential (a `Basic` one also decoded,
    /// with its user and password), anything else the whole value.
    fn add_credential(&mut self, value: &str, lifetime: Lifetime) {
        let value = value.trim();
        let Some((scheme, rest)) = value.split_once(' ') else {
            if !self.public.contains(value) {
                self.add_labelled(value, Label::Secret, lifetime);
            }
            return;
        };
        let rest = rest.trim();
        if !self.add_labelled(rest, Label::Secret, lifetime) && !self.public.contains(scheme) {
            self.add_labelled(value, Label::Secret, lifetime);
        }
        if scheme.eq_ignore_ascii_case("basic")
            && let Ok(bytes) = STANDARD_PAD_INDIFFERENT.decode(rest)
            && let Ok(decoded) = String::from_utf8(bytes)
        {
            self.add_userinfo_text(&decoded);
        }
    }

    /// `user:password` (or a lone token): registers the whole and each part.
    fn add_userinfo_text(&mut self, info: &str) {
        self.add_labelled(info, Label::Secret, Lifetime::Run);
        if let Some((user, password)) = info.split_once(':') {
            self.add_labelled(user, Label::Secret, Lifetime::Run);
            self.add_labelled(password, Label::Secret, Lifetime::Run);
        }
    }

    fn add(&mut self, forms: Vec<String>, label: Label, lifetime: Lifetime) {
        let mut normal: Vec<String> = forms
            .iter()
            .map(|f| {
                String::from_utf8(normal::normalise(f))
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
            })
            .filter(|f| f.chars().count() >= MIN_SECRET_LEN)
            .collect();
        normal.sort();
        normal.dedup();
        self.raw.add(forms, label, lifetime);
        self.normal.add(normal, label, lifetime);
    }

    /// How far past a point of a text a match that begins before it may reach.
    fn reach(&self) -> usize {
        self.raw.longest.max(normal_reach(self.normal.longest))
    }

    /// How many bytes of `rest`, the text after a point, a match that begins before the point
    /// may take: [`Registry::reach`] at most, and usually far less: the view of an answer
    /// without escapes or white space gives the longest normalised form from about as many
    /// bytes of text (an escape the point falls in is allowed for).
    fn reach_after(&self, rest: &[u8]) -> usize {
        let normal = if self.normal.longest == 0 {
            0
        } else {
            normal::text_for(rest, self.normal.longest).saturating_add(normal::ESCAPE_MAX)
        };
        self.raw
            .longest
            .max(normal.min(normal_reach(self.normal.longest)))
            .min(rest.len())
    }

    /// Every match in `bytes`, as written or in its normalised view, overlapping ones merged
    /// (a merge of two labels is a secret), sorted.
    fn find(&self, bytes: &[u8]) -> Vec<(Range<usize>, Label)> {
        if bytes.len() < MIN_SECRET_LEN || self.raw.longest == 0 {
            return Vec::new();
        }
        let mut found = Vec::new();
        self.raw.find(bytes, &mut found);
        self.find_normal(bytes, &mut found);
        found.sort_by_key(|(r, _)| (r.start, std::cmp::Reverse(r.end)));
        let mut merged: Vec<(Range<usize>, Label)> = Vec::with_capacity(found.len());
        for (range, label) in found {
            match merged.last_mut() {
                Some((cur, cur_label)) if range.start < cur.end => {
                    cur.end = cur.end.max(range.end);
                    if *cur_label != label {
                        *cur_label = Label::Secret;
                    }
                }
                _ => merged.push((range, label)),
            }
        }
        merged
    }

    /// The matches of the normalised patterns, mapped back to `bytes`. The view is built a
    /// chunk at a time, each chunk reaching past its end by as much text as an echo may take,
    /// and keeps the matches that start in it.
    fn find_normal(&self, bytes: &[u8], out: &mut Vec<(Range<usize>, Label)>) {
        if self.normal.longest == 0 {
            return;
        }
        let reach = normal_reach(self.normal.longest);
        let mut start = 0;
        while start < bytes.len() {
            let end = bytes.len().min(start + NORMAL_CHUNK);
            let chunk = &bytes[start..bytes.len().min(end + reach)];
            // The map back to the text is built only for a chunk where something matched.
            let mut found = Vec::new();
            self.normal.find(&normal::View::bytes_of(chunk), &mut found);
            if found.is_empty() {
                start = end;
                continue;
            }
            let view = normal::View::of(chunk);
            found.clear();
            self.normal.find(&view.bytes, &mut found);
            for (range, label) in found {
                let source = view.source(range);
                if start + source.start < end {
                    out.push((start + source.start..start + source.end, label));
                }
            }
            start = end;
        }
    }

    /// Where the longest end of `text` that begins a registered pattern, as written or
    /// normalised, starts (`text.len()` when none does): what a cut at the end of `text` may
    /// have left of a secret.
    fn partial_start(&self, text: &[u8]) -> usize {
        let raw = self.raw.partial_start(text);
        if self.normal.longest == 0 {
            return raw;
        }
        // What is left of a secret is in the last `longest` bytes of the view: the view of a
        // short end of the text gives them unless escapes or white space fill that end.
        let longest = self.normal.longest;
        let short = text
            .len()
            .saturating_sub(2 * (longest + normal::ESCAPE_MAX));
        let view = normal::View::of(&text[short..]);
        let normal = if short > 0 && view.bytes.len() < longest + normal::ESCAPE_MAX {
            self.normal_partial_start(text, text.len().saturating_sub(normal_reach(longest)))
        } else {
            short + view.source_start(self.normal.partial_start(&view.bytes), text.len() - short)
        };
        raw.min(normal)
    }

    /// Where the longest end of `text` that begins a normalised pattern starts, judged on the
    /// view of `text[from..]`.
    fn normal_partial_start(&self, text: &[u8], from: usize) -> usize {
        let view = normal::View::of(&text[from..]);
        let at = self.normal.partial_start(&view.bytes);
        from + view.source_start(at, text.len() - from)
    }
}

/// `bytes` with each of `found` (sorted, disjoint) replaced by its label.
fn replace(bytes: &[u8], found: &[(Range<usize>, Label)], markup: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    for (range, label) in found {
        out.extend_from_slice(&bytes[at..range.start]);
        out.extend_from_slice(label.text(markup).as_bytes());
        at = range.end;
    }
    out.extend_from_slice(&bytes[at..]);
    out
}

/// The run's secrets, and the scrubbing of every text that leaves the process. Clones share the
/// same registry.
#[derive(Clone, Default)]
pub struct Redactor {
    registry: Arc<RwLock<Registry>>,
    /// Authorization values of requests signed since the registry last searched a text.
    pending: Arc<Pending>,
}

/// Per-request credentials noted but not yet registered in their forms.
///
/// Nearly every request of a run is signed and its exchange never shown (a passing probe of
/// the fuzzer, a page checked and dropped), and registering a signature in its forms cost more
/// than a fifth of what the fuzzer spent on a request beside reading its answer. So a signing
/// notes the value here (a push), and the first search of any text that follows registers every
/// value noted: what a scrub, an excerpt or a seal searches for always holds every signature
/// made before it began, as when each was registered at once.
#[derive(Default)]
struct Pending {
    /// The values, in the order they were signed.
    values: Mutex<Vec<String>>,
    /// Whether `values` holds any: set and cleared under its lock, read without it.
    any: AtomicBool,
    /// Length in bytes of the longest value ever noted, for [`Redactor::excerpt_room`], which
    /// is asked before each excerpt is kept and registers nothing.
    longest: AtomicUsize,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Redactor(<redacted>)")
    }
}

impl Redactor {
    /// An empty redactor. A command makes one and hands it to its `Session`, which registers
    /// the run's secrets with it; clones share the registry.
    pub fn new() -> Self {
        Redactor::default()
    }

    /// The registry, every noted per-request credential registered first: for any search.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Registry> {
        if self.pending.any.load(Ordering::Acquire) {
            self.register_pending();
        }
        self.read_noted()
    }

    /// The registry as it is, for what per-request credentials do not change (marked header
    /// names, the sign command, the reach of run-long secrets).
    fn read_noted(&self) -> std::sync::RwLockReadGuard<'_, Registry> {
        self.registry.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers every noted per-request credential. The registry's write lock is taken first
    /// and the list is emptied under it, so a reader that finds the list empty then waits for
    /// the registrations to be in.
    fn register_pending(&self) {
        let mut registry = self.write();
        let values = {
            let mut values = self
                .pending
                .values
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            self.pending.any.store(false, Ordering::Release);
            std::mem::take(&mut *values)
        };
        for value in values {
            registry.add_credential(&value, Lifetime::Request);
        }
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Registry> {
        self.registry
            .write()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a secret in every form an echo can take. Returns false (and registers nothing)
    /// when it is shorter than [`MIN_SECRET_LEN`].
    pub fn add_secret(&self, secret: &str) -> bool {
        self.write().add_setting_secret(secret)
    }

    /// Registers the sign command; it is replaced by [`SIGN_COMMAND_LABEL`].
    pub fn add_sign_command(&self, command: &str) -> bool {
        if !command.trim().is_empty() {
            self.write().sign_command = Some(command.to_string());
        }
        // An argument that looks like a credential (`--key k3yValue2026`) is a secret of its
        // own, in all its forms: the command may print it reversed or encoded when it fails.
        for word in command
            .split(|c: char| c.is_whitespace() || "'\"=;|&(),".contains(c))
            .filter(|w| looks_like_a_credential(w))
        {
            self.write()
                .add_labelled(word, Label::Secret, Lifetime::Run);
        }
        // So is key material the command is given (a quoted literal, `--key=VALUE`, a variable
        // it names): the service knows its key and may echo it in any spelling.
        for secret in command_material(command) {
            self.write()
                .add_labelled(&secret, Label::Secret, Lifetime::Run);
        }
        self.write()
            .add_labelled(command.trim(), Label::SignCommand, Lifetime::Run)
    }

    /// The text of a signing error, which may quote the sign command: the command (even one too
    /// short to be scrubbed from free text) becomes [`SIGN_COMMAND_LABEL`], then the text is
    /// scrubbed.
    pub fn scrub_sign_error(&self, text: &str) -> String {
        let command = self.read_noted().sign_command.clone();
        let text = match command {
            Some(c) => text.replace(&c, SIGN_COMMAND_LABEL),
            None => text.to_string(),
        };
        self.scrub(&text).into_owned()
    }

    /// Registers the value of a credential header: `<scheme or appid> <credential>` registers the
    /// credential (a `Basic` one also decoded, with its user and password), anything else the
    /// whole value.
    pub fn add_credential(&self, value: &str) {
        self.write().add_credential(value, Lifetime::Run);
    }

    /// Declares `value` no secret (the configured appid): a credential header that holds it
    /// alone, or with a credential too short to register, registers nothing.
    pub fn add_public(&self, value: &str) {
        self.write().public.insert(value.trim().to_string());
    }

    /// Notes the Authorization value of one request (see [`Redactor::add_credential`]): it is
    /// registered before the next search of any text ([`Pending`]).
    pub fn add_request_credential(&self, value: &str) {
        let value = value.trim();
        if value.len() < MIN_SECRET_LEN {
            return;
        }
        let mut values = self
            .pending
            .values
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        values.push(value.to_string());
        self.pending
            .longest
            .fetch_max(value.len(), Ordering::Relaxed);
        self.pending.any.store(true, Ordering::Release);
    }

    /// Registers the user and password of a URL's userinfo (`http://user:pass@host/`), as
    /// written and percent-decoded, each and together (`user:pass`, and its base64: the token
    /// of the `Basic` header a client makes of them, which a proxy or a service may echo).
    pub fn add_url_userinfo(&self, raw_url: &str) {
        let Ok(url) = url::Url::parse(raw_url) else {
            return;
        };
        let decode = |part: &str| {
            percent_decode_str(part)
                .decode_utf8()
                .map_or_else(|_| part.to_string(), |d| d.into_owned())
        };
        let (user, password) = (url.username(), url.password().unwrap_or_default());
        for part in [user, password] {
            self.add_secret(part);
            self.add_secret(&decode(part));
        }
        if !password.is_empty() {
            for pair in [
                format!("{user}:{password}"),
                format!("{}:{}", decode(user), decode(password)),
            ] {
                self.add_secret(&base64::engine::general_purpose::STANDARD.encode(&pair));
                self.add_secret(&pair);
            }
        }
    }

    /// Marks header names as secret (a case file's `secret-headers`).
    pub fn mark_secret_headers(&self, names: &[String]) {
        if names.is_empty() {
            return;
        }
        let mut registry = self.write();
        for name in names {
            registry.marked.insert(name.to_ascii_lowercase());
        }
    }

    /// Whether a header carries a credential: by its name, or because a case file marked it.
    pub fn is_secret_header(&self, name: &str) -> bool {
        if is_secret_header_name(name) {
            return true;
        }
        let registry = self.read_noted();
        !registry.marked.is_empty() && registry.marked.contains(&name.to_ascii_lowercase())
    }

    /// Registers the value of a credential header: each cookie's value, or the value as
    /// [`Redactor::add_credential`] (what follows a scheme or appid word, else the whole).
    fn add_header_secret(&self, lower_name: &str, value: &str) {
        let value = value.trim();
        if lower_name.contains("cookie") {
            for pair in value.split(';').map(str::trim) {
                match pair.split_once('=') {
                    Some((name, _))
                        if COOKIE_ATTRIBUTES.contains(&name.to_ascii_lowercase().as_str()) => {}
                    Some((_, v)) => {
                        self.add_secret(v.trim());
                    }
                    None => {
                        self.add_secret(pair);
                    }
                }
            }
        } else if AUTHORIZATION_HEADERS.contains(&lower_name) {
            self.add_request_credential(value);
        } else {
            self.add_credential(value);
        }
    }

    /// A header value as shown now: [`Redactor::record_header`], and any other value scrubbed
    /// of known secrets.
    pub fn header_value(&self, name: &str, value: &str) -> String {
        match self.credential_header(name, value) {
            Some(shown) => self.scrub(&shown).into_owned(),
            None => self.scrub(value).into_owned(),
        }
    }

    /// A header value as an exchange records it: a credential header's value is registered
    /// and replaced (`Authorization: <appid> <redacted>` keeps the appid, which is no secret
    /// and shows which app was used); any other value is kept as it is, to be scrubbed when
    /// the exchange is sealed, as every other text of it is.
    pub fn record_header(&self, name: &str, value: &str) -> String {
        self.credential_header(name, value)
            .unwrap_or_else(|| value.to_string())
    }

    /// The recorded value of a credential header (registered first), `None` for another.
    fn credential_header(&self, name: &str, value: &str) -> Option<String> {
        if !self.is_secret_header(name) {
            return None;
        }
        let lower = name.to_ascii_lowercase();
        self.add_header_secret(&lower, value);
        if AUTHORIZATION_HEADERS.contains(&lower.as_str())
            && let Some((first, _)) = value.trim().split_once(' ')
        {
            return Some(format!("{first} {REDACTED}"));
        }
        Some(REDACTED.to_string())
    }

    /// `text` scrubbed, then every occurrence of each given secret replaced too (defence in
    /// depth for free text such as error messages or bodies that echo a header back).
    pub fn scrub_with(&self, text: &str, secrets: &[&Secret]) -> String {
        let mut out = self.scrub(text).into_owned();
        for s in secrets {
            let v = s.expose();
            if v.chars().count() >= MIN_SECRET_LEN && out.contains(v) {
                out = out.replace(v, REDACTED);
            }
        }
        out
    }

    /// `text` with every known secret replaced by `<redacted>`.
    pub fn scrub<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.scrub_bytes(text.as_bytes(), false) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            // Matches start and end on character boundaries (patterns are whole UTF-8 strings,
            // compared byte for byte apart from ASCII case) and are replaced by ASCII.
            Cow::Owned(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
        }
    }

    /// The byte ranges of `text` that hold a known secret (overlapping ones merged, sorted).
    pub fn secret_ranges(&self, text: &str) -> Vec<Range<usize>> {
        self.read()
            .find(text.as_bytes())
            .into_iter()
            .map(|(range, _)| range)
            .collect()
    }

    /// `bytes` with every known secret replaced; `markup` selects the HTML/XML placeholder.
    pub fn scrub_bytes<'a>(&self, bytes: &'a [u8], markup: bool) -> Cow<'a, [u8]> {
        let found = self.read().find(bytes);
        if found.is_empty() {
            return Cow::Borrowed(bytes);
        }
        Cow::Owned(replace(bytes, &found, markup))
    }

    /// How many bytes past the end of an excerpt [`Redactor::excerpt`] may read to judge it:
    /// the room an echo of the longest registered secret may take.
    pub fn excerpt_room(&self) -> usize {
        let noted = self.pending.longest.load(Ordering::Relaxed);
        let bound = if noted == 0 {
            0
        } else {
            request_reach_bound(noted)
        };
        self.read_noted().reach().max(bound)
    }

    /// The first `max` bytes of `body` as text, scrubbed; `whole` says whether `body` is the
    /// whole body (not when a size limit or a transport error cut it short).
    ///
    /// The cut is made in the body, not in the scrubbed text (whose placeholders are shorter or
    /// longer than what they replace): a secret that the cut crosses is scrubbed whole, seen in
    /// up to the longest pattern's length of body after the cut, and the excerpt of a body cut
    /// short does not end with the beginning of a secret, in any of its forms, that the cut
    /// may have left.
    pub fn excerpt(&self, body: &[u8], max: usize, whole: bool) -> String {
        self.cut(body, max, whole).0
    }

    /// [`Redactor::excerpt`], and where in `body` the excerpt ends.
    fn cut(&self, body: &[u8], max: usize, whole: bool) -> (String, usize) {
        let registry = self.read();
        if whole && body.len() <= max {
            let found = registry.find(body);
            let text = String::from_utf8_lossy(&replace(body, &found, false)).into_owned();
            return (text, body.len());
        }
        let cut = body.len().min(max);
        let window = &body[..cut + registry.reach_after(&body[cut..])];
        Self::cut_in(&registry, body, cut, window)
    }

    /// [`Redactor::cut`] of `body` at `cut`, judged on `window` (`body` up to as far past the
    /// cut as a match that begins before it may reach).
    fn cut_in(registry: &Registry, body: &[u8], cut: usize, window: &[u8]) -> (String, usize) {
        let found = registry.find(window);
        // The excerpt ends where the longest end of the cut body that begins a secret starts
        // (at the cut when none does), or after the match that this point falls in.
        let partial = registry.partial_start(&body[..cut]);
        let end = found
            .iter()
            .find(|(r, _)| r.contains(&partial))
            .map_or(partial, |(r, _)| r.end);
        let kept = found.partition_point(|(r, _)| r.start < end);
        let text = replace(&body[..end], &found[..kept], false);
        (String::from_utf8_lossy(&text).into_owned(), end)
    }
}

/// Bytes that survive percent-encoding as a URL component: RFC 3986 unreserved.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Bytes that survive `application/x-www-form-urlencoded` (space becomes `+`).
const FORM: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'*')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_');

/// Every form an echo of `secret` can take, at least [`MIN_SECRET_LEN`] characters long.
/// Whether a word of a sign command looks like a credential rather than a program, a flag or a
/// path: at least 10 characters, letters and digits both, none of `/ . $ -` first, no `/` or
/// `.` inside, and no name of a digest the signers use.
/// What of a sign command may be key material: each argument after the program, as the shell
/// reads it (`'Tq3/Vz6+Wm2=Rj5!Hk8'`, the value of `--key=VALUE`), that is no flag, names no
/// file and is no plain name (`hmac-sha256`, `mallcheck-demo-app`); and the value
/// of each variable it names (`"$MATERIAL"`, `${KEY}`) that is no file either.
fn command_material(command: &str) -> Vec<String> {
    let is_file = |s: &str| {
        s.starts_with(['/', '~']) || s.starts_with("./") || std::path::Path::new(s).exists()
    };
    // Lower-case letters, digits, `-`, `_`, `.` and `/` only: a name (`hmac-sha256`) or a
    // path (`secret/mall`, a vault's); one that mixes letters and digits the way keys do is
    // taken by `looks_like_a_credential`.
    let plain_name = |s: &str| {
        s.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.' | b'/')
        })
    };
    let mut out = Vec::new();
    let words = shlex::split(command)
        .unwrap_or_else(|| command.split_whitespace().map(str::to_string).collect());
    for word in words.iter().skip(1) {
        let value = match word.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => value,
            _ => word.as_str(),
        };
        // A word with blanks is a script or a message (`python3 -c '...'`), not a key.
        if value.chars().count() >= MIN_SECRET_LEN
            && !value.starts_with('-')
            && !value.contains('$')
            && !value.contains(char::is_whitespace)
            && !is_file(value)
            && !plain_name(value)
        {
            out.push(value.to_string());
        }
    }
    let mut rest = command;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        let name: String = rest
            .trim_start_matches('{')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if let Some(value) = (!name.is_empty())
            .then(|| std::env::var_os(&name))
            .flatten()
            .and_then(|v| v.into_string().ok())
        {
            let value = value.trim();
            if value.chars().count() >= MIN_SECRET_LEN && !is_file(value) {
                out.push(value.to_string());
            }
        }
    }
    out
}

fn looks_like_a_credential(word: &str) -> bool {
    const DIGEST_NAMES: [&str; 4] = ["hmac-sha256", "sha256sum", "sha512sum", "hmac-sha512"];
    word.len() >= 10
        && word.bytes().any(|b| b.is_ascii_digit())
        && word.bytes().any(|b| b.is_ascii_alphabetic())
        && !word.starts_with(['-', '$', '/', '.'])
        && !word.contains(['/', '.'])
        && !DIGEST_NAMES.contains(&word.to_ascii_lowercase().as_str())
}

fn forms(secret: &str) -> Vec<String> {
    // Letters and digits pass every escaping below unchanged (a hex or base64url signature,
    // an API key): only the case variants and the base64 fragments differ.
    let escaped = if secret.bytes().all(|b| b.is_ascii_alphanumeric()) {
        vec![secret.to_string()]
    } else {
        escaped_forms(secret)
    };
    with_variants(secret, escaped)
}

/// `escaped` (forms of `secret`) with the case variants of a hex value and the base64
/// fragments of `secret`, the short ones left out, sorted, each once.
fn with_variants(secret: &str, mut out: Vec<String>) -> Vec<String> {
    // A hex value may come back in the other case, and a hex digest's bytes in base64.
    if secret.bytes().all(|b| b.is_ascii_hexdigit()) {
        out.push(secret.to_ascii_lowercase());
        out.push(secret.to_ascii_uppercase());
        if let Ok(digest) = hex::decode(secret) {
            out.push(STANDARD_NO_PAD.encode(&digest));
            out.push(URL_SAFE_NO_PAD.encode(&digest));
        }
        // A 32-digit digest written as a UUID (8-4-4-4-12), as a UUID column stores it.
        if secret.len() == 32 {
            let lower = secret.to_ascii_lowercase();
            let uuid = format!(
                "{}-{}-{}-{}-{}",
                &lower[..8],
                &lower[8..12],
                &lower[12..16],
                &lower[16..20],
                &lower[20..]
            );
            out.push(uuid.to_ascii_uppercase());
            out.push(uuid);
        }
    }
    // Reversed, as a hostile echo may spell it.
    out.push(secret.chars().rev().collect());
    out.extend(token_spellings(secret));
    // Its bytes written in hex, as a debugging page or a byte dump shows them (`%x`, `xxd -p`);
    // in upper case it is found through its normalised view.
    out.push(hex::encode(secret.as_bytes()));
    for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
        out.extend(base64_fragments(secret.as_bytes(), engine));
    }
    out.retain(|f| f.chars().count() >= MIN_SECRET_LEN);
    out.sort();
    out.dedup();
    out
}

/// The spellings of `secret` a hostile echo gives it that stay made of letters, digits and
/// `+ / -` when it is (a signature): ROT13; base32 (RFC 4648, as much of it as the secret
/// alone decides); base64 of its base64 (as much as its base64 alone decides); its UTF-16 code
/// units, either byte order, in base64. A signature's other spellings (ROT47, octal and CSS
/// escapes, Ascii85) hold symbols, and a per-request secret is registered as tokens only.
fn token_spellings(secret: &str) -> Vec<String> {
    let bytes = secret.as_bytes();
    let mut out = Vec::with_capacity(7);
    out.push(if secret.is_ascii() {
        bytes.iter().map(|&b| char::from(rot13_byte(b))).collect()
    } else {
        secret.chars().map(|c| rotate(c, 13)).collect()
    });
    out.push(base32_decided(bytes));
    let once = STANDARD_NO_PAD.encode(bytes);
    let mut twice = STANDARD_NO_PAD.encode(once.as_bytes());
    twice.truncate(once.len() * 8 / 6);
    out.push(twice);
    let mut units = Vec::with_capacity(bytes.len() * 2);
    for big_endian in [false, true] {
        units.clear();
        for unit in secret.encode_utf16() {
            units.extend(if big_endian {
                unit.to_be_bytes()
            } else {
                unit.to_le_bytes()
            });
        }
        let standard = STANDARD_NO_PAD.encode(&units);
        // The URL-safe alphabet differs only in its last two characters.
        if standard.bytes().any(|b| matches!(b, b'+' | b'/')) {
            out.push(standard.replace('+', "-").replace('/', "_"));
        }
        out.push(standard);
    }
    out
}

/// Base32 (RFC 4648) of `bytes`, as much of it as `bytes` alone decide: past their last whole
/// 5 bits, a character depends on what follows them. (Written here: `data_encoding`'s
/// general encoder took 15 K instructions for a signature, registered once a request.)
fn base32_decided(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let decided = bytes.len() * 8 / 5;
    let mut out = String::with_capacity(decided);
    let (mut bits, mut held) = (0u32, 0u32);
    for &b in bytes {
        bits = (bits << 8) | u32::from(b);
        held += 8;
        while held >= 5 {
            held -= 5;
            out.push(char::from(ALPHABET[((bits >> held) & 31) as usize]));
        }
        bits &= (1 << held) - 1;
    }
    out
}

/// `secret`'s bytes in hex as byte dumps and debuggers separate them: `6d:61`, `6d-61`,
/// `\x6d\x61`, `0x6d, 0x61` (white space between the bytes, and upper case, are found
/// through the normalised view, which drops the one and lowers the other).
fn byte_dump_forms(secret: &str) -> Vec<String> {
    let bytes: Vec<String> = secret.bytes().map(|b| format!("{b:02x}")).collect();
    let mut out = vec![
        bytes.join(":"),
        bytes.join("-"),
        bytes.iter().map(|b| format!("\\x{b}")).collect(),
        bytes
            .iter()
            .map(|b| format!("0x{b}"))
            .collect::<Vec<_>>()
            .join(","),
    ];
    // Its bytes as a language prints a byte array: decimal, `, ` between them (Java's
    // `Arrays.toString`, Python's `list(b)`) or `,` alone (a JSON array, Node's Buffer), and
    // signed as Java's bytes are.
    let decimal: Vec<String> = secret.bytes().map(|b| b.to_string()).collect();
    let signed: Vec<String> = secret.bytes().map(|b| (b as i8).to_string()).collect();
    for list in [&decimal, &signed] {
        out.push(list.join(", "));
        out.push(list.join(","));
    }
    // Its UTF-16 code units (either byte order) in base64, as .NET's `Encoding.Unicode` and
    // Java's UTF-16 give the bytes that are then encoded.
    for big_endian in [false, true] {
        let units: Vec<u8> = secret
            .encode_utf16()
            .flat_map(|u| {
                if big_endian {
                    u.to_be_bytes()
                } else {
                    u.to_le_bytes()
                }
            })
            .collect();
        out.push(STANDARD_NO_PAD.encode(&units));
        out.push(URL_SAFE_NO_PAD.encode(&units));
    }
    out.dedup();
    out.extend(other_spellings(secret));
    out.retain(|f| f.chars().count() >= MIN_SECRET_LEN);
    out
}

/// Spellings a hostile echo can give a run's secret beyond the escapings of [`forms`]:
/// reversed; base32 (RFC 4648, as much of it as the secret alone decides); its UTF-16 code
/// units in hex, either byte order; every byte percent-encoded twice (`%255A`); ROT13 and
/// ROT47; base64 of its base64; octal and CSS escapes; Ascii85. Letter case is the normalised
/// view's business.
fn other_spellings(secret: &str) -> Vec<String> {
    let bytes = secret.as_bytes();
    let base32 = data_encoding::BASE32_NOPAD.encode(bytes);
    // Past the last whole 5 bits of the secret, a character depends on what follows it.
    let decided = bytes.len() * 8 / 5;
    let utf16 = |big_endian: bool| -> String {
        secret
            .encode_utf16()
            .map(|unit| {
                let pair = if big_endian {
                    unit.to_be_bytes()
                } else {
                    unit.to_le_bytes()
                };
                hex::encode(pair)
            })
            .collect()
    };
    // Base64 of its base64 (a value encoded twice on its way), as much of it as the
    // secret's base64 alone decides.
    let once = base64::engine::general_purpose::STANDARD.encode(bytes);
    let twice = STANDARD_NO_PAD.encode(once.trim_end_matches('=').as_bytes());
    let twice_decided = once.trim_end_matches('=').len() * 8 / 6;
    vec![
        secret.chars().rev().collect(),
        base32.chars().take(decided).collect(),
        utf16(false),
        utf16(true),
        bytes.iter().map(|b| format!("%25{b:02X}")).collect(),
        secret.chars().map(|c| rotate(c, 13)).collect(),
        secret.chars().map(rot47).collect(),
        twice.chars().take(twice_decided).collect(),
        // Octal escapes (`\155\141`: C, shell `printf`, PHP) and CSS escapes (`\6d `).
        bytes.iter().map(|b| format!("\\{b:03o}")).collect(),
        bytes.iter().map(|b| format!("\\{b:x} ")).collect(),
        bytes.iter().map(|b| format!("\\{b:06x}")).collect(),
        ascii85(bytes),
    ]
}

/// An ASCII byte in ROT13.
fn rot13_byte(b: u8) -> u8 {
    match b {
        b'a'..=b'z' => b'a' + (b - b'a' + 13) % 26,
        b'A'..=b'Z' => b'A' + (b - b'A' + 13) % 26,
        _ => b,
    }
}

/// `c` with its Latin letter moved `by` places in the alphabet (ROT13 at 13).
fn rotate(c: char, by: u8) -> char {
    match c {
        'a'..='z' => char::from(b'a' + (c as u8 - b'a' + by) % 26),
        'A'..='Z' => char::from(b'A' + (c as u8 - b'A' + by) % 26),
        _ => c,
    }
}

/// ROT47: every printable ASCII character moved 47 places among the 94.
fn rot47(c: char) -> char {
    match c {
        '!'..='~' => char::from(b'!' + (c as u8 - b'!' + 47) % 94),
        _ => c,
    }
}

/// The whole 4-byte groups of `bytes` in Ascii85 (Adobe's, as Python's `base64.a85encode`
/// writes it: `z` for a group of zeros); a last group of fewer bytes depends on what follows
/// in the echo, so it is left out.
fn ascii85(bytes: &[u8]) -> String {
    let mut out = String::new();
    for group in bytes.chunks_exact(4) {
        let mut n = u32::from_be_bytes([group[0], group[1], group[2], group[3]]);
        if n == 0 {
            out.push('z');
            continue;
        }
        let mut digits = [0u8; 5];
        for d in digits.iter_mut().rev() {
            *d = (n % 85) as u8 + b'!';
            n /= 85;
        }
        out.extend(digits.iter().map(|&d| char::from(d)));
    }
    out
}

/// `secret` as each escaping (JSON, percent-encoding, markup, shell) writes it.
fn escaped_forms(secret: &str) -> Vec<String> {
    let mut out = vec![secret.to_string()];
    out.extend(JSON_STYLES.iter().map(|style| json_escaped(secret, style)));
    out.extend([
        utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string(),
        utf8_percent_encode(secret, COMPONENT).to_string(),
        utf8_percent_encode(secret, FORM)
            .to_string()
            .replace("%20", "+"),
        markup_escaped(secret, None),
        markup_escaped(secret, Some("&#39;")),
        markup_escaped(secret, Some("&#x27;")),
        markup_escaped(secret, Some("&apos;")),
        secret.replace('\'', r"'\''"),
    ]);
    // A JSON Pointer to a member named by it (a finding's pointer at a key the service
    // echoed): `~` as `~0`, `/` as `~1` (RFC 6901).
    out.push(secret.replace('~', "~0").replace('/', "~1"));
    // Percent-encoded twice as libraries do it (only what a URI component reserves).
    let component = utf8_percent_encode(secret, COMPONENT).to_string();
    out.push(utf8_percent_encode(&component, COMPONENT).to_string());
    if !secret.is_ascii() {
        // Its UTF-8 bytes read as Latin-1 (mojibake: `é` shown as `Ã©`), as a server that
        // decodes a header as ISO-8859-1 echoes it; each spelling above of that text is found
        // through it.
        let latin1: String = secret.bytes().map(char::from).collect();
        out.push(json_escaped(&latin1, &JSON_STYLES[0]));
        out.push(latin1);
        out.extend(unicode_spellings(secret));
        // Echoed in a single-byte encoding (Latin-1, windows-1252: `é` as the byte E9) and
        // read as UTF-8, each character outside ASCII is a replacement character: the rest of
        // the key stands around it.
        let replaced: String = secret
            .chars()
            .map(|c| if c.is_ascii() { c } else { '\u{FFFD}' })
            .collect();
        if replaced.chars().filter(|c| c.is_ascii()).count() >= MIN_SECRET_LEN {
            out.push(json_escaped(&replaced, &JSON_STYLES[0]));
            out.push(replaced);
        }
    }
    // Percent-encoders differ in the case of their hex digits.
    let lower_hex: Vec<String> = out
        .iter()
        .filter(|f| f.contains('%'))
        .map(|f| lowercase_percent_hex(f))
        .collect();
    out.extend(lower_hex);
    out
}

/// A non-ASCII secret as text processing other than escaping spells it (the normalised view
/// folds only ASCII letters): in Unicode upper and lower case (`ß` upper-cased is `SS`, and
/// lower-cased again `ss`), decomposed (NFD: `é` as `e` and a combining accent) or by
/// compatibility (NFKC), with its non-ASCII characters as HTML named entities (`&uuml;`), and
/// with its non-ASCII bytes as `\xNN` (a bytes literal of Python or a log of raw bytes).
fn unicode_spellings(secret: &str) -> Vec<String> {
    use unicode_normalization::UnicodeNormalization as _;
    let upper = secret.to_uppercase();
    let mut out = vec![
        upper.to_lowercase(),
        secret.to_lowercase(),
        secret.nfd().collect(),
        secret.nfkc().collect(),
        secret.nfd().collect::<String>().to_uppercase(),
        upper,
    ];
    let named: String = secret
        .chars()
        .map(|c| match html_entity_name(c) {
            Some(name) => format!("&{name};"),
            None => c.to_string(),
        })
        .collect();
    out.push(named);
    let mut bytes_literal = String::new();
    for c in secret.chars() {
        if c.is_ascii() {
            bytes_literal.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                bytes_literal.push_str(&format!("\\x{b:02x}"));
            }
        }
    }
    out.push(bytes_literal);
    out
}

/// The HTML named entity of a Latin-1 letter or sign (`ü`: `uuml`), as markup escapers that
/// name characters write them.
fn html_entity_name(c: char) -> Option<&'static str> {
    const LATIN1: [&str; 96] = [
        "nbsp", "iexcl", "cent", "pound", "curren", "yen", "brvbar", "sect", "uml", "copy", "ordf",
        "laquo", "not", "shy", "reg", "macr", "deg", "plusmn", "sup2", "sup3", "acute", "micro",
        "para", "middot", "cedil", "sup1", "ordm", "raquo", "frac14", "frac12", "frac34", "iquest",
        "Agrave", "Aacute", "Acirc", "Atilde", "Auml", "Aring", "AElig", "Ccedil", "Egrave",
        "Eacute", "Ecirc", "Euml", "Igrave", "Iacute", "Icirc", "Iuml", "ETH", "Ntilde", "Ograve",
        "Oacute", "Ocirc", "Otilde", "Ouml", "times", "Oslash", "Ugrave", "Uacute", "Ucirc",
        "Uuml", "Yacute", "THORN", "szlig", "agrave", "aacute", "acirc", "atilde", "auml", "aring",
        "aelig", "ccedil", "egrave", "eacute", "ecirc", "euml", "igrave", "iacute", "icirc",
        "iuml", "eth", "ntilde", "ograve", "oacute", "ocirc", "otilde", "ouml", "divide", "oslash",
        "ugrave", "uacute", "ucirc", "uuml", "yacute", "thorn", "yuml",
    ];
    let code = u32::from(c);
    (0xA0..=0xFF)
        .contains(&code)
        .then(|| LATIN1[(code - 0xA0) as usize])
}

/// `%2F` as `%2f`: only the two digits after each `%` change.
fn lowercase_percent_hex(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut digits = 0;
    for c in s.chars() {
        if digits > 0 {
            out.push(c.to_ascii_lowercase());
            digits -= 1;
        } else {
            out.push(c);
            if c == '%' {
                digits = 2;
            }
        }
    }
    out
}

/// How an encoder writes a JSON string, beyond what JSON requires (`"`, `\`, control
/// characters).
struct JsonStyle {
    /// `/` as `\/`.
    slash: bool,
    /// Every non-ASCII character as `\uXXXX`.
    ascii: bool,
    /// Characters written as `\uXXXX` whatever else applies (`"` too, rather than `\"`).
    hex: &'static [char],
    /// `\u` escapes with upper-case hex digits.
    upper: bool,
}

/// The JSON encoders whose output is scrubbed: each is one more form of every secret that
/// holds a character it writes its own way, so the list stays short.
const JSON_STYLES: &[JsonStyle] = &[
    // serde_json, JSON.stringify, Jackson, Json.NET, Go without HTML escaping.
    JsonStyle {
        slash: false,
        ascii: false,
        hex: &[],
        upper: false,
    },
    // PHP with JSON_UNESCAPED_UNICODE.
    JsonStyle {
        slash: true,
        ascii: false,
        hex: &[],
        upper: false,
    },
    // Python's json.dumps (ensure_ascii).
    JsonStyle {
        slash: false,
        ascii: true,
        hex: &[],
        upper: false,
    },
    // PHP's json_encode.
    JsonStyle {
        slash: true,
        ascii: true,
        hex: &[],
        upper: false,
    },
    // Go's json.Marshal (HTML-safe), Rails' to_json.
    JsonStyle {
        slash: false,
        ascii: false,
        hex: &['<', '>', '&', '\u{2028}', '\u{2029}'],
        upper: false,
    },
    // The same with `/` as `\/` too, as a PHP-style layer in front of a Go service writes it.
    JsonStyle {
        slash: true,
        ascii: false,
        hex: &['<', '>', '&', '\u{2028}', '\u{2029}'],
        upper: false,
    },
    // .NET's System.Text.Json with its default encoder.
    JsonStyle {
        slash: false,
        ascii: true,
        hex: &['"', '&', '\'', '+', '<', '>', '`', '\u{7f}'],
        upper: true,
    },
    // Gson (HTML-safe by default).
    JsonStyle {
        slash: false,
        ascii: false,
        hex: &['<', '>', '&', '=', '\'', '\u{2028}', '\u{2029}'],
        upper: false,
    },
];

/// The JSON string content of `s` as `style` writes it.
fn json_escaped(s: &str, style: &JsonStyle) -> String {
    let mut out = String::with_capacity(s.len());
    let hex = |out: &mut String, c: char| {
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            let _ = if style.upper {
                write!(out, "\\u{unit:04X}")
            } else {
                write!(out, "\\u{unit:04x}")
            };
        }
    };
    for c in s.chars() {
        match c {
            c if style.hex.contains(&c) => hex(&mut out, c),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' if style.slash => out.push_str("\\/"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (style.ascii && !c.is_ascii()) => hex(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// `s` escaped for HTML or XML text: `&`, `<`, `>` always; quotes too when `apostrophe` says
/// how `'` is written.
fn markup_escaped(s: &str, apostrophe: Option<&str>) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match (c, apostrophe) {
            ('&', _) => out.push_str("&amp;"),
            ('<', _) => out.push_str("&lt;"),
            ('>', _) => out.push_str("&gt;"),
            ('"', Some(_)) => out.push_str("&quot;"),
            ('\'', Some(a)) => out.push_str(a),
            (c, _) => out.push(c),
        }
    }
    out
}

/// The base64 text of `secret` as it appears inside the base64 of a longer text, at each of
/// the three byte alignments: only the characters that depend on the secret's bytes alone.
fn base64_fragments(secret: &[u8], engine: &GeneralPurpose) -> Vec<String> {
    let mut out = Vec::with_capacity(3);
    // The secret behind two zero bytes: each alignment is a slice of it.
    let mut padded = Vec::with_capacity(secret.len() + 2);
    padded.extend_from_slice(&[0, 0]);
    padded.extend_from_slice(secret);
    let mut encoded = String::new();
    for offset in 0..3 {
        if let Some(fragment) = base64_fragment(&padded, offset, engine, &mut encoded) {
            out.push(fragment.to_string());
        }
    }
    out
}

/// The base64 fragment of the secret behind `padded`'s two zero bytes at alignment `offset`
/// (0 to 2 bytes in front of it), encoded into `buffer`: the characters that only the secret's
/// bytes make; `None` when there are none.
fn base64_fragment<'b>(
    padded: &[u8],
    offset: usize,
    engine: &GeneralPurpose,
    buffer: &'b mut String,
) -> Option<&'b str> {
    let bytes = &padded[2 - offset..];
    buffer.clear();
    engine.encode_string(bytes, buffer);
    // Characters mixing the zero bytes in front: none, two or three.
    let skip = [0, 2, 3][offset];
    // The last character of a partial group mixes in whatever follows.
    let drop = usize::from(!bytes.len().is_multiple_of(3));
    (buffer.len() > skip + drop).then(|| &buffer[skip..buffer.len() - drop])
}

/// Where the userinfo of a URL-like text is (between `://` and the last `@`), whether or not
/// the text parses as a URL.
fn userinfo_range(raw: &str) -> Option<Range<usize>> {
    let start = raw.find("://").map_or(0, |i| i + 3);
    let at = raw.rfind('@')?;
    (at >= start).then_some(start..at)
}

/// A URL for messages, its userinfo (`user:password@`) replaced by `<redacted>`; works on text
/// that is not a valid URL, which is when it is shown.
pub fn url_for_display(raw: &str) -> String {
    match userinfo_range(raw) {
        Some(r) => format!("{}{REDACTED}{}", &raw[..r.start], &raw[r.end..]),
        None => raw.to_string(),
    }
}

/// A writer that scrubs what passes through it a message at a time, with the run's redactor:
/// the last defence of the console. Everything written between two flushes is scrubbed as one
/// text, so a secret that spans a line break (a multi-line sign command, a body echoed over
/// several lines) is found whole; its user flushes at the end of each message.
pub struct ScrubWriter<W: Write> {
    inner: W,
    redactor: Redactor,
    pending: Vec<u8>,
}

impl<W: Write> ScrubWriter<W> {
    /// Wraps `inner`, scrubbing with `redactor` (the session's).
    pub fn new(inner: W, redactor: Redactor) -> Self {
        ScrubWriter {
            inner,
            redactor,
            pending: Vec::new(),
        }
    }

    /// The inner writer (what was written and not flushed is still pending).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Writes what is pending and returns the inner writer.
    pub fn into_inner(mut self) -> W {
        let _ = self.write_pending();
        self.inner
    }

    fn write_pending(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let text = std::mem::take(&mut self.pending);
        self.inner
            .write_all(&self.redactor.scrub_bytes(&text, false))
    }
}

impl<W: Write> Write for ScrubWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_pending()?;
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrubbed(r: &Redactor, text: &str) -> String {
        r.scrub(text).into_owned()
    }

    #[test]
    fn letters_and_digits_take_the_short_road_to_the_same_forms() {
        for secret in [
            "0cc175b9c0f1b6a831c399e269772661",
            "0CC175B9C0F1B6A831C399E269772661",
            "sk9Live7Key2Abc4Def",
            "Zm9vYmFyYmF6cXV4",
            "12345678",
        ] {
            // The forms of every escaping, as computed for any secret.
            let every = with_variants(secret, escaped_forms(secret));
            assert_eq!(forms(secret), every, "{secret}");
        }
        // Anything else still gets every escaping.
        assert!(forms("pa ss/wo&rd").contains(&"pa%20ss%2Fwo%26rd".to_string()));
    }

    /// Every token pattern of `patterns`, with the lengths it keeps.
    fn token_patterns(patterns: &Patterns) -> (BTreeSet<Vec<u8>>, usize, usize) {
        let all = patterns
            .tokens
            .by_len
            .values()
            .flat_map(TokenSet::patterns)
            .map(<[u8]>::to_vec)
            .collect();
        (all, patterns.longest, patterns.request_longest)
    }

    /// A key with a character outside ASCII, echoed in a single-byte encoding (Latin-1) and
    /// read as UTF-8: the character is a replacement character, and the rest is scrubbed.
    #[test]
    fn a_key_echoed_in_latin1_is_scrubbed_around_its_replacement_character() {
        let r = Redactor::new();
        r.add_secret("Tq3/Vzé6+Wm2=Rj5!Hk8");
        let body = b"{\"echo\":\"Tq3/Vz\xe96+Wm2=Rj5!Hk8\"}";
        let text = String::from_utf8_lossy(body).into_owned();
        let scrubbed = r.scrub(&text).into_owned();
        assert!(!scrubbed.contains("Rj5!Hk8"), "{scrubbed}");
    }

    /// Key material written in the sign command, quoted as the shell reads it or as a flag's
    /// value, is a secret: a service that knows its key may echo it.
    #[test]
    fn key_material_given_to_the_sign_command_is_scrubbed() {
        let r = Redactor::new();
        r.add_sign_command("/opt/sign.sh 'Tq3/Vz6+Wm2=Rj5!Hk8' --salt=Pepper#2026x --hex");
        for key in ["Tq3/Vz6+Wm2=Rj5!Hk8", "Pepper#2026x"] {
            let scrubbed = r.scrub(&format!("the key is {key}.")).into_owned();
            assert!(!scrubbed.contains(key), "{scrubbed}");
        }
        assert_eq!(r.scrub("use --hex"), "use --hex");
        let words = command_material("sign --algo hmac-sha256 ./key.pem 'MyKey/2026+x'");
        assert_eq!(words, vec!["MyKey/2026+x".to_string()]);
    }

    #[test]
    fn an_argument_of_the_sign_command_that_looks_like_a_credential_is_scrubbed_in_its_forms() {
        let r = Redactor::new();
        r.add_sign_command(
            "python3 -c 'import sys; sys.exit(sys.argv[1])' InlineArgSecret99 --algo hmac-sha256",
        );
        for text in [
            "bad key 99terceSgrAenilnI".to_string(),
            format!("bad key {}", STANDARD_NO_PAD.encode("InlineArgSecret99")),
            "bad key InlineArgSecret99".to_string(),
        ] {
            let scrubbed = r.scrub(&text).into_owned();
            assert!(scrubbed.contains(REDACTED), "{text} -> {scrubbed}");
        }
        // A digest's name is no credential.
        assert_eq!(
            r.scrub("signed with hmac-sha256"),
            "signed with hmac-sha256"
        );
        assert!(looks_like_a_credential("k3yValue2026"));
        for word in [
            "python3",
            "--key=abc123456",
            "/opt/bin/sign2",
            "hashlib.md5()",
            "sha256sum",
        ] {
            assert!(!looks_like_a_credential(word), "{word}");
        }
    }

    #[test]
    fn a_key_as_a_language_prints_its_bytes_and_a_digest_as_a_uuid_are_scrubbed() {
        let r = Redactor::new();
        let key = "K3y/h25c+Zq9W7xRvT";
        r.add_secret(key);
        let decimal: Vec<String> = key.bytes().map(|b| b.to_string()).collect();
        let utf16: Vec<u8> = key.encode_utf16().flat_map(u16::to_le_bytes).collect();
        for text in [
            format!("bytes=[{}]", decimal.join(", ")),
            format!("{{\"data\":[{}]}}", decimal.join(",")),
            format!("key16={}", STANDARD_NO_PAD.encode(&utf16)),
        ] {
            let scrubbed = r.scrub(&text).into_owned();
            assert!(scrubbed.contains(REDACTED), "{text} -> {scrubbed}");
            assert!(!scrubbed.contains(&decimal[3..8].join(", ")), "{scrubbed}");
        }
        let signature = "e173d21ce0764f2a9b1c3d5e7f801234";
        r.add_request_credential(&format!("app {signature}"));
        let uuid = "e173d21c-e076-4f2a-9b1c-3d5e7f801234";
        for text in [uuid.to_string(), uuid.to_ascii_uppercase()] {
            let scrubbed = r.scrub(&text).into_owned();
            assert!(!scrubbed.contains("e076"), "{text} -> {scrubbed}");
            assert!(!scrubbed.contains("E076"), "{text} -> {scrubbed}");
        }
    }

    #[test]
    fn a_signature_registers_what_the_general_path_registers() {
        // Secrets of letters and digits a signing can give: hex in either case or mixed,
        // base64url without its two symbols, of every length around the base64 groups.
        let mut secrets: Vec<String> = vec![
            "0123456789abcdef0123456789abcdef".into(),
            "0123456789ABCDEF0123456789ABCDEF".into(),
            "0123456789AbCdEf".into(),
            "Zm9vYmFyYmF6cXV4".into(),
            "abcdefgh".into(),
            "ABCDEFGHI".into(),
        ];
        let alphabet = b"0123456789abcdefABCDEFghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ";
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for len in 8..80 {
            for hex in [true, false] {
                let mut s = String::new();
                for _ in 0..len {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let pool = if hex { 16 } else { alphabet.len() };
                    s.push(char::from(alphabet[(state % pool as u64) as usize]));
                }
                secrets.push(s);
            }
        }
        for secret in &secrets {
            let mut fast = Registry::default();
            assert!(fast.add_labelled(secret, Label::Secret, Lifetime::Request));
            let mut general = Registry::default();
            general.add(forms(secret), Label::Secret, Lifetime::Request);
            for (f, g) in [(&fast.raw, &general.raw), (&fast.normal, &general.normal)] {
                assert_eq!(token_patterns(f), token_patterns(g), "{secret}");
                assert!(f.tiers.is_empty() && g.tiers.is_empty(), "{secret}");
                assert!(f.seen_tokens.patterns.is_empty() && g.seen_tokens.patterns.is_empty());
            }
            // And both find the same in an echo of the secret in several spellings.
            let b64 = base64::engine::general_purpose::STANDARD.encode(format!("x{secret}y"));
            let text = format!(
                "a {secret} b {} c {} d {b64} e \\u00{:02x}{}",
                secret.to_ascii_uppercase(),
                secret.to_ascii_lowercase(),
                secret.as_bytes()[0],
                &secret[1..]
            );
            assert_eq!(
                fast.find(text.as_bytes()),
                general.find(text.as_bytes()),
                "{secret}"
            );
            assert!(!fast.find(text.as_bytes()).is_empty());
        }
        // Registering one again adds nothing.
        let mut twice = Registry::default();
        twice.add_labelled(&secrets[0], Label::Secret, Lifetime::Request);
        let once = token_patterns(&twice.raw);
        twice.add_labelled(&secrets[0], Label::Secret, Lifetime::Request);
        assert_eq!(token_patterns(&twice.raw), once);
        assert_eq!(
            twice
                .raw
                .tokens
                .by_len
                .values()
                .map(|t| t.table.len())
                .sum::<usize>(),
            once.0.len()
        );
    }

    #[test]
    fn base32_decided_is_the_start_of_rfc_4648_base32() {
        for len in 0..40 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let full = data_encoding::BASE32_NOPAD.encode(&bytes);
            assert_eq!(base32_decided(&bytes), full[..len * 8 / 5], "{len}");
        }
    }

    /// h29 F8: a service's echo of the Authorization signature in the spellings that stay
    /// letters and digits, inside a JSON error message as a hostile service writes it.
    #[test]
    fn a_signature_echoed_in_rot13_base32_base64_twice_or_utf16_is_scrubbed() {
        let r = Redactor::new();
        let signature = "9f86d081884c7d659a2feaa0c55ad015";
        r.add_request_credential(&format!("mallcheck-demo-app {signature}"));
        let rot13: String = signature.chars().map(|c| rotate(c, 13)).collect();
        let base32 = data_encoding::BASE32.encode(signature.as_bytes());
        let twice = base64::engine::general_purpose::STANDARD
            .encode(base64::engine::general_purpose::STANDARD.encode(signature.as_bytes()));
        let utf16: Vec<u8> = signature
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let utf16 = base64::engine::general_purpose::STANDARD.encode(utf16);
        for echo in [rot13, base32.to_ascii_lowercase(), base32, twice, utf16] {
            let text = format!(r#"{{"msg":"bad request {echo}"}}"#);
            let shown = r.scrub(&text).into_owned();
            assert!(shown.contains("<redacted>"), "{echo}: {shown}");
            // What is left of the echo (a last character that mixes in what follows, its
            // padding) is no longer than a few characters.
            let longest = shown
                .replace("<redacted>", " ")
                .split(|c: char| !c.is_ascii_alphanumeric())
                .map(str::len)
                .max()
                .unwrap_or(0);
            assert!(longest < 8, "{echo}: {shown}");
        }
    }

    #[test]
    fn a_signature_noted_by_one_clone_is_scrubbed_by_the_next_search_of_another() {
        let r = Redactor::new();
        let signature = "0cc175b9c0f1b6a831c399e269772661";
        r.add_request_credential(&format!("mallcheck-demo-app {signature}"));
        r.add_request_credential("appid short");
        let other = r.clone();
        let upper = signature.to_ascii_uppercase();
        let b64 = STANDARD_NO_PAD.encode(signature);
        let text = format!("a {signature} b {upper} c {b64} d");
        let shown = std::thread::spawn(move || other.scrub(&text).into_owned())
            .join()
            .expect("the scrub runs");
        assert!(
            shown.starts_with("a <redacted> b <redacted> c <redacted>"),
            "{shown}"
        );
        // (The last base64 character mixes in what follows; the fragment stops before it.)
        assert!(!shown.contains(&b64[..b64.len() - 1]), "{shown}");
        // Noted once, registered once: the list is empty after the search.
        assert!(!r.pending.any.load(Ordering::Acquire));
        assert!(r.pending.values.lock().unwrap().is_empty());
        // A value too short to split still registers as a whole.
        assert_eq!(scrubbed(&r, "x appid short y"), "x <redacted> y");
    }

    #[test]
    fn the_room_kept_before_a_signature_is_registered_covers_its_forms_after() {
        for value in [
            "app 0cc175b9c0f1b6a831c399e269772661",
            "Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig_-+/=",
            "Basic dXNlcjpwYXNzd29yZA==",
            "app \"quoted\" & <tagged> 'apostrophe' 100% \u{e9}t\u{e9} \u{1f511}",
            "no-scheme-at-all&&&&&&&&''",
        ] {
            let r = Redactor::new();
            r.add_request_credential(value);
            let before = r.excerpt_room();
            let _ = r.scrub("registers what was noted");
            let after = r.read().reach();
            assert!(after > 0, "{value}: registered");
            assert!(before >= after, "{value}: {before} < {after}");
        }
    }

    #[test]
    fn a_secret_registered_again_still_scrubs_all_its_forms() {
        let r = Redactor::new();
        for _ in 0..3 {
            assert!(r.add_secret("0cc175b9c0f1b6a831c399e269772661"));
        }
        assert!(r.add_secret("pa ss/wo&rd"));
        assert!(r.add_secret("pa ss/wo&rd"));
        assert_eq!(
            scrubbed(&r, "a 0CC175B9C0F1B6A831C399E269772661 b pa%20ss%2Fwo%26rd"),
            "a <redacted> b <redacted>"
        );
    }

    #[test]
    fn authorization_keeps_appid_and_hides_signature() {
        let r = Redactor::new();
        assert_eq!(
            r.header_value("Authorization", "app1 abcdef"),
            "app1 <redacted>"
        );
        assert_eq!(r.header_value("authorization", "tokenonly"), REDACTED);
        assert_eq!(
            r.header_value("Content-Type", "application/json"),
            "application/json"
        );
    }

    #[test]
    fn a_key_echoed_in_hex_however_its_bytes_are_separated_is_scrubbed() {
        let key = "mallcheck-demo-key";
        let r = Redactor::new();
        r.add_secret(key);
        let hex: Vec<String> = key.bytes().map(|b| format!("{b:02x}")).collect();
        let echoes = [
            hex.concat(),
            hex.concat().to_ascii_uppercase(),
            hex.join(" "),
            hex.join(":"),
            hex.join(":").to_ascii_uppercase(),
            hex.join("-"),
            hex.iter().map(|b| format!("\\x{b}")).collect(),
            // The same in a JSON string: its backslashes escaped.
            hex.iter().map(|b| format!("\\\\x{b}")).collect(),
            hex.iter()
                .map(|b| format!("0x{b}"))
                .collect::<Vec<_>>()
                .join(", "),
            format!("{}\n{}", hex[..9].concat(), hex[9..].concat()),
        ];
        for echo in echoes {
            let text = format!("{{\"msg\":\"bad key {echo} here\"}}");
            let scrubbed = r.scrub(&text);
            assert!(scrubbed.contains(REDACTED), "{text} -> {scrubbed}");
            assert!(
                !scrubbed.to_ascii_lowercase().contains(&hex[3..8].concat()),
                "{text} -> {scrubbed}"
            );
        }
    }

    /// The spellings a hostile echo found past the escapings: reversed, base32 (whole, in a
    /// longer encoded text, in lower case), UTF-16 in hex (either byte order), percent-encoded
    /// twice, ROT13, ROT47, base64 of base64, octal and CSS escapes, Ascii85.
    #[test]
    fn a_key_echoed_reversed_in_base32_utf16_or_percent_encoded_twice_is_scrubbed() {
        let key = "Zq7Xw2Lp9Rt4Vb8Nc3Mk6HyT5Gd1Fs0A";
        let r = Redactor::new();
        r.add_secret(key);
        let base32 = data_encoding::BASE32.encode(key.as_bytes());
        let longer = data_encoding::BASE32.encode(format!("{key}!tail").as_bytes());
        let utf16 = |be: bool| -> String {
            key.encode_utf16()
                .map(|u| hex::encode(if be { u.to_be_bytes() } else { u.to_le_bytes() }))
                .collect()
        };
        let echoes = [
            key.chars().rev().collect::<String>(),
            base32.clone(),
            base32.to_ascii_lowercase(),
            longer,
            utf16(false),
            utf16(true).to_ascii_uppercase(),
            key.bytes().map(|b| format!("%25{b:02X}")).collect(),
            key.bytes().map(|b| format!("%25{b:02x}")).collect(),
            // h27c L1: ROT13, ROT47, base64 of base64, octal and CSS escapes, Ascii85.
            key.chars().map(|c| rotate(c, 13)).collect(),
            key.chars().map(rot47).collect(),
            {
                use base64::engine::general_purpose::STANDARD;
                STANDARD.encode(STANDARD.encode(key.as_bytes()))
            },
            key.bytes().map(|b| format!("\\{b:03o}")).collect(),
            key.bytes().map(|b| format!("\\{b:x} ")).collect(),
            key.bytes().map(|b| format!("\\{b:06x}")).collect(),
            ascii85(key.as_bytes()),
        ];
        for echo in echoes {
            let text = format!("{{\"msg\":\"bad key {echo} here\"}}");
            let scrubbed = r.scrub(&text);
            assert!(scrubbed.contains(REDACTED), "{text} -> {scrubbed}");
            assert!(!scrubbed.contains(&echo[4..16]), "{text} -> {scrubbed}");
        }
    }

    /// A key with characters that show nothing between its letters (it looks whole), or in
    /// full-width letters, is the key.
    #[test]
    fn a_key_with_invisible_characters_between_its_letters_is_scrubbed() {
        let key = "Zq7Xw2Lp9Rt4Vb8Nc3Mk6HyT5Gd1Fs0A";
        let r = Redactor::new();
        r.add_secret(key);
        let joined = |sep: &str| key.chars().map(String::from).collect::<Vec<_>>().join(sep);
        let full_width: String = key
            .chars()
            .map(|c| char::from_u32(u32::from(c) + 0xFEE0).unwrap_or(c))
            .collect();
        for echo in [
            joined("\u{200b}"),
            joined("\u{200d}"),
            joined("\u{ad}"),
            joined("\u{feff}"),
            joined("\u{3000}"),
            joined("\u{e0020}"),
            joined("\\u200b"),
            full_width,
        ] {
            let text = format!("{{\"msg\":\"bad key {echo} here\"}}");
            let scrubbed = r.scrub(&text);
            assert!(scrubbed.contains(REDACTED), "{text} -> {scrubbed}");
            let visible: String = scrubbed
                .chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect();
            assert!(!visible.contains("Xw2Lp9"), "{text} -> {scrubbed}");
        }
    }

    #[test]
    fn a_key_echoed_as_mojibake_by_a_latin1_reader_is_scrubbed() {
        let key = "s3cr\"<&>\\kéy-τ";
        let r = Redactor::new();
        r.add_secret(key);
        let latin1: String = key.bytes().map(char::from).collect();
        for echo in [latin1.clone(), serde_json::to_string(&latin1).unwrap()] {
            let text = format!("{{\"msg\":\"bad key {echo} here\"}}");
            let scrubbed = r.scrub(&text);
            assert!(!scrubbed.contains("s3cr"), "{text} -> {scrubbed}");
        }
    }

    #[test]
    fn a_key_in_unicode_spellings_pointers_and_double_percent_encoding_is_scrubbed() {
        let key = "Schlüssel-straße-é/geheim~1";
        let r = Redactor::new();
        r.add_secret(key);
        for echo in [
            "SCHLÜSSEL-STRASSE-É/GEHEIM~1",
            "schlüssel-strasse-é/geheim~1",
            "Schlu\u{308}ssel-straße-e\u{301}/geheim~1",
            "Schl&uuml;ssel-stra&szlig;e-&eacute;/geheim~1",
            "Schl\\xc3\\xbcssel-stra\\xc3\\x9fe-\\xc3\\xa9/geheim~1",
            "Schlüssel-straße-é~1geheim~01",
            "Schl%25C3%25BCssel-stra%25C3%259Fe-%25C3%25A9%252Fgeheim~1",
        ] {
            let echo = echo
                .replace("\\u{308}", "\u{308}")
                .replace("\\u{301}", "\u{301}");
            let text = format!("{{\"msg\":\"bad key {echo} here\"}}");
            let scrubbed = r.scrub(&text);
            assert!(scrubbed.contains(REDACTED), "{text} -> {scrubbed}");
            assert!(
                !scrubbed.to_lowercase().contains("geheim"),
                "{text} -> {scrubbed}"
            );
        }
    }

    #[test]
    fn an_authorization_value_of_the_public_appid_alone_registers_nothing() {
        let r = Redactor::new();
        r.add_public("mallcheck-demo-app");
        r.add_credential("mallcheck-demo-app");
        r.add_request_credential("mallcheck-demo-app");
        r.add_request_credential("mallcheck-demo-app x");
        let text = "appid mallcheck-demo-app in a body";
        assert_eq!(r.scrub(text), text);
        // The credential beside it is registered; the appid stays.
        r.add_request_credential("mallcheck-demo-app 0123456789abcdef0123456789abcdef");
        assert_eq!(
            r.scrub("mallcheck-demo-app 0123456789abcdef0123456789abcdef"),
            format!("mallcheck-demo-app {REDACTED}")
        );
        // Any other value alone still is.
        r.add_credential("mallcheck-demo-app-other");
        assert_eq!(
            r.scrub("x mallcheck-demo-app-other"),
            format!("x {REDACTED}")
        );
    }

    #[test]
    fn credential_headers_are_recognised_by_name() {
        for (name, secret, why) in [
            ("X-Api-Key", true, "key"),
            ("X-Auth-Token", true, "auth and token"),
            ("Cookie", true, "cookie"),
            ("Set-Cookie", true, "cookie in a response"),
            ("X-Session-Id", true, "session"),
            ("X-Client-Secret", true, "secret"),
            ("X-Request-Signature", true, "signature"),
            ("Proxy-Authorization", true, "proxy credentials"),
            (
                "WWW-Authenticate",
                false,
                "describes the scheme, carries nothing",
            ),
            ("Access-Control-Allow-Credentials", false, "CORS flag"),
            ("Content-Type", false, "plain header"),
            ("X-env-flag", false, "the shipped cases' flag"),
        ] {
            assert_eq!(is_secret_header_name(name), secret, "{name}: {why}");
        }
    }

    #[test]
    fn marked_headers_are_secret_whatever_their_name() {
        let r = Redactor::new();
        assert!(!r.is_secret_header("X-Tenant"));
        r.mark_secret_headers(&["x-tenant".to_string()]);
        assert_eq!(r.header_value("X-Tenant", "tenant-credential-1"), REDACTED);
        assert_eq!(scrubbed(&r, "echo tenant-credential-1"), "echo <redacted>");
    }

    #[test]
    fn secret_debug_is_redacted() {
        let s = Secret::new("k3y-value");
        assert_eq!(format!("{s:?} {s}"), "<redacted> <redacted>");
    }

    #[test]
    fn scrub_removes_known_secrets() {
        let s = Secret::new("topsecret");
        assert_eq!(
            Redactor::new().scrub_with("x topsecret y", &[&s]),
            "x <redacted> y"
        );
    }

    #[test]
    fn every_echo_form_of_a_secret_is_scrubbed() {
        let key = "k3y/\"never+leak me\\7f3a9c'é";
        let r = Redactor::new();
        assert!(r.add_secret(key));
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let forms = [
            ("raw", key.to_string()),
            ("json", serde_json::to_string(key).unwrap()),
            (
                "json, ensure_ascii",
                json_escaped(
                    key,
                    &JsonStyle {
                        slash: true,
                        ascii: true,
                        hex: &[],
                        upper: false,
                    },
                ),
            ),
            (
                "percent",
                utf8_percent_encode(key, NON_ALPHANUMERIC).to_string(),
            ),
            (
                "percent, lower-case hex",
                utf8_percent_encode(key, NON_ALPHANUMERIC)
                    .to_string()
                    .to_lowercase(),
            ),
            (
                "form",
                utf8_percent_encode(key, FORM)
                    .to_string()
                    .replace("%20", "+"),
            ),
            ("html", crate::report::html::escape(key)),
            ("base64 aligned", b64(key)),
            ("base64 after 1 byte", b64(&format!("a{key}"))),
            ("base64 after 2 bytes", b64(&format!("ab{key}"))),
            ("base64 inside", b64(&format!("Basic user:{key}:tail"))),
            ("shell", format!("'{}'", key.replace('\'', r"'\''"))),
        ];
        for (why, text) in forms {
            let out = scrubbed(&r, &format!("before {text} after"));
            assert!(out.contains(REDACTED), "{why}: {out}");
            assert!(!out.contains("never"), "{why}: {out}");
            assert!(!out.contains("bmV2ZXI"), "{why}: {out}");
        }
    }

    #[test]
    fn base64_fragments_leave_no_secret_bytes_when_decoded() {
        let key = "0123456789abcdef";
        let r = Redactor::new();
        r.add_secret(key);
        for prefix in ["", "x", "xy", "xyz"] {
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(format!("{prefix}{key}!"));
            let out = scrubbed(&r, &encoded);
            assert!(out.contains(REDACTED), "{prefix:?}: {out}");
            // What is left decodes to at most two bytes of the key at either end.
            assert!(out.len() < encoded.len(), "{out}");
        }
    }

    #[test]
    fn short_secrets_are_refused_and_text_is_left_alone() {
        let r = Redactor::new();
        assert!(!r.add_secret("a"));
        assert!(!r.add_secret("1234567"));
        assert_eq!(scrubbed(&r, "a banana 1234567"), "a banana 1234567");
        assert!(r.add_secret("12345678"));
        assert_eq!(scrubbed(&r, "x12345678y"), "x<redacted>y");
    }

    #[test]
    fn overlapping_secrets_are_one_redaction() {
        let r = Redactor::new();
        r.add_secret("abcdefgh");
        r.add_secret("efghijkl");
        assert_eq!(scrubbed(&r, "0abcdefghijkl1"), "0<redacted>1");
        assert_eq!(scrubbed(&r, "no secret here"), "no secret here");
        assert!(matches!(r.scrub("no secret here"), Cow::Borrowed(_)));
    }

    #[test]
    fn many_signatures_stay_searchable_in_few_automata() {
        let r = Redactor::new();
        let sigs: Vec<String> = (0..2000).map(|i| format!("{i:032x}")).collect();
        for s in &sigs {
            r.add_credential(&format!("app {s}"));
        }
        assert!(
            r.read().raw.tiers.is_empty() && r.read().normal.tiers.is_empty(),
            "hex signatures need no automaton"
        );
        for s in [&sigs[0], &sigs[777], &sigs[1999]] {
            assert_eq!(scrubbed(&r, &format!("[{s}]")), "[<redacted>]");
            let upper = s.to_ascii_uppercase();
            assert_eq!(scrubbed(&r, &format!("x{upper}y")), "x<redacted>y");
        }
    }

    #[test]
    fn tokens_are_found_inside_longer_runs_and_next_to_other_forms() {
        let r = Redactor::new();
        r.add_secret("tok3n-abcdef");
        r.add_secret("non token/secret value");
        assert_eq!(
            scrubbed(&r, "xxtok3n-abcdefyy non token/secret value tok3n%2Dabcdef"),
            "xx<redacted>yy <redacted> <redacted>"
        );
        assert_eq!(
            scrubbed(&r, "tok3n-abcde tok3n-abcdeX"),
            "tok3n-abcde tok3n-abcdeX"
        );
    }

    #[test]
    fn cookie_values_are_secrets_and_their_attributes_are_not() {
        let r = Redactor::new();
        assert_eq!(
            r.header_value(
                "Set-Cookie",
                "sid=cookie-session-4242; Path=/; Expires=Wed, 21 Oct 2026 07:28:00 GMT"
            ),
            REDACTED
        );
        assert_eq!(
            scrubbed(
                &r,
                "sid=cookie-session-4242 on Wed, 21 Oct 2026 07:28:00 GMT"
            ),
            "sid=<redacted> on Wed, 21 Oct 2026 07:28:00 GMT"
        );
        r.header_value("X-Auth-Token", "Bearer bearer-token-77aa");
        assert_eq!(scrubbed(&r, "token bearer-token-77aa"), "token <redacted>");
    }

    #[test]
    fn basic_credentials_are_scrubbed_encoded_and_decoded() {
        let r = Redactor::new();
        r.header_value("Authorization", "Basic YWxpY2UtYWRtaW46cGFzc3dvcmQtOTk=");
        for text in [
            "YWxpY2UtYWRtaW46cGFzc3dvcmQtOTk=",
            "alice-admin:password-99",
            "user alice-admin",
            "pass password-99",
        ] {
            assert!(scrubbed(&r, text).contains(REDACTED), "{text}");
        }
    }

    #[test]
    fn sign_command_is_named_not_shown() {
        let r = Redactor::new();
        r.add_sign_command("vault read -field=sig secret/mall");
        assert_eq!(
            scrubbed(
                &r,
                "signer command `vault read -field=sig secret/mall` failed"
            ),
            "signer command `<the sign command>` failed"
        );
        assert_eq!(
            r.scrub_bytes(b"<pre>vault read -field=sig secret/mall</pre>", true)
                .as_ref(),
            b"<pre>&lt;the sign command&gt;</pre>"
        );
    }

    #[test]
    fn a_short_sign_command_is_still_named_in_signing_errors() {
        let r = Redactor::new();
        assert!(!r.add_sign_command("exit 3"));
        assert_eq!(
            r.scrub_sign_error("signer command `exit 3` failed: exit status: 3"),
            "signer command `<the sign command>` failed: exit status: 3"
        );
        assert_eq!(scrubbed(&r, "exit 3"), "exit 3");
    }

    #[test]
    fn urls_lose_their_userinfo_for_display() {
        for (raw, shown) in [
            (
                "http://user:pw@host:99999/",
                "http://<redacted>@host:99999/",
            ),
            ("ftp://u:p@h/x", "ftp://<redacted>@h/x"),
            ("user:pass@host", "<redacted>@host"),
            ("http://u:p/w#x@h/", "http://<redacted>@h/"),
            ("http://host/path", "http://host/path"),
        ] {
            assert_eq!(url_for_display(raw), shown, "{raw}");
        }
        let r = Redactor::new();
        r.add_url_userinfo("http://deploy-bot:pa%24%24word-77@host/");
        assert_eq!(
            scrubbed(&r, "deploy-bot pa$$word-77 pa%24%24word-77"),
            "<redacted> <redacted> <redacted>"
        );
    }

    #[test]
    fn excerpt_scrubs_a_secret_cut_by_the_limit() {
        let r = Redactor::new();
        r.add_secret("0123456789abcdef");
        let body = b"xxxxxxxx0123456789abcdefyyyy";
        let out = r.excerpt(body, 12, true);
        assert_eq!(
            out, "xxxxxxxx<redacted>",
            "the secret across the cut is redacted whole"
        );
        assert_eq!(r.excerpt(b"short", 12, true), "short");
    }

    /// The longest beginning of a registered form of `secret`, of at least 4 bytes, that `text`
    /// ends with. (What an excerpt ends with may begin a form by chance: `mal` of
    /// `mallcheck-demo-app` ends with the first letter of a base64 fragment. The excerpt only
    /// leaves out what may begin a secret that the cut crosses.)
    fn partial_at_end(text: &str, secret: &str) -> Option<String> {
        forms(secret)
            .iter()
            .flat_map(|f| {
                (4..f.len())
                    .filter(|&n| f.is_char_boundary(n))
                    .map(move |n| &f[..n])
            })
            .filter(|p| text.ends_with(p))
            .max_by_key(|p| p.len())
            .map(str::to_string)
    }

    #[test]
    fn an_excerpt_never_ends_with_the_beginning_of_a_secret() {
        // An echoing service's answer: the Authorization value three times (each scrubbed to a
        // shorter placeholder, which shrinks the text), filler, then once more across the cut.
        let sig = "eb15fe36e951f0f5fc291e60749d3a07";
        let key = "St@tic/Key+w&th<chars>\"q=1%20";
        let r = Redactor::new();
        r.add_credential(&format!("mallcheck-demo-app {sig}"));
        r.add_secret(key);
        for secret in [sig, key] {
            let escaped = serde_json::to_string(secret).unwrap();
            let echo = format!(
                "\"authorization\": \"mallcheck-demo-app {}\", ",
                &escaped[1..escaped.len() - 1]
            );
            let head = format!("{}\"pad\": \"", echo.repeat(3));
            let before_secret = echo.find(&escaped[1..escaped.len() - 1]).unwrap();
            // The last echo's secret starts anywhere from 100 bytes before the cut to 100 after.
            for at in 1948..2148 {
                let pad = at - head.len() - before_secret;
                let body = format!("{head}{}{echo}{}", ".".repeat(pad), "x".repeat(99));
                let out = r.excerpt(body.as_bytes(), 2048, true);
                if let Some(p) = partial_at_end(&out, secret) {
                    panic!("secret at {at}: the excerpt ends with {p:?}");
                }
                assert!(
                    !out.contains(secret) && !out.contains(&escaped[1..escaped.len() - 1]),
                    "secret at {at}"
                );
                assert!(out.matches(REDACTED).count() >= 3, "secret at {at}: {out}");
                assert!(out.len() > 1900, "secret at {at}: {} bytes kept", out.len());
            }
        }
    }

    #[test]
    fn a_cut_does_not_depend_on_which_signatures_are_registered() {
        // The same answer cut at the same place, with one signature registered or with
        // hundreds more (requests in flight at --jobs 8): the same excerpt, and nothing of a
        // signature at its end.
        let body = br#"{"data":[{"mallSn":"10234","signature":"9f3ab07c"},{"mallSn":"10235"}]}"#;
        let one = Redactor::new();
        one.header_value(
            "Authorization",
            "mallcheck-demo-app eb15fe36e951f0f5fc291e60749d3a07",
        );
        let many = Redactor::new();
        many.header_value(
            "Authorization",
            "mallcheck-demo-app eb15fe36e951f0f5fc291e60749d3a07",
        );
        for i in 0..500u32 {
            let sig = format!(
                "{:032x}",
                u128::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)
            );
            many.header_value("Authorization", &format!("mallcheck-demo-app {sig}"));
        }
        let mut trimmed = 0;
        for cut in 1..body.len() {
            let a = one.excerpt(&body[..cut], 4096, false);
            let b = many.excerpt(&body[..cut], 4096, false);
            assert_eq!(a, b, "cut at {cut}");
            trimmed += usize::from(a.len() < cut);
            // What it keeps ends where a token run could not be a signature's beginning.
            assert!(
                !a.as_bytes().last().is_some_and(|&b| request_token_byte(b)),
                "cut at {cut}: {a}"
            );
        }
        assert!(trimmed > 10, "{trimmed}");
        // A whole body is never trimmed.
        assert_eq!(many.excerpt(body, 4096, true).as_bytes(), body);
    }

    #[test]
    fn a_cut_judged_on_the_text_it_needs_is_the_cut_judged_on_the_whole_reach() {
        // The excerpt reads past its cut, and back from it, only as far as the view needs to
        // give the longest form: the same excerpt as when judged on the whole reach (the room
        // an echo written with 12 bytes per character and 4 KiB of white space would take),
        // wherever the cut falls in an echo, however the echo is spelt.
        let key = "St@tic/Key+w&th<chars>\"q=1%20";
        let sig = "eb15fe36e951f0f5fc291e60749d3a07";
        let r = Redactor::new();
        r.add_secret(key);
        r.add_credential(&format!("mallcheck-demo-app {sig}"));
        let spellings = |s: &str| -> Vec<String> {
            vec![
                serde_json::to_string(s).expect("a string"),
                s.chars().map(|c| format!("\\u{:04x}", c as u32)).collect(),
                utf8_percent_encode(s, NON_ALPHANUMERIC).to_string(),
                s.chars().map(|c| format!("&#{};", c as u32)).collect(),
                s.chars().flat_map(|c| [c, '\n', ' ']).collect(),
                s.to_uppercase(),
            ]
        };
        let mut judged = 0;
        for secret in [key, sig] {
            for echo in spellings(secret) {
                let body = format!(
                    "{{\"pad\":\"{}\",\"echo\":\"{echo}\",\"tail\":\"{}\"}}",
                    "p".repeat(40),
                    "t".repeat(300)
                );
                let body = body.as_bytes();
                for cut in 1..body.len() {
                    let registry = r.read();
                    let whole = &body[..body.len().min(cut + registry.reach())];
                    let expected = Redactor::cut_in(&registry, body, cut, whole);
                    let from = cut.saturating_sub(normal_reach(registry.normal.longest));
                    assert_eq!(
                        registry.partial_start(&body[..cut]),
                        registry
                            .raw
                            .partial_start(&body[..cut])
                            .min(registry.normal_partial_start(&body[..cut], from)),
                        "{echo}: the end left out at {cut}"
                    );
                    drop(registry);
                    assert_eq!(r.cut(body, cut, false), expected, "{echo}: cut at {cut}");
                    judged += 1;
                }
            }
        }
        assert!(judged > 4000, "{judged}");
    }

    #[test]
    fn the_excerpt_of_a_cut_body_leaves_out_a_secret_cut_with_it() {
        let sig = "eb15fe36e951f0f5fc291e60749d3a07";
        let r = Redactor::new();
        r.add_credential(&format!("mallcheck-demo-app {sig}"));
        let body = format!("{{\"authorization\": \"mallcheck-demo-app {sig}\"}}");
        // A body cut short (by --max-body, or by a transport error) well under the limit.
        for cut in 1..body.len() {
            let out = r.excerpt(&body.as_bytes()[..cut], 2048, false);
            if let Some(p) = partial_at_end(&out, sig) {
                panic!("cut at {cut}: the excerpt ends with {p:?}");
            }
        }
    }

    #[test]
    fn a_key_echoed_by_go_dotnet_or_gson_json_is_scrubbed() {
        let r = Redactor::new();
        r.add_secret("St@tic/Key+w&th<chars>\"q=1%20");
        r.add_secret("q7Zx/9Kp+Lm3Vn0R/tY2wA==");
        r.add_secret("k3y'\u{e9}`\\pl+s\u{2028}");
        for (encoder, echoed) in [
            ("JSON.stringify", r#"St@tic/Key+w&th<chars>\"q=1%20"#),
            (
                "Go json.Marshal",
                r#"St@tic/Key+w\u0026th\u003cchars\u003e\"q=1%20"#,
            ),
            (
                "Go, then / as \\/",
                r#"St@tic\/Key+w\u0026th\u003cchars\u003e\"q=1%20"#,
            ),
            (
                ".NET System.Text.Json",
                r#"St@tic/Key\u002Bw\u0026th\u003Cchars\u003E\u0022q=1%20"#,
            ),
            (
                "Gson",
                r#"St@tic/Key+w\u0026th\u003cchars\u003e\"q\u003d1%20"#,
            ),
            (".NET, base64", r#"q7Zx/9Kp\u002BLm3Vn0R/tY2wA=="#),
            ("Gson, base64", r#"q7Zx/9Kp+Lm3Vn0R/tY2wA\u003d\u003d"#),
            ("Go, quote and non-ASCII", "k3y'\u{e9}`\\\\pl+s\\u2028"),
            (
                ".NET, quote and non-ASCII",
                r#"k3y\u0027\u00E9\u0060\\pl\u002Bs\u2028"#,
            ),
            (
                "Gson, quote and non-ASCII",
                "k3y\\u0027\u{e9}`\\\\pl+s\\u2028",
            ),
        ] {
            assert_eq!(
                scrubbed(&r, &format!("{{\"authorization\":\"app {echoed}\"}}")),
                "{\"authorization\":\"app <redacted>\"}",
                "{encoder}: {echoed}"
            );
        }
    }

    const KEY: &str = "Zq7Xw2Lp9Rt4Vb8Nc3Mk6Hj1Gf5Ds0Ay";

    /// Every run of 8 characters of `key` that `text` still holds, in any letter case.
    fn fragments_left(text: &str, key: &str) -> Vec<String> {
        let lower = text.to_ascii_lowercase();
        (0..=key.len() - 8)
            .map(|i| key[i..i + 8].to_ascii_lowercase())
            .filter(|w| lower.contains(w.as_str()))
            .collect()
    }

    /// The echoes of a key that the issue's bar names, as a service writes them.
    fn echoes(key: &str) -> Vec<(&'static str, String)> {
        let b64 = base64::engine::general_purpose::STANDARD
            .encode(format!("{{\"appid\":\"demo\",\"signature\":\"{key}\"}}").repeat(3));
        let wrapped: Vec<&str> = b64
            .as_bytes()
            .chunks(76)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        vec![
            ("plain", format!("signature did not match: {key}")),
            ("upper", key.to_ascii_uppercase()),
            ("lower", key.to_ascii_lowercase()),
            (
                "json \\u",
                key.chars()
                    .map(|c| format!("\\u{:04x}", c as u32))
                    .collect(),
            ),
            (
                "percent",
                key.bytes().map(|b| format!("%{b:02X}")).collect(),
            ),
            ("html", key.bytes().map(|b| format!("&#{b};")).collect()),
            ("mime base64", wrapped.join("\r\n")),
            ("mime base64 in json", wrapped.join("\\r\\n")),
            (
                "line break inside",
                format!("{}\n{}", &key[..13], &key[13..]),
            ),
        ]
    }

    #[test]
    fn every_echo_form_of_the_bar_leaves_no_fragment_of_the_key() {
        let r = Redactor::new();
        r.add_secret(KEY);
        for (form, echo) in echoes(KEY) {
            let text = format!("{{\"msg\":\"{echo}\"}}");
            let out = scrubbed(&r, &text);
            assert!(fragments_left(&out, KEY).is_empty(), "{form}: {out}");
            assert!(out.contains(REDACTED), "{form}: {out}");
            assert!(out.starts_with("{\"msg\":\""), "{form}: {out}");
        }
    }

    #[test]
    fn a_key_across_the_chunks_of_the_normalised_view_is_found() {
        let r = Redactor::new();
        r.add_secret(KEY);
        let upper = KEY.to_ascii_uppercase();
        for at in [
            NORMAL_CHUNK - 20,
            NORMAL_CHUNK - 1,
            NORMAL_CHUNK,
            3 * NORMAL_CHUNK - 5,
        ] {
            let text = format!("{}{upper}{}", "x".repeat(at), "y".repeat(100));
            let out = scrubbed(&r, &text);
            assert!(fragments_left(&out, KEY).is_empty(), "key at {at}");
            assert_eq!(out.len(), at + REDACTED.len() + 100, "key at {at}");
        }
    }

    #[test]
    fn an_excerpt_cut_in_an_upper_cased_key_leaves_nothing_of_it() {
        let r = Redactor::new();
        r.add_secret(KEY);
        let body = format!("did not match: {}", KEY.to_ascii_uppercase());
        for cut in 15..body.len() {
            let out = r.excerpt(body.as_bytes(), cut, true);
            let tail = out.trim_start_matches("did not match:").trim();
            assert!(tail == REDACTED || tail.len() < 3, "cut at {cut}: {out}");
        }
    }

    #[test]
    fn scrub_writer_scrubs_a_secret_across_a_line_break() {
        let r = Redactor::new();
        r.add_sign_command("sign --key k3y-value-1 \\\n  --hex");
        let mut w = ScrubWriter::new(Vec::new(), r);
        w.write_all(b"echoed: sign --key k3y-value-1 \\\n").unwrap();
        w.write_all(b"  --hex\n").unwrap();
        w.flush().unwrap();
        let out = String::from_utf8(w.into_inner()).unwrap();
        assert!(!out.contains("k3y-value-1"), "{out}");
        assert!(!out.contains("--hex"), "{out}");
        // The command, or its argument that looks like a credential (a secret of its own).
        assert!(
            out.contains(SIGN_COMMAND_LABEL) || out.contains(REDACTED),
            "{out}"
        );
    }

    #[test]
    fn scrub_writer_scrubs_whole_lines_split_across_writes() {
        let r = Redactor::new();
        r.add_secret("s3cr3t-value");
        let mut w = ScrubWriter::new(Vec::new(), r);
        w.write_all(b"a s3cr").unwrap();
        w.write_all(b"3t-value b\nc s3cr3t-").unwrap();
        w.write_all(b"value").unwrap();
        w.flush().unwrap();
        assert_eq!(
            String::from_utf8(w.into_inner()).unwrap(),
            "a <redacted> b\nc <redacted>"
        );
    }
}
