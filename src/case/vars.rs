//! `${NAME}` variables in case-file strings: the known names and the substitution rules.
//!
//! A scalar that is exactly `${NAME}` becomes the variable's value; elsewhere the reference is
//! replaced textually. `$${` writes a literal `${`.

use std::collections::BTreeMap;
use std::ops::Range;

/// Variables the application fills (from the environment, else the embedded server's defaults).
pub const KNOWN_VARS: &[&str] = &[
    "MALLCHECK_APPID",
    "MALLCHECK_MERCHANT_ID",
    "MALLCHECK_MERCHANT_USER_ID",
    "MALLCHECK_ROLE",
    "MALLCHECK_OTHER_MERCHANT_ID",
    "MALLCHECK_OTHER_MERCHANT_USER_ID",
    "MALLCHECK_UNKNOWN_MERCHANT_ID",
    "MALLCHECK_MALL_SN",
    "MALLCHECK_MALL_SIGNATURE",
];

/// The made-up `MALLCHECK_OTHER_MERCHANT_ID` of a remote target when none is configured: it
/// stands for "another merchant" in the no-data probes, and probes that need a real second
/// merchant (the cross-merchant cursor) are skipped for it.
pub const PLACEHOLDER_OTHER_MERCHANT_ID: &str = "00000000-0000-4000-8000-0000000000be";

/// A problem with a variable reference; `range` is a byte range inside the scalar's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarError {
    /// Byte range of the reference within the string value.
    pub range: Range<usize>,
    /// The variable name, when the reference is well-formed but undefined.
    pub undefined: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// Substitutes every `${NAME}` in `text`; returns the new text or every problem found.
pub fn substitute(text: &str, vars: &BTreeMap<String, String>) -> Result<String, Vec<VarError>> {
    if !text.contains('$') {
        return Ok(text.to_string());
    }
    let mut out = String::with_capacity(text.len());
    let mut errors = Vec::new();
    let mut rest = text;
    let mut base = 0;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        if let Some(tail) = after.strip_prefix("$${") {
            out.push_str("${");
            rest = tail;
            base += i + 3;
            continue;
        }
        if !after.starts_with("${") {
            out.push('$');
            rest = &after[1..];
            base += i + 1;
            continue;
        }
        let start = base + i;
        match after[2..].find('}') {
            None => {
                errors.push(VarError {
                    range: start..text.len(),
                    undefined: None,
                    message: "unterminated variable reference: `${` without `}`".to_string(),
                });
                rest = "";
                base = text.len();
            }
            Some(close) => {
                let name = &after[2..2 + close];
                let len = close + 3;
                if !is_var_name(name) {
                    errors.push(VarError {
                        range: start..start + len,
                        undefined: None,
                        message: format!("malformed variable reference `${{{name}}}`: a name is letters, digits and `_`"),
                    });
                } else if let Some(value) = vars.get(name) {
                    out.push_str(value);
                } else {
                    errors.push(VarError {
                        range: start..start + len,
                        undefined: Some(name.to_string()),
                        message: format!("undefined variable `{name}`"),
                    });
                }
                rest = &after[len..];
                base = start + len;
            }
        }
    }
    out.push_str(rest);
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> BTreeMap<String, String> {
        [("A", "1"), ("MALLCHECK_APPID", "app-9")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn substitutes_whole_and_embedded_references() {
        assert_eq!(
            substitute("${MALLCHECK_APPID}", &vars()),
            Ok("app-9".to_string())
        );
        assert_eq!(
            substitute("x-${A}-${A}y", &vars()),
            Ok("x-1-1y".to_string())
        );
        assert_eq!(
            substitute("no vars $ here", &vars()),
            Ok("no vars $ here".to_string())
        );
    }

    #[test]
    fn double_dollar_escapes_a_reference() {
        assert_eq!(
            substitute("$${A} and ${A}", &vars()),
            Ok("${A} and 1".to_string())
        );
    }

    #[test]
    fn undefined_variable_reports_its_range_and_name() {
        let errs = substitute("ab ${NOPE} ${A} ${ALSO}", &vars()).expect_err("undefined");
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].range, 3..10);
        assert_eq!(errs[0].undefined.as_deref(), Some("NOPE"));
        assert_eq!(errs[1].undefined.as_deref(), Some("ALSO"));
    }

    #[test]
    fn malformed_and_unterminated_references_are_errors() {
        assert!(substitute("${}", &vars()).is_err());
        assert!(substitute("${A B}", &vars()).is_err());
        let errs = substitute("x ${A", &vars()).expect_err("unterminated");
        assert_eq!(errs[0].range, 2..5);
    }
}
