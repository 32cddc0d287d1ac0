//! `mallcheck.toml` profiles: named environments (base URL, identity, signer, limits). Secrets
//! are never read from the file: the key comes from the environment or a key file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::diag::Diagnostic;
use crate::error::UsageError;
use crate::verdict::source::SourceFile;

/// One `[profile.NAME]` table.
#[derive(Debug, Default, Clone, Deserialize)]
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
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    profile: BTreeMap<String, Profile>,
}

/// Loads profile `name` from `path`; no name means no profile (the file is not read).
pub fn load(path: &Path, name: Option<&str>) -> Result<Profile, UsageError> {
    let Some(name) = name else {
        return Ok(Profile::default());
    };
    let text = std::fs::read_to_string(path).map_err(|source| UsageError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let file = Arc::new(SourceFile {
        path: path.to_path_buf(),
        text,
    });
    let config: ConfigFile = toml::from_str(&file.text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let message = plain_types(e.message().trim());
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
            Diagnostic::at(&file, span, message)
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
    if let (Some(key_file), Some(dir)) = (&profile.sign_key_file, path.parent())
        && key_file.is_relative()
    {
        profile.sign_key_file = Some(dir.join(key_file));
    }
    Ok(profile)
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
    fn a_named_profile_is_read_and_key_files_resolve_next_to_it() {
        let (_d, p) = write(
            "[profile.staging]\nbase_url = \"https://s.example\"\nsign_key_file = \"key.txt\"\nrate = 5.0\n",
        );
        let prof = load(&p, Some("staging")).unwrap();
        assert_eq!(prof.base_url.as_deref(), Some("https://s.example"));
        assert_eq!(
            prof.sign_key_file.unwrap(),
            p.parent().unwrap().join("key.txt")
        );
    }

    #[test]
    fn a_secret_in_the_profile_is_refused_with_its_line() {
        let (_d, p) = write("[profile.staging]\nappid = \"a\"\nsign_key = \"s3cret\"\n");
        let err = load(&p, Some("staging")).unwrap_err();
        let text = err.render(false);
        assert!(text.contains("mallcheck.toml:3:"), "{text}");
        assert!(text.contains("never read from the profile"), "{text}");
        assert!(!text.contains("s3cret"), "{text}");
    }

    #[test]
    fn an_unknown_profile_lists_the_known_ones() {
        let (_d, p) = write("[profile.a]\n[profile.b]\n");
        let text = load(&p, Some("c")).unwrap_err().render(false);
        assert!(text.contains("a, b"), "{text}");
    }
}
