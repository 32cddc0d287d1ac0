//! The settings of a target: flags, then `MALLCHECK_*` variables, then a profile of
//! `mallcheck.toml`, then defaults, validated into a [`Target`] (base URL, identity, signer,
//! client limits and the variables case files may use).

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::UsageError;
use crate::profile::{self, Profile};
use crate::redact::{self, MIN_SECRET_LEN};
use crate::server::{self, RunningServer, ServerOptions, data};
use crate::service::client::{Client, ClientOptions};
use crate::service::discover::{
    MALL_SIGNATURE_SENTINEL, MALL_SIGNATURE_VAR, MALL_SN_SENTINEL, MALL_SN_VAR,
};
use crate::service::politeness::DEFAULT_MAX_RETRY_WAIT;
use crate::sign::{Signer, SignerKind};

/// Variable holding the signing key; read from the environment only.
pub const SIGN_KEY_VAR: &str = "MALLCHECK_SIGN_KEY";
/// Variable holding the command of the `command` signer.
pub const SIGN_COMMAND_VAR: &str = "MALLCHECK_SIGN_COMMAND";
/// A merchant id no service should know (for `ownership.unknown-merchant`).
pub const UNKNOWN_MERCHANT_ID: &str = "00000000-0000-4000-8000-00000000dead";
/// Largest response body accepted when no flag says otherwise, in bytes.
pub const DEFAULT_MAX_BODY: usize = 16 * 1024 * 1024;

/// The target settings given on the command line, free of clap types (`cli.rs` converts).
/// `Debug` shows the base URL without its userinfo.
#[derive(Clone)]
pub struct Flags {
    /// Base URL of the service; none means the embedded reference server.
    pub base_url: Option<String>,
    /// Application id.
    pub appid: Option<String>,
    /// Merchant id of the seller identity.
    pub merchant_id: Option<String>,
    /// Merchant user id of the seller identity.
    pub merchant_user_id: Option<String>,
    /// Role of the seller identity.
    pub role: Option<String>,
    /// Signing scheme.
    pub signer: Option<SignerKind>,
    /// File holding the signing key.
    pub sign_key_file: Option<PathBuf>,
    /// Per-request deadline in seconds.
    pub timeout: Option<f64>,
    /// Longest total wait of one request for `Retry-After`, in seconds.
    pub max_retry_wait: Option<f64>,
    /// Largest response body accepted, in bytes.
    pub max_body: usize,
    /// Follow same-host redirects.
    pub follow_redirects: bool,
    /// Profile of the config file to apply.
    pub profile: Option<String>,
    /// Config file holding the profiles.
    pub config: PathBuf,
}

impl Default for Flags {
    fn default() -> Self {
        Flags {
            base_url: None,
            appid: None,
            merchant_id: None,
            merchant_user_id: None,
            role: None,
            signer: None,
            sign_key_file: None,
            timeout: None,
            max_retry_wait: None,
            max_body: DEFAULT_MAX_BODY,
            follow_redirects: false,
            profile: None,
            config: PathBuf::from("mallcheck.toml"),
        }
    }
}

impl fmt::Debug for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Flags")
            .field(
                "base_url",
                &self.base_url.as_deref().map(redact::url_for_display),
            )
            .field("appid", &self.appid)
            .field("merchant_id", &self.merchant_id)
            .field("merchant_user_id", &self.merchant_user_id)
            .field("role", &self.role)
            .field("signer", &self.signer)
            .field("sign_key_file", &self.sign_key_file)
            .field("timeout", &self.timeout)
            .field("max_retry_wait", &self.max_retry_wait)
            .field("max_body", &self.max_body)
            .field("follow_redirects", &self.follow_redirects)
            .field("profile", &self.profile)
            .field("config", &self.config)
            .finish()
    }
}

/// The `MALLCHECK_*` variables of the environment. `Debug` shows the signing key, the sign
/// command and every credential-like variable as `<redacted>`, and URLs without userinfo.
#[derive(Clone, Default)]
pub struct Env {
    vars: BTreeMap<String, String>,
}

impl fmt::Debug for Env {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&ShownVars(&self.vars), f)
    }
}

/// Variables as `Debug` shows them: the signing key, the sign command and every
/// credential-like variable (`*_TOKEN`, `*_PASSWORD`, ...) as `<redacted>`, URLs without
/// userinfo.
struct ShownVars<'a>(&'a BTreeMap<String, String>);

