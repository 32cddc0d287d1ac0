//! The `echo-signature` fault: a refusal that quotes the request's signature in one of the
//! spellings a service, a proxy or an error page gives it (another letter case, escaped character
//! by character, in wrapped base64, broken by a line). With `--signer static` the signature is
//! the key, so each spelling is one way a key leaks into a client's reports. Each refusal begins
//! with a raw right-to-left override ([`RLO`]).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// A right-to-left override, raw, first in every refusal: a hostile service's way of making a
/// report read other than it is (a client must show it escaped).
pub const RLO: char = '\u{202e}';

/// How the refusal spells the signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EchoForm {
    /// As sent, in a JSON message.
    Plain,
    /// Upper-cased.
    Upper,
    /// Lower-cased.
    Lower,
    /// Every character as a JSON `\uXXXX` escape.
    JsonU,
    /// Every byte as `%XX`.
    Percent,
    /// Every byte as an HTML numeric reference `&#NN;`.
    HtmlEntities,
    /// The request (Authorization line and body) in base64 wrapped at 76 characters, as a
    /// plain-text answer.
    MimeBase64,
    /// The same base64 in a JSON string, its line breaks escaped as `\r\n`.
    MimeBase64Json,
    /// With a line break after its 13th character.
    LineBreak,
    /// Its bytes in hex, as a byte dump shows them.
    Hex,
    /// Its bytes in upper-case hex (`%X`).
    HexUpper,
    /// The refusal's JSON in UTF-16 (little-endian), after a line of text: a NUL after every
    /// ASCII character, as a service whose encoding is misconfigured sends it.
    Utf16,
}

impl EchoForm {
    /// Every form, in the order of the bar of the secrets tests.
    pub const ALL: [EchoForm; 12] = [
        EchoForm::Plain,
        EchoForm::Upper,
        EchoForm::Lower,
        EchoForm::JsonU,
        EchoForm::Percent,
        EchoForm::HtmlEntities,
        EchoForm::MimeBase64,
        EchoForm::MimeBase64Json,
        EchoForm::LineBreak,
        EchoForm::Hex,
        EchoForm::HexUpper,
        EchoForm::Utf16,
    ];

    /// The name of the form in the fault's path: `/fault/echo-signature/NAME/...`.
    pub fn name(self) -> &'static str {
        match self {
            EchoForm::Plain => "plain",
            EchoForm::Upper => "upper",
            EchoForm::Lower => "lower",
            EchoForm::JsonU => "json-u",
            EchoForm::Percent => "percent",
            EchoForm::HtmlEntities => "html-entities",
            EchoForm::MimeBase64 => "mime-base64",
            EchoForm::MimeBase64Json => "mime-base64-json",
            EchoForm::LineBreak => "line-break",
            EchoForm::Hex => "hex",
            EchoForm::HexUpper => "hex-upper",
            EchoForm::Utf16 => "utf-16",
        }
    }

    /// The form of a name.
    pub fn from_name(name: &str) -> Option<EchoForm> {
        EchoForm::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The refusal quoting `authorization` (the header's value, `<appid> <signature>`) of a
    /// request with `body`: its content type and text.
    pub fn refusal(self, authorization: &str, body: &[u8]) -> (&'static str, String) {
        let signature = authorization
            .split_once(' ')
            .map_or(authorization, |(_, s)| s);
        let quoted = match self {
            EchoForm::Plain => json_text(signature),
            EchoForm::Upper => json_text(&signature.to_uppercase()),
            EchoForm::Lower => json_text(&signature.to_lowercase()),
            EchoForm::JsonU => signature
                .encode_utf16()
                .map(|u| format!("\\u{u:04x}"))
                .collect(),
            EchoForm::Percent => signature.bytes().map(|b| format!("%{b:02X}")).collect(),
            EchoForm::Hex => hex::encode(signature),
            EchoForm::HexUpper => hex::encode_upper(signature),
            EchoForm::HtmlEntities => signature
                .chars()
                .map(|c| format!("&#{};", c as u32))
                .collect(),
            EchoForm::MimeBase64 => {
                let text = format!(
                    "{RLO}the request signature did not match; the request was (base64):\r\n{}\r\n",
                    wrapped_base64(authorization, body, "\r\n")
                );
                return ("text/plain; charset=utf-8", text);
            }
            EchoForm::MimeBase64Json => wrapped_base64(authorization, body, "\\r\\n"),
            EchoForm::Utf16 => {
                let json = format!(
                    r#"{{"success":false,"code":"4010","msg":"{RLO}the request signature did not match: {}"}}"#,
                    json_text(signature)
                );
                // UTF-16LE of text whose every unit has both bytes below 0x80 (ASCII, and the
                // override's 0x202E) is valid UTF-8 too.
                let utf16: String = json
                    .encode_utf16()
                    .flat_map(|u| u.to_le_bytes())
                    .map(char::from)
                    .collect();
                let text = format!("the request signature did not match (UTF-16):\n{utf16}");
                return ("text/plain; charset=utf-16le", text);
            }
            EchoForm::LineBreak => {
                let at = signature
                    .char_indices()
                    .nth(13)
                    .map_or(signature.len(), |(i, _)| i);
                format!(
                    "{}\\n{}",
                    json_text(&signature[..at]),
                    json_text(&signature[at..])
                )
            }
        };
        let text = format!(
            r#"{{"success":false,"code":"4010","msg":"{RLO}the request signature did not match: {quoted}","data":null}}"#
        );
        ("application/json", text)
    }
}

/// `s` as the content of a JSON string.
fn json_text(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    quoted[1..quoted.len() - 1].to_string()
}

/// The request's Authorization line and body in base64, a line break every 76 characters.
fn wrapped_base64(authorization: &str, body: &[u8], line_break: &str) -> String {
    let mut request = format!("authorization: {authorization}\r\n\r\n").into_bytes();
    request.extend_from_slice(body);
    let encoded = STANDARD.encode(request);
    encoded
        .as_bytes()
        .chunks(76)
        .map(|line| String::from_utf8_lossy(line).into_owned())
        .collect::<Vec<_>>()
        .join(line_break)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_is_named_and_json_forms_are_json() {
        for form in EchoForm::ALL {
            assert_eq!(EchoForm::from_name(form.name()), Some(form));
            let (kind, text) = form.refusal("app Zq7Xw2Lp9Rt4Vb8Nc3Mk6Hj1Gf5Ds0Ay", b"{}");
            if kind == "application/json" {
                let v: serde_json::Value =
                    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", form.name()));
                assert_eq!(v["code"], "4010", "{}", form.name());
            }
        }
        let (_, text) = EchoForm::MimeBase64.refusal("app Zq7Xw2Lp9Rt4Vb8Nc3Mk6Hj1Gf5Ds0Ay", b"{}");
        assert!(text.lines().all(|l| l.len() <= 76), "{text}");
        let (_, text) = EchoForm::JsonU.refusal("app Zq7X", b"");
        assert!(text.contains(r"\u005a\u0071\u0037\u0058"), "{text}");
    }
}
