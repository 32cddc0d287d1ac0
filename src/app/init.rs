//! `mallcheck init`: writes editable copies of the shipped cases and schemas, an example
//! `mallcheck.toml` and the ignore lines for reports, never overwriting a file that exists.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::cli::InitArgs;
use crate::error::UsageError;
use crate::exit;
use crate::shipped::{CASE_FILES, CASES_DIR, SCHEMA_FILES, SCHEMAS_DIR};

/// An example profile file; every key is one `mallcheck.toml` reads.
const PROFILE_EXAMPLE: &str = r#"# mallcheck.toml: named environments, chosen with `mallcheck run --profile NAME`.
# Flags and MALLCHECK_* variables win over a profile. Secrets never live here: the signing key
# comes from MALLCHECK_SIGN_KEY or from the file named by sign_key_file.

[profile.staging]
base_url = "https://staging.example.com"
appid = "my-app"
merchant_id = "6f1c0d1e-0000-0000-0000-000000000000"
merchant_user_id = "0b9e7a2c-0000-0000-0000-000000000000"
role = "super_admin"
signer = "md5"          # md5 | hmac-sha256 | static | command
timeout = 10            # seconds per request
rate = 5                # requests per second (run and fuzz)
max_retry_wait = 10     # seconds one request may wait for Retry-After
jobs = 4                # requests in flight at once
# proxy = "http://proxy.corp:3128"  # or "none"; without it, HTTP(S)_PROXY and NO_PROXY apply
"#;

/// Lines `.gitignore` gets: the reports and the pending snapshots are outputs of a run.
const IGNORE_LINES: &[&str] = &["/reports/", "*.snap.new"];

/// What `init` did with one file.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Written anew.
    Wrote,
    /// Left as it was: it already exists.
    Kept,
    /// Lines appended to a file that existed.
    Appended(usize),
}

/// Writes the starter files under `dir`; returns each file with what was done to it.
pub fn write_starter(dir: &Path) -> io::Result<Vec<(PathBuf, Outcome)>> {
    let mut done = Vec::new();
    let files = CASE_FILES
        .iter()
        .map(|(name, text)| (Path::new(CASES_DIR).join(name), *text))
        .chain(
            SCHEMA_FILES
                .iter()
                .map(|(name, text)| (Path::new(SCHEMAS_DIR).join(name), *text)),
        )
        .chain([(PathBuf::from("mallcheck.toml"), PROFILE_EXAMPLE)]);
    for (relative, text) in files {
        let path = dir.join(&relative);
        if let Some(parent) = path.parent() {
            crate::atomic::create_dir(parent)?;
        }
        // create_new: a file that appears meanwhile is kept too.
        let outcome = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                io::Write::write_all(&mut file, text.as_bytes())?;
                Outcome::Wrote
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Outcome::Kept,
            Err(e) => return Err(e),
        };
        done.push((relative, outcome));
    }
    let ignore = PathBuf::from(".gitignore");
    let outcome = add_ignore_lines(&dir.join(&ignore))?;
    done.push((ignore, outcome));
    Ok(done)
}

/// Appends the lines of [`IGNORE_LINES`] that `path` lacks (creating it when missing).
fn add_ignore_lines(path: &Path) -> io::Result<Outcome> {
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let text = existing.as_deref().unwrap_or("");
    let missing: Vec<&str> = IGNORE_LINES
        .iter()
        .copied()
        .filter(|line| !text.lines().any(|l| l.trim() == *line))
        .collect();
    if missing.is_empty() {
        return Ok(Outcome::Kept);
    }
    let mut out = String::from(text);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("# mallcheck outputs\n");
    for line in &missing {
        let _ = writeln!(out, "{line}");
    }
    std::fs::write(path, out)?;
    Ok(match existing {
        None => Outcome::Wrote,
        Some(_) => Outcome::Appended(missing.len()),
    })
}

/// `mallcheck init [--dir DIR]`.
pub fn init(args: &InitArgs) -> Result<i32, UsageError> {
    let done = write_starter(&args.dir).map_err(|e| {
        UsageError::setting(
            "--dir",
            format!(
                "cannot write the starter files in {}: {e}",
                args.dir.display()
            ),
            None,
        )
    })?;
    let mut out = String::new();
    for (path, outcome) in &done {
        let shown = args.dir.join(path);
        let _ = match outcome {
            Outcome::Wrote => writeln!(out, "wrote    {}", shown.display()),
            Outcome::Kept => writeln!(out, "kept     {} (already there)", shown.display()),
            Outcome::Appended(n) => writeln!(
                out,
                "appended {} ({n} ignore line{})",
                shown.display(),
                if *n == 1 { "" } else { "s" }
            ),
        };
    }
    let _ = writeln!(
        out,
        "\nmallcheck now runs ./cases with ./schemas from this directory; edit them freely.\n\
         Next: set MALLCHECK_BASE_URL, MALLCHECK_APPID, MALLCHECK_MERCHANT_ID,\n\
         MALLCHECK_MERCHANT_USER_ID and MALLCHECK_SIGN_KEY (or a profile in mallcheck.toml),\n\
         then `mallcheck run`."
    );
    crate::say::stdout_text!("{out}");
    Ok(exit::PASS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_lines_are_appended_once_and_existing_lines_are_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(".gitignore");
        std::fs::write(&path, "/target\n*.snap.new").expect("write");
        assert_eq!(add_ignore_lines(&path).expect("add"), Outcome::Appended(1));
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.starts_with("/target\n*.snap.new\n"), "{text}");
        assert_eq!(text.matches("*.snap.new").count(), 1, "{text}");
        assert!(text.lines().any(|l| l == "/reports/"), "{text}");
        assert_eq!(add_ignore_lines(&path).expect("again"), Outcome::Kept);
    }

    #[test]
    fn the_profile_example_is_a_valid_profile_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("mallcheck.toml");
        std::fs::write(&path, PROFILE_EXAMPLE).expect("write");
        let profile = crate::profile::load(&path, Some("staging"), &crate::redact::Redactor::new())
            .expect("the example loads");
        assert_eq!(profile.rate, Some(5.0));
    }
}
