//! One [`Session`] per command: the settings resolved once (flags, then `MALLCHECK_*`
//! variables, then the profile, then defaults, each value with where it came from), the
//! redactor that knows the command's secrets, the schemas, and the target, remote or the
//! embedded reference server. Everything that talks to the service or writes output is handed
//! the session (or its redactor) by the command's wiring in `app/`: there is no process-wide
//! state.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use regex::Regex;

use crate::case::model::CaseFile;
use crate::error::UsageError;
use crate::profile;
use crate::redact::{self, Redactor};
use crate::server::{self, RunningServer, ServerOptions};
use crate::service::client::Client;
use crate::settings::{self, Env, Flags, Settings};
use crate::spec::schemas::SchemaSet;

/// How the embedded target is named in the console and in every report.
pub const EMBEDDED: &str = "embedded";

/// What a command tests.
#[derive(Debug)]
pub enum Target {
    /// A service at a base URL (validated: http(s), a host, no credentials, no query).
    Remote(String),
    /// The embedded reference server on loopback, started when the command first needs it.
    Embedded(Embedded),
}

/// The embedded reference server of a session: started on first use with the session's signer
/// and appid, shut down by [`Session::close`].
#[derive(Debug, Default)]
pub struct Embedded {
    server: Mutex<Option<RunningServer>>,
}

impl Target {
    /// The target as the console and the reports name it: `embedded`, or the base URL without
    /// its userinfo.
    pub fn name(&self) -> String {
        match self {
            Target::Remote(url) => redact::url_for_display(url),
            Target::Embedded(_) => EMBEDDED.to_string(),
        }
    }

    /// Whether this is the embedded reference server.
    pub fn is_embedded(&self) -> bool {
        matches!(self, Target::Embedded(_))
    }

    /// The base URL given by the user (none for the embedded server).
    pub fn base_url(&self) -> Option<&str> {
        match self {
            Target::Remote(url) => Some(url),
            Target::Embedded(_) => None,
        }
    }
}

/// Everything a command decided before talking to the service.
#[derive(Debug)]
pub struct Session {
    settings: Settings,
    env: Env,
    redactor: Redactor,
    schemas: Arc<SchemaSet>,
    target: Target,
}

impl Session {
    /// Resolves `flags` against this process's `MALLCHECK_*` variables and the profile they
    /// name, with `redactor` (the command's: `main` scrubs its errors with it, so the secrets
    /// registered before a failure are known there too). `schemas` is `--schemas DIR`, or
    /// none for the built-in ones.
    pub fn open(
        flags: &Flags,
        schemas: Option<&Path>,
        redactor: &Redactor,
    ) -> Result<Session, UsageError> {
        let env = Env::from_process();
        let name = flags
            .profile
            .clone()
            .or_else(|| env.get(settings::PROFILE_VAR));
        // A config file named and no profile chosen would be read for nothing: its settings
        // silently not applied, the run would test something else (the embedded server).
        if flags.config_given && name.is_none() {
            return Err(UsageError::setting(
                "--config",
                format!(
                    "{} is read only for the profile a run chooses, and none is chosen",
                    flags.config.display()
                ),
                Some("pass --profile NAME (or set MALLCHECK_PROFILE) to apply one of its profiles"),
            ));
        }
        let profile = profile::load(&flags.config, name.as_deref(), redactor)?;
        let mut settings = settings::resolve(flags, &env, profile, redactor)?;
        // No target chosen beside a config file of profiles: a pipeline that forgot its
        // profile would test the embedded reference server and pass.
        if settings.base_url.is_none() && name.is_none() && !flags.lists_only {
            let profiles = profile::names(&flags.config);
            if !profiles.is_empty() {
                let file = flags.config.display();
                let which = profiles.join(", ");
                if flags.ci || crate::snapshot::in_ci(|name| std::env::var(name).ok()) {
                    return Err(UsageError::setting(
                        "--profile",
                        format!(
                            "{file} defines the profiles {which}, none is chosen and no base \
                             URL is set: in CI (`CI`, a CI service's variable, or --ci) the run \
                             would test the embedded \
                             reference server"
                        ),
                        Some("pass --profile NAME (or set MALLCHECK_PROFILE), or --base-url"),
                    ));
                }
                settings.warnings.push(format!(
                    "{file} defines the profiles {which} and none is chosen: this run tests the \
                     embedded reference server (pass --profile NAME to test one of them)"
                ));
            }
        }
        let schemas = SchemaSet::load_default(schemas)?;
        // `./schemas` is picked up without a flag (after `mallcheck init`): say when its
        // copies are no longer the shipped ones, whose checks the verdicts then follow.
        let edited = schemas.edited_files();
        if !edited.is_empty() {
            let files: Vec<String> = edited.iter().map(|f| f.display().to_string()).collect();
            settings.warnings.push(format!(
                "checking with edited schemas: {} differ{} from the shipped ones (the checks \
                 they carry follow these copies; `mallcheck init` in an empty directory writes \
                 the shipped ones)",
                files.join(", "),
                if files.len() == 1 { "s" } else { "" }
            ));
        }
        Ok(Session::from_parts(
            settings,
            env,
            Arc::new(schemas),
            redactor,
        ))
    }

