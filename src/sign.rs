//! Request signers for the `Authorization: <appid> <signature>` header (spec §5).
//!
//! The spec does not show how the signature is computed, so the scheme is pluggable: `md5`
//! (lowercase hex md5 of the raw body bytes followed by the key; the default), `hmac-sha256`
//! (lowercase hex of HMAC-SHA256 over the body with the key), `static` (a fixed value) and
//! `command` (an external program reads the body on stdin and prints the signature).

use std::io::Write;
use std::process::{Command, Stdio};
use std::str::FromStr;

use hmac::{Hmac, Mac};
use md5::{Digest, Md5};
use sha2::Sha256;

use crate::redact::Secret;

/// Name of a signing scheme, as given by `--signer` / `MALLCHECK_SIGNER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignerKind {
    /// md5(body ++ key), lowercase hex.
    Md5,
    /// HMAC-SHA256(key, body), lowercase hex.
    HmacSha256,
    /// The key itself is the signature.
    Static,
    /// An external command prints the signature.
    Command,
}

impl FromStr for SignerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "md5" => Ok(SignerKind::Md5),
            "hmac-sha256" => Ok(SignerKind::HmacSha256),
            "static" => Ok(SignerKind::Static),
            "command" => Ok(SignerKind::Command),
            other => Err(format!(
                "unknown signer `{other}`; expected one of md5, hmac-sha256, static, command"
            )),
        }
    }
}

/// A configured signer. `Debug` never shows the key.
#[derive(Debug, Clone)]
pub enum Signer {
    /// md5(body ++ key).
    Md5 {
        /// Signing key.
        key: Secret,
    },
    /// HMAC-SHA256.
    HmacSha256 {
        /// Signing key.
        key: Secret,
    },
    /// A fixed signature.
    Static {
        /// The signature value.
        value: Secret,
    },
    /// `sh -c <command>` with the body on stdin.
    Command {
        /// Shell command line.
        command: String,
    },
}

/// Why a signature could not be computed.
#[derive(Debug, thiserror::Error)]
#[error("signer command `{command}` failed: {reason}")]
pub struct SignError {
    /// The command that failed.
    pub command: String,
    /// What went wrong.
    pub reason: String,
}

impl Signer {
    /// Builds a signer of `kind`; `secret` is the key (md5, hmac), the value (static) or the
    /// command line (command).
    pub fn new(kind: SignerKind, secret: String) -> Signer {
        match kind {
            SignerKind::Md5 => Signer::Md5 {
                key: Secret::new(secret),
            },
            SignerKind::HmacSha256 => Signer::HmacSha256 {
                key: Secret::new(secret),
            },
            SignerKind::Static => Signer::Static {
                value: Secret::new(secret),
            },
            SignerKind::Command => Signer::Command { command: secret },
        }
    }

    /// Computes the signature of a raw request body.
    pub fn sign(&self, body: &[u8]) -> Result<String, SignError> {
        match self {
            Signer::Md5 { key } => {
                let mut h = Md5::new();
                h.update(body);
                h.update(key.expose().as_bytes());
                Ok(hex::encode(h.finalize()))
            }
            Signer::HmacSha256 { key } => {
                let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key.expose().as_bytes())
                    .expect("HMAC accepts keys of any length");
                mac.update(body);
                Ok(hex::encode(mac.finalize().into_bytes()))
            }
            Signer::Static { value } => Ok(value.expose().to_string()),
            Signer::Command { command } => run_command(command, body),
        }
    }

    /// The scheme's name as `--signer` takes it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Signer::Md5 { .. } => "md5",
            Signer::HmacSha256 { .. } => "hmac-sha256",
            Signer::Static { .. } => "static",
            Signer::Command { .. } => "command",
        }
    }

    /// Whether the signature depends on the body: `static` gives the same value for every body,
    /// so moving it between bodies proves nothing (a `command` is assumed to depend on it).
    pub fn depends_on_body(&self) -> bool {
        !matches!(self, Signer::Static { .. })
    }

    /// Every secret this signer holds, for scrubbing free text.
    pub fn secrets(&self) -> Vec<&Secret> {
        match self {
            Signer::Md5 { key } | Signer::HmacSha256 { key } => vec![key],
            Signer::Static { value } => vec![value],
            Signer::Command { .. } => vec![],
        }
    }

    /// Builds the full `Authorization` header value.
    pub fn authorization(&self, appid: &str, body: &[u8]) -> Result<Secret, SignError> {
        Ok(Secret::new(format!("{appid} {}", self.sign(body)?)))
    }
}

fn run_command(command: &str, body: &[u8]) -> Result<String, SignError> {
    let fail = |reason: String| SignError {
        command: command.to_string(),
        reason,
    };
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(e.to_string()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(body).map_err(|e| fail(e.to_string()))?;
    }
    let out = child.wait_with_output().map_err(|e| fail(e.to_string()))?;
    if !out.status.success() {
        return Err(fail(format!("exit status {}", out.status)));
    }
    let sig = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if sig.is_empty() {
        return Err(fail("printed no signature".to_string()));
    }
    Ok(sig)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_is_body_then_key() {
        // md5("{}" ++ "k") computed independently with `printf '{}k' | md5sum`.
        let s = Signer::new(SignerKind::Md5, "k".into());
        assert_eq!(s.sign(b"{}").unwrap(), "e71dba8e493592c5fbe2085dde7abe1f");
    }

    #[test]
    fn command_signer_reads_stdin() {
        let s = Signer::new(SignerKind::Command, "tr a-z A-Z".into());
        assert_eq!(s.sign(b"abc").unwrap(), "ABC");
    }

    #[test]
    fn debug_hides_key() {
        let s = Signer::new(SignerKind::HmacSha256, "hidden-key".into());
        assert!(!format!("{s:?}").contains("hidden-key"));
    }
}