impl fmt::Debug for ShownVars<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = self.0.iter().map(|(name, value)| {
            let secret = name == SIGN_KEY_VAR
                || name == SIGN_COMMAND_VAR
                || redact::is_secret_header_name(name.trim_start_matches("MALLCHECK_"));
            let value = if secret {
                redact::REDACTED.to_string()
            } else if value.contains("://") {
                redact::url_for_display(value)
            } else {
                value.clone()
            };
            (name, value)
        });
        f.debug_map().entries(shown).finish()
    }
}

impl Env {
    /// The `MALLCHECK_*` variables of this process.
    pub fn from_process() -> Env {
        Env::from_pairs(std::env::vars())
    }

    /// The `MALLCHECK_*` variables among `pairs` (the others are ignored).
    pub fn from_pairs(pairs: impl IntoIterator<Item = (String, String)>) -> Env {
        Env {
            vars: pairs
                .into_iter()
                .filter(|(k, _)| k.starts_with("MALLCHECK_"))
                .collect(),
        }
    }

    /// A variable's value; an empty one counts as unset.
    pub fn get(&self, name: &str) -> Option<String> {
        self.vars.get(name).filter(|v| !v.is_empty()).cloned()
    }

    /// The variables case files may use: every one but the signing secrets.
    fn case_vars(&self) -> BTreeMap<String, String> {
        self.vars
            .iter()
            .filter(|(k, _)| *k != SIGN_KEY_VAR && *k != SIGN_COMMAND_VAR)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// Who mallcheck is to the service (spec §2.1), and the other merchants its probes use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Application id, in the body and the Authorization header.
    pub appid: String,
    /// Merchant id of the seller identity.
    pub merchant_id: String,
    /// Merchant user id of the seller identity.
    pub merchant_user_id: String,
    /// Role of the seller identity.
    pub role: String,
    /// Another merchant, for the seller-bound probe.
    pub other_merchant_id: String,
    /// That merchant's user.
    pub other_merchant_user_id: String,
    /// A merchant that does not exist, for `ownership.unknown-merchant`.
    pub unknown_merchant_id: String,
}

/// Who we are to the service and how we sign. `Debug` shows no secret (see [`Env`]).
#[derive(Clone)]
pub struct Target {
    /// Base URL, or None for the embedded server.
    pub base_url: Option<String>,
    /// Who we are to the service.
    pub identity: Identity,
    /// The signer (its key never leaves it).
    pub signer: Signer,
    /// Client limits.
    pub client: ClientOptions,
    /// Case-file variables.
    pub vars: BTreeMap<String, String>,
    /// The profile the settings came from (empty without `--profile`).
    pub profile: Profile,
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Target")
            .field(
                "base_url",
                &self.base_url.as_deref().map(redact::url_for_display),
            )
            .field("identity", &self.identity)
            .field("signer", &self.signer)
            .field("client", &self.client)
            .field("vars", &ShownVars(&self.vars))
            .field("profile", &self.profile)
            .finish()
    }
}

impl Target {
    /// The base URL to test: the given one, or that of the embedded reference server, started
    /// here with the same appid and signer (the caller shuts it down).
    pub async fn connect(&self) -> Result<(String, Option<RunningServer>), String> {
        if let Some(url) = &self.base_url {
            return Ok((url.clone(), None));
        }
        let options = ServerOptions {
            signer: self.signer.clone(),
            appid: self.identity.appid.clone(),
            ..ServerOptions::default()
        };
        let server = server::start(options)
            .await
            .map_err(|e| format!("cannot start the embedded reference server: {e}"))?;
        Ok((server.base_url(), Some(server)))
    }

    /// Runs `work` against the service to test: the given base URL, or the embedded reference
    /// server, started here and shut down when `work` ends. Err: the service could not be
    /// reached (the caller reports it; exit 1).
    pub async fn with_service<T>(&self, work: impl AsyncFnOnce(&str) -> T) -> Result<T, String> {
        let (base_url, server) = self.connect().await?;
        let out = work(&base_url).await;
        if let Some(server) = server {
            server.shutdown().await;
        }
        Ok(out)
    }

    /// A signing client for `base_url` with the target's limits.
    pub fn client(&self, base_url: &str) -> Result<Client, String> {
        Client::new(base_url, self.signer.clone(), self.client.clone()).map_err(|e| e.to_string())
    }