    /// A session of settings resolved elsewhere (benchmarks, tests).
    pub fn from_parts(
        settings: Settings,
        env: Env,
        schemas: Arc<SchemaSet>,
        redactor: &Redactor,
    ) -> Session {
        let target = match &settings.base_url {
            Some(url) => Target::Remote(url.clone()),
            None => Target::Embedded(Embedded::default()),
        };
        Session {
            settings,
            env,
            redactor: redactor.clone(),
            schemas,
            target,
        }
    }

    /// The resolved settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The settings, to adjust what a command's own flags decide (`--retries`, the rate).
    pub fn settings_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }

    /// The redactor every record and output of the command is scrubbed with.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// The compiled schemas.
    pub fn schemas(&self) -> &Arc<SchemaSet> {
        &self.schemas
    }

    /// What the command tests.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The `MALLCHECK_*` variables that are neither a setting nor used by `files`: a usage
    /// error for one that looks like a misspelt setting, a warning (returned) for the others
    /// (see [`settings::check_unknown_vars`]).
    pub fn check_vars(&self, files: &[CaseFile]) -> Result<Vec<String>, UsageError> {
        static USE: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"\$\{(MALLCHECK_[A-Za-z0-9_]*)\}").expect("a valid pattern")
        });
        let referenced: BTreeSet<String> = files
            .iter()
            .flat_map(|f| USE.captures_iter(&f.source.text))
            .filter_map(|c| c.get(1).map(|m| m.as_str().to_string()))
            .collect();
        settings::check_unknown_vars(&self.env, &referenced, &self.settings.command_flags)
    }

    /// The base URL to send to: the given one, or that of the embedded reference server, started
    /// here on first use with the session's signer and appid. Err: it could not be started.
    pub async fn connect(&self) -> Result<String, String> {
        let Target::Embedded(embedded) = &self.target else {
            return Ok(self.settings.base_url.clone().unwrap_or_default());
        };
        if let Some(server) = embedded
            .server
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            return Ok(server.base_url());
        }
        let options = ServerOptions {
            signer: self.settings.signer.clone(),
            appid: self.settings.identity.appid.clone(),
            ..ServerOptions::default()
        };
        let server = server::start(options)
            .await
            .map_err(|e| format!("cannot start the embedded reference server: {e}"))?;
        let url = server.base_url();
        *embedded
            .server
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(server);
        Ok(url)
    }

    /// Shuts the embedded server down, when it was started.
    pub async fn close(&self) {
        if let Target::Embedded(embedded) = &self.target {
            let server = embedded
                .server
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(server) = server {
                server.shutdown().await;
            }
        }
    }

    /// Runs `work` against the target, then shuts the embedded server down. Err: the embedded
    /// server could not be started (the caller reports it).
    pub async fn with_service<T>(&self, work: impl AsyncFnOnce(&str) -> T) -> Result<T, String> {
        let base_url = self.connect().await?;
        let out = work(&base_url).await;
        self.close().await;
        Ok(out)
    }

    /// A signing client for `base_url` with the session's limits, signer and redactor.
    pub fn client(&self, base_url: &str) -> Result<Client, String> {
        Client::new(
            base_url,
            self.settings.signer.clone(),
            self.settings.client.clone(),
            &self.redactor,
        )
        .map_err(|e| e.to_string())
    }
}
