//! Which directory of the snapshot root holds a target's snapshots: `snapshots/<target>/`, so
//! the snapshots recorded against one service are never compared with another's responses.

use std::path::Path;

/// Directory name of the embedded reference server's snapshots (committed with the cases).
pub const EMBEDDED: &str = "embedded";

/// Directory name of every loopback service (`localhost`, `127.0.0.0/8`, `::1`) whatever its
/// port: a test server on a random port must not start a new directory on every run.
pub const LOOPBACK: &str = "localhost";

/// Why a snapshot target name cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` is not a snapshot target name: {reason}")]
pub struct TargetNameError {
    /// The name as given.
    pub name: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// What selects a target's snapshot directory, in order: an explicit name, the embedded server
/// (no base URL), a profile, the base URL.
#[derive(Debug, Clone, Copy, Default)]
pub struct TargetSelector<'a> {
    /// `--snapshot-target NAME` (a name, or a base URL to derive it from).
    pub explicit: Option<&'a str>,
    /// `--profile NAME`.
    pub profile: Option<&'a str>,
    /// The resolved base URL; none means the embedded reference server.
    pub base_url: Option<&'a str>,
}

impl TargetSelector<'_> {
    /// The directory name: the explicit one; [`EMBEDDED`] for the embedded server; the profile
    /// name; else [`from_base_url`].
    pub fn name(&self) -> Result<String, TargetNameError> {
        if let Some(explicit) = self.explicit {
            return explicit_name(explicit);
        }
        let Some(base_url) = self.base_url else {
            return Ok(EMBEDDED.to_string());
        };
        match self.profile {
            Some(profile) => from_profile(profile),
            None => Ok(from_base_url(base_url)),
        }
    }
}

/// The directory name of a profile: its name, lower case, runs of other characters than
/// letters, digits and `_` as one `-`.
pub fn from_profile(profile: &str) -> Result<String, TargetNameError> {
    checked(profile, slug(profile))
}

/// A name given on the command line: a base URL (`scheme://…`) is turned into its directory
/// name; anything else must already be a plain directory name.
pub fn explicit_name(text: &str) -> Result<String, TargetNameError> {
    if text.contains("://") {
        return Ok(from_base_url(text));
    }
    checked(text, text.to_string())
}

fn checked(given: &str, name: String) -> Result<String, TargetNameError> {
    let err = |reason| TargetNameError {
        name: given.to_string(),
        reason,
    };
    if name.is_empty() || name.chars().all(|c| c == '.') {
        return Err(err("it is empty or only dots"));
    }
    if !name
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '+'))
    {
        return Err(err(
            "use letters, digits, `.`, `-`, `_` and `+` only (it names a directory)",
        ));
    }
    Ok(name)
}

