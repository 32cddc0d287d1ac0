//! `mallcheck.toml` profiles: named environments (base URL, identity, signer, limits). Secrets
//! are never read from the file: the key comes from the environment or a key file.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use regex::Regex;
use serde::Deserialize;

use crate::diag::Diagnostic;
use crate::error::UsageError;
use crate::redact::{REDACTED, Redactor, is_secret_header_name, url_for_display};
use crate::verdict::source::SourceFile;

/// One `[profile.NAME]` table. `Debug` shows the base URL without its userinfo.
#[derive(Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Base URL of the service.
    pub base_url: Option<String>,
    /// Application id.
    pub appid: Option<String>,
    /// Merchant id of the seller identity.
    pub merchant_id: Option<String>,
    /// Merchant user id of the seller identity.
    pub merchant_user_id: Option<String>,
    /// Role of the seller identity.
    pub role: Option<String>,
    /// Another merchant, for the seller-bound probe.
    pub other_merchant_id: Option<String>,
    /// Another merchant's user.
    pub other_merchant_user_id: Option<String>,
    /// Signing scheme: md5, hmac-sha256, static or command.
    pub signer: Option<String>,
    /// File holding the signing key (relative to the config file).
    pub sign_key_file: Option<PathBuf>,
    /// PEM bundle of extra certificate authorities (relative to the config file).
    pub cacert: Option<PathBuf>,
    /// HTTP proxy of every request (`--proxy`), or `none`.
    pub proxy: Option<String>,
    /// Per-request deadline in seconds.
    pub timeout: Option<f64>,
    /// Longest total wait of one request for `Retry-After`, in seconds.
    pub max_retry_wait: Option<f64>,
    /// Requests per second.
    pub rate: Option<f64>,
    /// Cases run at once.
    pub jobs: Option<usize>,
    /// Complete walks and sweeps (`--exhaustive`).
    pub exhaustive: Option<bool>,
    /// Records walked at the smaller page sizes of a bounded run (`--walk-prefix`).
    pub walk_prefix: Option<usize>,
    /// An empty merchant is expected: a run that finds no mall may pass
    /// (`--allow-empty-merchant`).
    pub allow_empty_merchant: Option<bool>,
    /// Requests one products sweep may send, its walk of the list included (`--sweep-budget`).
    pub sweep_budget: Option<usize>,
}

impl fmt::Debug for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Profile")
            .field("base_url", &self.base_url.as_deref().map(url_for_display))
            .field("appid", &self.appid)
            .field("merchant_id", &self.merchant_id)
            .field("merchant_user_id", &self.merchant_user_id)
            .field("role", &self.role)
            .field("other_merchant_id", &self.other_merchant_id)
            .field("other_merchant_user_id", &self.other_merchant_user_id)
            .field("signer", &self.signer)
            .field("sign_key_file", &self.sign_key_file)
            .field("cacert", &self.cacert)
            .field("proxy", &self.proxy.as_deref().map(url_for_display))
            .field("timeout", &self.timeout)
            .field("max_retry_wait", &self.max_retry_wait)
            .field("rate", &self.rate)
            .field("jobs", &self.jobs)
            .field("exhaustive", &self.exhaustive)
            .field("walk_prefix", &self.walk_prefix)
            .field("allow_empty_merchant", &self.allow_empty_merchant)
            .field("sweep_budget", &self.sweep_budget)
            .finish()
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    profile: BTreeMap<String, Profile>,
}

/// The profile names a config file at `path` defines, when it is there and parses (empty
/// otherwise: a run that chose no profile does not read the file for its settings).
pub fn names(path: &Path) -> Vec<String> {
    let Ok(text) = crate::local_file::read_text(path, crate::local_file::Kind::Profile) else {
        return Vec::new();
    };
    toml::from_str::<ConfigFile>(&text)
        .map(|c| c.profile.into_keys().collect())
        .unwrap_or_default()
}

