//! The settings of a command: flags, then `MALLCHECK_*` variables, then a profile of
//! `mallcheck.toml`, then defaults, validated into [`Settings`] (base URL, identity, signer,
//! client limits, the run's pace and the variables case files may use), each value with where
//! it came from. The only reader of `MALLCHECK_*` variables ([`Env::from_process`]). Resolving
//! neither prints nor starts anything: the `Session` does.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::UsageError;
use crate::profile::Profile;
use crate::redact::{self, MIN_SECRET_LEN, Redactor};
use crate::server::data;
use crate::service::client::ClientOptions;
use crate::service::discover::{
    MALL_SIGNATURE_SENTINEL, MALL_SIGNATURE_VAR, MALL_SN_SENTINEL, MALL_SN_VAR,
};
use crate::service::politeness::DEFAULT_MAX_RETRY_WAIT;
use crate::service::proxy_route;
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
    /// PEM bundle of extra certificate authorities (`--cacert`).
    pub cacert: Option<PathBuf>,
    /// HTTP proxy (`--proxy`), or `none`.
    pub proxy: Option<String>,
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
    /// `--config` was given (not the default file): a profile must be chosen to read it.
    pub config_given: bool,
    /// Requests in flight (`run --jobs`).
    pub jobs: Option<usize>,
    /// Requests per second (`run --rate`).
    pub rate: Option<f64>,
    /// Cursor convention (`run --cursor`).
    pub cursor: Option<String>,
    /// Complete walks and sweeps (`run --exhaustive`).
    pub exhaustive: bool,
    /// Records walked at the smaller page sizes (`run --walk-prefix`).
    pub walk_prefix: Option<usize>,
    /// The long flags of every command (`strict`, `ci`, ...): a `MALLCHECK_*` variable named
    /// after one is a flag set the way settings are, which would silently not apply.
    pub command_flags: Vec<String>,
    /// `--ci`: the run is a pipeline's gate (as `CI` in the environment says).
    pub ci: bool,
    /// The command only lists what it would do (`list`): no request is sent, so which
    /// target a run would test does not matter.
    pub lists_only: bool,
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
            cacert: None,
            proxy: None,
            sign_key_file: None,
            timeout: None,
            max_retry_wait: None,
            max_body: DEFAULT_MAX_BODY,
            follow_redirects: false,
            profile: None,
            config: PathBuf::from("mallcheck.toml"),
            config_given: false,
            jobs: None,
            rate: None,
            cursor: None,
            exhaustive: false,
            walk_prefix: None,
            command_flags: Vec::new(),
            ci: false,
            lists_only: false,
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
            .field("cacert", &self.cacert)
            .field("proxy", &self.proxy.as_deref().map(redact::url_for_display))
            .field("timeout", &self.timeout)
            .field("max_retry_wait", &self.max_retry_wait)
            .field("max_body", &self.max_body)
            .field("follow_redirects", &self.follow_redirects)
            .field("profile", &self.profile)
            .field("config", &self.config)
            .field("jobs", &self.jobs)
            .field("rate", &self.rate)
            .field("cursor", &self.cursor)
            .field("exhaustive", &self.exhaustive)
            .field("walk_prefix", &self.walk_prefix)
            .finish()
    }
}

/// The `MALLCHECK_*` variables of the environment. `Debug` shows the signing key, the sign
/// command and every credential-like variable as `<redacted>`, and URLs without userinfo.
#[derive(Clone, Default)]
pub struct Env {
    vars: BTreeMap<String, String>,
    /// Names of the environment whose prefix is a misspelling of `MALLCHECK_` (`MALLCHEK_`,
    /// `mallcheck_`): none of them is read, so a setting among them would silently not apply.
    misspelt: Vec<String>,
    /// curl's proxy variables (`HTTP_PROXY`, `NO_PROXY`, ...: see `service::proxy_route`).
    proxies: BTreeMap<String, String>,
    /// Names of `MALLCHECK_*` variables whose value is not UTF-8: a usage error that names
    /// them, never their value (other variables are not mallcheck's to read).
    not_unicode: Vec<String>,
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

/// The base URL variable (`mallcheck snapshots` names a target by it, as `run` does).
pub const BASE_URL_VAR: &str = "MALLCHECK_BASE_URL";

/// The profile and base URL that select a snapshot target, for a command that talks to no
/// service (`mallcheck snapshots`): each flag, else its variable.
pub fn snapshot_selection(
    profile: Option<&str>,
    base_url: Option<&str>,
) -> (Option<String>, Option<String>) {
    let env = Env::from_process();
    (
        profile.map(str::to_string).or_else(|| env.get(PROFILE_VAR)),
        base_url
            .map(str::to_string)
            .or_else(|| env.get(BASE_URL_VAR)),
    )
}

impl Env {
    /// The `MALLCHECK_*` variables of this process.
    pub fn from_process() -> Env {
        // `std::env::vars` panics on a value that is not UTF-8, printing it: any variable of
        // the process (a cloud secret) would end the run and leak.
        let mut not_unicode = Vec::new();
        let pairs: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(name, value)| {
                let name = name.into_string().ok()?;
                match value.into_string() {
                    Ok(value) => Some((name, value)),
                    Err(_) => {
                        if name.starts_with("MALLCHECK_") {
                            not_unicode.push(name);
                        }
                        None
                    }
                }
            })
            .collect();
        Env {
            not_unicode,
            ..Env::from_pairs(pairs)
        }
    }

    /// The `MALLCHECK_*` variables and curl's proxy variables among `pairs` (the others are
    /// ignored).
    pub fn from_pairs(pairs: impl IntoIterator<Item = (String, String)>) -> Env {
        let mut vars = BTreeMap::new();
        let mut misspelt = Vec::new();
        let mut proxies = BTreeMap::new();
        for (name, value) in pairs {
            if name.starts_with("MALLCHECK_") {
                vars.insert(name, value);
            } else if proxy_route::VARS.contains(&name.as_str()) {
                proxies.insert(name, value);
            } else if misspelt_prefix(&name) {
                misspelt.push(name);
            }
        }
        Env {
            vars,
            misspelt,
            proxies,
            not_unicode: Vec::new(),
        }
    }

    /// A variable's value; an empty one counts as unset.
    pub fn get(&self, name: &str) -> Option<String> {
        self.vars.get(name).filter(|v| !v.is_empty()).cloned()
    }

    /// Whether `name` is set to nothing (or white space only).
    pub fn is_set_empty(&self, name: &str) -> bool {
        self.vars.get(name).is_some_and(|v| v.trim().is_empty())
    }

