//! The only code that knows what a secret looks like: it hides signing keys and Authorization values.

use std::fmt;

/// Placeholder written wherever a secret was.
pub const REDACTED: &str = "<redacted>";

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

/// Headers whose whole value is secret.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
];

/// Redacts one header value for a record. `Authorization: <appid> <sig>` keeps the appid (not a
/// secret, and it helps to see which app was used) and hides the signature.
pub fn header_value(name: &str, value: &str) -> String {
    let lower = name.to_ascii_lowercase();
    if !SECRET_HEADERS.contains(&lower.as_str()) {
        return value.to_string();
    }
    if lower == "authorization"
        && let Some((appid, _sig)) = value.split_once(' ')
    {
        return format!("{appid} {REDACTED}");
    }
    REDACTED.to_string()
}

/// Replaces every occurrence of each known secret in `text` (defence in depth for free text such
/// as error messages or bodies that echo a header back).
pub fn scrub(text: &str, secrets: &[&Secret]) -> String {
    let mut out = text.to_string();
    for s in secrets {
        let v = s.expose();
        if v.len() >= 4 && out.contains(v) {
            out = out.replace(v, REDACTED);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorization_keeps_appid_and_hides_signature() {
        assert_eq!(
            header_value("Authorization", "app1 abcdef"),
            "app1 <redacted>"
        );
        assert_eq!(header_value("authorization", "tokenonly"), REDACTED);
        assert_eq!(
            header_value("Content-Type", "application/json"),
            "application/json"
        );
    }

    #[test]
    fn secret_debug_is_redacted() {
        let s = Secret::new("k3y-value");
        assert_eq!(format!("{s:?} {s}"), "<redacted> <redacted>");
    }

    #[test]
    fn scrub_removes_known_secrets() {
        let s = Secret::new("topsecret");
        assert_eq!(scrub("x topsecret y", &[&s]), "x <redacted> y");
    }
}