    /// A first-page mall list request for the configured merchant (spec §4.1).
    pub fn first_page_body(&self, count: u64) -> serde_json::Value {
        let id = &self.identity;
        serde_json::json!({
            "appid": id.appid,
            "filter": {"seller": {
                "merchantId": id.merchant_id,
                "merchantUserId": id.merchant_user_id,
                "role": id.role,
            }},
            "sort": {"sortField": "id", "sort": "DESC"},
            "cursor": {"cursorField": "id", "endCursor": null, "count": count},
        })
    }
}

fn required(value: Option<String>, flag: &str, var: &str) -> Result<String, UsageError> {
    value.ok_or_else(|| {
        UsageError::setting(
            flag,
            "is required with --base-url",
            Some(&format!("pass {flag} or set {var}")),
        )
    })
}

/// Resolves the flags against this process's `MALLCHECK_*` variables and the profile the flags
/// name.
pub fn from_process(flags: &Flags) -> Result<Target, UsageError> {
    let profile = profile::load(&flags.config, flags.profile.as_deref())?;
    resolve(flags, &Env::from_process(), profile)
}

/// Validates the settings: each comes from the flags, else the `MALLCHECK_*` variables, else
/// the profile, else a default. No base URL means the embedded server with its identities.
pub fn resolve(flags: &Flags, env: &Env, profile: Profile) -> Result<Target, UsageError> {
    let pick = |flag: &Option<String>, var: &str, from_profile: &Option<String>| {
        flag.clone()
            .or_else(|| env.get(var))
            .or_else(|| from_profile.clone())
    };
    let timeout = match (flags.timeout, env.get("MALLCHECK_TIMEOUT")) {
        (Some(t), _) => Some(t),
        (None, Some(text)) => Some(text.parse::<f64>().map_err(|_| {
            UsageError::setting(
                "MALLCHECK_TIMEOUT",
                format!("`{text}` is not a number of seconds"),
                None,
            )
        })?),
        (None, None) => None,
    };
    let timeout = timeout.or(profile.timeout).unwrap_or(10.0);
    if !(timeout.is_finite() && timeout > 0.0 && timeout <= 3600.0) {
        return Err(UsageError::setting(
            "--timeout",
            format!("{timeout} is not a number of seconds in (0, 3600]"),
            None,
        ));
    }
    let max_retry_wait = match (flags.max_retry_wait, env.get("MALLCHECK_MAX_RETRY_WAIT")) {
        (Some(w), _) => Some(w),
        (None, Some(text)) => Some(text.parse::<f64>().map_err(|_| {
            UsageError::setting(
                "MALLCHECK_MAX_RETRY_WAIT",
                format!("`{text}` is not a number of seconds"),
                None,
            )
        })?),
        (None, None) => None,
    };
    let max_retry_wait = max_retry_wait
        .or(profile.max_retry_wait)
        .unwrap_or(DEFAULT_MAX_RETRY_WAIT.as_secs_f64());
    if !(max_retry_wait.is_finite() && (0.0..=3600.0).contains(&max_retry_wait)) {
        return Err(UsageError::setting(
            "--max-retry-wait",
            format!("{max_retry_wait} is not a number of seconds in [0, 3600]"),
            None,
        ));
    }
    if flags.max_body < 1024 {
        return Err(UsageError::setting(
            "--max-body",
            "must be at least 1024 bytes",
            None,
        ));
    }
    let client = ClientOptions {
        timeout: Duration::from_secs_f64(timeout),
        max_body: flags.max_body,
        follow_redirects: flags.follow_redirects,
        max_retry_wait: Duration::from_secs_f64(max_retry_wait),
        ..ClientOptions::default()
    };
    let key_file = flags
        .sign_key_file
        .clone()
        .or_else(|| profile.sign_key_file.clone());
    let key_from_file = match &key_file {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|source| UsageError::Io {
                    path: path.clone(),
                    source,
                })?
                .trim_end_matches(['\n', '\r'])
                .to_string(),
        ),
        None => None,
    };
    // A line break at the end is the end of a file or of `echo`, never part of a key: it is
    // dropped from the variable as from the file, so the two sources agree.
    let key_source = if key_from_file.is_some() {
        "--sign-key-file (or sign_key_file)"
    } else {
        SIGN_KEY_VAR
    };
    let key = key_from_file.or_else(|| {
        env.get(SIGN_KEY_VAR)
            .map(|k| k.trim_end_matches(['\n', '\r']).to_string())
    });
    if key.as_deref() == Some("") {
        return Err(UsageError::setting(
            key_source,
            "holds an empty signing key",
            Some(
                "put the service's signing key there (a CI secret that was not passed on is often empty)",
            ),
        ));
    }
    // Even unused by the signer (a sign command may read it from the environment).
    if let Some(key) = &key {
        redact::global().add_secret(key);
    }
    let signer_name = env
        .get("MALLCHECK_SIGNER")
        .or_else(|| profile.signer.clone());
    let kind = match (flags.signer, signer_name) {
        (Some(kind), _) => kind,
        (None, Some(name)) => {
            let what = if env.get("MALLCHECK_SIGNER").is_some() {
                "MALLCHECK_SIGNER"
            } else {
                "signer (profile)"
            };
            name.parse()
                .map_err(|e: String| UsageError::setting(what, e, None))?
        }
        (None, None) => SignerKind::Md5,
    };
    // Through the command line, MALLCHECK_BASE_URL arrives as the flag.
    let url_source = if flags.base_url.is_some() {
        "--base-url".to_string()
    } else if env.get("MALLCHECK_BASE_URL").is_some() {
        "MALLCHECK_BASE_URL".to_string()
    } else {
        format!(
            "base_url (profile `{}`)",
            flags.profile.as_deref().unwrap_or_default()
        )
    };
    let base_url = match pick(&flags.base_url, "MALLCHECK_BASE_URL", &profile.base_url) {
        None => None,
        Some(raw) => Some(validate_base_url(&raw, &url_source)?),
    };
    let embedded = base_url.is_none();
    let secret = if kind == SignerKind::Command {
        env.get(SIGN_COMMAND_VAR).ok_or_else(|| {
            UsageError::setting(
                SIGN_COMMAND_VAR,
                "is not set",
                Some("the command signer runs it with the body on stdin"),
            )
        })?
    } else if let Some(key) = key {
        key
    } else if embedded && kind == SignerKind::Md5 {
        data::DEMO_SIGN_KEY.to_string()
    } else {
        return Err(UsageError::setting(
            SIGN_KEY_VAR,
            "is not set",
            Some("export the signing key in MALLCHECK_SIGN_KEY or pass --sign-key-file PATH"),
        ));
    };
    register_secrets(kind, &secret);
    let signer = Signer::new(kind, secret).with_timeout(client.timeout);
    let appid = pick(&flags.appid, "MALLCHECK_APPID", &profile.appid);
    let merchant_id = pick(
        &flags.merchant_id,
        "MALLCHECK_MERCHANT_ID",
        &profile.merchant_id,
    );
    let merchant_user_id = pick(
        &flags.merchant_user_id,
        "MALLCHECK_MERCHANT_USER_ID",
        &profile.merchant_user_id,
    );
    let (appid, merchant_id, merchant_user_id) = if embedded {
        (
            appid.unwrap_or_else(|| data::DEMO_APPID.to_string()),
            merchant_id.unwrap_or_else(|| data::MAIN.merchant_id.to_string()),
            merchant_user_id.unwrap_or_else(|| data::MAIN.merchant_user_id.to_string()),
        )
    } else {
        (
            required(appid, "--appid", "MALLCHECK_APPID")?,
            required(merchant_id, "--merchant-id", "MALLCHECK_MERCHANT_ID")?,
            required(
                merchant_user_id,
                "--merchant-user-id",
                "MALLCHECK_MERCHANT_USER_ID",
            )?,
        )
    };
    let role = pick(&flags.role, "MALLCHECK_ROLE", &profile.role)
        .unwrap_or_else(|| "super_admin".to_string());
    let (other_id, other_user) = if embedded {
        (
            data::OTHER.merchant_id.to_string(),
            data::OTHER.merchant_user_id.to_string(),
        )
    } else {
        (
            "00000000-0000-4000-8000-0000000000be".to_string(),
            "00000000-0000-4000-8000-0000000000ef".to_string(),
        )
    };
    let identity = Identity {
        appid,
        merchant_id,
        merchant_user_id,
        role,
        other_merchant_id: pick(
            &None,
            "MALLCHECK_OTHER_MERCHANT_ID",
            &profile.other_merchant_id,
        )
        .unwrap_or(other_id),
        other_merchant_user_id: pick(
            &None,
            "MALLCHECK_OTHER_MERCHANT_USER_ID",
            &profile.other_merchant_user_id,
        )
        .unwrap_or(other_user),
        unknown_merchant_id: env
            .get("MALLCHECK_UNKNOWN_MERCHANT_ID")
            .unwrap_or_else(|| UNKNOWN_MERCHANT_ID.to_string()),
    };
    let mut vars = env.case_vars();
    for (name, value) in [
        ("MALLCHECK_APPID", &identity.appid),
        ("MALLCHECK_MERCHANT_ID", &identity.merchant_id),
        ("MALLCHECK_MERCHANT_USER_ID", &identity.merchant_user_id),
        ("MALLCHECK_ROLE", &identity.role),
        ("MALLCHECK_OTHER_MERCHANT_ID", &identity.other_merchant_id),
        (
            "MALLCHECK_OTHER_MERCHANT_USER_ID",
            &identity.other_merchant_user_id,
        ),
        (
            "MALLCHECK_UNKNOWN_MERCHANT_ID",
            &identity.unknown_merchant_id,
        ),
    ] {
        vars.insert(name.to_string(), value.clone());
    }
    vars.entry(MALL_SN_VAR.into())
        .or_insert_with(|| MALL_SN_SENTINEL.to_string());
    vars.entry(MALL_SIGNATURE_VAR.into())
        .or_insert_with(|| MALL_SIGNATURE_SENTINEL.to_string());
    Ok(Target {
        base_url,
        identity,
        signer,
        client,
        vars,
        profile,
    })
}