/// Loads profile `name` from `path`; no name means no profile (the file is not read). The
/// userinfo of every URL in the file is registered with `redactor` (the session's) before the
/// file is parsed, so that no message about it, a syntax error included, can show a password.
pub fn load(path: &Path, name: Option<&str>, redactor: &Redactor) -> Result<Profile, UsageError> {
    let Some(name) = name else {
        return Ok(Profile::default());
    };
    let text = crate::local_file::read_text(path, crate::local_file::Kind::Profile)?;
    for range in userinfo_ranges(&text) {
        let info = &text[range];
        redactor.add_secret(info);
        if let Some((user, password)) = info.split_once(':') {
            redactor.add_secret(user);
            redactor.add_secret(password);
        }
    }
    let file = Arc::new(SourceFile {
        path: path.to_path_buf(),
        text,
    });
    let config: ConfigFile = toml::from_str(&file.text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let hidden = secret_ranges(&file.text);
        let message = hide_in_message(&plain_types(e.message().trim()), &file.text, &hidden);
        let secret = ["sign_key`", "key`", "secret`", "signature`"]
            .iter()
            .any(|k| message.contains(k));
        // Never echo the source line of a secret: point at the line without showing it.
        let d = if secret {
            let (line, column) = file.line_col(span.start);
            Diagnostic::for_path(
                path,
                format!("{}:{line}:{column}: a secret in the profile", path.display()),
            )
            .with_help("secrets are never read from the profile: set MALLCHECK_SIGN_KEY or `sign_key_file`")
        } else {
            Diagnostic::at(&file, span, message).with_hidden(hidden)
        };
        UsageError::Config {
            path: path.to_path_buf(),
            diags: vec![d],
        }
    })?;
    let mut profile = config.profile.get(name).cloned().ok_or_else(|| {
        let known: Vec<&str> = config.profile.keys().map(String::as_str).collect();
        UsageError::setting(
            "--profile",
            format!("no profile `{name}` in {}", path.display()),
            Some(&format!("profiles there: {}", known.join(", "))),
        )
    })?;
    check_ranges(&profile).map_err(|(key, message)| {
        let what = format!("`{key}` of profile `{name}`");
        match value_span(&file.text, name, key) {
            // Pointed at in the file, as a parse error is.
            Some(span) => UsageError::Config {
                path: path.to_path_buf(),
                diags: vec![
                    Diagnostic::at(&file, span, format!("{what}: {message}"))
                        .with_hidden(secret_ranges(&file.text)),
                ],
            },
            None => UsageError::setting(format!("{what} in {}", path.display()), message, None),
        }
    })?;
    if let (Some(key_file), Some(dir)) = (&profile.sign_key_file, path.parent())
        && key_file.is_relative()
    {
        profile.sign_key_file = Some(dir.join(key_file));
    }
    if let (Some(cacert), Some(dir)) = (&profile.cacert, path.parent())
        && cacert.is_relative()
    {
        profile.cacert = Some(dir.join(cacert));
    }
    Ok(profile)
}

/// Where the value of `key` in profile `name` is written in `text` (a profile that parsed).
fn value_span(text: &str, name: &str, key: &str) -> Option<Range<usize>> {
    #[derive(serde::Deserialize)]
    struct Spans {
        #[serde(default)]
        profile: BTreeMap<String, BTreeMap<String, toml::Spanned<toml::Value>>>,
    }
    let spans: Spans = toml::from_str(text).ok()?;
    Some(spans.profile.get(name)?.get(key)?.span())
}

/// Checks the numbers of a profile against the ranges of their flags
/// ([`crate::flag_range`]): Err is the key and what is wrong.
fn check_ranges(p: &Profile) -> Result<(), (&'static str, String)> {
    use crate::flag_range::{self as range, check, check_rate};
    let seconds = |v: f64, zero: bool| {
        let low = if zero { 0.0 } else { range::MIN_SECONDS };
        if v.is_finite() && (low..=range::MAX_SECONDS).contains(&v) {
            Ok(())
        } else {
            Err(format!(
                "{v:e} is not a number of seconds in [{low}, {}]",
                range::MAX_SECONDS
            ))
        }
    };
    if let Some(v) = p.timeout {
        seconds(v, false).map_err(|m| ("timeout", m))?;
    }
    if let Some(v) = p.max_retry_wait {
        seconds(v, true).map_err(|m| ("max_retry_wait", m))?;
    }
    // 0 is unlimited.
    if let Some(v) = p.rate.filter(|v| *v != 0.0) {
        check_rate(v).map_err(|m| ("rate", m))?;
    }
    if let Some(v) = p.jobs {
        check(v as u64, &range::JOBS).map_err(|m| ("jobs", m))?;
    }
    if let Some(v) = p.walk_prefix {
        check(v as u64, &range::RECORDS).map_err(|m| ("walk_prefix", m))?;
    }
    Ok(())
}