    /// The names of the variables set (empty ones included).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.vars.keys().map(String::as_str)
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

/// Where a setting's value came from, for messages (`--appid`, `MALLCHECK_APPID`,
/// `appid (profile `staging`)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A command-line flag.
    Flag(&'static str),
    /// A `MALLCHECK_*` variable.
    Env(&'static str),
    /// A key of the profile.
    Profile {
        /// The key.
        key: &'static str,
        /// The profile's name.
        profile: String,
    },
    /// Nobody gave it.
    Default,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Flag(flag) => f.write_str(flag),
            Source::Env(var) => f.write_str(var),
            Source::Profile { key, profile } => write!(f, "{key} (profile `{profile}`)"),
            Source::Default => f.write_str("the default"),
        }
    }
}

/// A setting a user can give as a flag, a `MALLCHECK_*` variable or a profile key.
struct Setting {
    key: &'static str,
    flag: &'static str,
    var: &'static str,
}

const BASE_URL: Setting = Setting {
    key: "base_url",
    flag: "--base-url",
    var: BASE_URL_VAR,
};
const APPID: Setting = Setting {
    key: "appid",
    flag: "--appid",
    var: "MALLCHECK_APPID",
};
const MERCHANT_ID: Setting = Setting {
    key: "merchant_id",
    flag: "--merchant-id",
    var: "MALLCHECK_MERCHANT_ID",
};
const MERCHANT_USER_ID: Setting = Setting {
    key: "merchant_user_id",
    flag: "--merchant-user-id",
    var: "MALLCHECK_MERCHANT_USER_ID",
};
const ROLE: Setting = Setting {
    key: "role",
    flag: "--role",
    var: "MALLCHECK_ROLE",
};
const SIGNER: Setting = Setting {
    key: "signer",
    flag: "--signer",
    var: "MALLCHECK_SIGNER",
};
const TIMEOUT: Setting = Setting {
    key: "timeout",
    flag: "--timeout",
    var: "MALLCHECK_TIMEOUT",
};
const MAX_RETRY_WAIT: Setting = Setting {
    key: "max_retry_wait",
    flag: "--max-retry-wait",
    var: "MALLCHECK_MAX_RETRY_WAIT",
};
const JOBS: Setting = Setting {
    key: "jobs",
    flag: "--jobs",
    var: "MALLCHECK_JOBS",
};
const RATE: Setting = Setting {
    key: "rate",
    flag: "--rate",
    var: "MALLCHECK_RATE",
};
const CACERT: Setting = Setting {
    key: "cacert",
    flag: "--cacert",
    var: "MALLCHECK_CACERT",
};
const PROXY: Setting = Setting {
    key: "proxy",
    flag: "--proxy",
    var: "MALLCHECK_PROXY",
};
const OTHER_MERCHANT_ID: Setting = Setting {
    key: "other_merchant_id",
    flag: "MALLCHECK_OTHER_MERCHANT_ID",
    var: "MALLCHECK_OTHER_MERCHANT_ID",
};
const OTHER_MERCHANT_USER_ID: Setting = Setting {
    key: "other_merchant_user_id",
    flag: "MALLCHECK_OTHER_MERCHANT_USER_ID",
    var: "MALLCHECK_OTHER_MERCHANT_USER_ID",
};

/// Every `MALLCHECK_*` variable mallcheck reads as a setting; any other one is only a case-file
/// variable (`${MALLCHECK_...}`), and one close to these names is taken for a typo.
pub const KNOWN_VARS: &[&str] = &[
    BASE_URL.var,
    APPID.var,
    MERCHANT_ID.var,
    MERCHANT_USER_ID.var,
    ROLE.var,
    SIGNER.var,
    SIGN_KEY_VAR,
    SIGN_COMMAND_VAR,
    CACERT.var,
    PROXY.var,
    TIMEOUT.var,
    MAX_RETRY_WAIT.var,
    PROFILE_VAR,
    JOBS.var,
    RATE.var,
    CURSOR_VAR,
    OTHER_MERCHANT_ID.var,
    OTHER_MERCHANT_USER_ID.var,
    UNKNOWN_MERCHANT_ID_VAR,
    MALL_SN_VAR,
    MALL_SIGNATURE_VAR,
];

/// Variable naming the profile.
pub const PROFILE_VAR: &str = "MALLCHECK_PROFILE";
/// Variable holding the cursor convention (`--cursor`).
pub const CURSOR_VAR: &str = "MALLCHECK_CURSOR";
/// Variable holding a merchant that does not exist.
pub const UNKNOWN_MERCHANT_ID_VAR: &str = "MALLCHECK_UNKNOWN_MERCHANT_ID";

/// The resolved settings of a command: who we are to the service, how we sign, the client's
/// limits, the run's pace, and where each value came from. `Debug` shows no secret (see
/// [`Env`]).
#[derive(Clone)]
pub struct Settings {
    /// Base URL, or None for the embedded server.
    pub base_url: Option<String>,
    /// Who we are to the service.
    pub identity: Identity,
    /// The signer (its key never leaves it).
    pub signer: Signer,
    /// Client limits (the rate is the run's to set, see [`Settings::run_rate`]).
    pub client: ClientOptions,
    /// Case-file variables.
    pub vars: BTreeMap<String, String>,
    /// The name of the profile the settings came from, if any.
    pub profile_name: Option<String>,
    /// Requests in flight (`--jobs`, `MALLCHECK_JOBS`, profile `jobs`).
    pub jobs: Option<usize>,
    /// Requests per second (`--rate`, `MALLCHECK_RATE`, profile `rate`).
    pub rate: Option<f64>,
    /// Cursor convention (`--cursor`, `MALLCHECK_CURSOR`).
    pub cursor: Option<String>,
    /// Complete walks and sweeps (`--exhaustive`, profile `exhaustive`).
    pub exhaustive: bool,
    /// Records walked at the smaller page sizes (`--walk-prefix`, profile `walk_prefix`).
    pub walk_prefix: Option<usize>,
    /// An empty merchant is expected (profile `allow_empty_merchant`; `run` adds its flag).
    pub allow_empty_merchant: bool,
    /// Requests one products sweep may send (profile `sweep_budget`; `run`'s flag wins).
    pub sweep_budget: Option<usize>,
    /// Where each setting came from, by profile key (`base_url`, `appid`, ...).
    pub sources: BTreeMap<&'static str, Source>,
    /// What the user should hear about the settings (a key too short to scrub); the caller
    /// prints them (resolving never prints).
    pub warnings: Vec<String>,
    /// The long flags of mallcheck's commands ([`Flags::command_flags`]).
    pub command_flags: Vec<String>,
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field(
                "base_url",
                &self.base_url.as_deref().map(redact::url_for_display),
            )
            .field("identity", &self.identity)
            .field("signer", &self.signer)
            .field("client", &self.client)
            .field("vars", &ShownVars(&self.vars))
            .field("profile_name", &self.profile_name)
            .field("jobs", &self.jobs)
            .field("rate", &self.rate)
            .field("cursor", &self.cursor)
            .field("exhaustive", &self.exhaustive)
            .field("walk_prefix", &self.walk_prefix)
            .field("allow_empty_merchant", &self.allow_empty_merchant)
            .field("sweep_budget", &self.sweep_budget)
            .field("sources", &self.sources)
            .finish()
    }
}