/// Registers the key (or the sign command) with the run's redactor, and warns when the key is
/// too short to be scrubbed from what a service echoes back.
fn register_secrets(kind: SignerKind, secret: &str) {
    let redactor = redact::global();
    let registered = match kind {
        SignerKind::Command => {
            redactor.add_sign_command(secret);
            return;
        }
        SignerKind::Md5 | SignerKind::HmacSha256 | SignerKind::Static => {
            redactor.add_secret(secret)
        }
    };
    if !registered {
        let what = if kind == SignerKind::Static {
            "the static signature"
        } else {
            "the signing key"
        };
        eprintln!(
            "warning: {what} is shorter than {MIN_SECRET_LEN} characters: mallcheck cannot scrub it \
             from what a service echoes back (Authorization headers are still redacted); use a \
             longer key"
        );
    }
}

/// Checks a base URL from `source` (a flag or the profile). Its userinfo is never shown: a
/// `user:password@` is registered as a secret and masked in every message.
fn validate_base_url(raw: &str, source: &str) -> Result<String, UsageError> {
    redact::global().add_url_userinfo(raw);
    let shown = redact::url_for_display(raw);
    // `localhost:8080` parses as a URL of scheme `localhost`: suggest the scheme it lacks.
    let help = if raw.contains("://") {
        "e.g. --base-url https://staging.example.com".to_string()
    } else {
        format!("did you mean `http://{shown}`? (or `https://{shown}`)")
    };
    let parsed = url::Url::parse(raw).map_err(|e| {
        UsageError::setting(source, format!("`{shown}` is not a URL ({e})"), Some(&help))
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(UsageError::setting(
            source,
            format!("`{shown}` is not an http(s) URL with a host"),
            Some(&help),
        ));
    }
    // The Authorization header carries the signature (spec §5): there is no room for HTTP
    // basic credentials, and a URL is printed in every report.
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(UsageError::setting(
            source,
            format!("`{shown}` must not carry credentials"),
            Some("authentication goes through the signer; remove the user:password@ part"),
        ));
    }
    Ok(raw.trim_end_matches('/').to_string())
}

