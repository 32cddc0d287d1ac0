//! Typed user and configuration errors; every one maps to exit code 2.

use std::path::PathBuf;

use crate::diag::Diagnostic;
use crate::spec::schemas::SchemaError;

/// A problem with what the user gave us: flags, environment, case files, schemas.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// A flag or environment variable has a bad or missing value.
    #[error("{what}: {message}")]
    Setting {
        /// The flag or variable, e.g. `--timeout` or `MALLCHECK_SIGN_KEY`.
        what: String,
        /// What is wrong.
        message: String,
        /// How to fix it.
        help: Option<String>,
    },
    /// Case files have problems (one diagnostic each).
    #[error("{} problem{} in case files", .0.len(), if .0.len() == 1 { "" } else { "s" })]
    Cases(Vec<Diagnostic>),
    /// A config file (`mallcheck.toml`) has problems (one diagnostic each).
    #[error("{} problem{} in {}", .diags.len(), if .diags.len() == 1 { "" } else { "s" }, .path.display())]
    Config {
        /// The config file.
        path: PathBuf,
        /// What is wrong, where.
        diags: Vec<Diagnostic>,
    },
    /// A schema file could not be loaded or compiled.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// A report file cannot be written at the path the user gave.
    #[error("cannot write {what} {}: {source}", path.display())]
    Report {
        /// Which report, e.g. "the JUnit report".
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Several problems found together; each is printed as its own `error:` line.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Several(Vec<UsageError>),
    /// A local file could not be read (missing, not a regular file, too large).
    #[error(transparent)]
    Read(#[from] crate::local_file::ReadError),
    /// Another run holds a report path (see [`crate::report::lock`]): the other run's reports
    /// must stay as they are.
    #[error(transparent)]
    ReportsBusy(Box<UsageError>),
    /// A file the user named could not be read or written.
    #[error("cannot access {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl UsageError {
    /// Standard output could not take a command's document (a full disk behind `>`).
    pub fn stdout(source: std::io::Error) -> UsageError {
        UsageError::Io {
            path: PathBuf::from("standard output"),
            source,
        }
    }

    /// A setting error with a help line.
    pub fn setting(
        what: impl Into<String>,
        message: impl Into<String>,
        help: Option<&str>,
    ) -> Self {
        UsageError::Setting {
            what: what.into(),
            message: message.into(),
            help: help.map(str::to_string),
        }
    }

    /// One error, or [`UsageError::Several`] when there are more.
    pub fn from_all(mut errors: Vec<UsageError>) -> Result<(), UsageError> {
        match errors.len() {
            0 => Ok(()),
            1 => Err(errors.remove(0)),
            _ => Err(UsageError::Several(errors)),
        }
    }

    /// Whether the reports at the run's paths must be left as they are: they are another
    /// running run's (see [`crate::report::lock`]), not an earlier run's to remove.
    pub fn keeps_reports(&self) -> bool {
        matches!(self, UsageError::ReportsBusy(_))
    }

    /// The texts to print, each after `error: `: one for most errors, one per problem of
    /// [`UsageError::Several`].
    pub fn render_each(&self, color: bool) -> Vec<String> {
        match self {
            UsageError::Several(all) => all.iter().flat_map(|e| e.render_each(color)).collect(),
            UsageError::ReportsBusy(inner) => inner.render_each(color),
            _ => vec![self.render(color)],
        }
    }

    /// The full text to print after `error: `, diagnostics rendered.
    pub fn render(&self, color: bool) -> String {
        match self {
            UsageError::Cases(diags) | UsageError::Config { diags, .. } => {
                format!("{self}\n{}", crate::diag::render(diags, color))
            }
            UsageError::Setting { help: Some(h), .. } => format!("{self}\n  help: {h}"),
            UsageError::ReportsBusy(inner) => inner.render(color),
            UsageError::Several(all) => all
                .iter()
                .map(|e| e.render(color))
                .collect::<Vec<_>>()
                .join("\nerror: "),
            _ => {
                let mut out = self.to_string();
                let mut source = std::error::Error::source(self);
                while let Some(s) = source {
                    if !out.contains(&s.to_string()) {
                        out.push_str(&format!(": {s}"));
                    }
                    source = s.source();
                }
                out
            }
        }
    }
}