/// Requests per second toward a remote host when neither `--rate` nor the profile sets one.
pub const DEFAULT_REMOTE_RATE: f64 = 10.0;

impl Settings {
    /// Where `key` (a profile key: `base_url`, `appid`, ...) came from.
    pub fn source(&self, key: &str) -> Source {
        self.sources.get(key).cloned().unwrap_or(Source::Default)
    }

    /// The rate of a `run`: the one given, else 10/s toward a remote host (conservative
    /// toward shared servers), else none (our own loopback server needs no protection).
    /// An explicit 0 is no limit, as `--rate 0` has always been.
    pub fn run_rate(&self) -> Option<f64> {
        match self.rate {
            Some(r) if r > 0.0 => Some(r),
            Some(_) => None,
            None => {
                let remote = self.base_url.as_deref().is_some_and(|u| !is_loopback(u));
                remote.then_some(DEFAULT_REMOTE_RATE)
            }
        }
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

impl Setting {
    /// How to give the setting: `pass --appid, or set MALLCHECK_APPID (or `appid` in the
    /// profile)`.
    fn how(&self) -> String {
        format!(
            "pass {}, or set {} (or `{}` in the profile)",
            self.flag, self.var, self.key
        )
    }
}

/// One usage error naming every missing setting of a remote target (`(name, how to give
/// it)`), each on its own help line.
fn missing_settings(missing: &[(&str, String)]) -> UsageError {
    let names: Vec<&str> = missing.iter().map(|(name, _)| *name).collect();
    let message = if missing.len() == 1 {
        "is required with a base URL, and not set".to_string()
    } else {
        format!(
            "are required with a base URL, and not set ({} settings)",
            missing.len()
        )
    };
    let help: Vec<&str> = missing.iter().map(|(_, how)| how.as_str()).collect();
    UsageError::setting(names.join(", "), message, Some(&help.join("\n        ")))
}

fn required(value: Option<String>, setting: &Setting) -> Result<String, UsageError> {
    value.ok_or_else(|| {
        UsageError::setting(
            setting.flag,
            "is required with a base URL",
            Some(&setting.how()),
        )
    })
}

/// Picks each setting from the flags, else the environment, else the profile, and remembers
/// where it came from.
struct Resolver<'a> {
    env: &'a Env,
    profile_name: Option<String>,
    sources: BTreeMap<&'static str, Source>,
}

impl Resolver<'_> {
    fn source_of(&self, key: &str) -> Source {
        self.sources.get(key).cloned().unwrap_or(Source::Default)
    }

    fn note(&mut self, setting: &Setting, source: Source) {
        self.sources.insert(setting.key, source);
    }

    fn profile_source(&self, key: &'static str) -> Source {
        Source::Profile {
            key,
            profile: self.profile_name.clone().unwrap_or_default(),
        }
    }

    /// A text setting.
    fn text(
        &mut self,
        setting: &Setting,
        flag: &Option<String>,
        profile: &Option<String>,
    ) -> Option<String> {
        if let Some(v) = flag {
            self.note(setting, Source::Flag(setting.flag));
            return Some(v.clone());
        }
        if let Some(v) = self.env.get(setting.var) {
            self.note(setting, Source::Env(setting.var));
            return Some(v);
        }
        let v = profile.clone()?;
        let source = self.profile_source(setting.key);
        self.note(setting, source);
        Some(v)
    }

    /// A number setting; a variable that is no number is a usage error naming it.
    fn number<T: std::str::FromStr + Copy>(
        &mut self,
        setting: &Setting,
        flag: Option<T>,
        profile: Option<T>,
        what: &str,
    ) -> Result<Option<T>, UsageError> {
        if let Some(v) = flag {
            self.note(setting, Source::Flag(setting.flag));
            return Ok(Some(v));
        }
        if let Some(text) = self.env.get(setting.var) {
            let v = text.trim().parse::<T>().map_err(|_| {
                UsageError::setting(setting.var, format!("`{text}` is not {what}"), None)
            })?;
            self.note(setting, Source::Env(setting.var));
            return Ok(Some(v));
        }
        let Some(v) = profile else {
            return Ok(None);
        };
        let source = self.profile_source(setting.key);
        self.note(setting, source);
        Ok(Some(v))
    }
}

/// Validates the settings: each comes from the flags, else the `MALLCHECK_*` variables, else
/// the profile, else a default. No base URL means the embedded server with its identities.
/// Every secret met on the way (the key, the sign command, a URL's userinfo) is registered
/// with `redactor`, the session's, before any message could quote it.
/// The proxy of the requests to `base_url` (`service::proxy_route`): `--proxy` and its
/// variable and profile key, else curl's variables. The userinfo of every proxy URL there is
/// registered as a secret first, so that no message can show a proxy's password.
fn resolve_proxy(
    r: &mut Resolver<'_>,
    flags: &Flags,
    profile: &Profile,
    env: &Env,
    base_url: Option<&str>,
    redactor: &Redactor,
) -> Result<Option<crate::redact::Secret>, UsageError> {
    let given = r.text(&PROXY, &flags.proxy, &profile.proxy);
    let mut seen: Vec<&str> = env.proxies.values().map(String::as_str).collect();
    seen.extend(given.as_deref());
    for value in seen {
        let url = proxy_route::parse(value).unwrap_or_else(|_| value.to_string());
        redactor.add_url_userinfo(&url);
    }
    let given = match given {
        None => None,
        Some(p) if p.trim().eq_ignore_ascii_case(proxy_route::NONE) => {
            Some(proxy_route::NONE.to_string())
        }
        Some(p) => Some(
            proxy_route::parse(&p)
                .map_err(|e| UsageError::setting(r.source_of(PROXY.key).to_string(), e, None))?,
        ),
    };
    let Some(base_url) = base_url else {
        return Ok(None);
    };
    let route =
        proxy_route::route(base_url, given.as_deref(), &env.proxies).map_err(|(var, e)| {
            UsageError::setting(
                var,
                e,
                Some("give the proxy as http://HOST:PORT, or --proxy none to send directly"),
            )
        })?;
    Ok(route.map(crate::redact::Secret::new))
}