/// Whether a base URL points at this machine (no politeness limit is needed there).
pub fn is_loopback(base_url: &str) -> bool {
    url::Url::parse(base_url).is_ok_and(|u| match u.host() {
        Some(url::Host::Domain(d)) => d == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env::from_pairs(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    fn kind(signer: &Signer) -> SignerKind {
        match signer {
            Signer::Md5 { .. } => SignerKind::Md5,
            Signer::HmacSha256 { .. } => SignerKind::HmacSha256,
            Signer::Static { .. } => SignerKind::Static,
            Signer::Command { .. } => SignerKind::Command,
        }
    }

    fn remote(flags: Flags) -> Flags {
        Flags {
            base_url: Some("https://staging.example.com".into()),
            ..flags
        }
    }

    const KEY: (&str, &str) = ("MALLCHECK_SIGN_KEY", "k3y-from-env");

    #[test]
    fn debug_of_settings_holds_no_secret() {
        let secrets = ["k3y-from-env", "s3cret-cmd", "s3cret-pw", "tok3n-value"];
        let env = env(&[
            KEY,
            ("MALLCHECK_SIGN_COMMAND", "sign --key s3cret-cmd"),
            ("MALLCHECK_API_TOKEN", "tok3n-value"),
            ("MALLCHECK_BASE_URL", "https://u:s3cret-pw@h.example"),
            ("MALLCHECK_APPID", "app-shown"),
            ("MALLCHECK_MERCHANT_ID", "m"),
            ("MALLCHECK_MERCHANT_USER_ID", "u"),
            ("MALLCHECK_SIGNER", "command"),
        ]);
        let flags = Flags {
            base_url: Some("https://u:s3cret-pw@h.example".into()),
            ..Flags::default()
        };
        let profile = Profile {
            base_url: Some("https://u:s3cret-pw@h.example".into()),
            ..Profile::default()
        };
        let command = Signer::new(SignerKind::Command, "sign --key s3cret-cmd".into());
        let target = resolve(&remote(Flags::default()), &env, Profile::default())
            .unwrap_or_else(|e| panic!("{}", e.render(false)));
        assert_eq!(kind(&target.signer), SignerKind::Command);
        for (why, text) in [
            ("env", format!("{env:?}")),
            ("flags", format!("{flags:?}")),
            ("profile", format!("{profile:?}")),
            ("command signer", format!("{command:?}")),
            ("resolved target", format!("{target:?}")),
        ] {
            for secret in secrets {
                assert!(!text.contains(secret), "{why}: {secret} in {text}");
            }
        }
        assert!(format!("{env:?}").contains("app-shown"), "{env:?}");
        assert!(format!("{flags:?}").contains("https://<redacted>@h.example"));
    }

    #[test]
    fn flags_win_over_env_over_profile_over_defaults() {
        let profile = Profile {
            appid: Some("from-profile".into()),
            merchant_id: Some("m-profile".into()),
            merchant_user_id: Some("u-profile".into()),
            role: Some("role-profile".into()),
            timeout: Some(7.0),
            ..Profile::default()
        };
        let env = env(&[
            KEY,
            ("MALLCHECK_APPID", "from-env"),
            ("MALLCHECK_MERCHANT_ID", "m-env"),
            ("MALLCHECK_TIMEOUT", "3"),
        ]);
        let flags = remote(Flags {
            appid: Some("from-flag".into()),
            ..Flags::default()
        });
        let t = resolve(&flags, &env, profile).unwrap();
        let id = &t.identity;
        // why: the flag is given, so it wins over the variable and the profile.
        assert_eq!(id.appid, "from-flag");
        // why: no flag, so the variable wins over the profile.
        assert_eq!(id.merchant_id, "m-env");
        assert_eq!(t.client.timeout, Duration::from_secs(3));
        // why: neither flag nor variable, so the profile gives it.
        assert_eq!(id.merchant_user_id, "u-profile");
        assert_eq!(id.role, "role-profile");
        // why: nobody gives it, so the default holds.
        assert_eq!(id.unknown_merchant_id, UNKNOWN_MERCHANT_ID);
        assert_eq!(t.base_url.as_deref(), Some("https://staging.example.com"));
    }

    #[test]
    fn the_retry_wait_comes_from_the_flag_then_the_env_then_the_profile() {
        let profile = Profile {
            max_retry_wait: Some(7.0),
            ..Profile::default()
        };
        let wait = |flags: &Flags, env: &Env| {
            resolve(flags, env, profile.clone())
                .unwrap()
                .client
                .max_retry_wait
        };
        let env3 = env(&[("MALLCHECK_MAX_RETRY_WAIT", "3")]);
        let flag = Flags {
            max_retry_wait: Some(1.0),
            ..Flags::default()
        };
        assert_eq!(wait(&flag, &env3), Duration::from_secs(1));
        assert_eq!(wait(&Flags::default(), &env3), Duration::from_secs(3));
        assert_eq!(
            wait(&Flags::default(), &Env::default()),
            Duration::from_secs(7)
        );
    }

    #[test]
    fn defaults_apply_when_nothing_is_given() {
        let t = resolve(&Flags::default(), &Env::default(), Profile::default()).unwrap();
        assert_eq!(t.base_url, None, "no base URL means the embedded server");
        assert_eq!(t.identity.appid, data::DEMO_APPID);
        assert_eq!(t.identity.merchant_id, data::MAIN.merchant_id);
        assert_eq!(t.identity.role, "super_admin");
        assert_eq!(t.client.timeout, Duration::from_secs(10));
        assert_eq!(kind(&t.signer), SignerKind::Md5);
    }

    #[test]
    fn the_identity_reaches_case_variables_and_the_first_page() {
        let t = resolve(
            &remote(Flags {
                appid: Some("app".into()),
                merchant_id: Some("m".into()),
                merchant_user_id: Some("u".into()),
                ..Flags::default()
            }),
            &env(&[
                KEY,
                ("MALLCHECK_OTHER_MERCHANT_ID", "other"),
                ("MALLCHECK_X", "x"),
            ]),
            Profile::default(),
        )
        .unwrap();
        assert_eq!(t.vars["MALLCHECK_MERCHANT_ID"], "m");
        assert_eq!(t.vars["MALLCHECK_OTHER_MERCHANT_ID"], "other");
        assert_eq!(t.vars["MALLCHECK_X"], "x");
        assert!(
            !t.vars.contains_key(SIGN_KEY_VAR),
            "the key is no case variable"
        );
        let body = t.first_page_body(3);
        assert_eq!(body["filter"]["seller"]["merchantUserId"], "u");
        assert_eq!(body["cursor"]["count"], 3);
    }

    #[test]
    fn a_remote_target_needs_its_identity_and_key() {
        let err = resolve(&remote(Flags::default()), &env(&[KEY]), Profile::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("--appid"), "{err}");
        let flags = remote(Flags {
            appid: Some("a".into()),
            merchant_id: Some("m".into()),
            merchant_user_id: Some("u".into()),
            ..Flags::default()
        });
        let err = resolve(&flags, &Env::default(), Profile::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(SIGN_KEY_VAR), "{err}");
    }

    #[tokio::test]
    async fn a_key_ends_at_its_line_break_from_the_variable_as_from_the_file() {
        let flags = remote(Flags {
            appid: Some("a".into()),
            merchant_id: Some("m".into()),
            merchant_user_id: Some("u".into()),
            signer: Some(SignerKind::Static),
            ..Flags::default()
        });
        let with_newline = env(&[("MALLCHECK_SIGN_KEY", "k3y-from-env\r\n")]);
        let t = resolve(&flags, &with_newline, Profile::default()).unwrap();
        assert_eq!(t.signer.sign(b"{}").await.unwrap(), "k3y-from-env");
        let only_newline = env(&[("MALLCHECK_SIGN_KEY", "\n")]);
        let err = resolve(&flags, &only_newline, Profile::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("empty signing key"), "{err}");
        let file = tempfile::NamedTempFile::new().unwrap();
        let from_empty_file = Flags {
            sign_key_file: Some(file.path().to_path_buf()),
            ..flags
        };
        let err = resolve(&from_empty_file, &Env::default(), Profile::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("empty signing key"), "{err}");
    }

    #[test]
    fn a_signer_comes_from_the_flag_then_the_env_then_the_profile() {
        let profile = Profile {
            signer: Some("static".into()),
            ..Profile::default()
        };
        let pick =
            |flags: &Flags, env: &Env| kind(&resolve(flags, env, profile.clone()).unwrap().signer);
        let hmac = env(&[KEY, ("MALLCHECK_SIGNER", "hmac-sha256")]);
        let flag = Flags {
            signer: Some(SignerKind::Md5),
            ..Flags::default()
        };
        assert_eq!(pick(&flag, &hmac), SignerKind::Md5);
        assert_eq!(pick(&Flags::default(), &hmac), SignerKind::HmacSha256);
        assert_eq!(pick(&Flags::default(), &env(&[KEY])), SignerKind::Static);
    }
}