/// The directory name of a service at `base_url`: its host, `_PORT` when the URL names a port
/// other than the scheme's default, then `__SEGMENT` for each segment of a path prefix
/// (`staging.example.com`, `staging.example.com_8443`, `api.example.com__mall-v2`). Every
/// loopback host is [`LOOPBACK`] with no port. Scheme, user, password, query and fragment never
/// take part. A URL that does not parse is slugged whole (without what precedes an `@`).
pub fn from_base_url(base_url: &str) -> String {
    let Ok(url) = url::Url::parse(base_url.trim()) else {
        let text = base_url.rsplit('@').next().unwrap_or_default();
        return non_empty(slug(text));
    };
    let mut name = match url.host() {
        Some(url::Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") => LOOPBACK.to_string(),
        Some(url::Host::Ipv4(ip)) if ip.is_loopback() => LOOPBACK.to_string(),
        Some(url::Host::Ipv6(ip)) if ip.is_loopback() => LOOPBACK.to_string(),
        Some(url::Host::Ipv6(ip)) => slug(&ip.to_string()),
        Some(host) => host_slug(&host.to_string()),
        None => "no-host".to_string(),
    };
    if name != LOOPBACK
        && let Some(port) = url.port()
    {
        name.push_str(&format!("_{port}"));
    }
    for segment in url.path_segments().into_iter().flatten() {
        let segment = slug(segment);
        if !segment.is_empty() {
            name.push_str("__");
            name.push_str(&segment);
        }
    }
    name
}

/// The snapshot directory of a target under `root`.
pub fn dir(root: &Path, target: &str) -> std::path::PathBuf {
    root.join(target)
}

/// A host name kept readable: lower case, dots kept, other characters as in [`slug`].
fn host_slug(host: &str) -> String {
    let parts: Vec<String> = host
        .split('.')
        .map(slug)
        .filter(|p| !p.is_empty())
        .collect();
    non_empty(parts.join("."))
}

/// Lower case; runs of characters other than letters, digits and `_` become one `-`, trimmed
/// at both ends (may be empty).
pub(super) fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '_' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

fn non_empty(name: String) -> String {
    if name.is_empty() {
        "unnamed".to_string()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(explicit: Option<&str>, profile: Option<&str>, base_url: Option<&str>) -> String {
        TargetSelector {
            explicit,
            profile,
            base_url,
        }
        .name()
        .unwrap()
    }

    #[test]
    fn embedded_server_profile_and_host_in_that_order() {
        assert_eq!(name(None, None, None), "embedded");
        assert_eq!(name(None, Some("staging"), None), "embedded");
        assert_eq!(
            name(None, Some("Staging EU"), Some("https://a.example.com")),
            "staging-eu"
        );
        assert_eq!(
            name(None, None, Some("https://a.example.com")),
            "a.example.com"
        );
        assert_eq!(
            name(Some("embedded"), None, Some("http://127.0.0.1:9")),
            "embedded"
        );
    }

    #[test]
    fn two_hosts_and_two_ports_do_not_share_a_directory() {
        let a = from_base_url("https://staging-1.example.com");
        let b = from_base_url("https://staging-2.example.com");
        let c = from_base_url("https://staging-1.example.com:8443");
        assert_eq!(a, "staging-1.example.com");
        assert_eq!(c, "staging-1.example.com_8443");
        assert!(a != b && a != c && b != c);
        // The scheme's default port is the same service.
        assert_eq!(from_base_url("https://staging-1.example.com:443/"), a);
        assert_eq!(from_base_url("HTTPS://Staging-1.Example.COM"), a);
    }

    #[test]
    fn loopback_is_one_directory_whatever_the_port() {
        for url in [
            "http://127.0.0.1:41234",
            "http://127.0.0.1:8080/",
            "http://localhost:3000",
            "http://[::1]:5000",
            "http://127.1.2.3",
        ] {
            assert_eq!(from_base_url(url), "localhost", "{url}");
        }
        assert_eq!(
            from_base_url("http://127.0.0.1:41234/fault/mall-state-out-of-range"),
            "localhost__fault__mall-state-out-of-range"
        );
    }

    #[test]
    fn path_prefix_counts_and_credentials_never_appear() {
        assert_eq!(
            from_base_url("https://user:pa55word@api.example.com/mall/v2?x=1#f"),
            "api.example.com__mall__v2"
        );
        assert_eq!(
            from_base_url("https://[2001:db8::1]:8443"),
            "2001-db8-1_8443"
        );
        assert!(!from_base_url("user:pa55word@example.com").contains("pa55"));
        assert!(!from_base_url("https://u:pa55word@example.com").contains("pa55"));
    }

    #[test]
    fn explicit_names_are_plain_directory_names_or_urls() {
        assert_eq!(explicit_name("release-n").unwrap(), "release-n");
        assert_eq!(
            explicit_name("https://release-n.example.com").unwrap(),
            "release-n.example.com"
        );
        for bad in ["", "..", "a/b", "../x", "a b"] {
            assert!(explicit_name(bad).is_err(), "{bad}");
        }
    }
}
