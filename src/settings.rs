//! Turns target flags and `MALLCHECK_*` variables into validated settings: base URL, identity,
//! signer, client limits and the variables case files may use.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::Duration;

use crate::cli::{ColorChoice, SignerArg, TargetArgs};
use crate::error::UsageError;
use crate::profile::{self, Profile};
use crate::runner::client::ClientOptions;
use crate::runner::discover::{
    MALL_SIGNATURE_SENTINEL, MALL_SIGNATURE_VAR, MALL_SN_SENTINEL, MALL_SN_VAR,
};
use crate::server::{self, RunningServer, ServerOptions, data};
use crate::sign::{Signer, SignerKind};

/// Variable holding the signing key; read from the environment only.
pub const SIGN_KEY_VAR: &str = "MALLCHECK_SIGN_KEY";
/// Variable holding the command of the `command` signer.
pub const SIGN_COMMAND_VAR: &str = "MALLCHECK_SIGN_COMMAND";
/// A merchant id no service should know (for `ownership.unknown-merchant`).
pub const UNKNOWN_MERCHANT_ID: &str = "00000000-0000-4000-8000-00000000dead";

/// Who we are to the service and how we sign.
#[derive(Debug, Clone)]
pub struct Target {
    /// Base URL, or None for the embedded server.
    pub base_url: Option<String>,
    /// Application id.
    pub appid: String,
    /// The signer (its key never leaves it).
    pub signer: Signer,
    /// Client limits.
    pub client: ClientOptions,
    /// Case-file variables.
    pub vars: BTreeMap<String, String>,
    /// The profile the settings came from (empty without `--profile`).
    pub profile: Profile,
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
            appid: self.appid.clone(),
            ..ServerOptions::default()
        };
        let server = server::start(options)
            .await
            .map_err(|e| format!("cannot start the embedded reference server: {e}"))?;
        Ok((server.base_url(), Some(server)))
    }

    /// A first-page mall list request for the configured merchant (spec §4.1).
    pub fn first_page_body(&self, count: u64) -> serde_json::Value {
        let v = |k: &str| self.vars.get(k).cloned().unwrap_or_default();
        serde_json::json!({
            "appid": self.appid,
            "filter": {"seller": {
                "merchantId": v("MALLCHECK_MERCHANT_ID"),
                "merchantUserId": v("MALLCHECK_MERCHANT_USER_ID"),
                "role": v("MALLCHECK_ROLE"),
            }},
            "sort": {"sortField": "id", "sort": "DESC"},
            "cursor": {"cursorField": "id", "endCursor": null, "count": count},
        })
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
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

/// Validates the target flags, falling back on the profile (flags and `MALLCHECK_*` variables
/// win over it); `None` base URL means the embedded server with its identities.
pub fn resolve(args: &TargetArgs) -> Result<Target, UsageError> {
    let profile = profile::load(&args.config, args.profile.as_deref())?;
    let pick = |flag: &Option<String>, from_profile: &Option<String>| {
        flag.clone().or_else(|| from_profile.clone())
    };
    let timeout = args.timeout.or(profile.timeout).unwrap_or(10.0);
    if !(timeout.is_finite() && timeout > 0.0 && timeout <= 3600.0) {
        return Err(UsageError::setting(
            "--timeout",
            format!("{timeout} is not a number of seconds in (0, 3600]"),
            None,
        ));
    }
    if args.max_body < 1024 {
        return Err(UsageError::setting(
            "--max-body",
            "must be at least 1024 bytes",
            None,
        ));
    }
    let client = ClientOptions {
        timeout: Duration::from_secs_f64(timeout),
        max_body: args.max_body,
        follow_redirects: args.follow_redirects,
        ..ClientOptions::default()
    };
    let key_file = args
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
    let key = key_from_file.or_else(|| env(SIGN_KEY_VAR));
    let kind = match (args.signer, &profile.signer) {
        (Some(SignerArg::Md5), _) => SignerKind::Md5,
        (Some(SignerArg::HmacSha256), _) => SignerKind::HmacSha256,
        (Some(SignerArg::Static), _) => SignerKind::Static,
        (Some(SignerArg::Command), _) => SignerKind::Command,
        (None, Some(name)) => name
            .parse()
            .map_err(|e: String| UsageError::setting("signer (profile)", e, None))?,
        (None, None) => SignerKind::Md5,
    };
    let base_url = match pick(&args.base_url, &profile.base_url) {
        None => None,
        Some(raw) => Some(validate_base_url(&raw)?),
    };
    let embedded = base_url.is_none();
    let secret = if kind == SignerKind::Command {
        env(SIGN_COMMAND_VAR).ok_or_else(|| {
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
    let signer = Signer::new(kind, secret);
    let appid = pick(&args.appid, &profile.appid);
    let merchant_id = pick(&args.merchant_id, &profile.merchant_id);
    let merchant_user_id = pick(&args.merchant_user_id, &profile.merchant_user_id);
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
    let mut vars: BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("MALLCHECK_") && k != SIGN_KEY_VAR && k != SIGN_COMMAND_VAR)
        .collect();
    vars.insert("MALLCHECK_APPID".into(), appid.clone());
    vars.insert("MALLCHECK_MERCHANT_ID".into(), merchant_id);
    vars.insert("MALLCHECK_MERCHANT_USER_ID".into(), merchant_user_id);
    let role = pick(&args.role, &profile.role).unwrap_or_else(|| "super_admin".to_string());
    vars.insert("MALLCHECK_ROLE".into(), role);
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
    let other_id = profile.other_merchant_id.clone().unwrap_or(other_id);
    let other_user = profile.other_merchant_user_id.clone().unwrap_or(other_user);
    vars.entry("MALLCHECK_OTHER_MERCHANT_ID".into())
        .or_insert(other_id);
    vars.entry("MALLCHECK_OTHER_MERCHANT_USER_ID".into())
        .or_insert(other_user);
    vars.entry("MALLCHECK_UNKNOWN_MERCHANT_ID".into())
        .or_insert_with(|| UNKNOWN_MERCHANT_ID.to_string());
    vars.entry(MALL_SN_VAR.into())
        .or_insert_with(|| MALL_SN_SENTINEL.to_string());
    vars.entry(MALL_SIGNATURE_VAR.into())
        .or_insert_with(|| MALL_SIGNATURE_SENTINEL.to_string());
    Ok(Target {
        base_url,
        appid,
        signer,
        client,
        vars,
        profile,
    })
}

fn validate_base_url(raw: &str) -> Result<String, UsageError> {
    let parsed = url::Url::parse(raw).map_err(|e| {
        UsageError::setting(
            "--base-url",
            format!("`{raw}` is not a URL ({e})"),
            Some("e.g. --base-url https://staging.example.com"),
        )
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(UsageError::setting(
            "--base-url",
            format!("`{raw}` is not an http(s) URL with a host"),
            None,
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(UsageError::setting(
            "--base-url",
            "must not carry credentials",
            Some("authentication goes through the signer"),
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

/// Whether to colour stdout.
pub fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}