/// A `key = value` pair of TOML, on its own line or in an inline table: the key (bare or
/// quoted) and the value up to the end of its string, or of a bare value.
static PAIR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"([A-Za-z0-9_.-]+|"[^"\n]*"|'[^'\n]*')[ \t]*=[ \t]*("(?:[^"\\\n]|\\.)*"?|'[^'\n]*'?|[^,}\s#]+)"#,
    )
    .expect("a valid pattern")
});

/// Byte ranges of the userinfo (`user:password`) of every URL-like text: from `://` to the
/// last `@` of the same line. A password may hold an unencoded `@ / # ?` or a space, which a
/// URL parser would take for the end of the userinfo: hiding up to the last `@` hides all of
/// it (and at worst a little more).
fn userinfo_ranges(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let mut from = 0;
        while let Some(i) = line[from..].find("://") {
            let start = from + i + 3;
            match line[start..].rfind('@') {
                Some(at) if at > 0 => {
                    out.push(line_start + start..line_start + start + at);
                    from = start + at + 1;
                }
                _ => break,
            }
        }
        line_start += line.len();
    }
    out
}

/// The profile keys whose values a diagnostic may quote (the base URL without its userinfo);
/// any other key's value is hidden, a key mallcheck does not know included.
const SHOWN_KEYS: &[&str] = &[
    "base_url",
    "appid",
    "merchant_id",
    "merchant_user_id",
    "role",
    "other_merchant_id",
    "other_merchant_user_id",
    "signer",
    "sign_key_file",
    "cacert",
    "timeout",
    "max_retry_wait",
    "rate",
    "jobs",
    "exhaustive",
    "walk_prefix",
    "allow_empty_merchant",
    "sweep_budget",
];

/// Byte ranges of a config file's text that a diagnostic must never quote: the userinfo of
/// every URL (`https://user:s3cret@host`), the value of every key whose name says it holds a
/// credential (`sign_key`, `token`, `password`, ...; a `*_file` key holds a path, not a
/// secret), the value of `proxy` and of every key not in [`SHOWN_KEYS`]. Sorted by start.
fn secret_ranges(text: &str) -> Vec<Range<usize>> {
    let mut ranges = userinfo_ranges(text);
    for pair in PAIR.captures_iter(text) {
        let (Some(key), Some(value)) = (pair.get(1), pair.get(2)) else {
            continue;
        };
        let key = key.as_str().trim_matches(['"', '\'']);
        // A proxy may be written `user:password@host` without a scheme: its whole value. A key
        // mallcheck does not know may hold anything (`sign_command = "sign.sh 'k3y'"`, `pw`):
        // its name is the error, its value is not shown.
        if (is_secret_header_name(key) && !key.ends_with("_file"))
            || key == "proxy"
            || !SHOWN_KEYS.contains(&key)
        {
            ranges.push(value.range());
        }
    }
    ranges.sort_by_key(|r| r.start);
    ranges
}

/// A parser message with every hidden value of `text` that it quotes replaced, and any URL
/// userinfo in it too (`invalid type: string "https://<redacted>@host"`).
fn hide_in_message(message: &str, text: &str, hidden: &[Range<usize>]) -> String {
    let mut out = message.to_string();
    for range in hidden {
        let value = text[range.clone()].trim_matches(['"', '\'']);
        if !value.is_empty() {
            out = out.replace(&format!("\"{value}\""), &format!("\"{REDACTED}\""));
        }
    }
    for range in userinfo_ranges(&out).into_iter().rev() {
        out.replace_range(range, REDACTED);
    }
    out
}