pub fn resolve(
    flags: &Flags,
    env: &Env,
    profile: Profile,
    redactor: &Redactor,
) -> Result<Settings, UsageError> {
    if !env.not_unicode.is_empty() {
        return Err(UsageError::setting(
            env.not_unicode.join(", "),
            "holds bytes that are not UTF-8 text (its value is not shown)",
            Some("set it to text: a key of other bytes goes in a file, --sign-key-file"),
        ));
    }
    let mut r = Resolver {
        env,
        profile_name: flags.profile.clone().or_else(|| env.get(PROFILE_VAR)),
        sources: BTreeMap::new(),
    };
    let mut warnings = Vec::new();
    let timeout = r
        .number(
            &TIMEOUT,
            flags.timeout,
            profile.timeout,
            "a number of seconds",
        )?
        .unwrap_or(10.0);
    let (shortest, longest) = (
        crate::flag_range::MIN_SECONDS,
        crate::flag_range::MAX_SECONDS,
    );
    if !(timeout.is_finite() && (shortest..=longest).contains(&timeout)) {
        return Err(UsageError::setting(
            r.source_of("timeout").to_string(),
            format!(
                "{} is not a number of seconds in [{shortest}, {longest}]",
                crate::flag_range::show(timeout)
            ),
            None,
        ));
    }
    let max_retry_wait = r
        .number(
            &MAX_RETRY_WAIT,
            flags.max_retry_wait,
            profile.max_retry_wait,
            "a number of seconds",
        )?
        .unwrap_or(DEFAULT_MAX_RETRY_WAIT.as_secs_f64());
    if !(max_retry_wait.is_finite() && (0.0..=3600.0).contains(&max_retry_wait)) {
        return Err(UsageError::setting(
            r.source_of("max_retry_wait").to_string(),
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
    let jobs = r.number(&JOBS, flags.jobs, profile.jobs, "a whole number")?;
    if let Some(Err(message)) =
        jobs.map(|j| crate::flag_range::check(j as u64, &crate::flag_range::JOBS))
    {
        return Err(UsageError::setting(
            r.source_of("jobs").to_string(),
            message,
            None,
        ));
    }
    let rate = r.number(
        &RATE,
        flags.rate,
        profile.rate,
        "a number of requests per second",
    )?;
    // 0 is unlimited; any other rate within `flag_range::RATE`.
    if let Some(Err(message)) = rate
        .filter(|r| *r != 0.0)
        .map(crate::flag_range::check_rate)
    {
        return Err(UsageError::setting(
            r.source_of("rate").to_string(),
            message,
            None,
        ));
    }
    let cacert_path = r.text(
        &CACERT,
        &flags.cacert.as_ref().map(|p| p.display().to_string()),
        &profile.cacert.as_ref().map(|p| p.display().to_string()),
    );
    let cacert = match cacert_path {
        Some(path) => Some(
            crate::tls::read_cacert(std::path::Path::new(&path))
                .map_err(|e| UsageError::setting(r.source_of(CACERT.key).to_string(), e, None))?,
        ),
        None => None,
    };
    let mut client = ClientOptions {
        cacert,
        timeout: Duration::from_secs_f64(timeout),
        max_body: flags.max_body,
        follow_redirects: flags.follow_redirects,
        max_retry_wait: Duration::from_secs_f64(max_retry_wait),
        ..ClientOptions::default()
    };
    let key_file = match (&flags.sign_key_file, &profile.sign_key_file) {
        (Some(path), _) => Some((path.clone(), Source::Flag("--sign-key-file"))),
        (None, Some(path)) => Some((path.clone(), r.profile_source("sign_key_file"))),
        (None, None) => None,
    };
    let key_from_file = match &key_file {
        Some((path, _)) => Some(
            // A byte order mark is an editor's (Notepad's), never part of a key.
            crate::local_file::read_text(path, crate::local_file::Kind::SignKey)?
                .trim_start_matches('\u{feff}')
                .trim_end_matches(['\n', '\r'])
                .to_string(),
        ),
        None => None,
    };
    // A line break at the end is the end of a file or of `echo`, never part of a key: it is
    // dropped from the variable as from the file, so the two sources agree.
    let key_source = match &key_file {
        Some((_, source)) => source.clone(),
        None => Source::Env(SIGN_KEY_VAR),
    };
    let key = key_from_file.or_else(|| {
        env.get(SIGN_KEY_VAR)
            .map(|k| k.trim_end_matches(['\n', '\r']).to_string())
    });
    if key.as_deref() == Some("") {
        return Err(UsageError::setting(
            key_source.to_string(),
            "holds an empty signing key",
            Some(
                "put the service's signing key there (a CI secret that was not passed on is often empty)",
            ),
        ));
    }
    // Even unused by the signer (a sign command may read it from the environment).
    if let Some(key) = &key {
        redactor.add_secret(key);
        // Blanks around a key are kept (a key may hold them), said, and the key without them
        // is a secret too: it is most likely the service's own.
        if key.trim() != key {
            redactor.add_secret(key.trim());
            warnings.push(format!(
                "{key_source}: the signing key begins or ends with a blank, which is signed \
                 with it (if the service's key has none, remove it)"
            ));
        }
    }
    let kind = match flags.signer {
        Some(kind) => {
            r.note(&SIGNER, Source::Flag(SIGNER.flag));
            kind
        }
        None => match r.text(&SIGNER, &None, &profile.signer) {
            Some(name) => name.parse().map_err(|e: String| {
                UsageError::setting(r.source_of("signer").to_string(), e, None)
            })?,
            None => SignerKind::Md5,
        },
    };
    let base_url = match r.text(&BASE_URL, &flags.base_url, &profile.base_url) {
        None => None,
        Some(raw) => Some(validate_base_url(
            &raw,
            &r.source_of("base_url").to_string(),
            redactor,
        )?),
    };
    let embedded = base_url.is_none();
    client.proxy = resolve_proxy(&mut r, flags, &profile, env, base_url.as_deref(), redactor)?;
    let appid = r.text(&APPID, &flags.appid, &profile.appid);
    let merchant_id = r.text(&MERCHANT_ID, &flags.merchant_id, &profile.merchant_id);
    let merchant_user_id = r.text(
        &MERCHANT_USER_ID,
        &flags.merchant_user_id,
        &profile.merchant_user_id,
    );
    if embedded {
        // Set but empty is what a pipeline's variable or secret that did not resolve looks
        // like (`MALLCHECK_BASE_URL: ${{ vars.STAGING_URL }}` with no such variable): read as
        // unset, it would make a green run of the embedded server.
        let empty: Vec<&str> = [
            (BASE_URL_VAR, true),
            (PROFILE_VAR, flags.profile.is_none()),
            (SIGN_KEY_VAR, flags.sign_key_file.is_none()),
            (APPID.var, flags.appid.is_none()),
            (MERCHANT_ID.var, flags.merchant_id.is_none()),
            (MERCHANT_USER_ID.var, flags.merchant_user_id.is_none()),
        ]
        .into_iter()
        .filter(|&(var, unflagged)| unflagged && env.is_set_empty(var))
        .map(|(var, _)| var)
        .collect();
        if !empty.is_empty() {
            return Err(UsageError::setting(
                empty.join(", "),
                "set but empty, and no base URL is given: a pipeline's variable or secret that \
                 did not resolve looks like this, and without a base URL mallcheck would test \
                 its embedded reference server instead",
                Some(
                    "give them their values (MALLCHECK_BASE_URL the service's URL), or unset \
                     them to test the embedded server",
                ),
            ));
        }
        // The embedded server has its own identity and key: a remote target's settings
        // without a base URL mean the base URL is missing (a variable misspelt, a CI
        // variable not passed on), not that the embedded server is wanted.
        let mut given: Vec<String> = Vec::new();
        if key.is_some() {
            given.push(key_source.to_string());
        }
        for key in [APPID.key, MERCHANT_ID.key, MERCHANT_USER_ID.key] {
            if let Some(source) = r.sources.get(key) {
                given.push(source.to_string());
            }
        }
        if !given.is_empty() {
            return Err(UsageError::setting(
                given.join(", "),
                "only make sense with a base URL, and none is set: without one mallcheck tests \
                 its embedded reference server, with its own identity and key",
                Some(
                    "set MALLCHECK_BASE_URL (or --base-url, or base_url in the profile), or \
                     unset these to test the embedded server",
                ),
            ));
        }
    }
    if !embedded {
        // Every setting a remote target lacks, named in one error: a first run should not
        // find them one run at a time.
        let mut missing: Vec<(&str, String)> = [
            (&appid, &APPID),
            (&merchant_id, &MERCHANT_ID),
            (&merchant_user_id, &MERCHANT_USER_ID),
        ]
        .into_iter()
        .filter(|(value, _)| value.is_none())
        .map(|(_, s)| (s.flag, s.how()))
        .collect();
        if kind == SignerKind::Command && env.get(SIGN_COMMAND_VAR).is_none() {
            missing.push((
                SIGN_COMMAND_VAR,
                "set MALLCHECK_SIGN_COMMAND (the command signer runs it with the body on stdin)"
                    .to_string(),
            ));
        } else if kind != SignerKind::Command && key.is_none() {
            // Set but empty is what a CI secret that was not passed on looks like.
            let empty = env.names().any(|n| n == SIGN_KEY_VAR);
            missing.push((
                SIGN_KEY_VAR,
                if empty {
                    "MALLCHECK_SIGN_KEY is set but empty (a CI secret that was not passed on is \
                     often empty): export the signing key in it, or pass --sign-key-file PATH \
                     (or `sign_key_file` in the profile)"
                } else {
                    "export the signing key in MALLCHECK_SIGN_KEY, or pass --sign-key-file PATH \
                     (or `sign_key_file` in the profile)"
                }
                .to_string(),
            ));
        }
        if !missing.is_empty() {
            return Err(missing_settings(&missing));
        }
    }
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
    } else if embedded {
        return Err(UsageError::setting(
            r.source_of("signer").to_string(),
            "the embedded reference server signs with md5 and its demo key (or a sign command)",
            Some("set a base URL to test a service with another signer"),
        ));
    } else {
        return Err(UsageError::setting(
            SIGN_KEY_VAR,
            "is not set",
            Some("export the signing key in MALLCHECK_SIGN_KEY or pass --sign-key-file PATH"),
        ));
    };
    if let Some(warning) = register_secrets(kind, &secret, redactor) {
        warnings.push(warning);
    }
    let signer = Signer::new(kind, secret)
        .with_timeout(client.timeout)
        .with_redactor(redactor);
    let (appid, merchant_id, merchant_user_id) = if embedded {
        (
            data::DEMO_APPID.to_string(),
            data::MAIN.merchant_id.to_string(),
            data::MAIN.merchant_user_id.to_string(),
        )
    } else {
        (
            required(appid, &APPID)?,
            required(merchant_id, &MERCHANT_ID)?,
            required(merchant_user_id, &MERCHANT_USER_ID)?,
        )
    };
    let role = r
        .text(&ROLE, &flags.role, &profile.role)
        .unwrap_or_else(|| "super_admin".to_string());
    let (other_id, other_user) = if embedded {
        (
            data::OTHER.merchant_id.to_string(),
            data::OTHER.merchant_user_id.to_string(),
        )
    } else {
        (
            crate::case::vars::PLACEHOLDER_OTHER_MERCHANT_ID.to_string(),
            "00000000-0000-4000-8000-0000000000ef".to_string(),
        )
    };
    // The second merchant set but empty (a pipeline secret that did not resolve) would
    // silently skip every probe that needs it; the same merchant twice probes nothing.
    let empty: Vec<&str> = [OTHER_MERCHANT_ID.var, OTHER_MERCHANT_USER_ID.var]
        .into_iter()
        .filter(|var| env.is_set_empty(var))
        .collect();
    if !empty.is_empty() {
        return Err(UsageError::setting(
            empty.join(", "),
            "set but empty: a pipeline's variable or secret that did not resolve looks like \
             this, and the probes that need a second merchant would be skipped",
            Some("give them a second merchant's ids, or unset them"),
        ));
    }
    // The appid is no secret: an Authorization value that holds it alone registers nothing.
    redactor.add_public(&appid);
    let identity = Identity {
        appid,
        merchant_id,
        merchant_user_id,
        role,
        other_merchant_id: r
            .text(&OTHER_MERCHANT_ID, &None, &profile.other_merchant_id)
            .unwrap_or(other_id),
        other_merchant_user_id: r
            .text(
                &OTHER_MERCHANT_USER_ID,
                &None,
                &profile.other_merchant_user_id,
            )
            .unwrap_or(other_user),
        unknown_merchant_id: env
            .get(UNKNOWN_MERCHANT_ID_VAR)
            .unwrap_or_else(|| UNKNOWN_MERCHANT_ID.to_string()),
    };
    // A value with a line break or a carriage return (a file with Windows line ends, a
    // heredoc) would be sent as it is and refused or match nothing: say which one it is.
    // Blanks around it are warned about (a service may trim them).
    for (setting, value) in [
        (&APPID, &identity.appid),
        (&MERCHANT_ID, &identity.merchant_id),
        (&MERCHANT_USER_ID, &identity.merchant_user_id),
        (&ROLE, &identity.role),
        (&OTHER_MERCHANT_ID, &identity.other_merchant_id),
        (&OTHER_MERCHANT_USER_ID, &identity.other_merchant_user_id),
    ] {
        if value.chars().any(char::is_control) {
            return Err(UsageError::setting(
                r.source_of(setting.key).to_string(),
                "holds a control character (a line break or carriage return: a value read from \
                 a file with Windows line ends, or a heredoc); it would be sent as it is",
                Some("remove it (e.g. `tr -d '\\r\\n'`)"),
            ));
        }
        if value.trim() != value.as_str() {
            warnings.push(format!(
                "{} has blanks around it: it is sent as it is, and a service that trims it or \
                 not lists another merchant's data or none",
                r.source_of(setting.key)
            ));
        }
    }
    if crate::checks::ownership::same_id(&identity.other_merchant_id, &identity.merchant_id) {
        return Err(UsageError::setting(
            r.source_of(OTHER_MERCHANT_ID.key).to_string(),
            "names the configured merchant: the second merchant must be another one, or the \
             probes that move a cursor between two merchants compare a merchant with itself",
            Some(
                "set MALLCHECK_OTHER_MERCHANT_ID and MALLCHECK_OTHER_MERCHANT_USER_ID to another merchant's ids",
            ),
        ));
    }
    let mut vars = env.case_vars();
    for (name, value) in [
        (APPID.var, &identity.appid),
        (MERCHANT_ID.var, &identity.merchant_id),
        (MERCHANT_USER_ID.var, &identity.merchant_user_id),
        (ROLE.var, &identity.role),
        (OTHER_MERCHANT_ID.var, &identity.other_merchant_id),
        (OTHER_MERCHANT_USER_ID.var, &identity.other_merchant_user_id),
        (UNKNOWN_MERCHANT_ID_VAR, &identity.unknown_merchant_id),
    ] {
        vars.insert(name.to_string(), value.clone());
    }
    vars.entry(MALL_SN_VAR.into())
        .or_insert_with(|| MALL_SN_SENTINEL.to_string());
    vars.entry(MALL_SIGNATURE_VAR.into())
        .or_insert_with(|| MALL_SIGNATURE_SENTINEL.to_string());
    let cursor = flags.cursor.clone().or_else(|| env.get(CURSOR_VAR));
    Ok(Settings {
        base_url,
        identity,
        signer,
        client,
        vars,
        profile_name: r.profile_name.clone(),
        jobs,
        rate,
        cursor,
        exhaustive: flags.exhaustive || profile.exhaustive.unwrap_or(false),
        walk_prefix: flags.walk_prefix.or(profile.walk_prefix),
        allow_empty_merchant: profile.allow_empty_merchant.unwrap_or(false),
        sweep_budget: profile.sweep_budget,
        sources: r.sources,
        warnings,
        command_flags: flags.command_flags.clone(),
    })
}

/// Words of an environment variable's name that say its value is a credential
/// (`VAULT_TOKEN`, `SIGNING_SECRET`, `DB_PASSWORD`, `AWS_SECRET_ACCESS_KEY`).
const CREDENTIAL_WORDS: [&str; 11] = [
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "KEY",
    "APIKEY",
    "CREDENTIAL",
    "CREDENTIALS",
    "PRIVATE",
    "AUTH",
];

/// Whether an environment variable's name says its value is a credential: a word of it (split
/// at `_`) is one of [`CREDENTIAL_WORDS`], and it names no file, path or directory.
fn names_a_credential(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper.split('_').collect();
    let is_location = matches!(words.last(), Some(&("FILE" | "PATH" | "DIR" | "SOCK")));
    !is_location && words.iter().any(|w| CREDENTIAL_WORDS.contains(w))
}

/// The sign command runs in mallcheck's environment and may read a credential from it (a
/// vault token) and print it when it fails: the values of the variables whose names say they
/// are credentials are registered as secrets, so the command's output, which a failure
/// quotes, never shows them.
fn register_command_environment(redactor: &Redactor) {
    for (name, value) in std::env::vars_os() {
        if let (Some(name), Some(value)) = (name.to_str(), value.to_str())
            && names_a_credential(name)
        {
            redactor.add_secret(value.trim());
        }
    }
}

/// Registers the key (or the sign command) with the session's redactor; a warning when the
/// key is too short to be scrubbed from what a service echoes back.
fn register_secrets(kind: SignerKind, secret: &str, redactor: &Redactor) -> Option<String> {
    let registered = match kind {
        SignerKind::Command => {
            redactor.add_sign_command(secret);
            register_command_environment(redactor);
            return None;
        }
        SignerKind::Md5 | SignerKind::HmacSha256 | SignerKind::Static => {
            redactor.add_secret(secret)
        }
    };
    if registered {
        return None;
    }
    let what = if kind == SignerKind::Static {
        "the static signature"
    } else {
        "the signing key"
    };
    Some(format!(
        "{what} is shorter than {MIN_SECRET_LEN} characters: mallcheck cannot scrub it from what \
         a service echoes back (Authorization headers are still redacted); use a longer key"
    ))
}

/// Checks a base URL from `source` (a flag, a variable or the profile). Its userinfo is never
/// shown: a `user:password@` is registered as a secret and masked in every message. A query
/// string or a fragment is refused without being shown (a query may hold a token), and the
/// operation paths could not be appended after it.
fn validate_base_url(raw: &str, source: &str, redactor: &Redactor) -> Result<String, UsageError> {
    // White space around it (a quoted `" $URL"`, a line break of `$(cat file)`) is no part of
    // it: the url crate drops it when it parses, so it is dropped from what is used too.
    let raw = raw.trim();
    redactor.add_url_userinfo(raw);
    let shown = redact::url_for_display(raw);
    // What follows `?` or `#` is never shown: a query may carry a token.
    let shown = match shown.find(['?', '#']) {
        Some(at) => format!("{}{}…", &shown[..at], &shown[at..at + 1]),
        None => shown,
    };
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
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(UsageError::setting(
            source,
            format!(
                "`{shown}` must not carry a query string or a fragment (not shown: it may hold a token)"
            ),
            Some(
                "the operation paths are appended to the base URL; give the scheme, host and \
                 path prefix only",
            ),
        ));
    }
    Ok(raw.trim_end_matches('/').to_string())
}

/// Judges the `MALLCHECK_*` variables of the environment that are no setting: one that a
/// loaded case file uses (`${MALLCHECK_...}`, in `referenced`) is a case variable; one close to
/// a setting's name (`MALLCHECK_BASEURL`) is a typo, a usage error with the name it was meant to
/// be, since the setting would silently not apply (a misspelt base URL tests the embedded
/// server); any other one gets a warning (returned, for the caller to print).
pub fn check_unknown_vars(
    env: &Env,
    referenced: &std::collections::BTreeSet<String>,
    command_flags: &[String],
) -> Result<Vec<String>, UsageError> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for name in &env.misspelt {
        let (_, rest) = name.split_once('_').unwrap_or((name, ""));
        match closest_setting(&format!("MALLCHECK_{rest}")) {
            Some(meant) => errors.push(UsageError::setting(
                name,
                "is no setting of mallcheck (its prefix is not MALLCHECK_, so it is not read)",
                Some(&format!("did you mean {meant}?")),
            )),
            None => warnings.push(format!(
                "{name} is set, but mallcheck reads only variables named MALLCHECK_*"
            )),
        }
    }
    for name in env.names() {
        if KNOWN_VARS.contains(&name) || referenced.contains(name) {
            continue;
        }
        // `MALLCHECK_STRICT=1`, `MALLCHECK_CI=true`: a flag set the way settings are, which
        // would silently not apply (a run meant to be strict passes on warnings).
        if let Some(flag) = flag_named_by(name, command_flags) {
            errors.push(UsageError::setting(
                name,
                "is no setting of mallcheck: flags are not read from the environment",
                Some(&format!("pass {flag} on the command line")),
            ));
            continue;
        }
        match closest_setting(name) {
            Some(meant) => errors.push(UsageError::setting(
                name,
                "is no setting of mallcheck and no case file uses it",
                Some(&format!("did you mean {meant}?")),
            )),
            None => warnings.push(format!(
                "{name} is set, but it is no setting of mallcheck and no case file uses it"
            )),
        }
    }
    UsageError::from_all(errors)?;
    Ok(warnings)
}