/// Rust type names in a deserializer message, said as a user would (`f64` is "a number").
fn plain_types(message: &str) -> String {
    let mut out = message.to_string();
    for (rust, plain) in [
        ("expected f64", "expected a number"),
        ("expected usize", "expected a whole number (0 or more)"),
        ("expected u64", "expected a whole number (0 or more)"),
        ("expected u32", "expected a whole number (0 or more)"),
        ("expected i64", "expected a whole number"),
        ("expected a borrowed string", "expected a string"),
    ] {
        out = out.replace(rust, plain);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mallcheck.toml");
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    #[test]
    fn a_named_profile_is_read_and_its_files_resolve_next_to_it() {
        let (_d, p) = write(
            "[profile.staging]\nbase_url = \"https://s.example\"\nsign_key_file = \"key.txt\"\nrate = 5.0\ncacert = \"ca.pem\"\n",
        );
        let prof = load(&p, Some("staging"), &Redactor::new()).unwrap();
        assert_eq!(prof.base_url.as_deref(), Some("https://s.example"));
        assert_eq!(
            prof.sign_key_file.unwrap(),
            p.parent().unwrap().join("key.txt")
        );
        assert_eq!(prof.cacert.unwrap(), p.parent().unwrap().join("ca.pem"));
    }

    #[test]
    fn a_secret_in_the_profile_is_refused_with_its_line() {
        let (_d, p) = write("[profile.staging]\nappid = \"a\"\nsign_key = \"s3cret\"\n");
        let err = load(&p, Some("staging"), &Redactor::new()).unwrap_err();
        let text = err.render(false);
        assert!(text.contains("mallcheck.toml:3:"), "{text}");
        assert!(text.contains("never read from the profile"), "{text}");
        assert!(!text.contains("s3cret"), "{text}");
    }

    #[test]
    fn a_syntax_error_never_quotes_a_url_password_or_a_key_like_value() {
        for (why, text, line) in [
            (
                "error on the next line, the URL line quoted as context",
                "[profile.s]\nbase_url = \"https://user:s3cret@h.example\"\ntimeout = 1x\n",
                "mallcheck.toml:3:",
            ),
            (
                "error on the URL line itself",
                "[profile.s]\nbase_url = \"https://user:s3cret@h.example\n",
                "mallcheck.toml:2:",
            ),
            (
                "the value in the parser's message",
                "[profile.s]\ntimeout = \"https://user:s3cret@h.example\"\n",
                "mallcheck.toml:2:",
            ),
            (
                "a key-like value next to the error",
                "[profile.s]\napi_token = \"s3cret-t0ken\"\nrate = [\n",
                "mallcheck.toml:",
            ),
            (
                "a key-like value in an inline table",
                "profile.s = { password = 's3cret', rate = 5x }\n",
                "mallcheck.toml:1:",
            ),
            (
                "a key mallcheck does not know, its value a command with a credential",
                "[profile.s]\nsign_command = \"/opt/sign.sh 's3cret'\"\n",
                "mallcheck.toml:2:",
            ),
            (
                "a key mallcheck does not know, named like no credential",
                "[profile.s]\npw = \"s3cret-value\"\n",
                "mallcheck.toml:2:",
            ),
        ] {
            let (_d, p) = write(text);
            let out = load(&p, Some("s"), &Redactor::new())
                .unwrap_err()
                .render(false);
            assert!(out.contains(line), "{why}:\n{out}");
            assert!(!out.contains("s3cret"), "{why}:\n{out}");
            assert!(out.contains(REDACTED), "{why}:\n{out}");
        }
    }

    #[test]
    fn secret_ranges_cover_userinfo_and_credential_values_only() {
        let text = "base_url = \"https://u:pw@h/x@y\"\nappid = \"app\"\nsign_key_file = \"k.txt\"\nx_api_key = abc\n";
        let hidden: Vec<&str> = secret_ranges(text).into_iter().map(|r| &text[r]).collect();
        // why: a password may hold an unencoded `@` or `/`: all up to the last `@` is hidden.
        assert_eq!(hidden, ["u:pw@h/x", "abc"]);
    }

    #[test]
    fn an_unknown_profile_lists_the_known_ones() {
        let (_d, p) = write("[profile.a]\n[profile.b]\n");
        let text = load(&p, Some("c"), &Redactor::new())
            .unwrap_err()
            .render(false);
        assert!(text.contains("a, b"), "{text}");
    }
}