/// Whether a variable's name begins with a misspelling of `MALLCHECK_` (a letter left out,
/// doubled or swapped, or another letter case), which mallcheck would not read.
fn misspelt_prefix(name: &str) -> bool {
    let Some((prefix, rest)) = name.split_once('_') else {
        return false;
    };
    let upper = prefix.to_ascii_uppercase();
    !rest.is_empty()
        && prefix != "MALLCHECK"
        && (upper == "MALLCHECK" || strsim::damerau_levenshtein(&upper, "MALLCHECK") <= 2)
}

/// The setting variable `name` is most likely a misspelling of: the same name but for
/// underscores and letter case, or one at most two edits away (one for short names).
/// The command-line flag a `MALLCHECK_*` variable names (`MALLCHECK_STRICT`: `--strict`), when
/// it is one of `command_flags` (the long flags of mallcheck's commands) and no setting read
/// from the environment.
fn flag_named_by(name: &str, command_flags: &[String]) -> Option<String> {
    let flag = name
        .strip_prefix("MALLCHECK_")?
        .to_ascii_lowercase()
        .replace('_', "-");
    command_flags.contains(&flag).then(|| format!("--{flag}"))
}

fn closest_setting(name: &str) -> Option<&'static str> {
    let bare = |n: &str| -> String {
        n.trim_start_matches("MALLCHECK_")
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_uppercase())
            .collect()
    };
    let word = bare(name);
    if word.is_empty() {
        return None;
    }
    KNOWN_VARS
        .iter()
        .map(|known| (strsim::damerau_levenshtein(&word, &bare(known)), *known))
        .filter(|(distance, known)| {
            let allowed = if bare(known).len() <= 4 { 1 } else { 2 };
            *distance <= allowed
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, known)| known)
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

    #[test]
    fn a_variable_named_after_a_flag_names_the_flag() {
        let flags: Vec<String> = ["strict", "ci", "allow-empty-merchant"]
            .map(String::from)
            .to_vec();
        let named = |name: &str| flag_named_by(name, &flags);
        assert_eq!(named("MALLCHECK_STRICT").as_deref(), Some("--strict"));
        assert_eq!(named("MALLCHECK_CI").as_deref(), Some("--ci"));
        assert_eq!(
            named("MALLCHECK_ALLOW_EMPTY_MERCHANT").as_deref(),
            Some("--allow-empty-merchant")
        );
        assert_eq!(named("MALLCHECK_NO_SUCH_THING"), None);
        assert_eq!(named("STRICT"), None);
    }

    #[test]
    fn variables_named_as_credentials_are_told_from_the_rest() {
        for name in [
            "VAULT_TOKEN",
            "SIGNING_SECRET",
            "DB_PASSWORD",
            "AWS_SECRET_ACCESS_KEY",
            "github_token",
            "NPM_AUTH",
        ] {
            assert!(names_a_credential(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "KEYBOARD_LAYOUT",
            "SSH_AUTH_SOCK",
            "GOOGLE_APPLICATION_CREDENTIALS_FILE",
            "TOKEN_DIR",
            "AUTHOR",
        ] {
            assert!(!names_a_credential(name), "{name}");
        }
    }

    fn resolve(flags: &Flags, env: &Env, profile: Profile) -> Result<Settings, UsageError> {
        super::resolve(flags, env, profile, &Redactor::new())
    }

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
    fn a_timeout_below_a_millisecond_from_the_environment_is_refused() {
        let err = resolve(
            &Flags::default(),
            &env(&[("MALLCHECK_TIMEOUT", "1e-300")]),
            Profile::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("MALLCHECK_TIMEOUT"), "{err}");
        assert!(
            err.contains("1e-300 is not a number of seconds in [0.001, 3600]"),
            "{err}"
        );
        let t = resolve(
            &Flags::default(),
            &env(&[("MALLCHECK_TIMEOUT", "0.001")]),
            Profile::default(),
        )
        .unwrap();
        assert_eq!(t.client.timeout, Duration::from_millis(1));
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
        // A byte order mark is dropped; a blank is kept, with a warning.
        for (text, key, warned) in [
            ("\u{feff}k3y-in-file\n", "k3y-in-file", false),
            ("k3y-in-file \n", "k3y-in-file ", true),
        ] {
            std::fs::write(file.path(), text).unwrap();
            let t = resolve(&from_empty_file, &Env::default(), Profile::default()).unwrap();
            assert_eq!(t.signer.sign(b"{}").await.unwrap(), key);
            assert_eq!(
                t.warnings
                    .iter()
                    .any(|w| w.contains("begins or ends with a blank")),
                warned,
                "{:?}",
                t.warnings
            );
        }
    }

    #[test]
    fn a_signer_comes_from_the_flag_then_the_env_then_the_profile() {
        let profile = Profile {
            signer: Some("static".into()),
            ..Profile::default()
        };
        let pick =
            |flags: &Flags, env: &Env| kind(&resolve(flags, env, profile.clone()).unwrap().signer);
        let identity = |flags: Flags| {
            remote(Flags {
                appid: Some("a".into()),
                merchant_id: Some("m".into()),
                merchant_user_id: Some("u".into()),
                ..flags
            })
        };
        let hmac = env(&[KEY, ("MALLCHECK_SIGNER", "hmac-sha256")]);
        let flag = identity(Flags {
            signer: Some(SignerKind::Md5),
            ..Flags::default()
        });
        assert_eq!(pick(&flag, &hmac), SignerKind::Md5);
        assert_eq!(
            pick(&identity(Flags::default()), &hmac),
            SignerKind::HmacSha256
        );
        assert_eq!(
            pick(&identity(Flags::default()), &env(&[KEY])),
            SignerKind::Static
        );
    }

    #[test]
    fn each_value_keeps_where_it_came_from() {
        let profile = Profile {
            merchant_user_id: Some("u".into()),
            ..Profile::default()
        };
        let flags = Flags {
            appid: Some("a".into()),
            profile: Some("staging".into()),
            ..remote(Flags::default())
        };
        let s = resolve(
            &flags,
            &env(&[KEY, ("MALLCHECK_MERCHANT_ID", "m")]),
            profile,
        )
        .unwrap();
        assert_eq!(s.source("appid").to_string(), "--appid");
        assert_eq!(s.source("merchant_id").to_string(), "MALLCHECK_MERCHANT_ID");
        assert_eq!(
            s.source("merchant_user_id").to_string(),
            "merchant_user_id (profile `staging`)"
        );
        assert_eq!(s.source("role"), Source::Default);
    }

    #[test]
    fn remote_settings_without_a_base_url_are_refused_all_named() {
        let profile = Profile {
            merchant_user_id: Some("u".into()),
            ..Profile::default()
        };
        let flags = Flags {
            appid: Some("a".into()),
            profile: Some("p".into()),
            ..Flags::default()
        };
        let err = resolve(&flags, &env(&[KEY]), profile)
            .unwrap_err()
            .render(false);
        for named in [
            "MALLCHECK_SIGN_KEY",
            "--appid",
            "merchant_user_id (profile `p`)",
        ] {
            assert!(err.contains(named), "{named}: {err}");
        }
        assert!(err.contains("base URL"), "{err}");
    }

    #[test]
    fn every_missing_setting_of_a_remote_target_is_named_in_one_error() {
        let err = resolve(&remote(Flags::default()), &env(&[]), Profile::default()).unwrap_err();
        let UsageError::Setting { what, .. } = &err else {
            panic!("one setting error: {err:?}");
        };
        assert_eq!(
            what,
            "--appid, --merchant-id, --merchant-user-id, MALLCHECK_SIGN_KEY"
        );
        let text = err.render(false);
        assert!(text.contains("(4 settings)"), "{text}");
        for how in [
            "set MALLCHECK_APPID",
            "set MALLCHECK_MERCHANT_ID",
            "set MALLCHECK_MERCHANT_USER_ID",
            "--sign-key-file PATH",
        ] {
            assert!(text.contains(how), "{how}: {text}");
        }
        // The command signer lacks its command, not a key; what is given is not named.
        let flags = Flags {
            appid: Some("a".into()),
            signer: Some(SignerKind::Command),
            ..remote(Flags::default())
        };
        let err = resolve(&flags, &env(&[]), Profile::default()).unwrap_err();
        let UsageError::Setting { what, .. } = &err else {
            panic!("one setting error: {err:?}");
        };
        assert_eq!(
            what,
            "--merchant-id, --merchant-user-id, MALLCHECK_SIGN_COMMAND"
        );
    }

    #[test]
    fn white_space_around_a_base_url_is_dropped_and_an_empty_key_named() {
        let flags = Flags {
            base_url: Some(" https://staging.example.com/ \n".into()),
            appid: Some("a".into()),
            merchant_id: Some("m".into()),
            merchant_user_id: Some("u".into()),
            ..Flags::default()
        };
        let t = resolve(&flags, &env(&[KEY]), Profile::default()).unwrap();
        assert_eq!(t.base_url.as_deref(), Some("https://staging.example.com"));
        let err = resolve(
            &flags,
            &env(&[("MALLCHECK_SIGN_KEY", "")]),
            Profile::default(),
        )
        .unwrap_err()
        .render(false);
        assert!(err.contains("is set but empty"), "{err}");
    }

    /// A carriage return or line break in an identity (a Windows line end read from a file)
    /// is a usage error naming where it came from; blanks around one are warned about.
    #[test]
    fn control_characters_in_an_identity_are_refused_and_blanks_warned() {
        let flags = |appid: &str, merchant: &str| Flags {
            base_url: Some("https://staging.example.com".into()),
            appid: Some(appid.into()),
            merchant_id: Some(merchant.into()),
            merchant_user_id: Some("u".into()),
            ..Flags::default()
        };
        let err = resolve(&flags("app\r\n", "m"), &env(&[KEY]), Profile::default())
            .unwrap_err()
            .render(false);
        assert!(err.contains("--appid"), "{err}");
        assert!(err.contains("control character"), "{err}");
        let ok = resolve(&flags("app", "m "), &env(&[KEY]), Profile::default()).unwrap();
        assert!(
            ok.warnings.iter().any(|w| w.contains("blanks around it")),
            "{:?}",
            ok.warnings
        );
    }

    #[test]
    fn a_base_url_with_a_query_or_fragment_is_refused_without_showing_it() {
        for url in [
            "https://h.example/api?token=SECRETSECRET",
            "https://h.example/api#SECRETSECRET",
        ] {
            let err = resolve(
                &Flags {
                    base_url: Some(url.into()),
                    ..Flags::default()
                },
                &env(&[KEY]),
                Profile::default(),
            )
            .unwrap_err()
            .render(false);
            assert!(err.contains("query string"), "{err}");
            assert!(!err.contains("SECRET"), "{err}");
        }
    }

    #[test]
    fn a_misspelt_setting_variable_is_an_error_and_a_stray_one_a_warning() {
        let used: std::collections::BTreeSet<String> = ["MALLCHECK_TENANT".to_string()].into();
        let err = check_unknown_vars(&env(&[("MALLCHECK_BASEURL", "x")]), &used, &[])
            .unwrap_err()
            .render(false);
        assert!(err.contains("did you mean MALLCHECK_BASE_URL?"), "{err}");
        for (typo, meant) in [
            ("MALLCHECK_SIGNKEY", "MALLCHECK_SIGN_KEY"),
            ("MALLCHECK_APPI", "MALLCHECK_APPID"),
            ("MALLCHECK_merchant_id", "MALLCHECK_MERCHANT_ID"),
            ("MALLCHECK_TIMEOUTS", "MALLCHECK_TIMEOUT"),
        ] {
            assert_eq!(closest_setting(typo), Some(meant), "{typo}");
        }
        // why: a case file uses it, so it is a case variable, not a typo.
        let ok = check_unknown_vars(&env(&[("MALLCHECK_TENANT", "t"), KEY]), &used, &[]).unwrap();
        assert!(ok.is_empty(), "{ok:?}");
        // A misspelt prefix is not read at all: a setting behind one is an error too.
        for (typo, meant) in [
            ("MALLCHEK_BASE_URL", "MALLCHECK_BASE_URL"),
            ("mallcheck_base_url", "MALLCHECK_BASE_URL"),
            ("MALCHECK_SIGN_KEY", "MALLCHECK_SIGN_KEY"),
            ("MALLCHECKK_MERCHANT_ID", "MALLCHECK_MERCHANT_ID"),
        ] {
            let err = check_unknown_vars(&env(&[(typo, "x")]), &used, &[])
                .unwrap_err()
                .render(false);
            assert!(
                err.contains(&format!("did you mean {meant}?")),
                "{typo}: {err}"
            );
        }
        for unrelated in ["MALLOC_ARENA_MAX", "MAIL_CHECK_X", "PATH"] {
            let ok = check_unknown_vars(&env(&[(unrelated, "1")]), &used, &[]).unwrap();
            assert!(ok.is_empty(), "{unrelated}: {ok:?}");
        }
        let warned =
            check_unknown_vars(&env(&[("MALLCHECK_REQUIRE_TOOLS", "1")]), &used, &[]).unwrap();
        assert_eq!(warned.len(), 1, "{warned:?}");
        assert!(warned[0].contains("MALLCHECK_REQUIRE_TOOLS"), "{warned:?}");
    }
}
